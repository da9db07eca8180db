package reference

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/ivalue"
)

func TestCompare(t *testing.T) {
	f := func(v ...float32) *ivalue.Tensor { return ivalue.F32Tensor(v, len(v)) }
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	tests := []struct {
		name      string
		got, want *ivalue.Tensor
		rtol      float64
		atol      float64
		err       string // "" means equal
	}{
		{"equal", f(1, 2, 3), f(1, 2, 3), 0, 0, ""},
		{"within atol", f(1, 2.0001), f(1, 2), 0, 1e-3, ""},
		{"within rtol", f(1000.1), f(1000), 1e-3, 0, ""},
		{"outside", f(1, 2.25, 3.5), f(1, 2, 3), 1e-3, 1e-3, "index [1]: got 2.25, want 2"},
		{"max diff reported", f(1, 2.25, 3.5), f(1, 2, 3), 1e-3, 1e-3, "max abs diff 0.5"},
		{"nan equals nan", f(nan, 1), f(nan, 1), 0, 0, ""},
		{"nan vs number", f(nan), f(1), 1, 1, "index [0]"},
		{"inf equals inf", f(inf), f(inf), 0, 0, ""},
		{"inf vs -inf", f(inf), f(-inf), 1, 1, "index [0]"},
		{"0-d", ivalue.ScalarTensor(2), ivalue.ScalarTensor(1), 0, 0, "index []: got 2, want 1"},
		{"dtype", ivalue.F64Tensor([]float64{1}), f(1), 0, 0, "dtype: got float64, want float32"},
		{"shape", ivalue.F32Tensor([]float32{1, 2}, 1, 2), f(1, 2), 0, 0, "shape: got [1 2], want [2]"},
		{"int exact", ivalue.I64Tensor([]int64{1, 2, 4}, 3), ivalue.I64Tensor([]int64{1, 2, 3}, 3), 1, 1, "index [2]: got 4, want 3"},
		{"int64 beyond float64", ivalue.I64Tensor([]int64{1<<62 + 1}, 1), ivalue.I64Tensor([]int64{1 << 62}, 1), 1, 1, "index [0]: got 4611686018427387905, want 4611686018427387904 (max abs diff 1)"},
		{"bool", ivalue.BoolTensor([]bool{true, false}), ivalue.BoolTensor([]bool{true, true}), 1, 1, "index [1]"},
		{"multi-dim index", ivalue.F32Tensor([]float32{0, 0, 0, 0, 0, 9}, 2, 3), ivalue.F32Tensor(make([]float32, 6), 2, 3), 0, 0, "index [1 2]"},
		{"nil", nil, f(1), 0, 0, "got"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Compare(tc.got, tc.want, tc.rtol, tc.atol)
			if tc.err == "" {
				assert.NoError(t, err)
			} else {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
			}
		})
	}
}

func TestFlatten(t *testing.T) {
	a := ivalue.F32Tensor([]float32{1, 2})
	b := ivalue.I64Tensor([]int64{3})
	vs := []ivalue.IValue{
		ivalue.NewTuple(
			ivalue.FromTensor(a),
			ivalue.NewList(ivalue.FromTensor(b), ivalue.FromInt(7)),
			ivalue.FromDouble(2.5),
			ivalue.FromBool(true),
		),
	}
	out := Flatten(vs)
	require.Len(t, out, 5)
	assert.Same(t, a, out[0])
	assert.Same(t, b, out[1])
	want := []struct {
		dt  ivalue.DType
		val float64
	}{{ivalue.Int64, 7}, {ivalue.Float64, 2.5}, {ivalue.Bool, 1}}
	for i, w := range want {
		x := out[2+i]
		assert.Equal(t, w.dt, x.DType())
		assert.Equal(t, 0, x.Dim())
		assert.Equal(t, []float64{w.val}, x.Float64s())
	}
	assert.Empty(t, Flatten(nil))

	// a dict (segmentation models' {"out": ..., "aux": ...}) flattens its
	// values in insertion order
	d := &ivalue.Dict{}
	d.Set(ivalue.FromString("out"), ivalue.FromTensor(b))
	d.Set(ivalue.FromString("aux"), ivalue.FromTensor(a))
	out = Flatten([]ivalue.IValue{ivalue.DictOf(d)})
	require.Len(t, out, 2)
	assert.Same(t, b, out[0])
	assert.Same(t, a, out[1])
}

func TestMaxAbsDiff(t *testing.T) {
	a := []*ivalue.Tensor{ivalue.F32Tensor([]float32{1, 2}), ivalue.F32Tensor([]float32{0})}
	b := []*ivalue.Tensor{ivalue.F32Tensor([]float32{1, 2.5}), ivalue.F32Tensor([]float32{-1})}
	assert.InDelta(t, 1.0, MaxAbsDiff(a, b), 1e-9)
	assert.True(t, math.IsInf(MaxAbsDiff(a, b[:1]), 1))
}

func TestLoad(t *testing.T) {
	dir := filepath.Join("..", "..", "builtin", "models", "deep_and_wide")
	c, err := Load(dir)
	require.NoError(t, err)
	assert.Equal(t, "deep_and_wide", c.Name)
	require.Len(t, c.Inputs, 3)
	assert.Equal(t, []int{1, 50}, c.Inputs[2].Tensor().Sizes())
	assert.Equal(t, []int{1, 1}, c.Expected[0].Sizes())
	assert.Greater(t, c.RTol, 0.0)

	// The same files as bytes (as the built-in models are embedded).
	ir, err := os.ReadFile(filepath.Join(dir, "model.ir"))
	require.NoError(t, err)
	st, err := os.ReadFile(filepath.Join(dir, "model.safetensors"))
	require.NoError(t, err)
	p, err := Parse("deep_and_wide", string(ir), st)
	require.NoError(t, err)
	assert.Equal(t, c.IR, p.IR)
	require.Len(t, p.Expected, len(c.Expected))
	assert.Zero(t, MaxAbsDiff(p.Expected, c.Expected))
}

func TestLoadErrors(t *testing.T) {
	_, err := Load(filepath.Join(t.TempDir(), "nope.ir"))
	assert.ErrorContains(t, err, "nope.ir")
	_, err = Parse("broken", "graph():\n  return ()\n", []byte("not safetensors"))
	assert.ErrorContains(t, err, "broken")
}
