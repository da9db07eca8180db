"""Detection ops: torchvision's nms and roi_align (custom ops), sort,
argsort and topk as torchvision's detection models call them. Names
start with det_."""
import torch
from typing import Dict, List

from torch import nn, Tensor

import torchvision  # noqa: F401 - registers torchvision::nms, roi_align

from op_cases import case, r, pos, ints


def boxes(n, size=20.0):
    """(n, 4) x1y1x2y2 boxes in a size x size field, overlapping often."""
    xy = torch.rand(n, 2) * size
    wh = torch.rand(n, 2) * size / 2 + 0.5
    return torch.cat([xy, xy + wh], 1)


class NMS(nn.Module):
    def __init__(self, thr: float):
        super().__init__()
        self.thr = thr

    def forward(self, b: Tensor, s: Tensor):
        return torch.ops.torchvision.nms(b, s, self.thr)


class BatchedNMS(nn.Module):
    """torchvision.ops.batched_nms as the detection heads call it (the
    coordinate trick: boxes offset per class by max coordinate + 1)."""

    def forward(self, b: Tensor, s: Tensor, idx: Tensor):
        return torchvision.ops.batched_nms(b, s, idx, 0.5)


case("det_nms", lambda: (NMS(0.5), [boxes(60), torch.rand(60)]), noncontig=False)
case("det_nms_thr0", lambda: (NMS(0.0), [boxes(40), torch.rand(40)]), noncontig=False)
# Tied scores: torchvision sorts them stably (lower index first).
case("det_nms_ties", lambda: (NMS(0.3), [boxes(50), torch.randint(0, 4, (50,)).float() / 4]), noncontig=False)
case("det_nms_empty", lambda: (NMS(0.5), [torch.zeros(0, 4), torch.zeros(0)]), noncontig=False)
case("det_batched_nms", lambda: (BatchedNMS(), [boxes(80), torch.rand(80), torch.randint(0, 3, (80,))]),
     noncontig=False)


class RoIAlign(nn.Module):
    def __init__(self, scale: float, ph: int, pw: int, sampling: int, aligned: bool):
        super().__init__()
        self.scale, self.ph, self.pw, self.sampling, self.aligned = scale, ph, pw, sampling, aligned

    def forward(self, x: Tensor, rois: Tensor):
        return torch.ops.torchvision.roi_align(x, rois, self.scale, self.ph, self.pw, self.sampling, self.aligned)


def rois(k, batch, size):
    """(k, 5) rois (batch index, x1y1x2y2), some past the map's border and
    some smaller than a bin."""
    b = boxes(k, size * 1.3) - size * 0.15
    b[0] = torch.tensor([1.0, 1.0, 1.3, 1.2])  # tiny
    return torch.cat([torch.randint(0, batch, (k, 1)).float(), b], 1)


for name, args in {
    "det_roi_align": (0.5, 3, 3, 2, False),
    "det_roi_align_aligned": (0.5, 4, 3, 2, True),
    "det_roi_align_adaptive": (0.25, 7, 7, -1, False),
    "det_roi_align_adaptive_aligned": (1.0, 2, 5, 0, True),
}.items():
    case(name, lambda a=args: (RoIAlign(*a), [r(2, 3, 10, 12), rois(9, 2, 24 * a[0] / 0.5)]))


class Sort(nn.Module):
    def forward(self, x: Tensor):
        a, ia = torch.sort(x)
        b, ib = torch.sort(x, 0, True)
        c, ic = torch.sort(x, dim=-1, descending=True, stable=True)
        return a, ia, b, ib, c, ic, torch.argsort(x, 1), torch.argsort(x, dim=0, descending=True)


class TopK(nn.Module):
    def forward(self, x: Tensor):
        a, ia = torch.topk(x, 3)
        b, ib = torch.topk(x, 2, 0, largest=False)
        c, ic = x.flatten().topk(5)
        return a, ia, b, ib, c, ic


case("det_sort", lambda: (Sort(), [r(5, 7)]))
case("det_sort_int", lambda: (Sort(), [ints(-20, 20, 4, 9)]))
case("det_sort_ties", lambda: (Sort(), [ints(0, 3, 6, 5).float()]))
case("det_sort_nan", lambda: (Sort(), [torch.tensor([[1.0, float("nan"), -2.0, 0.5], [float("nan"), 3.0, 3.0, -1.0]])]),
     noncontig=False)
case("det_topk", lambda: (TopK(), [r(6, 8)]))


# ---------------------------------------------------------------- the rest of what detection models call
class Nonzero(nn.Module):
    def forward(self, x: Tensor):
        m = x > 0.2
        w = torch.where(m)
        return torch.nonzero(m), w[0], w[1], x.any(), x.all(), (x > -3).all(), m.any(1), m.all(0, keepdim=True)


class Unique(nn.Module):
    def forward(self, x: Tensor):
        u, inv, cnt = torch.unique(x, sorted=True, return_inverse=True, return_counts=True)
        return u, inv, cnt, torch.unique(x.float())


class Mesh(nn.Module):
    def forward(self, a: Tensor, b: Tensor):
        y, x = torch.meshgrid([a, b], indexing="ij")
        p, q = torch.meshgrid([a, b], indexing="xy")
        return y * 1, x * 1, p * 1, q * 1


class IndexPut(nn.Module):
    def forward(self, r: Tensor, idx: Tensor, v: Tensor, mask: Tensor):
        res = torch.zeros(6, 3, 2)
        res[idx] = v
        lab = torch.ones(6, dtype=torch.int64)
        lab[mask] = -1
        lab[idx[:1]] = idx[0] * 0 + 7
        return res, lab


class Repeat(nn.Module):
    def forward(self, x: Tensor):
        return x.repeat(2, 3), x.repeat(2, 1, 2), x[0].repeat(3)


class Normalize(nn.Module):
    def forward(self, x: Tensor):
        return torch.nn.functional.normalize(x), x.norm(2.0, -1, True), x.norm(1.0, 0)


class Lists(nn.Module):
    def forward(self, x: Tensor, n: Tensor):
        k = int(n)
        a = [k, 2] * 3
        b = 2 * [x, x + 1]
        c = [x]
        c.insert(0, x * 2)
        c.insert(-1, x * 3)
        c.extend(b)
        t = torch.as_tensor([1.5, float(k)], dtype=torch.float32)
        return torch.tensor(a), torch.stack(c), t, torch.as_tensor(k)


case("det_nonzero", lambda: (Nonzero(), [r(4, 5)]))
case("det_unique", lambda: (Unique(), [ints(0, 5, 12)]), noncontig=False)
case("det_meshgrid", lambda: (Mesh(), [r(3), r(4)]), noncontig=False)
case("det_index_put", lambda: (IndexPut(), [r(6), torch.tensor([4, 1, -1]), r(3, 1, 2), torch.tensor([True, False, True, False, False, True])]),
     noncontig=False)
case("det_repeat", lambda: (Repeat(), [r(2, 3)]))
case("det_norm", lambda: (Normalize(), [r(2, 4, 3, 3)]))
case("det_lists", lambda: (Lists(), [r(2, 3), torch.tensor(3)]), noncontig=False)


class SplitIntoDict(nn.Module):
    """RetinaNet's split of its head outputs: in a loop, a split's views
    copied by list() into a dict, read after the loop (the split's tensor
    objects must not be rebuilt under the stored list)."""

    def forward(self, a: Tensor, b: Tensor):
        h = {"cls_logits": a * 1, "bbox_regression": b * 1}
        sh: Dict[str, List[Tensor]] = {}
        for k in h:
            sh[k] = list(h[k].split([2, 1], dim=1))
        g = {"x": a, "y": b}
        sg: Dict[str, List[Tensor]] = {}
        for k in g:
            sg[k] = list(g[k].split([1, 2], dim=1))
        return sh["cls_logits"][0], sh["bbox_regression"][1], sg["x"][1], sg["y"][0]


case("det_split_into_dict", lambda: (SplitIntoDict(), [r(1, 3, 5), r(1, 3, 2)]))
