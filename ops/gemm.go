package ops

// Single-threaded float32 GEMM, BLIS style: B is packed into KC x NR
// panels, A into MR x KC panels (scaled by alpha), and a MR x NR
// micro-kernel (AVX2/FMA assembly on amd64 where the CPU has it, pure Go
// otherwise) accumulates into C. Operands are strided views, so
// transposed operands are packed straight from their storage, never
// copied first. B may also be an implicit im2col of an image (conv2d),
// packed from the image directly.

const (
	gemmMR = 6
	gemmNR = 16
	gemmKC = 256
	gemmMC = 72
	gemmNC = 1024 // a KC x NC block of B (1 MiB) stays in L2
)

// gemmMat is a strided matrix view: element (i, j) is
// data[off + i*rs + j*cs].
type gemmMat struct {
	data        []float32
	off, rs, cs int
}

func (m gemmMat) at(i, j int) float32 { return m.data[m.off+i*m.rs+j*m.cs] }

// t returns the transpose view.
func (m gemmMat) t() gemmMat { return gemmMat{m.data, m.off, m.cs, m.rs} }

// gemmConvSrc describes B as the im2col matrix of one image (one group):
// row p = (c, kz, ki, kj), column j = (od, oh, ow). A 2-d convolution has
// depth 1: d, kd, od, strD and dilD 1, padD 0.
type gemmConvSrc struct {
	data               []float32
	off, sC, sH, sW    int
	h, w, kh, kw       int
	strH, strW         int
	padH, padW         int
	dilH, dilW, oh, ow int
	sD, d, kd, od      int
	strD, padD, dilD   int
}

// gemmPack holds packing buffers. They are large (up to KC*NC floats)
// and only live during one gemm call, so they come from a free list shared
// by all runtimes instead of sitting in every node's State. Unlike a
// sync.Pool, the list keeps its buffers across garbage collections, so a
// steady run never reallocates them; it holds at most as many as gemm
// calls ever ran at once (bounded by gemmPackKeep).
type gemmPack struct {
	a [gemmMC * gemmKC]float32
	b []float32
	c [gemmMR * gemmNR]float32
	// rows describes the packed rows of an implicit im2col.
	rows [gemmKC]gemmConvRowInfo
}

const gemmPackKeep = 64

var gemmPacks = make(chan *gemmPack, gemmPackKeep)

// Scratch is memory one runtime's kernels share: one goroutine runs them
// at a time, so a gemm takes its packing buffers here without touching
// state other runtimes use (the shared free list is contended when many
// goroutines run small gemms at once).
type Scratch struct {
	pack *gemmPack
}

// gemmPack returns the scratch's packing buffers (from the free list on
// first use, then kept), or one from the free list for a nil scratch.
func (sc *Scratch) gemmPack() *gemmPack {
	if sc == nil {
		return gemmGetPack()
	}
	if sc.pack == nil {
		sc.pack = gemmGetPack()
	}
	return sc.pack
}

func (sc *Scratch) gemmDone(pk *gemmPack) {
	if sc == nil {
		gemmPutPack(pk)
	}
}

func gemmGetPack() *gemmPack {
	select {
	case pk := <-gemmPacks:
		return pk
	default:
		return &gemmPack{}
	}
}

func gemmPutPack(pk *gemmPack) {
	select {
	case gemmPacks <- pk:
	default: // more packs than ever needed at once: let this one go
	}
}

// gemm computes C = alpha*A*B + beta*C for A m x k, B k x n and C m x n
// with rows of stride ldc starting at c[coff]. With beta == 0, C is
// overwritten (NaNs in it do not propagate), as BLAS and PyTorch do.
// conv, when non-nil, replaces b.
func gemm(sc *Scratch, m, n, k int, alpha float32, a, b gemmMat, conv *gemmConvSrc, beta float32, c []float32, coff, ldc int) {
	if m <= 0 || n <= 0 {
		return
	}
	gemmScaleC(m, n, beta, c, coff, ldc)
	if k <= 0 || alpha == 0 {
		return
	}
	if conv == nil {
		if n == 1 {
			gemmGemv(m, k, alpha, a, b.data, b.off, b.rs, c, coff, ldc)
			return
		}
		if m == 1 {
			gemmGemv(n, k, alpha, b.t(), a.data, a.off, a.cs, c, coff, 1)
			return
		}
		if a.cs == 1 && b.rs == 1 && m*n <= gemmDotsMax {
			gemmDots(m, n, k, alpha, a, b, c, coff, ldc)
			return
		}
	}
	gemmBlocked(sc, m, n, k, alpha, a, b, conv, nil, nil, c, coff, ldc)
}

// gemmBlocked is the packed path; C is already scaled by beta. B comes
// from b, conv, or blocks packed in advance (pre); A from a, or from
// blocks packed in advance (preA, then alpha is 1).
func gemmBlocked(sc *Scratch, m, n, k int, alpha float32, a, b gemmMat, conv *gemmConvSrc, pre *gemmPrepacked, preA *gemmPrepackedA, c []float32, coff, ldc int) {
	pk := sc.gemmPack()
	nc := min(gemmNC, (n+gemmNR-1)/gemmNR*gemmNR)
	if need := min(k, gemmKC) * nc; pre == nil && cap(pk.b) < need {
		pk.b = make([]float32, need)
	}
	blk := 0
	for jc := 0; jc < n; jc += gemmNC {
		ncur := min(gemmNC, n-jc)
		for pc := 0; pc < k; pc += gemmKC {
			kc := min(gemmKC, k-pc)
			bp := pk.b
			switch {
			case pre != nil:
				bp = pre.blocks[blk]
				blk++
			case conv != nil:
				gemmPackConv(pk, conv, pc, kc, jc, ncur)
			default:
				gemmPackB(bp, b, pc, kc, jc, ncur)
			}
			for ic := 0; ic < m; ic += gemmMC {
				mcur := min(gemmMC, m-ic)
				if preA == nil && gemmUseDirect(a, alpha, mcur, ncur) {
					gemmMacroDirect(pk, a, ic, mcur, pc, bp, ncur, kc, c, coff+ic*ldc+jc, ldc)
					continue
				}
				ap := pk.a[:]
				if preA != nil {
					ap = preA.blocks[pc/gemmKC*preA.nic+ic/gemmMC]
				} else {
					gemmPackA(ap, a, alpha, ic, mcur, pc, kc)
				}
				gemmMacro(pk, ap, bp, mcur, ncur, kc, c, coff+ic*ldc+jc, ldc)
			}
		}
	}
	sc.gemmDone(pk)
}

// gemmPrepacked is a k x n B (a constant weight) packed once, at
// preparation, in the panel layout gemmBlocked consumes. It is read-only,
// so all runtimes share it.
type gemmPrepacked struct {
	n, k   int
	blocks [][]float32 // in gemmBlocked's (jc, pc) order
}

func gemmPrepack(n, k int, b gemmMat) *gemmPrepacked {
	pre := &gemmPrepacked{n: n, k: k}
	for jc := 0; jc < n; jc += gemmNC {
		ncur := min(gemmNC, n-jc)
		for pc := 0; pc < k; pc += gemmKC {
			kc := min(gemmKC, k-pc)
			blk := make([]float32, kc*((ncur+gemmNR-1)/gemmNR*gemmNR))
			gemmPackB(blk, b, pc, kc, jc, ncur)
			pre.blocks = append(pre.blocks, blk)
		}
	}
	return pre
}

// gemmWithPrepacked is gemm with B from pre (m x pre.k times pre.k x pre.n).
func gemmWithPrepacked(sc *Scratch, m int, alpha float32, a gemmMat, pre *gemmPrepacked, beta float32, c []float32, coff, ldc int) {
	if m <= 0 || pre.n <= 0 {
		return
	}
	gemmScaleC(m, pre.n, beta, c, coff, ldc)
	if pre.k <= 0 || alpha == 0 {
		return
	}
	gemmBlocked(sc, m, pre.n, pre.k, alpha, a, gemmMat{}, nil, pre, nil, c, coff, ldc)
}

// gemmPrepackedA is an m x k A (a constant conv weight) packed once, at
// preparation, in the panel layout gemmBlocked consumes, with alpha 1.
// It is read-only, so all runtimes share it.
type gemmPrepackedA struct {
	m, k   int
	nic    int         // row blocks per column block
	blocks [][]float32 // in gemmBlocked's (pc, ic) order
}

func gemmPrepackA(m, k int, a gemmMat) *gemmPrepackedA {
	pre := &gemmPrepackedA{m: m, k: k, nic: (m + gemmMC - 1) / gemmMC}
	for pc := 0; pc < k; pc += gemmKC {
		kc := min(gemmKC, k-pc)
		for ic := 0; ic < m; ic += gemmMC {
			mcur := min(gemmMC, m-ic)
			blk := make([]float32, kc*((mcur+gemmMR-1)/gemmMR*gemmMR))
			gemmPackA(blk, a, 1, ic, mcur, pc, kc)
			pre.blocks = append(pre.blocks, blk)
		}
	}
	return pre
}

// gemmWithPrepackedA is gemm with alpha 1 and A from preA (preA.m x
// preA.k times preA.k x n); B comes from b, or conv when non-nil.
func gemmWithPrepackedA(sc *Scratch, n int, preA *gemmPrepackedA, b gemmMat, conv *gemmConvSrc, beta float32, c []float32, coff, ldc int) {
	m, k := preA.m, preA.k
	if m <= 0 || n <= 0 {
		return
	}
	gemmScaleC(m, n, beta, c, coff, ldc)
	if k <= 0 {
		return
	}
	gemmBlocked(sc, m, n, k, 1, gemmMat{}, b, conv, nil, preA, c, coff, ldc)
}

func gemmScaleC(m, n int, beta float32, c []float32, coff, ldc int) {
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

// gemmMacro runs the micro-kernel over one packed A block and B panel.
func gemmMacro(pk *gemmPack, apack, bpack []float32, mc, nc, kc int, c []float32, coff, ldc int) {
	for jr := 0; jr < nc; jr += gemmNR {
		nr := min(gemmNR, nc-jr)
		bp := bpack[jr*kc : jr*kc+kc*gemmNR]
		for ir := 0; ir < mc; ir += gemmMR {
			mr := min(gemmMR, mc-ir)
			ap := apack[ir*kc : ir*kc+kc*gemmMR]
			o := coff + ir*ldc + jr
			if mr == gemmMR && nr == gemmNR {
				gemmKernel(kc, ap, bp, c[o:], ldc)
				continue
			}
			// Edge tile: compute into a zeroed tile, add the valid part.
			t := pk.c[:]
			clear(t)
			gemmKernel(kc, ap, bp, t, gemmNR)
			for i := 0; i < mr; i++ {
				row := c[o+i*ldc : o+i*ldc+nr]
				tr := t[i*gemmNR : i*gemmNR+nr]
				for j := range row {
					row[j] += tr[j]
				}
			}
		}
	}
}

// gemmDotsMax bounds the products gemmDots computes: below it, packing
// B into zero-padded 16-column panels (a small bmm's n is often 4 or 8)
// costs more than the multiply itself.
const gemmDotsMax = 64

// gemmDots is C += alpha*A*B as m*n dot products, for A with contiguous
// rows and B with contiguous columns (a matrix times a transposed one,
// such as the pairwise dot products of DLRM's feature interaction).
func gemmDots(m, n, k int, alpha float32, a, b gemmMat, c []float32, coff, ldc int) {
	var d [4]float32
	i := 0
	for ; i+4 <= m; i += 4 {
		rows := a.data[a.off+i*a.rs:]
		for j := 0; j < n; j++ {
			x := b.data[b.off+j*b.cs : b.off+j*b.cs+k]
			d = [4]float32{}
			gemmDot4(rows, a.rs, x, &d)
			for r := range 4 {
				c[coff+(i+r)*ldc+j] += alpha * d[r]
			}
		}
	}
	for ; i < m; i++ {
		row := a.data[a.off+i*a.rs : a.off+i*a.rs+k]
		for j := 0; j < n; j++ {
			c[coff+i*ldc+j] += alpha * gemmDot(row, b.data[b.off+j*b.cs:b.off+j*b.cs+k])
		}
	}
}

// gemmUseDirect reports whether a block of A is better read in place
// than packed: packing costs a pass over the block's mc x kc values and
// pays back only over many B panels, so a block multiplied by one or two
// panels (a linear of a few outputs) or only a few rows (a small batch)
// skips it. Only row-major A qualifies (rows read as they lie), and alpha
// must be 1 (packing is where it is applied).
// gemmNoDirect turns the in-place path off (tests cover both paths).
var gemmNoDirect = false

func gemmUseDirect(a gemmMat, alpha float32, mc, nc int) bool {
	return !gemmNoDirect && a.cs == 1 && alpha == 1 && (mc < 2*gemmMR || nc <= 2*gemmNR)
}

// gemmMacroDirect is gemmMacro with A read in place: rows [ic, ic+mc)
// and columns [pc, pc+kc) of a, four rows at a time. Rows left over
// (mc not a multiple of 4) are copied to a zero-padded block first, so
// the kernel never reads past A.
func gemmMacroDirect(pk *gemmPack, a gemmMat, ic, mc, pc int, bpack []float32, nc, kc int, c []float32, coff, ldc int) {
	const mr = 4
	full := mc &^ (mr - 1)
	var rest []float32
	if full < mc {
		rest = pk.a[:mr*kc]
		clear(rest)
		for i := full; i < mc; i++ {
			src := a.off + (ic+i)*a.rs + pc
			copy(rest[(i-full)*kc:(i-full+1)*kc], a.data[src:src+kc])
		}
	}
	for jr := 0; jr < nc; jr += gemmNR {
		nr := min(gemmNR, nc-jr)
		bp := bpack[jr*kc : jr*kc+kc*gemmNR]
		for ir := 0; ir < mc; ir += mr {
			ap, lda := rest, kc
			if ir < full {
				ap, lda = a.data[a.off+(ic+ir)*a.rs+pc:], a.rs
			}
			o := coff + ir*ldc + jr
			rows := min(mr, mc-ir)
			if rows == mr && nr == gemmNR {
				gemmKernelDirect(kc, ap, lda, bp, c[o:], ldc)
				continue
			}
			t := pk.c[:mr*gemmNR]
			clear(t)
			gemmKernelDirect(kc, ap, lda, bp, t, gemmNR)
			for i := 0; i < rows; i++ {
				row := c[o+i*ldc : o+i*ldc+nr]
				tr := t[i*gemmNR : i*gemmNR+nr]
				for j := range row {
					row[j] += tr[j]
				}
			}
		}
	}
}

// gemmPackA packs rows [ic, ic+mc) and columns [pc, pc+kc) of alpha*A
// into MR-row panels, k-major within a panel, zero-padding the last panel.
func gemmPackA(dst []float32, a gemmMat, alpha float32, ic, mc, pc, kc int) {
	for ir := 0; ir < mc; ir += gemmMR {
		mr := min(gemmMR, mc-ir)
		p := dst[ir*kc : ir*kc+kc*gemmMR]
		base := a.off + (ic+ir)*a.rs + pc*a.cs
		if mr < gemmMR {
			clear(p)
		}
		for i := 0; i < mr; i++ {
			src := base + i*a.rs
			if a.cs == 1 {
				row := a.data[src : src+kc]
				for q, v := range row {
					p[q*gemmMR+i] = alpha * v
				}
				continue
			}
			for q := 0; q < kc; q++ {
				p[q*gemmMR+i] = alpha * a.data[src+q*a.cs]
			}
		}
	}
}

// gemmPackB packs rows [pc, pc+kc) and columns [jc, jc+nc) of B into
// NR-column panels, k-major within a panel, zero-padding the last panel.
func gemmPackB(dst []float32, b gemmMat, pc, kc, jc, nc int) {
	if b.cs == 1 && nc >= gemmNR {
		// Rows contiguous: walk each row of B once, sequentially (large
		// row strides defeat the prefetcher and the TLB when walked
		// panel by panel), dealing 16-float pieces to the panels.
		full := nc / gemmNR * gemmNR
		for q := 0; q < kc; q++ {
			s := b.off + (pc+q)*b.rs + jc
			gemmDeal(dst[q*gemmNR:], b.data[s:s+full], kc*gemmNR)
		}
		if full == nc {
			return
		}
		gemmPackBPanels(dst, b, pc, kc, jc, nc, full)
		return
	}
	gemmPackBPanels(dst, b, pc, kc, jc, nc, 0)
}

// gemmDealGo is the pure-Go gemmDeal.
func gemmDealGo(dst, row []float32, stride int) {
	for i := 0; i+gemmNR <= len(row); i += gemmNR {
		o := i / gemmNR * stride
		*(*[gemmNR]float32)(dst[o : o+gemmNR]) = *(*[gemmNR]float32)(row[i : i+gemmNR])
	}
}

// gemmPackBPanels packs the panels from column offset from on.
func gemmPackBPanels(dst []float32, b gemmMat, pc, kc, jc, nc, from int) {
	for jr := from; jr < nc; jr += gemmNR {
		nr := min(gemmNR, nc-jr)
		p := dst[jr*kc : jr*kc+kc*gemmNR]
		base := b.off + pc*b.rs + (jc+jr)*b.cs
		switch {
		case b.cs == 1 && nr == gemmNR:
			for q := 0; q < kc; q++ {
				s := base + q*b.rs
				// A fixed-size array copy compiles to vector moves, not a
				// memmove call per 16 floats.
				*(*[gemmNR]float32)(p[q*gemmNR : q*gemmNR+gemmNR]) = *(*[gemmNR]float32)(b.data[s : s+gemmNR])
			}
		case b.rs == 1 && nr == gemmNR:
			// Columns contiguous (a transposed weight): gather one
			// element from each of 16 sequential streams per packed row.
			var cols [gemmNR][]float32
			for j := range cols {
				s := base + j*b.cs
				cols[j] = b.data[s : s+kc]
			}
			for q := 0; q < kc; q++ {
				o := (*[gemmNR]float32)(p[q*gemmNR : q*gemmNR+gemmNR])
				for j := range o {
					o[j] = cols[j][q]
				}
			}
		case b.rs == 1:
			if nr < gemmNR {
				clear(p)
			}
			for j := 0; j < nr; j++ {
				s := base + j*b.cs
				col := b.data[s : s+kc]
				for q, v := range col {
					p[q*gemmNR+j] = v
				}
			}
		default:
			if nr < gemmNR {
				clear(p)
			}
			for q := 0; q < kc; q++ {
				s := base + q*b.rs
				for j := 0; j < nr; j++ {
					p[q*gemmNR+j] = b.data[s+j*b.cs]
				}
			}
		}
	}
}

// gemmPackConv packs the im2col matrix of cv (rows [pc, pc+kc), columns
// [jc, jc+nc)) without materialising it. Along a column panel the output
// position runs through rows of the output image; each run within one
// output row reads an evenly strided run of one input row.
func gemmPackConv(pk *gemmPack, cv *gemmConvSrc, pc, kc, jc, nc int) {
	dst := pk.b
	// Per packed row: input channel base and tap offsets, hoisted out of
	// the panel loop.
	khw := cv.kh * cv.kw
	kdhw := cv.kd * khw
	rows := pk.rows[:kc]
	for q := range rows {
		row := pc + q
		ch := row / kdhw
		r := row - ch*kdhw
		kz := r / khw
		r -= kz * khw
		ki, kj := r/cv.kw, r%cv.kw
		rows[q] = gemmConvRowInfo{cv.off + ch*cv.sC, kz*cv.dilD - cv.padD, ki*cv.dilH - cv.padH, kj*cv.dilW - cv.padW}
	}
	rowsContig := cv.sW == 1
	sw := cv.strW
	for jr := 0; jr < nc; jr += gemmNR {
		nr := min(gemmNR, nc-jr)
		p := dst[jr*kc : jr*kc+kc*gemmNR]
		j0 := jc + jr
		r0, ow0 := j0/cv.ow, j0%cv.ow
		od0, oh0 := r0/cv.oh, r0%cv.oh
		if rowsContig && nr == gemmNR && ow0+gemmNR <= cv.ow {
			// The whole panel lies in one output row: 16 input elements
			// sw apart per packed row (consecutive for stride 1), fully
			// inside most of the time.
			for q, ri := range rows {
				out := (*[gemmNR]float32)(p[q*gemmNR : q*gemmNR+gemmNR])
				id := od0*cv.strD + ri.dd
				ih := oh0*cv.strH + ri.dh
				iw := ow0*sw + ri.dw
				if uint(ih) >= uint(cv.h) || uint(id) >= uint(cv.d) {
					*out = [gemmNR]float32{}
					continue
				}
				src := ri.base + id*cv.sD + ih*cv.sH + iw
				if iw >= 0 && iw+(gemmNR-1)*sw < cv.w {
					if sw == 1 {
						*out = *(*[gemmNR]float32)(cv.data[src : src+gemmNR])
						continue
					}
					if sw == 2 {
						// Stride 2 (stems, downsampling): a fixed-size
						// view, so the gathers need no bounds checks.
						in := (*[2*gemmNR - 1]float32)(cv.data[src : src+2*gemmNR-1])
						for j := range out {
							out[j] = in[2*j]
						}
						continue
					}
					in := cv.data[src : src+(gemmNR-1)*sw+1]
					for j := range out {
						out[j] = in[j*sw]
					}
					continue
				}
				for j := range out {
					if uint(iw+j*sw) < uint(cv.w) {
						out[j] = cv.data[src+j*sw]
					} else {
						out[j] = 0
					}
				}
			}
			continue
		}
		for q, ri := range rows {
			out := p[q*gemmNR : q*gemmNR+gemmNR]
			od, oh, ow := od0, oh0, ow0
			for j := 0; j < nr; {
				seg := min(nr-j, cv.ow-ow)
				o := out[j : j+seg]
				id := od*cv.strD + ri.dd
				ih := oh*cv.strH + ri.dh
				if uint(ih) >= uint(cv.h) || uint(id) >= uint(cv.d) {
					for t := range o {
						o[t] = 0
					}
				} else {
					gemmConvRow(o, cv, ri.base+id*cv.sD+ih*cv.sH, ow*cv.strW+ri.dw)
				}
				j += seg
				ow += seg
				if ow == cv.ow {
					ow = 0
					if oh++; oh == cv.oh {
						oh = 0
						od++
					}
				}
			}
			for j := nr; j < gemmNR; j++ {
				out[j] = 0
			}
		}
	}
}

type gemmConvRowInfo struct{ base, dd, dh, dw int }

// gemmConvRow fills o[t] = input row at iw0 + t*strW (0 outside).
func gemmConvRow(o []float32, cv *gemmConvSrc, rowBase, iw0 int) {
	s := cv.strW
	if len(o) > 0 && iw0 >= 0 && iw0+(len(o)-1)*s < cv.w {
		// Wholly inside the row (short rows of small images, panels
		// that cross output rows): a copy or a gather, no tests.
		if s == 1 && cv.sW == 1 {
			copy(o, cv.data[rowBase+iw0:rowBase+iw0+len(o)])
			return
		}
		step := s * cv.sW
		in := cv.data[rowBase+iw0*cv.sW : rowBase+iw0*cv.sW+(len(o)-1)*step+1]
		for t := range o {
			o[t] = in[t*step]
		}
		return
	}
	step := s * cv.sW
	src := rowBase + iw0*cv.sW
	for t := range o {
		if iw := iw0 + t*s; uint(iw) < uint(cv.w) {
			o[t] = cv.data[src+t*step]
		} else {
			o[t] = 0
		}
	}
}

// gemmGemv computes y = alpha*A*x + y for A m x k (y was scaled by beta
// already); x has stride incx, y stride incy.
func gemmGemv(m, k int, alpha float32, a gemmMat, x []float32, xoff, incx int, y []float32, yoff, incy int) {
	switch {
	case a.cs == 1 && incx == 1 && incy == 1:
		gemmGemvRows(alpha, a.data[a.off:], a.rs, x[xoff:xoff+k], y[yoff:yoff+m])
	case a.cs == 1 && incx == 1:
		xs := x[xoff : xoff+k]
		i := 0
		if a.rs >= k { // rows do not overlap: four at a time share x
			var acc [4]float32
			for ; i+4 <= m; i += 4 {
				s := a.off + i*a.rs
				gemmDot4(a.data[s:], a.rs, xs, &acc)
				y[yoff+i*incy] += alpha * acc[0]
				y[yoff+(i+1)*incy] += alpha * acc[1]
				y[yoff+(i+2)*incy] += alpha * acc[2]
				y[yoff+(i+3)*incy] += alpha * acc[3]
			}
		}
		for ; i < m; i++ {
			s := a.off + i*a.rs
			y[yoff+i*incy] += alpha * gemmDot(a.data[s:s+k], xs)
		}
	case a.rs == 1 && incy == 1:
		ys := y[yoff : yoff+m]
		for q := 0; q < k; q++ {
			s := a.off + q*a.cs
			gemmAxpy(alpha*x[xoff+q*incx], a.data[s:s+m], ys)
		}
	default:
		for i := 0; i < m; i++ {
			var acc float32
			for q := 0; q < k; q++ {
				acc += a.data[a.off+i*a.rs+q*a.cs] * x[xoff+q*incx]
			}
			y[yoff+i*incy] += alpha * acc
		}
	}
}

// gemmDotGo is the pure-Go dot product: 8 independent accumulators so
// the additions pipeline.
func gemmDotGo(x, y []float32) float32 {
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

// gemmGemvRowsGo is the pure-Go gemmGemvRows.
func gemmGemvRowsGo(alpha float32, a []float32, lda int, x, y []float32) {
	k := len(x)
	i := 0
	if lda >= k {
		var acc [4]float32
		for ; i+4 <= len(y); i += 4 {
			gemmDot4(a[i*lda:], lda, x, &acc)
			y[i] += alpha * acc[0]
			y[i+1] += alpha * acc[1]
			y[i+2] += alpha * acc[2]
			y[i+3] += alpha * acc[3]
		}
	}
	for ; i < len(y); i++ {
		y[i] += alpha * gemmDot(a[i*lda:i*lda+k], x)
	}
}

// gemmDot4Go computes four dot products of rows of a with x.
func gemmDot4Go(a []float32, lda int, x []float32, out *[4]float32) {
	n := len(x)
	for r := range out {
		out[r] = gemmDotGo(a[r*lda:r*lda+n], x)
	}
}

// gemmAxpyGo computes y += alpha*x.
func gemmAxpyGo(alpha float32, x, y []float32) {
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

// gemmKernelGo is the pure-Go micro-kernel: C[6x16] += A[6xk]*B[kx16]
// over packed panels, in 2x4 register blocks (8 accumulators fit in
// registers; a whole 6x16 tile would spill).
func gemmKernelGo(k int, a, b, c []float32, ldc int) {
	a = a[:k*gemmMR]
	b = b[:k*gemmNR]
	for i0 := 0; i0 < gemmMR; i0 += 2 {
		for j0 := 0; j0 < gemmNR; j0 += 4 {
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
				ai += gemmMR
				bi += gemmNR
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

// gemmKernelDirectGo is the pure-Go gemmKernelDirect, in 2x4 register
// blocks like gemmKernelGo.
func gemmKernelDirectGo(k int, a []float32, lda int, b, c []float32, ldc int) {
	b = b[:k*gemmNR]
	for i0 := 0; i0 < 4; i0 += 2 {
		a0s := a[i0*lda : i0*lda+k]
		a1s := a[(i0+1)*lda : (i0+1)*lda+k]
		for j0 := 0; j0 < gemmNR; j0 += 4 {
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
				bi += gemmNR
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
