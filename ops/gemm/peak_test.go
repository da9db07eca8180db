//go:build amd64 && !purego

package gemm

import (
	"fmt"
	"math/rand"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/gosr/gosr/internal/stats"
)

// measurePeak is the core's float32 FMA throughput in GFLOP/s at the
// width the kernels of variant v use (8 lanes, or 16 with AVX-512), the
// best of several short timings.
func measurePeak(v variant) float64 {
	best := 0.0
	for range 5 {
		best = max(best, peakOnce(v, 1<<22))
	}
	return best
}

// peakOnce is one timing of rounds rounds of the FMA loop at v's width,
// in GFLOP/s.
func peakOnce(v variant, rounds int) float64 {
	start := time.Now()
	if v.z {
		fmaPeak512(rounds)
	} else {
		fmaPeak(rounds)
	}
	return float64(rounds) * peakFlops(v) / time.Since(start).Seconds() / 1e9
}

func peakFlops(v variant) float64 {
	if v.z {
		return 2 * peakFlopsPerRound
	}
	return peakFlopsPerRound
}

// asmVariants are the assembly variants this CPU runs: the peak and
// the kernels are measured at each width.
func asmVariants() []variant {
	var vs []variant
	for _, name := range []string{"avx2", "avx512"} {
		if v := variantNamed(name); (!v.z || cpuHasAVX512) && cpuHasAsm {
			vs = append(vs, v)
		}
	}
	return vs
}

// BenchmarkFMAPeak: the core's FMA peak, 8-wide (AVX2) and 16-wide
// (AVX-512), two pipes on the CPUs gosr is tuned for.
func BenchmarkFMAPeak(b *testing.B) {
	for _, v := range asmVariants() {
		b.Run(v.name, func(b *testing.B) {
			const rounds = 1 << 16
			for range b.N {
				if v.z {
					fmaPeak512(rounds)
				} else {
					fmaPeak(rounds)
				}
			}
			b.ReportMetric(float64(b.N)*rounds*peakFlops(v)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkFMAPeakCores: the AVX-512 (else AVX2) FMA peak of one
// goroutine, then of GOMAXPROCS goroutines at once, each on its own
// thread, alternating in rounds: the ceiling of intra-op scaling, which
// no split of a peak-bound kernel can pass. "scaling" is the median of
// the rounds' aggregate over one alone.
func BenchmarkFMAPeakCores(b *testing.B) {
	vs := asmVariants()
	if len(vs) == 0 {
		b.Skip("no assembly")
	}
	v := vs[len(vs)-1]
	procs := runtime.GOMAXPROCS(0)
	const rounds = 1 << 20
	var ratios, ones, alls []float64
	for range b.N {
		one := peakOnce(v, rounds)
		var wg sync.WaitGroup
		per := make([]float64, procs)
		for i := range procs {
			wg.Go(func() {
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				per[i] = peakOnce(v, rounds)
			})
		}
		wg.Wait()
		all := 0.0
		for _, p := range per {
			all += p
		}
		ratios, ones, alls = append(ratios, all/one), append(ones, one), append(alls, all)
	}
	b.ReportMetric(stats.Median(ones), "GFLOP/s-one")
	b.ReportMetric(stats.Median(alls), "GFLOP/s-all")
	b.ReportMetric(stats.Median(ratios), "scaling")
}

// BenchmarkGemmPeak: GEMM as a share of the FMA peak at its kernels'
// width, measured in the same run, the figure issue 28 sets at 85% for
// 512x512x512.
func BenchmarkGemmPeak(b *testing.B) {
	r := rand.New(rand.NewSource(5))
	for _, sh := range [][3]int{{512, 512, 512}, {64, 3136, 576}, {256, 784, 1152}} {
		m, n, k := sh[0], sh[1], sh[2]
		for _, v := range asmVariants() {
			b.Run(fmt.Sprintf("%s/%dx%dx%d", v.name, m, n, k), func(b *testing.B) {
				a := newMat(r, m, k, rowMajor)
				bm := newMat(r, k, n, rowMajor)
				c := make([]float32, m*n)
				sc := &Scratch{}
				under(v, func() {
					Gemm(sc, m, n, k, 1, a, bm, nil, 0, c, 0, n)
					// The machine's speed moves between seconds (a shared
					// VM): rounds alternate a peak timing and a share of
					// the products, and %peak is the median of the rounds'
					// ratios, each over the same moment of the machine.
					const rounds = 9
					per := (b.N + rounds - 1) / rounds
					ratios, peaks := make([]float64, 0, rounds), make([]float64, 0, rounds)
					b.ResetTimer()
					for done := 0; done < b.N; done += per {
						b.StopTimer()
						peak := peakOnce(v, 1<<21)
						b.StartTimer()
						t := time.Now()
						for range min(per, b.N-done) {
							Gemm(sc, m, n, k, 1, a, bm, nil, 0, c, 0, n)
						}
						got := 2 * float64(m*n*k) * float64(min(per, b.N-done)) / time.Since(t).Seconds() / 1e9
						ratios, peaks = append(ratios, got/peak), append(peaks, peak)
					}
					got := 2 * float64(m*n*k) * float64(b.N) / b.Elapsed().Seconds() / 1e9
					b.ReportMetric(got, "GFLOP/s")
					b.ReportMetric(stats.Median(peaks), "peak-GFLOP/s")
					b.ReportMetric(100*stats.Median(ratios), "%peak")
				})
			})
		}
	}
}

// BenchmarkKernelPeak: the micro-kernel alone (6x16 AVX2, 6x32
// AVX-512), on panels that stay in L1 (k = KC), as a share of the FMA
// peak at its width measured in the same run: the ceiling for
// BenchmarkGemmPeak, which adds packing, edge tiles and the C tile's
// traffic.
func BenchmarkKernelPeak(b *testing.B) {
	for _, v := range asmVariants() {
		b.Run(v.name, func(b *testing.B) {
			cols := NR
			if v.z {
				cols = 2 * NR
			}
			a := make([]float32, KC*MR)
			bp := make([]float32, KC*cols)
			c := make([]float32, MR*cols)
			for i := range a {
				a[i] = 1e-3
			}
			for i := range bp {
				bp[i] = 1e-3
			}
			peak := measurePeak(v)
			b.ResetTimer()
			for range b.N {
				if v.z {
					kernel6x32AVX512(KC, &a[0], &bp[0], &c[0], cols, 1)
				} else {
					kernel6x16AVX2(KC, &a[0], &bp[0], &c[0], cols, 1)
				}
			}
			got := 2 * float64(MR*cols*KC) * float64(b.N) / b.Elapsed().Seconds() / 1e9
			b.ReportMetric(got, "GFLOP/s")
			b.ReportMetric(100*got/peak, "%peak")
		})
	}
}
