package ops

import "github.com/gosr/gosr/graph"

// aten::repeat (Tensor.repeat) and aten::tile, any dtype: one strided
// copy (copy.go's copyND) with each output dim split in two, the repeat
// (input stride 0) and the input's dim.

const (
	repeatSchema = "aten::repeat(Tensor self, SymInt[] repeats) -> Tensor"
	tileSchema   = "aten::tile(Tensor self, int[] dims) -> Tensor"
)

type repeatState struct {
	reps               []int
	osz, sizes, ds, ss []int
}

func init() {
	RegisterOut("aten::repeat", func(n *graph.Node) Kernel {
		if n.Matches(repeatSchema) {
			return func(p *ProcessedNode) error { return repeatKernel(p, false) }
		}
		return nil
	})
	RegisterOut("aten::tile", func(n *graph.Node) Kernel {
		if n.Matches(tileSchema) {
			return func(p *ProcessedNode) error { return repeatKernel(p, true) }
		}
		return nil
	})
}

func repeatKernel(p *ProcessedNode, tile bool) error {
	x := p.Tensor(0)
	if x == nil {
		return Errorf("repeat: expected a tensor, got %s", p.Input(0).Kind())
	}
	st, _ := p.State.(*repeatState)
	if st == nil {
		st = &repeatState{}
		p.State = st
	}
	st.reps = p.IntsInto(1, st.reps)
	nd := x.Dim()
	if tile && len(st.reps) < nd {
		// tile pads the repeats with leading ones.
		k := nd - len(st.reps)
		st.reps = append(st.reps, make([]int, k)...)
		copy(st.reps[k:], st.reps[:nd-k])
		for i := 0; i < k; i++ {
			st.reps[i] = 1
		}
	}
	r := len(st.reps)
	if r < nd {
		return Errorf("Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor")
	}
	for _, v := range st.reps {
		if v < 0 {
			return Errorf("Trying to create tensor with negative dimension %d: %v", v, st.reps)
		}
	}
	// Output dim d (of r) = reps[d] x the input's dim d-(r-nd) (1 when
	// the input lacks it).
	st.osz = shapeGrow(st.osz, r)
	st.sizes = shapeGrow(st.sizes, 2*r)
	st.ds = shapeGrow(st.ds, 2*r)
	st.ss = shapeGrow(st.ss, 2*r)
	for d := 0; d < r; d++ {
		in, is := 1, 0
		if j := d - (r - nd); j >= 0 {
			in, is = x.Size(j), x.Strides()[j]
		}
		st.osz[d] = st.reps[d] * in
		st.sizes[2*d], st.sizes[2*d+1] = st.reps[d], in
		st.ss[2*d], st.ss[2*d+1] = 0, is
	}
	out := p.OutTensor(0)
	out.Resize(x.DType(), st.osz)
	if out.Numel() == 0 {
		return nil
	}
	stride := 1
	for d := r - 1; d >= 0; d-- {
		in := st.sizes[2*d+1]
		st.ds[2*d+1] = stride
		st.ds[2*d] = stride * in
		stride *= st.osz[d]
	}
	copyND(out.Storage().Data, out.Offset(), st.ds, x.Storage().Data, x.Offset(), st.ss, st.sizes, x.DType().Size())
	return nil
}
