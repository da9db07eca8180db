//go:build !amd64 || purego

package gemm

// Without assembly the pure-Go kernels serve.

func kernel(k int, a, b, c []float32, ldc int, add bool) { kernelGoAdd(k, a, b, c, ldc, add) }

func kernelHalf(k int, a, b, c []float32, ldc int, add bool, t *[MR * NR]float32) {
	kernelHalfGo(k, a, b, c, ldc, add, t)
}

func kernelDirect(k int, a []float32, lda int, b, c []float32, ldc int) {
	kernelDirectGo(k, a, lda, b, c, ldc)
}

func dot(x, y []float32) float32 { return dotGo(x, y) }

// Axpy computes y += alpha*x over len(x) elements.
func Axpy(alpha float32, x, y []float32) { axpyGo(alpha, x, y) }

// cpuHasAsm and useAsm mirror gemm_amd64.go's: no assembly here.
const (
	cpuHasAsm    = false
	cpuHasAVX512 = false
)

var useAsm = false

func dot4(a []float32, lda int, x []float32, out *[4]float32) { dot4Go(a, lda, x, out) }

func gemvRows(alpha float32, a []float32, lda int, x, y []float32) {
	gemvRowsGo(alpha, a, lda, x, y)
}

func deal(dst, row []float32, stride int) { dealGo(dst, row, stride) }

// kernel6x16WideAVX2 is never called here: useAsm is false.
func kernel6x16WideAVX2(k int, a, b *float32, offs *int, c *float32, ldc int, add int) {}

// wideRowsAVX2 is never called here: useAsm is false.
func wideRowsAVX2(dst, src *float32, rows, n, ws int, b, lo, hi float32, bias int) {}

// deal2AVX2 is never called here: useAsm is false.
func deal2AVX2(even, odd, src *float32, n int) {}

// kernel6x8AVX2 is never called here: useAsm is false.
func kernel6x8AVX2(k int, a, b, c *float32, ldc int, add int) {}

// packA6Groups packs nothing here: packA6's loop does it all.
func packA6Groups(p, data []float32, base, rs, kc int, alpha float32) int { return 0 }

// kernelEpi is never called here: tile epilogues need the assembly.
func kernelEpi(k int, a, b, c []float32, ldc int, add bool, bias *[MR]float32, res []float32, ldr int, lo, hi float32) {
}

// No AVX-512 here; pairPanels is a variable so the tests can run the
// pairing over the pure-Go kernels.
var (
	use512     = false
	pairPanels = false
)

func cpuHas512() bool { return false }

// kernel32Asm, kernelEpi32 and kernel6x32WideAVX512 are never called
// here: cpuHas512 is false.
func kernel32Asm(k int, a, b, c []float32, ldc int, add bool) {}

// kernel32Loop is never called here: cpuHas512 is false.
func kernel32Loop(k int, a, b, c []float32, ldc int, add bool, n int) {}

func kernelEpi32(k int, a, b, c []float32, ldc int, add bool, bias *[MR]float32, res []float32, ldr int, lo, hi float32) {
}

func kernel6x32WideAVX512(k int, a, b *float32, offs *int, c *float32, ldc int, add int) {}

// rows8x32AVX512 is never called here: HasRows is false.
func rows8x32AVX512(out *float32, ldo int, x *float32, offs *int, k int, w *float32, n32, tail, mask1, mask2 int, bias, res *float32, ldr int, lo, hi float32, pf int) {
}
