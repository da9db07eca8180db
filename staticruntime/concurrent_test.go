package staticruntime_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/staticruntime"
)

// TestRunFromTwoGoroutines: Run called on one runtime from two goroutines
// at once returns ErrConcurrentUse for the one that came second, and the
// runs never overlap: under -race, overlapping runs writing the runtime's
// values would be reported. The runtime is right afterwards.
func TestRunFromTwoGoroutines(t *testing.T) {
	m := prepare(t, mulReluChain(8), nil)
	r := m.NewRuntime()
	w := ivalue.FromTensor(ivalue.ScalarTensor(1.5))
	const iters = 2000
	var busy atomic.Int64
	var other atomic.Value
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := ivalue.FromTensor(ivalue.NewTensor(ivalue.Float32, 8+g, 16))
			for range iters {
				_, err := r.Run(x, w)
				switch {
				case errors.Is(err, staticruntime.ErrConcurrentUse):
					busy.Add(1)
				case err != nil:
					other.Store(err)
				}
			}
		}()
	}
	wg.Wait()
	require.Nil(t, other.Load(), "errors other than ErrConcurrentUse")
	t.Logf("%d of %d runs refused as concurrent", busy.Load(), 2*iters)
	outs, err := r.Run(ivalue.FromTensor(ivalue.F32Tensor([]float32{-1, 2}, 2)), w)
	require.NoError(t, err)
	assert.InDeltaSlice(t, []float32{0, 2 * 25.62890625}, f32(t, outs[0]), 1e-3)
}

// TestPoolCancelledContext: a context already done makes Get and Do fail
// with its error, and Do does not run f, even with a runtime idle.
func TestPoolCancelledContext(t *testing.T) {
	m := prepare(t, mulReluChain(1), nil)
	p := staticruntime.NewPool(m, 2)
	// One runtime made and idle: the fast path Do used to take.
	require.NoError(t, p.Do(context.Background(), func(*staticruntime.StaticRuntime) error { return nil }))
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	x := ivalue.FromTensor(ivalue.F32Tensor([]float32{1}, 1))
	for _, tc := range []struct {
		name string
		ctx  context.Context
		want error
	}{
		{"cancelled", cancelled, context.Canceled},
		{"past deadline", expired, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ran := false
			err := p.Do(tc.ctx, func(*staticruntime.StaticRuntime) error { ran = true; return nil })
			require.ErrorIs(t, err, tc.want)
			assert.False(t, ran, "Do ran f with a context already done")
			_, err = p.Get(tc.ctx)
			require.ErrorIs(t, err, tc.want)
			_, err = p.Run(tc.ctx, x, x)
			require.ErrorIs(t, err, tc.want)
		})
	}
	// Nothing was lent: both runtimes are still there to get.
	ctx, cancel3 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel3()
	r1, err := p.Get(ctx)
	require.NoError(t, err)
	r2, err := p.Get(ctx)
	require.NoError(t, err)
	require.NoError(t, p.Put(r1))
	require.NoError(t, p.Put(r2))
}
