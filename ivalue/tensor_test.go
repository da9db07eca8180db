package ivalue

import (
	"testing"
	"unsafe"

	"github.com/gosr/gosr/internal/raceflag"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWrapNoCopy checks that the typed constructors view the caller's slice:
// a write through either side is seen through the other.
func TestWrapNoCopy(t *testing.T) {
	cases := []struct {
		name  string
		build func() (tn *Tensor, writeSrc func(), readSrc func() float64)
		dtype DType
		sizes []int
		want  []float64 // Float64s after writeSrc
	}{
		{"F32Tensor", func() (*Tensor, func(), func() float64) {
			d := []float32{1, 2, 3, 4, 5, 6}
			return F32Tensor(d, 2, 3), func() { d[4] = 50 }, func() float64 { return float64(d[0]) }
		}, Float32, []int{2, 3}, []float64{1, 2, 3, 4, 50, 6}},
		{"F32Tensor no sizes is 1-d", func() (*Tensor, func(), func() float64) {
			d := []float32{1, 2, 3}
			return F32Tensor(d), func() { d[2] = -3 }, func() float64 { return float64(d[0]) }
		}, Float32, []int{3}, []float64{1, 2, -3}},
		{"F64Tensor", func() (*Tensor, func(), func() float64) {
			d := []float64{1, 2}
			return F64Tensor(d, 2, 1), func() { d[1] = 0.25 }, func() float64 { return d[0] }
		}, Float64, []int{2, 1}, []float64{1, 0.25}},
		{"I64Tensor", func() (*Tensor, func(), func() float64) {
			d := []int64{7, 8, 9, 10}
			return I64Tensor(d, 4), func() { d[0] = -1 }, func() float64 { return float64(d[0]) }
		}, Int64, []int{4}, []float64{-1, 8, 9, 10}},
		{"I32Tensor", func() (*Tensor, func(), func() float64) {
			d := []int32{1, 2, 3, 4}
			return I32Tensor(d, 2, 2), func() { d[3] = 40 }, func() float64 { return float64(d[0]) }
		}, Int32, []int{2, 2}, []float64{1, 2, 3, 40}},
		{"U8Tensor", func() (*Tensor, func(), func() float64) {
			d := []uint8{1, 255}
			return U8Tensor(d, 2), func() { d[0] = 9 }, func() float64 { return float64(d[0]) }
		}, Uint8, []int{2}, []float64{9, 255}},
		{"I8Tensor", func() (*Tensor, func(), func() float64) {
			d := []int8{-128, 127}
			return I8Tensor(d, 1, 2), func() { d[1] = 0 }, func() float64 { return float64(d[0]) }
		}, Int8, []int{1, 2}, []float64{-128, 0}},
		{"BoolTensor", func() (*Tensor, func(), func() float64) {
			d := []bool{true, false, false}
			return BoolTensor(d, 3), func() { d[1] = true }, func() float64 {
				if d[0] {
					return 1
				}
				return 0
			}
		}, Bool, []int{3}, []float64{1, 1, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tn, writeSrc, readSrc := c.build()
			assert.Equal(t, c.dtype, tn.DType())
			assert.Equal(t, ints(c.sizes), ints(tn.Sizes()))
			assert.True(t, tn.IsContiguous())
			assert.Equal(t, 0, tn.Offset())
			writeSrc()
			assert.Equal(t, c.want, tn.Float64s(), "write to the slice is seen by the tensor")

			// Write element 0 through the tensor's storage, read it back
			// through the caller's slice.
			switch c.dtype {
			case Float32:
				tn.F32()[0] = 42
			case Float64:
				tn.F64()[0] = 42
			case Int64:
				tn.I64()[0] = 42
			case Int32:
				tn.I32()[0] = 42
			case Uint8:
				tn.U8()[0] = 42
			case Int8:
				tn.I8()[0] = 42
			case Bool:
				tn.B()[0] = false
			}
			want := 42.0
			if c.dtype == Bool {
				want = 0
			}
			assert.Equal(t, want, readSrc(), "write to the tensor is seen by the slice")
		})
	}
}

func TestWrapSharesBackingArray(t *testing.T) {
	d := []float32{1, 2, 3, 4}
	tn := F32Tensor(d, 2, 2)
	assert.Equal(t, unsafe.Pointer(&d[0]), unsafe.Pointer(&tn.Storage().Data[0]))
	assert.Len(t, tn.Storage().Data, 16)
	assert.Equal(t, 16, tn.Nbytes())
	assert.Equal(t, d, tn.F32Contig())
}

func TestWrapEmptyAndScalar(t *testing.T) {
	e := F32Tensor([]float32{})
	assert.Equal(t, []int{0}, e.Sizes())
	assert.Equal(t, 0, e.Numel())
	assert.Empty(t, e.Float64s())

	z := F32Tensor(nil, 2, 0, 3)
	assert.Equal(t, []int{2, 0, 3}, z.Sizes())
	assert.Equal(t, 0, z.Numel())

	s := ScalarTensor(2.5)
	assert.Equal(t, 0, s.Dim())
	assert.Equal(t, []int{}, s.Sizes())
	assert.Equal(t, []int{}, s.Strides())
	assert.Equal(t, 1, s.Numel())
	assert.Equal(t, []float64{2.5}, s.Float64s())
	assert.True(t, s.IsContiguous())
}

func TestWrapPanicsOnWrongCount(t *testing.T) {
	cases := []struct {
		name string
		f    func()
	}{
		{"F32 too few", func() { F32Tensor([]float32{1, 2, 3}, 2, 2) }},
		{"F32 too many", func() { F32Tensor([]float32{1, 2, 3, 4, 5}, 2, 2) }},
		{"F32 nil for 1", func() { F32Tensor(nil, 1) }},
		{"I64 wrong", func() { I64Tensor([]int64{1, 2}, 3) }},
		{"I64 zero-size dim", func() { I64Tensor([]int64{1}, 1, 0) }},
		{"Bool wrong", func() { BoolTensor([]bool{true}, 2, 1) }},
		{"F64 wrong", func() { F64Tensor([]float64{1, 2}, 1) }},
		{"I32 wrong", func() { I32Tensor([]int32{1, 2}, 1) }},
		{"U8 wrong", func() { U8Tensor([]uint8{1, 2}, 3) }},
		{"I8 wrong", func() { I8Tensor([]int8{1, 2}, 3) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Panics(t, c.f)
		})
	}
}

// ints normalizes nil to empty so shapes compare by content.
func ints(s []int) []int { return append([]int{}, s...) }

func TestAlignedBytes(t *testing.T) {
	for _, n := range []int{0, 1, 3, 63, 64, 65, 100, 4096, 1<<20 + 7} {
		b := AlignedBytes(n)
		require.Len(t, b, n)
		assert.Equal(t, n, cap(b), "cap is clipped so appends cannot run past n")
		if n > 0 {
			assert.Zero(t, uintptr(unsafe.Pointer(&b[0]))%64, "n=%d", n)
			for i := range b {
				if b[i] != 0 {
					t.Fatalf("n=%d: byte %d not zero", n, i)
				}
			}
		}
	}
	s := NewStorage(10)
	assert.Len(t, s.Data, 10)
	assert.Zero(t, uintptr(unsafe.Pointer(&s.Data[0]))%64)
}

func TestNewTensorZeroedAligned(t *testing.T) {
	cases := []struct {
		dt    DType
		sizes []int
	}{
		{Float32, []int{2, 3}},
		{Float64, []int{5}},
		{Int64, []int{1, 1, 7}},
		{Bool, []int{9}},
		{Uint8, []int{3, 3}},
		{Float16, []int{4}},
		{BFloat16, []int{2, 2}},
		{Int16, []int{3}},
		{Float32, []int{}},
	}
	for _, c := range cases {
		t.Run(c.dt.String(), func(t *testing.T) {
			tn := NewTensor(c.dt, c.sizes...)
			assert.Equal(t, c.dt, tn.DType())
			assert.Equal(t, ints(c.sizes), ints(tn.Sizes()))
			assert.True(t, tn.IsContiguous())
			n := 1
			for _, s := range c.sizes {
				n *= s
			}
			assert.Equal(t, n, tn.Numel())
			require.Len(t, tn.Storage().Data, n*c.dt.Size())
			assert.Zero(t, uintptr(unsafe.Pointer(&tn.Storage().Data[0]))%64)
			for _, v := range tn.Float64s() {
				assert.Zero(t, v)
			}
		})
	}
	e := NewTensor(Float32, 0, 4)
	assert.Equal(t, 0, e.Numel())
	assert.Empty(t, e.Storage().Data)
}

// TestContiguousStrides compares with torch.empty(sizes).stride() (PyTorch
// 1.13): size-0 and size-1 dims count as 1 when computing outer strides.
func TestContiguousStrides(t *testing.T) {
	cases := []struct {
		sizes, strides []int
	}{
		{[]int{2, 3, 4}, []int{12, 4, 1}},
		{[]int{2, 0, 3}, []int{3, 3, 1}},
		{[]int{3, 0}, []int{1, 1}},
		{[]int{0}, []int{1}},
		{[]int{1}, []int{1}},
		{[]int{1, 5}, []int{5, 1}},
		{[]int{5, 1}, []int{1, 1}},
		{[]int{2, 1, 3}, []int{3, 3, 1}},
		{[]int{}, []int{}},
		{[]int{0, 0}, []int{1, 1}},
		{[]int{4, 1, 0, 2}, []int{2, 2, 2, 1}},
	}
	for _, c := range cases {
		tn := NewTensor(Float32, c.sizes...)
		assert.Equal(t, c.strides, ints(tn.Strides()), "NewTensor%v", c.sizes)
		fs, err := FromStorage(Float32, NewStorage(0), 0, c.sizes, nil)
		if tn.Numel() == 0 {
			require.NoError(t, err)
			assert.Equal(t, c.strides, ints(fs.Strides()), "FromStorage%v", c.sizes)
		}
		st := make([]int, len(c.sizes))
		contiguousStrides(st, c.sizes)
		assert.Equal(t, c.strides, st)
	}
}

// TestIsContiguous covers views built with FromStorage. torch's
// is_contiguous is true for every tensor with no elements.
func TestIsContiguous(t *testing.T) {
	s := NewStorage(64 * 4)
	cases := []struct {
		name           string
		offset         int
		sizes, strides []int
		want           bool
	}{
		{"plain", 0, []int{2, 3}, []int{3, 1}, true},
		{"offset", 5, []int{2, 3}, []int{3, 1}, true},
		{"transposed", 0, []int{3, 2}, []int{1, 3}, false},
		{"column slice", 0, []int{4, 2}, []int{4, 1}, false},
		{"row slice", 4, []int{2, 4}, []int{4, 1}, true},
		{"step 2", 0, []int{4}, []int{2}, false},
		{"size-1 odd stride", 0, []int{1, 4}, []int{99, 1}, true},
		{"size-1 inner odd stride", 0, []int{4, 1}, []int{1, 7}, true},
		{"broadcast stride 0", 0, []int{3, 4}, []int{0, 1}, false},
		{"0-d", 3, []int{}, []int{}, true},
		{"transposed 1x1", 0, []int{1, 1}, []int{1, 1}, true},
		{"empty leading", 0, []int{0, 3}, []int{3, 1}, true},
		{"empty contiguous strides", 0, []int{3, 0}, []int{1, 1}, true},
		{"empty transposed", 0, []int{0, 3}, []int{1, 1}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tn, err := FromStorage(Float32, s, c.offset, c.sizes, c.strides)
			require.NoError(t, err)
			assert.Equal(t, c.want, tn.IsContiguous())
		})
	}
	// NewTensor and FromStorage(nil strides) must always be contiguous,
	// including shapes with a zero-size dim.
	for _, sz := range [][]int{{3, 0}, {2, 0, 3}, {4, 1, 0, 2}, {0, 0}} {
		assert.True(t, NewTensor(Float32, sz...).IsContiguous(), "NewTensor%v", sz)
	}
}

func TestFromStorage(t *testing.T) {
	s := NewStorage(24) // 6 float32
	cases := []struct {
		name           string
		dt             DType
		offset         int
		sizes, strides []int
		err            string
	}{
		{"fits", Float32, 0, []int{2, 3}, nil, ""},
		{"fits with offset", Float32, 2, []int{4}, nil, ""},
		{"fits strided", Float32, 1, []int{2}, []int{4}, ""},
		{"fits transposed", Float32, 0, []int{3, 2}, []int{1, 3}, ""},
		{"empty anywhere", Float32, 100, []int{0, 5}, nil, ""},
		{"too big", Float32, 0, []int{7}, nil, "needs 28 bytes, storage has 24"},
		{"offset past end", Float32, 3, []int{4}, nil, "needs 28 bytes"},
		{"stride past end", Float32, 0, []int{2}, []int{6}, "needs 28 bytes"},
		{"wider dtype", Float64, 0, []int{4}, nil, "needs 32 bytes"},
		{"stride count", Float32, 0, []int{2, 3}, []int{1}, "1 strides for 2 sizes"},
		{"0-d at end", Float32, 5, []int{}, nil, ""},
		{"0-d past end", Float32, 6, []int{}, nil, "needs 28 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tn, err := FromStorage(c.dt, s, c.offset, c.sizes, c.strides)
			if c.err != "" {
				assert.ErrorContains(t, err, c.err)
				assert.Nil(t, tn)
				return
			}
			require.NoError(t, err)
			assert.Same(t, s, tn.Storage())
			assert.Equal(t, c.offset, tn.Offset())
			assert.Equal(t, ints(c.sizes), ints(tn.Sizes()))
		})
	}

	// FromStorage copies the shape slices it is given.
	sizes, strides := []int{2, 3}, []int{3, 1}
	tn, err := FromStorage(Float32, s, 0, sizes, strides)
	require.NoError(t, err)
	sizes[0], strides[0] = 9, 9
	assert.Equal(t, []int{2, 3}, tn.Sizes())
	assert.Equal(t, []int{3, 1}, tn.Strides())
}

func TestAccessors(t *testing.T) {
	tn := F32Tensor([]float32{1, 2, 3, 4, 5, 6}, 1, 2, 3)
	assert.Equal(t, 3, tn.Dim())
	assert.Equal(t, 1, tn.Size(0))
	assert.Equal(t, 3, tn.Size(-1))
	assert.Equal(t, 2, tn.Size(-2))
	assert.Equal(t, 6, tn.Numel())
	assert.Equal(t, 24, tn.Nbytes())

	assert.PanicsWithValue(t, "ivalue: float32 tensor read as int64", func() { tn.I64() })
	assert.Panics(t, func() { tn.U16() })
	assert.NotPanics(t, func() { NewTensor(Float16, 2).U16() })
	assert.NotPanics(t, func() { NewTensor(BFloat16, 2).U16() })
	assert.Len(t, NewTensor(Int16, 3).I16(), 3)

	o := F32Tensor([]float32{1})
	assert.False(t, tn.SharesStorage(o))
	assert.True(t, tn.SharesStorage(tn))
	assert.False(t, tn.SharesStorage(nil))
	var nilT *Tensor
	assert.False(t, nilT.SharesStorage(tn))
}

func TestResize(t *testing.T) {
	t.Run("keeps storage when large enough", func(t *testing.T) {
		tn := NewTensor(Float32, 4, 4) // 64 bytes
		s := tn.Storage()
		tn.Resize(Float32, []int{2, 3})
		assert.Same(t, s, tn.Storage())
		assert.Equal(t, []int{2, 3}, tn.Sizes())
		assert.Equal(t, []int{3, 1}, tn.Strides())
		assert.Equal(t, 0, tn.Offset())
		tn.Resize(Int64, []int{8}) // 64 bytes, still fits
		assert.Same(t, s, tn.Storage())
		assert.Equal(t, Int64, tn.DType())
		tn.Resize(Uint8, []int{2, 2, 2, 2})
		assert.Same(t, s, tn.Storage())
		assert.Equal(t, []int{8, 4, 2, 1}, tn.Strides())
	})
	t.Run("allocates when growing", func(t *testing.T) {
		tn := NewTensor(Float32, 2)
		s := tn.Storage()
		tn.Resize(Float32, []int{3})
		assert.NotSame(t, s, tn.Storage())
		assert.Len(t, tn.Storage().Data, 12)
		s = tn.Storage()
		tn.Resize(Float64, []int{3}) // same numel, wider dtype
		assert.NotSame(t, s, tn.Storage())
		assert.Len(t, tn.Storage().Data, 24)
	})
	t.Run("view becomes plain and contiguous in memory of its own", func(t *testing.T) {
		s := NewStorage(64)
		v, err := FromStorage(Float32, s, 3, []int{2, 2}, []int{1, 4})
		require.NoError(t, err)
		v.Resize(Float32, []int{2, 2})
		assert.Equal(t, 0, v.Offset())
		assert.Equal(t, []int{2, 1}, v.Strides())
		assert.True(t, v.IsContiguous())
		// The viewed storage belongs to someone else: never resized into.
		assert.NotSame(t, s, v.Storage())
	})
	t.Run("resize after SetView leaves the source alone", func(t *testing.T) {
		src := F32Tensor([]float32{1, 2, 3, 4}, 2, 2)
		v := &Tensor{}
		v.SetView(src, 0, []int{2, 2}, []int{1, 2})
		v.Resize(Float32, []int{2, 2})
		v.F32Contig()[0] = 42
		assert.Equal(t, []float32{1, 2, 3, 4}, src.F32Contig())
		// Given a storage of its own again, it keeps it.
		own := NewStorage(16)
		v.SetStorage(own, 0)
		v.Resize(Float32, []int{2, 2})
		assert.Same(t, own, v.Storage())
	})
	t.Run("sizes may alias the tensor's own", func(t *testing.T) {
		tn := NewTensor(Float32, 2, 3)
		tn.Resize(Float64, tn.Sizes())
		assert.Equal(t, []int{2, 3}, tn.Sizes())
		assert.Equal(t, []int{3, 1}, tn.Strides())
		assert.Len(t, tn.Storage().Data, 48)
	})
	t.Run("more dims than capacity", func(t *testing.T) {
		tn := NewTensor(Float32, 6)
		tn.Resize(Float32, []int{1, 2, 3, 1})
		assert.Equal(t, []int{1, 2, 3, 1}, tn.Sizes())
		assert.Equal(t, []int{6, 3, 1, 1}, tn.Strides())
	})
	t.Run("from zero value", func(t *testing.T) {
		var tn Tensor
		tn.Resize(Int32, []int{5})
		assert.Equal(t, []int{5}, tn.Sizes())
		assert.Len(t, tn.Storage().Data, 20)
		tn.ResizeLike(Float32, F32Tensor(make([]float32, 4), 2, 2))
		assert.Equal(t, []int{2, 2}, tn.Sizes())
		assert.Equal(t, Float32, tn.DType())
	})
	t.Run("after SetStorage to a smaller storage", func(t *testing.T) {
		tn := NewTensor(Float32, 4)
		tn.SetStorage(NewStorage(8), 0)
		tn.Resize(Float32, []int{4}) // same sizes, but storage too small
		assert.Len(t, tn.Storage().Data, 16)
	})
}

func TestResizeSteadyStateAllocs(t *testing.T) {
	cases := []struct {
		name  string
		sizes []int
		other []int // alternate with this shape (fits the same storage); nil: none
	}{
		{"same sizes", []int{4, 8, 2}, nil},
		{"0-d", []int{}, nil},
		{"alternating", []int{4, 8}, []int{8, 2, 2}},
		{"shrink and grow back", []int{64}, []int{3, 3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tn := NewTensor(Float32, c.sizes...)
			if c.other != nil {
				tn.Resize(Float32, c.other) // grow the shape slices once
				tn.Resize(Float32, c.sizes)
			}
			s := tn.Storage()
			allocs := testing.AllocsPerRun(100, func() {
				tn.Resize(Float32, c.sizes)
				if c.other != nil {
					tn.Resize(Float32, c.other)
				}
			})
			if !raceflag.Enabled { // allocation counts are unreliable under -race
				assert.Zero(t, allocs)
			}
			assert.Same(t, s, tn.Storage())
		})
	}
}

func TestSetView(t *testing.T) {
	src := F32Tensor([]float32{0, 1, 2, 3, 4, 5}, 2, 3)
	var v Tensor
	v.SetView(src, 0, []int{3, 2}, []int{1, 3}) // transpose
	assert.Same(t, src.Storage(), v.Storage())
	assert.Equal(t, Float32, v.DType())
	assert.Equal(t, []int{3, 2}, v.Sizes())
	assert.Equal(t, []int{1, 3}, v.Strides())
	assert.False(t, v.IsContiguous())
	assert.Equal(t, []float64{0, 3, 1, 4, 2, 5}, v.Float64s())

	// Reuse: a second SetView with no more dims allocates nothing.
	allocs := testing.AllocsPerRun(100, func() {
		v.SetView(src, 1, []int{2}, []int{3})
	})
	if !raceflag.Enabled { // allocation counts are unreliable under -race
		assert.Zero(t, allocs)
	}
	assert.Equal(t, []float64{1, 4}, v.Float64s())
	assert.Equal(t, 1, v.Offset())

	// sizes and strides may alias src's.
	v.SetView(src, 0, src.Sizes(), src.Strides())
	assert.Equal(t, []int{2, 3}, v.Sizes())
	assert.Equal(t, []int{3, 1}, v.Strides())
	v.SetView(&v, 3, v.Sizes()[1:], v.Strides()[1:])
	assert.Equal(t, []int{3}, v.Sizes())
	assert.Equal(t, []int{1}, v.Strides())
	assert.Equal(t, []float64{3, 4, 5}, v.Float64s())

	// Writes through the view land in src.
	v.F32()[v.Offset()] = 30
	assert.Equal(t, float32(30), src.F32Contig()[3])

	// A Resize of a view that is not plain does not take the fast path.
	v.Resize(Float32, []int{3})
	assert.Equal(t, 0, v.Offset())
}

func TestSetStorage(t *testing.T) {
	tn := NewTensor(Float32, 2, 2)
	slab := NewStorage(128)
	tn.SetStorage(slab, 16)
	assert.Same(t, slab, tn.Storage())
	assert.Equal(t, 16, tn.Offset())
	assert.Equal(t, []int{2, 2}, tn.Sizes())
	assert.Equal(t, []int{2, 1}, tn.Strides())
	tn.F32Contig()[0] = 7
	assert.Equal(t, float32(7), typed[float32](slab)[16])

	// With an offset the tensor is no longer "plain": Resize must reset
	// the offset rather than return early.
	tn.Resize(Float32, []int{2, 2})
	assert.Equal(t, 0, tn.Offset())
	assert.Same(t, slab, tn.Storage())

	// At offset 0 a plain tensor stays plain: a steady Resize keeps it.
	tn.SetStorage(slab, 0)
	allocs := testing.AllocsPerRun(50, func() { tn.Resize(Float32, []int{2, 2}) })
	if !raceflag.Enabled { // allocation counts are unreliable under -race
		assert.Zero(t, allocs)
	}
	assert.Same(t, slab, tn.Storage())
}

func TestCloneCopyIntoContiguous(t *testing.T) {
	base := []float32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
	cases := []struct {
		name           string
		offset         int
		sizes, strides []int
		want           []float64
	}{
		{"contiguous", 0, []int{3, 4}, []int{4, 1}, []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
		{"contiguous offset", 5, []int{2, 2}, []int{2, 1}, []float64{5, 6, 7, 8}},
		{"transpose", 0, []int{4, 3}, []int{1, 4}, []float64{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}},
		{"column", 1, []int{3}, []int{4}, []float64{1, 5, 9}},
		{"column slice", 1, []int{3, 2}, []int{4, 1}, []float64{1, 2, 5, 6, 9, 10}},
		{"reversed-ish step", 0, []int{2, 2}, []int{6, 2}, []float64{0, 2, 6, 8}},
		{"broadcast", 2, []int{2, 3}, []int{0, 1}, []float64{2, 3, 4, 2, 3, 4}},
		{"3-d permute", 0, []int{2, 3, 2}, []int{1, 4, 2}, []float64{0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11}}, // arange(12).view(3,2,2).permute(2,0,1),
		{"0-d", 7, []int{}, []int{}, []float64{7}},
		{"empty", 0, []int{0, 3}, []int{1, 1}, []float64{}},
		{"empty past the end", 40, []int{3, 0}, nil, []float64{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := append([]float32(nil), base...)
			src := F32Tensor(data, 12)
			v, err := FromStorage(Float32, src.Storage(), c.offset, c.sizes, c.strides)
			require.NoError(t, err)
			assert.Equal(t, c.want, v.Float64s())

			cl := v.Clone()
			assert.Equal(t, ints(c.sizes), ints(cl.Sizes()))
			assert.True(t, cl.IsContiguous())
			assert.Equal(t, 0, cl.Offset())
			assert.Equal(t, c.want, cl.Float64s())
			assert.False(t, cl.SharesStorage(v))

			ct := v.Contiguous()
			assert.Equal(t, c.want, ct.Float64s())
			if v.IsContiguous() {
				assert.Same(t, v, ct)
			} else {
				assert.NotSame(t, v, ct)
				assert.True(t, ct.IsContiguous())
			}

			// CopyInto a contiguous destination at an offset.
			dstStore := NewStorage((3 + v.Numel()) * 4)
			dst, err := FromStorage(Float32, dstStore, 3, c.sizes, nil)
			require.NoError(t, err)
			CopyInto(dst, v)
			assert.Equal(t, c.want, dst.Float64s())
			for i := 0; i < 3; i++ {
				assert.Zero(t, typed[float32](dstStore)[i], "bytes before dst's offset untouched")
			}

			// Clone is deep: changing the source does not change it.
			for i := range data {
				data[i] = -1
			}
			assert.Equal(t, c.want, cl.Float64s())
		})
	}
}

func TestCloneDTypes(t *testing.T) {
	cases := []*Tensor{
		I64Tensor([]int64{1, -2, 3, 4}, 2, 2),
		BoolTensor([]bool{true, false, true, true}, 2, 2),
		U8Tensor([]uint8{1, 2, 3, 4}, 2, 2),
		I8Tensor([]int8{-1, 2, -3, 4}, 2, 2),
		I32Tensor([]int32{1, 2, 3, 4}, 2, 2),
		F64Tensor([]float64{0.5, 1.5, 2.5, 3.5}, 2, 2),
	}
	for _, src := range cases {
		t.Run(src.DType().String(), func(t *testing.T) {
			var v Tensor
			v.SetView(src, 0, []int{2, 2}, []int{1, 2})
			want := src.Float64s()
			want[1], want[2] = want[2], want[1]
			cl := v.Clone()
			assert.Equal(t, src.DType(), cl.DType())
			assert.Equal(t, want, cl.Float64s())
		})
	}
}

func TestFloat64s(t *testing.T) {
	h := NewTensor(Float16, 3)
	copy(h.U16(), []uint16{0x3c00, 0xc000, 0x3800})
	b := NewTensor(BFloat16, 2)
	copy(b.U16(), []uint16{0x3f80, 0xc049})
	i16 := NewTensor(Int16, 2)
	copy(i16.I16(), []int16{-300, 300})
	cases := []struct {
		name string
		tn   *Tensor
		want []float64
	}{
		{"float32", F32Tensor([]float32{1.5, -2}), []float64{1.5, -2}},
		{"float64", F64Tensor([]float64{1e300}), []float64{1e300}},
		{"int64", I64Tensor([]int64{-5, 1 << 40}), []float64{-5, 1 << 40}},
		{"int32", I32Tensor([]int32{-7, 7}), []float64{-7, 7}},
		{"int16", i16, []float64{-300, 300}},
		{"int8", I8Tensor([]int8{-128, 127}), []float64{-128, 127}},
		{"uint8", U8Tensor([]uint8{0, 255}), []float64{0, 255}},
		{"bool", BoolTensor([]bool{true, false}), []float64{1, 0}},
		{"float16", h, []float64{1, -2, 0.5}},
		{"bfloat16", b, []float64{1, -3.140625}},
		{"0-d", ScalarTensor(3), []float64{3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, c.tn.Float64s())
		})
	}
}

func TestForEachIndex(t *testing.T) {
	s := NewStorage(4 * 24)
	v, err := FromStorage(Float32, s, 1, []int{2, 3}, []int{1, 2})
	require.NoError(t, err)
	var got []int
	v.ForEachIndex(func(i int) { got = append(got, i) })
	assert.Equal(t, []int{1, 3, 5, 2, 4, 6}, got)

	e, err := FromStorage(Float32, s, 0, []int{3, 0}, nil)
	require.NoError(t, err)
	e.ForEachIndex(func(int) { t.Fatal("called for an empty tensor") })
}

func TestTensorString(t *testing.T) {
	cases := []struct {
		tn   *Tensor
		want string
	}{
		{nil, "Tensor(nil)"},
		{F32Tensor([]float32{1, 2.5}, 2), "Tensor(float32[2] [1 2.5])"},
		{I64Tensor([]int64{1, 2, 3, 4, 5, 6, 7, 8, 9}, 9), "Tensor(int64[9] [1 2 3 4 5 6 7 8]...)"},
		{I64Tensor([]int64{1, 2, 3, 4, 5, 6, 7, 8}, 2, 4), "Tensor(int64[2 4] [1 2 3 4 5 6 7 8])"},
		{ScalarTensor(3), "Tensor(float32[] [3])"},
		{&Tensor{dtype: Bool, sizes: []int{2}}, "Tensor(bool[2])"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, c.tn.String())
	}
}

// TestContigEmptyPastEnd: an empty tensor's offset may lie past its
// storage's end (PyTorch's torch.empty(4, 6, 0)[1:] has offset 6 into no
// bytes); the *Contig accessors give no elements, not a panic (dense's
// TestToDenseEmptyPastEnd checks ToDense).
func TestContigEmptyPastEnd(t *testing.T) {
	cases := []struct {
		name   string
		dt     DType
		bytes  int
		offset int
		sizes  []int
		numel  func(*Tensor) int
	}{
		{"f32 no storage", Float32, 0, 6, []int{3, 6, 0}, func(x *Tensor) int { return len(x.F32Contig()) }},
		{"f32 small storage", Float32, 4, 6, []int{3, 6, 0}, func(x *Tensor) int { return len(x.F32Contig()) }},
		{"f64", Float64, 0, 100, []int{0, 5}, func(x *Tensor) int { return len(x.F64Contig()) }},
		{"i64", Int64, 8, 3, []int{0}, func(x *Tensor) int { return len(x.I64Contig()) }},
		{"i32", Int32, 0, 1, []int{2, 0}, func(x *Tensor) int { return len(x.I32Contig()) }},
		{"bool", Bool, 0, 9, []int{0}, func(x *Tensor) int { return len(x.BContig()) }},
		{"u8", Uint8, 2, 9, []int{0, 1}, func(x *Tensor) int { return len(x.U8Contig()) }},
		{"i8", Int8, 0, 4, []int{0}, func(x *Tensor) int { return len(x.I8Contig()) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			x, err := FromStorage(c.dt, NewStorage(c.bytes), c.offset, c.sizes, nil)
			require.NoError(t, err)
			assert.Equal(t, c.offset, x.Offset(), "the offset is kept, as PyTorch keeps it")
			assert.Zero(t, c.numel(x))

			// A view made by SetView, as view kernels make them.
			v := &Tensor{}
			v.SetView(NewTensor(c.dt, 0), c.offset, c.sizes, nil)
			assert.Zero(t, c.numel(v))
		})
	}
}
