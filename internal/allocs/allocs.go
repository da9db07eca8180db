// Package allocs measures allocations per call in tests.
package allocs

import "testing"

// Steady is testing.AllocsPerRun(runs, f), the least of three
// measurements. AllocsPerRun counts the allocations of every goroutine in
// the process (an inter-op pool's workers, a finished test's goroutines
// winding down, the Go runtime's own), so one measurement can catch some
// that are not f's; an allocation f makes shows in all three.
func Steady(runs int, f func()) float64 {
	best := testing.AllocsPerRun(runs, f)
	for i := 0; i < 2 && best > 0; i++ {
		best = min(best, testing.AllocsPerRun(runs, f))
	}
	return best
}
