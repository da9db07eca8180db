package staticruntime_test

import (
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gosr/gosr/internal/raceflag"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops/gemm"
	"github.com/gosr/gosr/staticruntime"
)

// convNetIR is a small CNN whose products are large enough to be split
// across an intra-op team: a 3x3 convolution over a 32x32 image (the
// channel-blocked path, split by output blocks), a strided one, a 1x1
// one, and a 3x3 one over a
// 4x4 map with many output channels (split along its rows), then a
// linear over the batch.
const convNetIR = `graph(%x : Tensor):
  %w1 : Tensor = prim::Constant[value=<Tensor>]()
  %b1 : Tensor = prim::Constant[value=<Tensor>]()
  %w2 : Tensor = prim::Constant[value=<Tensor>]()
  %w3 : Tensor = prim::Constant[value=<Tensor>]()
  %w4 : Tensor = prim::Constant[value=<Tensor>]()
  %wl : Tensor = prim::Constant[value=<Tensor>]()
  %none : NoneType = prim::Constant()
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %2 : int = prim::Constant[value=2]()
  %4 : int = prim::Constant[value=4]()
  %last : int = prim::Constant[value=-1]()
  %s1 : int[] = prim::ListConstruct(%1, %1)
  %s2 : int[] = prim::ListConstruct(%2, %2)
  %p0 : int[] = prim::ListConstruct(%0, %0)
  %p1 : int[] = prim::ListConstruct(%1, %1)
  %o4 : int[] = prim::ListConstruct(%4, %4)
  %c1 : Tensor = aten::conv2d(%x, %w1, %b1, %s1, %p1, %s1, %1)
  %r1 : Tensor = aten::relu(%c1)
  %c2 : Tensor = aten::conv2d(%r1, %w2, %none, %s2, %p1, %s1, %1)
  %r2 : Tensor = aten::relu(%c2)
  %c3 : Tensor = aten::conv2d(%r2, %w3, %none, %s1, %p0, %s1, %1)
  %a : Tensor = aten::adaptive_avg_pool2d(%c3, %o4)
  %c4 : Tensor = aten::conv2d(%a, %w4, %none, %s1, %p1, %s1, %1)
  %f : Tensor = aten::flatten(%c4, %2, %last)
  %l : Tensor = aten::linear(%f, %wl, %none)
  return (%l)
`

func randTensor(r *rand.Rand, sizes ...int) *ivalue.Tensor {
	n := 1
	for _, s := range sizes {
		n *= s
	}
	d := make([]float32, n)
	for i := range d {
		d[i] = float32(r.NormFloat64()) * 0.1
	}
	return ivalue.F32Tensor(d, sizes...)
}

// convNet prepares convNetIR with random weights and intra-op threads,
// every node split where the kernels may split it (no calibration).
func convNet(t testing.TB, threads int) *staticruntime.StaticModule {
	opts := staticruntime.DefaultOptions()
	opts.IntraOpThreads = threads
	opts.IntraOpCalibrationRuns = -1
	return convNetOpts(t, opts)
}

// convNetOneThread is convNet's input and its output with one thread.
func convNetOneThread(t testing.TB) (ivalue.IValue, []float32) {
	x := ivalue.FromTensor(randTensor(rand.New(rand.NewSource(2)), 2, 16, 32, 32))
	one := convNet(t, 1)
	defer one.Close()
	outs, err := one.NewRuntime().Run(x)
	require.NoError(t, err)
	return x, f32(t, outs[0])
}

// convNetOpts is convNet with options of the caller's.
func convNetOpts(t testing.TB, opts staticruntime.Options) *staticruntime.StaticModule {
	r := rand.New(rand.NewSource(1))
	return prepare(t, convNetIR, &opts,
		randTensor(r, 64, 16, 3, 3), randTensor(r, 64),
		randTensor(r, 128, 64, 3, 3), randTensor(r, 256, 128, 1, 1),
		randTensor(r, 320, 256, 3, 3), randTensor(r, 100, 16))
}

// withProcs raises GOMAXPROCS to n for the test: teams are capped at it.
func withProcs(t *testing.T, n int) {
	saved := runtime.GOMAXPROCS(max(n, runtime.GOMAXPROCS(0)))
	t.Cleanup(func() { runtime.GOMAXPROCS(saved) })
}

// TestIntraOpThreadsSameResult: splitting the convolutions' products
// across 2 or 3 goroutines changes no bit of the outputs, run after run.
func TestIntraOpThreadsSameResult(t *testing.T) {
	withProcs(t, 3)
	x, want := convNetOneThread(t)
	require.Len(t, want, 2*320*100)
	// The pointwise convolution, per image, is a gemm product, or with
	// AVX-512 a split op of the rows kernel (gemm.PointwiseRows).
	products, ops := int64(3), int64(6)
	if gemm.HasRows() {
		products, ops = 1, 8
	}
	for _, threads := range []int{2, 3} {
		m := convNet(t, threads)
		r := m.NewRuntime()
		for run := range 3 {
			splits, opSplits := staticruntime.Splits(r), staticruntime.OpSplits(r)
			outs, err := r.Run(x)
			require.NoError(t, err)
			// The linear (and the pointwise convolution per image); the
			// 3x3 ones (channel-blocked, see ops/conv_blocked.go; the
			// strided one and the last, on its 4x4 map, flat) share
			// their output blocks out as ops.
			require.Equal(t, products, staticruntime.Splits(r)-splits, "products split in run %d", run)
			require.GreaterOrEqual(t, staticruntime.OpSplits(r)-opSplits, ops, "ops split in run %d", run)
			got := f32(t, outs[0])
			for i := range want {
				if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
					require.Failf(t, "result differs", "%d threads, run %d: element %d is %v, one thread gives %v", threads, run, i, got[i], want[i])
				}
			}
		}
		m.Close()
	}
}

// TestIntraOpThreadsSteadyAllocs: a steady run with 2 threads allocates
// nothing: the team is started with the runtime, the split state reused.
func TestIntraOpThreadsSteadyAllocs(t *testing.T) {
	if raceflag.Enabled {
		t.Skip("the race detector allocates")
	}
	withProcs(t, 2)
	m := convNet(t, 2)
	defer m.Close()
	r := m.NewRuntime()
	x := ivalue.FromTensor(randTensor(rand.New(rand.NewSource(3)), 1, 16, 32, 32))
	_, err := r.Run(x)
	require.NoError(t, err)
	assert.Zero(t, testing.AllocsPerRun(10, func() { r.Run(x) }))
}

// TestIntraOpThreadsStop: a runtime's helpers stop when its module is
// closed, and when the runtime is collected without a Close; runtimes of
// a pool, run at once, each have their own.
func TestIntraOpThreadsStop(t *testing.T) {
	withProcs(t, 2)
	base := goleak.IgnoreCurrent()
	x := ivalue.FromTensor(randTensor(rand.New(rand.NewSource(4)), 1, 16, 32, 32))

	m := convNet(t, 2)
	before := runtime.NumGoroutine()
	pool := staticruntime.NewPool(m, 2)
	// Both runtimes held at once, so the pool makes two (goroutines
	// calling pool.Run could, on a loaded machine, take turns with one),
	// each run on its own goroutine.
	var rts [2]*staticruntime.StaticRuntime
	for i := range rts {
		r, err := pool.Get(t.Context())
		require.NoError(t, err)
		rts[i] = r
	}
	errs := make(chan error)
	for _, r := range rts {
		go func() {
			var err error
			for range 3 {
				if _, e := r.Run(x); e != nil {
					err = e
				}
			}
			errs <- err
		}()
	}
	for range 2 {
		require.NoError(t, <-errs)
	}
	for _, r := range rts {
		require.NoError(t, pool.Put(r))
	}
	// The runners may not have exited yet: wait for the count to settle.
	for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() != before+2 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	assert.Equal(t, before+2, runtime.NumGoroutine(), "a helper per runtime of the pool")
	require.NoError(t, m.Close())
	goleak.VerifyNone(t, base)

	// A runtime dropped without closing its module stops its helper when
	// collected.
	m = convNet(t, 2)
	defer m.Close()
	r := m.NewRuntime()
	_, err := r.Run(x)
	require.NoError(t, err)
	r = nil
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	goleak.VerifyNone(t, base)
	_ = r
}

// BenchmarkIntraOpThreads runs convNetIR with 1 and 2 intra-op threads.
func BenchmarkIntraOpThreads(b *testing.B) {
	x := ivalue.FromTensor(randTensor(rand.New(rand.NewSource(5)), 1, 16, 32, 32))
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			m := convNet(b, threads)
			defer m.Close()
			r := m.NewRuntime()
			for range b.N {
				if _, err := r.Run(x); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// actNetIR: the ops besides products that a team splits, on a
// 2x64x32x32 map (131,072 elements): an in-place relu and relu6, a max
// pooling (planes), adds of two maps and of a scalar, a multiply.
const actNetIR = `graph(%x : Tensor, %y : Tensor):
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %2 : int = prim::Constant[value=2]()
  %3 : int = prim::Constant[value=3]()
  %zero : float = prim::Constant[value=0.]()
  %six : float = prim::Constant[value=6.]()
  %half : float = prim::Constant[value=0.5]()
  %false : bool = prim::Constant[value=0]()
  %k3 : int[] = prim::ListConstruct(%3, %3)
  %s1 : int[] = prim::ListConstruct(%1, %1)
  %s2 : int[] = prim::ListConstruct(%2, %2)
  %p1 : int[] = prim::ListConstruct(%1, %1)
  %a : Tensor = aten::mul(%x, %y)
  %r : Tensor = aten::relu_(%a)
  %m : Tensor = aten::max_pool2d(%r, %k3, %s1, %p1, %s1, %false)
  %s : Tensor = aten::add(%m, %y, %2)
  %h : Tensor = aten::hardtanh_(%s, %zero, %six)
  %t : Tensor = aten::add(%h, %half, %1)
  %d : Tensor = aten::max_pool2d(%t, %k3, %s2, %p1, %s1, %false)
  return (%t, %d)
`

// TestIntraOpThreadsOps: the elementwise ops and poolings split across 2
// or 3 goroutines give the bits one gives, split every run, and a steady
// run allocates nothing.
func TestIntraOpThreadsOps(t *testing.T) {
	withProcs(t, 3)
	r := rand.New(rand.NewSource(4))
	x := ivalue.FromTensor(randTensor(r, 2, 64, 32, 32))
	y := ivalue.FromTensor(randTensor(r, 2, 64, 32, 32))
	one := prepare(t, actNetIR, nil).NewRuntime()
	outs, err := one.Run(x, y)
	require.NoError(t, err)
	wantOut := [][]float32{f32(t, outs[0]), f32(t, outs[1])}
	require.Equal(t, int64(0), staticruntime.OpSplits(one))
	for _, threads := range []int{2, 3} {
		opts := staticruntime.DefaultOptions()
		opts.IntraOpThreads = threads
		// The kernels' own splits: every node splits where it may.
		opts.IntraOpCalibrationRuns = -1
		m := prepare(t, actNetIR, &opts)
		rt := m.NewRuntime()
		for run := range 3 {
			before := staticruntime.OpSplits(rt)
			outs, err := rt.Run(x, y)
			require.NoError(t, err)
			// mul, relu_, two max_pool2d, two adds, hardtanh_, every
			// run: with intra-op threads the plan never has a pooling
			// write over its input, where its planes would go in order
			// on one goroutine (see [Serial overwrites]).
			assert.Equal(t, int64(7), staticruntime.OpSplits(rt)-before, "%d threads, run %d", threads, run)
			for k := range wantOut {
				got := f32(t, outs[k])
				require.Len(t, got, len(wantOut[k]))
				for i := range got {
					if math.Float32bits(wantOut[k][i]) != math.Float32bits(got[i]) {
						require.Failf(t, "result differs", "%d threads, run %d, output %d: element %d is %v, one thread gives %v", threads, run, k, i, got[i], wantOut[k][i])
					}
				}
			}
		}
		if !raceflag.Enabled {
			assert.Zero(t, testing.AllocsPerRun(10, func() { rt.Run(x, y) }), "%d threads", threads)
		}
		m.Close()
	}
}

// blockedNetIR is a depthwise convolution (stride 1, then stride 2) and
// a grouped one of groups of 8, the channel-blocked paths, each with an
// activation.
const blockedNetIR = `graph(%x : Tensor):
  %wd : Tensor = prim::Constant[value=<Tensor>]()
  %bd : Tensor = prim::Constant[value=<Tensor>]()
  %wd2 : Tensor = prim::Constant[value=<Tensor>]()
  %wg : Tensor = prim::Constant[value=<Tensor>]()
  %none : NoneType = prim::Constant()
  %1 : int = prim::Constant[value=1]()
  %2 : int = prim::Constant[value=2]()
  %8 : int = prim::Constant[value=8]()
  %64 : int = prim::Constant[value=64]()
  %s1 : int[] = prim::ListConstruct(%1, %1)
  %s2 : int[] = prim::ListConstruct(%2, %2)
  %p1 : int[] = prim::ListConstruct(%1, %1)
  %c1 : Tensor = aten::conv2d(%x, %wd, %bd, %s1, %p1, %s1, %64)
  %r1 : Tensor = aten::silu(%c1)
  %c2 : Tensor = aten::conv2d(%r1, %wd2, %none, %s2, %p1, %s1, %64)
  %r2 : Tensor = aten::relu(%c2)
  %c3 : Tensor = aten::conv2d(%r2, %wg, %none, %s1, %p1, %s1, %8)
  %r3 : Tensor = aten::relu(%c3)
  return (%r3)
`

// TestIntraOpThreadsBlockedConvs: the depthwise and grouped
// convolutions' channel blocks shared across 2 goroutines give the bits
// one gives, and a steady run allocates nothing.
func TestIntraOpThreadsBlockedConvs(t *testing.T) {
	withProcs(t, 2)
	x := ivalue.FromTensor(randTensor(rand.New(rand.NewSource(5)), 2, 64, 40, 40))
	var want []float32
	for _, threads := range []int{1, 2} {
		r := rand.New(rand.NewSource(6))
		opts := staticruntime.DefaultOptions()
		opts.IntraOpThreads = threads
		// The kernels' own splits: every node splits where it may.
		opts.IntraOpCalibrationRuns = -1
		m := prepare(t, blockedNetIR, &opts, randTensor(r, 64, 1, 3, 3), randTensor(r, 64),
			randTensor(r, 64, 1, 3, 3), randTensor(r, 64, 8, 3, 3))
		rt := m.NewRuntime()
		outs, err := rt.Run(x)
		require.NoError(t, err)
		got := f32(t, outs[0])
		require.Len(t, got, 2*64*20*20)
		if threads == 1 {
			want = got
		} else {
			for i := range want {
				if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
					require.Failf(t, "result differs", "element %d is %v with 2 threads, %v with one", i, got[i], want[i])
				}
			}
		}
		if !raceflag.Enabled {
			assert.Zero(t, testing.AllocsPerRun(10, func() { rt.Run(x) }), "%d threads", threads)
		}
		m.Close()
	}
}
