package ops_test

import (
	"math"
	"testing"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/stretchr/testify/require"
)

func TestPoolAgainstTorch(t *testing.T) {
	denseRunFamily(t, "pool")
}

func TestPoolMaxNaN(t *testing.T) {
	nan := float32(math.NaN())
	x := ivalue.F32Tensor([]float32{1, nan, 3, 4}, 1, 1, 2, 2)
	ints := graph.ListOf(graph.Int)
	outs, _, err := runNode(t, "aten::max_pool2d",
		[]ivalue.IValue{iv(x), ivInts(2, 2), ivInts(), ivInts(0, 0), ivInts(1, 1), ivB(false)},
		[]*graph.Type{tT, ints, ints, ints, ints, tB}, []*graph.Type{tT})
	require.NoError(t, err)
	require.True(t, math.IsNaN(outs[0].Tensor().Float64s()[0]), "NaN propagates as in PyTorch")
}

func TestPoolErrors(t *testing.T) {
	x := ivalue.F32Tensor(make([]float32, 2*3*4*4), 2, 3, 4, 4)
	ints := graph.ListOf(graph.Int)
	mp := []*graph.Type{tT, ints, ints, ints, ints, tB}
	cases := []struct {
		name, kind string
		inputs     []ivalue.IValue
		types      []*graph.Type
	}{
		{"max pad too big", "aten::max_pool2d", []ivalue.IValue{iv(x), ivInts(2, 2), ivInts(), ivInts(2, 2), ivInts(1, 1), ivB(false)}, mp},
		{"max kernel too big", "aten::max_pool2d", []ivalue.IValue{iv(x), ivInts(5, 5), ivInts(), ivInts(0, 0), ivInts(1, 1), ivB(false)}, mp},
		{"max 2d input", "aten::max_pool2d", []ivalue.IValue{iv(ivalue.F32Tensor(make([]float32, 4), 2, 2)), ivInts(1, 1), ivInts(), ivInts(0, 0), ivInts(1, 1), ivB(false)}, mp},
		{"max zero stride", "aten::max_pool2d", []ivalue.IValue{iv(x), ivInts(2, 2), ivInts(0, 1), ivInts(0, 0), ivInts(1, 1), ivB(false)}, mp},
		{"avg divisor 0", "aten::avg_pool2d", []ivalue.IValue{iv(x), ivInts(2, 2), ivInts(), ivInts(0, 0), ivB(false), ivB(true), ivI(0)}, []*graph.Type{tT, ints, ints, ints, tB, tB, tI}},
		{"adaptive 3 values", "aten::adaptive_avg_pool2d", []ivalue.IValue{iv(x), ivInts(1, 2, 3)}, []*graph.Type{tT, ints}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := runNode(t, c.kind, c.inputs, c.types, []*graph.Type{tT})
			require.Error(t, err)
		})
	}
}
