package ops_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/staticruntime"
)

// TestEmptyViewPastStorageEnd runs ops on an empty tensor whose offset
// lies past its storage's end, which PyTorch allows and view ops make:
// y = x + 1 for x of shape [4, 6, 0] has no bytes, and y[1:] has offset 6
// (strides [6, 1, 1]).
// Kernels used to slice storage[offset:offset+0] and panic (relu_ in
// the inplace_view case). Each op must succeed or return an error naming
// its node, and the runtime must stay usable.
func TestEmptyViewPastStorageEnd(t *testing.T) {
	cases := []struct {
		op   string
		want []int // sizes when the op succeeds on float32; nil: not checked
	}{
		{"aten::relu(%v)", []int{3, 6, 0}},
		{"aten::relu_(%v)", []int{3, 6, 0}},
		{"aten::hardtanh_(%v, %lo, %hi)", []int{3, 6, 0}},
		{"aten::hardtanh(%v, %lo, %hi)", []int{3, 6, 0}},
		{"aten::sigmoid(%v)", []int{3, 6, 0}},
		{"aten::sigmoid_(%v)", []int{3, 6, 0}},
		{"aten::tanh_(%v)", []int{3, 6, 0}},
		{"aten::neg_(%v)", []int{3, 6, 0}},
		{"aten::exp_(%v)", []int{3, 6, 0}},
		{"aten::abs(%v)", []int{3, 6, 0}},
		{"aten::gelu(%v, %approx)", []int{3, 6, 0}},
		{"aten::silu(%v)", []int{3, 6, 0}},
		{"aten::clamp_min(%v, %lo)", []int{3, 6, 0}},
		{"aten::clamp_max(%v, %hi)", []int{3, 6, 0}},
		{"aten::clamp_min_(%v, %lo)", []int{3, 6, 0}},
		{"aten::add(%v, %v, %one)", []int{3, 6, 0}},
		{"aten::add_(%v, %v, %one)", []int{3, 6, 0}},
		{"aten::mul(%v, %lo)", []int{3, 6, 0}},
		{"aten::mul_(%v, %v)", []int{3, 6, 0}},
		{"aten::div(%v, %v)", []int{3, 6, 0}},
		{"aten::pow(%v, %two)", []int{3, 6, 0}},
		{"aten::eq(%v, %v)", []int{3, 6, 0}},
		{"aten::where(%b, %v, %v)", []int{3, 6, 0}},
		{"aten::masked_fill(%v, %b, %lo)", []int{3, 6, 0}},
		{"aten::to(%v, %i64, %false, %false, %none)", []int{3, 6, 0}},
		{"aten::zero_(%v)", []int{3, 6, 0}},
		{"aten::fill_(%v, %lo)", []int{3, 6, 0}},
		{"aten::copy_(%v, %v, %false)", []int{3, 6, 0}},
		{"aten::contiguous(%v, %zero)", []int{3, 6, 0}},
		{"aten::clone(%v, %none)", []int{3, 6, 0}},
		{"aten::reshape(%v, %shp)", []int{0, 2}},
		{"aten::cat(%l, %two)", []int{3, 6, 0}},
		{"aten::cat(%l, %zero)", []int{6, 6, 0}},
		{"aten::sum(%v, %d2, %false, %none)", []int{3, 6}},
		{"aten::sum(%v, %d1, %false, %none)", []int{3, 0}},
		{"aten::softmax(%v, %two, %none)", []int{3, 6, 0}},
		{"aten::layer_norm(%v, %ns, %none, %none, %eps, %false)", []int{3, 6, 0}},
		{"aten::matmul(%v, %w)", []int{3, 6, 6}},
	}
	// v, the operand, is an empty slice of y = x + 1 (made in the run) or
	// of the input itself (made outside, offset 24 into no bytes).
	sources := []struct {
		name, v string
		x       func(dt ivalue.DType) *ivalue.Tensor
	}{
		{"intermediate", "aten::slice(%y, %zero, %one, %none, %one)", func(dt ivalue.DType) *ivalue.Tensor {
			return ivalue.NewTensor(dt, 4, 6, 0)
		}},
		{"input", "aten::slice(%x, %zero, %one, %none, %one)", func(dt ivalue.DType) *ivalue.Tensor {
			x, err := ivalue.FromStorage(dt, ivalue.NewStorage(0), 24, []int{4, 6, 0}, nil)
			require.NoError(t, err)
			return x
		}},
	}
	for _, src := range sources {
		for _, dt := range []ivalue.DType{ivalue.Float32, ivalue.Float64, ivalue.Int64} {
			for _, c := range cases {
				t.Run(fmt.Sprintf("%s/%s/%s", src.name, dt, c.op), func(t *testing.T) {
					ir := `graph(%x : Tensor):
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %zero : int = prim::Constant[value=0]()
  %m1 : int = prim::Constant[value=-1]()
  %i64 : int = prim::Constant[value=4]()
  %none : NoneType = prim::Constant()
  %false : bool = prim::Constant[value=0]()
  %lo : float = prim::Constant[value=0.]()
  %hi : float = prim::Constant[value=6.]()
  %eps : float = prim::Constant[value=1e-5]()
  %approx : str = prim::Constant[value="none"]()
  %d2 : int[] = prim::ListConstruct(%two)
  %d1 : int[] = prim::ListConstruct(%one)
  %ns : int[] = prim::ListConstruct(%zero)
  %shp : int[] = prim::ListConstruct(%m1, %two)
  %y : Tensor = aten::add(%x, %one, %one)
  %v : Tensor = ` + src.v + `
  %l : Tensor[] = prim::ListConstruct(%v, %v)
  %w : Tensor = aten::transpose(%v, %one, %two)
  %b : Tensor = aten::eq(%v, %lo)
  %r : Tensor = ` + c.op + `
  return (%r)
`
					g, err := graph.Parse(ir, nil)
					require.NoError(t, err)
					m, err := staticruntime.NewStaticModule(g, nil)
					require.NoError(t, err)
					r := m.NewRuntime()
					for run := 0; run < 2; run++ { // a fresh runtime, then a steady one
						outs, err := r.Run(ivalue.FromTensor(src.x(dt)))
						if err != nil {
							assert.NotContains(t, err.Error(), "internal error")
							assert.Contains(t, err.Error(), "node %r", "the error names the node")
							assert.NotEqual(t, ivalue.Float32, dt, "every op here supports float32")
							continue
						}
						if dt == ivalue.Float32 {
							assert.Equal(t, c.want, outs[0].Tensor().Sizes())
						}
					}

					// Still usable: a good input gives what a fresh runtime
					// gives (layer_norm's normalized_shape [0] fits only
					// the empty input: the same error).
					good := ivalue.NewTensor(ivalue.Float32, 4, 6, 2)
					for i := range good.F32Contig() {
						good.F32Contig()[i] = float32(1 + i%7)
					}
					want, wantErr := m.NewRuntime().Run(ivalue.FromTensor(good))
					got, err := r.Run(ivalue.FromTensor(good))
					if wantErr != nil {
						require.EqualError(t, err, wantErr.Error())
						return
					}
					require.NoError(t, err)
					assert.Equal(t, want[0].Tensor().Float64s(), got[0].Tensor().Float64s())
				})
			}
		}
	}
}
