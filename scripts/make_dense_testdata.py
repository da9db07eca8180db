#!/usr/bin/python3
"""Expected values for the dense kernels (ops/gemm, linear, matmul, conv,
norm, pool, embedding), computed with PyTorch 1.13 on CPU.

Run as /usr/bin/python3 scripts/make_dense_testdata.py from the repository
root; it writes ops/testdata/dense/<family>.json.

Each case: {"name", "op", "inputs": [...], "outputs": [...]}. An input is
one of {"t": tensor}, {"int": v}, {"ints": [...]}, {"float": v},
{"bool": v}, {"str": s}, {"none": true}. A tensor is {"dtype", "shape",
"data"} plus an optional "perm": the data is the contiguous base tensor
of that shape and the input is base.permute(perm), a non-contiguous view.
"""
import json
import os

import torch

torch.manual_seed(0)
OUT = os.path.join("ops", "testdata", "dense")


def tens(t, perm=None):
    """Encode t; with perm, t must equal base.permute(perm) for a
    contiguous base, which is what is stored."""
    d = {"dtype": str(t.dtype).replace("torch.", "")}
    if perm is not None:
        inv = [0] * len(perm)
        for i, p in enumerate(perm):
            inv[p] = i
        base = t.permute(inv).contiguous()
        assert torch.equal(base.permute(perm), t)
        d["perm"] = perm
        t = base
    d["shape"] = list(t.shape)
    # 9 significant digits round-trip float32 exactly and keep files small.
    vals = t.flatten().tolist()
    if t.dtype == torch.float32:
        vals = [float("%.9g" % v) for v in vals]
    d["data"] = vals
    return d


def T(t, perm=None):
    return {"t": tens(t, perm)}


def I(v):
    return {"int": v}


def Is(*v):
    return {"ints": list(v)}


def F(v):
    return {"float": v}


def B(v):
    return {"bool": v}


def S(v):
    return {"str": v}


NONE = {"none": True}


def r(*shape):
    return torch.randn(*shape)


def case(name, op, inputs, outs):
    if not isinstance(outs, (tuple, list)):
        outs = [outs]
    return {"name": name, "op": op, "inputs": inputs, "outputs": [tens(o) for o in outs]}


def strip(inp):
    """The Python values of encoded inputs (views rebuilt from perm)."""
    vals = []
    for x in inp:
        if "t" in x:
            d = x["t"]
            dt = getattr(torch, d["dtype"])
            t = torch.tensor(d["data"], dtype=dt).reshape(d["shape"])
            if "perm" in d:
                t = t.permute(d["perm"])
            vals.append(t)
        elif "none" in x:
            vals.append(None)
        else:
            vals.append(next(iter(x.values())))
    return vals


def run(op, inputs):
    name, _, overload = op.partition(".")
    fn = getattr(torch.ops.aten, name.split("::")[1])
    if overload:
        fn = getattr(fn, overload)
    args = strip(inputs)
    if name == "aten::addmm":  # beta and alpha are keyword-only
        return fn(*args[:3], beta=args[3], alpha=args[4])
    return fn(*args)


def mk(name, op, inputs):
    return case(name, op, inputs, run(op, inputs))


def linear_cases():
    cs = []
    x, w, b = r(7, 13), r(5, 13), r(5)
    cs.append(mk("linear 7x13", "aten::linear", [T(x), T(w), T(b)]))
    cs.append(mk("linear 3d no bias", "aten::linear", [T(r(2, 3, 13)), T(w), NONE]))
    cs.append(mk("linear 1d", "aten::linear", [T(r(13)), T(w), T(b)]))
    cs.append(mk("linear transposed x and w", "aten::linear",
                 [T(r(13, 7).t(), [1, 0]), T(r(13, 5).t(), [1, 0]), T(b)]))
    cs.append(mk("linear batch1 64", "aten::linear", [T(r(1, 64)), T(r(64, 64)), T(r(64))]))
    cs.append(mk("linear batch1 transposed w", "aten::linear", [T(r(1, 13)), T(r(13, 5).t(), [1, 0]), T(b)]))
    cs.append(mk("linear rows do not merge", "aten::linear",
                 [T(r(4, 3, 13).permute(1, 0, 2), [1, 0, 2]), T(w), T(b)]))
    cs.append(mk("linear big", "aten::linear", [T(r(33, 70)), T(r(40, 70)), T(r(40))]))
    cs.append(mk("addmm", "aten::addmm", [T(r(5)), T(r(7, 13)), T(r(13, 5)), F(0.5), F(2.0)]))
    cs.append(mk("addmm 2d self beta0", "aten::addmm", [T(r(7, 5)), T(r(7, 13)), T(r(5, 13).t(), [1, 0]), I(0), I(1)]))
    cs.append(mk("addmm col self", "aten::addmm", [T(r(7, 1)), T(r(13, 7).t(), [1, 0]), T(r(13, 5)), I(1), I(1)]))
    cs.append(mk("mm", "aten::mm", [T(r(7, 13)), T(r(13, 5))]))
    cs.append(mk("mm transposed a", "aten::mm", [T(r(13, 7).t(), [1, 0]), T(r(13, 5))]))
    cs.append(mk("bmm", "aten::bmm", [T(r(3, 4, 5)), T(r(3, 5, 6))]))
    cs.append(mk("bmm transposed b", "aten::bmm", [T(r(3, 4, 5)), T(r(3, 6, 5).transpose(1, 2), [0, 2, 1])]))
    mm = "aten::matmul"
    cs.append(mk("matmul 1x1", mm, [T(r(13)), T(r(13))]))
    cs.append(mk("matmul 2x1", mm, [T(r(7, 13)), T(r(13))]))
    cs.append(mk("matmul 1x2", mm, [T(r(13)), T(r(13, 5))]))
    cs.append(mk("matmul 3x1", mm, [T(r(2, 7, 13)), T(r(13))]))
    cs.append(mk("matmul 3x2", mm, [T(r(2, 7, 13)), T(r(13, 5))]))
    cs.append(mk("matmul 1x3", mm, [T(r(13)), T(r(2, 13, 5))]))
    cs.append(mk("matmul 2x3", mm, [T(r(7, 13)), T(r(2, 13, 5))]))
    cs.append(mk("matmul broadcast 4x3", mm, [T(r(2, 1, 4, 5)), T(r(3, 5, 6))]))
    cs.append(mk("matmul 4x4 transposed", mm, [T(r(2, 3, 5, 4).transpose(2, 3), [0, 1, 3, 2]), T(r(2, 3, 6, 5).transpose(2, 3), [0, 1, 3, 2])]))
    cs.append(mk("matmul 3x2 non-mergeable", mm, [T(r(7, 2, 13).permute(1, 0, 2), [1, 0, 2]), T(r(13, 5))]))
    return cs


def conv_cases():
    cs = []
    c2 = "aten::conv2d"
    cs.append(mk("conv groups2 stride dil pad", c2, [T(r(2, 4, 9, 11)), T(r(6, 2, 3, 3)), T(r(6)), Is(2, 1), Is(1, 2), Is(2, 1), I(2)]))
    cs.append(mk("conv 1x1", c2, [T(r(1, 3, 8, 8)), T(r(5, 3, 1, 1)), NONE, Is(1, 1), Is(0, 0), Is(1, 1), I(1)]))
    cs.append(mk("conv 1x1 stride2", c2, [T(r(2, 3, 7, 8)), T(r(5, 3, 1, 1)), T(r(5)), Is(2, 2), Is(0, 0), Is(1, 1), I(1)]))
    cs.append(mk("conv depthwise", c2, [T(r(2, 4, 7, 7)), T(r(4, 1, 3, 3)), T(r(4)), Is(1, 1), Is(1, 1), Is(1, 1), I(4)]))
    cs.append(mk("conv depthwise mult2 stride2", c2, [T(r(1, 3, 8, 9)), T(r(6, 1, 3, 3)), T(r(6)), Is(2, 2), Is(1, 1), Is(1, 1), I(3)]))
    cs.append(mk("conv channels-last input", c2, [T(r(2, 8, 8, 3).permute(0, 3, 1, 2), [0, 3, 1, 2]), T(r(4, 3, 3, 3)), T(r(4)), Is(1, 1), Is(1, 1), Is(1, 1), I(1)]))
    cs.append(mk("conv 3x3 16ch", c2, [T(r(1, 16, 12, 12)), T(r(20, 16, 3, 3)), T(r(20)), Is(1, 1), Is(1, 1), Is(1, 1), I(1)]))
    # Output rows wider than a 16-column panel (the packer's fast path).
    cs.append(mk("conv wide rows", c2, [T(r(2, 3, 5, 40)), T(r(4, 3, 3, 3)), T(r(4)), Is(1, 1), Is(1, 2), Is(1, 1), I(1)]))
    cs.append(mk("conv wide rows dilated", c2, [T(r(1, 2, 4, 37)), T(r(3, 2, 2, 3)), NONE, Is(1, 1), Is(0, 3), Is(1, 3), I(1)]))
    cs.append(mk("conv unbatched", c2, [T(r(3, 7, 6)), T(r(4, 3, 3, 3)), T(r(4)), Is(2, 1), Is(1, 1), Is(1, 1), I(1)]))
    cs.append(mk("conv1d unbatched", "aten::conv1d", [T(r(4, 9)), T(r(2, 4, 2)), NONE, Is(1), Is(0), Is(2), I(1)]))
    cs.append(mk("_convolution 1d", "aten::_convolution", [T(r(2, 4, 10)), T(r(6, 2, 3)), T(r(6)), Is(1), Is(1), Is(1), B(False), Is(0), I(2), B(False), B(False), B(True), B(True)]))
    cs.append(mk("conv same", "aten::conv2d.padding", [T(r(1, 3, 7, 6)), T(r(4, 3, 3, 2)), T(r(4)), Is(1, 1), S("same"), Is(1, 2), I(1)]))
    cs.append(mk("conv valid", "aten::conv2d.padding", [T(r(1, 3, 7, 6)), T(r(4, 3, 3, 2)), NONE, Is(1, 2), S("valid"), Is(1, 1), I(1)]))
    cs.append(mk("conv1d", "aten::conv1d", [T(r(2, 4, 10)), T(r(6, 4, 3)), T(r(6)), Is(2), Is(1), Is(1), I(1)]))
    cs.append(mk("conv1d same", "aten::conv1d.padding", [T(r(2, 4, 10)), T(r(6, 2, 4)), T(r(6)), Is(1), S("same"), Is(1), I(2)]))
    # A sweep of small random geometries (fixed seed).
    g = torch.Generator().manual_seed(1)

    def ri(lo, hi):
        return int(torch.randint(lo, hi + 1, (1,), generator=g))
    for i in range(8):
        groups = [1, 2, 3][ri(0, 2)]
        cin, cout = groups * ri(1, 3), groups * ri(1, 3)
        kh, kw = ri(1, 4), ri(1, 4)
        sh, sw, dh, dw = ri(1, 3), ri(1, 3), ri(1, 2), ri(1, 2)
        ph, pw = ri(0, 2), ri(0, 2)
        h = max(ri(1, 12), dh * (kh - 1) + 1 - 2 * ph)
        w = max(ri(1, 12), dw * (kw - 1) + 1 - 2 * pw)
        x = r(ri(1, 2), cin, h, w)
        cs.append(mk("conv sweep %d" % i, c2, [T(x), T(r(cout, cin // groups, kh, kw)), T(r(cout)) if i % 2 else NONE,
                                               Is(sh, sw), Is(ph, pw), Is(dh, dw), I(groups)]))
    cs.append(mk("_convolution 2d", "aten::_convolution", [T(r(1, 3, 8, 7)), T(r(4, 3, 3, 3)), T(r(4)), Is(1, 2), Is(1, 0), Is(1, 1), B(False), Is(0, 0), I(1), B(False), B(False), B(True), B(True)]))
    return cs


def norm_cases():
    cs = []
    bn = "aten::batch_norm"
    var = torch.rand(3) + 0.5
    cs.append(mk("batch_norm 4d", bn, [T(r(2, 3, 4, 5)), T(r(3)), T(r(3)), T(r(3)), T(var), B(False), F(0.1), F(1e-5), B(True)]))
    cs.append(mk("batch_norm no affine 2d", bn, [T(r(4, 3)), NONE, NONE, T(r(3)), T(var), B(False), F(0.1), F(1e-3), B(True)]))
    cs.append(mk("batch_norm 3d transposed", bn, [T(r(2, 5, 3).transpose(1, 2), [0, 2, 1]), T(r(3)), T(r(3)), T(r(3)), T(var), B(False), F(0.1), F(1e-5), B(True)]))
    ln = "aten::layer_norm"
    cs.append(mk("layer_norm last", ln, [T(r(2, 3, 8)), Is(8), T(r(8)), T(r(8)), F(1e-5), B(True)]))
    cs.append(mk("layer_norm two dims", ln, [T(r(2, 3, 8) * 3 + 1), Is(3, 8), T(r(3, 8)), T(r(3, 8)), F(1e-5), B(True)]))
    cs.append(mk("layer_norm no affine", ln, [T(r(4, 6)), Is(6), NONE, NONE, F(1e-3), B(True)]))
    cs.append(mk("layer_norm transposed", ln, [T(r(8, 5).t(), [1, 0]), Is(8), T(r(8)), NONE, F(1e-5), B(True)]))
    gn = "aten::group_norm"
    cs.append(mk("group_norm", gn, [T(r(2, 6, 5, 5)), I(3), T(r(6)), T(r(6)), F(1e-5), B(True)]))
    cs.append(mk("group_norm 3d no affine", gn, [T(r(2, 4, 7)), I(2), NONE, NONE, F(1e-5), B(True)]))
    return cs


def pool_cases():
    cs = []
    mp = "aten::max_pool2d"
    x = r(2, 3, 9, 10)
    cs.append(mk("max_pool basic", mp, [T(x), Is(2, 2), Is(2, 2), Is(0, 0), Is(1, 1), B(False)]))
    cs.append(mk("max_pool empty stride", mp, [T(x), Is(3, 3), Is(), Is(1, 1), Is(1, 1), B(False)]))
    cs.append(mk("max_pool ceil dil pad", mp, [T(x), Is(3, 2), Is(2, 2), Is(1, 1), Is(1, 2), B(True)]))
    cs.append(mk("max_pool 3d input transposed", mp, [T(r(3, 10, 9).transpose(1, 2), [0, 2, 1]), Is(3, 3), Is(2, 1), Is(1, 0), Is(1, 1), B(True)]))
    ap = "aten::avg_pool2d"
    cs.append(mk("avg_pool basic", ap, [T(x), Is(2, 2), Is(2, 2), Is(0, 0), B(False), B(True), NONE]))
    cs.append(mk("avg_pool pad include", ap, [T(x), Is(3, 3), Is(2, 2), Is(1, 1), B(True), B(True), NONE]))
    cs.append(mk("avg_pool pad exclude", ap, [T(x), Is(3, 2), Is(2, 3), Is(1, 1), B(True), B(False), NONE]))
    cs.append(mk("avg_pool divisor", ap, [T(x), Is(3, 3), Is(), Is(1, 1), B(False), B(True), I(5)]))
    aap = "aten::adaptive_avg_pool2d"
    y = r(2, 3, 10, 7)
    cs.append(mk("adaptive_avg 4x3", aap, [T(y), Is(4, 3)]))
    cs.append(mk("adaptive_avg 1x1", aap, [T(y), Is(1, 1)]))
    cs.append(mk("adaptive_avg up 12x9 3d", aap, [T(r(3, 10, 7)), Is(12, 9)]))
    amp = "aten::adaptive_max_pool2d"
    cs.append(mk("adaptive_max 4x3", amp, [T(y), Is(4, 3)]))
    return cs


def emb_cases():
    cs = []
    w = r(10, 4)
    cs.append(mk("embedding 2d idx", "aten::embedding", [T(w), T(torch.tensor([[1, 2], [3, 9], [0, 0]])), I(-1), B(False), B(False)]))
    cs.append(mk("embedding 0d idx", "aten::embedding", [T(w), T(torch.tensor(7)), I(2), B(False), B(False)]))
    cs.append(mk("embedding transposed weight", "aten::embedding", [T(r(4, 10).t(), [1, 0]), T(torch.tensor([5, 0, 9])), I(-1), B(False), B(False)]))
    eb = "aten::embedding_bag"
    idx = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
    off = torch.tensor([0, 2, 2, 5])
    for mode in (0, 1, 2):
        cs.append(mk("embedding_bag mode%d" % mode, eb, [T(w), T(idx), T(off), B(False), I(mode), B(False), NONE, B(False)]))
        cs.append(mk("embedding_bag mode%d last offset" % mode, eb, [T(w), T(idx), T(torch.tensor([0, 2, 2, 5, 8])), B(False), I(mode), B(False), NONE, B(True)]))
        cs.append(mk("embedding_bag mode%d padding_idx" % mode, eb + ".padding_idx", [T(w), T(idx), T(off), B(False), I(mode), B(False), NONE, B(False), I(4)]))
    cs.append(mk("embedding_bag psw", eb, [T(w), T(idx), T(off), B(False), I(0), B(False), T(torch.rand(8)), B(False)]))
    cs.append(mk("embedding_bag padding_idx None", eb + ".padding_idx", [T(w), T(idx), T(off), B(False), I(1), B(False), NONE, B(False), NONE]))
    cs.append(mk("embedding_bag one bag mean", eb, [T(w), T(idx), T(torch.tensor([0])), B(False), I(1), B(False), NONE, B(False)]))
    return cs


def main():
    os.makedirs(OUT, exist_ok=True)
    for fam, fn in [("linear", linear_cases), ("conv", conv_cases), ("norm", norm_cases),
                    ("pool", pool_cases), ("embedding", emb_cases)]:
        with open(os.path.join(OUT, fam + ".json"), "w") as f:
            json.dump(fn(), f)


if __name__ == "__main__":
    main()
