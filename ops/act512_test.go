package ops

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAct512BitForBit: the AVX-512 silu and gelu give the AVX2 loops'
// bits on every lane (random values over exp's range and past it, the
// edges at ±88, signed zeros, infinities, NaN), at lengths that leave
// 8- and 1-element tails, in place and not.
func TestAct512BitForBit(t *testing.T) {
	if !useAVX512 {
		t.Skip("no AVX-512 on this CPU or build")
	}
	r := rand.New(rand.NewSource(17))
	special := []float32{0, float32(math.Copysign(0, -1)), 88, -88, 87.9, -87.9, 88.1, -88.1, -100, 100, 1e-30, -1e-30,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), 5, -5, 0.5, -0.5}
	for _, f := range []struct {
		name string
		f    func(o, a []float32)
	}{{"silu", siluVec}, {"gelu", geluVec}} {
		for _, n := range []int{16, 31, 32, 47, 64, 200, 1031} {
			a := make([]float32, n)
			for i := range a {
				if i < len(special) {
					a[i] = special[i]
					continue
				}
				a[i] = float32(r.NormFloat64() * []float64{0.5, 4, 40}[i%3])
			}
			got := make([]float32, n)
			f.f(got, a)
			inPlace := append([]float32(nil), a...)
			f.f(inPlace, inPlace)
			useAVX512 = false
			want := make([]float32, n)
			f.f(want, a)
			useAVX512 = true
			for i := range want {
				require.Equal(t, math.Float32bits(want[i]), math.Float32bits(got[i]), "%s n %d: lane %d (x %v): %v, AVX2 %v", f.name, n, i, a[i], got[i], want[i])
				require.Equal(t, math.Float32bits(want[i]), math.Float32bits(inPlace[i]), "%s n %d in place: lane %d", f.name, n, i)
			}
		}
	}
}
