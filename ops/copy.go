package ops

import (
	"math"
	"unsafe"

	"github.com/gosr/gosr/ivalue"
)

// copyMaxDims bounds the dims the strided copy engine iterates with
// stack arrays; deeper layouts (after coalescing) recurse on the
// outermost dim instead of allocating.
const copyMaxDims = 16

// copyStrided copies src's elements, in logical order, into dst, which
// must be contiguous, hold the same number of elements and have a dtype
// of the same element size (callers check). src may have any strides,
// including 0 (broadcast views), and any storage offset.
func copyStrided(dst, src *ivalue.Tensor) {
	n := src.Numel()
	if n == 0 {
		return
	}
	es := src.DType().Size()
	d := dst.Storage().Data
	s := src.Storage().Data
	if src.IsContiguous() {
		copy(d[dst.Offset()*es:(dst.Offset()+n)*es], s[src.Offset()*es:(src.Offset()+n)*es])
		return
	}
	var dsBuf [copyMaxDims]int
	var dstStrides []int
	if src.Dim() <= copyMaxDims {
		dstStrides = dsBuf[:src.Dim()]
	} else {
		dstStrides = make([]int, src.Dim())
	}
	copyContigStrides(dstStrides, src.Sizes())
	copyND(d, dst.Offset(), dstStrides, s, src.Offset(), src.Strides(), src.Sizes(), es)
}

// copyContigStrides writes row-major strides for sizes into strides.
func copyContigStrides(strides, sizes []int) {
	st := 1
	for i := len(sizes) - 1; i >= 0; i-- {
		strides[i] = st
		st *= max(sizes[i], 1)
	}
}

// copyCoalesce drops size-1 dims and merges dims that are contiguous with
// their inner neighbour in both layouts, writing the result into the
// given arrays. It returns the number of dims kept (0 means one element).
func copyCoalesce(sizes, dStrides, sStrides []int, os, od, oss *[copyMaxDims]int) int {
	nd := 0
	for i := 0; i < len(sizes); i++ {
		sz := sizes[i]
		if sz == 1 {
			continue
		}
		if nd > 0 {
			// merge into the previous (outer) kept dim when it steps
			// exactly over this one in both layouts
			j := nd - 1
			if od[j] == dStrides[i]*sz && oss[j] == sStrides[i]*sz {
				os[j] *= sz
				od[j] = dStrides[i]
				oss[j] = sStrides[i]
				continue
			}
		}
		os[nd], od[nd], oss[nd] = sz, dStrides[i], sStrides[i]
		nd++
	}
	return nd
}

// copyND copies the block of the given sizes from src (element offset
// sOff, strides sStrides) to dst (dOff, dStrides); es is the element size
// in bytes. Strides and offsets are in elements. Inner runs that are
// contiguous on both sides are copied with copy(), other runs with
// typed loops.
func copyND(dst []byte, dOff int, dStrides []int, src []byte, sOff int, sStrides []int, sizes []int, es int) {
	for _, sz := range sizes {
		if sz == 0 {
			return
		}
	}
	if len(sizes) > copyMaxDims {
		// Rare: recurse on the outermost dim rather than allocate.
		for i := 0; i < sizes[0]; i++ {
			copyND(dst, dOff+i*dStrides[0], dStrides[1:], src, sOff+i*sStrides[0], sStrides[1:], sizes[1:], es)
		}
		return
	}
	var sz, ds, ss, idx [copyMaxDims]int
	nd := copyCoalesce(sizes, dStrides, sStrides, &sz, &ds, &ss)
	if nd == 0 {
		copy(dst[dOff*es:dOff*es+es], src[sOff*es:sOff*es+es])
		return
	}
	if es == 4 && nd >= 2 && copyTransposes(&sz, &ds, &ss, nd) {
		copyTransposeOuter(copyAs[float32](dst), dOff, copyAs[float32](src), sOff, sz[:nd], ds[:nd], ss[:nd])
		return
	}
	inner := nd - 1
	n, dst1, sst1 := sz[inner], ds[inner], ss[inner]
	for {
		copyRun(dst, dOff, dst1, src, sOff, sst1, n, es)
		// advance the outer multi-index
		k := inner - 1
		for ; k >= 0; k-- {
			idx[k]++
			dOff += ds[k]
			sOff += ss[k]
			if idx[k] < sz[k] {
				break
			}
			dOff -= ds[k] * sz[k]
			sOff -= ss[k] * sz[k]
			idx[k] = 0
		}
		if k < 0 {
			return
		}
	}
}

// copyTransposes reports whether the last two of nd coalesced dims are
// a transpose of 4-byte elements big enough for 8x8 blocks: the output
// contiguous along the last dim and the input along the one before
// (convnext's permutes between [C, H*W] and [H*W, C], attention's
// key transposes), swapping the two dims so that is their order. A
// strided copy there reads one element a line at a time.
func copyTransposes(sz, ds, ss *[copyMaxDims]int, nd int) bool {
	i, j := nd-2, nd-1
	if !useAVX2 || sz[i] < 8 || sz[j] < 8 {
		return false
	}
	if ss[j] == 1 && ds[i] == 1 && ds[j] != 1 {
		sz[i], sz[j] = sz[j], sz[i]
		ds[i], ds[j] = ds[j], ds[i]
		ss[i], ss[j] = ss[j], ss[i]
	}
	return ds[j] == 1 && ss[i] == 1 && ss[j] != 1
}

// copyTransposeOuter runs copyTranspose32 over the outer dims of a copy
// copyTransposes accepted.
func copyTransposeOuter(d []float32, dOff int, s []float32, sOff int, sz, ds, ss []int) {
	if len(sz) > 2 {
		for k := 0; k < sz[0]; k++ {
			copyTransposeOuter(d, dOff+k*ds[0], s, sOff+k*ss[0], sz[1:], ds[1:], ss[1:])
		}
		return
	}
	copyTranspose32(d, dOff, ds[0], s, sOff, ss[1], sz[0], sz[1])
}

// copyTranspose32 sets d[dOff + i*ldd + j] = s[sOff + j*lds + i] for
// i < rows, j < cols: 8x8 blocks transposed in registers
// (transpose8x8AVX2), eight output rows at a time across all columns so
// the input lines they share stay in L1, the edges one element at a
// time.
func copyTranspose32(d []float32, dOff, ldd int, s []float32, sOff, lds, rows, cols int) {
	_ = d[dOff+(rows-1)*ldd+cols-1]
	_ = s[sOff+(cols-1)*lds+rows-1]
	r8, c8 := rows&^7, cols&^7
	for i0 := 0; i0 < r8; i0 += 8 {
		for j0 := 0; j0 < c8; j0 += 8 {
			transpose8x8AVX2(&d[dOff+i0*ldd+j0], ldd, &s[sOff+j0*lds+i0], lds)
		}
		for i := i0; i < i0+8; i++ {
			for j := c8; j < cols; j++ {
				d[dOff+i*ldd+j] = s[sOff+j*lds+i]
			}
		}
	}
	for i := r8; i < rows; i++ {
		for j := 0; j < cols; j++ {
			d[dOff+i*ldd+j] = s[sOff+j*lds+i]
		}
	}
}

// copyRun copies n elements of es bytes from src (stride sst) to dst
// (stride dst1), offsets and strides in elements.
func copyRun(dst []byte, dOff, dst1 int, src []byte, sOff, sst int, n, es int) {
	if dst1 == 1 && sst == 1 {
		copy(dst[dOff*es:(dOff+n)*es], src[sOff*es:(sOff+n)*es])
		return
	}
	switch es {
	case 4:
		copyRunT(copyAs[uint32](dst), dOff, dst1, copyAs[uint32](src), sOff, sst, n)
	case 8:
		copyRunT(copyAs[uint64](dst), dOff, dst1, copyAs[uint64](src), sOff, sst, n)
	case 2:
		copyRunT(copyAs[uint16](dst), dOff, dst1, copyAs[uint16](src), sOff, sst, n)
	case 1:
		copyRunT(dst, dOff, dst1, src, sOff, sst, n)
	default:
		for j := 0; j < n; j++ {
			copy(dst[dOff*es:dOff*es+es], src[sOff*es:sOff*es+es])
			dOff += dst1
			sOff += sst
		}
	}
}

func copyRunT[T any](d []T, di, dstep int, s []T, si, sstep, n int) {
	if sstep == 0 && dstep == 1 {
		v := s[si]
		d = d[di : di+n]
		for j := range d {
			d[j] = v
		}
		return
	}
	for j := 0; j < n; j++ {
		d[di] = s[si]
		di += dstep
		si += sstep
	}
}

// copyAs reinterprets a byte buffer as elements of T (storages are
// 64-byte aligned, so any element type is aligned).
func copyAs[T any](b []byte) []T {
	if len(b) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/int(unsafe.Sizeof(z)))
}

// copyConvertND is copyND between different dtypes: each element is
// converted as PyTorch's casts do (floats to ints truncate, anything to
// bool is != 0). It is the slow path of kernels that promote dtypes
// (cat of mixed dtypes).
func copyConvertND(dst []byte, ddt ivalue.DType, dOff int, dStrides []int, src []byte, sdt ivalue.DType, sOff int, sStrides []int, sizes []int) {
	if ddt == sdt {
		copyND(dst, dOff, dStrides, src, sOff, sStrides, sizes, ddt.Size())
		return
	}
	for _, sz := range sizes {
		if sz == 0 {
			return
		}
	}
	if len(sizes) > copyMaxDims {
		for i := 0; i < sizes[0]; i++ {
			copyConvertND(dst, ddt, dOff+i*dStrides[0], dStrides[1:], src, sdt, sOff+i*sStrides[0], sStrides[1:], sizes[1:])
		}
		return
	}
	var sz, ds, ss, idx [copyMaxDims]int
	nd := copyCoalesce(sizes, dStrides, sStrides, &sz, &ds, &ss)
	if nd == 0 {
		nd, sz[0] = 1, 1
	}
	inner := nd - 1
	viaFloat := ddt.IsFloat() || sdt.IsFloat()
	for {
		d, s := dOff, sOff
		for j := 0; j < sz[inner]; j++ {
			if viaFloat {
				copyStoreF(dst, ddt, d, copyLoadF(src, sdt, s))
			} else {
				copyStoreI(dst, ddt, d, copyLoadI(src, sdt, s))
			}
			d += ds[inner]
			s += ss[inner]
		}
		k := inner - 1
		for ; k >= 0; k-- {
			idx[k]++
			dOff += ds[k]
			sOff += ss[k]
			if idx[k] < sz[k] {
				break
			}
			dOff -= ds[k] * sz[k]
			sOff -= ss[k] * sz[k]
			idx[k] = 0
		}
		if k < 0 {
			return
		}
	}
}

func copyLoadF(b []byte, dt ivalue.DType, i int) float64 {
	switch dt {
	case ivalue.Float32:
		return float64(copyAs[float32](b)[i])
	case ivalue.Float64:
		return copyAs[float64](b)[i]
	case ivalue.Float16:
		return float64(ivalue.HalfToFloat32(copyAs[uint16](b)[i]))
	case ivalue.BFloat16:
		return float64(ivalue.BFloat16ToFloat32(copyAs[uint16](b)[i]))
	}
	return float64(copyLoadI(b, dt, i))
}

func copyLoadI(b []byte, dt ivalue.DType, i int) int64 {
	switch dt {
	case ivalue.Int64:
		return copyAs[int64](b)[i]
	case ivalue.Int32:
		return int64(copyAs[int32](b)[i])
	case ivalue.Int16:
		return int64(copyAs[int16](b)[i])
	case ivalue.Int8:
		return int64(int8(b[i]))
	case ivalue.Uint8, ivalue.Bool:
		return int64(b[i])
	}
	return int64(copyLoadF(b, dt, i))
}

func copyStoreF(b []byte, dt ivalue.DType, i int, v float64) {
	switch dt {
	case ivalue.Float32:
		copyAs[float32](b)[i] = float32(v)
	case ivalue.Float64:
		copyAs[float64](b)[i] = v
	case ivalue.Float16:
		copyAs[uint16](b)[i] = ivalue.Float32ToHalf(float32(v))
	case ivalue.BFloat16:
		copyAs[uint16](b)[i] = ivalue.Float32ToBFloat16(float32(v))
	case ivalue.Bool:
		if v != 0 {
			b[i] = 1
		} else {
			b[i] = 0
		}
	default:
		if math.IsNaN(v) {
			v = 0
		}
		copyStoreI(b, dt, i, int64(v))
	}
}

func copyStoreI(b []byte, dt ivalue.DType, i int, v int64) {
	switch dt {
	case ivalue.Int64:
		copyAs[int64](b)[i] = v
	case ivalue.Int32:
		copyAs[int32](b)[i] = int32(v)
	case ivalue.Int16:
		copyAs[int16](b)[i] = int16(v)
	case ivalue.Int8, ivalue.Uint8:
		b[i] = byte(v)
	case ivalue.Bool:
		if v != 0 {
			b[i] = 1
		} else {
			b[i] = 0
		}
	default:
		copyStoreF(b, dt, i, float64(v))
	}
}
