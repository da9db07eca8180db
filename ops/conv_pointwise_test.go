package ops

import (
	"fmt"
	"math"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/gosr/gosr/ops/gemm"
	"github.com/stretchr/testify/require"
)

// pointwiseGeom is a 1x1 convolution of n images, c -> o channels, over
// planes of plane positions (one row), input planes sC floats apart.
func pointwiseGeom(n, c, o, plane, sC int) convGeom {
	return convGeom{n: n, c: c, h: plane, w: 1, sN: c * sC, sC: sC, sH: 1, sW: 1, o: o,
		kh: 1, kw: 1, strH: 1, strW: 1, dilH: 1, dilW: 1, groups: 1, oh: plane, ow: 1}
}

// convPointwiseRows against a float64 product: 8 to 64 output channels,
// 1 to 300 input channels (k blocks smaller than a block of positions),
// plane sizes that fill 32-position chunks and ones that leave masked
// tails of 1 to 31 (and a plane of one chunk), batches, input planes
// strided apart, a bias or none, a clamp or none, a residual, an
// activation; nothing past the output written; a team of two gives the
// same bits.
func TestPointwiseRows(t *testing.T) {
	if !gemm.HasRows() {
		t.Skip("no AVX-512 on this CPU or build")
	}
	type pwCase struct{ n, c, o, plane, gap int }
	cases := []pwCase{
		{1, 16, 16, 12544, 0}, {1, 3, 8, 33, 0}, {2, 24, 72, 196, 5}, {1, 1, 8, 32, 0}, {1, 300, 16, 49, 0},
		{1, 64, 24, 1000, 3}, {2, 7, 40, 47, 0}, {1, 2048, 8, 40, 0},
		// Split by output channels across a team (see [Pointwise splits]).
		{1, 256, 64, 196, 3}, {2, 160, 72, 49, 0},
	}
	r := rand.New(rand.NewSource(23))
	team := blockedScratches(t)[len(blockedScratches(t))-1]
	for _, c := range cases {
		for _, v := range []struct {
			bias, res, act bool
			ep             gemm.Clamp
		}{{false, false, false, gemm.Clamp{}}, {true, false, false, gemm.Clamp{On: true, Lo: 0, Hi: 6}}, {true, true, true, gemm.Clamp{On: true, Lo: -1, Hi: 1}}, {false, true, false, gemm.Clamp{}}} {
			name := fmt.Sprintf("%+v/bias%v/res%v/act%v/clamp%v", c, v.bias, v.res, v.act, v.ep.On)
			sC := c.plane + c.gap
			g := pointwiseGeom(c.n, c.c, c.o, c.plane, sC)
			require.True(t, convPointwiseRowsFits(&g), name)
			x, w := normals(r, 2+c.n*g.sN), normals(r, 1+c.o*c.c)
			var bias, res []float32
			if v.bias {
				bias = normals(r, 2*c.o)
			}
			out := c.n * c.o * c.plane
			if v.res {
				res = normals(r, 3+out)
			}
			act := testAct(v.act)
			got := make([]float32, out+1)
			got[out] = 9
			convPointwiseRows(nil, &g, x, 2, w, 1, bias, 1, 2, res, 3, got[:out], v.ep, act)
			require.Equal(t, float32(9), got[out], "%s: wrote past the output", name)
			if team != nil {
				// Split across a team of two: the same bits.
				split := make([]float32, out)
				convPointwiseRows(team, &g, x, 2, w, 1, bias, 1, 2, res, 3, split, v.ep, act)
				require.Equal(t, got[:out], split, "%s: a team of two differs", name)
			}
			for nn := 0; nn < c.n; nn++ {
				for oc := 0; oc < c.o; oc++ {
					for j := 0; j < c.plane; j++ {
						ref, mag := 0.0, 0.0
						if v.bias {
							ref = float64(bias[1+2*oc])
							mag = math.Abs(ref)
						}
						for ci := 0; ci < c.c; ci++ {
							p := float64(w[1+oc*c.c+ci]) * float64(x[2+nn*g.sN+ci*sC+j])
							ref += p
							mag += math.Abs(p)
						}
						idx := (nn*c.o+oc)*c.plane + j
						if v.res {
							ref += float64(res[3+idx])
						}
						if v.ep.On {
							ref = math.Min(math.Max(ref, float64(v.ep.Lo)), float64(v.ep.Hi))
						}
						if act != nil {
							ref = 2*ref + 1
						}
						require.InDelta(t, ref, float64(got[idx]), 1e-5*(mag+1)*3, "%s: (%d, %d, %d)", name, nn, oc, j)
					}
				}
			}
		}
	}
	requireSplit(t, team)
}

// BenchmarkPointwiseRows: convPointwiseRows beside gemm's packed path
// (a prepacked weight, the bias and a relu6 clamp in the epilogue) on
// mobilenet_v3's, efficientnet's and resnet50's pointwise shapes.
func BenchmarkPointwiseRows(b *testing.B) {
	if !useAVX512 {
		b.Skip("no AVX-512 on this CPU or build")
	}
	r := rand.New(rand.NewSource(1))
	for _, sh := range [][3]int{{16, 16, 12544}, {16, 64, 12544}, {64, 24, 3136}, {24, 72, 3136}, {256, 64, 3136}, {512, 128, 784}, {1024, 256, 196}, {960, 160, 49}, {512, 1000, 169}} {
		c, o, n := sh[0], sh[1], sh[2]
		g := pointwiseGeom(1, c, o, n, n)
		x, w, out, bias := normals(r, c*n), normals(r, o*c), make([]float32, o*n), normals(r, o)
		ep := gemm.Clamp{On: true, Lo: 0, Hi: 6}
		flops := 2 * float64(c*o*n)
		b.Run(fmt.Sprintf("rows/%dto%d@%d", c, o, n), func(b *testing.B) {
			for range b.N {
				convPointwiseRows(nil, &g, x, 0, w, 0, bias, 0, 1, nil, 0, out, ep, nil)
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		pa := gemm.PrepackA(o, c, gemm.Mat{Data: w, RS: c, CS: 1})
		b.Run(fmt.Sprintf("gemm/%dto%d@%d", c, o, n), func(b *testing.B) {
			for range b.N {
				gemm.WithPrepackedAEpilogue(nil, n, pa, gemm.Mat{Data: x, RS: n, CS: 1}, nil, 0, out, 0, n, gemm.Epilogue{Clamp: ep, Bias: bias, BiasStride: 1})
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkPointwiseRowsEvicted times resnet50's pointwise convolutions
// (with the residual where the model has one) after MB megabytes of
// other memory were written, as a network's other layers do between a
// tensor's write and its reads: the median of single runs, beside
// BenchmarkPointwiseRows' figures in cache. See docs/benchmarks.md.
func BenchmarkPointwiseRowsEvicted(b *testing.B) {
	if !useAVX512 {
		b.Skip("no AVX-512 on this CPU or build")
	}
	r := rand.New(rand.NewSource(1))
	other := make([]float32, 64<<20/4)
	for _, sh := range []struct {
		c, o, n int
		res     bool
	}{{64, 256, 3136, true}, {256, 64, 3136, false}, {256, 1024, 196, true}, {1024, 256, 196, false}} {
		g := pointwiseGeom(1, sh.c, sh.o, sh.n, sh.n)
		x, w, out, bias := normals(r, sh.c*sh.n), normals(r, sh.o*sh.c), make([]float32, sh.o*sh.n), normals(r, sh.o)
		var res []float32
		if sh.res {
			res = normals(r, sh.o*sh.n)
		}
		ep := gemm.Clamp{On: true, Lo: 0, Hi: 6}
		for _, mb := range []int{0, 8, 16, 32, 64} {
			b.Run(fmt.Sprintf("%dto%d@%d/res=%v/after%dMB", sh.c, sh.o, sh.n, sh.res, mb), func(b *testing.B) {
				benchEvicted(b, other[:mb<<20/4], func() {
					convPointwiseRows(nil, &g, x, 0, w, 0, bias, 0, 1, res, 0, out, ep, nil)
				})
			})
		}
	}
}

// benchEvicted times b.N single calls of run, each after a write to
// every cache line of other (the memory a network's other layers write
// between two runs of a node), and reports their median in µs.
func benchEvicted(b *testing.B, other []float32, run func()) {
	ts := make([]time.Duration, 0, b.N)
	for range b.N {
		for i := 0; i < len(other); i += 16 {
			other[i]++
		}
		t := time.Now()
		run()
		ts = append(ts, time.Since(t))
	}
	slices.Sort(ts)
	b.ReportMetric(float64(ts[len(ts)/2].Nanoseconds())/1e3, "median-µs")
}
