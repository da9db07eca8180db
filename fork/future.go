package fork

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync/atomic"

	"github.com/gosr/gosr/ivalue"
)

// Future states. A future is reused across runs by its owner: Reset
// takes it from idle or done back to pending.
const (
	idle int32 = iota
	pending
	running
	done
)

// Func is the work of a future: it runs the forked subgraph and returns
// its outputs. ctx is the forking run's context.
type Func func(ctx context.Context) ([]ivalue.IValue, error)

// Future is the result of one prim::fork: aten::wait blocks on it. A
// future is owned by the runtime that forks it, which reuses it from run
// to run, so a steady run allocates none. Its values are valid until the
// owner's next run.
type Future struct {
	state atomic.Int32
	// token holds one element once the future is done. A waiter takes it
	// and puts it back, so any number of waiters see it; Reset drains it.
	token chan struct{}
	fn    Func
	ctx   context.Context
	help  bool
	vals  []ivalue.IValue
	err   error
	task  func() // f.execute, bound once so launching allocates nothing
}

// NewFuture makes an idle future that runs fn.
func NewFuture(fn Func) *Future {
	f := &Future{token: make(chan struct{}, 1), fn: fn}
	f.task = f.execute
	return f
}

// Reset readies f for a new fork in a run with context ctx. help says
// whether a waiter on f may run it itself while it is still queued:
// true when the waiter is a forked task (a worker waiting for a queued
// task could otherwise wait for a free worker forever), false on the
// caller's goroutine, which leaves forks to the launcher as PyTorch does.
// f must not be in flight.
func (f *Future) Reset(ctx context.Context, help bool) {
	select {
	case <-f.token:
	default:
	}
	f.ctx, f.help, f.vals, f.err = ctx, help, nil, nil
	f.state.Store(pending)
}

// Task is the function to hand to a Launcher.
func (f *Future) Task() func() { return f.task }

// execute runs the future if nobody has yet (a launcher and a helping
// waiter may both try). A cancelled context means it is not started.
func (f *Future) execute() {
	if !f.state.CompareAndSwap(pending, running) {
		return
	}
	if err := f.ctx.Err(); err != nil {
		f.finish(nil, err)
		return
	}
	vals, err := f.call()
	f.finish(vals, err)
}

func (f *Future) call() (vals []ivalue.IValue, err error) {
	defer func() {
		if p := recover(); p != nil {
			vals, err = nil, fmt.Errorf("fork: forked task panicked: %v\n%s", p, debug.Stack())
		}
	}()
	return f.fn(f.ctx)
}

func (f *Future) finish(vals []ivalue.IValue, err error) {
	f.vals, f.err = vals, err
	f.state.Store(done)
	f.token <- struct{}{}
}

// Cancel completes a future that has not started with err, so it never
// runs. It reports whether it did.
func (f *Future) Cancel(err error) bool {
	if !f.state.CompareAndSwap(pending, running) {
		return false
	}
	f.finish(nil, err)
	return true
}

// Run runs a pending future on the calling goroutine (a launcher refused
// it, or its queue was full).
func (f *Future) Run() { f.execute() }

// Wait blocks until f is done and returns its values and error, or
// returns ctx's error first if ctx ends (the task may still be running:
// its owner drains it before the run returns).
func (f *Future) Wait(ctx context.Context) ([]ivalue.IValue, error) {
	if f.help && f.state.Load() == pending {
		f.execute()
	}
	if f.state.Load() != done || len(f.token) == 0 {
		select {
		case <-f.token:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		f.token <- struct{}{}
	}
	return f.vals, f.err
}

// Drain waits for f to finish whatever its context, if it was started.
// The owner calls it before reusing what f's task reads.
func (f *Future) Drain() {
	switch f.state.Load() {
	case idle:
		return
	case pending:
		if f.Cancel(context.Canceled) {
			return
		}
	}
	<-f.token
	f.token <- struct{}{}
}

// Done reports whether f has finished.
func (f *Future) Done() bool { return f.state.Load() == done }

// Context returns the context f runs under (the forking run's).
func (f *Future) Context() context.Context { return f.ctx }
