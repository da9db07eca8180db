//go:build amd64 && !purego

package gemm

import "golang.org/x/sys/cpu"

// AVX2+FMA kernels in gemm_amd64.s, chosen once from CPUID; the pure-Go
// kernels serve on older CPUs.

//go:noescape
func kernel6x16AVX2(k int, a, b, c *float32, ldc int, add int)

//go:noescape
func kernel6x16EpiAVX2(k int, a, b, c *float32, ldc int, add int, bias, res *float32, ldr int, lo, hi float32)

//go:noescape
func kernel6x8AVX2(k int, a, b, c *float32, ldc int, add int)

//go:noescape
func kernel6x16WideAVX2(k int, a, b *float32, offs *int, c *float32, ldc int, add int)

//go:noescape
func wideRowsAVX2(dst, src *float32, rows, n, ws int, b, lo, hi float32, bias int)

//go:noescape
func kernel4x16DirectAVX2(k int, a *float32, lda int, b, c *float32, ldc int)

//go:noescape
func dotAVX2(x, y *float32, n int) float32

//go:noescape
func dot4AVX2(a *float32, lda int, x *float32, n int, out *float32)

//go:noescape
func gemv4AVX2(a *float32, lda int, x *float32, k int, y *float32, m int, alpha float32)

//go:noescape
func packA6AVX2(p, a *float32, rs, groups int, alpha float32)

//go:noescape
func dealAVX2(dst, src *float32, n, stride int)

//go:noescape
func deal2AVX2(even, odd, src *float32, n int)

//go:noescape
func axpyAVX2(alpha float32, x, y *float32, n int)

// cpuHasAsm is detected with x/sys/cpu, which checks both the CPU flags
// and that the OS saves the YMM registers.
var cpuHasAsm = cpu.X86.HasAVX2 && cpu.X86.HasFMA

// useAsm selects the kernel variant: the assembly where the CPU has it.
// Tests set it to run each variant (see variants in the tests).
var useAsm = cpuHasAsm

// kernel is C[6x16] += A[6xk]*B[kx16] over packed panels, or = when
// add is false.
func kernel(k int, a, b, c []float32, ldc int, add bool) {
	if !useAsm || k == 0 {
		kernelGoAdd(k, a, b, c, ldc, add)
		return
	}
	kernel6x16AVX2(k, &a[0], &b[0], &c[0], ldc, tileBounds(k, a, b, c, ldc, add))
}

// tileBounds checks the bounds a 6x16 kernel relies on (k steps of A's
// and B's panels, a 6x16 tile of C with row stride ldc) and returns add
// as the kernels take it.
func tileBounds(k int, a, b, c []float32, ldc int, add bool) int {
	_ = a[k*MR-1]
	_ = b[k*NR-1]
	_ = c[(MR-1)*ldc+NR-1]
	if add {
		return 1
	}
	return 0
}

// kernelHalf is kernel for the first 8 columns of the B panel:
// C[6x8] += A[6xk]*B[kx8], or = when add is false. Without the assembly
// it runs the full kernel into a tile and keeps its first 8 columns.
func kernelHalf(k int, a, b, c []float32, ldc int, add bool, t *[MR * NR]float32) {
	if !useAsm || k == 0 {
		kernelHalfGo(k, a, b, c, ldc, add, t)
		return
	}
	_ = a[k*MR-1]
	_ = b[(k-1)*NR+7]
	_ = c[(MR-1)*ldc+7]
	ad := 0
	if add {
		ad = 1
	}
	kernel6x8AVX2(k, &a[0], &b[0], &c[0], ldc, ad)
}

// kernelDirect is C[4x16] += A[4xk]*B[kx16] with A's rows read in
// place (a[i*lda+q]) and B a packed panel.
func kernelDirect(k int, a []float32, lda int, b, c []float32, ldc int) {
	if !useAsm || k == 0 {
		kernelDirectGo(k, a, lda, b, c, ldc)
		return
	}
	_ = a[3*lda+k-1]
	_ = b[k*NR-1]
	_ = c[3*ldc+NR-1]
	kernel4x16DirectAVX2(k, &a[0], lda, &b[0], &c[0], ldc)
}

func dot(x, y []float32) float32 {
	if !useAsm || len(x) == 0 {
		return dotGo(x, y)
	}
	_ = y[len(x)-1]
	return dotAVX2(&x[0], &y[0], len(x))
}

// Axpy computes y += alpha*x over len(x) elements.
func Axpy(alpha float32, x, y []float32) {
	if !useAsm || len(x) == 0 {
		axpyGo(alpha, x, y)
		return
	}
	_ = y[len(x)-1]
	axpyAVX2(alpha, &x[0], &y[0], len(x))
}

// dot4 sets out[r] = dot(a[r*lda:r*lda+len(x)], x) for r < 4.
func dot4(a []float32, lda int, x []float32, out *[4]float32) {
	if !useAsm || len(x) < 8 {
		dot4Go(a, lda, x, out)
		return
	}
	n := len(x)
	_ = a[3*lda+n-1]
	n8 := n &^ 7
	dot4AVX2(&a[0], lda, &x[0], n8, &out[0])
	for q := n8; q < n; q++ {
		v := x[q]
		out[0] += a[q] * v
		out[1] += a[lda+q] * v
		out[2] += a[2*lda+q] * v
		out[3] += a[3*lda+q] * v
	}
}

// gemvRows sets y[i] += alpha*dot(a[i*lda:i*lda+len(x)], x) for
// i < len(y), in one assembly call for the bulk.
func gemvRows(alpha float32, a []float32, lda int, x, y []float32) {
	k, m := len(x), len(y)
	m4, k8 := m&^3, k&^7
	if !useAsm || m4 == 0 || k8 == 0 || lda < k {
		gemvRowsGo(alpha, a, lda, x, y)
		return
	}
	_ = a[(m4-1)*lda+k-1]
	if k16 := k &^ 15; cpuHas512() && k16 > 0 {
		// The 16-wide kernel's sums run in another order: the tail
		// past k16 goes as the AVX2 kernel's past k8 does.
		k8 = k16
		gemv4AVX512(&a[0], lda, &x[0], k8, &y[0], m4, alpha)
	} else {
		gemv4AVX2(&a[0], lda, &x[0], k8, &y[0], m4, alpha)
	}
	if k8 < k {
		for i := 0; i < m4; i++ {
			y[i] += alpha * dotGo(a[i*lda+k8:i*lda+k], x[k8:])
		}
	}
	for i := m4; i < m; i++ {
		y[i] += alpha * dot(a[i*lda:i*lda+k], x)
	}
}

// deal copies row[i*16:i*16+16] to dst[i*stride:] for i < len(row)/16.
func deal(dst, row []float32, stride int) {
	n := len(row) / NR
	if !useAsm || n == 0 {
		dealGo(dst, row, stride)
		return
	}
	_ = dst[(n-1)*stride+NR-1]
	dealAVX2(&dst[0], &row[0], n, stride)
}

// packA6Groups packs the leading columns of six rows (see packA6) with
// the assembly, leaving at least one column for the caller so the
// assembly's overlapping stores stay inside p, and returns how many it
// packed.
func packA6Groups(p, data []float32, base, rs, kc int, alpha float32) int {
	g := (kc - 1) / 8
	if !useAsm || g == 0 {
		return 0
	}
	// Bounds the assembly relies on: six rows of 8*g floats, and p up to
	// the last group's overlapping store.
	_ = data[base+5*rs+8*g-1]
	_ = p[g*8*MR+2-1]
	packA6AVX2(&p[0], &data[base], rs, g, alpha)
	return 8 * g
}

// kernelEpi is kernel with the last k block's epilogue applied as the
// tile is stored (see tileEpi): bias (nil: none) one value a row, res
// (nil: none) laid out as C with row stride ldr, then the clamp.
func kernelEpi(k int, a, b, c []float32, ldc int, add bool, bias *[MR]float32, res []float32, ldr int, lo, hi float32) {
	ad := tileBounds(k, a, b, c, ldc, add)
	var rp *float32
	if res != nil {
		_ = res[(MR-1)*ldr+NR-1]
		rp = &res[0]
	}
	var bp *float32
	if bias != nil {
		bp = &bias[0]
	}
	kernel6x16EpiAVX2(k, &a[0], &b[0], &c[0], ldc, ad, bp, rp, ldr, lo, hi)
}
