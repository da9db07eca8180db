package ops_test

import (
	"testing"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops"
)

func TestUnaryOps(t *testing.T) {
	x := func() ivalue.IValue { return iv(ivalue.F32Tensor([]float32{-2, -0.5, 0, 0.7, 3})) }
	i64 := func(v ...int64) ivalue.IValue { return iv(ivalue.I64Tensor(v)) }
	one := []*graph.Type{tT}
	sh := []int{5}
	// Expected values from PyTorch 1.13.
	runEwCases(t, []ewCase{
		{"relu", "aten::relu", []ivalue.IValue{x()}, one, ivalue.Float32, sh, []float64{0, 0, 0, 0.7, 3}, ""},
		{"relu strided", "aten::relu", []ivalue.IValue{iv(transposed([]float32{-1, 2, 3, -4}, 2, 2))}, one, ivalue.Float32, []int{2, 2}, []float64{0, 3, 2, 0}, ""},
		{"relu int", "aten::relu", []ivalue.IValue{i64(-1, 2)}, one, ivalue.Int64, []int{2}, []float64{0, 2}, ""},
		{"gelu none", "aten::gelu", []ivalue.IValue{x(), ivS("none")}, []*graph.Type{tT, tS}, ivalue.Float32, sh, []float64{-0.045500099658966064, -0.1542687863111496, 0.0, 0.5306254625320435, 2.995950222015381}, ""},
		{"gelu tanh", "aten::gelu", []ivalue.IValue{x(), ivS("tanh")}, []*graph.Type{tT, tS}, ivalue.Float32, sh, []float64{-0.04540228843688965, -0.1542859971523285, 0.0, 0.5305701494216919, 2.9963626861572266}, ""},
		{"sigmoid", "aten::sigmoid", []ivalue.IValue{x()}, one, ivalue.Float32, sh, []float64{0.11920291930437088, 0.3775406777858734, 0.5, 0.6681877374649048, 0.9525741338729858}, ""},
		{"silu", "aten::silu", []ivalue.IValue{x()}, one, ivalue.Float32, sh, []float64{-0.23840583860874176, -0.1887703388929367, 0.0, 0.46773141622543335, 2.857722520828247}, ""},
		{"erf", "aten::erf", []ivalue.IValue{x()}, one, ivalue.Float32, sh, []float64{-0.9953222870826721, -0.5204998850822449, 0.0, 0.6778011918067932, 0.9999778866767883}, ""},
		{"leaky_relu", "aten::leaky_relu", []ivalue.IValue{x(), ivF(0.1)}, []*graph.Type{tT, tF}, ivalue.Float32, sh, []float64{-0.2, -0.05, 0, 0.7, 3}, ""},
		{"hardtanh", "aten::hardtanh", []ivalue.IValue{x(), ivI(-1), ivI(1)}, []*graph.Type{tT, tI, tI}, ivalue.Float32, sh, []float64{-1, -0.5, 0, 0.7, 1}, ""},
		{"exp of int -> float32", "aten::exp", []ivalue.IValue{i64(0, 1)}, one, ivalue.Float32, []int{2}, []float64{1, 2.718281828459045}, ""},
		{"neg int", "aten::neg", []ivalue.IValue{i64(1, -2)}, one, ivalue.Int64, []int{2}, []float64{-1, 2}, ""},
		{"neg bool errors", "aten::neg", []ivalue.IValue{iv(ivalue.BoolTensor([]bool{true}))}, one, 0, nil, nil, "bool"},
		{"round half even", "aten::round", []ivalue.IValue{iv(ivalue.F32Tensor([]float32{0.5, 1.5, 2.5, -0.5}))}, one, ivalue.Float32, []int{4}, []float64{0, 2, 2, 0}, ""},
		{"sign", "aten::sign", []ivalue.IValue{iv(ivalue.F32Tensor([]float32{-2, 0, 3}))}, one, ivalue.Float32, []int{3}, []float64{-1, 0, 1}, ""},
		{"clamp int with float min -> float32", "aten::clamp", []ivalue.IValue{i64(1, 2, 3), ivF(1.5), ivalue.None()}, []*graph.Type{tT, tF, tN}, ivalue.Float32, []int{3}, []float64{1.5, 2, 3}, ""},
		{"clamp int stays int", "aten::clamp", []ivalue.IValue{i64(1, 2, 3), ivI(2), ivI(2)}, []*graph.Type{tT, tI, tI}, ivalue.Int64, []int{3}, []float64{2, 2, 2}, ""},
		{"clamp both None errors", "aten::clamp", []ivalue.IValue{i64(1), ivalue.None(), ivalue.None()}, []*graph.Type{tT, tN, tN}, 0, nil, nil, "at least one"},
		{"clamp_max scalar", "aten::clamp_max", []ivalue.IValue{x(), ivF(0.5)}, []*graph.Type{tT, tF}, ivalue.Float32, sh, []float64{-2, -0.5, 0, 0.5, 0.5}, ""},
		{"logical_not", "aten::logical_not", []ivalue.IValue{x()}, one, ivalue.Bool, sh, []float64{0, 0, 1, 0, 0}, ""},
		{"bitwise_not bool", "aten::bitwise_not", []ivalue.IValue{iv(ivalue.BoolTensor([]bool{true, false}))}, one, ivalue.Bool, []int{2}, []float64{0, 1}, ""},
		{"reciprocal", "aten::reciprocal", []ivalue.IValue{iv(ivalue.F32Tensor([]float32{2, 4}))}, one, ivalue.Float32, []int{2}, []float64{0.5, 0.25}, ""},
		{"rsqrt", "aten::rsqrt", []ivalue.IValue{iv(ivalue.F32Tensor([]float32{4, 16}))}, one, ivalue.Float32, []int{2}, []float64{0.5, 0.25}, ""},
	})
}

// clamp_min/clamp_max with a Scalar bound on the small integer dtypes;
// expected values from PyTorch 1.13.
func TestClampScalarSmallInts(t *testing.T) {
	var cases []ewCase
	for _, dt := range []ivalue.DType{ivalue.Int16, ivalue.Int8, ivalue.Uint8} {
		mk := func(vals ...int64) ivalue.IValue {
			tt := &ivalue.Tensor{}
			tt.Resize(dt, []int{len(vals)})
			for i, v := range vals {
				if err := ops.WriteScalar(tt, i, ivI(v)); err != nil {
					t.Fatal(err)
				}
			}
			return iv(tt)
		}
		x := func() ivalue.IValue { return mk(1, 5, 9) }
		n := dt.String()
		cases = append(cases,
			ewCase{n + " clamp_min", "aten::clamp_min", []ivalue.IValue{x(), ivI(4)}, []*graph.Type{tT, tI}, dt, []int{3}, []float64{4, 5, 9}, ""},
			ewCase{n + " clamp_max", "aten::clamp_max", []ivalue.IValue{x(), ivI(4)}, []*graph.Type{tT, tI}, dt, []int{3}, []float64{1, 4, 4}, ""},
			ewCase{n + " clamp tensor bounds", "aten::clamp", []ivalue.IValue{x(), mk(4), mk(6, 6, 6)}, []*graph.Type{tT, tT, tT}, dt, []int{3}, []float64{4, 5, 6}, ""},
			ewCase{n + " clamp_min float", "aten::clamp_min", []ivalue.IValue{x(), ivF(4.5)}, []*graph.Type{tT, tF}, ivalue.Float32, []int{3}, []float64{4.5, 5, 9}, ""},
		)
	}
	runEwCases(t, cases)
}
