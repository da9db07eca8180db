//go:build !linux

package ivalue

// systemMemory: no portable way to ask; Go's own limit on one allocation.
func systemMemory() uint64 { return 1 << 47 }
