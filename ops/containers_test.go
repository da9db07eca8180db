package ops_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops"
)

func TestContainersOps(t *testing.T) {
	il := graph.ListOf(tI)
	outs, _, err := runNodeDyn(t, "prim::ListConstruct", []ivalue.IValue{ivI(1), ivI(2)}, []*graph.Type{tI, tI}, []*graph.Type{il})
	require.NoError(t, err)
	assert.Equal(t, "[1, 2]", outs[0].String())

	outs, _, err = runNodeDyn(t, "prim::TupleUnpack", []ivalue.IValue{ivalue.NewTuple(ivI(1), ivS("a"))}, []*graph.Type{graph.TupleOf(tI, tS)}, []*graph.Type{tI, tS})
	require.NoError(t, err)
	assert.Equal(t, int64(1), outs[0].Int())
	assert.Equal(t, "a", outs[1].Str())
	_, _, err = runNodeDyn(t, "prim::ListUnpack", []ivalue.IValue{ivInts(1, 2, 3)}, []*graph.Type{il}, []*graph.Type{tI, tI})
	assert.ErrorContains(t, err, "expected 2 elements")

	outs, _, err = runNodeDyn(t, "aten::__getitem__", []ivalue.IValue{ivInts(1, 2, 3), ivI(-1)}, []*graph.Type{il, tI}, []*graph.Type{tI})
	require.NoError(t, err)
	assert.Equal(t, int64(3), outs[0].Int())
	_, _, err = runNodeDyn(t, "aten::__getitem__", []ivalue.IValue{ivInts(1), ivI(5)}, []*graph.Type{il, tI}, []*graph.Type{tI})
	assert.ErrorContains(t, err, "out of range")

	l := ivInts(1)
	outs, _, err = runNodeDyn(t, "aten::append", []ivalue.IValue{l, ivI(9)}, []*graph.Type{il, tI}, []*graph.Type{il})
	require.NoError(t, err)
	assert.Equal(t, "[1, 9]", l.String(), "append mutates in place")
	assert.Equal(t, l.List(), outs[0].List())

	// Python slicing, expected from Python: [0,1,2,3,4][::-2] == [4, 2, 0], [1:-1] == [1, 2, 3].
	src := ivInts(0, 1, 2, 3, 4)
	outs, _, err = runNodeDyn(t, "aten::slice", []ivalue.IValue{src, ivalue.None(), ivalue.None(), ivI(-2)}, []*graph.Type{il, graph.OptionalOf(tI), graph.OptionalOf(tI), tI}, []*graph.Type{il})
	require.NoError(t, err)
	assert.Equal(t, "[4, 2, 0]", outs[0].String())
	outs, _, err = runNodeDyn(t, "aten::slice", []ivalue.IValue{src, ivI(1), ivI(-1), ivI(1)}, []*graph.Type{il, graph.OptionalOf(tI), graph.OptionalOf(tI), tI}, []*graph.Type{il})
	require.NoError(t, err)
	assert.Equal(t, "[1, 2, 3]", outs[0].String())

	dt := graph.DictOf(tS, tI)
	outs, _, err = runNodeDyn(t, "prim::DictConstruct", []ivalue.IValue{ivS("a"), ivI(1), ivS("b"), ivI(2)}, []*graph.Type{tS, tI, tS, tI}, []*graph.Type{dt})
	require.NoError(t, err)
	d := outs[0]
	outs, _, err = runNodeDyn(t, "aten::__getitem__", []ivalue.IValue{d, ivS("b")}, []*graph.Type{dt, tS}, []*graph.Type{tI})
	require.NoError(t, err)
	assert.Equal(t, int64(2), outs[0].Int())
	outs, _, err = runNodeDyn(t, "aten::__contains__", []ivalue.IValue{d, ivS("z")}, []*graph.Type{dt, tS}, []*graph.Type{tB})
	require.NoError(t, err)
	assert.False(t, outs[0].Bool())
	outs, _, err = runNodeDyn(t, "aten::len", []ivalue.IValue{d}, []*graph.Type{dt}, []*graph.Type{tI})
	require.NoError(t, err)
	assert.Equal(t, int64(2), outs[0].Int())

	_, _, err = runNodeDyn(t, "prim::RaiseException", []ivalue.IValue{ivS("bad input"), ivS("builtins.ValueError")}, []*graph.Type{tS, graph.OptionalOf(tS)}, nil)
	var se *ops.ScriptException
	require.True(t, errors.As(err, &se))
	assert.Equal(t, "ValueError: bad input", err.Error())
}

func TestContainersSteadyStateAllocs(t *testing.T) {
	p, err := buildNode(t, "prim::ListConstruct", []ivalue.IValue{ivI(1), ivI(2), ivI(3)}, []*graph.Type{tI, tI, tI}, []*graph.Type{graph.ListOf(tI)}, []bool{false, false, false})
	require.NoError(t, err)
	require.NoError(t, p.Run())
	assert.Zero(t, testing.AllocsPerRun(50, func() { _ = p.Run() }))
	m := ivalue.F32Tensor([]float32{1, 2}, 1, 2)
	p, err = buildNode(t, "aten::size", []ivalue.IValue{iv(m)}, []*graph.Type{tT}, []*graph.Type{graph.ListOf(tI)}, nil)
	require.NoError(t, err)
	require.NoError(t, p.Run())
	assert.Zero(t, testing.AllocsPerRun(50, func() { _ = p.Run() }))
}
