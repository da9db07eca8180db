"""Writes the torch.package archives of gosr's Python fallback tests, and the
outputs PyTorch gets by running those archives.

Usage: /usr/bin/python3 scripts/make_pyfallback_testdata.py [OUTDIR] [--only NAME...]
       /usr/bin/python3 scripts/make_pyfallback_testdata.py [OUTDIR] --check
       /usr/bin/python3 scripts/make_pyfallback_testdata.py [OUTDIR] --bench

OUTDIR (default testdata/pyfallback) gets, for each case NAME below:
  NAME.pt            one torch.package archive (scripts/gosr_fallback.py's
                     export): the frozen scripted model at model/model.pkl,
                     the packaged sources (from scripts/pyfallback_src), the
                     op schemas at __gosr__/fallbacks.json, extra pickles
  NAME.expected.pt   torch.save of a dict:
                       "inputs":  [case, ...], each case the list of the
                                  model's positional arguments
                       "outputs": [output of the model for each case]
                       "calls":   [{"fn": "pkg.mod:qualname", "args": [...],
                                    "result": ...}]: packaged functions called
                                  alone, converted as a graph node converts
                       "errors":  [{"inputs": case, "message": str}]: cases
                                  that fail, and the start of the error
                       "objects": (objects only) what the archive's pickles hold
Every expected value comes from running THE ARCHIVE in a fresh PyTorch
process through gosr_fallback.load (not from the objects that made it), and
a third fresh process loads every archive again and checks them (--check
does only that). The packaged sources never import torch.

Each archive is made in a fresh process (a fallback's name "pkg.mod:qualname"
is global to a process, and clash_a and clash_b both have models.resnet),
with PYTHONHASHSEED=0 and this file compiled under its relative name, since
TorchScript's debug info records source file names: the output is the same
from run to run.
"""
import argparse
import os
import subprocess
import sys

REPO_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) if "__file__" in globals() else os.getcwd()
SELF = "scripts/make_pyfallback_testdata.py"
SRC = "scripts/pyfallback_src"
PYTHON = sys.executable

# Every case: its packaged source root (put on sys.path only while
# exporting) and the fallbacks its model calls.
CASES = {
    "tokenizer": (SRC, ["textpkg.tok:tokenize"]),
    "numpy_feat": (SRC, ["numpkg.feat:spectrum"]),
    "clash_a": (f"{SRC}/clash_a", ["models.resnet:head", "models.resnet:name"]),
    "clash_b": (f"{SRC}/clash_b", ["models.resnet:head", "models.resnet:name"]),
    "objects": (SRC, ["objpkg.norm:l2_normalize"]),
    "errors": (SRC, ["errpkg.bad:fail", "errpkg.bad:spin"]),
}

TOKENIZER_BATCHES = [
    ["Hello, world!", "The quick brown fox jumps over the lazy dog."],
    ["Café naïve résumé: déjà vu", "Tokenizers split UNKNOWN words into word-pieces, re-tokenizing.",
     "number 12345 and symbols #$% (x_y)", "日本語 text"],
    ["Return a new list containing all items from the iterable in ascending order.",
     "A custom key function can be supplied to customize the sort order, and the reverse "
     "flag can be set to request the result in descending order.",
     "If the file cannot be opened, an error is raised; the default encoding is platform dependent.",
     "Raise a ValueError if the value is not present, unless a default is given."],
    [""],
]
BENCH_BATCH = 2  # index into TOKENIZER_BATCHES: four sentences


def child(mode, name, outdir):
    """Runs this file's text in a fresh process, compiled under its relative name."""
    boot = (f"import sys; sys.argv = [{SELF!r}, {mode!r}, {name!r}, {outdir!r}]; "
            f"exec(compile(open({SELF!r}).read(), {SELF!r}, 'exec'))")
    env = dict(os.environ, PYTHONHASHSEED="0", PYTHONDONTWRITEBYTECODE="1")
    subprocess.run([PYTHON, "-c", boot], cwd=REPO_DIR, env=env, check=True)


# ---------------------------------------------------------------------------
# Export (child process, the packaged sources importable).

def build(name):
    """The model of a case (scripted, frozen), export options and check inputs."""
    import torch
    from torch import Tensor, nn
    from typing import List, Tuple

    import gosr_fallback as gf

    torch.manual_seed(0)
    fb = {fn: gf.fallback(fn) for fn in CASES[name][1]}

    if name == "tokenizer":
        from textpkg.vocab import VOCAB

        tokenize = fb["textpkg.tok:tokenize"]

        class TextClassifier(nn.Module):
            def __init__(self):
                super().__init__()
                self.bag = nn.EmbeddingBag(len(VOCAB), 64, mode="mean")
                self.fc1 = nn.Linear(64, 64)
                self.fc2 = nn.Linear(64, 8)

            def forward(self, texts: List[str]) -> Tensor:
                ids, offsets = tokenize(texts)
                h = self.bag(ids, offsets)
                return self.fc2(torch.relu(self.fc1(h)))

        return TextClassifier(), dict(intern=["textpkg.**"])

    if name == "numpy_feat":
        spectrum = fb["numpkg.feat:spectrum"]

        class SpectrumNet(nn.Module):
            def __init__(self):
                super().__init__()
                self.inp = nn.Linear(32, 32)
                self.out = nn.Linear(17, 8)

            def forward(self, x: Tensor) -> Tensor:
                return self.out(spectrum(self.inp(x)))

        return SpectrumNet(), dict(intern=["numpkg.**"], extern=["numpy.**", "numpy"])

    if name in ("clash_a", "clash_b"):
        head = fb["models.resnet:head"]
        model_name = fb["models.resnet:name"]

        class Clash(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(3, 3)

            def forward(self, x: Tensor) -> Tuple[Tensor, str]:
                # name() has no tensor argument and constant ones only:
                # freezing must keep the call (the op has side effects).
                return self.lin(head(x)), model_name()

        return Clash(), dict(intern=["models.**"])

    if name == "objects":
        import numpy as np
        from objpkg.norm import Normalizer

        l2_normalize = fb["objpkg.norm:l2_normalize"]

        class Objects(nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = nn.Linear(4, 4)

            def forward(self, x: Tensor) -> Tensor:
                return l2_normalize(self.lin(x))

        normalizer = Normalizer(
            mean=np.array([0.5, -1.0, 2.0, 0.0], dtype=np.float32),
            std=np.array([1.0, 2.0, 0.5, 4.0], dtype=np.float32),
            meta={"version": 3, "labels": ["neg", "neu", "pos"], "scale": 0.5,
                  "enabled": True, "shape": (2, 2), "none": None},
            name="features-v3")
        weight = torch.arange(12, dtype=torch.float32).reshape(3, 4)
        tensors = {
            "weight": weight,
            "weight_t": weight.t(),  # same storage, other strides
            "row": weight[1],  # same storage, an offset
            "ids": torch.tensor([3, 1, 4, 1, 5], dtype=torch.int64),
            "mask": torch.tensor([True, False, True]),
            "half": torch.tensor([1.5, -2.25], dtype=torch.float16),
            "scalar": torch.tensor(7.0, dtype=torch.float64),
        }
        return Objects(), dict(
            intern=["objpkg.**"], extern=["numpy.**", "numpy"], mock=["fakedep.**"],
            pickles={"objs/normalizer.pkl": normalizer, "objs/tensors.pkl": tensors})

    if name == "errors":
        fail = fb["errpkg.bad:fail"]
        spin = fb["errpkg.bad:spin"]

        class Errors(nn.Module):
            def forward(self, x: Tensor, mode: int) -> Tensor:
                # mode 0: fail (raises for a negative sum); else spin (30 s).
                if mode == 0:
                    y = fail(x)
                else:
                    y = spin(x)
                return y * 2.0

        return Errors(), dict(intern=["errpkg.**"])

    raise ValueError(f"unknown case {name!r}")


def export_case(name, outdir):
    import torch

    import gosr_fallback as gf

    model, opts = build(name)
    scripted = torch.jit.script(model.eval())
    frozen = torch.jit.freeze(scripted)
    # Freezing must keep every call (CONSERVATIVE ops are never folded).
    called = gf._called_functions(frozen)
    want = set(CASES[name][1])
    if called != want:
        raise SystemExit(f"{name}: the frozen graph calls {sorted(called)}, want {sorted(want)}")
    path = os.path.join(outdir, f"{name}.pt")
    doc = gf.export(path, frozen, **opts)
    print(f"{path}: {os.path.getsize(path)} bytes, ops "
          + ", ".join(f"{op['schema']} {op['functions']}" for op in doc["ops"]))


# ---------------------------------------------------------------------------
# Expected outputs (child process, only the archive: no packaged sources).

def inputs_of(name):
    import torch

    g = torch.Generator().manual_seed(1)
    if name == "tokenizer":
        return [[batch] for batch in TOKENIZER_BATCHES]
    if name == "numpy_feat":
        return [[torch.randn(4, 32, generator=g)] for _ in range(3)]
    if name in ("clash_a", "clash_b"):
        return [[torch.randn(2, 3, generator=g)], [torch.tensor([[1.0, 2.0, 3.0], [-1.0, 0.0, 0.5]])]]
    if name == "objects":
        return [[torch.randn(3, 4, generator=g)], [torch.zeros(2, 4)]]
    if name == "errors":
        return [[torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), 0]]
    raise ValueError(name)


def direct_calls(name, case_inputs):
    """(fn, args) of packaged functions called alone."""
    import torch

    if name == "tokenizer":
        return [("textpkg.tok:tokenize", [b]) for b in TOKENIZER_BATCHES]
    if name == "numpy_feat":
        return [("numpkg.feat:spectrum", case_inputs[0])]
    if name in ("clash_a", "clash_b"):
        return [("models.resnet:head", case_inputs[1]), ("models.resnet:name", [])]
    if name == "objects":
        return [("objpkg.norm:l2_normalize", [torch.tensor([[3.0, 4.0], [0.0, 0.0]])])]
    if name == "errors":
        return [("errpkg.bad:fail", case_inputs[0][:1])]
    raise ValueError(name)


def error_cases(name):
    import torch

    if name == "errors":
        return [([torch.tensor([[1.0, -2.0, 3.0], [-4.0, 0.0, -6.0]]), 0],
                 "ValueError: bad input: sum is -8.000, want >= 0")]
    return []


def demangle(text):
    """Drops torch.package's per-load module prefix: "<torch_package_0>."."""
    import re

    return re.sub(r"<torch_package_\d+>\.", "", text)


def objects_record(importer):
    """What objects.pt's pickles hold, as torch values (numpy arrays become tensors)."""
    import torch

    norm = importer.load_pickle("objs", "normalizer.pkl")
    x = torch.tensor([[1.0, 1.0, 1.0, 1.0], [0.5, -1.0, 2.0, 0.0]])
    try:
        norm.heavy(1)
        heavy_error = None
    except NotImplementedError as e:
        heavy_error = f"NotImplementedError: {demangle(str(e))}"
    return {
        "normalizer": {
            "class": demangle(f"{type(norm).__module__}.{type(norm).__qualname__}"),
            "mean": torch.from_numpy(norm.mean.copy()),
            "std": torch.from_numpy(norm.std.copy()),
            "mean_dtype": str(norm.mean.dtype),
            "meta": norm.meta,
            "name": norm.name,
        },
        "normalizer_calls": [
            {"method": "__call__", "args": [x], "result": torch.from_numpy(norm(x.numpy()))},
            {"method": "describe", "args": [], "result": norm.describe()},
        ],
        "heavy_error": heavy_error,
        "tensors": importer.load_pickle("objs", "tensors.pkl"),
    }


def run_case(name, path):
    """Runs the archive through gosr_fallback.load: the expected dict."""
    import gosr_fallback as gf

    model = gf.load(path)
    inputs = inputs_of(name)
    rec = {"inputs": inputs, "outputs": [model(*args) for args in inputs]}
    rec["calls"] = [{"fn": fn, "args": args, "result": gf.call(model.importer, fn, *args)}
                    for fn, args in direct_calls(name, inputs)]
    rec["errors"] = []
    for args, want in error_cases(name):
        try:
            model(*args)
        except Exception as e:
            if want not in str(e):
                raise SystemExit(f"{name}: error {e!r} does not say {want!r}")
            rec["errors"].append({"inputs": args, "message": want})
        else:
            raise SystemExit(f"{name}: inputs {args} did not fail")
    if name == "objects":
        rec["objects"] = objects_record(model.importer)
    return rec


def expect_case(name, outdir):
    import torch

    rec = run_case(name, os.path.join(outdir, f"{name}.pt"))
    torch.save(rec, os.path.join(outdir, f"{name}.expected.pt"))


def same(a, b):
    import torch

    if isinstance(a, torch.Tensor):
        return (isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape
                and bool(torch.equal(a, b)))
    if isinstance(a, (list, tuple)):
        return type(a) == type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return (isinstance(b, dict) and list(a) == list(b)
                and all(same(a[k], b[k]) for k in a))
    return type(a) == type(b) and a == b


def check_all(outdir):
    """Loads every archive in this (fresh) process, clash_a and clash_b side
    by side, and compares with the expected files."""
    import torch

    for name in CASES:
        want = torch.load(os.path.join(outdir, f"{name}.expected.pt"))
        got = run_case(name, os.path.join(outdir, f"{name}.pt"))
        for key in want:
            if not same(want[key], got[key]):
                raise SystemExit(f"{name}.pt: {key} differs from {name}.expected.pt")
        print(f"{name}.pt: {len(got['outputs'])} cases, {len(got['calls'])} calls, "
              f"{len(got['errors'])} errors agree")
    # The first clash package, run again after the second was loaded, still calls its own.
    import gosr_fallback as gf

    a = gf.load(os.path.join(outdir, "clash_a.pt"))
    b = gf.load(os.path.join(outdir, "clash_b.pt"))
    x = torch.ones(1, 3)
    na, nb = a(x)[1], b(x)[1]
    if (na, nb, a(x)[1]) != ("resnet-a", "resnet-b", "resnet-a"):
        raise SystemExit(f"clash packages interfere: {na!r}, {nb!r}")
    print("clash_a.pt and clash_b.pt side by side: each calls its own models.resnet")


def bench(outdir):
    """Times the tokenizer alone (timeit) and the whole model in PyTorch."""
    import timeit

    import torch

    import gosr_fallback as gf

    torch.set_num_threads(1)
    model = gf.load(os.path.join(outdir, "tokenizer.pt"))
    tok = model.importer.import_module("textpkg.tok").tokenize
    batch = TOKENIZER_BATCHES[BENCH_BATCH]
    ids, _ = tok(batch)

    def best(f, n):
        return min(timeit.repeat(f, number=n, repeat=7)) / n * 1e6

    print(f"batch of {len(batch)} sentences, {sum(map(len, batch))} chars, {len(ids)} ids")
    print(f"textpkg.tok:tokenize alone: {best(lambda: tok(batch), 2000):.1f} us/call (best of 7)")
    with torch.no_grad():
        print(f"whole model in PyTorch (gf.load, frozen, 1 thread): "
              f"{best(lambda: model(batch), 1000):.1f} us/call (best of 7)")
        print(f"the op alone (kernel: resolve, convert, call, convert): "
              f"{best(lambda: torch.ops.gosr.python_call('textpkg.tok:tokenize', batch), 2000):.1f} us/call")


def main():
    if len(sys.argv) > 1 and sys.argv[1] in ("export", "expect", "check"):
        mode, name, outdir = sys.argv[1:4]
        sys.path.insert(0, "scripts")
        if mode == "export":
            sys.path.insert(0, CASES[name][0])
            export_case(name, outdir)
        elif mode == "expect":
            expect_case(name, outdir)
        else:
            check_all(outdir)
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir", nargs="?", default="testdata/pyfallback")
    ap.add_argument("--only", nargs="+", choices=sorted(CASES), help="remake only these archives")
    ap.add_argument("--check", action="store_true",
                    help="only check the archives against their expected outputs")
    ap.add_argument("--bench", action="store_true", help="time the tokenizer and its model in PyTorch")
    args = ap.parse_args()
    outdir = os.path.relpath(os.path.abspath(args.outdir), REPO_DIR)
    os.chdir(REPO_DIR)
    if args.bench:
        sys.path.insert(0, "scripts")
        bench(outdir)
        return
    if not args.check:
        os.makedirs(outdir, exist_ok=True)
        for name in args.only or CASES:
            child("export", name, outdir)
            child("expect", name, outdir)
    # A fresh process: only the archives and gosr_fallback on sys.path.
    child("check", "-", outdir)

if __name__ == "__main__":
    main()
