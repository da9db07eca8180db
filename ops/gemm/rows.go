package gemm

import "math"

// [Wide rows]
//
// The rows kernels (rows512_amd64.s) compute eight output channels at
// 32 positions at a time straight from input rows, the weights read as
// rows [o, k] and broadcast: no packing of either operand, 16
// accumulators, bias first and the residual and clamp as each chunk is
// stored (the last chunk of a row under masks). PointwiseRows feeds
// them a pointwise convolution's input rows (see [Pointwise rows] in
// ops). ConvWideRows feeds them the phase-split copy of [Wide
// convolution]: for output row oh, tap q's inputs for the OW positions
// are OW consecutive floats of the copy at oh*ws + offs[q], so each
// output row is one call per eight channels, written in place with no
// wide C block and no copy out. It serves the convolutions whose few
// input channels keep k short (a network's stem: 3 channels, 3x3 to
// 7x7 kernels, stride 2), where a gemm tile's k loop is too short to
// pay for its stores and the block's copy out.

// HasRows reports whether the rows kernels run on this CPU (AVX-512)
// and in this variant.
func HasRows() bool { return cpuHas512() }

// rowsMasks splits n positions into chunks of 32 and the masks of the
// last, partial one (each half's valid lanes).
func rowsMasks(n int) (n32, tail, m1, m2 int) {
	n32, rest := n/32, n%32
	if rest > 0 {
		tail = 1
		m1, m2 = 1<<min(rest, 16)-1, 1<<max(rest-16, 0)-1
	}
	return n32, tail, m1, m2
}

// rowsBias gathers eight output channels' biases from o0 (zeros for a
// nil bias).
func rowsBias(b *[8]float32, bd []float32, bo, bs, o0 int) {
	for r := range b {
		b[r] = 0
		if bd != nil {
			b[r] = bd[bo+(o0+r)*bs]
		}
	}
}

// clampBounds is ep's interval, the whole line when off.
func clampBounds(ep Clamp) (float32, float32) {
	if ep.On {
		return ep.Lo, ep.Hi
	}
	return float32(math.Inf(-1)), float32(math.Inf(1))
}

// PointwiseRows computes n positions of o output channels (o a multiple
// of 8) of a pointwise convolution: c[coff + oc*ldc + j] =
// act(clamp(bias[oc] + sum over q < k of w[woff + oc*k + q] * x[xoff +
// q*ldx + j] + res[roff + oc*ldc + j])) for j < n; bias bd[bo+oc*bs]
// (nil: none), res nil for none. Needs HasRows.
func PointwiseRows(o, k, n int, xd []float32, xoff, ldx int, wd []float32, woff int, bd []float32, bo, bs int, res []float32, roff int, c []float32, coff, ldc int, ep Clamp, act Activation) {
	lo, hi := clampBounds(ep)
	_ = wd[woff+o*k-1]
	_ = xd[xoff+(k-1)*ldx+n-1]
	n32, tail, m1, m2 := rowsMasks(n)
	var bias [8]float32
	for o0 := 0; o0 < o; o0 += 8 {
		rowsBias(&bias, bd, bo, bs, o0)
		at := coff + o0*ldc
		_ = c[at+7*ldc+n-1]
		var rp *float32
		if res != nil {
			_ = res[roff+o0*ldc+7*ldc+n-1]
			rp = &res[roff+o0*ldc]
		}
		pw8x32AVX512(&c[at], ldc, &xd[xoff], ldx, k, &wd[woff+o0*k], n32, tail, m1, m2, &bias[0], rp, ldc, lo, hi)
	}
	if act != nil {
		for oc := 0; oc < o; oc++ {
			at := coff + oc*ldc
			act(c[at : at+n])
		}
	}
}

// ConvWideRows computes one image of an ungrouped convolution with o
// output channels (a multiple of 8) as ConvWide does, with the weight
// as rows [o, C*KH*KW] at w[woff:] instead of packed, through the rows
// kernels (see [Wide rows]). Needs HasRows. The output may not overlap
// the input.
func ConvWideRows(sc *Scratch, g *WideConv, o int, w []float32, woff int, x []float32, xoff, sC, sH, sW int, bias []float32, bo, bs int, res []float32, roff int, out []float32, ooff int, ep Clamp, act Activation) {
	pk := sc.bufs()
	p := &pk.wide.plan
	*p = widePlan{g: *g}
	g = &p.g
	k := g.C * g.KH * g.KW
	hp, wp := g.H+2*g.PadH, g.W+2*g.PadW
	p.hs, p.ws = (hp+g.StrH-1)/g.StrH, (wp+g.StrW-1)/g.StrW
	p.plane = p.hs * p.ws
	p.chanSize = g.StrH * g.StrW * p.plane
	if cap(pk.wide.offs) < k {
		pk.wide.offs = make([]int, k)
	}
	offs := pk.wide.offs[:k]
	khw := g.KH * g.KW
	for q := range offs {
		ci, r := q/khw, q%khw
		dh, dw := (r/g.KW)*g.DilH, (r%g.KW)*g.DilW
		offs[q] = ci*p.chanSize + ((dh%g.StrH)*g.StrW+dw%g.StrW)*p.plane + dh/g.StrH*p.ws + dw/g.StrW
		p.maxOff = max(p.maxOff, offs[q])
	}
	// Row oh reads up to maxOff + oh*ws + OW - 1, inside the copy (see
	// [Wide convolution]: OW <= ws and the taps' rows stay in the
	// phase planes).
	p.size = max(g.C*p.chanSize, p.maxOff+(g.OH-1)*p.ws+g.OW)
	if cap(pk.wide.pad) < p.size {
		pk.wide.pad = make([]float32, p.size)
	}
	xp := pk.wide.pad[:p.size]
	p.pad = xp
	clear(xp[g.C*p.chanSize:])
	widePhaseCopy(p, x, xoff, sC, sH, sW, 0, g.C)

	plane := g.OH * g.OW
	lo, hi := clampBounds(ep)
	n32, tail, m1, m2 := rowsMasks(g.OW)
	_ = w[woff+o*k-1]
	_ = out[ooff+o*plane-1]
	if res != nil {
		_ = res[roff+o*plane-1]
	}
	// Blocks of output rows (about 512 positions): their inputs stay in
	// L1 while every group of eight channels reads them, and their
	// outputs are in cache when the activation runs.
	rb := max(1, 512/max(1, g.OW))
	var b [8]float32
	for oh0 := 0; oh0 < g.OH; oh0 += rb {
		oh1 := min(g.OH, oh0+rb)
		for o0 := 0; o0 < o; o0 += 8 {
			rowsBias(&b, bias, bo, bs, o0)
			for oh := oh0; oh < oh1; oh++ {
				at := o0*plane + oh*g.OW
				var rp *float32
				if res != nil {
					rp = &res[roff+at]
				}
				rows8x32OffsAVX512(&out[ooff+at], plane, &xp[oh*p.ws], &offs[0], k, &w[woff+o0*k], n32, tail, m1, m2, &b[0], rp, plane, lo, hi)
			}
		}
		if act != nil {
			for oc := 0; oc < o; oc++ {
				at := ooff + oc*plane
				act(out[at+oh0*g.OW : at+oh1*g.OW])
			}
		}
	}
	p.pad = nil
	sc.done(pk)
}
