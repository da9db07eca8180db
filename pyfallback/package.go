package pyfallback

import (
	"context"
	"fmt"
	"sync"
	"unsafe"

	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders"
)

// Package is a torch.package archive opened in a manager. Its modules are
// imported hermetically in each interpreter on first use (by gosr's
// importer, embedded in the binary; torch is not needed): names are
// mangled per archive, so two packages with a models.resnet of their own
// load side by side. The archive stays memory-mapped; Python reads its
// sources and storages from the mapping without copying.
type Package struct {
	m    *Manager
	arch *loaders.Package
	path string

	mu        sync.Mutex
	importers map[*interp]uintptr // the PackageImporter object per interpreter
	fns       map[fnKey]uintptr   // resolved "mod:qual" per interpreter
	movables  []*Movable
	closed    bool
}

type fnKey struct {
	in   *interp
	name string
}

// LoadPackage opens a torch.package archive in the manager.
func (m *Manager) LoadPackage(path string) (*Package, error) {
	if m.closed.Load() {
		return nil, ErrClosed
	}
	a, err := loaders.OpenPackage(path)
	if err != nil {
		return nil, err
	}
	// Python's importers read the records by address for as long as
	// the interpreters live: a reference never given back keeps the
	// mapping, whatever the caller closes (Archive().Close()).
	if _, err := a.Archive().Retain(); err != nil {
		a.Close()
		return nil, err
	}
	p := &Package{m: m, arch: a, path: path, importers: map[*interp]uintptr{}, fns: map[fnKey]uintptr{}}
	m.mu.Lock()
	m.pkgs = append(m.pkgs, p)
	m.mu.Unlock()
	return p, nil
}

// Archive is the package as gosr's loader sees it (its scripted model:
// Archive().LoadScript("model", "model.pkl")).
func (p *Package) Archive() *loaders.Package { return p.arch }

// Path is the archive's file name.
func (p *Package) Path() string { return p.path }

func (p *Package) close() {
	p.mu.Lock()
	p.closed = true
	p.importers = map[*interp]uintptr{}
	p.fns = map[fnKey]uintptr{}
	p.mu.Unlock()
	// The archive stays mapped: Python objects of this lease may still
	// view it until the interpreters are cleaned, and graphs built from
	// it view it too. The mapping is freed with the process.
}

// importer returns (creating on first use) the package's importer in
// the session's interpreter. Interpreter thread only.
func (p *Package) importer(in *interp) (uintptr, error) {
	p.mu.Lock()
	imp, ok := p.importers[in]
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return 0, ErrClosed
	}
	if ok {
		return imp, nil
	}
	c := in.c
	recs := call(c.PyDict_New)
	for _, name := range p.arch.Records() {
		b, err := p.arch.Record(name)
		if err != nil {
			in.decref(recs)
			return 0, fmt.Errorf("package %s: %w", p.path, err)
		}
		var addr uintptr
		if len(b) > 0 {
			addr = uintptr(unsafe.Pointer(&b[0]))
		}
		k := in.str(name)
		v := in.tuple(in.long(int64(addr)), in.long(int64(len(b))))
		call(c.PyDict_SetItem, recs, k, v)
		in.decref(k)
		in.decref(v)
	}
	args := in.tuple(recs, in.str(p.path))
	r := in.callObj(in.fOpenPackage, args)
	in.decref(args)
	if r == 0 {
		return 0, fmt.Errorf("package %s: %w", p.path, in.fetchErr())
	}
	p.mu.Lock()
	p.importers[in] = r
	p.mu.Unlock()
	return r, nil
}

// resolve returns the function "pkg.mod:qual.name" of the package in
// in (borrowed; cached per interpreter).
func (p *Package) resolve(in *interp, target string) (uintptr, error) {
	p.mu.Lock()
	f, ok := p.fns[fnKey{in, target}]
	p.mu.Unlock()
	if ok {
		return f, nil
	}
	imp, err := p.importer(in)
	if err != nil {
		return 0, err
	}
	r, err := in.guardCall(imp, "resolve", in.str(target))
	if err != nil {
		return 0, fmt.Errorf("package %s: resolving %s: %w", p.path, target, err)
	}
	p.mu.Lock()
	p.fns[fnKey{in, target}] = r
	p.mu.Unlock()
	return r, nil
}

// guardCall calls obj.method(arg) through _gosr.guard (arg is stolen):
// a new reference or the Python error with its traceback.
func (in *interp) guardCall(obj uintptr, method string, args ...uintptr) (uintptr, error) {
	n := cString(method)
	m := call(in.c.PyObject_GetAttrString, obj, uintptrOf(n))
	if m == 0 {
		for _, a := range args {
			in.decref(a)
		}
		return 0, in.fetchErr()
	}
	t := in.tuple(append([]uintptr{m}, args...)...)
	r := in.callObj(in.fGuard, t)
	in.decref(t)
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

// Import imports a packaged module in the session's interpreter.
func (s *Session) ImportFrom(ctx context.Context, p *Package, module string) (*Object, error) {
	var out *Object
	err := s.do(ctx, func(in *interp) error {
		imp, err := p.importer(in)
		if err != nil {
			return err
		}
		r, err := in.guardCall(imp, "import_module", in.str(module))
		if err != nil {
			return fmt.Errorf("package %s: %w", p.path, err)
		}
		out = s.wrap(r)
		return nil
	})
	return out, err
}

// Resolve returns the packaged function or object "pkg.mod:qual.name".
func (s *Session) Resolve(ctx context.Context, p *Package, target string) (*Object, error) {
	var out *Object
	err := s.do(ctx, func(in *interp) error {
		f, err := p.resolve(in, target)
		if err != nil {
			return err
		}
		in.incref(f)
		out = s.wrap(f)
		return nil
	})
	return out, err
}

// LoadPickle unpickles package/resource in the session's interpreter,
// resolving classes against the package.
func (s *Session) LoadPickle(ctx context.Context, p *Package, pkg, resource string) (*Object, error) {
	var out *Object
	err := s.do(ctx, func(in *interp) error {
		imp, err := p.importer(in)
		if err != nil {
			return err
		}
		r, err := in.guardCall(imp, "load_pickle", in.str(pkg), in.str(resource))
		if err != nil {
			return fmt.Errorf("package %s: %s/%s: %w", p.path, pkg, resource, err)
		}
		out = s.wrap(r)
		return nil
	})
	return out, err
}

// Movable is an object loaded once and replicated to other interpreters
// on demand, torch::deploy's ReplicatedObj: it is pickled once (classes
// by their package names, arrays out of band) and unpickled in each
// interpreter that asks. Array memory is shared, never copied per
// interpreter: buffers that view the archive stay views of it; others
// are copied once into memory gosr owns. Replicas see read-only arrays.
type Movable struct {
	p    *Package
	data []byte
	bufs [][]byte // shared memory of the out-of-band buffers
	mu   sync.Mutex
	per  map[*interp]uintptr
	// CopiedBytes is what pickling had to copy into gosr's memory (arrays
	// made in Python); arrays viewing the archive are not copied.
	CopiedBytes int
	SharedBytes int
}

// Movable loads package/resource once (in the session's interpreter) and
// makes it movable.
func (s *Session) Movable(ctx context.Context, p *Package, pkg, resource string) (*Movable, error) {
	obj, err := s.LoadPickle(ctx, p, pkg, resource)
	if err != nil {
		return nil, err
	}
	defer obj.Close()
	return s.MakeMovable(ctx, p, obj)
}

// MakeMovable pickles obj (an object of the session's interpreter whose
// classes come from p or the system) for replication.
func (s *Session) MakeMovable(ctx context.Context, p *Package, obj *Object) (*Movable, error) {
	if err := s.own(obj); err != nil {
		return nil, err
	}
	mv := &Movable{p: p, per: map[*interp]uintptr{}}
	err := s.do(ctx, func(in *interp) error {
		imp, err := p.importer(in)
		if err != nil {
			return err
		}
		in.incref(obj.ptr)
		in.incref(imp)
		t := in.tuple(in.fDumps, obj.ptr, imp)
		in.incref(in.fDumps)
		r := in.callObj(in.fGuard, t)
		in.decref(t)
		if r == 0 {
			return in.fetchErr()
		}
		defer in.decref(r)
		if in.isErr(r) {
			return in.errFrom(r)
		}
		c := in.c
		data := call(c.PyTuple_GetItem, r, 0)
		f := in.outs.push()
		rc := call(c.PyBytes_AsStringAndSize, data, uintptr(unsafe.Pointer(&f[0])), uintptr(unsafe.Pointer(&f[1])))
		buf, n := f[0], int(f[1])
		in.outs.pop()
		if rc != 0 {
			return in.fetchErr()
		}
		mv.data = append([]byte(nil), unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(nil), buf)), n)...)
		list := call(c.PyTuple_GetItem, r, 1)
		for i := 0; i < int(call(c.PyList_Size, list)); i++ {
			e := call(c.PyList_GetItem, list, uintptr(i))
			addr := uintptr(call(c.PyLong_AsLongLong, call(c.PyTuple_GetItem, e, 0)))
			size := int(call(c.PyLong_AsLongLong, call(c.PyTuple_GetItem, e, 1)))
			if b, ok := p.archiveView(addr, size); ok {
				mv.bufs = append(mv.bufs, b)
				mv.SharedBytes += size
				continue
			}
			b := ivalue.AlignedBytes(size)
			if size > 0 {
				copy(b, unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(nil), addr)), size))
			}
			mv.bufs = append(mv.bufs, b)
			mv.CopiedBytes += size
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("package %s: making an object movable: %w", p.path, err)
	}
	p.mu.Lock()
	p.movables = append(p.movables, mv)
	p.mu.Unlock()
	return mv, nil
}

// archiveView returns the archive's bytes at [addr, addr+size) when the
// range lies inside one of its records.
func (p *Package) archiveView(addr uintptr, size int) ([]byte, bool) {
	for _, name := range p.arch.Records() {
		b, err := p.arch.Record(name)
		if err != nil || len(b) == 0 {
			continue
		}
		start := uintptr(unsafe.Pointer(&b[0]))
		if addr >= start && addr+uintptr(size) <= start+uintptr(len(b)) {
			off := int(addr - start)
			return b[off : off+size], true
		}
	}
	return nil, false
}

// On returns the object's replica in the session's interpreter,
// unpickling it there the first time.
func (mv *Movable) On(ctx context.Context, s *Session) (*Object, error) {
	var out *Object
	err := s.do(ctx, func(in *interp) error {
		mv.mu.Lock()
		r, ok := mv.per[in]
		mv.mu.Unlock()
		if !ok {
			imp, err := mv.p.importer(in)
			if err != nil {
				return err
			}
			c := in.c
			views := call(c.PyList_New, uintptr(len(mv.bufs)))
			for i, b := range mv.bufs {
				var addr uintptr
				if len(b) > 0 {
					addr = uintptr(unsafe.Pointer(&b[0]))
				}
				vt := in.tuple(in.long(int64(addr)), in.long(int64(len(b))))
				v := in.callObj(in.fView, vt)
				in.decref(vt)
				if v == 0 {
					in.decref(views)
					return in.fetchErr()
				}
				call(c.PyList_SetItem, views, uintptr(i), v)
			}
			data := call(c.PyBytes_FromStringAndSize, uintptr(unsafe.Pointer(unsafe.SliceData(mv.data))), uintptr(len(mv.data)))
			in.incref(in.fLoads)
			in.incref(imp)
			t := in.tuple(in.fLoads, data, imp, views)
			res := in.callObj(in.fGuard, t)
			in.decref(t)
			if res == 0 {
				return in.fetchErr()
			}
			if in.isErr(res) {
				err := in.errFrom(res)
				in.decref(res)
				return err
			}
			mv.mu.Lock()
			mv.per[in] = res
			mv.mu.Unlock()
			r = res
		}
		in.incref(r)
		out = s.wrap(r)
		return nil
	})
	return out, err
}

// Replicas is the number of interpreters the object has been loaded in.
func (mv *Movable) Replicas() int {
	mv.mu.Lock()
	defer mv.mu.Unlock()
	return len(mv.per)
}
