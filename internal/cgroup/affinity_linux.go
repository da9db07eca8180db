package cgroup

import "golang.org/x/sys/unix"

// affinityCPUs is the size of the calling thread's affinity mask now
// (runtime.NumCPU's figure is taken once at start-up); 0 when unknown.
func affinityCPUs() int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return 0
	}
	return set.Count()
}
