package staticruntime

import (
	"errors"
	"runtime"
	"sync"
	"time"
	"weak"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops/parallel"
)

// ErrConcurrentUse is returned by a run that found its runtime already
// running on another goroutine. The other run is not disturbed.
var ErrConcurrentUse = errors.New("staticruntime: StaticRuntime used by two goroutines at once (use a Pool or one runtime per goroutine)")

// ErrClosed is returned by a run on a runtime of a closed module.
var ErrClosed = errors.New("staticruntime: the StaticModule is closed")

// A runtime's state word. A run sets stateRunning with one
// compare-and-swap from zero, so a second goroutine entering the same
// runtime is told so instead of corrupting the first one's values. Close
// sets stateClosed for good (the CAS fails from then on) and waits for
// stateRunning to clear.
const (
	stateRunning uint32 = 1 << iota
	stateClosed
)

// enter marks r running, or says why it cannot run.
func (r *StaticRuntime) enter() error {
	if r.state.CompareAndSwap(0, stateRunning) {
		return nil
	}
	if r.state.Load()&stateClosed != 0 {
		return ErrClosed
	}
	return ErrConcurrentUse
}

// leave ends what enter began. While a run is in flight nothing else
// writes the state word (stop waits for the run to end before marking
// the runtime closed; a refused enter writes nothing), so leave stores 0
// as a release store: one locked instruction a run (enter's), not two.
// See leave_amd64.go.
func (r *StaticRuntime) leave() { releaseZero(&r.state) }

// lifetime is a module's hold on the memory its constants view (the
// graph's Backing: a loader's memory-mapped archive) and the runtimes
// Close has to stop before giving that hold back. Runtimes are tracked
// by weak pointers, so a runtime the caller drops is still collected.
type lifetime struct {
	mu       sync.Mutex
	closed   bool
	release  func() // gives the backing back; nil without one
	cleanup  runtime.Cleanup
	runtimes []weak.Pointer[StaticRuntime]
	pruned   int // len(runtimes) after the last pruning
}

// backingHold is the graph's backing, retained while NewStaticModule
// prepares the graph (the passes read the constants: constant folding,
// pre-packing) and then handed to the module, or released on failure.
type backingHold struct {
	release func()
}

// retain takes a reference on g's backing, if it has one: an error when
// the memory is already gone (its Model was closed and nothing else holds
// it), rather than reading unmapped weights.
func (h *backingHold) retain(g *graph.Graph) error {
	if g == nil || g.Backing == nil {
		return nil
	}
	rel, err := g.Backing.Retain()
	if err != nil {
		return err
	}
	h.release = rel
	return nil
}

// settle hands the reference to m (nil: preparation failed, release it).
// A module never closed gives it back when the garbage collector finds
// the module unreachable: a runtime refers to its module, so that is
// after the last runtime is gone too.
func (h *backingHold) settle(m *StaticModule) {
	if h.release == nil {
		return
	}
	if m == nil {
		h.release()
		return
	}
	m.life.release = h.release
	m.life.cleanup = runtime.AddCleanup(m, func(rel func()) { rel() }, h.release)
}

// register records r, made by NewRuntime, and reports whether the module
// is still open. r is left running, so that a Close meanwhile waits for
// NewRuntime to finish it.
func (l *lifetime) register(r *StaticRuntime) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		r.state.Store(stateClosed)
		return false
	}
	r.state.Store(stateRunning)
	if len(l.runtimes) >= 2*l.pruned+16 {
		l.runtimes = compactWeak(l.runtimes)
		l.pruned = len(l.runtimes)
	}
	l.runtimes = append(l.runtimes, weak.Make(r))
	return true
}

// compactWeak drops the pointers whose runtime was collected.
func compactWeak(ws []weak.Pointer[StaticRuntime]) []weak.Pointer[StaticRuntime] {
	out := ws[:0]
	for _, w := range ws {
		if w.Value() != nil {
			out = append(out, w)
		}
	}
	clear(ws[len(out):])
	return out
}

// closedRuntime is what NewRuntime makes for a closed module: every run
// returns ErrClosed, and nothing reads the module's constants, whose
// memory may be gone.
func (m *StaticModule) closedRuntime(r *StaticRuntime) *StaticRuntime {
	r.values = make([]ivalue.IValue, m.numValues)
	r.outputs = make([]ivalue.IValue, len(m.outputs))
	r.top = &BlockRunner{rt: r, info: m.top}
	return r
}

// Close closes the module: it waits for the runs in flight on its
// runtimes to end, after which every run on them (and on runtimes made
// later, Pool's included) returns ErrClosed; then it gives back the
// module's reference to its graph's Backing. For a graph from
// loaders.Load, once the Model is closed too, that unmaps the archive.
// The graph (Graph) and its tensor constants must not be read after
// that. Close is idempotent; it must not be called from inside a run of
// the module, which it would wait for forever.
//
// A module that is never closed gives its reference back when the
// garbage collector finds it and all its runtimes unreachable.
func (m *StaticModule) Close() error {
	l := &m.life
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	rts := l.runtimes
	l.runtimes = nil
	l.mu.Unlock()
	for _, w := range rts {
		if r := w.Value(); r != nil {
			r.stop()
			r.scratch.Team().Close()
		}
	}
	// Runtimes of forked subgraphs run only inside runs of this
	// module's runtimes, all stopped now; closing them keeps their
	// state consistent for whoever still holds one.
	for _, ni := range m.nodes {
		if ni.sub != nil {
			ni.sub.Close() //nolint:errcheck // Close returns nil
		}
	}
	if l.release != nil {
		l.cleanup.Stop()
		l.release()
	}
	return nil
}

// stop marks r closed and waits for its run in flight, if any, to end.
// It marks r only while no run is in flight, so that a run's state word
// has one writer (see leave).
func (r *StaticRuntime) stop() {
	for wait := time.Microsecond; ; wait = min(2*wait, time.Millisecond) {
		s := r.state.Load()
		if s&stateClosed != 0 {
			return
		}
		if s&stateRunning == 0 && r.state.CompareAndSwap(s, s|stateClosed) {
			return
		}
		time.Sleep(wait)
	}
}

// newTeam starts r's intra-op team of threads goroutines
// (Options.IntraOpThreads; nil for one). Close stops it, and so does the
// garbage collector finding r unreachable: the team's helpers refer to
// the team only, never to r.
func newTeam(r *StaticRuntime, threads int) *parallel.Team {
	t := parallel.New(threads)
	if t != nil {
		runtime.AddCleanup(r, (*parallel.Team).Close, t)
	}
	return t
}
