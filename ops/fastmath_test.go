package ops

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

func ulpDiff(a, b float32) int64 {
	ia, ib := int64(math.Float32bits(a)), int64(math.Float32bits(b))
	if ia < 0 != (ib < 0) {
		return math.MaxInt64
	}
	d := ia - ib
	if d < 0 {
		d = -d
	}
	return d
}

func TestExpf(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	worst := int64(0)
	for i := 0; i < 200000; i++ {
		x := float32(r.Float64()*200 - 100)
		want := float32(math.Exp(float64(x)))
		got := expf(x)
		if want == 0 || math.IsInf(float64(want), 0) || want < 1.2e-38 {
			// Near the subnormal range only absolute accuracy counts.
			assert.InDelta(t, float64(want), float64(got), 1e-44, "x=%v", x)
			continue
		}
		worst = max(worst, ulpDiff(got, want))
	}
	assert.LessOrEqual(t, worst, int64(2), "max ulp error")
	for _, c := range []struct{ x, want float32 }{
		{0, 1}, {1, float32(math.E)}, {-1, float32(1 / math.E)},
		{89, float32(math.Inf(1))}, {-104, 0},
		{88.7, 0}, {-87.5, 0}, {-100, 0},
	} {
		if c.want == 0 && c.x != -104 {
			c.want = float32(math.Exp(float64(c.x)))
		}
		got := expf(c.x)
		if c.want == 0 || math.IsInf(float64(c.want), 0) {
			assert.Equal(t, c.want, got, "x=%v", c.x)
		} else {
			assert.InEpsilon(t, c.want, got, 3e-7, "x=%v", c.x)
		}
	}
	assert.True(t, math.IsNaN(float64(expf(float32(math.NaN())))))
	assert.Equal(t, float32(0), expf(float32(math.Inf(-1))))
	assert.True(t, math.IsInf(float64(expf(float32(math.Inf(1)))), 1))
}

func TestErff(t *testing.T) {
	for x := -6.0; x <= 6.0; x += 0.001 {
		assert.InDelta(t, math.Erf(float64(float32(x))), float64(erff(float32(x))), 5e-7, "x=%v", x)
	}
	assert.True(t, math.IsNaN(float64(erff(float32(math.NaN())))))
	assert.Equal(t, float32(1), erff(float32(math.Inf(1))))
	assert.Equal(t, float32(-1), erff(float32(math.Inf(-1))))
}

func BenchmarkExpf(b *testing.B) {
	x := make([]float32, 1024)
	for i := range x {
		x[i] = float32(i)/100 - 5
	}
	var s float32
	for i := 0; i < b.N; i++ {
		for _, v := range x {
			s += expf(v)
		}
	}
	_ = s
}
