"""Spatial ops: 3-d convolution and pooling, transposed convolution,
interpolation (upsample_*), padding. Names start with spatial_."""
from typing import List, Optional

import torch
import torch.nn.functional as F
from torch import nn, Tensor

from op_cases import case, r, pos, ints, Call


# ---------------------------------------------------------------- conv3d
def conv3d(*a, **k):
    return lambda shape: (Call(nn.Conv3d(*a, **k)), [r(*shape)])


# Output rows of 16 or more columns take the gemm's one-row panel packing
# (strided gathers, borders clipped); narrower ones the general packing.
case("spatial_conv3d_stride2_wide", lambda: conv3d(2, 3, (3, 7, 7), stride=(1, 2, 2), padding=(1, 3, 3))((1, 2, 2, 5, 38)))
case("spatial_conv2d_stride2_wide", lambda: (Call(nn.Conv2d(2, 3, 7, stride=2, padding=3)), [r(1, 2, 6, 40)]))
case("spatial_conv2d_stride3_wide", lambda: (Call(nn.Conv2d(2, 3, (3, 5), stride=(1, 3), padding=(1, 2), dilation=(1, 2))), [r(1, 2, 3, 52)]))
case("spatial_conv3d_basic", lambda: conv3d(3, 4, 3)((1, 3, 5, 6, 6)))
case("spatial_conv3d_stem", lambda: conv3d(3, 4, (3, 7, 7), stride=(1, 2, 2), padding=(1, 3, 3), bias=False)((1, 3, 3, 9, 8)))
case("spatial_conv3d_all", lambda: conv3d(4, 6, (2, 3, 2), stride=(2, 1, 2), padding=(1, 2, 0), dilation=(2, 1, 2), groups=2)((1, 4, 7, 6, 7)))
case("spatial_conv3d_1x1x1", lambda: conv3d(6, 3, 1)((2, 6, 3, 4, 5)))
case("spatial_conv3d_1x1x1_stride", lambda: conv3d(6, 3, 1, stride=2, bias=False)((1, 6, 3, 4, 5)))
case("spatial_conv3d_unbatched", lambda: conv3d(2, 3, (1, 3, 3), padding=(0, 1, 1))((2, 3, 5, 4)))
case("spatial_conv3d_same", lambda: conv3d(2, 3, (2, 3, 4), padding="same")((1, 2, 4, 5, 6)))
case("spatial_conv3d_depthwise", lambda: conv3d(3, 6, (3, 1, 1), padding=(1, 0, 0), groups=3)((1, 3, 5, 4, 4)))


class Conv3dFn(nn.Module):
    def forward(self, x, w, b):
        return F.conv3d(x, w, b, (1, 2, 1), 1)


case("spatial_conv3d_weight_input", lambda: (Conv3dFn(), [r(1, 2, 4, 5, 5), r(3, 2, 3, 3, 3), r(3)]))


# ---------------------------------------------------------------- transposed convolution
def convt(cls, *a, **k):
    return lambda shape: (Call(cls(*a, **k)), [r(*shape)])


case("spatial_convt1d_basic", lambda: convt(nn.ConvTranspose1d, 3, 4, 3)((2, 3, 7)))
case("spatial_convt1d_all", lambda: convt(nn.ConvTranspose1d, 4, 6, 3, stride=2, padding=1, output_padding=1, groups=2, dilation=2)((1, 4, 6)))
case("spatial_convt1d_unbatched", lambda: convt(nn.ConvTranspose1d, 2, 3, 2, stride=3, bias=False)((2, 5)))
case("spatial_convt2d_basic", lambda: convt(nn.ConvTranspose2d, 3, 4, 3)((1, 3, 5, 6)))
case("spatial_convt2d_stride", lambda: convt(nn.ConvTranspose2d, 4, 2, 4, stride=2, padding=1)((2, 4, 5, 4)))
case("spatial_convt2d_all", lambda: convt(nn.ConvTranspose2d, 4, 6, (3, 2), stride=(2, 3), padding=(1, 0), output_padding=(1, 2), groups=2, dilation=(1, 2))((1, 4, 5, 4)))
case("spatial_convt2d_1x1", lambda: convt(nn.ConvTranspose2d, 5, 3, 1)((1, 5, 4, 3)))
case("spatial_convt3d", lambda: convt(nn.ConvTranspose3d, 3, 2, (2, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1), output_padding=(0, 1, 0))((1, 3, 3, 4, 5)))


class ConvT2dFn(nn.Module):
    def forward(self, x, w):
        return F.conv_transpose2d(x, w, None, 2, 1, 1)


case("spatial_convt2d_weight_input", lambda: (ConvT2dFn(), [r(1, 3, 4, 5), r(3, 2, 3, 3)]))


class ConvolutionOp(nn.Module):
    """aten::_convolution / aten::convolution as traced graphs emit them."""

    def __init__(self, w, b, stride: List[int], pad: List[int], dil: List[int], transposed: bool, opad: List[int],
                 groups: int, plain: bool):
        super().__init__()
        self.register_buffer("w", w)
        self.register_buffer("b", b)
        self.stride, self.pad, self.dil, self.transposed, self.opad, self.groups, self.plain = \
            stride, pad, dil, transposed, opad, groups, plain

    def forward(self, x):
        if self.plain:
            return torch.convolution(x, self.w, self.b, self.stride, self.pad, self.dil, self.transposed, self.opad,
                                     self.groups)
        return torch._convolution(x, self.w, self.b, self.stride, self.pad, self.dil, self.transposed, self.opad,
                                  self.groups, False, False, True, True)


case("spatial_convolution_transposed1d", lambda: (ConvolutionOp(r(4, 3, 3), r(6), [2], [1], [1], True, [1], 2, False), [r(2, 4, 5)]))
case("spatial_convolution_transposed2d", lambda: (ConvolutionOp(r(3, 2, 3, 2), r(2), [2, 1], [1, 0], [1, 2], True, [1, 0], 1, True), [r(1, 3, 4, 5)]))
case("spatial_convolution_transposed3d", lambda: (ConvolutionOp(r(2, 3, 2, 2, 3), r(3), [1, 2, 2], [0, 1, 1], [1, 1, 1], True, [0, 1, 0], 1, False), [r(1, 2, 3, 4, 3)]))
case("spatial_convolution_3d", lambda: (ConvolutionOp(r(4, 1, 3, 3, 3), r(4), [1, 2, 2], [1, 1, 1], [1, 1, 1], False, [0, 0, 0], 2, False), [r(1, 2, 4, 6, 5)]))
case("spatial_convolution_3d_plain", lambda: (ConvolutionOp(r(3, 2, 1, 3, 3), r(3), [1, 1, 1], [0, 1, 1], [1, 1, 1], False, [0, 0, 0], 1, True), [r(1, 2, 3, 5, 4)]))


# ---------------------------------------------------------------- 3-d pooling
class MaxPool3d(nn.Module):
    def __init__(self, k: List[int], s: List[int], p: List[int], d: List[int], ceil: bool):
        super().__init__()
        self.k, self.s, self.p, self.d, self.ceil = k, s, p, d, ceil

    def forward(self, x):
        return F.max_pool3d(x, self.k, self.s, self.p, self.d, ceil_mode=self.ceil)


class AvgPool3d(nn.Module):
    def __init__(self, k: List[int], s: List[int], p: List[int], ceil: bool, count_pad: bool, div: Optional[int]):
        super().__init__()
        self.k, self.s, self.p, self.ceil, self.count_pad, self.div = k, s, p, ceil, count_pad, div

    def forward(self, x):
        return F.avg_pool3d(x, self.k, self.s, self.p, self.ceil, self.count_pad, self.div)


class Adaptive3d(nn.Module):
    def __init__(self, out: List[int], mx: bool):
        super().__init__()
        self.out, self.mx = out, mx

    def forward(self, x):
        if self.mx:
            return F.adaptive_max_pool3d(x, self.out)
        return F.adaptive_avg_pool3d(x, self.out)


case("spatial_max_pool3d_k2", lambda: (MaxPool3d([2, 2, 2], [2, 2, 2], [0, 0, 0], [1, 1, 1], False), [r(2, 3, 4, 6, 5)]))
case("spatial_max_pool3d_all", lambda: (MaxPool3d([3, 2, 3], [2, 1, 2], [1, 1, 1], [1, 2, 1], True), [r(1, 2, 7, 6, 8)]))
case("spatial_max_pool3d_unbatched", lambda: (MaxPool3d([1, 3, 3], [1, 2, 2], [0, 1, 1], [1, 1, 1], False), [r(2, 3, 7, 6)]))
case("spatial_avg_pool3d_k2", lambda: (AvgPool3d([2, 2, 2], [2, 2, 2], [0, 0, 0], False, True, None), [r(2, 3, 4, 6, 5)]))
case("spatial_avg_pool3d_pad_ceil", lambda: (AvgPool3d([3, 3, 2], [2, 2, 1], [1, 1, 1], True, False, None), [r(1, 2, 6, 7, 5)]))
case("spatial_avg_pool3d_pad_count", lambda: (AvgPool3d([3, 3, 3], [2, 2, 2], [1, 1, 1], False, True, None), [r(1, 2, 5, 6, 5)]))
case("spatial_avg_pool3d_divisor", lambda: (AvgPool3d([2, 3, 2], [1, 2, 2], [1, 1, 0], False, True, 5), [r(1, 2, 4, 6, 5)]))
case("spatial_adaptive_avg_pool3d_1", lambda: (Adaptive3d([1, 1, 1], False), [r(2, 3, 4, 5, 6)]))
case("spatial_adaptive_avg_pool3d_uneven", lambda: (Adaptive3d([2, 3, 2], False), [r(1, 2, 5, 7, 5)]))
case("spatial_adaptive_max_pool3d", lambda: (Adaptive3d([2, 3, 2], True), [r(1, 2, 5, 7, 5)]))


# ---------------------------------------------------------------- interpolation
class Interp(nn.Module):
    """F.interpolate as scripted code calls it (the .vec overloads)."""

    def __init__(self, size: Optional[List[int]], scale: Optional[List[float]], mode: str, align: Optional[bool]):
        super().__init__()
        self.size, self.scale, self.mode, self.align = size, scale, mode, align

    def forward(self, x):
        return F.interpolate(x, self.size, self.scale, self.mode, self.align)


class UpsampleBase(nn.Module):
    """The base overloads (explicit output_size and per-dim scales)."""

    def __init__(self, which: str, size: List[int], align: bool, sh: Optional[float], sw: Optional[float]):
        super().__init__()
        self.which, self.size, self.align, self.sh, self.sw = which, size, align, sh, sw

    def forward(self, x):
        if self.which == "nearest1d":
            return torch.ops.aten.upsample_nearest1d(x, self.size, self.sw)
        if self.which == "nearest2d":
            return torch.ops.aten.upsample_nearest2d(x, self.size, self.sh, self.sw)
        if self.which == "nearest3d":
            return torch.ops.aten.upsample_nearest3d(x, self.size, self.sh, self.sh, self.sw)
        if self.which == "linear1d":
            return torch.ops.aten.upsample_linear1d(x, self.size, self.align, self.sw)
        if self.which == "bicubic2d":
            return torch.ops.aten.upsample_bicubic2d(x, self.size, self.align, self.sh, self.sw)
        if self.which == "trilinear3d":
            return torch.ops.aten.upsample_trilinear3d(x, self.size, self.align, self.sh, self.sh, self.sw)
        return torch.ops.aten.upsample_bilinear2d(x, self.size, self.align, self.sh, self.sw)


def interp(name, shape, size, scale, mode, align=None):
    case("spatial_interp_" + name, lambda: (Interp(size, scale, mode, align), [r(*shape)]))


interp("nearest1d_scale", (1, 2, 5), None, [1.7], "nearest")
interp("nearest1d_size_down", (1, 2, 9), [4], None, "nearest")
interp("nearest2d_scale2", (1, 2, 3, 4), None, [2.0, 2.0], "nearest")
interp("nearest2d_scale_odd", (2, 2, 5, 3), None, [1.5, 0.7], "nearest")
interp("nearest2d_size", (1, 3, 4, 5), [7, 3], None, "nearest")
interp("nearest3d_scale", (1, 2, 3, 4, 3), None, [2.0, 1.5, 1.3], "nearest")
interp("nearest3d_size", (1, 2, 3, 4, 5), [5, 3, 7], None, "nearest")
interp("nearest_exact2d", (1, 2, 5, 4), [7, 3], None, "nearest-exact")
interp("nearest_exact1d_scale", (1, 2, 5), None, [1.7], "nearest-exact")
interp("linear1d_scale", (2, 3, 5), None, [2.5], "linear", False)
interp("linear1d_size_align", (1, 3, 5), [11], None, "linear", True)
interp("linear1d_down", (1, 2, 9), [4], None, "linear", False)
interp("linear1d_same", (1, 2, 3), None, [1.2], "linear", False)
interp("bilinear_size", (1, 3, 5, 4), [9, 11], None, "bilinear", False)
interp("bilinear_size_align", (1, 3, 5, 4), [9, 11], None, "bilinear", True)
interp("bilinear_scale", (2, 2, 4, 5), None, [1.5, 2.25], "bilinear", False)
interp("bilinear_scale_align", (1, 2, 4, 5), None, [2.0, 3.0], "bilinear", True)
interp("bilinear_down", (1, 2, 9, 8), [4, 3], None, "bilinear", False)
interp("bilinear_to1", (1, 2, 4, 5), [1, 1], None, "bilinear", False)
interp("bilinear_to1_align", (1, 2, 4, 5), [1, 2], None, "bilinear", True)
interp("bicubic_size", (1, 2, 5, 4), [9, 7], None, "bicubic", False)
interp("bicubic_size_align", (1, 2, 5, 4), [9, 7], None, "bicubic", True)
interp("bicubic_scale", (1, 2, 4, 3), None, [1.5, 2.0], "bicubic", False)
interp("bicubic_down", (1, 2, 9, 8), [4, 5], None, "bicubic", False)
interp("trilinear_size", (1, 2, 3, 4, 5), [5, 6, 4], None, "trilinear", False)
interp("trilinear_scale_align", (1, 2, 3, 4, 3), None, [2.0, 1.5, 1.7], "trilinear", True)


def upbase(name, which, shape, size, align, sh, sw):
    case("spatial_upsample_" + name, lambda: (UpsampleBase(which, size, align, sh, sw), [r(*shape)]))


upbase("nearest1d", "nearest1d", (1, 2, 5), [8], False, None, 1.7)
upbase("nearest2d", "nearest2d", (1, 2, 4, 5), [6, 9], False, 1.5, None)
upbase("nearest3d", "nearest3d", (1, 2, 3, 4, 5), [5, 6, 9], False, None, 1.9)
upbase("linear1d", "linear1d", (1, 2, 5), [8], False, None, 1.7)
upbase("bilinear2d", "bilinear2d", (1, 2, 4, 5), [6, 9], False, 1.5, 1.9)
upbase("bilinear2d_align", "bilinear2d", (1, 2, 4, 5), [6, 9], True, None, None)
upbase("bicubic2d", "bicubic2d", (1, 2, 4, 5), [6, 9], False, 1.5, None)
upbase("trilinear3d", "trilinear3d", (1, 2, 3, 4, 5), [5, 6, 9], False, 1.5, 2.0)


# ---------------------------------------------------------------- padding
class Pad(nn.Module):
    """F.pad as scripted code calls it: aten::pad(self, pad, mode, value)."""

    def __init__(self, pad: List[int], mode: str, value: Optional[float]):
        super().__init__()
        self.pad, self.mode, self.value = pad, mode, value

    def forward(self, x):
        return F.pad(x, self.pad, self.mode, self.value)


class PadOp(nn.Module):
    """The explicit ops: constant_pad_nd, reflection/replication_pad*d, _pad_circular."""

    def __init__(self, which: str, pad: List[int], value: float):
        super().__init__()
        self.which, self.pad, self.value = which, pad, value

    def forward(self, x):
        if self.which == "constant":
            return torch.constant_pad_nd(x, self.pad, self.value)
        if self.which == "circular":
            return torch.ops.aten._pad_circular(x, self.pad)
        if self.which == "reflect1d":
            return torch.ops.aten.reflection_pad1d(x, self.pad)
        if self.which == "reflect2d":
            return torch.ops.aten.reflection_pad2d(x, self.pad)
        if self.which == "reflect3d":
            return torch.ops.aten.reflection_pad3d(x, self.pad)
        if self.which == "replicate1d":
            return torch.ops.aten.replication_pad1d(x, self.pad)
        if self.which == "replicate2d":
            return torch.ops.aten.replication_pad2d(x, self.pad)
        return torch.ops.aten.replication_pad3d(x, self.pad)


def pad(name, shape, p, mode="constant", value=None, inp=None):
    case("spatial_pad_" + name, lambda: (Pad(p, mode, value), [inp() if inp else r(*shape)]))


pad("constant_swin", (1, 5, 6, 4), [0, 0, 0, 2, 0, 3])
pad("constant_value", (2, 3, 4), [1, 2], "constant", 1.5)
pad("constant_negative", (2, 5, 6), [-1, 2, 1, -2])
pad("constant_all_dims", (2, 3, 4), [1, 0, 0, 1, 2, 1], "constant", -2.0)
pad("constant_int64", (3, 4), [1, 1, 2, 0], "constant", 3.0, lambda: ints(-5, 5, 3, 4))
pad("reflect1d", (2, 3, 6), [2, 3], "reflect")
pad("reflect1d_unbatched", (3, 6), [3, 1], "reflect")
pad("reflect2d", (1, 2, 4, 5), [1, 3, 2, 3], "reflect")
pad("reflect2d_negative", (1, 2, 5, 6), [-1, 2, 2, -2], "reflect")
pad("reflect3d", (1, 2, 3, 4, 5), [1, 2, 2, 1, 1, 2], "reflect")
pad("replicate1d", (2, 3, 5), [3, 4], "replicate")
pad("replicate2d", (1, 2, 4, 3), [2, 1, 3, 2], "replicate")
pad("replicate2d_unbatched", (2, 4, 3), [0, 4, 1, 0], "replicate")
pad("replicate3d", (1, 2, 3, 4, 2), [1, 1, 2, 0, 1, 3], "replicate")
pad("circular1d", (2, 3, 5), [2, 5], "circular")
pad("circular2d", (1, 2, 4, 5), [1, 3, 4, 2], "circular")
pad("circular2d_negative", (1, 2, 4, 5), [-1, 3, 2, -2], "circular")
pad("circular3d", (1, 2, 3, 4, 5), [1, 2, 3, 0, 1, 1], "circular")


def padop(name, which, shape, p, value=0.0):
    case("spatial_padop_" + name, lambda: (PadOp(which, p, value), [r(*shape)]))


padop("constant_nd", "constant", (2, 3, 4, 5), [1, 2, 0, 1, 2, 0, 1, 1], 0.25)
padop("circular", "circular", (1, 2, 4, 5), [2, 1, 1, 3])
padop("reflection1d", "reflect1d", (2, 3, 6), [2, 3])
padop("reflection2d", "reflect2d", (2, 4, 5), [1, 3, 2, 3])
padop("reflection3d", "reflect3d", (1, 2, 3, 4, 5), [2, 1, 1, 2, 2, 2])
padop("replication1d", "replicate1d", (2, 3, 5), [3, 4])
padop("replication2d", "replicate2d", (1, 2, 4, 3), [2, 1, 3, 2])
padop("replication3d", "replicate3d", (2, 3, 4, 2), [1, 1, 2, 0, 1, 3])


# ---------------------------------------------------------------- 1-d pooling (the 3-d kernels)
class Pool1d(nn.Module):
    def __init__(self, which: str, k: int, s: int, p: int, d: int, ceil: bool, count_pad: bool, out: int):
        super().__init__()
        self.which, self.k, self.s, self.p, self.d, self.ceil, self.count_pad, self.out = which, k, s, p, d, ceil, count_pad, out

    def forward(self, x):
        if self.which == "max":
            return F.max_pool1d(x, self.k, self.s, self.p, self.d, self.ceil)
        if self.which == "avg":
            return F.avg_pool1d(x, self.k, self.s, self.p, self.ceil, self.count_pad)
        if self.which == "amax":
            return F.adaptive_max_pool1d(x, self.out)
        return F.adaptive_avg_pool1d(x, self.out)


case("spatial_max_pool1d", lambda: (Pool1d("max", 3, 2, 1, 2, True, True, 0), [r(2, 3, 11)]))
case("spatial_max_pool1d_unbatched", lambda: (Pool1d("max", 2, 2, 0, 1, False, True, 0), [r(3, 9)]))
case("spatial_avg_pool1d", lambda: (Pool1d("avg", 3, 2, 1, 1, True, False, 0), [r(2, 3, 10)]))
case("spatial_adaptive_avg_pool1d", lambda: (Pool1d("aavg", 0, 0, 0, 0, False, False, 4), [r(2, 3, 10)]))
case("spatial_adaptive_max_pool1d", lambda: (Pool1d("amax", 0, 0, 0, 0, False, False, 3), [r(3, 7)]))


# ---------------------------------------------------------------- rearrangements
class Roll(nn.Module):
    shifts: List[int]
    dims: List[int]

    def __init__(self, shifts: List[int], dims: List[int]):
        super().__init__()
        self.shifts, self.dims = shifts, dims

    def forward(self, x):
        return torch.roll(x, self.shifts, self.dims)


case("spatial_roll_swin", lambda: (Roll([-2, -2], [1, 2]), [r(1, 6, 7, 4)]))
case("spatial_roll_one", lambda: (Roll([3], [-1]), [r(2, 3, 5)]))
case("spatial_roll_big_negative", lambda: (Roll([-13, 7], [0, 2]), [r(3, 2, 5)]))
case("spatial_roll_flat", lambda: (Roll([4], []), [r(3, 5)]))
case("spatial_roll_same_dim", lambda: (Roll([2, 1], [1, 1]), [r(2, 5)]))
case("spatial_roll_int64", lambda: (Roll([1, -1], [0, 1]), [ints(-9, 9, 3, 4)]))


class Shuffle(nn.Module):
    def __init__(self, which: str, f: int):
        super().__init__()
        self.which, self.f = which, f

    def forward(self, x):
        if self.which == "pixel":
            return F.pixel_shuffle(x, self.f)
        if self.which == "unpixel":
            return F.pixel_unshuffle(x, self.f)
        return torch.channel_shuffle(x, self.f)


case("spatial_pixel_shuffle", lambda: (Shuffle("pixel", 2), [r(2, 8, 3, 4)]))
case("spatial_pixel_shuffle_3d_r3", lambda: (Shuffle("pixel", 3), [r(9, 2, 3)]))
case("spatial_pixel_shuffle_5d", lambda: (Shuffle("pixel", 2), [r(2, 1, 4, 2, 3)]))
case("spatial_pixel_unshuffle", lambda: (Shuffle("unpixel", 2), [r(2, 3, 4, 6)]))
case("spatial_pixel_unshuffle_r3", lambda: (Shuffle("unpixel", 3), [r(2, 6, 3)]))
case("spatial_channel_shuffle", lambda: (Shuffle("channel", 3), [r(2, 6, 2, 3)]))


# ---------------------------------------------------------------- antialiased interpolation
class InterpAA(nn.Module):
    def __init__(self, size: Optional[List[int]], scale: Optional[List[float]], mode: str, align: bool):
        super().__init__()
        self.size, self.scale, self.mode, self.align = size, scale, mode, align

    def forward(self, x):
        return F.interpolate(x, self.size, self.scale, self.mode, self.align, antialias=True)


def interp_aa(name, shape, size, scale, mode, align=False):
    case("spatial_interp_aa_" + name, lambda: (InterpAA(size, scale, mode, align), [r(*shape)]))


interp_aa("bilinear_down", (1, 2, 17, 23), [5, 7], None, "bilinear")
interp_aa("bilinear_down_align", (1, 2, 17, 23), [5, 7], None, "bilinear", True)
interp_aa("bilinear_up", (2, 2, 4, 5), [7, 9], None, "bilinear")
interp_aa("bilinear_scale", (1, 2, 12, 10), None, [0.4, 0.65], "bilinear")
interp_aa("bilinear_mixed", (1, 2, 6, 20), [11, 3], None, "bilinear")
interp_aa("bicubic_down", (1, 2, 17, 23), [5, 7], None, "bicubic")
interp_aa("bicubic_up", (1, 2, 4, 5), [7, 9], None, "bicubic", True)
interp_aa("bicubic_scale", (1, 2, 12, 10), None, [0.3, 0.5], "bicubic")


# ---------------------------------------------------------------- max pooling with indices, unfold / fold
class MaxPoolIdx(nn.Module):
    def __init__(self, dims: int, k: List[int], s: List[int], p: List[int], d: List[int], ceil: bool):
        super().__init__()
        self.dims, self.k, self.s, self.p, self.d, self.ceil = dims, k, s, p, d, ceil

    def forward(self, x):
        if self.dims == 1:
            return F.max_pool1d_with_indices(x, self.k, self.s, self.p, self.d, self.ceil, True)
        if self.dims == 2:
            return F.max_pool2d_with_indices(x, self.k, self.s, self.p, self.d, self.ceil, True)
        return F.max_pool3d_with_indices(x, self.k, self.s, self.p, self.d, self.ceil, True)


def with_ties(*s):
    return lambda: torch.randint(-3, 3, s).float()


case("spatial_max_pool1d_indices", lambda: (MaxPoolIdx(1, [3], [2], [1], [1], True), [with_ties(2, 3, 11)()]))
case("spatial_max_pool2d_indices", lambda: (MaxPoolIdx(2, [3, 2], [2, 2], [1, 0], [1, 2], False), [with_ties(2, 3, 7, 9)()]))
case("spatial_max_pool2d_indices_unbatched", lambda: (MaxPoolIdx(2, [2, 2], [2, 2], [0, 0], [1, 1], True), [r(3, 7, 5)]))
case("spatial_max_pool3d_indices", lambda: (MaxPoolIdx(3, [2, 3, 2], [2, 2, 1], [1, 1, 0], [1, 1, 2], False), [with_ties(1, 2, 5, 6, 7)()]))


class Unfold(nn.Module):
    def __init__(self, k: List[int], d: List[int], p: List[int], s: List[int]):
        super().__init__()
        self.k, self.d, self.p, self.s = k, d, p, s

    def forward(self, x):
        return F.unfold(x, self.k, self.d, self.p, self.s)


class Fold(nn.Module):
    def __init__(self, out: List[int], k: List[int], d: List[int], p: List[int], s: List[int]):
        super().__init__()
        self.out, self.k, self.d, self.p, self.s = out, k, d, p, s

    def forward(self, x):
        return F.fold(x, self.out, self.k, self.d, self.p, self.s)


case("spatial_unfold", lambda: (Unfold([3, 3], [1, 1], [1, 1], [1, 1]), [r(2, 3, 5, 6)]))
case("spatial_unfold_all", lambda: (Unfold([2, 3], [2, 1], [1, 2], [2, 3]), [r(1, 2, 7, 9)]))
case("spatial_unfold_unbatched", lambda: (Unfold([2, 2], [1, 1], [0, 0], [2, 2]), [r(3, 4, 6)]))
case("spatial_fold", lambda: (Fold([5, 6], [3, 3], [1, 1], [1, 1], [1, 1]), [r(2, 27, 30)]))
case("spatial_fold_all", lambda: (Fold([7, 9], [2, 3], [2, 1], [1, 2], [2, 3]), [r(1, 12, 16)]))
case("spatial_fold_unbatched", lambda: (Fold([4, 6], [2, 2], [1, 1], [0, 0], [2, 2]), [r(12, 6)]))
