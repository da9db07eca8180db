package staticruntime_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/ivalue"
)

// TestContainerInputChecks: list and tuple inputs are checked element by
// element, so a wrong element is an input error naming the argument
// rather than a kernel reading it as something else (a tensor read as
// the int 0 made aten::view complain about a shape [0, 0]).
func TestContainerInputChecks(t *testing.T) {
	m := prepare(t, `graph(%x : Tensor, %shape : int[], %tup : (Tensor, int), %s : Scalar):
  %v : Tensor = aten::view(%x, %shape)
  %a : Tensor, %b : int = prim::TupleUnpack(%tup)
  %d : Tensor = aten::add(%a, %s, %b)
  return (%v, %d)
`, nil)
	r := m.NewRuntime()
	x := ivalue.FromTensor(ivalue.F32Tensor([]float32{1, 2, 3, 4}, 4))
	list := func(vs ...ivalue.IValue) ivalue.IValue { return ivalue.ListOf(&ivalue.List{Items: vs}) }
	tuple := func(vs ...ivalue.IValue) ivalue.IValue { return ivalue.TupleOf(&ivalue.List{Items: vs}) }
	shape := list(ivalue.FromInt(2), ivalue.FromInt(2))
	tup := tuple(x, ivalue.FromInt(1))
	one := ivalue.FromInt(1)
	tests := []struct {
		name string
		args []ivalue.IValue
		want string
	}{
		{"tensor in an int list", []ivalue.IValue{x, list(ivalue.FromInt(2), x), tup, one}, "input 1 (shape): expected int[], got a List holding Tensor at index 1"},
		{"None in an int list", []ivalue.IValue{x, list(ivalue.None(), ivalue.FromInt(2)), tup, one}, "got a List holding None at index 0"},
		{"nil list", []ivalue.IValue{x, ivalue.ListOf(nil), tup, one}, "got a nil List"},
		{"short tuple", []ivalue.IValue{x, shape, tuple(x), one}, "input 2 (tup): expected (Tensor, int), got a Tuple of 1 elements"},
		{"swapped tuple", []ivalue.IValue{x, shape, tuple(one, x), one}, "got a Tuple holding int at index 0"},
		{"list for a tuple", []ivalue.IValue{x, shape, list(x, one), one}, "got List"},
		{"tensor for a scalar", []ivalue.IValue{x, shape, tup, x}, "input 3 (s): expected Scalar, got Tensor"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.Run(tc.args...)
			require.ErrorContains(t, err, tc.want)
		})
	}
	for _, s := range []ivalue.IValue{one, ivalue.FromDouble(0.5)} {
		outs, err := r.Run(x, shape, tup, s)
		require.NoError(t, err)
		assert.Equal(t, []int{2, 2}, outs[0].Tensor().Sizes())
		want := []float32{1 + float32(s.AsFloat()), 2 + float32(s.AsFloat()), 3 + float32(s.AsFloat()), 4 + float32(s.AsFloat())}
		assert.Equal(t, want, f32(t, outs[1]))
	}
}
