package ops_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// TestInplaceOps: the result is written into self (whatever its strides)
// and returned as self itself, as PyTorch's in-place ops do.
func TestInplaceOps(t *testing.T) {
	nan := float32(math.NaN())
	strided := func() *ivalue.Tensor {
		// [[-2, 7], [3, -1]] stored transposed: not contiguous.
		base := ivalue.F32Tensor([]float32{-2, 3, 7, -1}, 2, 2)
		v, err := ivalue.FromStorage(ivalue.Float32, base.Storage(), 0, []int{2, 2}, []int{1, 2})
		require.NoError(t, err)
		return v
	}
	long := func() *ivalue.Tensor { // 19 elements: vector body and tail
		d := make([]float32, 19)
		for i := range d {
			d[i] = float32(i) - 9
		}
		d[4] = nan
		return ivalue.F32Tensor(d, 19)
	}
	longWant := func(lo, hi float64) []float64 {
		out := make([]float64, 19)
		for i := range out {
			out[i] = math.Min(math.Max(float64(i)-9, lo), hi)
		}
		out[4] = math.NaN()
		return out
	}
	for _, tc := range []struct {
		name  string
		kind  string
		self  *ivalue.Tensor
		args  []ivalue.IValue
		types []*graph.Type
		want  []float64
		err   string
	}{
		{"relu_ contiguous with NaN", "aten::relu_", long(), nil, nil, longWant(0, math.Inf(1)), ""},
		{"hardtanh_ relu6", "aten::hardtanh_", long(), []ivalue.IValue{ivF(0), ivF(6)}, []*graph.Type{tF, tF}, longWant(0, 6), ""},
		{"relu_ strided", "aten::relu_", strided(), nil, nil, []float64{0, 7, 3, 0}, ""},
		{"add_ broadcast other", "aten::add_", strided(), []ivalue.IValue{iv(ivalue.F32Tensor([]float32{10, 20}, 2)), ivI(1)}, []*graph.Type{tT, tI}, []float64{8, 27, 13, 19}, ""},
		{"mul_ scalar", "aten::mul_", strided(), []ivalue.IValue{ivF(0.5)}, []*graph.Type{tF}, []float64{-1, 3.5, 1.5, -0.5}, ""},
		{"add_ that would broadcast self", "aten::add_", ivalue.F32Tensor([]float32{1, 2}, 2), []ivalue.IValue{iv(ivalue.F32Tensor([]float32{1, 2, 3, 4}, 2, 2)), ivI(1)}, []*graph.Type{tT, tI}, nil, "doesn't match the broadcast shape"},
		{"float result into int64 self", "aten::mul_", ivalue.I64Tensor([]int64{1, 2}, 2), []ivalue.IValue{ivF(0.5)}, []*graph.Type{tF}, nil, "can't be cast"},
		{"int64 add_", "aten::add_", ivalue.I64Tensor([]int64{1, 2}, 2), []ivalue.IValue{ivI(3), ivI(2)}, []*graph.Type{tI, tI}, []float64{7, 8}, ""},
		{"zero_", "aten::zero_", strided(), nil, nil, []float64{0, 0, 0, 0}, ""},
		{"fill_", "aten::fill_", strided(), []ivalue.IValue{ivF(2.5)}, []*graph.Type{tF}, []float64{2.5, 2.5, 2.5, 2.5}, ""},
		{"copy_ broadcast", "aten::copy_", strided(), []ivalue.IValue{iv(ivalue.I64Tensor([]int64{4, 5}, 2)), ivB(false)}, []*graph.Type{tT, tB}, []float64{4, 5, 4, 5}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			self := tc.self
			outs, _, err := runNode(t, tc.kind, append([]ivalue.IValue{iv(self)}, tc.args...), append([]*graph.Type{tT}, tc.types...), []*graph.Type{tT})
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Same(t, self, outs[0].Tensor(), "in-place ops return self")
			got := self.Float64s()
			require.Len(t, got, len(tc.want))
			for i := range got {
				if math.IsNaN(tc.want[i]) {
					assert.True(t, math.IsNaN(got[i]), "element %d: want NaN, got %v", i, got[i])
				} else {
					assert.InDelta(t, tc.want[i], got[i], 1e-6, "element %d", i)
				}
			}
		})
	}
}
