package ops

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// tanhf against float64 math.Tanh: within 2 ulp where |tanh| is not
// tiny, and NaN, +-Inf, +-0 as math.Tanh gives them.
func TestTanhf(t *testing.T) {
	worst := int64(0)
	for x := -20.0; x <= 20.0; x += 1.0 / 4096 {
		xf := float32(x)
		want := float32(math.Tanh(float64(xf)))
		worst = max(worst, ulpDiff(tanhf(xf), want))
	}
	assert.LessOrEqual(t, worst, int64(2), "max ulp error")
	for _, x := range []float32{1e-30, -1e-30, 1e-7, 0.625, -0.625, 0.62499, 9, 50, -50, 1e30} {
		assert.LessOrEqual(t, ulpDiff(tanhf(x), float32(math.Tanh(float64(x)))), int64(2), "x=%v", x)
	}
	assert.True(t, math.IsNaN(float64(tanhf(float32(math.NaN())))))
	assert.Equal(t, float32(1), tanhf(float32(math.Inf(1))))
	assert.Equal(t, float32(-1), tanhf(float32(math.Inf(-1))))
	assert.Equal(t, math.Float32bits(0), math.Float32bits(tanhf(0)))
	assert.Equal(t, math.Float32bits(float32(math.Copysign(0, -1))), math.Float32bits(tanhf(float32(math.Copysign(0, -1)))))
}

// The vectorised sigmoid and tanh (and their tails, and the pure-Go path
// on CPUs without AVX2) against float64 math.
func TestRNNActVec(t *testing.T) {
	var xs []float32
	for x := -100.0; x <= 100.0; x += 1.0 / 512 {
		xs = append(xs, float32(x))
	}
	for x := -1.0; x <= 1.0; x += 1.0 / 65536 {
		xs = append(xs, float32(x))
	}
	special := []float32{0, float32(math.Copysign(0, -1)), 1e-30, -1e-30, 1.0 / 4096, 0.625, -0.625,
		44, 88, 89, -87, -88, -104, 1e30, -1e30, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}
	xs = append(xs, special...)
	xs = append(xs, 0.3, -0.3, 3) // a tail of 3 after the last full 8
	for _, asm := range []bool{true, false} {
		saved := useAVX2
		useAVX2 = useAVX2 && asm
		sig, th := make([]float32, len(xs)), append([]float32(nil), xs...)
		rnnSigmoidVec(sig, xs)
		rnnTanhVec(th, th) // in place
		useAVX2 = saved
		worstS, worstT := int64(0), int64(0)
		for i, x := range xs {
			ws := float32(1 / (1 + math.Exp(-float64(x))))
			wt := float32(math.Tanh(float64(x)))
			if x != x {
				assert.True(t, sig[i] != sig[i] && th[i] != th[i], "NaN in, asm %v", asm)
				continue
			}
			if ws < 1.2e-38 { // subnormal: only absolute accuracy counts
				assert.InDelta(t, float64(ws), float64(sig[i]), 2e-38, "sigmoid(%v) asm %v", x, asm)
			} else {
				worstS = max(worstS, ulpDiff(sig[i], ws))
			}
			worstT = max(worstT, ulpDiff(th[i], wt))
		}
		assert.LessOrEqual(t, worstS, int64(3), "sigmoid max ulp error, asm %v", asm)
		assert.LessOrEqual(t, worstT, int64(2), "tanh max ulp error, asm %v", asm)
	}
}
