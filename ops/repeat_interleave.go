package ops

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// aten::repeat_interleave, all three overloads, any dtype for self:
// slice i along dim is repeated repeats[i] times (a single repeat count
// applies to every slice; no dim flattens self first).

const (
	repIntSchema    = "aten::repeat_interleave.self_int(Tensor self, int repeats, int? dim=None, *, int? output_size=None) -> Tensor"
	repTensorSchema = "aten::repeat_interleave.self_Tensor(Tensor self, Tensor repeats, int? dim=None, *, int? output_size=None) -> Tensor"
	repOnlySchema   = "aten::repeat_interleave.Tensor(Tensor repeats, *, int? output_size=None) -> Tensor"
)

type repState struct {
	counts []int
	sizes  []int
	flat   *ivalue.Tensor
}

func init() {
	RegisterOut("aten::repeat_interleave", func(n *graph.Node) Kernel {
		switch {
		case n.Matches(repIntSchema):
			return func(p *ProcessedNode) error { return repKernel(p, false) }
		case n.Matches(repTensorSchema):
			return func(p *ProcessedNode) error { return repKernel(p, true) }
		case n.Matches(repOnlySchema):
			return repIndexKernel
		}
		return nil
	})
}

func repStateOf(p *ProcessedNode) *repState {
	st, _ := p.State.(*repState)
	if st == nil {
		st = &repState{}
		p.State = st
	}
	return st
}

// repCounts reads a 1-d (or single-element) integer repeats tensor.
func repCounts(st *repState, r *ivalue.Tensor) error {
	if r.Dim() > 1 {
		return Errorf("repeat_interleave: repeats must be 0-dim or 1-dim tensor")
	}
	if !r.DType().IsInt() {
		return Errorf("repeat_interleave: repeats has to be Long or Int tensor, got %s", r.DType())
	}
	n := r.Numel()
	st.counts = shapeGrow(st.counts, n)
	for i := 0; i < n; i++ {
		off := r.Offset()
		if r.Dim() == 1 {
			off += i * r.Strides()[0]
		}
		v := ReadScalar(r, off).AsInt()
		if v < 0 {
			return Errorf("repeat_interleave: repeats can not be negative")
		}
		st.counts[i] = int(v)
	}
	return nil
}

// repIndexKernel: repeat_interleave(repeats) = [0]*r0 + [1]*r1 + ...
// in repeats' dtype.
func repIndexKernel(p *ProcessedNode) error {
	r := p.Tensor(0)
	if r == nil {
		return Errorf("repeat_interleave: expected a tensor, got %s", p.Input(0).Kind())
	}
	st := repStateOf(p)
	if err := repCounts(st, r); err != nil {
		return err
	}
	total := 0
	for _, c := range st.counts {
		total += c
	}
	if !p.IsNone(1) && int(p.Int(1)) != total {
		return Errorf("repeat_interleave: output_size %d does not match the sum of repeats %d", p.Int(1), total)
	}
	st.sizes = append(st.sizes[:0], total)
	out := p.OutTensor(0)
	out.Resize(r.DType(), st.sizes)
	b := out.Storage().Data
	k := out.Offset()
	for i, c := range st.counts {
		for j := 0; j < c; j++ {
			copyStoreI(b, r.DType(), k, int64(i))
			k++
		}
	}
	return nil
}

func repKernel(p *ProcessedNode, tensorRepeats bool) error {
	x := p.Tensor(0)
	if x == nil {
		return Errorf("repeat_interleave: expected a tensor, got %s", p.Input(0).Kind())
	}
	st := repStateOf(p)
	if tensorRepeats {
		r := p.Tensor(1)
		if r == nil {
			return Errorf("repeat_interleave: expected a tensor of repeats, got %s", p.Input(1).Kind())
		}
		if err := repCounts(st, r); err != nil {
			return err
		}
	} else {
		v := int(p.Int(1))
		if v < 0 {
			return Errorf("repeat_interleave: repeats can not be negative")
		}
		st.counts = append(st.counts[:0], v)
	}
	// Self, flattened when no dim is given, contiguous.
	src := x
	dim := 0
	if p.IsNone(2) {
		if st.flat == nil {
			st.flat = &ivalue.Tensor{}
		}
		st.sizes = append(st.sizes[:0], x.Numel())
		st.flat.Resize(x.DType(), st.sizes)
		ivalue.CopyInto(st.flat, x)
		src = st.flat
	} else {
		d, err := ewWrapDim(p.Int(2), x.Dim())
		if err != nil {
			return err
		}
		dim = d
		if !x.IsContiguous() {
			if st.flat == nil {
				st.flat = &ivalue.Tensor{}
			}
			st.flat.Resize(x.DType(), x.Sizes())
			ivalue.CopyInto(st.flat, x)
			src = st.flat
		}
	}
	n := 1
	if src.Dim() > 0 {
		n = src.Size(dim)
	}
	if len(st.counts) != 1 && len(st.counts) != n {
		return Errorf("repeat_interleave: repeats must have the same size as input along dim, got %d and %d", len(st.counts), n)
	}
	total := 0
	for i := 0; i < n; i++ {
		total += st.counts[min(i, len(st.counts)-1)]
	}
	if !p.IsNone(3) && int(p.Int(3)) != total {
		return Errorf("repeat_interleave: output_size %d does not match the sum of repeats %d", p.Int(3), total)
	}
	st.sizes = append(st.sizes[:0], src.Sizes()...)
	if len(st.sizes) == 0 {
		st.sizes = append(st.sizes, total)
	} else {
		st.sizes[dim] = total
	}
	out := p.OutTensor(0)
	out.Resize(x.DType(), st.sizes)
	if out.Numel() == 0 {
		return nil
	}
	es := x.DType().Size()
	inner := es
	for _, s := range src.Sizes()[min(dim+1, src.Dim()):] {
		inner *= s
	}
	outer := 1
	for _, s := range src.Sizes()[:dim] {
		outer *= s
	}
	sd := src.Storage().Data[src.Offset()*es:]
	d := out.Storage().Data[out.Offset()*es:]
	k := 0
	for o := 0; o < outer; o++ {
		for i := 0; i < n; i++ {
			row := sd[(o*n+i)*inner : (o*n+i+1)*inner]
			for j := st.counts[min(i, len(st.counts)-1)]; j > 0; j-- {
				copy(d[k:k+inner], row)
				k += inner
			}
		}
	}
	return nil
}
