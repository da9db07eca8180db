package ops

import (
	"math"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// softmax and log_softmax along any dim of a possibly strided input,
// numerically stable (max subtracted, sums in float64).

type softmaxState struct{ ca, tmp *ivalue.Tensor }

func softmaxKernel(log bool, dtypeIdx int) Kernel {
	return func(p *ProcessedNode) error {
		a := p.Tensor(0)
		if a == nil {
			return Errorf("softmax: expected a tensor, got %s", p.Input(0).Kind())
		}
		st, _ := p.State.(*softmaxState)
		if st == nil {
			st = &softmaxState{}
			p.State = st
		}
		dt := a.DType()
		if dtypeIdx >= 0 && !p.IsNone(dtypeIdx) {
			d, err := ivalue.DTypeFromScalarType(p.Int(dtypeIdx))
			if err != nil {
				return err
			}
			dt = d
		}
		if !dt.IsFloat() {
			return Errorf("softmax: expected a floating point tensor or dtype, got %s", dt)
		}
		if a.Dim() > MaxIterDims {
			return Errorf("softmax supports tensors of rank at most %d", MaxIterDims)
		}
		d, err := ewWrapDim(p.Int(1), a.Dim())
		if err != nil {
			return err
		}
		cdt := computeDType(dt)
		ca, err := castScratch(a, cdt, &st.ca)
		if err != nil {
			return err
		}
		out := p.OutTensor(0)
		out.Resize(dt, a.Sizes())
		target := out
		if cdt != dt {
			if st.tmp == nil {
				st.tmp = &ivalue.Tensor{}
			}
			target = st.tmp
			target.Resize(cdt, a.Sizes())
		}
		if a.Numel() == 0 {
			return nil
		}
		var red [MaxIterDims]bool
		if a.Dim() > 0 {
			red[d] = true
		}
		pl := newRedPlan(ca, &red)
		n, inStride := 1, 0
		after := 1
		if a.Dim() > 0 {
			n, inStride = ca.Sizes()[d], ca.Strides()[d]
			for _, s := range a.Sizes()[d+1:] {
				after *= s
			}
		}
		switch cdt {
		case ivalue.Float32:
			softmaxLines(&pl, target.F32(), ca.F32(), n, inStride, after, log, true)
		case ivalue.Float64:
			softmaxLines(&pl, target.F64(), ca.F64(), n, inStride, after, log, false)
		}
		if target != out {
			return CastInto(out, target)
		}
		return nil
	}
}

// softmaxLines handles every line along the softmax dim: line j starts at
// pl.outerOffset(j) in x (stride s) and at (j/after)*n*after + j%after in
// the contiguous output (stride after).
// fast32 computes exp in single precision (float32 data: the result is
// float32 anyway); the sum still accumulates in float64.
func softmaxLines[T float32 | float64](pl *redPlan, o, x []T, n, s, after int, log, fast32 bool) {
	for j := 0; j < pl.outerCount; j++ {
		xi := pl.outerOffset(j)
		oi := (j/after)*n*after + j%after
		if !log {
			// The same arithmetic as the attention ops' (masked) softmax.
			attnSoftmax(o, oi, after, x, xi, s, nil, 0, 0, n)
			continue
		}
		mx := math.Inf(-1)
		for i := 0; i < n; i++ {
			mx = max(mx, float64(x[xi+i*s])) // NaN wins
		}
		var sum float64
		for i := 0; i < n; i++ {
			if fast32 {
				sum += float64(expf(float32(float64(x[xi+i*s]) - mx)))
			} else {
				sum += math.Exp(float64(x[xi+i*s]) - mx)
			}
		}
		ls := mx + math.Log(sum)
		for i := 0; i < n; i++ {
			o[oi+i*after] = T(float64(x[xi+i*s]) - ls)
		}
	}
}

func init() {
	for _, c := range []struct {
		name string
		log  bool
	}{{"softmax", false}, {"log_softmax", true}} {
		schema := "aten::" + c.name + ".int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor"
		private := "aten::_" + c.name + "(Tensor self, int dim, bool half_to_float) -> Tensor"
		log := c.log
		RegisterOut("aten::"+c.name, func(n *graph.Node) Kernel {
			if n.Matches(schema) {
				return softmaxKernel(log, 2)
			}
			return nil
		})
		RegisterOut("aten::_"+c.name, func(n *graph.Node) Kernel {
			if n.Matches(private) {
				return softmaxKernel(log, -1)
			}
			return nil
		})
	}
}
