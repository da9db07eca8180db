package ops

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// The vectorised gelu gives what the scalar geluf gives (the same
// formula; fused multiply-adds round once, so within 2 ulp),
// and float64 gelu within 4e-7 of max(1, |gelu|); NaN stays NaN.
func TestGeluVec(t *testing.T) {
	var a []float32
	for x := -12.0; x <= 12; x += 0.00137 {
		a = append(a, float32(x))
	}
	a = append(a, 0, float32(math.Copysign(0, -1)), 1e-30, -1e-30, 40, -40, 1e30, -1e30,
		float32(math.Inf(1)), float32(math.NaN()), 3.5, -0.7)
	o := make([]float32, len(a))
	geluVec(o, a)
	for i, x := range a {
		want := geluf(x)
		if x != x {
			assert.True(t, o[i] != o[i], "gelu(NaN) = %v", o[i])
			continue
		}
		assert.InDelta(t, float64(want), float64(o[i]), 4e-7*math.Max(1, math.Abs(float64(want))), "gelu(%v)", x)
		if math.Abs(float64(x)) < 1e6 {
			exact := 0.5 * float64(x) * (1 + math.Erf(float64(x)/math.Sqrt2))
			assert.InDelta(t, exact, float64(o[i]), 4e-7*math.Max(1, math.Abs(exact)), "gelu(%v) against float64", x)
		}
	}
	// In place, and a tail shorter than a vector.
	b := append([]float32(nil), a[:13]...)
	geluVec(b, b)
	assert.Equal(t, o[:13], b)
}

func BenchmarkGeluVec(b *testing.B) {
	a := make([]float32, 1<<16)
	for i := range a {
		a[i] = float32(i%200-100) / 25
	}
	o := make([]float32, len(a))
	b.SetBytes(int64(len(a) * 4))
	for i := 0; i < b.N; i++ {
		geluVec(o, a)
	}
}

// BenchmarkSiluVec times silu over a row segment in L2 (into another),
// the size the convolutions' epilogues apply it to, in ns an element.
func BenchmarkSiluVec(b *testing.B) {
	a := make([]float32, 1<<14)
	for i := range a {
		a[i] = float32(i%200-100) / 25
	}
	o := make([]float32, len(a))
	b.SetBytes(int64(len(a) * 4))
	for b.Loop() {
		siluVec(o, a)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(a)), "ns/elem")
}
