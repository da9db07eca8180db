//go:build !linux

package cgroup

// affinityCPUs is 0 (unknown) outside Linux: runtime.NumCPU stands.
func affinityCPUs() int { return 0 }
