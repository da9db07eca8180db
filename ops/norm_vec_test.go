package ops

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// normAffine's AVX2 loop gives what the Go loop gives, bit for bit, with
// and without weight and bias, at lengths around the vector width; and
// sum64 and sqDev64 agree with one running sum to float64's rounding.
func TestNormAffineVec(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	for _, n := range []int{1, 7, 8, 9, 31, 96, 100, 771} {
		src := make([]float32, n)
		w := make([]float32, n)
		b := make([]float32, n)
		for i := range src {
			src[i], w[i], b[i] = float32(r.NormFloat64()*3+1), float32(r.NormFloat64()), float32(r.NormFloat64())
		}
		half := src[:n/2]
		src[n/2] = float32(math.NaN())
		m, v := 0.5, 2.0
		if len(half) > 0 {
			m, v = normMoments(half, 1, 0, 0, len(half))
		}
		rstd := 1 / math.Sqrt(v+1e-5)
		for mode := 0; mode < 4; mode++ {
			var wm, bm []float32
			if mode&1 != 0 {
				wm = w
			}
			if mode&2 != 0 {
				bm = b
			}
			got, want := make([]float32, n), make([]float32, n)
			normAffine(got, src, m, rstd, wm, bm)
			saved := useAVX2
			useAVX2 = false
			normAffine(want, src, m, rstd, wm, bm)
			useAVX2 = saved
			for i := range want {
				require.Equal(t, math.Float32bits(want[i]), math.Float32bits(got[i]), "n %d mode %d element %d", n, mode, i)
			}
		}
		var s, q float64
		for _, x := range half {
			s += float64(x)
		}
		mm := s / float64(max(len(half), 1))
		for _, x := range half {
			q += (float64(x) - mm) * (float64(x) - mm)
		}
		assert.InDelta(t, s, sum64(half), 1e-12*(1+math.Abs(s)))
		assert.InDelta(t, q, sqDev64(half, mm), 1e-12*(1+q))
	}
}

// scaleShift (batch_norm's per-channel step) gives the Go expression's
// bits at lengths around the vector width.
func TestScaleShiftVec(t *testing.T) {
	r := rand.New(rand.NewSource(6))
	for _, n := range []int{1, 7, 8, 9, 49, 196, 3137} {
		src := make([]float32, n)
		for i := range src {
			src[i] = float32(r.NormFloat64() * 4)
		}
		src[n-1] = float32(math.Inf(-1))
		sc, sh := float32(r.NormFloat64()), float32(r.NormFloat64())
		got := make([]float32, n)
		scaleShift(got, src, sc, sh)
		for i, v := range src {
			want := v*sc + sh
			require.Equal(t, math.Float32bits(want), math.Float32bits(got[i]), "n %d element %d", n, i)
		}
	}
}
