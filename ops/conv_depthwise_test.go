package ops

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// convDepthwisePadded (whole-span taps over a zero-padded copy, in
// blocks of rows) against convDepthwiseOne (a row at a time, an axpy per
// tap and row at stride 1), on planes of several blocks and without
// padding: the same sums in the same order, so the same bits.
func TestDepthwisePadded(t *testing.T) {
	r := rand.New(rand.NewSource(8))
	for _, c := range []struct{ h, w, k, pad, dil int }{
		{112, 112, 3, 1, 1}, {57, 56, 5, 2, 1}, {400, 9, 3, 1, 1}, {300, 7, 3, 1, 1}, {64, 64, 3, 2, 2}, {33, 70, 7, 3, 1},
		{90, 40, 1, 0, 1}, {7, 7, 3, 1, 1},
	} {
		t.Run(fmt.Sprintf("%dx%d/k%d/pad%d/dil%d", c.h, c.w, c.k, c.pad, c.dil), func(t *testing.T) {
			g := convGeom{n: 1, c: 1, h: c.h, w: c.w, sC: c.h * c.w, sH: c.w, sW: 1, o: 1, kh: c.k, kw: c.k,
				strH: 1, strW: 1, padH: c.pad, padW: c.pad, dilH: c.dil, dilW: c.dil, groups: 1}
			g.oh = c.h + 2*c.pad - c.dil*(c.k-1)
			g.ow = c.w + 2*c.pad - c.dil*(c.k-1)
			require.True(t, convDepthwiseFits(&g), "geometry for the plane path")
			x, wk := normals(r, c.h*c.w), normals(r, c.k*c.k)
			want := make([]float32, g.oh*g.ow)
			got := make([]float32, g.oh*g.ow)
			for i := range want {
				want[i] = 0.5
				got[i] = 0.5
			}
			convDepthwiseOne(&g, x, 0, wk, want)
			convDepthwisePadded(&g, x, 0, wk, got, &convState{})
			require.Equal(t, want, got)
		})
	}
}

// convDepthwiseStride2 against a float64 reference: stride 2 along W
// (and 1 or 2 along H), kernels 3 and 5, padded or not, odd and even
// widths. (convDepthwiseOne gathers in a scalar loop, whose product and
// sum round twice where the vectorised axpy fuses them: not the same
// bits.)
func TestDepthwiseStride2(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	for _, c := range []struct{ h, w, k, pad, strH, dilH int }{
		{112, 112, 3, 1, 2, 1}, {57, 57, 5, 2, 2, 1}, {20, 9, 3, 0, 2, 1}, {30, 31, 3, 1, 1, 1}, {16, 16, 5, 2, 2, 2}, {7, 7, 3, 1, 2, 1},
	} {
		t.Run(fmt.Sprintf("%dx%d/k%d/pad%d/strH%d/dilH%d", c.h, c.w, c.k, c.pad, c.strH, c.dilH), func(t *testing.T) {
			g := convGeom{n: 1, c: 1, h: c.h, w: c.w, sC: c.h * c.w, sH: c.w, sW: 1, o: 1, kh: c.k, kw: c.k,
				strH: c.strH, strW: 2, padH: c.pad, padW: c.pad, dilH: c.dilH, dilW: 1, groups: 1}
			g.oh = (c.h+2*c.pad-c.dilH*(c.k-1)-1)/c.strH + 1
			g.ow = (c.w+2*c.pad-(c.k-1)-1)/2 + 1
			x, wk := normals(r, c.h*c.w), normals(r, c.k*c.k)
			got := make([]float32, g.oh*g.ow)
			for i := range got {
				got[i] = -0.25
			}
			convDepthwiseStride2(&g, x, 0, wk, got, &convState{})
			for oh := 0; oh < g.oh; oh++ {
				for ow := 0; ow < g.ow; ow++ {
					want := -0.25
					for ki := 0; ki < c.k; ki++ {
						for kj := 0; kj < c.k; kj++ {
							ih, iw := oh*c.strH+ki*c.dilH-c.pad, 2*ow+kj-c.pad
							if ih >= 0 && ih < c.h && iw >= 0 && iw < c.w {
								want += float64(wk[ki*c.k+kj]) * float64(x[ih*c.w+iw])
							}
						}
					}
					require.InDelta(t, want, float64(got[oh*g.ow+ow]), 1e-5, "output (%d, %d)", oh, ow)
				}
			}
		})
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
