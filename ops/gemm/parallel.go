package gemm

import (
	"sync/atomic"

	"github.com/gosr/gosr/ops/parallel"
)

// Intra-op parallelism: a Scratch made with a team splits a large
// packed product into chunks, row or column ranges on the blocking grid
// of the whole product, which the goroutines of the team take in turn
// (so a helper the OS runs late leaves its chunks to the others instead
// of holding the op up). A chunk packs its own B panels (or reads its
// columns of a prepacked B) and its own A block (or reads its rows of a
// prepacked A) into the packing buffers of its goroutine's Scratch, and
// writes a disjoint range of C. Every MR x NR
// tile of C is computed as the one-goroutine path computes it (the
// same k order, the same kernel), so the result is bit for bit the
// same for any team size.

// parMinPart is the least work (multiply-adds) worth a part of its own:
// waking a parked helper takes a few microseconds, a part of 2^18
// multiply-adds tens of them. Tests lower it to split small products.
var parMinPart = 1 << 18

// split is a Scratch's intra-op state: the team, one Scratch per helper
// and the product being split (a Task the team runs), reused by every
// call so that a split allocates nothing.
type split struct {
	team    *parallel.Team
	workers []Scratch // helper i-1's scratch (part 0 uses the owner's)
	job     job
	pack    packJob
	wide    wideJob
	rows    rowsJob
	gemv    gemvJob
	// packed is B packed once for a product split along its rows, which
	// every chunk then reads (a chunk packing all of B again would
	// repeat the im2col of the whole image per chunk); buf backs it.
	packed PrepackedB
	buf    []float32
	// splits counts the products split; last is how the latest was.
	// opSplits counts the other ops split (NoteOpSplit).
	splits, opSplits int64
	last             struct {
		parts  int
		alongN bool
	}
}

// job is one split product: blockedPart's arguments, and how to split.
type job struct {
	owner     *Scratch
	m, n, k   int
	alpha     float32
	a, b      Mat
	conv      ConvSrc // copied: a pointer kept here would move callers' ConvSrc to the heap
	hasConv   bool
	pre       *PrepackedB
	preA      *PrepackedA
	c         []float32
	coff, ldc int
	ep        Epilogue
	alongN    bool
	chunks    int          // ranges the product is cut into
	next      atomic.Int64 // the next chunk to take
}

// NewScratch returns a Scratch whose products above a size are split
// across team (nil: a Scratch for one goroutine, as the zero value).
// The team must be driven only through this Scratch's products while
// they run; it is not closed by the Scratch.
func NewScratch(team *parallel.Team) *Scratch {
	sc := &Scratch{}
	if team.Size() > 1 {
		sc.par = &split{team: team, workers: make([]Scratch, team.Size()-1)}
	}
	return sc
}

// Team is the scratch's team (nil: none, or SetAlone on).
func (sc *Scratch) Team() *parallel.Team {
	if sc == nil || sc.par == nil || sc.alone {
		return nil
	}
	return sc.par.team
}

// SetAlone keeps the scratch's products and ops on the caller's
// goroutine (on), its team idle, until turned off: a runtime sets it for
// the nodes that ran faster alone (see [Split per node] in
// staticruntime). No-op on a nil scratch.
func (sc *Scratch) SetAlone(on bool) {
	if sc != nil {
		sc.alone = on
	}
}

// Splits is the number of products the scratch has split across its
// team so far.
func (sc *Scratch) Splits() int64 {
	if sc == nil || sc.par == nil {
		return 0
	}
	return sc.par.splits
}

// OpSplits is the number of ops other than products (elementwise ops,
// poolings) split across the scratch's team so far.
func (sc *Scratch) OpSplits() int64 {
	if sc == nil || sc.par == nil {
		return 0
	}
	return sc.par.opSplits
}

// NoteOpSplit counts one such op split (the ops package's splitter does).
func (sc *Scratch) NoteOpSplit() {
	if sc != nil && sc.par != nil {
		sc.par.opSplits++
	}
}

// split runs the product on the scratch's team if it has one and the
// product is large enough, and reports whether it did.
func (sc *Scratch) split(m, n, k int, alpha float32, a, b Mat, conv *ConvSrc, pre *PrepackedB, preA *PrepackedA, c []float32, coff, ldc int, ep *Epilogue) bool {
	if sc.Team() == nil {
		return false
	}
	parts := min(sc.par.team.Size(), m*n*k/parMinPart)
	if parts < 2 {
		return false
	}
	// Split the columns where there are enough panels: each chunk then
	// packs only its own B panels (B is the larger operand of a
	// convolution's im2col), in chunks of at least 8 panels (each chunk
	// reads all of A again, so a narrower one computes too little per
	// A block it brings into the cache), one per goroutine where A is
	// not prepacked (each chunk packs all of it). Otherwise split the
	// rows, with B packed once and shared, in chunks of at least 8 row
	// panels. Up to 2 chunks per goroutine, which lets one that comes
	// late take less than its share.
	var alongN bool
	chunks := parts
	switch panels, rows := (n+NR-1)/NR, (m+MR-1)/MR; {
	case panels >= 4*parts:
		alongN = true
		if preA != nil {
			chunks = max(parts, min(panels/8, 2*parts))
		}
	case rows >= 2*parts:
		chunks = max(parts, min(rows/8, 2*parts))
	case panels >= parts:
		alongN = true
	default:
		return false
	}
	if !alongN && pre == nil {
		pre = sc.packShared(n, k, b, conv)
		conv = nil
	}
	j := &sc.par.job
	j.owner, j.m, j.n, j.k, j.alpha, j.a, j.b = sc, m, n, k, alpha, a, b
	j.pre, j.preA, j.c, j.coff, j.ldc = pre, preA, c, coff, ldc
	j.alongN, j.chunks, j.hasConv, j.ep = alongN, chunks, conv != nil, *ep
	if conv != nil {
		j.conv = *conv
	}
	j.next.Store(0)
	sc.par.splits++
	sc.par.last.parts, sc.par.last.alongN = parts, alongN
	sc.par.team.Run(j, parts)
	// Drop the references to the operands: they are not the scratch's.
	j.owner, j.a, j.b, j.conv, j.pre, j.preA, j.c, j.ep = nil, Mat{}, Mat{}, ConvSrc{}, nil, nil, nil, Epilogue{}
	return true
}

// RunPart implements parallel.Task.
func (j *job) RunPart(i, n int) {
	sc := j.owner
	if i > 0 {
		sc = &sc.par.workers[i-1]
	}
	var conv *ConvSrc
	if j.hasConv {
		conv = &j.conv
	}
	for {
		ch := int(j.next.Add(1) - 1)
		if ch >= j.chunks {
			return
		}
		i0, i1, j0, j1 := 0, j.m, 0, j.n
		if j.alongN {
			j0, j1 = parallel.Range(ch, j.chunks, j.n, NR)
		} else {
			i0, i1 = parallel.Range(ch, j.chunks, j.m, MR)
		}
		if i0 < i1 && j0 < j1 {
			blockedPart(sc, j.m, j.n, j.k, j.alpha, j.a, j.b, conv, j.pre, j.preA, j.c, j.coff, j.ldc, i0, i1, j0, j1, &j.ep)
		}
	}
}

// packJob packs B for a row split, block by block, across the team.
type packJob struct {
	owner   *Scratch
	b       Mat
	conv    ConvSrc
	hasConv bool
	next    atomic.Int64
}

// packShared packs the k x n B (b, or conv when non-nil) into the
// scratch's packed blocks, as PrepackB lays them out, with the blocks
// shared out across the team, and returns them.
func (sc *Scratch) packShared(n, k int, b Mat, conv *ConvSrc) *PrepackedB {
	st := sc.par
	pre := &st.packed
	pre.n, pre.k = n, k
	pre.blocks = pre.blocks[:0]
	need := 0
	for jc := 0; jc < n; jc += NC {
		for pc := 0; pc < k; pc += KC {
			need += min(KC, k-pc) * ((min(NC, n-jc) + NR - 1) / NR * NR)
		}
	}
	if cap(st.buf) < need {
		st.buf = make([]float32, need)
	}
	off := 0
	for jc := 0; jc < n; jc += NC {
		for pc := 0; pc < k; pc += KC {
			size := min(KC, k-pc) * ((min(NC, n-jc) + NR - 1) / NR * NR)
			pre.blocks = append(pre.blocks, st.buf[off:off+size:off+size])
			off += size
		}
	}
	pj := &st.pack
	pj.owner, pj.b, pj.hasConv = sc, b, conv != nil
	if conv != nil {
		pj.conv = *conv
	}
	pj.next.Store(0)
	st.team.Run(pj, min(st.team.Size(), len(pre.blocks)))
	pj.owner, pj.b, pj.conv = nil, Mat{}, ConvSrc{}
	return pre
}

// RunPart implements parallel.Task: it packs blocks until none is left.
func (pj *packJob) RunPart(i, n int) {
	sc := pj.owner
	if i > 0 {
		sc = &sc.par.workers[i-1]
	}
	pre := &pj.owner.par.packed
	npc := (pre.k + KC - 1) / KC
	var pk *packBufs
	for {
		u := int(pj.next.Add(1) - 1)
		if u >= len(pre.blocks) {
			break
		}
		jc, pc := u/npc*NC, u%npc*KC
		kc, ncur := min(KC, pre.k-pc), min(NC, pre.n-jc)
		if !pj.hasConv {
			packB(pre.blocks[u], pj.b, pc, kc, jc, ncur)
			continue
		}
		if pk == nil {
			pk = sc.bufs()
		}
		// packConv packs into pk.b: point it at the block for the call.
		saved := pk.b
		pk.b = pre.blocks[u]
		packConv(pk, &pj.conv, pc, kc, jc, ncur)
		pk.b = saved
	}
	if pk != nil {
		sc.done(pk)
	}
}

// gemvJob is a matrix-vector product split across a team by ranges of
// A's rows (y's elements), each computed as gemv computes it over all
// of them: the ranges start at multiples of gemvUnit, and gemv's paths
// treat every row alike within its groups of four, so every element's
// sum is the same. A large gemv (a classifier's 2048 -> 1000 at batch
// 1: 8 MB of weight) streams A from memory, which two cores read
// faster than one.
type gemvJob struct {
	m, k       int
	alpha      float32
	a          Mat
	x          []float32
	xoff, incx int
	y          []float32
	yoff, incy int
	chunks     int
	deal       parallel.Chunks
}

// gemvUnit is the rows a gemv chunk is a multiple of: a multiple of
// the four rows gemv's kernels take at a time, and 16 floats of y (a
// cache line) so that no two chunks write one line.
const gemvUnit = 16

// gemv runs gemv on the scratch's team where it has one and A is large
// enough, else on the caller.
func (sc *Scratch) gemv(m, k int, alpha float32, a Mat, x []float32, xoff, incx int, y []float32, yoff, incy int) {
	parts := 0
	if sc.Team() != nil {
		parts = min(sc.par.team.Size(), m*k/(2*parMinPart), m/gemvUnit)
	}
	if parts < 2 {
		gemv(m, k, alpha, a, x, xoff, incx, y, yoff, incy)
		return
	}
	j := &sc.par.gemv
	j.m, j.k, j.alpha, j.a, j.x, j.xoff, j.incx, j.y, j.yoff, j.incy = m, k, alpha, a, x, xoff, incx, y, yoff, incy
	j.chunks = min(4*parts, m/gemvUnit)
	j.deal.Reset(j.chunks, parts)
	sc.par.opSplits++
	sc.par.team.Run(j, parts)
	j.a, j.x, j.y = Mat{}, nil, nil
}

// RunPart implements parallel.Task.
func (j *gemvJob) RunPart(i, _ int) {
	for {
		ch, ok := j.deal.Take(i)
		if !ok {
			return
		}
		lo, hi := parallel.Range(ch, j.chunks, j.m, gemvUnit)
		if lo >= hi {
			continue
		}
		a := j.a
		a.Off += lo * a.RS
		gemv(hi-lo, j.k, j.alpha, a, j.x, j.xoff, j.incx, j.y, j.yoff+lo*j.incy, j.incy)
	}
}
