package staticruntime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// chainIR is x -> (x*w -> relu) n times: managed intermediates, so two
// runs interleaving on one runtime overwrite each other's values.
func chainIR(n int) string {
	var b strings.Builder
	b.WriteString("graph(%x : Tensor, %w : Tensor):\n")
	prev := "%x"
	for i := range n {
		fmt.Fprintf(&b, "  %%m%d : Tensor = aten::mul(%s, %%w)\n  %%r%d : Tensor = aten::relu(%%m%d)\n", i, prev, i, i)
		prev = fmt.Sprintf("%%r%d", i)
	}
	fmt.Fprintf(&b, "  return (%s)\n", prev)
	return b.String()
}

func prepareIR(t testing.TB, ir string) *StaticModule {
	t.Helper()
	g, err := graph.Parse(ir, nil)
	require.NoError(t, err)
	m, err := NewStaticModule(g, nil)
	require.NoError(t, err)
	return m
}

// chainWant is chainIR(n) on x with the scalar weight w: relu(x)*w^n for
// w > 0.
func chainWant(x []float32, w float32, n int) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		for range n {
			v = max(v*w, 0)
		}
		out[i] = v
	}
	return out
}

// runHeld runs r as Run does and checks the outputs before leaving the
// runtime, so that the check itself does not race with the next run of
// another goroutine (which Run's callers must not share anyway).
func runHeld(r *StaticRuntime, args []ivalue.IValue, check func([]ivalue.IValue) bool) (ok bool, err error) {
	if err := r.enter(); err != nil {
		return false, err
	}
	defer r.leave()
	outs, err := r.runEntered(nil, nil, false, args, nil)
	if err != nil {
		return false, err
	}
	return check(outs), nil
}

// TestSecondGoroutineRefused: while a run is in flight, every entry of
// the same runtime returns ErrConcurrentUse and leaves it alone; once the
// run is over the runtime runs again.
func TestSecondGoroutineRefused(t *testing.T) {
	m := prepareIR(t, chainIR(2))
	r := m.NewRuntime()
	x := ivalue.FromTensor(ivalue.F32Tensor([]float32{1, -2, 3, 4}, 2, 2))
	w := ivalue.FromTensor(ivalue.ScalarTensor(2))
	require.NoError(t, r.enter()) // a run in flight
	entries := []struct {
		name string
		run  func() error
	}{
		{"Run", func() error { _, err := r.Run(x, w); return err }},
		{"RunKw", func() error { _, err := r.RunKw([]ivalue.IValue{x}, map[string]ivalue.IValue{"w": w}); return err }},
		{"RunContext", func() error { _, err := r.RunContext(context.Background(), x, w); return err }},
		{"RunTensors", func() error { _, err := r.RunTensors(x.Tensor(), w.Tensor()); return err }},
		{"RunAsync", func() error {
			_, err := r.RunAsync(context.Background(), nil, x, w).Wait(context.Background())
			return err
		}},
		{"BenchmarkIndividualOps", func() error { _, err := r.BenchmarkIndividualOps([]ivalue.IValue{x, w}, 1, 1); return err }},
	}
	for _, e := range entries {
		t.Run(e.name, func(t *testing.T) {
			errc := make(chan error)
			go func() { errc <- e.run() }()
			err := <-errc
			require.ErrorIs(t, err, ErrConcurrentUse)
			assert.Contains(t, err.Error(), "two goroutines")
			assert.Equal(t, stateRunning, r.state.Load(), "the refused entry changed the state")
		})
	}
	r.leave()
	outs, err := r.Run(x, w)
	require.NoError(t, err)
	assert.Equal(t, chainWant([]float32{1, -2, 3, 4}, 2, 2), outs[0].Tensor().Contiguous().F32Contig())
}

// TestTwoGoroutinesOneRuntime is the campaign's case: two goroutines
// hammering one runtime, with the same shapes and with changing ones.
// Every run gives the right answer or ErrConcurrentUse, never a wrong one
// (without the check, tens of thousands of runs gave hundreds wrong).
func TestTwoGoroutinesOneRuntime(t *testing.T) {
	const chain = 8
	iters := 3000
	if testing.Short() {
		iters = 300
	}
	for _, changing := range []bool{false, true} {
		t.Run(fmt.Sprintf("changing shapes %v", changing), func(t *testing.T) {
			m := prepareIR(t, chainIR(chain))
			r := m.NewRuntime()
			w := ivalue.FromTensor(ivalue.ScalarTensor(1.5))
			var good, busy, wrong atomic.Int64
			var other atomic.Value
			var wg sync.WaitGroup
			for g := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range iters {
						rows := 16
						if changing {
							rows = 1 + (i*7+g*13)%40
						}
						x := make([]float32, rows*16)
						for k := range x {
							x[k] = float32((k+i+g)%11) - 5
						}
						want := chainWant(x, 1.5, chain)
						args := []ivalue.IValue{ivalue.FromTensor(ivalue.F32Tensor(x, rows, 16)), w}
						ok, err := runHeld(r, args, func(outs []ivalue.IValue) bool {
							got := outs[0].Tensor()
							if got.Sizes()[0] != rows {
								return false
							}
							for k, v := range got.Contiguous().F32Contig() {
								if v != want[k] {
									return false
								}
							}
							return true
						})
						switch {
						case errors.Is(err, ErrConcurrentUse):
							busy.Add(1)
						case err != nil:
							other.Store(err)
						case ok:
							good.Add(1)
						default:
							wrong.Add(1)
						}
					}
				}()
			}
			wg.Wait()
			if err := other.Load(); err != nil {
				t.Fatalf("a run failed otherwise: %v", err)
			}
			assert.Zero(t, wrong.Load(), "wrong results")
			assert.Equal(t, int64(2*iters), good.Load()+busy.Load())
			assert.Positive(t, good.Load())
			t.Logf("%d right, %d refused as concurrent, %d wrong", good.Load(), busy.Load(), wrong.Load())
		})
	}
}

// TestCloseWaitsForRunsInFlight: Close returns only when no runtime of
// the module is running, and gives the backing back after that; runs
// racing with it either finish right or return ErrClosed.
func TestCloseWaitsForRunsInFlight(t *testing.T) {
	const chain = 8
	g, err := graph.Parse(chainIR(chain), nil)
	require.NoError(t, err)
	var rts []*StaticRuntime
	var running atomic.Int64 // runtimes running when the backing went
	b := &checkBacking{onRelease: func() {
		for _, r := range rts {
			if r.state.Load() == stateRunning {
				running.Add(1)
			}
		}
	}}
	g.Backing = b
	m, err := NewStaticModule(g, nil)
	require.NoError(t, err)
	for range 4 {
		rts = append(rts, m.NewRuntime())
	}
	w := ivalue.FromTensor(ivalue.ScalarTensor(1.5))
	x := make([]float32, 64*64)
	for k := range x {
		x[k] = float32(k%9) - 4
	}
	want := chainWant(x, 1.5, chain)
	var good, closed atomic.Int64
	var wrong atomic.Value
	var wg sync.WaitGroup
	started := make(chan struct{}, len(rts))
	for _, r := range rts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := []ivalue.IValue{ivalue.FromTensor(ivalue.F32Tensor(x, 64, 64)), w}
			for i := 0; ; i++ {
				if i == 1 {
					started <- struct{}{}
				}
				ok, err := runHeld(r, args, func(outs []ivalue.IValue) bool {
					got := outs[0].Tensor().Contiguous().F32Contig()
					for k := range got {
						if got[k] != want[k] {
							return false
						}
					}
					return true
				})
				switch {
				case errors.Is(err, ErrClosed):
					closed.Add(1)
					return
				case err != nil || !ok:
					wrong.Store(fmt.Sprintf("run %d: ok %v, err %v", i, ok, err))
					return
				}
				good.Add(1)
			}
		}()
	}
	for range rts {
		<-started
	}
	require.NoError(t, m.Close())
	assert.Equal(t, int32(1), b.released.Load(), "released once")
	assert.Zero(t, running.Load(), "runtimes still running when the backing was released")
	wg.Wait()
	assert.Nil(t, wrong.Load())
	assert.Equal(t, int64(len(rts)), closed.Load(), "every runner stopped on ErrClosed")
	t.Logf("%d runs before Close", good.Load())
}

// checkBacking is a graph.Backing that calls onRelease when its one
// reference goes.
type checkBacking struct {
	retained, released atomic.Int32
	onRelease          func()
}

func (b *checkBacking) Retain() (func(), error) {
	b.retained.Add(1)
	var once sync.Once
	return func() {
		once.Do(func() {
			if b.onRelease != nil {
				b.onRelease()
			}
			b.released.Add(1)
		})
	}, nil
}

// BenchmarkRunInUseCheck measures what the concurrent-use check adds to a
// run: the check alone (enter and leave, two atomic instructions), and a
// Run of a one-node graph with and without it.
func BenchmarkRunInUseCheck(b *testing.B) {
	m := prepareIR(b, chainIR(1))
	r := m.NewRuntime()
	args := []ivalue.IValue{ivalue.FromTensor(ivalue.F32Tensor([]float32{1, -2, 3, 4}, 4)), ivalue.FromTensor(ivalue.ScalarTensor(2))}
	b.Run("check", func(b *testing.B) {
		for b.Loop() {
			if err := r.enter(); err != nil {
				b.Fatal(err)
			}
			r.leave()
		}
	})
	// The floor of any check that cannot be fooled: one uncontended
	// compare-and-swap (a locked instruction, a full barrier on x86).
	b.Run("compare-and-swap-alone", func(b *testing.B) {
		var w atomic.Uint32
		for b.Loop() {
			if !w.CompareAndSwap(0, 1) {
				b.Fatal("taken")
			}
			releaseZero(&w)
		}
	})
	b.Run("run-with-check", func(b *testing.B) {
		for b.Loop() {
			if _, err := r.Run(args...); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("run-without-check", func(b *testing.B) {
		for b.Loop() {
			if _, err := r.runEntered(nil, nil, false, args, nil); err != nil {
				b.Fatal(err)
			}
		}
	})
}
