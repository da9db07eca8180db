//go:build amd64 && !purego

package gemm

import (
	"fmt"
	"math/rand"
	"testing"
	"time"
)

// measurePeak is the core's float32 FMA throughput in GFLOP/s, the best
// of several short timings.
func measurePeak() float64 {
	const rounds = 1 << 22
	best := 0.0
	for range 5 {
		start := time.Now()
		fmaPeak(rounds)
		best = max(best, rounds*peakFlopsPerRound/time.Since(start).Seconds()/1e9)
	}
	return best
}

// BenchmarkFMAPeak: the core's FMA peak (AVX2, 8-wide, two pipes on the
// CPUs gosr is tuned for).
func BenchmarkFMAPeak(b *testing.B) {
	if !cpuHasAsm {
		b.Skip("no AVX2/FMA")
	}
	const rounds = 1 << 16
	for range b.N {
		fmaPeak(rounds)
	}
	b.ReportMetric(float64(b.N)*rounds*peakFlopsPerRound/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkGemmPeak: GEMM (asm kernel) as a share of the FMA peak
// measured in the same run, the figure issue 28 sets at 85% for
// 512x512x512.
func BenchmarkGemmPeak(b *testing.B) {
	if !cpuHasAsm {
		b.Skip("no AVX2/FMA")
	}
	r := rand.New(rand.NewSource(5))
	for _, sh := range [][3]int{{512, 512, 512}, {64, 3136, 576}, {256, 784, 1152}} {
		m, n, k := sh[0], sh[1], sh[2]
		b.Run(fmt.Sprintf("%dx%dx%d", m, n, k), func(b *testing.B) {
			a := newMat(r, m, k, rowMajor)
			bm := newMat(r, k, n, rowMajor)
			c := make([]float32, m*n)
			sc := &Scratch{}
			Gemm(sc, m, n, k, 1, a, bm, nil, 0, c, 0, n)
			peak := measurePeak()
			b.ResetTimer()
			for range b.N {
				Gemm(sc, m, n, k, 1, a, bm, nil, 0, c, 0, n)
			}
			got := 2 * float64(m*n*k) * float64(b.N) / b.Elapsed().Seconds() / 1e9
			b.ReportMetric(got, "GFLOP/s")
			b.ReportMetric(peak, "peak-GFLOP/s")
			b.ReportMetric(100*got/peak, "%peak")
		})
	}
}

// BenchmarkKernelPeak: the 6x16 micro-kernel alone, on panels that stay
// in L1 (k = KC), as a share of the FMA peak measured in the same run:
// the ceiling for BenchmarkGemmPeak, which adds packing, edge tiles and
// the C tile's traffic.
func BenchmarkKernelPeak(b *testing.B) {
	if !cpuHasAsm {
		b.Skip("no AVX2/FMA")
	}
	a := make([]float32, KC*MR)
	bp := make([]float32, KC*NR)
	c := make([]float32, MR*NR)
	for i := range a {
		a[i] = 1e-3
	}
	for i := range bp {
		bp[i] = 1e-3
	}
	peak := measurePeak()
	b.ResetTimer()
	for range b.N {
		kernel6x16AVX2(KC, &a[0], &bp[0], &c[0], NR, 1)
	}
	got := 2 * float64(MR*NR*KC) * float64(b.N) / b.Elapsed().Seconds() / 1e9
	b.ReportMetric(got, "GFLOP/s")
	b.ReportMetric(100*got/peak, "%peak")
}
