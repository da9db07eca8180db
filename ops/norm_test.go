package ops_test

import (
	"math"
	"math/rand"
	"testing"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/stretchr/testify/require"
)

func TestNormAgainstTorch(t *testing.T) {
	denseRunFamily(t, "norm")
}

func TestNormBatchStats(t *testing.T) {
	// training=True without running stats normalises with the batch's
	// own statistics: channel 0 holds 1, 3 (mean 2, var 1).
	x := ivalue.F32Tensor([]float32{1, 10, 3, 30}, 2, 2)
	outs, _, err := runNode(t, "aten::batch_norm",
		[]ivalue.IValue{iv(x), ivalue.None(), ivalue.None(), ivalue.None(), ivalue.None(), ivB(true), ivF(0.1), ivF(0), ivB(true)},
		[]*graph.Type{tT, tN, tN, tN, tN, tB, tF, tF, tB}, []*graph.Type{tT})
	require.NoError(t, err)
	require.InDeltaSlice(t, []float64{-1, -1, 1, 1}, outs[0].Tensor().Float64s(), 1e-6)
}

func TestNormErrors(t *testing.T) {
	x := ivalue.F32Tensor(make([]float32, 24), 2, 3, 4)
	v3 := ivalue.F32Tensor(make([]float32, 3), 3)
	v4 := ivalue.F32Tensor(make([]float32, 4), 4)
	ints := graph.ListOf(graph.Int)
	bn := []*graph.Type{tT, tT, tT, tT, tT, tB, tF, tF, tB}
	cases := []struct {
		name, kind string
		inputs     []ivalue.IValue
		types      []*graph.Type
	}{
		{"bn eval without stats", "aten::batch_norm", []ivalue.IValue{iv(x), iv(v3), iv(v3), ivalue.None(), ivalue.None(), ivB(false), ivF(0.1), ivF(1e-5), ivB(true)}, []*graph.Type{tT, tT, tT, tN, tN, tB, tF, tF, tB}},
		{"bn weight size", "aten::batch_norm", []ivalue.IValue{iv(x), iv(v4), iv(v3), iv(v3), iv(v3), ivB(false), ivF(0.1), ivF(1e-5), ivB(true)}, bn},
		{"bn training with stats", "aten::batch_norm", []ivalue.IValue{iv(x), iv(v3), iv(v3), iv(v3), iv(v3), ivB(true), ivF(0.1), ivF(1e-5), ivB(true)}, bn},
		{"ln shape", "aten::layer_norm", []ivalue.IValue{iv(x), ivInts(3), ivalue.None(), ivalue.None(), ivF(1e-5), ivB(true)}, []*graph.Type{tT, ints, tN, tN, tF, tB}},
		{"ln weight", "aten::layer_norm", []ivalue.IValue{iv(x), ivInts(4), iv(v3), ivalue.None(), ivF(1e-5), ivB(true)}, []*graph.Type{tT, ints, tT, tN, tF, tB}},
		{"gn groups", "aten::group_norm", []ivalue.IValue{iv(x), ivI(2), ivalue.None(), ivalue.None(), ivF(1e-5), ivB(true)}, []*graph.Type{tT, tI, tN, tN, tF, tB}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := runNode(t, c.kind, c.inputs, c.types, []*graph.Type{tT})
			require.Error(t, err)
		})
	}
}

// batch_norm's scale and shift are computed once when its parameters
// are graph constants (a frozen model), and every run when they are
// inputs: a running variance changed in place between runs changes the
// output, and a constant one gives the same bits each run.
func TestBatchNormConstantParams(t *testing.T) {
	x := ivalue.F32Tensor([]float32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 1, 3, 4)
	w := ivalue.F32Tensor([]float32{1, 2, 0.5}, 3)
	b := ivalue.F32Tensor([]float32{0, 1, -1}, 3)
	mean := ivalue.F32Tensor([]float32{2, 6, 10}, 3)
	types := []*graph.Type{tT, tT, tT, tT, tT, tB, tF, tF, tB}
	in := func(vr *ivalue.Tensor) []ivalue.IValue {
		return []ivalue.IValue{iv(x), iv(w), iv(b), iv(mean), iv(vr), ivB(false), ivF(0.1), ivF(0), ivB(true)}
	}
	want := func(vr []float32) []float64 {
		var out []float64
		for ch := 0; ch < 3; ch++ {
			for i := 0; i < 4; i++ {
				v := float64(x.F32()[ch*4+i])
				out = append(out, (v-float64(mean.F32()[ch]))/math.Sqrt(float64(vr[ch]))*float64(w.F32()[ch])+float64(b.F32()[ch]))
			}
		}
		return out
	}
	for _, constant := range []bool{true, false} {
		vr := ivalue.F32Tensor([]float32{4, 1, 16}, 3)
		p, err := buildNode(t, "aten::batch_norm", in(vr), types, []*graph.Type{tT},
			[]bool{false, constant, constant, constant, constant, true, true, true, true})
		require.NoError(t, err)
		require.NoError(t, p.Run())
		first := append([]float32(nil), p.Output(0).Tensor().F32()...)
		require.InDeltaSlice(t, want([]float32{4, 1, 16}), p.Output(0).Tensor().Float64s(), 1e-6)
		if constant {
			require.NoError(t, p.Run())
			require.Equal(t, first, p.Output(0).Tensor().F32(), "constant parameters: the same bits")
			continue
		}
		copy(vr.F32(), []float32{1, 4, 4}) // the caller's tensor, changed in place
		require.NoError(t, p.Run())
		require.InDeltaSlice(t, want([]float32{1, 4, 4}), p.Output(0).Tensor().Float64s(), 1e-6)
	}
}

// BenchmarkBatchNormClamp times densenet's batch norm and relu over
// [1, 512, 28, 28] as two nodes (batch_norm, then relu_ in place) and
// as gosr::batch_norm_clamp, parameters constant.
func BenchmarkBatchNormClamp(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	c := 512
	x := benchRand(r, 1, c, 28, 28)
	w, bb, m, v := benchRand(r, c), benchRand(r, c), benchRand(r, c), benchRand(r, c)
	for i, e := range v.F32() {
		v.F32()[i] = e*e + 1
	}
	in := []ivalue.IValue{iv(x), iv(w), iv(bb), iv(m), iv(v), ivB(false), ivF(0.1), ivF(1e-5), ivB(true)}
	types := []*graph.Type{tT, tT, tT, tT, tT, tB, tF, tF, tB}
	consts := []bool{false, true, true, true, true, true, true, true, true, true, true}
	bn, err := buildNode(b, "aten::batch_norm", in, types, []*graph.Type{tT}, consts)
	require.NoError(b, err)
	fused, err := buildNode(b, "gosr::batch_norm_clamp", append(in, ivF(0), ivF(math.Inf(1))), append(types, tF, tF), []*graph.Type{tT}, consts)
	require.NoError(b, err)
	require.NoError(b, bn.Run())
	relu, err := buildNode(b, "aten::relu_", []ivalue.IValue{*bn.Output(0)}, []*graph.Type{tT}, []*graph.Type{tT}, nil)
	require.NoError(b, err)
	b.Run("batch_norm+relu_", func(b *testing.B) {
		for b.Loop() {
			_ = bn.Run()
			_ = relu.Run()
		}
	})
	b.Run("batch_norm_clamp", func(b *testing.B) {
		for b.Loop() {
			_ = fused.Run()
		}
	})
}
