// Package parallel is a persistent team of goroutines a kernel splits
// one op across (intra-op parallelism). A team belongs to one runtime:
// its helpers are started once, with the runtime, and between ops watch
// for the next one for a few tens of microseconds, then park on a
// channel, so an op split across them starts no goroutine and
// allocates nothing (the Task is a pointer the kernel keeps, passed as
// an interface value). One goroutine at a time drives a team, as one
// runs a runtime; it runs part 0 itself.
//
// A helper joins a run only if it arrives before the caller has
// finished its own part: the caller never waits for a helper the OS has
// not scheduled yet (on a busy machine that wait would be a scheduler
// time slice per op). Tasks therefore share their work out dynamically
// (chunks taken from an atomic counter), so that whichever goroutines
// take part do all of it.
package parallel

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
)

// Task is an op split into parts: RunPart runs the part of goroutine i
// of a team of n, and is called for i = 0 (the caller) and for any of
// the helpers 1..n-1 that join in time, each at most once. The parts
// must together do all of the work whichever of them run (for example
// by taking chunks from a counter until none is left) and write
// disjoint memory; Run returns once every part that started has ended.
type Task interface {
	RunPart(i, n int)
}

// Team runs the parts of a Task on its helpers and the caller. A nil
// *Team is valid: a team of one (Run calls part 0).
type Team struct {
	wake []chan struct{} // one per helper (helper i+1), holding at most one wake-up
	// state is the current run's generation (high bits), whether the
	// caller has closed it to latecomers, and how many helpers are in it.
	state  atomic.Uint64
	task   Task
	n      int
	done   chan struct{} // the last helper out of a closed run tells the caller
	panics []any         // per goroutine: the value its part panicked with
	closed atomic.Bool
}

const (
	closedBit = 1 << 31
	activeMax = closedBit - 1
	genOne    = 1 << 32
)

// New starts a team of n goroutines in all: the caller of Run and n-1
// helpers. n is capped at GOMAXPROCS, since more would only queue on
// the same processors; n <= 1 (or GOMAXPROCS 1) returns nil, a team of
// one, which starts nothing.
func New(n int) *Team {
	n = min(n, runtime.GOMAXPROCS(0))
	if n <= 1 {
		return nil
	}
	t := &Team{wake: make([]chan struct{}, n-1), done: make(chan struct{}, 1), panics: make([]any, n)}
	t.state.Store(closedBit) // no run yet
	for i := range t.wake {
		t.wake[i] = make(chan struct{}, 1)
		go t.helper(i + 1)
	}
	return t
}

// helper joins the runs it is woken for until its channel is closed.
// Its stack holds the team, so a team is never collected while its
// helpers run: its owner closes it (staticruntime does when the module
// is closed or the runtime collected).
func (t *Team) helper(i int) {
	var last uint64 // the generation of the last run joined
	for {
		if g := t.spin(last); g != last {
			last = t.join(i, last)
			continue
		}
		if _, ok := <-t.wake[i-1]; !ok {
			return
		}
		last = t.join(i, last)
	}
}

// spinFor is how long a helper watches for the next run before it parks:
// a model's split ops come one after another, a few small ones apart,
// and a parked helper takes tens of microseconds to wake (a futex and
// the scheduler), which would otherwise come off every op.
const spinFor = 50 * time.Microsecond

// spin waits up to spinFor for a run after generation last to open,
// and returns its generation, or last if none did (or the team closed).
func (t *Team) spin(last uint64) uint64 {
	g := last
	watch(func() bool {
		s := t.state.Load()
		if s/genOne != last && s&closedBit == 0 {
			g = s / genOne
			return true
		}
		return t.closed.Load()
	})
	return g
}

// watch calls ready until it reports true or spinFor has passed,
// yielding the processor every 64 calls (a goroutine waiting on the
// same processor gets its turn).
func watch(ready func() bool) {
	var start time.Time
	for k := 0; !ready(); k++ {
		if k&63 != 63 {
			continue
		}
		now := time.Now()
		if start.IsZero() {
			start = now
		} else if now.Sub(start) > spinFor {
			return
		}
		runtime.Gosched()
	}
}

// join takes part in the current run if it is still open and is not
// the run last joined (a wake-up left pending by a run the helper came
// too late for may wake it during a later run it then joins, and that
// run's own wake-up must not make it join again). It returns the
// generation of the run it joined, or last.
func (t *Team) join(i int, last uint64) uint64 {
	var s uint64
	for {
		s = t.state.Load()
		if s&closedBit != 0 || s/genOne == last {
			return last // too late (the caller has done the work), or done
		}
		if t.state.CompareAndSwap(s, s+1) {
			break
		}
	}
	// Joined: the caller waits for this part, and its task and n are
	// the current run's until it ends.
	if i < t.n {
		t.panics[i] = runPart(t.task, i, t.n)
	}
	if s := t.state.Add(^uint64(0)); s&closedBit != 0 && s&activeMax == 0 {
		t.done <- struct{}{}
	}
	return s / genOne
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

// Run runs task's parts on the calling goroutine (part 0) and on those
// of helpers 1..n-1 that join before part 0 ends, and returns when all
// that started are done. n is at most Size. A panic in any part is
// raised again here, after every part has ended.
func (t *Team) Run(task Task, n int) {
	if n > t.Size() {
		panic(fmt.Sprintf("parallel: %d parts for a team of %d", n, t.Size()))
	}
	if n <= 1 {
		task.RunPart(0, 1)
		return
	}
	t.task, t.n = task, n
	// Open the run: a new generation, nobody in it. The stores above
	// happen before any helper's join succeeds.
	t.state.Store((t.state.Load() &^ (genOne - 1)) + genOne)
	for i := 1; i < n; i++ {
		select {
		case t.wake[i-1] <- struct{}{}:
		default: // a wake-up is pending already
		}
	}
	first := runPart(task, 0, n)
	// Close the run; wait for the helpers in it, if any.
	if s := t.state.Or(closedBit); s&activeMax != 0 {
		t.awaitHelpers()
	}
	for i := 1; i < n; i++ {
		if p := t.panics[i]; p != nil {
			t.panics[i] = nil
			if first == nil {
				first = p
			}
		}
	}
	t.task = nil
	if first != nil {
		panic(first)
	}
}

// awaitHelpers waits for the helpers still in a closed run: the last
// one out sends on done. It watches for that send for up to spinFor
// before it blocks on the channel: a goroutine parked on a channel is
// woken through the scheduler, which on a VM costs tens of
// microseconds and may resume it on the helper's processor, away from
// the cache its part of the op filled.
func (t *Team) awaitHelpers() {
	watch(func() bool { return len(t.done) > 0 })
	<-t.done
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
