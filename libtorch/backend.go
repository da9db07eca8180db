package libtorch

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/internal/ccall"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops"
)

// Options configure a Backend.
type Options struct {
	// Threads is libtorch's intra-op thread count for this backend's
	// kernels; 0 means 1, as for serving (each goroutine one core).
	Threads int
	// Shim is the path of the shim (build/libgosrtorch.so, made by `make
	// libtorch`); "" looks beside the executable, in the build/ directory
	// of the checkout this package was built from and of the working
	// directory and its parents, then in /usr/local/lib/gosr. A process
	// loads one shim: the first Open that finds one fixes it.
	Shim string
}

// Backend runs ops with ATen kernels. It is an ops.KernelBackend; one
// Backend may serve any number of modules and goroutines.
type Backend struct {
	lib     *lib
	threads int

	mu       sync.Mutex
	resolved map[string]*opInfo
	stats    Stats
}

// Stats count the kernels a Backend has handed out.
type Stats struct {
	// Specialized: out-variant calls of hot ops; Boxed: calls through
	// the dispatcher by schema.
	Specialized, Boxed int
	// Ops names the ops served, "aten::add.Tensor" -> kernels.
	Ops map[string]int
}

// Stats reports the kernels handed out so far.
func (b *Backend) Stats() Stats {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.stats
	s.Ops = make(map[string]int, len(b.stats.Ops))
	for k, v := range b.stats.Ops {
		s.Ops[k] = v
	}
	return s
}

type opInfo struct {
	id          int64
	overload    string
	rets        string
	specialized bool
	err         error
}

// Open loads the shim (once per process) and returns a backend. Without
// the shim or libtorch the error wraps ErrNoShim and says what to install
// and which files were looked for.
func Open(o Options) (*Backend, error) {
	l, err := load(o.Shim)
	if err != nil {
		return nil, err
	}
	if o.Threads <= 0 {
		o.Threads = 1
	}
	var msg [512]byte
	if call(l.init, uintptr(o.Threads), uintptr(unsafe.Pointer(&msg[0])), uintptr(len(msg))) != 0 {
		return nil, fmt.Errorf("libtorch: init: %s", cBytes(msg[:]))
	}
	return &Backend{lib: l, threads: o.Threads, resolved: map[string]*opInfo{}}, nil
}

// Name is "libtorch".
func (b *Backend) Name() string { return "libtorch" }

// Info describes the loaded shim and libtorch.
func (b *Backend) Info() Info { return b.lib.info }

// Threads is the intra-op thread count.
func (b *Backend) Threads() int { return b.threads }

// CheckDevice says whether modules can be placed on device ("cpu",
// "libtorch-cpu", "cuda", "cuda:N"); see PlaceDevice.
func (b *Backend) CheckDevice(device string) error {
	d, err := ivalue.ParseDevice(device)
	if err != nil {
		return fmt.Errorf("libtorch: %v", err)
	}
	return b.PlaceDevice(d)
}

// PlaceDevice readies d for modules placed there: host memory needs
// nothing; libtorch-cpu always works; CUDA needs a libtorch built with
// CUDA and the GPU present. It registers the backend's allocator and
// copier for the device with ivalue.
func (b *Backend) PlaceDevice(d ivalue.Device) error {
	switch d.Type {
	case ivalue.Host:
		return nil
	case ivalue.TorchCPU:
	case ivalue.CUDA:
		n := b.lib.info.CUDADevices
		if n == 0 {
			return fmt.Errorf("libtorch: device %s: %s has no CUDA (Debian's libtorch-dev is built for CPU only) or no GPU is present; install a CUDA build of libtorch and rebuild the shim with `make libtorch TORCH_INC=... TORCH_LIB=...`", d, b.lib.info.Library)
		}
		if d.Index >= n {
			return fmt.Errorf("libtorch: device %s: libtorch sees %d CUDA devices", d, n)
		}
	default:
		return fmt.Errorf("libtorch: device %s is not one libtorch places modules on", d)
	}
	b.memory()
	return nil
}

// Rebinds counts, process-wide, the ATen tensors the shim remade because
// a gosr tensor's memory or geometry changed; steady runs make none.
func (b *Backend) Rebinds() int64 { return int64(call(b.lib.rebinds)) }

// BenchAdd times n calls of ATen's add_out on 1-element tensors made in
// C++: the floor against which the shim's per-call overhead is measured.
func (b *Backend) BenchAdd(n int) time.Duration {
	return time.Duration(call(b.lib.benchAdd, uintptr(n)))
}

// typeCode is the shim's one-letter code for a node input's type, used
// to pick the overload (see score in gosr_torch.cpp).
func typeCode(v *graph.Value) byte {
	t := v.Type
	if t.Kind == graph.OptionalType {
		t = t.Elem()
	}
	switch t.Kind {
	case graph.TensorType:
		return 'T'
	case graph.IntType, graph.ScalarTypeType, graph.LayoutType, graph.MemoryFormatType:
		return 'i'
	case graph.FloatType:
		return 'f'
	case graph.BoolType:
		return 'b'
	case graph.NumberType:
		return 'N'
	case graph.StringType:
		return 's'
	case graph.DeviceType:
		return 'd'
	case graph.NoneType:
		return 'n'
	case graph.ListType:
		e := t.Elem()
		opt := e.Kind == graph.OptionalType
		if opt {
			e = e.Elem()
		}
		switch {
		case e.Kind == graph.TensorType && opt:
			return 'O'
		case e.Kind == graph.TensorType:
			return 'L'
		case opt:
			return '?'
		case e.Kind == graph.IntType:
			return 'I'
		case e.Kind == graph.FloatType:
			return 'F'
		case e.Kind == graph.BoolType:
			return 'B'
		}
	}
	return '?'
}

func (b *Backend) resolve(op, codes string) *opInfo {
	key := op + "(" + codes + ")"
	b.mu.Lock()
	defer b.mu.Unlock()
	if oi := b.resolved[key]; oi != nil {
		return oi
	}
	var msg [4096]byte
	name := cString(op)
	cc := cString(codes)
	id := int64(call(b.lib.resolve, uintptr(unsafe.Pointer(&name[0])), uintptr(unsafe.Pointer(&cc[0])),
		uintptr(unsafe.Pointer(&msg[0])), uintptr(len(msg))))
	oi := &opInfo{id: id}
	if id < 0 {
		oi.err = fmt.Errorf("%s", cBytes(msg[:]))
	} else {
		f := strings.SplitN(cBytes(msg[:]), " ", 2)
		oi.overload, oi.rets = f[0], f[len(f)-1]
		oi.specialized = call(b.lib.specialized, uintptr(id)) != 0
	}
	b.resolved[key] = oi
	return oi
}

// Kernel returns the ATen kernel for n: a specialised out-variant call
// for the hot ops, a boxed call through the dispatcher by schema for the
// others. Nil when libtorch has no such op or overload.
//
// On a device other than the host, the kernel makes its new tensors
// there; its inputs must be there too, or be 0-d CPU tensors (ATen's rule).
// misreads are overloads ("op.overload") whose CPU kernels in PyTorch
// 1.13 compute a wrong result from what gosr hands them; the backend does
// not offer them, so gosr's kernels run them (on the host: a module on a
// device with one is refused).
var misreads = map[string]bool{
	// These read an input's memory as if it were contiguous whatever its
	// strides (a strided view gives a wrong result or an error).
	"aten::_masked_softmax.": true,
	"aten::lstm.data":        true,
	"aten::gru.data":         true,
	"aten::rnn_tanh.data":    true,
	"aten::rnn_relu.data":    true,
	// Its out= kernel reads the output's old contents when beta is 0
	// (0 times a NaN an earlier op left in the planner's memory is NaN).
	"aten::baddbmm.": true,
}

func (b *Backend) Kernel(n *graph.Node, dev ivalue.Device) (ops.Kernel, ops.Kind, error) {
	if !strings.HasPrefix(n.Kind, "aten::") || len(n.Blocks) > 0 {
		return nil, 0, nil
	}
	codes := make([]byte, len(n.Inputs))
	for i, v := range n.Inputs {
		codes[i] = typeCode(v)
		if codes[i] == '?' {
			return nil, 0, nil
		}
	}
	// Tensor-to-scalar conversions are JIT ops outside the dispatcher;
	// ATen reads the element for them (on a device Go cannot).
	op, conv := n.Kind, byte(0)
	if string(codes) == "T" {
		switch n.Kind {
		case "aten::Bool":
			op = "aten::is_nonzero"
		case "aten::Int":
			op, conv = "aten::item", 'i'
		case "aten::Float":
			op, conv = "aten::item", 'f'
		}
	}
	oi := b.resolve(op, string(codes))
	if oi.err != nil {
		return nil, 0, oi.err
	}
	if misreads[op+"."+oi.overload] {
		// An error, not "no kernel": on a device it is why the node is
		// refused (gosr's own kernel cannot read device memory).
		name := op
		if oi.overload != "" {
			name += "." + oi.overload
		}
		return nil, 0, fmt.Errorf("gosr keeps %s off libtorch: PyTorch 1.13's CPU kernel for it misreads gosr's tensors", name)
	}
	if len(oi.rets) != len(n.Outputs) {
		return nil, 0, fmt.Errorf("libtorch %s.%s returns %d values, the node %d", n.Kind, oi.overload, len(oi.rets), len(n.Outputs))
	}
	kind := ops.OutVariant
	for _, r := range oi.rets {
		switch r {
		case 'A', 'o', 'V':
			kind = ops.Native
		case 'L':
			if kind == ops.OutVariant {
				kind = ops.Fallback
			}
		}
	}
	b.mu.Lock()
	if oi.specialized {
		b.stats.Specialized++
	} else {
		b.stats.Boxed++
	}
	if b.stats.Ops == nil {
		b.stats.Ops = map[string]int{}
	}
	b.stats.Ops[n.Kind+"."+oi.overload]++
	b.mu.Unlock()
	k := &kernel{b: b, op: oi, node: n, codes: string(codes), kind: kind, dev: dev, conv: conv,
		hasList: strings.ContainsAny(string(codes), "IFBLO")}
	return k.run, kind, nil
}

// kernel is one node's ATen call, shared by all runtimes.
type kernel struct {
	b     *Backend
	op    *opInfo
	node  *graph.Node
	codes string
	kind  ops.Kind
	// dev is where the kernel's new tensors live.
	dev ivalue.Device
	// conv converts a scalar result: 'i' to int, 'f' to float (aten::Int
	// and aten::Float run as aten::item).
	conv byte
	// hasList: some input is a list, so the tensor count varies.
	hasList bool
}

// state is one runtime's call context for a node: the shim's context
// (C memory, freed when the state is collected) and Go scratch.
type state struct {
	sys     ccall.Frame
	h       *cHdr
	tensors []cTensor
	args    []cArg
	lists   [][]int64
	dlists  [][]float64
	inT     []*ivalue.Tensor
	// Output geometry of the last run, for the out variant's next call.
	outDT    []ivalue.DType
	outSizes [][]int
	ready    bool
	tmpSizes []int
	tmpStr   []int
}

func (k *kernel) newState() (*state, error) {
	h := call(k.b.lib.ctxNew, uintptr(k.op.id), uintptr(k.b.threads))
	if h == 0 {
		return nil, fmt.Errorf("libtorch: no context for %s", k.node.Kind)
	}
	st := &state{h: (*cHdr)(ptr(h)), lists: make([][]int64, len(k.node.Inputs)), dlists: make([][]float64, len(k.node.Inputs)),
		outDT: make([]ivalue.DType, len(k.node.Outputs)), outSizes: make([][]int, len(k.node.Outputs))}
	free := k.b.lib.ctxFree
	runtime.AddCleanup(st, func(h uintptr) { call(free, h) }, h)
	st.reserve(k.b.lib, len(k.node.Inputs)+len(k.node.Outputs), len(k.node.Inputs))
	return st, nil
}

// ptr turns an address in C memory into a pointer (vet-clean: the
// memory is not Go's, so the GC never moves it).
//
//go:nocheckptr
func ptr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

func (st *state) reserve(l *lib, ntensors, nargs int) {
	if ntensors <= len(st.tensors) && nargs <= len(st.args) {
		return
	}
	call(l.ctxReserve, uintptr(unsafe.Pointer(st.h)), uintptr(max(ntensors, len(st.tensors))), uintptr(max(nargs, len(st.args))))
	st.tensors = unsafe.Slice((*cTensor)(ptr(st.h.tensors)), st.h.tensorsCap)
	st.args = unsafe.Slice((*cArg)(ptr(st.h.args)), st.h.argsCap)
	if cap(st.inT) < int(st.h.tensorsCap) {
		st.inT = make([]*ivalue.Tensor, st.h.tensorsCap)
	}
	st.inT = st.inT[:st.h.tensorsCap]
}

func setDesc(d *cTensor, t *ivalue.Tensor) error {
	n := t.Dim()
	if n > maxDim {
		return fmt.Errorf("tensor of rank %d (libtorch backend takes at most %d)", n, maxDim)
	}
	if t.DType() == ivalue.Undefined {
		return fmt.Errorf("undefined tensor")
	}
	d.data = uintptr(t.DataPtr())
	d.deviceType, d.deviceIndex = cDevice(t.Device())
	d.dtype = t.DType().ScalarType()
	d.ndim = int64(n)
	for i, s := range t.Sizes() {
		d.sizes[i] = int64(s)
	}
	for i, s := range t.Strides() {
		d.strides[i] = int64(s)
	}
	return nil
}

func (k *kernel) run(p *ops.ProcessedNode) error {
	st, _ := p.BackendState.(*state)
	if st == nil {
		var err error
		if st, err = k.newState(); err != nil {
			return err
		}
		p.BackendState = st
	}
	l := k.b.lib
	nt := 0
	if k.hasList {
		// Count the tensors first: the shim's arrays may have to grow
		// (newState reserved one per input and output).
		for i := range p.In {
			v := p.Input(i)
			switch {
			case v.IsTensor():
				nt++
			case v.List() != nil:
				nt += len(v.List().Items)
			}
		}
		st.reserve(l, nt+len(p.Out), len(p.In))
		nt = 0
	}
	for i := range p.In {
		v := p.Input(i)
		a := &st.args[i]
		*a = cArg{}
		switch v.Kind() {
		case ivalue.KindTensor:
			t := v.Tensor()
			if err := setDesc(&st.tensors[nt], t); err != nil {
				return fmt.Errorf("libtorch %s: input %d: %v", k.node.Kind, i, err)
			}
			st.inT[nt] = t
			a.tag, a.i = tagTensor, int64(nt)
			nt++
		case ivalue.KindInt:
			a.tag, a.i = tagInt, v.Int()
		case ivalue.KindDouble:
			a.tag, a.d = tagDouble, v.Double()
		case ivalue.KindBool:
			a.tag = tagBool
			if v.Bool() {
				a.i = 1
			}
		case ivalue.KindNone:
			a.tag = tagNone
		case ivalue.KindString, ivalue.KindDevice:
			a.tag = tagString
			if v.Kind() == ivalue.KindDevice {
				a.tag = tagDevice
			}
			s := v.Str()
			a.len = int32(len(s))
			a.p = uintptr(unsafe.Pointer(unsafe.StringData(s)))
		case ivalue.KindList, ivalue.KindTuple:
			items := v.List().Items
			a.len = int32(len(items))
			switch k.codes[i] {
			case 'I', 'B':
				a.tag = tagIntList
				if k.codes[i] == 'B' {
					a.tag = tagBoolList
				}
				ls := st.lists[i][:0]
				for _, it := range items {
					ls = append(ls, it.AsInt())
				}
				st.lists[i] = ls
				if len(ls) > 0 {
					a.p = uintptr(unsafe.Pointer(&ls[0]))
				}
			case 'F':
				a.tag = tagDoubleList
				ls := st.dlists[i][:0]
				for _, it := range items {
					ls = append(ls, it.AsFloat())
				}
				st.dlists[i] = ls
				if len(ls) > 0 {
					a.p = uintptr(unsafe.Pointer(&ls[0]))
				}
			case 'L', 'O':
				a.tag = tagTensorList
				if k.codes[i] == 'O' {
					a.tag = tagOptTensorList
				}
				ls := st.lists[i][:0]
				for j, it := range items {
					if it.IsNone() {
						ls = append(ls, -1)
						continue
					}
					t := it.Tensor()
					if t == nil {
						return fmt.Errorf("libtorch %s: input %d item %d: %s, expected a tensor", k.node.Kind, i, j, it.Kind())
					}
					if err := setDesc(&st.tensors[nt], t); err != nil {
						return fmt.Errorf("libtorch %s: input %d item %d: %v", k.node.Kind, i, j, err)
					}
					st.inT[nt] = t
					ls = append(ls, int64(nt))
					nt++
				}
				st.lists[i] = ls
				if len(ls) > 0 {
					a.p = uintptr(unsafe.Pointer(&ls[0]))
				}
			default:
				return fmt.Errorf("libtorch %s: input %d: a list where the schema wants %q", k.node.Kind, i, k.codes[i])
			}
		default:
			return fmt.Errorf("libtorch %s: input %d: %s values do not cross to libtorch", k.node.Kind, i, v.Kind())
		}
	}
	h := st.h
	h.nargs, h.nin, h.nout = int64(len(p.In)), int64(nt), 0
	// The out variant writes into the outputs of the last run, at the
	// geometry that run had; the shim checks the signature still matches.
	if st.ready {
		for i := range p.Out {
			t := p.OutTensor(i)
			if err := k.resize(t, st.outDT[i], st.outSizes[i]); err != nil {
				return fmt.Errorf("libtorch %s: output %d: %v", k.node.Kind, i, err)
			}
			if err := setDesc(&st.tensors[nt+i], t); err != nil {
				return err
			}
		}
		h.nout = int64(len(p.Out))
	}
	rc := int64(st.sys.Call1(l.run, uintptr(unsafe.Pointer(h))))
	runtime.KeepAlive(p)
	switch rc {
	case 0:
		return nil
	case 1:
		return k.place(p, st, nt)
	}
	st.ready = false
	return k.fail(st)
}

func (k *kernel) fail(st *state) error {
	msg := strings.TrimSpace(goString(call(k.b.lib.ctxError, uintptr(unsafe.Pointer(st.h)))))
	return fmt.Errorf("libtorch %s.%s: %s", k.node.Kind, k.op.overload, msg)
}

func retAt(h *cHdr, i int) *cRet {
	return (*cRet)(unsafe.Add(ptr(h.rets), uintptr(i)*unsafe.Sizeof(cRet{})))
}

// place puts the results the shim describes into the node's outputs:
// views of inputs as gosr views, new tensors into gosr's (planned)
// output tensors, which gosr_finish then fills.
func (k *kernel) place(p *ops.ProcessedNode, st *state, nin int) error {
	h := st.h
	if int(h.nrets) != len(p.Out) {
		return fmt.Errorf("libtorch %s: %d results for %d outputs", k.node.Kind, h.nrets, len(p.Out))
	}
	nout := 0
	// Count the new tensors, so the descriptors fit.
	for i := range p.Out {
		r := retAt(h, i)
		switch r.tag {
		case tagTensor:
			if r.alias < 0 {
				nout++
			}
		case tagTensorList:
			nout += int(r.len)
		}
	}
	st.reserve(k.b.lib, nin+nout, len(p.In))
	nout = 0
	newOut := func(t *ivalue.Tensor, r *cRet) error {
		dt, err := ivalue.DTypeFromScalarType(r.dtype)
		if err != nil {
			return fmt.Errorf("libtorch %s: result: %v", k.node.Kind, err)
		}
		st.tmpSizes = st.tmpSizes[:0]
		for d := 0; d < int(r.ndim); d++ {
			st.tmpSizes = append(st.tmpSizes, int(r.sizes[d]))
		}
		if err := k.resize(t, dt, st.tmpSizes); err != nil {
			return fmt.Errorf("libtorch %s: result: %v", k.node.Kind, err)
		}
		if err := setDesc(&st.tensors[nin+nout], t); err != nil {
			return err
		}
		nout++
		return nil
	}
	for i := range p.Out {
		r := retAt(h, i)
		switch r.tag {
		case tagTensor:
			if r.alias >= 0 {
				if err := k.setView(p.OwnTensor(i), st, r); err != nil {
					return fmt.Errorf("libtorch %s: result %d: %v", k.node.Kind, i, err)
				}
				continue
			}
			var t *ivalue.Tensor
			if k.kind == ops.Native {
				t = p.OwnTensor(i)
			} else {
				t = p.OutTensor(i)
			}
			if err := newOut(t, r); err != nil {
				return err
			}
			st.outDT[i] = t.DType()
			st.outSizes[i] = append(st.outSizes[i][:0], t.Sizes()...)
		case tagTensorList:
			l := p.OutList(i, int(r.len), false)
			for e := 0; e < int(r.len); e++ {
				er := retAt(h, int(r.i)+e)
				// The list is this node's own from the last run (OutList),
				// so are its tensors.
				t := l.Items[e].Tensor()
				if t == nil || p.Fresh {
					t = &ivalue.Tensor{}
				}
				if er.alias >= 0 {
					// chunk, split, unbind: views of an input.
					if err := k.setView(t, st, er); err != nil {
						return fmt.Errorf("libtorch %s: result %d item %d: %v", k.node.Kind, i, e, err)
					}
				} else if err := newOut(t, er); err != nil {
					return err
				}
				l.Items[e] = ivalue.FromTensor(t)
			}
		case tagNone:
			p.SetOutput(i, ivalue.None())
		case tagInt, tagBool:
			switch {
			case k.conv == 'f':
				p.SetOutput(i, ivalue.FromDouble(float64(r.i)))
			case k.conv == 'i':
				p.SetOutput(i, ivalue.FromInt(r.i))
			case r.tag == tagBool:
				p.SetOutput(i, ivalue.FromBool(r.i != 0))
			default:
				p.SetOutput(i, ivalue.FromInt(r.i))
			}
		case tagDouble:
			if k.conv == 'i' {
				p.SetOutput(i, ivalue.FromInt(int64(r.d)))
			} else {
				p.SetOutput(i, ivalue.FromDouble(r.d))
			}
		case tagIntList:
			src := unsafe.Slice((*int64)(ptr(r.p)), r.len)
			items := make([]ivalue.IValue, len(src))
			for j, x := range src {
				items[j] = ivalue.FromInt(x)
			}
			p.SetOutput(i, ivalue.NewList(items...))
		case tagDoubleList:
			src := unsafe.Slice((*float64)(ptr(r.p)), r.len)
			items := make([]ivalue.IValue, len(src))
			for j, x := range src {
				items[j] = ivalue.FromDouble(x)
			}
			p.SetOutput(i, ivalue.NewList(items...))
		default:
			return fmt.Errorf("libtorch %s: result %d has tag %d", k.node.Kind, i, r.tag)
		}
	}
	if nout == 0 && !k.op.specialized {
		return nil
	}
	h.nout = int64(nout)
	if st.sys.Call1(k.b.lib.finish, uintptr(unsafe.Pointer(h))) != 0 {
		st.ready = false
		return k.fail(st)
	}
	runtime.KeepAlive(p)
	st.ready = k.op.specialized
	return nil
}

// resize makes t a contiguous tensor on the kernel's device. On the host
// it is a plain Resize (the per-call path, kept free of a deferred
// recover); on a device the allocation may fail.
func (k *kernel) resize(t *ivalue.Tensor, dt ivalue.DType, sizes []int) error {
	if k.dev.IsHost() && t.Device().IsHost() {
		t.Resize(dt, sizes)
		return nil
	}
	t.SetDevice(k.dev)
	return t.ResizeErr(dt, sizes)
}

// setView makes t the view of an input that result r describes.
func (k *kernel) setView(t *ivalue.Tensor, st *state, r *cRet) error {
	base := st.inT[r.alias]
	dt, err := ivalue.DTypeFromScalarType(r.dtype)
	if err != nil || dt != base.DType() || r.offset%int64(dt.Size()) != 0 {
		return fmt.Errorf("views its input as %v: gosr views keep the dtype", dt)
	}
	st.tmpSizes, st.tmpStr = st.tmpSizes[:0], st.tmpStr[:0]
	for d := 0; d < int(r.ndim); d++ {
		st.tmpSizes = append(st.tmpSizes, int(r.sizes[d]))
		st.tmpStr = append(st.tmpStr, int(r.strides[d]))
	}
	t.SetView(base, base.Offset()+int(r.offset)/dt.Size(), st.tmpSizes, st.tmpStr)
	return nil
}

func cBytes(b []byte) string {
	for i, c := range b {
		if c == 0 {
			return string(b[:i])
		}
	}
	return string(b)
}
