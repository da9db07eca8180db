#!/usr/bin/python3
"""Writes schemas.txt: every operator schema of the installed PyTorch, one per
line, in registration order (the order TorchScript tries overloads in).
Run from the repository root: /usr/bin/python3 loaders/tscode/gen_schemas.py"""
import torch

try:  # torchvision's custom ops (torchvision::nms, roi_align, ...) register on import
    import torchvision  # noqa: F401
except ImportError:
    torchvision = None

with open("loaders/tscode/schemas.txt", "w") as f:
    f.write("# PyTorch %s%s: torch._C._jit_get_all_schemas()\n" % (
        torch.__version__, ", torchvision %s" % torchvision.__version__ if torchvision else ""))
    for s in torch._C._jit_get_all_schemas():
        f.write(str(s) + "\n")
