package ops_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// Expected values below were printed by PyTorch 1.13's TorchScript
// (torch.jit.script functions calling str.find / startswith / endswith /
// rfind, for ... in range(lo, hi, step), dict methods, torch.device).

func TestLangStringFind(t *testing.T) {
	args4 := []*graph.Type{tS, tS, tI, tI}
	for _, c := range []struct {
		s, sub     string
		start, end int64
		find       int64
		rfind      int64
	}{
		{"hello world", "o", 0, -1, 4, 7},
		{"hello world", "o", 5, -1, 7, 7},
		{"hello world", "d", 0, -1, 10, 10},
		{"hello world", "d", 0, 10, -1, -1},
		{"hello", "", 0, -1, 0, 5},
		{"hello", "", 10, -1, 10, 10},
		{"hello", "l", -3, -1, 2, 3},
		{"hello", "lo", -2, 5, 3, 3},
		{"hello", "h", -100, -1, 0, 0},
		{"hello", "x", 0, -1, -1, -1},
		{"abc", "c", 0, -5, -1, -1},
		{"abc", "", 3, 3, 3, 3},
		{"hello", "l", 3, 1, -1, -1},
		{"hello", "he", 0, -1, 0, 0},
		{"hello", "lo", 0, -1, 3, 3},
		{"hello", "o", -1, -1, 4, 4},
		{"hello", "hello", 1, -1, -1, -1},
	} {
		in := []ivalue.IValue{ivS(c.s), ivS(c.sub), ivI(c.start), ivI(c.end)}
		outs, _, err := runNodeDyn(t, "aten::find", in, args4, []*graph.Type{tI})
		require.NoError(t, err, "%v", c)
		assert.Equal(t, c.find, outs[0].Int(), "find %v", c)
		outs, _, err = runNodeDyn(t, "aten::rfind", in, args4, []*graph.Type{tI})
		require.NoError(t, err, "%v", c)
		assert.Equal(t, c.rfind, outs[0].Int(), "rfind %v", c)
	}
	// std::string::substr throws when start passes the end of a non-empty range.
	_, _, err := runNodeDyn(t, "aten::find", []ivalue.IValue{ivS("abc"), ivS(""), ivI(4), ivI(100)}, args4, []*graph.Type{tI})
	assert.ErrorContains(t, err, "out of range")
}

func TestLangStartsEndsWith(t *testing.T) {
	args4 := []*graph.Type{tS, tS, tI, tI}
	for _, c := range []struct {
		s, sub     string
		start, end int64
		sw, ew     bool
	}{
		{"hello", "l", 3, 1, true, false}, // end < start: s[start:]
		{"hello", "he", 0, -1, true, false},
		{"hello", "lo", 0, -1, false, true},
		{"hello", "lo", 0, 4, false, false},
		{"hello", "", 5, -1, true, true},
		{"hello", "o", -1, -1, true, true},
		{"hello", "hello", 1, -1, false, false},
		{"hello", "l", -100, 2, false, false},
	} {
		in := []ivalue.IValue{ivS(c.s), ivS(c.sub), ivI(c.start), ivI(c.end)}
		outs, _, err := runNodeDyn(t, "aten::startswith", in, args4, []*graph.Type{tB})
		require.NoError(t, err)
		assert.Equal(t, c.sw, outs[0].Bool(), "startswith %v", c)
		outs, _, err = runNodeDyn(t, "aten::endswith", in, args4, []*graph.Type{tB})
		require.NoError(t, err)
		assert.Equal(t, c.ew, outs[0].Bool(), "endswith %v", c)
	}
	_, _, err := runNodeDyn(t, "aten::startswith", []ivalue.IValue{ivS("hello"), ivS("l"), ivI(6), ivI(-1)}, args4, []*graph.Type{tB})
	assert.ErrorContains(t, err, "out of range")
}

func TestLangRange(t *testing.T) {
	for _, c := range []struct{ lo, hi, step, n int64 }{
		{0, 10, 3, 4}, {10, 0, -3, 4}, {0, 0, 1, 0}, {5, 1, 1, 0}, {-5, 5, 2, 5}, {3, -7, -4, 3}, {0, 1, 100, 1},
	} {
		outs, _, err := runNodeDyn(t, "aten::__range_length", []ivalue.IValue{ivI(c.lo), ivI(c.hi), ivI(c.step)}, []*graph.Type{tI, tI, tI}, []*graph.Type{tI})
		require.NoError(t, err)
		assert.Equal(t, c.n, outs[0].Int(), "%v", c)
		// the last index maps to the last value range() yields
		if c.n > 0 {
			outs, _, err = runNodeDyn(t, "aten::__derive_index", []ivalue.IValue{ivI(c.n - 1), ivI(c.lo), ivI(c.step)}, []*graph.Type{tI, tI, tI}, []*graph.Type{tI})
			require.NoError(t, err)
			last := outs[0].Int()
			assert.True(t, (c.step > 0 && last < c.hi && last+c.step >= c.hi) || (c.step < 0 && last > c.hi && last+c.step <= c.hi), "%v: last %d", c, last)
		}
	}
	_, _, err := runNodeDyn(t, "aten::__range_length", []ivalue.IValue{ivI(0), ivI(3), ivI(0)}, []*graph.Type{tI, tI, tI}, []*graph.Type{tI})
	assert.ErrorContains(t, err, "must not be zero")
}

func TestLangDict(t *testing.T) {
	dt := graph.DictOf(tS, tI)
	mk := func(kv ...any) ivalue.IValue {
		d := &ivalue.Dict{}
		for i := 0; i < len(kv); i += 2 {
			d.Set(ivS(kv[i].(string)), ivI(int64(kv[i+1].(int))))
		}
		return ivalue.DictOf(d)
	}
	outs, _, err := runNodeDyn(t, "aten::dict", nil, nil, []*graph.Type{graph.DictOf(tS, tT)})
	require.NoError(t, err)
	require.NotNil(t, outs[0].Dict())
	assert.Empty(t, outs[0].Dict().Keys)

	// PyTorch: x = {"a": 1, "b": 2}; y = dict(x); y["c"] = 3;
	// x.update({"a": 10, "z": 26}) -> x.items() == [("a", 10), ("b", 2), ("z", 26)],
	// x.get("q") is None, x.get("q", 7) == 7, y == {"a": 1, "b": 2, "c": 3}.
	x := mk("a", 1, "b", 2)
	outs, _, err = runNodeDyn(t, "aten::dict", []ivalue.IValue{x}, []*graph.Type{dt}, []*graph.Type{dt})
	require.NoError(t, err)
	y := outs[0]
	y.Dict().Set(ivS("c"), ivI(3))
	_, _, err = runNodeDyn(t, "aten::update", []ivalue.IValue{x, mk("a", 10, "z", 26)}, []*graph.Type{dt, dt}, nil)
	require.NoError(t, err)
	outs, _, err = runNodeDyn(t, "aten::items", []ivalue.IValue{x}, []*graph.Type{dt}, []*graph.Type{graph.ListOf(graph.TupleOf(tS, tI))})
	require.NoError(t, err)
	assert.Equal(t, `[("a", 10), ("b", 2), ("z", 26)]`, outs[0].String())
	assert.Len(t, y.Dict().Keys, 3)
	assert.Len(t, x.Dict().Keys, 3, "dict() copies")
	outs, _, err = runNodeDyn(t, "aten::get", []ivalue.IValue{x, ivS("q")}, []*graph.Type{dt, tS}, []*graph.Type{graph.OptionalOf(tI)})
	require.NoError(t, err)
	assert.True(t, outs[0].IsNone())
	outs, _, err = runNodeDyn(t, "aten::get", []ivalue.IValue{x, ivS("q"), ivI(7)}, []*graph.Type{dt, tS, tI}, []*graph.Type{tI})
	require.NoError(t, err)
	assert.Equal(t, int64(7), outs[0].Int())
	outs, _, err = runNodeDyn(t, "aten::get", []ivalue.IValue{x, ivS("z"), ivI(7)}, []*graph.Type{dt, tS, tI}, []*graph.Type{tI})
	require.NoError(t, err)
	assert.Equal(t, int64(26), outs[0].Int())
	// dict(list of pairs)
	pairs := ivalue.NewList(ivalue.NewTuple(ivS("k"), ivI(1)), ivalue.NewTuple(ivS("k"), ivI(2)))
	outs, _, err = runNodeDyn(t, "aten::dict", []ivalue.IValue{pairs}, []*graph.Type{graph.ListOf(graph.TupleOf(tS, tI))}, []*graph.Type{dt})
	require.NoError(t, err)
	v, ok := outs[0].Dict().Get(ivS("k"))
	require.True(t, ok)
	assert.Equal(t, int64(2), v.Int())
}

func TestLangDeviceAndMeta(t *testing.T) {
	for _, c := range []struct {
		s   string
		err string
	}{
		{"cpu", ""}, {"cuda:1", ""}, {"meta:3", ""},
		{"cuda:01", "Invalid device string"}, {"cpu:", "Invalid device string"}, {"cpu:-1", "Invalid device string"},
		{"gpu", "Expected one of cpu"},
	} {
		outs, _, err := runNodeDyn(t, "aten::device", []ivalue.IValue{ivS(c.s)}, []*graph.Type{tS}, []*graph.Type{graph.Device})
		if c.err != "" {
			assert.ErrorContains(t, err, c.err, c.s)
			continue
		}
		require.NoError(t, err, c.s)
		assert.Equal(t, ivalue.KindDevice, outs[0].Kind())
		assert.Equal(t, c.s, outs[0].Str())
	}
	for _, c := range []struct {
		dt ivalue.DType
		fp bool
	}{{ivalue.Float32, true}, {ivalue.Float64, true}, {ivalue.Int64, false}, {ivalue.Bool, false}} {
		x := ivalue.NewTensor(c.dt, 2)
		outs, _, err := runNodeDyn(t, "aten::is_floating_point", []ivalue.IValue{iv(x)}, []*graph.Type{tT}, []*graph.Type{tB})
		require.NoError(t, err)
		assert.Equal(t, c.fp, outs[0].Bool(), c.dt.String())
	}
	outs, _, err := runNodeDyn(t, "aten::is_autocast_enabled", nil, nil, []*graph.Type{tB})
	require.NoError(t, err)
	assert.False(t, outs[0].Bool())
	outs, _, err = runNodeDyn(t, "prim::is_nested", []ivalue.IValue{iv(ivalue.NewTensor(ivalue.Float32, 1))}, []*graph.Type{tT}, []*graph.Type{tB})
	require.NoError(t, err)
	assert.False(t, outs[0].Bool())
}

func TestLangAllAny(t *testing.T) {
	// Python: all([True, False]) False, any([True, False]) True, all([]) True,
	// any([]) False, all([1, 2]) True, any([0, 0.0]) False, any(["", "a"]) True.
	for _, c := range []struct {
		l        ivalue.IValue
		et       *graph.Type
		all, any bool
	}{
		{ivalue.NewList(ivB(true), ivB(false)), tB, false, true},
		{ivalue.NewList(), tB, true, false},
		{ivInts(1, 2), tI, true, true},
		{ivalue.NewList(ivF(0), ivF(0.5)), graph.Float, false, true},
		{ivalue.NewList(ivS(""), ivS("a")), tS, false, true},
	} {
		lt := []*graph.Type{graph.ListOf(c.et)}
		outs, _, err := runNodeDyn(t, "aten::all", []ivalue.IValue{c.l}, lt, []*graph.Type{tB})
		require.NoError(t, err)
		assert.Equal(t, c.all, outs[0].Bool(), "all %s", c.l)
		outs, _, err = runNodeDyn(t, "aten::any", []ivalue.IValue{c.l}, lt, []*graph.Type{tB})
		require.NoError(t, err)
		assert.Equal(t, c.any, outs[0].Bool(), "any %s", c.l)
	}
}

func TestLangDropoutInPlace(t *testing.T) {
	x := ivalue.F32Tensor([]float32{1, -2, 3}, 3)
	for _, op := range []string{"aten::dropout_", "aten::feature_dropout_", "aten::alpha_dropout_", "aten::feature_alpha_dropout_", "aten::feature_alpha_dropout"} {
		outs, _, err := runNodeDyn(t, op, []ivalue.IValue{iv(x), ivF(0.5), ivB(false)}, []*graph.Type{tT, graph.Float, tB}, []*graph.Type{tT})
		require.NoError(t, err, op)
		assert.Equal(t, []float64{1, -2, 3}, outs[0].Tensor().Float64s(), op)
		_, _, err = runNodeDyn(t, op, []ivalue.IValue{iv(x), ivF(0.5), ivB(true)}, []*graph.Type{tT, graph.Float, tB}, []*graph.Type{tT})
		assert.ErrorContains(t, err, "train=True", op)
	}
}

func TestLangSteadyStateAllocs(t *testing.T) {
	d := &ivalue.Dict{}
	d.Set(ivS("a"), ivI(1))
	d.Set(ivS("b"), ivI(2))
	dt := graph.DictOf(tS, tI)
	for _, c := range []struct {
		op   string
		in   []ivalue.IValue
		ts   []*graph.Type
		outs []*graph.Type
	}{
		{"aten::items", []ivalue.IValue{ivalue.DictOf(d)}, []*graph.Type{dt}, []*graph.Type{graph.ListOf(graph.TupleOf(tS, tI))}},
		{"aten::dict", []ivalue.IValue{ivalue.DictOf(d)}, []*graph.Type{dt}, []*graph.Type{dt}},
		{"aten::dict", nil, nil, []*graph.Type{graph.DictOf(tS, tT)}},
		{"aten::find", []ivalue.IValue{ivS("hello"), ivS("l"), ivI(0), ivI(-1)}, []*graph.Type{tS, tS, tI, tI}, []*graph.Type{tI}},
		{"aten::__range_length", []ivalue.IValue{ivI(0), ivI(10), ivI(3)}, []*graph.Type{tI, tI, tI}, []*graph.Type{tI}},
	} {
		p, err := buildNode(t, c.op, c.in, c.ts, c.outs, make([]bool, len(c.in)))
		require.NoError(t, err, c.op)
		require.NoError(t, p.Run())
		assert.Zero(t, testing.AllocsPerRun(50, func() { _ = p.Run() }), c.op)
	}
}

func TestLangListCopy(t *testing.T) {
	// Python: a = [1, 2]; b = a.copy(); b.append(3) leaves a == [1, 2].
	a := ivInts(1, 2)
	il := graph.ListOf(tI)
	outs, _, err := runNodeDyn(t, "aten::copy", []ivalue.IValue{a}, []*graph.Type{il}, []*graph.Type{il})
	require.NoError(t, err)
	b := outs[0]
	b.List().Items = append(b.List().Items, ivI(3))
	assert.Equal(t, "[1, 2]", a.String())
	assert.Equal(t, "[1, 2, 3]", b.String())
}

func TestLangSumList(t *testing.T) {
	// Python: sum([3, -1, 4]) == 6, sum([True, True, False]) == 2,
	// sum([0.1, 0.2, 0.3]) == 0.6000000000000001, sum([]) == 0.
	outs, _, err := runNodeDyn(t, "aten::sum", []ivalue.IValue{ivInts(3, -1, 4)}, []*graph.Type{graph.ListOf(tI)}, []*graph.Type{tI})
	require.NoError(t, err)
	assert.Equal(t, int64(6), outs[0].Int())
	outs, _, err = runNodeDyn(t, "aten::sum", []ivalue.IValue{ivalue.NewList(ivB(true), ivB(true), ivB(false))}, []*graph.Type{graph.ListOf(tB)}, []*graph.Type{tI})
	require.NoError(t, err)
	assert.Equal(t, int64(2), outs[0].Int())
	outs, _, err = runNodeDyn(t, "aten::sum", []ivalue.IValue{ivalue.NewList(ivF(0.1), ivF(0.2), ivF(0.3))}, []*graph.Type{graph.ListOf(graph.Float)}, []*graph.Type{graph.Float})
	require.NoError(t, err)
	assert.Equal(t, 0.6000000000000001, outs[0].Double())
	outs, _, err = runNodeDyn(t, "aten::sum", []ivalue.IValue{ivalue.NewList()}, []*graph.Type{graph.ListOf(tI)}, []*graph.Type{tI})
	require.NoError(t, err)
	assert.Equal(t, int64(0), outs[0].Int())
}
