"""Runs a TorchScript archive through PyTorch, for `srbench compare MODEL.pt`.

Usage: python3 pytorch_bench_pt.py MODEL.pt INPUTS.pt WARMUP ITERS REPEATS OUT.pt [INTEROP [INTRAOP [OUT.onnx]]]

MODEL.pt is what torch.jit.save wrote; INPUTS.pt is torch.save of the tuple
(or list) of positional inputs. INTRAOP intra-op threads and INTEROP
inter-op threads (default 1 each): forks (torch.jit.fork, prim::fork) run on the inter-op
pool (at::launch), in the Static Runtime and the interpreter alike. The
model is frozen unless it already is, then:
  - PyTorch's Static Runtime (torch._C._jit_to_static_module) is timed with
    StaticModule.benchmark, its own C++ loop, REPEATS times; its report
    (with "Static runtime ms per iter: X") goes to stdout, flushed per
    repeat, for srbench to parse;
  - the TorchScript interpreter is timed without Python per call: a method
    added to the frozen module runs forward ITERS times in a TorchScript
    loop, REPEATS times, printing "interpreter repeat I: X us" after each
    (srbench reads any output as progress). The graph executor's optimizations are off for it:
    they would unroll that loop and merge its identical iterations (CSE),
    timing nothing; the frozen graph is already optimized by freezing.
OUT.pt gets torch.save((sr_out, interp_out)). With OUT.onnx, the frozen
module (the one the Static Runtime runs) is exported there with
torch.onnx.export (opset 14) on the same inputs, for ONNX Runtime; a
failure is reported as onnx_error, and the timings stand. (Exporting the
loaded module after freezing fails for archives with submodules:
freezing rewrites the class type the two share.) The last line of stdout is a
JSON object: interp_us and sr_us (per iteration, one per repeat), load_ms,
freeze_ms, static_module_ms, prepare_ms (load + freeze + Static Runtime
build), outputs_agree (allclose 1e-5), torch_version, and from the last
benchmark report sr_managed_bytes ("Total memory managed: N bytes") and
sr_managed_tensors ("Total number of managed tensors: N"), null when the
report lacks them, onnx_error (null unless the export failed) and
sr_error: null, or why PyTorch's Static Runtime could not build or run the
model; then sr_us is empty, the interpreter's figures stand, and OUT.pt's
sr_out is the interpreter's outputs.
"""
import json
import os
import re
import statistics
import sys
import tempfile
import time

import torch


def is_frozen(m):
    # torch.jit.freeze inlines every method and turns parameters, buffers
    # and attributes into constants: none are left, and forward's graph
    # (with any calls inlined) reads no attribute.
    if any(True for _ in m.parameters()) or any(True for _ in m.buffers()):
        return False
    g = m.graph.copy()
    torch._C._jit_pass_inline(g)
    return not g.findAllNodes("prim::GetAttr", True)


def make_loop(frozen):
    """Adds to frozen a method bench_loop(n, *inputs) that runs forward n
    times in a TorchScript loop and returns the last output. (A scripted
    wrapper module cannot hold a loaded module: they belong to different
    compilation units.)"""
    schema = frozen.forward.schema
    # annotation_str spells types as TorchScript source does (List[int], ...).
    types = [a.type.annotation_str for a in schema.arguments[1:]]  # [0] is self
    names = ["x%d" % i for i in range(len(types))]
    params = "".join(", %s: %s" % (n, t) for n, t in zip(names, types))
    args = ", ".join(names)
    src = (
        "def bench_loop(self, n: int%s):\n"
        "    out = self.forward(%s)\n"
        "    for _ in range(n - 1):\n"
        "        out = self.forward(%s)\n"
        "    return out\n" % (params, args, args))
    # ScriptModule.define needs the Python-side concrete type, which a
    # loaded module lacks; the C++ define takes one made from its JIT type.
    concrete = torch._C.ConcreteModuleType.from_jit_type(frozen._c._type())
    frozen._c._define(concrete, src, lambda name: None)
    return frozen._c._get_method("bench_loop")


def agree(a, b):
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.shape == b.shape and a.dtype == b.dtype and \
            torch.allclose(a, b, rtol=1e-5, atol=1e-5, equal_nan=True)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(map(agree, a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(agree(a[k], b[k]) for k in a)
    return a == b


def detach(v):
    """Static Runtime's outputs may be managed by it: copy before the next run."""
    if isinstance(v, torch.Tensor):
        return v.clone()
    if isinstance(v, tuple):
        return tuple(detach(x) for x in v)
    if isinstance(v, list):
        return [detach(x) for x in v]
    if isinstance(v, dict):
        return {k: detach(x) for k, x in v.items()}
    return v


SR_LINE = re.compile(r"Static runtime ms per iter: ([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)")
SR_MANAGED_BYTES = re.compile(r"Total memory managed: ([0-9]+) bytes")
SR_MANAGED_TENSORS = re.compile(r"Total number of managed tensors: ([0-9]+)")


def sr_memory(report):
    """(managed bytes, managed tensors) from a StaticModule.benchmark report;
    None where a line is missing."""
    b = SR_MANAGED_BYTES.search(report)
    t = SR_MANAGED_TENSORS.search(report)
    return (int(b.group(1)) if b else None, int(t.group(1)) if t else None)


def sr_benchmark(sm, inputs, warmup, iters):
    """Runs sm.benchmark, echoing its C++ report to stdout, and returns the
    ms per iteration it reported and the report. The report is written by
    C++ to fd 1, so it is captured through a temporary file."""
    sys.stdout.flush()
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        saved = os.dup(1)
        try:
            os.dup2(tmp.fileno(), 1)
            sm.benchmark(inputs, {}, warmup, iters)
        finally:
            os.dup2(saved, 1)
            os.close(saved)
        tmp.seek(0)
        text = tmp.read().decode("utf-8", "replace")
    sys.stdout.write(text)
    sys.stdout.flush()
    m = SR_LINE.search(text)
    if not m:
        raise SystemExit("pytorch_bench_pt.py: StaticModule.benchmark printed no 'Static runtime ms per iter' line")
    return float(m.group(1)), text


# Everything TorchScript's interpreter and the Static Runtime returned, kept
# until the process leaves with os._exit. On a model with forks, the
# interpreter may resume on an inter-op thread and drop the last reference
# to an output Python wrapped, which takes the GIL, while the main thread
# holds the GIL in a StaticModule call waiting on that thread: a deadlock
# (it is what hung fork_ensemble once; see scripts/make_pt_testdata.py).
HOLD = []


def nested_forks(graph):
    """Whether a forked subgraph of graph forks again."""
    def forks(g):
        return [n for n in g.nodes() if n.kind() == "prim::fork"]
    return any(forks(n.g("Subgraph")) for n in forks(graph))


ONNX_OPSET = 14


def export_onnx(module, inputs, path):
    """Exports module (a ScriptModule or ScriptFunction) to path with
    torch.onnx.export on inputs; returns None, or why it failed."""
    try:
        t0 = time.perf_counter()
        torch.onnx.export(module, tuple(inputs), path, opset_version=ONNX_OPSET)
        print("onnx export: %.1f ms" % ((time.perf_counter() - t0) * 1e3), flush=True)
        return None
    except Exception as e:  # any exporter failure is a note, not the end
        return first_line(e)


def first_line(e):
    """An exception's type and the first line of its message."""
    return ("%s: %s" % (type(e).__name__, e)).strip().splitlines()[0][:500]


def main():
    if len(sys.argv) not in (7, 8, 9, 10):
        raise SystemExit(__doc__)
    model_path, inputs_path = sys.argv[1], sys.argv[2]
    warmup, iters, repeats = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    out_path = sys.argv[6]
    interop = int(sys.argv[7]) if len(sys.argv) >= 8 else 1
    intraop = int(sys.argv[8]) if len(sys.argv) >= 9 else 1
    onnx_path = sys.argv[9] if len(sys.argv) == 10 else ""
    if iters < 1 or repeats < 1 or warmup < 0 or interop < 1 or intraop < 1:
        raise SystemExit("pytorch_bench_pt.py: want WARMUP >= 0, ITERS >= 1, REPEATS >= 1, INTEROP >= 1, INTRAOP >= 1")
    # Before any parallel work: PyTorch fixes the inter-op pool's size
    # when it first starts it, and refuses to change it after.
    torch.set_num_interop_threads(interop)
    torch.set_num_threads(intraop)
    torch.set_grad_enabled(False)

    inputs = torch.load(inputs_path)
    if not isinstance(inputs, (tuple, list)):
        inputs = (inputs,)
    inputs = list(inputs)

    t0 = time.perf_counter()
    model = torch.jit.load(model_path)
    t1 = time.perf_counter()
    model.eval()
    frozen = model if is_frozen(model) else torch.jit.freeze(model)
    t2 = time.perf_counter()
    if interop == 1 and nested_forks(frozen.graph):
        # Its aten::wait blocks the only inter-op thread, which the outer
        # forked call holds while its own fork waits in the queue.
        raise SystemExit("pytorch_bench_pt.py: PyTorch's Static Runtime deadlocks on nested forks "
                         "with 1 inter-op thread; use -interop 2 or more")
    # A model PyTorch's Static Runtime cannot build or run still gets the
    # interpreter's figures, its outputs as the reference, and the ONNX
    # export. (torchvision's vit_b_16, and any traced model with two
    # nn.MultiheadAttention layers, fail on the second run: "Cannot access
    # data pointer of Tensor that doesn't have storage".)
    sm, sr_error, sr_out = None, None, None
    try:
        sm = torch._C._jit_to_static_module(frozen._c)
    except Exception as e:
        sr_error = first_line(e)
    t3 = time.perf_counter()
    load_ms, freeze_ms, sm_ms = (t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3

    if sm is not None:
        try:
            raw = sm(*inputs)
            HOLD.append(raw)
            sr_out = detach(raw)
            HOLD.append(sm(*inputs))
        except Exception as e:
            sm, sr_error = None, first_line(e)
    # Read when the loop's execution plan is first made; see the docstring.
    torch._C._set_graph_executor_optimize(False)
    loop = make_loop(frozen)
    raw = loop(1, *inputs)
    HOLD.append(raw)
    interp_out = detach(raw)
    if sm is None:
        sr_out = interp_out

    sr_us = []
    report = ""
    try:
        for _ in range(repeats if sm is not None else 0):
            ms, report = sr_benchmark(sm, inputs, warmup, iters)
            sr_us.append(ms * 1e3)
    except Exception as e:
        sm, sr_error, sr_out, sr_us, report = None, first_line(e), interp_out, [], ""
    # The last report's plan: after every warm-up, as large as it grows.
    sr_bytes, sr_tensors = sr_memory(report)

    interp_us = []
    calls = 3  # Python calls per repeat; the median is kept
    for rep in range(repeats):
        if warmup:
            HOLD.append(loop(warmup, *inputs))
        per = []
        for _ in range(calls):
            s = time.perf_counter()
            HOLD.append(loop(iters, *inputs))
            per.append((time.perf_counter() - s) / iters * 1e6)
        interp_us.append(statistics.median(per))
        print("interpreter repeat %d: %.3f us" % (rep, interp_us[-1]), flush=True)

    torch.save((sr_out, interp_out), out_path)
    onnx_error = export_onnx(frozen, inputs, onnx_path) if onnx_path else None
    print(json.dumps({
        "interp_us": interp_us,
        "sr_us": sr_us,
        "load_ms": load_ms,
        "freeze_ms": freeze_ms,
        "static_module_ms": sm_ms,
        "prepare_ms": load_ms + freeze_ms + sm_ms,
        "outputs_agree": bool(agree(sr_out, interp_out)),
        "already_frozen": frozen is model,
        "torch_version": torch.__version__,
        "interop_threads": torch.get_num_interop_threads(),
        "intraop_threads": torch.get_num_threads(),
        "sr_managed_bytes": sr_bytes,
        "sr_managed_tensors": sr_tensors,
        "onnx_error": onnx_error,
        "sr_error": sr_error,
    }), flush=True)
    sys.stderr.flush()
    # No interpreter shutdown: it would free HOLD (see above).
    os._exit(0)


if __name__ == "__main__":
    main()
