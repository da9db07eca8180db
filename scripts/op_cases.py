"""One small module per op behaviour; make_testdata.py turns each into
testdata/ops/<name>.ir + .safetensors. Scalar arguments are module
attributes, which torch.jit.freeze turns into constants."""
from typing import List, Tuple

import torch
import torch.nn.functional as F
from torch import nn, Tensor

CASES = []  # (name, build, opts)


def case(name, build, rtol=1e-4, atol=1e-5, noncontig=True):
    CASES.append((name, build, dict(rtol=rtol, atol=atol, noncontig=noncontig)))


def r(*s):
    return torch.randn(*s)


def pos(*s):
    return torch.rand(*s) + 0.1


def ints(lo, hi, *s):
    return torch.randint(lo, hi, s, dtype=torch.int64)


# ---------------------------------------------------------------- linear algebra
class Call(nn.Module):
    """Applies a submodule (nn.Linear, nn.Conv2d, ...)."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(x)


class Addmm(nn.Module):
    def __init__(self, bias, w, beta: float, alpha: float):
        super().__init__()
        self.register_buffer("bias", bias)
        self.register_buffer("w", w)
        self.beta = beta
        self.alpha = alpha

    def forward(self, x):
        return torch.addmm(self.bias, x, self.w, beta=self.beta, alpha=self.alpha)


class Mm(nn.Module):
    def forward(self, a, b):
        return torch.mm(a, b)


class Bmm(nn.Module):
    def forward(self, a, b):
        return torch.bmm(a, b)


class Matmul(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)


class LinearFn(nn.Module):
    """F.linear with the weight as an input (not a constant)."""

    def forward(self, x, w, b):
        return F.linear(x, w, b)


case("linear_2d", lambda: (Call(nn.Linear(5, 7)), [r(3, 5)]))
case("linear_3d", lambda: (Call(nn.Linear(5, 7)), [r(2, 3, 5)]))
case("linear_1d", lambda: (Call(nn.Linear(5, 7)), [r(5)]))
case("linear_nobias", lambda: (Call(nn.Linear(5, 7, bias=False)), [r(4, 5)]))
case("linear_inputs", lambda: (LinearFn(), [r(3, 6), r(4, 6), r(4)]))
case("addmm_bias1d", lambda: (Addmm(r(7), r(5, 7), 1.0, 1.0), [r(3, 5)]))
case("addmm_beta_alpha", lambda: (Addmm(r(3, 7), r(5, 7), 0.5, 2.0), [r(3, 5)]))
case("mm", lambda: (Mm(), [r(3, 5), r(5, 7)]))
case("mm_vector_shapes", lambda: (Mm(), [r(1, 5), r(5, 1)]))
case("bmm", lambda: (Bmm(), [r(2, 3, 5), r(2, 5, 4)]))
for (na, nb, sa, sb) in [
    ("1d", "1d", (5,), (5,)),
    ("1d", "2d", (5,), (5, 3)),
    ("2d", "1d", (3, 5), (5,)),
    ("2d", "2d", (3, 5), (5, 4)),
    ("3d", "2d", (2, 3, 5), (5, 4)),
    ("2d", "3d", (3, 5), (2, 5, 4)),
    ("3d", "3d", (2, 3, 5), (2, 5, 4)),
    ("3d", "1d", (2, 3, 5), (5,)),
    ("1d", "3d", (5,), (2, 5, 4)),
    ("4d", "3d_bcast", (2, 1, 3, 5), (3, 5, 4)),
    ("4d", "4d", (2, 3, 4, 5), (2, 3, 5, 3)),
]:
    case("matmul_%s_%s" % (na, nb), lambda sa=sa, sb=sb: (Matmul(), [r(*sa), r(*sb)]))


# ---------------------------------------------------------------- conv / norm
def conv(*a, **k):
    return lambda shape: (Call(nn.Conv2d(*a, **k)), [r(*shape)])


case("conv2d_basic", lambda: conv(3, 4, 3)((1, 3, 8, 8)))
case("conv2d_stride_pad", lambda: conv(3, 6, 3, stride=2, padding=1)((2, 3, 9, 7)))
case("conv2d_dilation", lambda: conv(2, 3, 3, dilation=2, padding=2)((1, 2, 7, 6)))
case("conv2d_groups", lambda: conv(4, 6, 3, groups=2)((2, 4, 6, 5)))
case("conv2d_depthwise", lambda: conv(4, 4, 3, groups=4, padding=1)((1, 4, 5, 5)))
case("conv2d_nobias_rect", lambda: conv(3, 5, (1, 3), stride=(1, 2), padding=(0, 1), bias=False)((2, 3, 4, 7)))
case("conv2d_1x1", lambda: conv(6, 3, 1)((1, 6, 4, 3)))
case("conv2d_all", lambda: conv(4, 4, (3, 2), stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2)((1, 4, 7, 6)))


class ConvFn(nn.Module):
    def forward(self, x, w):
        return F.conv2d(x, w, None, 1, 1)


case("conv2d_weight_input", lambda: (ConvFn(), [r(1, 2, 5, 5), r(3, 2, 3, 3)]))


class ConvAvgPool(nn.Module):
    """A 1x1 convolution and the average pooling that alone reads it:
    gosr pools first (passes.PoolBeforePointwiseConv) where that gives
    the same result up to rounding, as in densenet's transitions."""

    def __init__(self, cin, cout, bias, **pool):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 1, bias=bias)
        self.pool = nn.AvgPool2d(**pool)

    def forward(self, x):
        return self.pool(self.conv(x))


case("conv1x1_avg_pool_transition", lambda: (ConvAvgPool(8, 4, False, kernel_size=2, stride=2), [r(1, 8, 8, 8)]))
case("conv1x1_avg_pool_bias_ceil", lambda: (ConvAvgPool(6, 3, True, kernel_size=2, ceil_mode=True), [r(2, 6, 7, 9)]))
case("conv1x1_avg_pool_3x3_s2", lambda: (ConvAvgPool(6, 5, True, kernel_size=3, stride=2), [r(1, 6, 9, 11)]))
case("conv1x1_avg_pool_divisor_bias", lambda: (ConvAvgPool(6, 3, True, kernel_size=2, divisor_override=3), [r(1, 6, 6, 6)]))
case("conv1x1_avg_pool_padded", lambda: (ConvAvgPool(6, 3, True, kernel_size=2, padding=1, count_include_pad=True), [r(1, 6, 5, 6)]))


def bn(n, dim2=True):
    m = nn.BatchNorm2d(n) if dim2 else nn.BatchNorm1d(n)
    m.running_mean.copy_(torch.randn(n))
    m.running_var.copy_(torch.rand(n) + 0.5)
    m.weight.data.copy_(torch.randn(n))
    m.bias.data.copy_(torch.randn(n))
    return Call(m)


case("batch_norm_2d", lambda: (bn(3), [r(2, 3, 4, 5)]))
case("batch_norm_1d", lambda: (bn(5, False), [r(4, 5)]))


def ln(shape, affine=True):
    m = nn.LayerNorm(shape, elementwise_affine=affine)
    if affine:
        m.weight.data.copy_(torch.randn(shape))
        m.bias.data.copy_(torch.randn(shape))
    return Call(m)


case("layer_norm_last", lambda: (ln(7), [r(3, 5, 7)]))
case("layer_norm_two_dims", lambda: (ln([5, 7]), [r(3, 5, 7)]))
case("layer_norm_no_affine", lambda: (ln(6, False), [r(4, 6)]))


# ---------------------------------------------------------------- activations
class Relu(nn.Module):
    def forward(self, x):
        return torch.relu(x)


class LeakyRelu(nn.Module):
    def __init__(self, slope: float):
        super().__init__()
        self.slope = slope

    def forward(self, x):
        return F.leaky_relu(x, self.slope)


class Gelu(nn.Module):
    def __init__(self, approximate: str):
        super().__init__()
        self.approximate = approximate

    def forward(self, x):
        return F.gelu(x, approximate=self.approximate)


class Sigmoid(nn.Module):
    def forward(self, x):
        return torch.sigmoid(x)


class Tanh(nn.Module):
    def forward(self, x):
        return torch.tanh(x)


class Softmax(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.softmax(x, self.dim)


class LogSoftmax(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.log_softmax(x, self.dim)


class SoftmaxT(nn.Module):
    """softmax of a transposed (non-contiguous) view."""

    def forward(self, x):
        return F.softmax(x.transpose(0, 1), dim=-1)


case("relu", lambda: (Relu(), [r(3, 5, 7)]))
case("relu_int64", lambda: (Relu(), [ints(-5, 5, 4, 6)]))
case("leaky_relu", lambda: (LeakyRelu(0.2), [r(3, 5, 7)]))
case("gelu_none", lambda: (Gelu("none"), [r(3, 5, 7) * 3]))
case("gelu_tanh", lambda: (Gelu("tanh"), [r(3, 5, 7) * 3]))
case("sigmoid", lambda: (Sigmoid(), [r(3, 5, 7) * 4]))
case("tanh", lambda: (Tanh(), [r(3, 5, 7) * 2]))
for d in [0, 1, -1]:
    case("softmax_dim%s" % str(d).replace("-", "m"), lambda d=d: (Softmax(d), [r(3, 5, 7) * 3]))
    case("log_softmax_dim%s" % str(d).replace("-", "m"), lambda d=d: (LogSoftmax(d), [r(3, 5, 7) * 3]))
case("softmax_1d", lambda: (Softmax(0), [r(11)]))
case("softmax_transposed", lambda: (SoftmaxT(), [r(5, 4)]))


# ---------------------------------------------------------------- binary arithmetic
class Add(nn.Module):
    def forward(self, a, b):
        return a + b


class AddAlpha(nn.Module):
    def __init__(self, alpha: float):
        super().__init__()
        self.alpha = alpha

    def forward(self, a, b):
        return torch.add(a, b, alpha=self.alpha)


class AddScalar(nn.Module):
    def __init__(self, s: float):
        super().__init__()
        self.s = s

    def forward(self, a):
        return a + self.s


class AddIntScalar(nn.Module):
    def __init__(self, s: int):
        super().__init__()
        self.s = s

    def forward(self, a):
        return a + self.s


class Sub(nn.Module):
    def forward(self, a, b):
        return a - b


class SubAlpha(nn.Module):
    def forward(self, a, b):
        return torch.sub(a, b, alpha=3)


class SubScalar(nn.Module):
    def forward(self, a):
        return a - 1.25


class Rsub(nn.Module):
    def forward(self, a):
        return 2.0 - a


class Mul(nn.Module):
    def forward(self, a, b):
        return a * b


class MulScalar(nn.Module):
    def forward(self, a):
        return a * 0.5


class MulIntScalar(nn.Module):
    def forward(self, a):
        return a * 3


class Div(nn.Module):
    def forward(self, a, b):
        return a / b


class DivScalar(nn.Module):
    def forward(self, a):
        return a / 3.0


class ConstAdd(nn.Module):
    """tensor + tensor constant (broadcast)."""

    def __init__(self, c):
        super().__init__()
        self.register_buffer("c", c)

    def forward(self, a):
        return a * self.c + self.c


case("add_same_shape", lambda: (Add(), [r(3, 5, 7), r(3, 5, 7)]))
case("add_broadcast", lambda: (Add(), [r(3, 1, 7), r(5, 1)]))
case("add_broadcast_scalar_tensor", lambda: (Add(), [r(3, 5), r(())]))
case("add_alpha", lambda: (AddAlpha(2.5), [r(3, 5), r(3, 5)]))
case("add_scalar", lambda: (AddScalar(2.5), [r(3, 5, 7)]))
case("add_int64", lambda: (Add(), [ints(-9, 9, 4, 5), ints(-9, 9, 5)]))
case("add_int64_int_scalar", lambda: (AddIntScalar(7), [ints(-9, 9, 4, 5)]))
case("add_int64_float_scalar", lambda: (AddScalar(0.5), [ints(-9, 9, 4, 5)]))
case("add_float_int64_promote", lambda: (Add(), [r(4, 5), ints(-9, 9, 4, 5)]))
case("add_const_tensor", lambda: (ConstAdd(r(7)), [r(3, 5, 7)]))
case("sub_broadcast", lambda: (Sub(), [r(3, 5, 7), r(5, 1)]))
case("sub_alpha", lambda: (SubAlpha(), [r(3, 5), r(3, 5)]))
case("sub_scalar", lambda: (SubScalar(), [r(3, 5)]))
case("rsub_scalar", lambda: (Rsub(), [r(3, 5)]))
case("mul_broadcast", lambda: (Mul(), [r(3, 5, 7), r(7)]))
case("mul_scalar", lambda: (MulScalar(), [r(3, 5, 7)]))
case("mul_int64_scalar", lambda: (MulIntScalar(), [ints(-9, 9, 6)]))
case("mul_bool", lambda: (Mul(), [torch.rand(4, 5) > 0.5, torch.rand(4, 5) > 0.5]))
case("mul_float_bool", lambda: (Mul(), [r(4, 5), torch.rand(4, 5) > 0.5]))
case("div_broadcast", lambda: (Div(), [r(3, 5, 7), pos(5, 7)]))
case("div_scalar", lambda: (DivScalar(), [r(3, 5)]))
case("div_int64_true", lambda: (Div(), [ints(-9, 9, 4, 5), ints(1, 5, 4, 5)]))


# ---------------------------------------------------------------- elementwise
class Clamp(nn.Module):
    def forward(self, x):
        return torch.clamp(x, -0.5, 0.75)


class ClampMin(nn.Module):
    def forward(self, x):
        return torch.clamp(x, min=0.1)


class ClampMax(nn.Module):
    def forward(self, x):
        return torch.clamp(x, max=-0.2)


class ClampInt(nn.Module):
    def forward(self, x):
        return torch.clamp(x, -3, 4)


class Neg(nn.Module):
    def forward(self, x):
        return -x


class Exp(nn.Module):
    def forward(self, x):
        return torch.exp(x)


class Log(nn.Module):
    def forward(self, x):
        return torch.log(x)


class PowScalar(nn.Module):
    def __init__(self, e: float):
        super().__init__()
        self.e = e

    def forward(self, x):
        return torch.pow(x, self.e)


class PowInt(nn.Module):
    def forward(self, x):
        return x ** 3


class PowTensor(nn.Module):
    def forward(self, x, y):
        return torch.pow(x, y)


class PowScalarBase(nn.Module):
    def forward(self, x):
        return 2.0 ** x


case("clamp", lambda: (Clamp(), [r(3, 5, 7)]))
case("clamp_min", lambda: (ClampMin(), [r(3, 5)]))
case("clamp_max", lambda: (ClampMax(), [r(3, 5)]))
case("clamp_int64", lambda: (ClampInt(), [ints(-9, 9, 4, 5)]))
case("neg", lambda: (Neg(), [r(3, 5, 7)]))
case("neg_int64", lambda: (Neg(), [ints(-9, 9, 4, 5)]))
case("exp", lambda: (Exp(), [r(3, 5, 7)]))
case("log", lambda: (Log(), [pos(3, 5, 7)]))
# NaN and inf outputs: the Go comparison treats NaN == NaN and needs equal infinities.
case("log_nan_inf", lambda: (Log(), [torch.tensor([[-1.0, 0.0, 2.0], [1e-30, -0.0, 5.0]])]))
case("div_by_zero", lambda: (Div(), [torch.tensor([1.0, -1.0, 0.0, 2.0]), torch.tensor([0.0, 0.0, 0.0, 4.0])]))
case("pow_2", lambda: (PowScalar(2.0), [r(3, 5)]))
case("pow_half", lambda: (PowScalar(0.5), [pos(3, 5)]))
case("pow_int_exponent", lambda: (PowInt(), [r(3, 5)]))
case("pow_tensor_tensor", lambda: (PowTensor(), [pos(3, 5), r(5)]))
case("pow_scalar_base", lambda: (PowScalarBase(), [r(3, 5)]))


# ---------------------------------------------------------------- reductions
class SumAll(nn.Module):
    def forward(self, x):
        return torch.sum(x)


class SumDim(nn.Module):
    def __init__(self, dims: List[int], keep: bool):
        super().__init__()
        self.dims = dims
        self.keep = keep

    def forward(self, x):
        return torch.sum(x, self.dims, self.keep)


class MeanAll(nn.Module):
    def forward(self, x):
        return torch.mean(x)


class MeanDim(nn.Module):
    def __init__(self, dims: List[int], keep: bool):
        super().__init__()
        self.dims = dims
        self.keep = keep

    def forward(self, x):
        return torch.mean(x, self.dims, self.keep)


class MaxAll(nn.Module):
    def forward(self, x):
        return torch.max(x)


class MaxDim(nn.Module):
    def __init__(self, dim: int, keep: bool):
        super().__init__()
        self.dim = dim
        self.keep = keep

    def forward(self, x):
        v, i = torch.max(x, self.dim, self.keep)
        return v, i


class MaxBinary(nn.Module):
    def forward(self, a, b):
        return torch.max(a, b)


class ArgmaxAll(nn.Module):
    def forward(self, x):
        return torch.argmax(x)


class ArgmaxDim(nn.Module):
    def __init__(self, dim: int, keep: bool):
        super().__init__()
        self.dim = dim
        self.keep = keep

    def forward(self, x):
        return torch.argmax(x, self.dim, self.keep)


case("sum_all", lambda: (SumAll(), [r(3, 5, 7)]))
case("sum_dim1", lambda: (SumDim([1], False), [r(3, 5, 7)]))
case("sum_dim_last_keepdim", lambda: (SumDim([-1], True), [r(3, 5, 7)]))
case("sum_dims_0_2", lambda: (SumDim([0, 2], False), [r(3, 5, 7)]))
case("sum_int64", lambda: (SumAll(), [ints(-9, 9, 4, 5)]))
case("sum_bool", lambda: (SumDim([1], False), [torch.rand(4, 5) > 0.5]))
case("mean_all", lambda: (MeanAll(), [r(3, 5, 7)]))
case("mean_dim0", lambda: (MeanDim([0], False), [r(3, 5, 7)]))
case("mean_dims_keepdim", lambda: (MeanDim([1, 2], True), [r(3, 5, 7)]))
case("max_all", lambda: (MaxAll(), [r(3, 5, 7)]))
case("max_dim1", lambda: (MaxDim(1, False), [r(3, 5, 7)]))
case("max_dim_last_keepdim", lambda: (MaxDim(-1, True), [r(3, 5, 7)]))
case("max_binary", lambda: (MaxBinary(), [r(3, 5), r(5)]))
case("max_int64_dim", lambda: (MaxDim(0, False), [torch.randperm(20).reshape(4, 5)]))
case("argmax_all", lambda: (ArgmaxAll(), [r(3, 5, 7)]))
case("argmax_dim1", lambda: (ArgmaxDim(1, False), [r(3, 5, 7)]))
case("argmax_dim0_keepdim", lambda: (ArgmaxDim(0, True), [r(3, 5, 7)]))


# ---------------------------------------------------------------- embeddings
class Embedding(nn.Module):
    def __init__(self, n, d):
        super().__init__()
        self.e = nn.Embedding(n, d)

    def forward(self, idx):
        return self.e(idx)


class EmbeddingBag(nn.Module):
    def __init__(self, n: int, d: int, mode: str, include_last_offset: bool):
        super().__init__()
        self.register_buffer("w", torch.randn(n, d))
        self.mode = mode
        self.include_last_offset = include_last_offset

    def forward(self, idx, offsets):
        return F.embedding_bag(idx, self.w, offsets, mode=self.mode,
                               include_last_offset=self.include_last_offset)


class EmbeddingBagPSW(nn.Module):
    def __init__(self, n: int, d: int):
        super().__init__()
        self.register_buffer("w", torch.randn(n, d))

    def forward(self, idx, offsets, psw):
        return F.embedding_bag(idx, self.w, offsets, mode="sum", per_sample_weights=psw)


class EmbeddingBag2D(nn.Module):
    def __init__(self, n: int, d: int, mode: str):
        super().__init__()
        self.register_buffer("w", torch.randn(n, d))
        self.mode = mode

    def forward(self, idx):
        return F.embedding_bag(idx, self.w, None, mode=self.mode)


case("embedding_2d_idx", lambda: (Embedding(10, 4), [ints(0, 10, 3, 5)]))
case("embedding_1d_idx", lambda: (Embedding(10, 6), [ints(0, 10, 7)]))
OFF = lambda *v: torch.tensor(v, dtype=torch.int64)
for mode in ["sum", "mean", "max"]:
    case("embedding_bag_%s" % mode, lambda mode=mode: (EmbeddingBag(10, 4, mode, False), [ints(0, 10, 9), OFF(0, 2, 5, 6)]))
    case("embedding_bag_%s_last_offset" % mode,
         lambda mode=mode: (EmbeddingBag(10, 4, mode, True), [ints(0, 10, 9), OFF(0, 2, 5, 9)]))
    case("embedding_bag_%s_2d" % mode, lambda mode=mode: (EmbeddingBag2D(12, 5, mode), [ints(0, 12, 3, 4)]))
case("embedding_bag_sum_empty_bag", lambda: (EmbeddingBag(10, 4, "sum", False), [ints(0, 10, 6), OFF(0, 3, 3, 4)]))
case("embedding_bag_mean_empty_bag", lambda: (EmbeddingBag(10, 4, "mean", False), [ints(0, 10, 6), OFF(0, 0, 2)]))
case("embedding_bag_per_sample_weights", lambda: (EmbeddingBagPSW(10, 4), [ints(0, 10, 8), OFF(0, 3, 4), r(8)]))


# ---------------------------------------------------------------- pooling
class MaxPool(nn.Module):
    def __init__(self, k: List[int], s: List[int], p: List[int], d: List[int], ceil: bool):
        super().__init__()
        self.k, self.s, self.p, self.d, self.ceil = k, s, p, d, ceil

    def forward(self, x):
        return F.max_pool2d(x, self.k, self.s, self.p, self.d, ceil_mode=self.ceil)


class AvgPool(nn.Module):
    def __init__(self, k: List[int], s: List[int], p: List[int], ceil: bool, count_pad: bool):
        super().__init__()
        self.k, self.s, self.p, self.ceil, self.count_pad = k, s, p, ceil, count_pad

    def forward(self, x):
        return F.avg_pool2d(x, self.k, self.s, self.p, self.ceil, self.count_pad)


class AdaptiveAvg(nn.Module):
    def __init__(self, out: List[int]):
        super().__init__()
        self.out = out

    def forward(self, x):
        return F.adaptive_avg_pool2d(x, self.out)


case("max_pool2d_k2", lambda: (MaxPool([2, 2], [2, 2], [0, 0], [1, 1], False), [r(2, 3, 8, 6)]))
case("max_pool2d_k3_s2_p1", lambda: (MaxPool([3, 3], [2, 2], [1, 1], [1, 1], False), [r(1, 3, 7, 9)]))
case("max_pool2d_ceil_dilation", lambda: (MaxPool([2, 3], [2, 2], [0, 1], [2, 1], True), [r(1, 2, 9, 8)]))
case("avg_pool2d_k2", lambda: (AvgPool([2, 2], [2, 2], [0, 0], False, True), [r(2, 3, 8, 6)]))
case("avg_pool2d_k3_s2_p1", lambda: (AvgPool([3, 3], [2, 2], [1, 1], False, True), [r(1, 3, 7, 9)]))
case("avg_pool2d_no_count_pad_ceil", lambda: (AvgPool([3, 3], [2, 2], [1, 1], True, False), [r(1, 3, 7, 8)]))
case("adaptive_avg_pool2d_1x1", lambda: (AdaptiveAvg([1, 1]), [r(2, 3, 5, 7)]))
case("adaptive_avg_pool2d_uneven", lambda: (AdaptiveAvg([3, 2]), [r(1, 2, 7, 5)]))


# ---------------------------------------------------------------- shapes and views
class Cat(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, a, b):
        return torch.cat([a, b], self.dim)


class Cat3(nn.Module):
    def forward(self, a, b, c):
        return torch.cat((a, b, c), 0)


class Stack(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, a, b):
        return torch.stack([a, b, a], self.dim)


class Chunk(nn.Module):
    def forward(self, x):
        a, b, c = torch.chunk(x, 3, 1)
        return a * 2, b, c + 1


class ChunkList(nn.Module):
    def forward(self, x):
        return torch.chunk(x, 2, 0)


class Split(nn.Module):
    def forward(self, x):
        return torch.split(x, 2, -1)


class SplitSizes(nn.Module):
    def forward(self, x):
        a, b, c = torch.split(x, [2, 3, 2], 2)
        return c, a, b


class Flatten(nn.Module):
    def __init__(self, s: int, e: int):
        super().__init__()
        self.s, self.e = s, e

    def forward(self, x):
        return torch.flatten(x, self.s, self.e)


class View(nn.Module):
    def forward(self, x):
        return x.view(-1, 7)


class ViewAdd(nn.Module):
    """view of a result, then an op reading the view."""

    def forward(self, x):
        y = x + 1
        return y.view(5, 3, 7).sum(1)


class Reshape(nn.Module):
    def forward(self, x):
        return x.reshape(7, -1)


class ReshapeSizes(nn.Module):
    def forward(self, x):
        return x.reshape(x.size(0) * x.size(1), x.size(2))


class Permute(nn.Module):
    def forward(self, x):
        return x.permute(2, 0, 1) * 2


class Transpose(nn.Module):
    def forward(self, x):
        return torch.transpose(x, 0, 2)


class TransposeContig(nn.Module):
    def forward(self, x):
        return x.transpose(1, 2).contiguous()


class Contiguous(nn.Module):
    def forward(self, x):
        return x.contiguous()


class T(nn.Module):
    def forward(self, x):
        return x.t()


class Squeeze(nn.Module):
    def forward(self, x):
        return x.squeeze()


class SqueezeDim(nn.Module):
    def forward(self, x):
        return x.squeeze(1), x.squeeze(0)


class Unsqueeze(nn.Module):
    def forward(self, x):
        return x.unsqueeze(0), x.unsqueeze(-1)


class Select(nn.Module):
    def forward(self, x):
        return x.select(1, -1), x[0], x[:, 2]


class Slice(nn.Module):
    def forward(self, x):
        return x[1:3], x[:, ::2], x[..., 1:-1]


class SliceNeg(nn.Module):
    def forward(self, x):
        return x[-2:, 1:100, :3]


class Narrow(nn.Module):
    def forward(self, x):
        return x.narrow(1, 1, 3)


class IndexSelect(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x, idx):
        return torch.index_select(x, self.dim, idx)


class IndexTensor(nn.Module):
    def forward(self, x, idx):
        return x[idx]


class IndexMask(nn.Module):
    def forward(self, x):
        return x[x > 0]


class IndexMaskInput(nn.Module):
    def forward(self, x, m):
        return x[m]


class IndexCol(nn.Module):
    def forward(self, x, idx):
        return x[:, idx]


class Index2(nn.Module):
    def forward(self, x, i, j):
        return x[i, j]


class Where(nn.Module):
    def forward(self, c, a, b):
        return torch.where(c, a, b)


class WhereCmp(nn.Module):
    def forward(self, a, b):
        return torch.where(a > b, a, b * 2)


class MaskedFill(nn.Module):
    def forward(self, x, m):
        return x.masked_fill(m, -1.5)


class MaskedFillCmp(nn.Module):
    def forward(self, x):
        return torch.masked_fill(x, x < 0, 0.0)


class Expand(nn.Module):
    def forward(self, x):
        return x.expand(3, 4, 5) + 0


class ExpandAs(nn.Module):
    def forward(self, x, y):
        return x.expand_as(y) * y


case("cat_dim0", lambda: (Cat(0), [r(2, 5), r(3, 5)]))
case("cat_dim1", lambda: (Cat(1), [r(3, 2, 4), r(3, 5, 4)]))
case("cat_dim_last", lambda: (Cat(-1), [r(3, 5, 2), r(3, 5, 1)]))
case("cat_three", lambda: (Cat3(), [r(1, 4), r(2, 4), r(3, 4)]))
case("cat_int64", lambda: (Cat(1), [ints(0, 9, 2, 3), ints(0, 9, 2, 2)]))
case("stack_dim0", lambda: (Stack(0), [r(3, 5), r(3, 5)]))
case("stack_dim_last", lambda: (Stack(-1), [r(3, 5), r(3, 5)]))
case("chunk_unpack", lambda: (Chunk(), [r(2, 7, 3)]))
case("chunk_list", lambda: (ChunkList(), [r(5, 3)]))
case("split_int", lambda: (Split(), [r(3, 5, 7)]))
case("split_sizes", lambda: (SplitSizes(), [r(3, 5, 7)]))
case("flatten_1", lambda: (Flatten(1, -1), [r(3, 5, 7)]))
case("flatten_all", lambda: (Flatten(0, -1), [r(3, 5, 7)]))
case("flatten_mid", lambda: (Flatten(1, 2), [r(2, 3, 5, 7)]))
case("view", lambda: (View(), [r(3, 5, 7)]), noncontig=False)
case("view_of_result", lambda: (ViewAdd(), [r(15, 7)]))
case("reshape", lambda: (Reshape(), [r(3, 5, 7)]))
case("reshape_from_sizes", lambda: (ReshapeSizes(), [r(3, 5, 7)]))
case("permute", lambda: (Permute(), [r(3, 5, 7)]))
case("transpose", lambda: (Transpose(), [r(3, 5, 7)]))
case("transpose_contiguous", lambda: (TransposeContig(), [r(3, 5, 7)]))
case("contiguous", lambda: (Contiguous(), [r(3, 5, 7)]))
case("t", lambda: (T(), [r(3, 5)]))
case("squeeze_all", lambda: (Squeeze(), [r(3, 1, 5, 1)]))
case("squeeze_dim", lambda: (SqueezeDim(), [r(1, 1, 5)]))
case("unsqueeze", lambda: (Unsqueeze(), [r(3, 5)]))
case("select", lambda: (Select(), [r(3, 5, 7)]))
case("slice", lambda: (Slice(), [r(4, 5, 7)]))
case("slice_negative_clamped", lambda: (SliceNeg(), [r(4, 5, 7)]))
case("narrow", lambda: (Narrow(), [r(3, 5, 7)]))
case("index_select_dim0", lambda: (IndexSelect(0), [r(5, 7), OFF(4, 0, 0, 2)]))
case("index_select_dim1", lambda: (IndexSelect(1), [r(3, 5, 7), OFF(4, 1, 3, 1)]))
case("index_tensor", lambda: (IndexTensor(), [r(5, 7), OFF(4, 0, -1, 2)]))
case("index_tensor_2d_idx", lambda: (IndexTensor(), [r(5, 3), ints(0, 5, 2, 3)]))
case("index_mask", lambda: (IndexMask(), [r(4, 6)]))
case("index_mask_rows", lambda: (IndexMaskInput(), [r(5, 3), torch.tensor([True, False, True, True, False])]))
case("index_col", lambda: (IndexCol(), [r(3, 5, 2), OFF(4, 0, 4)]))
case("index_two_tensors", lambda: (Index2(), [r(4, 5), OFF(0, 3, 1), OFF(4, 4, 0)]))
case("where", lambda: (Where(), [torch.rand(3, 5) > 0.5, r(3, 5), r(5)]))
case("where_cmp", lambda: (WhereCmp(), [r(3, 5), r(3, 5)]))
case("masked_fill", lambda: (MaskedFill(), [r(3, 5), torch.rand(3, 5) > 0.5]))
case("masked_fill_broadcast_mask", lambda: (MaskedFill(), [r(3, 5), torch.rand(5) > 0.5]))
case("masked_fill_cmp", lambda: (MaskedFillCmp(), [r(3, 5, 7)]))
case("expand", lambda: (Expand(), [r(4, 1)]))
case("expand_as", lambda: (ExpandAs(), [r(5), r(3, 5)]))


# ---------------------------------------------------------------- dtype conversions, comparisons
class ToLong(nn.Module):
    def forward(self, x):
        return (x * 10).to(torch.int64)


class LongMethod(nn.Module):
    def forward(self, x):
        return x.long()


class ToFloat(nn.Module):
    def forward(self, x):
        return x.to(torch.float32) / 2


class FloatMethod(nn.Module):
    def forward(self, x):
        return x.float()


class ToBool(nn.Module):
    def forward(self, x):
        return x.to(torch.bool), x.to(torch.bool).long()


class ToDouble(nn.Module):
    def forward(self, x):
        return x.double() * 3


class TypeAs(nn.Module):
    def forward(self, x, y):
        return x.type_as(y)


class Compare(nn.Module):
    def forward(self, a, b):
        return a > b, a < 0.5, a == b, a != b, a >= b, a <= 0.0


case("to_int64", lambda: (ToLong(), [r(3, 5)]))
case("long_method", lambda: (LongMethod(), [r(3, 5) * 5]))
case("to_float32_from_int64", lambda: (ToFloat(), [ints(-9, 9, 3, 5)]))
case("float_from_bool", lambda: (FloatMethod(), [torch.rand(3, 5) > 0.5]))
case("to_bool", lambda: (ToBool(), [torch.tensor([[0.0, 1.5, -2.0], [0.0, 0.0, 3.0]])]))
case("to_float64", lambda: (ToDouble(), [r(3, 5)]))
case("type_as", lambda: (TypeAs(), [r(3, 5) * 4, ints(0, 2, 2)]))
case("comparisons", lambda: (Compare(), [torch.randint(-2, 3, (3, 5)).float() / 2, torch.randint(-2, 3, (5,)).float() / 2]))


# ---------------------------------------------------------------- scalars, sizes, lists, tuples
class Size0(nn.Module):
    def forward(self, x) -> int:
        return x.size(0)


class SizeList(nn.Module):
    def forward(self, x) -> List[int]:
        return x.size()


class Dim(nn.Module):
    def forward(self, x) -> Tuple[int, int, int]:
        return x.dim(), x.numel(), x.size(-1)


class ScalarArith(nn.Module):
    def forward(self, x):
        return x * (x.size(0) // 2 + 1.5)


class ScalarMix(nn.Module):
    def forward(self, x) -> Tuple[Tensor, float, int, bool, bool]:
        n = x.size(0)
        m = x.size(1)
        f = float(n) / m - 0.25
        k = n * m - n % 2 + m // 2
        return x + f, f * 2.0, k, n > m, (n == 3) and not (m < 2)


class IntOps(nn.Module):
    def forward(self, x) -> Tuple[int, int, int, float, bool]:
        a = x.size(0)
        b = x.size(1)
        return a + b, a - b * 2, max(a, b) * min(a, b), a / b, a != b


class TensorItem(nn.Module):
    def forward(self, x) -> Tuple[float, int, bool]:
        s = x.sum()
        return float(s), int(x.argmax()), bool(s > 0)


class NumToTensor(nn.Module):
    def forward(self, x):
        return x + x.size(1), torch.tensor(x.size(0))


class ListOut(nn.Module):
    def forward(self, a, b) -> List[Tensor]:
        return [a + 1, b, a * b]


class TupleNested(nn.Module):
    def forward(self, a, b) -> Tuple[Tensor, Tuple[Tensor, List[Tensor]]]:
        return a, (b, [a + b, a - b])


class TupleUnpack(nn.Module):
    def pair(self, a, b) -> Tuple[Tensor, Tensor]:
        return a + b, a * b

    def forward(self, a, b):
        s, p = self.pair(a, b)
        t = (s, p, a)
        x, y, z = t
        return z - x * y


class ListUnpack(nn.Module):
    def forward(self, x):
        xs = [x, x + 1, x * 2]
        a, b, c = xs
        return torch.cat(xs, 0), a + b + c, len(xs)


class ListIndex(nn.Module):
    def forward(self, a, b):
        xs: List[Tensor] = [a, b]
        xs.append(a + b)
        return xs[-1] * xs[0], len(xs)


class IntList(nn.Module):
    def forward(self, x):
        s = x.size()
        return x.view([s[1], s[0] * s[2]]).sum(1)


case("size_int", lambda: (Size0(), [r(3, 5)]))
case("size_list", lambda: (SizeList(), [r(3, 5, 7)]))
case("dim_numel", lambda: (Dim(), [r(3, 5, 7)]))
case("scalar_arith_size", lambda: (ScalarArith(), [r(3, 5)]))
case("scalar_mix", lambda: (ScalarMix(), [r(3, 5)]))
case("int_ops", lambda: (IntOps(), [r(3, 5)]))
case("tensor_item", lambda: (TensorItem(), [r(3, 5)]))
case("num_to_tensor", lambda: (NumToTensor(), [r(3, 5)]))
case("list_output", lambda: (ListOut(), [r(3, 5), r(3, 5)]))
case("tuple_nested_output", lambda: (TupleNested(), [r(2, 3), r(2, 3)]))
case("tuple_unpack", lambda: (TupleUnpack(), [r(3, 5), r(3, 5)]))
case("list_unpack", lambda: (ListUnpack(), [r(2, 3)]))
case("list_append_index", lambda: (ListIndex(), [r(2, 3), r(2, 3)]))
case("int_list_view", lambda: (IntList(), [r(3, 5, 7)]), noncontig=False)


# ---------------------------------------------------------------- control flow
class IfTensor(nn.Module):
    def forward(self, x):
        if bool(x.sum() > 0):
            y = x * 2
        else:
            y = x - 1
        return y


class IfScalar(nn.Module):
    def forward(self, x):
        if x.size(0) > 2:
            return x.relu()
        return x.sigmoid()


class IfTuple(nn.Module):
    def forward(self, x, y):
        if bool(x.mean() > y.mean()):
            a, b = x, y
        else:
            a, b = y, x
        return a - b, b


class LoopConst(nn.Module):
    def forward(self, x):
        # 70 iterations: freezing unrolls short constant loops completely; a
        # long one stays a prim::Loop (unrolled by 8, plus an epilogue loop).
        for i in range(70):
            x = x * 0.5 + i
        return x


class LoopDynamic(nn.Module):
    def forward(self, x):
        acc = torch.zeros_like(x[0])
        for i in range(x.size(0)):
            acc = acc + x[i] * i
        return acc


class While(nn.Module):
    def forward(self, x):
        n = 0
        while bool(x.abs().max() > 0.1) and n < 20:
            x = x * 0.5
            n += 1
        return x, n


class LoopIf(nn.Module):
    def forward(self, x):
        out: List[Tensor] = []
        for i in range(x.size(0)):
            if i % 2 == 0:
                out.append(x + i)
            else:
                out.append(x.relu())
        return torch.stack(out, 0)


class NestedLoop(nn.Module):
    def forward(self, x):
        s = x
        for i in range(x.size(0)):
            for j in range(3):
                s = s + x * (i * 3 + j)
        return s


case("if_tensor_true", lambda: (IfTensor(), [pos(3, 5)]))
case("if_tensor_false", lambda: (IfTensor(), [-pos(3, 5)]))
case("if_scalar", lambda: (IfScalar(), [r(3, 5)]))
case("if_scalar_else", lambda: (IfScalar(), [r(2, 5)]))
case("if_tuple", lambda: (IfTuple(), [r(3, 5), r(3, 5) + 1]))
case("loop_const", lambda: (LoopConst(), [r(3, 5)]))
case("loop_dynamic", lambda: (LoopDynamic(), [r(4, 5)]))
case("while_loop", lambda: (While(), [r(3, 5) * 4]))
case("loop_if_list", lambda: (LoopIf(), [r(3, 5)]))
case("nested_loop", lambda: (NestedLoop(), [r(2, 3)]))


# ---------------------------------------------------------------- in-place ops
# torchvision's inplace ReLU/ReLU6 and `out += identity` leave aten::relu_,
# aten::hardtanh_ and aten::add_ in frozen graphs. On fresh values gosr's
# RemoveMutation makes them functional; the other cases keep the in-place
# kernels (a value mutated in a loop, a view, an int64 tensor).
class InplaceChain(nn.Module):
    def forward(self, x, y):
        out = x * 2.0
        out += y
        out = F.relu(out, inplace=True)
        z = F.hardtanh(out - 1.0, 0.0, 6.0, inplace=True)
        z.mul_(0.5).sub_(0.25)
        return out, z


class InplaceLoop(nn.Module):
    def forward(self, x):
        acc = torch.zeros_like(x)
        for i in range(x.size(0)):
            acc.add_(x[i], alpha=float(i + 1))
            acc.clamp_(-2.0, 2.0)
        return acc


class InplaceView(nn.Module):
    def forward(self, x):
        y = x + 1.0
        v = y[1:]
        v.relu_()
        y[0].fill_(3.0)
        return y


class InplaceInt(nn.Module):
    def forward(self, x):
        y = x * 3
        y.add_(2)
        y.floor_divide_(2)
        return y


class InplaceCopyZero(nn.Module):
    def forward(self, x, b):
        y = torch.zeros_like(x)
        y.copy_(b)
        w = x.clone()
        w.zero_()
        return y + x, w


case("inplace_chain", lambda: (InplaceChain(), [r(3, 5, 7), r(3, 5, 7)]))
case("inplace_broadcast", lambda: (InplaceChain(), [r(3, 5, 7), r(5, 7)]))
case("inplace_loop", lambda: (InplaceLoop(), [r(4, 3, 5)]))
case("inplace_view", lambda: (InplaceView(), [r(4, 6)]))
case("inplace_int64", lambda: (InplaceInt(), [ints(-9, 9, 4, 6)]))
case("inplace_copy_zero", lambda: (InplaceCopyZero(), [r(3, 4), r(4)]))


# More cases live in scripts/op_cases_<area>.py, one file per area of ops;
# each imports case and the helpers above from this module.
def _more():
    import glob
    import importlib
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    for path in sorted(glob.glob(os.path.join(here, "op_cases_*.py"))):
        importlib.import_module(os.path.basename(path)[:-3])


_more()
