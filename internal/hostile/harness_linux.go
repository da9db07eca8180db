//go:build linux

package hostile

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"syscall"
	"time"
)

// childAttr kills the child if the test binary dies first.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

func maxRSS(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss << 10
	}
	return 0
}

// capMemory limits this process's data segment (RLIMIT_DATA: the private
// writable memory it maps, heap, goroutine and thread stacks included) to
// what it holds now plus memory, and returns the data segment at start.
// RLIMIT_AS would also count the address space the Go runtime reserves
// without using (over a gigabyte); RLIMIT_DATA does not. The collector
// keeps its default pace (no soft limit): a soft limit near the cap makes
// a case that needs more collect without end, a hang rather than the
// out-of-memory it is, and a server runs with the default too.
func capMemory(memory int64) (int64, error) {
	start, err := vmData()
	if err != nil {
		return 0, err
	}
	lim := uint64(start + memory)
	if err := syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: lim, Max: lim}); err != nil {
		return start, err
	}
	return start, nil
}

// vmData is VmData from /proc/self/status, in bytes.
func vmData() (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("VmData:")); ok {
			f := bytes.Fields(v)
			if len(f) == 2 && string(f[1]) == "kB" {
				n, err := strconv.ParseInt(string(f[0]), 10, 64)
				return n << 10, err
			}
		}
	}
	return 0, fmt.Errorf("no VmData in /proc/self/status")
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on
// every Linux architecture Go supports.
const clockTicks = 100

// cpuTime is a running process's user and system time so far, from
// /proc/<pid>/stat.
func cpuTime(pid int) (time.Duration, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name, field 2, is in parentheses and may hold spaces.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 13 { // fields 3 (state) to 15 (stime)
		return 0, false
	}
	u, err1 := strconv.ParseInt(string(f[11]), 10, 64)
	s, err2 := strconv.ParseInt(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(u+s) * time.Second / clockTicks, true
}

// dataUse is a running process's data segment (VmData) and its
// RLIMIT_DATA, from /proc; limit is 0 when unlimited.
func dataUse(pid int) (data, limit int64, ok bool) {
	st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0, false
	}
	lim, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/limits")
	if err != nil {
		return 0, 0, false
	}
	for _, line := range bytes.Split(st, []byte("\n")) {
		if v, found := bytes.CutPrefix(line, []byte("VmData:")); found {
			f := bytes.Fields(v)
			if len(f) == 2 {
				n, err := strconv.ParseInt(string(f[0]), 10, 64)
				data, ok = n<<10, err == nil
			}
		}
	}
	for _, line := range bytes.Split(lim, []byte("\n")) {
		if v, found := bytes.CutPrefix(line, []byte("Max data size")); found {
			if f := bytes.Fields(v); len(f) > 0 {
				limit, _ = strconv.ParseInt(string(f[0]), 10, 64) // "unlimited": 0
			}
		}
	}
	return data, limit, ok
}

// noCore turns off core files for this process (RLIMIT_CORE 0): a child
// that ends by GOTRACEBACK=crash's abort leaves nothing behind.
func noCore() {
	syscall.Setrlimit(syscall.RLIMIT_CORE, &syscall.Rlimit{})
}
