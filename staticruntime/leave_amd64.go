//go:build amd64 && !race

package staticruntime

import (
	"sync/atomic"
	"unsafe"
)

// releaseZero stores 0 into a word only its owner writes. On amd64 an
// ordinary store is a release store (x86 keeps stores in program order
// and never moves a store before an earlier load), and the compiler
// keeps it after the run's memory operations; atomic.Uint32.Store
// would add a locked XCHG, which costs as much as enter's compare-and-swap
// (BenchmarkRunInUseCheck). Under the race detector, and on other
// architectures, it is an atomic store (leave_other.go).
func releaseZero(w *atomic.Uint32) {
	*(*uint32)(unsafe.Pointer(w)) = 0
}
