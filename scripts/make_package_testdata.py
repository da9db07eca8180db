"""Writes small torch.package archives holding scripted models, for the
tests of gosr's torch.package loader (loaders/torchpackage_test.go).

Usage: /usr/bin/python3 scripts/make_package_testdata.py [OUTDIR]

OUTDIR (default loaders/testdata/package) gets
  mlp.pt                  a scripted MLP pickled as model/model.pkl and its
                          frozen copy as model/frozen.pkl (two ScriptModules,
                          one code folder); data/weights.pkl, a plain dict of
                          the MLP's first weight (storage shared with the
                          ScriptModules); data/both.pkl, a dict holding the
                          scripted MLP (not a ScriptModule itself)
  mlp.inputs.pt           torch.save of the tuple of inputs
  mlp.expected.pt         torch.save of the eager model's output
  fallback.pt             a scripted model calling two gosr::python_call
                          overloads (custom ops defined here through
                          torch.library), the packaged module textpkg.tok
                          (and its package textpkg) they name, numpy as an
                          extern module and the manifest
                          __gosr__/fallbacks.json
  fallback.inputs.pt      the inputs (a str and a tensor)
  fallback.expected.pt    what PyTorch computes, the fallbacks run in Python
  fallback_nomanifest.pt  fallback.pt without the manifest

Tensors reach the Python functions as numpy arrays and their results are
converted by the declared return types, as gosr's fallback does. Every saved
ScriptModule is loaded back through torch.package and must reproduce the
eager output before anything is written.

The archives are not byte-for-byte reproducible: torch.package records
id(obj) of each pickled ScriptModule in the pickle that holds it.
"""
import hashlib
import json
import os
import sys
import types

import numpy as np
import torch
import torch.package
from torch.package import package_exporter

# A ScriptModule in a torch.package is refused unless this gate is off.
package_exporter._gate_torchscript_serialization = False

REPO_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(REPO_DIR, "loaders", "testdata", "package")

# The packaged module the fallbacks live in; the same text runs here (to
# compute the expected outputs) and is what the package holds.
TOK_SOURCE = '''\
"""Tokenizing and numpy helpers called from the graph as gosr fallbacks."""
import numpy as np

VOCAB = {"the": 1, "cat": 2, "sat": 3, "on": 4, "mat": 5, "dog": 6}


def tokenize(text):
    """Word ids of text (0 for unknown words) and the bag offsets (one bag)."""
    ids = [VOCAB.get(w, 0) for w in text.lower().split()]
    return ids, [0]


def top_mask(x, k):
    """1.0 where x is among the k largest values of its row, else 0.0."""
    a = np.asarray(x)
    kth = np.sort(a, axis=-1)[..., -k][..., None]
    return (a >= kth).astype(np.float32)
'''

TEXT_FN = "textpkg.tok:tokenize"
MASK_FN = "textpkg.tok:top_mask"


def overload_name(signature):
    """A stable overload name for a python_call signature."""
    return "s" + hashlib.sha1(signature.encode()).hexdigest()[:8]


TEXT_SIG = "(str fn, str text) -> (Tensor, Tensor)"
MASK_SIG = "(str fn, Tensor x, int k) -> Tensor"
TEXT_OVERLOAD = overload_name(TEXT_SIG)
MASK_OVERLOAD = overload_name(MASK_SIG)
SCHEMAS = {
    TEXT_OVERLOAD: "gosr::python_call." + TEXT_OVERLOAD + TEXT_SIG,
    MASK_OVERLOAD: "gosr::python_call." + MASK_OVERLOAD + MASK_SIG,
}
FUNCTIONS = {TEXT_OVERLOAD: [TEXT_FN], MASK_OVERLOAD: [MASK_FN]}


def tok_module():
    mod = types.ModuleType("textpkg.tok")
    exec(compile(TOK_SOURCE, "textpkg/tok.py", "exec"), mod.__dict__)
    return mod


def to_tensor(v):
    """A fallback's result declared Tensor, converted as gosr does."""
    if isinstance(v, torch.Tensor):
        return v
    if isinstance(v, list):
        if all(isinstance(x, bool) for x in v):
            return torch.tensor(v, dtype=torch.bool)
        if all(isinstance(x, int) for x in v):
            return torch.tensor(v, dtype=torch.int64)
        return torch.tensor(v, dtype=torch.float32)
    return torch.from_numpy(np.array(v, copy=True))


def define_ops(tok):
    """Registers gosr::python_call's overloads, run in Python here."""
    lib = torch.library.Library("gosr", "DEF")
    for overload, schema in SCHEMAS.items():
        lib.define(schema[len("gosr::"):])

    def call_text(fn, text):
        assert fn == TEXT_FN, fn
        ids, offsets = tok.tokenize(text)
        return to_tensor(ids), to_tensor(offsets)

    def call_mask(fn, x, k):
        assert fn == MASK_FN, fn
        return to_tensor(tok.top_mask(x.detach().numpy(), k))

    lib.impl("python_call." + TEXT_OVERLOAD, call_text, "CompositeExplicitAutograd")
    lib.impl("python_call." + MASK_OVERLOAD, call_mask, "CompositeExplicitAutograd")
    return lib


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.fc2 = torch.nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class TextModel(torch.nn.Module):
    """Token ids from Python, then embedding_bag and a linear layer in the
    graph; a numpy mask of the scores from Python again."""

    def __init__(self):
        super().__init__()
        self.bag = torch.nn.EmbeddingBag(8, 4, mode="mean")
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, text: str, x: torch.Tensor):
        ids, offsets = torch.ops.gosr.python_call("textpkg.tok:tokenize", text)
        scores = self.fc(self.bag(ids, offsets)) + x
        mask = torch.ops.gosr.python_call("textpkg.tok:top_mask", scores, 2)
        return scores * mask, ids


def check_same(want, got, what):
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    for w, g in zip(want, got):
        if not torch.allclose(w.float(), g.float(), rtol=1e-5, atol=1e-6):
            sys.exit(f"{what}: loaded back, the output differs from the eager one")


def make_mlp(out):
    torch.manual_seed(0)
    mlp = MLP().eval()
    x = torch.randn(2, 8)
    with torch.no_grad():
        want = mlp(x)
    scripted = torch.jit.script(mlp)
    frozen = torch.jit.freeze(torch.jit.script(mlp))
    path = os.path.join(out, "mlp.pt")
    with torch.package.PackageExporter(path) as e:
        e.save_pickle("model", "model.pkl", scripted)
        e.save_pickle("model", "frozen.pkl", frozen)
        e.save_pickle("data", "weights.pkl", {"fc1.weight": mlp.fc1.weight.detach()})
        e.save_pickle("data", "both.pkl", {"model": scripted})
    imp = torch.package.PackageImporter(path)
    for res in ("model.pkl", "frozen.pkl"):
        check_same(want, imp.load_pickle("model", res)(x), "mlp.pt " + res)
    torch.save((x,), os.path.join(out, "mlp.inputs.pt"))
    torch.save(want, os.path.join(out, "mlp.expected.pt"))


def make_fallback(out):
    tok = tok_module()
    lib = define_ops(tok)  # noqa: F841 (the ops live as long as lib)
    torch.manual_seed(1)
    model = TextModel().eval()
    text, x = "The cat sat on the mat", torch.randn(1, 3)
    with torch.no_grad():
        want = model(text, x)
    scripted = torch.jit.script(model)
    manifest = {
        "version": 1,
        "ops": [
            {"name": "gosr::python_call", "overload": o, "schema": SCHEMAS[o], "functions": FUNCTIONS[o]}
            for o in sorted(SCHEMAS)
        ],
    }
    for name, with_manifest in (("fallback.pt", True), ("fallback_nomanifest.pt", False)):
        path = os.path.join(out, name)
        with torch.package.PackageExporter(path) as e:
            e.extern("numpy")
            e.save_source_string("textpkg", "", is_package=True)
            e.save_source_string("textpkg.tok", TOK_SOURCE)
            e.save_pickle("model", "model.pkl", scripted)
            if with_manifest:
                e.save_text("__gosr__", "fallbacks.json", json.dumps(manifest, indent=1) + "\n")
        got = torch.package.PackageImporter(path).load_pickle("model", "model.pkl")(text, x)
        check_same(want, got, name)
    torch.save((text, x), os.path.join(out, "fallback.inputs.pt"))
    torch.save(want, os.path.join(out, "fallback.expected.pt"))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_OUT
    os.makedirs(out, exist_ok=True)
    make_mlp(out)
    make_fallback(out)
    for name in sorted(os.listdir(out)):
        print(f"{os.path.join(out, name)}: {os.path.getsize(os.path.join(out, name))} bytes")


if __name__ == "__main__":
    main()
