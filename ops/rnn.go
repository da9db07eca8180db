package ops

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops/gemm"
)

// aten::lstm, gru, rnn_tanh, rnn_relu: whole sequences, stacked layers,
// both directions, padded (.input, optionally batch_first) or packed
// (.data: a PackedSequence's data and batch_sizes), as
// aten/src/ATen/native/RNN.cpp computes them on CPU.
//
// Per layer and direction, the input projection of every time step is one
// GEMM (rows x W_ih^T, biases prefilled); each step then adds h W_hh^T
// with one GEMM of batch rows and runs the fused gate loop (rnn_cell.go).
// The hidden states live in the layer's output rows, so the next step
// reads them in place. Constant weights (frozen modules) are packed once
// at preparation.
//
// Rows: the layer input, its projections and its output share one row
// order, that of the input tensor: step t's batch row b is row
// rowStart[t] + b*sB (seq-first: t*B + b; batch_first: b*T + t;
// packed: the steps' cumulative batch sizes + b).

type rnnMode uint8

const (
	rnnLSTM rnnMode = iota
	rnnGRU
	rnnTanh
	rnnRelu
)

func (m rnnMode) gates() int {
	switch m {
	case rnnLSTM:
		return 4
	case rnnGRU:
		return 3
	}
	return 1
}

func (m rnnMode) String() string {
	return [...]string{"lstm", "gru", "rnn_tanh", "rnn_relu"}[m]
}

// rnnSeq is the kernel of one sequence op node.
type rnnSeq struct {
	mode   rnnMode
	packed bool // the .data overload
	// pre[i] is params[i] packed at preparation when the params list is
	// made of constants; preT[i] is that tensor, to check it is the one
	// a run gets.
	pre  []*gemm.PrepackedB
	preT []*ivalue.Tensor
	// inputWhat names the input in errors (made once: a concatenation
	// per run would allocate).
	inputWhat string
}

type rnnState struct {
	params       []*ivalue.Tensor
	rowStart, bs []int
	last         []int // per batch row, its last step (packed)
	gi, gh, h0   []float32
	hraw         []float32 // LSTM with projections: o*tanh(c) before W_hr
	bias, bhn    []float32
	xbuf         []float32 // contiguous copy of an input whose rows do not merge
	bufs         [2][]float32
	sOut, sH, sC []int
	// this run's geometry, for recur: batch row stride, hidden size, h
	// size (proj_size with projections), gates*hidden, output row length
	sB, H, P, GH, ldo int
	proj              bool
}

func init() {
	for _, o := range []struct {
		name, input, data string
		mode              rnnMode
	}{
		{"aten::lstm",
			"aten::lstm.input(Tensor input, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor, Tensor)",
			"aten::lstm.data(Tensor data, Tensor batch_sizes, Tensor[] hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional) -> (Tensor, Tensor, Tensor)",
			rnnLSTM},
		{"aten::gru",
			"aten::gru.input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor)",
			"aten::gru.data(Tensor data, Tensor batch_sizes, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional) -> (Tensor, Tensor)",
			rnnGRU},
		{"aten::rnn_tanh",
			"aten::rnn_tanh.input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor)",
			"aten::rnn_tanh.data(Tensor data, Tensor batch_sizes, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional) -> (Tensor, Tensor)",
			rnnTanh},
		{"aten::rnn_relu",
			"aten::rnn_relu.input(Tensor input, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional, bool batch_first) -> (Tensor, Tensor)",
			"aten::rnn_relu.data(Tensor data, Tensor batch_sizes, Tensor hx, Tensor[] params, bool has_biases, int num_layers, float dropout, bool train, bool bidirectional) -> (Tensor, Tensor)",
			rnnRelu},
	} {
		RegisterOut(o.name, func(n *graph.Node) Kernel {
			k := &rnnSeq{mode: o.mode, inputWhat: o.mode.String() + " input"}
			switch {
			case n.Matches(o.input):
			case n.Matches(o.data):
				k.packed = true
			default:
				return nil
			}
			pi := 2
			if k.packed {
				pi = 3
			}
			if ws := rnnConstTensors(n.Inputs[pi]); ws != nil {
				k.pre = make([]*gemm.PrepackedB, len(ws))
				k.preT = make([]*ivalue.Tensor, len(ws))
				for i, w := range ws {
					k.pre[i], k.preT[i] = rnnPrepackTensor(w)
				}
			}
			return k.run
		})
	}
}

// rnnConstTensors returns the tensors of a Tensor[] input that is a
// constant, or a prim::ListConstruct of constants (frozen graphs), else
// nil.
func rnnConstTensors(v *graph.Value) []*ivalue.Tensor {
	var ts []*ivalue.Tensor
	if c, ok := graph.ConstantValue(v); ok {
		l := c.List()
		if l == nil {
			return nil
		}
		for _, it := range l.Items {
			if it.Tensor() == nil {
				return nil
			}
			ts = append(ts, it.Tensor())
		}
		return ts
	}
	if v.Node == nil || v.Node.Kind != graph.KindListConstruct {
		return nil
	}
	for _, in := range v.Node.Inputs {
		c, ok := graph.ConstantValue(in)
		if !ok || c.Tensor() == nil {
			return nil
		}
		ts = append(ts, c.Tensor())
	}
	return ts
}

func (k *rnnSeq) preFor(i int, w *ivalue.Tensor) *gemm.PrepackedB {
	if i < len(k.pre) && k.preT[i] == w {
		return k.pre[i]
	}
	return nil
}

func (k *rnnSeq) run(p *ProcessedNode) error {
	name := k.mode.String()
	o := 0 // input index shift of the .data overload (batch_sizes)
	if k.packed {
		o = 1
	}
	x, err := gemmInput(p, 0, k.inputWhat)
	if err != nil {
		return err
	}
	st, _ := p.State.(*rnnState)
	if st == nil {
		st = &rnnState{}
		p.State = st
	}
	var h0, c0 *ivalue.Tensor
	if k.mode == rnnLSTM {
		l := p.Input(1 + o).List()
		if l == nil || len(l.Items) != 2 {
			return Errorf("lstm expects two hidden states")
		}
		h0, c0 = l.Items[0].Tensor(), l.Items[1].Tensor()
		if h0 == nil || c0 == nil {
			return Errorf("lstm: expected hx to hold two Tensors")
		}
	} else if h0 = p.Tensor(1 + o); h0 == nil {
		return Errorf("%s: expected a Tensor hx, got %s", name, p.Input(1+o).Kind())
	}
	pl := p.Input(2 + o).List()
	if pl == nil {
		return Errorf("%s: expected a Tensor[] params, got %s", name, p.Input(2+o).Kind())
	}
	st.params = st.params[:0]
	for i := range pl.Items {
		w := pl.Items[i].Tensor()
		if w == nil || w.DType() != ivalue.Float32 {
			return Errorf("%s: expected params[%d] to be a float32 Tensor", name, i)
		}
		st.params = append(st.params, w)
	}
	hasBias := p.Bool(3 + o)
	L := int(p.Int(4 + o))
	dropout, train, bi := p.Float(5+o), p.Bool(6+o), p.Bool(7+o)
	bf := !k.packed && p.Bool(8)
	if L < 1 {
		return Errorf("%s: num_layers must be at least 1, got %d", name, L)
	}
	if train && dropout > 0 && L > 1 {
		return Errorf("%s: dropout %g between layers in training mode is random; only train=False (or dropout 0) is supported", name, dropout)
	}
	D := 1
	if bi {
		D = 2
	}
	for i, t := range []*ivalue.Tensor{h0, c0} {
		if t != nil && (t.DType() != ivalue.Float32 || t.Dim() != 3) {
			return Errorf("%s: expected hidden state %d to be a 3-d float32 tensor (layers*directions, batch, hidden), got %s %v", name, i, t.DType(), t.Sizes())
		}
	}
	// Projections (LSTM proj_size) show as h and c of different sizes.
	proj := c0 != nil && h0.Size(2) != c0.Size(2)
	per := 2
	if hasBias {
		per = 4
	}
	if proj {
		per++
	}
	if len(st.params) != L*D*per {
		return Errorf("%s: got an incorrect number of RNN parameters: expected %d (%d layers x %d directions x %d), got %d", name, L*D*per, L, D, per, len(st.params))
	}
	G := k.mode.gates()
	w0 := st.params[1]
	if w0.Dim() != 2 || w0.Size(0)%G != 0 {
		return Errorf("%s: expected w_hh of sizes [%d*hidden, hidden], got %v", name, G, w0.Sizes())
	}
	H := w0.Size(0) / G
	P := H // the size of h: proj_size with projections
	if proj {
		P = h0.Size(2)
	}
	GH := G * H

	// Geometry: T steps, B batch rows, N rows in all, row order.
	var T, B, N, I, sB int
	if k.packed {
		if x.Dim() != 2 {
			return Errorf("%s: expected packed data of 2 dims (rows, input_size), got sizes %v", name, x.Sizes())
		}
		if err := st.packedLayout(p.Tensor(1), x.Size(0)); err != nil {
			return Errorf("%s: %v", name, err)
		}
		T, N, I, sB = len(st.bs), x.Size(0), x.Size(1), 1
		B = st.bs[0]
	} else {
		if x.Dim() != 3 {
			return Errorf("%s: expected input of 3 dims (seq, batch, input_size), got sizes %v", name, x.Sizes())
		}
		T, B, I = x.Size(0), x.Size(1), x.Size(2)
		if bf {
			T, B = B, T
		}
		if T == 0 {
			return Errorf("%s: expected a sequence of at least one step, got input sizes %v", name, x.Sizes())
		}
		N = T * B
		st.rowStart, st.bs = st.rowStart[:0], st.bs[:0]
		step, sb := B, 1
		if bf {
			step, sb = 1, T
		}
		for t := 0; t < T; t++ {
			st.rowStart = append(st.rowStart, t*step)
			st.bs = append(st.bs, B)
		}
		sB = sb
	}
	if h0.Size(0) != L*D || h0.Size(1) != B || h0.Size(2) != P {
		return Errorf("%s: expected hidden size [%d, %d, %d], got %v", name, L*D, B, P, h0.Sizes())
	}
	if c0 != nil && (c0.Size(0) != L*D || c0.Size(1) != B || c0.Size(2) != H) {
		return Errorf("%s: expected cell state size [%d, %d, %d], got %v", name, L*D, B, H, c0.Sizes())
	}
	ldo := D * P
	st.sB, st.H, st.P, st.GH, st.ldo, st.proj = sB, H, P, GH, ldo, proj
	switch {
	case k.packed:
		st.sOut = append(st.sOut[:0], N, ldo)
	case bf:
		st.sOut = append(st.sOut[:0], B, T, ldo)
	default:
		st.sOut = append(st.sOut[:0], T, B, ldo)
	}
	st.sH = append(st.sH[:0], L*D, B, P)
	out, hn := p.OutTensor(0), p.OutTensor(1)
	out.Resize(ivalue.Float32, st.sOut)
	hn.Resize(ivalue.Float32, st.sH)
	outData, hnData := out.F32Contig(), hn.F32Contig()
	var cnData []float32
	if k.mode == rnnLSTM {
		st.sC = append(st.sC[:0], L*D, B, H)
		cn := p.OutTensor(2)
		cn.Resize(ivalue.Float32, st.sC)
		cnData = cn.F32Contig()
	}
	if k.packed {
		st.last = st.last[:0]
		for b := 0; b < B; b++ {
			st.last = append(st.last, 0)
		}
		for t, m := range st.bs {
			for b := 0; b < m; b++ {
				st.last[b] = t
			}
		}
	}

	st.gi = rnnBuf(st.gi, N*GH)
	st.h0 = rnnBuf(st.h0, B*P)
	st.bias = rnnBuf(st.bias, GH)
	st.bhn = rnnBuf(st.bhn, H)
	if k.mode == rnnGRU {
		st.gh = rnnBuf(st.gh, B*GH)
	}
	if proj {
		st.hraw = rnnBuf(st.hraw, B*H)
	}
	h0d, h0s := h0.F32(), h0.Strides()
	sc := p.Scratch
	for l := 0; l < L; l++ {
		// The layer's input rows as a gemm operand.
		inL := D * P
		var a gemm.Mat
		if l == 0 {
			inL = I
			lead := x.Dim() - 1
			if rs, ok := gemmRowStride(x, lead); ok {
				a = gemm.Mat{Data: x.F32(), Off: x.Offset(), RS: rs, CS: x.Strides()[lead]}
			} else {
				st.xbuf = rnnBuf(st.xbuf, N*I)
				gemmCopyContig(st.xbuf, x)
				a = gemm.Mat{Data: st.xbuf, RS: I, CS: 1}
			}
		} else {
			a = gemm.Mat{Data: st.bufs[(l-1)%2], RS: ldo, CS: 1}
		}
		ob := outData
		if l < L-1 {
			st.bufs[l%2] = rnnBuf(st.bufs[l%2], N*ldo)
			ob = st.bufs[l%2]
		}
		for d := 0; d < D; d++ {
			ld := l*D + d
			base := ld * per
			wih, whh := st.params[base], st.params[base+1]
			var bih, bhh, whr *ivalue.Tensor
			if hasBias {
				bih, bhh = st.params[base+2], st.params[base+3]
			}
			if proj {
				whr = st.params[base+per-1]
			}
			if wih.Dim() != 2 || wih.Size(0) != GH || wih.Size(1) != inL {
				return Errorf("%s: expected w_ih of layer %d sizes [%d, %d], got %v", name, l, GH, inL, wih.Sizes())
			}
			if whh.Dim() != 2 || whh.Size(0) != GH || whh.Size(1) != P {
				return Errorf("%s: expected w_hh of layer %d sizes [%d, %d], got %v", name, l, GH, P, whh.Sizes())
			}
			for _, b := range []*ivalue.Tensor{bih, bhh} {
				if b != nil && (b.Dim() != 1 || b.Size(0) != GH) {
					return Errorf("%s: expected biases of layer %d sizes [%d], got %v", name, l, GH, b.Sizes())
				}
			}
			if whr != nil && (whr.Dim() != 2 || whr.Size(0) != P || whr.Size(1) != H) {
				return Errorf("%s: expected w_hr of layer %d sizes [%d, %d], got %v", name, l, P, H, whr.Sizes())
			}

			// Input projections of all steps: gi = x W_ih^T + bias.
			rnnCombinedBias(k.mode, st.bias, st.bhn, bih, bhh, H)
			var beta float32
			if hasBias {
				for r := 0; r < N; r++ {
					copy(st.gi[r*GH:r*GH+GH], st.bias)
				}
				beta = 1
			}
			rnnMatmulWT(sc, N, a, wih, k.preFor(base, wih), beta, st.gi, 0, GH)

			rnnCopy2D(st.h0, h0d, h0.Offset()+ld*h0s[0], B, P, h0s[1], h0s[2])
			var cs []float32
			if k.mode == rnnLSTM {
				cs = cnData[ld*B*H : (ld+1)*B*H]
				cst := c0.Strides()
				rnnCopy2D(cs, c0.F32(), c0.Offset()+ld*cst[0], B, H, cst[1], cst[2])
			}
			k.recur(sc, st, d, ob, cs, whh, whr, k.preFor(base+1, whh), k.preFor(base+per-1, whr))
			// h_n: each row's output at its last step (step 0 backwards).
			hd := hnData[ld*B*P : (ld+1)*B*P]
			for b := 0; b < B; b++ {
				t := 0
				if d == 0 {
					t = T - 1
					if k.packed {
						t = st.last[b]
					}
				}
				ho := (st.rowStart[t]+b*sB)*ldo + d*P
				copy(hd[b*P:b*P+P], ob[ho:ho+P])
			}
		}
	}
	return nil
}

// packedLayout reads batch_sizes (int64, one per step, non-increasing,
// summing to the rows of data) into st.bs and st.rowStart.
func (st *rnnState) packedLayout(bsT *ivalue.Tensor, rows int) error {
	if bsT == nil || bsT.DType() != ivalue.Int64 || bsT.Dim() != 1 {
		return Errorf("expected batch_sizes to be a 1-d int64 tensor")
	}
	T := bsT.Size(0)
	if T == 0 {
		return Errorf("expected at least one step in batch_sizes")
	}
	v, off, s := bsT.I64(), bsT.Offset(), bsT.Strides()[0]
	st.bs, st.rowStart = st.bs[:0], st.rowStart[:0]
	sum := 0
	for t := 0; t < T; t++ {
		b := int(v[off+t*s])
		if b <= 0 || (t > 0 && b > st.bs[t-1]) {
			return Errorf("batch_sizes must be positive and non-increasing, got %d at step %d", b, t)
		}
		st.rowStart = append(st.rowStart, sum)
		st.bs = append(st.bs, b)
		sum += b
	}
	if sum != rows {
		return Errorf("batch_sizes sum to %d but data has %d rows", sum, rows)
	}
	return nil
}

// recur runs direction d of one layer over all steps: per step, the
// recurrent projection h W_hh^T (added to the step's input projections,
// or into st.gh for GRU), the gate loop over the step's batch rows
// writing h into the layer output ob (through W_hr with projections),
// and the LSTM cell states in cs.
func (k *rnnSeq) recur(sc *gemm.Scratch, st *rnnState, d int, ob, cs []float32, whh, whr *ivalue.Tensor, preHH, preHR *gemm.PrepackedB) {
	T, sB, H, P, GH, ldo, proj := len(st.bs), st.sB, st.H, st.P, st.GH, st.ldo, st.proj
	for s := 0; s < T; s++ {
		t, prev := s, s-1
		if d == 1 {
			t, prev = T-1-s, T-s
		}
		m := st.bs[t]
		n1 := 0 // rows whose h is the previous step's output; the rest start from h0
		if s > 0 {
			n1 = min(m, st.bs[prev])
		}
		r0 := st.rowStart[t]
		c, coff, ldc, beta := st.gi, r0*GH, sB*GH, float32(1)
		if k.mode == rnnGRU {
			c, coff, ldc, beta = st.gh, 0, GH, 0
		}
		if n1 > 0 {
			rnnMatmulWT(sc, n1, gemm.Mat{Data: ob, Off: st.rowStart[prev]*ldo + d*P, RS: sB * ldo, CS: 1}, whh, preHH, beta, c, coff, ldc)
		}
		if m > n1 {
			rnnMatmulWT(sc, m-n1, gemm.Mat{Data: st.h0, Off: n1 * P, RS: P, CS: 1}, whh, preHH, beta, c, coff+n1*ldc, ldc)
		}
		for b := 0; b < m; b++ {
			r := r0 + b*sB
			g := st.gi[r*GH : r*GH+GH]
			ho := r*ldo + d*P
			switch k.mode {
			case rnnLSTM:
				cb := cs[b*H : b*H+H]
				if proj {
					lstmGates(g, cb, cb, st.hraw[b*H:b*H+H], H)
				} else {
					lstmGates(g, cb, cb, ob[ho:ho+P], H)
				}
			case rnnGRU:
				hp := st.h0[b*P : b*P+P]
				if b < n1 {
					pr := (st.rowStart[prev]+b*sB)*ldo + d*P
					hp = ob[pr : pr+P]
				}
				gruGates(g, st.gh[b*GH:b*GH+GH], st.bhn, hp, ob[ho:ho+P], H)
			default:
				rnnActivate(k.mode == rnnRelu, g, ob[ho:ho+P])
			}
		}
		if proj {
			rnnMatmulWT(sc, m, gemm.Mat{Data: st.hraw, RS: H, CS: 1}, whr, preHR, 0, ob, r0*ldo+d*P, sB*ldo)
		}
	}
}
