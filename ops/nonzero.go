package ops

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// aten::nonzero ([n, ndim] int64 coordinates of the non-zero elements,
// row-major) and aten::where(condition) (the same, one 1-d tensor per
// dim: torch.where(c) and nonzero(as_tuple=True)). Any dtype; NaN is
// non-zero. where(condition) is a fallback: its outputs are new tensors
// every run (a list of a data-dependent number of elements).

type nonzeroState struct {
	mask *ivalue.Tensor
	idx  []int
	sz   []int
}

func init() {
	RegisterOut("aten::nonzero", func(n *graph.Node) Kernel {
		if n.Matches("aten::nonzero(Tensor self) -> Tensor") {
			return nonzeroKernel
		}
		return nil
	})
	RegisterFallback("aten::where", func(n *graph.Node) Kernel {
		if n.Matches("aten::where(Tensor condition) -> Tensor[]") {
			return whereCondKernel
		}
		return nil
	})
}

// nonzeroMask returns x != 0 as a contiguous bool slice (x itself when
// it is a contiguous bool tensor) and the count of true elements.
func nonzeroMask(st *nonzeroState, x *ivalue.Tensor) ([]bool, int, error) {
	var m []bool
	if x.DType() == ivalue.Bool && x.IsContiguous() {
		m = x.BContig()
	} else {
		if st.mask == nil {
			st.mask = &ivalue.Tensor{}
		}
		st.mask.Resize(ivalue.Bool, x.Sizes())
		if err := CastInto(st.mask, x); err != nil {
			return nil, 0, err
		}
		m = st.mask.BContig()
	}
	n := 0
	for _, b := range m {
		if b {
			n++
		}
	}
	return m, n, nil
}

// nonzeroFill writes the coordinates of m's true elements: coordinate d
// of the k-th at o[k*rs + d*cs].
func nonzeroFill(st *nonzeroState, o []int64, m []bool, sizes []int, rs, cs int) {
	nd := len(sizes)
	st.idx = shapeGrow(st.idx, nd)
	clear(st.idx)
	k := 0
	for _, b := range m {
		if b {
			for d := 0; d < nd; d++ {
				o[k*rs+d*cs] = int64(st.idx[d])
			}
			k++
		}
		for d := nd - 1; d >= 0; d-- {
			st.idx[d]++
			if st.idx[d] < sizes[d] {
				break
			}
			st.idx[d] = 0
		}
	}
}

func nonzeroStateOf(p *ProcessedNode) *nonzeroState {
	st, _ := p.State.(*nonzeroState)
	if st == nil {
		st = &nonzeroState{}
		p.State = st
	}
	return st
}

func nonzeroKernel(p *ProcessedNode) error {
	x := p.Tensor(0)
	if x == nil {
		return Errorf("nonzero: expected a tensor, got %s", p.Input(0).Kind())
	}
	st := nonzeroStateOf(p)
	m, n, err := nonzeroMask(st, x)
	if err != nil {
		return err
	}
	st.sz = append(st.sz[:0], n, x.Dim())
	out := p.OutTensor(0)
	out.Resize(ivalue.Int64, st.sz)
	nonzeroFill(st, out.I64Contig(), m, x.Sizes(), x.Dim(), 1)
	return nil
}

func whereCondKernel(p *ProcessedNode) error {
	x := p.Tensor(0)
	if x == nil {
		return Errorf("where: expected a tensor as condition, got %s", p.Input(0).Kind())
	}
	st := nonzeroStateOf(p)
	m, n, err := nonzeroMask(st, x)
	if err != nil {
		return err
	}
	nd := x.Dim()
	if nd == 0 {
		nd = 1 // a 0-dim condition gives one coordinate list, as PyTorch
	}
	all := ivalue.NewTensor(ivalue.Int64, nd, n)
	sizes := x.Sizes()
	if x.Dim() == 0 {
		sizes = []int{1}
	}
	nonzeroFill(st, all.I64Contig(), m, sizes, 1, n)
	items := make([]ivalue.IValue, nd)
	for d := range items {
		t := &ivalue.Tensor{}
		t.SetView(all, d*n, []int{n}, []int{1})
		items[d] = ivalue.FromTensor(t)
	}
	p.SetOutput(0, ivalue.NewList(items...))
	return nil
}
