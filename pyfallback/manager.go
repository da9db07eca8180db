package pyfallback

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gosr/gosr/ivalue"
)

// Manager is a set of private interpreters with a load balancer, the
// InterpreterManager of torch::deploy. Sessions take an interpreter,
// run Python on it and give it back. A Manager is safe for concurrent use.
type Manager struct {
	interps []*interp
	leases  []uint64
	closed  atomic.Bool
	mu      sync.Mutex
	pkgs    []*Package
	next    atomic.Uint32
	spare   bool // Options.SpareProc: this manager counts in the raise
}

// NewManager starts (or takes from the process's idle ones) the private
// interpreters o asks for. The system's libpython is found at run time
// (see FindLibPython) unless o names one; without it the error says what
// to install.
func NewManager(o Options) (*Manager, error) {
	n := o.Interpreters
	if n == 0 {
		n = 1
	}
	if n < 0 {
		return nil, fmt.Errorf("pyfallback: NewManager: Options.Interpreters is %d, want at least 1 (0 means 1)", n)
	}
	path := o.LibPython
	if path == "" {
		var err error
		if path, err = FindLibPython(); err != nil {
			return nil, err
		}
	} else if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("pyfallback: Options.LibPython %s: %w", path, err)
	}
	kind := libKind{path: path, shared: o.SharedLibrary}
	procs.mu.Lock()
	defer procs.mu.Unlock()
	idle := 0
	for _, in := range procs.free {
		if in.kind == kind {
			idle++
		}
	}
	if limit := MaxInterpreters(); n > idle+limit-len(procs.all) {
		others := ""
		if k := len(procs.free) - idle; k > 0 {
			others = fmt.Sprintf(" and %d idle ones were started from another library or SharedLibrary setting", k)
		}
		return nil, fmt.Errorf("pyfallback: NewManager: %d interpreters asked for; this process can hold %d private interpreters, %d are in use by other managers%s: glibc reserves static TLS for glibc.rtld.nns namespaces (%d now); start the process with GLIBC_TUNABLES=glibc.rtld.nns=N (at most 16) for more",
			n, limit, len(procs.all)-len(procs.free), others, limit)
	}
	m := &Manager{spare: o.SpareProc}
	for len(m.interps) < n {
		in := takeIdle(kind)
		if in == nil {
			var err error
			if in, err = startInterp(kind); err != nil {
				procs.free = append(procs.free, m.interps...)
				return nil, err
			}
		}
		in.handoff.Store(o.Handoff)
		m.interps = append(m.interps, in)
		m.leases = append(m.leases, in.lease.Add(1))
	}
	if m.spare {
		spare.opened()
	}
	return m, nil
}

// takeIdle removes from the idle interpreters the last one started as
// kind and returns it, or nil; procs.mu is held.
func takeIdle(kind libKind) *interp {
	for k := len(procs.free) - 1; k >= 0; k-- {
		if in := procs.free[k]; in.kind == kind {
			procs.free = append(procs.free[:k], procs.free[k+1:]...)
			return in
		}
	}
	return nil
}

// Len is the number of interpreters.
func (m *Manager) Len() int { return len(m.interps) }

// InterpreterInfo describes one interpreter of a manager.
type InterpreterInfo struct {
	ID      int           // the process-wide interpreter number
	Startup time.Duration // dlmopen + Py_InitializeEx + gosr's modules
	Load    int           // sessions holding it now
	// PrivateLibrary: loaded from a private copy of libpython (every
	// interpreter but the process's first, unless Options.SharedLibrary).
	PrivateLibrary bool
	// Calls and Busy: jobs run since the process started the interpreter
	// and the time they held it (GIL taken to GIL dropped), for every
	// manager it was lent to.
	Calls uint64
	Busy  time.Duration
	// HandedOver: of Calls, those run on the interpreter's own thread
	// (Options.Handoff).
	HandedOver uint64
}

// Interpreters describes the manager's interpreters.
func (m *Manager) Interpreters() []InterpreterInfo {
	out := make([]InterpreterInfo, len(m.interps))
	for i, in := range m.interps {
		out[i] = InterpreterInfo{ID: in.id, Startup: in.startup, Load: int(in.load.Load()), PrivateLibrary: in.private,
			Calls: in.calls.Load(), Busy: time.Duration(in.busyNs.Load()), HandedOver: in.handed.Load()}
	}
	return out
}

// Acquire takes an interpreter for a session: a free one first, then the
// least busy one (its calls then queue behind the other session's).
func (m *Manager) Acquire(ctx context.Context) (*Session, error) {
	return m.AcquireHint(ctx, -1)
}

// AcquireHint is Acquire preferring interpreter hint (the index of the
// last one the caller used) when it is free: affinity keeps a caller's
// imported modules and caches warm, as torch::deploy's balancer does.
func (m *Manager) AcquireHint(ctx context.Context, hint int) (*Session, error) {
	s := &Session{m: m, j: newJob()}
	if err := m.acquire(ctx, hint, s); err != nil {
		return nil, err
	}
	return s, nil
}

func (m *Manager) acquire(ctx context.Context, hint int, s *Session) error {
	if m.closed.Load() {
		return ErrClosed
	}
	if ctx != nil {
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	n := len(m.interps)
	if hint < 0 || hint >= n {
		hint = int(m.next.Add(1)) % n
	}
	for i := 0; i < n; i++ {
		k := (hint + i) % n
		if m.interps[k].load.CompareAndSwap(0, 1) {
			s.idx, s.in, s.lease = k, m.interps[k], m.leases[k]
			return nil
		}
	}
	best := hint
	for i := 0; i < n; i++ {
		k := (hint + i) % n
		if m.interps[k].load.Load() < m.interps[best].load.Load() {
			best = k
		}
	}
	m.interps[best].load.Add(1)
	s.idx, s.in, s.lease = best, m.interps[best], m.leases[best]
	return nil
}

// Close releases the manager's interpreters. Objects, packages and
// sessions of the manager become unusable (ErrClosed); the interpreters
// drop everything gosr loaded into them and go back to the process for
// the next manager (glibc cannot give back a namespace safely).
func (m *Manager) Close() error {
	if m.closed.Swap(true) {
		return nil
	}
	m.mu.Lock()
	pkgs := m.pkgs
	m.pkgs = nil
	m.mu.Unlock()
	for _, p := range pkgs {
		p.close()
	}
	for _, in := range m.interps {
		in.lease.Add(1) // every handle of this lease is now stale
		j := newJob()
		_ = in.do(nil, j, func(in *interp) error {
			in.runString("import gc\ngc.collect()\n", pyFileInput, in.glb)
			return nil
		})
	}
	procs.mu.Lock()
	procs.free = append(procs.free, m.interps...)
	if m.spare {
		spare.closed()
	}
	procs.mu.Unlock()
	return nil
}

// Session is one interpreter held by one goroutine (not for concurrent
// use). Every call runs on the interpreter's thread with its GIL.
type Session struct {
	m     *Manager
	in    *interp
	idx   int
	lease uint64
	j     *job
	done  bool
}

// Interpreter is the index (in the manager) of the session's interpreter.
func (s *Session) Interpreter() int { return s.idx }

// Release gives the interpreter back.
func (s *Session) Release() {
	if s == nil || s.done {
		return
	}
	s.done = true
	s.in.load.Add(-1)
}

func (s *Session) check() error {
	if s.done {
		return fmt.Errorf("pyfallback: session used after Release")
	}
	if s.m.closed.Load() || s.in.lease.Load() != s.lease {
		return ErrClosed
	}
	return nil
}

func (s *Session) do(ctx context.Context, fn func(*interp) error) error {
	if err := s.check(); err != nil {
		return err
	}
	return s.in.do(ctx, s.j, fn)
}

// Object is a handle to a Python object in one interpreter. Close drops
// gosr's reference; a handle outlives neither its interpreter's lease
// (Manager.Close) nor is usable from another interpreter.
type Object struct {
	in    *interp
	lease uint64
	ptr   uintptr
}

func (o *Object) String() string {
	return fmt.Sprintf("pyfallback.Object(interp %d, %#x)", o.in.id, o.ptr)
}

// Close drops the reference (on the interpreter's thread).
func (o *Object) Close() {
	if o == nil || o.ptr == 0 {
		return
	}
	p := o.ptr
	o.ptr = 0
	if o.lease != o.in.lease.Load() {
		return // the interpreter was cleaned; its objects are gone
	}
	_ = o.in.do(nil, newJob(), func(in *interp) error { in.decref(p); return nil })
}

func (s *Session) own(o *Object) error {
	if o == nil || o.ptr == 0 {
		return fmt.Errorf("pyfallback: a nil or closed object")
	}
	if o.in != s.in {
		return fmt.Errorf("pyfallback: an object of interpreter %d used in a session on interpreter %d (replicate it with a Movable)", o.in.id, s.in.id)
	}
	if o.lease != s.lease {
		return ErrClosed
	}
	return nil
}

func (s *Session) wrap(p uintptr) *Object { return &Object{in: s.in, lease: s.lease, ptr: p} }

// Exec runs Python statements in the interpreter's __main__.
func (s *Session) Exec(ctx context.Context, code string) error {
	return s.do(ctx, func(in *interp) error {
		args := in.tuple(in.str(code), in.str("<gosr exec>"), in.glbRef())
		r := in.callObj(in.fRun, args)
		in.decref(args)
		if r == 0 {
			return in.fetchErr()
		}
		defer in.decref(r)
		if in.isErr(r) {
			return in.errFrom(r)
		}
		return nil
	})
}

func (in *interp) glbRef() uintptr { in.incref(in.glb); return in.glb }

// Eval evaluates a Python expression in __main__ and converts the result
// (numbers, strings, containers, tensors; other objects as *Object).
func (s *Session) Eval(ctx context.Context, expr string) (ivalue.IValue, error) {
	var out ivalue.IValue
	err := s.do(ctx, func(in *interp) error {
		args := in.tuple(in.str(expr), in.glbRef())
		r := in.callObj(in.fEval, args)
		in.decref(args)
		if r == 0 {
			return in.fetchErr()
		}
		defer in.decref(r)
		if in.isErr(r) {
			return in.errFrom(r)
		}
		v, err := in.fromPy(r, s.lease)
		out = v
		return err
	})
	return out, err
}

// Global returns a name from __main__ as an object handle.
func (s *Session) Global(ctx context.Context, name string) (*Object, error) {
	var out *Object
	err := s.do(ctx, func(in *interp) error {
		p := in.getItem(in.glb, name)
		if p == 0 {
			return &PyError{Type: "NameError", Message: fmt.Sprintf("name %q is not defined in __main__", name)}
		}
		in.incref(p)
		out = s.wrap(p)
		return nil
	})
	return out, err
}

// Import imports a module from the system (not from a package).
func (s *Session) Import(ctx context.Context, module string) (*Object, error) {
	var out *Object
	err := s.do(ctx, func(in *interp) error {
		n := cString(module)
		p := call(in.c.PyImport_ImportModule, uintptrOf(n))
		if p == 0 {
			return in.fetchErr()
		}
		out = s.wrap(p)
		return nil
	})
	return out, err
}

// Attr returns o.name.
func (s *Session) Attr(ctx context.Context, o *Object, name string) (*Object, error) {
	if err := s.own(o); err != nil {
		return nil, err
	}
	var out *Object
	err := s.do(ctx, func(in *interp) error {
		n := cString(name)
		p := call(in.c.PyObject_GetAttrString, o.ptr, uintptrOf(n))
		if p == 0 {
			return in.fetchErr()
		}
		out = s.wrap(p)
		return nil
	})
	return out, err
}

// Value converts an object to a gosr value (see Eval).
func (s *Session) Value(ctx context.Context, o *Object) (ivalue.IValue, error) {
	if err := s.own(o); err != nil {
		return ivalue.None(), err
	}
	var out ivalue.IValue
	err := s.do(ctx, func(in *interp) error {
		args := in.tuple(in.str("_gosr._any(x)"), in.dictWith("x", o.ptr))
		r := in.callObj(in.fEval, args)
		in.decref(args)
		if r == 0 {
			return in.fetchErr()
		}
		defer in.decref(r)
		if in.isErr(r) {
			return in.errFrom(r)
		}
		v, err := in.fromPy(r, s.lease)
		out = v
		return err
	})
	return out, err
}

func (in *interp) dictWith(name string, o uintptr) uintptr {
	d := call(in.c.PyDict_New)
	n := cString(name)
	call(in.c.PyDict_SetItemString, d, uintptrOf(n), o)
	g := cString("_gosr")
	call(in.c.PyDict_SetItemString, d, uintptrOf(g), in.gosr)
	return d
}

// FromValue makes a Python object from a gosr value. Tensors are views
// of gosr's memory: the object is valid while the tensor's memory is.
func (s *Session) FromValue(ctx context.Context, v ivalue.IValue) (*Object, error) {
	var out *Object
	err := s.do(ctx, func(in *interp) error {
		p, err := in.toPy(v)
		if err != nil {
			return err
		}
		out = s.wrap(p)
		return nil
	})
	return out, err
}

// Call calls fn(*args) and converts the result by the TorchScript type
// ret ("Tensor", "Tuple[Tensor, int]", "List[str]", ...; "" converts
// what it can and keeps the rest as objects). A Python exception comes
// back as a *PyError with its traceback; ctx interrupts the call.
func (s *Session) Call(ctx context.Context, fn *Object, ret string, args ...ivalue.IValue) (ivalue.IValue, error) {
	if err := s.own(fn); err != nil {
		return ivalue.None(), err
	}
	var out ivalue.IValue
	err := s.do(ctx, func(in *interp) error {
		r, err := in.invoke(fn.ptr, ret, args)
		if err != nil {
			return err
		}
		defer in.decref(r)
		v, err := in.fromPy(r, s.lease)
		out = v
		return err
	})
	return out, err
}

// invoke runs _gosr.invoke(fn, args, ret): a new reference to the
// converted result, or the Python error.
func (in *interp) invoke(fn uintptr, ret string, args []ivalue.IValue) (uintptr, error) {
	r := in.str(ret)
	defer in.decref(r)
	return in.invokeObj(fn, r, args, 0)
}

// invokeObj is invoke with ret a Python str (borrowed); errors number
// the arguments from first.
func (in *interp) invokeObj(fn, ret uintptr, args []ivalue.IValue, first int) (uintptr, error) {
	c := in.c
	t := in.call(c.PyTuple_New, uintptr(len(args)))
	for i, a := range args {
		p, err := in.toPy(a)
		if err != nil {
			in.decref(t)
			return 0, fmt.Errorf("argument %d: %w", first+i, err)
		}
		in.call(c.PyTuple_SetItem, t, uintptr(i), p)
	}
	in.incref(fn)
	in.incref(ret)
	ia := in.tuple(fn, t, ret)
	r := in.callObj(in.fInvoke, ia)
	in.decref(ia)
	if r == 0 {
		return 0, in.fetchErr()
	}
	if in.isErr(r) {
		err := in.errFrom(r)
		in.decref(r)
		return 0, err
	}
	return r, nil
}
