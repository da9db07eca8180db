#!/usr/bin/python3
"""Makes gosr's PyTorch reference fixtures.

Run from the repository root (or via `make testdata`):
    /usr/bin/python3 scripts/make_testdata.py [--only SUBSTRING]
It needs PyTorch (Debian python3-torch, 1.13) and numpy, and rewrites
  testdata/ops/<case>.ir + <case>.safetensors     (cases in op_cases.py)
  builtin/models/<name>/model.ir + model.safetensors (model_cases.py)
Layout of the safetensors files: see fixture_lib.py. Output is
deterministic: every case reseeds torch from a hash of its name.
"""
import argparse
import glob
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture_lib  # noqa: E402
import model_cases  # noqa: E402
import op_cases  # noqa: E402


def write_dtype_sample(path):
    """One tensor per safetensors dtype with known values, for loaders' tests:
    values are arange(-3, 3) (0/1 alternating for bool) reshaped to [2, 3]."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    entries = []
    for dt in [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int64, torch.int32,
               torch.int16, torch.int8]:
        entries.append((str(dt).replace("torch.", ""), torch.arange(-3, 3).to(dt).reshape(2, 3)))
    entries.append(("uint8", torch.arange(0, 6).to(torch.uint8).reshape(2, 3)))
    entries.append(("bool", (torch.arange(0, 6) % 2 == 1).reshape(2, 3)))
    entries.append(("scalar", torch.tensor(2.5)))
    entries.append(("empty", torch.zeros(0, 3)))
    entries.append(("odd_f16", torch.tensor([0.1, 65504.0, -1e-5], dtype=torch.float16)))
    import st_io
    st_io.write(path, entries, {"source": "make_testdata.py", "note": "dtype sample"})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="", help="make only cases whose name contains this")
    args = ap.parse_args()
    torch.set_num_threads(1)
    root = fixture_lib.REPO_DIR
    ops_dir = os.path.join(root, "testdata", "ops")
    os.makedirs(ops_dir, exist_ok=True)
    if not args.only:  # drop stale cases
        for p in glob.glob(os.path.join(ops_dir, "*.ir")) + glob.glob(os.path.join(ops_dir, "*.safetensors")):
            os.remove(p)
    names = set()
    n = 0
    for name, build, opts in op_cases.CASES:
        assert name not in names, "duplicate case " + name
        names.add(name)
        if args.only not in name:
            continue
        fixture_lib.seed_for(name)
        module, inputs = build()
        fixture_lib.emit_module(os.path.join(ops_dir, name + ".ir"), os.path.join(ops_dir, name + ".safetensors"),
                                module, inputs, opts["rtol"], opts["atol"], opts["noncontig"], {"case": name})
        n += 1
    print("ops: %d cases" % n)
    write_dtype_sample(os.path.join(root, "loaders", "testdata", "dtypes.safetensors"))
    m = model_cases.make_all(os.path.join(root, "builtin", "models"), args.only)
    print("models: %d" % m)


if __name__ == "__main__":
    main()
