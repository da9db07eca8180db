package ivalue

import "syscall"

func systemMemory() uint64 {
	limit := ^uint64(0)
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) == nil && si.Totalram > 0 {
		unit := uint64(max(si.Unit, 1))
		limit = (uint64(si.Totalram) + uint64(si.Totalswap)) * unit
	}
	for _, r := range []int{syscall.RLIMIT_AS, syscall.RLIMIT_DATA} {
		var l syscall.Rlimit
		if syscall.Getrlimit(r, &l) == nil && l.Cur < limit { // RLIM_INFINITY is the largest uint64
			limit = l.Cur
		}
	}
	return limit
}
