"""Writes TorchScript archives made by PyTorch itself, for gosr's loader tests
and srbench.

Usage: /usr/bin/python3 scripts/make_pt_testdata.py OUTDIR [--large] [--only NAME...]
       /usr/bin/python3 scripts/make_pt_testdata.py --check-peak

For each model NAME (scripts/pt_models.py), OUTDIR gets
  NAME.scripted.pt         torch.jit.script(model), saved as is (not frozen)
  NAME.traced.pt           torch.jit.trace(model, inputs)
  NAME.scripted_frozen.pt  torch.jit.freeze of the scripted module
  NAME.traced_frozen.pt    torch.jit.freeze of the traced module
  NAME.inputs.pt           torch.save of the tuple of positional inputs
  NAME.expected.pt         torch.save of the eager model's output
  NAME.shapes.pt           for models with a batch dimension (pt_models.SHAPES):
                           torch.save of a list of (inputs, expected) pairs at
                           the batch sizes pt_models.SHAPE_BATCHES, inputs
                           structured as NAME.inputs.pt, expected the eager output
and OUTDIR/manifest.json lists them (with tolerances and each variant's ops).
Every saved variant is loaded back and run; it must agree with the eager
output within 1e-5 before anything is written. A case's "shapes" names
NAME.shapes.pt (and "shape_batches" its batch sizes) only when that variant
reproduces every pair of it too.

Each case also records what PyTorch's own Static Runtime (default
StaticModuleOptions) makes of the variant: torch._C._jit_to_static_module
of the frozen module, run by StaticModule.benchmark(inputs, {}, 1, 1), whose
report gives pt_managed_bytes ("Total memory managed: N bytes", the
top-level block's plan; the smallest of SR_BUILDS builds, as it varies) and
pt_managed_tensors ("Total number of managed tensors: N"). Both are left out,
and the note says why, when the Static Runtime cannot run the variant. Every
call of that StaticModule (its forks run on PyTorch's inter-op pool, of
INTEROP_THREADS threads) must agree with the eager output within 1e-5.

That plan is not all the intermediate memory PyTorch's Static Runtime uses:
ops without an out variant in 1.13 (convolutions, max_pool2d, embedding,
...) allocate their outputs and scratch afresh on every run, outside it.
So each case also records pt_unmanaged_peak_bytes: one steady-state call
of the same StaticModule (after benchmark's runs made its plan) under
torch.profiler with profile_memory, whose allocation events (every CPU
allocation and free through c10's allocator, in call order) give the
running total of bytes the call holds; its peak, less the top-level slab
(the call's first allocation, of pt_managed_bytes, freed last) and less the
storages of the outputs it returns (the caller's), is the part above the
slab. pt_peak_bytes = pt_managed_bytes + pt_unmanaged_peak_bytes. Both are
the smallest over SR_PEAK_RUNS calls of each build. --check-peak checks
the method on conv2d -> relu -> linear, whose figures are known.

--large adds the big torchvision models (resnet18, mobilenet_v2; tens of
MB each, never committed); --large-only writes only those. --only
restricts to the named models and keeps the other entries of an existing
manifest. The manifest's generator_sha256 (of this file and pt_models.py)
tells tests whether the fixtures are older than the generator.

Output is byte-for-byte reproducible: fixed seeds; each model is built in
a fresh process (TorchScript's name-mangling counter is per process) with
PYTHONHASHSEED=0 (scripting orders a module's constants by iterating a set
of strings); this file and the models' source are compiled under relative
names, since TorchScript's debug info records source file names (tracing:
every Python frame on the stack), and Python makes imported ones absolute.
"""
import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import warnings
import zlib

# The per-model child runs this file's text compiled under a relative name
# (python3 -c), so it has no __file__; its cwd is the repository.
REPO_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) if "__file__" in globals() else os.getcwd()
SELF = "scripts/make_pt_testdata.py"
MODELS_FILE = "scripts/pt_models.py"

import torch  # noqa: E402

# Rounding of the check that every saved variant reproduces the eager output.
CHECK_TOL = 1e-5

# Tolerances for consumers (gosr against these fixtures): 1e-4 relative by
# default; looser absolute ones where float32 accumulation order differs.
DEFAULT_TOL = (1e-4, 1e-5, "")
TOLS = {
    "transformer_block": (1e-4, 1e-4, "layer norms and softmax over sums of 64-128 products"),
    "transformer_encoder_layer": (1e-4, 1e-4, "layer norms and softmax over sums of 64-128 products"),
    "small_cnn": (1e-4, 1e-4, "3x3 convolutions summed in another order (im2col, folding)"),
    "fork_cnn": (1e-4, 1e-4, "3x3 and 5x5 convolutions summed in another order (im2col)"),
    "resnet18": (1e-4, 1e-3, "20 convolution layers of random weights: accumulation order differences grow"),
    "mobilenet_v2": (1e-4, 1e-3, "50 convolution layers of random weights: accumulation order differences grow"),
}

# Variants that are made but do not mean what their name suggests.
NOTES = {
    ("control_flow", "traced"): "tracing specialises the ifs and loops to the example inputs",
    ("control_flow", "traced_frozen"): "tracing specialises the ifs and loops to the example inputs",
}

SHAPES, SHAPE_BATCHES = {}, ()  # set by load_models

VARIANTS = ("scripted", "traced", "scripted_frozen", "traced_frozen")

# What PyTorch's Static Runtime figures leave out, per model. Its benchmark
# report prints the top-level block's memory planner only.
SR_NOTES = {
    "control_flow": "pt_managed_bytes is the top-level block's plan: PyTorch's Static Runtime plans "
                    "prim::If and prim::Loop bodies separately and does not report them",
    "fork_ensemble": "pt_managed_bytes is 0: PyTorch's Static Runtime runs each forked call in a "
                     "runtime of its own, whose plan it does not report",
    "fork_cnn": "pt_managed_bytes is the caller's plan: PyTorch's Static Runtime runs each forked call "
                "in a runtime of its own, whose plan it does not report",
    "fork_nested": "pt_managed_bytes is the caller's plan: PyTorch's Static Runtime runs each forked call "
                   "(and the calls it forks) in a runtime of its own, whose plan it does not report",
    "fork_loop": "pt_managed_bytes is the caller's plan: PyTorch's Static Runtime runs each forked call "
                 "in a runtime of its own, whose plan it does not report",
}

# PyTorch's inter-op pool size (torch.set_num_interop_threads) per model; 1
# otherwise (PyTorch's default on the 2-core development machine). The
# Static Runtime's aten::wait blocks its thread, so a forked call that forks
# and waits holds one of the pool's threads while its own forks need
# another: with 1 thread fork_nested deadlocks (the TorchScript interpreter
# suspends a waiting call instead, so it does not).
INTEROP_THREADS = {"fork_nested": 2}

# What TorchScript's interpreter and the Static Runtime ran a model with
# forks on (the loaded modules, the interpreter's outputs, the StaticModules
# and what they were built from), kept until the child process exits with
# os._exit. The interpreter resumes a caller after its wait on the inter-op
# thread, which may then drop the last reference to an output that Python
# has wrapped and dropped; freeing a wrapped tensor takes the GIL. If the
# main thread holds it then, in a StaticModule call (its binding keeps the
# GIL) waiting for a fork on that thread, both wait forever: without HOLD,
# 4 of 6 generations of the fork models hung so on a loaded machine.
HOLD = []


# Variants left out, and why.
SKIP = {
    # Scripting TransformerEncoderLayer compiles 1.13's fused fast path
    # (aten::_transformer_encoder_layer_fwd, aten::_native_multi_head_attention)
    # and its eligibility checks into the graph, and freezing keeps them
    # (the checks compare strings at run time); the traced variants hold
    # only ordinary ops (linear, bmm, softmax, layer_norm, ...).
    "transformer_encoder_layer": {"scripted", "scripted_frozen"},
}


def load_models():
    """Imports scripts/pt_models.py under its relative name (see above)."""
    import types
    os.chdir(REPO_DIR)
    mod = types.ModuleType("pt_models")
    mod.__file__ = MODELS_FILE
    sys.modules["pt_models"] = mod
    with open(MODELS_FILE) as f:
        exec(compile(f.read(), MODELS_FILE, "exec"), mod.__dict__)
    global SHAPES, SHAPE_BATCHES
    SHAPES, SHAPE_BATCHES = mod.SHAPES, mod.SHAPE_BATCHES
    return mod.MODELS


def generator_sha256():
    """sha256 over this script and the models' file, as internal/ptfixture
    computes it."""
    h = hashlib.sha256()
    for p in (SELF, MODELS_FILE):
        with open(os.path.join(REPO_DIR, p), "rb") as f:
            h.update(f.read())
    return h.hexdigest()


def seed_for(name):
    torch.manual_seed(zlib.crc32(name.encode()))


def flatten(v):
    if isinstance(v, torch.Tensor):
        return [v]
    if isinstance(v, (list, tuple)):
        return [t for x in v for t in flatten(x)]
    raise TypeError("output of type %s: only tensors and tuples/lists of them are supported" % type(v).__name__)


def same_structure(a, b):
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(map(same_structure, a, b))
    return False


def check(name, variant, got, want):
    if not same_structure(got, want):
        raise SystemExit("%s.%s: output structure differs from the eager model's" % (name, variant))
    for i, (g, w) in enumerate(zip(flatten(got), flatten(want))):
        if g.shape != w.shape or g.dtype != w.dtype:
            raise SystemExit("%s.%s: output %d is %s %s, eager gives %s %s" %
                             (name, variant, i, g.dtype, tuple(g.shape), w.dtype, tuple(w.shape)))
        if not torch.allclose(g, w, rtol=CHECK_TOL, atol=CHECK_TOL):
            d = (g.double() - w.double()).abs().max().item()
            raise SystemExit("%s.%s: output %d differs from eager by %g (> %g)" % (name, variant, i, d, CHECK_TOL))


def op_kinds(module):
    """Sorted node kinds of forward's graph with every call inlined, those
    of prim::fork's subgraphs (the forked calls, inlined too) included."""
    kinds = set()

    def walk(block):
        for n in block.nodes():
            kinds.add(n.kind())
            for b in n.blocks():
                walk(b)
            if n.kind() == "prim::fork":
                walk_graph(n.g("Subgraph"))

    def walk_graph(graph):
        g = graph.copy()
        torch._C._jit_pass_inline(g)
        walk(g.block())
    walk_graph(module.graph)
    return sorted(kinds)


SR_MANAGED_BYTES = re.compile(r"^Total memory managed: ([0-9]+) bytes$", re.M)
SR_MANAGED_TENSORS = re.compile(r"^Total number of managed tensors: ([0-9]+)$", re.M)


def is_frozen(m):
    """As cmd/srbench/pytorch_bench_pt.py decides it: torch.jit.freeze leaves
    no parameters, buffers or attribute reads."""
    if any(True for _ in m.parameters()) or any(True for _ in m.buffers()):
        return False
    g = m.graph.copy()
    torch._C._jit_pass_inline(g)
    return not g.findAllNodes("prim::GetAttr", True)


# PyTorch's Static Runtime builds per case; the smallest plan is recorded.
# Its storage groups depend on the order in which it frees tensors that die
# at the same node, which it takes from a hash set of pointers: a model's
# "Total memory managed" can differ between builds (text_classifier: 2368
# bytes in about 86% of builds, 2560 in the rest). The minimum of 10 is
# reproducible (and the bound gosr must meet). The large models take up to a
# second a build and gave one figure in 30 builds: 2 builds each.
SR_BUILDS = 10
SR_BUILDS_LARGE = 2


def sr_report(frozen, inputs):
    """(StaticModule.benchmark(inputs, {}, 1, 1)'s report, the StaticModule)
    for a new StaticModule of frozen. It writes the report from C++ to fd 1
    and its logs to fd 2: both are captured through a temporary file, so the
    report is parsed and the logs kept out of the output."""
    sys.stdout.flush()
    sys.stderr.flush()
    with tempfile.TemporaryFile(mode="w+b") as tmp:
        saved = [os.dup(1), os.dup(2)]
        try:
            os.dup2(tmp.fileno(), 1)
            os.dup2(tmp.fileno(), 2)
            sm = torch._C._jit_to_static_module(frozen._c)
            sm.benchmark(list(inputs), {}, 1, 1)
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
        tmp.seek(0)
        return tmp.read().decode("utf-8", "replace"), sm


# Profiled steady-state calls per StaticModule build; the smallest peak is
# recorded (the builds' storage groups differ, see SR_BUILDS).
SR_PEAK_RUNS = 2


def allocations(sm, inputs):
    """Calls sm(*inputs) under torch.profiler with profile_memory: returns
    ([(ptr, bytes)], outputs), the call's CPU allocations (bytes > 0) and
    frees (bytes < 0) in the order they happened. c10's CPU allocator
    reports each to the profiler, wherever it was made (SR's planner, an
    op's kernel, a forked call's thread)."""
    prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], profile_memory=True)
    with prof:
        out = sm(*inputs)
    found = []

    def walk(nodes):
        for n in nodes:
            if n.tag == torch._C._profiler._EventType.Allocation:
                f = n.extra_fields
                found.append((n.start_time_ns, len(found), f.ptr, f.alloc_size))
            walk(n.children)
    walk(prof.profiler.kineto_results.experimental_event_tree())
    found.sort()  # by time; ties keep the tree's order
    return [(ptr, size) for _, _, ptr, size in found], out


def peak_above_slab(events, outputs, slab):
    """The peak of bytes held during a call (events as allocations gives
    them), less the slab of slab bytes and the outputs' storages. The
    slab, when there is one, must be the first allocation and be freed by
    the end: SR's MemoryPlanner allocates it as the run starts and frees it
    as it ends."""
    out_ptrs = {t.storage().data_ptr() for t in flatten(outputs)}
    live = {}  # ptr -> index of the allocation event, for what the call allocated
    for i, (ptr, size) in enumerate(events):
        if size > 0:
            live[ptr] = i
        else:
            live.pop(ptr, None)
    # Kept: the outputs, made by the call and still alive; they are the
    # caller's. A free of something the call did not allocate (an earlier
    # call's output) does not count either.
    kept = {i for ptr, i in live.items() if ptr in out_ptrs}
    if slab:
        if not events or events[0][1] != slab or 0 in live.values():
            # Not a model's failure (recorded in its note): the method's.
            raise SystemExit("make_pt_testdata.py: the call's first allocation %s is not a slab of %d bytes "
                             "freed by its end" % (events[0] if events else None, slab))
    held, total, peak = set(), 0, 0
    for i, (ptr, size) in enumerate(events):
        if i in kept:
            continue
        if size > 0:
            held.add(ptr)
        elif ptr in held:
            held.discard(ptr)
        else:
            continue
        total += size
        peak = max(peak, total)
    return peak - slab


def sr_memory(module, inputs, builds, check_output=None, hold=None):
    """Returns (managed bytes, managed tensors, unmanaged peak bytes) from
    PyTorch's Static Runtime (default options) on module, frozen first
    unless it is, as cmd/srbench/pytorch_bench_pt.py builds and benchmarks
    it: the smallest of that many builds, and the smallest peak above the
    slab of SR_PEAK_RUNS calls of each. check_output(output), if given, is
    called on the output of every call. (Not on runAsync's: a generation
    that checked it too hung once, in StaticModule.benchmark, which holds
    the GIL, waiting for a fork while the only inter-op thread waited for
    the GIL to free a tensor that Python had wrapped.) hold, if given, is
    called on the frozen module and each StaticModule (see HOLD)."""
    frozen = module if is_frozen(module) else torch.jit.freeze(module)
    if hold:
        hold(frozen)
    best, unmanaged = None, None
    for _ in range(builds):
        text, sm = sr_report(frozen, inputs)
        if hold:
            hold(sm)
        b, t = SR_MANAGED_BYTES.search(text), SR_MANAGED_TENSORS.search(text)
        if not b or not t:
            raise RuntimeError("StaticModule.benchmark printed no 'Total memory managed' / "
                               "'Total number of managed tensors' line")
        got = (int(b.group(1)), int(t.group(1)))
        best = got if best is None or got[0] < best[0] else best
        for _ in range(SR_PEAK_RUNS):
            events, out = allocations(sm, inputs)
            if check_output:
                check_output(out)
            u = peak_above_slab(events, out, got[0])
            del out  # freed before the next call, as a caller would
            unmanaged = u if unmanaged is None else min(unmanaged, u)
    return best + (unmanaged,)


def check_peak():
    """Checks the peak method where the answer is known: x (1, 3, 16, 16)
    -> conv2d (8 channels, 3x3, padding 1) -> relu -> flatten -> linear (to
    10). SR plans relu's output (8 x 16 x 16 floats, 8192 bytes: the slab);
    conv2d has no out variant, so its output (8192 bytes) is allocated on
    each run, and while it is made 1.13's CPU convolution (thnn_conv2d,
    im2col) holds its column buffer, 3*3*3 x 16*16 floats, 27648 bytes: the
    peak above the slab is 35840. The linear's output is returned, so not
    counted."""
    torch.set_num_threads(1)
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(), torch.nn.Flatten(),
                            torch.nn.Linear(8 * 16 * 16, 10)).eval()
    x = torch.randn(1, 3, 16, 16)
    with torch.no_grad():
        got = sr_memory(torch.jit.trace(m, (x,)), (x,), 2)
    want = (8192, 1, 8192 + 27648)
    print("conv2d -> relu -> linear: managed %d bytes in %d tensors, unmanaged peak %d bytes" % got)
    if got != want:
        raise SystemExit("make_pt_testdata.py --check-peak: got %s, want %s" % (got, want))


def err_line(e):
    """The line of an exception that says what went wrong: TorchScript's
    interpreter errors end with it, after the traceback of both languages."""
    lines = str(e).strip().splitlines()
    last = lines[-1].strip() if lines else ""
    return last if last.startswith(type(e).__name__ + ":") else "%s: %s" % (type(e).__name__, last)


def build_variants(name, module, inputs):
    """Returns {variant: script module}, without the variants in SKIP."""
    skip = SKIP.get(name, set())
    out = {}
    if "scripted" not in skip:
        out["scripted"] = torch.jit.script(module)
    with warnings.catch_warnings():
        # Tracing control_flow warns that it specialises its ifs and loops.
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        out["traced"] = torch.jit.trace(module, inputs, check_trace=False)
    for v in ("scripted", "traced"):
        if v in out and v + "_frozen" not in skip:
            out[v + "_frozen"] = torch.jit.freeze(out[v])
    return out


def make_shapes(name, module, batched):
    """[(inputs, expected)] at each of SHAPE_BATCHES, from its own seed (so
    that the other files do not depend on it)."""
    torch.manual_seed(zlib.crc32((name + ".shapes").encode()))
    pairs = []
    with torch.no_grad():
        for b in SHAPE_BATCHES:
            inputs = tuple(batched(b))
            pairs.append((inputs, module(*inputs)))
    return pairs


def check_shapes(name, variant, module, pairs, hold):
    """None if module reproduces every pair, else why not. hold is called
    on each output (see HOLD)."""
    try:
        with torch.no_grad():
            for i, (inputs, want) in enumerate(pairs):
                got = module(*inputs)
                hold(got)
                if not same_structure(got, want):
                    return "pair %d: output structure differs" % i
                for g, w in zip(flatten(got), flatten(want)):
                    if g.shape != w.shape or not torch.allclose(g, w, rtol=CHECK_TOL, atol=CHECK_TOL):
                        return "pair %d (batch %d): output differs from eager" % (i, SHAPE_BATCHES[i])
    except Exception as e:  # noqa: BLE001 - a traced variant may fail at other sizes
        return "pair %d (batch %d): %s" % (i, SHAPE_BATCHES[i], err_line(e))
    return None


def make(name, builder, large, outdir):
    seed_for(name)
    module, inputs = builder()
    module.eval()
    with torch.no_grad():
        expected = module(*inputs)
        variants = build_variants(name, module, inputs)
    pairs = make_shapes(name, module, SHAPES[name]) if name in SHAPES else None
    shapes_path = name + ".shapes.pt"
    rtol, atol, reason = TOLS.get(name, DEFAULT_TOL)
    entries = []
    for variant in VARIANTS:
        if variant not in variants:
            continue
        path = "%s.%s.pt" % (name, variant)
        full = os.path.join(outdir, path)
        torch.jit.save(variants[variant], full)
        loaded = torch.jit.load(full)
        ops = op_kinds(loaded)
        hold = HOLD.append if "prim::fork" in ops else (lambda _: None)
        hold(loaded)
        with torch.no_grad():
            got = loaded(*inputs)
            hold(got)
            check(name, variant, got, expected)
        e = {"model": name, "variant": variant, "path": path,
             "inputs": name + ".inputs.pt", "expected": name + ".expected.pt",
             "rtol": rtol, "atol": atol, "large": large, "ops": ops}
        if reason:
            e["tolerance_reason"] = reason
        notes = [NOTES[(name, variant)]] if (name, variant) in NOTES else []
        builds = SR_BUILDS_LARGE if large else SR_BUILDS
        try:
            with torch.no_grad():
                managed, e["pt_managed_tensors"], unmanaged = sr_memory(
                    loaded, inputs, builds, lambda out: check(name, variant + " (StaticModule)", out, expected), hold)
            e["pt_managed_bytes"], e["pt_unmanaged_peak_bytes"] = managed, unmanaged
            e["pt_peak_bytes"] = managed + unmanaged
            if name in SR_NOTES:
                notes.append(SR_NOTES[name])
        except Exception as err:  # noqa: BLE001 - recorded, not fatal
            notes.append("PyTorch's Static Runtime cannot run it (%s)" % err_line(err))
        if pairs is not None:
            why = check_shapes(name, variant, loaded, pairs, hold)
            if why is None:
                e["shapes"] = shapes_path
                e["shape_batches"] = list(SHAPE_BATCHES)
            else:
                notes.append("%s does not apply: %s" % (shapes_path, why))
        if notes:
            e["note"] = "; ".join(notes)
        entries.append(e)
    torch.save(tuple(inputs), os.path.join(outdir, name + ".inputs.pt"))
    torch.save(expected, os.path.join(outdir, name + ".expected.pt"))
    if pairs is not None:
        torch.save(pairs, os.path.join(outdir, shapes_path))
    return entries


def one(name, outdir):
    """Child process: writes one model, prints its manifest entries as JSON."""
    models = load_models()
    torch.set_num_threads(1)
    torch.set_num_interop_threads(INTEROP_THREADS.get(name, 1))
    builder, large = models[name]
    entries = make(name, builder, large, outdir)
    print(json.dumps(entries))
    sys.stdout.flush()
    # No interpreter shutdown: HOLD's tensors are not freed, and no inter-op
    # thread can wait for the GIL at exit.
    os._exit(0)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir", nargs="?")
    ap.add_argument("--large", action="store_true", help="also write the large torchvision models")
    ap.add_argument("--large-only", action="store_true", help="write only the large torchvision models")
    ap.add_argument("--only", nargs="+", metavar="NAME", help="write only these models")
    ap.add_argument("--check-peak", action="store_true",
                    help="check the pt_unmanaged_peak_bytes method on a model whose figure is known, and exit")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # internal: the per-model child process
    args = ap.parse_args()
    if args.check_peak:
        check_peak()
        return
    if not args.outdir:
        ap.error("OUTDIR is required")
    outdir = os.path.abspath(args.outdir)
    if args.one:
        one(args.one, outdir)
        return
    cwd = os.getcwd()
    models = load_models()
    os.chdir(cwd)
    names = [n for n, (_, large) in models.items() if (args.large or args.large_only or not large)
             and (large or not args.large_only)]
    if args.only:
        unknown = [n for n in args.only if n not in models]
        if unknown:
            ap.error("unknown model(s) %s; known: %s" % (", ".join(unknown), ", ".join(models)))
        names = [n for n in names if n in args.only]
        if not names:
            ap.error("nothing to write: large models need --large")
    os.makedirs(outdir, exist_ok=True)
    manifest_path = os.path.join(outdir, "manifest.json")
    entries = []
    if args.only and os.path.exists(manifest_path):
        with open(manifest_path) as f:
            entries = [e for e in json.load(f)["cases"] if e["model"] not in names]
    env = dict(os.environ, PYTHONHASHSEED="0")
    for name in names:
        child = "exec(compile(open(%r).read(), %r, 'exec'))" % (SELF, SELF)
        cmd = [sys.executable, "-c", child, outdir, "--one", name] 
        r = subprocess.run(cmd, env=env, cwd=REPO_DIR, stdout=subprocess.PIPE, text=True)
        if r.returncode != 0:
            raise SystemExit("make_pt_testdata.py: model %s failed (exit %d)" % (name, r.returncode))
        got = json.loads(r.stdout.strip().splitlines()[-1])
        entries.extend(got)
        print("%s: %s" % (name, ", ".join(e["variant"] for e in got)), flush=True)
    order = list(models)
    entries.sort(key=lambda e: (order.index(e["model"]) if e["model"] in order else len(order),
                                e["model"], VARIANTS.index(e["variant"])))
    manifest = {"torch_version": torch.__version__,
                "generator": SELF,
                "generator_sha256": generator_sha256(),
                "cases": entries}
    tmp = manifest_path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(manifest, f, indent=1, sort_keys=True)
        f.write("\n")
    os.replace(tmp, manifest_path)


if __name__ == "__main__":
    main()
