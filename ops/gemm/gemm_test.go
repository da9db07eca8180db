package gemm

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// refGemm is a float64 reference for C = alpha*A*B + beta*C.
func refGemm(m, n, k int, alpha float32, a, b Mat, beta float32, c []float32, ldc int) []float64 {
	out := make([]float64, m*n)
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s float64
			for q := 0; q < k; q++ {
				s += float64(a.at(i, q)) * float64(b.at(q, j))
			}
			v := float64(alpha) * s
			if beta != 0 {
				v += float64(beta) * float64(c[i*ldc+j])
			}
			out[i*n+j] = v
		}
	}
	return out
}

func randMat(r *rand.Rand, rows, cols int, trans bool) Mat {
	pad := 3
	data := make([]float32, pad+rows*cols+5)
	for i := range data {
		data[i] = float32(r.NormFloat64())
	}
	if trans { // column-major storage
		return Mat{data, pad, 1, rows}
	}
	return Mat{data, pad, cols, 1}
}

func TestGemmShapes(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	shapes := [][3]int{
		{1, 1, 1}, {1, 64, 64}, {64, 1, 64}, {7, 13, 5}, {6, 16, 3}, {13, 33, 300},
		{73, 17, 257}, {1, 9, 13}, {11, 1, 21}, {5, 4100, 9}, {64, 70, 576}, {2, 3, 0}, {1, 9, 1000},
		// Blocks macroDirect takes: a few rows, or one or two panels.
		{4, 32, 13}, {4, 16, 32}, {3, 40, 7}, {9, 32, 300}, {30, 20, 17}, {2, 2, 600},
		// And dots: tiny products of a matrix and a transposed one.
		{4, 4, 16}, {5, 3, 9}, {8, 8, 1}, {7, 9, 33},
	}
	for _, mode := range []struct{ asm, noDirect bool }{{false, false}, {false, true}, {true, false}, {true, true}} {
		asm := mode.asm
		if asm && !useAsm {
			continue
		}
		saved := useAsm
		useAsm = asm
		noDirect = mode.noDirect
		for _, sh := range shapes {
			m, n, k := sh[0], sh[1], sh[2]
			for _, ta := range []bool{false, true} {
				for _, tb := range []bool{false, true} {
					for _, ab := range [][2]float32{{1, 0}, {0.5, 1}, {-2, 0.25}} {
						a := randMat(r, m, k, ta)
						b := randMat(r, k, n, tb)
						ldc := n + 2
						c := make([]float32, m*ldc)
						for i := range c {
							c[i] = float32(r.NormFloat64())
						}
						if ab[1] == 0 {
							c[0] = float32(math.NaN()) // beta 0 must ignore it
						}
						want := refGemm(m, n, k, ab[0], a, b, ab[1], c, ldc)
						Gemm(nil, m, n, k, ab[0], a, b, nil, ab[1], c, 0, ldc)
						for i := 0; i < m; i++ {
							for j := 0; j < n; j++ {
								require.InDelta(t, want[i*n+j], c[i*ldc+j], 1e-3*(1+math.Sqrt(float64(k))),
									"asm=%v noDirect=%v m=%d n=%d k=%d ta=%v tb=%v at (%d,%d)", asm, mode.noDirect, m, n, k, ta, tb, i, j)
							}
						}
					}
				}
			}
		}
		useAsm = saved
		noDirect = false
	}
}

func TestGemmDotAxpy(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	for _, n := range []int{0, 1, 7, 8, 31, 32, 33, 64, 100} {
		x := make([]float32, n)
		y := make([]float32, n)
		var want float64
		for i := range x {
			x[i], y[i] = float32(r.NormFloat64()), float32(r.NormFloat64())
			want += float64(x[i]) * float64(y[i])
		}
		require.InDelta(t, want, dot(x, y), 1e-4*float64(n+1))
		require.InDelta(t, want, dotGo(x, y), 1e-4*float64(n+1))
		y2 := append([]float32(nil), y...)
		Axpy(1.5, x, y2)
		for i := range y2 {
			require.InDelta(t, float64(y[i])+1.5*float64(x[i]), y2[i], 1e-5)
		}
	}
}

func BenchmarkGemm(b *testing.B) {
	r := rand.New(rand.NewSource(3))
	for _, sh := range [][3]int{{64, 3136, 576}, {32, 512, 512}, {1, 512, 512}, {1, 64, 64}, {4, 32, 32}, {4, 512, 512}} {
		m, n, k := sh[0], sh[1], sh[2]
		for _, asm := range []bool{false, true} {
			name := "go"
			if asm {
				name = "asm"
			}
			b.Run(name+"/"+itoa(m)+"x"+itoa(n)+"x"+itoa(k), func(b *testing.B) {
				saved := useAsm
				useAsm = asm && saved
				defer func() { useAsm = saved }()
				a := randMat(r, m, k, false)
				bm := randMat(r, k, n, false)
				if m == 1 {
					bm = randMat(r, k, n, true) // linear weight layout
				}
				c := make([]float32, m*n)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					Gemm(nil, m, n, k, 1, a, bm, nil, 0, c, 0, n)
				}
				b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}

func itoa(v int) string {
	if v == 0 {
		return "0"
	}
	s := ""
	for ; v > 0; v /= 10 {
		s = string(rune('0'+v%10)) + s
	}
	return s
}

func TestGemmPrepacked(t *testing.T) {
	// Several (jc, pc) blocks: n > NC, k > KC.
	r := rand.New(rand.NewSource(4))
	m, n, k := 7, NC+77, KC+45
	for _, tb := range []bool{false, true} {
		a := randMat(r, m, k, false)
		b := randMat(r, k, n, tb)
		c := make([]float32, m*n)
		for i := range c {
			c[i] = float32(r.NormFloat64())
		}
		want := refGemm(m, n, k, 2, a, b, 0.5, c, n)
		WithPrepackedB(nil, m, 2, a, PrepackB(n, k, b), 0.5, c, 0, n)
		for i := range want {
			require.InDelta(t, want[i], c[i], 1e-3*(1+math.Sqrt(float64(k))), "tb=%v element %d", tb, i)
		}
	}
}
