#!/usr/bin/python3
"""Writes graph/testdata/*.ir: graphs exactly as PyTorch 1.13 prints them
(`print(scripted.graph)`), for the parser/printer round-trip tests (the
schema list is graph/schemas/schemas.txt, written by graph/schemas/gen.py).

Run from the repository root: /usr/bin/python3 scripts/make_ir_samples.py
"""
import os
from typing import Dict, List, Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

OUT = os.path.join(os.path.dirname(__file__), "..", "graph", "testdata")


def frozen(m):
    return torch.jit.freeze(torch.jit.script(m).eval())


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)
        self.bn = nn.BatchNorm1d(3)
        self.ln = nn.LayerNorm(3)

    def forward(self, x, n: int):
        y = self.ln(self.bn(self.fc(x)))
        for i in range(n):
            y = y * 2.0
        z = y.relu()
        return z, [y, y], n + 1


class Conv(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(8, 4, 1, stride=2, bias=False)
        self.pool = nn.AdaptiveAvgPool2d((1, 1))

    def forward(self, x):
        x = F.relu(self.bn(self.c1(x)))
        x = F.max_pool2d(x, 2)
        x = self.c2(x)
        return torch.flatten(self.pool(x), 1)


class Emb(nn.Module):
    def __init__(self):
        super().__init__()
        self.e = nn.Embedding(10, 4)
        self.eb = nn.EmbeddingBag(10, 4, mode="sum")

    def forward(self, idx, offsets):
        return self.e(idx).sum(1) + self.eb(idx.flatten(), offsets)


class Control(nn.Module):
    def forward(self, x, flag: bool, k: int):
        if flag:
            y = x + 1
        else:
            y = x - 1.5e-8
        acc = []
        i = 0
        while i < k and bool(y.sum() > 0):
            acc.append(y * i)
            i += 1
        if len(acc) == 0:
            return y
        return torch.cat(acc, 0)


class Containers(nn.Module):
    def forward(self, x, d: Dict[str, torch.Tensor], names: List[str], opt: Optional[torch.Tensor] = None):
        out: Dict[str, torch.Tensor] = {}
        for k, v in d.items():
            out[k + "_x"] = v * x
        if opt is not None:
            out["opt"] = opt
        t: Tuple[int, float, str] = (len(names), 2.5, "a\"b\\c\n")
        a, b = x.chunk(2)
        out[t[2]] = a + b
        return out, t, names[0] if len(names) > 0 else "none"


class Consts(nn.Module):
    def forward(self, x):
        y = x.reshape([-1, 2, 3]).permute(0, 2, 1)
        y = torch.clamp(y, min=float("-inf"), max=float("inf"))
        y = y.to(torch.float64).to(x.device)
        z = torch.zeros([2, 3], dtype=torch.long, device=torch.device("cpu"))
        w = y.sum([1, 2], keepdim=True) * 1e20 + 3.0e-300
        m = y != y
        return y.transpose(1, 2).contiguous(), z, w, m, x.size(0) // 2, y.mean() > 0.5, torch.tensor([1.0, 2.0])


class Fork(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        fut = torch.jit.fork(self.fc, x)
        y = torch.relu(x)
        return torch.jit.wait(fut) + y


class ForkLoop(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.fc2 = nn.Linear(4, 4)

    def forward(self, x, n: int):
        futs = torch.jit.annotate(List[torch.jit.Future[torch.Tensor]], [])
        for i in range(n):
            futs.append(torch.jit.fork(self.fc, x + i))
        f2 = torch.jit.fork(self.fc2, x)
        out = torch.jit.wait(f2)
        for f in futs:
            out = out + torch.jit.wait(f)
        return out


class Sub(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.scale = 2.0

    def forward(self, x):
        return self.fc(x) * self.scale


class NonFrozen(nn.Module):
    def __init__(self):
        super().__init__()
        self.sub = Sub()
        self.layers = nn.ModuleList([nn.Linear(4, 4), nn.ReLU()])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.sub(x)
        for l in self.layers:
            x = l(x)
        return self.helper(x)

    @torch.jit.export
    def helper(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.sub.fc.bias


class Attn(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(8, 8)
        self.k = nn.Linear(8, 8)
        self.v = nn.Linear(8, 8)
        self.ln = nn.LayerNorm(8, eps=1e-6)

    def forward(self, x, mask: Optional[torch.Tensor]):
        q, k, v = self.q(x), self.k(x), self.v(x)
        s = torch.matmul(q, k.transpose(-2, -1)) / 2.8284271247461903
        if mask is not None:
            s = s.masked_fill(mask, float("-inf"))
        p = F.softmax(s, dim=-1)
        return self.ln(torch.matmul(p, v) + x)


class Gru(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.GRUCell(3, 5)
        self.drop = nn.Dropout(0.1)

    def forward(self, xs: List[torch.Tensor]):
        h = torch.zeros(1, 5)
        hs = []
        for x in xs:
            h = self.cell(x, h)
            hs.append(self.drop(h))
        return torch.stack(hs), h


class SmallConsts(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("b", torch.tensor([1.5, -2.25, 3.0]))
        self.register_buffer("li", torch.tensor([[1, 2], [3, 4]]))
        self.register_buffer("flag", torch.tensor([True, False]))
        self.register_buffer("s", torch.tensor(0.5))
        self.register_buffer("big", torch.arange(30.0).reshape(5, 6))
        self.register_buffer("cube", torch.arange(8.0).reshape(2, 2, 2) - 3.5)
        self.register_buffer("wide", torch.tensor([1e6, 1.5, -2e-5]))

    def forward(self, x):
        return x * self.b + self.s, self.li.sum(), self.flag.any(), self.big.t(), self.cube + self.wide


def fn_scalar(a: int, b: float, s: str) -> Tuple[int, float, str, bool]:
    c = a * 3 + int(b)
    if s.startswith("x") or c > 10:
        s = s + "!" + str(c)
    return c, b / 2.0, s.upper(), not (a == c)


def fn_list(xs: List[int], ys: List[float]) -> List[int]:
    out = [x * 2 for x in xs]
    out.extend([len(ys), -1])
    out.sort()
    return out[1:-1]


def fn_optional(x: torch.Tensor, y: Optional[int], dev: torch.device) -> torch.Tensor:
    if y is None:
        y = 3
    return x.to(dev).unsqueeze(y % 2).expand(-1, 2, -1).clone(memory_format=torch.contiguous_format)


def fn_raise(x: torch.Tensor) -> torch.Tensor:
    if x.dim() != 2:
        raise ValueError("expected 2D input (got {}D)".format(x.dim()))
    assert x.size(0) > 0, "empty"
    return x


def fn_dict(d: Dict[int, List[str]]) -> Dict[str, int]:
    r = torch.jit.annotate(Dict[str, int], {})
    for k in d.keys():
        for s in d[k]:
            r[s] = k
    return r


def fn_tensor_ops(x: torch.Tensor, idx: torch.Tensor) -> List[torch.Tensor]:
    a = x[0, 1:3]
    b = x[idx]
    c = torch.where(x > 0, x, torch.zeros_like(x))
    d = x.new_full([2, 2], 7)
    e, f = torch.max(x, dim=1)
    return [a, b, c, d, e, f.float(), torch.ops.aten.gelu(x)]


def fn_empty(x: torch.Tensor):
    b: List[Optional[int]] = []
    c: List[Tuple[int, str]] = []
    d: List[List[float]] = []
    e: Dict[str, int] = {}
    return b, c, d, e, x


def write(name, text):
    with open(os.path.join(OUT, name + ".ir"), "w") as f:
        f.write(text)


def main():
    torch.manual_seed(0)
    os.makedirs(OUT, exist_ok=True)
    mods = {
        "mlp": Mlp(), "conv": Conv(), "emb": Emb(), "control": Control(),
        "containers": Containers(), "consts": Consts(), "fork": Fork(),
        "attn": Attn(), "fork_loop": ForkLoop(), "gru": Gru(), "small_consts": SmallConsts(),
    }
    for name, m in mods.items():
        write(name + "_frozen", str(frozen(m).graph))
        write(name + "_scripted", str(torch.jit.script(m).graph))
    s = torch.jit.script(NonFrozen())
    write("nonfrozen_forward", str(s.graph))
    write("nonfrozen_helper", str(s.helper.graph))
    write("nonfrozen_sub", str(s.sub.graph))
    for f in [fn_scalar, fn_list, fn_optional, fn_raise, fn_dict, fn_tensor_ops]:
        write(f.__name__, str(torch.jit.script(f).graph))

    # Constants of many kinds, as freezing and constant propagation insert them.
    g = torch.jit.script(fn_raise).graph
    for c in [[1.5, 2.0], (1, "a", 2.5), [True, False], torch.device("cuda", 1), ["x", "y"],
              float("nan"), -float("nan"), 1e10, 123456789.5, -0.0, 1e15, 1e-4, 1e-5, -3.0,
              torch.randn(3, 2, 2), torch.tensor([1e6, 1.5]), torch.tensor([[1e-6, 1.5], [2, 3]]),
              torch.tensor(3.14159265), "caf\u00e9 \x01\x7f\t'", -9223372036854775808, (7,),
              torch.tensor([1, 2], dtype=torch.int32), torch.tensor([True, False, True]),
              torch.tensor([[[1.0, -2.0]]], dtype=torch.float64)]:
        g.insertConstant(c)
    write("constants_misc", str(g))

    # Empty containers print as annotate(List[...], []) once constant-propagated.
    s = torch.jit.script(fn_empty)
    torch._C._jit_pass_constant_propagation(s.graph)
    write("fn_empty_consts", str(s.graph))


if __name__ == "__main__":
    main()
