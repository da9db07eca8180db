package staticruntime_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gosr/gosr/fork"
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/internal/raceflag"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/staticruntime"
)

// forkIR forks two subgraphs, works on the caller meanwhile, then joins:
// out = relu(x @ w) + 2x + relu(3x).
const forkIR = `graph(%x : Tensor, %w : Tensor):
  %one : int = prim::Constant[value=1]()
  %three : float = prim::Constant[value=3.]()
  %f1 : Future[Tensor] = prim::fork_0(%x, %w)
  %f2 : Future[Tensor] = prim::fork_1(%x)
  %h : Tensor = aten::mul(%x, %three)
  %y : Tensor = aten::relu(%h)
  %a : Tensor = aten::wait(%f1)
  %b : Tensor = aten::wait(%f2)
  %s : Tensor = aten::add(%a, %b, %one)
  %t : Tensor = aten::add(%s, %y, %one)
  return (%t)
with prim::fork_0 = graph(%x : Tensor, %w : Tensor):
  %m : Tensor = aten::mm(%x, %w)
  %r : Tensor = aten::relu(%m)
  return (%r)
with prim::fork_1 = graph(%x : Tensor):
  %two : float = prim::Constant[value=2.]()
  %m : Tensor = aten::mul(%x, %two)
  return (%m)
`

// nestedIR: the forked subgraph forks again and waits; the caller also
// reads an intermediate it passed to the fork (which must therefore stay
// intact: no in-place relu on it). out = (2h + (h + 1)) + relu(h), h = 3x.
// PyTorch prints a nested subgraph's groups with their own numbering, so
// the levels are parsed apart and joined (prepareNested).
const nestedIR = `graph(%x : Tensor):
  %one : int = prim::Constant[value=1]()
  %three : float = prim::Constant[value=3.]()
  %h : Tensor = aten::mul(%x, %three)
  %f : Future[Tensor] = prim::fork_0(%h)
  %y : Tensor = aten::relu(%h)
  %a : Tensor = aten::wait(%f)
  %t : Tensor = aten::add(%a, %y, %one)
  return (%t)
with prim::fork_0 = graph(%h : Tensor):
  return (%h)
`

const nestedMidIR = `graph(%h : Tensor):
  %one : int = prim::Constant[value=1]()
  %two : float = prim::Constant[value=2.]()
  %g : Future[Tensor] = prim::fork_0(%h)
  %d : Tensor = aten::mul(%h, %two)
  %e : Tensor = aten::wait(%g)
  %s : Tensor = aten::add(%d, %e, %one)
  return (%s)
with prim::fork_0 = graph(%h : Tensor):
  %one : int = prim::Constant[value=1]()
  %k : Tensor = aten::add(%h, %one, %one)
  return (%k)
`

func prepareNested(t testing.TB, opts *staticruntime.Options) *staticruntime.StaticModule {
	t.Helper()
	g, err := graph.Parse(nestedIR, nil)
	require.NoError(t, err)
	mid, err := graph.Parse(nestedMidIR, nil)
	require.NoError(t, err)
	g.Walk(func(n *graph.Node) {
		if n.Kind == "prim::fork" {
			n.SetAttr("Subgraph", ivalue.Object(mid))
		}
	})
	m, err := staticruntime.NewStaticModule(g, opts)
	require.NoError(t, err)
	return m
}

// loopIR forks one task per loop iteration, keeps the futures in a list
// and waits for them all: sum over i < n of (x + i).
const loopIR = `graph(%x : Tensor, %n : int):
  %true : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %zero : float = prim::Constant[value=0.]()
  %futs : Future[Tensor][] = prim::ListConstruct()
   = prim::Loop(%n, %true)
    block0(%i : int):
      %f : Future[Tensor] = prim::fork_0(%x, %i)
      %l : Future[Tensor][] = aten::append(%futs, %f)
      -> (%true)
  %acc0 : Tensor = aten::mul(%x, %zero)
  %acc : Tensor = prim::Loop(%n, %true, %acc0)
    block0(%j : int, %a.1 : Tensor):
      %fj : Future[Tensor] = aten::__getitem__(%futs, %j)
      %v : Tensor = aten::wait(%fj)
      %a.2 : Tensor = aten::add(%a.1, %v, %one)
      -> (%true, %a.2)
  return (%acc)
with prim::fork_0 = graph(%x : Tensor, %i : int):
  %one : int = prim::Constant[value=1]()
  %r : Tensor = aten::add(%x, %i, %one)
  return (%r)
`

func relu(v float32) float32 { return max(v, 0) }

// forkWant computes forkIR's output for row-major 2x2 x and w by hand.
func forkWant(x, w []float32) []float32 {
	out := make([]float32, 4)
	for i := range 2 {
		for j := range 2 {
			mm := x[2*i]*w[j] + x[2*i+1]*w[2+j]
			k := 2*i + j
			out[k] = relu(mm) + 2*x[k] + relu(3*x[k])
		}
	}
	return out
}

func tensor2x2(v ...float32) ivalue.IValue {
	return ivalue.FromTensor(ivalue.F32Tensor(v, 2, 2))
}

func TestForkResults(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(), goleak.IgnoreTopFunction("github.com/gosr/gosr/fork.(*Pool).worker"))
	x := []float32{1, -2, 0.5, 3}
	w := []float32{-1, 2, 4, -0.25}
	want := forkWant(x, w)
	pool := fork.NewPool(2, 0)
	defer pool.Close()
	launchers := []struct {
		name string
		l    fork.Launcher
	}{
		{"default pool", nil},
		{"own pool", pool},
		{"inline", fork.Inline},
		{"goroutine per task", fork.LauncherFunc(func(task func()) error { go task(); return nil })},
		{"always busy", fork.LauncherFunc(func(func()) error { return fork.ErrBusy })},
	}
	for _, interop := range []int{1, 2} {
		for _, outVariant := range []bool{true, false} {
			opts := staticruntime.DefaultOptions()
			opts.InterOpThreads, opts.EnableOutVariant = interop, outVariant
			m := prepare(t, forkIR, &opts)
			for _, l := range launchers {
				t.Run(fmt.Sprintf("interop%d/out%v/%s", interop, outVariant, l.name), func(t *testing.T) {
					r := m.NewRuntime()
					for run := range 3 {
						fut := r.RunAsync(context.Background(), l.l, tensor2x2(x...), tensor2x2(w...))
						require.True(t, fut.Done(), "RunAsync returns a done future")
						outs, err := fut.Wait(context.Background())
						require.NoError(t, err, "run %d", run)
						assert.InDeltaSlice(t, want, f32(t, outs[0]), 1e-6)
						outs, err = r.Run(tensor2x2(x...), tensor2x2(w...))
						require.NoError(t, err)
						assert.InDeltaSlice(t, want, f32(t, outs[0]), 1e-6)
					}
				})
			}
		}
	}
}

func TestForkNestedAndInLoops(t *testing.T) {
	x := []float32{1, -2, 0.5, 3}
	for _, interop := range []int{1, 2} {
		opts := staticruntime.DefaultOptions()
		opts.InterOpThreads = interop
		t.Run(fmt.Sprintf("nested/interop%d", interop), func(t *testing.T) {
			m := prepareNested(t, &opts)
			for _, n := range m.Nodes() {
				assert.NotEqual(t, "aten::relu_", n.Op, "h is read by the fork: relu must not run in place")
			}
			r := m.NewRuntime()
			for range 3 {
				var outs []ivalue.IValue
				var err error
				within(t, 10*time.Second, func() { outs, err = r.Run(tensor2x2(x...)) })
				require.NoError(t, err)
				want := make([]float32, 4)
				for i, v := range x {
					h := 3 * v
					want[i] = 2*h + (h + 1) + relu(h)
				}
				assert.InDeltaSlice(t, want, f32(t, outs[0]), 1e-6)
			}
		})
		t.Run(fmt.Sprintf("loop/interop%d", interop), func(t *testing.T) {
			m := prepare(t, loopIR, &opts)
			r := m.NewRuntime()
			for _, n := range []int64{3, 5, 1, 0, 5} { // sites grow, then are reused
				outs, err := r.Run(tensor2x2(x...), ivalue.FromInt(n))
				require.NoError(t, err)
				want := make([]float32, 4)
				for i, v := range x {
					for k := range n {
						want[i] += v + float32(k)
					}
				}
				assert.InDeltaSlice(t, want, f32(t, outs[0]), 1e-6, "n=%d", n)
			}
		})
	}
}

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

func TestForkSteadyStateAllocs(t *testing.T) {
	if raceflag.Enabled {
		t.Skip("the race detector allocates")
	}
	x, w := tensor2x2(1, -2, 0.5, 3), tensor2x2(-1, 2, 4, -0.25)
	for _, ir := range []string{forkIR, nestedIR, loopIR} {
		var m *staticruntime.StaticModule
		if ir == nestedIR {
			m = prepareNested(t, nil)
		} else {
			m = prepare(t, ir, nil)
		}
		r := m.NewRuntime()
		args := []ivalue.IValue{x, w}
		if ir == nestedIR {
			args = args[:1]
		} else if ir == loopIR {
			args[1] = ivalue.FromInt(4)
		}
		ctx := context.Background()
		for range 3 {
			_, err := r.Run(args...)
			require.NoError(t, err)
		}
		assert.Zero(t, testing.AllocsPerRun(100, func() { r.Run(args...) }), "Run")
		assert.Zero(t, testing.AllocsPerRun(100, func() { r.RunContext(ctx, args...) }), "RunContext")
		assert.Zero(t, testing.AllocsPerRun(100, func() { r.RunAsync(ctx, fork.Inline, args...).Wait(ctx) }), "RunAsync")
	}
}

// A forked task that fails: the caller gets the failing node of the
// subgraph, the fork and the wait, and the runtime works afterwards.
func TestForkErrorReachesCaller(t *testing.T) {
	m := prepare(t, forkIR, nil)
	r := m.NewRuntime()
	bad := ivalue.FromTensor(ivalue.F32Tensor([]float32{1, 2, 3}, 3, 1)) // 2x2 @ 3x1
	_, err := r.Run(tensor2x2(1, 2, 3, 4), bad)
	require.Error(t, err)
	msg := err.Error()
	assert.Contains(t, msg, "aten::wait")
	assert.Contains(t, msg, "in the task forked by")
	assert.Contains(t, msg, "prim::fork")
	assert.Contains(t, msg, "aten::mm")
	var ne *staticruntime.NodeError
	require.ErrorAs(t, err, &ne)
	assert.Equal(t, "aten::wait", ne.Op)

	x, w := []float32{1, -2, 0.5, 3}, []float32{-1, 2, 4, -0.25}
	outs, err := r.Run(tensor2x2(x...), tensor2x2(w...))
	require.NoError(t, err)
	assert.InDeltaSlice(t, forkWant(x, w), f32(t, outs[0]), 1e-6)
}

func TestForkLauncherRefuses(t *testing.T) {
	m := prepare(t, forkIR, nil)
	r := m.NewRuntime()
	x, w := tensor2x2(1, -2, 0.5, 3), tensor2x2(-1, 2, 4, -0.25)
	refuse := fork.LauncherFunc(func(func()) error { return errors.New("shutting down") })
	_, err := r.RunAsync(context.Background(), refuse, x, w).Wait(context.Background())
	require.Error(t, err)
	var re *fork.RefusedError
	require.ErrorAs(t, err, &re)
	assert.Contains(t, err.Error(), "shutting down")
	assert.Contains(t, err.Error(), "prim::fork")
	_, err = r.Run(x, w)
	require.NoError(t, err)
}

// Cancelling: a fork not yet started never starts, the run returns the
// context's error, and the next run works.
func TestForkCancel(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(), goleak.IgnoreTopFunction("github.com/gosr/gosr/fork.(*Pool).worker"))
	m := prepare(t, forkIR, nil)
	r := m.NewRuntime()
	xs, ws := []float32{1, -2, 0.5, 3}, []float32{-1, 2, 4, -0.25}
	x, w := tensor2x2(xs...), tensor2x2(ws...)

	ctx, cancel := context.WithCancel(context.Background())
	var started atomic.Int32
	var wg sync.WaitGroup
	// The launcher's worker only gets to the tasks after the cancel.
	late := fork.LauncherFunc(func(task func()) error {
		cancel()
		wg.Add(1)
		go func() { defer wg.Done(); started.Add(1); task() }()
		return nil
	})
	_, err := r.RunAsync(ctx, late, x, w).Wait(context.Background())
	require.Error(t, err)
	assert.ErrorIs(t, err, context.Canceled)
	wg.Wait()

	outs, err := r.Run(x, w)
	require.NoError(t, err)
	assert.InDeltaSlice(t, forkWant(xs, ws), f32(t, outs[0]), 1e-6)

	// Already cancelled: nothing runs.
	_, err = r.RunContext(ctx, x, w)
	assert.ErrorIs(t, err, context.Canceled)
}

// A long loop stops soon after its deadline, between nodes.
func TestRunContextDeadline(t *testing.T) {
	m := prepare(t, loopIfIR, nil)
	r := m.NewRuntime()
	x := ivalue.FromTensor(ivalue.F32Tensor([]float32{1, 2}, 2))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, err := r.RunContext(ctx, x, ivalue.FromInt(1<<40))
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(t0), 5*time.Second)
	_, err = r.Run(x, ivalue.FromInt(3))
	require.NoError(t, err)
}

// 8 goroutines share a module through a pool, with one inter-op worker
// and nested forks: no deadlock, and every output equals a single-
// threaded run's, bit for bit.
func TestForkManyGoroutines(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent(), goleak.IgnoreTopFunction("github.com/gosr/gosr/fork.(*Pool).worker"))
	opts := staticruntime.DefaultOptions()
	opts.InterOpThreads = 1
	m := prepareNested(t, &opts)
	inputs := make([]ivalue.IValue, 5)
	wants := make([][]float32, len(inputs))
	ref := m.NewRuntime()
	for i := range inputs {
		n := 1 + 3*i // mixed shapes
		v := make([]float32, n)
		for k := range v {
			v[k] = float32(k-i) * 0.37
		}
		inputs[i] = ivalue.FromTensor(ivalue.F32Tensor(v, n))
		outs, err := ref.Run(inputs[i])
		require.NoError(t, err)
		wants[i] = f32(t, outs[0])
	}
	p := staticruntime.NewPool(m, 3)
	iters := 1000
	if raceflag.Enabled {
		iters = 100
	}
	var wg sync.WaitGroup
	within(t, 60*time.Second, func() {
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for k := range iters {
					i := (g + k) % len(inputs)
					err := p.Do(context.Background(), func(r *staticruntime.StaticRuntime) error {
						outs, err := r.Run(inputs[i])
						if err != nil {
							return err
						}
						got := outs[0].Tensor().F32Contig()
						if len(got) != len(wants[i]) {
							return fmt.Errorf("input %d: %d values, want %d", i, len(got), len(wants[i]))
						}
						for j := range got {
							if got[j] != wants[i][j] {
								return fmt.Errorf("input %d: value %d is %v, want %v", i, j, got[j], wants[i][j])
							}
						}
						return nil
					})
					if !assert.NoError(t, err) {
						return
					}
				}
			}()
		}
		wg.Wait()
	})
}

// A pool asked for more runtimes than its bound: the extra Get fails when
// its context ends instead of blocking forever.
func TestPoolBound(t *testing.T) {
	m := prepare(t, forkIR, nil)
	p := staticruntime.NewPool(m, 1)
	r, err := p.Get(context.Background())
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	within(t, 5*time.Second, func() {
		_, err := p.Get(ctx)
		assert.ErrorIs(t, err, context.DeadlineExceeded)
	})
	require.NoError(t, p.Put(r))
	assert.Error(t, p.Put(r), "a second Put is refused")
	r2, err := p.Get(context.Background())
	require.NoError(t, err)
	assert.Same(t, r, r2, "the runtime is reused")
}

// An output that is a forked task's result, kept past the next run with
// managed outputs, stays intact (the task's runtime is detached too).
func TestForkKeptOutput(t *testing.T) {
	const ir = `graph(%x : Tensor):
  %f : Future[Tensor] = prim::fork_0(%x)
  %a : Tensor = aten::wait(%f)
  return (%a)
with prim::fork_0 = graph(%x : Tensor):
  %two : float = prim::Constant[value=2.]()
  %m : Tensor = aten::mul(%x, %two)
  return (%m)
`
	opts := staticruntime.DefaultOptions()
	opts.ManageOutputTensors = true
	r := prepare(t, ir, &opts).NewRuntime()
	outs, err := r.Run(tensor2x2(1, 2, 3, 4))
	require.NoError(t, err)
	kept := outs[0]
	_, err = r.Run(tensor2x2(10, 20, 30, 40)) // not released: kept is the caller's
	require.NoError(t, err)
	assert.Equal(t, []float32{2, 4, 6, 8}, f32(t, kept))
	outs, err = r.Run(tensor2x2(5, 6, 7, 8))
	require.NoError(t, err)
	assert.Equal(t, []float32{10, 12, 14, 16}, f32(t, outs[0]))
	assert.Equal(t, []float32{2, 4, 6, 8}, f32(t, kept))
}

// The per-op benchmark runs forks too (on the inter-op pool), and times
// the waits.
func TestBenchmarkIndividualOpsWithForks(t *testing.T) {
	for _, manage := range []bool{false, true} {
		opts := staticruntime.DefaultOptions()
		opts.ManageOutputTensors = manage
		r := prepare(t, forkIR, &opts).NewRuntime()
		x, w := tensor2x2(1, -2, 0.5, 3), tensor2x2(-1, 2, 4, -0.25)
		met, err := r.BenchmarkIndividualOps([]ivalue.IValue{x, w}, 2, 5)
		require.NoError(t, err)
		assert.Equal(t, 2, met.InstancesPerOp["prim::fork"])
		assert.Equal(t, 2, met.InstancesPerOp["aten::wait"])
		outs, err := r.Run(x, w)
		require.NoError(t, err)
		assert.InDeltaSlice(t, forkWant([]float32{1, -2, 0.5, 3}, []float32{-1, 2, 4, -0.25}), f32(t, outs[0]), 1e-6)
	}
}
