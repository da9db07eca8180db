package staticruntime_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/staticruntime"
)

// TestLoopCarriedContainers: a list or tuple built in a loop body and
// carried to the next iteration must not be rebuilt in place while the
// next iteration still reads it.
func TestLoopCarriedContainers(t *testing.T) {
	tests := []struct {
		name string
		ir   string
		n    int64
		want []float32
	}{
		{"list read after the next one is built", `graph(%x : Tensor, %n : int):
  %true : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %l0 : Tensor[] = prim::ListConstruct(%x)
  %l : Tensor[], %acc : Tensor = prim::Loop(%n, %true, %l0, %x)
    block0(%i : int, %l1 : Tensor[], %acc1 : Tensor):
      %y : Tensor = aten::add(%x, %i, %one)
      %l2 : Tensor[] = prim::ListConstruct(%y)
      %e : Tensor = aten::__getitem__(%l1, %zero)
      %acc2 : Tensor = aten::add(%acc1, %e, %one)
      -> (%true, %l2, %acc2)
  return (%acc)
`, 3, []float32{1 + 1 + 1 + 2}},
		{"tuple read after the next one is built", `graph(%x : Tensor, %n : int):
  %true : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %t0 : (Tensor, Tensor) = prim::TupleConstruct(%x, %x)
  %t : (Tensor, Tensor), %acc : Tensor = prim::Loop(%n, %true, %t0, %x)
    block0(%i : int, %t1 : (Tensor, Tensor), %acc1 : Tensor):
      %y : Tensor = aten::add(%x, %i, %one)
      %t2 : (Tensor, Tensor) = prim::TupleConstruct(%y, %y)
      %a : Tensor, %b : Tensor = prim::TupleUnpack(%t1)
      %acc2 : Tensor = aten::add(%acc1, %a, %one)
      -> (%true, %t2, %acc2)
  return (%acc)
`, 3, []float32{1 + 1 + 1 + 2}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, opts := range []*staticruntime.Options{nil, {}} {
				r := prepare(t, tc.ir, opts).NewRuntime()
				for rep := 0; rep < 2; rep++ {
					outs, err := r.Run(ivalue.FromTensor(ivalue.F32Tensor([]float32{1}, 1)), ivalue.FromInt(tc.n))
					require.NoError(t, err)
					assert.Equal(t, tc.want, f32(t, outs[0]), "run %d", rep)
				}
			}
		})
	}
}
