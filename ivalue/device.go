package ivalue

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unsafe"
)

// DeviceType says where a tensor's memory lives and who may read it.
type DeviceType uint8

const (
	// Host is gosr's own memory (Go slices): every kernel may read it.
	// It prints as "cpu", PyTorch's name for it.
	Host DeviceType = iota
	// TorchCPU is CPU memory from libtorch's allocator that only the
	// libtorch backend reads and writes: a module placed there runs the
	// device path (weights moved once, slab from the backend's allocator,
	// inputs copied in, outputs copied out) without a GPU.
	TorchCPU
	// CUDA is a GPU's memory, through libtorch's CUDA allocator.
	CUDA
)

// Device is a device type and index (the GPU number for CUDA).
type Device struct {
	Type  DeviceType
	Index int
}

// IsHost reports whether Go code may read memory on d.
func (d Device) IsHost() bool { return d.Type == Host }

func (d Device) String() string {
	switch d.Type {
	case Host:
		return "cpu"
	case TorchCPU:
		return "libtorch-cpu"
	case CUDA:
		return "cuda:" + strconv.Itoa(d.Index)
	}
	return fmt.Sprintf("Device(%d:%d)", d.Type, d.Index)
}

// ParseDevice reads "" or "cpu" (Host), "libtorch-cpu", "cuda" or
// "cuda:N".
func ParseDevice(s string) (Device, error) {
	switch {
	case s == "" || s == "cpu":
		return Device{}, nil
	case s == "libtorch-cpu":
		return Device{Type: TorchCPU}, nil
	case s == "cuda":
		return Device{Type: CUDA}, nil
	case strings.HasPrefix(s, "cuda:"):
		n, err := strconv.Atoi(s[len("cuda:"):])
		if err != nil || n < 0 {
			return Device{}, fmt.Errorf("bad device %q (want cpu, libtorch-cpu, cuda or cuda:N)", s)
		}
		return Device{Type: CUDA, Index: n}, nil
	}
	return Device{}, fmt.Errorf("unknown device %q (want cpu, libtorch-cpu, cuda or cuda:N)", s)
}

// DeviceMemory allocates and copies memory on one type of device. A
// backend that can place tensors on a device registers one
// (RegisterDeviceMemory); ivalue calls it to resize, copy and clone
// tensors there.
type DeviceMemory interface {
	// Alloc returns a storage of n bytes on d (Storage.Device d), kept
	// alive by the storage and freed once no storage refers to it.
	Alloc(d Device, n int) (*Storage, error)
	// Copy copies src's elements into dst, converting the dtype, in
	// logical order; either may be on the device, the other on the host.
	// Both have the same number of elements.
	Copy(dst, src *Tensor) error
}

var (
	devMu  sync.RWMutex
	devMem = map[DeviceType]DeviceMemory{}
)

// RegisterDeviceMemory makes m the allocator and copier of device type t
// (Host cannot be replaced).
func RegisterDeviceMemory(t DeviceType, m DeviceMemory) {
	if t == Host {
		panic("ivalue: host memory is gosr's own")
	}
	devMu.Lock()
	devMem[t] = m
	devMu.Unlock()
}

func deviceMemory(d Device) (DeviceMemory, error) {
	devMu.RLock()
	m := devMem[d.Type]
	devMu.RUnlock()
	if m == nil {
		return nil, fmt.Errorf("ivalue: no memory registered for device %s (open a backend that places modules there)", d)
	}
	return m, nil
}

// DeviceStorage makes a storage of size bytes at ptr on device d; owner
// keeps the allocation alive for as long as the storage is referenced.
// For DeviceMemory implementations.
func DeviceStorage(d Device, ptr unsafe.Pointer, size int, owner any) *Storage {
	return &Storage{Device: d, ptr: ptr, size: size, owner: owner}
}

// AllocStorage returns n bytes on d: Go memory for the host, the
// registered DeviceMemory's otherwise.
func AllocStorage(d Device, n int) (*Storage, error) {
	if d.IsHost() {
		return NewStorage(n), nil
	}
	m, err := deviceMemory(d)
	if err != nil {
		return nil, err
	}
	storageAllocs.Add(1)
	return m.Alloc(d, n)
}

// DeviceAccessError is the panic of Go code reading a tensor whose memory
// is on a device (only the backend that owns the device may): a check
// that Go never dereferences device memory, as a bounds check is, not a
// way to report errors. Only a Go kernel placed on a device that reads
// data (a selection bug) meets it; the runtime's safety net for kernel
// panics fails the run with an error naming the node, from which
// errors.As gets this.
type DeviceAccessError struct {
	Device Device
	DType  DType
}

func (e *DeviceAccessError) Error() string {
	return fmt.Sprintf("a %s tensor on %s was read by a Go kernel; on a device, tensors are read only by the backend that placed them", e.DType, e.Device)
}

// Device returns where t's memory lives.
func (t *Tensor) Device() Device { return t.device }

// SetDevice makes t's next Resize allocate on d. A tensor whose storage
// is elsewhere drops it.
func (t *Tensor) SetDevice(d Device) {
	if t.device == d {
		return
	}
	t.device = d
	t.gen++
	if t.storage != nil && t.storage.Device != d {
		t.attach(nil)
		t.device = d
		t.own = false
	}
}

// NewTensorOn allocates a contiguous tensor on d (zeroed on the host,
// unspecified on a device).
func NewTensorOn(d Device, dt DType, sizes ...int) (*Tensor, error) {
	t := &Tensor{device: d}
	if err := t.ResizeErr(dt, sizes); err != nil {
		return nil, err
	}
	return t, nil
}

// ResizeErr is Resize returning the error of a device's allocation
// (Resize panics with it). After an error t has no storage.
func (t *Tensor) ResizeErr(dt DType, sizes []int) error {
	if t.fits(dt, sizes) {
		return nil
	}
	return t.resize(dt, sizes)
}

// CopyTo copies src's elements into dst (same numel; dtypes converted
// only across devices), whichever devices they are on. dst must be
// contiguous when both are on the host.
func CopyTo(dst, src *Tensor) error {
	if dst.device.IsHost() && src.device.IsHost() {
		if dst.dtype != src.dtype {
			return fmt.Errorf("ivalue: copy of %s into %s on the host", src.dtype, dst.dtype)
		}
		CopyInto(dst, src)
		return nil
	}
	if dst.Numel() != src.Numel() {
		return fmt.Errorf("ivalue: copy of %d elements into %d", src.Numel(), dst.Numel())
	}
	d := dst.device
	if d.IsHost() {
		d = src.device
	}
	m, err := deviceMemory(d)
	if err != nil {
		return err
	}
	return m.Copy(dst, src)
}

// To returns a contiguous copy of t on d (t itself when it is already
// there).
func (t *Tensor) To(d Device) (*Tensor, error) {
	if t.device == d {
		return t, nil
	}
	c, err := NewTensorOn(d, t.dtype, t.sizes...)
	if err != nil {
		return nil, err
	}
	if err := CopyTo(c, t); err != nil {
		return nil, err
	}
	return c, nil
}

// host returns t, or a copy of it on the host when it is on a device
// (printing, comparisons).
func (t *Tensor) host() *Tensor {
	if t.device.IsHost() {
		return t
	}
	h, err := t.To(Device{})
	if err != nil {
		panic(err)
	}
	return h
}
