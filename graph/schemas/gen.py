#!/usr/bin/python3
"""Writes graph/schemas/schemas.txt, gosr's one list of operator schemas:
every schema of the installed PyTorch (torch._C._jit_get_all_schemas()),
one per line, in registration order (the order TorchScript tries
overloads in), after a '#' line naming the versions.
Run from the repository root: /usr/bin/python3 graph/schemas/gen.py"""
import torch

try:  # torchvision's custom ops (torchvision::nms, roi_align, ...) register on import
    import torchvision  # noqa: F401
except ImportError:
    torchvision = None

with open("graph/schemas/schemas.txt", "w") as f:
    f.write("# PyTorch %s%s: torch._C._jit_get_all_schemas()\n" % (
        torch.__version__, ", torchvision %s" % torchvision.__version__ if torchvision else ""))
    for s in torch._C._jit_get_all_schemas():
        f.write(str(s) + "\n")
