// Package parallel is a persistent team of goroutines a kernel splits
// one op across (intra-op parallelism). A team belongs to one runtime:
// its helpers are started once, with the runtime, and park on a channel
// between ops, so an op split across them starts no goroutine and
// allocates nothing (the Task is a pointer the kernel keeps, sent as an
// interface value). One goroutine at a time drives a team, as one runs
// a runtime; the caller runs part 0 itself.
package parallel

import (
	"fmt"
	"runtime"
	"sync/atomic"
)

// Task is an op split into parts: RunPart runs part i of n. Parts must
// write disjoint memory; the team waits for all of them before Run
// returns.
type Task interface {
	RunPart(i, n int)
}

// Team runs the parts of a Task on its helpers and the caller. A nil
// *Team is valid: a team of one (Run calls the parts in turn).
type Team struct {
	wake   []chan call // one per helper, which runs part index+1
	done   chan any    // a helper's result: nil, or the value it panicked with
	closed atomic.Bool
}

// New starts a team of n goroutines in all: the caller of Run and n-1
// helpers. n is capped at GOMAXPROCS, since more would only queue on
// the same processors; n <= 1 (or GOMAXPROCS 1) returns nil, a team of
// one, which starts nothing.
func New(n int) *Team {
	n = min(n, runtime.GOMAXPROCS(0))
	if n <= 1 {
		return nil
	}
	t := &Team{wake: make([]chan call, n-1), done: make(chan any, n-1)}
	for i := range t.wake {
		t.wake[i] = make(chan call)
		go helper(t.wake[i], t.done, i+1)
	}
	return t
}

// helper runs the parts sent to it until its channel is closed. It
// refers to the channels only, not to the team, so that a team nobody
// holds can be collected (and closed by a cleanup).
func helper(wake <-chan call, done chan<- any, i int) {
	for c := range wake {
		done <- runPart(c.task, i, c.n)
	}
}

// call is one Run's message to a helper.
type call struct {
	task Task
	n    int
}

// runPart runs one part and returns what it panicked with, if anything,
// so that the panic is raised again on Run's goroutine (where the
// runtime turns it into an error) instead of killing the process.
func runPart(task Task, i, n int) (p any) {
	defer func() {
		if r := recover(); r != nil {
			p = r
		}
	}()
	task.RunPart(i, n)
	return nil
}

// Size is the number of goroutines that run parts: 1 for a nil or
// closed team.
func (t *Team) Size() int {
	if t == nil || t.closed.Load() {
		return 1
	}
	return len(t.wake) + 1
}

// Run runs parts 0..n-1 of task, part 0 on the calling goroutine, and
// returns when all are done. n is at most Size (tasks size their parts
// with it). A panic in any part is raised again here, after every part
// has ended.
func (t *Team) Run(task Task, n int) {
	if n > t.Size() {
		panic(fmt.Sprintf("parallel: %d parts for a team of %d", n, t.Size()))
	}
	if n <= 1 {
		task.RunPart(0, 1)
		return
	}
	for i := 1; i < n; i++ {
		t.wake[i-1] <- call{task, n}
	}
	first := runPart(task, 0, n)
	for i := 1; i < n; i++ {
		if p := <-t.done; p != nil && first == nil {
			first = p
		}
	}
	if first != nil {
		panic(first)
	}
}

// Close stops the helpers; the team then has size 1. It must not be
// called while Run is in flight. Close is idempotent.
func (t *Team) Close() {
	if t == nil || t.closed.Swap(true) {
		return
	}
	for _, w := range t.wake {
		close(w)
	}
}

// Range is part i of n of [0, total) in whole units of unit: the parts
// are as even as whole units allow, and part n-1 ends at total.
func Range(i, n, total, unit int) (lo, hi int) {
	units := (total + unit - 1) / unit
	lo = i * units / n * unit
	hi = min((i+1)*units/n*unit, total)
	return lo, hi
}
