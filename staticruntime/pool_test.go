package staticruntime_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/staticruntime"
)

// TestPoolPutChecks: Put accepts only a runtime the pool lent and has not
// had back yet. A runtime put twice would otherwise be handed to two
// goroutines at once.
func TestPoolPutChecks(t *testing.T) {
	m := prepare(t, mulReluChain(1), nil)
	other := prepare(t, mulReluChain(1), nil)
	ctx := context.Background()
	tests := []struct {
		name string
		put  func(p *staticruntime.Pool) error
	}{
		{"nil", func(p *staticruntime.Pool) error { return p.Put(nil) }},
		{"runtime of another module", func(p *staticruntime.Pool) error { return p.Put(other.NewRuntime()) }},
		{"runtime of the module not from the pool", func(p *staticruntime.Pool) error { return p.Put(m.NewRuntime()) }},
		{"runtime of another pool", func(p *staticruntime.Pool) error {
			r, err := staticruntime.NewPool(m, 2).Get(ctx)
			require.NoError(t, err)
			return p.Put(r)
		}},
		{"put twice", func(p *staticruntime.Pool) error {
			r, err := p.Get(ctx)
			require.NoError(t, err)
			require.NoError(t, p.Put(r))
			return p.Put(r)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := staticruntime.NewPool(m, 2)
			require.Error(t, tc.put(p))
			// The pool still lends two distinct runtimes, then waits.
			r1, err := p.Get(ctx)
			require.NoError(t, err)
			r2, err := p.Get(ctx)
			require.NoError(t, err)
			assert.NotSame(t, r1, r2)
			done, cancel := context.WithCancel(ctx)
			cancel()
			_, err = p.Get(done)
			require.ErrorIs(t, err, context.Canceled)
			require.NoError(t, p.Put(r1))
			require.NoError(t, p.Put(r2))
		})
	}
}

// TestPoolHandOff: with every runtime lent, a waiting Get gets the next
// one put back, whichever path (slot or channel) the Put takes; no wake-up
// is lost (each round would otherwise hang until its deadline).
func TestPoolHandOff(t *testing.T) {
	m := prepare(t, mulReluChain(1), nil)
	for _, size := range []int{1, 2} {
		p := staticruntime.NewPool(m, size)
		ctx := context.Background()
		held := make([]*staticruntime.StaticRuntime, size)
		for i := range held {
			r, err := p.Get(ctx)
			require.NoError(t, err)
			held[i] = r
		}
		for round := range 500 {
			got := make(chan *staticruntime.StaticRuntime)
			go func() {
				wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				defer cancel()
				r, err := p.Get(wctx)
				assert.NoError(t, err, "round %d", round)
				got <- r
			}()
			k := round % size
			require.NoError(t, p.Put(held[k]))
			held[k] = <-got
			require.NotNil(t, held[k])
		}
		for _, r := range held {
			require.NoError(t, p.Put(r))
		}
	}
}
