package ops

import (
	"math"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops/gemm"
)

// aten::linear and aten::addmm on the shared gemm.

const (
	linearSchema = "aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor"
	// LinearActSchema is gosr's linear layer with an activation epilogue
	// (passes.FuseLinearAct makes it of a linear and the activation that
	// alone reads it): act is relu, relu6 or a name FusedActivation
	// knows.
	LinearActSchema = "gosr::linear_act(Tensor input, Tensor weight, Tensor? bias, str act) -> Tensor"
	addmmSchema     = "aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor"
)

// gemmState is the per-runtime scratch of the gemm-based ops.
type gemmState struct {
	shape          []int
	bshape, sa, sb []int
	idx            []int
	buf            []float32 // contiguous copy of an operand no matrix view fits
}

func gemmStateOf(p *ProcessedNode) *gemmState {
	st, _ := p.State.(*gemmState)
	if st == nil {
		st = &gemmState{}
		p.State = st
	}
	return st
}

// gemmInput returns input i as a float32 tensor, or an error naming what.
func gemmInput(p *ProcessedNode, i int, what string) (*ivalue.Tensor, error) {
	t := p.Tensor(i)
	if t == nil {
		return nil, Errorf("%s: expected a Tensor, got %s", what, p.Input(i).Kind())
	}
	if t.DType() != ivalue.Float32 {
		return nil, Errorf("%s: expected a float32 tensor, got %s", what, t.DType())
	}
	return t, nil
}

// gemmOptInput is gemmInput for an optional tensor (nil when None).
func gemmOptInput(p *ProcessedNode, i int, what string) (*ivalue.Tensor, error) {
	if p.IsNone(i) {
		return nil, nil
	}
	return gemmInput(p, i, what)
}

// gemmRowStride reports whether dims [0, n) of t merge into one
// dimension, and its stride.
func gemmRowStride(t *ivalue.Tensor, n int) (int, bool) {
	sz, str := t.Sizes(), t.Strides()
	rs, prod := 0, 1
	for i := n - 1; i >= 0; i-- {
		if sz[i] == 1 {
			continue
		}
		if prod == 1 {
			rs, prod = str[i], sz[i]
			continue
		}
		if str[i] != rs*prod {
			return 0, false
		}
		prod *= sz[i]
	}
	return rs, true
}

// gemmMatrixOf views t, whose leading dims [0, nLead) fold into rows and
// whose last dim is the columns, as a matrix, copying into st.buf when
// the rows do not merge.
func gemmMatrixOf(t *ivalue.Tensor, nLead int, st *gemmState) gemm.Mat {
	return gemmMatrixInto(t, nLead, &st.buf)
}

// gemmMatrixInto is gemmMatrixOf copying into *buf (grown as needed).
func gemmMatrixInto(t *ivalue.Tensor, nLead int, buf *[]float32) gemm.Mat {
	d := t.Dim()
	cs := t.Strides()[d-1]
	if rs, ok := gemmRowStride(t, nLead); ok {
		return gemm.Mat{Data: t.F32(), Off: t.Offset(), RS: rs, CS: cs}
	}
	n := t.Numel()
	if cap(*buf) < n {
		*buf = make([]float32, n)
	}
	*buf = (*buf)[:n]
	gemmCopyContig(*buf, t)
	cols := t.Sizes()[d-1]
	return gemm.Mat{Data: *buf, RS: cols, CS: 1}
}

// gemmCopyContig copies t's elements in logical order into dst.
func gemmCopyContig(dst []float32, t *ivalue.Tensor) {
	src := t.F32()
	sz, str := t.Sizes(), t.Strides()
	d := len(sz)
	var idx [MaxIterDims]int
	if d > MaxIterDims {
		k := 0
		t.ForEachIndex(func(i int) { dst[k] = src[i]; k++ })
		return
	}
	n := t.Numel()
	last, lstr := sz[d-1], str[d-1]
	off := t.Offset()
	for k := 0; k < n; k += last {
		row := dst[k : k+last]
		for j := range row {
			row[j] = src[off+j*lstr]
		}
		for a := d - 2; a >= 0; a-- {
			idx[a]++
			off += str[a]
			if idx[a] < sz[a] {
				break
			}
			off -= idx[a] * str[a]
			idx[a] = 0
		}
	}
}

// gemmFillBroadcast writes src broadcast to [m, n] into c (contiguous).
func gemmFillBroadcast(c []float32, m, n int, src *ivalue.Tensor) error {
	d := src.Dim()
	if d > 2 {
		return Errorf("expected a tensor broadcastable to [%d, %d], got sizes %v", m, n, src.Sizes())
	}
	sz, str := src.Sizes(), src.Strides()
	rs, cs := 0, 0
	if d >= 1 {
		if sz[d-1] != n && sz[d-1] != 1 {
			return Errorf("expected a tensor broadcastable to [%d, %d], got sizes %v", m, n, sz)
		}
		if sz[d-1] == n {
			cs = str[d-1]
		}
	}
	if d == 2 {
		if sz[0] != m && sz[0] != 1 {
			return Errorf("expected a tensor broadcastable to [%d, %d], got sizes %v", m, n, sz)
		}
		if sz[0] == m {
			rs = str[0]
		}
	}
	data, off := src.F32(), src.Offset()
	for i := 0; i < m; i++ {
		row := c[i*n : i*n+n]
		base := off + i*rs
		if cs == 1 {
			copy(row, data[base:base+n])
			continue
		}
		for j := range row {
			row[j] = data[base+j*cs]
		}
	}
	return nil
}

func init() {
	RegisterOut("aten::linear", func(n *graph.Node) Kernel {
		if !n.Matches(linearSchema) {
			return nil
		}
		// A constant weight (frozen graphs) is packed once here, so
		// batched runs skip packing it; batch-1 runs read it directly.
		pre, preW := linearPrepack(n, 1)
		return func(p *ProcessedNode) error { return linearKernel(p, pre, preW) }
	})
	RegisterOut("gosr::linear_act", func(n *graph.Node) Kernel {
		if !n.Matches(LinearActSchema) {
			return nil
		}
		pre, preW := linearPrepack(n, 1)
		return func(p *ProcessedNode) error {
			if err := linearKernel(p, pre, preW); err != nil {
				// Name the op the model has (the fused node replaced it).
				act := "activation"
				if v := p.Input(3); v.Kind() == ivalue.KindString {
					act = v.Str()
				}
				return Errorf("aten::linear (with its %s): %v", act, err)
			}
			return nil
		}
	})
	RegisterOut("aten::addmm", func(n *graph.Node) Kernel {
		if !n.Matches(addmmSchema) {
			return nil
		}
		// A constant mat2 is packed once here, as linear's weight.
		var pre *gemm.PrepackedB
		var preW *ivalue.Tensor
		if c, ok := graph.ConstantValue(n.Inputs[2]); ok {
			if w := c.Tensor(); w != nil && w.DType() == ivalue.Float32 && w.Dim() == 2 {
				ws := w.Strides()
				pre = gemm.PrepackB(w.Size(1), w.Size(0), gemm.Mat{Data: w.F32(), Off: w.Offset(), RS: ws[0], CS: ws[1]})
				preW = w
			}
		}
		return func(p *ProcessedNode) error { return addmmKernel(p, pre, preW) }
	})
}

func linearKernel(p *ProcessedNode, pre *gemm.PrepackedB, preW *ivalue.Tensor) error {
	x, err := gemmInput(p, 0, "linear input")
	if err != nil {
		return err
	}
	w, err := gemmInput(p, 1, "linear weight")
	if err != nil {
		return err
	}
	bias, err := gemmOptInput(p, 2, "linear bias")
	if err != nil {
		return err
	}
	if w.Dim() != 2 {
		return Errorf("linear weight: expected 2 dims [out_features, in_features], got sizes %v", w.Sizes())
	}
	if x.Dim() < 1 {
		return Errorf("linear input: expected at least 1 dim, got a 0-d tensor")
	}
	nOut, k := w.Size(0), w.Size(1)
	if x.Size(-1) != k {
		return Errorf("linear: input sizes %v and weight sizes %v cannot be multiplied (%d != %d)", x.Sizes(), w.Sizes(), x.Size(-1), k)
	}
	if bias != nil && (bias.Dim() > 1 || (bias.Dim() == 1 && bias.Size(0) != nOut && bias.Size(0) != 1)) {
		return Errorf("linear bias: expected sizes [%d], got %v", nOut, bias.Sizes())
	}
	st := gemmStateOf(p)
	st.shape = append(append(st.shape[:0], x.Sizes()[:x.Dim()-1]...), nOut)
	out := p.OutTensor(0)
	out.Resize(ivalue.Float32, st.shape)
	m := x.Numel() / max(k, 1)
	if k == 0 {
		m = out.Numel() / max(nOut, 1)
	}
	a := gemmMatrixOf(x, x.Dim()-1, st)
	var act linearAct
	if len(p.In) > 3 {
		if act, err = linearActOf(p.Input(3)); err != nil {
			return err
		}
	}
	return linearRun(p.Scratch, m, nOut, k, a, w, bias, pre, preW, out.F32Contig(), act)
}

// linearAct is gosr::linear_act's activation: a clamp (relu, relu6) or
// an elementwise function.
type linearAct struct {
	clamp gemm.Clamp
	f     gemm.Activation
}

func (a linearAct) on() bool { return a.clamp.On || a.f != nil }

// apply runs the activation over c, once the product is done.
func (a linearAct) apply(c []float32) {
	if a.clamp.On {
		gemm.Clamp32(c, c, a.clamp.Lo, a.clamp.Hi)
	}
	if a.f != nil {
		a.f(c)
	}
}

// linearActOf reads gosr::linear_act's activation name.
func linearActOf(v *ivalue.IValue) (linearAct, error) {
	if v.Kind() != ivalue.KindString {
		return linearAct{}, Errorf("linear_act: expected the activation's name, got %s", v.Kind())
	}
	switch name := v.Str(); name {
	case "relu":
		return linearAct{clamp: gemm.Clamp{On: true, Lo: 0, Hi: float32(math.Inf(1))}}, nil
	case "relu6":
		return linearAct{clamp: gemm.Clamp{On: true, Lo: 0, Hi: 6}}, nil
	default:
		if f := FusedActivation(name); f != nil {
			return linearAct{f: f}, nil
		}
		return linearAct{}, Errorf("linear_act: unknown activation %q (expected one of relu, relu6, silu, sigmoid, hardswish, hardsigmoid, gelu)", name)
	}
}

// linearPrepack packs input i of n, when it is a constant 2-d float32
// weight [out_features, in_features], for linearRun; nil otherwise.
func linearPrepack(n *graph.Node, i int) (*gemm.PrepackedB, *ivalue.Tensor) {
	c, ok := graph.ConstantValue(n.Inputs[i])
	if !ok {
		return nil, nil
	}
	w := c.Tensor()
	if w == nil || w.DType() != ivalue.Float32 || w.Dim() != 2 {
		return nil, nil
	}
	ws := w.Strides()
	return gemm.PrepackB(w.Size(0), w.Size(1), gemm.Mat{Data: w.F32(), Off: w.Offset(), RS: ws[1], CS: ws[0]}), w
}

// linearEpilogueMin is the least output (floats) whose bias linearRun
// adds as the gemm's epilogue: a large output then takes one pass less
// over memory; a small one stays in L1 either way, and filling it with
// the bias first spares the small paths (gemv, dots, A read in place)
// a clear and a pass per row (dlrm_like's and deep_and_wide's layers).
const linearEpilogueMin = 1 << 14

// linearRun writes c (m x nOut, contiguous) = a * w^T + bias for a m x k
// and w [nOut, k] (bias optional, broadcast over rows). pre is w packed
// by linearPrepack when w is preW.
//
// act, if on, follows: in the epilogue, on each finished block, for an
// output of linearEpilogueMin floats or more; else over c afterwards,
// while it is in L1.
func linearRun(sc *gemm.Scratch, m, nOut, k int, a gemm.Mat, w, bias *ivalue.Tensor, pre *gemm.PrepackedB, preW *ivalue.Tensor, c []float32, act linearAct) error {
	ws := w.Strides()
	b := gemm.Mat{Data: w.F32(), Off: w.Offset(), RS: ws[1], CS: ws[0]} // weight transposed, no copy
	var beta float32
	var ep gemm.Epilogue
	if act.on() && m*nOut >= linearEpilogueMin {
		ep.Clamp, ep.Act = act.clamp, act.f
		act = linearAct{}
	}
	switch {
	case bias == nil:
	case bias.Dim() == 1 && bias.DType() == ivalue.Float32 && m*nOut >= linearEpilogueMin:
		// Added to each block of C as it is finished (stride 0: one
		// value broadcast), not filled into C first.
		ep.Bias, ep.BiasOff, ep.BiasCols = bias.F32(), bias.Offset(), true
		if bias.Size(0) == nOut {
			ep.BiasStride = bias.Strides()[0]
		}
	default:
		if err := gemmFillBroadcast(c, m, nOut, bias); err != nil {
			return Errorf("linear bias: %v", err)
		}
		beta = 1
	}
	if pre != nil && w == preW && m > 1 {
		gemm.WithPrepackedBEpilogue(sc, m, 1, a, pre, beta, c, 0, nOut, ep)
	} else {
		gemm.GemmEpilogue(sc, m, nOut, k, 1, a, b, nil, beta, c, 0, nOut, ep)
	}
	act.apply(c[:m*nOut])
	return nil
}

func addmmKernel(p *ProcessedNode, pre *gemm.PrepackedB, preW *ivalue.Tensor) error {
	self, err := gemmInput(p, 0, "addmm self")
	if err != nil {
		return err
	}
	m1, err := gemmInput(p, 1, "addmm mat1")
	if err != nil {
		return err
	}
	m2, err := gemmInput(p, 2, "addmm mat2")
	if err != nil {
		return err
	}
	if m1.Dim() != 2 || m2.Dim() != 2 {
		return Errorf("addmm: expected 2-d mat1 and mat2, got sizes %v and %v", m1.Sizes(), m2.Sizes())
	}
	m, k, n := m1.Size(0), m1.Size(1), m2.Size(1)
	if m2.Size(0) != k {
		return Errorf("addmm: mat1 and mat2 shapes cannot be multiplied (%dx%d and %dx%d)", m, k, m2.Size(0), n)
	}
	beta, alpha := float32(p.Float(3)), float32(p.Float(4))
	st := gemmStateOf(p)
	st.shape = append(st.shape[:0], m, n)
	out := p.OutTensor(0)
	out.Resize(ivalue.Float32, st.shape)
	c := out.F32Contig()
	if beta != 0 {
		if err := gemmFillBroadcast(c, m, n, self); err != nil {
			return Errorf("addmm self: %v", err)
		}
	} else if st.bshape, err = BroadcastShapes(st.bshape[:0], self.Sizes(), st.shape); err != nil || self.Dim() > 2 {
		return Errorf("addmm self: expected a tensor broadcastable to [%d, %d], got sizes %v", m, n, self.Sizes())
	}
	s1, s2 := m1.Strides(), m2.Strides()
	a := gemm.Mat{Data: m1.F32(), Off: m1.Offset(), RS: s1[0], CS: s1[1]}
	if pre != nil && m2 == preW && m > 1 {
		gemm.WithPrepackedB(p.Scratch, m, alpha, a, pre, beta, c, 0, n)
		return nil
	}
	b := gemm.Mat{Data: m2.F32(), Off: m2.Offset(), RS: s2[0], CS: s2[1]}
	gemm.Gemm(p.Scratch, m, n, k, alpha, a, b, nil, beta, c, 0, n)
	return nil
}
