//go:build !amd64 || purego

package ops

// Without assembly the pure-Go kernels serve.

func gemmKernel(k int, a, b, c []float32, ldc int) { gemmKernelGo(k, a, b, c, ldc) }

func gemmKernelDirect(k int, a []float32, lda int, b, c []float32, ldc int) {
	gemmKernelDirectGo(k, a, lda, b, c, ldc)
}

func gemmDot(x, y []float32) float32 { return gemmDotGo(x, y) }

func gemmAxpy(alpha float32, x, y []float32) { gemmAxpyGo(alpha, x, y) }

// gemmHasAsm reports whether the assembly kernels are in use.
var gemmHasAsm = false

func gemmDot4(a []float32, lda int, x []float32, out *[4]float32) { gemmDot4Go(a, lda, x, out) }

func gemmGemvRows(alpha float32, a []float32, lda int, x, y []float32) {
	gemmGemvRowsGo(alpha, a, lda, x, y)
}

func gemmDeal(dst, row []float32, stride int) { gemmDealGo(dst, row, stride) }
