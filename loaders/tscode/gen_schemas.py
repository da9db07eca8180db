#!/usr/bin/python3
"""Writes schemas.txt: every operator schema of the installed PyTorch, one per
line, in registration order (the order TorchScript tries overloads in).
Run from the repository root: /usr/bin/python3 loaders/tscode/gen_schemas.py"""
import torch

with open("loaders/tscode/schemas.txt", "w") as f:
    f.write("# PyTorch %s: torch._C._jit_get_all_schemas()\n" % torch.__version__)
    for s in torch._C._jit_get_all_schemas():
        f.write(str(s) + "\n")
