package dense

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/gosr/gosr/ivalue"
)

// TestFromDenseSharesMemory checks that FromDense views the Dense's
// backing slice: writes through either side are seen by the other.
func TestFromDenseSharesMemory(t *testing.T) {
	cases := []struct {
		name    string
		backing any
		shape   []int
		dt      ivalue.DType
		write   func(tn *ivalue.Tensor) // sets element 1 through the tensor
		want    any                     // Dense's element 1 afterwards
	}{
		{"float32", []float32{1, 2, 3, 4, 5, 6}, []int{2, 3}, ivalue.Float32, func(tn *ivalue.Tensor) { tn.F32()[1] = 20 }, float32(20)},
		{"float64", []float64{1, 2, 3, 4}, []int{4}, ivalue.Float64, func(tn *ivalue.Tensor) { tn.F64()[1] = 20 }, float64(20)},
		{"int64", []int64{1, 2, 3, 4}, []int{2, 1, 2}, ivalue.Int64, func(tn *ivalue.Tensor) { tn.I64()[1] = 20 }, int64(20)},
		{"int32", []int32{1, 2}, []int{1, 2}, ivalue.Int32, func(tn *ivalue.Tensor) { tn.I32()[1] = 20 }, int32(20)},
		{"int8", []int8{1, 2}, []int{2}, ivalue.Int8, func(tn *ivalue.Tensor) { tn.I8()[1] = 20 }, int8(20)},
		{"uint8", []uint8{1, 2, 3}, []int{3}, ivalue.Uint8, func(tn *ivalue.Tensor) { tn.U8()[1] = 20 }, uint8(20)},
		{"bool", []bool{false, false}, []int{2}, ivalue.Bool, func(tn *ivalue.Tensor) { tn.B()[1] = true }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := tensor.New(tensor.WithShape(c.shape...), tensor.WithBacking(c.backing))
			tn, err := FromDense(d)
			require.NoError(t, err)
			assert.Equal(t, c.dt, tn.DType())
			assert.Equal(t, c.shape, tn.Sizes())
			assert.True(t, tn.IsContiguous())

			c.write(tn)
			assert.Equal(t, c.want, d.Get(1), "tensor write seen by the Dense")

			d.Set(0, c.want)
			assert.Equal(t, tn.Float64s()[1], tn.Float64s()[0], "Dense write seen by the tensor")
		})
	}
}

func TestToDenseSharesMemory(t *testing.T) {
	cases := []struct {
		name string
		tn   *ivalue.Tensor
		dt   tensor.Dtype
	}{
		{"float32", ivalue.F32Tensor([]float32{1, 2, 3, 4, 5, 6}, 2, 3), tensor.Float32},
		{"float64", ivalue.F64Tensor([]float64{1, 2, 3}, 3), tensor.Float64},
		{"int64", ivalue.I64Tensor([]int64{1, 2, 3, 4}, 2, 2), tensor.Int64},
		{"int32", ivalue.I32Tensor([]int32{1, 2}, 2, 1), tensor.Int32},
		{"int8", ivalue.I8Tensor([]int8{1, 2}, 2), tensor.Int8},
		{"uint8", ivalue.U8Tensor([]uint8{1, 2}, 2), tensor.Uint8},
		{"bool", ivalue.BoolTensor([]bool{true, false}, 2), tensor.Bool},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := ToDense(c.tn)
			require.NoError(t, err)
			assert.Equal(t, c.dt, d.Dtype())
			assert.Equal(t, tensor.Shape(c.tn.Sizes()), d.Shape())

			// Dense -> tensor: set element 0 to element 1's value.
			d.Set(0, d.Get(1))
			got := c.tn.Float64s()
			assert.Equal(t, got[1], got[0])

			// tensor -> Dense: round-trip back and compare all values.
			back, err := FromDense(d)
			require.NoError(t, err)
			assert.Equal(t, c.tn.Sizes(), back.Sizes())
			assert.Equal(t, c.tn.Float64s(), back.Float64s())
			assert.Equal(t, &c.tn.Storage().Data[0], &back.Storage().Data[0], "round trip keeps the same memory")
		})
	}
}

// TestToDenseOffset checks that a contiguous view at an offset maps to the
// right window of the storage.
func TestToDenseOffset(t *testing.T) {
	base := ivalue.F32Tensor([]float32{0, 1, 2, 3, 4, 5, 6, 7}, 8)
	v, err := ivalue.FromStorage(ivalue.Float32, base.Storage(), 2, []int{2, 2}, nil)
	require.NoError(t, err)
	d, err := ToDense(v)
	require.NoError(t, err)
	assert.Equal(t, []float32{2, 3, 4, 5}, d.Data())
	d.Set(3, float32(50))
	assert.Equal(t, float32(50), base.F32()[5])
	assert.Equal(t, float32(6), base.F32()[6], "no write past the view")
}

func TestDenseScalars(t *testing.T) {
	// 0-d tensor -> gorgonia scalar of shape () and back.
	s := ivalue.ScalarTensor(2.5)
	d, err := ToDense(s)
	require.NoError(t, err)
	assert.True(t, d.IsScalar())
	assert.Equal(t, float32(2.5), d.Data())
	s.F32()[0] = 3.5
	assert.Equal(t, float32(3.5), d.Data(), "0-d tensor and scalar Dense share memory")

	back, err := FromDense(d)
	require.NoError(t, err)
	assert.Equal(t, 0, back.Dim())
	assert.Equal(t, []float64{3.5}, back.Float64s())
	assert.Same(t, &s.Storage().Data[0], &back.Storage().Data[0])

	i := ivalue.I64Tensor([]int64{7}, []int{}...)
	require.Equal(t, 0, i.Dim())
	di, err := ToDense(i)
	require.NoError(t, err)
	assert.Equal(t, int64(7), di.Data())

	// Scalars of every supported dtype come back as 0-d tensors that view
	// the Dense's memory.
	cases := []struct {
		name string
		d    *tensor.Dense
		dt   ivalue.DType
		want float64
	}{
		{"float32", tensor.New(tensor.FromScalar(float32(1.5))), ivalue.Float32, 1.5},
		{"float64", tensor.New(tensor.FromScalar(2.5)), ivalue.Float64, 2.5},
		{"int64", tensor.New(tensor.FromScalar(int64(-3))), ivalue.Int64, -3},
		{"int32", tensor.New(tensor.FromScalar(int32(4))), ivalue.Int32, 4},
		{"int8", tensor.New(tensor.FromScalar(int8(-5))), ivalue.Int8, -5},
		{"uint8", tensor.New(tensor.FromScalar(uint8(200))), ivalue.Uint8, 200},
		{"bool", tensor.New(tensor.FromScalar(true)), ivalue.Bool, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.True(t, c.d.IsScalar())
			tn, err := FromDense(c.d)
			require.NoError(t, err)
			assert.Equal(t, c.dt, tn.DType())
			assert.Equal(t, 0, tn.Dim())
			assert.Equal(t, []float64{c.want}, tn.Float64s())
			// Shared memory: a write through the tensor shows in the Dense.
			writeSeenByDense(t, tn, c.d)
		})
	}
}

// writeSeenByDense writes 9 (or false) into tn's only element and checks
// that the scalar Dense d sees it.
func writeSeenByDense(t *testing.T, tn *ivalue.Tensor, d *tensor.Dense) {
	t.Helper()
	var want any
	switch tn.DType() {
	case ivalue.Float32:
		tn.F32()[tn.Offset()] = 9
		want = float32(9)
	case ivalue.Float64:
		tn.F64()[tn.Offset()] = 9
		want = float64(9)
	case ivalue.Int64:
		tn.I64()[tn.Offset()] = 9
		want = int64(9)
	case ivalue.Int32:
		tn.I32()[tn.Offset()] = 9
		want = int32(9)
	case ivalue.Int8:
		tn.I8()[tn.Offset()] = 9
		want = int8(9)
	case ivalue.Uint8:
		tn.U8()[tn.Offset()] = 9
		want = uint8(9)
	case ivalue.Bool:
		tn.B()[tn.Offset()] = false
		want = false
	}
	assert.Equal(t, want, d.Data(), "write through the 0-d tensor seen by the scalar Dense")
}

func TestDenseErrors(t *testing.T) {
	_, err := FromDense(nil)
	assert.ErrorContains(t, err, "nil Dense")

	// A transposed Dense is not a row-major view.
	tr := tensor.New(tensor.WithShape(2, 3), tensor.WithBacking([]float32{1, 2, 3, 4, 5, 6}))
	require.NoError(t, tr.T())
	_, err = FromDense(tr)
	assert.ErrorContains(t, err, "not a contiguous row-major view")

	// A column slice needs an iterator.
	m := tensor.New(tensor.WithShape(3, 3), tensor.WithBacking([]float64{1, 2, 3, 4, 5, 6, 7, 8, 9}))
	col, err := m.Slice(nil, tensor.S(1))
	require.NoError(t, err)
	_, err = FromDense(col.(*tensor.Dense))
	assert.ErrorContains(t, err, "not a contiguous row-major view")

	// Unsupported element types.
	_, err = FromDense(tensor.New(tensor.WithShape(2), tensor.WithBacking([]int16{1, 2})))
	assert.ErrorContains(t, err, "not supported")
	_, err = FromDense(tensor.New(tensor.WithShape(2), tensor.WithBacking([]complex64{1, 2})))
	assert.ErrorContains(t, err, "not supported")

	// Non-contiguous tensors must be made contiguous first.
	src := ivalue.F32Tensor([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	var v ivalue.Tensor
	v.SetView(src, 0, []int{3, 2}, []int{1, 3})
	_, err = ToDense(&v)
	assert.ErrorContains(t, err, "non-contiguous")
	d, err := ToDense(v.Contiguous())
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 4, 2, 5, 3, 6}, d.Data())

	// float16 and bfloat16 have no gorgonia dtype.
	for _, dt := range []ivalue.DType{ivalue.Float16, ivalue.BFloat16, ivalue.Int16} {
		_, err = ToDense(ivalue.NewTensor(dt, 2))
		assert.ErrorContains(t, err, "no gorgonia dtype", "%s", dt)
	}
}

// TestToDenseEmptyPastEnd: an empty tensor's offset may lie past its
// storage's end (PyTorch's torch.empty(4, 6, 0)[1:] has offset 6 into no
// bytes); ToDense gives an empty Dense of the tensor's shape, not a panic.
func TestToDenseEmptyPastEnd(t *testing.T) {
	cases := []struct {
		name   string
		dt     ivalue.DType
		bytes  int
		offset int
		sizes  []int
	}{
		{"f32 no storage", ivalue.Float32, 0, 6, []int{3, 6, 0}},
		{"f32 small storage", ivalue.Float32, 4, 6, []int{3, 6, 0}},
		{"f64", ivalue.Float64, 0, 100, []int{0, 5}},
		{"i64", ivalue.Int64, 8, 3, []int{0}},
		{"i32", ivalue.Int32, 0, 1, []int{2, 0}},
		{"i8", ivalue.Int8, 0, 4, []int{0}},
		{"bool", ivalue.Bool, 0, 9, []int{0}},
		{"u8", ivalue.Uint8, 2, 9, []int{0, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x, err := ivalue.FromStorage(c.dt, ivalue.NewStorage(c.bytes), c.offset, c.sizes, nil)
			require.NoError(t, err)
			d, err := ToDense(x)
			require.NoError(t, err)
			assert.Equal(t, c.sizes, []int(d.Shape()))
			assert.Zero(t, d.Len())
		})
	}
}

func TestToDenseNil(t *testing.T) {
	_, err := ToDense(nil)
	assert.ErrorContains(t, err, "nil Tensor")
}
