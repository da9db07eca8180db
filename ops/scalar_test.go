package ops_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops"
)

func TestScalarOps(t *testing.T) {
	cases := []struct {
		name    string
		kind    string
		in      []ivalue.IValue
		types   []*graph.Type
		out     *graph.Type
		want    ivalue.IValue
		wantErr string
	}{
		{"add.int", "aten::add", []ivalue.IValue{ivI(2), ivI(3)}, []*graph.Type{tI, tI}, tI, ivI(5), ""},
		{"add.int_float", "aten::add", []ivalue.IValue{ivI(2), ivF(0.5)}, []*graph.Type{tI, tF}, tF, ivF(2.5), ""},
		{"add Scalar ints", "aten::add", []ivalue.IValue{ivI(2), ivI(3)}, []*graph.Type{tNum, tNum}, tNum, ivI(5), ""},
		{"add.str", "aten::add", []ivalue.IValue{ivS("a"), ivS("b")}, []*graph.Type{tS, tS}, tS, ivS("ab"), ""},
		{"div.int is float", "aten::div", []ivalue.IValue{ivI(7), ivI(2)}, []*graph.Type{tI, tI}, tF, ivF(3.5), ""},
		{"floordiv negative", "aten::floordiv", []ivalue.IValue{ivI(-7), ivI(2)}, []*graph.Type{tI, tI}, tI, ivI(-4), ""},
		{"floordiv by zero", "aten::floordiv", []ivalue.IValue{ivI(1), ivI(0)}, []*graph.Type{tI, tI}, tI, ivalue.None(), "ZeroDivisionError"},
		{"remainder python sign", "aten::remainder", []ivalue.IValue{ivI(-7), ivI(3)}, []*graph.Type{tI, tI}, tI, ivI(2), ""},
		{"pow.int is float", "aten::pow", []ivalue.IValue{ivI(2), ivI(3)}, []*graph.Type{tI, tI}, tF, ivF(8), ""},
		{"neg.float", "aten::neg", []ivalue.IValue{ivF(1.5)}, []*graph.Type{tF}, tF, ivF(-1.5), ""},
		{"lt.int_float", "aten::lt", []ivalue.IValue{ivI(2), ivF(2.5)}, []*graph.Type{tI, tF}, tB, ivB(true), ""},
		{"eq.str", "aten::eq", []ivalue.IValue{ivS("x"), ivS("x")}, []*graph.Type{tS, tS}, tB, ivB(true), ""},
		{"eq.int_list", "aten::eq", []ivalue.IValue{ivInts(1, 2), ivInts(1, 2)}, []*graph.Type{graph.ListOf(tI), graph.ListOf(tI)}, tB, ivB(true), ""},
		{"__not__", "aten::__not__", []ivalue.IValue{ivB(true)}, []*graph.Type{tB}, tB, ivB(false), ""},
		{"__and__.bool", "aten::__and__", []ivalue.IValue{ivB(true), ivB(false)}, []*graph.Type{tB, tB}, tB, ivB(false), ""},
		{"Int.float truncates", "aten::Int", []ivalue.IValue{ivF(-2.7)}, []*graph.Type{tF}, tI, ivI(-2), ""},
		{"Int.str", "aten::Int", []ivalue.IValue{ivS("42")}, []*graph.Type{tS}, tI, ivI(42), ""},
		{"Int.str bad", "aten::Int", []ivalue.IValue{ivS("x")}, []*graph.Type{tS}, tI, ivalue.None(), "invalid literal"},
		{"Float.str", "aten::Float", []ivalue.IValue{ivS("1.5")}, []*graph.Type{tS}, tF, ivF(1.5), ""},
		{"floor.float is int", "aten::floor", []ivalue.IValue{ivF(-1.5)}, []*graph.Type{tF}, tI, ivI(-2), ""},
		{"sqrt.int", "aten::sqrt", []ivalue.IValue{ivI(4)}, []*graph.Type{tI}, tF, ivF(2), ""},
		{"prim::max.int", "prim::max", []ivalue.IValue{ivI(4), ivI(7)}, []*graph.Type{tI, tI}, tI, ivI(7), ""},
		{"prim::min self_int", "prim::min", []ivalue.IValue{ivInts(4, -1, 7)}, []*graph.Type{graph.ListOf(tI)}, tI, ivI(-1), ""},
		// Expected strings from TorchScript 1.13.
		{"format", "aten::format", []ivalue.IValue{ivS("{} and {} {} {}"), ivF(1), ivI(3), ivS("x"), ivB(true)}, []*graph.Type{tS, tF, tI, tS, tB}, tS, ivS("1. and 3 x True"), ""},
		{"str float", "aten::str", []ivalue.IValue{ivF(0.1)}, []*graph.Type{tF}, tS, ivS("0.10000000000000001"), ""},
		{"str big float", "aten::str", []ivalue.IValue{ivF(1e20)}, []*graph.Type{tF}, tS, ivS("1e+20"), ""},
		{"__is__ None", "aten::__is__", []ivalue.IValue{ivalue.None(), ivalue.None()}, []*graph.Type{tN, tN}, tB, ivB(true), ""},
		{"__isnot__", "aten::__isnot__", []ivalue.IValue{ivI(1), ivalue.None()}, []*graph.Type{graph.OptionalOf(tI), tN}, tB, ivB(true), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			outs, kind, err := runNodeDyn(t, c.kind, c.in, c.types, []*graph.Type{c.out})
			if c.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, ops.Native, kind)
			assert.Equal(t, c.want.Kind(), outs[0].Kind(), "got %v", outs[0])
			assert.True(t, c.want.Equal(outs[0]), "want %v got %v", c.want, outs[0])
		})
	}
}

func TestScalarTensorConversions(t *testing.T) {
	x := ivalue.F32Tensor([]float32{2.5})
	outs, kind, err := runNode(t, "aten::Int", []ivalue.IValue{iv(x)}, []*graph.Type{tT}, []*graph.Type{tI})
	require.NoError(t, err)
	assert.Equal(t, ops.Native, kind)
	assert.Equal(t, int64(2), outs[0].Int())

	outs, _, err = runNode(t, "aten::item", []ivalue.IValue{iv(ivalue.BoolTensor([]bool{true}))}, []*graph.Type{tT}, []*graph.Type{tNum})
	require.NoError(t, err)
	assert.Equal(t, ivalue.KindBool, outs[0].Kind())

	_, _, err = runNode(t, "aten::Float", []ivalue.IValue{iv(ivalue.F32Tensor([]float32{1, 2}))}, []*graph.Type{tT}, []*graph.Type{tF})
	assert.ErrorContains(t, err, "2 elements")

	outs, _, err = runNodeDyn(t, "prim::NumToTensor", []ivalue.IValue{ivF(1.5)}, []*graph.Type{tF}, []*graph.Type{tT})
	require.NoError(t, err)
	assert.Equal(t, ivalue.Float64, outs[0].Tensor().DType())
	assert.Equal(t, 0, outs[0].Tensor().Dim())

	outs, _, err = runNode(t, "aten::scalar_tensor", []ivalue.IValue{ivI(3), ivalue.None(), ivalue.None(), ivalue.None(), ivalue.None()}, []*graph.Type{tI, tN, tN, tN, tN}, []*graph.Type{tT})
	require.NoError(t, err)
	assert.Equal(t, ivalue.Float32, outs[0].Tensor().DType())
	assert.Equal(t, []float64{3}, outs[0].Tensor().Float64s())

	m := ivalue.F32Tensor([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	outs, _, err = runNode(t, "aten::size", []ivalue.IValue{iv(m)}, []*graph.Type{tT}, []*graph.Type{graph.ListOf(tI)})
	require.NoError(t, err)
	assert.Equal(t, "[2, 3]", outs[0].String())
	outs, _, err = runNode(t, "aten::size", []ivalue.IValue{iv(m), ivI(-1)}, []*graph.Type{tT, tI}, []*graph.Type{tI})
	require.NoError(t, err)
	assert.Equal(t, int64(3), outs[0].Int())
	_, _, err = runNode(t, "aten::size", []ivalue.IValue{iv(m), ivI(2)}, []*graph.Type{tT, tI}, []*graph.Type{tI})
	assert.ErrorContains(t, err, "out of range")
	outs, _, err = runNode(t, "prim::dtype", []ivalue.IValue{iv(m)}, []*graph.Type{tT}, []*graph.Type{tI})
	require.NoError(t, err)
	assert.Equal(t, int64(6), outs[0].Int())
}

func TestScalarToConversions(t *testing.T) {
	m := ivalue.F32Tensor([]float32{1.7, -2.7}, 2)
	toTypes := []*graph.Type{tT, tI, tB, tB, tN}
	// Same dtype, copy=False: aliases self (native).
	outs, kind, err := runNode(t, "aten::to", []ivalue.IValue{iv(m), ivI(ivalue.Float32.ScalarType()), ivB(false), ivB(false), ivalue.None()}, toTypes, []*graph.Type{tT})
	require.NoError(t, err)
	assert.Equal(t, ops.Native, kind)
	assert.Same(t, m, outs[0].Tensor())
	// Different dtype: converted copy, truncating as PyTorch.
	outs, _, err = runNode(t, "aten::to", []ivalue.IValue{iv(m), ivI(ivalue.Int64.ScalarType()), ivB(false), ivB(false), ivalue.None()}, toTypes, []*graph.Type{tT})
	require.NoError(t, err)
	assert.Equal(t, ivalue.Int64, outs[0].Tensor().DType())
	assert.Equal(t, []float64{1, -2}, outs[0].Tensor().Float64s())
	// copy=True copies.
	outs, _, err = runNode(t, "aten::to", []ivalue.IValue{iv(m), ivI(ivalue.Float32.ScalarType()), ivB(false), ivB(true), ivalue.None()}, toTypes, []*graph.Type{tT})
	require.NoError(t, err)
	assert.NotSame(t, m, outs[0].Tensor())
	// static_runtime::to_copy always writes its own (out variant) tensor.
	outs, kind, err = runNode(t, "static_runtime::to_copy", []ivalue.IValue{iv(m), ivI(ivalue.Float32.ScalarType()), ivB(false), ivB(false), ivalue.None()}, toTypes, []*graph.Type{tT})
	require.NoError(t, err)
	assert.Equal(t, ops.OutVariant, kind)
	assert.NotSame(t, m, outs[0].Tensor())
	assert.Equal(t, []float64{float64(float32(1.7)), float64(float32(-2.7))}, outs[0].Tensor().Float64s())
	// to.other and type_as take the other tensor's dtype.
	outs, _, err = runNode(t, "aten::type_as", []ivalue.IValue{iv(m), iv(ivalue.BoolTensor([]bool{true}))}, []*graph.Type{tT, tT}, []*graph.Type{tT})
	require.NoError(t, err)
	assert.Equal(t, ivalue.Bool, outs[0].Tensor().DType())
	// dtype_layout with Nones and a transposed input.
	tr := transposed([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	outs, _, err = runNode(t, "aten::to", []ivalue.IValue{iv(tr), ivI(ivalue.Float64.ScalarType()), ivalue.None(), ivalue.None(), ivalue.None(), ivB(false), ivB(false), ivalue.None()},
		[]*graph.Type{tT, tI, tN, tN, tN, tB, tB, tN}, []*graph.Type{tT})
	require.NoError(t, err)
	assert.Equal(t, []float64{1, 4, 2, 5, 3, 6}, outs[0].Tensor().Float64s())
	// contiguous: self when contiguous, a copy otherwise.
	outs, _, err = runNode(t, "aten::contiguous", []ivalue.IValue{iv(tr), ivI(0)}, []*graph.Type{tT, tI}, []*graph.Type{tT})
	require.NoError(t, err)
	assert.True(t, outs[0].Tensor().IsContiguous())
	assert.Equal(t, []float64{1, 4, 2, 5, 3, 6}, outs[0].Tensor().Float64s())
	outs, _, err = runNode(t, "aten::dropout", []ivalue.IValue{iv(m), ivF(0.5), ivB(false)}, []*graph.Type{tT, tF, tB}, []*graph.Type{tT})
	require.NoError(t, err)
	assert.Same(t, m, outs[0].Tensor())
}
