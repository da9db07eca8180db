package libtorch

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/gosr/gosr/internal/ccall"
	"github.com/gosr/gosr/ivalue"
)

// Device placement. A module placed on a device (staticruntime's
// Options.Device) keeps every tensor there: its weights are copied once,
// its slab and its other tensors come from libtorch's allocator for the
// device (the CUDA caching allocator on a GPU), and only ATen kernels
// read or write them. gosr's Go code sees device memory only as an
// address (ivalue.Storage.Ptr); a Go kernel that tries to read it fails
// with ivalue.DeviceAccessError instead of touching it.
//
// ivalue.TorchCPU runs the same path on libtorch's CPU allocator: it is
// how the path is tested on machines without a GPU.

// cDevice is d as the shim's (c10::DeviceType, index).
func cDevice(d ivalue.Device) (typ, index int32) {
	if d.Type == ivalue.CUDA {
		return 1, int32(d.Index)
	}
	return 0, -1
}

// DeviceStats count the device memory the backend handed out and the
// copies it made between host and device.
type DeviceStats struct {
	Allocs, AllocBytes int64
	Live               int64 // allocations not yet freed
	Copies             int64
}

type deviceMemory struct {
	lib                *lib
	allocs, allocBytes atomic.Int64
	live, copies       atomic.Int64
	copiers            sync.Pool
}

var (
	devMemOnce sync.Once
	devMem     *deviceMemory
)

// memory registers the backend's device memory with ivalue (once per
// process: the shim is loaded once).
func (b *Backend) memory() *deviceMemory {
	devMemOnce.Do(func() {
		devMem = &deviceMemory{lib: b.lib}
		devMem.copiers.New = func() any { return new(copier) }
		ivalue.RegisterDeviceMemory(ivalue.TorchCPU, devMem)
		ivalue.RegisterDeviceMemory(ivalue.CUDA, devMem)
	})
	return devMem
}

// DeviceStats reports the device memory handed out so far (process-wide).
func (b *Backend) DeviceStats() DeviceStats {
	m := b.memory()
	return DeviceStats{Allocs: m.allocs.Load(), AllocBytes: m.allocBytes.Load(), Live: m.live.Load(), Copies: m.copies.Load()}
}

// allocation is one block from libtorch's allocator, freed when no
// storage refers to it any more.
type allocation struct{ handle uintptr }

func (m *deviceMemory) Alloc(d ivalue.Device, n int) (*ivalue.Storage, error) {
	if n < 0 {
		return nil, fmt.Errorf("libtorch: allocating %d bytes on %s", n, d)
	}
	var data uintptr
	var msg [512]byte
	typ, idx := cDevice(d)
	h := call(m.lib.alloc, uintptr(typ), uintptr(int64(idx)), uintptr(n), uintptr(unsafe.Pointer(&data)),
		uintptr(unsafe.Pointer(&msg[0])), uintptr(len(msg)))
	if h == 0 {
		return nil, fmt.Errorf("libtorch: allocating %d bytes on %s: %s", n, d, cBytes(msg[:]))
	}
	a := &allocation{handle: h}
	free := m.lib.free
	runtime.AddCleanup(a, func(h uintptr) {
		call(free, h)
		m.live.Add(-1)
	}, h)
	m.allocs.Add(1)
	m.allocBytes.Add(int64(n))
	m.live.Add(1)
	return ivalue.DeviceStorage(d, ptr(data), n, a), nil
}

// copier is the C-side arguments of one copy, reused (a steady run copies
// its inputs in and outputs out without allocating).
type copier struct {
	sys      ccall.Frame
	dst, src cTensor
	msg      [512]byte
}

func (m *deviceMemory) Copy(dst, src *ivalue.Tensor) error {
	if dst.Numel() != src.Numel() {
		return fmt.Errorf("libtorch: copy of %d elements into %d", src.Numel(), dst.Numel())
	}
	if src.Numel() == 0 {
		return nil
	}
	c := m.copiers.Get().(*copier)
	defer m.copiers.Put(c)
	if err := setDesc(&c.dst, dst); err != nil {
		return fmt.Errorf("libtorch: copy to %s: %v", dst.Device(), err)
	}
	if err := setDesc(&c.src, src); err != nil {
		return fmt.Errorf("libtorch: copy from %s: %v", src.Device(), err)
	}
	if dst.Dim() != src.Dim() {
		// Same elements, other shape (a flat input into a shaped slot):
		// view the destination with the source's shape.
		if !dst.IsContiguous() {
			return fmt.Errorf("libtorch: copy into a non-contiguous %v tensor of shape %v", dst.DType(), src.Sizes())
		}
		c.dst.ndim = c.src.ndim
		st := int64(1)
		for d := int(c.src.ndim) - 1; d >= 0; d-- {
			c.dst.sizes[d], c.dst.strides[d] = c.src.sizes[d], st
			st *= c.src.sizes[d]
		}
	}
	rc := c.sys.Call(m.lib.copy, uintptr(unsafe.Pointer(&c.dst)), uintptr(unsafe.Pointer(&c.src)),
		uintptr(unsafe.Pointer(&c.msg[0])), uintptr(len(c.msg)))
	runtime.KeepAlive(dst)
	runtime.KeepAlive(src)
	if int64(rc) != 0 {
		return fmt.Errorf("libtorch: copy from %s to %s: %s", src.Device(), dst.Device(), cBytes(c.msg[:]))
	}
	m.copies.Add(1)
	return nil
}
