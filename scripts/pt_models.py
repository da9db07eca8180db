"""Models for make_pt_testdata.py: TorchScript archives (.pt) as users write
them. Kept in their own file because TorchScript records this file's path in
each archive's debug info; make_pt_testdata.py imports it by a relative path
so the archives do not name the checkout's location."""
from typing import List, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor, nn


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 10))

    def forward(self, x):
        return self.net(x)


class DeepAndWide(nn.Module):
    """PyTorch's benchmarks/static_runtime/deep_wide_pt.py (DeepAndWide)."""

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


class DLRMLike(nn.Module):
    """DLRM's shape: bottom MLP on dense features, EmbeddingBag tables, the
    pairwise dot products' strict lower triangle (as DLRM's interact_features
    takes it, by index with precomputed row/column buffers), top MLP."""

    def __init__(self, dense=13, dim=16, rows=(50, 40, 30)):
        super().__init__()
        self.bot = nn.Sequential(nn.Linear(dense, 32), nn.ReLU(), nn.Linear(32, dim), nn.ReLU())
        self.emb0 = nn.EmbeddingBag(rows[0], dim, mode="sum")
        self.emb1 = nn.EmbeddingBag(rows[1], dim, mode="sum")
        self.emb2 = nn.EmbeddingBag(rows[2], dim, mode="sum")
        n = len(rows) + 1
        li, lj = torch.tril_indices(n, n, offset=-1)
        self.register_buffer("li", li)
        self.register_buffer("lj", lj)
        self.top = nn.Sequential(nn.Linear(dim + n * (n - 1) // 2, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, dense, i0, o0, i1, o1, i2, o2):
        x = self.bot(dense)
        e0 = self.emb0(i0, o0)
        e1 = self.emb1(i1, o1)
        e2 = self.emb2(i2, o2)
        t = torch.stack([x, e0, e1, e2], 1)
        z = torch.bmm(t, torch.transpose(t, 1, 2))
        zflat = z[:, self.li, self.lj]
        r = torch.cat([x, zflat], 1)
        return torch.sigmoid(self.top(r))


class TransformerBlock(nn.Module):
    """A post-norm encoder block from basic ops (no fused attention)."""

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
        q = self.q(x).view(b, s, self.heads, self.dh).transpose(1, 2)
        k = self.k(x).view(b, s, self.heads, self.dh).transpose(1, 2)
        v = self.v(x).view(b, s, self.heads, self.dh).transpose(1, 2)
        att = torch.softmax(torch.matmul(q, k.transpose(-2, -1)) * self.scale, dim=-1)
        ctx = torch.matmul(att, v).transpose(1, 2).reshape(b, s, d)
        x = self.ln1(x + self.o(ctx))
        h = self.fc2(F.gelu(self.fc1(x)))
        return self.ln2(x + h)


class ControlFlow(nn.Module):
    """Loops and ifs: scripted, they stay prim::Loop/prim::If; traced, they
    are specialised to the example inputs (the if's branch and the trip
    counts become constants)."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(8, 8)
        self.k = 3

    def forward(self, x, y) -> Tuple[Tensor, Tensor, Tensor]:
        h = x
        count = 0
        for i in range(self.k):
            if h.sum() > 0:
                h = torch.relu(self.lin(h))
                count += 2
            else:
                h = torch.tanh(self.lin(h)) * (i + 1)
                count += 1
        outs: List[Tensor] = []
        for j in range(y.size(0)):
            outs.append(y[j] * h.mean() + j)
        stacked = torch.cat(outs, 0)
        return h * count, stacked, h.sum(1) - y.sum()


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(32)
        self.fc = nn.Linear(32, 10)
        # Non-trivial running statistics, so batch norm (and freezing's
        # conv-bn folding) is exercised.
        for bn in (self.bn1, self.bn2):
            bn.running_mean.copy_(torch.randn(bn.num_features) * 0.1)
            bn.running_var.copy_(torch.rand(bn.num_features) + 0.5)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.relu(self.bn2(self.conv2(x)))
        x = F.adaptive_avg_pool2d(x, (1, 1))
        return self.fc(torch.flatten(x, 1))


class SEBlock(nn.Module):
    """Inverted residual blocks with squeeze-and-excitation, as
    efficientnet's and mobilenet_v3's: the product of the block's map by
    one value a channel feeds the projection (gosr fuses the two). At
    32x32 a 1x1 projection with a residual and a 3x3 one with a relu; at
    8x8 (after pooling) a 3x3 one, with the scale on the other side of
    the product and mobilenet_v3's hard activations."""

    def __init__(self):
        super().__init__()
        c, e = 16, 32

        def bn(n):
            b = nn.BatchNorm2d(n)
            b.running_mean.copy_(torch.randn(n) * 0.1)
            b.running_var.copy_(torch.rand(n) + 0.5)
            return b

        self.stem = nn.Sequential(nn.Conv2d(3, c, 3, padding=1, bias=False), bn(c), nn.SiLU())
        self.expand1 = nn.Sequential(nn.Conv2d(c, e, 1, bias=False), bn(e), nn.SiLU())
        self.dw1 = nn.Sequential(nn.Conv2d(e, e, 3, padding=1, groups=e, bias=False), bn(e), nn.SiLU())
        self.se1 = nn.Sequential(nn.Conv2d(e, 8, 1), nn.SiLU(), nn.Conv2d(8, e, 1))
        self.project1 = nn.Sequential(nn.Conv2d(e, c, 1, bias=False), bn(c))
        self.se2 = nn.Sequential(nn.Conv2d(c, 8, 1), nn.ReLU(), nn.Conv2d(8, c, 1))
        self.conv2 = nn.Conv2d(c, c, 3, padding=1)
        self.expand3 = nn.Sequential(nn.Conv2d(c, e, 1, bias=False), bn(e), nn.Hardswish())
        self.dw3 = nn.Sequential(nn.Conv2d(e, e, 3, padding=1, groups=e, bias=False), bn(e), nn.Hardswish())
        self.se3 = nn.Sequential(nn.Conv2d(e, 8, 1), nn.ReLU(), nn.Conv2d(8, e, 1))
        self.project3 = nn.Sequential(nn.Conv2d(e, c, 3, padding=1, bias=False), bn(c))
        self.fc = nn.Linear(c, 10)

    def forward(self, x):
        x = self.stem(x)
        h = self.dw1(self.expand1(x))
        s = torch.sigmoid(self.se1(F.adaptive_avg_pool2d(h, 1)))
        x = x + self.project1(s * h)
        s = torch.sigmoid(self.se2(F.adaptive_avg_pool2d(x, 1)))
        x = F.relu(self.conv2(s * x))
        x = F.avg_pool2d(x, 4)
        h = self.dw3(self.expand3(x))
        s = F.hardsigmoid(self.se3(F.adaptive_avg_pool2d(h, 1)))
        x = self.project3(h * s)
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


class TextClassifier(nn.Module):
    """Token ids -> embedding -> masked mean -> MLP -> log-probabilities."""

    def __init__(self, vocab=100, dim=32, classes=5):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim, padding_idx=0)
        self.fc1 = nn.Linear(dim, 32)
        self.fc2 = nn.Linear(32, classes)

    def forward(self, tokens):
        mask = (tokens != 0).unsqueeze(-1).to(torch.float32)
        e = self.emb(tokens) * mask
        pooled = e.sum(1) / mask.sum(1).clamp(min=1.0)
        return F.log_softmax(self.fc2(torch.tanh(self.fc1(pooled))), dim=-1)


def transformer_encoder_layer():
    # batch_first=False keeps 1.13's fused fast path
    # (torch._transformer_encoder_layer_fwd) out of eager runs and traces;
    # the scripted module still holds it in a branch that a frozen module's
    # constant propagation removes.
    return nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, dropout=0.0)


def offsets(*v):
    return torch.tensor(v, dtype=torch.int64)


class ForkEnsemble(nn.Module):
    """Two branches run with torch.jit.fork and joined with wait (the
    serialized code holds nested closures and fork(...)/torch.wait(...))."""

    def __init__(self):
        super().__init__()
        self.a = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 8))
        self.b = nn.Sequential(nn.Linear(32, 16), nn.Tanh(), nn.Linear(16, 8))

    def forward(self, x):
        fa = torch.jit.fork(self.a, x)
        fb = torch.jit.fork(self.b, x)
        return torch.jit.wait(fa) + torch.jit.wait(fb)



class ForkCNNBranch1(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(8, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 16, 3, padding=1)

    def forward(self, x):
        out = F.relu(self.conv1(x))
        out = F.relu(self.conv2(out))
        return F.max_pool2d(out, 2)


class ForkCNNBranch2(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv3 = nn.Conv2d(8, 16, 5, padding=2)

    def forward(self, x):
        return F.max_pool2d(F.relu(self.conv3(x)), 2)


class ForkCNN(nn.Module):
    """The two-branch CNN block of the Static Runtime design note (prim::fork
    section): branch1 = conv1 -> conv2 -> max_pool, branch2 = conv3 (5x5) ->
    max_pool, forked, then conv4 (1x1) on their sum. The branches cost about
    the same (3456 and 3200 multiply-adds per pixel) and conv4 little, so two
    inter-op workers can approach 2x; 8 and 16 channels keep the archives
    small."""

    def __init__(self):
        super().__init__()
        self.branch1 = ForkCNNBranch1()
        self.branch2 = ForkCNNBranch2()
        self.conv4 = nn.Conv2d(16, 8, 1)

    def forward(self, x):
        fut_1 = torch.jit.fork(self.branch1, x)
        fut_2 = torch.jit.fork(self.branch2, x)
        return self.conv4(torch.jit.wait(fut_1) + torch.jit.wait(fut_2))


class ForkNested(nn.Module):
    """A forked function that forks: forward forks pair, which forks the two
    heads, waits for both and concatenates them, while the caller runs its
    own linear. The forked callables are methods: PyTorch 1.13 freezes a
    module whose forked function forks a submodule into an archive that
    torch.jit.load rejects (the submodule's attribute is gone)."""

    def __init__(self):
        super().__init__()
        self.h1 = nn.Sequential(nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 16))
        self.h2 = nn.Sequential(nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 16))
        self.side = nn.Linear(32, 32)
        self.out = nn.Linear(32, 8)

    def head1(self, x):
        return self.h1(x)

    def head2(self, x):
        return self.h2(x)

    def pair(self, x):
        f1 = torch.jit.fork(self.head1, x)
        f2 = torch.jit.fork(self.head2, x)
        return torch.cat([torch.jit.wait(f1), torch.jit.wait(f2)], 1)

    def forward(self, x):
        f = torch.jit.fork(self.pair, x)
        y = torch.relu(self.side(x))
        return self.out(torch.jit.wait(f) + y)


class ForkLoop(nn.Module):
    """Futures in a list: one fork per head of a ModuleList, then a wait on
    each in a second loop, stacked."""

    def __init__(self):
        super().__init__()
        self.heads = nn.ModuleList([nn.Sequential(nn.Linear(32, 16), nn.ReLU(), nn.Linear(16, 8))
                                    for _ in range(4)])

    def forward(self, x):
        futs: List[torch.jit.Future[Tensor]] = []
        for h in self.heads:
            futs.append(torch.jit.fork(h, x))
        outs: List[Tensor] = []
        for f in futs:
            outs.append(torch.jit.wait(f))
        return torch.stack(outs)

# name -> (builder returning (module, inputs), large). Builders run after the
# per-model seed is set, so weights and inputs are reproducible.
def _torchvision(name):
    def build():
        import torchvision
        m = getattr(torchvision.models, name)(weights=None)
        return m, (torch.randn(1, 3, 224, 224),)
    return build


def bags(rows, batch):
    """EmbeddingBag inputs for batch bags of 0 to 3 ids each (empty bags
    included, as in the single-batch inputs)."""
    sizes = torch.randint(0, 4, (batch,))
    offs = torch.cat([torch.zeros(1, dtype=torch.int64), torch.cumsum(sizes, 0)[:-1]])
    return torch.randint(0, rows, (int(sizes.sum()),)), offs


def token_rows(batch, length=8, vocab=100):
    """Token ids 1..vocab-1 of 1 to length tokens per row, padded with 0."""
    lens = torch.randint(1, length + 1, (batch,))
    ids = torch.randint(1, vocab, (batch, length))
    return ids * (torch.arange(length).unsqueeze(0) < lens.unsqueeze(1))


def dlrm_batch(b):
    i0, o0 = bags(50, b)
    i1, o1 = bags(40, b)
    i2, o2 = bags(30, b)
    return (torch.randn(b, 13), i0, o0, i1, o1, i2, o2)


# Batch sizes of NAME.shapes.pt, in order: up, down, a new largest, back to
# it and down, so a runtime must grow its plan and then reuse it.
SHAPE_BATCHES = (1, 4, 2, 8, 3, 8, 1)

# name -> batch size -> inputs with the structure of the model's inputs
# (ints with the same meaning as in MODELS). The other dimensions are those
# of MODELS' inputs except where a comment says otherwise (to keep the
# committed files small).
SHAPES = {
    "mlp": lambda b: (torch.randn(b, 64),),
    "deep_and_wide": lambda b: (torch.randn(b, 1, 32), torch.randn(b, 1, 32), torch.randn(b, 50)),
    "dlrm_like": dlrm_batch,
    # Sequence 8, not 16.
    "transformer_block": lambda b: (torch.randn(b, 8, 64),),
    # Sequence 8 (batch_first=False: the batch is dimension 1).
    "transformer_encoder_layer": lambda b: (torch.randn(8, b, 64),),
    # y has b rows too, so the scripted loop's trip count follows the batch.
    "control_flow": lambda b: (torch.randn(b, 8), torch.randn(b, 3)),
    # 16x16 images, not 32x32 (adaptive pooling takes any size).
    "small_cnn": lambda b: (torch.randn(b, 3, 16, 16),),
    "text_classifier": lambda b: (token_rows(b),),
    # 8x8 images, not 32x32 (the projections' paths change with the map,
    # and a batch takes the product out of the rows kernel).
    "se_block": lambda b: (torch.randn(b, 3, 8, 8),),
    "fork_ensemble": lambda b: (torch.randn(b, 32),),
    # 4x4 images, not 32x32 (the block is all convolutions; pooled to 2x2).
    "fork_cnn": lambda b: (torch.randn(b, 8, 4, 4),),
    "fork_nested": lambda b: (torch.randn(b, 32),),
    "fork_loop": lambda b: (torch.randn(b, 32),),
}

MODELS = {
    "mlp": (lambda: (MLP(), (torch.randn(1, 64),)), False),
    "deep_and_wide": (lambda: (DeepAndWide(50), (torch.randn(1, 1, 32), torch.randn(1, 1, 32), torch.randn(1, 50))),
                      False),
    "dlrm_like": (lambda: (DLRMLike(), (torch.randn(4, 13),
                                        torch.randint(0, 50, (10,)), offsets(0, 3, 5, 9),
                                        torch.randint(0, 40, (6,)), offsets(0, 1, 2, 4),
                                        torch.randint(0, 30, (8,)), offsets(0, 2, 2, 5))), False),
    "transformer_block": (lambda: (TransformerBlock(), (torch.randn(1, 16, 64),)), False),
    "transformer_encoder_layer": (lambda: (transformer_encoder_layer(), (torch.randn(16, 1, 64),)), False),
    "control_flow": (lambda: (ControlFlow(), (torch.randn(2, 8), torch.randn(5, 3))), False),
    "small_cnn": (lambda: (SmallCNN(), (torch.randn(1, 3, 32, 32),)), False),
    "se_block": (lambda: (SEBlock(), (torch.randn(1, 3, 32, 32),)), False),
    "text_classifier": (lambda: (TextClassifier(), (torch.tensor([[5, 17, 42, 99, 3, 0, 0, 0],
                                                                  [8, 1, 2, 0, 0, 0, 0, 0]]),)), False),
    "fork_ensemble": (lambda: (ForkEnsemble(), (torch.randn(2, 32),)), False),
    "fork_cnn": (lambda: (ForkCNN(), (torch.randn(1, 8, 32, 32),)), False),
    "fork_nested": (lambda: (ForkNested(), (torch.randn(4, 32),)), False),
    "fork_loop": (lambda: (ForkLoop(), (torch.randn(4, 32),)), False),
    "resnet18": (_torchvision("resnet18"), True),
    "mobilenet_v2": (_torchvision("mobilenet_v2"), True),
}
