package ivalue

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckedNumel(t *testing.T) {
	cases := []struct {
		sizes []int
		want  int
		err   string
	}{
		{sizes: []int{}, want: 1},
		{sizes: []int{2, 3, 4}, want: 24},
		{sizes: []int{0, 1 << 40}, want: 0},
		{sizes: []int{0, 1 << 40, 1 << 40}, err: "numel: integer multiplication overflow"},
		{sizes: []int{1 << 31, 1 << 31}, want: 1 << 62},
		{sizes: []int{1 << 32, 1 << 32, 64}, err: "numel: integer multiplication overflow"},
		{sizes: []int{1 << 32, 1 << 32, 0, 64}, err: "numel: integer multiplication overflow"},
		{sizes: []int{math.MaxInt, 2}, err: "numel: integer multiplication overflow"},
		{sizes: []int{3, -1}, err: "negative size -1"},
		{sizes: []int{-1, -4}, err: "negative size -1"},
	}
	for _, tc := range cases {
		n, err := CheckedNumel(tc.sizes)
		if tc.err != "" {
			require.Error(t, err, "%v", tc.sizes)
			assert.Contains(t, err.Error(), tc.err)
			continue
		}
		require.NoError(t, err, "%v", tc.sizes)
		assert.Equal(t, tc.want, n, "%v", tc.sizes)
	}
}

func TestNewTensorRefusesOverflow(t *testing.T) {
	// 2^32 * 2^32 * 64 wraps to 0 in int arithmetic: it must not make an
	// empty tensor.
	p := recoverPanic(func() { NewTensor(Float32, 1<<32, 1<<32, 64) })
	require.NotNil(t, p, "NewTensor returned a tensor")
	err, ok := p.(error)
	require.True(t, ok, "the panic is an error: %v", p)
	assert.ErrorIs(t, err, ErrNumelOverflow)

	_, err = NewTensorErr(Float32, 1<<32, 1<<32, 64)
	assert.ErrorIs(t, err, ErrNumelOverflow)
	// The element count fits, the byte count does not.
	_, err = NewTensorErr(Float64, 1<<61)
	assert.ErrorIs(t, err, ErrNumelOverflow)
	_, err = NewTensorErr(Float32, 2, -3)
	assert.ErrorContains(t, err, "negative size -3")
	_, err = NewTensorOn(Device{}, Float32, 1<<32, 1<<32, 64)
	assert.ErrorIs(t, err, ErrNumelOverflow)

	x, err := NewTensorErr(Float32, 2, 3)
	require.NoError(t, err)
	assert.Equal(t, 6, x.Numel())
	assert.Len(t, x.F32Contig(), 6)

	// A failed Resize leaves the tensor as it was.
	err = x.ResizeErr(Float32, []int{-1, 6})
	assert.ErrorContains(t, err, "negative size")
	assert.Equal(t, []int{2, 3}, x.Sizes())
	assert.Len(t, x.F32Contig(), 6)

	assert.NotNil(t, recoverPanic(func() { F32Tensor([]float32{1, 2, 3, 4}, -1, -4) }), "negative sizes whose product matches")
}

func TestViewBytes(t *testing.T) {
	cases := []struct {
		name           string
		dt             DType
		offset         int
		sizes, strides []int
		want           int
		err            string
		overflowsNumel bool
	}{
		{name: "contiguous", dt: Float32, sizes: []int{2, 3}, strides: []int{3, 1}, want: 24},
		{name: "offset", dt: Float32, offset: 5, sizes: []int{2, 3}, strides: []int{3, 1}, want: 44},
		{name: "transposed", dt: Float64, sizes: []int{3, 2}, strides: []int{1, 3}, want: 48},
		{name: "broadcast", dt: Float32, sizes: []int{1 << 20, 1 << 20, 4}, strides: []int{0, 0, 1}, want: 16},
		{name: "scalar", dt: Int64, offset: 2, sizes: []int{}, strides: []int{}, want: 24},
		{name: "empty past the end", dt: Float32, offset: 1 << 40, sizes: []int{4, 0}, strides: []int{1, 1}, want: 0},
		{name: "numel overflow with stride 0", dt: Float32, sizes: []int{1 << 32, 1 << 32, 64}, strides: []int{0, 0, 1}, overflowsNumel: true},
		{name: "negative size", dt: Float32, sizes: []int{-2, 3}, strides: []int{3, 1}, err: "negative size"},
		{name: "negative stride", dt: Float32, sizes: []int{2, 3}, strides: []int{-3, 1}, err: "negative strides"},
		{name: "negative offset", dt: Float32, offset: -1, sizes: []int{2}, strides: []int{1}, err: "negative storage offset"},
		{name: "stride overflow", dt: Float32, sizes: []int{3, 2}, strides: []int{math.MaxInt / 2, 1}, err: "overflows"},
		{name: "offset overflow", dt: Float32, offset: math.MaxInt - 1, sizes: []int{3}, strides: []int{1}, err: "overflows"},
		{name: "bytes overflow", dt: Float64, offset: math.MaxInt / 4, sizes: []int{1}, strides: []int{1}, err: "overflows"},
		{name: "mismatched strides", dt: Float32, sizes: []int{2, 3}, strides: []int{1}, err: "1 strides for 2 sizes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n, err := ViewBytes(tc.dt, tc.offset, tc.sizes, tc.strides)
			switch {
			case tc.overflowsNumel:
				assert.ErrorIs(t, err, ErrNumelOverflow)
			case tc.err != "":
				assert.ErrorContains(t, err, tc.err)
			default:
				require.NoError(t, err)
				assert.Equal(t, tc.want, n)
			}
		})
	}
}

func TestFromStorageChecksGeometry(t *testing.T) {
	s := &Storage{Data: AlignedBytes(64 * 4)}
	// The stored tensor of the campaign: numel 2^70, 64 elements reached.
	_, err := FromStorage(Float32, s, 0, []int{1 << 32, 1 << 32, 64}, []int{0, 0, 1})
	assert.ErrorIs(t, err, ErrNumelOverflow)
	_, err = FromStorage(Float32, s, 0, []int{1 << 32, 1 << 32, 64}, nil)
	assert.ErrorIs(t, err, ErrNumelOverflow)
	_, err = FromStorage(Float32, s, 0, []int{-4, -16}, nil)
	assert.ErrorContains(t, err, "negative size")
	_, err = FromStorage(Float32, s, 0, []int{-4, -16}, []int{1, 1})
	assert.ErrorContains(t, err, "negative size")
	// Offset plus extent beyond the storage, with a stride of 0 on the
	// big dimension: 10 + 63 + 1 elements > 64.
	_, err = FromStorage(Float32, s, 10, []int{1000, 64}, []int{0, 1})
	assert.ErrorContains(t, err, "needs 296 bytes, storage has 256")
	_, err = FromStorage(Float32, nil, 0, []int{1}, nil)
	assert.Error(t, err)

	b, err := FromStorage(Float32, s, 0, []int{1000, 64}, []int{0, 1})
	require.NoError(t, err)
	assert.Equal(t, 64000, b.Numel())
	e, err := FromStorage(Float32, s, 1000, []int{0, 64}, nil)
	require.NoError(t, err, "an empty view may start past the end")
	assert.Empty(t, e.F32Contig())
}

func TestStringOfHugeBroadcastView(t *testing.T) {
	// numel 2^40 viewing one element: String prints 8 values without
	// gathering the rest.
	x, err := FromStorage(Float32, &Storage{Data: bytesOf([]float32{1.5})}, 0, []int{1 << 20, 1 << 20}, []int{0, 0})
	require.NoError(t, err)
	assert.Equal(t, "Tensor(float32[1048576 1048576] [1.5 1.5 1.5 1.5 1.5 1.5 1.5 1.5]...)", x.String())
}

func TestContigAccessorsRefuseStridedViews(t *testing.T) {
	base := F32Tensor([]float32{0, 1, 2, 3, 4, 5}, 2, 3)
	tr := &Tensor{}
	tr.SetView(base, 0, []int{3, 2}, []int{1, 3}) // base.t(): [[0 3] [1 4] [2 5]]
	require.False(t, tr.IsContiguous())

	p := recoverPanic(func() { tr.F32Contig() })
	var nc *NotContiguousError
	require.ErrorAs(t, p.(error), &nc, "F32Contig of a transposed view")
	assert.Contains(t, nc.Error(), "sizes [3 2], strides [1 3]")

	// What a caller does instead: the contiguous copy, in logical order.
	assert.Equal(t, []float32{0, 3, 1, 4, 2, 5}, tr.Contiguous().F32Contig())

	// Views that are contiguous still work, and write through.
	row := &Tensor{}
	row.SetView(base, 3, []int{1, 3}, []int{99, 1}) // row 1; a size-1 dim's stride does not matter
	assert.Equal(t, []float32{3, 4, 5}, row.F32Contig())
	row.F32Contig()[0] = 30
	assert.Equal(t, float32(30), base.F32()[3])

	ints := I64Tensor([]int64{1, 2, 3, 4}, 2, 2)
	it := &Tensor{}
	it.SetView(ints, 0, []int{2, 2}, []int{1, 2})
	assert.NotNil(t, recoverPanic(func() { it.I64Contig() }))
	bc := &Tensor{}
	bc.SetView(ints, 0, []int{2, 2}, []int{0, 1}) // broadcast rows
	assert.NotNil(t, recoverPanic(func() { bc.I64Contig() }))
}

func recoverPanic(f func()) (p any) {
	defer func() { p = recover() }()
	f()
	return nil
}

// TestAllocBeyondTheMachine: 4 TB of float32 (a 2^40-element broadcast
// view made contiguous) is an error, not Go's fatal "out of memory".
func TestAllocBeyondTheMachine(t *testing.T) {
	_, err := NewTensorErr(Float32, 1<<40)
	var ae *AllocError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, 1<<42, ae.Bytes)
	x := NewTensor(Float32, 4)
	require.ErrorAs(t, x.ResizeErr(Float32, []int{1 << 40}), &ae)
	assert.Equal(t, []int{4}, x.Sizes(), "a failed Resize leaves the tensor as it was")
	p := recoverPanic(func() { AlignedBytes(1 << 50) })
	require.NotNil(t, p)
	assert.ErrorAs(t, p.(error), &ae)
}
