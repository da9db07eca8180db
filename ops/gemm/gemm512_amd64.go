//go:build amd64 && !purego

package gemm

import "golang.org/x/sys/cpu"

// [AVX-512 tiles]
//
// With AVX-512 a register holds a whole 16-column row of a B panel, so
// the 6x16 tile fills only six accumulators: too few chains to cover
// the FMA latency on two pipes. The AVX-512 kernels (gemm512_amd64.s)
// compute a 6x32 tile instead, one A panel against two adjacent B
// panels, twelve accumulators as the AVX2 kernel has. Packed panels lie
// one after the other (panel r+1 starts k*NR floats after panel r), and
// a wide convolution's B rows are contiguous, so the layouts, the
// packing and the blocking stay as they are: macro and widePart only
// walk full panels two at a time (pairPanels). Each element's sum runs
// over k in the same order with the same FMAs as kernel6x16AVX2's, so
// the results are bit for bit those of the AVX2 kernels. Edge panels
// (the last, odd one, or fewer than 16 columns) take the 6x16 kernels.

//go:noescape
func kernel6x32AVX512(k int, a, b, c *float32, ldc int, add int)

//go:noescape
func kernel6x32EpiAVX512(k int, a, b, c *float32, ldc int, add int, bias, res *float32, ldr int, lo, hi float32)

//go:noescape
func kernel6x32WideAVX512(k int, a, b *float32, offs *int, c *float32, ldc int, add int)

//go:noescape
func fmaPeak512(n int)

//go:noescape
func rows8x32AVX512(out *float32, ldo int, x *float32, offs *int, k int, w *float32, n32, tail, mask1, mask2 int, bias, res *float32, ldr int, lo, hi float32, pf int)

//go:noescape
func gemv4AVX512(a *float32, lda int, x *float32, k int, y *float32, m int, alpha float32)

// cpuHasAVX512: AVX-512 Foundation, with the OS saving the ZMM and
// mask registers (x/sys/cpu checks XCR0).
var cpuHasAVX512 = cpuHasAsm && cpu.X86.HasAVX512F

// use512 selects the AVX-512 kernels where the CPU has them; pairPanels
// walks B panels in pairs, which is how they are reached. Tests set
// pairPanels alone to run the pairing over the 6x16 kernels.
var (
	use512     = cpuHasAVX512
	pairPanels = cpuHasAVX512
)

// cpuHas512 reports whether the 6x32 assembly runs now.
func cpuHas512() bool { return useAsm && use512 }

// kernel32Asm is kernel6x32AVX512 over slices, bounds checked: the
// second panel's tile (b[k*NR:], c[NR:]) is a 6x16 tile's bounds.
func kernel32Asm(k int, a, b, c []float32, ldc int, add bool) {
	ad := tileBounds(k, a, b[k*NR:], c[NR:], ldc, add)
	kernel6x32AVX512(k, &a[0], &b[0], &c[0], ldc, ad)
}

//go:noescape
func kernel6x32LoopAVX512(k int, a, b, c *float32, ldc int, add int, n int)

// kernel32Loop runs kernel32Asm on n full tiles down one pair of B
// panels, in one call (a tile's Go-side checks and call cost about 2%
// of its 6x32x256 multiply-adds): tile t's A panel at a[t*k*MR:], its
// C at c[t*MR*ldc:].
func kernel32Loop(k int, a, b, c []float32, ldc int, add bool, n int) {
	if n <= 0 || k <= 0 {
		return
	}
	_ = a[n*k*MR-1]
	_ = b[2*k*NR-1]
	_ = c[(n*MR-1)*ldc+2*NR-1]
	ad := 0
	if add {
		ad = 1
	}
	kernel6x32LoopAVX512(k, &a[0], &b[0], &c[0], ldc, ad, n)
}

// kernelEpi32 is kernelEpi over a 6x32 tile (two B panels in b).
func kernelEpi32(k int, a, b, c []float32, ldc int, add bool, bias *[MR]float32, res []float32, ldr int, lo, hi float32) {
	ad := tileBounds(k, a, b[k*NR:], c[NR:], ldc, add)
	var rp *float32
	if res != nil {
		_ = res[(MR-1)*ldr+2*NR-1]
		rp = &res[0]
	}
	var bp *float32
	if bias != nil {
		bp = &bias[0]
	}
	kernel6x32EpiAVX512(k, &a[0], &b[0], &c[0], ldc, ad, bp, rp, ldr, lo, hi)
}
