package gemm

// Clamp is a product's epilogue: once an element of C has its whole
// product (and beta's share) it is clamped to [Lo, Hi], NaN passing
// through: relu is {true, 0, +Inf}, relu6 {true, 0, 6}. It is applied to
// each block of C the product has just finished, while the block is
// still in cache, so the activation makes no pass of its own over C in
// memory. The zero Clamp does nothing.
type Clamp struct {
	On     bool
	Lo, Hi float32
}

// rows applies ep to rows [i0, i1) and columns [j0, j1) of C.
func (ep Clamp) rows(c []float32, coff, ldc, i0, i1, j0, j1 int) {
	if !ep.On || j0 >= j1 {
		return
	}
	for i := i0; i < i1; i++ {
		row := c[coff+i*ldc+j0 : coff+i*ldc+j1]
		Clamp32(row, row, ep.Lo, ep.Hi)
	}
}

// clamp32Go is Clamp32 in Go.
func clamp32Go(o, a []float32, lo, hi float32) {
	for i, x := range a {
		// x stays when it is NaN: both comparisons are false.
		if x < lo {
			x = lo
		}
		if x > hi {
			x = hi
		}
		o[i] = x
	}
}
