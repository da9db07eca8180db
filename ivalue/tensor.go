package ivalue

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"
	"sync/atomic"
	"unsafe"
)

// Storage is a flat, untyped buffer that one or more tensors view.
// Data may be a window into a memory planner's slab. Its contents may
// change; the slice itself must not once a tensor uses the storage
// (tensors cache its pointer and length): make a new Storage instead.
type Storage struct {
	// Data is host memory; nil for a storage on a device.
	Data []byte
	// Device is where the memory lives (Host: Data).
	Device Device
	// A device storage's memory: its first byte and length, and what
	// keeps the allocation alive (see DeviceStorage).
	ptr   unsafe.Pointer
	size  int
	owner any
}

// Len is the storage's size in bytes.
func (s *Storage) Len() int {
	if s.Device.IsHost() {
		return len(s.Data)
	}
	return s.size
}

// Ptr is the address of the first byte (nil when empty). On a device it
// is the device's address, which Go must not dereference.
func (s *Storage) Ptr() unsafe.Pointer {
	if s.Device.IsHost() {
		if len(s.Data) == 0 {
			return nil
		}
		return unsafe.Pointer(unsafe.SliceData(s.Data))
	}
	return s.ptr
}

// Window returns a storage of the n bytes at off in s, on s's device and
// keeping s's memory alive (memory planners cut a slab into windows).
func (s *Storage) Window(off, n int) *Storage {
	if s.Device.IsHost() {
		return &Storage{Data: s.Data[off : off+n : off+n]}
	}
	if off < 0 || n < 0 || off+n > s.size {
		panic(fmt.Sprintf("ivalue: window [%d, %d) of a %d-byte storage", off, off+n, s.size))
	}
	return &Storage{Device: s.Device, ptr: unsafe.Add(s.ptr, off), size: n, owner: s}
}

// NewStorage allocates n bytes, aligned to 64 bytes.
func NewStorage(n int) *Storage {
	storageAllocs.Add(1)
	return &Storage{Data: AlignedBytes(n)}
}

var storageAllocs atomic.Uint64

// StorageAllocs counts the storages NewStorage has made in the process.
// A memory planner reads it before and after a run: if it did not move,
// no tensor outgrew its planned memory.
func StorageAllocs() uint64 { return storageAllocs.Load() }

// AlignedBytes returns a zeroed byte slice of length n whose first byte is
// 64-byte aligned (the alignment PyTorch's CPU allocator gives). It
// panics with an *AllocError for more than the process can ever get.
func AlignedBytes(n int) []byte {
	if n == 0 {
		return []byte{}
	}
	checkAlloc(n)
	b := make([]byte, n+63)
	off := int(-uintptr(unsafe.Pointer(&b[0])) & 63)
	return b[off : off+n : off+n]
}

// Tensor is a strided view of a Storage. Sizes, strides and offset are in
// elements. Kernels read the typed storage through F32, I64, ... and
// address it with Offset and Strides; contiguous tensors may use the
// *Contig accessors.
//
// A Tensor held by a runtime slot is reused across runs: out-variant and
// view kernels rewrite it in place, so a Tensor returned by Run is valid
// until the next Run on the same runtime (Clone it to keep it).
type Tensor struct {
	dtype   DType
	sizes   []int
	strides []int
	offset  int
	storage *Storage
	// data and nbytes cache storage.Data's pointer and length, saving
	// kernels a dependent load on every access (a Storage's Data is not
	// changed after the storage is shared).
	data   unsafe.Pointer
	nbytes int
	// plain: contiguous from offset 0, as Resize leaves it (lets a
	// steady Resize to the same sizes return at once).
	plain bool
	// own: the storage was made for this tensor (by Resize) or given to
	// it (SetStorage, a wrapped slice), not borrowed by SetView, so Resize
	// may write into it.
	own bool
	// device is where the storage is, or where Resize allocates one.
	device Device
	// gen changes whenever the geometry, dtype or storage may have
	// changed (see Gen).
	gen uint32
}

// Gen is the tensor's geometry generation: it changes whenever t's
// dtype, sizes, strides, offset or storage may have changed (a Resize to
// new sizes, a view re-pointed, a storage given), and stays the same
// while a steady Resize to the same sizes leaves t alone. Checks that
// depend only on those (may a kernel write over this tensor?) can be
// remembered until it moves.
func (t *Tensor) Gen() uint32 { return t.gen }

// NewTensor allocates a contiguous, zeroed tensor. It panics (with an
// error) when a size is negative or the element count overflows, which is
// a programming error here: sizes that come from a file or a caller go
// through NewTensorErr.
func NewTensor(dt DType, sizes ...int) *Tensor {
	t := &Tensor{}
	t.Resize(dt, sizes)
	return t
}

// NewTensorErr is NewTensor returning an error for negative sizes, an
// element count (or byte count) that overflows an int, or an allocation
// that fails.
func NewTensorErr(dt DType, sizes ...int) (*Tensor, error) {
	if _, err := numelBytes(dt, sizes); err != nil {
		return nil, err
	}
	t := &Tensor{}
	if err := t.ResizeErr(dt, sizes); err != nil {
		return nil, err
	}
	return t, nil
}

// ErrNumelOverflow is the error of sizes whose element count does not fit
// an int (torch: "numel: integer multiplication overflow").
var ErrNumelOverflow = errors.New("numel: integer multiplication overflow")

// CheckedNumel returns the element count of sizes, or an error when a size
// is negative or the product of the non-zero sizes overflows an int (an
// empty tensor's count is 0 whatever its other sizes, but sizes that
// overflow are refused even then, so that no later product of them can
// wrap around).
func CheckedNumel(sizes []int) (int, error) {
	n, zero := 1, false
	for _, s := range sizes {
		if s < 0 {
			return 0, fmt.Errorf("tensor sizes %s: negative size %d", shortInts(sizes), s)
		}
		if s == 0 {
			zero = true
			continue
		}
		hi, lo := bits.Mul64(uint64(n), uint64(s))
		if hi != 0 || lo > math.MaxInt {
			return 0, fmt.Errorf("tensor sizes %s: %w", shortInts(sizes), ErrNumelOverflow)
		}
		n = int(lo)
	}
	if zero {
		return 0, nil
	}
	return n, nil
}

// numelBytes is CheckedNumel times dt's size, checked too.
func numelBytes(dt DType, sizes []int) (int, error) {
	n, err := CheckedNumel(sizes)
	if err != nil {
		return 0, err
	}
	if es := dt.Size(); es > 1 && n > math.MaxInt/es {
		return 0, fmt.Errorf("tensor sizes %s of %s: the byte count overflows: %w", shortInts(sizes), dt, ErrNumelOverflow)
	}
	return n * dt.Size(), nil
}

// shortInts prints sizes or strides for an error, at most 16 of them
// (they may come from a file, by the million).
func shortInts(xs []int) string {
	// A copy is printed, so that xs does not escape: Resize's callers pass
	// sizes on their stack.
	if len(xs) <= 16 {
		return fmt.Sprint(append([]int(nil), xs...))
	}
	return fmt.Sprintf("%v... (%d dims)", append([]int(nil), xs[:16]...), len(xs))
}

// ViewBytes returns the number of bytes of a storage that a view of dtype
// dt with the given offset, sizes and strides (in elements) reaches: 0 for
// an empty view, else (the last element's index + 1) times the element
// size. It is an error, never a wrapped-around number, when the sizes are
// negative or their count overflows (CheckedNumel), a stride or the
// offset is negative, or the index arithmetic overflows. Strides of 0
// (broadcast views) reach nothing beyond their first element.
func ViewBytes(dt DType, offset int, sizes, strides []int) (int, error) {
	if len(strides) != len(sizes) {
		return 0, fmt.Errorf("tensor: %d strides for %d sizes", len(strides), len(sizes))
	}
	n, err := CheckedNumel(sizes)
	if err != nil {
		return 0, err
	}
	if offset < 0 {
		return 0, fmt.Errorf("tensor: negative storage offset %d", offset)
	}
	for _, st := range strides {
		if st < 0 {
			return 0, fmt.Errorf("tensor: strides %s: negative strides are not supported", shortInts(strides))
		}
	}
	if n == 0 {
		return 0, nil
	}
	last := uint64(offset)
	for i, s := range sizes {
		hi, step := bits.Mul64(uint64(s-1), uint64(strides[i]))
		sum, carry := bits.Add64(last, step, 0)
		if hi != 0 || carry != 0 || sum > math.MaxInt {
			return 0, fmt.Errorf("tensor: view %s strides %s offset %d: the storage size calculation overflows", shortInts(sizes), shortInts(strides), offset)
		}
		last = sum
	}
	hi, nb := bits.Mul64(last+1, uint64(dt.Size()))
	if hi != 0 || nb > math.MaxInt {
		return 0, fmt.Errorf("tensor: view %s strides %s offset %d: the storage size calculation overflows", shortInts(sizes), shortInts(strides), offset)
	}
	return int(nb), nil
}

// FromStorage makes a tensor viewing s with the given geometry. strides nil
// means contiguous. It checks the geometry (see ViewBytes: no negative
// size, stride or offset, no overflowing count) and that the view fits in
// the storage.
func FromStorage(dt DType, s *Storage, offset int, sizes, strides []int) (*Tensor, error) {
	if s == nil {
		return nil, fmt.Errorf("tensor: no storage")
	}
	if strides == nil {
		if _, err := CheckedNumel(sizes); err != nil {
			return nil, err
		}
		strides = make([]int, len(sizes))
		contiguousStrides(strides, sizes)
	} else {
		strides = append([]int(nil), strides...)
	}
	need, err := ViewBytes(dt, offset, sizes, strides)
	if err != nil {
		return nil, err
	}
	if need > s.Len() {
		return nil, fmt.Errorf("tensor: view %s strides %s offset %d of %s needs %d bytes, storage has %d", shortInts(sizes), shortInts(strides), offset, dt, need, s.Len())
	}
	t := &Tensor{dtype: dt, offset: offset}
	t.attach(s)
	t.sizes = append([]int(nil), sizes...)
	t.strides = strides
	return t, nil
}

func bytesOf[T any](data []T) []byte {
	if len(data) == 0 {
		return []byte{}
	}
	var z T
	return unsafe.Slice((*byte)(unsafe.Pointer(&data[0])), len(data)*int(unsafe.Sizeof(z)))
}

func wrap[T any](dt DType, data []T, sizes []int) *Tensor {
	if sizes == nil { // no sizes given: 1-d; an empty, non-nil list means 0-d
		sizes = []int{len(data)}
	}
	n, err := CheckedNumel(sizes)
	if err != nil {
		panic(fmt.Sprintf("ivalue: %d elements for sizes %v: %v", len(data), sizes, err))
	}
	if n != len(data) {
		panic(fmt.Sprintf("ivalue: %d elements for sizes %v", len(data), sizes))
	}
	t := &Tensor{dtype: dt, own: true}
	t.attach(&Storage{Data: bytesOf(data)})
	t.sizes = append(make([]int, 0, len(sizes)), sizes...)
	t.strides = make([]int, len(sizes))
	contiguousStrides(t.strides, t.sizes)
	return t
}

// F32Tensor wraps data (no copy) as a contiguous tensor of the given
// sizes; no sizes means a 1-d tensor of len(data). It panics when the
// element count does not match (or a size is negative), a programming
// error.
func F32Tensor(data []float32, sizes ...int) *Tensor { return wrap(Float32, data, sizes) }

// F64Tensor wraps data (no copy); see F32Tensor.
func F64Tensor(data []float64, sizes ...int) *Tensor { return wrap(Float64, data, sizes) }

// I64Tensor wraps data (no copy); see F32Tensor.
func I64Tensor(data []int64, sizes ...int) *Tensor { return wrap(Int64, data, sizes) }

// I32Tensor wraps data (no copy); see F32Tensor.
func I32Tensor(data []int32, sizes ...int) *Tensor { return wrap(Int32, data, sizes) }

// BoolTensor wraps data (no copy); see F32Tensor.
func BoolTensor(data []bool, sizes ...int) *Tensor { return wrap(Bool, data, sizes) }

// U8Tensor wraps data (no copy); see F32Tensor.
func U8Tensor(data []uint8, sizes ...int) *Tensor { return wrap(Uint8, data, sizes) }

// I8Tensor wraps data (no copy); see F32Tensor.
func I8Tensor(data []int8, sizes ...int) *Tensor { return wrap(Int8, data, sizes) }

// ScalarTensor returns a 0-d float32 tensor.
func ScalarTensor(v float32) *Tensor { return wrap(Float32, []float32{v}, []int{}) }

func contiguousStrides(strides, sizes []int) {
	st := 1
	for i := len(sizes) - 1; i >= 0; i-- {
		strides[i] = st
		st *= max(sizes[i], 1)
	}
}

// DType returns the element type.
func (t *Tensor) DType() DType { return t.dtype }

// Sizes returns the shape. The slice is the tensor's own: do not modify.
func (t *Tensor) Sizes() []int { return t.sizes }

// Strides returns the strides in elements. Do not modify.
func (t *Tensor) Strides() []int { return t.strides }

// Offset returns the storage offset in elements.
func (t *Tensor) Offset() int { return t.offset }

// Storage returns the underlying storage (shared by views).
func (t *Tensor) Storage() *Storage { return t.storage }

// Dim returns the number of dimensions.
func (t *Tensor) Dim() int { return len(t.sizes) }

// Size returns the size of dimension d; negative d counts from the end.
func (t *Tensor) Size(d int) int {
	if d < 0 {
		d += len(t.sizes)
	}
	return t.sizes[d]
}

// Numel returns the number of elements.
func (t *Tensor) Numel() int {
	n := 1
	for _, s := range t.sizes {
		n *= s
	}
	return n
}

// Nbytes is Numel times the element size.
func (t *Tensor) Nbytes() int { return t.Numel() * t.dtype.Size() }

// IsContiguous reports whether the tensor is laid out row-major with no gaps.
// As in PyTorch, a tensor with no elements is contiguous whatever its
// strides (NewTensor(dt, 3, 0) has strides [1 1]).
func (t *Tensor) IsContiguous() bool {
	for _, s := range t.sizes {
		if s == 0 {
			return true
		}
	}
	st := 1
	for i := len(t.sizes) - 1; i >= 0; i-- {
		if t.sizes[i] == 1 {
			continue
		}
		if t.strides[i] != st {
			return false
		}
		st *= t.sizes[i]
	}
	return true
}

// Resize makes t a contiguous tensor of dtype dt and the given sizes,
// keeping its storage when it is large enough and not shared, as
// PyTorch's out variants do. Contents are unspecified after a resize that
// changes the geometry. It allocates only when sizes' length exceeds the
// capacity of t's shape slices or the storage is too small, so a steady
// run with static shapes allocates nothing. It panics with an error for a
// negative size, an element count that overflows or memory that cannot
// be had (ResizeErr returns it), and leaves t unchanged then.
func (t *Tensor) Resize(dt DType, sizes []int) {
	if t.fits(dt, sizes) {
		return
	}
	if err := t.resize(dt, sizes); err != nil {
		// Sizes a file or a caller gave, and tensors on a device, go
		// through ResizeErr: this is a caller's bug.
		panic(err)
	}
}

// fits reports whether t already is a contiguous tensor of dt and sizes
// with the memory for it: then resizing changes nothing.
func (t *Tensor) fits(dt DType, sizes []int) bool {
	if t.plain && t.dtype == dt && len(t.sizes) == len(sizes) && t.storage != nil {
		same, n := true, dt.Size()
		for i, s := range sizes {
			same = same && t.sizes[i] == s
			n *= s
		}
		return same && t.nbytes >= n
	}
	return false
}

// resize is Resize past its check that nothing changes: a negative size,
// an element count that overflows or memory that cannot be had is its
// error, and t is left unchanged then.
func (t *Tensor) resize(dt DType, sizes []int) error {
	need, err := numelBytes(dt, sizes)
	if err != nil {
		return err
	}
	// Allocate before changing anything, so that a failed allocation
	// leaves t as it was.
	var st *Storage
	if t.storage == nil || !t.own || t.nbytes < need {
		// A storage borrowed by SetView is another tensor's memory.
		if t.device.IsHost() {
			if err := allocErr(need); err != nil {
				return err
			}
			st = NewStorage(need)
		} else if st, err = AllocStorage(t.device, need); err != nil {
			return err
		}
	}
	t.plain = true
	t.dtype = dt
	t.setGeometry(sizes)
	t.offset = 0
	if st != nil {
		t.attach(st)
		t.own = true
	}
	return nil
}

// ResizeLike is Resize with the sizes of o.
func (t *Tensor) ResizeLike(dt DType, o *Tensor) { t.Resize(dt, o.sizes) }

// newShape gives t room for n dims: sizes and strides in one block of a
// whole number of 64-byte cache lines (up to 4 dims in one line). Kernels
// rewrite these slices on every run, and runtimes serving in parallel
// each have their own tensors: two small blocks of different runtimes
// sharing a cache line would bounce it between cores on every run.
// Blocks of 8 ints are the allocator's 64-byte size class, which places
// them on line boundaries.
func (t *Tensor) newShape(n int) {
	half := (n + 2 + 3) &^ 3 // at least two dims spare, a whole half line
	buf := make([]int, 2*half)
	t.sizes = buf[:n:half]
	t.strides = buf[half : half+n : 2*half]
}

func (t *Tensor) setGeometry(sizes []int) {
	t.gen++
	if cap(t.sizes) < len(sizes) {
		t.newShape(len(sizes))
	}
	// sizes may alias t.sizes (a caller passing t.Sizes()).
	t.sizes = t.sizes[:len(sizes)]
	copy(t.sizes, sizes)
	t.strides = t.strides[:len(sizes)]
	contiguousStrides(t.strides, t.sizes)
}

// SetView makes t a view of src's storage with the given geometry,
// reusing t's shape slices. View kernels use it so that a steady run
// allocates nothing. sizes and strides may alias src's.
func (t *Tensor) SetView(src *Tensor, offset int, sizes, strides []int) {
	t.gen++
	t.plain = false
	t.own = false
	t.dtype = src.dtype
	t.attach(src.storage)
	t.offset = offset
	if cap(t.sizes) < len(sizes) || cap(t.strides) < len(strides) {
		t.newShape(len(sizes))
	}
	t.sizes = t.sizes[:len(sizes)]
	t.strides = t.strides[:len(sizes)]
	copy(t.sizes, sizes)
	copy(t.strides, strides)
}

// SetStorage points t at s (used by memory planners), keeping the
// geometry. t then owns s: a later Resize may write into it.
func (t *Tensor) SetStorage(s *Storage, offset int) {
	t.plain = t.plain && offset == 0
	t.own = true
	t.attach(s)
	t.offset = offset
}

// SharesStorage reports whether t and o view the same storage.
func (t *Tensor) SharesStorage(o *Tensor) bool {
	return t != nil && o != nil && t.storage != nil && t.storage == o.storage
}

// attach makes s the tensor's storage.
func (t *Tensor) attach(s *Storage) {
	t.gen++
	t.storage = s
	t.data, t.nbytes = nil, 0
	if s == nil {
		return
	}
	t.device = s.Device
	if !s.Device.IsHost() {
		t.data, t.nbytes = s.ptr, s.size
	} else if len(s.Data) > 0 {
		t.data, t.nbytes = unsafe.Pointer(unsafe.SliceData(s.Data)), len(s.Data)
	}
}

// view returns the cached storage as a []T of whole elements.
func view[T any](t *Tensor) []T {
	var z T
	return unsafe.Slice((*T)(t.data), t.nbytes/int(unsafe.Sizeof(z)))
}

func typed[T any](s *Storage) []T {
	if s == nil || len(s.Data) == 0 {
		return nil
	}
	var z T
	return unsafe.Slice((*T)(unsafe.Pointer(&s.Data[0])), len(s.Data)/int(unsafe.Sizeof(z)))
}

func (t *Tensor) check(dt DType) {
	if t.dtype != dt || t.device.Type != Host {
		t.badRead(dt)
	}
}

func (t *Tensor) badRead(dt DType) {
	if t.device.Type != Host {
		panic(&DeviceAccessError{Device: t.device, DType: t.dtype})
	}
	panic(fmt.Sprintf("ivalue: %s tensor read as %s", t.dtype, dt))
}

// F32 returns the whole storage as float32; index it with Offset and Strides.
func (t *Tensor) F32() []float32 { t.check(Float32); return view[float32](t) }

// F64 returns the whole storage as float64.
func (t *Tensor) F64() []float64 { t.check(Float64); return view[float64](t) }

// I64 returns the whole storage as int64.
func (t *Tensor) I64() []int64 { t.check(Int64); return view[int64](t) }

// I32 returns the whole storage as int32.
func (t *Tensor) I32() []int32 { t.check(Int32); return view[int32](t) }

// I16 returns the whole storage as int16.
func (t *Tensor) I16() []int16 { t.check(Int16); return view[int16](t) }

// I8 returns the whole storage as int8.
func (t *Tensor) I8() []int8 { t.check(Int8); return view[int8](t) }

// U8 returns the whole storage as uint8.
func (t *Tensor) U8() []uint8 { t.check(Uint8); return view[uint8](t) }

// U16 returns the whole storage as raw 16-bit words (float16, bfloat16).
func (t *Tensor) U16() []uint16 {
	if t.dtype != Float16 && t.dtype != BFloat16 {
		panic(fmt.Sprintf("ivalue: %s tensor read as 16-bit float", t.dtype))
	}
	if t.device.Type != Host {
		t.badRead(t.dtype)
	}
	return typed[uint16](t.storage)
}

// B returns the whole storage as bool (one byte each, 0 or 1).
func (t *Tensor) B() []bool { t.check(Bool); return view[bool](t) }

// contigOf returns the numel elements of t from its offset in all (t's
// whole storage). An empty tensor gives an empty slice whatever its
// offset: as in PyTorch, an empty view's offset may lie past its
// storage's end (torch.empty(4, 6, 0)[1:] has offset 6 into no bytes).
//
// t must be contiguous: the elements of any other view are not the numel
// storage elements from its offset, in storage order or in logical order
// (a transposed view's would come out transposed back), and a kernel
// writing through the slice would write the wrong elements. It panics on
// a non-contiguous t, a programming error (kernels check IsContiguous or
// call Contiguous first; runtimes turn a kernel's panic into an error).
func contigOf[T any](t *Tensor, all []T) []T {
	if !t.plain && !t.IsContiguous() {
		panic(&NotContiguousError{DType: t.dtype, Sizes: shortInts(t.sizes), Strides: shortInts(t.strides)})
	}
	n := t.Numel()
	if n == 0 {
		return all[:0:0]
	}
	return all[t.offset : t.offset+n]
}

// NotContiguousError is the panic of the *Contig accessors on a tensor
// that is not contiguous.
type NotContiguousError struct {
	DType          DType
	Sizes, Strides string
}

func (e *NotContiguousError) Error() string {
	return fmt.Sprintf("ivalue: the contiguous elements of a non-contiguous %s tensor (sizes %s, strides %s) were asked for: make it Contiguous first", e.DType, e.Sizes, e.Strides)
}

// F32Contig returns exactly the elements of a contiguous float32 tensor
// (empty for an empty tensor, whatever its offset), in logical order: the
// slice views the storage, so writes through it change t. It panics with
// a *NotContiguousError if t is not contiguous (see Contiguous).
func (t *Tensor) F32Contig() []float32 { return contigOf(t, t.F32()) }

// F64Contig returns exactly the elements of a contiguous float64 tensor
// (see F32Contig).
func (t *Tensor) F64Contig() []float64 { return contigOf(t, t.F64()) }

// I64Contig returns exactly the elements of a contiguous int64 tensor.
func (t *Tensor) I64Contig() []int64 { return contigOf(t, t.I64()) }

// I32Contig returns exactly the elements of a contiguous int32 tensor.
func (t *Tensor) I32Contig() []int32 { return contigOf(t, t.I32()) }

// BContig returns exactly the elements of a contiguous bool tensor.
func (t *Tensor) BContig() []bool { return contigOf(t, t.B()) }

// U8Contig returns exactly the elements of a contiguous uint8 tensor.
func (t *Tensor) U8Contig() []uint8 { return contigOf(t, t.U8()) }

// I8Contig returns exactly the elements of a contiguous int8 tensor.
func (t *Tensor) I8Contig() []int8 { return contigOf(t, t.I8()) }

// ForEachIndex calls f with the storage index of every element in
// row-major logical order. It is for tests and cold paths; kernels use
// their own loops.
func (t *Tensor) ForEachIndex(f func(storageIdx int)) { t.forFirst(t.Numel(), f) }

// forFirst is ForEachIndex for the first n elements only.
func (t *Tensor) forFirst(n int, f func(storageIdx int)) {
	n = min(n, t.Numel())
	if n == 0 {
		return
	}
	idx := make([]int, len(t.sizes))
	for k := 0; k < n; k++ {
		off := t.offset
		for d, i := range idx {
			off += i * t.strides[d]
		}
		f(off)
		for d := len(idx) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < t.sizes[d] {
				break
			}
			idx[d] = 0
		}
	}
}

// Float64At returns every element converted to float64 in logical order
// (for tests, printing and comparisons).
func (t *Tensor) Float64s() []float64 {
	t = t.host()
	out := make([]float64, 0, t.Numel())
	t.ForEachIndex(func(i int) { out = append(out, t.elemFloat64(i)) })
	return out
}

func (t *Tensor) elemFloat64(i int) float64 {
	switch t.dtype {
	case Float32:
		return float64(typed[float32](t.storage)[i])
	case Float64:
		return typed[float64](t.storage)[i]
	case Int64:
		return float64(typed[int64](t.storage)[i])
	case Int32:
		return float64(typed[int32](t.storage)[i])
	case Int16:
		return float64(typed[int16](t.storage)[i])
	case Int8:
		return float64(typed[int8](t.storage)[i])
	case Uint8:
		return float64(typed[uint8](t.storage)[i])
	case Bool:
		if typed[bool](t.storage)[i] {
			return 1
		}
		return 0
	case Float16:
		return float64(HalfToFloat32(typed[uint16](t.storage)[i]))
	case BFloat16:
		return float64(BFloat16ToFloat32(typed[uint16](t.storage)[i]))
	}
	return 0
}

// Contiguous returns t if it is contiguous, else a contiguous copy.
func (t *Tensor) Contiguous() *Tensor {
	if t.IsContiguous() {
		return t
	}
	return t.Clone()
}

// Clone returns a contiguous deep copy, on t's device. A copy on a
// device may fail: code that may clone a tensor there calls CloneErr
// (Clone panics with the error).
func (t *Tensor) Clone() *Tensor {
	c, err := t.CloneErr()
	if err != nil {
		panic(err)
	}
	return c
}

// CloneErr is Clone, returning the error of an allocation or copy on a
// device.
func (t *Tensor) CloneErr() (*Tensor, error) {
	if !t.device.IsHost() {
		c, err := NewTensorOn(t.device, t.dtype, t.sizes...)
		if err == nil {
			err = CopyTo(c, t)
		}
		if err != nil {
			return nil, err
		}
		return c, nil
	}
	c := NewTensor(t.dtype, t.sizes...)
	CopyInto(c, t)
	return c, nil
}

// CopyInto copies src's elements into dst (same dtype, same numel),
// both in logical order. dst must be contiguous. Both must be on the
// host (a copy to or from a device may fail: CopyTo returns its error;
// CopyInto panics with it).
func CopyInto(dst, src *Tensor) {
	if !dst.device.IsHost() || !src.device.IsHost() {
		if err := CopyTo(dst, src); err != nil {
			panic(err)
		}
		return
	}
	if src.Numel() == 0 {
		// An empty view's offset may lie past its storage's end.
		return
	}
	es := src.dtype.Size()
	d := dst.storage.Data[dst.offset*es:]
	s := src.storage.Data
	if src.IsContiguous() {
		copy(d[:src.Numel()*es], s[src.offset*es:])
		return
	}
	switch es {
	case 4:
		copyStrided(typed[uint32](dst.storage)[dst.offset:], typed[uint32](src.storage), src)
	case 8:
		copyStrided(typed[uint64](dst.storage)[dst.offset:], typed[uint64](src.storage), src)
	case 2:
		copyStrided(typed[uint16](dst.storage)[dst.offset:], typed[uint16](src.storage), src)
	case 1:
		copyStrided(d, s, src)
	default:
		k := 0
		src.ForEachIndex(func(i int) {
			copy(d[k:k+es], s[i*es:i*es+es])
			k += es
		})
	}
}

// copyStrided gathers src's elements (a strided view of s) into d in
// row-major order: an index over the outer dimensions, a strided loop
// over the last (a closure per element is several times slower).
func copyStrided[T any](d, s []T, src *Tensor) {
	// Size-1 dims dropped and dims merged where src is contiguous across
	// them (dst always is): the rows get as long as they can, so a
	// channel shuffle's [58, 2, 28, 28] copies 116 rows of 784, not 3248
	// of 28.
	var szBuf, stBuf [8]int
	sizes, strides := szBuf[:0], stBuf[:0]
	for i, n := range src.sizes {
		switch {
		case n == 1:
		case len(sizes) > 0 && strides[len(strides)-1] == src.strides[i]*n:
			sizes[len(sizes)-1] *= n
			strides[len(strides)-1] = src.strides[i]
		default:
			sizes, strides = append(sizes, n), append(strides, src.strides[i])
		}
	}
	nd := len(sizes)
	if nd == 0 {
		d[0] = s[src.offset]
		return
	}
	var idxBuf [8]int
	var idx []int
	if nd-1 <= len(idxBuf) {
		idx = idxBuf[:nd-1]
	} else {
		idx = make([]int, nd-1)
	}
	inner, is := sizes[nd-1], strides[nd-1]
	outer := src.Numel() / inner
	k := 0
	for o := 0; o < outer; o++ {
		off := src.offset
		for i, x := range idx {
			off += x * strides[i]
		}
		row := d[k : k+inner]
		if is == 1 {
			copy(row, s[off:off+inner])
		} else {
			for j := range row {
				row[j] = s[off+j*is]
			}
		}
		k += inner
		for i := len(idx) - 1; i >= 0; i-- {
			idx[i]++
			if idx[i] < sizes[i] {
				break
			}
			idx[i] = 0
		}
	}
}

// String prints dtype, shape and up to 8 values.
func (t *Tensor) String() string {
	if t == nil {
		return "Tensor(nil)"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Tensor(%s%v", t.dtype, t.sizes)
	if !t.device.IsHost() {
		fmt.Fprintf(&b, " on %s", t.device)
	}
	h := t
	if !t.device.IsHost() && t.storage != nil {
		var err error
		if h, err = t.To(Device{}); err != nil {
			b.WriteString(")")
			return b.String()
		}
	}
	if h.storage != nil {
		// The first 8 values only: a broadcast view of one stored element
		// may have a numel in the trillions.
		vals := make([]float64, 0, 8)
		h.forFirst(8, func(i int) { vals = append(vals, h.elemFloat64(i)) })
		fmt.Fprintf(&b, " %v", vals)
		if t.Numel() > 8 {
			b.WriteString("...")
		}
	}
	b.WriteString(")")
	return b.String()
}
