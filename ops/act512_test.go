package ops

import (
	"flag"
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

var hardExhaustive = flag.Bool("hard-exhaustive", false, "TestHardAVX512Exhaustive: every float32 in [-3, 3], not every 7th")

// TestHardAVX512Exhaustive: hardAVX512's division by 6 through a
// multiply-add correction (see hardAVX512) gives Go's correctly rounded
// quotient, so hardsigmoidF's bits, for the float32 inputs whose
// c = x+3 lies strictly between the clamps: every 7th bit pattern of
// [-3, 3] (every one with -hard-exhaustive: 2.1e9, a few seconds).
func TestHardAVX512Exhaustive(t *testing.T) {
	if !useAVX512 {
		t.Skip("no AVX-512 on this CPU or build")
	}
	stride := uint32(7)
	if *hardExhaustive {
		stride = 1
	}
	const chunk = 1 << 16
	x, got := make([]float32, 0, chunk), make([]float32, chunk)
	bad := 0
	check := func() {
		n := len(x) &^ 15
		hardAVX512(&got[0], &x[0], n, 0)
		for i, v := range x[:n] {
			if want := hardsigmoidF(v); math.Float32bits(want) != math.Float32bits(got[i]) {
				if bad++; bad <= 5 {
					t.Errorf("x=%v (%#08x): %v, want %v", v, math.Float32bits(v), got[i], want)
				}
			}
		}
		x = x[:0]
	}
	// Bit patterns 0 to 3.0 with both signs.
	for _, sign := range []uint32{0, 1 << 31} {
		for b := uint32(0); b <= math.Float32bits(3); b += stride {
			if x = append(x, math.Float32frombits(sign|b)); len(x) == chunk {
				check()
			}
		}
	}
	for len(x)%16 != 0 {
		x = append(x, 0)
	}
	check()
	require.Zero(t, bad, "lanes that differ from Go's division")
}

// BenchmarkHardswish: hardVec in place over 12544 floats (a 112x112
// plane, in L1 and L2), AVX-512 against AVX2 (its division).
func BenchmarkHardswish(b *testing.B) {
	x := normals(rand.New(rand.NewSource(1)), 112*112)
	for _, avx512 := range []bool{false, true} {
		if avx512 && !useAVX512 {
			continue
		}
		b.Run(map[bool]string{false: "avx2", true: "avx512"}[avx512], func(b *testing.B) {
			saved := useAVX512
			useAVX512 = avx512
			defer func() { useAVX512 = saved }()
			for range b.N {
				hardVec(true, x, x)
			}
			b.ReportMetric(float64(len(x))*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gfloat/s")
		})
	}
}
