package ivalue

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCopyIntoStrided: strided views of every element size gather into
// row-major order as the element-by-element walk does.
func TestCopyIntoStrided(t *testing.T) {
	base := make([]float64, 2*3*4*5)
	for i := range base {
		base[i] = float64(i)
	}
	views := []struct {
		name           string
		offset         int
		sizes, strides []int
	}{
		{"transpose 2d", 0, []int{5, 4}, []int{1, 5}},
		{"permute 4d", 0, []int{5, 4, 3, 2}, []int{1, 5, 20, 60}},
		{"sliced with offset", 7, []int{3, 2}, []int{10, 2}},
		{"inner contiguous rows", 5, []int{2, 5}, []int{20, 1}},
		{"0-d", 11, []int{}, []int{}},
		{"broadcast", 3, []int{4, 3}, []int{0, 1}},
		// Dims that coalesce: a channel shuffle's transpose (rows of
		// 4*5 merged), size-1 dims among them, a broadcast row.
		{"channel shuffle", 0, []int{1, 3, 2, 4, 5}, []int{120, 20, 60, 5, 1}},
		{"size-1 dims between", 2, []int{2, 1, 3, 1, 5}, []int{60, 99, 20, 7, 1}},
		{"merged then broadcast", 0, []int{2, 3, 4}, []int{12, 4, 0}},
	}
	for _, dt := range []DType{Float32, Float64, Int16, Uint8, Int64} {
		src := NewTensor(dt, len(base))
		for i, v := range base {
			switch dt {
			case Float32:
				typed[float32](src.storage)[i] = float32(v)
			case Float64:
				typed[float64](src.storage)[i] = v
			case Int16:
				typed[int16](src.storage)[i] = int16(v)
			case Uint8:
				typed[uint8](src.storage)[i] = uint8(v)
			case Int64:
				typed[int64](src.storage)[i] = int64(v)
			}
		}
		for _, v := range views {
			t.Run(dt.String()+"/"+v.name, func(t *testing.T) {
				view := &Tensor{}
				view.SetView(src, v.offset, v.sizes, v.strides)
				var want []float64
				view.ForEachIndex(func(i int) { want = append(want, src.elemFloat64(i)) })
				dst := NewTensor(dt, v.sizes...)
				CopyInto(dst, view)
				require.Equal(t, want, dst.Float64s())
			})
		}
	}
}
