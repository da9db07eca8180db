//go:build !amd64 || race

package staticruntime

import "sync/atomic"

// releaseZero stores 0 into a word only its owner writes (see
// leave_amd64.go): an atomic store where an ordinary one is not a
// release store, and where the race detector must see the hand-over.
func releaseZero(w *atomic.Uint32) { w.Store(0) }
