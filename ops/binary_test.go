package ops_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops"
)

// transposed returns a non-contiguous [cols, rows] view of a row-major
// [rows, cols] float32 matrix.
func transposed(data []float32, rows, cols int) *ivalue.Tensor {
	src := ivalue.F32Tensor(data, rows, cols)
	t, err := ivalue.FromStorage(ivalue.Float32, src.Storage(), 0, []int{cols, rows}, []int{1, cols})
	if err != nil {
		panic(err)
	}
	return t
}

type ewCase struct {
	name    string
	kind    string
	in      []ivalue.IValue
	types   []*graph.Type
	dtype   ivalue.DType
	shape   []int
	want    []float64
	wantErr string
}

func runEwCases(t *testing.T, cases []ewCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			outs, _, err := runNode(t, c.kind, c.in, c.types, []*graph.Type{tT})
			if c.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.wantErr)
				return
			}
			require.NoError(t, err)
			o := outs[0].Tensor()
			require.NotNil(t, o)
			assert.Equal(t, c.dtype, o.DType())
			assert.Equal(t, len(c.shape), o.Dim())
			if len(c.shape) > 0 {
				assert.Equal(t, c.shape, o.Sizes())
			}
			assert.InDeltaSlice(t, c.want, o.Float64s(), 1e-6)
		})
	}
}

func TestBinaryArith(t *testing.T) {
	f := func(v ...float32) ivalue.IValue { return iv(ivalue.F32Tensor(v)) }
	i64 := func(v ...int64) ivalue.IValue { return iv(ivalue.I64Tensor(v)) }
	runEwCases(t, []ewCase{
		{"add same shape", "aten::add", []ivalue.IValue{f(1, 2, 3), f(10, 20, 30), ivI(1)}, []*graph.Type{tT, tT, tI}, ivalue.Float32, []int{3}, []float64{11, 22, 33}, ""},
		{"add alpha", "aten::add", []ivalue.IValue{f(1, 2), f(10, 20), ivI(2)}, []*graph.Type{tT, tT, tI}, ivalue.Float32, []int{2}, []float64{21, 42}, ""},
		{"add broadcast bias", "aten::add", []ivalue.IValue{iv(ivalue.F32Tensor([]float32{1, 2, 3, 4, 5, 6}, 2, 3)), f(10, 20, 30), ivI(1)}, []*graph.Type{tT, tT, tI}, ivalue.Float32, []int{2, 3}, []float64{11, 22, 33, 14, 25, 36}, ""},
		{"add outer broadcast", "aten::add", []ivalue.IValue{iv(ivalue.F32Tensor([]float32{1, 2}, 2, 1)), iv(ivalue.F32Tensor([]float32{10, 20, 30}, 1, 3)), ivI(1)}, []*graph.Type{tT, tT, tI}, ivalue.Float32, []int{2, 3}, []float64{11, 21, 31, 12, 22, 32}, ""},
		{"add transposed input", "aten::add", []ivalue.IValue{iv(transposed([]float32{1, 2, 3, 4, 5, 6}, 2, 3)), f(100, 200), ivI(1)}, []*graph.Type{tT, tT, tI}, ivalue.Float32, []int{3, 2}, []float64{101, 204, 102, 205, 103, 206}, ""},
		{"add scalar float", "aten::add", []ivalue.IValue{f(1, 2), ivF(0.5), ivI(1)}, []*graph.Type{tT, tF, tI}, ivalue.Float32, []int{2}, []float64{1.5, 2.5}, ""},
		{"int tensor + float scalar -> float32", "aten::add", []ivalue.IValue{i64(1, 2), ivF(0.5), ivI(1)}, []*graph.Type{tT, tF, tI}, ivalue.Float32, []int{2}, []float64{1.5, 2.5}, ""},
		{"int tensor + int scalar stays int64", "aten::add", []ivalue.IValue{i64(1, 2), ivI(3), ivI(2)}, []*graph.Type{tT, tI, tI}, ivalue.Int64, []int{2}, []float64{7, 8}, ""},
		{"int64 + 0-d float64 -> float64", "aten::add", []ivalue.IValue{i64(1, 2), iv(ivalue.F64Tensor([]float64{1.5}, []int{}...)), ivI(1)}, []*graph.Type{tT, tT, tI}, ivalue.Float64, []int{2}, []float64{2.5, 3.5}, ""},
		{"float32 + 0-d float64 stays float32", "aten::add", []ivalue.IValue{f(1, 2), iv(ivalue.F64Tensor([]float64{1.5}, []int{}...)), ivI(1)}, []*graph.Type{tT, tT, tI}, ivalue.Float32, []int{2}, []float64{2.5, 3.5}, ""},
		{"float alpha on ints errors", "aten::add", []ivalue.IValue{i64(1), i64(1), ivF(0.5)}, []*graph.Type{tT, tT, tF}, 0, nil, nil, "alpha"},
		{"sub", "aten::sub", []ivalue.IValue{f(5, 5), f(1, 2), ivI(1)}, []*graph.Type{tT, tT, tI}, ivalue.Float32, []int{2}, []float64{4, 3}, ""},
		{"sub bool errors", "aten::sub", []ivalue.IValue{iv(ivalue.BoolTensor([]bool{true})), iv(ivalue.BoolTensor([]bool{true})), ivI(1)}, []*graph.Type{tT, tT, tI}, 0, nil, nil, "bool"},
		{"add bool stays bool", "aten::add", []ivalue.IValue{iv(ivalue.BoolTensor([]bool{true, false})), iv(ivalue.BoolTensor([]bool{true, false})), ivI(1)}, []*graph.Type{tT, tT, tI}, ivalue.Bool, []int{2}, []float64{1, 0}, ""},
		{"rsub scalar", "aten::rsub", []ivalue.IValue{f(1, 2), ivI(1), ivI(1)}, []*graph.Type{tT, tI, tI}, ivalue.Float32, []int{2}, []float64{0, -1}, ""},
		{"rsub tensor alpha", "aten::rsub", []ivalue.IValue{f(1, 2), f(10, 10), ivI(2)}, []*graph.Type{tT, tT, tI}, ivalue.Float32, []int{2}, []float64{8, 6}, ""},
		{"mul scalar", "aten::mul", []ivalue.IValue{f(1, 2), ivF(3)}, []*graph.Type{tT, tF}, ivalue.Float32, []int{2}, []float64{3, 6}, ""},
		{"mul 0-d both", "aten::mul", []ivalue.IValue{iv(ivalue.ScalarTensor(3)), iv(ivalue.ScalarTensor(4))}, []*graph.Type{tT, tT}, ivalue.Float32, []int{}, []float64{12}, ""},
		{"int div int -> float32", "aten::div", []ivalue.IValue{i64(1, 2), i64(2, 2)}, []*graph.Type{tT, tT}, ivalue.Float32, []int{2}, []float64{0.5, 1}, ""},
		{"div floor ints", "aten::div", []ivalue.IValue{i64(-7, 7), i64(2, 2), ivS("floor")}, []*graph.Type{tT, tT, tS}, ivalue.Int64, []int{2}, []float64{-4, 3}, ""},
		{"div trunc float scalar", "aten::div", []ivalue.IValue{f(-7, 7), ivI(2), ivS("trunc")}, []*graph.Type{tT, tI, tS}, ivalue.Float32, []int{2}, []float64{-3, 3}, ""},
		{"div mode None", "aten::div", []ivalue.IValue{i64(-7, 7), i64(2, 2), ivalue.None()}, []*graph.Type{tT, tT, tN}, ivalue.Float32, []int{2}, []float64{-3.5, 3.5}, ""},
		{"div floor by zero int errors", "aten::div", []ivalue.IValue{i64(1), i64(0), ivS("floor")}, []*graph.Type{tT, tT, tS}, 0, nil, nil, "ZeroDivisionError"},
		{"pow tensor scalar", "aten::pow", []ivalue.IValue{f(1.5, 2), ivF(2.5)}, []*graph.Type{tT, tF}, ivalue.Float32, []int{2}, []float64{2.755676031112671, 5.656854152679443}, ""},
		{"pow int tensor int scalar", "aten::pow", []ivalue.IValue{i64(2, 3), ivI(2)}, []*graph.Type{tT, tI}, ivalue.Int64, []int{2}, []float64{4, 9}, ""},
		{"pow scalar tensor", "aten::pow", []ivalue.IValue{ivI(2), i64(2, 3)}, []*graph.Type{tI, tT}, ivalue.Int64, []int{2}, []float64{4, 8}, ""},
		{"pow float scalar int tensor", "aten::pow", []ivalue.IValue{ivF(2.5), i64(2, 3)}, []*graph.Type{tF, tT}, ivalue.Float32, []int{2}, []float64{6.25, 15.625}, ""},
		{"remainder int", "aten::remainder", []ivalue.IValue{i64(-7, 7), ivI(3)}, []*graph.Type{tT, tI}, ivalue.Int64, []int{2}, []float64{2, 1}, ""},
		{"remainder float neg divisor", "aten::remainder", []ivalue.IValue{f(-7, 7), ivI(-3)}, []*graph.Type{tT, tI}, ivalue.Float32, []int{2}, []float64{-1, -2}, ""},
		{"shape mismatch errors", "aten::mul", []ivalue.IValue{f(1, 2), f(1, 2, 3)}, []*graph.Type{tT, tT}, 0, nil, nil, "broadcast"},
		{"maximum", "aten::maximum", []ivalue.IValue{f(1, 5), f(3, 2)}, []*graph.Type{tT, tT}, ivalue.Float32, []int{2}, []float64{3, 5}, ""},
		{"clamp_min tensor", "aten::clamp_min", []ivalue.IValue{f(1, 5), f(3, 2)}, []*graph.Type{tT, tT}, ivalue.Float32, []int{2}, []float64{3, 5}, ""},
	})
}

func TestBinaryCompareWhere(t *testing.T) {
	f := func(v ...float32) ivalue.IValue { return iv(ivalue.F32Tensor(v)) }
	i64 := func(v ...int64) ivalue.IValue { return iv(ivalue.I64Tensor(v)) }
	bt := func(v ...bool) ivalue.IValue { return iv(ivalue.BoolTensor(v)) }
	runEwCases(t, []ewCase{
		{"eq tensor", "aten::eq", []ivalue.IValue{f(1, 2, 3), f(1, 0, 3)}, []*graph.Type{tT, tT}, ivalue.Bool, []int{3}, []float64{1, 0, 1}, ""},
		{"lt scalar mixed", "aten::lt", []ivalue.IValue{i64(1, 2, 3), ivF(2.5)}, []*graph.Type{tT, tF}, ivalue.Bool, []int{3}, []float64{1, 1, 0}, ""},
		{"ge broadcast", "aten::ge", []ivalue.IValue{iv(ivalue.F32Tensor([]float32{1, 2}, 2, 1)), f(1, 2)}, []*graph.Type{tT, tT}, ivalue.Bool, []int{2, 2}, []float64{1, 0, 1, 1}, ""},
		{"ne bool", "aten::ne", []ivalue.IValue{bt(true, false), bt(true, true)}, []*graph.Type{tT, tT}, ivalue.Bool, []int{2}, []float64{0, 1}, ""},
		{"logical_and", "aten::logical_and", []ivalue.IValue{bt(true, false, true), f(1, 1, 0)}, []*graph.Type{tT, tT}, ivalue.Bool, []int{3}, []float64{1, 0, 0}, ""},
		{"logical_or", "aten::logical_or", []ivalue.IValue{bt(true, false, false), bt(false, false, true)}, []*graph.Type{tT, tT}, ivalue.Bool, []int{3}, []float64{1, 0, 1}, ""},
		{"where self", "aten::where", []ivalue.IValue{bt(true, false), f(1, 2), f(10, 20)}, []*graph.Type{tT, tT, tT}, ivalue.Float32, []int{2}, []float64{1, 20}, ""},
		{"where scalar other promotes int", "aten::where", []ivalue.IValue{bt(true, false), i64(1, 2), ivF(2.5)}, []*graph.Type{tT, tT, tF}, ivalue.Float32, []int{2}, []float64{1, 2.5}, ""},
		{"where broadcast cond", "aten::where", []ivalue.IValue{iv(ivalue.BoolTensor([]bool{true, false}, 2, 1)), f(1, 2), ivI(0)}, []*graph.Type{tT, tT, tI}, ivalue.Float32, []int{2, 2}, []float64{1, 2, 0, 0}, ""},
		{"masked_fill int keeps dtype", "aten::masked_fill", []ivalue.IValue{i64(1, 2), bt(true, false), ivF(2.7)}, []*graph.Type{tT, tT, tF}, ivalue.Int64, []int{2}, []float64{2, 2}, ""},
		{"masked_fill broadcast mask", "aten::masked_fill", []ivalue.IValue{iv(ivalue.F32Tensor([]float32{1, 2, 3, 4}, 2, 2)), bt(false, true), ivF(-1)}, []*graph.Type{tT, tT, tF}, ivalue.Float32, []int{2, 2}, []float64{1, -1, 3, -1}, ""},
		{"masked_fill tensor value", "aten::masked_fill", []ivalue.IValue{f(1, 2), bt(true, false), iv(ivalue.ScalarTensor(9))}, []*graph.Type{tT, tT, tT}, ivalue.Float32, []int{2}, []float64{9, 2}, ""},
		{"clamp tensor bounds", "aten::clamp", []ivalue.IValue{f(-5, 0, 5), f(-1, -1, -1), f(1, 1, 1)}, []*graph.Type{tT, tT, tT}, ivalue.Float32, []int{3}, []float64{-1, 0, 1}, ""},
		{"clamp tensor min only", "aten::clamp", []ivalue.IValue{f(-5, 0, 5), f(-1, -1, -1), ivalue.None()}, []*graph.Type{tT, tT, tN}, ivalue.Float32, []int{3}, []float64{-1, 0, 5}, ""},
	})
}

// TestElementwiseSteadyStateAllocs checks that repeated runs reuse the
// output and scratch tensors.
func TestElementwiseSteadyStateAllocs(t *testing.T) {
	one := ivalue.F32Tensor([]float32{2})
	mat := ivalue.F32Tensor([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	i64 := ivalue.I64Tensor([]int64{1, 2, 3})
	cases := []struct {
		kind  string
		in    []ivalue.IValue
		types []*graph.Type
	}{
		{"aten::mul", []ivalue.IValue{iv(one), iv(one)}, []*graph.Type{tT, tT}},
		{"aten::relu", []ivalue.IValue{iv(one)}, []*graph.Type{tT}},
		{"aten::add", []ivalue.IValue{iv(mat), iv(ivalue.F32Tensor([]float32{1, 2, 3})), ivI(1)}, []*graph.Type{tT, tT, tI}},
		{"aten::add", []ivalue.IValue{iv(i64), ivF(0.5), ivI(1)}, []*graph.Type{tT, tF, tI}},
		{"aten::div", []ivalue.IValue{iv(i64), iv(i64)}, []*graph.Type{tT, tT}},
		{"aten::gt", []ivalue.IValue{iv(mat), ivF(2)}, []*graph.Type{tT, tF}},
		{"aten::where", []ivalue.IValue{iv(ivalue.BoolTensor([]bool{true, false, true})), iv(mat), ivF(0)}, []*graph.Type{tT, tT, tF}},
		{"aten::exp", []ivalue.IValue{iv(i64)}, []*graph.Type{tT}},
		{"aten::sum", []ivalue.IValue{iv(mat), ivInts(1), ivB(false), ivalue.None()}, []*graph.Type{tT, graph.ListOf(tI), tB, tN}},
		{"aten::softmax", []ivalue.IValue{iv(mat), ivI(0), ivalue.None()}, []*graph.Type{tT, tI, tN}},
		{"aten::to", []ivalue.IValue{iv(mat), ivI(ivalue.Float64.ScalarType()), ivB(false), ivB(false), ivalue.None()}, []*graph.Type{tT, tI, tB, tB, tN}},
	}
	for _, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			p, err := buildNode(t, c.kind, c.in, c.types, []*graph.Type{tT}, nil)
			require.NoError(t, err)
			require.NoError(t, p.Run())
			allocs := testing.AllocsPerRun(50, func() {
				if err := p.Run(); err != nil {
					t.Fatal(err)
				}
			})
			assert.Zero(t, allocs)
		})
	}
}

func TestBroadcastShapes(t *testing.T) {
	var buf [ops.MaxIterDims]int
	s, err := ops.BroadcastShapes(buf[:0], []int{2, 1, 4}, []int{3, 1})
	require.NoError(t, err)
	assert.Equal(t, []int{2, 3, 4}, s)
	_, err = ops.BroadcastShapes(buf[:0], []int{2}, []int{3})
	assert.Error(t, err)
	assert.Equal(t, ivalue.Float32, ops.ResultType(ivalue.I64Tensor([]int64{1}), nil, nil, ivalue.Float32))
	assert.Equal(t, ivalue.Int64, ops.PromoteTypes(ivalue.Bool, ivalue.Int64))
	assert.Equal(t, ivalue.Int16, ops.PromoteTypes(ivalue.Uint8, ivalue.Int8))
}

func BenchmarkMulRelu1Elem(b *testing.B) {
	x := ivalue.F32Tensor([]float32{1.5})
	y := ivalue.F32Tensor([]float32{-2})
	mul, err := buildNode(b, "aten::mul", []ivalue.IValue{iv(x), iv(y)}, []*graph.Type{tT, tT}, []*graph.Type{tT}, nil)
	require.NoError(b, err)
	relu, err := buildNode(b, "aten::relu", []ivalue.IValue{iv(x)}, []*graph.Type{tT}, []*graph.Type{tT}, nil)
	require.NoError(b, err)
	b.Run("mul", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			_ = mul.Kernel(mul)
		}
	})
	b.Run("relu", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			_ = relu.Kernel(relu)
		}
	})
}

// Integer checks PyTorch 1.13 makes on Scalar arguments: a negative
// integer exponent on an integral base, a float alpha on integral inputs
// (whatever its value).
func TestBinaryIntegralScalarChecks(t *testing.T) {
	i64 := func(v ...int64) ivalue.IValue { return iv(ivalue.I64Tensor(v)) }
	b := func(v ...bool) ivalue.IValue { return iv(ivalue.BoolTensor(v)) }
	runEwCases(t, []ewCase{
		{"int pow negative int scalar errors", "aten::pow", []ivalue.IValue{i64(2, 3), ivI(-1)}, []*graph.Type{tT, tI}, 0, nil, nil, "negative integer powers"},
		{"bool pow negative int scalar errors", "aten::pow", []ivalue.IValue{b(true), ivI(-1)}, []*graph.Type{tT, tI}, 0, nil, nil, "negative integer powers"},
		{"int pow zero", "aten::pow", []ivalue.IValue{i64(2, 3), ivI(0)}, []*graph.Type{tT, tI}, ivalue.Int64, []int{2}, []float64{1, 1}, ""},
		{"float pow negative int scalar", "aten::pow", []ivalue.IValue{iv(ivalue.F32Tensor([]float32{2})), ivI(-1)}, []*graph.Type{tT, tI}, ivalue.Float32, []int{1}, []float64{0.5}, ""},
		{"int pow negative int tensor", "aten::pow", []ivalue.IValue{i64(1, 2), i64(-1, -2)}, []*graph.Type{tT, tT}, ivalue.Int64, []int{2}, []float64{1, 0}, ""},
		{"int scalar pow negative int tensor", "aten::pow", []ivalue.IValue{ivI(2), i64(-1)}, []*graph.Type{tI, tT}, ivalue.Int64, []int{1}, []float64{0}, ""},
		{"alpha 1.0 on ints errors", "aten::sub", []ivalue.IValue{i64(2), i64(2), ivF(1)}, []*graph.Type{tT, tT, tF}, 0, nil, nil, "alpha"},
		{"alpha 1.0 on int scalar add errors", "aten::add", []ivalue.IValue{i64(2), ivI(3), ivF(1)}, []*graph.Type{tT, tI, tF}, 0, nil, nil, "alpha"},
	})
}
