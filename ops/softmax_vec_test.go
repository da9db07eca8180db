package ops

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The vector softmax row (softmaxRowVec, used by attention and
// aten::softmax on contiguous float32 rows) gives what the scalar loop
// gives: within 2e-7 relative (exp's fused multiply-adds, the sum's
// order), 0 where x-max is below -87 (the scalar exp gives under
// 1.7e-38 there), and NaN rows where the scalar's are; in place too;
// and within 1e-6 of float64 softmax, beyond the rounding of x-max to
// float32 that both loops share.
func TestSoftmaxRowVec(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	inf, nan := float32(math.Inf(1)), float32(math.NaN())
	var rows [][]float32
	for _, n := range []int{1, 7, 8, 9, 15, 16, 17, 64, 197, 200, 513} {
		for _, scale := range []float64{0.01, 1, 10, 60} {
			row := make([]float32, n)
			for i := range row {
				row[i] = float32(r.NormFloat64() * scale)
			}
			rows = append(rows, row)
		}
	}
	masked := make([]float32, 40)
	for i := range masked {
		masked[i] = float32(i % 5)
		if i%3 == 0 {
			masked[i] = -inf // an additive attention mask
		}
	}
	wide := make([]float32, 24) // x-max across the -87 cut and past exp's range
	for i := range wide {
		wide[i] = float32(-8 * i)
	}
	withNaN := append(append([]float32(nil), masked[:20]...), nan)
	withInf := append(append([]float32(nil), wide...), inf)
	rows = append(rows, masked, wide, withNaN, withInf, make([]float32, 33))
	if !useAVX2 {
		t.Skip("no AVX2: the scalar loop is the only one")
	}
	for k, x := range rows {
		name := fmt.Sprintf("row %d (n %d)", k, len(x))
		got := make([]float32, len(x))
		want := make([]float32, len(x))
		ok := softmaxRowVec(got, x)
		require.Equal(t, len(x) >= 8, ok, name)
		if !ok {
			continue
		}
		softmaxRow32Scalar(want, x)
		mx := math.Inf(-1)
		for _, v := range x {
			mx = math.Max(mx, float64(v))
		}
		var sum float64
		for _, v := range x {
			sum += math.Exp(float64(v) - mx)
		}
		for i := range x {
			if want[i] != want[i] {
				assert.True(t, got[i] != got[i], "%s [%d]: got %v, want NaN", name, i, got[i])
				continue
			}
			if d := float64(x[i]) - mx; d < -87 {
				assert.Zero(t, got[i], "%s [%d]: x-max %v", name, i, d)
				assert.Less(t, float64(want[i]), 1.7e-38, name)
				continue
			}
			assert.InDelta(t, float64(want[i]), float64(got[i]), 2e-7*float64(want[i]), "%s [%d]", name, i)
			// x-max is rounded to float32 first: e**d's relative error
			// grows with |d| by float32's epsilon.
			d := float64(x[i]) - mx
			exact := math.Exp(d) / sum
			assert.InDelta(t, exact, float64(got[i]), (1e-6+1.2e-7*math.Abs(d))*exact+1e-38, "%s [%d] against float64", name, i)
		}
		in := append([]float32(nil), x...)
		softmaxRowVec(in, in)
		assert.Equal(t, fmt.Sprint(got), fmt.Sprint(in), "%s in place", name)
	}
}

// BenchmarkSoftmaxRow: one attention row of vit_b_16 (197 tokens), the
// vector kernel against the scalar loop.
func BenchmarkSoftmaxRow(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	x := normals(r, 197)
	o := make([]float32, len(x))
	b.Run("vec", func(b *testing.B) {
		if !useAVX2 {
			b.Skip("no AVX2")
		}
		for range b.N {
			softmaxRowVec(o, x)
		}
	})
	b.Run("scalar", func(b *testing.B) {
		for range b.N {
			softmaxRow32Scalar(o, x)
		}
	})
}
