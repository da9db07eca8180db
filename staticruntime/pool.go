package staticruntime

import (
	"context"
	"fmt"

	"github.com/gosr/gosr/ivalue"
)

// Pool lends runtimes of one module to goroutines: at most Max exist, each
// used by one goroutine at a time (the synchronized stack of Static
// Runtime's "Mode 2").
type Pool struct {
	m    *StaticModule
	free chan *StaticRuntime
	sem  chan struct{} // one token per runtime that exists
}

// NewPool makes a pool of at most max runtimes (max < 1 means 1), created
// on demand.
func NewPool(m *StaticModule, max int) *Pool {
	if max < 1 {
		max = 1
	}
	return &Pool{m: m, free: make(chan *StaticRuntime, max), sem: make(chan struct{}, max)}
}

// Get returns a free runtime, making one if fewer than max exist, or
// waits for one to be put back until ctx is done.
func (p *Pool) Get(ctx context.Context) (*StaticRuntime, error) {
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
	select {
	case p.free <- r:
		return nil
	default:
		return fmt.Errorf("staticruntime: Put of more runtimes than the pool lent")
	}
}

// Do runs f with a runtime from the pool; outputs f reads from the runtime
// are valid only inside f. It is the allocation-free way to use a pool.
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
