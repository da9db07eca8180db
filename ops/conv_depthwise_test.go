package ops

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/gosr/gosr/ops/gemm"
	"github.com/stretchr/testify/require"
)

// convDepthwiseRows against a float64 direct convolution, assembly and
// Go, at strides 1 to 3 along W and 1 or 2 along H, kernels 1 to 7,
// padded or not, dilated, odd and even sizes, planes of several blocks
// and of one row, with a bias and a clamp; at stride 1 under the
// assembly also against convDepthwiseOne (an axpy per tap and row: the
// same fused sums in the same order, so the same bits).
func TestDepthwiseRows(t *testing.T) {
	type dwCase struct{ h, w, k, pad, strH, strW, dilH, dilW int }
	cases := []dwCase{
		{112, 112, 3, 1, 1, 1, 1, 1}, {57, 56, 5, 2, 1, 1, 1, 1}, {400, 9, 3, 1, 1, 1, 1, 1}, {300, 7, 3, 1, 1, 1, 1, 1},
		{64, 64, 3, 2, 1, 1, 2, 2}, {33, 70, 7, 3, 1, 1, 1, 1}, {90, 40, 1, 0, 1, 1, 1, 1}, {7, 7, 3, 1, 1, 1, 1, 1},
		{1, 30, 3, 1, 1, 1, 1, 1}, {112, 112, 3, 1, 2, 2, 1, 1}, {57, 57, 5, 2, 2, 2, 1, 1}, {20, 9, 3, 0, 2, 2, 1, 1},
		{30, 31, 3, 1, 1, 2, 1, 1}, {16, 16, 5, 2, 2, 2, 2, 1}, {7, 7, 3, 1, 2, 2, 1, 1}, {19, 23, 3, 1, 3, 3, 1, 2},
		{14, 14, 3, 0, 1, 1, 1, 1},
	}
	for _, asm := range []bool{false, true} {
		if asm && !useAVX2 {
			continue
		}
		saved := useAVX2
		useAVX2 = asm
		r := rand.New(rand.NewSource(8))
		for _, c := range cases {
			for _, ep := range []gemm.Clamp{{}, {On: true, Lo: -0.5, Hi: 0.75}} {
				g := convGeom{n: 1, c: 1, h: c.h, w: c.w, sC: c.h * c.w, sH: c.w, sW: 1, o: 1, kh: c.k, kw: c.k,
					strH: c.strH, strW: c.strW, padH: c.pad, padW: c.pad, dilH: c.dilH, dilW: c.dilW, groups: 1}
				g.oh = (c.h+2*c.pad-c.dilH*(c.k-1)-1)/c.strH + 1
				g.ow = (c.w+2*c.pad-c.dilW*(c.k-1)-1)/c.strW + 1
				name := fmt.Sprintf("asm%v/%+v/clamp%v", asm, c, ep.On)
				require.True(t, convDepthwiseRowsFits(&g), name)
				x, wk := normals(r, c.h*c.w), normals(r, c.k*c.k)
				got := make([]float32, g.oh*g.ow+1)
				got[len(got)-1] = 9
				convDepthwiseRows(&g, x, 0, wk, 0.5, got[:g.oh*g.ow], &convState{}, ep)
				require.Equal(t, float32(9), got[len(got)-1], "%s: wrote past the plane", name)
				for oh := 0; oh < g.oh; oh++ {
					for ow := 0; ow < g.ow; ow++ {
						want := 0.5
						for ki := 0; ki < c.k; ki++ {
							for kj := 0; kj < c.k; kj++ {
								ih, iw := oh*c.strH+ki*c.dilH-c.pad, ow*c.strW+kj*c.dilW-c.pad
								if ih >= 0 && ih < c.h && iw >= 0 && iw < c.w {
									want += float64(wk[ki*c.k+kj]) * float64(x[ih*c.w+iw])
								}
							}
						}
						if ep.On {
							want = math.Min(math.Max(want, -0.5), 0.75)
						}
						require.InDelta(t, want, float64(got[oh*g.ow+ow]), 1e-5, "%s: output (%d, %d)", name, oh, ow)
					}
				}
				if asm && c.strH == 1 && c.strW == 1 && !ep.On {
					one := make([]float32, g.oh*g.ow)
					for i := range one {
						one[i] = 0.5
					}
					convDepthwiseOne(&g, x, 0, wk, one)
					require.Equal(t, one, got[:g.oh*g.ow], "%s: bits of convDepthwiseOne", name)
				}
			}
		}
		useAVX2 = saved
	}
}

// normals is n draws of N(0, 1).
func normals(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}
