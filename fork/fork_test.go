package fork

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gosr/gosr/internal/raceflag"
	"github.com/gosr/gosr/ivalue"
)

// Every test must leave no goroutine behind: pools are closed, futures
// drained. The shared pools live for the process and are ignored.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/gosr/gosr/fork.(*Pool).worker"))
}

// noLeak checks one test for goroutines it started and left running.
func noLeak(t *testing.T) {
	t.Helper()
	goleak.VerifyNone(t, goleak.IgnoreCurrent())
}

func value(x int64) Func {
	return func(ctx context.Context) ([]ivalue.IValue, error) {
		return []ivalue.IValue{ivalue.FromInt(x)}, nil
	}
}

// within fails the test if f does not return in time: a deadlock is a
// failure, not a hung test binary.
func within(t *testing.T, d time.Duration, f func()) {
	t.Helper()
	ch := make(chan struct{})
	go func() { defer close(ch); f() }()
	select {
	case <-ch:
	case <-time.After(d):
		t.Fatalf("did not finish within %v (deadlock?)", d)
	}
}

func TestFutureOutcomes(t *testing.T) {
	boom := errors.New("boom")
	cases := []struct {
		name    string
		fn      Func
		want    int64
		wantErr string
	}{
		{"value", value(7), 7, ""},
		{"error", func(context.Context) ([]ivalue.IValue, error) { return nil, boom }, 0, "boom"},
		{"panic", func(context.Context) ([]ivalue.IValue, error) { panic("kernel bug") }, 0, "forked task panicked: kernel bug"},
	}
	p := NewPool(2, 4)
	defer p.Close()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := NewFuture(c.fn)
			for run := 0; run < 3; run++ { // reused across runs
				f.Reset(context.Background(), false)
				require.NoError(t, p.Launch(f.Task()))
				var vals []ivalue.IValue
				var err error
				within(t, 5*time.Second, func() { vals, err = f.Wait(context.Background()) })
				if c.wantErr != "" {
					require.Error(t, err)
					assert.Contains(t, err.Error(), c.wantErr)
					continue
				}
				require.NoError(t, err)
				require.Len(t, vals, 1)
				assert.Equal(t, c.want, vals[0].Int())
				// A second wait sees the same result.
				vals, err = f.Wait(context.Background())
				require.NoError(t, err)
				assert.Equal(t, c.want, vals[0].Int())
				f.Drain()
			}
		})
	}
}

func TestPoolBusyAndClosed(t *testing.T) {
	p := NewPool(1, 1)
	block := make(chan struct{})
	started := make(chan struct{})
	require.NoError(t, p.Launch(func() { close(started); <-block }))
	<-started
	require.NoError(t, p.Launch(func() {})) // fills the queue of 1
	assert.ErrorIs(t, p.Launch(func() {}), ErrBusy)
	close(block)
	within(t, 5*time.Second, p.Close)
	assert.ErrorIs(t, p.Launch(func() {}), ErrClosed)
	p.Close() // twice is fine
	noLeak(t)
}

// A queued task is still run by Close: its waiter must not hang.
func TestPoolCloseRunsQueued(t *testing.T) {
	p := NewPool(1, 8)
	block := make(chan struct{})
	require.NoError(t, p.Launch(func() { <-block }))
	f := NewFuture(value(3))
	f.Reset(context.Background(), false)
	require.NoError(t, p.Launch(f.Task()))
	go func() { time.Sleep(10 * time.Millisecond); close(block) }()
	within(t, 5*time.Second, p.Close)
	vals, err := f.Wait(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int64(3), vals[0].Int())
	noLeak(t)
}

// A task that forks and waits, on a pool of one worker: the worker waits
// on a task queued behind itself, which only helping can run.
func TestNestedWaitOnOneWorker(t *testing.T) {
	p := NewPool(1, 8)
	defer p.Close()
	inner := NewFuture(value(5))
	outer := NewFuture(func(ctx context.Context) ([]ivalue.IValue, error) {
		inner.Reset(ctx, true) // the waiter is a task: it may help
		if err := p.Launch(inner.Task()); err != nil {
			return nil, err
		}
		vals, err := inner.Wait(ctx)
		if err != nil {
			return nil, err
		}
		return []ivalue.IValue{ivalue.FromInt(vals[0].Int() + 1)}, nil
	})
	outer.Reset(context.Background(), false)
	require.NoError(t, p.Launch(outer.Task()))
	within(t, 5*time.Second, func() {
		vals, err := outer.Wait(context.Background())
		require.NoError(t, err)
		assert.Equal(t, int64(6), vals[0].Int())
	})
}

func TestCancelledFutureNeverStarts(t *testing.T) {
	var ran atomic.Bool
	f := NewFuture(func(context.Context) ([]ivalue.IValue, error) { ran.Store(true); return nil, nil })
	ctx, cancel := context.WithCancel(context.Background())
	f.Reset(ctx, false)
	cancel()
	f.Run() // the launcher gets to it after the cancel
	_, err := f.Wait(context.Background())
	assert.ErrorIs(t, err, context.Canceled)
	assert.False(t, ran.Load())

	// Cancel before any launcher runs it; a stale launch later is a no-op.
	f.Reset(context.Background(), false)
	assert.True(t, f.Cancel(errors.New("refused")))
	f.Run()
	_, err = f.Wait(context.Background())
	assert.EqualError(t, err, "refused")
	assert.False(t, ran.Load())
}

// Wait returns when its context ends even if the task never finishes
// (a launcher that lost it); Drain then waits for a task that did start.
func TestWaitHonoursContext(t *testing.T) {
	f := NewFuture(value(1))
	f.Reset(context.Background(), false)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	within(t, 5*time.Second, func() {
		_, err := f.Wait(ctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
	})
	within(t, 5*time.Second, f.Drain) // never started: cancelled
	assert.True(t, f.Done())
}

// Many goroutines launching and waiting at once through one pool, under
// -race: every future sees its own value.
func TestPoolConcurrent(t *testing.T) {
	p := NewPool(3, 16)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fs := make([]*Future, 4)
			for i := range fs {
				fs[i] = NewFuture(value(int64(g*10 + i)))
			}
			for range 200 {
				for _, f := range fs {
					f.Reset(context.Background(), false)
					if err := p.Launch(f.Task()); err != nil {
						f.Run()
					}
				}
				for i, f := range fs {
					vals, err := f.Wait(context.Background())
					if !assert.NoError(t, err) || !assert.Equal(t, int64(g*10+i), vals[0].Int()) {
						return
					}
				}
				for _, f := range fs {
					f.Drain()
				}
			}
		}()
	}
	within(t, 30*time.Second, wg.Wait)
	p.Close()
	noLeak(t)
}

func TestLaunchAllocatesNothing(t *testing.T) {
	if raceflag.Enabled {
		t.Skip("the race detector allocates")
	}
	p := NewPool(1, 4)
	defer p.Close()
	out := []ivalue.IValue{ivalue.FromInt(1)}
	f := NewFuture(func(context.Context) ([]ivalue.IValue, error) { return out, nil })
	allocs := testing.AllocsPerRun(200, func() {
		f.Reset(context.Background(), false)
		if err := p.Launch(f.Task()); err != nil {
			f.Run()
		}
		f.Wait(context.Background())
		f.Drain()
	})
	assert.Zero(t, allocs)
}
