package gemm

import "math"

// The blocking (doc.go states what each size means). MR and NR are the
// micro-kernel's tile; KC, MC and NC bound the packed blocks.
const (
	MR = 6
	NR = 16
	KC = 256
	MC = 72
	NC = 1024 // a KC x NC block of B (1 MiB) stays in L2
)

// Mat is a strided matrix view: element (i, j) is
// Data[Off + i*RS + j*CS].
type Mat struct {
	Data        []float32
	Off, RS, CS int
}

func (m Mat) at(i, j int) float32 { return m.Data[m.Off+i*m.RS+j*m.CS] }

// T returns the transpose view.
func (m Mat) T() Mat { return Mat{m.Data, m.Off, m.CS, m.RS} }

// ConvSrc describes B as the im2col matrix of one image (one group) of
// Data, starting at Off, with strides SC, SD, SH, SW (channel, depth,
// row, column), size D x H x W, kernel KD x KH x KW, strides Str*,
// padding Pad*, dilation Dil* and output size OD x OH x OW. Row p of B
// is (c, kz, ki, kj), column j is (od, oh, ow). A 2-d convolution has
// depth 1: D, KD, OD, StrD and DilD 1, PadD 0 (SD is then unused).
type ConvSrc struct {
	Data               []float32
	Off, SC, SH, SW    int
	H, W, KH, KW       int
	StrH, StrW         int
	PadH, PadW         int
	DilH, DilW, OH, OW int
	SD, D, KD, OD      int
	StrD, PadD, DilD   int
}

// packBufs holds packing buffers. They are large (up to KC*NC floats)
// and only live during one gemm call, so they come from a free list shared
// by all runtimes instead of sitting in every node's state. Unlike a
// sync.Pool, the list keeps its buffers across garbage collections, so a
// steady run never reallocates them; it holds at most as many as gemm
// calls ever ran at once (bounded by packKeep).
type packBufs struct {
	a   [MC * KC]float32
	b   []float32
	c   [MR * NR]float32
	c2  [MR * NR]float32     // the pure-Go half kernel's tile
	c32 [MR * 2 * NR]float32 // edgeTile32's tile
	te  tileEpi
	// rows describes the packed rows of an implicit im2col.
	rows [KC]convRowInfo
	wide wideBufs
}

const packKeep = 64

var packFree = make(chan *packBufs, packKeep)

// Scratch is memory one runtime's kernels share: one goroutine runs them
// at a time, so a gemm takes its packing buffers here without touching
// state other runtimes use (the shared free list is contended when many
// goroutines run small gemms at once). The zero value is ready; a Scratch
// must not be used by two goroutines at once. A nil *Scratch is valid:
// each call then borrows buffers from the shared free list.
type Scratch struct {
	pack *packBufs
	// floats is Floats' memory.
	floats []float32
	// par, from NewScratch with a team, splits large products across
	// it (parallel.go); nil: one goroutine.
	par *split
	// alone keeps everything on the caller's goroutine while set
	// (SetAlone).
	alone bool
	// parts is PartBufs' memory.
	parts []PartBuf
}

// PartBuf is one part's working buffers in an op split across a team.
type PartBuf struct{ In, W []float32 }

// PartBufs returns n parts' buffers, kept by the scratch for its
// runtime's kernels (each grown by its user, so steady runs allocate
// nothing): like Floats, memory an op holds only until it returns, and
// apart from Floats'. Called before the team runs (the list may grow). A
// nil scratch returns new, empty buffers.
func (sc *Scratch) PartBufs(n int) []PartBuf {
	if sc == nil {
		return make([]PartBuf, n)
	}
	for len(sc.parts) < n {
		sc.parts = append(sc.parts, PartBuf{})
	}
	return sc.parts[:n]
}

// Floats returns n floats the scratch keeps for its runtime's kernels
// (grown as needed, so steady runs allocate nothing): working memory a
// kernel holds only until it returns, and never while another kernel of
// the runtime uses it (one runs at a time). Their values are whatever
// the last user left. A nil scratch returns new memory.
func (sc *Scratch) Floats(n int) []float32 {
	if sc == nil {
		return make([]float32, n)
	}
	if cap(sc.floats) < n {
		sc.floats = make([]float32, n)
	}
	return sc.floats[:n]
}

// bufs returns the scratch's packing buffers (from the free list on
// first use, then kept), or one from the free list for a nil scratch.
func (sc *Scratch) bufs() *packBufs {
	if sc == nil {
		return getBufs()
	}
	if sc.pack == nil {
		sc.pack = getBufs()
	}
	return sc.pack
}

func (sc *Scratch) done(pk *packBufs) {
	if sc == nil {
		putBufs(pk)
	}
}

func getBufs() *packBufs {
	select {
	case pk := <-packFree:
		return pk
	default:
		return &packBufs{}
	}
}

func putBufs(pk *packBufs) {
	select {
	case packFree <- pk:
	default: // more packs than ever needed at once: let this one go
	}
}

// Gemm computes C = alpha*A*B + beta*C for A m x k, B k x n and C m x n
// with rows of stride ldc starting at c[coff]. With beta == 0, C is
// overwritten (NaNs in it do not propagate), as BLAS and PyTorch do.
// conv, when non-nil, replaces b.
func Gemm(sc *Scratch, m, n, k int, alpha float32, a, b Mat, conv *ConvSrc, beta float32, c []float32, coff, ldc int) {
	GemmClamp(sc, m, n, k, alpha, a, b, conv, beta, c, coff, ldc, Clamp{})
}

// GemmClamp is Gemm with the clamp ep on C.
func GemmClamp(sc *Scratch, m, n, k int, alpha float32, a, b Mat, conv *ConvSrc, beta float32, c []float32, coff, ldc int, ep Clamp) {
	GemmEpilogue(sc, m, n, k, alpha, a, b, conv, beta, c, coff, ldc, Epilogue{Clamp: ep})
}

// GemmEpilogue is Gemm with the epilogue ep on C.
func GemmEpilogue(sc *Scratch, m, n, k int, alpha float32, a, b Mat, conv *ConvSrc, beta float32, c []float32, coff, ldc int, ep Epilogue) {
	if m <= 0 || n <= 0 {
		return
	}
	if k <= 0 || alpha == 0 {
		ScaleC(m, n, beta, c, coff, ldc)
		ep.rows(c, coff, ldc, 0, m, 0, n)
		return
	}
	if conv == nil {
		small := true
		switch {
		case n == 1, m == 1, a.CS == 1 && b.RS == 1 && m*n <= dotsMax:
			ScaleC(m, n, beta, c, coff, ldc)
		default:
			small = false
		}
		switch {
		case !small:
		case n == 1:
			sc.gemv(m, k, alpha, a, b.Data, b.Off, b.RS, c, coff, ldc)
		case m == 1:
			sc.gemv(n, k, alpha, b.T(), a.Data, a.Off, a.CS, c, coff, 1)
		default:
			dots(m, n, k, alpha, a, b, c, coff, ldc)
		}
		if small {
			ep.rows(c, coff, ldc, 0, m, 0, n) // a vector or a few dots: C is small
			return
		}
	}
	blocked(sc, m, n, k, alpha, a, b, conv, nil, nil, beta, c, coff, ldc, ep)
}

// Cols is Gemm with alpha 1 and no im2col for columns [0, n) of a
// product of nFull columns, b and c starting at the first of them: it
// takes the path Gemm takes for all nFull columns (gemv or blocked), so
// each column comes out bit for bit as one Gemm call over all of them
// gives it. A caller computes a product in column tiles this way when
// its output overwrites its input (a 1x1 convolution in place).
func Cols(sc *Scratch, m, n, nFull, k int, a, b Mat, beta float32, c []float32, coff, ldc int) {
	ColsEpilogue(sc, m, n, nFull, k, a, b, beta, c, coff, ldc, Epilogue{})
}

// ColsEpilogue is Cols with the epilogue ep (as GemmEpilogue's).
func ColsEpilogue(sc *Scratch, m, n, nFull, k int, a, b Mat, beta float32, c []float32, coff, ldc int, ep Epilogue) {
	if n == nFull || m <= 0 || n <= 0 {
		GemmEpilogue(sc, m, n, k, 1, a, b, nil, beta, c, coff, ldc, ep)
		return
	}
	switch {
	case k <= 0:
		ScaleC(m, n, beta, c, coff, ldc)
	case m == 1:
		ScaleC(m, n, beta, c, coff, ldc)
		gemv(n, k, 1, b.T(), a.Data, a.Off, a.CS, c, coff, 1)
	default:
		blocked(sc, m, n, k, 1, a, b, nil, nil, nil, beta, c, coff, ldc, ep)
		return
	}
	ep.rows(c, coff, ldc, 0, m, 0, n)
}

// blocked is the packed path. C is scaled by beta here, unless beta is
// 0: then the first k block stores its tiles (ep.fresh) and C is never
// cleared first. B comes from b, conv, or blocks packed in advance
// (pre); A from a, or from blocks packed in advance (preA, then alpha
// is 1). A scratch with a team splits a large product across it
// (parallel.go).
func blocked(sc *Scratch, m, n, k int, alpha float32, a, b Mat, conv *ConvSrc, pre *PrepackedB, preA *PrepackedA, beta float32, c []float32, coff, ldc int, ep Epilogue) {
	ep.fresh = beta == 0
	if !ep.fresh {
		ScaleC(m, n, beta, c, coff, ldc)
	}
	if sc.split(m, n, k, alpha, a, b, conv, pre, preA, c, coff, ldc, &ep) {
		return
	}
	blockedPart(sc, m, n, k, alpha, a, b, conv, pre, preA, c, coff, ldc, 0, m, 0, n, &ep)
}

// blockedPart computes rows [i0, i1) and columns [j0, j1) of the
// product (i0 a multiple of MR, j0 of NR) on the blocking grid of the
// whole product: each MR x NR tile of C is computed as the whole
// product computes it, so the parts of a split product come out bit
// for bit as one call over all of it.
func blockedPart(sc *Scratch, m, n, k int, alpha float32, a, b Mat, conv *ConvSrc, pre *PrepackedB, preA *PrepackedA, c []float32, coff, ldc, i0, i1, j0, j1 int, ep *Epilogue) {
	pk := sc.bufs()
	nc := min(NC, (n+NR-1)/NR*NR)
	if need := min(k, KC) * nc; pre == nil && cap(pk.b) < need {
		pk.b = make([]float32, need)
	}
	npc := (k + KC - 1) / KC
	for jc := j0 / NC * NC; jc < j1; jc += NC {
		ncur := min(NC, n-jc) // the block's width, which picks its path
		js, je := max(jc, j0), min(jc+NC, j1)
		nw := je - js // the columns of it this part computes
		for pc := 0; pc < k; pc += KC {
			kc := min(KC, k-pc)
			add := pc > 0 || !ep.fresh
			bp := pk.b
			switch {
			case pre != nil:
				bp = pre.blocks[jc/NC*npc+pc/KC][(js-jc)*kc:]
			case conv != nil:
				packConv(pk, conv, pc, kc, js, nw)
			default:
				packB(bp, b, pc, kc, js, nw)
			}
			for ic := i0 / MC * MC; ic < i1; ic += MC {
				mcur := min(MC, m-ic)
				is, ie := max(ic, i0), min(ic+MC, i1)
				mw := ie - is
				// The last few rows of a product of many blocks go
				// through the packed 6x32 tiles with AVX-512, where the
				// in-place 4x16 kernel runs at half width (512 rows: 8
				// left after seven blocks of MC).
				tail := pairPanels && cpuHas512() && m > MC && ncur > 2*NR
				if preA == nil && !tail && useDirect(a, alpha, mcur, ncur) {
					if !add {
						ScaleC(mw, nw, 0, c, coff+is*ldc+js, ldc)
					}
					macroDirect(pk, a, is, mw, pc, bp, nw, kc, c, coff+is*ldc+js, ldc)
				} else {
					ap := pk.a[:]
					if preA != nil {
						ap = preA.blocks[pc/KC*preA.nic+ic/MC][(is-ic)*kc:]
					} else {
						packA(ap, a, alpha, is, mw, pc, kc)
					}
					var te *tileEpi
					if pc+kc == k {
						te = tileEpiFor(pk, ep, coff, is, js, mw)
					}
					macro(pk, ap, bp, mw, nw, kc, c, coff+is*ldc+js, ldc, add, te)
					if te != nil {
						// The tiles took the bias, residual and clamp.
						ep.activate(c, coff, ldc, is, ie, js, je)
						continue
					}
				}
				if pc+kc == k {
					// The block's products are complete, and it is still
					// in cache (MC x NC floats): the epilogue's turn.
					ep.rows(c, coff, ldc, is, ie, js, je)
				}
			}
		}
	}
	pk.te = tileEpi{} // drop the caller's slices
	sc.done(pk)
}

// PrepackedB is a k x n B (a constant weight) packed once, at
// preparation, in the panel layout blocked consumes. It is read-only,
// so all runtimes share it.
type PrepackedB struct {
	n, k   int
	blocks [][]float32 // in blocked's (jc, pc) order
}

// PrepackB packs the k x n matrix b.
func PrepackB(n, k int, b Mat) *PrepackedB {
	pre := &PrepackedB{n: n, k: k}
	for jc := 0; jc < n; jc += NC {
		ncur := min(NC, n-jc)
		for pc := 0; pc < k; pc += KC {
			kc := min(KC, k-pc)
			blk := make([]float32, kc*((ncur+NR-1)/NR*NR))
			packB(blk, b, pc, kc, jc, ncur)
			pre.blocks = append(pre.blocks, blk)
		}
	}
	return pre
}

// WithPrepackedB is Gemm with B from pre (m x pre.k times pre.k x pre.n).
func WithPrepackedB(sc *Scratch, m int, alpha float32, a Mat, pre *PrepackedB, beta float32, c []float32, coff, ldc int) {
	WithPrepackedBEpilogue(sc, m, alpha, a, pre, beta, c, coff, ldc, Epilogue{})
}

// WithPrepackedBEpilogue is WithPrepackedB with the epilogue ep on C.
func WithPrepackedBEpilogue(sc *Scratch, m int, alpha float32, a Mat, pre *PrepackedB, beta float32, c []float32, coff, ldc int, ep Epilogue) {
	if m <= 0 || pre.n <= 0 {
		return
	}
	if pre.k <= 0 || alpha == 0 {
		ScaleC(m, pre.n, beta, c, coff, ldc)
		ep.rows(c, coff, ldc, 0, m, 0, pre.n)
		return
	}
	blocked(sc, m, pre.n, pre.k, alpha, a, Mat{}, nil, pre, nil, beta, c, coff, ldc, ep)
}

// PrepackedA is an m x k A (a constant conv weight) packed once, at
// preparation, in the panel layout blocked consumes, with alpha 1.
// It is read-only, so all runtimes share it.
type PrepackedA struct {
	m, k   int
	nic    int         // row blocks per column block
	blocks [][]float32 // in blocked's (pc, ic) order
}

// K is the packed matrix's column count (the product's inner size).
func (p *PrepackedA) K() int { return p.k }

// PrepackA packs the m x k matrix a.
func PrepackA(m, k int, a Mat) *PrepackedA {
	pre := &PrepackedA{m: m, k: k, nic: (m + MC - 1) / MC}
	for pc := 0; pc < k; pc += KC {
		kc := min(KC, k-pc)
		for ic := 0; ic < m; ic += MC {
			mcur := min(MC, m-ic)
			blk := make([]float32, kc*((mcur+MR-1)/MR*MR))
			packA(blk, a, 1, ic, mcur, pc, kc)
			pre.blocks = append(pre.blocks, blk)
		}
	}
	return pre
}

// WithPrepackedA is Gemm with alpha 1 and A from preA (preA.m x
// preA.k times preA.k x n); B comes from b, or conv when non-nil.
func WithPrepackedA(sc *Scratch, n int, preA *PrepackedA, b Mat, conv *ConvSrc, beta float32, c []float32, coff, ldc int) {
	WithPrepackedAClamp(sc, n, preA, b, conv, beta, c, coff, ldc, Clamp{})
}

// WithPrepackedAClamp is WithPrepackedA with the clamp ep on C.
func WithPrepackedAClamp(sc *Scratch, n int, preA *PrepackedA, b Mat, conv *ConvSrc, beta float32, c []float32, coff, ldc int, ep Clamp) {
	WithPrepackedAEpilogue(sc, n, preA, b, conv, beta, c, coff, ldc, Epilogue{Clamp: ep})
}

// WithPrepackedAEpilogue is WithPrepackedA with the epilogue ep on C.
func WithPrepackedAEpilogue(sc *Scratch, n int, preA *PrepackedA, b Mat, conv *ConvSrc, beta float32, c []float32, coff, ldc int, ep Epilogue) {
	m, k := preA.m, preA.k
	if m <= 0 || n <= 0 {
		return
	}
	if k <= 0 {
		ScaleC(m, n, beta, c, coff, ldc)
		ep.rows(c, coff, ldc, 0, m, 0, n)
		return
	}
	blocked(sc, m, n, k, 1, Mat{}, b, conv, nil, preA, beta, c, coff, ldc, ep)
}

// ScaleC scales the m x n block of C at c[coff] (row stride ldc) by
// beta; beta 0 clears it, NaNs included.
func ScaleC(m, n int, beta float32, c []float32, coff, ldc int) {
	if beta == 1 {
		return
	}
	for i := 0; i < m; i++ {
		row := c[coff+i*ldc : coff+i*ldc+n]
		if beta == 0 {
			clear(row)
			continue
		}
		for j := range row {
			row[j] *= beta
		}
	}
}

// macro runs the micro-kernel over one packed A block and B panel,
// adding the tiles to C, or storing them when add is false. Where
// pairPanels is set, two full B panels go through the 6x32 kernels
// together (see [AVX-512 tiles]).
func macro(pk *packBufs, apack, bpack []float32, mc, nc, kc int, c []float32, coff, ldc int, add bool, te *tileEpi) {
	for jr := 0; jr < nc; jr += NR {
		if pairPanels && jr+2*NR <= nc {
			bp2 := bpack[jr*kc : jr*kc+2*kc*NR]
			ir0 := 0
			if te == nil && cpuHas512() && mc >= MR && kc > 0 {
				// The full tiles in one call.
				ir0 = mc / MR * MR
				kernel32Loop(kc, apack[:ir0*kc], bp2, c[coff+jr:], ldc, add, ir0/MR)
			}
			for ir := ir0; ir < mc; ir += MR {
				ap := apack[ir*kc : ir*kc+kc*MR]
				o := coff + ir*ldc + jr
				switch mr := min(MR, mc-ir); {
				case mr == MR && te != nil:
					te.full32(kc, ap, bp2, c[o:], ldc, add, ir, jr)
				case mr == MR:
					kernel32(kc, ap, bp2, c[o:], ldc, add)
				case cpuHas512():
					edgeTile32(pk, ap, bp2, mr, kc, c, o, ldc, add)
					if te != nil {
						te.ep.affine(c, te.coff, ldc, te.i0+ir, te.i0+ir+mr, te.j0+jr, te.j0+jr+2*NR)
					}
				default:
					macroTile(pk, ap, bp2[:kc*NR], mr, NR, kc, c, o, ldc, add, te, ir, jr)
					macroTile(pk, ap, bp2[kc*NR:], mr, NR, kc, c, o+NR, ldc, add, te, ir, jr+NR)
				}
			}
			jr += NR
			continue
		}
		nr := min(NR, nc-jr)
		bp := bpack[jr*kc : jr*kc+kc*NR]
		for ir := 0; ir < mc; ir += MR {
			ap := apack[ir*kc : ir*kc+kc*MR]
			macroTile(pk, ap, bp, min(MR, mc-ir), nr, kc, c, coff+ir*ldc+jr, ldc, add, te, ir, jr)
		}
	}
}

// macroTile computes the mr x nr tile at row ir and column jr of the
// block (at c[o:]) from A panel ap and B panel bp.
func macroTile(pk *packBufs, ap, bp []float32, mr, nr, kc int, c []float32, o, ldc int, add bool, te *tileEpi, ir, jr int) {
	switch {
	case mr == MR && nr == NR && te != nil:
		te.full(kc, ap, bp, c[o:], ldc, add, ir, jr)
		return
	case mr == MR && nr == NR:
		kernel(kc, ap, bp, c[o:], ldc, add)
		return
	case mr == MR && nr == 8:
		kernelHalf(kc, ap, bp, c[o:], ldc, add, &pk.c)
	default:
		edgeTile(pk, ap, bp, mr, nr, kc, c, o, ldc, add)
	}
	if te != nil {
		// An edge tile's epilogue follows its store.
		te.ep.affine(c, te.coff, ldc, te.i0+ir, te.i0+ir+mr, te.j0+jr, te.j0+jr+nr)
	}
}

// kernel32 is C[6x32] += A[6xk]*B[kx32] (= when add is false), B two
// packed panels one after the other: one AVX-512 call, or the 6x16
// kernel on each panel.
func kernel32(k int, a, b, c []float32, ldc int, add bool) {
	if cpuHas512() && k > 0 {
		kernel32Asm(k, a, b, c, ldc, add)
		return
	}
	kernel(k, a, b[:k*NR], c, ldc, add)
	kernel(k, a, b[k*NR:], c[NR:], ldc, add)
}

// edgeTile computes a tile of fewer than MR rows or NR columns aside,
// then adds (or, add false, stores) its valid part at c[o:] (of a panel
// of 8 columns or fewer, only the first 8 are computed).
func edgeTile(pk *packBufs, ap, bp []float32, mr, nr, kc int, c []float32, o, ldc int, add bool) {
	t := pk.c[:]
	if nr <= 8 {
		kernelHalf(kc, ap, bp, t, NR, false, &pk.c2)
	} else {
		kernel(kc, ap, bp, t, NR, false)
	}
	tileOut(t, NR, mr, nr, c, o, ldc, add)
}

// tileOut adds (add false: copies) the first mr rows and nr columns of
// the scratch tile t, rows tld apart, to C at c[o:], rows ldc apart.
func tileOut(t []float32, tld, mr, nr int, c []float32, o, ldc int, add bool) {
	for i := 0; i < mr; i++ {
		row := c[o+i*ldc : o+i*ldc+nr]
		tr := t[i*tld : i*tld+nr]
		if !add {
			copy(row, tr)
			continue
		}
		for j := range row {
			row[j] += tr[j]
		}
	}
}

// edgeTile32 is edgeTile for a tile of fewer than MR rows over two
// full panels (bp2) with AVX-512: one 6x32 kernel call into a scratch
// tile, the time of one full tile, where two 6x16 calls took two.
func edgeTile32(pk *packBufs, ap, bp2 []float32, mr, kc int, c []float32, o, ldc int, add bool) {
	t := pk.c32[:]
	kernel32Asm(kc, ap, bp2, t, 2*NR, false)
	tileOut(t, 2*NR, mr, 2*NR, c, o, ldc, add)
}

// tileEpi has the micro-kernel apply an Epilogue's bias, residual and
// clamp (not its activation) as it stores each full tile of a block's
// last k block (kernel6x16EpiAVX2), instead of a pass over the finished
// block; edge tiles get Epilogue.affine right after their store. The
// sums are the same, in the same order. Rows and columns i0+ir, j0+jr
// count from the product's C at coff.
type tileEpi struct {
	ep     Epilogue // a copy: a pointer to the caller's would escape
	coff   int
	i0, j0 int
	lo, hi float32
	// bias holds the block's rows' biases, gathered once (hasBias).
	bias    [MC]float32
	hasBias bool
}

// tileEpiFor returns pk's tileEpi for ep on the block of mrows rows at
// row i0 and column j0 of the product at coff, or nil where the kernel cannot
// apply ep (a bias per column, or no assembly).
func tileEpiFor(pk *packBufs, ep *Epilogue, coff, i0, j0, mrows int) *tileEpi {
	if !useAsm || ep.BiasCols || (ep.Bias == nil && ep.Res == nil && !ep.On) {
		return nil
	}
	te := &pk.te
	*te = tileEpi{ep: *ep, coff: coff, i0: i0, j0: j0, lo: float32(math.Inf(-1)), hi: float32(math.Inf(1))}
	if ep.On {
		te.lo, te.hi = ep.Lo, ep.Hi
	}
	if ep.Bias != nil {
		te.hasBias = true
		for r := range min(MC, mrows) {
			te.bias[r] = ep.Bias[ep.BiasOff+(i0+r)*ep.BiasStride]
		}
	}
	return te
}

// full computes the full tile at row ir and column jr of the block.
func (te *tileEpi) full(kc int, ap, bp, c []float32, ldc int, add bool, ir, jr int) {
	ep := &te.ep
	var bias *[MR]float32
	if te.hasBias {
		bias = (*[MR]float32)(te.bias[ir : ir+MR])
	}
	var res []float32
	if ep.Res != nil {
		res = ep.Res[ep.ResOff+(te.i0+ir)*ep.ResLd+te.j0+jr:]
	}
	kernelEpi(kc, ap, bp, c, ldc, add, bias, res, ep.ResLd, te.lo, te.hi)
}

// full32 computes the two full tiles at row ir and columns jr, jr+NR
// of the block, B's two panels one after the other in bp.
func (te *tileEpi) full32(kc int, ap, bp, c []float32, ldc int, add bool, ir, jr int) {
	if !cpuHas512() {
		te.full(kc, ap, bp[:kc*NR], c, ldc, add, ir, jr)
		te.full(kc, ap, bp[kc*NR:], c[NR:], ldc, add, ir, jr+NR)
		return
	}
	ep := &te.ep
	var bias *[MR]float32
	if te.hasBias {
		bias = (*[MR]float32)(te.bias[ir : ir+MR])
	}
	var res []float32
	if ep.Res != nil {
		res = ep.Res[ep.ResOff+(te.i0+ir)*ep.ResLd+te.j0+jr:]
	}
	kernelEpi32(kc, ap, bp, c, ldc, add, bias, res, ep.ResLd, te.lo, te.hi)
}

// dotsMax bounds the products dots computes: below it, packing
// B into zero-padded 16-column panels (a small bmm's n is often 4 or 8)
// costs more than the multiply itself.
const dotsMax = 64

// dots is C += alpha*A*B as m*n dot products, for A with contiguous
// rows and B with contiguous columns (a matrix times a transposed one,
// such as the pairwise dot products of DLRM's feature interaction).
func dots(m, n, k int, alpha float32, a, b Mat, c []float32, coff, ldc int) {
	var d [4]float32
	i := 0
	for ; i+4 <= m; i += 4 {
		rows := a.Data[a.Off+i*a.RS:]
		for j := 0; j < n; j++ {
			x := b.Data[b.Off+j*b.CS : b.Off+j*b.CS+k]
			d = [4]float32{}
			dot4(rows, a.RS, x, &d)
			for r := range 4 {
				c[coff+(i+r)*ldc+j] += alpha * d[r]
			}
		}
	}
	for ; i < m; i++ {
		row := a.Data[a.Off+i*a.RS : a.Off+i*a.RS+k]
		for j := 0; j < n; j++ {
			c[coff+i*ldc+j] += alpha * dot(row, b.Data[b.Off+j*b.CS:b.Off+j*b.CS+k])
		}
	}
}

// useDirect reports whether a block of A is better read in place
// than packed: packing costs a pass over the block's mc x kc values and
// pays back only over many B panels, so a block multiplied by one or two
// panels (a linear of a few outputs) or only a few rows (a small batch)
// skips it. Only row-major A qualifies (rows read as they lie), and alpha
// must be 1 (packing is where it is applied).
// noDirect turns the in-place path off (tests cover both paths).
var noDirect = false

func useDirect(a Mat, alpha float32, mc, nc int) bool {
	return !noDirect && a.CS == 1 && alpha == 1 && (mc < 2*MR || nc <= 2*NR)
}

// macroDirect is macro with A read in place: rows [ic, ic+mc)
// and columns [pc, pc+kc) of a, four rows at a time. Rows left over
// (mc not a multiple of 4) are copied to a zero-padded block first, so
// the kernel never reads past A.
func macroDirect(pk *packBufs, a Mat, ic, mc, pc int, bpack []float32, nc, kc int, c []float32, coff, ldc int) {
	const mr = 4
	full := mc &^ (mr - 1)
	var rest []float32
	if full < mc {
		rest = pk.a[:mr*kc]
		clear(rest)
		for i := full; i < mc; i++ {
			src := a.Off + (ic+i)*a.RS + pc
			copy(rest[(i-full)*kc:(i-full+1)*kc], a.Data[src:src+kc])
		}
	}
	for jr := 0; jr < nc; jr += NR {
		nr := min(NR, nc-jr)
		bp := bpack[jr*kc : jr*kc+kc*NR]
		for ir := 0; ir < mc; ir += mr {
			ap, lda := rest, kc
			if ir < full {
				ap, lda = a.Data[a.Off+(ic+ir)*a.RS+pc:], a.RS
			}
			o := coff + ir*ldc + jr
			rows := min(mr, mc-ir)
			if rows == mr && nr == NR {
				kernelDirect(kc, ap, lda, bp, c[o:], ldc)
				continue
			}
			t := pk.c[:mr*NR]
			clear(t)
			kernelDirect(kc, ap, lda, bp, t, NR)
			for i := 0; i < rows; i++ {
				row := c[o+i*ldc : o+i*ldc+nr]
				tr := t[i*NR : i*NR+nr]
				for j := range row {
					row[j] += tr[j]
				}
			}
		}
	}
}

// packA packs rows [ic, ic+mc) and columns [pc, pc+kc) of alpha*A
// into MR-row panels, k-major within a panel, zero-padding the last panel.
func packA(dst []float32, a Mat, alpha float32, ic, mc, pc, kc int) {
	for ir := 0; ir < mc; ir += MR {
		mr := min(MR, mc-ir)
		p := dst[ir*kc : ir*kc+kc*MR]
		base := a.Off + (ic+ir)*a.RS + pc*a.CS
		if mr == MR && a.CS == 1 {
			packA6(p, a.Data, base, a.RS, kc, alpha)
			continue
		}
		if mr < MR {
			clear(p)
		}
		for i := 0; i < mr; i++ {
			src := base + i*a.RS
			if a.CS == 1 {
				row := a.Data[src : src+kc]
				for q, v := range row {
					p[q*MR+i] = alpha * v
				}
				continue
			}
			for q := 0; q < kc; q++ {
				p[q*MR+i] = alpha * a.Data[src+q*a.CS]
			}
		}
	}
}

// packA6 packs six contiguous rows of kc elements (the first at
// data[base], the next rs further) k-major: p[q*6+i] = alpha*row_i[q].
// It reads the six rows as six sequential streams and writes p once, in
// order; packA's general loop writes p six times with a stride, which
// made packing a seventh of a 512x512x512 product. On AVX2 all but the
// last few columns go through packA6AVX2, a transpose per 8 columns,
// which halved packing's share again.
func packA6(p []float32, data []float32, base, rs, kc int, alpha float32) {
	// Reslicing each row to r0's length lets the compiler drop the
	// bounds checks in the loops.
	r0 := data[base : base+kc]
	r1 := data[base+rs : base+rs+kc][:len(r0)]
	r2 := data[base+2*rs : base+2*rs+kc][:len(r0)]
	r3 := data[base+3*rs : base+3*rs+kc][:len(r0)]
	r4 := data[base+4*rs : base+4*rs+kc][:len(r0)]
	r5 := data[base+5*rs : base+5*rs+kc][:len(r0)]
	p = p[:len(r0)*MR]
	q0 := packA6Groups(p, data, base, rs, kc, alpha)
	if alpha == 1 {
		for q := q0; q < len(r0); q++ {
			d := p[q*MR : q*MR+MR : q*MR+MR]
			d[0], d[1], d[2], d[3], d[4], d[5] = r0[q], r1[q], r2[q], r3[q], r4[q], r5[q]
		}
		return
	}
	for q := q0; q < len(r0); q++ {
		d := p[q*MR : q*MR+MR : q*MR+MR]
		d[0], d[1], d[2], d[3], d[4], d[5] = alpha*r0[q], alpha*r1[q], alpha*r2[q], alpha*r3[q], alpha*r4[q], alpha*r5[q]
	}
}

// packBGroup is how many panels packB fills in one walk down B's rows.
const packBGroup = 8

// packB packs rows [pc, pc+kc) and columns [jc, jc+nc) of B into
// NR-column panels, k-major within a panel, zero-padding the last panel.
func packB(dst []float32, b Mat, pc, kc, jc, nc int) {
	if b.CS == 1 && nc >= NR {
		// Rows contiguous: walk the rows of B sequentially, a group of
		// packBGroup panels at a time (large row strides defeat the
		// prefetcher and the TLB when walked panel by panel), dealing
		// 16-float pieces to the group's panels: a few write streams,
		// not one per panel of the row (BenchmarkPackB: 512x512 in
		// 31-34 µs against 89 dealing whole rows to 32 panels).
		full := nc / NR * NR
		for c0 := 0; c0 < full; c0 += packBGroup * NR {
			w := min(packBGroup*NR, full-c0)
			for q := 0; q < kc; q++ {
				s := b.Off + (pc+q)*b.RS + jc + c0
				deal(dst[c0*kc+q*NR:], b.Data[s:s+w], kc*NR)
			}
		}
		if full == nc {
			return
		}
		packBPanels(dst, b, pc, kc, jc, nc, full)
		return
	}
	packBPanels(dst, b, pc, kc, jc, nc, 0)
}

// dealGo is the pure-Go deal.
func dealGo(dst, row []float32, stride int) {
	for i := 0; i+NR <= len(row); i += NR {
		o := i / NR * stride
		*(*[NR]float32)(dst[o : o+NR]) = *(*[NR]float32)(row[i : i+NR])
	}
}

// packBPanels packs the panels from column offset from on.
func packBPanels(dst []float32, b Mat, pc, kc, jc, nc, from int) {
	for jr := from; jr < nc; jr += NR {
		nr := min(NR, nc-jr)
		p := dst[jr*kc : jr*kc+kc*NR]
		base := b.Off + pc*b.RS + (jc+jr)*b.CS
		switch {
		case b.CS == 1 && nr == NR:
			for q := 0; q < kc; q++ {
				s := base + q*b.RS
				// A fixed-size array copy compiles to vector moves, not a
				// memmove call per 16 floats.
				*(*[NR]float32)(p[q*NR : q*NR+NR]) = *(*[NR]float32)(b.Data[s : s+NR])
			}
		case b.RS == 1 && nr == NR:
			// Columns contiguous (a transposed weight): gather one
			// element from each of 16 sequential streams per packed row.
			var cols [NR][]float32
			for j := range cols {
				s := base + j*b.CS
				cols[j] = b.Data[s : s+kc]
			}
			for q := 0; q < kc; q++ {
				o := (*[NR]float32)(p[q*NR : q*NR+NR])
				for j := range o {
					o[j] = cols[j][q]
				}
			}
		case b.RS == 1:
			if nr < NR {
				clear(p)
			}
			for j := 0; j < nr; j++ {
				s := base + j*b.CS
				col := b.Data[s : s+kc]
				for q, v := range col {
					p[q*NR+j] = v
				}
			}
		default:
			if nr < NR {
				clear(p)
			}
			for q := 0; q < kc; q++ {
				s := base + q*b.RS
				for j := 0; j < nr; j++ {
					p[q*NR+j] = b.Data[s+j*b.CS]
				}
			}
		}
	}
}

// packConv packs the im2col matrix of cv (rows [pc, pc+kc), columns
// [jc, jc+nc)) without materialising it. Along a column panel the output
// position runs through rows of the output image; each run within one
// output row reads an evenly strided run of one input row.
func packConv(pk *packBufs, cv *ConvSrc, pc, kc, jc, nc int) {
	dst := pk.b
	// Per packed row: input channel base and tap offsets, hoisted out of
	// the panel loop.
	khw := cv.KH * cv.KW
	kdhw := cv.KD * khw
	rows := pk.rows[:kc]
	for q := range rows {
		row := pc + q
		ch := row / kdhw
		r := row - ch*kdhw
		kz := r / khw
		r -= kz * khw
		ki, kj := r/cv.KW, r%cv.KW
		rows[q] = convRowInfo{cv.Off + ch*cv.SC, kz*cv.DilD - cv.PadD, ki*cv.DilH - cv.PadH, kj*cv.DilW - cv.PadW}
	}
	rowsContig := cv.SW == 1
	sw := cv.StrW
	for jr := 0; jr < nc; jr += NR {
		nr := min(NR, nc-jr)
		p := dst[jr*kc : jr*kc+kc*NR]
		j0 := jc + jr
		r0, ow0 := j0/cv.OW, j0%cv.OW
		od0, oh0 := r0/cv.OH, r0%cv.OH
		if rowsContig && nr == NR && ow0+NR <= cv.OW {
			// The whole panel lies in one output row: 16 input elements
			// sw apart per packed row (consecutive for stride 1), fully
			// inside most of the time.
			for q, ri := range rows {
				out := (*[NR]float32)(p[q*NR : q*NR+NR])
				id := od0*cv.StrD + ri.dd
				ih := oh0*cv.StrH + ri.dh
				iw := ow0*sw + ri.dw
				if uint(ih) >= uint(cv.H) || uint(id) >= uint(cv.D) {
					*out = [NR]float32{}
					continue
				}
				src := ri.base + id*cv.SD + ih*cv.SH + iw
				if iw >= 0 && iw+(NR-1)*sw < cv.W {
					if sw == 1 {
						*out = *(*[NR]float32)(cv.Data[src : src+NR])
						continue
					}
					if sw == 2 {
						// Stride 2 (stems, downsampling): a fixed-size
						// view, so the gathers need no bounds checks.
						in := (*[2*NR - 1]float32)(cv.Data[src : src+2*NR-1])
						for j := range out {
							out[j] = in[2*j]
						}
						continue
					}
					in := cv.Data[src : src+(NR-1)*sw+1]
					for j := range out {
						out[j] = in[j*sw]
					}
					continue
				}
				for j := range out {
					if uint(iw+j*sw) < uint(cv.W) {
						out[j] = cv.Data[src+j*sw]
					} else {
						out[j] = 0
					}
				}
			}
			continue
		}
		// The panel crosses output rows: its runs within one output row
		// (segments) are the same for every packed row, so they are
		// found once; short runs are copied inline, not by a memmove
		// call each (a 7-wide image gives three runs per panel).
		var segs [NR]convSeg
		ns := 0
		for j, od, oh, ow := 0, od0, oh0, ow0; j < nr; ns++ {
			n := min(nr-j, cv.OW-ow)
			segs[ns] = convSeg{j, n, od * cv.StrD, oh * cv.StrH, ow * sw}
			j += n
			ow += n
			if ow == cv.OW {
				ow = 0
				if oh++; oh == cv.OH {
					oh = 0
					od++
				}
			}
		}
		for q, ri := range rows {
			out := (*[NR]float32)(p[q*NR : q*NR+NR])
			for _, sg := range segs[:ns] {
				o := out[sg.j : sg.j+sg.n]
				id, ih := sg.id+ri.dd, sg.ih+ri.dh
				if uint(ih) >= uint(cv.H) || uint(id) >= uint(cv.D) {
					clear(o)
					continue
				}
				rowBase := ri.base + id*cv.SD + ih*cv.SH
				iw := sg.iw + ri.dw
				if sw == 1 && rowsContig && iw >= 0 && iw+len(o) <= cv.W {
					in := cv.Data[rowBase+iw : rowBase+iw+len(o)]
					for t := range o {
						o[t] = in[t]
					}
					continue
				}
				convRow(o, cv, rowBase, iw)
			}
			clear(out[nr:])
		}
	}
}

// convSeg is a run of a panel's columns within one output row: columns
// [j, j+n) of the panel, whose input rows start at depth id, row ih and
// column iw before the taps' offsets.
type convSeg struct{ j, n, id, ih, iw int }

type convRowInfo struct{ base, dd, dh, dw int }

// convRow fills o[t] = input row at iw0 + t*strW (0 outside).
func convRow(o []float32, cv *ConvSrc, rowBase, iw0 int) {
	s := cv.StrW
	if len(o) > 0 && iw0 >= 0 && iw0+(len(o)-1)*s < cv.W {
		// Wholly inside the row (short rows of small images, panels
		// that cross output rows): a copy or a gather, no tests.
		if s == 1 && cv.SW == 1 {
			copy(o, cv.Data[rowBase+iw0:rowBase+iw0+len(o)])
			return
		}
		step := s * cv.SW
		in := cv.Data[rowBase+iw0*cv.SW : rowBase+iw0*cv.SW+(len(o)-1)*step+1]
		for t := range o {
			o[t] = in[t*step]
		}
		return
	}
	step := s * cv.SW
	src := rowBase + iw0*cv.SW
	for t := range o {
		if iw := iw0 + t*s; uint(iw) < uint(cv.W) {
			o[t] = cv.Data[src+t*step]
		} else {
			o[t] = 0
		}
	}
}

// gemv computes y = alpha*A*x + y for A m x k (y was scaled by beta
// already); x has stride incx, y stride incy.
func gemv(m, k int, alpha float32, a Mat, x []float32, xoff, incx int, y []float32, yoff, incy int) {
	switch {
	case a.CS == 1 && incx == 1 && incy == 1:
		gemvRows(alpha, a.Data[a.Off:], a.RS, x[xoff:xoff+k], y[yoff:yoff+m])
	case a.CS == 1 && incx == 1:
		xs := x[xoff : xoff+k]
		i := 0
		if a.RS >= k { // rows do not overlap: four at a time share x
			var acc [4]float32
			for ; i+4 <= m; i += 4 {
				s := a.Off + i*a.RS
				dot4(a.Data[s:], a.RS, xs, &acc)
				y[yoff+i*incy] += alpha * acc[0]
				y[yoff+(i+1)*incy] += alpha * acc[1]
				y[yoff+(i+2)*incy] += alpha * acc[2]
				y[yoff+(i+3)*incy] += alpha * acc[3]
			}
		}
		for ; i < m; i++ {
			s := a.Off + i*a.RS
			y[yoff+i*incy] += alpha * dot(a.Data[s:s+k], xs)
		}
	case a.RS == 1 && incy == 1:
		ys := y[yoff : yoff+m]
		for q := 0; q < k; q++ {
			s := a.Off + q*a.CS
			Axpy(alpha*x[xoff+q*incx], a.Data[s:s+m], ys)
		}
	default:
		for i := 0; i < m; i++ {
			var acc float32
			for q := 0; q < k; q++ {
				acc += a.Data[a.Off+i*a.RS+q*a.CS] * x[xoff+q*incx]
			}
			y[yoff+i*incy] += alpha * acc
		}
	}
}

// dotGo is the pure-Go dot product: 8 independent accumulators so
// the additions pipeline.
func dotGo(x, y []float32) float32 {
	y = y[:len(x)]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= len(x); i += 8 {
		xs := x[i : i+8 : i+8]
		ys := y[i : i+8 : i+8]
		s0 += xs[0] * ys[0]
		s1 += xs[1] * ys[1]
		s2 += xs[2] * ys[2]
		s3 += xs[3] * ys[3]
		s4 += xs[4] * ys[4]
		s5 += xs[5] * ys[5]
		s6 += xs[6] * ys[6]
		s7 += xs[7] * ys[7]
	}
	for ; i < len(x); i++ {
		s0 += x[i] * y[i]
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// gemvRowsGo is the pure-Go gemvRows.
func gemvRowsGo(alpha float32, a []float32, lda int, x, y []float32) {
	k := len(x)
	i := 0
	if lda >= k {
		var acc [4]float32
		for ; i+4 <= len(y); i += 4 {
			dot4(a[i*lda:], lda, x, &acc)
			y[i] += alpha * acc[0]
			y[i+1] += alpha * acc[1]
			y[i+2] += alpha * acc[2]
			y[i+3] += alpha * acc[3]
		}
	}
	for ; i < len(y); i++ {
		y[i] += alpha * dot(a[i*lda:i*lda+k], x)
	}
}

// dot4Go computes four dot products of rows of a with x.
func dot4Go(a []float32, lda int, x []float32, out *[4]float32) {
	n := len(x)
	for r := range out {
		out[r] = dotGo(a[r*lda:r*lda+n], x)
	}
}

// axpyGo computes y += alpha*x.
func axpyGo(alpha float32, x, y []float32) {
	y = y[:len(x)]
	i := 0
	for ; i+4 <= len(x); i += 4 {
		xs := x[i : i+4 : i+4]
		ys := y[i : i+4 : i+4]
		ys[0] += alpha * xs[0]
		ys[1] += alpha * xs[1]
		ys[2] += alpha * xs[2]
		ys[3] += alpha * xs[3]
	}
	for ; i < len(x); i++ {
		y[i] += alpha * x[i]
	}
}

// kernelGoAdd is kernelGo storing the tile when add is false.
func kernelGoAdd(k int, a, b, c []float32, ldc int, add bool) {
	if !add {
		for i := 0; i < MR; i++ {
			clear(c[i*ldc : i*ldc+NR])
		}
	}
	kernelGo(k, a, b, c, ldc)
}

// kernelHalfGo is the pure-Go kernelHalf: the full tile into t, its
// first 8 columns stored or added to C.
func kernelHalfGo(k int, a, b, c []float32, ldc int, add bool, t *[MR * NR]float32) {
	kernelGoAdd(k, a, b, t[:], NR, false)
	for i := 0; i < MR; i++ {
		row := c[i*ldc : i*ldc+8]
		tr := t[i*NR : i*NR+8]
		if !add {
			copy(row, tr)
			continue
		}
		for j := range row {
			row[j] += tr[j]
		}
	}
}

// kernelGo is the pure-Go micro-kernel: C[6x16] += A[6xk]*B[kx16]
// over packed panels, in 2x4 register blocks (8 accumulators fit in
// registers; a whole 6x16 tile would spill).
func kernelGo(k int, a, b, c []float32, ldc int) {
	a = a[:k*MR]
	b = b[:k*NR]
	for i0 := 0; i0 < MR; i0 += 2 {
		for j0 := 0; j0 < NR; j0 += 4 {
			var c00, c01, c02, c03, c10, c11, c12, c13 float32
			ai, bi := i0, j0
			for q := 0; q < k; q++ {
				av := a[ai : ai+2 : ai+2]
				bv := b[bi : bi+4 : bi+4]
				a0, a1 := av[0], av[1]
				b0, b1, b2, b3 := bv[0], bv[1], bv[2], bv[3]
				c00 += a0 * b0
				c01 += a0 * b1
				c02 += a0 * b2
				c03 += a0 * b3
				c10 += a1 * b0
				c11 += a1 * b1
				c12 += a1 * b2
				c13 += a1 * b3
				ai += MR
				bi += NR
			}
			r0 := c[i0*ldc+j0 : i0*ldc+j0+4 : i0*ldc+j0+4]
			r0[0] += c00
			r0[1] += c01
			r0[2] += c02
			r0[3] += c03
			r1 := c[(i0+1)*ldc+j0 : (i0+1)*ldc+j0+4 : (i0+1)*ldc+j0+4]
			r1[0] += c10
			r1[1] += c11
			r1[2] += c12
			r1[3] += c13
		}
	}
}

// kernelDirectGo is the pure-Go kernelDirect, in 2x4 register
// blocks like kernelGo.
func kernelDirectGo(k int, a []float32, lda int, b, c []float32, ldc int) {
	b = b[:k*NR]
	for i0 := 0; i0 < 4; i0 += 2 {
		a0s := a[i0*lda : i0*lda+k]
		a1s := a[(i0+1)*lda : (i0+1)*lda+k]
		for j0 := 0; j0 < NR; j0 += 4 {
			var c00, c01, c02, c03, c10, c11, c12, c13 float32
			bi := j0
			for q := range a0s {
				bv := b[bi : bi+4 : bi+4]
				a0, a1 := a0s[q], a1s[q]
				b0, b1, b2, b3 := bv[0], bv[1], bv[2], bv[3]
				c00 += a0 * b0
				c01 += a0 * b1
				c02 += a0 * b2
				c03 += a0 * b3
				c10 += a1 * b0
				c11 += a1 * b1
				c12 += a1 * b2
				c13 += a1 * b3
				bi += NR
			}
			r0 := c[i0*ldc+j0 : i0*ldc+j0+4 : i0*ldc+j0+4]
			r0[0] += c00
			r0[1] += c01
			r0[2] += c02
			r0[3] += c03
			r1 := c[(i0+1)*ldc+j0 : (i0+1)*ldc+j0+4 : (i0+1)*ldc+j0+4]
			r1[0] += c10
			r1[1] += c11
			r1[2] += c12
			r1[3] += c13
		}
	}
}
