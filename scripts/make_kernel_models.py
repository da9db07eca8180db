"""Writes the models of gosr's kernel figures (docs/benchmarks.md, "Kernels
at 224x224"): ten torchvision classifiers at their native 224x224 input,
batch 1, each traced and frozen as users deploy them, for
`srbench compare DIR` beside PyTorch and ONNX Runtime.

Usage: /usr/bin/python3 scripts/make_kernel_models.py [OUTDIR]   (make kernel-models)

OUTDIR defaults to <cache root>/kernels224 (the root is $GOSR_PT_CACHE,
else $XDG_CACHE_HOME/gosr, else ~/.cache/gosr). For each NAME it writes
NAME.traced_frozen.pt, NAME.inputs.pt (the tuple of inputs) and
NAME.expected.pt (the eager model's output). Weights are PyTorch's random
initialisation under a fixed seed: the timing does not depend on them,
and nothing is downloaded. A model already written is kept.
"""
import os
import sys
import warnings

import torch
import torchvision

MODELS = ["resnet18", "resnet50", "densenet121", "mobilenet_v3_large", "efficientnet_b0",
          "shufflenet_v2_x1_0", "regnet_y_400mf", "squeezenet1_1", "convnext_tiny", "vit_b_16"]


def cache_root():
    if os.environ.get("GOSR_PT_CACHE"):
        return os.environ["GOSR_PT_CACHE"]
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "gosr")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(cache_root(), "kernels224")
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    for name in MODELS:
        path = os.path.join(out, name + ".traced_frozen.pt")
        if os.path.exists(path):
            continue
        torch.manual_seed(0)
        m = getattr(torchvision.models, name)(weights=None).eval()
        x = torch.randn(1, 3, 224, 224)
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = m(x)
            t = torch.jit.freeze(torch.jit.trace(m, (x,), check_trace=False))
            got = t(x)
        err = (got - want).abs().max().item()
        if err > 1e-4 * max(1.0, want.abs().max().item()):
            raise SystemExit(f"{name}: the traced model differs from the eager one by {err}")
        torch.save((x,), os.path.join(out, name + ".inputs.pt"))
        torch.save(want, os.path.join(out, name + ".expected.pt"))
        torch.jit.save(t, path + ".tmp")
        os.replace(path + ".tmp", path)
        print(f"{name}: {path}", flush=True)
    print(out)


if __name__ == "__main__":
    main()
