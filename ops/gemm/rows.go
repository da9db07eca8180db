package gemm

import (
	"math"

	"github.com/gosr/gosr/ops/parallel"
)

// [Wide rows]
//
// The rows kernel (rows8x32AVX512) computes eight output channels at
// 32 positions at a time straight from input rows, the weights read as
// rows [o, k] and broadcast: no packing of either operand, 16
// accumulators, bias first and the residual and clamp as each chunk is
// stored (the last chunk of a row under masks; one of at most 16
// columns with one register a row, eight accumulators, so a 112-column
// stem row or a 14x14 map's last four positions do not multiply a
// half of zeros). PointwiseRows feeds
// them a pointwise convolution's input rows (see [Pointwise rows] in
// ops). ConvWideRows feeds them the phase-split copy of [Wide
// convolution]: for output row oh, tap q's inputs for the OW positions
// are OW consecutive floats of the copy at oh*ws + offs[q], so each
// output row is one call per eight channels, written in place with no
// wide C block and no copy out. It serves the convolutions whose few
// input channels keep k short (a network's stem: 3 channels, 3x3 to
// 7x7 kernels, stride 2), where a gemm tile's k loop is too short to
// pay for its stores and the block's copy out.

// [Prefetched rows]
//
// In a network the rows kernel's input, residual and output rows are
// rarely in cache: the layers between a tensor's write and its read
// push them out. A pointwise convolution's first group of eight
// channels reads the input as k rows a plane apart, 128 bytes of each
// per chunk, which is k streams at once, more than the hardware
// prefetchers follow; each group's residual and output are eight more.
// So the kernel asks for the next chunk's lines as it goes: the input
// rows' in the first group of each block of positions (PointwiseRows
// passes pf; the later groups find them in cache), the residual's and
// the output's in every group (PREFETCHT0, 128 and 192 bytes on). With
// 16 MB written between runs (BenchmarkPointwiseRowsEvicted, medians)
// resnet50's 256->64 at 56x56 went 650-810 -> 563-572 µs, its 64->256
// with the residual 700-756 -> 586 (in cache: 555-590 either way),
// and resnet50 5-7% faster in alternating srbench ops rounds.

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

// rowsArgs is one rows-kernel convolution's arguments: a pointwise
// one over n positions, or (wide) one image's rows of a wide one.
type rowsArgs struct {
	wide       bool
	o, k, n    int // n: positions (pointwise) or output rows (wide)
	xd         []float32
	xoff       int
	offs       []int // input channel (or tap) q's row at xoff + offs[q]
	ws, ow     int   // wide: the copy's row width, the output's
	wd         []float32
	woff       int
	bd         []float32
	bo, bs     int
	res        []float32
	roff       int
	c          []float32
	coff, ldc  int
	lo, hi     float32
	act        Activation
	pointBlock int // positions a pointwise block covers
}

// run computes positions (pointwise) or output rows (wide) [lo, hi),
// in blocks whose inputs stay in L1 or L2 while every group of eight
// channels reads them and whose outputs are in cache when the
// activation runs.
func (a *rowsArgs) run(lo, hi int) {
	if !a.wide {
		a.point(lo, hi, 0, a.o)
		return
	}
	var b [8]float32
	n32, tail, m1, m2 := rowsMasks(a.ow)
	rb := max(1, 512/max(1, a.ow))
	for oh0 := lo; oh0 < hi; oh0 += rb {
		oh1 := min(hi, oh0+rb)
		for o0 := 0; o0 < a.o; o0 += 8 {
			rowsBias(&b, a.bd, a.bo, a.bs, o0)
			for oh := oh0; oh < oh1; oh++ {
				a.eight(o0, o0*a.ldc+oh*a.ow, &a.xd[oh*a.ws], &b, n32, tail, m1, m2, false)
			}
		}
		a.activate(oh0*a.ow, oh1*a.ow)
	}
}

// point computes positions [lo, hi) of output channels [olo, ohi) of
// a pointwise convolution.
func (a *rowsArgs) point(lo, hi, olo, ohi int) {
	var b [8]float32
	for j0 := lo; j0 < hi; j0 += a.pointBlock {
		nb := min(a.pointBlock, hi-j0)
		n32, tail, m1, m2 := rowsMasks(nb)
		for o0 := olo; o0 < ohi; o0 += 8 {
			rowsBias(&b, a.bd, a.bo, a.bs, o0)
			a.eight(o0, o0*a.ldc+j0, &a.xd[a.xoff+j0], &b, n32, tail, m1, m2, o0 == olo)
		}
		a.activateChannels(j0, j0+nb, olo, ohi)
	}
}

// eight runs the kernel for output channels o0..o0+7 over the chunks
// n32, tail (masks m1, m2) of the positions at output offset at (from
// coff; the residual's from roff), their inputs' rows from x.
func (a *rowsArgs) eight(o0, at int, x *float32, b *[8]float32, n32, tail, m1, m2 int, prefetch bool) {
	pf := 0
	if prefetch {
		pf = 1
	}
	var rp *float32
	if a.res != nil {
		rp = &a.res[a.roff+at]
	}
	rows8x32AVX512(&a.c[a.coff+at], a.ldc, x, &a.offs[0], a.k, &a.wd[a.woff+o0*a.k], n32, tail, m1, m2, &b[0], rp, a.ldc, a.lo, a.hi, pf)
}

// activate applies the activation to positions [j0, j1) of every
// output channel.
func (a *rowsArgs) activate(j0, j1 int) {
	a.activateChannels(j0, j1, 0, a.o)
}

// activateChannels applies the activation to positions [j0, j1) of
// output channels [olo, ohi).
func (a *rowsArgs) activateChannels(j0, j1, olo, ohi int) {
	if a.act == nil {
		return
	}
	for oc := olo; oc < ohi; oc++ {
		at := a.coff + oc*a.ldc
		a.act(a.c[at+j0 : at+j1])
	}
}

// [Pointwise splits]
//
// A team shares a pointwise convolution out by positions, each
// goroutine computing every output channel over its positions, or by
// output channels, each computing its channels over every position.
// Split by positions, each goroutine reads only its part of the input,
// but as k strided rows: with many input channels that is many streams
// at once, which the prefetchers do not follow, and with two goroutines
// each stalls on its misses as one alone did (resnet50's 1024->256 at
// 14x14 went 0.63 -> 0.53 ms with 2, against 0.55 -> 0.33 in cache).
// Split by output channels, every goroutine reads the whole input, so
// it is worth it only where the input is small enough to be read twice
// from L2 (byOutMaxInput) and has the rows to stall on (byOutMinK);
// there it took resnet50's pointwise convolutions at 28x28 and below
// 8-37% faster with 2 (srbench ops -per-node, alternating rounds),
// while at 56x56 (0.8 to 3.2 MB of input) splitting by output channels
// was 7-80% slower. A convolution with an activation (applied over
// each block once its channels are stored) also splits by output
// channels where its input fits: split by positions, the activation
// passes of the two goroutines ran slower than one goroutine's
// (mobilenet_v3's 40->240 at 28x28 with hardswish, 113 µs alone, 116
// split by positions, 72 by output channels; without the activation
// 80 and 45 either way), as if each core's prefetches into the other's
// rows took their lines away. Each output element's sum is the same
// either way.

// byOutMinK and byOutMaxInput bound the pointwise convolutions a team
// splits by output channels (see [Pointwise splits]): at least this
// many input channels (or an activation), at most this many input
// floats (1 MB).
const (
	byOutMinK     = 128
	byOutMaxInput = 256 << 10
)

// rowsJob is a rows-kernel convolution split across a team: ranges of
// positions or output rows (whole 32-position chunks), or (byOut) of
// output channels, eight at a time, each part taking its own share
// first (see [Chunk affinity] in ops/parallel).
type rowsJob struct {
	args   rowsArgs
	unit   int
	chunks int
	byOut  bool
	deal   parallel.Chunks
}

// RunPart implements parallel.Task.
func (j *rowsJob) RunPart(i, _ int) {
	for {
		ch, ok := j.deal.Take(i)
		if !ok {
			return
		}
		if j.byOut {
			if lo, hi := parallel.Range(ch, j.chunks, j.args.o, 8); lo < hi {
				j.args.point(0, j.args.n, lo, hi)
			}
			continue
		}
		if lo, hi := parallel.Range(ch, j.chunks, j.args.n, j.unit); lo < hi {
			j.args.run(lo, hi)
		}
	}
}

// runRows runs a: across sc's team where it has one and the work
// (multiply-adds) is worth it, else on the caller. Each position's sum
// is the same either way.
func (sc *Scratch) runRows(a *rowsArgs, unit, work int) {
	parts := 1
	if sc.Team() != nil {
		parts = min(sc.par.team.Size(), work/parMinPart, (a.n+unit-1)/unit)
	}
	if parts < 2 {
		a.run(0, a.n)
		return
	}
	j := &sc.par.rows
	j.args, j.unit, j.chunks = *a, unit, min(2*parts, (a.n+unit-1)/unit)
	j.byOut = !a.wide && (a.k >= byOutMinK || a.act != nil) && a.k*a.n <= byOutMaxInput && a.o/8 >= 4*parts
	switch {
	case j.byOut:
		j.chunks = 2 * parts
	case a.wide:
		j.chunks = min(8*parts, (a.n+unit-1)/unit)
	}
	j.deal.Reset(j.chunks, parts)
	sc.par.opSplits++
	sc.par.team.Run(j, parts)
	j.args = rowsArgs{}
}

// PointwiseRows computes n positions of o output channels (o a multiple
// of 8) of a pointwise convolution: c[coff + oc*ldc + j] =
// act(clamp(bias[oc] + sum over q < k of w[woff + oc*k + q] * x[xoff +
// q*ldx + j] + res[roff + oc*ldc + j])) for j < n; bias bd[bo+oc*bs]
// (nil: none), res nil for none; split across sc's team where it has
// one. Needs HasRows.
func PointwiseRows(sc *Scratch, o, k, n int, xd []float32, xoff, ldx int, wd []float32, woff int, bd []float32, bo, bs int, res []float32, roff int, c []float32, coff, ldc int, ep Clamp, act Activation) {
	_ = wd[woff+o*k-1]
	_ = xd[xoff+(k-1)*ldx+n-1]
	_ = c[coff+(o-1)*ldc+n-1]
	if res != nil {
		_ = res[roff+(o-1)*ldc+n-1]
	}
	// Input channel q's row is ldx floats after q-1's.
	pk := sc.bufs()
	if cap(pk.wide.offs) < k {
		pk.wide.offs = make([]int, k)
	}
	offs := pk.wide.offs[:k]
	for q := range offs {
		offs[q] = q * ldx
	}
	a := rowsArgs{o: o, k: k, n: n, xd: xd, xoff: xoff, offs: offs, wd: wd, woff: woff, bd: bd, bo: bo, bs: bs,
		res: res, roff: roff, c: c, coff: coff, ldc: ldc, act: act}
	a.lo, a.hi = clampBounds(ep)
	// A block's input rows stay within rowsBlockFloats.
	a.pointBlock = min(512, max(32, rowsBlockFloats/k/32*32))
	sc.runRows(&a, 32, o*k*n)
	sc.done(pk)
}

// rowsBlockFloats bounds a pointwise block's input rows (k x
// positions) when k is large: 256 KB, in L2 with room for the outputs.
const rowsBlockFloats = 64 << 10

// ConvWideRows computes one image of an ungrouped convolution with o
// output channels (a multiple of 8) as ConvWide does, with the weight
// as rows [o, C*KH*KW] at w[woff:] instead of packed, through the rows
// kernels (see [Wide rows]). Needs HasRows. The output may not overlap
// the input.
func ConvWideRows(sc *Scratch, g *WideConv, o int, w []float32, woff int, x []float32, xoff, sC, sH, sW int, bias []float32, bo, bs int, res []float32, roff int, out []float32, ooff int, ep Clamp, act Activation) {
	pk, a := sc.wideRows(g, o, w, woff, x, xoff, sC, sH, sW, bias, bo, bs, ep)
	plane := a.n * a.ow
	_ = out[ooff+o*plane-1]
	if res != nil {
		_ = res[roff+o*plane-1]
	}
	a.res, a.roff, a.c, a.coff, a.ldc, a.act = res, roff, out, ooff, plane, act
	sc.runRows(&a, 1, o*a.k*plane)
	sc.wideRowsDone(pk)
}

// wideRows makes g's phase-split copy (see [Wide convolution]) in sc's
// buffers and returns them and the rows kernel's arguments over it for
// o output channels of the weight rows at w[woff:], bias and clamp
// set, the output left to the caller, who ends with wideRowsDone. Row
// oh reads up to maxOff + oh*ws + OW - 1, inside the copy (OW <= ws,
// npad >= OH*ws).
func (sc *Scratch) wideRows(g *WideConv, o int, w []float32, woff int, x []float32, xoff, sC, sH, sW int, bias []float32, bo, bs int, ep Clamp) (*packBufs, rowsArgs) {
	pk := sc.bufs()
	p := &pk.wide.plan
	*p = widePlan{g: *g}
	p.layout(pk)
	widePhaseCopy(p, x, xoff, sC, sH, sW, 0, p.g.C)
	_ = w[woff+o*p.k-1]
	a := rowsArgs{wide: true, o: o, k: p.k, n: p.g.OH, xd: p.pad, offs: p.offs, ws: p.ws, ow: p.g.OW, wd: w, woff: woff,
		bd: bias, bo: bo, bs: bs}
	a.lo, a.hi = clampBounds(ep)
	return pk, a
}

// wideRowsDone gives back what wideRows took.
func (sc *Scratch) wideRowsDone(pk *packBufs) {
	pk.wide.plan.pad = nil
	sc.done(pk)
}

// BandSink takes a convolution's output from ConvWideRowsBands a band of
// output channels at a time, while the band is in cache (see [Pooled
// convolution] in ops).
type BandSink interface {
	// BandChannels gives band i's output channels [o0, o1), o0 a
	// multiple of 8, or ok false after the last band.
	BandChannels(i int) (o0, o1 int, ok bool)
	// Band takes band i: output channel oc's plane (o0 <= oc < o1) is
	// band[(oc-o0)*OH*OW : ...+OH*OW].
	Band(i int, band []float32, o0, o1 int)
}

// ConvWideRowsBands is ConvWideRows (no residual, no activation) with
// the output computed into band a band of output channels at a time,
// as sink asks for them, each handed to sink before the next is
// computed: the phase-split copy is made once, and each channel's plane
// is computed as ConvWideRows computes it, the same bits. Needs HasRows.
func ConvWideRowsBands(sc *Scratch, g *WideConv, o int, w []float32, woff int, x []float32, xoff, sC, sH, sW int, bias []float32, bo, bs int, ep Clamp, band []float32, sink BandSink) {
	pk, a := sc.wideRows(g, o, w, woff, x, xoff, sC, sH, sW, bias, bo, bs, ep)
	plane := a.n * a.ow
	a.c, a.ldc = band, plane
	for i := 0; ; i++ {
		o0, o1, ok := sink.BandChannels(i)
		if !ok {
			break
		}
		if o0%8 != 0 || o1 <= o0 || o1 > o || (o1-o0)%8 != 0 && o1 != o {
			panic("gemm: ConvWideRowsBands: band channels not whole groups of 8")
		}
		_ = band[(o1-o0)*plane-1]
		a.o, a.woff, a.bo = o1-o0, woff+o0*a.k, bo+o0*bs
		sc.runRows(&a, 1, (o1-o0)*a.k*plane)
		sink.Band(i, band, o0, o1)
	}
	sc.wideRowsDone(pk)
}
