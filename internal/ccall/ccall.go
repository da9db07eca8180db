// Package ccall calls C functions through purego's own trampoline with an
// argument block the caller keeps, so that a call allocates nothing.
//
// purego.SyscallN allocates on every call that has arguments: its
// variadic slice escapes (it is //go:uintptrescapes), and a steady Run
// must allocate nothing. The price of the block is the caller's care
// that purego's directive took: a pointer into Go memory passed as an
// argument must point to the heap and be kept alive by the caller until
// the call returns (a stack can move while the Go side of a call grows
// it). The block's layout is purego's syscallArgs (v0.11.x): fn,
// a1..a32, f1..f8, r8; results come back in a1 and a2.
// TestCallMatchesSyscallN checks it against purego.SyscallN.
package ccall

import (
	"unsafe"

	_ "github.com/ebitengine/purego" // the trampoline below
)

//go:linkname runtimeCgocall runtime.cgocall
func runtimeCgocall(fn uintptr, arg unsafe.Pointer) int32

//go:linkname syscallXABI0 github.com/ebitengine/purego.syscallXABI0
var syscallXABI0 uintptr

// Frame is one call's argument block. A Frame serves one call at a time:
// keep one per thread of calls (a kernel's state, an interpreter held by
// one goroutine at a time), on the heap.
type Frame struct {
	fn uintptr
	a  [32]uintptr
	f  [8]uintptr
	r8 uintptr
}

// Call calls fn with up to 32 integer or pointer arguments and returns
// its integer result. As purego.SyscallN does, each of the first eight
// arguments also goes in the SSE register of its position, so that a
// function whose only arguments are doubles (math.Float64bits) works.
func (s *Frame) Call(fn uintptr, args ...uintptr) uintptr {
	s.fn = fn
	n := copy(s.a[:], args)
	clear(s.a[n:])
	copy(s.f[:], s.a[:8])
	runtimeCgocall(syscallXABI0, unsafe.Pointer(s))
	return s.a[0]
}

// Call1 is Call with one argument, for the hottest paths: it does not
// touch the rest of the block (arguments past the first are whatever the
// last call left, which a one-argument function does not read).
func (s *Frame) Call1(fn, a uintptr) uintptr {
	s.fn, s.a[0] = fn, a
	runtimeCgocall(syscallXABI0, unsafe.Pointer(s))
	return s.a[0]
}
