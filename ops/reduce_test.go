package ops_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

func sinRange(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(math.Sin(float64(i)))
	}
	return v
}

func TestReduceOps(t *testing.T) {
	r := func() ivalue.IValue { return iv(ivalue.F32Tensor(sinRange(24), 2, 3, 4)) }
	m := func() ivalue.IValue { return iv(ivalue.F32Tensor([]float32{1, 5, 2, 7, 0, 3}, 2, 3)) }
	intList := graph.ListOf(tI)
	// Expected values from PyTorch 1.13.
	runEwCases(t, []ewCase{
		{"sum dims (0,2)", "aten::sum", []ivalue.IValue{r(), ivInts(0, 2), ivB(false), ivalue.None()}, []*graph.Type{tT, intList, tB, tN}, ivalue.Float32, []int{3}, []float64{3.4163777828216553, -3.1885666847229004, 0.7519946098327637}, ""},
		{"sum all", "aten::sum", []ivalue.IValue{m(), ivalue.None()}, []*graph.Type{tT, tN}, ivalue.Float32, []int{}, []float64{18}, ""},
		{"sum empty dim list = all", "aten::sum", []ivalue.IValue{m(), ivInts(), ivB(false), ivalue.None()}, []*graph.Type{tT, intList, tB, tN}, ivalue.Float32, []int{}, []float64{18}, ""},
		{"sum bool -> int64", "aten::sum", []ivalue.IValue{iv(ivalue.BoolTensor([]bool{true, true, false})), ivalue.None()}, []*graph.Type{tT, tN}, ivalue.Int64, []int{}, []float64{2}, ""},
		{"sum bool dtype float", "aten::sum", []ivalue.IValue{iv(ivalue.BoolTensor([]bool{true, true})), ivI(ivalue.Float32.ScalarType())}, []*graph.Type{tT, tI}, ivalue.Float32, []int{}, []float64{2}, ""},
		{"sum strided keepdim", "aten::sum", []ivalue.IValue{iv(transposed([]float32{1, 2, 3, 4, 5, 6}, 2, 3)), ivInts(1), ivB(true), ivalue.None()}, []*graph.Type{tT, intList, tB, tN}, ivalue.Float32, []int{3, 1}, []float64{5, 7, 9}, ""},
		{"mean dim 1", "aten::mean", []ivalue.IValue{r(), ivInts(1), ivB(false), ivalue.None()}, []*graph.Type{tT, intList, tB, tN}, ivalue.Float32, []int{2, 4}, []float64{0.07751858234405518, 0.09822171926498413, 0.028620263561606407, -0.06729453802108765, 0.029489675536751747, 0.09847503900527954, 0.0769229456782341, -0.01535177230834961}, ""},
		{"mean int errors", "aten::mean", []ivalue.IValue{iv(ivalue.I64Tensor([]int64{1})), ivalue.None()}, []*graph.Type{tT, tN}, 0, nil, nil, "mean()"},
		{"mean dtype float64", "aten::mean", []ivalue.IValue{m(), ivalue.None(), ivB(false), ivI(ivalue.Float64.ScalarType())}, []*graph.Type{tT, tN, tB, tI}, ivalue.Float64, []int{}, []float64{3}, ""},
		{"max full", "aten::max", []ivalue.IValue{m()}, []*graph.Type{tT}, ivalue.Float32, []int{}, []float64{7}, ""},
		{"max empty errors", "aten::max", []ivalue.IValue{iv(ivalue.F32Tensor([]float32{}))}, []*graph.Type{tT}, 0, nil, nil, "numel() == 0"},
		{"amax dim", "aten::amax", []ivalue.IValue{m(), ivInts(0), ivB(false)}, []*graph.Type{tT, intList, tB}, ivalue.Float32, []int{3}, []float64{7, 5, 3}, ""},
		{"argmax all keepdim", "aten::argmax", []ivalue.IValue{m(), ivalue.None(), ivB(true)}, []*graph.Type{tT, tN, tB}, ivalue.Int64, []int{1, 1}, []float64{3}, ""},
		{"argmin dim", "aten::argmin", []ivalue.IValue{m(), ivI(1), ivB(false)}, []*graph.Type{tT, tI, tB}, ivalue.Int64, []int{2}, []float64{0, 1}, ""},
		{"argmax first of ties", "aten::argmax", []ivalue.IValue{iv(ivalue.F32Tensor([]float32{1, 3, 3}, 1, 3)), ivI(1), ivB(false)}, []*graph.Type{tT, tI, tB}, ivalue.Int64, []int{1}, []float64{1}, ""},
		{"prod dim", "aten::prod", []ivalue.IValue{m(), ivI(1), ivB(false), ivalue.None()}, []*graph.Type{tT, tI, tB, tN}, ivalue.Float32, []int{2}, []float64{10, 0}, ""},
		{"dim out of range", "aten::sum", []ivalue.IValue{m(), ivInts(2), ivB(false), ivalue.None()}, []*graph.Type{tT, intList, tB, tN}, 0, nil, nil, "out of range"},
		{"softmax dim 0", "aten::softmax", []ivalue.IValue{iv(ivalue.F32Tensor([]float32{1, 2, 3, 4, 5, 6}, 2, 3)), ivI(0), ivalue.None()}, []*graph.Type{tT, tI, tN}, ivalue.Float32, []int{2, 3}, []float64{0.04742587357759476, 0.04742587357759476, 0.04742587357759476, 0.9525741338729858, 0.9525741338729858, 0.9525741338729858}, ""},
		{"softmax strided dim -1", "aten::softmax", []ivalue.IValue{iv(transposed([]float32{1, 4, 2, 5, 3, 6}, 3, 2)), ivI(-1), ivalue.None()}, []*graph.Type{tT, tI, tN}, ivalue.Float32, []int{2, 3}, []float64{0.09003057, 0.24472847, 0.66524096, 0.09003057, 0.24472847, 0.66524096}, ""},
		{"log_softmax", "aten::log_softmax", []ivalue.IValue{iv(ivalue.F32Tensor([]float32{1, 2, 3, 4, 5, 6}, 2, 3)), ivI(1), ivalue.None()}, []*graph.Type{tT, tI, tN}, ivalue.Float32, []int{2, 3}, []float64{-2.4076058864593506, -1.4076058864593506, -0.40760594606399536, -2.4076058864593506, -1.4076058864593506, -0.40760594606399536}, ""},
		{"softmax int errors", "aten::softmax", []ivalue.IValue{iv(ivalue.I64Tensor([]int64{1})), ivI(0), ivalue.None()}, []*graph.Type{tT, tI, tN}, 0, nil, nil, "floating"},
	})
}

func TestReduceMaxDimIndices(t *testing.T) {
	x := ivalue.F32Tensor([]float32{1, float32(math.NaN()), 3, 3, 2, 3}, 2, 3)
	outs, _, err := runNode(t, "aten::max", []ivalue.IValue{iv(x), ivI(1), ivB(true)}, []*graph.Type{tT, tI, tB}, []*graph.Type{tT, tT})
	require.NoError(t, err)
	vals, idx := outs[0].Tensor(), outs[1].Tensor()
	assert.Equal(t, []int{2, 1}, vals.Sizes())
	assert.True(t, math.IsNaN(vals.Float64s()[0]), "NaN propagates")
	assert.Equal(t, 3.0, vals.Float64s()[1])
	assert.Equal(t, []float64{1, 0}, idx.Float64s())
	assert.Equal(t, ivalue.Int64, idx.DType())
}

func TestReduceSumAccuracy(t *testing.T) {
	// 1e6 copies of 0.1f: float32 accumulation would drift by ~1%.
	n := 1000000
	v := make([]float32, n)
	for i := range v {
		v[i] = 0.1
	}
	outs, _, err := runNode(t, "aten::sum", []ivalue.IValue{iv(ivalue.F32Tensor(v)), ivalue.None()}, []*graph.Type{tT, tN}, []*graph.Type{tT})
	require.NoError(t, err)
	assert.InEpsilon(t, float64(float32(0.1))*float64(n), outs[0].Tensor().Float64s()[0], 1e-6)
}
