#!/usr/bin/python3
"""Times PyTorch's _native_multi_head_attention and
_transformer_encoder_layer_fwd on one thread at the shapes of
ops/attention_test.go's BenchmarkNativeMHA and BenchmarkEncoderLayer
(self-attention, need_weights=False; gelu, norm_first), for the ratio
against gosr: median ms per call over rounds of N calls."""
import statistics
import time

import torch

SHAPES = [("vit_ti_T197_D192_H3", 1, 197, 192, 3, 768), ("vit_b_T50_D768_H12", 1, 50, 768, 12, 3072)]


def timeit(f, n=20, rounds=7):
    f()
    per = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n):
            f()
        per.append((time.perf_counter() - t0) / n * 1e3)
    return statistics.median(per)


def main():
    torch.set_num_threads(1)
    torch.manual_seed(0)
    with torch.no_grad():
        for name, B, T, D, H, F in SHAPES:
            x = torch.randn(B, T, D)
            w, b = torch.randn(3 * D, D) * 0.3, torch.randn(3 * D) * 0.1
            pw, pb = torch.randn(D, D) * 0.3, torch.randn(D) * 0.1
            ln = [torch.randn(D) for _ in range(4)]
            f1w, f1b, f2w, f2b = torch.randn(F, D) * 0.3, torch.randn(F) * 0.1, torch.randn(D, F) * 0.3, torch.randn(D)
            mha = timeit(lambda: torch._native_multi_head_attention(x, x, x, D, H, w, b, pw, pb, None, False))
            enc = timeit(lambda: torch._transformer_encoder_layer_fwd(x, D, H, w, b, pw, pb, True, True, 1e-5, *ln,
                                                                      f1w, f1b, f2w, f2b, None, None))
            print("%-22s native_mha %.3f ms   encoder_layer %.3f ms" % (name, mha, enc))


if __name__ == "__main__":
    main()
