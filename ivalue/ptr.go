package ivalue

import "unsafe"

// DataPtr returns the address of the tensor's first element (storage
// plus offset), or nil when the storage holds no bytes. It is for native
// kernels (package libtorch) that read and write gosr memory in place;
// the storage must stay referenced (by t) while they use it.
func (t *Tensor) DataPtr() unsafe.Pointer {
	if t.data == nil || t.nbytes == 0 {
		return nil
	}
	return unsafe.Add(t.data, t.offset*t.dtype.Size())
}
