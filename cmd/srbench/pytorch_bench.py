"""Runs a gosr fixture (graph IR + safetensors) through PyTorch, for srbench compare.

Usage: python3 pytorch_bench.py MODEL.ir MODEL.safetensors WARMUP ITERS REPEATS [INTEROP [INTRAOP [OUT.onnx]]]

INTRAOP intra-op threads and INTEROP inter-op threads (default 1 each).
With OUT.onnx the graph (as a TorchScript function) is exported there with
torch.onnx.export (opset 14) on the same inputs, for ONNX Runtime; the
JSON line's onnx_error says why when that fails.

The graph text is the one gosr runs; tensor constants are bound in order of
appearance from the c0, c1, ... entries, inputs are in0, in1, ...  PyTorch's
Static Runtime is timed with StaticModule.benchmark (its own C++ loop, no
Python per call); it prints "Static runtime ms per iter", which srbench
reads. The TorchScript interpreter is timed in a Python loop, with a line
"interpreter repeat I: X us" after each repeat (progress). The last line
is a JSON object with the results, among them sr_managed_bytes and
sr_managed_tensors from the last benchmark report ("Total memory managed:
N bytes", "Total number of managed tensors: N"; null when missing).
"""
import json
import os
import re
import struct
import sys
import tempfile
import time

import torch

DTYPES = {"F32": torch.float32, "F64": torch.float64, "F16": torch.float16, "BF16": torch.bfloat16,
          "I64": torch.int64, "I32": torch.int32, "I16": torch.int16, "I8": torch.int8,
          "U8": torch.uint8, "BOOL": torch.bool}


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    base = 8 + n
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        buf = bytearray(data[base + b:base + e])
        dt = DTYPES[info["dtype"]]
        t = torch.frombuffer(buf, dtype=dt) if e > b else torch.empty(0, dtype=dt)
        out[name] = t.reshape(info["shape"]).clone()
    return out, header.get("__metadata__", {})


def tensor_constants(block):
    for n in block.nodes():
        if n.kind() == "prim::Constant" and n.output().type().kind() == "TensorType":
            yield n
        for b in n.blocks():
            yield from tensor_constants(b)


SR_MANAGED_BYTES = re.compile(r"Total memory managed: ([0-9]+) bytes")
SR_MANAGED_TENSORS = re.compile(r"Total number of managed tensors: ([0-9]+)")


def sr_benchmark(sm, inputs, warmup, iters):
    """Runs sm.benchmark, echoing its C++ report (written to fd 1) to
    stdout, and returns the report."""
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
    return text


def main():
    if len(sys.argv) not in (6, 7, 8, 9):
        raise SystemExit(__doc__)
    ir_path, st_path, warmup, iters, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    interop = int(sys.argv[6]) if len(sys.argv) >= 7 else 1
    intraop = int(sys.argv[7]) if len(sys.argv) >= 8 else 1
    onnx_path = sys.argv[8] if len(sys.argv) == 9 else ""
    # Before any parallel work: the inter-op pool's size is fixed when it starts.
    torch.set_num_interop_threads(interop)
    torch.set_num_threads(intraop)
    text = open(ir_path).read()
    # PyTorch's parser reads <Tensor> placeholders, not the inline values it prints.
    text = re.sub(r"value=[^\]\n]*\[ \w+Type\{[^}]*\} \]\]", "value=<Tensor>]", text)
    # It prints nodes without outputs as " = op(...)" but reads them only as
    # "op(...)" (at the block's indentation).
    text = re.sub(r"(?m)^(\s*) = ", r"\1", text)
    graph = torch._C.parse_ir(text, True)
    tensors, meta = read_safetensors(st_path)
    consts = list(tensor_constants(graph))
    for i, n in enumerate(consts):
        n.t_("value", tensors["c%d" % i])
    inputs = []
    i = 0
    while "in%d" % i in tensors:
        inputs.append(tensors["in%d" % i])
        i += 1
    sm = torch._C._jit_to_static_module(graph)
    fn = torch._C._create_function_from_graph("forward", graph)
    out_sr = sm(*inputs)
    out_interp = fn(*inputs)
    # StaticModule.benchmark prints its report; srbench parses the lines.
    report = ""
    for _ in range(repeats):
        report = sr_benchmark(sm, inputs, warmup, iters)
    # The last report's plan: after every warm-up, as large as it grows.
    managed_bytes = SR_MANAGED_BYTES.search(report)
    managed_tensors = SR_MANAGED_TENSORS.search(report)
    interp = []
    for rep in range(repeats):
        for _ in range(warmup):
            fn(*inputs)
        t0 = time.perf_counter()
        for _ in range(iters):
            fn(*inputs)
        interp.append((time.perf_counter() - t0) / iters * 1e6)
        print("interpreter repeat %d: %.3f us" % (rep, interp[-1]), flush=True)
    interp.sort()

    def flat(v):
        if isinstance(v, torch.Tensor):
            return [v]
        if isinstance(v, (list, tuple)):
            return [t for x in v for t in flat(x)]
        return [torch.tensor(v)]
    exp = []
    i = 0
    while "out%d" % i in tensors:
        exp.append(tensors["out%d" % i])
        i += 1
    diff = 0.0
    for a, b in zip(flat(out_sr), exp):
        if a.numel():
            diff = max(diff, (a.double() - b.double()).abs().max().item())
    onnx_error = None
    if onnx_path:
        try:
            torch.onnx.export(fn, tuple(inputs), onnx_path, opset_version=14)
        except Exception as e:  # any exporter failure is a note, not the end
            onnx_error = ("%s: %s" % (type(e).__name__, e)).strip().splitlines()[0][:500]
    print(json.dumps({"torch": torch.__version__, "onnx_error": onnx_error, "interop_threads": torch.get_num_interop_threads(),
                      "intraop_threads": torch.get_num_threads(),
                      "interp_us_python_loop": interp[len(interp) // 2],
                      "sr_max_abs_diff": diff,
                      "sr_managed_bytes": int(managed_bytes.group(1)) if managed_bytes else None,
                      "sr_managed_tensors": int(managed_tensors.group(1)) if managed_tensors else None}))


if __name__ == "__main__":
    main()
