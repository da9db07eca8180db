"""Attention ops: baddbmm/addbmm/addmv, _native_multi_head_attention,
_transformer_encoder_layer_fwd, _masked_softmax, _transform_bias_rescale_qkv
(PyTorch 1.13's fused transformer kernels). Prefix attn_."""
from typing import Optional

import torch
from torch import nn, Tensor

from op_cases import case, r


class Baddbmm(nn.Module):
    def __init__(self, beta: float, alpha: float):
        super().__init__()
        self.beta = beta
        self.alpha = alpha

    def forward(self, s, a, b):
        return torch.baddbmm(s, a, b, beta=self.beta, alpha=self.alpha)


class BaddbmmInt(nn.Module):
    """Integer beta/alpha, as traced nn.MultiheadAttention calls it."""

    def forward(self, s, a, b):
        return torch.baddbmm(s, a, b, beta=1, alpha=1)


class BaddbmmInplace(nn.Module):
    def forward(self, s, a, b):
        y = s * 1.0
        y.baddbmm_(a, b, beta=0.5, alpha=-1.5)
        z = s[0] * 1.0
        z.addbmm_(a, b, alpha=0.25)
        return y, z


class Addbmm(nn.Module):
    def __init__(self, beta: float, alpha: float):
        super().__init__()
        self.beta = beta
        self.alpha = alpha

    def forward(self, s, a, b):
        return torch.addbmm(s, a, b, beta=self.beta, alpha=self.alpha)


class Addmv(nn.Module):
    def __init__(self, beta: float, alpha: float):
        super().__init__()
        self.beta = beta
        self.alpha = alpha

    def forward(self, s, m, v):
        return torch.addmv(s, m, v, beta=self.beta, alpha=self.alpha)


case("attn_baddbmm", lambda: (Baddbmm(0.5, 2.0), [r(3, 4, 5), r(3, 4, 6), r(3, 6, 5)]))
case("attn_baddbmm_bcast", lambda: (Baddbmm(1.0, 1.0), [r(1, 4, 5), r(3, 4, 6), r(3, 6, 5)]))
case("attn_baddbmm_bcast2d", lambda: (Baddbmm(-2.0, 0.5), [r(4, 1), r(2, 4, 7), r(2, 7, 5)]))
case("attn_baddbmm_beta0", lambda: (Baddbmm(0.0, 3.0), [r(3, 4, 5), r(3, 4, 2), r(3, 2, 5)]))
case("attn_baddbmm_int", lambda: (BaddbmmInt(), [r(6, 5, 7), r(6, 5, 8), r(6, 8, 7)]))
case("attn_baddbmm_big", lambda: (Baddbmm(0.25, 1.0), [r(2, 12, 14), r(2, 12, 10), r(2, 10, 14)]))
case("attn_baddbmm_inplace", lambda: (BaddbmmInplace(), [r(3, 4, 5), r(3, 4, 6), r(3, 6, 5)]))
case("attn_addbmm", lambda: (Addbmm(0.5, 2.0), [r(4, 5), r(3, 4, 6), r(3, 6, 5)]))
case("attn_addbmm_bcast", lambda: (Addbmm(1.0, -1.0), [r(5), r(2, 4, 3), r(2, 3, 5)]))
case("attn_addmv", lambda: (Addmv(0.5, 2.0), [r(6), r(6, 9), r(9)]))
case("attn_addmv_bcast", lambda: (Addmv(0.0, 1.0), [r(1), r(7, 3), r(3)]))


class MHA(nn.Module):
    """torch._native_multi_head_attention with constant weights (packed at
    preparation), self-attention (query is key is value)."""

    def __init__(self, d: int, h: int, need_weights: bool, average: bool, mask_type: Optional[int]):
        super().__init__()
        self.d = d
        self.h = h
        self.need_weights = need_weights
        self.average = average
        self.mask_type = mask_type
        self.register_buffer("w", torch.randn(3 * d, d) * 0.3)
        self.register_buffer("b", torch.randn(3 * d) * 0.1)
        self.register_buffer("pw", torch.randn(d, d) * 0.3)
        self.register_buffer("pb", torch.randn(d) * 0.1)

    def forward(self, x):
        return torch._native_multi_head_attention(x, x, x, self.d, self.h, self.w, self.b, self.pw, self.pb, None,
                                                  self.need_weights, self.average, self.mask_type)


class MHAMasked(MHA):
    def forward(self, x, mask):
        return torch._native_multi_head_attention(x, x, x, self.d, self.h, self.w, self.b, self.pw, self.pb, mask,
                                                  self.need_weights, self.average, self.mask_type)


class MHANoWeights(MHA):
    """need_weights=False: the weights are undefined (None in Python),
    which a fixture cannot hold, so only the output is returned."""

    def __init__(self, d: int, h: int, mask_type: Optional[int]):
        super().__init__(d, h, False, True, mask_type)

    def forward(self, x, mask):
        return torch._native_multi_head_attention(x, x, x, self.d, self.h, self.w, self.b, self.pw, self.pb, mask,
                                                  False, True, self.mask_type)[0]


class MHACross(nn.Module):
    """Query, key and value distinct, weights as inputs."""

    def __init__(self, d: int, h: int, kv_same: bool):
        super().__init__()
        self.d = d
        self.h = h
        self.kv_same = kv_same

    def forward(self, q, k, v, w, b, pw, pb):
        if self.kv_same:
            v = k
        return torch._native_multi_head_attention(q, k, v, self.d, self.h, w, b, pw, pb, None, True, False)


def _pad(b, t):
    pad = torch.zeros(b, t, dtype=torch.bool)
    pad[1, -2:] = True
    pad[0, 1] = True
    return pad


case("attn_mha_self", lambda: (MHA(8, 2, True, True, None), [r(2, 5, 8)]))
case("attn_mha_self_noavg", lambda: (MHA(8, 4, True, False, None), [r(3, 4, 8)]))
case("attn_mha_noweights", lambda: (MHANoWeights(12, 2, 1), [r(2, 7, 12), torch.zeros(2, 7, dtype=torch.bool)]))
case("attn_mha_pad", lambda: (MHAMasked(8, 2, True, True, 1), [r(2, 5, 8), _pad(2, 5)]))
case("attn_mha_pad_noweights", lambda: (MHANoWeights(8, 2, 1), [r(2, 5, 8), _pad(2, 5)]))
case("attn_mha_pad_float", lambda: (MHAMasked(8, 2, True, False, 1), [r(2, 5, 8), _pad(2, 5).float()]))
case("attn_mha_mask4d", lambda: (MHAMasked(8, 2, True, False, 2),
                                 [r(2, 5, 8), (torch.rand(2, 2, 5, 5) > 0.6) & ~torch.eye(5, dtype=torch.bool)]))
case("attn_mha_mask4d_type1", lambda: (MHAMasked(8, 2, True, True, 1),
                                       [r(2, 5, 8), (torch.rand(2, 2, 5, 5) > 0.6) & ~torch.eye(5, dtype=torch.bool)]))
case("attn_mha_cross", lambda: (MHACross(8, 2, False),
                                [r(2, 5, 8), r(2, 5, 8), r(2, 5, 8), r(24, 8), r(24), r(8, 8), r(8)]))
case("attn_mha_kv", lambda: (MHACross(8, 4, True),
                             [r(2, 5, 8), r(2, 5, 8), r(2, 5, 8), r(24, 8), r(24), r(8, 8), r(8)]))
case("attn_mha_proj_out6", lambda: (MHACross(8, 2, True),
                                   [r(2, 5, 8), r(2, 5, 8), r(2, 5, 8), r(24, 8), r(24), r(6, 8), r(6)]))
case("attn_mha_big", lambda: (MHA(16, 2, True, True, None), [r(2, 12, 16)]))


class Encoder(nn.Module):
    """torch._transformer_encoder_layer_fwd with constant weights."""

    def __init__(self, d: int, h: int, f: int, use_gelu: bool, norm_first: bool, mask_type: Optional[int]):
        super().__init__()
        self.d = d
        self.h = h
        self.use_gelu = use_gelu
        self.norm_first = norm_first
        self.mask_type = mask_type
        for name, shape, s in [("w", (3 * d, d), 0.3), ("b", (3 * d,), 0.1), ("pw", (d, d), 0.3), ("pb", (d,), 0.1),
                               ("n1w", (d,), 1.0), ("n1b", (d,), 1.0), ("n2w", (d,), 1.0), ("n2b", (d,), 1.0),
                               ("f1w", (f, d), 0.3), ("f1b", (f,), 0.1), ("f2w", (d, f), 0.3), ("f2b", (d,), 0.1)]:
            self.register_buffer(name, torch.randn(*shape) * s)

    def forward(self, x):
        return torch._transformer_encoder_layer_fwd(
            x, self.d, self.h, self.w, self.b, self.pw, self.pb, self.use_gelu, self.norm_first, 1e-5,
            self.n1w, self.n1b, self.n2w, self.n2b, self.f1w, self.f1b, self.f2w, self.f2b, None, self.mask_type)


class EncoderMasked(Encoder):
    def forward(self, x, mask):
        return torch._transformer_encoder_layer_fwd(
            x, self.d, self.h, self.w, self.b, self.pw, self.pb, self.use_gelu, self.norm_first, 1e-5,
            self.n1w, self.n1b, self.n2w, self.n2b, self.f1w, self.f1b, self.f2w, self.f2b, mask, self.mask_type)


case("attn_encoder_relu", lambda: (Encoder(8, 2, 16, False, False, None), [r(2, 5, 8)]))
case("attn_encoder_gelu", lambda: (Encoder(8, 2, 16, True, False, None), [r(2, 5, 8)]))
case("attn_encoder_relu_normfirst", lambda: (Encoder(8, 2, 16, False, True, None), [r(2, 5, 8)]))
case("attn_encoder_gelu_normfirst", lambda: (Encoder(8, 4, 12, True, True, None), [r(3, 4, 8)]))
case("attn_encoder_pad", lambda: (EncoderMasked(8, 2, 16, False, False, 1), [r(2, 5, 8), _pad(2, 5)]))
case("attn_encoder_pad_normfirst", lambda: (EncoderMasked(8, 2, 16, True, True, 1), [r(2, 5, 8), _pad(2, 5)]))
case("attn_encoder_big", lambda: (Encoder(16, 2, 24, True, True, None), [r(2, 12, 16)]))


class MaskedSoftmax(nn.Module):
    def __init__(self, dim: Optional[int], mask_type: int):
        super().__init__()
        self.dim = dim
        self.mask_type = mask_type

    def forward(self, x, m):
        return torch._masked_softmax(x, m, self.dim, self.mask_type)


def _mask(*s):
    m = torch.rand(*s) > 0.6
    m[..., 0] = False  # no row masked entirely (those give NaN)
    return m


def _mask_dim1(*s):
    m = torch.rand(*s) > 0.6
    m[:, 0] = False
    return m


case("attn_masked_softmax", lambda: (MaskedSoftmax(3, 1), [r(2, 3, 4, 5), _mask(2, 3, 4, 5)]))
case("attn_masked_softmax_nodim", lambda: (MaskedSoftmax(None, 2), [r(2, 3, 6), _mask(2, 3, 6)]))
case("attn_masked_softmax_dim1", lambda: (MaskedSoftmax(1, 2), [r(2, 4, 3), _mask_dim1(2, 4, 3)]))


class TransformBias(nn.Module):
    def __init__(self, h: int):
        super().__init__()
        self.h = h

    def forward(self, qkv, b):
        return torch._transform_bias_rescale_qkv(qkv, b, self.h)


case("attn_transform_bias_rescale_qkv", lambda: (TransformBias(2), [r(2, 4, 18), r(18)]))


class MaskedFillBroadcastSelf(nn.Module):
    """masked_fill broadcasting self to the mask's shape, as traced
    nn.MultiheadAttention merges a float attn_mask with a padding mask."""

    def forward(self, x, m):
        return x.masked_fill(m, float("-inf"))


case("attn_masked_fill_bcast_self", lambda: (MaskedFillBroadcastSelf(), [r(1, 4, 5), torch.rand(6, 1, 5) > 0.5]))


class SDPA(nn.Module):
    """aten::_scaled_dot_product_attention (F._scaled_dot_product_attention)."""

    def __init__(self, causal: bool):
        super().__init__()
        self.causal = causal

    def forward(self, q, k, v):
        return torch.ops.aten._scaled_dot_product_attention(q, k, v, None, 0.0, True, self.causal)


class SDPAMask(nn.Module):
    def forward(self, q, k, v, m):
        return torch.ops.aten._scaled_dot_product_attention(q, k, v, m, 0.0, False, False)


def _keep(*s):
    m = torch.rand(*s) > 0.4
    m[..., 0] = True
    return m


case("attn_sdpa", lambda: (SDPA(False), [r(2, 3, 4, 5), r(2, 3, 6, 5), r(2, 3, 6, 7)]))
case("attn_sdpa_causal", lambda: (SDPA(True), [r(2, 5, 4), r(2, 5, 4), r(2, 5, 3)]))
case("attn_sdpa_bool_mask", lambda: (SDPAMask(), [r(2, 3, 4, 5), r(2, 3, 6, 5), r(2, 3, 6, 7), _keep(4, 6)]))
case("attn_sdpa_float_mask", lambda: (SDPAMask(), [r(2, 4, 5), r(2, 6, 5), r(2, 6, 7), r(2, 1, 6)]))
