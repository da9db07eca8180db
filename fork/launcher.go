// Package fork runs the asynchronous part of a graph: the tasks of
// prim::fork nodes, their futures (what aten::wait blocks on) and the
// launchers that run them, as PyTorch's TaskLauncher and at::launch
// inter-op pool do (PyTorch's torch/csrc/jit/runtime/static/README.md,
// on prim::fork and StaticRuntime::runAsync).
package fork

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
)

// Launcher runs tasks on other goroutines. Launch must not block for
// long: it queues task and returns. An error refuses the task, which
// then never runs; ErrBusy means "try later or run it yourself" and is
// not a failure (the runtime runs such a task on the forking goroutine).
type Launcher interface {
	Launch(task func()) error
}

// LauncherFunc adapts a function to Launcher, as PyTorch's TaskLauncher
// is a std::function. A func that returns nil must run task exactly once.
type LauncherFunc func(task func()) error

// Launch implements Launcher.
func (f LauncherFunc) Launch(task func()) error { return f(task) }

var (
	// ErrBusy is returned by a launcher whose queue is full.
	ErrBusy = errors.New("fork: launcher queue full")
	// ErrClosed is returned by a closed pool.
	ErrClosed = errors.New("fork: pool closed")
)

// Pool is a bounded inter-op pool: a fixed number of worker goroutines
// taking tasks from a bounded queue. Launch never blocks: a full queue is
// ErrBusy, so a task that forks from a worker can never deadlock waiting
// for a queue slot.
type Pool struct {
	mu      sync.RWMutex // Launch holds it shared; Close exclusively
	closed  bool
	tasks   chan func()
	quit    chan struct{}
	wg      sync.WaitGroup
	workers int
}

// NewPool starts workers goroutines (workers < 1 means GOMAXPROCS) with a
// queue of queue tasks (queue < 1 means 64 per worker).
func NewPool(workers, queue int) *Pool {
	if workers < 1 {
		workers = runtime.GOMAXPROCS(0)
	}
	if queue < 1 {
		queue = 64 * workers
	}
	p := &Pool{tasks: make(chan func(), queue), quit: make(chan struct{}), workers: workers}
	p.wg.Add(workers)
	for range workers {
		go p.worker()
	}
	return p
}

// Workers is the number of worker goroutines.
func (p *Pool) Workers() int { return p.workers }

func (p *Pool) worker() {
	defer p.wg.Done()
	for {
		select {
		case t := <-p.tasks:
			t()
		case <-p.quit:
			return
		}
	}
}

// Launch queues task. It does not allocate.
func (p *Pool) Launch(task func()) error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return ErrClosed
	}
	select {
	case p.tasks <- task:
		return nil
	default:
		return ErrBusy
	}
}

// Close stops the workers once they finish their current task, runs what
// is still queued on the calling goroutine (a queued task has a waiter),
// and waits for it all. Launch after Close returns ErrClosed.
func (p *Pool) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.mu.Unlock()
	close(p.quit)
	p.wg.Wait()
	for {
		select {
		case t := <-p.tasks:
			t()
		default:
			return
		}
	}
}

var (
	sharedMu sync.Mutex
	shared   = map[int]*Pool{}
)

// Shared returns the process-wide pool of n workers (n < 1 means
// GOMAXPROCS), made on first use and never closed: gosr's default
// inter-op pool. Modules asking for the same size share it.
func Shared(n int) *Pool {
	if n < 1 {
		n = runtime.GOMAXPROCS(0)
	}
	sharedMu.Lock()
	defer sharedMu.Unlock()
	p := shared[n]
	if p == nil {
		p = NewPool(n, 0)
		shared[n] = p
	}
	return p
}

// Inline is a launcher that runs every task on the forking goroutine,
// before Launch returns: forks run in program order, with no concurrency.
var Inline Launcher = LauncherFunc(func(task func()) error { task(); return nil })

// RefusedError is the error of a fork whose launcher refused the task.
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string {
	return fmt.Sprintf("fork: the launcher refused the task: %v", e.Err)
}
func (e *RefusedError) Unwrap() error { return e.Err }
