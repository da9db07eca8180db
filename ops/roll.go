package ops

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// aten::roll: out[..., j, ...] = in[..., (j - shift) mod n, ...] along
// each rolled dim (shifts on one dim add up); with no dims, over the
// flattened tensor. It runs pad.go's row engine: per dim a table of
// input offsets, the last dim's rows copied in two straight runs.

func init() {
	RegisterOut("aten::roll", func(n *graph.Node) Kernel {
		if !n.Matches("aten::roll(Tensor self, int[1] shifts, int[1] dims=[]) -> Tensor") {
			return nil
		}
		return rollKernel
	})
}

type rollState struct {
	shifts, dims []int
	shift        []int // per dim, total
	tabs         [][]int
	cnt          []int
	flat         ivalue.Tensor // the flattened input (a view or copy)
	one          [1]int
}

func rollKernel(p *ProcessedNode) error {
	st, _ := p.State.(*rollState)
	if st == nil {
		st = &rollState{}
		p.State = st
	}
	x := p.Tensor(0)
	if x == nil {
		return Errorf("roll: expected a tensor input")
	}
	st.shifts = p.IntsInto(1, st.shifts)
	st.dims = p.IntsInto(2, st.dims)
	o := p.OutTensor(0)
	o.Resize(x.DType(), x.Sizes())
	if o.Numel() == 0 {
		return nil
	}
	src := x
	nd := x.Dim()
	if len(st.dims) == 0 {
		if len(st.shifts) != 1 {
			return Errorf("roll: shifts must have one value when dims is empty, got %v", st.shifts)
		}
		// Roll the elements in logical order: a 1-d view of a
		// contiguous input, else a contiguous copy.
		st.one[0] = x.Numel()
		if x.IsContiguous() {
			one := [1]int{1}
			st.flat.SetView(x, x.Offset(), st.one[:], one[:])
		} else {
			st.flat.Resize(x.DType(), st.one[:])
			copyStrided(&st.flat, x)
		}
		src, nd = &st.flat, 1
		st.shift = append(st.shift[:0], st.shifts[0])
	} else {
		if len(st.shifts) != len(st.dims) {
			return Errorf("roll: shifts and dimensions must align, got shifts %v and dims %v", st.shifts, st.dims)
		}
		st.shift = st.shift[:0]
		for range nd {
			st.shift = append(st.shift, 0)
		}
		for i, d := range st.dims {
			if d < -max(nd, 1) || d >= max(nd, 1) {
				return Errorf("roll: dimension out of range (expected to be in range of [%d, %d], but got %d)", -max(nd, 1), max(nd, 1)-1, d)
			}
			if nd == 0 {
				return Errorf("roll: dimension specified as %d but tensor has no dimensions", d)
			}
			if d < 0 {
				d += nd
			}
			st.shift[d] += st.shifts[i]
		}
	}
	sz, xs := src.Sizes(), src.Strides()
	if len(st.tabs) < nd {
		st.tabs = append(st.tabs, make([][]int, nd-len(st.tabs))...)
	}
	for d := 0; d < nd; d++ {
		n := sz[d]
		s := ((st.shift[d] % n) + n) % n
		t := st.tabs[d][:0]
		for j := 0; j < n; j++ {
			i := j - s
			if i < 0 {
				i += n
			}
			t = append(t, i*xs[d])
		}
		st.tabs[d] = t
		st.shift[d] = s
	}
	if cap(st.cnt) < nd {
		st.cnt = make([]int, nd)
	}
	// Output columns [s, n) of a row read input columns [0, n-s).
	g := padGeom{tabs: st.tabs[:nd], cnt: st.cnt[:nd], lo: st.shift[nd-1], hi: sz[nd-1], unit: xs[nd-1] == 1, off: src.Offset()}
	if err := padRowsAny(&g, src, o, ivalue.None()); err != nil {
		return Errorf("roll: %v", err)
	}
	return nil
}
