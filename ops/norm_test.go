package ops_test

import (
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
