package ops

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops/gemm"
)

// Recurrent cells: the gate loops the sequence ops (rnn.go) run per time
// step, and aten::lstm_cell, gru_cell, rnn_tanh_cell, rnn_relu_cell, one
// step as nn.LSTMCell and friends call it. The math is PyTorch's
// (aten/src/ATen/native/RNN.cpp): gates = x W_ih^T + b_ih + h W_hh^T + b_hh,
// chunked as LSTM (i, f, g, o), GRU (r, z, n).

// tanhf is tanh for float32, within 2 ulp: x itself below 2**-12 (keeps
// -0), Cephes' odd polynomial below 0.625, 1 - 2/(e**2x + 1) above (expf
// overflows to +Inf, giving 1).
func tanhf(x float32) float32 {
	ax := x
	if ax < 0 {
		ax = -ax
	}
	if ax < 0.625 {
		if ax < 1.0/4096 {
			return x
		}
		z := x * x
		p := float32(-5.70498872745e-3)
		p = p*z + 2.06390887954e-2
		p = p*z - 5.37397155531e-2
		p = p*z + 1.33314422036e-1
		p = p*z - 3.33332819422e-1
		return p*z*x + x
	}
	y := 1 - 2/(expf(ax+ax)+1) // NaN stays NaN
	if x < 0 {
		return -y
	}
	return y
}

// lstmGates applies one LSTM step to n hidden units: g holds the four
// gate pre-activations (i, f, g, o; 4n) and is overwritten, cx is the
// previous cell state; it writes the new cell state to cy (may be cx) and
// the hidden state to h. The activations run vectorised over whole
// gates, the products in plain loops.
func lstmGates(g, cx, cy, h []float32, n int) {
	rnnSigmoidVec(g[:2*n], g[:2*n])
	rnnTanhVec(g[2*n:3*n], g[2*n:3*n])
	rnnSigmoidVec(g[3*n:4*n], g[3*n:4*n])
	gi, gf, gg, go_ := g[:n], g[n:2*n], g[2*n:3*n], g[3*n:4*n]
	cx, cy, h = cx[:n], cy[:n], h[:n]
	for j := range cy {
		cy[j] = gf[j]*cx[j] + gi[j]*gg[j]
	}
	rnnTanhVec(h, cy)
	for j := range h {
		h[j] *= go_[j]
	}
}

// gruGates applies one GRU step to n hidden units: gi holds x W_ih^T
// plus the biases of r and z (both) and of n (b_in) and is overwritten,
// gh holds h W_hh^T without bias, bhn is b_hn (zeros without biases).
// n = tanh(gi_n + r*(gh_n + b_hn)), h' = (h - n)*z + n. h may be hprev.
func gruGates(gi, gh, bhn, hprev, h []float32, n int) {
	rz, hrz := gi[:2*n], gh[:2*n]
	for j := range rz {
		rz[j] += hrz[j]
	}
	rnnSigmoidVec(rz, rz)
	r, z, in := gi[:n], gi[n:2*n], gi[2*n:3*n]
	hn, bhn := gh[2*n:3*n], bhn[:n]
	for j := range in {
		in[j] += r[j] * (hn[j] + bhn[j])
	}
	rnnTanhVec(in, in)
	hprev, h = hprev[:n], h[:n]
	for j := range h {
		h[j] = (hprev[j]-in[j])*z[j] + in[j]
	}
}

// rnnActivate is the simple RNN's nonlinearity over g into h.
func rnnActivate(relu bool, g, h []float32) {
	h = h[:len(g)]
	if !relu {
		rnnTanhVec(h, g)
		return
	}
	for j, v := range g {
		if v < 0 { // NaN stays NaN, as torch.relu
			v = 0
		}
		h[j] = v
	}
}

// rnnBuf returns buf resized to n, reallocating only to grow.
func rnnBuf(buf []float32, n int) []float32 {
	if cap(buf) < n {
		return make([]float32, n)
	}
	return buf[:n]
}

// rnnCopy2D copies a rows x cols strided matrix into dst (contiguous).
func rnnCopy2D(dst, src []float32, off, rows, cols, rs, cs int) {
	for i := 0; i < rows; i++ {
		row := dst[i*cols : i*cols+cols]
		base := off + i*rs
		if cs == 1 {
			copy(row, src[base:base+cols])
			continue
		}
		for j := range row {
			row[j] = src[base+j*cs]
		}
	}
}

// rnnVec reads a 1-d float32 tensor of n elements (a bias) into dst.
func rnnVec(dst []float32, t *ivalue.Tensor, n int) {
	rnnCopy2D(dst, t.F32(), t.Offset(), 1, n, 0, t.Strides()[0])
}

// rnnPrepack packs a constant 2-d float32 weight W (out x in) as the B
// operand of x W^T, or returns nil.
func rnnPrepack(v *graph.Value) (*gemm.PrepackedB, *ivalue.Tensor) {
	c, ok := graph.ConstantValue(v)
	if !ok {
		return nil, nil
	}
	return rnnPrepackTensor(c.Tensor())
}

func rnnPrepackTensor(w *ivalue.Tensor) (*gemm.PrepackedB, *ivalue.Tensor) {
	if w == nil || w.DType() != ivalue.Float32 || w.Dim() != 2 || w.Numel() == 0 {
		return nil, nil
	}
	ws := w.Strides()
	return gemm.PrepackB(w.Size(0), w.Size(1), gemm.Mat{Data: w.F32(), Off: w.Offset(), RS: ws[1], CS: ws[0]}), w
}

// rnnMatmulWT computes C = A W^T + beta C for A m x k (W is n x k),
// from pre when W is the tensor it was packed from.
func rnnMatmulWT(sc *gemm.Scratch, m int, a gemm.Mat, w *ivalue.Tensor, pre *gemm.PrepackedB, beta float32, c []float32, coff, ldc int) {
	if pre != nil && m > 1 {
		gemm.WithPrepackedB(sc, m, 1, a, pre, beta, c, coff, ldc)
		return
	}
	ws := w.Strides()
	gemm.Gemm(sc, m, w.Size(0), w.Size(1), 1, a, gemm.Mat{Data: w.F32(), Off: w.Offset(), RS: ws[1], CS: ws[0]}, nil, beta, c, coff, ldc)
}

// rnnMatOf views the 2-d float32 tensor t as a gemm operand.
func rnnMatOf(t *ivalue.Tensor) gemm.Mat {
	s := t.Strides()
	return gemm.Mat{Data: t.F32(), Off: t.Offset(), RS: s[0], CS: s[1]}
}

const (
	lstmCellSchema    = "aten::lstm_cell(Tensor input, Tensor[] hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None) -> (Tensor, Tensor)"
	gruCellSchema     = "aten::gru_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None) -> Tensor"
	rnnTanhCellSchema = "aten::rnn_tanh_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None) -> Tensor"
	rnnReluCellSchema = "aten::rnn_relu_cell(Tensor input, Tensor hx, Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None) -> Tensor"
)

// rnnCell is the kernel of one cell op; preIH/preHH are the constant
// weights packed at preparation (nil otherwise).
type rnnCell struct {
	mode         rnnMode
	preIH, preHH *gemm.PrepackedB
	wIH, wHH     *ivalue.Tensor
	// name and what (the inputs' names) are for errors, made once.
	name string
	what [6]string
}

type rnnCellState struct {
	gates, gh, bias, bhn []float32
	sizes                []int
}

func init() {
	for _, c := range []struct {
		name, schema string
		mode         rnnMode
	}{
		{"aten::lstm_cell", lstmCellSchema, rnnLSTM},
		{"aten::gru_cell", gruCellSchema, rnnGRU},
		{"aten::rnn_tanh_cell", rnnTanhCellSchema, rnnTanh},
		{"aten::rnn_relu_cell", rnnReluCellSchema, rnnRelu},
	} {
		RegisterOut(c.name, func(n *graph.Node) Kernel {
			if !n.Matches(c.schema) {
				return nil
			}
			k := &rnnCell{mode: c.mode, name: c.mode.String() + "_cell"}
			for i, a := range []string{"input", "hx", "w_ih", "w_hh", "b_ih", "b_hh"} {
				k.what[i] = k.name + " " + a
			}
			k.preIH, k.wIH = rnnPrepack(n.Inputs[2])
			k.preHH, k.wHH = rnnPrepack(n.Inputs[3])
			return k.run
		})
	}
}

func (k *rnnCell) run(p *ProcessedNode) error {
	name := k.name
	x, err := gemmInput(p, 0, k.what[0])
	if err != nil {
		return err
	}
	var h, cx *ivalue.Tensor
	if k.mode == rnnLSTM {
		l := p.Input(1).List()
		if l == nil || len(l.Items) != 2 {
			return Errorf("lstm_cell expects two hidden states, got %s", p.Input(1).Kind())
		}
		h, cx = l.Items[0].Tensor(), l.Items[1].Tensor()
		if h == nil || cx == nil {
			return Errorf("lstm_cell: expected hx to hold two Tensors")
		}
	} else {
		h = p.Tensor(1)
		if h == nil {
			return Errorf("%s: expected a Tensor hx, got %s", name, p.Input(1).Kind())
		}
	}
	wih, err := gemmInput(p, 2, k.what[2])
	if err != nil {
		return err
	}
	whh, err := gemmInput(p, 3, k.what[3])
	if err != nil {
		return err
	}
	bih, err := gemmOptInput(p, 4, k.what[4])
	if err != nil {
		return err
	}
	bhh, err := gemmOptInput(p, 5, k.what[5])
	if err != nil {
		return err
	}
	if wih.Dim() != 2 || whh.Dim() != 2 {
		return Errorf("%s: expected 2-d weights, got w_ih %v and w_hh %v", name, wih.Sizes(), whh.Sizes())
	}
	G := k.mode.gates()
	H := whh.Size(1)
	GH := G * H
	if x.Dim() != 2 {
		return Errorf("%s: expected a 2-d input (batch, input_size), got sizes %v", name, x.Sizes())
	}
	B, I := x.Size(0), x.Size(1)
	if I != wih.Size(1) {
		return Errorf("%s: input has inconsistent input_size: got %d expected %d", name, I, wih.Size(1))
	}
	if wih.Size(0) != GH || whh.Size(0) != GH {
		return Errorf("%s: expected weights of %d rows (%d gates x hidden %d), got w_ih %v and w_hh %v", name, GH, G, H, wih.Sizes(), whh.Sizes())
	}
	for i, t := range []*ivalue.Tensor{h, cx} {
		if t == nil {
			continue
		}
		if t.DType() != ivalue.Float32 || t.Dim() != 2 || t.Size(0) != B || t.Size(1) != H {
			return Errorf("%s: expected hidden state %d of float32 sizes [%d, %d], got %s %v", name, i, B, H, t.DType(), t.Sizes())
		}
	}
	for _, b := range []*ivalue.Tensor{bih, bhh} {
		if b != nil && (b.Dim() != 1 || b.Size(0) != GH) {
			return Errorf("%s: expected biases of sizes [%d], got %v", name, GH, b.Sizes())
		}
	}
	st, _ := p.State.(*rnnCellState)
	if st == nil {
		st = &rnnCellState{}
		p.State = st
	}
	// gates = x W_ih^T + (b_ih + b_hh) [+ h W_hh^T: into gh for GRU]
	st.gates = rnnBuf(st.gates, B*GH)
	st.bias = rnnBuf(st.bias, GH)
	st.bhn = rnnBuf(st.bhn, H)
	rnnCombinedBias(k.mode, st.bias, st.bhn, bih, bhh, H)
	beta := float32(0)
	if bih != nil || bhh != nil {
		for b := 0; b < B; b++ {
			copy(st.gates[b*GH:b*GH+GH], st.bias)
		}
		beta = 1
	}
	preIH, preHH := k.preIH, k.preHH
	if wih != k.wIH {
		preIH = nil
	}
	if whh != k.wHH {
		preHH = nil
	}
	rnnMatmulWT(p.Scratch, B, rnnMatOf(x), wih, preIH, beta, st.gates, 0, GH)
	hm := rnnMatOf(h)
	if k.mode == rnnGRU {
		st.gh = rnnBuf(st.gh, B*GH)
		rnnMatmulWT(p.Scratch, B, hm, whh, preHH, 0, st.gh, 0, GH)
	} else {
		rnnMatmulWT(p.Scratch, B, hm, whh, preHH, 1, st.gates, 0, GH)
	}
	st.sizes = append(st.sizes[:0], B, H)
	hy := p.OutTensor(0)
	hy.Resize(ivalue.Float32, st.sizes)
	hd := hy.F32Contig()
	switch k.mode {
	case rnnLSTM:
		cy := p.OutTensor(1)
		cy.Resize(ivalue.Float32, st.sizes)
		cd := cy.F32Contig()
		rnnCopy2D(cd, cx.F32(), cx.Offset(), B, H, cx.Strides()[0], cx.Strides()[1])
		for b := 0; b < B; b++ {
			row := cd[b*H : b*H+H]
			lstmGates(st.gates[b*GH:b*GH+GH], row, row, hd[b*H:b*H+H], H)
		}
	case rnnGRU:
		// h' needs h elementwise: copy it into the output first.
		rnnCopy2D(hd, h.F32(), h.Offset(), B, H, h.Strides()[0], h.Strides()[1])
		for b := 0; b < B; b++ {
			row := hd[b*H : b*H+H]
			gruGates(st.gates[b*GH:b*GH+GH], st.gh[b*GH:b*GH+GH], st.bhn, row, row, H)
		}
	default:
		rnnActivate(k.mode == rnnRelu, st.gates[:B*H], hd)
	}
	return nil
}

// rnnCombinedBias writes the bias added to the input projection: b_ih +
// b_hh, but for GRU's n gate b_in only (b_hn goes to bhn, applied inside
// r * (W_hn h + b_hn)). Missing biases count as zeros.
func rnnCombinedBias(mode rnnMode, bias, bhn []float32, bih, bhh *ivalue.Tensor, H int) {
	clear(bias)
	clear(bhn)
	GH := len(bias)
	if bih != nil {
		rnnVec(bias, bih, GH)
	}
	if bhh == nil {
		return
	}
	n := GH
	if mode == rnnGRU {
		n = 2 * H
		hs := bhh.Strides()[0]
		rnnCopy2D(bhn, bhh.F32(), bhh.Offset()+n*hs, 1, H, 0, hs)
	}
	src, off, s := bhh.F32(), bhh.Offset(), bhh.Strides()[0]
	for j := 0; j < n; j++ {
		bias[j] += src[off+j*s]
	}
}
