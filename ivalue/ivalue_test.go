package ivalue

import (
	"math"
	"testing"

	"github.com/gosr/gosr/internal/raceflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKindString(t *testing.T) {
	cases := map[Kind]string{
		KindNone: "None", KindTensor: "Tensor", KindInt: "int", KindDouble: "float",
		KindBool: "bool", KindString: "str", KindDevice: "Device", KindList: "List",
		KindTuple: "Tuple", KindDict: "Dict", KindObject: "Object", Kind(99): "Kind(99)",
	}
	for k, want := range cases {
		assert.Equal(t, want, k.String())
	}
}

func TestConstructorsAndAccessors(t *testing.T) {
	tn := F32Tensor([]float32{1, 2})
	l := &List{Items: []IValue{FromInt(1)}}
	d := &Dict{}
	type obj struct{ n int }
	o := &obj{3}
	cases := []struct {
		name     string
		v        IValue
		kind     Kind
		isNumber bool
		check    func(t *testing.T, v IValue)
	}{
		{"None", None(), KindNone, false, func(t *testing.T, v IValue) {
			assert.True(t, v.IsNone())
			assert.Equal(t, IValue{}, v)
			assert.Nil(t, v.Tensor())
			assert.Nil(t, v.List())
			assert.Nil(t, v.Dict())
		}},
		{"nil tensor is None", FromTensor(nil), KindNone, false, func(t *testing.T, v IValue) {
			assert.True(t, v.IsNone())
			assert.False(t, v.IsTensor())
		}},
		{"tensor", FromTensor(tn), KindTensor, false, func(t *testing.T, v IValue) {
			assert.True(t, v.IsTensor())
			assert.Same(t, tn, v.Tensor())
		}},
		{"int", FromInt(-7), KindInt, true, func(t *testing.T, v IValue) {
			assert.Equal(t, int64(-7), v.Int())
		}},
		{"max int", FromInt(math.MaxInt64), KindInt, true, func(t *testing.T, v IValue) {
			assert.Equal(t, int64(math.MaxInt64), v.Int())
			assert.Equal(t, int64(math.MaxInt64), v.AsInt())
		}},
		{"double", FromDouble(-2.5), KindDouble, true, func(t *testing.T, v IValue) {
			assert.Equal(t, -2.5, v.Double())
		}},
		{"double -0", FromDouble(math.Copysign(0, -1)), KindDouble, true, func(t *testing.T, v IValue) {
			assert.True(t, math.Signbit(v.Double()))
		}},
		{"bool true", FromBool(true), KindBool, true, func(t *testing.T, v IValue) {
			assert.True(t, v.Bool())
			assert.Equal(t, int64(1), v.Int())
		}},
		{"bool false", FromBool(false), KindBool, true, func(t *testing.T, v IValue) {
			assert.False(t, v.Bool())
			assert.Equal(t, int64(0), v.Int())
		}},
		{"string", FromString("hi"), KindString, false, func(t *testing.T, v IValue) {
			assert.Equal(t, "hi", v.Str())
		}},
		{"device", FromDevice("cuda:0"), KindDevice, false, func(t *testing.T, v IValue) {
			assert.Equal(t, "cuda:0", v.Str())
		}},
		{"ListOf", ListOf(l), KindList, false, func(t *testing.T, v IValue) {
			assert.Same(t, l, v.List())
		}},
		{"TupleOf", TupleOf(l), KindTuple, false, func(t *testing.T, v IValue) {
			assert.Same(t, l, v.List())
		}},
		{"NewList", NewList(FromInt(1), FromBool(true)), KindList, false, func(t *testing.T, v IValue) {
			require.Len(t, v.List().Items, 2)
			assert.Equal(t, KindBool, v.List().Items[1].Kind())
		}},
		{"NewTuple", NewTuple(), KindTuple, false, func(t *testing.T, v IValue) {
			assert.Empty(t, v.List().Items)
		}},
		{"dict", DictOf(d), KindDict, false, func(t *testing.T, v IValue) {
			assert.Same(t, d, v.Dict())
			assert.Same(t, d, v.Ref())
		}},
		{"object", Object(o), KindObject, false, func(t *testing.T, v IValue) {
			assert.Same(t, o, v.Ref())
			assert.Nil(t, v.Dict())
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.kind, c.v.Kind())
			assert.Equal(t, c.isNumber, c.v.IsNumber())
			c.check(t, c.v)
		})
	}
}

func TestNewListNoCopy(t *testing.T) {
	items := []IValue{FromInt(1), FromInt(2)}
	v := NewList(items...)
	items[0] = FromInt(10)
	assert.Equal(t, int64(10), v.List().Items[0].Int())
}

func TestAsFloatAsInt(t *testing.T) {
	cases := []struct {
		v     IValue
		f     float64
		i     int64
		label string
	}{
		{FromInt(3), 3, 3, "int"},
		{FromInt(-4), -4, -4, "negative int"},
		{FromDouble(2.75), 2.75, 2, "float truncates"},
		{FromDouble(-2.75), -2.75, -2, "negative float truncates toward 0"},
		{FromBool(true), 1, 1, "true"},
		{FromBool(false), 0, 0, "false"},
		{FromInt(1 << 53), 1 << 53, 1 << 53, "2^53"},
	}
	for _, c := range cases {
		assert.Equal(t, c.f, c.v.AsFloat(), c.label)
		assert.Equal(t, c.i, c.v.AsInt(), c.label)
	}
}

func TestEqual(t *testing.T) {
	a := F32Tensor([]float32{1, 2})
	b := F32Tensor([]float32{1, 2}) // same values, different tensor
	l := &List{Items: []IValue{FromInt(1)}}
	d := &Dict{}
	nan := FromDouble(math.NaN())
	cases := []struct {
		name string
		x, y IValue
		want bool
	}{
		{"None", None(), None(), true},
		{"None vs int", None(), FromInt(0), false},
		{"int", FromInt(3), FromInt(3), true},
		{"int differs", FromInt(3), FromInt(4), false},
		{"int float", FromInt(3), FromDouble(3), true},
		{"float int", FromDouble(3.5), FromInt(3), false},
		{"int bool", FromInt(1), FromBool(true), true},
		{"bool int 0", FromBool(false), FromInt(0), true},
		{"bool float", FromBool(true), FromDouble(1), true},
		{"bool int 2", FromBool(true), FromInt(2), false},
		{"bool", FromBool(true), FromBool(true), true},
		{"bool differs", FromBool(true), FromBool(false), false},
		{"float", FromDouble(0.1), FromDouble(0.1), true},
		{"float zeros", FromDouble(0), FromDouble(math.Copysign(0, -1)), true},
		{"nan", nan, nan, false},
		{"string", FromString("a"), FromString("a"), true},
		{"string differs", FromString("a"), FromString("b"), false},
		{"string vs device", FromString("cpu"), FromDevice("cpu"), false},
		{"string vs int", FromString("1"), FromInt(1), false},
		{"device", FromDevice("cpu"), FromDevice("cpu"), true},
		{"tensor same", FromTensor(a), FromTensor(a), true},
		{"tensor equal values", FromTensor(a), FromTensor(b), false},
		{"tuple by value", NewTuple(FromInt(1), FromString("x")), NewTuple(FromDouble(1), FromString("x")), true},
		{"tuple differs", NewTuple(FromInt(1), FromString("x")), NewTuple(FromInt(1), FromString("y")), false},
		{"tuple length", NewTuple(FromInt(1)), NewTuple(FromInt(1), FromInt(1)), false},
		{"nested tuple", NewTuple(NewTuple(FromInt(1)), None()), NewTuple(NewTuple(FromInt(1)), None()), true},
		{"tuple of tensors by identity", NewTuple(FromTensor(a)), NewTuple(FromTensor(b)), false},
		{"empty tuples", NewTuple(), NewTuple(), true},
		{"list same", ListOf(l), ListOf(l), true},
		{"list by identity", NewList(FromInt(1)), NewList(FromInt(1)), false},
		{"list vs tuple", ListOf(l), TupleOf(l), false},
		{"dict same", DictOf(d), DictOf(d), true},
		{"dict by identity", DictOf(&Dict{}), DictOf(&Dict{}), false},
		{"object same", Object(d), Object(d), true},
		{"object differs", Object(1), Object(2), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, c.x.Equal(c.y))
			assert.Equal(t, c.want, c.y.Equal(c.x), "symmetric")
		})
	}
}

func TestDictGetSet(t *testing.T) {
	var d Dict
	_, ok := d.Get(FromString("a"))
	assert.False(t, ok)

	d.Set(FromString("a"), FromInt(1))
	d.Set(FromInt(2), FromString("two"))
	d.Set(NewTuple(FromInt(1), FromInt(2)), FromBool(true))
	d.Set(FromString("b"), None())

	v, ok := d.Get(FromString("a"))
	require.True(t, ok)
	assert.Equal(t, int64(1), v.Int())

	// Number keys match across int, float and bool, as in Python.
	v, ok = d.Get(FromDouble(2))
	require.True(t, ok)
	assert.Equal(t, "two", v.Str())

	// Tuple keys match by value.
	v, ok = d.Get(NewTuple(FromInt(1), FromInt(2)))
	require.True(t, ok)
	assert.True(t, v.Bool())

	v, ok = d.Get(FromString("b"))
	require.True(t, ok)
	assert.True(t, v.IsNone())

	_, ok = d.Get(FromString("c"))
	assert.False(t, ok)

	// Set replaces in place, keeping insertion order.
	d.Set(FromString("a"), FromInt(10))
	d.Set(FromBool(true), FromString("one")) // True == 1 is a new key here (no key 1)
	require.Len(t, d.Keys, 5)
	assert.Equal(t, []string{`"a"`, "2", "(1, 2)", `"b"`, "True"}, keyStrings(&d))
	v, _ = d.Get(FromString("a"))
	assert.Equal(t, int64(10), v.Int())
	v, ok = d.Get(FromInt(1))
	require.True(t, ok)
	assert.Equal(t, "one", v.Str())
	assert.Len(t, d.Values, len(d.Keys))
}

func keyStrings(d *Dict) []string {
	s := make([]string, len(d.Keys))
	for i, k := range d.Keys {
		s[i] = k.String()
	}
	return s
}

func TestClone(t *testing.T) {
	data := []float32{1, 2, 3, 4, 5, 6}
	src := F32Tensor(data, 2, 3)
	var view Tensor
	view.SetView(src, 0, []int{3, 2}, []int{1, 3})

	inner := NewList(FromTensor(src), FromInt(7))
	d := &Dict{}
	d.Set(FromString("t"), FromTensor(src))
	d.Set(FromString("l"), inner)
	orig := NewTuple(FromTensor(&view), inner, DictOf(d), FromString("s"), FromDouble(1.5), None())

	c := orig.Clone()
	require.Equal(t, KindTuple, c.Kind())
	items := c.List().Items
	require.Len(t, items, 6)
	assert.NotSame(t, orig.List(), c.List())

	// The transposed view becomes a contiguous copy in logical order.
	ct := items[0].Tensor()
	assert.NotSame(t, &view, ct)
	assert.False(t, ct.SharesStorage(src))
	assert.True(t, ct.IsContiguous())
	assert.Equal(t, []int{3, 2}, ct.Sizes())
	assert.Equal(t, []float64{1, 4, 2, 5, 3, 6}, ct.Float64s())

	// Nested list: new List, new tensor.
	assert.Equal(t, KindList, items[1].Kind())
	assert.NotSame(t, inner.List(), items[1].List())
	lt := items[1].List().Items[0].Tensor()
	assert.False(t, lt.SharesStorage(src))
	assert.Equal(t, int64(7), items[1].List().Items[1].Int())

	// Dict: new Dict, keys and values copied, tensors deep.
	cd := items[2].Dict()
	require.NotNil(t, cd)
	assert.NotSame(t, d, cd)
	dt, ok := cd.Get(FromString("t"))
	require.True(t, ok)
	assert.False(t, dt.Tensor().SharesStorage(src))
	dl, ok := cd.Get(FromString("l"))
	require.True(t, ok)
	assert.NotSame(t, inner.List(), dl.List())

	// Scalars are copied as is.
	assert.Equal(t, "s", items[3].Str())
	assert.Equal(t, 1.5, items[4].Double())
	assert.True(t, items[5].IsNone())

	// Mutating the originals leaves the clone alone.
	for i := range data {
		data[i] = 0
	}
	inner.List().Items[1] = FromInt(0)
	d.Set(FromString("new"), FromInt(1))
	assert.Equal(t, []float64{1, 4, 2, 5, 3, 6}, ct.Float64s())
	assert.Equal(t, []float64{1, 2, 3, 4, 5, 6}, lt.Float64s())
	assert.Equal(t, []float64{1, 2, 3, 4, 5, 6}, dt.Tensor().Float64s())
	assert.Equal(t, int64(7), items[1].List().Items[1].Int())
	assert.Len(t, cd.Keys, 2)
}

func TestCloneScalars(t *testing.T) {
	o := &struct{}{}
	for _, v := range []IValue{None(), FromInt(1), FromDouble(2), FromBool(true), FromString("x"), FromDevice("cpu"), Object(o)} {
		assert.Equal(t, v, v.Clone())
	}
}

func TestIValueString(t *testing.T) {
	d := &Dict{}
	d.Set(FromString("a"), FromInt(1))
	d.Set(FromInt(2), NewList(FromBool(false)))
	cases := []struct {
		v    IValue
		want string
	}{
		{None(), "None"},
		{FromInt(-3), "-3"},
		{FromDouble(2.5), "2.5"},
		{FromDouble(1e-7), "1e-07"},
		{FromBool(true), "True"},
		{FromBool(false), "False"},
		{FromString(`a"b`), `"a\"b"`},
		{FromDevice("cpu"), "device(cpu)"},
		{NewList(), "[]"},
		{NewList(FromInt(1), FromString("x")), `[1, "x"]`},
		{NewTuple(FromInt(1), NewTuple(None(), FromBool(true))), "(1, (None, True))"},
		{DictOf(&Dict{}), "{}"},
		{DictOf(d), `{"a": 1, 2: [False]}`},
		{FromTensor(F32Tensor([]float32{1, 2}, 1, 2)), "Tensor(float32[1 2] [1 2])"},
		{Object(42), "Object(42)"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, c.v.String())
	}
}

// TestIValueNoAlloc checks that building and copying scalar IValues does
// not allocate (runtime slots are assigned on every run).
func TestIValueNoAlloc(t *testing.T) {
	tn := NewTensor(Float32, 2)
	var sink IValue
	allocs := testing.AllocsPerRun(100, func() {
		sink = FromInt(1)
		sink = FromDouble(2)
		sink = FromBool(true)
		sink = FromTensor(tn)
		sink = FromString("x")
		_ = sink.Equal(FromInt(1))
	})
	if !raceflag.Enabled { // allocation counts are unreliable under -race
		assert.Zero(t, allocs)
	}
	assert.True(t, sink.Equal(FromString("x")))
}
