package gemm

// fmaPeak runs n rounds of 12 independent 8-wide float32 FMAs (192
// flops a round): the core's FMA peak, which BenchmarkGemmPeak measures
// GEMM against. Needs AVX2 and FMA (cpuHasAsm).
//
//go:noescape
func fmaPeak(n int)

const peakFlopsPerRound = 12 * 8 * 2
