package ops

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// aten::nonzero (an [n, dim] int64 tensor of the nonzero positions, in
// row-major order) and aten::where(condition) (the same as one 1-d int64
// tensor per dim, torch.nonzero(as_tuple=True)). Output sizes depend on
// the data: resized every run.

type nonzeroState struct {
	truth *ivalue.Tensor
	pos   []int64 // flat positions of the true elements
	outs  []*ivalue.Tensor
}

func init() {
	RegisterOut("aten::nonzero", func(n *graph.Node) Kernel {
		if n.Matches("aten::nonzero(Tensor self) -> Tensor") {
			return nonzeroKernel
		}
		return nil
	})
	RegisterNative("aten::where", func(n *graph.Node) Kernel {
		if n.Matches("aten::where(Tensor condition) -> Tensor[]") {
			return whereTupleKernel
		}
		return nil
	})
}

// nonzeroPositions fills st.pos with x's true elements' flat indices.
func nonzeroPositions(p *ProcessedNode, x *ivalue.Tensor) (*nonzeroState, error) {
	st, _ := p.State.(*nonzeroState)
	if st == nil {
		st = &nonzeroState{truth: &ivalue.Tensor{}}
		p.State = st
	}
	st.truth.Resize(ivalue.Bool, x.Sizes())
	if err := CastInto(st.truth, x); err != nil {
		return nil, err
	}
	st.pos = st.pos[:0]
	for i, b := range st.truth.BContig() {
		if b {
			st.pos = append(st.pos, int64(i))
		}
	}
	return st, nil
}

// unravel writes the dim-d coordinate of each position into dst.
func unravel(dst []int64, pos []int64, sizes []int, d int) {
	inner := 1
	for i := d + 1; i < len(sizes); i++ {
		inner *= sizes[i]
	}
	sz := int64(sizes[d])
	for j, q := range pos {
		dst[j] = q / int64(inner) % sz
	}
}

func nonzeroKernel(p *ProcessedNode) error {
	x := p.Tensor(0)
	if x == nil {
		return Errorf("nonzero: expected a tensor, got %s", p.Input(0).Kind())
	}
	st, err := nonzeroPositions(p, x)
	if err != nil {
		return err
	}
	nd, k := x.Dim(), len(st.pos)
	out := p.OutTensor(0)
	var sz [2]int
	sz[0], sz[1] = k, nd
	out.Resize(ivalue.Int64, sz[:])
	o := out.I64Contig()
	inner := 1
	for d := nd - 1; d >= 0; d-- {
		s := int64(x.Size(d))
		for j, q := range st.pos {
			o[j*nd+d] = q / int64(inner) % s
		}
		inner *= x.Size(d)
	}
	return nil
}

func whereTupleKernel(p *ProcessedNode) error {
	x := p.Tensor(0)
	if x == nil {
		return Errorf("where: expected a tensor, got %s", p.Input(0).Kind())
	}
	st, err := nonzeroPositions(p, x)
	if err != nil {
		return err
	}
	nd := x.Dim()
	if nd == 0 {
		nd = 1 // a 0-d condition gives one tensor, as a 1-element one would
	}
	for len(st.outs) < nd {
		st.outs = append(st.outs, &ivalue.Tensor{})
	}
	l := p.OutList(0, nd, false)
	var sz [1]int
	sz[0] = len(st.pos)
	for d := 0; d < nd; d++ {
		t := st.outs[d]
		if p.Fresh {
			t = &ivalue.Tensor{}
			st.outs[d] = t
		}
		t.Resize(ivalue.Int64, sz[:])
		if x.Dim() == 0 {
			clear(t.I64Contig())
		} else {
			unravel(t.I64Contig(), st.pos, x.Sizes(), d)
		}
		l.Items[d] = ivalue.FromTensor(t)
	}
	return nil
}
