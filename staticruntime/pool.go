package staticruntime

import (
	"context"
	"fmt"
	"sync/atomic"
	_ "unsafe" // go:linkname of runtime.procPin

	"github.com/gosr/gosr/ivalue"
)

// Pool lends runtimes of one module to goroutines: at most Max exist, each
// used by one goroutine at a time (the synchronized stack of Static
// Runtime's "Mode 2").
type Pool struct {
	m *StaticModule
	// slots hold idle runtimes for the fast path: a Get and a Put are one
	// atomic swap each on a cache line of its own, so goroutines serving
	// at once do not contend on one lock (a channel's). Waiters, when all
	// runtimes are lent, are served through free.
	slots   []poolSlot
	waiters atomic.Int32
	free    chan *StaticRuntime
	sem     chan struct{} // one token per runtime that exists
}

type poolSlot struct {
	r atomic.Pointer[StaticRuntime]
	_ [56]byte // one slot per cache line
}

// NewPool makes a pool of at most max runtimes (max < 1 means 1), created
// on demand.
func NewPool(m *StaticModule, max int) *Pool {
	if max < 1 {
		max = 1
	}
	return &Pool{m: m, slots: make([]poolSlot, max), free: make(chan *StaticRuntime, max), sem: make(chan struct{}, max)}
}

// procPin and procUnpin are the runtime's (sync.Pool's way to find the
// current P); the runtime keeps them for linkname users (go.dev/issue/67401).
//
//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()

// home is the slot a goroutine on the current P tries first, in Get and
// in Put. A runtime so goes back to the P (and so, mostly, the core)
// that last ran it: its values, slab and kernel scratch are still in that
// core's caches. Handed to another core, every line of that working set
// moves over, which on a small model (DLRM's is tens of KB, a run a few
// microseconds) slows each run by a third.
func (p *Pool) home() int {
	pid := procPin()
	procUnpin()
	return pid % len(p.slots)
}

// takeSlot takes an idle runtime from the slots, scanning from the
// goroutine's home slot.
func (p *Pool) takeSlot() *StaticRuntime {
	n := len(p.slots)
	i := p.home()
	for range n {
		if p.slots[i].r.Load() != nil {
			if r := p.slots[i].r.Swap(nil); r != nil {
				return r
			}
		}
		if i++; i == n {
			i = 0
		}
	}
	return nil
}

// Get returns a free runtime, making one if fewer than max exist, or
// waits for one to be put back until ctx is done. A ctx already done is
// an error even when a runtime is idle: the caller has given up.
func (p *Pool) Get(ctx context.Context) (*StaticRuntime, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("staticruntime: getting a runtime: %w", err)
	}
	if r := p.takeSlot(); r != nil {
		r.lent.Store(true)
		return r, nil
	}
	select {
	case r := <-p.free:
		r.lent.Store(true)
		return r, nil
	default:
	}
	select {
	case r := <-p.free:
		r.lent.Store(true)
		return r, nil
	case p.sem <- struct{}{}:
		r := p.m.NewRuntime()
		r.pool = p
		r.lent.Store(true)
		return r, nil
	default:
	}
	// Every runtime is lent: wait on free. Put sees waiters and hands
	// runtimes over there; one put in a slot just before is taken here.
	p.waiters.Add(1)
	defer p.waiters.Add(-1)
	if r := p.takeSlot(); r != nil {
		r.lent.Store(true)
		return r, nil
	}
	select {
	case r := <-p.free:
		r.lent.Store(true)
		return r, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("staticruntime: waiting for a runtime: %w", ctx.Err())
	}
}

// Put gives r back. r must come from this pool's Get and not be used
// after. A runtime the pool did not lend, or one already put back, is
// refused: taking it twice would let two goroutines share it.
func (p *Pool) Put(r *StaticRuntime) error {
	if r == nil || r.pool != p {
		return fmt.Errorf("staticruntime: Put of a runtime that is not from this pool")
	}
	if !r.lent.CompareAndSwap(true, false) {
		return fmt.Errorf("staticruntime: Put of a runtime already put back")
	}
	if p.waiters.Load() == 0 {
		n := len(p.slots)
		i := p.home()
		for range n {
			if p.slots[i].r.CompareAndSwap(nil, r) {
				// A Get that began to wait meanwhile may have missed it:
				// take it back for the channel unless someone has it.
				if p.waiters.Load() == 0 || !p.slots[i].r.CompareAndSwap(r, nil) {
					return nil
				}
				break
			}
			if i++; i == n {
				i = 0
			}
		}
	}
	select {
	case p.free <- r:
		return nil
	default:
		return fmt.Errorf("staticruntime: Put of more runtimes than the pool lent")
	}
}

// Do runs f with a runtime from the pool; outputs f reads from the runtime
// are valid only inside f. It is the allocation-free way to use a pool.
// With ctx already done, f does not run and Do returns ctx's error.
func (p *Pool) Do(ctx context.Context, f func(r *StaticRuntime) error) error {
	r, err := p.Get(ctx)
	if err != nil {
		return err
	}
	defer p.Put(r) //nolint:errcheck // r came from Get
	return f(r)
}

// Run runs the module on a pooled runtime and returns outputs the caller
// owns (deep copies, since the runtime goes back to the pool).
func (p *Pool) Run(ctx context.Context, args ...ivalue.IValue) ([]ivalue.IValue, error) {
	var outs []ivalue.IValue
	err := p.Do(ctx, func(r *StaticRuntime) error {
		o, err := r.RunContext(ctx, args...)
		if err != nil {
			return err
		}
		outs = make([]ivalue.IValue, len(o))
		for i, v := range o {
			outs[i] = v.Clone()
		}
		return nil
	})
	return outs, err
}
