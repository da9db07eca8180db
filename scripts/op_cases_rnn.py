"""Recurrent ops: aten::lstm/gru/rnn_tanh/rnn_relu (.input and .data) and
their cells, through torch.nn modules (params frozen to constants) and
through the functional ops with the weights as inputs (params not
constant)."""
from typing import List

import torch
from torch import nn, Tensor

from op_cases import case, r, Call


class WithState(nn.Module):
    """nn.GRU / nn.RNN / nn.GRUCell / nn.RNNCell with an initial state."""

    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x, h):
        return self.m(x, h)


class LSTMWithState(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x, h, c):
        return self.m(x, (h, c))


def _rnn(kind, inp, hid, layers=1, bi=False, batch_first=False, bias=True, proj=0, dropout=0.0):
    cls = {"lstm": nn.LSTM, "gru": nn.GRU, "rnn_tanh": nn.RNN, "rnn_relu": nn.RNN}[kind]
    kw = dict(num_layers=layers, bidirectional=bi, batch_first=batch_first, bias=bias, dropout=dropout)
    if kind == "rnn_relu":
        kw["nonlinearity"] = "relu"
    if proj:
        kw["proj_size"] = proj
    return cls(inp, hid, **kw)


def _case(name, kind, seq=4, batch=3, inp=5, hid=6, state=False, unbatched=False, **kw):
    def build():
        m = _rnn(kind, inp, hid, **kw)
        dirs = 2 if kw.get("bi") else 1
        layers = kw.get("layers", 1)
        if unbatched:
            x = r(seq, inp)
        elif kw.get("batch_first"):
            x = r(batch, seq, inp)
        else:
            x = r(seq, batch, inp)
        hshape = (layers * dirs, hid) if unbatched else (layers * dirs, batch, hid)
        if not state:
            return Call(m), [x]
        if kind == "lstm":
            p = kw.get("proj", 0) or hid
            h = r(*(hshape[:-1] + (p,)))
            return LSTMWithState(m), [x, h, r(*hshape)]
        return WithState(m), [x, r(*hshape)]
    case(name, build)


for kind in ["lstm", "gru", "rnn_tanh", "rnn_relu"]:
    _case("rnn_%s_1layer" % kind, kind)
    _case("rnn_%s_1layer_state" % kind, kind, state=True)
    _case("rnn_%s_2layer_bi" % kind, kind, layers=2, bi=True)
    _case("rnn_%s_2layer_bi_state_bf" % kind, kind, layers=2, bi=True, batch_first=True, state=True)
    _case("rnn_%s_bi_bf" % kind, kind, bi=True, batch_first=True)
    _case("rnn_%s_3layer_nobias_state" % kind, kind, layers=3, bias=False, state=True)
    _case("rnn_%s_unbatched_state" % kind, kind, state=True, unbatched=True, layers=2, bi=True)
    _case("rnn_%s_batch1_seq1" % kind, kind, seq=1, batch=1, state=True)
_case("rnn_lstm_unbatched", "lstm", unbatched=True)
_case("rnn_lstm_dropout_eval", "lstm", layers=2, dropout=0.5, state=True)
_case("rnn_lstm_proj", "lstm", hid=7, proj=3)
_case("rnn_lstm_proj_2layer_bi_state_bf", "lstm", hid=7, proj=4, layers=2, bi=True, batch_first=True, state=True)
_case("rnn_lstm_proj_nobias_state", "lstm", hid=7, proj=3, bias=False, state=True)
_case("rnn_lstm_wide", "lstm", seq=5, batch=7, inp=9, hid=17, bi=True, state=True)


# ---------------------------------------------------------------- weights as inputs (params not constant)
class LSTMFn(nn.Module):
    def __init__(self, bi: bool, batch_first: bool):
        super().__init__()
        self.bi = bi
        self.batch_first = batch_first

    def forward(self, x, h, c, w_ih, w_hh, b_ih, b_hh, w_ih2, w_hh2, b_ih2, b_hh2):
        ps: List[Tensor] = [w_ih, w_hh, b_ih, b_hh]
        if self.bi:
            ps = ps + [w_ih2, w_hh2, b_ih2, b_hh2]
        return torch.lstm(x, [h, c], ps, True, 1, 0.0, False, self.bi, self.batch_first)


class GRUFn(nn.Module):
    def __init__(self, op: str, bi: bool):
        super().__init__()
        self.op = op
        self.bi = bi

    def forward(self, x, h, w_ih, w_hh, b_ih, b_hh, w_ih2, w_hh2, b_ih2, b_hh2):
        ps: List[Tensor] = [w_ih, w_hh, b_ih, b_hh]
        if self.bi:
            ps = ps + [w_ih2, w_hh2, b_ih2, b_hh2]
        if self.op == "gru":
            return torch.gru(x, h, ps, True, 1, 0.0, False, self.bi, False)
        if self.op == "rnn_tanh":
            return torch.rnn_tanh(x, h, ps, True, 1, 0.0, False, self.bi, False)
        return torch.rnn_relu(x, h, ps, True, 1, 0.0, False, self.bi, False)


def _weights(gates, inp, hid, dirs=2):
    ws = []
    for _ in range(dirs):
        ws += [r(gates * hid, inp) * 0.4, r(gates * hid, hid) * 0.4, r(gates * hid) * 0.4, r(gates * hid) * 0.4]
    return ws


case("rnn_fn_lstm", lambda: (LSTMFn(False, False), [r(4, 3, 5), r(1, 3, 6), r(1, 3, 6)] + _weights(4, 5, 6)))
case("rnn_fn_lstm_bi_bf", lambda: (LSTMFn(True, True), [r(3, 4, 5), r(2, 3, 6), r(2, 3, 6)] + _weights(4, 5, 6)))
for op, g in [("gru", 3), ("rnn_tanh", 1), ("rnn_relu", 1)]:
    case("rnn_fn_%s_bi" % op, lambda op=op, g=g: (GRUFn(op, True), [r(4, 3, 5), r(2, 3, 6)] + _weights(g, 5, 6)))


# ---------------------------------------------------------------- PackedSequence (.data overloads)
class PackedFn(nn.Module):
    """The .data overloads on a packed batch: data (sum(batch_sizes),
    input) and batch_sizes, as nn.LSTM passes a PackedSequence."""

    def __init__(self, m: nn.Module, op: str):
        super().__init__()
        self.op = op
        self.params = [p.detach() for p in m._flat_weights]
        self.layers = m.num_layers
        self.bi = m.bidirectional
        self.bias = m.bias

    def forward(self, data, batch_sizes, h, c):
        if self.op == "lstm":
            return torch.lstm(data, batch_sizes, [h, c], self.params, self.bias, self.layers, 0.0, False, self.bi)
        if self.op == "gru":
            o, hn = torch.gru(data, batch_sizes, h, self.params, self.bias, self.layers, 0.0, False, self.bi)
        elif self.op == "rnn_tanh":
            o, hn = torch.rnn_tanh(data, batch_sizes, h, self.params, self.bias, self.layers, 0.0, False, self.bi)
        else:
            o, hn = torch.rnn_relu(data, batch_sizes, h, self.params, self.bias, self.layers, 0.0, False, self.bi)
        return o, hn, c


def _packed(kind, layers, bi, proj=0):
    def build():
        m = _rnn(kind, 5, 6, layers=layers, bi=bi, proj=proj)
        lengths = torch.tensor([5, 3, 3, 1])
        batch_sizes = torch.tensor([(lengths > t).sum().item() for t in range(int(lengths[0]))])
        data = r(int(lengths.sum()), 5)
        n = layers * (2 if bi else 1)
        return PackedFn(m, kind), [data, batch_sizes, r(n, 4, proj or 6), r(n, 4, 6)]
    return build


for kind in ["lstm", "gru", "rnn_tanh", "rnn_relu"]:
    case("rnn_packed_%s" % kind, _packed(kind, 1, False))
    case("rnn_packed_%s_2layer_bi" % kind, _packed(kind, 2, True))
case("rnn_packed_lstm_proj_bi", _packed("lstm", 1, True, proj=4))


# ---------------------------------------------------------------- cells
def _cell(kind, state, bias=True, batch=3, unbatched=False):
    def build():
        cls = {"lstm": nn.LSTMCell, "gru": nn.GRUCell, "rnn_tanh": nn.RNNCell, "rnn_relu": nn.RNNCell}[kind]
        kw = {"nonlinearity": "relu"} if kind == "rnn_relu" else {}
        m = cls(5, 6, bias=bias, **kw)
        x = r(5) if unbatched else r(batch, 5)
        hs = (6,) if unbatched else (batch, 6)
        if not state:
            return Call(m), [x]
        if kind == "lstm":
            return LSTMWithState(m), [x, r(*hs), r(*hs)]
        return WithState(m), [x, r(*hs)]
    return build


for kind in ["lstm", "gru", "rnn_tanh", "rnn_relu"]:
    case("rnn_cell_%s" % kind, _cell(kind, False))
    case("rnn_cell_%s_state" % kind, _cell(kind, True))
    case("rnn_cell_%s_nobias_state" % kind, _cell(kind, True, bias=False))
    case("rnn_cell_%s_unbatched" % kind, _cell(kind, True, unbatched=True))


class CellFn(nn.Module):
    def __init__(self, op: str):
        super().__init__()
        self.op = op

    def forward(self, x, h, c, w_ih, w_hh, b_ih, b_hh):
        if self.op == "lstm":
            return torch.lstm_cell(x, [h, c], w_ih, w_hh, b_ih, b_hh)
        if self.op == "gru":
            return (torch.gru_cell(x, h, w_ih, w_hh, b_ih, b_hh), c)
        if self.op == "rnn_tanh":
            return (torch.rnn_tanh_cell(x, h, w_ih, w_hh, b_ih, b_hh), c)
        return (torch.rnn_relu_cell(x, h, w_ih, w_hh, None, None), c)


for op, g in [("lstm", 4), ("gru", 3), ("rnn_tanh", 1), ("rnn_relu", 1)]:
    case("rnn_cellfn_%s" % op, lambda op=op, g=g: (CellFn(op), [r(3, 5), r(3, 6), r(3, 6)] + _weights(g, 5, 6, 1)))


# ---------------------------------------------------------------- packing (pack_padded_sequence's kernels)
class Pack(nn.Module):
    def __init__(self, batch_first: bool):
        super().__init__()
        self.batch_first = batch_first

    def forward(self, x, lengths):
        return torch._pack_padded_sequence(x, lengths, self.batch_first)


class Pad(nn.Module):
    def __init__(self, batch_first: bool, value: float, total: int):
        super().__init__()
        self.batch_first = batch_first
        self.value = value
        self.total = total

    def forward(self, data, batch_sizes):
        return torch._pad_packed_sequence(data, batch_sizes, self.batch_first, self.value, self.total)


class PackLSTMPad(nn.Module):
    """pack_padded_sequence -> nn.LSTM -> pad_packed_sequence, sorted
    lengths, as the ops run inside those functions."""

    def __init__(self, batch_first: bool):
        super().__init__()
        m = nn.LSTM(5, 6, num_layers=2, bidirectional=True)
        self.params = [p.detach() for p in m._flat_weights]
        self.batch_first = batch_first

    def forward(self, x, lengths, h, c):
        data, bs = torch._pack_padded_sequence(x, lengths, self.batch_first)
        out, hn, cn = torch.lstm(data, bs, [h, c], self.params, True, 2, 0.0, False, True)
        o, lens = torch._pad_packed_sequence(out, bs, self.batch_first, 0.0, 0)
        return o, lens, hn, cn


def _lengths(*ls):
    return torch.tensor(ls, dtype=torch.int64)


case("rnn_pack", lambda: (Pack(False), [r(5, 4, 3), _lengths(5, 3, 3, 1)]))
case("rnn_pack_bf_4d", lambda: (Pack(True), [r(4, 6, 2, 3), _lengths(4, 4, 2, 1)]))
case("rnn_pack_equal", lambda: (Pack(False), [r(3, 2, 4), _lengths(3, 3)]))
case("rnn_pack_short", lambda: (Pack(False), [r(6, 3, 2), _lengths(4, 2, 1)]))
case("rnn_pad", lambda: (Pad(False, 0.0, 0), [r(9, 3), _lengths(4, 3, 1, 1)]))
case("rnn_pad_bf_value_total", lambda: (Pad(True, -1.5, 6), [r(9, 2, 3), _lengths(4, 3, 1, 1)]))
case("rnn_pack_lstm_pad", lambda: (PackLSTMPad(False), [r(5, 4, 5), _lengths(5, 4, 2, 2), r(4, 4, 6), r(4, 4, 6)]))
case("rnn_pack_lstm_pad_bf", lambda: (PackLSTMPad(True), [r(4, 5, 5), _lengths(5, 4, 2, 2), r(4, 4, 6), r(4, 4, 6)]))


# ---------------------------------------------------------------- cells in a loop (states carried across iterations)
class CellLoop(nn.Module):
    def __init__(self, kind: str):
        super().__init__()
        self.kind = kind
        self.lstm = nn.LSTMCell(5, 6)
        self.gru = nn.GRUCell(5, 6)

    def forward(self, x, h, c):
        outs: List[Tensor] = []
        for i in range(x.size(0)):
            if self.kind == "lstm":
                h, c = self.lstm(x[i], (h, c))
            else:
                h = self.gru(x[i], h)
            outs.append(h)
        return torch.stack(outs), h, c


case("rnn_cell_loop_lstm", lambda: (CellLoop("lstm"), [r(4, 3, 5), r(3, 6), r(3, 6)]))
case("rnn_cell_loop_gru", lambda: (CellLoop("gru"), [r(4, 3, 5), r(3, 6), r(3, 6)]))
