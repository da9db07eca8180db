//go:build !linux

package hostile

import (
	"os"
	"syscall"
	"time"
)

func childAttr() *syscall.SysProcAttr { return nil }

func maxRSS(*os.ProcessState) int64 { return 0 }

// capMemory caps nothing: the cap needs Linux's RLIMIT_DATA.
func capMemory(memory int64) (int64, error) { return 0, nil }

// cpuTime is unknown here: only the wall-clock limit applies.
func cpuTime(int) (time.Duration, bool) { return 0, false }

func dataUse(int) (data, limit int64, ok bool) { return 0, 0, false }

func noCore() {}
