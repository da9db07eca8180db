package ops

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// binLoopF32 (the AVX2 loops) against binLoopF (Go), bit for bit: every
// op it vectorises and one it does not, a scalar operand on either side,
// lengths around the 8-float step, NaN, infinities and signed zeros.
func TestBinLoopF32(t *testing.T) {
	r := rand.New(rand.NewSource(12))
	special := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.Copysign(0, -1)), 0, 1e-40, 3e38}
	vals := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			if r.Intn(6) == 0 {
				v[i] = special[r.Intn(len(special))]
			} else {
				v[i] = float32(r.NormFloat64() * 10)
			}
		}
		return v
	}
	for _, op := range []binOp{opAdd, opSub, opMul, opDiv, opAddAlpha, opSubAlpha, opMax} {
		for _, n := range []int{0, 1, 7, 8, 9, 16, 31, 64, 67} {
			for _, st := range [][2]int{{1, 1}, {1, 0}, {0, 1}} {
				name := fmt.Sprintf("op%d/n%d/sa%d/sb%d", op, n, st[0], st[1])
				a, b := vals(n+3), vals(n+3)
				want, got := make([]float32, n), make([]float32, n)
				binLoopF(op, want, a, 2, st[0], b, 1, st[1], 2.5)
				binLoopF32(op, got, a, 2, st[0], b, 1, st[1], 2.5)
				for i := range want {
					require.Equal(t, math.Float32bits(want[i]), math.Float32bits(got[i]), "%s: element %d", name, i)
				}
			}
		}
	}
}
