// Package ort runs ONNX models with ONNX Runtime's CPU library, loaded at
// run time through purego from its C API (no cgo): the anchor srbench
// compare times gosr against. It covers what a benchmark needs: a
// session from a file, its input and output names, runs over tensors in
// Go memory, and the outputs read back.
//
// The C API is one table of function pointers (OrtApi) that
// OrtGetApiBase()->GetApi(version) returns; the table only ever grows at
// its end, so the slots this package uses (API version 1's) sit at the
// same offsets in every release.
package ort

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// apiVersion is the OrtApi version asked for: every function used here
// exists since version 1, and a newer library serves older versions.
const apiVersion = 14

// ErrNoLibrary is returned (wrapped, with the path tried) when ONNX
// Runtime's library cannot be found or loaded.
var ErrNoLibrary = errors.New("ONNX Runtime unavailable")

// InstallHint says how to get the library.
const InstallHint = "install it with `npm install --ignore-scripts onnxruntime-node@1.30.0` (it puts libonnxruntime.so.1 under node_modules/onnxruntime-node/bin/napi-v6/linux/x64/) and give its path (srbench: $GOSR_ORT_LIB)"

// Slots of OrtApi used here, in the order of onnxruntime_c_api.h's
// struct OrtApi (each a function pointer).
const (
	slotCreateStatus                     = 0
	slotGetErrorCode                     = 1
	slotGetErrorMessage                  = 2
	slotCreateEnv                        = 3
	slotCreateSession                    = 7
	slotRun                              = 9
	slotCreateSessionOptions             = 10
	slotEnableProfiling                  = 14
	slotSetSessionGraphOptimizationLevel = 23
	slotSetIntraOpNumThreads             = 24
	slotSetInterOpNumThreads             = 25
	slotSessionGetInputCount             = 30
	slotSessionGetOutputCount            = 31
	slotSessionGetInputTypeInfo          = 33
	slotSessionGetInputName              = 36
	slotSessionGetOutputName             = 37
	slotCreateTensorWithDataAsOrtValue   = 49
	slotGetTensorMutableData             = 51
	slotCastTypeInfoToTensorInfo         = 55
	slotGetTensorElementType             = 60
	slotGetDimensionsCount               = 61
	slotGetDimensions                    = 62
	slotGetTensorTypeAndShape            = 65
	slotCreateCpuMemoryInfo              = 69
	slotAllocatorFree                    = 76
	slotGetAllocatorWithDefaultOptions   = 78
	slotReleaseEnv                       = 92
	slotReleaseStatus                    = 93
	slotReleaseMemoryInfo                = 94
	slotReleaseSession                   = 95
	slotReleaseValue                     = 96
	slotReleaseTypeInfo                  = 98
	slotReleaseTensorTypeAndShapeInfo    = 99
	slotReleaseSessionOptions            = 100
	numSlots                             = 101
)

// Enums of the C API.
const (
	// ORT_LOGGING_LEVEL_FATAL: errors come back as Go errors; ONNX
	// Runtime's own log would repeat them on stderr.
	loggingFatal     = 4
	optimizeAll      = 99 // ORT_ENABLE_ALL
	arenaAllocator   = 1  // OrtArenaAllocator
	memTypeDefault   = 0  // OrtMemTypeDefault
	errorCodeNoError = 0
)

// lib is the loaded library: its API table, the process's OrtEnv, a CPU
// memory info for tensors over Go memory and the default allocator
// (which frees the names ORT returns).
type lib struct {
	path, version string
	fn            [numSlots]uintptr
	env, cpuInfo  uintptr
	allocator     uintptr
}

// One library and one OrtEnv per process (ONNX Runtime wants a single
// env); a failure is not kept, so a later Open with another path may
// succeed.
var (
	loadMu sync.Mutex
	loaded *lib
)

// load returns the process's library, loading path the first time.
func load(path string) (*lib, error) {
	loadMu.Lock()
	defer loadMu.Unlock()
	if loaded != nil {
		if path != "" && !sameFile(path, loaded.path) {
			return nil, fmt.Errorf("ort: library %s: this process has loaded %s already, and holds one", path, loaded.path)
		}
		return loaded, nil
	}
	l, err := loadLib(path)
	if err != nil {
		return nil, err
	}
	loaded = l
	return l, nil
}

func sameFile(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

func loadLib(path string) (*lib, error) {
	if path == "" {
		return nil, fmt.Errorf("%w: no library path given; %s", ErrNoLibrary, InstallHint)
	}
	if st, err := os.Stat(path); err != nil || st.IsDir() {
		return nil, fmt.Errorf("%w: no library at %s; %s", ErrNoLibrary, path, InstallHint)
	}
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return nil, fmt.Errorf("%w: %s does not load: %v", ErrNoLibrary, path, err)
	}
	getBase, err := purego.Dlsym(h, "OrtGetApiBase")
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not ONNX Runtime's library (no OrtGetApiBase)", ErrNoLibrary, path)
	}
	// struct OrtApiBase { const OrtApi* (*GetApi)(uint32_t); const char* (*GetVersionString)(void); }
	base := call(getBase)
	if base == 0 {
		return nil, fmt.Errorf("%w: %s: OrtGetApiBase returned NULL", ErrNoLibrary, path)
	}
	getAPI, getVersion := word(base, 0), word(base, 1)
	l := &lib{path: path, version: goString(call(getVersion))}
	api := call(getAPI, apiVersion)
	if api == 0 {
		return nil, fmt.Errorf("%w: %s (ONNX Runtime %s) does not serve C API version %d", ErrNoLibrary, path, l.version, apiVersion)
	}
	for i := range l.fn {
		if l.fn[i] = word(api, i); l.fn[i] == 0 {
			return nil, fmt.Errorf("%w: %s: C API slot %d is NULL", ErrNoLibrary, path, i)
		}
	}
	logID := cString("gosr")
	env := new(uintptr)
	if err := l.status("CreateEnv", call(l.fn[slotCreateEnv], loggingFatal, uintptr(unsafe.Pointer(&logID[0])), uintptr(unsafe.Pointer(env)))); err != nil {
		return nil, err
	}
	info := new(uintptr)
	if err := l.status("CreateCpuMemoryInfo", call(l.fn[slotCreateCpuMemoryInfo], arenaAllocator, memTypeDefault, uintptr(unsafe.Pointer(info)))); err != nil {
		call(l.fn[slotReleaseEnv], *env)
		return nil, err
	}
	alloc := new(uintptr)
	if err := l.status("GetAllocatorWithDefaultOptions", call(l.fn[slotGetAllocatorWithDefaultOptions], uintptr(unsafe.Pointer(alloc)))); err != nil {
		call(l.fn[slotReleaseMemoryInfo], *info)
		call(l.fn[slotReleaseEnv], *env)
		return nil, err
	}
	l.env, l.cpuInfo, l.allocator = *env, *info, *alloc
	return l, nil
}

// Info describes the loaded library.
type Info struct {
	Path    string
	Version string
}

// Available loads the library at path (or finds the one loaded) and says
// which it is; the error wraps ErrNoLibrary when it cannot be loaded.
func Available(path string) (Info, error) {
	l, err := load(path)
	if err != nil {
		return Info{}, err
	}
	return Info{Path: l.path, Version: l.version}, nil
}

// Error is an OrtStatus turned into Go: the C function that failed,
// ONNX Runtime's error code and its message.
type Error struct {
	Op      string
	Code    int
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("onnxruntime %s: %s (code %d)", e.Op, e.Message, e.Code)
}

// status turns an OrtStatus* into an error (nil for NULL, success) and
// releases it.
func (l *lib) status(op string, st uintptr) error {
	if st == 0 {
		return nil
	}
	code := int(int32(call(l.fn[slotGetErrorCode], st)))
	msg := goString(call(l.fn[slotGetErrorMessage], st))
	call(l.fn[slotReleaseStatus], st)
	if code == errorCodeNoError {
		return nil
	}
	return &Error{Op: op, Code: code, Message: msg}
}

// call runs a C function of the library. Go pointers turned into uintptr
// in the call's arguments (out-parameters, strings) are moved to the
// heap and kept alive until it returns, by the directive.
//
//go:uintptrescapes
func call(fn uintptr, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}

// word reads the i-th pointer-sized word at C address p.
//
//go:nocheckptr
func word(p uintptr, i int) uintptr {
	return *(*uintptr)(unsafe.Add(cptr(p), i*int(unsafe.Sizeof(uintptr(0)))))
}

//go:nocheckptr
func goString(p uintptr) string {
	if p == 0 {
		return ""
	}
	b := (*byte)(cptr(p))
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(b), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(b, n))
}

// cptr turns a C address into a pointer (one vet does not question: the
// memory is C's, never moved by Go).
func cptr(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

func cString(s string) []byte { return append([]byte(s), 0) }
