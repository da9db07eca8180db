"""Activation, dropout, normalisation, pixel shuffle, einsum and
elementwise indexing cases (ops/activation.go, ops/inplace_act.go,
ops/norm_instance.go, ops/pixelshuffle.go, ops/einsum.go, ...)."""
from typing import List

import torch
import torch.nn.functional as F
from torch import nn, Tensor

from op_cases import case, r, pos, ints, Call  # noqa: F401




class Elu(nn.Module):
    def forward(self, x):
        return F.elu(x, 0.7), torch.ops.aten.elu(x, 0.5, 2.0, 1.5)


class Selu(nn.Module):
    def forward(self, x):
        return torch.selu(x)


class Celu(nn.Module):
    def forward(self, x):
        return F.celu(x, 1.5), F.celu(x)


class Shrink(nn.Module):
    def forward(self, x):
        return F.hardshrink(x, 0.3), F.softshrink(x, 0.7), F.hardshrink(x), F.softshrink(x)


class LogSigmoidMish(nn.Module):
    def forward(self, x):
        return F.logsigmoid(x), F.mish(x)


class Threshold(nn.Module):
    def forward(self, x):
        return F.threshold(x, 0.1, 20.0), F.threshold(x, -0.5, -3.0)


class Rrelu(nn.Module):
    def forward(self, x):
        return F.rrelu(x, 0.1, 0.4, training=False), F.rrelu(x)


class Prelu(nn.Module):
    def __init__(self, w):
        super().__init__()
        self.register_buffer("w", w)

    def forward(self, x):
        return F.prelu(x, self.w)


class PreluIn(nn.Module):
    """prelu with the weight a graph input (not a constant)."""

    def forward(self, x, w):
        return F.prelu(x, w)


class Glu(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return F.glu(x, self.dim)


class Composite(nn.Module):
    """torch.nn's activations that are compositions in TorchScript."""

    def forward(self, x):
        return F.softsign(x), F.tanhshrink(x), F.softmin(x, 1), F.softmax(x, -3), F.hardsigmoid(x), \
            F.hardswish(x), F.relu6(x), F.silu(x), F.softplus(x, 2.0, 3.0)


class InplaceActs(nn.Module):
    """The in-place forms, each on a fresh value and chained."""

    def forward(self, x):
        a = F.elu(x * 1.0, 0.8, inplace=True)
        b = F.celu(x * 2.0, 1.2, inplace=True)
        c = F.selu(x - 0.5, inplace=True)
        d = F.threshold(x + 0.0, 0.2, -1.0, inplace=True)
        e = F.rrelu(x * 3.0, 0.2, 0.3, training=False, inplace=True)
        f = F.relu6(x * 4.0, inplace=True)
        g = F.mish(x + 1.0, inplace=True)
        h = F.leaky_relu(x * 1.5, 0.05, inplace=True)
        i = F.hardtanh(x * 2.5, -0.5, 0.5, inplace=True)
        j = F.hardsigmoid(x * 2.0, inplace=True)
        k = F.hardswish(x * 2.0, inplace=True)
        m = F.silu(x * 1.5, inplace=True)
        return a, b, c, d, e, f, g, h, i, j, k, m


class InplaceView(nn.Module):
    """In-place activations on views of a fresh value (RemoveMutation keeps
    them: the write-back path on strided self)."""

    def forward(self, x, y):
        a = x * 1.0
        F.elu(a[:, 1:], 0.5, inplace=True)
        b = y + 0.0
        F.threshold(b.t(), 0.0, 7.0, inplace=True)
        F.mish(b[0], inplace=True)
        return a, b


class Dropouts(nn.Module):
    def forward(self, x):
        a = F.dropout(x + 0.5, 0.3, self.training)
        b = F.dropout(x * 2.0, 0.3, self.training, inplace=True)
        c = F.alpha_dropout(x * 0.5, 0.2, self.training)
        d = F.feature_alpha_dropout(x - 1.0, 0.2, self.training, inplace=True)
        e = F.dropout2d(x + 1.0, 0.4, self.training, inplace=True)
        f = F.alpha_dropout(x * 3.0, 0.2, self.training, inplace=True)
        return a, b, c, d, e, f


for dt, cast in (("", lambda t: t), ("_f64", lambda t: t.double())):
    case("act_elu" + dt, lambda cast=cast: (Elu(), [cast(r(3, 5, 7) * 3)]))
    case("act_selu" + dt, lambda cast=cast: (Selu(), [cast(r(3, 5, 7) * 3)]))
    case("act_celu" + dt, lambda cast=cast: (Celu(), [cast(r(3, 5, 7) * 3)]))
    case("act_shrink" + dt, lambda cast=cast: (Shrink(), [cast(r(4, 9))]))
    case("act_logsigmoid_mish" + dt, lambda cast=cast: (LogSigmoidMish(), [cast(r(3, 5, 7) * 12)]))
    case("act_threshold" + dt, lambda cast=cast: (Threshold(), [cast(r(4, 9))]))
    case("act_rrelu" + dt, lambda cast=cast: (Rrelu(), [cast(r(4, 9))]))
    case("act_prelu_channels" + dt, lambda cast=cast: (Prelu(cast(r(4))), [cast(r(2, 4, 3, 5))]))
    case("act_glu" + dt, lambda cast=cast: (Glu(1), [cast(r(3, 6, 5))]))
    case("act_inplace" + dt, lambda cast=cast: (InplaceActs(), [cast(r(3, 5, 7) * 3)]))
case("act_threshold_int64", lambda: (Threshold(), [ints(-9, 9, 4, 6)]))
case("act_prelu_single", lambda: (Call(nn.PReLU()), [r(2, 3, 4)]))
case("act_prelu_2d", lambda: (Call(nn.PReLU(5, 0.1)), [r(3, 5)]))
case("act_prelu_1d", lambda: (Prelu(r(1)), [r(7)]))
case("act_prelu_input", lambda: (PreluIn(), [r(2, 3, 4), r(3)]))
case("act_glu_last", lambda: (Glu(-1), [r(2, 3, 8)]))
case("act_glu_first", lambda: (Glu(0), [r(4, 3)]))
case("act_composite", lambda: (Composite(), [r(2, 3, 4, 5) * 3]))
case("act_inplace_view", lambda: (InplaceView(), [r(3, 4), r(3, 4)]))
case("act_dropout_eval", lambda: (Dropouts().eval(), [r(2, 3, 4, 5)]))


# ---------------------------------------------------------------- instance / group norm
class InstanceNorm(nn.Module):
    """torch.instance_norm (F.instance_norm's size check loops over a range,
    a language op not in this area). Freezing keeps running stats as module
    attributes (instance_norm may update them), so they are graph inputs."""

    def __init__(self, c: int, affine: bool, use_input_stats: bool, eps: float):
        super().__init__()
        self.register_buffer("w", r(c))
        self.register_buffer("b", r(c))
        self.affine = affine
        self.use_input_stats = use_input_stats
        self.eps = eps

    def forward(self, x):
        if self.affine:
            return torch.instance_norm(x, self.w, self.b, None, None, self.use_input_stats, 0.1, self.eps, False)
        return torch.instance_norm(x, None, None, None, None, self.use_input_stats, 0.1, self.eps, False)


class InstanceNormRunning(InstanceNorm):
    def forward(self, x, rm, rv):
        if self.affine:
            return torch.instance_norm(x, self.w, self.b, rm, rv, self.use_input_stats, 0.1, self.eps, False)
        return torch.instance_norm(x, None, None, rm, rv, self.use_input_stats, 0.1, self.eps, False)


class InstanceNormFlag(nn.Module):
    """use_input_stats a graph value, not a constant."""

    def forward(self, x, flag):
        return torch.instance_norm(x, None, None, None, None, bool(flag.sum() < 100.0), 0.1, 1e-5, False)


case("norm_instance2d_affine", lambda: (InstanceNorm(6, True, True, 1e-3), [r(2, 6, 5, 4) * 3 + 1]))
case("norm_instance2d_plain", lambda: (InstanceNorm(6, False, True, 1e-5), [r(2, 6, 5, 4) * 3 + 1]))
case("norm_instance_2d_input", lambda: (InstanceNorm(4, True, True, 1e-5), [r(3, 4) - 2]))
case("norm_instance1d_running", lambda: (InstanceNormRunning(6, True, False, 1e-3), [r(2, 6, 9), r(6), pos(6)]))
case("norm_instance3d_running", lambda: (InstanceNormRunning(3, False, False, 1e-5), [r(2, 3, 4, 3, 2), r(3), pos(3)]))
case("norm_instance_flag", lambda: (InstanceNormFlag(), [r(3, 4, 7), r(2)]))
case("norm_group_3d", lambda: (Call(nn.GroupNorm(3, 6, affine=False)), [r(2, 6, 7) * 2]))
case("norm_group_one", lambda: (Call(nn.GroupNorm(1, 4)), [r(3, 4, 2, 2)]))


# ---------------------------------------------------------------- pixel shuffle
class PixelShuffles(nn.Module):
    def __init__(self, f: int):
        super().__init__()
        self.f = f

    def forward(self, x):
        y = F.pixel_shuffle(x, self.f)
        return y, F.pixel_unshuffle(y, self.f), F.pixel_unshuffle(x.transpose(-1, -2), 1)


case("pixel_shuffle2", lambda: (PixelShuffles(2), [r(2, 8, 3, 5)]))
case("pixel_shuffle3_batch", lambda: (PixelShuffles(3), [r(2, 1, 18, 2, 3)]))
case("pixel_shuffle_3d", lambda: (PixelShuffles(2), [r(4, 3, 2)]))
case("pixel_shuffle_int64", lambda: (PixelShuffles(2), [ints(-50, 50, 1, 4, 2, 3)]))


# ---------------------------------------------------------------- einsum
class Einsum1(nn.Module):
    def __init__(self, eq: str):
        super().__init__()
        self.eq = eq

    def forward(self, a):
        return torch.einsum(self.eq, [a])


class Einsum2(Einsum1):
    def forward(self, a, b):
        return torch.einsum(self.eq, [a, b])


class Einsum3(Einsum1):
    def forward(self, a, b, c):
        return torch.einsum(self.eq, [a, b, c])


class EinsumMaxvit(nn.Module):
    """maxvit's attention: q, k, v chunks of one projection (strided views)."""

    def __init__(self, heads: int, dh: int):
        super().__init__()
        self.heads = heads
        self.dh = dh

    def forward(self, qkv):
        b, g, p, _ = qkv.shape
        q, k, v = torch.chunk(qkv, 3, dim=-1)
        q = q.reshape(b, g, p, self.heads, self.dh).permute(0, 1, 3, 2, 4)
        k = k.reshape(b, g, p, self.heads, self.dh).permute(0, 1, 3, 2, 4)
        v = v.reshape(b, g, p, self.heads, self.dh).permute(0, 1, 3, 2, 4)
        k = k * 0.5
        dot = torch.einsum("B G H I D, B G H J D -> B G H I J", q, k)
        attn = torch.softmax(dot, dim=-1)
        return dot, torch.einsum("B G H I J, B G H J D -> B G H I D", attn, v)


case("einsum_maxvit", lambda: (EinsumMaxvit(2, 4), [r(1, 3, 5, 24)]))
for name, eq, shapes in [
    ("matmul", "ij,jk->ik", [(3, 4), (4, 5)]),
    ("bmm", "bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("out_transposed", "ij,jk->ki", [(3, 4), (4, 5)]),
    ("out_interleaved", "bij,bjk->ibk", [(2, 3, 4), (2, 4, 5)]),
    ("outer", "i,j->ij", [(3,), (4,)]),
    ("dot", "i,i", [(5,), (5,)]),
    ("hadamard", "ij,ij->ij", [(3, 4), (3, 4)]),
    ("rowdot", "ij,ij->i", [(3, 4), (3, 4)]),
    ("private", "ijk,jl->il", [(2, 3, 4), (3, 5)]),
    ("broadcast_label", "ij,jk->ik", [(3, 1), (4, 5)]),
    ("broadcast_batch", "bij,bjk->bik", [(1, 3, 4), (2, 4, 5)]),
    ("ellipsis", "...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
    ("ellipsis_implicit", "b...a,...c", [(3, 2, 4), (2, 1)]),
    ("implicit", "ba,cb", [(3, 4), (5, 3)]),
    ("upper", "Ab,bC->AC", [(3, 4), (4, 2)]),
    ("diag_pair", "ii,ij->j", [(3, 3), (3, 4)]),
    ("batch_vec", "bhid,bd->bhi", [(2, 3, 4, 5), (2, 5)]),
    ("multi_group", "abcd,cdef->abef", [(2, 3, 4, 2), (4, 2, 3, 2)]),
    ("k_order", "ikj,jkl->il", [(2, 3, 4), (4, 3, 5)]),
    ("batch_inner", "ibj,jbk->bik", [(3, 2, 4), (4, 2, 5)]),
    ("zero_size", "ij,jk->ik", [(3, 0), (0, 5)]),
]:
    case("einsum_" + name, lambda eq=eq, shapes=shapes: (Einsum2(eq), [r(*s) for s in shapes]))
for name, eq, shape in [
    ("trace", "ii", (4, 4)),
    ("diag", "ii->i", (4, 4)),
    ("batch_diag", "bii->bi", (2, 3, 3)),
    ("diag3", "iij->ji", (3, 3, 2)),
    ("transpose", "ij->ji", (3, 4)),
    ("sum_all", "ij->", (3, 4)),
    ("colsum", "ij->j", (3, 4)),
    ("ellipsis_sum", "i...->i", (2, 3, 4)),
    ("permute3", "abc->cab", (2, 3, 4)),
]:
    case("einsum_" + name, lambda eq=eq, shape=shape: (Einsum1(eq), [r(*shape)]))
for name, eq, shapes in [
    ("chain", "ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("bilinear", "bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("three_batch", "bij,bjk,bk->bi", [(2, 3, 4), (2, 4, 5), (2, 5)]),
    ("three_late_contract", "ab,cd,bd->ac", [(2, 3), (4, 5), (3, 5)]),
]:
    case("einsum_" + name, lambda eq=eq, shapes=shapes: (Einsum3(eq), [r(*s) for s in shapes]))


# ---------------------------------------------------------------- elementwise / indexing
class Roll(nn.Module):
    def forward(self, x):
        return torch.roll(x, 1, 0), torch.roll(x, (-2, 3), (1, 2)), torch.roll(x, 5), \
            torch.roll(x, (1, 2), (-1, -1)), torch.roll(x, (-7,), (1,))


class RollSwin(nn.Module):
    """swin's cyclic shift of [B, H, W, C] windows and back."""

    def forward(self, x):
        s = torch.roll(x, shifts=(-3, -3), dims=(1, 2))
        return s, torch.roll(s * 2.0, shifts=(3, 3), dims=(1, 2))


class Tri(nn.Module):
    def forward(self, x):
        return torch.tril(x), torch.triu(x), torch.tril(x, -1), torch.triu(x, 2), torch.tril(x, 9), torch.triu(x, -9)


class TriInplace(nn.Module):
    def forward(self, x):
        a = (x * 2.0).tril_(1)
        b = (x + 1.0).triu_(-1)
        return a, b


class TriIndices(nn.Module):
    def forward(self, x):
        n, m = x.size(0), x.size(1)
        return torch.tril_indices(n, m), torch.triu_indices(n, m, 1), torch.tril_indices(n, m, -2), \
            torch.triu_indices(m, n, -1), torch.tril_indices(n, n, 0, dtype=torch.int32)


class RepeatInterleave(nn.Module):
    def forward(self, x, reps):
        return x.repeat_interleave(2, dim=1), x.repeat_interleave(reps, dim=0), x.repeat_interleave(3), \
            torch.repeat_interleave(reps), x.repeat_interleave(2, dim=-1)


class NewTensors(nn.Module):
    def forward(self, x):
        return x.new_zeros((2, 3)), x.new_ones([4]), x.new_full((2, 2), 3.5), x.new_zeros((3,), dtype=torch.int64), \
            x.new_full((1, 2), 7)


class MaskedWhere(nn.Module):
    """swin's attention mask and the other masked_fill / where overloads."""

    def forward(self, x, m):
        mask = m - m.roll(1, 0)
        attn = mask.masked_fill(mask != 0, -100.0).masked_fill(mask == 0, 0.0)
        y = x.clone()
        y.masked_fill_(x > 0.5, 2.0)
        z = x.masked_fill(x < 0, torch.tensor(-3.0))
        return attn, y, z, torch.where(x > 0, x, 0.25), torch.where(x > 0, -1.0, x), torch.where(x > 0, 1.0, 0.0), \
            torch.clamp_min(x, m[0]), torch.clamp_max(x, 0.2), x.clamp(min=-0.5).clamp_max_(0.5)


case("elt_roll", lambda: (Roll(), [r(3, 4, 5)]))
case("elt_roll_int64", lambda: (Roll(), [ints(-9, 9, 2, 3, 4)]))
case("elt_roll_swin", lambda: (RollSwin(), [r(1, 7, 7, 3)]))
case("elt_tri", lambda: (Tri(), [r(4, 6)]))
case("elt_tri_batch", lambda: (Tri(), [r(2, 3, 5, 4)]))
case("elt_tri_int64", lambda: (Tri(), [ints(-9, 9, 5, 5)]))
case("elt_tri_inplace", lambda: (TriInplace(), [r(3, 4, 4)]))
case("elt_tri_indices", lambda: (TriIndices(), [r(4, 5)]))
case("elt_repeat_interleave", lambda: (RepeatInterleave(), [r(3, 4), ints(0, 3, 3)]))
case("elt_new_tensors", lambda: (NewTensors(), [r(2, 2)]))
case("elt_masked_where", lambda: (MaskedWhere(), [r(4, 5), r(4, 5)]))


class Norms(nn.Module):
    def forward(self, x):
        return torch.norm(x), x.norm(2.0, -1), x.norm(1.0, [0, 2], True), x.norm(float("inf"), [1]), \
            x.norm(float("-inf"), [-1], True), x.norm(0.0, [0]), x.norm(3.0, [-1]), x.norm(2.5), \
            torch.linalg.vector_norm(x, 2, dim=1), torch.linalg.vector_norm(x, 1), F.normalize(x, dim=-1)


class NormDtype(nn.Module):
    def forward(self, x):
        return torch.norm(x, 2, dim=[1], keepdim=False, dtype=torch.float64), torch.linalg.vector_norm(x, dtype=torch.float64)


case("elt_norms", lambda: (Norms(), [r(3, 4, 5)]))
case("elt_norms_f64", lambda: (Norms(), [r(3, 4, 5).double()]))
case("elt_norm_dtype", lambda: (NormDtype(), [r(3, 4)]))


class Nonzero(nn.Module):
    def forward(self, x):
        m = x > 0.3
        w = torch.where(m)
        return torch.nonzero(m), torch.nonzero(x), w[0], w[1], w[2], torch.nonzero(x.sum() > 0)


case("elt_nonzero", lambda: (Nonzero(), [r(2, 3, 4)]))


class Repeat(nn.Module):
    def forward(self, x):
        return x.repeat(2, 3), x.repeat(2, 1, 1), x.repeat(1, 1, 2, 1), torch.tile(x, (2,)), torch.tile(x, (2, 1, 3)), \
            x.repeat(0, 2)


case("elt_repeat", lambda: (Repeat(), [r(3, 4)]))
case("elt_repeat_int64", lambda: (Repeat(), [ints(-9, 9, 2, 3)]))
