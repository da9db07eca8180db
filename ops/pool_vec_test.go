package ops

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// maxPoolPlaneVec against a scalar max pooling (NaN wins): widths
// around the 8-float steps, kernels 2 to 5, strides 1 to 3, padding,
// ceil-mode clipped windows at the right and bottom, NaNs in the input;
// under purego through max32's and deal2's Go loops.
func TestMaxPoolVec(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	out := func(size, k, s, p int, ceil bool) int {
		n := size + 2*p - k
		o := n/s + 1
		if ceil && n%s != 0 {
			o++
			if (o-1)*s >= size+p {
				o--
			}
		}
		return o
	}
	for _, c := range []struct {
		h, w, k, s, p int
		ceil          bool
	}{
		{112, 112, 3, 2, 1, false}, {55, 55, 3, 2, 0, true}, {27, 27, 3, 2, 0, true}, {13, 13, 3, 2, 0, true},
		{56, 56, 2, 2, 0, false}, {9, 17, 2, 2, 0, true}, {20, 33, 3, 1, 1, false}, {15, 40, 5, 3, 2, true}, {8, 129, 3, 2, 1, true},
	} {
		for _, asm := range []bool{false, true} {
			if asm && !useAVX2 {
				continue
			}
			t.Run(fmt.Sprintf("%+v/asm=%v", c, asm), func(t *testing.T) {
				saved := useAVX2
				useAVX2 = asm
				defer func() { useAVX2 = saved }()
				maxPoolVecCase(t, r, c.h, c.w, c.k, c.s, c.p, out(c.h, c.k, c.s, c.p, c.ceil), out(c.w, c.k, c.s, c.p, c.ceil))
			})
		}
	}
}

// maxPoolVecCase runs maxPoolPlaneVec on an h x w plane with NaNs (k x
// k windows, stride s, padding p, an oh x ow output) and checks each
// output against a scalar max pooling.
func maxPoolVecCase(t *testing.T, r *rand.Rand, h, w, k, s, p, oh, ow int) {
	x := normals(r, h*w)
	for i := 0; i < len(x); i += 97 {
		x[i] = float32(math.NaN())
	}
	q := poolParams{kh: k, kw: k, sh: s, sw: s, ph: p, pw: p, dh: 1, dw: 1, oh: oh, ow: ow}
	in := poolInput{data: x, n: 1, c: 1, h: h, w: w, sN: h * w, sC: h * w, sH: w, sW: 1}
	got := make([]float32, oh*ow)
	maxPoolPlaneVec(&in, &q, 0, got)
	for y := 0; y < oh; y++ {
		for z := 0; z < ow; z++ {
			want := float32(math.Inf(-1))
			for i := 0; i < k; i++ {
				for j := 0; j < k; j++ {
					ih, iw := y*s-p+i, z*s-p+j
					if ih >= 0 && ih < h && iw >= 0 && iw < w {
						if v := x[ih*w+iw]; v > want || math.IsNaN(float64(v)) {
							want = v
						}
					}
				}
			}
			g := got[y*ow+z]
			if math.IsNaN(float64(want)) {
				require.True(t, math.IsNaN(float64(g)), "(%d, %d): %v, want NaN", y, z, g)
				continue
			}
			require.Equal(t, want, g, "(%d, %d)", y, z)
		}
	}
}

// avgPool2x2 gives avgPoolPlaneAny's bits: odd sizes (the last row and
// column dropped), a row stride wider than the row, a divisor override,
// NaN and infinities.
func TestAvgPool2x2(t *testing.T) {
	r := rand.New(rand.NewSource(8))
	for _, c := range []struct{ h, w, sH, divisor int }{
		{2, 2, 2, 0}, {56, 56, 56, 0}, {7, 9, 9, 0}, {14, 15, 20, 0}, {6, 6, 6, 3},
	} {
		t.Run(fmt.Sprintf("%dx%d/sH=%d/div=%d", c.h, c.w, c.sH, c.divisor), func(t *testing.T) {
			data := make([]float32, 3+c.h*c.sH)
			for i := range data {
				data[i] = float32(r.NormFloat64() * 10)
			}
			data[3+1] = float32(math.NaN())
			data[len(data)-1] = float32(math.Inf(1))
			in := poolInput{data: data, n: 1, c: 1, h: c.h, w: c.w, sN: c.h * c.sH, sC: c.h * c.sH, sH: c.sH, sW: 1}
			q := poolParams{kh: 2, kw: 2, sh: 2, sw: 2, dh: 1, dw: 1, oh: c.h / 2, ow: c.w / 2}
			got, want := make([]float32, q.oh*q.ow), make([]float32, q.oh*q.ow)
			avgPool2x2(&in, &q, 3, c.divisor, got)
			avgPoolPlaneAny(&in, &q, 3, true, c.divisor, want)
			for i := range want {
				require.Equal(t, math.Float32bits(want[i]), math.Float32bits(got[i]), "output %d", i)
			}
		})
	}
}

// sumPlane against a float64 sum, under the assembly and without it, at
// lengths around its 32-element steps (the tail goes through sum8) and
// at a squeeze-and-excite plane's 112x112.
func TestSumPlane(t *testing.T) {
	r := rand.New(rand.NewSource(12))
	x := normals(r, 112*112)
	for _, asm := range []bool{false, true} {
		if asm && !useAVX2 {
			continue
		}
		saved := useAVX2
		useAVX2 = asm
		for _, n := range []int{0, 1, 7, 31, 32, 33, 63, 64, 65, 100, 49, 196, 784, 3136, 112 * 112} {
			want := 0.0
			for _, v := range x[:n] {
				want += float64(v)
			}
			require.InDelta(t, want, float64(sumPlane(x[:n])), 1e-5*(1+math.Sqrt(float64(n))), "asm %v, n %d", asm, n)
		}
		useAVX2 = saved
	}
}

// BenchmarkMaxPool times squeezenet's three 3x3 stride-2 max poolings
// (ceil mode) plane by plane, with the assembly and without.
func BenchmarkMaxPool(b *testing.B) {
	r := rand.New(rand.NewSource(13))
	for _, c := range []struct{ ch, h, oh int }{{64, 111, 55}, {128, 55, 27}, {256, 27, 13}} {
		x := normals(r, c.ch*c.h*c.h)
		q := poolParams{kh: 3, kw: 3, sh: 2, sw: 2, dh: 1, dw: 1, oh: c.oh, ow: c.oh}
		in := poolInput{data: x, n: 1, c: c.ch, h: c.h, w: c.h, sN: c.ch * c.h * c.h, sC: c.h * c.h, sH: c.h, sW: 1}
		got := make([]float32, c.ch*c.oh*c.oh)
		for _, asm := range []bool{false, true} {
			if asm && !useAVX2 {
				continue
			}
			b.Run(fmt.Sprintf("%dx%dx%d/asm=%v", c.ch, c.h, c.h, asm), func(b *testing.B) {
				saved := useAVX2
				useAVX2 = asm
				defer func() { useAVX2 = saved }()
				for b.Loop() {
					for p := 0; p < c.ch; p++ {
						maxPoolPlaneVec(&in, &q, p*c.h*c.h, got[p*c.oh*c.oh:])
					}
				}
			})
		}
	}
}
