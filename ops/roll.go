package ops

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// aten::roll, any dtype. Rolling k dims splits the output into 2**k
// boxes, each one strided copy (copy.go's copyND) of a box of the input
// with any strides; with no dims the tensor is rolled flat.

const rollSchema = "aten::roll(Tensor self, int[1] shifts, int[1] dims=[]) -> Tensor"

// rollMaxDims bounds the rolled dims (2**k boxes): more than any model
// rolls, fewer than would make the box count matter.
const rollMaxDims = 16

type rollState struct {
	shifts, dims []int
	sizes        []int
	ds, ss       []int
	flat         *ivalue.Tensor
	shift        []int // per dim of self: the normalised shift, 0 where not rolled
}

func init() {
	RegisterOut("aten::roll", func(n *graph.Node) Kernel {
		if n.Matches(rollSchema) {
			return rollKernel
		}
		return nil
	})
}

func rollKernel(p *ProcessedNode) error {
	x := p.Tensor(0)
	if x == nil {
		return Errorf("roll: expected a tensor, got %s", p.Input(0).Kind())
	}
	st, _ := p.State.(*rollState)
	if st == nil {
		st = &rollState{}
		p.State = st
	}
	st.shifts = p.IntsInto(1, st.shifts)
	st.dims = p.IntsInto(2, st.dims)
	if len(st.shifts) == 0 {
		return Errorf("`shifts` required")
	}
	out := p.OutTensor(0)
	out.Resize(x.DType(), x.Sizes())
	n := x.Numel()
	if n == 0 {
		return nil
	}
	es := x.DType().Size()
	if len(st.dims) == 0 {
		if len(st.shifts) != 1 {
			return Errorf("shifts and dimensions must align. shifts: %d, dims:0", len(st.shifts))
		}
		src := x
		if !x.IsContiguous() {
			if st.flat == nil {
				st.flat = &ivalue.Tensor{}
			}
			st.flat.Resize(x.DType(), x.Sizes())
			ivalue.CopyInto(st.flat, x)
			src = st.flat
		}
		s := rollMod(st.shifts[0], n)
		d, sd := out.Storage().Data, src.Storage().Data[src.Offset()*es:]
		// out[s:] = src[:n-s], out[:s] = src[n-s:]
		copy(d[s*es:n*es], sd[:(n-s)*es])
		copy(d[:s*es], sd[(n-s)*es:n*es])
		return nil
	}
	if len(st.shifts) != len(st.dims) {
		return Errorf("shifts and dimensions must align. shifts: %d, dims:%d", len(st.shifts), len(st.dims))
	}
	nd := x.Dim()
	st.shift = shapeGrow(st.shift, nd)
	clear(st.shift)
	for i, d := range st.dims {
		w, err := ewWrapDim(int64(d), nd)
		if err != nil {
			return err
		}
		if nd == 0 {
			continue
		}
		// A dim given twice rolls by the sum of its shifts.
		st.shift[w] = rollMod(st.shift[w]+rollMod(st.shifts[i], x.Size(w)), x.Size(w))
	}
	var rolled [rollMaxDims]int
	k := 0
	for d := 0; d < nd; d++ {
		if st.shift[d] != 0 {
			if k == rollMaxDims {
				return Errorf("roll: at most %d dims can be rolled at once", rollMaxDims)
			}
			rolled[k] = d
			k++
		}
	}
	// Contiguous strides of the output.
	st.ds = shapeGrow(st.ds, nd)
	st.ss = shapeGrow(st.ss, nd)
	st.sizes = shapeGrow(st.sizes, nd)
	stride := 1
	for d := nd - 1; d >= 0; d-- {
		st.ds[d] = stride
		stride *= x.Size(d)
	}
	copy(st.ss, x.Strides())
	dst, src := out.Storage().Data, x.Storage().Data
	for box := 0; box < 1<<k; box++ {
		dOff, sOff := out.Offset(), x.Offset()
		copy(st.sizes, x.Sizes())
		for j := 0; j < k; j++ {
			d := rolled[j]
			sz, s := x.Size(d), st.shift[d]
			if box&(1<<j) == 0 {
				// out[s:] from in[:sz-s]
				st.sizes[d] = sz - s
				dOff += s * st.ds[d]
			} else {
				// out[:s] from in[sz-s:]
				st.sizes[d] = s
				sOff += (sz - s) * x.Strides()[d]
			}
		}
		copyND(dst, dOff, st.ds, src, sOff, st.ss, st.sizes, es)
	}
	return nil
}

// rollMod is s mod n in [0, n) (Python's %).
func rollMod(s, n int) int {
	if n == 0 {
		return 0
	}
	s %= n
	if s < 0 {
		s += n
	}
	return s
}
