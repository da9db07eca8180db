package gemm

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/ops/parallel"
)

// AddClamp32 under every variant gives, bit for bit, the sum then
// Clamp32 (NaN and infinities among the operands, every length's tail,
// in place over either operand).
func TestAddClamp32(t *testing.T) {
	forEachVariant(t, func(t *testing.T) {
		special := []float32{float32(math.NaN()), float32(math.Copysign(0, -1)), 0, float32(math.Inf(1)), float32(math.Inf(-1)), -1e-30, 6, 6.0000005, -3, 2.5, 1e38}
		for n := 0; n <= 41; n++ {
			a, b := make([]float32, n), make([]float32, n)
			for i := range a {
				a[i] = special[i%len(special)] * float32(1+i/len(special))
				b[i] = special[(3*i+1)%len(special)]
			}
			for _, bd := range [][2]float32{{0, float32(math.Inf(1))}, {0, 6}, {float32(math.Inf(-1)), float32(math.Inf(1))}} {
				want := make([]float32, n)
				for i := range a {
					want[i] = a[i] + b[i]
				}
				Clamp32(want, want, bd[0], bd[1])
				o := make([]float32, n)
				AddClamp32(o, a, b, bd[0], bd[1])
				inA := append([]float32(nil), a...)
				AddClamp32(inA, inA, b, bd[0], bd[1])
				for i := range want {
					require.Equal(t, math.Float32bits(want[i]), math.Float32bits(o[i]), "n %d, element %d (%v + %v) in [%v, %v]", n, i, a[i], b[i], bd[0], bd[1])
					require.Equal(t, math.Float32bits(want[i]), math.Float32bits(inA[i]), "in place, n %d, element %d", n, i)
				}
			}
		}
	})
}

// Clamp32 under every variant: NaN passes, signed zeros stay, bounds
// hold, every length's tail.
func TestClamp32(t *testing.T) {
	forEachVariant(t, func(t *testing.T) {
		special := []float32{float32(math.NaN()), float32(math.Copysign(0, -1)), 0, float32(math.Inf(1)), float32(math.Inf(-1)), -1e-30, 6, 6.0000005, -3, 2.5}
		for n := 0; n <= 41; n++ {
			a := make([]float32, n)
			for i := range a {
				a[i] = special[i%len(special)] * float32(1+i/len(special))
			}
			for _, b := range [][2]float32{{0, float32(math.Inf(1))}, {0, 6}, {-1, 1}} {
				o := make([]float32, n)
				Clamp32(o, a, b[0], b[1])
				for i, x := range a {
					want := x
					if x < b[0] {
						want = b[0]
					}
					if x > b[1] {
						want = b[1]
					}
					require.Equal(t, math.Float32bits(want), math.Float32bits(o[i]), "n %d, element %d (%v) in [%v, %v]", n, i, x, b[0], b[1])
				}
			}
		}
	})
}

// A product with a Clamp epilogue gives, bit for bit, the product
// followed by Clamp32 over C: through every path (gemv, dots, blocked,
// prepacked A, im2col), with beta, and split across a team.
func TestClampEpilogue(t *testing.T) {
	forEachVariant(t, func(t *testing.T) {
		r := rand.New(rand.NewSource(9))
		team := parallel.New(3)
		defer team.Close()
		ep := Clamp{On: true, Lo: 0, Hi: 0.75}
		for _, sh := range [][3]int{{1, 40, 9}, {33, 1, 20}, {4, 5, 6}, {7, 300, 17}, {150, 1100, 300}, {200, 64, 700}} {
			m, n, k := sh[0], sh[1], sh[2]
			for _, split := range []bool{false, true} {
				for _, prepacked := range []bool{false, true} {
					t.Run(fmt.Sprintf("%dx%dx%d/split=%v/prepacked=%v", m, n, k, split, prepacked), func(t *testing.T) {
						a, b := newMat(r, m, k, rowMajor), newMat(r, k, n, rowMajor)
						c0 := make([]float32, m*n)
						for i := range c0 {
							c0[i] = float32(r.NormFloat64())
						}
						sc := &Scratch{}
						if split {
							sc = NewScratch(team)
						}
						want := append([]float32(nil), c0...)
						got := append([]float32(nil), c0...)
						if prepacked {
							pre := PrepackA(m, k, a)
							WithPrepackedA(&Scratch{}, n, pre, b, nil, 1, want, 0, n)
							WithPrepackedAClamp(sc, n, pre, b, nil, 1, got, 0, n, ep)
						} else {
							Gemm(&Scratch{}, m, n, k, 1, a, b, nil, 1, want, 0, n)
							GemmClamp(sc, m, n, k, 1, a, b, nil, 1, got, 0, n, ep)
						}
						Clamp32(want, want, ep.Lo, ep.Hi)
						for i := range want {
							if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
								require.Failf(t, "differs", "element %d: %v, want %v", i, got[i], want[i])
							}
						}
					})
				}
			}
		}
		// im2col (a convolution's B) with the epilogue.
		for _, cc := range convCases() {
			cv, _, k, n := cc.src(r)
			m := cc.m
			a := newMat(r, m, k, rowMajor)
			want, got := make([]float32, m*n), make([]float32, m*n)
			Gemm(&Scratch{}, m, n, k, 1, a, Mat{}, cv, 0, want, 0, n)
			GemmClamp(&Scratch{}, m, n, k, 1, a, Mat{}, cv, 0, got, 0, n, ep)
			Clamp32(want, want, ep.Lo, ep.Hi)
			require.Equal(t, want, got, cc.name)
		}
	})
}

// A product with a bias epilogue (beta 0: C's NaNs must not come
// through, its first k block stores) gives, bit for bit, the product
// followed by the bias added, a residual added (where there is one) and
// the clamp, through every path (gemv, dots, in place, blocked,
// prepacked A, im2col, the micro-kernel's own epilogue), split or not.
func TestBiasEpilogue(t *testing.T) {
	forEachVariant(t, func(t *testing.T) {
		r := rand.New(rand.NewSource(10))
		team := parallel.New(3)
		defer team.Close()
		for _, sh := range [][3]int{{1, 40, 9}, {33, 1, 20}, {4, 5, 6}, {7, 300, 17}, {150, 1100, 300}, {200, 64, 700}, {9, 20, 600}} {
			m, n, k := sh[0], sh[1], sh[2]
			bias := make([]float32, 2*max(m, n)+1)
			for i := range bias {
				bias[i] = float32(r.NormFloat64())
			}
			for _, clamp := range []Clamp{{}, {On: true, Lo: 0, Hi: 0.75}} {
				for _, split := range []bool{false, true} {
					for _, cols := range []bool{false, true} {
						for _, pr := range [][2]bool{{false, false}, {true, false}, {true, true}, {false, true}} {
							prepacked, withRes := pr[0], pr[1]
							name := fmt.Sprintf("%dx%dx%d/clamp=%v/split=%v/prepacked=%v/cols=%v/res=%v", m, n, k, clamp.On, split, prepacked, cols, withRes)
							a, b := newMat(r, m, k, rowMajor), newMat(r, k, n, rowMajor)
							sc := &Scratch{}
							if split {
								sc = NewScratch(team)
							}
							want := make([]float32, m*n)
							got := make([]float32, m*n)
							for i := range got {
								got[i] = float32(math.NaN())
							}
							ep := Epilogue{Clamp: clamp, Bias: bias, BiasOff: 1, BiasStride: 2, BiasCols: cols}
							if cols {
								ep.BiasStride = 1 // the contiguous (axpy) case
							}
							var res []float32
							if withRes {
								// Laid out as C, in rows 3 floats longer.
								res = make([]float32, 2+m*(n+3))
								for i := range res {
									res[i] = float32(r.NormFloat64())
								}
								ep.Res, ep.ResOff, ep.ResLd = res, 2, n+3
							}
							switch {
							case prepacked && cols:
								pre := PrepackB(n, k, b)
								WithPrepackedB(&Scratch{}, m, 1, a, pre, 0, want, 0, n)
								WithPrepackedBEpilogue(sc, m, 1, a, pre, 0, got, 0, n, ep)
							case prepacked:
								pre := PrepackA(m, k, a)
								WithPrepackedA(&Scratch{}, n, pre, b, nil, 0, want, 0, n)
								WithPrepackedAEpilogue(sc, n, pre, b, nil, 0, got, 0, n, ep)
							default:
								Gemm(&Scratch{}, m, n, k, 1, a, b, nil, 0, want, 0, n)
								GemmEpilogue(sc, m, n, k, 1, a, b, nil, 0, got, 0, n, ep)
							}
							for i := range want {
								if cols {
									want[i] += bias[1+i%n]
								} else {
									want[i] += bias[1+i/n*2]
								}
								if withRes {
									want[i] += res[2+i/n*(n+3)+i%n]
								}
							}
							if clamp.On {
								Clamp32(want, want, clamp.Lo, clamp.Hi)
							}
							for i := range want {
								if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
									require.Failf(t, "differs", "%s: element %d: %v, want %v", name, i, got[i], want[i])
								}
							}
						}
					}
				}
			}
		}
	})
}
