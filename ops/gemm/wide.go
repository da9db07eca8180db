package gemm

import (
	"math"
	"sync/atomic"

	"github.com/gosr/gosr/ops/parallel"
)

// [Wide convolution]
//
// A convolution through packConv copies its whole im2col matrix into
// packed panels, block by block: K x N floats for K x N x M
// multiply-adds. With few output channels per group (densenet's 32,
// regnet's groups of 8, a stem's 64 over a 7x7 kernel) the packing
// costs as much as the products. ConvWide packs nothing. It copies the
// image once, with its padding made real zeros and, for a stride s, its
// rows and columns dealt into s x s phase planes (row r goes to phase
// r%s at r/s), so that for every tap (channel, ki, kj) the input an
// output position reads is at the same offset from the output
// position's index on a "wide" output grid: a grid as wide as a phase
// plane (Ws columns) instead of OW. Row q of the im2col matrix over
// that grid is then one contiguous run of the copy, starting at
// offs[q], and the micro-kernel reads its B rows there in place
// (kernel6x16WideAVX2): a tile of 16 grid columns is 16 consecutive
// floats of each row. Grid columns past OW in each output row compute
// values nobody reads (2 of 58 for a 56-wide image with padding 1); a
// tile may run past the image's last grid column into zeroed slack.
//
// The products go to a block of wide C in the goroutine's packing
// buffers (MC rows x up to NC grid columns); once a block has its whole
// product its valid columns are copied to the output row by row with
// the bias added and the clamp applied, while the block is still in
// cache. Without packing there is no reason to keep B's k block outside
// the row blocks: the loops are columns (NC), rows (MC), k (KC), then
// 16-column tiles and 6-row panels, so a tile's B rows stay in L1 while
// every panel of the row block reads them.

// WideConv is one image's 2-d convolution geometry for ConvWide (a 1-d
// one has height 1): C input channels of H x W, a KH x KW kernel with
// strides, padding and dilation, Groups groups, output OH x OW. The
// input is read at element (c, h, w) = X[XOff + c*SC + h*SH + w*SW].
type WideConv struct {
	C, H, W, KH, KW int
	StrH, StrW      int
	PadH, PadW      int
	DilH, DilW      int
	OH, OW          int
	Groups          int
}

// widePlan is a WideConv's layout of the phase-split copy.
type widePlan struct {
	g             WideConv
	hs, ws, plane int // a phase plane's rows, columns and size
	chanSize      int // a channel's phase planes
	npad          int // grid columns, OH*ws rounded up to NR
	k, cg, og     int
	maxOff, size  int // the largest offs entry; the copy's floats
	offs          []int
	pad           []float32
	pre           []*PrepackedA
	bias          []float32
	bo, bs        int
	res           []float32
	roff          int
	out           []float32
	ooff          int
	ep            Clamp
	act           Activation
}

// wideBufs is the part of packBufs ConvWide uses.
type wideBufs struct {
	offs []int
	pad  []float32 // the phase-split copy (the owner's)
	cw   []float32 // a block of wide C
	plan widePlan
}

// ConvWide computes one image of a convolution with the weight of each
// group packed in advance (pre[g], og x cg*KH*KW): out[ooff + o*OH*OW +
// oh*OW + ow] = conv + bias[bo+o*bs] (bias nil: none) + res[roff + the
// same index] (res nil: none; a residual connection), clamped by ep,
// then act applied (nil: none).
// See [Wide convolution]. The output may not overlap the input.
func ConvWide(sc *Scratch, g *WideConv, pre []*PrepackedA, x []float32, xoff, sC, sH, sW int, bias []float32, bo, bs int, res []float32, roff int, out []float32, ooff int, ep Clamp, act Activation) {
	pk := sc.bufs()
	p := &pk.wide.plan
	*p = widePlan{g: *g, pre: pre, bias: bias, bo: bo, bs: bs, res: res, roff: roff, out: out, ooff: ooff, ep: ep, act: act}
	p.og = pre[0].m
	p.layout(pk)
	g = &p.g
	if !sc.wideSplit(p, x, xoff, sC, sH, sW) {
		widePhaseCopy(p, x, xoff, sC, sH, sW, 0, g.C)
		for gr := 0; gr < g.Groups; gr++ {
			widePart(pk, p, gr, 0, p.og, 0, p.npad)
		}
	}
	p.pre, p.bias, p.out, p.res, p.act = nil, nil, nil, nil, nil
	sc.done(pk)
}

// layout sets p's phase-split copy for p.g in pk's buffers: the phase
// planes, each tap's offset (offs, maxOff) and the copy (pad, its slack
// past the image cleared). The last group's tiles read up to maxOff +
// npad past its base.
func (p *widePlan) layout(pk *packBufs) {
	g := &p.g
	p.cg = g.C / g.Groups
	p.k = p.cg * g.KH * g.KW
	hp, wp := g.H+2*g.PadH, g.W+2*g.PadW
	p.hs, p.ws = (hp+g.StrH-1)/g.StrH, (wp+g.StrW-1)/g.StrW
	p.plane = p.hs * p.ws
	p.chanSize = g.StrH * g.StrW * p.plane
	p.npad = (g.OH*p.ws + NR - 1) / NR * NR
	if cap(pk.wide.offs) < p.k {
		pk.wide.offs = make([]int, p.k)
	}
	p.offs = pk.wide.offs[:p.k]
	khw := g.KH * g.KW
	for q := range p.offs {
		ci, r := q/khw, q%khw
		dh, dw := (r/g.KW)*g.DilH, (r%g.KW)*g.DilW
		o := ci*p.chanSize + ((dh%g.StrH)*g.StrW+dw%g.StrW)*p.plane + dh/g.StrH*p.ws + dw/g.StrW
		p.offs[q] = o
		p.maxOff = max(p.maxOff, o)
	}
	p.size = max(g.C*p.chanSize, (g.Groups-1)*p.cg*p.chanSize+p.maxOff+p.npad)
	if cap(pk.wide.pad) < p.size {
		pk.wide.pad = make([]float32, p.size)
	}
	p.pad = pk.wide.pad[:p.size]
	clear(p.pad[g.C*p.chanSize:])
}

// widePhaseCopy fills the copy: channel c's phase (pr, pc) plane holds
// padded rows pr, pr+s, ... and columns pc, pc+t, ... Phases no tap
// reads (a 1x1 kernel at stride 2 reads one of four) are not filled:
// only grid columns past OW read them, and those are dropped.
func widePhaseCopy(p *widePlan, x []float32, xoff, sC, sH, sW, c0, c1 int) {
	g := &p.g
	var used [8 * 8]bool // phases up to 8 x 8; more: all filled
	all := g.StrH > 8 || g.StrW > 8
	if !all {
		for ki := 0; ki < g.KH; ki++ {
			for kj := 0; kj < g.KW; kj++ {
				used[(ki*g.DilH%g.StrH)*8+kj*g.DilW%g.StrW] = true
			}
		}
	}
	for ch := c0; ch < c1; ch++ {
		for pr := 0; pr < g.StrH; pr++ {
			if g.StrW == 2 && sW == 1 && (all || used[pr*8] && used[pr*8+1]) {
				// Both column phases from one pass over each row.
				dst := p.pad[ch*p.chanSize+pr*2*p.plane:]
				for r := 0; r < p.hs; r++ {
					ih := r*g.StrH + pr - g.PadH
					if uint(ih) >= uint(g.H) {
						clear(dst[r*p.ws : r*p.ws+p.ws])
						clear(dst[p.plane+r*p.ws : p.plane+r*p.ws+p.ws])
						continue
					}
					src := x[xoff+ch*sC+ih*sH:]
					PhaseRow2(dst[r*p.ws:], p.plane, p.ws, g.PadW, src[:g.W])
				}
				continue
			}
			for pcol := 0; pcol < g.StrW; pcol++ {
				if !all && !used[pr*8+pcol] {
					continue
				}
				dst := p.pad[ch*p.chanSize+(pr*g.StrW+pcol)*p.plane:][:p.plane]
				// The phase's first column inside the image, and where
				// in the image it lies.
				c0 := max(0, (g.PadW-pcol+g.StrW-1)/g.StrW)
				iw0 := c0*g.StrW + pcol - g.PadW
				for r := 0; r < p.hs; r++ {
					row := dst[r*p.ws : r*p.ws+p.ws]
					ih := r*g.StrH + pr - g.PadH
					if uint(ih) >= uint(g.H) || iw0 >= g.W {
						clear(row)
						continue
					}
					src := x[xoff+ch*sC+ih*sH:]
					c := min(c0, p.ws)
					for t := range row[:c] {
						row[t] = 0
					}
					switch {
					case g.StrW == 1 && sW == 1:
						c += copyShort(row[c:], src[iw0:g.W])
					case sW == 1:
						cnt := min(len(row)-c, (g.W-iw0+g.StrW-1)/g.StrW)
						in := src[iw0 : iw0+(cnt-1)*g.StrW+1]
						out := row[c : c+cnt]
						for t := range out {
							out[t] = in[t*g.StrW]
						}
						c += cnt
					default:
						for iw := iw0; iw < g.W && c < len(row); iw += g.StrW {
							row[c] = src[iw*sW]
							c++
						}
					}
					for t := range row[c:] {
						row[c+t] = 0
					}
				}
			}
		}
	}
}

// copyShort is copy for the short rows of small images, where a
// memmove call costs more than the copying.
func copyShort(dst, src []float32) int {
	n := min(len(dst), len(src))
	if n > 64 {
		return copy(dst, src)
	}
	d, s := dst[:n], src[:n]
	i := 0
	for ; i+8 <= n; i += 8 {
		*(*[8]float32)(d[i:]) = *(*[8]float32)(s[i:])
	}
	for ; i < n; i++ {
		d[i] = s[i]
	}
	return n
}

// widePart computes rows [i0, i1) (i0 a multiple of MR) and grid
// columns [j0, j1) (multiples of NR) of group gr into pk's wide C block
// by block and copies each block out.
func widePart(pk *packBufs, p *widePlan, gr, i0, i1, j0, j1 int) {
	a := p.pre[gr]
	k := a.k
	need := min(MC, (i1-i0+MR-1)/MR*MR) * min(NC, j1-j0)
	if cap(pk.wide.cw) < need {
		pk.wide.cw = make([]float32, need)
	}
	xb := gr * p.cg * p.chanSize
	for jc := j0; jc < j1; jc += NC {
		ncw := min(NC, j1-jc)
		for ic := i0 / MC * MC; ic < i1; ic += MC {
			is, ie := max(ic, i0), min(ic+MC, i1)
			mw := ie - is
			cw := pk.wide.cw[:(mw+MR-1)/MR*MR*ncw]
			for pc := 0; pc < k; pc += KC {
				kc := min(KC, k-pc)
				ap := a.blocks[pc/KC*a.nic+ic/MC][(is-ic)*kc:]
				offs := p.offs[pc : pc+kc]
				for jr := 0; jr < ncw; jr += NR {
					boff := xb + jc + jr
					if pairPanels && jr+2*NR <= ncw {
						for ir := 0; ir < mw; ir += MR {
							kernelWide32(pk, kc, ap[ir*kc:], p.pad, boff, p.maxOff, offs, cw[ir*ncw+jr:], ncw, pc > 0)
						}
						jr += NR
						continue
					}
					for ir := 0; ir < mw; ir += MR {
						kernelWide(pk, kc, ap[ir*kc:], p.pad, boff, p.maxOff, offs, cw[ir*ncw+jr:], ncw, pc > 0)
					}
				}
			}
			wideOut(p, gr*p.og+is, mw, cw, ncw, jc)
		}
	}
}

// wideOut copies rows [o0, o0+m) of a wide C block (grid columns
// [jc, jc+ncw)) to the output: the valid columns of each output row,
// plus the bias, clamped.
func wideOut(p *widePlan, o0, m int, cw []float32, ncw, jc int) {
	g := &p.g
	ohw := g.OH * g.OW
	lo, hi := float32(math.Inf(-1)), float32(math.Inf(1))
	if p.ep.On && p.res == nil {
		lo, hi = p.ep.Lo, p.ep.Hi
	}
	// The block's output rows: a part of one at either end, whole ones
	// between.
	oh0, oh1 := jc/p.ws, min(g.OH, (jc+ncw+p.ws-1)/p.ws)
	for i := 0; i < m; i++ {
		o := o0 + i
		var b float32
		if p.bias != nil {
			b = p.bias[p.bo+o*p.bs]
		}
		src := cw[i*ncw : i*ncw+ncw]
		dst := p.out[p.ooff+o*ohw : p.ooff+o*ohw+ohw]
		for oh := oh0; oh < oh1; {
			s0, s1 := max(jc, oh*p.ws), min(jc+ncw, oh*p.ws+g.OW)
			rows := 1
			if s0 == oh*p.ws && s1 == s0+g.OW {
				// Whole rows from here: as many as the block holds.
				rows = max(1, min(oh1, (jc+ncw-g.OW)/p.ws+1)-oh)
			}
			if s0 < s1 {
				at := oh*g.OW + s0 - oh*p.ws
				d := dst[at : at+(rows-1)*g.OW+s1-s0]
				wideRows(d, src[s0-jc:s0-jc+(rows-1)*p.ws+s1-s0], rows, s1-s0, p.ws, b, lo, hi, p.bias != nil)
				if p.res != nil {
					// The residual after the bias, the clamp last.
					r := p.roff + o*ohw + at
					Axpy(1, p.res[r:r+len(d)], d)
					if p.ep.On {
						Clamp32(d, d, p.ep.Lo, p.ep.Hi)
					}
				}
				if p.act != nil {
					p.act(d)
				}
			}
			oh += rows
		}
	}
}

// wideRows sets dst[r*n+i] = clamp(src[r*ws+i] (+ b)) for r < rows,
// i < n; the clamp to [lo, hi] passes NaN through.
func wideRows(dst, src []float32, rows, n, ws int, b, lo, hi float32, bias bool) {
	if useAsm {
		_ = dst[(rows-1)*n+n-1]
		_ = src[(rows-1)*ws+n-1]
		bi := 0
		if bias {
			bi = 1
		}
		wideRowsAVX2(&dst[0], &src[0], rows, n, ws, b, lo, hi, bi)
		return
	}
	for r := 0; r < rows; r++ {
		d, s := dst[r*n:r*n+n], src[r*ws:r*ws+n]
		if bias {
			for t, v := range s {
				d[t] = v + b
			}
		} else {
			copy(d, s)
		}
		clamp32Go(d, d, lo, hi)
	}
}

// kernelWide is C[6x16] = A[6xk]*B (add: +=) with B's row q the 16
// floats at b[boff+offs[q]:]; every offs entry is at most maxOff.
func kernelWide(pk *packBufs, k int, a, b []float32, boff, maxOff int, offs []int, c []float32, ldc int, add bool) {
	_ = a[k*MR-1]
	_ = b[boff+maxOff+NR-1]
	_ = c[(MR-1)*ldc+NR-1]
	if !useAsm {
		kernelWideGo(pk, k, a, b, boff, offs, c, ldc, add)
		return
	}
	ad := 0
	if add {
		ad = 1
	}
	kernel6x16WideAVX2(k, &a[0], &b[boff], &offs[0], &c[0], ldc, ad)
}

// kernelWide32 is kernelWide over 32 columns (two tiles side by side;
// see [AVX-512 tiles]).
func kernelWide32(pk *packBufs, k int, a, b []float32, boff, maxOff int, offs []int, c []float32, ldc int, add bool) {
	if !cpuHas512() {
		kernelWide(pk, k, a, b, boff, maxOff, offs, c, ldc, add)
		kernelWide(pk, k, a, b, boff+NR, maxOff, offs, c[NR:], ldc, add)
		return
	}
	_ = a[k*MR-1]
	_ = b[boff+maxOff+2*NR-1]
	_ = c[(MR-1)*ldc+2*NR-1]
	_ = offs[k-1]
	ad := 0
	if add {
		ad = 1
	}
	kernel6x32WideAVX512(k, &a[0], &b[boff], &offs[0], &c[0], ldc, ad)
}

// kernelWideGo is the pure-Go kernelWide: each B row is gathered into a
// packed panel row (in pk.b), then kernelGo runs.
func kernelWideGo(pk *packBufs, k int, a, b []float32, boff int, offs []int, c []float32, ldc int, add bool) {
	if cap(pk.b) < k*NR {
		pk.b = make([]float32, KC*NR)
	}
	panel := pk.b[:k*NR]
	for q, o := range offs[:k] {
		copy(panel[q*NR:q*NR+NR], b[boff+o:boff+o+NR])
	}
	tile := &pk.c
	clear(tile[:])
	kernelGo(k, a, panel, tile[:], NR)
	for i := 0; i < MR; i++ {
		row := c[i*ldc : i*ldc+NR]
		for j := range row {
			if add {
				row[j] += tile[i*NR+j]
			} else {
				row[j] = tile[i*NR+j]
			}
		}
	}
}

// wideJob is a ConvWide split across a team, in two runs: the copy,
// in ranges of channels, then the products, in chunks of (group, column
// range) or, where a group has few grid columns (7x7 and 14x14 images),
// (group, row range), each computed into its goroutine's own wide C
// block. A chunk computes each tile as one goroutine does.
type wideJob struct {
	owner   *Scratch
	p       *widePlan
	copying bool
	x       []float32
	xoff    int
	sC, sH  int
	sW      int
	alongM  bool
	chunks  int // per group, or channel ranges while copying
	next    atomic.Int64
}

// wideSplit runs the plan on the scratch's team if it has one and the
// convolution is large enough, and reports whether it did.
func (sc *Scratch) wideSplit(p *widePlan, x []float32, xoff, sC, sH, sW int) bool {
	if sc.Team() == nil {
		return false
	}
	work := p.g.Groups * p.og * p.k * p.npad
	parts := min(sc.par.team.Size(), work/parMinPart)
	if parts < 2 {
		return false
	}
	j := &sc.par.wide
	j.owner, j.p = sc, p
	j.x, j.xoff, j.sC, j.sH, j.sW = x, xoff, sC, sH, sW
	j.copying, j.chunks = true, min(p.g.C, 4*parts)
	j.next.Store(0)
	sc.par.team.Run(j, parts)

	tiles, panels := p.npad/NR, (p.og+MR-1)/MR
	j.copying, j.alongM, j.chunks = false, false, 1
	// Many groups: a group a chunk. Else columns where there are many
	// tiles (each chunk then reads all of A, which stays in L2 across
	// its tiles), rows where there are few (each then reads all of the
	// copy: small on 7x7 and 14x14 images, where a column split would
	// leave one goroutine a chunk or two). BenchmarkConvWideThreads.
	switch {
	case p.g.Groups >= 2*parts:
	case tiles >= 16*parts || panels < 2*parts:
		j.chunks = max(1, min(tiles/4, 2*parts))
	default:
		j.alongM, j.chunks = true, min(panels, 2*parts)
	}
	j.next.Store(0)
	sc.par.splits++
	sc.par.last.parts, sc.par.last.alongN = parts, !j.alongM
	sc.par.team.Run(j, parts)
	j.owner, j.p, j.x = nil, nil, nil
	return true
}

// RunPart implements parallel.Task.
func (j *wideJob) RunPart(i, n int) {
	if j.copying {
		for {
			ch := int(j.next.Add(1) - 1)
			if ch >= j.chunks {
				return
			}
			c0, c1 := parallel.Range(ch, j.chunks, j.p.g.C, 1)
			widePhaseCopy(j.p, j.x, j.xoff, j.sC, j.sH, j.sW, c0, c1)
		}
	}
	sc := j.owner
	if i > 0 {
		sc = &sc.par.workers[i-1]
	}
	var pk *packBufs
	total := j.chunks * j.p.g.Groups
	for {
		ch := int(j.next.Add(1) - 1)
		if ch >= total {
			break
		}
		if pk == nil {
			pk = sc.bufs()
		}
		gr, part := ch/j.chunks, ch%j.chunks
		i0, i1, j0, j1 := 0, j.p.og, 0, j.p.npad
		if j.alongM {
			i0, i1 = parallel.Range(part, j.chunks, j.p.og, MR)
		} else {
			j0, j1 = parallel.Range(part, j.chunks, j.p.npad, NR)
		}
		if i0 < i1 && j0 < j1 {
			widePart(pk, j.p, gr, i0, i1, j0, j1)
		}
	}
	if pk != nil {
		sc.done(pk)
	}
}

// Deal2 sets even[j] = src[2j] and odd[j] = src[2j+1] (len(even) may be
// one more than len(odd), which src then covers too): a row split into
// the column phases of a stride of 2, eight pairs at a time under the
// assembly.
func Deal2(even, odd, src []float32) {
	n := len(odd)
	src = src[:len(even)+n]
	j := 0
	if useAsm && n >= 8 {
		j = n &^ 7
		deal2AVX2(&even[0], &odd[0], &src[0], j)
	}
	for ; j < n; j++ {
		p := src[2*j : 2*j+2 : 2*j+2]
		even[j], odd[j] = p[0], p[1]
	}
	if len(even) > n {
		even[n] = src[2*n]
	}
}

// PhaseRow2 deals one input row, with pad zero columns either side, into
// the rows of the two column phases of a stride of 2 (dst[:ws] and
// dst[plane:plane+ws]): padded column c, src[c-pad] or 0, goes to phase
// c%2 at c/2, zeros filling each phase row past the image.
func PhaseRow2(dst []float32, plane, ws, pad int, src []float32) {
	// The even source elements go to phase pad%2 from column pad/2, the
	// odd ones to the other phase from column (pad+1)/2.
	ev, od := dst[pad%2*plane:][:ws], dst[(1-pad%2)*plane:][:ws]
	ne, no := (len(src)+1)/2, len(src)/2
	ce, co := pad/2, (pad+1)/2
	clear(ev[:ce])
	clear(od[:co])
	Deal2(ev[ce:ce+ne], od[co:co+no], src)
	clear(ev[ce+ne:])
	clear(od[co+no:])
}
