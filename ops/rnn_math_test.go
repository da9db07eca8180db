package ops

import (
	"math"
	"math/rand"
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

// siluVec against float64 x/(1+exp(-x)), vectorised and not, in place
// and not: within 4 ulp (sigmoid's 3 and the product's rounding) where
// the result is normal, NaN for NaN and for -Inf (as PyTorch's
// x/(1+exp(-x)) gives).
func TestSiluVec(t *testing.T) {
	r := rand.New(rand.NewSource(3))
	var xs []float32
	for range 5000 {
		xs = append(xs, float32(r.NormFloat64()*8))
	}
	xs = append(xs, 0, float32(math.Copysign(0, -1)), 1e-30, -1e-30, 44, 88, 89, -87, -88, -104, 1e30, -1e30,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 0.3, -0.3)
	for _, asm := range []bool{true, false} {
		for _, inPlace := range []bool{false, true} {
			saved := useAVX2
			useAVX2 = useAVX2 && asm
			o := make([]float32, len(xs))
			if inPlace {
				copy(o, xs)
				siluVec(o, o)
			} else {
				siluVec(o, xs)
			}
			useAVX2 = saved
			worst := int64(0)
			for i, x := range xs {
				want := float32(float64(x) / (1 + math.Exp(-float64(x))))
				switch {
				case x != x || math.IsInf(float64(x), -1):
					assert.True(t, o[i] != o[i], "silu(%v) = %v, want NaN (asm %v)", x, o[i], asm)
				case math.Abs(float64(want)) < 1.2e-38:
					assert.InDelta(t, float64(want), float64(o[i]), 1e-36, "silu(%v) asm %v", x, asm)
				default:
					worst = max(worst, ulpDiff(o[i], want))
				}
			}
			assert.LessOrEqual(t, worst, int64(4), "silu max ulp error, asm %v, in place %v", asm, inPlace)
		}
	}
}

// hardVec gives hardswish and hardsigmoid bit for bit as the scalar
// hardsigmoidF does, NaN, infinities and the clamp's corners included,
// in place and not.
func TestHardVec(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	xs := []float32{0, float32(math.Copysign(0, -1)), -3, 3, -3.0000002, 2.9999998, 6, -6, 1e30, -1e30,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}
	for range 3000 {
		xs = append(xs, float32(r.NormFloat64()*4))
	}
	for _, swish := range []bool{true, false} {
		for _, inPlace := range []bool{false, true} {
			o := make([]float32, len(xs))
			if inPlace {
				copy(o, xs)
				hardVec(swish, o, o)
			} else {
				hardVec(swish, o, xs)
			}
			for i, x := range xs {
				want := hardsigmoidF(x)
				if swish {
					want = x * hardsigmoidF(x)
				}
				if want != want {
					assert.True(t, o[i] != o[i], "x=%v swish %v", x, swish)
					continue
				}
				assert.Equal(t, math.Float32bits(want), math.Float32bits(o[i]), "x=%v swish %v in place %v", x, swish, inPlace)
			}
		}
	}
}
