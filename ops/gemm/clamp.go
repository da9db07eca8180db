package gemm

import "math"

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

// Epilogue is what a product does to each block of C once the block
// has its whole product, while it is still in cache: add Bias (element
// BiasOff + i*BiasStride to row i of the product, or with BiasCols to
// column j; nil: none), then clamp. A convolution's bias and activation this way cost no pass of
// their own over C, and C needs no filling with the bias beforehand.
type Epilogue struct {
	Clamp
	Bias                []float32
	BiasOff, BiasStride int
	// BiasCols: the bias is per column instead (element BiasOff +
	// j*BiasStride to column j), as a linear layer's.
	BiasCols bool
	// Res, when not nil, is added after the bias and before the clamp:
	// element (i, j) is Res[ResOff + i*ResLd + j] (a residual
	// connection's other operand, laid out as C).
	Res           []float32
	ResOff, ResLd int
	// Act, when not nil, is applied last, in place, to each finished
	// row segment of C (see Activation).
	Act Activation
	// fresh: C holds nothing to keep (beta 0), so the first k block of
	// the blocked product stores its tiles instead of adding them
	// (set by the entry points, not by callers).
	fresh bool
}

// Activation is an elementwise function an epilogue applies in place to
// row segments of a finished block of C, after the bias, residual and
// clamp: a convolution's silu, hardswish, sigmoid or gelu (ops supplies
// them), so the activation costs no pass of its own over the output. It
// must give each element what it gives over the whole tensor, whatever
// the segment's length and alignment, so that the fused product equals
// the product followed by the activation.
type Activation func(x []float32)

// on reports whether the epilogue does anything.
func (ep *Epilogue) on() bool { return ep.On || ep.Bias != nil || ep.Res != nil || ep.Act != nil }

// rows applies ep to rows [i0, i1) and columns [j0, j1) of C.
func (ep *Epilogue) rows(c []float32, coff, ldc, i0, i1, j0, j1 int) {
	if !ep.on() || j0 >= j1 {
		return
	}
	ep.affine(c, coff, ldc, i0, i1, j0, j1)
	ep.activate(c, coff, ldc, i0, i1, j0, j1)
}

// activate applies ep's activation (if any) to rows [i0, i1) and
// columns [j0, j1) of C.
func (ep *Epilogue) activate(c []float32, coff, ldc, i0, i1, j0, j1 int) {
	switch {
	case ep.Act == nil:
	case j1-j0 == ldc:
		// Whole rows lie end to end: one call (a 1x1 convolution over a
		// small image has rows of 49 floats, a gemv rows of one).
		ep.Act(c[coff+i0*ldc : coff+i1*ldc])
	default:
		for i := i0; i < i1; i++ {
			ep.Act(c[coff+i*ldc+j0 : coff+i*ldc+j1])
		}
	}
}

// affine is rows without the activation: the bias, the residual and
// the clamp.
func (ep *Epilogue) affine(c []float32, coff, ldc, i0, i1, j0, j1 int) {
	if ep.Bias == nil && ep.Res == nil && !ep.On {
		return
	}
	if ep.Res != nil {
		// Bias, then the residual, then the clamp: each one rounding,
		// as the unfused convolution, add and activation.
		noRes := *ep
		noRes.Res, noRes.On = nil, false
		noRes.affine(c, coff, ldc, i0, i1, j0, j1)
		for i := i0; i < i1; i++ {
			row := c[coff+i*ldc+j0 : coff+i*ldc+j1]
			r := ep.ResOff + i*ep.ResLd
			Axpy(1, ep.Res[r+j0:r+j1], row)
			if ep.On {
				Clamp32(row, row, ep.Lo, ep.Hi)
			}
		}
		return
	}
	if ep.Bias == nil {
		for i := i0; i < i1; i++ {
			row := c[coff+i*ldc+j0 : coff+i*ldc+j1]
			Clamp32(row, row, ep.Lo, ep.Hi)
		}
		return
	}
	if ep.BiasCols {
		for i := i0; i < i1; i++ {
			row := c[coff+i*ldc+j0 : coff+i*ldc+j1]
			if ep.BiasStride == 1 {
				// y + 1*x is one rounding, as y + x.
				Axpy(1, ep.Bias[ep.BiasOff+j0:ep.BiasOff+j1], row)
			} else {
				for j := range row {
					row[j] += ep.Bias[ep.BiasOff+(j0+j)*ep.BiasStride]
				}
			}
			if ep.On {
				Clamp32(row, row, ep.Lo, ep.Hi)
			}
		}
		return
	}
	lo, hi := float32(math.Inf(-1)), float32(math.Inf(1))
	if ep.On {
		lo, hi = ep.Lo, ep.Hi
	}
	for i := i0; i < i1; i++ {
		row := c[coff+i*ldc+j0 : coff+i*ldc+j1]
		wideRows(row, row, 1, len(row), len(row), ep.Bias[ep.BiasOff+i*ep.BiasStride], lo, hi, true)
	}
}

// clamp32Go is Clamp32 in Go.
// addClamp32Go is clamp32Go of a[i]+b[i].
func addClamp32Go(o, a, b []float32, lo, hi float32) {
	for i, x := range a {
		x += b[i]
		if x < lo {
			x = lo
		}
		if x > hi {
			x = hi
		}
		o[i] = x
	}
}

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
