package ops

import (
	"strconv"

	"github.com/gosr/gosr/ivalue"
)

// Shared helpers for elementwise kernels: broadcasting shapes, strided
// iteration of broadcast operands over a contiguous output, type
// promotion and dtype casts.

// MaxIterDims is the largest rank Iter supports after merging dimensions.
const MaxIterDims = 16

// BroadcastShapes appends to out[:0] the shape a and b broadcast to, per
// PyTorch (align right, sizes equal or 1), and returns it. With out of
// enough capacity (a stack array such as `var buf [MaxIterDims]int`) it
// does not allocate.
func BroadcastShapes(out []int, a, b []int) ([]int, error) {
	n := max(len(a), len(b))
	out = out[:0]
	for i := 0; i < n; i++ {
		sa, sb := 1, 1
		if j := i - (n - len(a)); j >= 0 {
			sa = a[j]
		}
		if j := i - (n - len(b)); j >= 0 {
			sb = b[j]
		}
		switch {
		case sa == sb, sb == 1:
			out = append(out, sa)
		case sa == 1:
			out = append(out, sb)
		default:
			return out, Errorf("shapes %s and %s do not broadcast: size %d vs %d at dimension %d", ShapeString(a), ShapeString(b), sa, sb, i)
		}
	}
	return out, nil
}

// BroadcastShapes3 is BroadcastShapes for three shapes.
func BroadcastShapes3(out []int, a, b, c []int) ([]int, error) {
	var tmp [MaxIterDims]int
	ab, err := BroadcastShapes(tmp[:0], a, b)
	if err != nil {
		return out, err
	}
	return BroadcastShapes(out, ab, c)
}

// SameSizes reports whether two shapes are equal.
func SameSizes(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Iter walks up to three operands broadcast to an output shape, in
// row-major order over a contiguous output, one run at a time along the
// innermost dimension (dimensions contiguous for every operand are merged
// first, so same-shape contiguous operands give a single run).
//
//	var it ops.Iter
//	if err := it.Init(outSizes, a, b, nil); err != nil { ... }
//	x, y := a.F32(), b.F32()
//	for it.Next() {
//		ia, ib, sa, sb := it.Off[0], it.Off[1], it.Stride[0], it.Stride[1]
//		for i := 0; i < it.N; i++ {
//			out[it.Out+i] = x[ia+i*sa] + y[ib+i*sb]
//		}
//	}
//
// Off are storage indices (the tensor's offset included) into the typed
// storage (t.F32(), ...); a broadcast dimension has stride 0. Iter is a
// plain value: keep it on the stack, Init allocates nothing.
type Iter struct {
	N      int    // length of the current run
	Out    int    // index in the contiguous output of the run's first element
	Off    [3]int // storage index of each operand's first element of the run
	Stride [3]int // each operand's stride along the run

	nops, ndim int // ndim: outer dimensions (the run dimension excluded)
	sizes      [MaxIterDims]int
	strides    [3][MaxIterDims]int
	idx        [MaxIterDims]int
	base       [3]int
	runs, done int
	inner      int
}

// Init prepares iteration of operands a, b, c (b and c may be nil) over
// the output shape outSizes; each operand must broadcast to it.
func (it *Iter) Init(outSizes []int, a, b, c *ivalue.Tensor) error {
	it.nops = 0
	ops := [3]*ivalue.Tensor{a, b, c}
	for _, t := range ops {
		if t != nil {
			it.nops++
		}
	}
	nd := len(outSizes)
	// Full-rank strides per operand, 0 where broadcast.
	var full [3][MaxIterDims]int
	if nd > MaxIterDims {
		return Errorf("tensors of rank %d are not supported by elementwise kernels (at most %d)", nd, MaxIterDims)
	}
	total := 1
	for _, s := range outSizes {
		total *= s
	}
	for k := 0; k < it.nops; k++ {
		t := ops[k]
		ts, tst := t.Sizes(), t.Strides()
		if len(ts) > nd {
			return Errorf("operand of shape %s does not broadcast to %s", ShapeString(ts), ShapeString(outSizes))
		}
		for d := 0; d < nd; d++ {
			j := d - (nd - len(ts))
			if j < 0 || ts[j] == 1 {
				full[k][d] = 0
				continue
			}
			if ts[j] != outSizes[d] {
				return Errorf("operand of shape %s does not broadcast to %s", ShapeString(ts), ShapeString(outSizes))
			}
			full[k][d] = tst[j]
		}
		it.base[k] = t.Offset()
	}
	// Merge dimensions, innermost first; size-1 dimensions vanish.
	var sz [MaxIterDims]int
	var st [3][MaxIterDims]int
	m := 0 // merged dims, stored innermost-first
	for d := nd - 1; d >= 0; d-- {
		s := outSizes[d]
		if s == 1 {
			continue
		}
		if m > 0 {
			ok := true
			for k := 0; k < it.nops; k++ {
				if full[k][d] != st[k][m-1]*sz[m-1] {
					ok = false
					break
				}
			}
			if ok {
				sz[m-1] *= s
				continue
			}
		}
		sz[m] = s
		for k := 0; k < it.nops; k++ {
			st[k][m] = full[k][d]
		}
		m++
	}
	if m == 0 { // a single element (or rank 0)
		sz[0] = 1
		m = 1
	}
	it.inner = sz[0]
	for k := 0; k < 3; k++ {
		it.Stride[k] = st[k][0]
	}
	// Outer dims, outermost first.
	it.ndim = m - 1
	for i := 0; i < it.ndim; i++ {
		it.sizes[i] = sz[m-1-i]
		for k := 0; k < it.nops; k++ {
			it.strides[k][i] = st[k][m-1-i]
		}
		it.idx[i] = 0
	}
	if total == 0 {
		it.runs = 0
	} else {
		it.runs = total / it.inner
	}
	it.done = 0
	it.N = it.inner
	return nil
}

// Next advances to the next run and reports whether there is one.
func (it *Iter) Next() bool {
	if it.done >= it.runs {
		return false
	}
	if it.done > 0 {
		// Odometer increment of the outer index.
		for d := it.ndim - 1; d >= 0; d-- {
			it.idx[d]++
			if it.idx[d] < it.sizes[d] {
				break
			}
			it.idx[d] = 0
		}
	}
	for k := 0; k < it.nops; k++ {
		off := it.base[k]
		for d := 0; d < it.ndim; d++ {
			off += it.idx[d] * it.strides[k][d]
		}
		it.Off[k] = off
	}
	it.Out = it.done * it.inner
	it.done++
	return true
}

// Runs is the number of runs Next will yield.
func (it *Iter) Runs() int { return it.runs }

// ---- type promotion ----

func dtypeCategory(d ivalue.DType) int {
	switch {
	case d == ivalue.Bool:
		return 1
	case d.IsInt():
		return 2
	case d.IsFloat():
		return 3
	}
	return 0
}

// PromoteTypes is torch.promote_types for the supported dtypes.
func PromoteTypes(a, b ivalue.DType) ivalue.DType {
	if a == b || b == ivalue.Undefined {
		return a
	}
	if a == ivalue.Undefined {
		return b
	}
	if a == ivalue.Bool {
		return b
	}
	if b == ivalue.Bool {
		return a
	}
	if a.IsFloat() != b.IsFloat() {
		if a.IsFloat() {
			return a
		}
		return b
	}
	if a.IsFloat() {
		if (a == ivalue.Float16 && b == ivalue.BFloat16) || (a == ivalue.BFloat16 && b == ivalue.Float16) {
			return ivalue.Float32
		}
		if a.Size() >= b.Size() {
			return a
		}
		return b
	}
	// integers
	if a == ivalue.Uint8 || b == ivalue.Uint8 {
		o := a
		if a == ivalue.Uint8 {
			o = b
		}
		if o == ivalue.Int8 {
			return ivalue.Int16
		}
		return o
	}
	if a.Size() >= b.Size() {
		return a
	}
	return b
}

func combineCategories(higher, lower ivalue.DType) ivalue.DType {
	if higher.IsFloat() {
		return higher
	}
	if higher == ivalue.Bool || lower.IsFloat() {
		return PromoteTypes(higher, lower)
	}
	if higher != ivalue.Undefined {
		return higher
	}
	return lower
}

// ScalarDType is the dtype a Python scalar takes in type promotion
// (wrapped number): float -> float32 (the default dtype), int -> int64,
// bool -> bool.
func ScalarDType(v ivalue.IValue) ivalue.DType {
	switch v.Kind() {
	case ivalue.KindDouble:
		return ivalue.Float32
	case ivalue.KindBool:
		return ivalue.Bool
	}
	return ivalue.Int64
}

// ResultType is torch.result_type for tensor operands (nil skipped) plus
// an optional wrapped-number dtype (Undefined for none): dimensioned
// tensors take priority over 0-d tensors, which take priority over
// scalars, unless a lower-priority operand is of a higher category.
func ResultType(a, b, c *ivalue.Tensor, scalar ivalue.DType) ivalue.DType {
	dim, zero := ivalue.Undefined, ivalue.Undefined
	for _, t := range [3]*ivalue.Tensor{a, b, c} {
		if t == nil {
			continue
		}
		if t.Dim() == 0 {
			zero = PromoteTypes(zero, t.DType())
		} else {
			dim = PromoteTypes(dim, t.DType())
		}
	}
	return combineCategories(dim, combineCategories(zero, scalar))
}

// ---- casts ----

// CastInto writes src's elements, converted to dst's dtype, into dst,
// which must be contiguous with src's numel (Resize it first). src may be
// strided. Conversions follow C casts as PyTorch's: float to int
// truncates, nonzero to bool is true.
func CastInto(dst, src *ivalue.Tensor) error {
	if dst.Numel() != src.Numel() {
		return Errorf("cast: %d elements into %d", src.Numel(), dst.Numel())
	}
	if dst.DType() == src.DType() {
		ivalue.CopyInto(dst, src)
		return nil
	}
	switch dst.DType() {
	case ivalue.Float32:
		return castToNum(dst.F32Contig(), src)
	case ivalue.Float64:
		return castToNum(dst.F64Contig(), src)
	case ivalue.Int64:
		return castToNum(dst.I64Contig(), src)
	case ivalue.Int32:
		return castToNum(dst.I32Contig(), src)
	case ivalue.Int16:
		return castToNum(dst.I16()[dst.Offset():dst.Offset()+dst.Numel()], src)
	case ivalue.Int8:
		return castToNum(dst.I8()[dst.Offset():dst.Offset()+dst.Numel()], src)
	case ivalue.Uint8:
		return castToNum(dst.U8Contig(), src)
	case ivalue.Bool:
		return castToBool(dst.BContig(), src)
	case ivalue.Float16, ivalue.BFloat16:
		tmp := make([]float32, src.Numel()) // rare dtype: allocation accepted
		if err := castToNum(tmp, src); err != nil {
			return err
		}
		o := dst.U16()[dst.Offset() : dst.Offset()+dst.Numel()]
		for i, v := range tmp {
			if dst.DType() == ivalue.Float16 {
				o[i] = ivalue.Float32ToHalf(v)
			} else {
				o[i] = ivalue.Float32ToBFloat16(v)
			}
		}
		return nil
	}
	return Errorf("cast to %s is not supported", dst.DType())
}

type ewReal interface {
	~float32 | ~float64 | ~int64 | ~int32 | ~int16 | ~int8 | ~uint8
}

func castToNum[D ewReal](dst []D, src *ivalue.Tensor) error {
	switch src.DType() {
	case ivalue.Float32:
		castLoop(dst, src.F32(), src)
	case ivalue.Float64:
		castLoop(dst, src.F64(), src)
	case ivalue.Int64:
		castLoop(dst, src.I64(), src)
	case ivalue.Int32:
		castLoop(dst, src.I32(), src)
	case ivalue.Int16:
		castLoop(dst, src.I16(), src)
	case ivalue.Int8:
		castLoop(dst, src.I8(), src)
	case ivalue.Uint8:
		castLoop(dst, src.U8(), src)
	case ivalue.Bool:
		s := src.B()
		var it Iter
		if err := it.Init(src.Sizes(), src, nil, nil); err != nil {
			return err
		}
		for it.Next() {
			o, ia, sa := it.Out, it.Off[0], it.Stride[0]
			for i := 0; i < it.N; i++ {
				if s[ia+i*sa] {
					dst[o+i] = 1
				} else {
					dst[o+i] = 0
				}
			}
		}
	case ivalue.Float16, ivalue.BFloat16:
		s := src.U16()
		half := src.DType() == ivalue.Float16
		var it Iter
		if err := it.Init(src.Sizes(), src, nil, nil); err != nil {
			return err
		}
		for it.Next() {
			o, ia, sa := it.Out, it.Off[0], it.Stride[0]
			for i := 0; i < it.N; i++ {
				var f float32
				if half {
					f = ivalue.HalfToFloat32(s[ia+i*sa])
				} else {
					f = ivalue.BFloat16ToFloat32(s[ia+i*sa])
				}
				dst[o+i] = D(f)
			}
		}
	default:
		return Errorf("cast from %s is not supported", src.DType())
	}
	return nil
}

// span returns the n elements of s from off. n == 0 gives an empty slice
// whatever off: an empty view's offset may lie past its storage's end, as
// in PyTorch (torch.empty(4, 6, 0)[1:] has offset 6 into no bytes).
func span[T any](s []T, off, n int) []T {
	if n == 0 {
		return s[:0:0]
	}
	return s[off : off+n]
}

func castLoop[D, S ewReal](dst []D, s []S, src *ivalue.Tensor) {
	if src.IsContiguous() {
		s = span(s, src.Offset(), len(dst))
		for i, v := range s {
			dst[i] = D(v)
		}
		return
	}
	var it Iter
	_ = it.Init(src.Sizes(), src, nil, nil) // src's own shape: cannot fail
	for it.Next() {
		o, ia, sa := it.Out, it.Off[0], it.Stride[0]
		for i := 0; i < it.N; i++ {
			dst[o+i] = D(s[ia+i*sa])
		}
	}
}

func castToBool(dst []bool, src *ivalue.Tensor) error {
	switch src.DType() {
	case ivalue.Float32:
		boolLoop(dst, src.F32(), src)
	case ivalue.Float64:
		boolLoop(dst, src.F64(), src)
	case ivalue.Int64:
		boolLoop(dst, src.I64(), src)
	case ivalue.Int32:
		boolLoop(dst, src.I32(), src)
	case ivalue.Int16:
		boolLoop(dst, src.I16(), src)
	case ivalue.Int8:
		boolLoop(dst, src.I8(), src)
	case ivalue.Uint8:
		boolLoop(dst, src.U8(), src)
	case ivalue.Float16, ivalue.BFloat16:
		// -0 is false: ignore the sign bit.
		s := src.U16()
		var it Iter
		_ = it.Init(src.Sizes(), src, nil, nil)
		for it.Next() {
			for i := 0; i < it.N; i++ {
				dst[it.Out+i] = s[it.Off[0]+i*it.Stride[0]]&0x7fff != 0
			}
		}
	default:
		return Errorf("cast from %s to bool is not supported", src.DType())
	}
	return nil
}

func boolLoop[S ewReal](dst []bool, s []S, src *ivalue.Tensor) {
	var it Iter
	_ = it.Init(src.Sizes(), src, nil, nil)
	for it.Next() {
		o, ia, sa := it.Out, it.Off[0], it.Stride[0]
		for i := 0; i < it.N; i++ {
			dst[o+i] = s[ia+i*sa] != 0
		}
	}
}

// castScratch returns t converted to dt: t itself when it already has
// that dtype, else a contiguous copy in *buf (allocated once, reused).
func castScratch(t *ivalue.Tensor, dt ivalue.DType, buf **ivalue.Tensor) (*ivalue.Tensor, error) {
	if t.DType() == dt {
		return t, nil
	}
	if *buf == nil {
		*buf = &ivalue.Tensor{}
	}
	(*buf).Resize(dt, t.Sizes())
	if err := CastInto(*buf, t); err != nil {
		return nil, err
	}
	return *buf, nil
}

// ShapeString formats a shape as [2, 3] for error messages without
// making the slice escape (so callers' stack buffers stay on the stack).
func ShapeString(s []int) string {
	b := make([]byte, 0, 2+4*len(s))
	b = append(b, '[')
	for i, v := range s {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = strconv.AppendInt(b, int64(v), 10)
	}
	return string(append(b, ']'))
}
