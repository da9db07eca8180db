package ops

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/gosr/gosr/ivalue"
	"github.com/stretchr/testify/require"
)

// rowsTensor is a float32 tensor of sizes with normal draws and, one
// in eight, NaN, infinities, signed zeros and subnormals.
func rowsTensor(r *rand.Rand, sizes ...int) *ivalue.Tensor {
	special := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.Copysign(0, -1)), 0, 1e-40, 3e38}
	t := ivalue.NewTensor(ivalue.Float32, sizes...)
	for i := range t.F32() {
		if r.Intn(8) == 0 {
			t.F32()[i] = special[r.Intn(len(special))]
		} else {
			t.F32()[i] = float32(r.NormFloat64() * 4)
		}
	}
	return t
}

// TestScaleRows: the mul fast path of [Channel rows] gives the general
// broadcast's bits, scale on either side, rows of 7 to 196 floats
// (tails of every length), in place over x; it declines broadcasts
// that are not one value a row and an output over the scales.
func TestScaleRows(t *testing.T) {
	if !useAVX512 {
		t.Skip("no AVX-512 on this CPU or build")
	}
	r := rand.New(rand.NewSource(3))
	for _, c := range []struct {
		x, s []int
		ok   bool
	}{
		{[]int{1, 1152, 7, 7}, []int{1, 1152, 1, 1}, true},
		{[]int{2, 3, 5, 7}, []int{2, 3, 1, 1}, true},
		{[]int{1, 8, 14, 14}, []int{1, 8, 1, 1}, true},
		{[]int{3, 17}, []int{3, 1}, true},
		{[]int{2, 4, 16}, []int{2, 4, 1}, true},
		{[]int{1, 5, 4, 33}, []int{1, 5, 4, 1}, true},
		{[]int{2, 6, 15}, []int{2, 6, 1}, true},
		{[]int{2, 3, 4, 4}, []int{1, 3, 1, 1}, false}, // the batch broadcast too
		{[]int{2, 3, 4, 4}, []int{3, 1, 1}, false},    // another rank
		{[]int{2, 3, 4, 4}, []int{2, 1, 4, 1}, false},
	} {
		for _, scaleFirst := range []bool{false, true} {
			name := fmt.Sprintf("%v*%v/scale-first=%v", c.x, c.s, scaleFirst)
			x, s := rowsTensor(r, c.x...), rowsTensor(r, c.s...)
			a, b := x, s
			if scaleFirst {
				a, b = s, x
			}
			want := &ivalue.Tensor{}
			require.NoError(t, binGeneral(opMul, &binState{}, a, b, ivalue.IValue{}, false, ivalue.Float32, ivalue.Float32, ivalue.FromInt(1), want), name)
			got := &ivalue.Tensor{}
			require.Equal(t, c.ok, binScaleRows(&ProcessedNode{}, a, b, got), name)
			if !c.ok {
				continue
			}
			require.Equal(t, want.Sizes(), got.Sizes(), name)
			for i, w := range want.F32() {
				require.Equal(t, math.Float32bits(w), math.Float32bits(got.F32()[i]), "%s: element %d", name, i)
			}
			// In place: the output is x's memory.
			xc := x.Clone()
			a, b = xc, s
			if scaleFirst {
				a, b = s, xc
			}
			require.True(t, binScaleRows(&ProcessedNode{}, a, b, xc), name)
			for i, w := range want.F32() {
				require.Equal(t, math.Float32bits(w), math.Float32bits(xc.F32()[i]), "%s in place: element %d", name, i)
			}
			// An output planned over the scales' memory: declined.
			over := ivalue.NewTensor(ivalue.Float32, c.x...)
			sv, err := ivalue.FromStorage(ivalue.Float32, over.Storage(), 0, c.s, nil)
			require.NoError(t, err)
			copy(sv.F32(), s.F32())
			a, b = x, sv
			if scaleFirst {
				a, b = sv, x
			}
			require.False(t, binScaleRows(&ProcessedNode{}, a, b, over), name)
		}
	}
}

// TestMeanRows: meanRowsAVX512 against float64 means of the rows (and
// NaN and infinities where a row holds them), rows of 1 to 300 floats.
func TestMeanRows(t *testing.T) {
	if !useAVX512 {
		t.Skip("no AVX-512 on this CPU or build")
	}
	r := rand.New(rand.NewSource(5))
	for _, inner := range []int{1, 7, 15, 16, 17, 31, 49, 63, 64, 65, 100, 196, 300} {
		const rows = 5
		x := make([]float32, rows*inner)
		for i := range x {
			x[i] = float32(r.NormFloat64()*3 + 1)
		}
		x[inner/2] = float32(math.Inf(1)) // row 0
		if inner > 1 {
			x[inner+1] = float32(math.NaN()) // row 1
		}
		got := make([]float32, rows)
		meanRowsAVX512(&got[0], &x[0], rows, inner)
		for row := range rows {
			var s float64
			for _, v := range x[row*inner : (row+1)*inner] {
				s += float64(v)
			}
			want := s / float64(inner)
			switch {
			case math.IsNaN(want):
				require.True(t, math.IsNaN(float64(got[row])), "inner %d row %d: %v", inner, row, got[row])
			case math.IsInf(want, 0):
				require.Equal(t, want, float64(got[row]), "inner %d row %d", inner, row)
			default:
				require.InDelta(t, want, float64(got[row]), 1e-5*(1+math.Abs(want)), "inner %d row %d", inner, row)
			}
		}
	}
}

// TestAffineRows: affineRowsAVX512 gives scaleShift's and
// scaleShiftClamp's bits row by row (the batch norm's path before it),
// rows of 1 to 200 floats, NaN and infinities among the inputs, in
// place and not.
func TestAffineRows(t *testing.T) {
	if !useAVX512 {
		t.Skip("no AVX-512 on this CPU or build")
	}
	r := rand.New(rand.NewSource(8))
	for _, inner := range []int{1, 5, 15, 16, 17, 49, 64, 196, 200} {
		for _, clamp := range []bool{false, true} {
			const rows = 6
			x := rowsTensor(r, rows*inner).F32()
			sc, sh := rowsTensor(r, rows).F32(), rowsTensor(r, rows).F32()
			lo, hi := float32(0), float32(6)
			want := make([]float32, rows*inner)
			for row := range rows {
				d, s := want[row*inner:(row+1)*inner], x[row*inner:(row+1)*inner]
				if clamp {
					scaleShiftClamp(d, s, sc[row], sh[row], lo, hi)
				} else {
					scaleShift(d, s, sc[row], sh[row])
				}
			}
			cl := 0
			if clamp {
				cl = 1
			}
			got := make([]float32, rows*inner)
			affineRowsAVX512(&got[0], &x[0], &sc[0], &sh[0], rows, inner, lo, hi, cl)
			inPlace := append([]float32(nil), x...)
			affineRowsAVX512(&inPlace[0], &inPlace[0], &sc[0], &sh[0], rows, inner, lo, hi, cl)
			for i, w := range want {
				require.Equal(t, math.Float32bits(w), math.Float32bits(got[i]), "inner %d clamp %v: element %d (x %v)", inner, clamp, i, x[i])
				require.Equal(t, math.Float32bits(w), math.Float32bits(inPlace[i]), "inner %d clamp %v in place: element %d", inner, clamp, i)
			}
		}
	}
}

// TestDwcPackScaled: dwcPack with factors gives the unscaled copy's
// interior times each channel's factor (one float32 product each, the
// mul's) and leaves the padding zero, an infinite factor included, for
// a full block of eight channels (packRows8ScaledAVX2, a row whose
// width leaves a tail) and a partial one.
func TestDwcPackScaled(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2: dwcPack's blocks are not used")
	}
	r := rand.New(rand.NewSource(4))
	for _, nch := range []int{8, 5} {
		g := squareGeom(8, 8, 7, 3, 1, 1)
		_, _, wp, rowF, size := dwcLayout(&g)
		x := rowsTensor(r, 8*7*7).F32()
		scale := []float32{2, float32(math.Inf(1)), -0.5, 0, 3, 1e-3, -7, 1.5}
		plain, scaled := make([]float32, size), make([]float32, size)
		dwcPack(plain, &g, x, 0, nch, wp, rowF, nil)
		for i := range scaled {
			scaled[i] = float32(math.NaN()) // every float must be written
		}
		dwcPack(scaled, &g, x, 0, nch, wp, rowF, scale)
		for i := 0; i < g.h+2*g.padH; i++ {
			for j := 0; j < wp; j++ {
				for ch := range 8 {
					k := i*rowF + j*8 + ch
					want := plain[k]
					inside := i >= g.padH && i < g.padH+g.h && j >= g.padW && j < g.padW+g.w && ch < nch
					if inside {
						want *= scale[ch]
					}
					require.True(t, math.Float32bits(want) == math.Float32bits(scaled[k]) || math.IsNaN(float64(want)) && math.IsNaN(float64(scaled[k])),
						"nch %d row %d col %d ch %d: %v, want %v", nch, i, j, ch, scaled[k], want)
				}
			}
		}
	}
}

// TestAvgPool2x2Rows: avgPool2x2RowsAVX512 gives the scalar avgPool2x2's
// bits (the same four sums in order, the same division): output rows of
// 1 to 40, inputs one column and one row wider than the windows cover
// (floor mode), a row stride past the row, the default divisor and an
// override, NaN, infinities, signed zeros and subnormals among the
// inputs.
func TestAvgPool2x2Rows(t *testing.T) {
	if !useAVX512 {
		t.Skip("no AVX-512 on this CPU or build")
	}
	r := rand.New(rand.NewSource(9))
	for _, ow := range []int{1, 2, 7, 15, 16, 17, 28, 31, 32, 33, 40} {
		for _, oh := range []int{1, 3} {
			for _, extra := range []int{0, 1} {
				for _, divisor := range []int{0, 3} {
					w, h := 2*ow+extra, 2*oh+extra
					sH := w + 5*extra
					x := rowsTensor(r, h*sH+3).F32()
					in := poolInput{data: x, n: 1, c: 1, h: h, w: w, sN: h * sH, sC: h * sH, sH: sH, sW: 1}
					q := poolParams{kh: 2, kw: 2, sh: 2, sw: 2, dh: 1, dw: 1, oh: oh, ow: ow}
					want, got := make([]float32, oh*ow), make([]float32, oh*ow)
					useAVX512 = false
					avgPool2x2(&in, &q, 2, divisor, want)
					useAVX512 = true
					avgPool2x2(&in, &q, 2, divisor, got)
					for i := range want {
						if math.Float32bits(want[i]) != math.Float32bits(got[i]) && !(want[i] != want[i] && got[i] != got[i]) {
							require.Failf(t, "differs", "ow %d oh %d extra %d divisor %d: output %d is %v, want %v", ow, oh, extra, divisor, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}
