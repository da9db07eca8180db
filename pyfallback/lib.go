package pyfallback

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// libNames are the shared libraries tried, newest first. The C API gosr
// uses is the 3.11 one (struct offsets of PyObject are stable across 3.x).
var libNames = []string{"libpython3.11.so.1.0", "libpython3.11.so", "libpython3.12.so.1.0", "libpython3.10.so.1.0"}

var libDirs = []string{"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/local/lib", "/lib/x86_64-linux-gnu"}

// ErrNoLibPython is returned (wrapped) when no libpython can be found.
var ErrNoLibPython = errors.New("no libpython3 shared library found")

// FindLibPython returns the path of the libpython a manager loads when
// Options.LibPython is empty: the first of libNames in libDirs.
func FindLibPython() (string, error) {
	var tried []string
	for _, d := range libDirs {
		for _, n := range libNames {
			p := filepath.Join(d, n)
			tried = append(tried, p)
			if _, err := os.Stat(p); err == nil {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("pyfallback: %w (looked for %s in %s): install Debian's libpython3.11 (apt-get install libpython3.11) or give the library's path as Options.LibPython",
		ErrNoLibPython, strings.Join(libNames, ", "), strings.Join(libDirs, ", "))
}

// libc holds the base namespace's dynamic-loader entry points.
var libc struct {
	once    sync.Once
	err     error
	dlmopen uintptr
	dlerror uintptr
	dlsym   uintptr
	onExit  uintptr
	exit    uintptr // _exit
}

func loadLibc() error {
	libc.once.Do(func() {
		h, err := purego.Dlopen("libc.so.6", purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			libc.err = fmt.Errorf("pyfallback: opening libc.so.6: %w", err)
			return
		}
		for _, s := range []struct {
			p    *uintptr
			name string
		}{{&libc.dlmopen, "dlmopen"}, {&libc.dlerror, "dlerror"}, {&libc.dlsym, "dlsym"}, {&libc.onExit, "on_exit"}, {&libc.exit, "_exit"}} {
			if *s.p, err = purego.Dlsym(h, s.name); err != nil {
				libc.err = fmt.Errorf("pyfallback: libc has no %s: %w", s.name, err)
				return
			}
		}
	})
	return libc.err
}

const lmIDNewLM = ^uintptr(0) // LM_ID_NEWLM

// skipDestructorsAtExit makes libc's exit() end the process at once,
// with exit's status, before the dynamic loader runs the destructors of
// the libraries in the interpreters' namespaces. Those were never meant
// to run beside other copies of themselves, with Python never finalized:
// libGLdispatch (loaded with torch) fails an assertion, and a crash in
// them was seen too. A Go program leaves by exit_group and never calls
// exit(), but under the race detector os.Exit ends in TSan's
// __tsan_fini, which calls exit(). on_exit handlers run last registered
// first, and the loader's own (which runs the destructors) was
// registered at start-up, so one registered after each interpreter
// starts runs before it. The handler is _exit itself: on_exit calls it
// with the status first.
func skipDestructorsAtExit() {
	if libc.onExit != 0 && libc.exit != 0 {
		purego.SyscallN(libc.onExit, libc.exit, 0)
	}
}

// dlmopenNew loads path into a new link-map namespace: a private copy of
// the library and of everything it links (libc included), so each copy
// has its own globals, and so its own GIL.
func dlmopenNew(path string) (uintptr, error) {
	if err := loadLibc(); err != nil {
		return 0, err
	}
	p := cString(path)
	h, _, _ := purego.SyscallN(libc.dlmopen, lmIDNewLM, uintptr(unsafe.Pointer(&p[0])), uintptr(purego.RTLD_NOW|purego.RTLD_LOCAL))
	if h == 0 {
		e, _, _ := purego.SyscallN(libc.dlerror)
		return 0, fmt.Errorf("dlmopen %s: %s", path, goStringPtr(e))
	}
	return h, nil
}

func dlsym(h uintptr, name string) uintptr {
	p := cString(name)
	r, _, _ := purego.SyscallN(libc.dlsym, h, uintptr(unsafe.Pointer(&p[0])))
	return r
}

func cString(s string) []byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b
}

//go:nocheckptr
func goStringPtr(p uintptr) string {
	if p == 0 {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(nil), p+uintptr(n))) != 0 {
		n++
	}
	return string(unsafe.Slice((*byte)(unsafe.Add(unsafe.Pointer(nil), p)), n))
}

// capi holds one namespace's C API entry points (and the addresses of
// the singletons and type objects gosr compares against).
type capi struct {
	handle uintptr

	// Life cycle and threads.
	Py_InitializeEx, Py_FinalizeEx, PyEval_SaveThread, PyEval_RestoreThread            uintptr
	Py_AddPendingCall, ctypeInit, PyThreadState_SetAsyncExc, PyThread_get_thread_ident uintptr
	PyGILState_GetThisThreadState, PyGILState_Ensure                                   uintptr
	// Evaluation.
	PyRun_StringFlags, PyImport_AddModule, PyModule_GetDict, PyImport_ImportModule      uintptr
	PyObject_Call, PyObject_GetAttrString, PyObject_SetAttrString, PyObject_Str         uintptr
	PyObject_IsInstance, PyObject_Repr                                                  uintptr
	Py_IncRef, Py_DecRef                                                                uintptr
	PyErr_Occurred, PyErr_Fetch, PyErr_NormalizeException, PyErr_SetString, PyErr_Clear uintptr
	// Values.
	PyLong_FromLongLong, PyLong_AsLongLong, PyFloat_FromDouble, PyBool_FromLong         uintptr
	PyUnicode_FromStringAndSize, PyUnicode_AsUTF8AndSize, PyBytes_FromStringAndSize     uintptr
	PyBytes_AsStringAndSize                                                             uintptr
	PyTuple_New, PyTuple_SetItem, PyTuple_GetItem, PyTuple_Size                         uintptr
	PyList_New, PyList_SetItem, PyList_GetItem, PyList_Size                             uintptr
	PyDict_New, PyDict_SetItem, PyDict_SetItemString, PyDict_GetItemString, PyDict_Next uintptr
	PyMemoryView_FromMemory                                                             uintptr
	// Singletons and types (addresses of the objects).
	None, True, False                                                          uintptr
	LongType, FloatType, UnicodeType, BytesType, TupleType, ListType, DictType uintptr
	BoolType                                                                   uintptr
	ExcTimeoutError, ExcRuntimeError                                           uintptr

	pyFloatAsDouble func(uintptr) float64
}

func loadCAPI(h uintptr) (*capi, error) {
	c := &capi{handle: h}
	var missing []string
	sym := func(p *uintptr, name string) {
		*p = dlsym(h, name)
		if *p == 0 {
			missing = append(missing, name)
		}
	}
	sym(&c.Py_InitializeEx, "Py_InitializeEx")
	sym(&c.Py_FinalizeEx, "Py_FinalizeEx")
	sym(&c.PyEval_SaveThread, "PyEval_SaveThread")
	sym(&c.PyEval_RestoreThread, "PyEval_RestoreThread")
	sym(&c.Py_AddPendingCall, "Py_AddPendingCall")
	sym(&c.ctypeInit, "__ctype_init")
	sym(&c.PyThreadState_SetAsyncExc, "PyThreadState_SetAsyncExc")
	sym(&c.PyThread_get_thread_ident, "PyThread_get_thread_ident")
	sym(&c.PyGILState_GetThisThreadState, "PyGILState_GetThisThreadState")
	sym(&c.PyGILState_Ensure, "PyGILState_Ensure")
	sym(&c.PyRun_StringFlags, "PyRun_StringFlags")
	sym(&c.PyImport_AddModule, "PyImport_AddModule")
	sym(&c.PyModule_GetDict, "PyModule_GetDict")
	sym(&c.PyImport_ImportModule, "PyImport_ImportModule")
	sym(&c.PyObject_Call, "PyObject_Call")
	sym(&c.PyObject_GetAttrString, "PyObject_GetAttrString")
	sym(&c.PyObject_SetAttrString, "PyObject_SetAttrString")
	sym(&c.PyObject_Str, "PyObject_Str")
	sym(&c.PyObject_Repr, "PyObject_Repr")
	sym(&c.PyObject_IsInstance, "PyObject_IsInstance")
	sym(&c.Py_IncRef, "Py_IncRef")
	sym(&c.Py_DecRef, "Py_DecRef")
	sym(&c.PyErr_Occurred, "PyErr_Occurred")
	sym(&c.PyErr_Fetch, "PyErr_Fetch")
	sym(&c.PyErr_NormalizeException, "PyErr_NormalizeException")
	sym(&c.PyErr_SetString, "PyErr_SetString")
	sym(&c.PyErr_Clear, "PyErr_Clear")
	sym(&c.PyLong_FromLongLong, "PyLong_FromLongLong")
	sym(&c.PyLong_AsLongLong, "PyLong_AsLongLong")
	sym(&c.PyFloat_FromDouble, "PyFloat_FromDouble")
	sym(&c.PyBool_FromLong, "PyBool_FromLong")
	sym(&c.PyUnicode_FromStringAndSize, "PyUnicode_FromStringAndSize")
	sym(&c.PyUnicode_AsUTF8AndSize, "PyUnicode_AsUTF8AndSize")
	sym(&c.PyBytes_FromStringAndSize, "PyBytes_FromStringAndSize")
	sym(&c.PyBytes_AsStringAndSize, "PyBytes_AsStringAndSize")
	sym(&c.PyTuple_New, "PyTuple_New")
	sym(&c.PyTuple_SetItem, "PyTuple_SetItem")
	sym(&c.PyTuple_GetItem, "PyTuple_GetItem")
	sym(&c.PyTuple_Size, "PyTuple_Size")
	sym(&c.PyList_New, "PyList_New")
	sym(&c.PyList_SetItem, "PyList_SetItem")
	sym(&c.PyList_GetItem, "PyList_GetItem")
	sym(&c.PyList_Size, "PyList_Size")
	sym(&c.PyDict_New, "PyDict_New")
	sym(&c.PyDict_SetItem, "PyDict_SetItem")
	sym(&c.PyDict_SetItemString, "PyDict_SetItemString")
	sym(&c.PyDict_GetItemString, "PyDict_GetItemString")
	sym(&c.PyDict_Next, "PyDict_Next")
	sym(&c.PyMemoryView_FromMemory, "PyMemoryView_FromMemory")
	sym(&c.None, "_Py_NoneStruct")
	sym(&c.True, "_Py_TrueStruct")
	sym(&c.False, "_Py_FalseStruct")
	sym(&c.LongType, "PyLong_Type")
	sym(&c.FloatType, "PyFloat_Type")
	sym(&c.UnicodeType, "PyUnicode_Type")
	sym(&c.BytesType, "PyBytes_Type")
	sym(&c.TupleType, "PyTuple_Type")
	sym(&c.ListType, "PyList_Type")
	sym(&c.DictType, "PyDict_Type")
	sym(&c.BoolType, "PyBool_Type")
	var te, re uintptr
	sym(&te, "PyExc_TimeoutError")
	sym(&re, "PyExc_RuntimeError")
	if len(missing) > 0 {
		return nil, fmt.Errorf("libpython lacks %s (gosr needs the CPython 3.10+ C API)", strings.Join(missing, ", "))
	}
	// PyExc_* are PyObject* variables: read them once the library is initialised.
	c.ExcTimeoutError, c.ExcRuntimeError = te, re
	fd := dlsym(h, "PyFloat_AsDouble")
	purego.RegisterFunc(&c.pyFloatAsDouble, fd)
	return c, nil
}

// call is a C call with integer/pointer arguments and result. A Go
// pointer passed as uintptr (an out-parameter C writes) must be on the
// heap for the call, which the directive makes it: a local the compiler
// keeps on the stack may move when the stack is shrunk by the collector
// and grown again on the way into the call, and C would then write into
// the old stack. fillKeys lost a key that way (one run in about ten).
//
//go:uintptrescapes
func call(fn uintptr, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}

// typeOf is Py_TYPE(o): ob_type follows the 8-byte ob_refcnt.
//
//go:nocheckptr
func typeOf(o uintptr) uintptr {
	return *(*uintptr)(unsafe.Add(unsafe.Pointer(nil), o+8))
}

// derefPtr reads a PyObject* variable (PyExc_TimeoutError is one).
//
//go:nocheckptr
func derefPtr(p uintptr) uintptr {
	return *(*uintptr)(unsafe.Add(unsafe.Pointer(nil), p))
}

// uintptrOf is the address of a NUL-terminated byte slice (kept alive by
// the caller for the duration of the C call).
func uintptrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(&b[0])) }
