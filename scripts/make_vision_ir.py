#!/usr/bin/python3
"""Makes gosr fixtures of real vision models: torchvision resnet18 and
mobilenet_v2 (random weights, seeded, eval) and a small conv/BatchNorm CNN
with TorchScript control flow (checks that raise, warn, Optional, a loop
with in-place ops).

    /usr/bin/python3 scripts/make_vision_ir.py OUTDIR [--only SUBSTRING]

writes OUTDIR/<model>_<variant>.ir + .safetensors (layout of fixture_lib.py:
c0.. tensor constants, in0.. inputs, out0.. outputs), for variants
  script_frozen  torch.jit.freeze(torch.jit.script(m)): PyTorch's frozen,
                 optimised graph (conv-bn folded);
  script_unopt   torch._C._freeze_module + _jit_pass_inline: frozen but
                 not optimised (batch_norm after conv2d, relu_, add_,
                 hardtanh_, dropout, leftover checks), what gosr's own
                 loader produces from a non-frozen archive;
  trace_frozen, trace_unopt: the same for torch.jit.trace.
The files are big (resnet18 ~45 MB each): OUTDIR should not be the
repository. Needs PyTorch and torchvision (Debian python3-torch,
python3-torchvision). Deterministic: every model reseeds torch.
"""
import argparse
import os
import re
import sys
import warnings
from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture_lib  # noqa: E402


class CtrlCNN(nn.Module):
    """Conv/BN/in-place activations plus the control flow scripted models
    carry: input checks that raise (prim::If, aten::dim, aten::ne,
    aten::format, prim::RaiseException, prim::Uninitialized), a warning,
    an Optional local (aten::__isnot__, prim::unchecked_cast), list
    indexing (aten::__getitem__.t) and in-place ops on a value written in
    a loop, which mutation removal must leave alone."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1, bias=False), nn.BatchNorm2d(16),
                                  nn.ReLU(inplace=True))
        self.dw = nn.Sequential(nn.Conv2d(16, 16, 3, stride=2, padding=1, groups=16, bias=False),
                                nn.BatchNorm2d(16), nn.ReLU6(inplace=True))
        self.pw = nn.Sequential(nn.Conv2d(16, 24, 1, bias=False), nn.BatchNorm2d(24))
        self.short = nn.Conv2d(16, 24, 1, stride=2)
        self.pool = nn.MaxPool2d(2)
        self.drop = nn.Dropout(0.1)
        self.fc = nn.Linear(24, 10)

    def forward(self, x):
        if x.dim() != 4:
            raise ValueError("expected 4D input (got {}D input)".format(x.dim()))
        if x.size(1) != 3:
            warnings.warn("expected 3 input channels")
        y = self.stem(x)
        z = self.dw(y)
        out = self.pw(z)
        out += self.short(y)
        out = F.relu(out, inplace=True)
        shape = out.size()
        if len(shape) == 4:
            h = shape[2]
        else:
            raise RuntimeError("lost a dimension")
        scale: Optional[float] = None
        if h > 4:
            scale = 1.0 / h
        if scale is not None:
            out = out * scale
        acc = torch.zeros_like(out)
        for i in range(h // 8):  # not unrolled: h is not a constant
            acc.add_(out, alpha=float(i + 1))
        acc.mul_(0.5)
        p = self.pool(acc)
        p = F.adaptive_avg_pool2d(p, 1)
        v = torch.flatten(p, 1)
        v = self.drop(v)
        return self.fc(v)


def randomize_bn(m):
    """Fresh BatchNorms are the identity (mean 0, var 1, weight 1, bias 0):
    give them statistics so that a wrong batch_norm shows."""
    for mod in m.modules():
        if isinstance(mod, nn.BatchNorm2d):
            c = mod.num_features
            mod.running_mean.copy_(torch.randn(c) * 0.1)
            mod.running_var.copy_(torch.rand(c) * 0.5 + 0.75)
            mod.weight.data.copy_(torch.rand(c) * 0.5 + 0.75)
            mod.bias.data.copy_(torch.randn(c) * 0.1)


def models():
    import torchvision
    return [
        ("resnet18", lambda: torchvision.models.resnet18(), (1, 3, 224, 224)),
        ("mobilenet_v2", lambda: torchvision.models.mobilenet_v2(), (1, 3, 224, 224)),
        ("ctrl_cnn", CtrlCNN, (2, 3, 32, 32)),
    ]


def unoptimised(scripted):
    """Frozen (attributes inlined as constants) but no frozen optimisations."""
    c = torch._C._freeze_module(scripted._c)
    torch._C._jit_pass_inline(c._get_method("forward").graph)
    return torch.jit._recursive.wrap_cpp_module(c)


def emit(outdir, name, module, x, eager):
    with torch.no_grad():
        out = module(x.clone())
    fixture_lib.check_same(out, eager)
    g = module.graph.copy()
    self_in = g.inputs().__next__()
    assert self_in.type().kind() == "ClassType" and not self_in.uses(), name + ": self still used after freezing"
    g.eraseInput(0)
    # Tolerance relative to the output's scale: float32 sums over thousands
    # of terms, in another order than oneDNN's, differ by more than 1e-4 of
    # an element near zero.
    scale = float(out.abs().max())
    meta = {"graph_kind": "frozen_module", "noncontig": "0", "rtol": 1e-4, "atol": 1e-4 * scale, "case": name}
    # Traced graphs print each node's module scope (", scope: __module.bn1"):
    # debug information only, which gosr's parser does not read.
    text = re.sub(r", scope: [^ \n]*", "", fixture_lib.graph_text(g))
    fixture_lib.write_fixture(os.path.join(outdir, name + ".ir"), os.path.join(outdir, name + ".safetensors"),
                              text, fixture_lib.tensor_constants(g), [x], out, meta)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--only", default="", help="make only models whose name contains this")
    args = ap.parse_args()
    torch.set_num_threads(1)
    os.makedirs(args.outdir, exist_ok=True)
    n = 0
    for name, build, shape in models():
        if args.only not in name:
            continue
        fixture_lib.seed_for(name)
        with torch.no_grad():
            m = build()
            randomize_bn(m)
        m = m.eval()
        x = torch.randn(*shape)
        with torch.no_grad():
            eager = m(x.clone())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tracing warns about the checks it drops
            scripted = torch.jit.script(m).eval()
            traced = torch.jit.trace(m, (x.clone(),), check_trace=False).eval()
        variants = [
            ("script_frozen", torch.jit.freeze(scripted)),
            ("script_unopt", unoptimised(scripted)),
            ("trace_frozen", torch.jit.freeze(traced)),
            ("trace_unopt", unoptimised(traced)),
        ]
        for vname, mod in variants:
            emit(args.outdir, "%s_%s" % (name, vname), mod, x, eager)
            n += 1
    print("vision: %d cases in %s" % (n, args.outdir))


if __name__ == "__main__":
    main()
