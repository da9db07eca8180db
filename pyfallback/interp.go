package pyfallback

import (
	"bytes"
	"context"
	"embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/gosr/gosr/internal/ccall"
)

// The Python half of gosr, loaded into every interpreter from the binary
// (tests beside the sources are not).
//
//go:embed py/_gosr.py py/gosr_package.py
var pySources embed.FS

// ErrClosed is returned for an interpreter, session or object that is
// gone (its manager was closed).
var ErrClosed = errors.New("pyfallback: interpreter closed")

const (
	pyFileInput = 257
	pyEvalInput = 258
)

// interp is one private CPython: a libpython copy in its own dlmopen
// namespace, driven by one locked OS thread. Every C call into the copy
// happens on that thread: the copy's libc keeps per-thread state (ctype
// tables, pthread keys) that only the thread which loaded it has set up,
// and pthread keys of different copies collide in a thread's key slots.
// The thread takes the GIL for each job and drops it between jobs, so
// Python threads the package starts still run.
type interp struct {
	id   int
	path string
	kind libKind // how it was started (its path is path)
	c    *capi
	jobs chan *job
	// fc is the argument block of in.call: only code holding the
	// interpreter (in.sem, or boot on the loop thread) calls through it.
	fc ccall.Frame
	// strs are strConst's strings (holder only).
	strs map[string]uintptr

	// PyObject*s of the _gosr module, valid while the interpreter lives.
	glb, gosr                                             uintptr
	fInvoke, fTensor, fRun, fEval, fGuard, fView, fFormat uintptr
	fOpenPackage, fDumps, fLoads, fConverter              uintptr
	outType, errType                                      uintptr
	fGetattr                                              uintptr

	// lease counts Manager leases; a handle made under an older lease is stale.
	lease atomic.Uint64
	// load is the number of sessions holding the interpreter (the balancer's measure).
	load atomic.Int32
	// running is the generation of the job holding the GIL (0 between
	// jobs) and runIdent the Python ident of the thread it runs on; the
	// watchdog reads both through ctypes. jobGen counts jobs.
	running  int64
	runIdent int64
	jobGen   uint64
	// sem is held by the one job running: jobs of the interpreter's own
	// thread and jobs run on their caller's thread (doHere) take turns.
	sem     chan struct{}
	wdWrite int
	ident   uintptr // the thread ident Python knows the main thread by
	private bool    // loaded from a private copy of libpython (openLibrary)
	startup time.Duration
	dead    atomic.Bool
	deadErr error
	// outs is where C writes results through pointers (see cOuts).
	outs cOuts
	sbuf []byte
	// calls and busyNs count jobs and the time they held the GIL (the
	// balancer's record, InterpreterInfo).
	calls  atomic.Uint64
	busyNs atomic.Int64
	// handed counts calls run on the interpreter's own thread
	// (Options.Handoff, which handoff holds for the manager it is lent to).
	handed  atomic.Uint64
	handoff atomic.Bool
}

type job struct {
	fn          func(in *interp) error
	err         error
	done        chan struct{}
	fin         chan struct{} // doHere to its interrupter: the job ended
	gen         uint64
	interrupted atomic.Bool
}

func newJob() *job { return &job{done: make(chan struct{}, 1), fin: make(chan struct{}, 1)} }

// The process's interpreters. glibc gives a process at most 16 link-map
// namespaces and reserves static TLS for glibc.rtld.nns of them (4 by
// default), so interpreters are a process resource: started once, lent
// to managers, cleaned and lent again.
var procs struct {
	mu   sync.Mutex
	all  []*interp
	free []*interp
}

// MaxInterpreters is how many private interpreters this process can
// load: glibc's glibc.rtld.nns tunable (4 unless GLIBC_TUNABLES sets it
// when the process starts; at most 16), less the base namespace.
func MaxInterpreters() int { return maxInterpreters(startTunables()) }

// maxInterpreters is MaxInterpreters for the tunables string tunables.
func maxInterpreters(tunables string) int {
	nns := 4
	for _, kv := range strings.Split(tunables, ":") {
		if v, ok := strings.CutPrefix(kv, "glibc.rtld.nns="); ok {
			if n, err := strconv.Atoi(v); err == nil && n >= 1 {
				nns = min(n, 16)
			}
		}
	}
	// The base namespace counts against nns's static TLS reservation only
	// when more libraries with TLS are loaded; measured on Debian 12:
	// 4 copies load with the default of 4.
	return max(nns, 1)
}

// startTunables is GLIBC_TUNABLES as the process started with it: glibc
// read its tunables from the initial environment before any Go code ran,
// so that is what counts (a later os.Setenv changes nothing, and no
// option of gosr's could). "" where /proc/self/environ cannot be read.
var startTunables = sync.OnceValue(func() string {
	b, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		return ""
	}
	for _, kv := range bytes.Split(b, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte("GLIBC_TUNABLES=")); ok {
			return string(v)
		}
	}
	return ""
})

func startInterp(kind libKind) (*interp, error) {
	in := &interp{id: len(procs.all), path: kind.path, kind: kind, jobs: make(chan *job), sem: make(chan struct{}, 1)}
	ready := make(chan error, 1)
	go in.loop(ready)
	err := <-ready
	skipDestructorsAtExit()
	if err != nil {
		return nil, err
	}
	procs.all = append(procs.all, in)
	return in, nil
}

func (in *interp) loop(ready chan<- error) {
	// The thread stays locked for good: it is the copy's main thread.
	runtime.LockOSThread()
	t0 := time.Now()
	ts, err := in.boot()
	if err != nil {
		ready <- fmt.Errorf("pyfallback: starting interpreter %d from %s: %w", in.id, in.path, err)
		return
	}
	in.startup = time.Since(t0)
	ready <- nil
	c := in.c
	for j := range in.jobs {
		in.sem <- struct{}{}
		t := time.Now()
		call(c.PyEval_RestoreThread, ts)
		atomic.StoreInt64(&in.runIdent, int64(in.ident))
		atomic.StoreInt64(&in.running, int64(j.gen))
		j.err = in.runJob(j)
		atomic.StoreInt64(&in.running, 0)
		if j.interrupted.Load() {
			// An interrupt that came too late for the job must not hit the next one.
			call(c.PyThreadState_SetAsyncExc, in.ident, 0)
		}
		ts = call(c.PyEval_SaveThread)
		in.busyNs.Add(int64(time.Since(t)))
		in.calls.Add(1)
		<-in.sem
		j.done <- struct{}{}
	}
}

func (in *interp) runJob(j *job) (err error) {
	in.outs.depth = 0
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("pyfallback: internal error in interpreter %d: %v", in.id, r)
		}
	}()
	return j.fn(in)
}

// openLibrary loads libpython into a new namespace. Every interpreter
// after the process's first loads a private copy of the file (written to
// the temporary directory and removed once mapped), as torch::deploy
// does: cores executing the same physical pages of the interpreter's
// code slow each other down on the machines measured (two python3
// processes from one binary ran 4-8% slower each than beside a copy of
// the binary; two interpreters in one process scaled 1.92-1.97x over one
// with copies, 1.80-1.97x without, BenchmarkInterpreterScaling). Where no
// copy can be written or mapped (a full or noexec temporary directory),
// the shared file is loaded. Options.SharedLibrary loads the shared file
// always.
func (in *interp) openLibrary() (uintptr, error) {
	if in.id > 0 && !in.kind.shared {
		if cp, err := copyToTemp(in.path); err == nil {
			h, err := dlmopenNew(cp)
			os.Remove(cp)
			if err == nil {
				in.private = true
				return h, nil
			}
		}
	}
	return dlmopenNew(in.path)
}

func copyToTemp(path string) (string, error) {
	src, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer src.Close()
	dst, err := os.CreateTemp("", "gosr-"+filepath.Base(path)+"-*")
	if err != nil {
		return "", err
	}
	_, err = io.Copy(dst, src)
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(dst.Name())
		return "", err
	}
	return dst.Name(), nil
}

func (in *interp) boot() (uintptr, error) {
	h, err := in.openLibrary()
	if err != nil {
		return 0, err
	}
	c, err := loadCAPI(h)
	if err != nil {
		return 0, err
	}
	in.c = c
	if err := in.partitionKeys(h); err != nil {
		return 0, err
	}
	prepareThread()
	call(c.ctypeInit)
	call(c.Py_InitializeEx, 0) // 0: leave the process's signal handlers to Go
	c.ExcTimeoutError = derefPtr(c.ExcTimeoutError)
	c.ExcRuntimeError = derefPtr(c.ExcRuntimeError)
	if err := in.bootstrap(); err != nil {
		call(c.PyEval_SaveThread)
		return 0, err
	}
	return call(c.PyEval_SaveThread), nil
}

// bootstrap loads _gosr and gosr_package from the sources embedded in
// the binary.
func (in *interp) bootstrap() error {
	c := in.c
	mainName := cString("__main__")
	main := call(c.PyImport_AddModule, uintptr(unsafe.Pointer(&mainName[0])))
	if main == 0 {
		return fmt.Errorf("no __main__ module")
	}
	glb := call(c.PyModule_GetDict, main)
	srcs := call(c.PyDict_New)
	for _, name := range []string{"_gosr", "gosr_package"} {
		src, err := pySources.ReadFile("py/" + name + ".py")
		if err != nil {
			in.decref(srcs)
			return err
		}
		k := in.str(name)
		v := in.str(string(src))
		call(c.PyDict_SetItem, srcs, k, v)
		in.decref(k)
		in.decref(v)
	}
	key := cString("_gosr_sources")
	call(c.PyDict_SetItemString, glb, uintptr(unsafe.Pointer(&key[0])), srcs)
	in.decref(srcs)
	boot := `
import sys, types, linecache
for _n, _s in _gosr_sources.items():
    _m = types.ModuleType(_n)
    _f = "<gosr>/" + _n + ".py"
    _m.__file__ = _f
    linecache.cache[_f] = (len(_s), None, _s.splitlines(True), _f)
    sys.modules[_n] = _m
    exec(compile(_s, _f, "exec"), _m.__dict__)
del _n, _s, _m, _f, _gosr_sources
import _gosr
`
	if r := in.runString(boot, pyFileInput, glb); r == 0 {
		return fmt.Errorf("bootstrap: %w", in.fetchErr())
	} else {
		in.decref(r)
	}
	in.glb = glb
	in.gosr = in.getItem(glb, "_gosr")
	get := func(name string) uintptr {
		n := cString(name)
		return call(c.PyObject_GetAttrString, in.gosr, uintptr(unsafe.Pointer(&n[0])))
	}
	for _, f := range []struct {
		p    *uintptr
		name string
	}{
		{&in.fInvoke, "invoke"}, {&in.fTensor, "tensor"}, {&in.fRun, "run"}, {&in.fEval, "evaluate"},
		{&in.fGuard, "guard"}, {&in.fView, "view"}, {&in.fFormat, "format_exc"}, {&in.fOpenPackage, "open_package"},
		{&in.fDumps, "dumps"}, {&in.fLoads, "loads"}, {&in.fConverter, "converter"}, {&in.outType, "Out"}, {&in.errType, "Err"},
	} {
		if *f.p = get(f.name); *f.p == 0 {
			return fmt.Errorf("_gosr has no %s: %w", f.name, in.fetchErr())
		}
	}
	if err := in.startWatchdog(); err != nil {
		return err
	}
	bi := in.getItem(glb, "__builtins__")
	if bi != 0 {
		n := cString("getattr")
		in.fGetattr = call(c.PyObject_GetAttrString, bi, uintptr(unsafe.Pointer(&n[0])))
		call(c.PyErr_Clear)
	}
	return nil
}

func (in *interp) getItem(d uintptr, name string) uintptr {
	n := cString(name)
	return call(in.c.PyDict_GetItemString, d, uintptr(unsafe.Pointer(&n[0]))) // borrowed
}

func (in *interp) runString(code string, start int, glb uintptr) uintptr {
	b := cString(code)
	return call(in.c.PyRun_StringFlags, uintptr(unsafe.Pointer(&b[0])), uintptr(start), glb, glb, 0)
}

// do runs fn with the GIL held: on the caller's own thread when that
// thread may run this interpreter's copy (threads), otherwise on the
// interpreter's thread. When ctx is done first, the running Python code
// is interrupted (a TimeoutError or the context's error is raised at its
// next bytecode) and do still waits for fn to return: fn may be reading
// memory the caller owns.
func (in *interp) do(ctx context.Context, j *job, fn func(*interp) error) error {
	if in.dead.Load() {
		return in.deadErr
	}
	j.fn = fn
	j.gen = atomic.AddUint64(&in.jobGen, 1)
	j.interrupted.Store(false)
	var done <-chan struct{}
	if ctx != nil {
		if done = ctx.Done(); done != nil && ctx.Err() != nil {
			j.fn = nil
			return ctx.Err()
		}
	}
	if !in.handoff.Load() {
		return in.doHere(ctx, done, j)
	}
	in.handed.Add(1)
	if done == nil {
		in.jobs <- j
		<-j.done
		j.fn = nil
		return j.err
	}
	select {
	case in.jobs <- j:
	case <-done:
		return ctx.Err()
	}
	select {
	case <-j.done:
		j.fn = nil
		return j.err
	case <-done:
	}
	in.interruptUntil(j, j.done)
	j.fn = nil
	if j.err != nil {
		return fmt.Errorf("%w (interrupted: %w)", ctx.Err(), j.err)
	}
	return ctx.Err()
}

// interruptUntil interrupts job j, and again every 20 ms (code that
// catches the exception, a bare except, gets it again), until end
// delivers: the job ended.
func (in *interp) interruptUntil(j *job, end <-chan struct{}) {
	j.interrupted.Store(true)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		in.addPendingGen(j.gen)
		select {
		case <-end:
			return
		case <-tick.C:
		}
	}
}

// doHere runs job j on the calling thread, locked to it. It saves two
// thread switches per call over handing the job to the interpreter's
// thread: waking that thread and waking the caller again cost 10-60 us
// each on the 2-core VM measured, against about 100 us of Python in the
// tokenizer fixture's call. Any copy may run on any thread (threads.go).
//
// The thread gets a Python thread state of its own in this copy the
// first time (PyGILState_Ensure, then the GIL is dropped with the state
// kept), after the copy's libc has set up its per-thread ctype tables.
func (in *interp) doHere(ctx context.Context, done <-chan struct{}, j *job) error {
	select {
	case in.sem <- struct{}{}:
	case <-done:
		j.fn = nil
		return ctx.Err()
	}
	// Locked only once the interpreter is ours: a goroutine that waited
	// is woken on whichever thread is at hand (a locked one would be
	// woken through a second thread).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var stop func() bool
	if done != nil {
		stop = context.AfterFunc(ctx, func() {
			in.interruptUntil(j, j.fin)
			j.done <- struct{}{}
		})
	}
	c := in.c
	t := time.Now()
	if ts := in.call(c.PyGILState_GetThisThreadState); ts != 0 {
		in.call(c.PyEval_RestoreThread, ts)
	} else {
		prepareThread()
		in.call(c.ctypeInit)
		in.call(c.PyGILState_Ensure)
	}
	ident := in.call(c.PyThread_get_thread_ident)
	atomic.StoreInt64(&in.runIdent, int64(ident))
	atomic.StoreInt64(&in.running, int64(j.gen))
	j.err = in.runJob(j)
	atomic.StoreInt64(&in.running, 0)
	if j.interrupted.Load() {
		in.call(c.PyThreadState_SetAsyncExc, ident, 0)
	}
	in.call(c.PyEval_SaveThread)
	in.busyNs.Add(int64(time.Since(t)))
	in.calls.Add(1)
	<-in.sem
	err := j.err
	j.fn, j.err = nil, nil
	if stop != nil && !stop() {
		// The interrupter runs: let it go before j is reused.
		j.fin <- struct{}{}
		<-j.done
		if err != nil {
			return fmt.Errorf("%w (interrupted: %w)", ctx.Err(), err)
		}
		return ctx.Err()
	}
	return err
}

// addPending asks the interpreter's watchdog (a Python thread blocked
// on a pipe) to raise TimeoutError in the job gen. The watchdog takes the
// GIL, checks the job is still the one running and calls
// PyThreadState_SetAsyncExc, the supported way to stop another thread:
// Py_AddPendingCall from a foreign thread does not wake 3.11's eval loop.
func (in *interp) addPendingGen(gen uint64) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], gen)
	_, _ = syscall.Write(in.wdWrite, b[:])
}

// ---- small C API helpers (interpreter thread only) ----

// call is a C call by the holder of the interpreter, through its own
// argument block: no allocation (the package's call allocates its
// arguments). A pointer argument into Go memory must point to memory
// the interpreter keeps (in.sbuf, in.outs), which purego's call would
// otherwise have moved to the heap and kept alive for the call.
func (in *interp) call(fn uintptr, args ...uintptr) uintptr { return in.fc.Call(fn, args...) }

func (in *interp) decref(o uintptr) {
	if o != 0 {
		in.call(in.c.Py_DecRef, o)
	}
}

func (in *interp) incref(o uintptr) {
	if o != 0 {
		in.call(in.c.Py_IncRef, o)
	}
}

func (in *interp) str(s string) uintptr {
	if len(s) == 0 {
		return in.call(in.c.PyUnicode_FromStringAndSize, 0, 0)
	}
	// Through a heap buffer: s may live on a stack that moves (cOuts).
	in.sbuf = append(in.sbuf[:0], s...)
	o := in.call(in.c.PyUnicode_FromStringAndSize, uintptr(unsafe.Pointer(&in.sbuf[0])), uintptr(len(s)))
	if cap(in.sbuf) > 1<<20 {
		in.sbuf = nil // a package's sources: do not keep megabytes for names
	}
	return o
}

// strConst returns s as a Python str kept for the interpreter's life
// (borrowed): the few strings passed on every call (a python_call's
// return type) are made once.
func (in *interp) strConst(s string) uintptr {
	if o, ok := in.strs[s]; ok {
		return o
	}
	if in.strs == nil {
		in.strs = map[string]uintptr{}
	}
	o := in.str(s)
	in.strs[s] = o
	return o
}

// cOuts holds the out-parameters of C calls in Go heap memory: a Go
// stack moves when it grows, and purego's call path can grow it between
// taking a local's address and C writing through it (a str of 64
// characters came back empty on fresh goroutines). Jobs of an
// interpreter run one at a time, so one set per interpreter serves;
// frames nest for conversions that recurse (dicts in dicts).
type cOuts struct {
	frames []*[3]uintptr
	depth  int
}

// push returns a frame of three words for one call site; pop releases it.
func (o *cOuts) push() *[3]uintptr {
	if o.depth == len(o.frames) {
		o.frames = append(o.frames, new([3]uintptr))
	}
	f := o.frames[o.depth]
	o.depth++
	*f = [3]uintptr{}
	return f
}

func (o *cOuts) pop() { o.depth-- }

//go:nocheckptr
func (in *interp) goStr(o uintptr) (string, bool) {
	f := in.outs.push()
	p := in.call(in.c.PyUnicode_AsUTF8AndSize, o, uintptr(unsafe.Pointer(&f[0])))
	n := int(f[0])
	in.outs.pop()
	if p == 0 {
		in.call(in.c.PyErr_Clear)
		return "", false
	}
	return string(unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(nil), p)), n)), true
}

func (in *interp) long(v int64) uintptr { return in.call(in.c.PyLong_FromLongLong, uintptr(v)) }

func (in *interp) float(v float64) uintptr {
	// SyscallN passes each argument in both the integer and the SSE
	// register of its position, so a lone double arrives in xmm0.
	return in.call(in.c.PyFloat_FromDouble, uintptr(math.Float64bits(v)))
}

func (in *interp) tuple(items ...uintptr) uintptr {
	t := in.call(in.c.PyTuple_New, uintptr(len(items)))
	for i, it := range items {
		in.call(in.c.PyTuple_SetItem, t, uintptr(i), it) // steals
	}
	return t
}

// callObj calls f(*args) (args a tuple, borrowed); new reference or 0.
func (in *interp) callObj(f, args uintptr) uintptr {
	return in.call(in.c.PyObject_Call, f, args, 0)
}

// PyError is a Python exception that reached Go.
type PyError struct {
	Type      string // the exception's class name, e.g. ValueError
	Message   string
	Traceback string // the formatted traceback, as Python prints it
}

func (e *PyError) Error() string {
	tb := strings.TrimRight(e.Traceback, "\n")
	if tb == "" {
		return fmt.Sprintf("Python %s: %s", e.Type, e.Message)
	}
	return fmt.Sprintf("Python %s: %s\n%s", e.Type, e.Message, tb)
}

// fetchErr turns the pending Python error into a *PyError.
func (in *interp) fetchErr() error {
	c := in.c
	if call(c.PyErr_Occurred) == 0 {
		return &PyError{Type: "SystemError", Message: "a C API call failed without an exception"}
	}
	f := in.outs.push()
	call(c.PyErr_Fetch, uintptr(unsafe.Pointer(&f[0])), uintptr(unsafe.Pointer(&f[1])), uintptr(unsafe.Pointer(&f[2])))
	call(c.PyErr_NormalizeException, uintptr(unsafe.Pointer(&f[0])), uintptr(unsafe.Pointer(&f[1])), uintptr(unsafe.Pointer(&f[2])))
	t, v, tb := f[0], f[1], f[2]
	in.outs.pop()
	defer func() { in.decref(t); in.decref(v); in.decref(tb) }()
	if v != 0 && tb != 0 {
		n := cString("__traceback__")
		call(c.PyObject_SetAttrString, v, uintptr(unsafe.Pointer(&n[0])), tb)
	}
	if in.fFormat != 0 && v != 0 {
		args := in.tuple(v)
		in.incref(v)
		r := in.callObj(in.fFormat, args)
		in.decref(args)
		if r != 0 {
			defer in.decref(r)
			return in.errFrom(r)
		}
		call(c.PyErr_Clear)
	}
	msg := "unknown"
	if v != 0 {
		if s := call(c.PyObject_Str, v); s != 0 {
			msg, _ = in.goStr(s)
			in.decref(s)
		}
	}
	return &PyError{Type: "Exception", Message: msg}
}

// errFrom reads an _gosr.Err tuple.
func (in *interp) errFrom(r uintptr) error {
	get := func(i int) string {
		s, _ := in.goStr(call(in.c.PyTuple_GetItem, r, uintptr(i)))
		return s
	}
	return &PyError{Type: get(0), Message: get(1), Traceback: get(2)}
}

// isErr reports whether r is an _gosr.Err.
func (in *interp) isErr(r uintptr) bool { return r != 0 && typeOf(r) == in.errType }

func (in *interp) startWatchdog() error {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		return fmt.Errorf("watchdog pipe: %w", err)
	}
	in.wdWrite = fds[1]
	code := fmt.Sprintf("_gosr.start_watchdog(%d, %d, %d, %q)\n", fds[0], uintptr(unsafe.Pointer(&in.running)), uintptr(unsafe.Pointer(&in.runIdent)), in.path)
	r := in.runString(code, pyFileInput, in.glb)
	if r == 0 {
		return fmt.Errorf("watchdog: %w", in.fetchErr())
	}
	in.decref(r)
	in.ident = call(in.c.PyThread_get_thread_ident)
	return nil
}
