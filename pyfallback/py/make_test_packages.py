"""Make the torch.package archives that test_gosr_package.py loads.

Run with Debian's python3-torch:

    /usr/bin/python3 pyfallback/py/make_test_packages.py OUTDIR

Writes to OUTDIR (nothing is committed; the tests make a temporary one):
  text.pt      textpkg: relative imports, a subpackage, json (extern), numpy
               (extern), a mocked module, `import torch`, importlib inside
               packaged code; pickles of packaged classes with numpy arrays
               and with torch tensors; a scripted model at model/model.pkl
  clash_a.pt   models.resnet ("a")  } same module names, different code
  clash_b.pt   models.resnet ("b")  }
  expected.json  what torch.package's own PackageImporter makes of them
  sources/     the packaged sources as written (tests read line numbers)
"""
import collections
import json
import os
import shutil
import sys
import tempfile
import textwrap

import numpy as np
import torch
import torch.package
import torch.package.package_exporter

TEXT_SOURCES = {
    "textpkg/__init__.py": '''
        """A packaged text pipeline."""
        from .tok import Tokenizer, tokenize

        VERSION = "1.0"
    ''',
    "textpkg/vocab.py": """
        VOCAB = {"<unk>": 0, "the": 1, "cat": 2, "sat": 3, "on": 4, "mat": 5}
    """,
    "textpkg/sub/__init__.py": """
        from .norm import normalize
    """,
    "textpkg/sub/norm.py": """
        import re

        import textpkg.vocab

        from .. import vocab
        from ..vocab import VOCAB

        _WORD = re.compile(r"[a-z<>]+")


        def normalize(text):
            return _WORD.findall(text.lower())


        def same_vocab():
            # three import forms, one module
            return textpkg.vocab.VOCAB is vocab.VOCAB is VOCAB
    """,
    "textpkg/tok.py": """
        import json

        from . import vocab
        from .sub.norm import normalize


        def tokenize(text):
            return [vocab.VOCAB.get(w, 0) for w in normalize(text)]


        def to_json(text):
            return json.dumps({"ids": tokenize(text)}, sort_keys=True)


        def fail(text):
            ids = tokenize(text)
            raise ValueError(f"packaged failure on {len(ids)} ids")  # FAIL-LINE


        class Tokenizer:
            def __init__(self, extra=None):
                self.extra = dict(extra or {})

            def __call__(self, text):
                return [self.extra.get(i, i) for i in tokenize(text)]
    """,
    "textpkg/holder.py": """
        class Holder:
            def __init__(self, **fields):
                self.__dict__.update(fields)

            def names(self):
                return sorted(self.__dict__)
    """,
    "textpkg/arrays.py": """
        import numpy as np


        def total(x):
            return float(np.asarray(x).sum())
    """,
    "textpkg/dyn.py": """
        import importlib


        def vocab_size():
            a = importlib.import_module("textpkg.vocab")
            b = importlib.import_module(".vocab", "textpkg")
            return len(a.VOCAB) if a is b else -1


        def import_named(name):
            return importlib.import_module(name)
    """,
    "textpkg/uses_torch.py": """
        import torch


        def zeros(n):
            return torch.zeros(n).tolist()
    """,
    "textpkg/mocked_user.py": """
        import gosr_mocked_lib
        from gosr_mocked_lib import helper


        def call_helper():
            return helper(1)


        def mocked_repr():
            return repr(gosr_mocked_lib.something)
    """,
}

MOCKED_LIB = """
def helper(x):
    return x

something = 1
"""

CLASH_SOURCE = """
NAME = {name!r}


def forward(x):
    return {expr}


class Net:
    def __init__(self, k):
        self.k = k

    def run(self, x):
        return forward(x) * self.k
"""


def write_sources(root, sources):
    for rel, src in sources.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(textwrap.dedent(src).lstrip("\n"))


def forget(prefixes):
    for name in list(sys.modules):
        if name.split(".")[0] in prefixes:
            del sys.modules[name]


class Scripted(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 2)

    def forward(self, x):
        return torch.relu(self.lin(x))


def tensor_fixtures(Holder):
    base = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    return {
        "base": base,
        "view": base[1:, 1:3],  # offset 5, stride (4, 1), same storage
        "t": base.t(),  # stride (1, 4), same storage
        "ids": torch.tensor([3, 1, 2], dtype=torch.int64),
        "i32": torch.tensor([[-7, 8]], dtype=torch.int32),
        "i16": torch.tensor([300, -300], dtype=torch.int16),
        "i8": torch.tensor([-5, 5], dtype=torch.int8),
        "u8": torch.tensor([250, 1], dtype=torch.uint8),
        "mask": torch.tensor([True, False, True]),
        "half": torch.tensor([0.5, -1.25, 65504.0], dtype=torch.float16),
        "bf": torch.tensor([1.5, -3.0, 1e20], dtype=torch.bfloat16),
        "f64": torch.tensor([1 / 3], dtype=torch.float64),
        "param": torch.nn.Parameter(torch.full((2, 2), 0.25)),
        "scalar": torch.tensor(3.5),
        "empty": torch.zeros(0, 3),
        "od": collections.OrderedDict([("w", torch.tensor([1.0, 2.0])), ("n", 2)]),
        "holder": Holder(weight=base[2], name="h"),
    }


def describe(v):
    """A JSON form of what torch.package loaded, for the tests to compare."""
    if isinstance(v, torch.Tensor):
        t = v.detach()
        if t.dtype == torch.bfloat16:
            t = t.float()  # gosr hands bfloat16 to numpy as float32
        return {"dtype": str(v.dtype).replace("torch.", ""), "shape": list(v.shape), "values": t.tolist()}
    if isinstance(v, np.ndarray):
        return {"dtype": str(v.dtype), "shape": list(v.shape), "values": v.tolist()}
    if isinstance(v, dict):
        return {str(k): describe(x) for k, x in v.items()}
    if hasattr(v, "__dict__") and not isinstance(v, type):
        return {"class": type(v).__qualname__, "fields": describe(vars(v))}
    return v


def outcome(fn):
    try:
        return fn()
    except Exception as e:
        return f"{type(e).__name__}: {e}"


def make_text(out, work):
    src = os.path.join(work, "text_src")
    write_sources(src, TEXT_SOURCES)
    with open(os.path.join(src, "gosr_mocked_lib.py"), "w") as f:
        f.write(MOCKED_LIB)
    sys.path.insert(0, src)
    try:
        import textpkg
        import textpkg.holder

        Holder = textpkg.holder.Holder
        tensors = tensor_fixtures(Holder)
        arrays = Holder(
            arr=np.arange(6, dtype=np.float32).reshape(2, 3),
            ids=np.array([[1, 2], [3, 4]], dtype=np.int64),
            label="np",
        )
        scripted = torch.jit.script(Scripted().eval())
        path = os.path.join(out, "text.pt")
        torch.package.package_exporter._gate_torchscript_serialization = False
        with torch.package.PackageExporter(path) as exp:
            exp.intern("textpkg.**")
            exp.extern(["numpy", "numpy.**"])
            exp.mock("gosr_mocked_lib")
            for mod in ("textpkg", "dyn", "uses_torch", "mocked_user", "arrays"):
                exp.save_module(mod if mod == "textpkg" else "textpkg." + mod)
            exp.save_pickle("data", "tok.pkl", textpkg.Tokenizer(extra={2: 20}))
            exp.save_pickle("data", "tensors.pkl", tensors)
            exp.save_pickle("data", "np.pkl", arrays)
            exp.save_pickle("model", "model.pkl", scripted)
            exp.save_text("__gosr__", "fallbacks.json", "[]")
    finally:
        sys.path.remove(src)
        forget({"textpkg", "gosr_mocked_lib"})
    shutil.copytree(src, os.path.join(out, "sources", "text"))

    imp = torch.package.PackageImporter(path)
    text = "The cat sat on the mat, said <unk>!"
    tok = imp.import_module("textpkg.tok")
    mocked = imp.import_module("textpkg.mocked_user")
    try:
        mocked.call_helper()
        mock_error = None
    except NotImplementedError as e:
        mock_error = type(e).__name__
    return {
        "text": text,
        "tokenize": tok.tokenize(text),
        "to_json": tok.to_json(text),
        "version": imp.import_module("textpkg").VERSION,
        "same_vocab": imp.import_module("textpkg.sub.norm").same_vocab(),
        # torch's importer lets importlib.import_module escape to sys.path
        # (gosr's does not): recorded to show the difference.
        "vocab_size_torch": outcome(imp.import_module("textpkg.dyn").vocab_size),
        "tokenizer": imp.load_pickle("data", "tok.pkl")(text),
        "tensors": describe(imp.load_pickle("data", "tensors.pkl")),
        "np": describe(imp.load_pickle("data", "np.pkl")),
        "total": imp.import_module("textpkg.arrays").total(np.arange(4.0)),
        "mock_error": mock_error,
        "mocked_repr": mocked.mocked_repr(),
        "extern_modules": imp.extern_modules,
        "python_version": imp.python_version(),
        "model_keys": sorted(imp.load_pickle("model", "model.pkl").state_dict()),
    }


def make_clash(out, work, name, expr):
    src = os.path.join(work, f"clash_{name}")
    resnet = CLASH_SOURCE.format(name=name, expr=expr)
    write_sources(src, {"models/__init__.py": "", "models/resnet.py": resnet})
    sys.path.insert(0, src)
    try:
        import models.resnet

        path = os.path.join(out, f"clash_{name}.pt")
        with torch.package.PackageExporter(path) as exp:
            exp.intern("models.**")
            exp.save_module("models.resnet")
            exp.save_pickle("data", "net.pkl", models.resnet.Net(3))
    finally:
        sys.path.remove(src)
        forget({"models"})
    imp = torch.package.PackageImporter(path)
    resnet = imp.import_module("models.resnet")
    net = imp.load_pickle("data", "net.pkl")
    return {"name": resnet.NAME, "forward": resnet.forward(3), "net_run": net.run(3)}


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_test_packages.py OUTDIR")
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        expected = {
            "text": make_text(out, work),
            "clash_a": make_clash(out, work, "a", "x + 1"),
            "clash_b": make_clash(out, work, "b", "x * 2"),
        }
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
