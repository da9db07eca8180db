package ops

import (
	"math"

	"github.com/gosr/gosr/ops/gemm"
)

// Float32 relu, hardtanh (relu6) and clamp on contiguous data: the
// activations of vision models, run by clamp32 (vectorised on amd64).

// clamp32 is gemm.Clamp32 (which the products' epilogues share).
func clamp32(o, a []float32, lo, hi float32) { gemm.Clamp32(o, a, lo, hi) }

// clampFast32 runs relu, hardtanh and clamp with both bounds on float32
// data through clamp32, reporting false for other ops. a is the input's
// elements, o the output's (same length; o may be a).
func clampFast32(op unOp, o, a []float32, p0, p1 float64) bool {
	lo, hi, ok := clampBounds32(op, p0, p1)
	if ok {
		clamp32(o, a, lo, hi)
	}
	return ok
}

// clampBounds32 gives the float32 bounds clamp32 runs op with (p0 and
// p1 its min and max parameters), or false where clamp32 does not apply:
// another op, a NaN bound, or clamp with min above max.
func clampBounds32(op unOp, p0, p1 float64) (lo, hi float32, ok bool) {
	switch op {
	case unRelu:
		lo, hi = 0, float32(math.Inf(1))
	case unHardtanh, unClamp:
		lo, hi = float32(p0), float32(p1)
		if op == unClamp && lo > hi {
			return 0, 0, false // PyTorch gives hi everywhere: the general path's rule
		}
	case unClampMin:
		lo, hi = float32(p0), float32(math.Inf(1))
	case unClampMax:
		lo, hi = float32(math.Inf(-1)), float32(p1)
	default:
		return 0, 0, false
	}
	if math.IsNaN(float64(lo)) || math.IsNaN(float64(hi)) {
		return 0, 0, false
	}
	return lo, hi, true
}

// clampSplit is clamp32 over a large tensor, split across a team (see
// splitter); a node keeps one in its state.
type clampSplit struct {
	splitter
	o, a   []float32
	lo, hi float32
	fn     func(lo, hi int)
}

// clamp32Team is clamp32(o, a, lo, hi), split across team through sp
// when o is large.
func clamp32Team(sc *gemm.Scratch, sp *clampSplit, o, a []float32, lo, hi float32) {
	if sc.Team() == nil || len(o) < 2*splitMinWork {
		clamp32(o, a, lo, hi)
		return
	}
	if sp.fn == nil {
		sp.fn = func(i, j int) { clamp32(sp.o[i:j], sp.a[i:j], sp.lo, sp.hi) }
	}
	sp.o, sp.a, sp.lo, sp.hi = o, a, lo, hi
	sp.run(sc, len(o), 16, len(o), sp.fn)
	sp.o, sp.a = nil, nil
}
