package ops

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// aten::sort, argsort and topk along any dim, float32/float64/int64: a
// stable merge sort of each slice's indices (detection.go's
// sortIndicesF32), NaN largest as in PyTorch. PyTorch's CPU sort is stable
// for every overload in 1.13; topk's order among equal values is
// unspecified there, here it is the index order.

const (
	sortSchema          = "aten::sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)"
	sortStableSchema    = "aten::sort.stable(Tensor self, *, bool? stable, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)"
	argsortSchema       = "aten::argsort(Tensor self, int dim=-1, bool descending=False) -> Tensor"
	argsortStableSchema = "aten::argsort.stable(Tensor self, *, bool stable, int dim=-1, bool descending=False) -> Tensor"
	topkSchema          = "aten::topk(Tensor self, int k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)"
)

type sortState struct {
	src      *ivalue.Tensor
	idx, tmp []int64
	sizes    []int
}

// sortOp describes where one overload's arguments are.
type sortOp struct {
	dimArg, descArg, kArg int // kArg < 0: sort, not topk
	values                bool
}

func init() {
	RegisterOut("aten::sort", func(n *graph.Node) Kernel {
		switch {
		case n.Matches(sortSchema):
			return sortOp{dimArg: 1, descArg: 2, kArg: -1, values: true}.kernel
		case n.Matches(sortStableSchema):
			return sortOp{dimArg: 2, descArg: 3, kArg: -1, values: true}.kernel
		}
		return nil
	})
	RegisterOut("aten::argsort", func(n *graph.Node) Kernel {
		switch {
		case n.Matches(argsortSchema):
			return sortOp{dimArg: 1, descArg: 2, kArg: -1}.kernel
		case n.Matches(argsortStableSchema):
			return sortOp{dimArg: 2, descArg: 3, kArg: -1}.kernel
		}
		return nil
	})
	RegisterOut("aten::topk", func(n *graph.Node) Kernel {
		if n.Matches(topkSchema) {
			return sortOp{dimArg: 2, descArg: 3, kArg: 1, values: true}.kernel
		}
		return nil
	})
}

func (op sortOp) kernel(p *ProcessedNode) error {
	x := p.Tensor(0)
	if x == nil {
		return Errorf("sort: expected a tensor, got %s", p.Input(0).Kind())
	}
	st, _ := p.State.(*sortState)
	if st == nil {
		st = &sortState{}
		p.State = st
	}
	nd := x.Dim()
	d := 0
	if nd > 0 {
		w, err := ewWrapDim(p.Int(op.dimArg), nd)
		if err != nil {
			return err
		}
		d = w
	} else if dd := p.Int(op.dimArg); dd != 0 && dd != -1 {
		return Errorf("Dimension out of range (expected to be in range of [-1, 0], but got %d)", dd)
	}
	desc := p.Bool(op.descArg)
	n := 1
	if nd > 0 {
		n = x.Size(d)
	}
	k := n
	if op.kArg >= 0 {
		k = int(p.Int(op.kArg))
		if k < 0 || k > n {
			return Errorf("selected index k out of range")
		}
	}
	st.sizes = shapeGrow(st.sizes, nd)
	copy(st.sizes, x.Sizes())
	if nd > 0 {
		st.sizes[d] = k
	}
	outer, inner := 1, 1
	for i := 0; i < d; i++ {
		outer *= x.Size(i)
	}
	for i := d + 1; i < nd; i++ {
		inner *= x.Size(i)
	}
	vi := 0
	if op.values {
		vi = 1
	}
	idxOut := p.OutTensor(vi)
	idxOut.Resize(ivalue.Int64, st.sizes)
	var valOut *ivalue.Tensor
	if op.values {
		valOut = p.OutTensor(0)
		valOut.Resize(x.DType(), st.sizes)
	}
	if x.Numel() == 0 {
		return nil
	}
	src := x
	if !x.IsContiguous() {
		if st.src == nil {
			st.src = &ivalue.Tensor{}
		}
		st.src.Resize(x.DType(), x.Sizes())
		ivalue.CopyInto(st.src, x)
		src = st.src
	}
	st.idx = growI64(st.idx, n)
	st.tmp = growI64(st.tmp, n)
	switch x.DType() {
	case ivalue.Float32:
		var vo []float32
		if valOut != nil {
			vo = valOut.F32Contig()
		}
		sortSlices(src.F32Contig(), vo, idxOut.I64Contig(), st, outer, n, inner, k, desc)
	case ivalue.Float64:
		var vo []float64
		if valOut != nil {
			vo = valOut.F64Contig()
		}
		sortSlices(src.F64Contig(), vo, idxOut.I64Contig(), st, outer, n, inner, k, desc)
	case ivalue.Int64:
		var vo []int64
		if valOut != nil {
			vo = valOut.I64Contig()
		}
		sortSlices(src.I64Contig(), vo, idxOut.I64Contig(), st, outer, n, inner, k, desc)
	default:
		return Errorf("sort: unsupported dtype %s (float32, float64, int64)", x.DType())
	}
	return nil
}

// sortSlices sorts each of the outer*inner slices of n elements (stride
// inner) and writes the first k of each to vals (when non-nil) and idx.
func sortSlices[T float32 | float64 | int64](v, vals []T, idx []int64, st *sortState, outer, n, inner, k int, desc bool) {
	for o := 0; o < outer; o++ {
		for in := 0; in < inner; in++ {
			base := o*n*inner + in
			sortIndicesF32(v[base:], inner, st.idx, st.tmp, desc)
			ob := o*k*inner + in
			for j := 0; j < k; j++ {
				ix := st.idx[j]
				idx[ob+j*inner] = ix
				if vals != nil {
					vals[ob+j*inner] = v[base+int(ix)*inner]
				}
			}
		}
	}
}
