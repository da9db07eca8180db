"""Whole-model fixtures: builtin/models/<name>/model.ir + model.safetensors
(layout as in fixture_lib.py)."""
import os
from typing import List, Tuple

import torch
import torch.nn.functional as F
from torch import nn, Tensor

import fixture_lib


class MLP(nn.Module):
    def __init__(self, width=64, layers=3):
        super().__init__()
        self.layers = nn.Sequential(*[m for _ in range(layers) for m in (nn.Linear(width, width), nn.ReLU())])

    def forward(self, x):
        return self.layers(x)


class DeepAndWide(nn.Module):
    """PyTorch's benchmarks/static_runtime/deep_wide_pt.py."""

    def __init__(self, num_features=50):
        super().__init__()
        self.mu = nn.Parameter(torch.randn(1, num_features))
        self.sigma = nn.Parameter(torch.randn(1, num_features))
        self.fc_w = nn.Parameter(torch.randn(1, num_features + 1))
        self.fc_b = nn.Parameter(torch.randn(1))

    def forward(self, ad_emb_packed, user_emb, wide):
        wide_offset = wide + self.mu
        wide_normalized = wide_offset * self.sigma
        wide_preproc = torch.clamp(wide_normalized, 0., 10.)
        user_emb_t = torch.transpose(user_emb, 1, 2)
        dp_unflatten = torch.bmm(ad_emb_packed, user_emb_t)
        dp = torch.flatten(dp_unflatten, 1)
        input = torch.cat([dp, wide_preproc], 1)
        fc1 = torch.nn.functional.linear(input, self.fc_w, self.fc_b)
        return torch.sigmoid(fc1)


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, stride=2, groups=2)
        self.fc = nn.Linear(16, 10)
        self.bn.running_mean.copy_(torch.randn(8) * 0.1)
        self.bn.running_var.copy_(torch.rand(8) + 0.5)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn(self.conv1(x))), 2)
        x = F.relu(self.conv2(x))
        x = F.adaptive_avg_pool2d(x, (1, 1))
        return self.fc(torch.flatten(x, 1))


class TransformerBlock(nn.Module):
    def __init__(self, d=64, heads=4, hidden=128):
        super().__init__()
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)
        self.o = nn.Linear(d, d)
        self.ln1 = nn.LayerNorm(d)
        self.ln2 = nn.LayerNorm(d)
        self.fc1 = nn.Linear(d, hidden)
        self.fc2 = nn.Linear(hidden, d)
        self.heads = heads
        self.dh = d // heads
        self.scale = 1.0 / (self.dh ** 0.5)

    def forward(self, x):
        b, s, d = x.size(0), x.size(1), x.size(2)
        q = self.q(x).reshape(b, s, self.heads, self.dh).permute(0, 2, 1, 3)
        k = self.k(x).reshape(b, s, self.heads, self.dh).permute(0, 2, 3, 1)
        v = self.v(x).reshape(b, s, self.heads, self.dh).permute(0, 2, 1, 3)
        att = torch.softmax(torch.matmul(q, k) * self.scale, -1)
        ctx = torch.matmul(att, v).permute(0, 2, 1, 3).reshape(b, s, d)
        x = self.ln1(x + self.o(ctx))
        h = self.fc2(F.gelu(self.fc1(x)))
        return self.ln2(x + h)


class DLRMLike(nn.Module):
    def __init__(self, dense=13, dim=16, rows=(50, 40, 30)):
        super().__init__()
        self.t0 = nn.Parameter(torch.randn(rows[0], dim) * 0.5)
        self.t1 = nn.Parameter(torch.randn(rows[1], dim) * 0.5)
        self.t2 = nn.Parameter(torch.randn(rows[2], dim) * 0.5)
        self.bot1 = nn.Linear(dense, 32)
        self.bot2 = nn.Linear(32, dim)
        n = 4
        self.top1 = nn.Linear(dim + n * n, 32)
        self.top2 = nn.Linear(32, 1)

    def forward(self, dense, i0, o0, i1, o1, i2, o2):
        x = F.relu(self.bot2(F.relu(self.bot1(dense))))
        e0 = F.embedding_bag(i0, self.t0, o0, mode="sum")
        e1 = F.embedding_bag(i1, self.t1, o1, mode="sum")
        e2 = F.embedding_bag(i2, self.t2, o2, mode="sum")
        t = torch.stack([x, e0, e1, e2], 1)
        z = torch.bmm(t, torch.transpose(t, 1, 2))
        r = torch.cat([x, torch.flatten(z, 1)], 1)
        return torch.sigmoid(self.top2(F.relu(self.top1(r))))


class ControlFlow(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        # Freezing unrolls constant loops up to ~64 iterations; 66 stays a
        # prim::Loop (unrolled by 8 plus a 2-iteration epilogue loop).
        self.n = 66

    def forward(self, x, y) -> Tuple[Tensor, Tuple[List[Tensor], int], Tensor]:
        if bool(x.sum() > y.sum()):
            h = self.lin(x)
        else:
            h = self.lin(y) * 2.0
        outs: List[Tensor] = []
        for i in range(self.n):
            h = torch.tanh(h + x * (i * 0.01))
            outs.append(h)
        return h, ([outs[0], outs[-1]], len(outs)), torch.stack(outs, 0).mean(0)


def mul_relu_chain_ir(n=50):
    lines = ["graph(%x : Tensor, %w : Tensor):"]
    prev = "%x"
    for i in range(n):
        lines.append("  %%m%d : Tensor = aten::mul(%s, %%w)" % (i, prev))
        lines.append("  %%r%d : Tensor = aten::relu(%%m%d)" % (i, i))
        prev = "%%r%d" % i
    lines.append("  return (%s)" % prev)
    return "\n".join(lines) + "\n"


def emit_mul_relu_chain(d):
    text = mul_relu_chain_ir()
    g = torch._C.parse_ir(text)
    fn = torch._C._create_function_from_graph("mul_relu_chain", g)
    x = torch.rand(1) + 0.5
    w = 1.0 + 0.01 * torch.randn(1)
    out = fn(x, w)
    ref = x
    for _ in range(50):
        ref = torch.relu(ref * w)
    assert torch.equal(out, ref)
    meta = {"graph_kind": "ir", "noncontig": "0", "rtol": 1e-5, "atol": 1e-6, "case": "mul_relu_chain"}
    fixture_lib.write_fixture(os.path.join(d, "model.ir"), os.path.join(d, "model.safetensors"),
                              text, [], [x, w], out, meta)


def offsets(*v):
    return torch.tensor(v, dtype=torch.int64)


MODELS = [
    ("mlp", lambda: (MLP(), [torch.randn(1, 64)]), 1e-4, 1e-5),
    ("deep_and_wide", lambda: (DeepAndWide(50), [torch.randn(1, 1, 32), torch.randn(1, 1, 32), torch.randn(1, 50)]),
     1e-4, 1e-5),
    ("small_cnn", lambda: (SmallCNN(), [torch.randn(2, 3, 32, 32)]), 1e-4, 1e-4),
    ("transformer_block", lambda: (TransformerBlock(), [torch.randn(2, 16, 64)]), 1e-4, 1e-4),
    ("dlrm_like", lambda: (DLRMLike(), [torch.randn(4, 13),
                                        torch.randint(0, 50, (10,)), offsets(0, 3, 5, 9),
                                        torch.randint(0, 40, (6,)), offsets(0, 1, 2, 4),
                                        torch.randint(0, 30, (8,)), offsets(0, 2, 2, 5)]), 1e-4, 1e-5),
    ("control_flow", lambda: (ControlFlow(), [torch.randn(2, 8), torch.randn(2, 8)]), 1e-4, 1e-5),
]


def make_all(out, only):
    n = 0
    for name, build, rtol, atol in MODELS:
        if only not in name:
            continue
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        fixture_lib.seed_for(name)
        module, inputs = build()
        fixture_lib.emit_module(os.path.join(d, "model.ir"), os.path.join(d, "model.safetensors"),
                                module, inputs, rtol, atol, False, {"case": name})
        n += 1
    if "mul_relu_chain" in "mul_relu_chain" and only in "mul_relu_chain":
        d = os.path.join(out, "mul_relu_chain")
        os.makedirs(d, exist_ok=True)
        fixture_lib.seed_for("mul_relu_chain")
        emit_mul_relu_chain(d)
        n += 1
    return n
