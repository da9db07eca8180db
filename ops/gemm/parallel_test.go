package gemm

import (
	"math"
	"math/rand"
	"runtime"
	"testing"

	"github.com/gosr/gosr/ops/parallel"
	"github.com/stretchr/testify/require"
)

// withTeam runs f with a team of n goroutines (GOMAXPROCS raised to n
// for the test, since teams are capped at it) and products of any size
// split across it.
func withTeam(t *testing.T, n int, f func(sc *Scratch)) {
	t.Helper()
	saved := runtime.GOMAXPROCS(max(n, runtime.GOMAXPROCS(0)))
	savedMin := parMinPart
	parMinPart = 1
	team := parallel.New(n)
	t.Cleanup(func() {
		team.Close()
		parMinPart = savedMin
		runtime.GOMAXPROCS(saved)
	})
	require.Equal(t, n, team.Size())
	f(NewScratch(team))
}

// requireSameBits fails unless got and want hold the same float32 bit
// patterns (NaN included).
func requireSameBits(t *testing.T, want, got []float32, what string) {
	t.Helper()
	for i := range want {
		if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
			require.Failf(t, "split result differs", "%s: element %d: one goroutine %v, split %v", what, i, want[i], got[i])
		}
	}
}

// splitCounts tallies the splits a test made, to show it exercised both.
type splitCounts struct{ alongN, alongM int }

func (s *splitCounts) add(sc *Scratch) {
	if sc.par.last.parts < 2 {
		return
	}
	if sc.par.last.alongN {
		s.alongN++
	} else {
		s.alongM++
	}
	sc.par.last.parts = 0
}

// TestSplitMatchesOneGoroutine runs the conformance table through every
// entry point with teams of 2, 3 and 4 and every product split, under
// every variant: splitting along rows or columns on the blocking grid
// leaves each element's summation order alone, so C must come out bit
// for bit as one goroutine computes it.
func TestSplitMatchesOneGoroutine(t *testing.T) {
	cases := append(gemmCases(),
		gemmCase{MC + 7, NC + 37, KC + 5, rowMajor, rowMajor, 1, 0},
		gemmCase{3*MC + 1, 40, 70, rowMajor, colMajor, 1, 1},
		gemmCase{200, 3*NR + 1, 20, colMajor, rowMajor, 0.5, 0},
		gemmCase{2*MC + 5, 2*NC + 3, 9, rowMajor, rowPadded, 1, 0.25},
	)
	for _, size := range []int{2, 3, 4} {
		t.Run(string(rune('0'+size)), func(t *testing.T) {
			withTeam(t, size, func(par *Scratch) {
				forEachVariant(t, func(t *testing.T) {
					r := rand.New(rand.NewSource(5))
					one := &Scratch{}
					var counts splitCounts
					for _, tc := range cases {
						a, b, ldc, orig := splitOperands(r, tc)
						preB := PrepackB(tc.n, tc.k, b)
						preA := PrepackA(tc.m, tc.k, a)
						calls := []struct {
							name string
							f    func(sc *Scratch, c []float32)
						}{
							{"Gemm", func(sc *Scratch, c []float32) { Gemm(sc, tc.m, tc.n, tc.k, tc.alpha, a, b, nil, tc.beta, c, 0, ldc) }},
							{"WithPrepackedB", func(sc *Scratch, c []float32) { WithPrepackedB(sc, tc.m, tc.alpha, a, preB, tc.beta, c, 0, ldc) }},
							{"WithPrepackedA", func(sc *Scratch, c []float32) { WithPrepackedA(sc, tc.n, preA, b, nil, tc.beta, c, 0, ldc) }},
							{"Cols", func(sc *Scratch, c []float32) {
								for j0 := 0; j0 < tc.n; j0 += NR + 1 {
									bt := b
									bt.Off += j0 * b.CS
									Cols(sc, tc.m, min(NR+1, tc.n-j0), tc.n, tc.k, a, bt, tc.beta, c, j0, ldc)
								}
							}},
						}
						for _, call := range calls {
							want := append([]float32(nil), orig...)
							got := append([]float32(nil), orig...)
							call.f(one, want)
							call.f(par, got)
							counts.add(par)
							requireSameBits(t, want, got, tc.String()+"/"+call.name)
						}
					}
					require.NotZero(t, counts.alongN, "no product was split along its columns")
					require.NotZero(t, counts.alongM, "no product was split along its rows")
				})
			})
		})
	}
}

// splitOperands draws tc's A and B and a C (rows of ldc, two floats
// wider than C, and one float past its end) for a split test to fill
// from, whose padding must come out as it went in.
func splitOperands(r *rand.Rand, tc gemmCase) (a, b Mat, ldc int, orig []float32) {
	a, b = newMat(r, tc.m, tc.k, tc.la), newMat(r, tc.k, tc.n, tc.lb)
	ldc = tc.n + 2
	orig = make([]float32, tc.m*ldc+1)
	for i := range orig {
		orig[i] = float32(r.NormFloat64())
	}
	return a, b, ldc, orig
}

// TestSplitConvMatchesOneGoroutine does the same for the implicit
// im2col sources (with more output channels, so that rows split too).
func TestSplitConvMatchesOneGoroutine(t *testing.T) {
	withTeam(t, 3, func(par *Scratch) {
		forEachVariant(t, func(t *testing.T) {
			r := rand.New(rand.NewSource(6))
			one := &Scratch{}
			var counts splitCounts
			for _, cc := range convCases() {
				for _, m := range []int{cc.m, 2*MC + 5} {
					cv, _, k, n := cc.src(r)
					a := newMat(r, m, k, rowMajor)
					preA := PrepackA(m, k, a)
					orig := make([]float32, m*n)
					for i := range orig {
						orig[i] = float32(r.NormFloat64())
					}
					for _, packed := range []bool{false, true} {
						want := append([]float32(nil), orig...)
						got := append([]float32(nil), orig...)
						run := func(sc *Scratch, c []float32) {
							if packed {
								WithPrepackedA(sc, n, preA, Mat{}, cv, cc.beta, c, 0, n)
							} else {
								Gemm(sc, m, n, k, cc.alpha, a, Mat{}, cv, cc.beta, c, 0, n)
							}
						}
						run(one, want)
						run(par, got)
						counts.add(par)
						requireSameBits(t, want, got, cc.name)
					}
				}
			}
			require.NotZero(t, counts.alongN, "no convolution was split along its columns")
			require.NotZero(t, counts.alongM, "no convolution was split along its rows")
		})
	})
}

// TestSplitGemvMatchesOneGoroutine: matrix-vector products (one row
// or one column of C), split by ranges of A's rows, come out bit for
// bit as one goroutine computes them, for every layout gemv takes
// (rows in place, four rows a dot, columns by axpy, strided), with
// rows and depths off the kernels' multiples.
func TestSplitGemvMatchesOneGoroutine(t *testing.T) {
	cases := []gemmCase{
		{1, 1000, 2048, rowMajor, colMajor, 1, 0}, // a linear layer at batch 1: w^T in place
		{1, 203, 77, rowMajor, colMajor, 0.5, 1},
		{1, 130, 50, rowMajor, colPadded, 1, 0},
		{1, 97, 40, colPadded, rowMajor, 1, 0.5}, // axpy over k
		{333, 1, 129, rowMajor, rowMajor, 1, 0},
		{75, 1, 31, rowPadded, colMajor, 2, 0},
		{64, 1, 20, colMajor, rowMajor, 1, 1},
	}
	for _, size := range []int{2, 3} {
		withTeam(t, size, func(par *Scratch) {
			forEachVariant(t, func(t *testing.T) {
				r := rand.New(rand.NewSource(8))
				one := &Scratch{}
				for _, tc := range cases {
					a, b, ldc, orig := splitOperands(r, tc)
					want := append([]float32(nil), orig...)
					got := append([]float32(nil), orig...)
					Gemm(one, tc.m, tc.n, tc.k, tc.alpha, a, b, nil, tc.beta, want, 0, ldc)
					before := par.OpSplits()
					Gemm(par, tc.m, tc.n, tc.k, tc.alpha, a, b, nil, tc.beta, got, 0, ldc)
					require.Equal(t, before+1, par.OpSplits(), "%s: the gemv was not split", tc)
					requireSameBits(t, want, got, tc.String())
				}
			})
		})
	}
}

// A split product allocates nothing once the helpers' scratches hold
// their buffers.
func TestSplitSteadyAllocs(t *testing.T) {
	withTeam(t, 2, func(sc *Scratch) {
		r := rand.New(rand.NewSource(7))
		a := newMat(r, 70, 300, rowMajor)
		b := newMat(r, 300, 90, colMajor)
		cv, _, k, n := convCases()[0].src(r)
		w := newMat(r, 80, k, rowMajor)
		preA := PrepackA(80, k, w)
		c := make([]float32, 80*max(90, n))
		x := newMat(r, 1, 90, rowMajor)
		run := func() {
			Gemm(sc, 1, 300, 90, 1, x, b.T(), nil, 0, c, 0, 300) // a gemv, split
			Gemm(sc, 70, 90, 300, 0.5, a, b, nil, 0, c, 0, 90)
			Gemm(sc, 80, n, k, 1, w, Mat{}, cv, 0, c, 0, n)
			WithPrepackedA(sc, n, preA, Mat{}, cv, 1, c, 0, n)
		}
		run()
		require.Equal(t, 2, sc.par.last.parts, "the products were not split")
		require.Zero(t, testing.AllocsPerRun(10, run))
	})
}

// BenchmarkGemmThreads times a 512^3 product and a resnet-sized
// convolution with teams of 1 and 2 (GOMAXPROCS permitting).
func BenchmarkGemmThreads(b *testing.B) {
	r := rand.New(rand.NewSource(8))
	const s = 512
	a := newMat(r, s, s, rowMajor)
	bm := newMat(r, s, s, rowMajor)
	c := make([]float32, s*s)
	cc := convCase{c: 64, d: 1, h: 56, w: 56, kd: 1, kh: 3, kw: 3, str: [3]int{1, 1, 1}, pad: [3]int{0, 1, 1}, dil: [3]int{1, 1, 1}, m: 64}
	cv, _, k, n := cc.src(r)
	w := newMat(r, 64, k, rowMajor)
	preA := PrepackA(64, k, w)
	out := make([]float32, 64*n)
	for _, threads := range []int{1, 2} {
		team := parallel.New(threads)
		sc := NewScratch(team)
		b.Run("512/threads="+string(rune('0'+team.Size())), func(b *testing.B) {
			for range b.N {
				Gemm(sc, s, s, s, 1, a, bm, nil, 0, c, 0, s)
			}
			b.ReportMetric(2*s*s*s*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		b.Run("conv64x56x56/threads="+string(rune('0'+team.Size())), func(b *testing.B) {
			for range b.N {
				WithPrepackedA(sc, n, preA, Mat{}, cv, 0, out, 0, n)
			}
			b.ReportMetric(2*64*float64(n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		team.Close()
	}
}
