// Package libtorch runs gosr's graphs with PyTorch's own ATen kernels
// (oneDNN convolutions, its GEMM), keeping gosr's graph execution and
// memory planning. A small C++ shim (shim/gosr_torch.cpp, built by `make
// libtorch` against Debian's libtorch-dev) exposes an extern "C" API;
// this package loads it at run time with purego, so the default build
// has no cgo and needs no libtorch.
//
// Open loads the shim once per process; a Backend plugs into
// staticruntime.Options (Backend, BackendMode) as an ops.KernelBackend.
package libtorch

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// ShimABI is the C ABI version this package speaks (GOSR_TORCH_ABI in
// shim/gosr_torch.h).
const ShimABI = 2

// ShimName is the file `make libtorch` builds, under build/.
const ShimName = "libgosrtorch.so"

// ErrNoShim is returned (wrapped, with the paths looked at) when the shim
// cannot be found or loaded.
var ErrNoShim = errors.New("libtorch backend unavailable")

// installHint says what to do when the shim is missing.
const installHint = "install Debian's libtorch-dev and g++ (apt-get install libtorch-dev g++), run `make libtorch` in the gosr checkout, or give the built " + ShimName + "'s path as libtorch.Options.Shim (srbench: $GOSR_LIBTORCH_SHIM)"

// Info describes the loaded shim and libtorch.
type Info struct {
	// Shim is the shim's path; Library the libtorch_cpu it runs on.
	Shim, Library string
	// Version is the libtorch version the shim was built against.
	Version string
	// CUDADevices is how many CUDA devices libtorch sees (0 for a
	// CPU-only libtorch such as Debian's).
	CUDADevices int
}

// lib holds the shim's entry points.
type lib struct {
	info                                   Info
	init, resolve, specialized             uintptr
	ctxNew, ctxFree, ctxReserve, ctxError  uintptr
	run, finish, benchAdd, cudaDeviceCount uintptr
	echo, sizeOf, rebinds                  uintptr
	alloc, free, copy                      uintptr
}

// The process's shim: the first that loads stays loaded (a process holds
// one libtorch), and failures are not kept, so that a later Open with
// another Options.Shim can succeed.
var (
	loadMu sync.Mutex
	loaded *lib
)

// candidates lists where the shim may be, in order: shim alone when set.
func candidates(shim string) []string {
	if shim != "" {
		return []string{shim}
	}
	var out []string
	add := func(p string) {
		for _, q := range out {
			if q == p {
				return
			}
		}
		out = append(out, p)
	}
	if exe, err := os.Executable(); err == nil {
		add(filepath.Join(filepath.Dir(exe), ShimName))
	}
	// The checkout this package was built from (go run, go test).
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		add(filepath.Join(filepath.Dir(file), "..", "build", ShimName))
	}
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			add(filepath.Join(d, "build", ShimName))
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	add(filepath.Join("/usr/local/lib/gosr", ShimName))
	return out
}

// load returns the process's shim, loading it (from shim, or the first of
// the usual places) the first time. A shim asked for after another was
// loaded is an error: one process cannot hold two.
func load(shim string) (*lib, error) {
	loadMu.Lock()
	defer loadMu.Unlock()
	if loaded != nil {
		if shim != "" && !sameFile(shim, loaded.info.Shim) {
			return nil, fmt.Errorf("libtorch: Options.Shim %s: this process has loaded %s already, and holds one shim", shim, loaded.info.Shim)
		}
		return loaded, nil
	}
	l, err := loadShim(candidates(shim))
	if err != nil {
		return nil, err
	}
	loaded = l
	return l, nil
}

// sameFile reports whether paths a and b name one file.
func sameFile(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}

func loadShim(paths []string) (*lib, error) {
	path := ""
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			path = p
			break
		}
	}
	if path == "" {
		return nil, fmt.Errorf("%w: no %s at %s; %s", ErrNoShim, ShimName, strings.Join(paths, ", "), installHint)
	}
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return nil, fmt.Errorf("%w: %s does not load: %v; install Debian's libtorch-dev (apt-get install libtorch-dev), or rebuild the shim with `make libtorch` against the libtorch installed", ErrNoShim, path, err)
	}
	l := &lib{}
	syms := []struct {
		name string
		p    *uintptr
	}{
		{"gosr_init", &l.init}, {"gosr_resolve", &l.resolve}, {"gosr_specialized", &l.specialized},
		{"gosr_ctx_new", &l.ctxNew}, {"gosr_ctx_free", &l.ctxFree}, {"gosr_ctx_reserve", &l.ctxReserve},
		{"gosr_ctx_error", &l.ctxError}, {"gosr_run", &l.run}, {"gosr_finish", &l.finish},
		{"gosr_bench_add", &l.benchAdd}, {"gosr_cuda_device_count", &l.cudaDeviceCount},
		{"gosr_echo", &l.echo}, {"gosr_sizeof", &l.sizeOf}, {"gosr_rebinds", &l.rebinds},
		{"gosr_alloc", &l.alloc}, {"gosr_free", &l.free}, {"gosr_copy", &l.copy},
	}
	infoSym, err := purego.Dlsym(h, "gosr_shim_info")
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not a gosr libtorch shim (no gosr_shim_info): rebuild it with `make libtorch`", ErrNoShim, path)
	}
	libSym, err := purego.Dlsym(h, "gosr_torch_library")
	if err != nil {
		return nil, fmt.Errorf("%w: %s: no gosr_torch_library: rebuild it with `make libtorch`", ErrNoShim, path)
	}
	info := goString(call(infoSym))
	torchLib := goString(call(libSym))
	version, err := checkShim(info, torchLib)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrNoShim, path, err)
	}
	for _, s := range syms {
		if *s.p, err = purego.Dlsym(h, s.name); err != nil {
			return nil, fmt.Errorf("%w: %s lacks %s: rebuild it with `make libtorch`", ErrNoShim, path, s.name)
		}
	}
	for i, name := range []string{"gosr_tensor", "gosr_arg", "gosr_ret", "gosr_hdr"} {
		if got := call(l.sizeOf, uintptr(i)); got != abiSizes[name] {
			return nil, fmt.Errorf("%w: %s: %s is %d bytes in the shim, %d in Go: rebuild it with `make libtorch`", ErrNoShim, path, name, got, abiSizes[name])
		}
	}
	l.info = Info{Shim: path, Library: torchLib, Version: version, CUDADevices: int(call(l.cudaDeviceCount))}
	return l, nil
}

var (
	infoRE    = regexp.MustCompile(`^gosr-torch abi=(\d+) torch=(\d+)\.(\d+)\.(\d+)$`)
	libVersRE = regexp.MustCompile(`\.so\.(\d+)\.(\d+)(\.\d+)?$`)
)

// checkShim checks the shim's build line against this package's ABI and
// the libtorch actually loaded (its file name, once symlinks are
// resolved, carries the version on Debian), and returns the version.
func checkShim(info, torchLib string) (string, error) {
	m := infoRE.FindStringSubmatch(info)
	if m == nil {
		return "", fmt.Errorf("unrecognised shim build line %q: rebuild it with `make libtorch`", info)
	}
	if m[1] != fmt.Sprint(ShimABI) {
		return "", fmt.Errorf("shim speaks C ABI %s, this gosr speaks %d: rebuild it with `make libtorch`", m[1], ShimABI)
	}
	version := m[2] + "." + m[3] + "." + m[4]
	real := torchLib
	if r, err := filepath.EvalSymlinks(torchLib); err == nil {
		real = r
	}
	if lv := libVersRE.FindStringSubmatch(real); lv != nil && (lv[1] != m[2] || lv[2] != m[3]) {
		return "", fmt.Errorf("shim was built against libtorch %s but runs on %s (libtorch %s.%s): rebuild it with `make libtorch` against the libtorch installed", version, real, lv[1], lv[2])
	}
	return version, nil
}

// call runs a C function of the shim. purego.SyscallN runs it on the
// system stack, like a cgo call. Arguments that are Go pointers turned
// into uintptr (out-parameters, message buffers) must be moved to the
// heap before the call: a goroutine's stack may move (grow) between the
// conversion and the C call, leaving C to write into the old stack.
//
//go:uintptrescapes
func call(fn uintptr, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}

//go:nocheckptr
func goString(p uintptr) string {
	if p == 0 {
		return ""
	}
	b := (*byte)(ptr(p))
	n := 0
	for *(*byte)(unsafe.Add(unsafe.Pointer(b), n)) != 0 {
		n++
	}
	return string(unsafe.Slice(b, n))
}

func cString(s string) []byte { return append([]byte(s), 0) }

// Available reports whether the libtorch backend can be used with the
// shim of Options.Shim (shim; "" searches the usual places), and if not,
// why (an error wrapping ErrNoShim that says what to install).
func Available(shim string) error {
	_, err := load(shim)
	return err
}
