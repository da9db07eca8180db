package staticruntime_test

import (
	"context"
	"testing"

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
