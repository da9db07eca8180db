"""Writes the models of gosr's kernel figures (docs/benchmarks.md, "Kernels
at 224x224"): ten torchvision classifiers at their native 224x224 input,
batch 1, each traced and frozen as users deploy them, for
`srbench compare DIR` beside PyTorch and ONNX Runtime.

Usage: /usr/bin/python3 scripts/make_kernel_models.py [OUTDIR]   (make kernel-models)

OUTDIR defaults to <cache root>/kernels224 (the root is $GOSR_PT_CACHE,
else $XDG_CACHE_HOME/gosr, else ~/.cache/gosr). For each NAME it writes
NAME.traced_frozen.pt, NAME.inputs.pt (the tuple of inputs) and
NAME.expected.pt (the eager model's output). Weights are PyTorch's random
initialisation under a fixed seed (the timing does not depend on them,
and nothing is downloaded), given signal by give_signal: with
torchvision's initialisation alone vit_b_16's zeroed head answers
exactly 0 and efficientnet_b0's and mobilenet_v3_large's outputs fade
to 1e-14 and 1e-9, so any engine "agreed" with PyTorch within 1e-4.
(mobilenet_v3_large's classifier, drawn with std 0.01, keeps its output
near 0.01.) A model already written is kept, unless the GENERATOR stamp
in OUTDIR (this file's sha256) differs: then all are written afresh.

For the models of EAGER_ONNX it also writes NAME.onnx: torch.onnx.export
of the eager module (the same seeded weights), which `srbench compare`
gives ONNX Runtime in place of an export of the archive. Their traced
archives hold an op torch 1.13's exporter lacks: vit_b_16's
nn.MultiheadAttention traces, in eval mode without grad, to its fused
aten::_native_multi_head_attention; the eager export runs with grad on,
so it takes the composite path (the same products and softmax).
"""
import hashlib
import os
import sys
import warnings

import torch
import torchvision

MODELS = ["resnet18", "resnet50", "densenet121", "mobilenet_v3_large", "efficientnet_b0",
          "shufflenet_v2_x1_0", "regnet_y_400mf", "squeezenet1_1", "convnext_tiny", "vit_b_16"]
EAGER_ONNX = {"vit_b_16"}
ONNX_OPSET = 14  # as srbench's own export (pytorch_bench_pt.py)


def cache_root():
    if os.environ.get("GOSR_PT_CACHE"):
        return os.environ["GOSR_PT_CACHE"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "gosr")


def give_signal(m):
    """Makes m's output depend on its input at a scale of about 1: weights
    torchvision initialises to zero (vit_b_16's head) are drawn like the
    others, and every batch norm's running statistics become those of its
    own input on a batch of random images (the norms alone in training
    mode, momentum None: the plain average), so each normalises to unit
    variance instead of passing a shrinking signal on."""
    for mod in m.modules():
        if isinstance(mod, (torch.nn.Linear, torch.nn.Conv2d)) and not mod.weight.any():
            fan_in = mod.weight[0].numel()
            torch.nn.init.normal_(mod.weight, std=fan_in ** -0.5)
    bns = [mod for mod in m.modules() if isinstance(mod, torch.nn.modules.batchnorm._BatchNorm)]
    m.eval()
    for bn in bns:
        bn.reset_running_stats()
        bn.momentum = None
        bn.train()
    with torch.no_grad():
        m(torch.randn(8, 3, 224, 224))
    m.eval()


def stamp():
    with open(os.path.abspath(__file__), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(cache_root(), "kernels224")
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    stamp_path = os.path.join(out, "GENERATOR")
    fresh = not os.path.exists(stamp_path) or open(stamp_path).read().strip() != stamp()
    if fresh and os.path.exists(stamp_path):
        os.remove(stamp_path)
    for name in MODELS:
        path = os.path.join(out, name + ".traced_frozen.pt")
        onnx = os.path.join(out, name + ".onnx") if name in EAGER_ONNX else None
        if fresh:
            for p in (path, onnx):
                if p is not None and os.path.exists(p):
                    os.remove(p)
        if os.path.exists(path) and (onnx is None or os.path.exists(onnx)):
            continue
        torch.manual_seed(0)
        m = getattr(torchvision.models, name)(weights=None)
        give_signal(m)
        x = torch.randn(1, 3, 224, 224)
        if onnx is not None and not os.path.exists(onnx):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch.onnx.export(m, (x,), onnx + ".tmp", opset_version=ONNX_OPSET)
            os.replace(onnx + ".tmp", onnx)
            print(f"{name}: {onnx}", flush=True)
        if os.path.exists(path):
            continue
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = m(x)
            t = torch.jit.freeze(torch.jit.trace(m, (x,), check_trace=False))
            got = t(x)
        err = (got - want).abs().max().item()
        if err > 1e-4 * max(1.0, want.abs().max().item()):
            raise SystemExit(f"{name}: the traced model differs from the eager one by {err}")
        if not 1e-3 < want.std().item() < 100:
            raise SystemExit(f"{name}: output standard deviation {want.std().item():.3g}: no usable signal")
        torch.save((x,), os.path.join(out, name + ".inputs.pt"))
        torch.save(want, os.path.join(out, name + ".expected.pt"))
        torch.jit.save(t, path + ".tmp")
        os.replace(path + ".tmp", path)
        print(f"{name}: {path} (output std {want.std().item():.3g})", flush=True)
    with open(stamp_path, "w") as f:
        f.write(stamp() + "\n")
    print(out)


if __name__ == "__main__":
    main()
