package ops

import (
	"math"
	"slices"

	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops/gemm"
)

// [Channel-blocked depthwise]
//
// A depthwise plane computed alone (see [Depthwise rows]) pays per
// plane for its padded copy, its row copies and its activation, and its
// vector lanes run along the output row, so a 7x7 plane is one block of
// 64 and a latency-bound tail, and every tap loads one weight per
// plane. Channels of a depthwise convolution never mix, so eight of
// them can share each vector instead: the input of channels [c0,
// c0+8) is transposed into a zero-padded copy laid out [row][column][8]
// (NCHW8c, ONNX Runtime's NCHWc block for AVX2), and each output
// position is then one vector: its taps are eight-channel FMAs, weights
// [tap][8] and input at the tap's offset from the position, no bounds
// to test (the padding is real zeros). A row of output positions is
// computed eight positions at a time (dwcRowS1AVX2, dwcRowS2AVX2),
// eight accumulators in flight; a row whose width is not a multiple of
// 8 computes a few positions past it, which read the next row's copy or
// zeroed slack and are dropped. Each finished row is transposed back
// into the eight output planes, and the activation runs over the eight
// planes, contiguous in the output, once they are done.
//
// Per element, the sum is the one dwRows computes: bias first, then the
// taps in order, each a fused multiply-add, a padded tap adding w*0. So
// the two paths give the same bits.

// convDepthwiseBlockedFits reports whether convDepthwiseBlocked takes
// g: one output channel per input channel, unit-stride input rows,
// stride 1 or 2 along the row, and the assembly.
func convDepthwiseBlockedFits(g *convGeom) bool {
	return useAVX2 && g.o == g.c && g.groups == g.c && g.sW == 1 && (g.strW == 1 || g.strW == 2) &&
		g.oh > 0 && g.ow > 0
}

// convDepthwiseBlocked computes a depthwise convolution (see [Channel-
// blocked depthwise]): c = act(clamp(conv + bias)). The output may
// overlap the input in the order ord allows plane by plane (planePlan):
// a block's eight input planes are copied before any of its output
// planes is written, so blocks taken in that order are safe too. With
// separate memory, sc's team shares the blocks out.
// wblk, when not nil, is the weight laid out by depthwiseBlockedWeights
// (else each block's is laid out as it runs).
func convDepthwiseBlocked(sc *gemm.Scratch, g *convGeom, xd []float32, xoff int, wd []float32, woff int, wblk []float32, bd []float32, bo, bs int, c []float32, ord planeOrder, st *convState, ep gemm.Clamp, act gemm.Activation) {
	r := st.dwcRunFor(g, xd, xoff, wd, woff, bd, bo, bs, c, ord, ep, act, false)
	r.wblk = wblk
	if dwcPhasedFits(g) {
		r.phase(st)
	}
	r.start(sc, g.n*((g.c+7)/8), g.n*g.c*g.oh*g.ow*g.kh*g.kw)
}

// depthwiseBlockedWeights lays a depthwise weight of c channels and kk
// taps each ([c, 1, kh, kw], contiguous in w) out as the channel-
// blocked kernels read it: per block of eight channels, [tap][8], zero
// for channels past c. Made once per module; laying it out per block
// on every run had cost 12% of efficientnet's depthwise time.
func depthwiseBlockedWeights(w []float32, c, kk int) []float32 {
	const cb = 8
	nblk := (c + cb - 1) / cb
	blk := make([]float32, nblk*kk*cb)
	for b := range nblk {
		depthwiseBlockWeights(blk[b*kk*cb:(b+1)*kk*cb], w[b*cb*kk:], min(cb, c-b*cb), kk)
	}
	return blk
}

// depthwiseBlockWeights lays out one block of eight channels, nch of
// them in w (kk taps each, from w[0]), into dst as [tap][8], zero past
// nch.
func depthwiseBlockWeights(dst, w []float32, nch, kk int) {
	const cb = 8
	clear(dst[:kk*cb])
	for j := 0; j < nch; j++ {
		for q := 0; q < kk; q++ {
			dst[q*cb+j] = w[j*kk+q]
		}
	}
}

// dwcRun is one channel-blocked convolution's arguments and layout,
// kept in the node's state: the parts of a split run read them there
// (no closure to allocate), each with buffers of its own.
type dwcRun struct {
	chunks
	g             convGeom
	xd, wd, bd, c []float32
	xoff, woff    int
	bo, bs        int
	ord           planeOrder
	lo, hi        float32
	act           gemm.Activation
	grouped       bool
	direct        bool      // convDirectBlocked's run
	byPos         bool      // direct: its team shares output rows (flat: blocks of positions), not output blocks
	flat          bool      // its positions run over the whole map (see [Flat direct convolution])
	bpos          int       // direct: positions a kernel block covers, 6 or 7 (see [Seven-position blocks])
	ibChunk       int       // flat: input blocks a pass over the positions reads
	flatRows      int       // flat: rows of each copy
	copies        int       // flat: copies of each input block
	packing       bool      // its input blocks' turn (xd into xp)
	xp            []float32 // its packed input, all blocks
	wblk          []float32 // its weight (convPrepacked.blk; depthwise: convPrepacked.dw, or nil)
	res           []float32 // its residual, laid out as c (nil: none)
	blkIn, blkOut bool      // direct: its input, its output (and residual) in the blocked layout, NCHW16c; the kernels write a blocked output itself, only a last block of positions past the end aside (see [Blocked layout])
	scale         []float32 // direct: its input's factors, g.n*g.c (nil: none)
	roff          int
	ep            gemm.Clamp
	nn            int // its image
	hp, nb, wp    int
	rowF, size    int
	offs          []int
	maxOff        int  // the largest offs entry
	phased        bool // depthwise at stride 2, its copy's columns by parity (see [Phased stride-2 depthwise])
	hw2           int  // phased: a phase's columns
	// bufs are the runtime's, one per part (from its scratch): In the
	// channel-blocked input copy, W the block's weights, bias and a row
	// of output, or the direct kernels' sums.
	bufs []gemm.PartBuf
}

// dwcRunFor fills the state's dwcRun for one convolution.
func (st *convState) dwcRunFor(g *convGeom, xd []float32, xoff int, wd []float32, woff int, bd []float32, bo, bs int, c []float32, ord planeOrder, ep gemm.Clamp, act gemm.Activation, grouped bool) *dwcRun {
	r := &st.dwc
	r.g, r.xd, r.xoff, r.wd, r.woff, r.bd, r.bo, r.bs, r.c, r.ord, r.act, r.grouped = *g, xd, xoff, wd, woff, bd, bo, bs, c, ord, act, grouped
	r.direct, r.packing, r.scale = false, false, nil
	r.blkIn, r.blkOut = false, false
	r.lo, r.hi = float32(math.Inf(-1)), float32(math.Inf(1))
	if ep.On {
		r.lo, r.hi = ep.Lo, ep.Hi
	}
	r.hp, r.nb, r.wp, r.rowF, r.size = dwcLayout(g)
	r.offs = dwcOffsets(g, st, r.rowF)
	r.maxOff, r.phased = r.offs[len(r.offs)-1], false
	return r
}

// [Phased stride-2 depthwise]
//
// At stride 2 along the row an output row's positions read every other
// column of the channel-blocked copy, so two positions' eight channels
// are not one 512-bit load and dwcRowS2AVX2 runs at half the width.
// With AVX-512 the copy of a depthwise convolution at stride 2 holds
// each padded row's columns dealt by parity instead (packRows8Phased-
// AVX2): the even ones, then the odd ones, hw2 columns each (half the
// row and slack for the last block's zeros). Position ow's tap kj reads
// padded column 2*ow+kj, which is column ow + kj/2 of phase kj%2: the
// positions of a row read consecutive columns of one phase per tap, as
// at stride 1, and the stride-1 AVX-512 kernel (dwcPairsAVX512) runs
// them with the taps' offsets into the phases.
// Each element's sum is dwcRowS2AVX2's, in the same order: the same
// bits.

// dwcPhasedFits reports whether a depthwise convolution's copy is
// phased: stride 2 along the row, no dilation along it, AVX-512.
func dwcPhasedFits(g *convGeom) bool {
	return useAVX512 && g.strW == 2 && g.dilW == 1
}

// phaseCols is the columns of each phase of a padded row of wp columns
// dealt by parity: half the row and slack for the packing's last block.
func phaseCols(wp int) int { return (wp+1)/2 + 4 }

// phasedCol is padded column c's offset in a row dealt by parity, hw2
// columns a phase (see [Phased stride-2 depthwise]).
func phasedCol(c, hw2 int) int { return phasedColN(c, hw2, 8) }

// phasedColN is phasedCol with cb floats a column.
func phasedColN(c, hw2, cb int) int { return ((c%2)*hw2 + c/2) * cb }

// packRowPhased packs input row src (eight channel rows sC apart, w
// columns) into row, a padded row of g's dealt by parity, hw2 columns a
// phase; its padding columns are left as they are.
func packRowPhased(row []float32, g *convGeom, xd []float32, src, hw2 int) {
	const cb = 8
	d0, d1 := phasedCol(g.padW, hw2), phasedCol(g.padW+1, hw2)
	// Each phase takes 4*ceil(w/8) columns from its first.
	n4 := (g.w + cb - 1) / cb * 4 * cb
	_ = xd[src+(cb-1)*g.sC+g.w-1]
	_ = row[max(d0, d1)+n4-1]
	packRows8PhasedAVX2(&row[d0], &row[d1], &xd[src], g.sC, g.w)
}

// phase lays r's copy out by parity (see [Phased stride-2 depthwise]).
func (r *dwcRun) phase(st *convState) {
	const cb = 8
	g := &r.g
	r.phased = true
	r.hw2 = phaseCols(r.wp)
	r.rowF = 2 * r.hw2 * cb
	r.maxOff = 0
	for ki := 0; ki < g.kh; ki++ {
		for kj := 0; kj < g.kw; kj++ {
			o := (ki*g.dilH*r.rowF + phasedCol(kj, r.hw2)) * 4
			r.offs[ki*g.kw+kj] = o
			r.maxOff = max(r.maxOff, o)
		}
	}
	// The last row's last block reads up to its last position's largest
	// tap offset.
	need := (g.oh-1)*g.strH*r.rowF + r.maxOff/4 + r.nb*cb*cb
	r.size = max(r.hp*r.rowF, need) + cb*cb
}

// dwcPackPhased is dwcPack into the phased layout (see [Phased stride-2
// depthwise]): hw2 columns a phase, rows of rowF floats.
func dwcPackPhased(xp []float32, g *convGeom, xd []float32, in, nch, rowF, hw2 int) {
	const cb = 8
	clear(xp[:g.padH*rowF])
	clear(xp[(g.padH+g.h)*rowF : (2*g.padH+g.h)*rowF])
	wp := g.w + 2*g.padW
	col := func(r, c int) int { return r + phasedCol(c, hw2) }
	for ih := 0; ih < g.h; ih++ {
		r := (g.padH + ih) * rowF
		for c := 0; c < g.padW; c++ {
			clear(xp[col(r, c) : col(r, c)+cb])
		}
		for c := g.padW + g.w; c < wp; c++ {
			clear(xp[col(r, c) : col(r, c)+cb])
		}
		if nch == cb {
			packRowPhased(xp[r:r+rowF], g, xd, in+ih*g.sH, hw2)
			continue
		}
		for i := 0; i < g.w; i++ {
			d := col(r, g.padW+i)
			for j := 0; j < cb; j++ {
				var v float32
				if j < nch {
					v = xd[in+j*g.sC+ih*g.sH+i]
				}
				xp[d+j] = v
			}
		}
	}
}

// start runs blocks [0, total): across sc's team when the output is
// separate memory and the work (multiply-adds) is worth it, else in
// order on the caller.
func (r *dwcRun) start(sc *gemm.Scratch, total, work int) {
	r.startUnit(sc, total, 1, work)
}

// startUnit is start with the blocks shared out in whole units of unit
// blocks (the last unit may be short).
func (r *dwcRun) startUnit(sc *gemm.Scratch, total, unit, work int) {
	parts := splitParts(sc, total, unit, work)
	if r.ord != planesApart {
		parts = 1
	}
	// One runtime's convolutions share its parts' buffers: they run one
	// at a time.
	r.bufs = sc.PartBufs(max(parts, 1))
	r.reset(total, unit, max(parts, 1))
	if parts < 2 {
		r.blocks(0, 0, total)
	} else {
		sc.NoteOpSplit()
		sc.Team().Run(r, parts)
	}
	r.xd, r.wd, r.bd, r.c, r.act, r.wblk, r.res = nil, nil, nil, nil, nil, nil, nil
}

// RunPart implements parallel.Task: chunks of blocks from a counter.
func (r *dwcRun) RunPart(i, _ int) {
	for lo, hi, ok := r.take(); ok; lo, hi, ok = r.take() {
		r.blocks(i, lo, hi)
	}
}

// blockBias fills bias with the bias of channels [c0, c0+len(bias))
// that exist (n of them), zero for the rest and without a bias.
func (r *dwcRun) blockBias(bias []float32, c0, n int) {
	clear(bias)
	if r.bd == nil {
		return
	}
	for j := range bias[:n] {
		bias[j] = r.bd[r.bo+(c0+j)*r.bs]
	}
}

// blocks computes blocks [b0, b1) with part's buffers: eight channels
// of an image (depthwise, taken last to first for planesBackward), or
// one group of an image (grouped).
func (r *dwcRun) blocks(part, b0, b1 int) {
	if r.direct {
		r.directBlocks(part, b0, b1)
		return
	}
	if r.grouped {
		r.groupBlocks(part, b0, b1)
		return
	}
	const cb = 8
	g := &r.g
	kk := g.kh * g.kw
	buf := &r.bufs[part]
	buf.In = growF32(buf.In, r.size)
	xp := buf.In
	clear(xp[r.hp*r.rowF:])
	nb, offs := r.nb, r.offs
	// Weights, bias, then two rows of output (see below).
	buf.W = growF32(buf.W, kk*cb+cb+2*nb*cb*cb)
	bias := buf.W[kk*cb : kk*cb+cb]
	out := buf.W[kk*cb+cb : kk*cb+cb+2*nb*cb*cb]
	plane := g.oh * g.ow
	nblk := (g.c + cb - 1) / cb
	step := g.strW // positions' columns apart in the copy
	if r.phased {
		step = 1
	}
	for k := b0; k < b1; k++ {
		blk := k
		if r.ord == planesBackward {
			blk = r.n - 1 - k
		}
		nn, c0 := blk/nblk, blk%nblk*cb
		nch := min(cb, g.c-c0)
		if r.phased {
			dwcPackPhased(xp, g, r.xd, r.xoff+nn*g.sN+c0*g.sC, nch, r.rowF, r.hw2)
		} else {
			dwcPack(xp, g, r.xd, r.xoff+nn*g.sN+c0*g.sC, nch, r.wp, r.rowF, nil)
		}
		var wk []float32
		if r.wblk != nil {
			wk = r.wblk[c0*kk : (c0+cb)*kk]
		} else {
			wk = buf.W[:kk*cb]
			depthwiseBlockWeights(wk, r.wd[r.woff+c0*kk:], nch, kk)
		}
		r.blockBias(bias, c0, nch)
		ob := (nn*g.o + c0) * plane
		for oh := 0; oh < g.oh; {
			base := oh * g.strH * r.rowF
			_ = xp[base+r.maxOff/4+((nb*cb-1)*step+1)*cb-1]
			rows := 1
			switch {
			case (g.strW == 1 || r.phased) && useAVX512:
				// Pairs of 8-position blocks, then the odd one: with a
				// next row, its pairs too and the two rows' odd ones in
				// one call (a 7x7 map's rows are one block each).
				if nb >= 2 {
					dwcPairsAVX512(&out[0], &out[cb*cb], &xp[base], &xp[base+cb*cb], nb/2, &offs[0], &wk[0], kk, &bias[0], r.lo, r.hi)
				}
				if nb%2 == 0 {
					break
				}
				o := (nb - 1) * cb * cb
				if oh+1 == g.oh {
					dwcRowS1AVX2(&out[o], &xp[base+o], 1, &offs[0], &wk[0], kk, &bias[0], r.lo, r.hi)
					break
				}
				rows = 2
				base2 := base + g.strH*r.rowF
				_ = xp[base2+r.maxOff/4+(nb*cb)*cb-1]
				out2 := out[nb*cb*cb:]
				if nb >= 2 {
					dwcPairsAVX512(&out2[0], &out2[cb*cb], &xp[base2], &xp[base2+cb*cb], nb/2, &offs[0], &wk[0], kk, &bias[0], r.lo, r.hi)
				}
				_ = out2[o+cb*cb-1]
				dwcPairsAVX512(&out[o], &out2[o], &xp[base+o], &xp[base2+o], 1, &offs[0], &wk[0], kk, &bias[0], r.lo, r.hi)
			case g.strW == 1:
				dwcRowS1AVX2(&out[0], &xp[base], nb, &offs[0], &wk[0], kk, &bias[0], r.lo, r.hi)
			default:
				dwcRowS2AVX2(&out[0], &xp[base], nb, &offs[0], &wk[0], kk, &bias[0], r.lo, r.hi)
			}
			for i := range rows {
				row := out[i*nb*cb*cb:]
				if nch == cb {
					_ = r.c[ob+(cb-1)*plane+(oh+i)*g.ow+g.ow-1]
					unpackRows8AVX2(&r.c[ob+(oh+i)*g.ow], plane, &row[0], g.ow)
				} else {
					copyTranspose32(r.c, ob+(oh+i)*g.ow, plane, row, 0, cb, nch, g.ow)
				}
			}
			oh += rows
		}
		if r.act != nil { // the block's planes are in cache
			r.act(r.c[ob : ob+nch*plane])
		}
	}
}

// dwcLayout is g's channel-blocked input copy: hp rows of wp columns
// (rowF floats a row), nb blocks of 8 output positions a row, and the
// floats one block of eight channels needs (size).
func dwcLayout(g *convGeom) (hp, nb, wp, rowF, size int) {
	const cb = 8
	hp, wp = g.h+2*g.padH, g.w+2*g.padW
	nb = (g.ow + cb - 1) / cb
	rowF = wp * cb
	// The last row's last block reads up to its last position's last
	// tap: past the copy when the row is padded out to nb*8 positions.
	need := ((g.oh-1)*g.strH+(g.kh-1)*g.dilH)*rowF + ((nb*cb-1)*g.strW+(g.kw-1)*g.dilW+1)*cb
	// A row packed eight columns at a time stores up to 7 zero columns
	// past its end (see packRows8AVX2): into padding, the next row
	// (written after it) or this slack.
	size = max(hp*rowF, need) + 7*cb
	return hp, nb, wp, rowF, size
}

// dwcOffsets returns each tap's byte offset in the copy from the
// position it serves (taps row-major), in st.
func dwcOffsets(g *convGeom, st *convState, rowF int) []int {
	kk := g.kh * g.kw
	if cap(st.dwcOffs) < kk {
		st.dwcOffs = make([]int, kk)
	}
	offs := st.dwcOffs[:kk]
	tapOffsets(offs, g, rowF, 8)
	return offs
}

// tapOffsets sets offs to each tap's byte offset from the position it
// serves in a copy of rowF floats a row and cb a column.
func tapOffsets(offs []int, g *convGeom, rowF, cb int) {
	for ki := 0; ki < g.kh; ki++ {
		for kj := 0; kj < g.kw; kj++ {
			offs[ki*g.kw+kj] = (ki*g.dilH*rowF + kj*g.dilW*cb) * 4
		}
	}
}

// dwcPack fills xp, laid out [hp][wp][8], with channels [0, nch) of the
// input planes starting at xd[in] (g's strides), zero-padded: g.padH
// rows above and below, g.padW columns either side, and channels past
// nch zero. scale, when not nil, holds the channels' factors, which
// multiply them (see [Scaled convolution input]).
func dwcPack(xp []float32, g *convGeom, xd []float32, in, nch, wp, rowF int, scale []float32) {
	const cb = 8
	clear(xp[:g.padH*rowF])
	clear(xp[(g.padH+g.h)*rowF : (2*g.padH+g.h)*rowF])
	for ih := 0; ih < g.h; ih++ {
		r := (g.padH + ih) * rowF
		clear(xp[r : r+g.padW*cb])
		clear(xp[r+(g.padW+g.w)*cb : r+rowF])
		if nch < cb {
			clear(xp[r+g.padW*cb : r+(g.padW+g.w)*cb])
		}
		if nch == cb {
			_ = xd[in+ih*g.sH+(cb-1)*g.sC+g.w-1]
			end := r + g.padW*cb + (g.w+cb-1)/cb*cb*cb
			_ = xp[end-1]
			if scale != nil {
				_ = scale[cb-1]
				packRows8ScaledAVX2(&xp[r+g.padW*cb], &xd[in+ih*g.sH], g.sC, g.w, &scale[0])
				// The columns stored past the row: zero, not 0*s.
				clear(xp[r+(g.padW+g.w)*cb : end])
				continue
			}
			packRows8AVX2(&xp[r+g.padW*cb], &xd[in+ih*g.sH], g.sC, g.w)
		} else {
			copyTranspose32(xp, r+g.padW*cb, cb, xd, in+ih*g.sH, g.sC, g.w, nch)
			if scale != nil { // not reached by the direct kernels (c%8 == 0)
				for i := range g.w {
					col := xp[r+(g.padW+i)*cb:][:nch]
					for j := range col {
						col[j] *= scale[j]
					}
				}
			}
		}
	}
}

// [Channel-blocked grouped convolution]
//
// A grouped convolution of a few channels a group (RegNet's groups of
// 8) is a product of 8 rows per group for gemm: two micro-kernel panels
// of 6, a third of them empty, and for a stride the whole image dealt
// into phase planes. In the channel-blocked layout of [Channel-blocked
// depthwise] a group's input is cg/8 copies of eight channels each, and
// each output position's eight output channels of a block are one
// vector: per tap and input channel, the eight weights are a vector and
// the input value is broadcast (gcRowS1AVX2, gcRowS2AVX2, eight
// positions at a time). The sums run over input blocks, then taps, then
// the block's channels, each a fused multiply-add after the bias.

// convGroupedBlockedFits reports whether convGroupedBlocked takes g:
// groups of 8 or 16 input channels and up to 64 output channels, both
// multiples of 8, unit-stride input rows, stride 1 or 2 along the row,
// and the assembly.
func convGroupedBlockedFits(g *convGeom) bool {
	if !useAVX2 || g.groups <= 1 {
		return false
	}
	cg, og := g.c/g.groups, g.o/g.groups
	return cg%8 == 0 && og%8 == 0 && cg <= 16 && og <= 64 && g.sW == 1 &&
		(g.strW == 1 || g.strW == 2) && g.oh > 0 && g.ow > 0
}

// convGroupedBlocked computes a grouped convolution (see [Channel-
// blocked grouped convolution]) whose output c does not overlap its
// input: c = act(clamp(conv + bias)). The weight is [o, cg, kh, kw] at
// wd[woff:]. sc's team shares the groups out.
func convGroupedBlocked(sc *gemm.Scratch, g *convGeom, xd []float32, xoff int, wd []float32, woff int, bd []float32, bo, bs int, c []float32, st *convState, ep gemm.Clamp, act gemm.Activation) {
	r := st.dwcRunFor(g, xd, xoff, wd, woff, bd, bo, bs, c, planesApart, ep, act, true)
	r.start(sc, g.n*g.groups, g.n*g.o*(g.c/g.groups)*g.oh*g.ow*g.kh*g.kw)
}

// groupBlocks computes blocks [b0, b1), each one group of one image,
// with part's buffers.
func (r *dwcRun) groupBlocks(part, b0, b1 int) {
	const cb = 8
	g := &r.g
	cg, og := g.c/g.groups, g.o/g.groups
	nib := cg / cb
	kk := g.kh * g.kw
	size, nb, offs := r.size, r.nb, r.offs
	buf := &r.bufs[part]
	buf.In = growF32(buf.In, nib*size)
	xp := buf.In
	for ib := 0; ib < nib; ib++ {
		clear(xp[ib*size+r.hp*r.rowF : (ib+1)*size])
	}
	nw := nib * kk * cb * cb
	buf.W = growF32(buf.W, nw+cb+nb*cb*cb)
	wk := buf.W[:nw]
	bias := buf.W[nw : nw+cb]
	out := buf.W[nw+cb : nw+cb+nb*cb*cb]
	plane := g.oh * g.ow
	for blk := b0; blk < b1; blk++ {
		nn, gr := blk/g.groups, blk%g.groups
		for ib := 0; ib < nib; ib++ {
			dwcPack(xp[ib*size:], g, r.xd, r.xoff+nn*g.sN+(gr*cg+ib*cb)*g.sC, cb, r.wp, r.rowF, nil)
		}
		for ob := 0; ob < og; ob += cb {
			o0 := gr*og + ob
			// wk[((ib*kk+q)*8+ci)*8+j] is output channel o0+j's weight
			// for input channel ib*8+ci of the group, tap q.
			for j := 0; j < cb; j++ {
				src := r.wd[r.woff+(o0+j)*cg*kk:][:cg*kk]
				for ci, q := 0, 0; ci*kk+q < len(src); {
					wk[((ci/cb*kk+q)*cb+ci%cb)*cb+j] = src[ci*kk+q]
					if q++; q == kk {
						ci, q = ci+1, 0
					}
				}
			}
			r.blockBias(bias, o0, cb)
			ob0 := (nn*g.o + o0) * plane
			for oh := 0; oh < g.oh; oh++ {
				base := oh * g.strH * r.rowF
				_ = xp[(nib-1)*size+base+offs[kk-1]/4+((nb*cb-1)*g.strW+1)*cb-1]
				if g.strW == 1 {
					gcRowS1AVX2(&out[0], &xp[base], nb, &offs[0], &wk[0], kk, &bias[0], r.lo, r.hi, nib, size*4)
				} else {
					gcRowS2AVX2(&out[0], &xp[base], nb, &offs[0], &wk[0], kk, &bias[0], r.lo, r.hi, nib, size*4)
				}
				_ = r.c[ob0+(cb-1)*plane+oh*g.ow+g.ow-1]
				unpackRows8AVX2(&r.c[ob0+oh*g.ow], plane, &out[0], g.ow)
			}
			if r.act != nil { // the block's planes are in cache
				r.act(r.c[ob0 : ob0+cb*plane])
			}
		}
	}
}

// [Channel-blocked direct convolution]
//
// An ungrouped stride-1 convolution larger than 1x1 whose channels
// fill eight-channel input blocks and sixteen-channel output blocks
// (resnet's and densenet's 3x3 ones) reads the same channel-blocked
// copy: per image, every input block is packed once (dwcPack), then
// each output block of 16 channels runs row by row through bcRowAVX2,
// six positions at a time, two weight vectors and six broadcast inputs
// a channel and tap into twelve accumulators: the gemm micro-kernel's
// ratio of loads to multiply-adds, with no im2col and no wide grid (on
// maps of 28 and 56 columns, 77-85 against the wide path's 59-75
// GFLOP/s). A row's last block may run past its width into the next
// row's copy or slack; those positions are dropped. The two halves of
// each row are transposed back into the output planes; a residual is
// then added, the clamp and activation applied, block by block. Below
// 20 columns six-position blocks along a row waste too much (a 7x7 map
// would run 12 positions a row): such maps run flat (see [Flat direct
// convolution]).

// [Half output blocks]
//
// Output channels come in blocks of 16; a convolution with 8 more
// (squeezenet1_1's classifier, 512 -> 1000 at 13x13; mobilenet_v3's
// 80 -> 200 at 14x14) runs its last block with zero weights and bias
// for the missing 8, as ONNX Runtime's NCHWc convolutions pad 1000 to
// 1008, and keeps only the first half of that block's sums. Before,
// such convolutions took the rows kernel or gemm: the classifier
// 1.01-1.02 ms there (BenchmarkPointwiseRows, rows/512to1000@169)
// against 0.93-0.98 here (BenchmarkDirectBlocked,
// 512x13x13_1000_k1_s1); in the model 0.965-1.003 -> 0.943-0.953 ms
// (srbench ops -per-node).

// directOutBlocks is the 16-channel output blocks of o channels, the
// last one half empty where o%16 == 8 (see [Half output blocks]).
func directOutBlocks(o int) int { return (o + 15) / 16 }

// directBlockedMaxRow is the widest output row bcRowAVX2's buffer holds:
// its second half starts 4096 floats in.
const directBlockedMaxRow = 504

// directBlockedMinRow is the narrowest output row run row by row;
// narrower maps run flat (see [Flat direct convolution]).
const directBlockedMinRow = 20

// directFlatChunk is how many positions of a flat map one bcRowAVX2
// call computes: whole six-position blocks that fit its buffer.
const directFlatChunk = directBlockedMaxRow

// directFlatL2 is the bytes of input copies and weights a flat pass
// over the positions reads, sized to stay in L2 (BenchmarkDirectBlocked:
// 96 and 192 KB alike, 384 KB 5-15% slower on resnet's shapes).
var directFlatL2 = 192 << 10

// directMaxStride is the largest stride convDirectBlocked takes (flat).
const directMaxStride = 2

// [Flat direct convolution]
//
// On a narrow map (resnet's 14x14 and 7x7 ones) six-position blocks
// along each row waste most of their last block (a 7-position row runs
// 12), and the wide path's grid wastes its padding columns (49 of 64 on
// 7x7). Instead the positions run in blocks of six over the whole map,
// in order, across row ends, which needs each tap's input at one offset
// from every position. So the padded input block is copied once per
// kernel column kj and row phase ph (ph < the row stride s and the
// kernel's height; one phase at stride 1): copy (kj, ph) has row r =
// padded row s*r+ph, and in it
// column ow = padded column sw*ow+kj, ow < OW. Tap (ki, kj) of flat
// position p = oh*OW+ow then reads element p + (ki/s)*OW of copy
// (kj, ki%s). A 7x7 map runs 54 positions for 49, a 14x14 one 198 for
// 196, and a strided convolution needs no phase planes or grid. The
// copies cost kw*s times the output plane per channel, small beside the
// products. At stride 2 along the row they are made row by row from
// the input's rows dealt by parity (packFlatPhased): resnet50's 128
// channels of 56x56 at stride 2 1.54 -> 1.24-1.29 ms
// (BenchmarkDirectBlocked).

// flatLayout returns the flat layout's rows per copy, copies and the
// floats of one input block, and sets offs to each tap's byte offset.
// cb is the floats a position (8, or 16 blocked).
func flatLayout(g *convGeom, npos int, offs []int, cb int) (rows, copies, size int) {
	rows = g.oh + (g.kh-1)/g.strH
	nph := min(g.strH, g.kh) // the row phases the taps read
	copies = g.kw * nph
	cs := rows * g.ow // a copy's positions
	for ki := 0; ki < g.kh; ki++ {
		for kj := 0; kj < g.kw; kj++ {
			offs[ki*g.kw+kj] = ((kj*nph+ki%g.strH)*cs + ki/g.strH*g.ow) * cb * 4
		}
	}
	// The last block reads up to its last position at the last copy's
	// largest row offset.
	size = max(copies*cs, (copies-1)*cs+(g.kh-1)/g.strH*g.ow+npos) * cb
	return rows, copies, size
}

// packFlat fills blk, input block ib of image r.nn, with the flat
// layout's copies, packing the padded block first into part's buffer.
func (r *dwcRun) packFlat(part, ib int, blk []float32) {
	cb := r.posF()
	g := &r.g
	buf := &r.bufs[part]
	buf.In = growF32(buf.In, r.hp*r.rowF+7*cb)
	tmp := buf.In
	r.packBlock(tmp, ib)
	row := g.ow * cb
	nph := r.copies / g.kw
	for c := 0; c < r.copies; c++ {
		kj, ph := c/nph, c%nph
		for i := 0; i < r.flatRows; i++ {
			d := blk[(c*r.flatRows+i)*row:][:row]
			h := g.strH*i + ph
			if h >= r.hp {
				clear(d)
				continue
			}
			src := tmp[h*r.rowF+kj*cb:]
			if g.strW == 1 {
				copy(d, src[:row])
				continue
			}
			for ow := 0; ow < g.ow; ow++ {
				copy(d[ow*cb:(ow+1)*cb], src[ow*g.strW*cb:])
			}
		}
	}
	clear(blk[r.copies*r.flatRows*row:])
}

// packFlatPhased is packFlat at stride 2 along the row: each padded
// row of the block is packed once, its columns dealt by parity
// (packRows8PhasedAVX2, as in [Phased stride-2 depthwise]), into part's
// buffer, and each copy's row is then a run of one phase: copy kj's
// column ow is padded column 2*ow+kj, column ow+kj/2 of phase kj%2.
// packFlat's padded block and its gather of every other column took a
// quarter of resnet50's stride-2 3x3 convolutions.
func (r *dwcRun) packFlatPhased(part, ib int, blk []float32) {
	cb := r.posF()
	g := &r.g
	hw2 := phaseCols(r.wp)
	buf := &r.bufs[part]
	buf.In = growF32(buf.In, 2*hw2*cb)
	rb := buf.In[:2*hw2*cb]
	// The padding columns stay zero; the packing rewrites the rest.
	clear(rb)
	_ = rb[phasedColN(g.kw-1, hw2, cb)+g.ow*cb-1]
	in := r.inBlock(ib)
	row := g.ow * cb
	nph := r.copies / g.kw
	for i := 0; i < r.flatRows; i++ {
		for ph := 0; ph < nph; ph++ {
			ih := g.strH*i + ph - g.padH
			pad := ih < 0 || ih >= g.h
			switch {
			case pad:
			case r.blkIn:
				packRowPhasedBlocked(rb, g, r.xd, in+ih*g.w*cb, hw2)
			default:
				packRowPhased(rb, g, r.xd, in+ih*g.sH, hw2)
			}
			for kj := 0; kj < g.kw; kj++ {
				d := blk[((kj*nph+ph)*r.flatRows+i)*row:][:row]
				if pad {
					clear(d)
					continue
				}
				copy(d, rb[phasedColN(kj, hw2, cb):][:row])
			}
		}
	}
	clear(blk[r.copies*r.flatRows*row:])
}

// directBlockedWeights packs an [o, c, kk] weight as [⌈o/16⌉][c/8][kk][8][16]:
// element (ob, ib, q, ci, j) is output channel 16ob+j's weight for input
// channel 8ib+ci at tap q, zero past o (see [Half output blocks]).
func directBlockedWeights(w []float32, o, c, kk int) []float32 {
	blk := make([]float32, directOutBlocks(o)*16*c*kk)
	nib := c / 8
	for oc := 0; oc < o; oc++ {
		ob, j := oc/16, oc%16
		for ic := 0; ic < c; ic++ {
			for q := 0; q < kk; q++ {
				blk[(((ob*nib+ic/8)*kk+q)*8+ic%8)*16+j] = w[(oc*c+ic)*kk+q]
			}
		}
	}
	return blk
}

// convDirectBlockedFits reports whether convDirectBlocked takes g with
// the weight w packed in pre.
func convDirectBlockedFits(g *convGeom, pre *convPrepacked, w *ivalue.Tensor) bool {
	// A 1x1 convolution at stride 1 is a plain product for gemm or the
	// rows kernel, but over small maps with AVX-512 (see [Small
	// pointwise maps]).
	strided := g.strH > 1 || g.strW > 1
	return useAVX2 && pre != nil && pre.w == w && pre.blkOK && g.groups == 1 && g.strH <= directMaxStride && g.strW <= directMaxStride &&
		(g.kh*g.kw > 1 || strided || directSmallPointwise(g)) &&
		g.dilH == 1 && g.dilW == 1 && g.sW == 1 && g.ow >= 1 && g.ow <= directBlockedMaxRow && g.oh > 0
}

// [Small pointwise maps]
//
// Over a small map a pointwise convolution's weight outweighs its
// input (resnet50's 1024->256 at 14x14: 1 MB of weight against 0.8 MB
// of input; 512->2048 at 7x7: 4 MB against 0.1 MB), and in a model the
// weight comes from memory on every run. The rows kernel (see
// [Pointwise rows]) reads it as eight rows of broadcasts per group of
// output channels; the channel-blocked direct kernels read it as one
// sequential stream of 16-channel vectors, and their input copy and
// unpacking are cheap at these sizes. So from directSmallPlane
// positions down, with AVX-512, the direct kernels take those whose
// output channels are at least their positions (weight at least
// input). resnet50's 1x1s at 14x14, with 16 MB written between runs
// (medians of single runs): 1024->256 664 -> 585 µs and 256->1024 629
// -> 577 with one goroutine, 1024->256 552 -> 497 split across two;
// the model 2-3% faster (srbench ops, alternating rounds). At 28x28
// and 56x56 the rows kernel stays ahead (512->128 at 28x28: 607
// against 630).

// directSmallPlane is the most output positions a pointwise
// convolution the direct kernels take has (see [Small pointwise
// maps]); directSmallMin the fewest (below, a gemv).
const (
	directSmallPlane = 256
	directSmallMin   = 32
)

// directSmallPointwise reports whether g is a pointwise convolution
// over a small map whose weight is at least its input (see [Small
// pointwise maps]).
func directSmallPointwise(g *convGeom) bool {
	plane := g.oh * g.ow
	return useAVX512 && g.kh == 1 && g.kw == 1 && g.padH == 0 && g.padW == 0 &&
		plane >= directSmallMin && plane <= directSmallPlane && g.o >= plane
}

// [Seven-position blocks]
//
// The direct kernels compute six positions a call block, so a row of
// 56 or 28 positions (resnet's and densenet's 3x3 convolutions) runs
// 60 or 30, and squeezenet's 55 and 27 run 60 and 30: 7-11% of the
// products thrown away. Seven fit those rows (56, 28, 55+1, 27+1) and
// a 7x7 map (49 flat, where six run 54), so bcRow2x7AVX512 takes two
// output blocks seven positions at a time (fourteen accumulators, two
// weight vectors and seven broadcasts a channel and tap: no room for
// four blocks). A convolution runs in blocks of seven where that
// wastes at least 3% fewer positions than six and its output blocks
// pair up; the sums are the same either way.

// directBlockPositions is the positions a call block of the direct
// kernels covers for g, by rows or flat (see [Seven-position blocks]).
func directBlockPositions(g *convGeom, flat bool) int {
	if !useAVX512 || directOutBlocks(g.o)%2 != 0 {
		return 6
	}
	n := g.ow
	if flat {
		n = g.oh * g.ow
	}
	six, seven := (n+5)/6*6, (n+6)/7*7
	if 100*(six-seven) >= 3*six {
		return 7
	}
	return 6
}

// convDirectBlocked computes a convolution (see [Channel-blocked direct
// convolution]) whose output c does not overlap its input: c =
// act(clamp(conv + bias + res)), res (laid out as c from roff) nil for
// none. scale, when not nil, multiplies the input: one factor a channel
// of each image, g.n*g.c floats (see [Scaled convolution input]; unit
// stride along rows only). sc's team shares each image's output blocks
// out.
func convDirectBlocked(sc *gemm.Scratch, g *convGeom, blk []float32, xd []float32, xoff int, scale []float32, bd []float32, bo, bs int, res []float32, roff int, c []float32, st *convState, ep gemm.Clamp, act gemm.Activation) {
	r := st.dwcRunFor(g, xd, xoff, nil, 0, bd, bo, bs, c, planesApart, ep, act, false)
	r.direct, r.roff, r.ep, r.scale = true, roff, ep, scale
	r.runDirect(sc, blk, res)
}

// runDirect runs the direct convolution r describes (dwcRunFor, with
// direct set and the layout chosen) with the packed weight blk and the
// residual res.
func (r *dwcRun) runDirect(sc *gemm.Scratch, blk, res []float32) {
	g := &r.g
	cb := r.posF()
	nblk := g.c / cb // the copy's input blocks
	plane := g.oh * g.ow
	// Pointwise in the blocked layout: flat, over the input as it is
	// where nothing pads it (see [Blocked layout]).
	pointwise := g.kh == 1 && g.kw == 1 && g.strH == 1 && g.strW == 1 && g.padH == 0 && g.padW == 0
	r.flat = g.ow < directBlockedMinRow || g.strH > 1 || g.strW > 1 || g.ow > directBlockedMaxRow || (r.blkIn && pointwise)
	r.bpos = directBlockPositions(g, r.flat)
	if r.blkOut {
		r.bpos = blockedPositions(g, r.flat, r.bpos)
	}
	if cb != 8 { // the padded copy's columns hold cb floats
		r.rowF = r.wp * cb
		if !r.flat {
			tapOffsets(r.offs, g, r.rowF, cb)
		}
	}
	if r.flat {
		r.nb = (plane + r.bpos - 1) / r.bpos
		r.flatRows, r.copies, r.size = flatLayout(g, r.nb*r.bpos, r.offs, cb)
		// A pass reads each copy's chunk of positions and the rows
		// its taps reach below them, not the whole block; the chunks
		// count the kernels' eight-channel halves, whole blocks.
		pass := min(r.size, r.copies*(min(r.nb*r.bpos, directFlatChunk)+(g.kh-1)/g.strH*g.ow)*cb)
		r.ibChunk = max(1, directFlatL2/((g.kh*g.kw*16*cb+pass)*4)) * (cb / 8)
	} else {
		// Blocks of bpos positions: the last one of a row reads up to
		// its last position's last tap.
		r.nb = (g.ow + r.bpos - 1) / r.bpos
		need := ((g.oh-1)+(g.kh-1))*r.rowF + ((r.nb*r.bpos-1)+(g.kw-1)+1)*cb
		r.size = max(r.hp*r.rowF, need) + 7*cb
	}
	// A blocked pointwise input is already the flat copy (one copy of
	// plane positions a block) where the kernels' last block reads no
	// further than the input's memory goes: positions past the plane
	// are the next block's or the slack's, computed and dropped.
	inPlace := r.blkIn && pointwise && r.flat
	var xp []float32
	if inPlace {
		r.size = plane * cb
		if len(r.xd)-r.xoff < (g.n*nblk)*r.size+(r.nb*r.bpos-plane)*cb {
			inPlace = false
			r.size = max(r.size, r.nb*r.bpos*cb)
		}
	}
	if !inPlace {
		// The channel-blocked input copy lives only while this
		// convolution runs: the runtime's scratch holds one for all its
		// convolutions (each node keeping its own held the sum of their
		// inputs, 9.6 MB a runtime for resnet18).
		xp = sc.Floats(nblk * r.size)
	}
	xd, c, bd, act := r.xd, r.c, r.bd, r.act
	for nn := 0; nn < g.n; nn++ {
		// The input blocks, then the output blocks, each shared across
		// the team (start drops the slices at its end).
		r.nn, r.xd = nn, xd
		if inPlace {
			r.xp = xd[r.inBlock(0):]
		} else {
			r.xp, r.packing = xp, true
			r.start(sc, nblk, nblk*r.hp*r.rowF)
			r.packing = false
		}
		r.wblk, r.res, r.c, r.bd, r.act = blk, res, c, bd, act
		// With AVX-512 a team shares pairs of output blocks (see
		// [Paired output blocks]).
		unit := 1
		if useAVX512 {
			unit = 2
		}
		nob, work := directOutBlocks(g.o), g.o*g.c*g.oh*g.ow*g.kh*g.kw
		if t := sc.Team(); t != nil && (nob+unit-1)/unit < t.Size() {
			// Too few output blocks to go round: see [Position splits].
			r.byPos = true
			if r.flat {
				r.startUnit(sc, r.nb, 1, work)
			} else {
				r.startUnit(sc, g.oh, 1, work)
			}
			r.byPos = false
			continue
		}
		r.startUnit(sc, nob, unit, work)
	}
	r.xp = nil
}

// inBlock is the offset in r.xd of input block ib of image r.nn: eight
// channel planes sC apart, or one blocked block (see [Blocked layout]).
func (r *dwcRun) inBlock(ib int) int {
	g := &r.g
	if r.blkIn {
		const cb = nchwcBlock
		return r.xoff + (r.nn*(g.c/cb)+ib)*g.h*g.w*cb
	}
	return r.xoff + r.nn*g.sN + ib*8*g.sC
}

// posF is the floats a position of r's input copy (and blocked
// output) holds: 16 in the blocked layout (NCHW16c), else 8.
func (r *dwcRun) posF() int {
	if r.blkIn {
		return nchwcBlock
	}
	return 8
}

// halfAt is the offset in r's input copy of the kernels' eight-channel
// half ib (the first of a block where the copy's blocks hold 16).
func (r *dwcRun) halfAt(ib int) int { return ib / (r.posF() / 8) * r.size }

// packBlock packs input block ib of image r.nn into xp as dwcPack
// does (dwcPackBlocked from the blocked layout).
func (r *dwcRun) packBlock(xp []float32, ib int) {
	if r.blkIn {
		dwcPackBlocked(xp, &r.g, r.xd, r.inBlock(ib), r.rowF)
		return
	}
	dwcPack(xp, &r.g, r.xd, r.inBlock(ib), 8, r.wp, r.rowF, r.blockScale(ib))
}

// [Position splits]
//
// A team shares a direct convolution's output blocks (pairs of them
// with AVX-512), each goroutine computing its blocks at every position.
// Where there are fewer pairs than goroutines (densenet121's 3x3
// convolutions into 32 channels: one pair), it shares the positions
// instead: whole output rows, or on a flat map whole blocks of bpos
// positions, each goroutine computing every output block there. Every
// position's sums are computed as they are alone, so the output is the
// same bits.

// blockScale is input block ib's eight factors for image r.nn, or nil
// (see [Scaled convolution input]).
func (r *dwcRun) blockScale(ib int) []float32 {
	if r.scale == nil {
		return nil
	}
	const cb = 8
	return r.scale[r.nn*r.g.c+ib*cb:][:cb]
}

// directBlocks packs input blocks [b0, b1) of image r.nn (r.packing),
// or computes its output blocks [b0, b1) of 16 channels with part's
// buffers.
func (r *dwcRun) directBlocks(part, b0, b1 int) {
	const cb = 8
	g := &r.g
	if r.packing { // blocks [b0, b1) of input channels
		for ib := b0; ib < b1; ib++ {
			blk := r.xp[ib*r.size : (ib+1)*r.size]
			if r.flat && g.strW == 2 && useAVX2 {
				r.packFlatPhased(part, ib, blk)
				continue
			}
			if r.flat {
				r.packFlat(part, ib, blk)
				continue
			}
			clear(blk[r.hp*r.rowF:])
			r.packBlock(blk, ib)
		}
		return
	}
	lo, hi := r.lo, r.hi
	if r.res != nil { // clamped after the residual
		lo, hi = float32(math.Inf(-1)), float32(math.Inf(1))
	}
	nob := directOutBlocks(g.o)
	switch {
	case r.byPos && r.flat: // blocks [b0, b1) of bpos positions
		r.directFlat(part, 0, nob, b0*r.bpos, min(b1*r.bpos, g.oh*g.ow), lo, hi)
	case r.byPos: // rows [b0, b1)
		r.directRows(part, 0, nob, b0, b1, lo, hi)
	case r.flat:
		r.directFlat(part, b0, b1, 0, g.oh*g.ow, lo, hi)
	default:
		r.directRows(part, b0, b1, 0, g.oh, lo, hi)
	}
}

// directRows computes output rows [oh0, oh1) of output blocks [b0, b1)
// row by row, each row in blocks of bpos positions along it.
func (r *dwcRun) directRows(part, b0, b1, oh0, oh1 int, lo, hi float32) {
	g := &r.g
	cb := r.posF()
	nib, nblk := g.c/8, g.c/cb // the kernels' halves, the copy's blocks
	kk := g.kh * g.kw
	buf := &r.bufs[part]
	// Up to four output blocks' rows (two halves of 4096 floats each),
	// then their biases: see [Paired output blocks].
	const bufLen = 4*8192 + 64
	buf.W = growF32(buf.W, bufLen)
	bias := buf.W[4*8192 : 4*8192+64]
	plane := g.oh * g.ow
	xp, offs := r.xp, r.offs
	wblock := g.c * kk * 16
	for ob := b0; ob < b1; {
		nob := blocksAtOnce(b1-ob, r.bpos)
		o0 := ob * 16
		nch := min(16*nob, g.o-o0) // all but a half last block's 8
		r.blockBias(bias[:16*nob], o0, nch)
		wk := r.wblk[ob*wblock : (ob+nob)*wblock]
		ob0 := (r.nn*g.o + o0) * plane
		for oh := oh0; oh < oh1; oh++ {
			base := oh * r.rowF
			_ = xp[(nblk-1)*r.size+base+offs[kk-1]/4+(r.nb*r.bpos)*cb-1]
			// Positions from p go through the sums aside: all of them,
			// or with direct writes only a last block past the row's end
			// (the whole blocks go straight into the blocked output).
			p, nbuf := 0, r.nb
			if r.blkOut {
				full := g.ow / r.bpos
				if full > 0 {
					at := ob0 + oh*g.ow*cb
					_ = r.c[at+(nob*16-cb)*plane+full*r.bpos*cb-1]
					directKernel(nob, r.bpos, r.blkIn, &r.c[at], &xp[base], full, &offs[0], &wk[0], kk, &bias[0], lo, hi, nib, r.size*4, 0, 8*plane*4, wblock*4, 16*plane*4, 16*4)
				}
				p, nbuf = full*r.bpos, r.nb-full
			}
			if nbuf == 0 {
				continue
			}
			directKernel(nob, r.bpos, r.blkIn, &buf.W[0], &xp[base+p*cb], nbuf, &offs[0], &wk[0], kk, &bias[0], lo, hi, nib, r.size*4, 0, 4096*4, wblock*4, 8192*4, 16*4)
			for h := range nob {
				r.storeBlock(ob0+h*16*plane, oh*g.ow+p, buf.W[h*8192:(h+1)*8192], 4096, g.ow-p, nch-16*h)
			}
		}
		r.finishPositions(ob0, nch, oh0*g.ow, (oh1-oh0)*g.ow)
		ob += nob
	}
}

// [Weight prefetch]
//
// A small map's convolution reads more weight than input (see [Small
// pointwise maps]), and in a model the weight comes from memory: the
// kernel's first block of positions for a group of output blocks waits
// on it, the next blocks find it in cache. On that first block
// bcRow2AVX512, bcRow2x7AVX512 and bcRow4AVX512 prefetch each weight
// stream 4 KB ahead (eight steps of input block and tap), one
// PREFETCHT0 a cache line. Alternating srbench ops rounds against the
// kernels without: efficientnet_b0 0.984, mobilenet_v3_large 0.981,
// resnet50 0.985, densenet121 0.974, regnet_y_400mf 0.963,
// shufflenet_v2_x1_0 0.995 (five or six rounds each); efficientnet's
// 192 -> 1152 at 7x7 184-192 -> 154-170 µs. BenchmarkDirectBlockedEvicted
// (medians of five rounds): 320 -> 1280 at 7x7 290 -> 255 µs, 192 ->
// 1152 147 -> 135, 512 -> 512 3x3 at 7x7 1381 -> 1318; 1152 -> 192 171
// -> 187, and the rest within 3%. Tried and dropped: prefetching the
// next group's weights instead (all on the first block, or a line a
// step spread over every block): 1152 -> 320 and 1152 -> 192 slower,
// the models no faster than with this.

// [Paired output blocks]
//
// With AVX-512 one register holds all 16 channels of an output block
// at one position, so a block's six positions would fill only six
// accumulators. bcRow2AVX512 computes two adjacent output blocks
// instead (twelve accumulators, two weight vectors and six broadcasts a
// channel, as bcRowAVX2 has), each block's rows, weights and biases
// where bcRowAVX2 would put them for that block alone, so everything
// around the kernel is unchanged. Each element's sum is the same, in
// the same order: the results are bit for bit bcRowAVX2's.
// bcRow4AVX512 goes on to four blocks (24 accumulators: four weight
// vectors and six broadcasts a channel for 24 multiply-adds) where four
// are left, the same way: resnet's 3x3 convolutions 1-3% faster
// (BenchmarkDirectBlocked, 64x56x56 184-187 -> 188-190 GFLOP/s, 512x7x7
// 174-176 -> 179-181).

// blocksAtOnce is how many of n output blocks the next call of the
// direct kernels computes in blocks of bpos positions: four or two with
// AVX-512 (bcRow4AVX512, bcRow2AVX512), else one (bcRowAVX2); always
// two at seven positions (bcRow2x7AVX512, n even).
func blocksAtOnce(n, bpos int) int {
	switch {
	case bpos == 7:
		return 2
	case useAVX512 && n >= 4:
		return 4
	case useAVX512 && n >= 2:
		return 2
	}
	return 1
}

// directKernel runs the direct kernel for nob output blocks (see
// blocksAtOnce) in blocks of bpos positions, with bcRow2AVX512's
// arguments (wpair, opair and bpair unused for one block); b16 over
// NCHW16c (see [Blocked layout]), where one block runs as a pair with
// itself (the same sums stored twice in one place).
func directKernel(nob, bpos int, b16 bool, out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32, nib, bstride, acc, half, wpair, opair, bpair int) {
	k2, k4, k7 := bcRow2AVX512, bcRow4AVX512, bcRow2x7AVX512
	if b16 {
		k2, k4, k7 = bcRow2x16AVX512, bcRow4x16AVX512, bcRow2x7x16AVX512
	}
	switch {
	case bpos == 7:
		k7(out, in, nb, offs, w, taps, bias, lo, hi, nib, bstride, acc, half, wpair, opair, bpair)
	case nob == 4:
		k4(out, in, nb, offs, w, taps, bias, lo, hi, nib, bstride, acc, half, wpair, opair, bpair)
	case nob == 2:
		k2(out, in, nb, offs, w, taps, bias, lo, hi, nib, bstride, acc, half, wpair, opair, bpair)
	case b16:
		k2(out, in, nb, offs, w, taps, bias, lo, hi, nib, bstride, acc, half, 0, 0, 0)
	default:
		bcRowAVX2(out, in, nb, offs, w, taps, bias, lo, hi, nib, bstride, acc, half)
	}
}

// directFlat computes positions [pa, pe) (pa a multiple of bpos) of
// output blocks [b0, b1) flat (see [Flat direct convolution]), up to
// directFlatChunk positions at a time. The input
// blocks go in chunks that stay in L2 while every output block's
// weights for them stream past, each chunk adding to the sums so far
// (the clamp with the last): the weights are read once, the input once
// per chunk of positions.
func (r *dwcRun) directFlat(part, b0, b1, pa, pe int, lo, hi float32) {
	g := &r.g
	cb := r.posF()
	nib, nblk := g.c/8, g.c/cb // the kernels' halves, the copy's blocks
	kk := g.kh * g.kw
	plane := g.oh * g.ow
	xp, offs := r.xp, r.offs
	buf := &r.bufs[part]
	// The largest tap offset: with a stride, not the last tap's.
	maxOff := slices.Max(offs[:kk])
	for p0 := pa; p0 < pe; p0 += directFlatChunk {
		nb := min((pe-p0+r.bpos-1)/r.bpos, directFlatChunk/r.bpos)
		_ = xp[(nblk-1)*r.size+p0*cb+maxOff/4+nb*r.bpos*cb-1]
		// Per output block: its sums for the positions, in two halves
		// of 8 channels (blocked: one run of 16 a position), then its
		// 16 biases.
		half := nb * r.bpos * 8
		per := 2*half + 16
		// Blocks of positions the kernels write into the output
		// directly (all but one past the map's end), and that one's sums
		// (two halves) per output block.
		full := nb
		if nb*r.bpos > pe-p0 {
			full--
		}
		tailPer := 2 * r.bpos * 8
		if r.blkOut {
			// The sums are the output's blocks (see [Blocked layout]);
			// the biases and the last block's sums aside.
			buf.W = growF32(buf.W, (b1-b0)*(16+tailPer))
			for ob := b0; ob < b1; ob++ {
				r.blockBias(buf.W[(ob-b0)*16:][:16], ob*16, 16)
			}
		} else {
			buf.W = growF32(buf.W, (b1-b0)*per)
			for ob := b0; ob < b1; ob++ {
				r.blockBias(buf.W[(ob-b0)*per+2*half:][:16], ob*16, min(16, g.o-ob*16))
			}
		}
		sums := buf.W
		for ib0 := 0; ib0 < nib; ib0 += r.ibChunk {
			nc := min(r.ibChunk, nib-ib0)
			clo, chi := float32(math.Inf(-1)), float32(math.Inf(1))
			if ib0+nc == nib {
				clo, chi = lo, hi
			}
			for ob := b0; ob < b1; {
				// Blocks ob to ob+nob-1 (see [Paired output blocks]).
				nob := blocksAtOnce(b1-ob, r.bpos)
				wk := r.wblk[(ob*nib+ib0)*kk*16*8 : ((ob+nob-1)*nib+ib0+nc)*kk*16*8]
				in := r.halfAt(ib0)
				if r.blkOut {
					bias := &sums[(ob-b0)*16]
					if full > 0 {
						at := (r.nn*g.o+ob*16)*plane + p0*cb
						_ = r.c[at+(nob*16-cb)*plane+full*r.bpos*cb-1]
						directKernel(nob, r.bpos, r.blkIn, &r.c[at], &xp[in+p0*cb], full, &offs[0], &wk[0], kk, bias, clo, chi, nc, r.size*4, ib0, 8*plane*4, g.c*kk*16*4, 16*plane*4, 16*4)
					}
					if full < nb {
						tail := sums[(b1-b0)*16+(ob-b0)*tailPer:]
						_ = tail[nob*tailPer-1]
						directKernel(nob, r.bpos, r.blkIn, &tail[0], &xp[in+(p0+full*r.bpos)*cb], 1, &offs[0], &wk[0], kk, bias, clo, chi, nc, r.size*4, ib0, r.bpos*8*4, g.c*kk*16*4, tailPer*4, 16*4)
					}
					ob += nob
					continue
				}
				o := sums[(ob-b0)*per : (ob-b0+nob)*per]
				directKernel(nob, r.bpos, r.blkIn, &o[0], &xp[in+p0*cb], nb, &offs[0], &wk[0], kk, &o[2*half], clo, chi, nc, r.size*4, ib0, half*4, g.c*kk*16*4, per*4, per*4)
				ob += nob
			}
		}
		n := min(directFlatChunk, pe-p0)
		for ob := b0; ob < b1; ob++ {
			ob0 := (r.nn*g.o + ob*16) * plane
			nch := min(16, g.o-ob*16) // 8 in a half last block
			switch {
			case !r.blkOut:
				o := sums[(ob-b0)*per : (ob-b0+1)*per]
				r.storeBlock(ob0, p0, o[:2*half], half, n, nch)
			case full < nb:
				tail := sums[(b1-b0)*16+(ob-b0)*tailPer:][:tailPer]
				p := p0 + full*r.bpos
				r.storeBlock(ob0, p, tail[:tailPer], tailPer/2, p0+n-p, nch)
			}
			r.finishPositions(ob0, nch, p0, n)
		}
	}
}

// unpackBlock transposes n positions of an output block's sums, eight
// channels at lo and eight at hi (position-major), into the block's
// planes at c[at:] (plane floats apart); with nch at most 8 (a half last
// block, see [Half output blocks]) hi's are dropped.
func unpackBlock(c []float32, at, plane int, lo, hi *float32, n, nch int) {
	_ = c[at+7*plane+n-1]
	unpackRows8AVX2(&c[at], plane, lo, n)
	if nch > 8 {
		_ = c[at+15*plane+n-1]
		unpackRows8AVX2(&c[at+8*plane], plane, hi, n)
	}
}

// storeBlock puts n positions of an output block's sums at positions
// [p0, p0+n) of the block whose channels start at ob0: for NCHW,
// sums holds eight channels a position and half floats on the other
// eight (position-major), transposed into planes by unpackBlock (with
// nch at most 8, a half last block, the second eight dropped); blocked,
// sums holds the positions' sixteen channels, copied as they are.
func (r *dwcRun) storeBlock(ob0, p0 int, sums []float32, half, n, nch int) {
	plane := r.g.oh * r.g.ow
	if !r.blkOut {
		unpackBlock(r.c, ob0+p0, plane, &sums[0], &sums[half], n, nch)
		return
	}
	const cb = nchwcBlock
	copy(r.c[ob0+p0*cb:][:n*cb], sums[:n*cb])
}

// finishPositions finishes positions [p0, p0+n) of the nch output
// channels from ob0 (planes, or two blocked halves): the whole block in
// one pass, else each plane's or half's segment, while it is in cache.
func (r *dwcRun) finishPositions(ob0, nch, p0, n int) {
	plane := r.g.oh * r.g.ow
	if n == plane {
		r.finishBlock(ob0, nch*plane)
		return
	}
	if r.blkOut { // the block's positions are one run
		const cb = nchwcBlock
		r.finishBlock(ob0+p0*cb, n*cb)
		return
	}
	for ch := range nch {
		r.finishBlock(ob0+ch*plane+p0, n)
	}
}

// finishBlock adds the residual to the output block of n floats at
// ob0, clamps it after, and applies the activation.
func (r *dwcRun) finishBlock(ob0, n int) {
	blockOut := r.c[ob0 : ob0+n]
	switch {
	case r.res != nil && r.ep.On: // one pass, the same bits
		gemm.AddClamp32(blockOut, blockOut, r.res[r.roff+ob0:], r.ep.Lo, r.ep.Hi)
	case r.res != nil:
		binLoopF32(opAdd, blockOut, blockOut, 0, 1, r.res, r.roff+ob0, 1, 1)
	}
	if r.act != nil {
		r.act(blockOut)
	}
}
