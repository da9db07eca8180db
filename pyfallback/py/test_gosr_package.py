"""Tests of gosr_package, the torch-free torch.package importer.

Run from this directory with both interpreters:

    /usr/bin/python3 -m unittest -v test_gosr_package   # with torch: compares live
    python3 -m unittest -v test_gosr_package            # no torch (nor numpy)

The archives are made by make_test_packages.py with torch
($GOSR_PYTHON, default /usr/bin/python3) into a temporary directory,
or read from $GOSR_TEST_PACKAGES if set. expected.json holds what
torch.package's own PackageImporter made of them.
"""
import importlib.abc
import json
import os
import pickle
import shutil
import struct
import subprocess
import sys
import tempfile
import traceback
import unittest
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import gosr_package as gp  # noqa: E402

try:
    import numpy as np
except ImportError:
    np = None

PACKAGES = None
EXPECTED = None
_TMP = None


def setUpModule():
    global PACKAGES, EXPECTED, _TMP
    PACKAGES = os.environ.get("GOSR_TEST_PACKAGES")
    if not PACKAGES:
        _TMP = tempfile.mkdtemp(prefix="gosr_package_test_")
        PACKAGES = _TMP
        torch_python = os.environ.get("GOSR_PYTHON") or "/usr/bin/python3"
        if not os.path.exists(torch_python):
            raise unittest.SkipTest(f"{torch_python} (with torch) is needed to make the test packages")
        r = subprocess.run(
            [torch_python, os.path.join(HERE, "make_test_packages.py"), PACKAGES],
            capture_output=True,
            text=True,
        )
        if r.returncode != 0:
            raise unittest.SkipTest(f"cannot make test packages with {torch_python}:\n{r.stderr[-2000:]}")
    with open(os.path.join(PACKAGES, "expected.json")) as f:
        EXPECTED = json.load(f)


def tearDownModule():
    if _TMP:
        shutil.rmtree(_TMP, ignore_errors=True)


def archive(name):
    return os.path.join(PACKAGES, name)


def open_text(**kwargs):
    return gp.PackageImporter(gp.ZipReader(archive("text.pt")), "text.pt", **kwargs)


def torch_available():
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


class _BlockTorch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "torch" or name.startswith("torch."):
            raise ModuleNotFoundError(f"No module named {name!r} (blocked by the test)", name=name)
        return None


class torch_blocked:
    """Makes torch unimportable for a while, as in gosr's interpreters
    (where the real python3 has no torch, this changes nothing)."""

    def __enter__(self):
        self.saved = {k: v for k, v in sys.modules.items() if k == "torch" or k.startswith("torch.")}
        for k in self.saved:
            del sys.modules[k]
        self.finder = _BlockTorch()
        sys.meta_path.insert(0, self.finder)
        return self

    def __exit__(self, *exc):
        sys.meta_path.remove(self.finder)
        for k in [k for k in sys.modules if k == "torch" or k.startswith("torch.")]:
            del sys.modules[k]
        sys.modules.update(self.saved)


def describe(v):
    """The JSON form make_test_packages.describe gives torch's results."""
    if isinstance(v, gp.TensorData):
        dtype = v.dtype
        return {"dtype": dtype, "shape": list(v.shape), "values": v.tolist()}
    if np is not None and isinstance(v, np.ndarray):
        return {"dtype": str(v.dtype), "shape": list(v.shape), "values": v.tolist()}
    if isinstance(v, dict):
        return {str(k): describe(x) for k, x in v.items()}
    if hasattr(v, "__dict__") and not isinstance(v, type):
        return {"class": type(v).__qualname__, "fields": describe(vars(v))}
    return v


def tensor_view(t):
    """(dtype, shape, values) of a default-factory tensor."""
    d = describe(t)
    return d["dtype"], d["shape"], d["values"]


class TestImport(unittest.TestCase):
    def test_same_results_as_torch_package(self):
        want = EXPECTED["text"]
        imp = open_text()
        tok = imp.import_module("textpkg.tok")
        cases = [
            ("tokenize", tok.tokenize(want["text"]), want["tokenize"]),
            ("to_json (json extern)", tok.to_json(want["text"]), want["to_json"]),
            ("package __init__", imp.import_module("textpkg").VERSION, want["version"]),
            ("relative and absolute imports", imp.import_module("textpkg.sub.norm").same_vocab(),
             want["same_vocab"]),
            ("pickled packaged class", imp.load_pickle("data", "tok.pkl")(want["text"]), want["tokenizer"]),
            ("extern_modules", imp.extern_modules, want["extern_modules"]),
            ("python_version", imp.python_version(), want["python_version"]),
        ]
        for what, got, expected in cases:
            with self.subTest(what):
                self.assertEqual(got, expected)

    def test_clashing_modules_side_by_side(self):
        a = gp.PackageImporter(gp.ZipReader(archive("clash_a.pt")), "clash_a.pt")
        b = gp.PackageImporter(gp.ZipReader(archive("clash_b.pt")), "clash_b.pt")
        ra, rb = a.import_module("models.resnet"), b.import_module("models.resnet")
        self.assertIsNot(ra, rb)
        self.assertNotEqual(ra.__name__, rb.__name__)
        for imp, mod, key in [(a, ra, "clash_a"), (b, rb, "clash_b")]:
            with self.subTest(key):
                want = EXPECTED[key]
                net = imp.load_pickle("data", "net.pkl")
                self.assertIs(type(net), mod.Net, "a pickle's class comes from its own importer")
                self.assertEqual(
                    [mod.NAME, mod.forward(3), net.run(3)], [want["name"], want["forward"], want["net_run"]]
                )
                self.assertTrue(mod.__name__.startswith(imp.id() + "."))

    def test_nothing_added_to_sys_modules(self):
        import json  # noqa: F401  (externs come from the system, as they should)
        import re  # noqa: F401

        before = set(sys.modules)
        imp = open_text()
        for name in ["textpkg", "textpkg.tok", "textpkg.dyn", "textpkg.mocked_user", "textpkg.holder"]:
            imp.import_module(name)
        imp.load_pickle("data", "tok.pkl")
        added = set(sys.modules) - before
        self.assertFalse(
            [m for m in added if "textpkg" in m or "gosr_package_" in m or "mock" in m],
            f"packaged modules leaked into sys.modules: {sorted(added)}",
        )
        self.assertIn("textpkg.tok", imp.modules)

    def test_importlib_in_packaged_code_stays_in_the_package(self):
        imp = open_text()
        dyn = imp.import_module("textpkg.dyn")
        # torch.package's importer lets this escape to sys.path and fail.
        self.assertTrue(EXPECTED["text"]["vocab_size_torch"].startswith("ModuleNotFoundError"))
        self.assertEqual(dyn.vocab_size(), 6)
        clash = gp.PackageImporter(gp.ZipReader(archive("clash_a.pt")), "clash_a.pt")
        clash.import_module("models.resnet")
        with self.assertRaises(ModuleNotFoundError) as cm:
            dyn.import_named("models.resnet")  # loaded by another importer: not reachable
        self.assertIn("text.pt", str(cm.exception))

    def test_mocked_module(self):
        imp = open_text()
        m = imp.import_module("textpkg.mocked_user")
        with self.assertRaises(NotImplementedError) as cm:
            m.call_helper()
        self.assertEqual(type(cm.exception).__name__, EXPECTED["text"]["mock_error"])
        self.assertIn("mocked out during packaging", str(cm.exception))
        want = EXPECTED["text"]["mocked_repr"].replace("<torch_package_0>", imp.id())
        self.assertEqual(m.mocked_repr(), want)

    def test_traceback_shows_packaged_source(self):
        with open(os.path.join(PACKAGES, "sources", "text", "textpkg", "tok.py")) as f:
            lines = f.read().splitlines()
        lineno = next(i + 1 for i, line in enumerate(lines) if "FAIL-LINE" in line)
        imp = open_text()
        tok = imp.import_module("textpkg.tok")
        try:
            tok.fail("the cat")
        except ValueError:
            text = traceback.format_exc()
        else:
            self.fail("fail() did not raise")
        self.assertIn(f'File "text.pt/textpkg/tok.py", line {lineno}, in fail', text)
        self.assertIn(lines[lineno - 1].strip(), text)
        self.assertIn("ValueError: packaged failure on 2 ids", text)

    def test_missing_module(self):
        imp = open_text()
        dyn = imp.import_module("textpkg.dyn")
        for what, call in [
            ("import_module", lambda: imp.import_module("textpkg.nothere")),
            ("from packaged code", lambda: dyn.import_named("nothere")),
        ]:
            with self.subTest(what), self.assertRaises(ModuleNotFoundError) as cm:
                call()
            msg = str(cm.exception)
            self.assertIn("nothere", msg)
            self.assertIn('archive "text.pt"', msg)
        self.assertNotIn("textpkg.nothere", imp.modules)

    def test_import_torch_without_torch(self):
        imp = open_text()
        with torch_blocked():
            with self.assertRaises(ImportError) as cm:
                imp.import_module("textpkg.uses_torch")
        msg = str(cm.exception)
        self.assertIn("torch is not importable in gosr's private interpreters", msg)
        self.assertIn("text.pt", msg)
        self.assertIn("No module named 'torch'", msg, "the underlying error is kept")
        self.assertIsInstance(cm.exception.__cause__, ImportError)
        self.assertNotIn("textpkg.uses_torch", imp.modules, "a module that failed is not kept")

    @unittest.skipUnless(torch_available(), "torch is not importable here")
    def test_import_torch_where_torch_exists(self):
        imp = open_text()
        self.assertEqual(imp.import_module("textpkg.uses_torch").zeros(2), [0.0, 0.0])

    def test_resolve(self):
        imp = open_text()
        fn = imp.resolve("textpkg.tok:tokenize")
        self.assertEqual(fn("the mat"), [1, 5])
        tok = imp.import_module("textpkg.tok")
        self.assertIs(imp.resolve("textpkg.tok:Tokenizer.__call__"), tok.Tokenizer.__call__)
        bad = [("textpkg.tok", ValueError), ("textpkg.tok:nope", AttributeError), ("nope:f", ModuleNotFoundError)]
        for target, err in bad:
            with self.subTest(target), self.assertRaises(err) as cm:
                imp.resolve(target)
            self.assertIn("text.pt", str(cm.exception))

    def test_resources_and_file_structure(self):
        imp = open_text()
        self.assertEqual(imp.load_text("__gosr__", "fallbacks.json"), "[]")
        self.assertEqual(imp.load_binary("__gosr__", "fallbacks.json"), b"[]")
        with self.assertRaises(gp.RecordNotFoundError) as cm:
            imp.load_binary("__gosr__", "nothere.json")
        self.assertIn("__gosr__/nothere.json", str(cm.exception))
        tree = imp.file_structure(include="textpkg/**")
        self.assertTrue(tree.has_file("textpkg/sub/norm.py"))
        self.assertFalse(tree.has_file("data/tok.pkl"))

    def test_mangle_names(self):
        imp = open_text()
        self.assertRegex(imp.id(), r"^<gosr_package_\d+>$")
        self.assertEqual(gp.demangle(imp.id() + ".a.b"), "a.b")
        self.assertEqual(gp.demangle("a.b"), "a.b")
        self.assertIs(imp.import_module(imp.id() + ".textpkg.vocab"), imp.import_module("textpkg.vocab"))


class TestPickles(unittest.TestCase):
    def test_tensors_same_values_as_torch(self):
        want = EXPECTED["text"]["tensors"]
        with torch_blocked():  # the unpickler must not need torch
            got = open_text().load_pickle("data", "tensors.pkl")
        self.assertEqual(sorted(got), sorted(want))
        for key in want:
            with self.subTest(key):
                g = describe(got[key])
                w = want[key]
                if key == "bf" and np is not None:
                    self.assertEqual(g["dtype"], "float32", "numpy has no bfloat16: float32")
                    g["dtype"] = "bfloat16"
                if key == "f64" and np is not None:
                    g["dtype"] = "float64"
                self.assertEqual(g, w)

    def test_tensor_factory_gets_shared_storages(self):
        calls = []

        def factory(buf, dtype, offset, size, stride, requires_grad):
            calls.append((buf, dtype, offset, size, stride, requires_grad))
            return len(calls) - 1

        got = open_text(tensor_factory=factory).load_pickle("data", "tensors.pkl")
        base, view, t = (calls[got[k]] for k in ("base", "view", "t"))
        self.assertEqual(base[1:], ("float32", 0, (3, 4), (4, 1), False))
        self.assertEqual(view[1:], ("float32", 5, (2, 2), (4, 1), False))
        self.assertEqual(t[1:], ("float32", 0, (4, 3), (1, 4), False))
        self.assertIs(base[0], view[0], "one buffer per storage")
        self.assertIs(base[0], t[0])
        self.assertIs(calls[got["holder"].weight][0], base[0])
        self.assertEqual(calls[got["param"]][5], True, "a Parameter requires grad")

    def test_default_tensor_without_numpy(self):
        # TensorData is what interpreters without numpy get; check it here too.
        seen = []

        def factory(*args):
            t = gp.TensorData(*args)
            seen.append(t)
            return t

        got = open_text(tensor_factory=factory).load_pickle("data", "tensors.pkl")
        want = EXPECTED["text"]["tensors"]
        self.assertEqual(got["view"].tolist(), want["view"]["values"])
        self.assertEqual(got["bf"].tolist(), want["bf"]["values"])
        self.assertEqual(got["scalar"].tolist(), 3.5)
        if np is not None:
            arr = np.asarray(got["t"])
            self.assertEqual(arr.tolist(), want["t"]["values"])
            self.assertTrue(np.shares_memory(arr, np.asarray(got["base"])), "__array_interface__ copies nothing")
        data = pickle.dumps(got["view"], protocol=5)
        self.assertEqual(pickle.loads(data).tolist(), want["view"]["values"])

    @unittest.skipIf(np is None, "numpy is not importable here")
    def test_numpy_arrays(self):
        got = open_text().load_pickle("data", "np.pkl")
        self.assertEqual(describe(got), EXPECTED["text"]["np"])
        self.assertEqual(open_text().import_module("textpkg.arrays").total([1.0, 2.5]), 3.5)

    @unittest.skipUnless(torch_available() and np is not None, "needs torch and numpy")
    def test_live_against_torch_package(self):
        import torch.package

        theirs = torch.package.PackageImporter(archive("text.pt"))
        ours = open_text()
        want = theirs.load_pickle("data", "tensors.pkl")
        got = ours.load_pickle("data", "tensors.pkl")
        for key, t in want.items():
            if not isinstance(t, torch.Tensor) or t.dtype == torch.bfloat16:
                continue
            with self.subTest(key):
                a = got[key]
                self.assertEqual(a.shape, tuple(t.shape))
                self.assertEqual(a.strides, tuple(s * t.element_size() for s in t.stride()))
                np.testing.assert_array_equal(a, t.detach().numpy())
        theirs_tree = str(theirs.file_structure(include="textpkg/**"))
        same_name = gp.PackageImporter(gp.ZipReader(archive("text.pt")), theirs.filename)
        ours_tree = str(same_name.file_structure(include="textpkg/**"))
        self.assertEqual(ours_tree, theirs_tree)

    def test_script_module_pickle(self):
        with self.assertRaises(gp.PackageError) as cm:
            open_text().load_pickle("model", "model.pkl")
        msg = str(cm.exception)
        for part in ["text.pt", "model/model.pkl", "TorchScript", "Go loader"]:
            self.assertIn(part, msg)

    def test_replication_through_a_second_importer(self):
        first, second = open_text(), open_text()
        cases = {
            "tokenizer": first.load_pickle("data", "tok.pkl"),
            "tensors": first.load_pickle("data", "tensors.pkl"),
            "function": first.import_module("textpkg.tok").tokenize,
        }
        for key, obj in cases.items():
            with self.subTest(key):
                buffers = []
                data = gp.dumps(obj, first, protocol=5, buffer_callback=buffers.append)
                self.assertNotIn(b"gosr_package_", data, "module names are demangled")
                copy = gp.loads(data, second, buffers=buffers)
                self.assertEqual(describe(copy), describe(obj))
                if key == "tokenizer":
                    self.assertIs(type(copy), second.import_module("textpkg.tok").Tokenizer)
                    self.assertEqual(copy("the cat"), [1, 20])
                if key == "function":
                    self.assertIs(copy, second.import_module("textpkg.tok").tokenize)
                if key == "tensors":
                    self.assertIs(type(copy["holder"]), second.import_module("textpkg.holder").Holder)
                    self.assertTrue(buffers, "tensor memory travels out of band")
                    if np is not None:
                        self.assertTrue(np.shares_memory(copy["base"], obj["base"]), "not copied")
        # without the importer, dumps finds it from the mangled name
        self.assertEqual(gp.loads(gp.dumps(cases["tokenizer"]), second)("the cat"), [1, 20])


class _Reader(gp.Reader):
    """A Reader over another, with entries replaced or hidden."""

    def __init__(self, inner, replace=None, hide=()):
        self.inner, self.replace, self.hide = inner, replace or {}, set(hide)

    def records(self):
        return [r for r in self.inner.records() if r not in self.hide]

    def read(self, name):
        if name in self.hide:
            raise KeyError(name)
        if name in self.replace:
            return self.replace[name]
        return self.inner.read(name)


class TestBadArchives(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="gosr_package_bad_")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def write(self, name, data):
        path = os.path.join(self.tmp, name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def test_corrupt_archives(self):
        with open(archive("text.pt"), "rb") as f:
            good = f.read()
        with zipfile.ZipFile(archive("text.pt")) as z:
            info = z.getinfo("text/textpkg/tok.py")
        # flip a byte of tok.py's data: the zip still opens, the entry fails
        # the local header's name and extra lengths (PyTorch pads the extra)
        name_len, extra_len = struct.unpack_from("<HH", good, info.header_offset + 26)
        start = info.header_offset + 30 + name_len + extra_len
        flipped = bytearray(good)
        flipped[start + 5] ^= 0xFF
        cases = [
            ("not a zip", b"this is not an archive", "not a readable zip archive"),
            ("truncated", good[: len(good) // 2], "not a readable zip archive"),
            ("bad entry", bytes(flipped), "entry textpkg/tok.py"),
        ]
        for what, data, want in cases:
            with self.subTest(what), self.assertRaises(gp.PackageError) as cm:
                path = self.write(what.replace(" ", "_") + ".pt", data)
                gp.PackageImporter(gp.ZipReader(path), "bad.pt").import_module("textpkg.tok")
            self.assertIn(want, str(cm.exception))

    def test_missing_file(self):
        with self.assertRaises(gp.PackageError) as cm:
            gp.ZipReader(os.path.join(self.tmp, "nothere.pt"))
        self.assertIn("nothere.pt", str(cm.exception))

    def test_not_a_package(self):
        path = os.path.join(self.tmp, "plain.pt")
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("plain/data.pkl", pickle.dumps(1))
        with self.assertRaises(gp.PackageError) as cm:
            gp.PackageImporter(gp.ZipReader(path), "plain.pt")
        self.assertIn(".data/extern_modules", str(cm.exception))

    def test_bad_entries(self):
        inner = gp.ZipReader(archive("text.pt"))
        cases = [
            ("missing storage", {"hide": [".data/0.storage"]}, "tensors.pkl", ".data/0.storage"),
            ("short storage", {"replace": {".data/0.storage": b"\0" * 8}}, "tensors.pkl",
             "needs 12 float32 elements"),
            ("corrupt pickle", {"replace": {"data/tok.pkl": b"\x80\x04garbage"}}, "tok.pkl", "data/tok.pkl"),
        ]
        for what, kw, entry, want in cases:
            with self.subTest(what), self.assertRaises(gp.PackageError) as cm:
                gp.PackageImporter(_Reader(inner, **kw), "bad.pt").load_pickle("data", entry)
            self.assertIn(want, str(cm.exception))
            self.assertIn("bad.pt", str(cm.exception))

    def test_source_that_fails_to_run(self):
        inner = gp.ZipReader(archive("text.pt"))
        broken = _Reader(inner, replace={"textpkg/vocab.py": b"VOCAB = {\n  1/0: 1}\n"})
        imp = gp.PackageImporter(broken, "bad.pt")
        try:
            imp.import_module("textpkg.vocab")
        except ZeroDivisionError:
            text = traceback.format_exc()
        else:
            self.fail("importing a module that divides by zero did not raise")
        self.assertIn('File "bad.pt/textpkg/vocab.py", line 2', text)
        self.assertIn("1/0: 1}", text)
        self.assertNotIn("textpkg.vocab", imp.modules)


if __name__ == "__main__":
    unittest.main()
