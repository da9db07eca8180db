package ops_test

import (
	"testing"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/stretchr/testify/require"
)

func TestEmbeddingAgainstTorch(t *testing.T) {
	denseRunFamily(t, "embedding")
}

func TestEmbeddingBag2D(t *testing.T) {
	// 2-d indices: one bag per row, as F.embedding_bag does.
	w := ivalue.F32Tensor([]float32{0, 1, 10, 11, 20, 21}, 3, 2)
	idx := ivalue.I64Tensor([]int64{0, 1, 2, 2}, 2, 2)
	outs, _, err := runNode(t, "aten::embedding_bag",
		[]ivalue.IValue{iv(w), iv(idx), iv(ivalue.I64Tensor([]int64{0}, 1)), ivB(false), ivI(1), ivB(false), ivalue.None(), ivB(false)},
		[]*graph.Type{tT, tT, tT, tB, tI, tB, tN, tB}, []*graph.Type{tT, tT, tT, tT})
	require.NoError(t, err)
	require.Equal(t, []float64{5, 6, 20, 21}, outs[0].Tensor().Float64s())
	require.Equal(t, []float64{0, 0, 1, 1}, outs[1].Tensor().Float64s())
	require.Equal(t, []float64{2, 2}, outs[2].Tensor().Float64s())
}

func TestEmbeddingErrors(t *testing.T) {
	w := ivalue.F32Tensor(make([]float32, 12), 4, 3)
	eb := []*graph.Type{tT, tT, tT, tB, tI, tB, tN, tB}
	cases := []struct {
		name, kind string
		inputs     []ivalue.IValue
		types      []*graph.Type
		nOut       int
	}{
		{"index out of range", "aten::embedding", []ivalue.IValue{iv(w), iv(ivalue.I64Tensor([]int64{4}, 1)), ivI(-1), ivB(false), ivB(false)}, []*graph.Type{tT, tT, tI, tB, tB}, 1},
		{"negative index", "aten::embedding", []ivalue.IValue{iv(w), iv(ivalue.I64Tensor([]int64{-1}, 1)), ivI(-1), ivB(false), ivB(false)}, []*graph.Type{tT, tT, tI, tB, tB}, 1},
		{"float indices", "aten::embedding", []ivalue.IValue{iv(w), iv(ivalue.F32Tensor([]float32{1}, 1)), ivI(-1), ivB(false), ivB(false)}, []*graph.Type{tT, tT, tI, tB, tB}, 1},
		{"bag mode", "aten::embedding_bag", []ivalue.IValue{iv(w), iv(ivalue.I64Tensor([]int64{1}, 1)), iv(ivalue.I64Tensor([]int64{0}, 1)), ivB(false), ivI(3), ivB(false), ivalue.None(), ivB(false)}, eb, 4},
		{"bag first offset", "aten::embedding_bag", []ivalue.IValue{iv(w), iv(ivalue.I64Tensor([]int64{1, 2}, 2)), iv(ivalue.I64Tensor([]int64{1}, 1)), ivB(false), ivI(0), ivB(false), ivalue.None(), ivB(false)}, eb, 4},
		{"bag offsets past end", "aten::embedding_bag", []ivalue.IValue{iv(w), iv(ivalue.I64Tensor([]int64{1, 2}, 2)), iv(ivalue.I64Tensor([]int64{0, 3}, 2)), ivB(false), ivI(0), ivB(false), ivalue.None(), ivB(false)}, eb, 4},
		{"bag psw with mean", "aten::embedding_bag", []ivalue.IValue{iv(w), iv(ivalue.I64Tensor([]int64{1, 2}, 2)), iv(ivalue.I64Tensor([]int64{0}, 1)), ivB(false), ivI(1), ivB(false), iv(ivalue.F32Tensor([]float32{1, 2}, 2)), ivB(false)}, []*graph.Type{tT, tT, tT, tB, tI, tB, tT, tB}, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			outTypes := make([]*graph.Type, c.nOut)
			for i := range outTypes {
				outTypes[i] = tT
			}
			_, _, err := runNode(t, c.kind, c.inputs, c.types, outTypes)
			require.Error(t, err)
		})
	}
}
