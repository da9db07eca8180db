package gemm

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// See [AVX-512 tiles]: walking B panels in pairs, over the 6x32
// AVX-512 kernels or two 6x16 ones, must give the 6x16 kernels'
// results bit for bit, epilogues and wide convolutions included.

// variantNamed returns the variant called name.
func variantNamed(name string) variant {
	for _, v := range variants {
		if v.name == name {
			return v
		}
	}
	panic("no variant " + name)
}

// under runs f with variant v forced, reporting false where this CPU
// or build cannot run it.
func under(v variant, f func()) bool {
	if (v.asm && !cpuHasAsm) || (v.z && !cpuHasAVX512) {
		return false
	}
	defer v.force()()
	f()
	return true
}

// pairShapes: full tiles in pairs, an odd panel left over, a partial
// last panel, edge rows, several k and n blocks.
var pairShapes = [][3]int{
	{6, 32, 1}, {6, 32, 5}, {12, 48, 17}, {7, 33, 9}, {MC + 5, 5*NR + 3, 40},
	{13, 64, KC + 3}, {MR * 3, NC + 2*NR, 11}, {64, 96, 300}, {2*MC + 8, 4*NR + 5, KC + 9},
}

func TestPairsBitForBit(t *testing.T) {
	for _, pair := range [][2]string{{"avx2", "avx2/pairs"}, {"avx2", "avx512"}, {"avx2/packedA", "avx512/packedA"}, {"go", "go/pairs"}} {
		base, other := variantNamed(pair[0]), variantNamed(pair[1])
		t.Run(pair[1], func(t *testing.T) {
			r := rand.New(rand.NewSource(21))
			for _, sh := range pairShapes {
				m, n, k := sh[0], sh[1], sh[2]
				a := newMat(r, m, k, rowMajor)
				b := newMat(r, k, n, rowMajor)
				ldc := n + 3
				c0 := normals32(r, m*ldc)
				res := normals32(r, m*ldc)
				bias := normals32(r, m)
				for ei, ep := range []Epilogue{
					{},
					{Bias: bias, BiasStride: 1},
					{Clamp: Clamp{On: true, Lo: 0, Hi: 6}, Bias: bias, BiasStride: 1, Res: res, ResLd: ldc},
					{Clamp: Clamp{On: true, Lo: -0.5, Hi: 0.5}, Res: res, ResLd: ldc},
				} {
					for _, beta := range []float32{0, 1} {
						run := func() []float32 {
							c := append([]float32(nil), c0...)
							GemmEpilogue(&Scratch{}, m, n, k, 1, a, b, nil, beta, c, 0, ldc, ep)
							return c
						}
						var want, got []float32
						if !under(base, func() { want = run() }) || !under(other, func() { got = run() }) {
							t.Skip("variant not available on this CPU or build")
						}
						require.Equal(t, want, got, "%dx%dx%d epilogue %d beta %g", m, n, k, ei, beta)
					}
				}
				pre := PrepackB(n, k, b)
				run := func() []float32 {
					c := append([]float32(nil), c0...)
					WithPrepackedB(nil, m, 1, a, pre, 1, c, 0, ldc)
					return c
				}
				var want, got []float32
				under(base, func() { want = run() })
				under(other, func() { got = run() })
				require.Equal(t, want, got, "%dx%dx%d prepacked B", m, n, k)
			}
			for _, wc := range wideCases() {
				ru := wc.build(rand.New(rand.NewSource(8)))
				var want, got []float32
				under(base, func() { want = ru.run(t, &Scratch{}) })
				under(other, func() { got = ru.run(t, &Scratch{}) })
				require.Equal(t, want, got, "wide %s", wc.name)
			}
		})
	}
}

// TestKernel32 checks the 6x32 kernels alone against two 6x16 kernels,
// bit for bit, over k around the unrolled loop's steps, add or not, and
// a row stride wider than the tile.
func TestKernel32(t *testing.T) {
	if !cpuHasAVX512 {
		t.Skip("no AVX-512 on this CPU or build")
	}
	r := rand.New(rand.NewSource(4))
	for _, k := range []int{1, 2, 3, 4, 5, 7, 8, 9, 31, KC} {
		for _, add := range []bool{false, true} {
			for _, ldc := range []int{2 * NR, 2*NR + 5} {
				name := fmt.Sprintf("k%d/add%v/ldc%d", k, add, ldc)
				a := normals32(r, k*MR)
				b := normals32(r, 2*k*NR)
				c0 := normals32(r, MR*ldc)
				want := append([]float32(nil), c0...)
				kernel(k, a, b[:k*NR], want, ldc, add)
				kernel(k, a, b[k*NR:], want[NR:], ldc, add)
				got := append([]float32(nil), c0...)
				kernel32Asm(k, a, b, got, ldc, add)
				require.Equal(t, want, got, "kernel32 %s", name)

				bias := (*[MR]float32)(normals32(r, MR))
				res := normals32(r, MR*ldc)
				for _, rb := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
					var bp *[MR]float32
					var rp []float32
					if rb[0] {
						bp = bias
					}
					if rb[1] {
						rp = res
					}
					want := append([]float32(nil), c0...)
					kernelEpi(k, a, b[:k*NR], want, ldc, add, bp, rp, ldc, -1, 1.5)
					var rp2 []float32
					if rp != nil {
						rp2 = rp[NR:]
					}
					kernelEpi(k, a, b[k*NR:], want[NR:], ldc, add, bp, rp2, ldc, -1, 1.5)
					got := append([]float32(nil), c0...)
					kernelEpi32(k, a, b, got, ldc, add, bp, rp, ldc, -1, 1.5)
					require.Equal(t, want, got, "kernelEpi32 %s bias %v res %v", name, rb[0], rb[1])
				}

				// Wide: B rows at scattered offsets of one buffer.
				src := normals32(r, 4096)
				offs := make([]int, k)
				maxOff := 0
				for q := range offs {
					offs[q] = r.Intn(4096 - 2*NR - 8)
					maxOff = max(maxOff, offs[q])
				}
				pk := &packBufs{}
				want = append([]float32(nil), c0...)
				kernelWide(pk, k, a, src, 3, maxOff, offs, want, ldc, add)
				kernelWide(pk, k, a, src, 3+NR, maxOff, offs, want[NR:], ldc, add)
				got = append([]float32(nil), c0...)
				kernelWide32(pk, k, a, src, 3, maxOff, offs, got, ldc, add)
				require.Equal(t, want, got, "kernelWide32 %s", name)
			}
		}
	}
}
