package ivalue

import (
	"fmt"
	"sync"
)

// AllocError is the panic of AlignedBytes (and so of NewStorage, NewTensor
// and Resize; ResizeErr and NewTensorErr return it) for a size this
// machine cannot hold. Go's allocator would fail on it with a fatal error
// that no recover catches ("out of memory"); refusing it first turns a
// tensor whose declared size is absurd (a broadcast view of 2^40 elements
// given to a kernel that writes a contiguous copy) into an error.
type AllocError struct {
	Bytes int
	Max   uint64 // what the machine (or the process's limits) can give
}

func (e *AllocError) Error() string {
	return fmt.Sprintf("ivalue: allocating %d bytes: more than this process can ever get (%d bytes of memory and swap, or its resource limit)", e.Bytes, e.Max)
}

// allocCap is the largest allocation that can succeed at all: physical
// memory plus swap, or the process's address-space or data limit if
// lower (systemMemory, per platform).
var allocCap = sync.OnceValue(systemMemory)

func checkAlloc(n int) {
	if err := allocErr(n); err != nil {
		panic(err)
	}
}

// allocErr is checkAlloc's test as an error, for the functions that
// return one (ResizeErr, NewTensorErr).
func allocErr(n int) error {
	if n > 0 && uint64(n) > allocCap() {
		return &AllocError{Bytes: n, Max: allocCap()}
	}
	return nil
}

// CheckHoldable returns an *AllocError for a tensor whose elements, laid
// out contiguously, would need more memory than this process can ever
// get: a broadcast view (stride 0) claiming 2^40 rows of one. Such a
// tensor is a legal view, but every kernel that reads it would either
// allocate an output of its size or loop over it for hours; a runtime
// refuses it as an input instead.
func CheckHoldable(t *Tensor) error {
	if t == nil {
		return nil
	}
	n, err := numelBytes(t.DType(), t.Sizes())
	if err != nil {
		return err
	}
	return allocErr(n)
}
