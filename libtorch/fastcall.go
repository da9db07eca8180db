package libtorch

import (
	"unsafe"

	_ "github.com/ebitengine/purego" // the trampoline below
)

// purego.SyscallN allocates on every call that has arguments (its
// variadic slice escapes, by //go:uintptrescapes), and a steady Run must
// allocate nothing. So per-node calls go through purego's own trampoline
// with an argument block kept in the node's state. The block's layout is
// purego's syscallArgs (v0.11.x): fn, a1..a32, f1..f8, r8; results come
// back in a1 and a2. TestFastCall checks it against SyscallN.

//go:linkname runtimeCgocall runtime.cgocall
func runtimeCgocall(fn uintptr, arg unsafe.Pointer) int32

//go:linkname syscallXABI0 github.com/ebitengine/purego.syscallXABI0
var syscallXABI0 uintptr

type sysArgs struct {
	fn uintptr
	a  [32]uintptr
	f  [8]uintptr
	r8 uintptr
}

// call1 calls fn(a) with s as the argument block.
func (s *sysArgs) call1(fn, a uintptr) uintptr {
	s.fn, s.a[0] = fn, a
	runtimeCgocall(syscallXABI0, unsafe.Pointer(s))
	return s.a[0]
}

// call4 calls fn(a, b, c, d) with s as the argument block.
func (s *sysArgs) call4(fn, a, b, c, d uintptr) uintptr {
	s.fn, s.a[0], s.a[1], s.a[2], s.a[3] = fn, a, b, c, d
	runtimeCgocall(syscallXABI0, unsafe.Pointer(s))
	return s.a[0]
}
