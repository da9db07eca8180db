"""Fixtures for gosr's pickle, zip archive and torch.save loaders.

Run with Debian's python3-torch (/usr/bin/python3), from the repository root:

    /usr/bin/python3 scripts/make_pickle_testdata.py            # remake fixtures
    /usr/bin/python3 scripts/make_pickle_testdata.py describe F...  # JSON of torch.load(F)
    /usr/bin/python3 scripts/make_pickle_testdata.py describe-pickle F...  # of pickle.load(F)

Writes
  loaders/pickle/testdata/      pickles of every protocol + expected.json,
                                malicious pickles, fuzz seeds
  loaders/testdata/torchsave/   torch.save files + expected.json
  loaders/testdata/pickle/      torch.jit.save archives, a ZIP64 archive
                                + expected.json

Expectations use a tagged JSON form (see tag()) that Go decodes without
Python's help.
"""
import collections
import io
import json
import math
import os
import pickle
import sys
import zipfile

torch = None  # imported in main, unless only describing plain pickles

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
PK = os.path.join(ROOT, "loaders", "pickle", "testdata")
TS = os.path.join(ROOT, "loaders", "testdata", "torchsave")
JIT = os.path.join(ROOT, "loaders", "testdata", "pickle")


def tag(o, storages=None):
    """A JSON-able, type-tagged description of o (tensors included)."""
    if o is None:
        return ["none"]
    if isinstance(o, bool):
        return ["bool", o]
    if isinstance(o, int):
        return ["int", str(o)]
    if isinstance(o, float):
        return ["float", repr(o)]
    if isinstance(o, str):
        return ["str", o]
    if isinstance(o, bytearray):
        return ["bytearray", o.hex()]
    if isinstance(o, bytes):
        return ["bytes", o.hex()]
    if torch is not None and isinstance(o, torch.Tensor):
        if storages is None:
            storages = {}
        ptr = o.storage().data_ptr()
        sid = storages.setdefault(ptr, len(storages))
        vals = o.detach().flatten().double().tolist() if o.numel() else []
        return ["tensor", {
            "dtype": str(o.dtype).replace("torch.", ""),
            "sizes": list(o.shape), "strides": list(o.stride()),
            "offset": o.storage_offset(), "storage": sid,
            "storage_numel": o.storage().size(),
            "values": [repr(v) if not math.isfinite(v) else v for v in vals],
        }]
    if isinstance(o, tuple):
        return ["tuple", [tag(x, storages) for x in o]]
    if isinstance(o, list):
        return ["list", [tag(x, storages) for x in o]]
    if isinstance(o, dict):
        return ["dict", [[tag(k, storages), tag(v, storages)] for k, v in o.items()]]
    if isinstance(o, frozenset):
        return ["frozenset", [tag(x, storages) for x in o]]
    if isinstance(o, set):
        return ["set", [tag(x, storages) for x in o]]
    raise TypeError(type(o))


def dump_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, sort_keys=True, separators=(",", ":"))
        f.write("\n")


def plain_data():
    shared = [1, 2, 3]
    return {
        "none": None, "true": True, "false": False,
        "ints": [0, 1, -1, 255, 256, 65535, 65536, -129, 2**31 - 1, -2**31, 2**31, 2**63 - 1, -2**63],
        "big": [2**64, -2**64 - 5, 10**40, -(10**40)],
        "floats": [0.0, -0.0, 1.5, -2.25, 1e300, 5e-324, float("nan"), float("inf"), float("-inf")],
        "unicode": ["", "abc", "héllo wörld", "日本語", "emoji 🎉", "tab\tnl\nbs\\quote'\"", "\x00\x7f"],
        "bytes": [b"", b"\x00\x01\xff", bytes(range(256))],
        "bytearray": bytearray(b"ba\x00"),
        "nested": [(1, (2, (3, [4, {"five": (5,)}]))), [], (), {}],
        "tuples": [(1,), (1, 2), (1, 2, 3), (1, 2, 3, 4)],
        "dict_keys": {1: "int", "s": "str", (1, "t"): "tuple", 2.5: "float", None: "none", b"k": "bytes"},
        "set": {1, 2, 3}, "frozenset": frozenset({"a"}),
        "shared_a": shared, "shared_b": shared,
        "long_list": list(range(2500)),
    }


class Point:
    """A class for NEWOBJ/NEWOBJ_EX/BUILD fixtures (module __main__)."""

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __getnewargs_ex__(self):
        return (self.x,), {"y": self.y}


class PointArgs:
    """NEWOBJ at protocol 2 (__getnewargs__), BUILD with the instance dict."""

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __getnewargs__(self):
        return (self.x, self.y)


def write_pickles():
    os.makedirs(PK, exist_ok=True)
    data = plain_data()
    for p in range(0, 6):
        with open(os.path.join(PK, f"data_p{p}.pkl"), "wb") as f:
            f.write(pickle.dumps(data, protocol=p))
    dump_json(os.path.join(PK, "expected.json"), tag(data))

    rec = [1]
    rec.append(rec)
    with open(os.path.join(PK, "recursive_p2.pkl"), "wb") as f:
        f.write(pickle.dumps(rec, protocol=2))

    # Out-of-band buffers (NEXT_BUFFER, READONLY_BUFFER).
    bufs = []
    oob = pickle.dumps([pickle.PickleBuffer(b"out-of-band"), pickle.PickleBuffer(bytearray(b"rw"))],
                       protocol=5, buffer_callback=bufs.append)
    with open(os.path.join(PK, "oob_p5.pkl"), "wb") as f:
        f.write(oob)
    assert [bytes(b) for b in bufs] == [b"out-of-band", b"rw"]

    with open(os.path.join(PK, "object_p2.pkl"), "wb") as f:
        f.write(pickle.dumps(PointArgs(1, "two"), protocol=2))
    with open(os.path.join(PK, "object_p4.pkl"), "wb") as f:
        f.write(pickle.dumps(Point(1, "two"), protocol=4))

    write_malicious()
    write_fuzz_seeds()


class Evil:
    def __init__(self, f, args):
        self.f, self.args = f, args

    def __reduce__(self):
        return self.f, self.args


def write_malicious():
    import subprocess
    marker = "/tmp/gosr_pickle_pwned"
    evil = {
        "os_system_reduce.pkl": pickle.dumps(Evil(os.system, ("touch " + marker,)), protocol=2),
        "builtins_eval.pkl": pickle.dumps(Evil(eval, ("__import__('os').system('touch %s')" % marker,)), protocol=2),
        "subprocess_stack_global.pkl": pickle.dumps(Evil(subprocess.Popen, (["touch", marker],)), protocol=4),
        # Protocol 0 INST, as Python 2 wrote old-style instances.
        "inst_os_system.pkl": b"(S'touch " + marker.encode() + b"'\nios\nsystem\n.",
        # OBJ with a global class.
        "obj_os_system.pkl": b"\x80\x02(cos\nsystem\nX\x04\x00\x00\x00trueo.",
    }
    for name, b in evil.items():
        with open(os.path.join(PK, "malicious_" + name), "wb") as f:
            f.write(b)


def go_fuzz_file(b):
    out = []
    for c in b:
        ch = chr(c)
        if ch.isalnum() or ch in " .,_-()[]{}:;!?+*/=<>@#$%^&|~'":
            out.append(ch)
        else:
            out.append("\\x%02x" % c)
    return "go test fuzz v1\n[]byte(\"" + "".join(out) + "\")\n"


def write_fuzz_seeds():
    d = os.path.join(PK, "fuzz", "FuzzUnpickle")
    os.makedirs(d, exist_ok=True)
    small = {"a": [1, 2.5, None, True], "b": (b"x", "y", 2**70, -3), "c": {1, 2}}
    seeds = {f"proto{p}": pickle.dumps(small, protocol=p) for p in range(6)}
    buf = io.BytesIO()
    torch.save({"w": torch.arange(4.0).reshape(2, 2), "i": torch.tensor([1, 2])}, buf)
    seeds["torch_save_data_pkl"] = zipfile.ZipFile(io.BytesIO(buf.getvalue())).read("archive/data.pkl")
    m = torch.jit.script(torch.nn.Linear(2, 2))
    buf = io.BytesIO()
    torch.jit.save(m, buf)
    z = zipfile.ZipFile(io.BytesIO(buf.getvalue()))
    seeds["torch_jit_data_pkl"] = z.read([n for n in z.namelist() if n.endswith("/data.pkl")][0])
    seeds["inst"] = b"(S'x'\nimod\nname\n."
    seeds["persid"] = b"P0\n."
    for name, b in seeds.items():
        with open(os.path.join(d, name), "w") as f:
            f.write(go_fuzz_file(b))


def describe_pickle(paths):
    out = []
    for p in paths:
        with open(p, "rb") as f:
            out.append(tag(pickle.load(f)))
    json.dump(out, sys.stdout)


def describe(paths):
    out = []
    for p in paths:
        obj = torch.load(p)
        out.append(tag(obj, {}))
    json.dump(out, sys.stdout)


def write_torchsave():
    os.makedirs(TS, exist_ok=True)
    expected = {}
    ramp = torch.arange(-3, 3).reshape(2, 3)
    dtypes = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32,
              torch.int16, torch.int8, torch.uint8, torch.bool]
    objs = {}
    objs["dtypes"] = {str(dt).replace("torch.", ""): (ramp.abs() if dt == torch.uint8 else ramp).to(dt) for dt in dtypes}
    objs["dtypes"]["float32_odd"] = torch.tensor([0.1, float("nan"), float("inf"), -float("inf"), -0.0])
    g = torch.Generator().manual_seed(0)
    a = torch.randn(3, 2, generator=g)
    objs["nest"] = (a, [torch.tensor([1, 2, 3]), {"k": a * 2, "n": 3, "f": 2.5, "s": "hi", "b": True, "none": None}],
                    7, [(1, 2), []])
    base = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    objs["views"] = [base.t(), base[1:, 1:], base]
    v = torch.arange(10, dtype=torch.int64)
    objs["views_only"] = {"t": v[2:8].view(2, 3).t(), "off": v[5:]}  # storage never saved whole
    objs["scalar"] = torch.tensor(2.5)
    objs["empty"] = torch.zeros(0, 3)
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ReLU(), torch.nn.Linear(2, 1))
    objs["state_dict"] = net.state_dict()
    objs["param"] = torch.nn.Parameter(torch.ones(2, 2))
    for name, obj in objs.items():
        path = os.path.join(TS, name + ".pt")
        torch.save(obj, path)
        # Describe what torch.load returns, not what was saved (views of a
        # partly saved storage keep their offsets into the whole storage).
        expected[name] = tag(torch.load(path), {})
    # The legacy (pre-1.6, non-zip) format, for the error message.
    torch.save(torch.ones(2), os.path.join(TS, "legacy.pt"), _use_new_zipfile_serialization=False)
    dump_json(os.path.join(TS, "expected.json"), expected)


def write_jit():
    class Attrs(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(3, 2)
            self.register_buffer("buf", torch.arange(4, dtype=torch.int64))
            self.names = ["a", "b"]
            self.scale = 0.5
            self.count = 3
            self.table = {"x": 1, "y": 2}
            self.pair = (1, "one")
            self.flag = True

        def forward(self, x):
            return self.lin(x) * self.scale + self.count

    os.makedirs(JIT, exist_ok=True)
    torch.manual_seed(0)
    m = torch.jit.script(Attrs().eval())
    torch.jit.save(m, os.path.join(JIT, "attrs.pt"))
    frozen = torch.jit.freeze(torch.jit.script(Attrs().eval()))
    torch.jit.save(frozen, os.path.join(JIT, "frozen.pt"))
    exp = {
        "attrs": {
            "lin.weight": tag(m.lin.weight), "lin.bias": tag(m.lin.bias), "buf": tag(m.buf),
        },
    }
    # The frozen module's constants, in order (weights folded in).
    z = zipfile.ZipFile(os.path.join(JIT, "frozen.pt"))
    prefix = z.namelist()[0].split("/")[0]
    consts = torch.jit.load(os.path.join(JIT, "frozen.pt"))
    exp["frozen_prefix"] = prefix
    dump_json(os.path.join(JIT, "expected.json"), exp)

    # ZIP64: Python writes zip64 extra fields when forced to.
    with zipfile.ZipFile(os.path.join(JIT, "zip64.zip"), "w", zipfile.ZIP_STORED) as z:
        for name, data in [("z64/data.pkl", pickle.dumps([1, 2], protocol=2)), ("z64/version", b"3\n")]:
            with z.open(name, "w", force_zip64=True) as f:
                f.write(data)
    del consts


def main():
    global torch
    if len(sys.argv) > 1 and sys.argv[1] == "describe-pickle":
        describe_pickle(sys.argv[2:])
        return
    import torch as t
    torch = t
    if len(sys.argv) > 1 and sys.argv[1] == "describe":
        describe(sys.argv[2:])
        return
    write_pickles()
    write_torchsave()
    write_jit()


if __name__ == "__main__":
    main()
