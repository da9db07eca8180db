package ops

import (
	"math"

	"github.com/gosr/gosr/ops/gemm"
)

// [Depthwise rows]
//
// (Where the assembly runs and each output channel has its own input
// channel, convDepthwiseBlocked takes the convolution instead: see
// [Channel-blocked depthwise]. This path serves the rest: no AVX2, a
// channel multiplier, strides past 2 along a row, strided rows.)
//
// A depthwise plane is computed from a zero-padded copy of its input
// plane dealt, for strides s x t, into s x t phase planes (padded row r
// and column c go to phase (r%s, c%t) at (r/s, c/t)), the same layout
// as gemm's [Wide convolution]: for every tap (ki, kj) the input output
// (oh, ow) reads is element oh*ws + ow + offs[tap] of the copy, ws
// being a phase plane's width. On that "wide" grid of ws columns a
// block of output rows is one contiguous run, which dwRows computes
// with every tap accumulated in registers (bias first, the taps in
// order, each a fused multiply-add, the clamp last): it reads the input
// once per tap and writes each output once, where an axpy per tap reads
// and writes the outputs once per tap. The grid's columns past OW are
// dropped as the block is copied out (1 or 2 of ws). One call per block
// of rows, not per row, also keeps 7x7 and 14x14 planes in long runs.

// depthwiseBlock is the output floats convDepthwiseRows computes per
// block of rows (a block's run, and the copy rows its taps read, stay in
// L1).
const depthwiseBlock = 2048

// convDepthwiseRowsFits reports whether convDepthwiseRows takes g.
func convDepthwiseRowsFits(g *convGeom) bool {
	return g.strH <= 4 && g.strW <= 4 && g.sW == 1
}

// convDepthwiseRows computes one output plane (see [Depthwise rows]):
// dst = clamp(b + the taps wk over the input plane at xd[in:]).
func convDepthwiseRows(g *convGeom, xd []float32, in int, wk []float32, b float32, dst []float32, st *convState, ep gemm.Clamp) {
	sh, sw := g.strH, g.strW
	hp, wp := g.h+2*g.padH, g.w+2*g.padW
	hs, ws := (hp+sh-1)/sh, (wp+sw-1)/sw
	plane := hs * ws
	kk := g.kh * g.kw
	if key := [8]int{g.kh, g.kw, g.dilH, g.dilW, sh, sw, plane, ws}; len(st.offs) != kk || st.offsFor != key {
		if cap(st.offs) < kk {
			st.offs = make([]int, kk)
		}
		st.offs, st.offsFor, st.offsMax = st.offs[:kk], key, 0
		for ki := 0; ki < g.kh; ki++ {
			for kj := 0; kj < g.kw; kj++ {
				dh, dw := ki*g.dilH, kj*g.dilW
				o := (dh%sh*sw+dw%sw)*plane + dh/sh*ws + dw/sw
				st.offs[ki*g.kw+kj] = o
				st.offsMax = max(st.offsMax, o)
			}
		}
	}
	offs, maxOff := st.offs, st.offsMax
	// The last block's run, OH*ws columns less the last row's dropped
	// ones, reads up to maxOff past them: slack, zeroed.
	phases := sh * sw * plane
	size := max(phases, maxOff+g.oh*ws)
	if cap(st.padIn) < size {
		st.padIn = make([]float32, size)
	}
	xp := st.padIn[:size]
	for r, pr, rr := 0, 0, 0; r < hs*sh; r, pr = r+1, pr+1 {
		if pr == sh { // pr, rr = r%sh, r/sh without dividing
			pr, rr = 0, rr+1
		}
		ih := r - g.padH
		if uint(ih) >= uint(g.h) {
			for pc := 0; pc < sw; pc++ {
				clear(xp[(pr*sw+pc)*plane+rr*ws:][:ws])
			}
			continue
		}
		dwPhaseRow(xp[pr*sw*plane+rr*ws:], plane, ws, sw, g.padW, xd[in+ih*g.sH:in+ih*g.sH+g.w])
	}
	clear(xp[phases:])
	lo, hi := float32(math.Inf(-1)), float32(math.Inf(1))
	if ep.On {
		lo, hi = ep.Lo, ep.Hi
	}
	rows := max(1, depthwiseBlock/ws)
	if need := rows * ws; cap(st.padOut) < need {
		st.padOut = make([]float32, need)
	}
	for b0 := 0; b0 < g.oh; b0 += rows {
		b1 := min(b0+rows, g.oh)
		// The last row's run stops at its last output column.
		n := (b1-b0-1)*ws + g.ow
		if ws == g.ow {
			dwRows(dst[b0*g.ow:b0*g.ow+n], xp[b0*ws:], offs, maxOff, wk, b, lo, hi)
			continue
		}
		tp := st.padOut[:n]
		dwRows(tp, xp[b0*ws:], offs, maxOff, wk, b, lo, hi)
		for r := b0; r < b1; r++ {
			copy(dst[r*g.ow:(r+1)*g.ow], tp[(r-b0)*ws:])
		}
	}
}

// dwPhaseRow deals one input row, with pad zero columns either side,
// into the rows of sw phase planes (plane floats apart) of ws columns
// starting at dst.
func dwPhaseRow(dst []float32, plane, ws, sw, pad int, src []float32) {
	if sw == 1 {
		row := dst[:ws]
		clear(row[:pad])
		n := copy(row[pad:], src)
		clear(row[pad+n:])
		return
	}
	if sw == 2 {
		gemm.PhaseRow2(dst, plane, ws, pad, src)
		return
	}
	for ph := 0; ph < sw; ph++ {
		out := dst[ph*plane:][:ws]
		for c := range out {
			if iw := c*sw + ph - pad; uint(iw) < uint(len(src)) {
				out[c] = src[iw]
			} else {
				out[c] = 0
			}
		}
	}
}

// dwRows sets out[t] = clamp(b + sum over q of w[q]*in[offs[q]+t]) to
// [lo, hi], NaN passing through, for t < len(out); every offs entry is
// at most maxOff.
func dwRows(out, in []float32, offs []int, maxOff int, w []float32, b, lo, hi float32) {
	n := len(out)
	if n == 0 {
		return
	}
	_ = in[maxOff+n-1]
	w = w[:len(offs)]
	if useAVX2 {
		dwRowsAVX2(&out[0], &in[0], n, &offs[0], &w[0], len(offs), b, lo, hi)
		return
	}
	for t := range out {
		acc := b
		for q, o := range offs {
			acc = float32(math.FMA(float64(w[q]), float64(in[o+t]), float64(acc)))
		}
		if acc < lo {
			acc = lo
		}
		if acc > hi {
			acc = hi
		}
		out[t] = acc
	}
}
