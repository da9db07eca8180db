package ivalue

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseDevice(t *testing.T) {
	tests := []struct {
		in   string
		want Device
		err  string
	}{
		{"", Device{}, ""},
		{"cpu", Device{}, ""},
		{"libtorch-cpu", Device{Type: TorchCPU}, ""},
		{"cuda", Device{Type: CUDA}, ""},
		{"cuda:3", Device{Type: CUDA, Index: 3}, ""},
		{"cuda:-1", Device{}, "bad device"},
		{"cuda:x", Device{}, "bad device"},
		{"tpu", Device{}, "unknown device"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			d, err := ParseDevice(tc.in)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, d)
			if tc.in != "" && tc.in != "cuda" {
				assert.Equal(t, tc.in, d.String())
			}
		})
	}
}

// goMemory stands in for a device's memory in these tests: Go bytes that
// ivalue must treat as foreign (it may not read them), reached through
// the DeviceMemory interface as a real backend's would be.
type goMemory struct{ blocks map[unsafe.Pointer][]byte }

func (m *goMemory) Alloc(d Device, n int) (*Storage, error) {
	b := AlignedBytes(max(n, 1))
	p := unsafe.Pointer(&b[0])
	m.blocks[p] = b
	return DeviceStorage(d, p, n, b), nil
}

// host views a device tensor's bytes as a host tensor (what the backend
// would do on its side).
func (m *goMemory) host(t *Tensor) *Tensor {
	if t.device.IsHost() {
		return t
	}
	s := t.storage
	h := &Tensor{dtype: t.dtype, sizes: t.sizes, strides: t.strides, offset: t.offset}
	h.attach(&Storage{Data: unsafe.Slice((*byte)(s.ptr), s.size)})
	return h
}

func (m *goMemory) Copy(dst, src *Tensor) error {
	if dst.dtype != src.dtype {
		return assert.AnError
	}
	d := m.host(dst)
	if !d.IsContiguous() {
		return assert.AnError
	}
	CopyInto(d, m.host(src))
	return nil
}

func TestDeviceTensors(t *testing.T) {
	cuda := Device{Type: CUDA, Index: 1}
	_, err := AllocStorage(cuda, 8)
	require.ErrorContains(t, err, "no memory registered for device cuda:1")

	RegisterDeviceMemory(CUDA, &goMemory{blocks: map[unsafe.Pointer][]byte{}})
	defer func() {
		devMu.Lock()
		delete(devMem, CUDA)
		devMu.Unlock()
	}()
	assert.Panics(t, func() { RegisterDeviceMemory(Host, &goMemory{}) })

	h := F32Tensor([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
	d, err := h.To(cuda)
	require.NoError(t, err)
	assert.Equal(t, cuda, d.Device())
	assert.Equal(t, cuda, d.Storage().Device)
	assert.Nil(t, d.Storage().Data, "a device storage has no Go slice")
	assert.Equal(t, 24, d.Storage().Len())
	assert.NotNil(t, d.DataPtr())

	// Go code may not read it: every typed accessor panics with the
	// error runtimes turn into a node's error.
	for name, read := range map[string]func(){
		"F32": func() { d.F32() }, "F32Contig": func() { d.F32Contig() },
		"I64": func() { d.I64() }, "B": func() { d.B() },
	} {
		func() {
			defer func() {
				r := recover()
				e, ok := r.(*DeviceAccessError)
				require.True(t, ok, "%s: panic %v", name, r)
				assert.Contains(t, e.Error(), "on cuda:1")
			}()
			read()
		}()
	}

	// Round trips, clones and printing go through the device memory.
	back, err := d.To(Device{})
	require.NoError(t, err)
	assert.Equal(t, h.F32Contig(), back.F32Contig())
	c := d.Clone()
	assert.Equal(t, cuda, c.Device())
	assert.NotEqual(t, d.DataPtr(), c.DataPtr())
	assert.Equal(t, []float64{1, 2, 3, 4, 5, 6}, c.Float64s())
	assert.Contains(t, d.String(), "on cuda:1")
	assert.Contains(t, d.String(), "[1 2 3 4 5 6]")

	// Resize stays on the device; SetDevice moves where the next one
	// allocates, dropping memory elsewhere.
	d.Resize(Float32, []int{4, 4})
	assert.Equal(t, cuda, d.Device())
	assert.Equal(t, 64, d.Storage().Len())
	h2 := NewTensor(Float32, 2)
	h2.SetDevice(cuda)
	assert.Nil(t, h2.Storage())
	h2.Resize(Float32, []int{2})
	assert.Equal(t, cuda, h2.Storage().Device)

	// Windows of a device slab keep its memory and check bounds.
	slab, err := AllocStorage(cuda, 128)
	require.NoError(t, err)
	w := slab.Window(64, 32)
	assert.Equal(t, unsafe.Add(slab.Ptr(), 64), w.Ptr())
	assert.Equal(t, 32, w.Len())
	assert.Panics(t, func() { slab.Window(100, 64) })

	// Copies check their sizes; host copies their dtypes.
	require.ErrorContains(t, CopyTo(NewTensor(Float32, 5), d), "16 elements into 5")
	require.ErrorContains(t, CopyTo(NewTensor(Float64, 2), F32Tensor([]float32{1, 2})), "copy of float32 into float64 on the host")
}

// flakyMemory is goMemory whose allocations or copies can be made to fail.
type flakyMemory struct {
	goMemory
	failAlloc, failCopy bool
}

var errDevice = assert.AnError

func (m *flakyMemory) Alloc(d Device, n int) (*Storage, error) {
	if m.failAlloc {
		return nil, errDevice
	}
	return m.goMemory.Alloc(d, n)
}

func (m *flakyMemory) Copy(dst, src *Tensor) error {
	if m.failCopy {
		return errDevice
	}
	return m.goMemory.Copy(dst, src)
}

// TestDeviceFailuresAreErrors: a device's failed allocation or copy is
// an error from the calls that may meet one (ResizeErr, NewTensorOn,
// To, CloneErr), not a panic; only the host-style calls (Resize, Clone)
// panic with it, as their callers must not use them there.
func TestDeviceFailuresAreErrors(t *testing.T) {
	cuda := Device{Type: CUDA}
	mem := &flakyMemory{goMemory: goMemory{blocks: map[unsafe.Pointer][]byte{}}}
	RegisterDeviceMemory(CUDA, mem)
	defer func() {
		devMu.Lock()
		delete(devMem, CUDA)
		devMu.Unlock()
	}()
	d, err := F32Tensor([]float32{1, 2, 3}, 3).To(cuda)
	require.NoError(t, err)
	g, err := NewTensorOn(cuda, Float32, 2)
	require.NoError(t, err)
	list := ListOf(&List{Items: []IValue{FromInt(1), FromTensor(d)}})
	dict := DictOf(&Dict{Keys: []IValue{FromString("d")}, Values: []IValue{FromTensor(d)}})
	tests := []struct {
		name                string
		failAlloc, failCopy bool
		call                func() error
	}{
		{"ResizeErr", true, false, func() error {
			r := &Tensor{}
			r.SetDevice(cuda)
			err := r.ResizeErr(Float32, []int{8})
			assert.Nil(t, r.Storage(), "no storage after a failed allocation")
			assert.Equal(t, cuda, r.Device())
			return err
		}},
		{"ResizeErr growing", true, false, func() error {
			before, sizes := g.Storage(), append([]int(nil), g.Sizes()...)
			err := g.ResizeErr(Float32, []int{64})
			assert.Same(t, before, g.Storage(), "a failed allocation leaves the tensor as it was")
			assert.Equal(t, sizes, g.Sizes())
			return err
		}},
		{"NewTensorOn", true, false, func() error { _, err := NewTensorOn(cuda, Float32, 2); return err }},
		{"To the device", true, false, func() error { _, err := F32Tensor([]float32{1}, 1).To(cuda); return err }},
		{"To the host", false, true, func() error { _, err := d.To(Device{}); return err }},
		{"CloneErr allocation", true, false, func() error { _, err := d.CloneErr(); return err }},
		{"CloneErr copy", false, true, func() error { _, err := d.CloneErr(); return err }},
		{"IValue.CloneErr of a list", false, true, func() error { _, err := list.CloneErr(); return err }},
		{"IValue.CloneErr of a dict", false, true, func() error { _, err := dict.CloneErr(); return err }},
		{"CopyTo", false, true, func() error { return CopyTo(NewTensor(Float32, 3), d) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem.failAlloc, mem.failCopy = tc.failAlloc, tc.failCopy
			defer func() { mem.failAlloc, mem.failCopy = false, false }()
			var err error
			require.NotPanics(t, func() { err = tc.call() })
			require.ErrorIs(t, err, errDevice)
		})
	}
	mem.failAlloc = true
	r := &Tensor{}
	r.SetDevice(cuda)
	assert.PanicsWithError(t, errDevice.Error(), func() { r.Resize(Float32, []int{2}) })
	assert.PanicsWithError(t, errDevice.Error(), func() { d.Clone() })
	mem.failAlloc = false
	c, err := list.CloneErr()
	require.NoError(t, err)
	assert.NotSame(t, d, c.List().Items[1].Tensor())
	assert.Equal(t, []float64{1, 2, 3}, c.List().Items[1].Tensor().Float64s())
}
