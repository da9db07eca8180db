package staticruntime

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/gosr/gosr/fork"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops"
)

// forkSite is one prim::fork node of one runtime: it implements
// ops.Forker. Each execution of the node in a run takes the next task;
// tasks and their futures are made on first need and reused by later
// runs. A task takes a runtime of the forked subgraph from the
// subgraph's pool, shared by all runtimes of the module, and gives it back
// when the run ends (PyTorch builds a StaticRuntime per fork execution):
// a steady run allocates nothing, and idle forking runtimes hold none.
type forkSite struct {
	r     *StaticRuntime // the forking runtime
	sub   *StaticModule  // the subgraph, prepared once with the module
	desc  string
	tasks []*forkTask
	used  int // tasks started in the current run
}

type forkTask struct {
	site *forkSite
	rt   *StaticRuntime // runs the subgraph; made on the task's first run
	args []ivalue.IValue
	fut  *fork.Future
	// launcher of the forking run, for the subgraph's own forks.
	launcher fork.Launcher
}

// Fork implements ops.Forker.
func (s *forkSite) Fork(p *ops.ProcessedNode) (*fork.Future, error) {
	if s.used == len(s.tasks) {
		t := &forkTask{site: s, args: make([]ivalue.IValue, len(p.In))}
		t.fut = fork.NewFuture(t.run)
		s.tasks = append(s.tasks, t)
	}
	t := s.tasks[s.used]
	s.used++
	for i, in := range p.In {
		t.args[i] = p.Values[in]
	}
	r := s.r
	if t.rt == nil {
		t.rt = s.sub.taskRuntimes.take(s.sub)
	}
	t.launcher = r.launcher
	// Reset after the arguments are set: a stale entry of this future
	// left in a launcher's queue by an earlier run may run it from here on.
	t.fut.Reset(r.ctx, r.inTask)
	if err := r.launcher.Launch(t.fut.Task()); err != nil {
		if !errors.Is(err, fork.ErrBusy) {
			t.fut.Cancel(err)
			return nil, &fork.RefusedError{Err: err}
		}
		// A full queue: run the task here, as at::launch's caller would
		// wait for room; running it now cannot deadlock.
		t.fut.Run()
	}
	return t.fut, nil
}

// run is the future's work: the subgraph on the task's own runtime, which
// nothing else uses while the task is in flight.
func (t *forkTask) run(ctx context.Context) ([]ivalue.IValue, error) {
	outs, err := t.rt.runWith(ctx, t.launcher, true, t.args, nil)
	if err != nil {
		return nil, fmt.Errorf("in the task forked by %s: %w", t.site.desc, err)
	}
	return outs, nil
}

// drainForks waits for every task the run started, so nothing still
// reads the run's values once it returns (a task not yet started is
// cancelled). It is called on every way out of a run.
func (r *StaticRuntime) drainForks() {
	keep := r.m.forkResultsEscape
	for _, s := range r.sites {
		for _, t := range s.tasks[:s.used] {
			t.fut.Drain()
			if !keep {
				s.sub.taskRuntimes.put(t.rt)
				t.rt = nil
			}
		}
		s.used = 0
	}
}

// runtimeStack is a forked subgraph's pool of idle runtimes. It grows to
// the most tasks of the subgraph ever in flight at once.
type runtimeStack struct {
	mu  sync.Mutex
	rts []*StaticRuntime
}

func (p *runtimeStack) take(m *StaticModule) *StaticRuntime {
	p.mu.Lock()
	if n := len(p.rts); n > 0 {
		r := p.rts[n-1]
		p.rts[n-1] = nil
		p.rts = p.rts[:n-1]
		p.mu.Unlock()
		return r
	}
	p.mu.Unlock()
	return m.NewRuntime()
}

func (p *runtimeStack) put(r *StaticRuntime) {
	p.mu.Lock()
	p.rts = append(p.rts, r)
	p.mu.Unlock()
}

// RunContext is Run under ctx: forks go to the module's inter-op pool,
// and when ctx ends the run stops before its next node, forks not yet
// started never start, and the context's error is returned. The runtime
// stays usable.
func (r *StaticRuntime) RunContext(ctx context.Context, args ...ivalue.IValue) ([]ivalue.IValue, error) {
	return r.runWith(ctx, nil, false, args, nil)
}

// RunAsync is PyTorch's StaticRuntime::runAsync: the graph runs on the
// caller's goroutine and its forks on launcher (nil means the module's
// inter-op pool). It returns the future of the outputs, done when
// RunAsync returns; Wait gives the outputs or the run's error. The future
// and the outputs are the runtime's, valid until its next run.
func (r *StaticRuntime) RunAsync(ctx context.Context, launcher fork.Launcher, args ...ivalue.IValue) *fork.Future {
	if err := r.enter(); err != nil {
		// The runtime's own future belongs to the run in flight.
		f := fork.NewFuture(func(context.Context) ([]ivalue.IValue, error) { return nil, err })
		f.Reset(ctx, false)
		f.Run()
		return f
	}
	defer r.leave()
	if r.async == nil {
		r.async = fork.NewFuture(func(ctx context.Context) ([]ivalue.IValue, error) {
			return r.runEntered(ctx, r.asyncLauncher, false, r.asyncArgs, nil)
		})
	}
	r.asyncArgs = append(r.asyncArgs[:0], args...)
	r.asyncLauncher = launcher
	r.async.Reset(ctx, false)
	r.async.Run()
	clear(r.asyncArgs)
	r.asyncLauncher = nil
	return r.async
}
