package ops

import (
	"fmt"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/ivalue"
)

// TestStackOverPart: a stack whose output begins in one of its parts'
// memory (the overwrite rule's layout) gives what it gives with memory of
// its own, for every part, dim and part shape, through both ways the
// kernel has (in order, and from a copy of the part).
func TestStackOverPart(t *testing.T) {
	for _, sizes := range [][]int{{4, 16}, {3, 2, 5}, {1, 7}, {6}} {
		for n := 1; n <= 4; n++ {
			for d := 0; d <= len(sizes); d++ {
				for j := 0; j < n; j++ {
					for _, viaCopy := range []bool{false, true} {
						name := fmt.Sprintf("sizes=%v/n=%d/dim=%d/over=%d/copy=%v", sizes, n, d, j, viaCopy)
						numel := 1
						for _, s := range sizes {
							numel *= s
						}
						// Reference: parts and output apart.
						parts := make([]*ivalue.Tensor, n)
						for k := range parts {
							x := make([]float32, numel)
							for i := range x {
								x[i] = float32(k*1000 + i)
							}
							parts[k] = ivalue.F32Tensor(x, sizes...)
						}
						want := stackOf(t, parts, d, -1, false)
						got := stackOf(t, parts, d, j, viaCopy)
						require.Equal(t, want, got, name)
					}
				}
			}
		}
	}
}

// stackOf runs stackRun on copies of parts; with over >= 0 the output's
// storage is a window that begins at part over's data (the slab layout an
// in-place link gives), and viaCopy makes a part non-contiguous so the
// kernel takes its copying path.
func stackOf(t *testing.T, parts []*ivalue.Tensor, d, over int, viaCopy bool) []float32 {
	n, numel := len(parts), parts[0].Numel()
	slab := &ivalue.Storage{Data: make([]byte, 4*numel*(n+1))}
	ts := make([]*ivalue.Tensor, n)
	for k, p := range parts {
		if over >= 0 && k != over && k != over+1 {
			continue // placed below, apart from the slab
		}
		off := (k + 1) * numel // parts apart, after the output's first part
		if k == over {
			off = 0
		}
		if k == over+1 && over >= 0 {
			off = n * numel // clear of the output, which covers [0, n*numel)
		}
		tk, err := ivalue.FromStorage(ivalue.Float32, slab, off, p.Sizes(), nil)
		require.NoError(t, err)
		copy(tk.F32()[tk.Offset():], p.F32())
		ts[k] = tk
	}
	if over >= 0 {
		// Other parts must lie outside the output's window [0, n*numel).
		for k := range ts {
			if k != over && k != over+1 {
				s := &ivalue.Storage{Data: make([]byte, 4*numel)}
				tk, err := ivalue.FromStorage(ivalue.Float32, s, 0, parts[k].Sizes(), nil)
				require.NoError(t, err)
				copy(tk.F32(), parts[k].F32())
				ts[k] = tk
			}
		}
	} else {
		for k := range ts {
			ts[k] = parts[k].Clone()
		}
	}
	if viaCopy && len(parts[0].Sizes()) == 2 && parts[0].Size(0) > 1 {
		// A non-contiguous other part: the in-order way does not apply.
		k := (over + 1) % n
		if k != over {
			p := parts[k]
			tr := ivalue.F32Tensor(make([]float32, numel), p.Size(1), p.Size(0))
			base := tr.Clone()
			tv := &ivalue.Tensor{}
			tv.SetView(base, 0, p.Sizes(), []int{1, p.Size(0)})
			for i, v := range p.F32Contig() {
				r, c := i/p.Size(1), i%p.Size(1)
				base.F32()[c*p.Size(0)+r] = v
			}
			ts[k] = tv
		}
	}
	out := &ivalue.Tensor{}
	if over >= 0 {
		w := slab.Window(0, 4*numel*n)
		out.SetStorage(w, 0)
	}
	p := &ProcessedNode{Values: make([]ivalue.IValue, 1), Out: []int32{0}, Own: []*ivalue.Tensor{out}}
	p.Values[0] = ivalue.FromTensor(out)
	st := &shapeState{tensors: ts}
	require.NoError(t, stackRun(p, st, int64(d)))
	if over >= 0 {
		require.Equal(t, unsafe.Pointer(&slab.Data[0]), p.OutTensor(0).DataPtr(), "the output stayed over part %d", over)
	}
	return append([]float32(nil), p.OutTensor(0).F32Contig()...)
}
