package ort

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/gosr/gosr/internal/ccall"
	"github.com/gosr/gosr/ivalue"
)

// Optimization is ONNX Runtime's graph optimization level.
type Optimization int

const (
	// OptimizeAll (the zero value) is ORT_ENABLE_ALL: every fusion and
	// layout change ONNX Runtime knows, as its users run it.
	OptimizeAll Optimization = iota
	OptimizeExtended
	OptimizeBasic
	OptimizeNone
)

func (o Optimization) level() (uintptr, error) {
	switch o {
	case OptimizeAll:
		return optimizeAll, nil
	case OptimizeExtended:
		return 2, nil
	case OptimizeBasic:
		return 1, nil
	case OptimizeNone:
		return 0, nil
	}
	return 0, fmt.Errorf("ort: Options.Optimization %d: want OptimizeAll, OptimizeExtended, OptimizeBasic or OptimizeNone", int(o))
}

// Options configure a Session.
type Options struct {
	// Library is libonnxruntime.so's path; "" uses the one this process
	// has loaded already (an error if none).
	Library string
	// IntraOpThreads are the threads one operator may use (0: 1, as gosr
	// runs its Go kernels); InterOpThreads those running independent
	// operators at once (0: 1, sequential execution).
	IntraOpThreads, InterOpThreads int
	// Optimization is the graph optimization level (default all).
	Optimization Optimization
	// ProfilePrefix, when set, turns on ONNX Runtime's profiler: every
	// node's time in every run goes to a Chrome-trace JSON file whose
	// name starts with it, written when the session is closed.
	ProfilePrefix string
}

// Session is one ONNX model loaded into ONNX Runtime. Its methods may be
// called from several goroutines (ONNX Runtime's Run is thread-safe); a
// Call is one goroutine's at a time.
type Session struct {
	l    *lib
	path string
	h    uintptr
	// The model's inputs and outputs: Go names, the C strings ORT gave
	// (freed by Close), and each input's element type and dimensions
	// (-1 where symbolic).
	inputs, outputs   []string
	inNames, outNames []uintptr
	inTypes           []ivalue.DType
	inDims            [][]int64
	mu                sync.Mutex
	closed            bool
}

// elemTypes maps ONNX's element types (ONNXTensorElementDataType) to
// gosr's; the rest are refused.
var elemTypes = map[int]ivalue.DType{
	1: ivalue.Float32, 2: ivalue.Uint8, 3: ivalue.Int8, 5: ivalue.Int16, 6: ivalue.Int32,
	7: ivalue.Int64, 9: ivalue.Bool, 10: ivalue.Float16, 11: ivalue.Float64, 16: ivalue.BFloat16,
}

func onnxType(dt ivalue.DType) (uintptr, bool) {
	for k, v := range elemTypes {
		if v == dt {
			return uintptr(k), true
		}
	}
	return 0, false
}

// NewSession loads the ONNX model at path.
func NewSession(path string, o Options) (*Session, error) {
	if o.IntraOpThreads < 0 || o.InterOpThreads < 0 {
		return nil, fmt.Errorf("ort: Options: IntraOpThreads %d, InterOpThreads %d: want 0 (1) or more", o.IntraOpThreads, o.InterOpThreads)
	}
	level, err := o.Optimization.level()
	if err != nil {
		return nil, err
	}
	l, err := load(o.Library)
	if err != nil {
		return nil, err
	}
	opts := new(uintptr)
	if err := l.status("CreateSessionOptions", call(l.fn[slotCreateSessionOptions], uintptr(unsafe.Pointer(opts)))); err != nil {
		return nil, err
	}
	defer call(l.fn[slotReleaseSessionOptions], *opts)
	for _, set := range []struct {
		op   string
		slot int
		v    uintptr
	}{
		{"SetIntraOpNumThreads", slotSetIntraOpNumThreads, uintptr(max(o.IntraOpThreads, 1))},
		{"SetInterOpNumThreads", slotSetInterOpNumThreads, uintptr(max(o.InterOpThreads, 1))},
		{"SetSessionGraphOptimizationLevel", slotSetSessionGraphOptimizationLevel, level},
	} {
		if err := l.status(set.op, call(l.fn[set.slot], *opts, set.v)); err != nil {
			return nil, err
		}
	}
	if o.ProfilePrefix != "" {
		prefix := cString(o.ProfilePrefix)
		if err := l.status("EnableProfiling", call(l.fn[slotEnableProfiling], *opts, uintptr(unsafe.Pointer(&prefix[0])))); err != nil {
			return nil, err
		}
		runtime.KeepAlive(prefix)
	}
	cpath := cString(path)
	h := new(uintptr)
	if err := l.status("CreateSession", call(l.fn[slotCreateSession], l.env, uintptr(unsafe.Pointer(&cpath[0])), *opts, uintptr(unsafe.Pointer(h)))); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	s := &Session{l: l, path: path, h: *h}
	if err := s.describe(); err != nil {
		s.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// describe reads the model's input and output names and input types.
func (s *Session) describe() error {
	l := s.l
	n := new(uintptr)
	if err := l.status("SessionGetInputCount", call(l.fn[slotSessionGetInputCount], s.h, uintptr(unsafe.Pointer(n)))); err != nil {
		return err
	}
	nIn := int(*n)
	if err := l.status("SessionGetOutputCount", call(l.fn[slotSessionGetOutputCount], s.h, uintptr(unsafe.Pointer(n)))); err != nil {
		return err
	}
	nOut := int(*n)
	name := new(uintptr)
	for i := range nIn {
		if err := l.status("SessionGetInputName", call(l.fn[slotSessionGetInputName], s.h, uintptr(i), l.allocator, uintptr(unsafe.Pointer(name)))); err != nil {
			return err
		}
		s.inNames = append(s.inNames, *name)
		s.inputs = append(s.inputs, goString(*name))
		dt, dims, err := s.inputType(i)
		if err != nil {
			return fmt.Errorf("input %q: %w", s.inputs[i], err)
		}
		s.inTypes, s.inDims = append(s.inTypes, dt), append(s.inDims, dims)
	}
	for i := range nOut {
		if err := l.status("SessionGetOutputName", call(l.fn[slotSessionGetOutputName], s.h, uintptr(i), l.allocator, uintptr(unsafe.Pointer(name)))); err != nil {
			return err
		}
		s.outNames = append(s.outNames, *name)
		s.outputs = append(s.outputs, goString(*name))
	}
	return nil
}

// inputType is input i's element type and dimensions.
func (s *Session) inputType(i int) (ivalue.DType, []int64, error) {
	l := s.l
	ti := new(uintptr)
	if err := l.status("SessionGetInputTypeInfo", call(l.fn[slotSessionGetInputTypeInfo], s.h, uintptr(i), uintptr(unsafe.Pointer(ti)))); err != nil {
		return 0, nil, err
	}
	defer call(l.fn[slotReleaseTypeInfo], *ti)
	info := new(uintptr) // owned by the type info
	if err := l.status("CastTypeInfoToTensorInfo", call(l.fn[slotCastTypeInfoToTensorInfo], *ti, uintptr(unsafe.Pointer(info)))); err != nil {
		return 0, nil, err
	}
	if *info == 0 {
		return 0, nil, fmt.Errorf("not a tensor (sequences and maps are not supported)")
	}
	return l.tensorInfo(*info)
}

// tensorInfo reads an OrtTensorTypeAndShapeInfo.
func (l *lib) tensorInfo(info uintptr) (ivalue.DType, []int64, error) {
	et := new(int32)
	if err := l.status("GetTensorElementType", call(l.fn[slotGetTensorElementType], info, uintptr(unsafe.Pointer(et)))); err != nil {
		return 0, nil, err
	}
	dt, ok := elemTypes[int(*et)]
	if !ok {
		return 0, nil, fmt.Errorf("ONNX element type %d is not supported", *et)
	}
	n := new(uintptr)
	if err := l.status("GetDimensionsCount", call(l.fn[slotGetDimensionsCount], info, uintptr(unsafe.Pointer(n)))); err != nil {
		return 0, nil, err
	}
	dims := make([]int64, *n)
	if len(dims) > 0 {
		if err := l.status("GetDimensions", call(l.fn[slotGetDimensions], info, uintptr(unsafe.Pointer(&dims[0])), uintptr(len(dims)))); err != nil {
			return 0, nil, err
		}
	}
	return dt, dims, nil
}

// Path is the model file's path.
func (s *Session) Path() string { return s.path }

// Inputs are the model's input names, in order.
func (s *Session) Inputs() []string { return slices.Clone(s.inputs) }

// Outputs are the model's output names, in order.
func (s *Session) Outputs() []string { return slices.Clone(s.outputs) }

// Close releases the session; Calls made from it must be closed first.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	for _, p := range slices.Concat(s.inNames, s.outNames) {
		call(s.l.fn[slotAllocatorFree], s.l.allocator, p)
	}
	call(s.l.fn[slotReleaseSession], s.h)
	return nil
}

// Run runs the model once on inputs given in the model's input order and
// returns copies of its outputs.
func (s *Session) Run(inputs ...*ivalue.Tensor) ([]*ivalue.Tensor, error) {
	return s.RunNamed(nil, inputs)
}

// RunNamed is Run with the inputs named (nil: the model's order).
func (s *Session) RunNamed(names []string, inputs []*ivalue.Tensor) ([]*ivalue.Tensor, error) {
	c, err := s.Bind(names, inputs)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if err := c.Run(); err != nil {
		return nil, err
	}
	return c.Outputs()
}

// Call is a run prepared over fixed inputs, for timing: the inputs are
// ONNX Runtime values over the tensors' memory (pinned while the Call
// lives), and Run allocates nothing in Go. The tensors must not be
// resized while the Call lives; writing new values into them is fine.
type Call struct {
	s      *Session
	frame  *ccall.Frame
	names  []uintptr // the inputs' C names, in the order of values
	values []uintptr // OrtValue* over the inputs
	outs   []uintptr // OrtValue* of the last run's outputs (ORT's memory)
	pin    runtime.Pinner
	closed bool
}

// Bind prepares a Call over inputs, named by names (nil: the model's
// input order). Every input of the model must be given, once, with the
// element type and dimensions the model declares.
func (s *Session) Bind(names []string, inputs []*ivalue.Tensor) (*Call, error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("ort: %s: the session is closed", s.path)
	}
	if names == nil {
		names = s.inputs
	}
	if len(names) != len(inputs) {
		return nil, fmt.Errorf("ort: %s: %d input names for %d inputs", s.path, len(names), len(inputs))
	}
	if len(inputs) != len(s.inputs) {
		return nil, fmt.Errorf("ort: %s: %d inputs given; the model takes %d (%s)", s.path, len(inputs), len(s.inputs), strings.Join(s.inputs, ", "))
	}
	c := &Call{s: s, frame: new(ccall.Frame), outs: make([]uintptr, len(s.outputs))}
	seen := map[int]bool{}
	for j, name := range names {
		i := slices.Index(s.inputs, name)
		if i < 0 {
			c.Close()
			return nil, fmt.Errorf("ort: %s: no input named %q (the model's inputs: %s)", s.path, name, strings.Join(s.inputs, ", "))
		}
		if seen[i] {
			c.Close()
			return nil, fmt.Errorf("ort: %s: input %q given twice", s.path, name)
		}
		seen[i] = true
		v, err := c.value(i, inputs[j])
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("ort: %s: input %q: %w", s.path, name, err)
		}
		c.names = append(c.names, s.inNames[i])
		c.values = append(c.values, v)
	}
	return c, nil
}

// value makes an OrtValue over t's memory for the model's input i.
func (c *Call) value(i int, t *ivalue.Tensor) (uintptr, error) {
	s, l := c.s, c.s.l
	if t == nil {
		return 0, fmt.Errorf("nil tensor")
	}
	want := s.inDims[i]
	if t.DType() != s.inTypes[i] || !dimsFit(t.Sizes(), want) {
		return 0, fmt.Errorf("got %s %v, the model wants %s %v (-1: any size)", t.DType(), t.Sizes(), s.inTypes[i], want)
	}
	if !t.Storage().Device.IsHost() {
		return 0, fmt.Errorf("a tensor on %s: ONNX Runtime's CPU library takes host memory", t.Storage().Device)
	}
	t = t.Contiguous()
	et, _ := onnxType(t.DType())
	shape := make([]int64, len(t.Sizes())+1) // one more: never empty
	for d, n := range t.Sizes() {
		shape[d] = int64(n)
	}
	nbytes := t.Nbytes()
	var data unsafe.Pointer
	if nbytes > 0 {
		data = t.DataPtr()
	} else {
		data = unsafe.Pointer(new([8]byte)) // ONNX Runtime wants a buffer even for no elements
	}
	c.pin.Pin(data)
	v := new(uintptr)
	err := l.status("CreateTensorWithDataAsOrtValue", call(l.fn[slotCreateTensorWithDataAsOrtValue], l.cpuInfo,
		uintptr(data), uintptr(nbytes), uintptr(unsafe.Pointer(&shape[0])), uintptr(len(t.Sizes())), et, uintptr(unsafe.Pointer(v))))
	if err != nil {
		return 0, err
	}
	return *v, nil
}

// dimsFit reports whether sizes match an input's declared dimensions.
func dimsFit(sizes []int, dims []int64) bool {
	if len(sizes) != len(dims) {
		return false
	}
	for d, n := range dims {
		if n >= 0 && int64(sizes[d]) != n {
			return false
		}
	}
	return true
}

// Run runs the model once; the outputs stay in ONNX Runtime's memory
// until the next Run or Close (Outputs copies them).
func (c *Call) Run() error {
	if c.closed {
		return fmt.Errorf("ort: %s: Run on a closed Call", c.s.path)
	}
	c.releaseOutputs()
	l := c.s.l
	var names, values, outNames, outs uintptr
	if len(c.values) > 0 {
		names, values = uintptr(unsafe.Pointer(&c.names[0])), uintptr(unsafe.Pointer(&c.values[0]))
	}
	if len(c.outs) > 0 {
		outNames, outs = uintptr(unsafe.Pointer(&c.s.outNames[0])), uintptr(unsafe.Pointer(&c.outs[0]))
	}
	// The slices are fields of c (heap, alive past the call).
	st := c.frame.Call(l.fn[slotRun], c.s.h, 0, names, values, uintptr(len(c.values)), outNames, uintptr(len(c.outs)), outs)
	runtime.KeepAlive(c)
	if err := l.status("Run", st); err != nil {
		return fmt.Errorf("%s: %w", c.s.path, err)
	}
	return nil
}

// Outputs copies the last run's outputs into gosr tensors.
func (c *Call) Outputs() ([]*ivalue.Tensor, error) {
	l := c.s.l
	out := make([]*ivalue.Tensor, len(c.outs))
	for i, v := range c.outs {
		if v == 0 {
			return nil, fmt.Errorf("ort: %s: no outputs: Run first", c.s.path)
		}
		info := new(uintptr)
		if err := l.status("GetTensorTypeAndShape", call(l.fn[slotGetTensorTypeAndShape], v, uintptr(unsafe.Pointer(info)))); err != nil {
			return nil, fmt.Errorf("%s: output %q: %w", c.s.path, c.s.outputs[i], err)
		}
		dt, dims, err := l.tensorInfo(*info)
		call(l.fn[slotReleaseTensorTypeAndShapeInfo], *info)
		if err != nil {
			return nil, fmt.Errorf("%s: output %q: %w", c.s.path, c.s.outputs[i], err)
		}
		sizes := make([]int, len(dims))
		for d, n := range dims {
			sizes[d] = int(n)
		}
		t, err := ivalue.NewTensorErr(dt, sizes...)
		if err != nil {
			return nil, fmt.Errorf("%s: output %q: %w", c.s.path, c.s.outputs[i], err)
		}
		if n := t.Nbytes(); n > 0 {
			p := new(uintptr)
			if err := l.status("GetTensorMutableData", call(l.fn[slotGetTensorMutableData], v, uintptr(unsafe.Pointer(p)))); err != nil {
				return nil, fmt.Errorf("%s: output %q: %w", c.s.path, c.s.outputs[i], err)
			}
			copy(t.Storage().Data[:n], cBytes(*p, n))
		}
		out[i] = t
	}
	return out, nil
}

// cBytes is n bytes of C memory at p.
//
//go:nocheckptr
func cBytes(p uintptr, n int) []byte {
	return unsafe.Slice((*byte)(cptr(p)), n)
}

func (c *Call) releaseOutputs() {
	for i, v := range c.outs {
		if v != 0 {
			c.frame.Call1(c.s.l.fn[slotReleaseValue], v)
			c.outs[i] = 0
		}
	}
}

// Close releases the Call's ONNX Runtime values and unpins its inputs.
func (c *Call) Close() {
	if c.closed {
		return
	}
	c.closed = true
	c.releaseOutputs()
	for _, v := range c.values {
		call(c.s.l.fn[slotReleaseValue], v)
	}
	c.values = nil
	c.pin.Unpin()
}
