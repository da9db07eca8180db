package ops

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/ivalue"
)

// copyNaive is the reference: element by element through logical
// coordinates, independent of the run/coalescing logic under test.
func copyNaive(src *ivalue.Tensor) []byte {
	es := src.DType().Size()
	out := make([]byte, 0, src.Numel()*es)
	src.ForEachIndex(func(i int) { out = append(out, src.Storage().Data[i*es:i*es+es]...) })
	return out
}

func copyRandStorage(r *rand.Rand, n int) *ivalue.Storage {
	s := ivalue.NewStorage(n)
	r.Read(s.Data)
	return s
}

func TestCopyStrided(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	cases := []struct {
		name    string
		offset  int
		sizes   []int
		strides []int
	}{
		{"contiguous", 0, []int{3, 4, 5}, []int{20, 5, 1}},
		{"contiguous offset", 7, []int{4, 5}, []int{5, 1}},
		{"transpose", 0, []int{5, 4}, []int{1, 5}},
		{"permute 4d", 3, []int{2, 3, 4, 5}, []int{1, 40, 10, 2}},
		{"slice step", 1, []int{3, 4}, []int{12, 3}},
		{"inner contiguous rows", 2, []int{3, 4}, []int{10, 1}},
		{"broadcast inner", 0, []int{3, 6}, []int{1, 0}},
		{"broadcast outer", 0, []int{4, 3, 5}, []int{0, 5, 1}},
		{"size one dims", 5, []int{1, 3, 1, 4, 1}, []int{99, 4, 7, 1, 3}},
		{"scalar", 9, []int{}, []int{}},
		{"empty", 0, []int{3, 0, 2}, []int{2, 2, 1}},
		{"negative-free zero-size one", 0, []int{1}, []int{1}},
		// Transposes big enough for copyTranspose32's 8x8 blocks, with
		// edges, either orientation, under a batch dim, with gaps.
		{"transpose blocks", 0, []int{16, 24}, []int{1, 16}},
		{"transpose edges", 2, []int{21, 13}, []int{1, 21}},
		{"permute nchw to nhwc", 0, []int{2, 7, 9, 12}, []int{756, 9, 1, 63}},
		{"permute nhwc to nchw", 1, []int{1, 12, 7, 9}, []int{756, 1, 108, 12}},
		{"transpose with gaps", 0, []int{3, 11, 10}, []int{300, 1, 25}},
	}
	// 18 dims of size 2 with alternating layout: more than copyMaxDims
	// dims survive coalescing, exercising the recursive path.
	deep := struct {
		name    string
		offset  int
		sizes   []int
		strides []int
	}{name: "deep"}
	st := 1
	for i := 0; i < 18; i++ {
		deep.sizes = append(deep.sizes, 2)
		deep.strides = append(deep.strides, 0)
	}
	for i := 17; i >= 0; i-- {
		deep.strides[17-i] = st
		st *= 2
	}
	cases = append(cases, deep)
	for _, dt := range []ivalue.DType{ivalue.Float32, ivalue.Float64, ivalue.Float16, ivalue.Uint8} {
		for _, c := range cases {
			t.Run(dt.String()+"/"+c.name, func(t *testing.T) {
				es := dt.Size()
				extent := c.offset + 1
				for i, s := range c.sizes {
					if s > 0 {
						extent += (s - 1) * c.strides[i]
					}
				}
				stor := copyRandStorage(r, extent*es)
				src, err := ivalue.FromStorage(dt, stor, c.offset, c.sizes, c.strides)
				require.NoError(t, err)
				dst := ivalue.NewTensor(dt, c.sizes...)
				copyStrided(dst, src)
				assert.Equal(t, copyNaive(src), dst.Storage().Data[:dst.Nbytes()])
				if len(c.sizes) <= copyMaxDims { // deeper tensors allocate their stride scratch
					assert.Zero(t, testing.AllocsPerRun(10, func() { copyStrided(dst, src) }))
				}
			})
		}
	}
}

// copyND into a strided destination (a slab of a larger tensor), as cat
// uses it.
func TestCopyNDStridedDst(t *testing.T) {
	src := ivalue.F32Tensor([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	dst := ivalue.NewTensor(ivalue.Float32, 2, 5)
	// src into columns 1..3 of a 2x5 destination
	copyND(dst.Storage().Data, 1, dst.Strides(), src.Storage().Data, 0, src.Strides(), src.Sizes(), 4)
	assert.Equal(t, []float32{0, 1, 2, 3, 0, 0, 4, 5, 6, 0}, dst.F32())
	// src transposed (3x2) into a 3x4 destination's columns 2..3
	dst2 := ivalue.NewTensor(ivalue.Float32, 3, 4)
	copyND(dst2.Storage().Data, 2, dst2.Strides(), src.Storage().Data, 0, []int{1, 3}, []int{3, 2}, 4)
	assert.Equal(t, []float32{0, 0, 1, 4, 0, 0, 2, 5, 0, 0, 3, 6}, dst2.F32())
}

func TestCopyConvertND(t *testing.T) {
	src := ivalue.I64Tensor([]int64{-3, 0, 7, 1 << 40}, 4)
	cases := []struct {
		dt   ivalue.DType
		want []float64
	}{
		{ivalue.Float32, []float64{-3, 0, 7, 1 << 40}},
		{ivalue.Float64, []float64{-3, 0, 7, 1 << 40}},
		{ivalue.Int32, []float64{-3, 0, 7, 0}},
		{ivalue.Bool, []float64{1, 0, 1, 1}},
		{ivalue.Int8, []float64{-3, 0, 7, 0}},
	}
	for _, c := range cases {
		dst := ivalue.NewTensor(c.dt, 4)
		copyConvertND(dst.Storage().Data, c.dt, 0, dst.Strides(), src.Storage().Data, ivalue.Int64, 0, src.Strides(), src.Sizes())
		assert.Equal(t, c.want, dst.Float64s(), c.dt.String())
	}
	f := ivalue.F32Tensor([]float32{-1.7, 2.9, 0}, 3)
	dst := ivalue.NewTensor(ivalue.Int64, 3)
	copyConvertND(dst.Storage().Data, ivalue.Int64, 0, dst.Strides(), f.Storage().Data, ivalue.Float32, 0, f.Strides(), f.Sizes())
	assert.Equal(t, []int64{-1, 2, 0}, dst.I64(), "float to int truncates")
}

func BenchmarkCopyStridedTranspose(b *testing.B) {
	src := ivalue.NewTensor(ivalue.Float32, 256, 256)
	tr, _ := ivalue.FromStorage(ivalue.Float32, src.Storage(), 0, []int{256, 256}, []int{1, 256})
	dst := ivalue.NewTensor(ivalue.Float32, 256, 256)
	b.SetBytes(256 * 256 * 4)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		copyStrided(dst, tr)
	}
}

func BenchmarkCopyStridedRows(b *testing.B) {
	src := ivalue.NewTensor(ivalue.Float32, 256, 512)
	half, _ := ivalue.FromStorage(ivalue.Float32, src.Storage(), 0, []int{256, 256}, []int{512, 1})
	dst := ivalue.NewTensor(ivalue.Float32, 256, 256)
	b.SetBytes(256 * 256 * 4)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		copyStrided(dst, half)
	}
}
