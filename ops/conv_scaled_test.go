package ops_test

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/stretchr/testify/require"
)

// TestConvScaled: each gosr::conv_*_scaled kind against aten::mul then
// the convolution it fuses (see [Scaled convolution input]): bit for
// bit where the direct kernels scale as they pack or the product is
// made first, within float32 rounding where the rows kernel's weights
// are scaled; the scale on either side of the product, infinite and
// zero factors (padding must stay zero, not 0*inf), batches, strides
// and broadcasts that are not one value a channel.
func TestConvScaled(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	type geom struct {
		name        string
		x, s, w     []int
		stride, pad int64
		exact       bool
	}
	geoms := []geom{
		{"direct rows 3x3 (28 wide)", []int{1, 16, 12, 28}, []int{1, 16, 1, 1}, []int{16, 16, 3, 3}, 1, 1, true},
		{"direct flat 3x3 (7x7)", []int{1, 16, 7, 7}, []int{1, 16, 1, 1}, []int{24, 16, 3, 3}, 1, 1, true},
		{"direct flat 1x1 (7x7, wide)", []int{1, 32, 7, 7}, []int{1, 32, 1, 1}, []int{64, 32, 1, 1}, 1, 0, true},
		{"direct flat batch 2", []int{2, 16, 8, 8}, []int{2, 16, 1, 1}, []int{16, 16, 3, 3}, 1, 1, true},
		{"rows 1x1 (28x28), weights scaled", []int{1, 32, 28, 28}, []int{1, 32, 1, 1}, []int{16, 32, 1, 1}, 1, 0, false},
		{"rows 1x1 batch 2: product first", []int{2, 32, 28, 28}, []int{2, 32, 1, 1}, []int{16, 32, 1, 1}, 1, 0, true},
		{"stride 2: product first", []int{1, 16, 16, 16}, []int{1, 16, 1, 1}, []int{16, 16, 3, 3}, 2, 1, true},
		{"scale per row, not channel: product first", []int{1, 16, 8, 8}, []int{1, 1, 8, 1}, []int{16, 16, 3, 3}, 1, 1, true},
	}
	kinds := []struct {
		fused, plain string
		extra        func(out []int) ([]ivalue.IValue, []*graph.Type)
	}{
		{"gosr::conv_scaled", "aten::conv2d", nil},
		{"gosr::conv_clamp_scaled", "gosr::conv_clamp", func([]int) ([]ivalue.IValue, []*graph.Type) {
			return []ivalue.IValue{ivF(0), ivF(6)}, []*graph.Type{tF, tF}
		}},
		{"gosr::conv_act_scaled", "gosr::conv_act", func([]int) ([]ivalue.IValue, []*graph.Type) {
			return []ivalue.IValue{ivS("silu")}, []*graph.Type{tS}
		}},
		{"gosr::conv_add_clamp_scaled", "gosr::conv_add_clamp", func(out []int) ([]ivalue.IValue, []*graph.Type) {
			return []ivalue.IValue{iv(randTensor(r, out...)), ivF(math.Inf(-1)), ivF(math.Inf(1))}, []*graph.Type{tT, tF, tF}
		}},
	}
	for _, gm := range geoms {
		for _, k := range kinds {
			for _, scaleFirst := range []bool{false, true} {
				name := fmt.Sprintf("%s/%s/scale-first=%v", gm.name, k.fused, scaleFirst)
				x, s := randTensor(r, gm.x...), randTensor(r, gm.s...)
				sd := s.F32()
				sd[0], sd[len(sd)-1] = float32(math.Inf(1)), 0
				w, b := randTensor(r, gm.w...), randTensor(r, gm.w[0])
				oh := (gm.x[2]+2*int(gm.pad)-gm.w[2])/int(gm.stride) + 1
				ow := (gm.x[3]+2*int(gm.pad)-gm.w[3])/int(gm.stride) + 1
				out := []int{gm.x[0], gm.w[0], oh, ow}
				var extra []ivalue.IValue
				var extraT []*graph.Type
				if k.extra != nil {
					extra, extraT = k.extra(out)
				}
				a0, a1 := iv(x), iv(s)
				if scaleFirst {
					a0, a1 = a1, a0
				}
				// The unfused pair: the product, then the convolution with
				// a constant weight.
				prod, _, err := runNode(t, "aten::mul", []ivalue.IValue{a0, a1}, []*graph.Type{tT, tT}, []*graph.Type{tT})
				require.NoError(t, err, name)
				args := []ivalue.IValue{prod[0], iv(w), iv(b), ivInts(gm.stride, gm.stride), ivInts(gm.pad, gm.pad), ivInts(1, 1), ivI(1)}
				types := []*graph.Type{tT, tT, tT, graph.ListOf(tI), graph.ListOf(tI), graph.ListOf(tI), tI}
				consts := []bool{false, true, true, true, true, true, true}
				for _, e := range extra {
					consts = append(consts, !e.IsTensor())
				}
				p, err := buildNode(t, k.plain, append(args, extra...), append(types, extraT...), []*graph.Type{tT}, consts)
				require.NoError(t, err, name)
				require.NoError(t, p.Run(), name)
				want := p.Output(0).Tensor()

				args[0] = a0
				fargs := append(append(args, extra...), a1)
				p, err = buildNode(t, k.fused, fargs, append(append(types, extraT...), tT), []*graph.Type{tT}, append(consts, false))
				require.NoError(t, err, name)
				for run := range 2 { // the second over the first's state
					require.NoError(t, p.Run(), name)
					got := p.Output(0).Tensor()
					require.Equal(t, want.Sizes(), got.Sizes(), name)
					for i, wv := range want.F32() {
						gv := got.F32()[i]
						if math.IsNaN(float64(wv)) || gm.exact {
							require.True(t, math.Float32bits(wv) == math.Float32bits(gv) || math.IsNaN(float64(wv)) && math.IsNaN(float64(gv)),
								"%s run %d: element %d: %v, unfused %v", name, run, i, gv, wv)
							continue
						}
						require.InDelta(t, wv, gv, 1e-5*(1+math.Abs(float64(wv))), "%s run %d: element %d", name, run, i)
					}
				}
			}
		}
	}
}

// TestConvScaledErrors: a scaled convolution whose factor is not a
// tensor, or whose product cannot be made, names what it expected.
func TestConvScaledErrors(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	x, w := randTensor(r, 1, 8, 6, 6), randTensor(r, 8, 8, 3, 3)
	base := []ivalue.IValue{iv(x), iv(w), ivalue.None(), ivInts(1, 1), ivInts(1, 1), ivInts(1, 1), ivI(1)}
	types := []*graph.Type{tT, tT, tN, graph.ListOf(tI), graph.ListOf(tI), graph.ListOf(tI), tI}
	_, _, err := runNode(t, "gosr::conv_scaled", append(base, iv(randTensor(r, 1, 3, 1, 1))), append(types, tT), []*graph.Type{tT})
	require.ErrorContains(t, err, "conv scale")
}
