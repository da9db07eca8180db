package serve

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/gosr/gosr/builtin"
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/internal/fixture"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/staticruntime"
)

// batchLog records the batches an exec ran: their rows, and their first
// input's dims after the first (the batch's shape class).
type batchLog struct {
	mu      sync.Mutex
	rows    []int
	classes []string
}

func (l *batchLog) add(inputs []*ivalue.Tensor) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.rows = append(l.rows, inputs[0].Size(0))
	l.classes = append(l.classes, batchClass(inputs))
}

func (l *batchLog) batches() []int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]int(nil), l.rows...)
}

func batchClass(inputs []*ivalue.Tensor) string {
	s := ""
	for _, t := range inputs {
		s += fmt.Sprintf("%s%v;", t.DType(), t.Sizes()[1:])
	}
	return s
}

// identity is an exec whose outputs are copies of its inputs: a request's
// outputs must then be its own inputs, byte for byte.
func identityExec(log *batchLog) batchExec {
	return func(_ context.Context, inputs []*ivalue.Tensor) ([]*ivalue.Tensor, error) {
		if log != nil {
			log.add(inputs)
		}
		outs := make([]*ivalue.Tensor, len(inputs))
		for i, t := range inputs {
			c, err := t.CloneErr()
			if err != nil {
				return nil, err
			}
			outs[i] = c
		}
		return outs, nil
	}
}

// gatedExec runs identity, but a batch whose first input has trailing dims
// [1] (a "blocker") first signals entered and waits for release: the
// worker is busy while the test fills the queue.
type gatedExec struct {
	entered chan struct{}
	release chan struct{}
	log     batchLog
}

func newGatedExec() *gatedExec {
	return &gatedExec{entered: make(chan struct{}, 16), release: make(chan struct{})}
}

func (g *gatedExec) exec(ctx context.Context, inputs []*ivalue.Tensor) ([]*ivalue.Tensor, error) {
	if in := inputs[0]; in.Dim() == 2 && in.Size(1) == 1 {
		g.entered <- struct{}{}
		<-g.release
	}
	return identityExec(&g.log)(ctx, inputs)
}

// blockerInputs is a request of max rows: a full batch, which runs at once.
func blockerInputs(max int) []*ivalue.Tensor {
	return []*ivalue.Tensor{ivalue.NewTensor(ivalue.Float32, max, 1)}
}

// filledTensor is a tensor of dt and sizes whose elements are seed, seed+1, ...
// (wrapping within each dtype's range).
func filledTensor(dt ivalue.DType, seed int, sizes ...int) *ivalue.Tensor {
	t := ivalue.NewTensor(dt, sizes...)
	for i := range t.Numel() {
		v := float64((seed + i) % 100)
		if dt == ivalue.Bool {
			v = float64((seed + i) % 2)
		}
		fixture.SetElem(t, i, v)
	}
	return t
}

// assertSameElems asserts that got holds want's elements (assert, not require:
// it runs in submitting goroutines too).
func assertSameElems(t *testing.T, want, got *ivalue.Tensor, msg string) bool {
	t.Helper()
	if !assert.NotNil(t, got, msg) || !assert.Equal(t, want.DType(), got.DType(), msg) || !assert.Equal(t, want.Sizes(), got.Sizes(), msg) {
		return false
	}
	w, err := contiguous(want)
	if !assert.NoError(t, err) {
		return false
	}
	g, err := contiguous(got)
	if !assert.NoError(t, err) {
		return false
	}
	return assert.True(t, bytes.Equal(rawBytes(w), rawBytes(g)), "%s: the bytes differ", msg)
}

// atOffset is a contiguous copy of t placed off elements into its storage.
func atOffset(t *ivalue.Tensor, off int) *ivalue.Tensor {
	es := t.DType().Size()
	s := ivalue.NewStorage((off + t.Numel()) * es)
	v, err := ivalue.FromStorage(t.DType(), s, off, t.Sizes(), nil)
	if err != nil {
		panic(err) // the geometry is ours
	}
	copy(s.Data[off*es:], rawBytes(t))
	return v
}

// submitResult is what submit returned.
type submitResult struct {
	outs   []*ivalue.Tensor
	queued time.Duration
	err    error
}

// goSubmit submits in a goroutine; the result arrives on the channel.
func goSubmit(ctx context.Context, b *batcher, inputs []*ivalue.Tensor) chan submitResult {
	c := make(chan submitResult, 1)
	go func() {
		outs, q, err := b.submit(ctx, inputs)
		c <- submitResult{outs, q, err}
	}()
	return c
}

// waitQueued waits until n requests are queued.
func waitQueued(t *testing.T, b *batcher, n int) {
	t.Helper()
	require.Eventually(t, func() bool { return b.pending() == n }, 5*time.Second, time.Millisecond,
		"want %d queued requests", n)
}

// startBlockedBatcher makes a batcher on g with one worker, and occupies that
// worker with a blocker request (whose result arrives on the channel).
func startBlockedBatcher(t *testing.T, g *gatedExec, o batcherOptions) (*batcher, chan submitResult) {
	t.Helper()
	o.Workers = 1
	b := newBatcher(o, g.exec)
	t.Cleanup(b.close)
	blocked := goSubmit(context.Background(), b, blockerInputs(o.MaxBatchSize))
	<-g.entered
	return b, blocked
}

// mlpBatchExec prepares the built-in mlp and returns an exec running it on a
// pool of n runtimes, and a runtime to run requests alone on.
func mlpBatchExec(t *testing.T, n int, log *batchLog) (batchExec, *staticruntime.StaticRuntime) {
	c, err := builtin.Load("mlp")
	require.NoError(t, err)
	g, err := graph.Parse(c.IR, &graph.ParseOptions{Tensors: c.Consts})
	require.NoError(t, err)
	m, err := staticruntime.NewStaticModule(g, nil)
	require.NoError(t, err)
	pool := staticruntime.NewPool(m, n)
	exec := func(ctx context.Context, inputs []*ivalue.Tensor) ([]*ivalue.Tensor, error) {
		log.add(inputs)
		var outs []*ivalue.Tensor
		err := pool.Do(ctx, func(r *staticruntime.StaticRuntime) error {
			o, err := r.RunContext(ctx, ivalue.FromTensor(inputs[0]))
			if err != nil {
				return err
			}
			outs = []*ivalue.Tensor{o[0].Tensor().Clone()}
			return nil
		})
		return outs, err
	}
	return exec, m.NewRuntime()
}

func TestBatcherMatchesUnbatchedMLP(t *testing.T) {
	for _, tc := range []struct {
		name    string
		o       batcherOptions
		clients int
	}{
		{"one worker", batcherOptions{MaxBatchSize: 16, MaxQueueDelay: 2 * time.Millisecond, Workers: 1}, 32},
		{"two workers, preferred 8", batcherOptions{MaxBatchSize: 32, MaxQueueDelay: 5 * time.Millisecond, PreferredBatchSizes: []int{8}, Workers: 2}, 32},
		{"no delay", batcherOptions{MaxBatchSize: 8, Workers: 2}, 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var log batchLog
			exec, alone := mlpBatchExec(t, tc.o.Workers, &log)
			b := newBatcher(tc.o, exec)
			defer b.close()

			rng := rand.New(rand.NewPCG(1, 2))
			inputs := make([]*ivalue.Tensor, tc.clients)
			want := make([]*ivalue.Tensor, tc.clients)
			totalRows := 0
			for i := range inputs {
				rows := 1 + rng.IntN(4)
				totalRows += rows
				x := ivalue.NewTensor(ivalue.Float32, rows, 64)
				for k := range x.F32() {
					x.F32()[k] = float32(rng.NormFloat64())
				}
				if i%3 == 0 {
					x = fixture.NonContiguous(x)
				}
				inputs[i] = x
				o, err := alone.Run(ivalue.FromTensor(x))
				require.NoError(t, err)
				want[i] = o[0].Tensor().Clone()
			}

			got := make([]submitResult, tc.clients)
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range inputs {
				wg.Go(func() {
					<-start
					outs, q, err := b.submit(context.Background(), []*ivalue.Tensor{inputs[i]})
					got[i] = submitResult{outs, q, err}
				})
			}
			close(start)
			wg.Wait()

			for i, r := range got {
				require.NoError(t, r.err, "request %d", i)
				require.Len(t, r.outs, 1)
				require.Equal(t, want[i].Sizes(), r.outs[0].Sizes(), "request %d", i)
				scale := 0.0
				for _, v := range want[i].Float64s() {
					scale = max(scale, math.Abs(v))
				}
				diff := fixture.MaxAbsDiff([]*ivalue.Tensor{r.outs[0]}, []*ivalue.Tensor{want[i]})
				assert.LessOrEqual(t, diff, 1e-6*scale, "request %d: max |batched - alone| against the output's scale %g", i, scale)
			}
			rows := log.batches()
			sum := 0
			for _, n := range rows {
				assert.LessOrEqual(t, n, tc.o.MaxBatchSize)
				sum += n
			}
			assert.Equal(t, totalRows, sum, "every row ran once")
			if tc.o.MaxQueueDelay > 0 {
				assert.Less(t, len(rows), tc.clients, "some requests shared a batch")
			}
		})
	}
}

func TestBatcherConcatSplitDTypes(t *testing.T) {
	for _, d := range datatypes {
		t.Run(d.name, func(t *testing.T) {
			var log batchLog
			// Three requests of 1+2+3 rows fill MaxBatchSize 6: one batch, at once.
			b := newBatcher(batcherOptions{MaxBatchSize: 6, MaxQueueDelay: time.Hour}, identityExec(&log))
			defer b.close()
			var reqs [][]*ivalue.Tensor
			var results []chan submitResult
			for i, rows := range []int{1, 2, 3} {
				x := filledTensor(d.dt, 10*i, rows, 2, 3)
				y := filledTensor(ivalue.Int64, 7*i, rows)
				switch i {
				case 0:
					x = fixture.NonContiguous(x)
				case 2:
					x = atOffset(x, 5) // contiguous, but not at its storage's start
				}
				reqs = append(reqs, []*ivalue.Tensor{x, y})
				results = append(results, goSubmit(context.Background(), b, reqs[i]))
			}
			for i, c := range results {
				r := <-c
				require.NoError(t, r.err)
				require.Len(t, r.outs, 2)
				for j := range r.outs {
					assertSameElems(t, reqs[i][j], r.outs[j], fmt.Sprintf("request %d output %d", i, j))
				}
			}
			assert.Equal(t, []int{6}, log.batches())
		})
	}
}

// TestBatcherDelayBound checks that no request waits in the queue longer
// than MaxQueueDelay while a worker is free. Its clock is a control timer
// of MaxQueueDelay started with each request: on a loaded machine every
// timer fires late, the batcher's as well as this one, so the bound is
// the control timer's actual wait plus a small slack. A thread the OS
// leaves unscheduled for a while still breaks that now and then, and
// independently of the batcher, so a case passes when one of three
// rounds keeps the bound; a batcher that overshoots fails all three.
func TestBatcherDelayBound(t *testing.T) {
	const slack, rounds = 10 * time.Millisecond, 3
	for _, tc := range []struct {
		name  string
		delay time.Duration
		gap   time.Duration // between arrivals
		n     int
	}{
		{"alone", 30 * time.Millisecond, 0, 1},
		{"a stream", 30 * time.Millisecond, 8 * time.Millisecond, 8},
		{"no delay", 0, 2 * time.Millisecond, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var late []string
			for round := range rounds {
				var log batchLog
				b := newBatcher(batcherOptions{MaxBatchSize: 64, MaxQueueDelay: tc.delay, Workers: 1}, identityExec(&log))
				queued, control := make([]time.Duration, tc.n), make([]time.Duration, tc.n)
				var wg sync.WaitGroup
				for i := range tc.n {
					wg.Go(func() {
						in := []*ivalue.Tensor{filledTensor(ivalue.Float32, i, 1, 4)}
						fired := make(chan time.Duration, 1)
						start := time.Now()
						time.AfterFunc(tc.delay, func() { fired <- time.Since(start) })
						_, q, err := b.submit(context.Background(), in)
						assert.NoError(t, err)
						queued[i], control[i] = q, <-fired
					})
					time.Sleep(tc.gap)
				}
				wg.Wait()
				b.close()
				if tc.n == 1 {
					// Nothing else came: it waited out the whole delay for company.
					assert.GreaterOrEqual(t, queued[0], tc.delay)
				}
				if tc.delay > 0 && tc.n > 1 {
					assert.Less(t, len(log.batches()), tc.n, "arrivals within the delay shared a batch")
				}
				before := len(late)
				for i := range queued {
					if queued[i] > control[i]+slack {
						late = append(late, fmt.Sprintf("round %d: request %d was queued %v; its control timer of %v fired after %v",
							round, i, queued[i], tc.delay, control[i]))
					}
				}
				if len(late) == before {
					return
				}
			}
			t.Errorf("a request waited past the delay in every round:\n%s", strings.Join(late, "\n"))
		})
	}
}

func TestBatcherPreferredSizes(t *testing.T) {
	for _, tc := range []struct {
		name      string
		preferred []int
		max       int
		queued    int   // single-row requests waiting when the worker frees
		before    []int // batches before close (delay is an hour)
		after     []int // batches close runs
	}{
		{"reaches 2", []int{2}, 8, 2, []int{2}, nil},
		{"largest that can be had", []int{2, 4}, 8, 5, []int{4}, []int{1}},
		{"over max ignored", []int{3, 16}, 8, 4, []int{3}, []int{1}},
		{"full before preferred", []int{2}, 3, 7, []int{3, 3}, []int{1}},
		{"none reached", []int{4}, 8, 3, nil, []int{3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGatedExec()
			b, blocked := startBlockedBatcher(t, g, batcherOptions{MaxBatchSize: tc.max, MaxQueueDelay: time.Hour, PreferredBatchSizes: tc.preferred})
			var results []chan submitResult
			for i := range tc.queued {
				results = append(results, goSubmit(context.Background(), b, []*ivalue.Tensor{filledTensor(ivalue.Float32, i, 1, 2)}))
			}
			waitQueued(t, b, tc.queued)
			close(g.release)
			require.NoError(t, (<-blocked).err)
			left := 0
			for _, n := range tc.after {
				left += n
			}
			waitQueued(t, b, left)
			require.Eventually(t, func() bool { return len(g.log.batches()) >= 1+len(tc.before) }, 5*time.Second, time.Millisecond)
			time.Sleep(10 * time.Millisecond) // time for a batch too many to show
			assert.Equal(t, append([]int{tc.max}, tc.before...), g.log.batches(), "blocker, then the batches that did not wait")
			b.close()
			assert.Equal(t, append(append([]int{tc.max}, tc.before...), tc.after...), g.log.batches())
			for _, c := range results {
				require.NoError(t, (<-c).err)
			}
		})
	}
}

func TestBatcherMaxBatchSize(t *testing.T) {
	const max, n = 5, 64
	var log batchLog
	b := newBatcher(batcherOptions{MaxBatchSize: max, MaxQueueDelay: 2 * time.Millisecond, Workers: 2}, identityExec(&log))
	defer b.close()
	rng := rand.New(rand.NewPCG(3, 4))
	inputs := make([]*ivalue.Tensor, n)
	total := 0
	for i := range inputs {
		rows := 1 + rng.IntN(max)
		total += rows
		inputs[i] = filledTensor(ivalue.Int32, i, rows, 3)
	}
	var wg sync.WaitGroup
	for i := range inputs {
		wg.Go(func() {
			outs, _, err := b.submit(context.Background(), []*ivalue.Tensor{inputs[i]})
			if assert.NoError(t, err) {
				assertSameElems(t, inputs[i], outs[0], fmt.Sprintf("request %d", i))
			}
		})
	}
	wg.Wait()
	sum := 0
	for _, rows := range log.batches() {
		assert.LessOrEqual(t, rows, max)
		sum += rows
	}
	assert.Equal(t, total, sum)
}

func TestBatcherQueueFull(t *testing.T) {
	g := newGatedExec()
	b, blocked := startBlockedBatcher(t, g, batcherOptions{MaxBatchSize: 8, MaxQueueSize: 2})
	a := goSubmit(context.Background(), b, []*ivalue.Tensor{filledTensor(ivalue.Float32, 1, 1, 2)})
	c := goSubmit(context.Background(), b, []*ivalue.Tensor{filledTensor(ivalue.Float32, 2, 1, 2)})
	waitQueued(t, b, 2)

	_, _, err := b.submit(context.Background(), []*ivalue.Tensor{filledTensor(ivalue.Float32, 3, 1, 2)})
	require.ErrorIs(t, err, ErrQueueFull)
	assert.Equal(t, CodeUnavailable, asError(err).Code)
	assert.Equal(t, 2, b.pending(), "the refused request was not queued")

	close(g.release)
	for _, r := range []chan submitResult{blocked, a, c} {
		require.NoError(t, (<-r).err)
	}
	// Room again.
	_, _, err = b.submit(context.Background(), []*ivalue.Tensor{filledTensor(ivalue.Float32, 4, 1, 2)})
	require.NoError(t, err)
}

func TestBatcherCancelQueued(t *testing.T) {
	for _, tc := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
		stop bool // cancel it (else wait for its deadline)
		code Code
	}{
		{"cancelled", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }, true, CodeCanceled},
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 200*time.Millisecond)
		}, false, CodeDeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGatedExec()
			b, blocked := startBlockedBatcher(t, g, batcherOptions{MaxBatchSize: 8})
			x := []*ivalue.Tensor{filledTensor(ivalue.Float32, 1, 2, 2)}
			y := []*ivalue.Tensor{filledTensor(ivalue.Float32, 5, 1, 2)}
			z := []*ivalue.Tensor{filledTensor(ivalue.Float32, 9, 3, 2)}
			rx := goSubmit(context.Background(), b, x)
			waitQueued(t, b, 1)
			ctx, cancel := tc.ctx()
			defer cancel()
			ry := goSubmit(ctx, b, y)
			waitQueued(t, b, 2)
			rz := goSubmit(context.Background(), b, z)
			waitQueued(t, b, 3)

			if tc.stop {
				cancel()
			}
			r := <-ry
			require.Error(t, r.err)
			assert.Equal(t, tc.code, asError(r.err).Code)
			assert.Nil(t, r.outs)
			assert.Equal(t, 2, b.pending(), "the cancelled request left the queue")

			close(g.release)
			require.NoError(t, (<-blocked).err)
			for _, c := range []struct {
				in []*ivalue.Tensor
				r  chan submitResult
			}{{x, rx}, {z, rz}} {
				r := <-c.r
				require.NoError(t, r.err)
				assertSameElems(t, c.in[0], r.outs[0], "a request beside the cancelled one")
			}
			assert.Equal(t, []int{8, 5}, g.log.batches(), "the blocker, then x and z without y")
		})
	}
}

func TestBatcherCancelRunning(t *testing.T) {
	entered, stopped := make(chan struct{}), make(chan error, 1)
	release := make(chan struct{})
	exec := func(ctx context.Context, inputs []*ivalue.Tensor) ([]*ivalue.Tensor, error) {
		entered <- struct{}{}
		select {
		case <-ctx.Done():
			stopped <- ctx.Err()
			return nil, ctx.Err()
		case <-release:
		}
		return identityExec(nil)(ctx, inputs)
	}
	// Two requests fill MaxBatchSize 2: they run together at once.
	b := newBatcher(batcherOptions{MaxBatchSize: 2, MaxQueueDelay: time.Hour}, exec)
	defer b.close()

	ctx1, cancel1 := context.WithCancel(context.Background())
	ctx2, cancel2 := context.WithCancel(context.Background())
	x := []*ivalue.Tensor{filledTensor(ivalue.Float32, 1, 1, 2)}
	r1 := goSubmit(ctx1, b, x)
	r2 := goSubmit(ctx2, b, []*ivalue.Tensor{filledTensor(ivalue.Float32, 2, 1, 2)})
	<-entered

	// One caller goes away: it is answered at once, the batch goes on.
	cancel1()
	r := <-r1
	assert.Equal(t, CodeCanceled, asError(r.err).Code)
	select {
	case err := <-stopped:
		t.Fatalf("the batch stopped (%v) while a request still waited for it", err)
	case <-time.After(10 * time.Millisecond):
	}
	// The other one goes too: nobody waits, so the model's run is cancelled.
	cancel2()
	assert.Equal(t, CodeCanceled, asError((<-r2).err).Code)
	select {
	case err := <-stopped:
		assert.ErrorIs(t, err, context.Canceled)
	case <-time.After(5 * time.Second):
		t.Fatal("the batch's context was not cancelled when all its requests had gone")
	}

	// The worker serves on.
	r3 := goSubmit(context.Background(), b, x)
	r4 := goSubmit(context.Background(), b, x)
	<-entered
	close(release)
	for _, c := range []chan submitResult{r3, r4} {
		r := <-c
		require.NoError(t, r.err)
		assertSameElems(t, x[0], r.outs[0], "after the cancelled batch")
	}
}

func TestBatcherMixedShapes(t *testing.T) {
	g := newGatedExec()
	b, blocked := startBlockedBatcher(t, g, batcherOptions{MaxBatchSize: 16})
	reqs := [][]*ivalue.Tensor{
		{filledTensor(ivalue.Float32, 0, 2, 3)},
		{filledTensor(ivalue.Float32, 1, 1, 4)},                                     // other trailing dims
		{filledTensor(ivalue.Float64, 2, 1, 3)},                                     // other dtype
		{filledTensor(ivalue.Float32, 3, 1, 3), filledTensor(ivalue.Int64, 3, 1)},   // another input
		{filledTensor(ivalue.Float32, 4, 3, 3)},                                     // joins the first
		{filledTensor(ivalue.Float32, 5, 2, 3, 1)},                                  // more dims
		{filledTensor(ivalue.Float32, 6, 2, 4)},                                     // joins the second
		{filledTensor(ivalue.Float32, 7, 1, 3), filledTensor(ivalue.Int64, 7, 1)},   // joins the fourth
		{filledTensor(ivalue.Float32, 8, 1, 3), filledTensor(ivalue.Float32, 8, 1)}, // the same count, another dtype
	}
	var results []chan submitResult
	for i, in := range reqs {
		results = append(results, goSubmit(context.Background(), b, in))
		waitQueued(t, b, i+1) // in this order
	}
	close(g.release)
	require.NoError(t, (<-blocked).err)
	for i, c := range results {
		r := <-c
		require.NoError(t, r.err, "request %d", i)
		require.Len(t, r.outs, len(reqs[i]))
		for j := range r.outs {
			assertSameElems(t, reqs[i][j], r.outs[j], fmt.Sprintf("request %d output %d", i, j))
		}
	}
	g.log.mu.Lock()
	defer g.log.mu.Unlock()
	assert.Equal(t, []int{16, 5, 3, 1, 2, 2, 1}, g.log.rows, "the blocker, then one batch per shape class in order of its oldest request")
	assert.Equal(t, []string{
		"float32[1];",
		"float32[3];", "float32[4];", "float64[3];", "float32[3];int64[];", "float32[3 1];", "float32[3];float32[];",
	}, g.log.classes)
}

func TestBatcherExecErrors(t *testing.T) {
	boom := errors.New("kernel exploded")
	for _, tc := range []struct {
		name string
		exec batchExec
		code Code
		msg  string
	}{
		{"exec error", func(context.Context, []*ivalue.Tensor) ([]*ivalue.Tensor, error) { return nil, boom }, CodeInternal, "kernel exploded"},
		{"exec error with a code", func(context.Context, []*ivalue.Tensor) ([]*ivalue.Tensor, error) {
			return nil, &Error{Code: CodeInvalidArgument, Msg: "bad values"}
		}, CodeInvalidArgument, "bad values"},
		{"output rows", func(_ context.Context, in []*ivalue.Tensor) ([]*ivalue.Tensor, error) {
			return []*ivalue.Tensor{in[0].Clone(), ivalue.NewTensor(ivalue.Float32, 1, 2)}, nil
		}, CodeInternal, `output "probs" of a batch of 2 requests (2 rows) has shape [1 2]`},
		{"scalar output", func(context.Context, []*ivalue.Tensor) ([]*ivalue.Tensor, error) {
			return []*ivalue.Tensor{ivalue.ScalarTensor(1)}, nil
		}, CodeInternal, `output "logits" of a batch of 2 requests (2 rows) has shape []`},
		{"nil output", func(context.Context, []*ivalue.Tensor) ([]*ivalue.Tensor, error) {
			return []*ivalue.Tensor{nil}, nil
		}, CodeInternal, `output "logits" of a batch of 2 requests (2 rows) has no tensor`},
		{"panic", func(context.Context, []*ivalue.Tensor) ([]*ivalue.Tensor, error) { panic("index out of range") }, CodeInternal, "index out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBatcher(batcherOptions{MaxBatchSize: 2, MaxQueueDelay: time.Hour, OutputNames: []string{"logits", "probs"}}, tc.exec)
			defer b.close()
			r1 := goSubmit(context.Background(), b, []*ivalue.Tensor{filledTensor(ivalue.Float32, 1, 1, 2)})
			r2 := goSubmit(context.Background(), b, []*ivalue.Tensor{filledTensor(ivalue.Float32, 2, 1, 2)})
			for _, c := range []chan submitResult{r1, r2} {
				r := <-c
				require.Error(t, r.err, "every request of the batch gets the error")
				assert.Equal(t, tc.code, asError(r.err).Code)
				assert.Contains(t, r.err.Error(), tc.msg)
				assert.Nil(t, r.outs)
			}
			if tc.name == "exec error" {
				assert.ErrorIs(t, (<-goSubmit(context.Background(), b, []*ivalue.Tensor{filledTensor(ivalue.Float32, 1, 2, 2)})).err, boom,
					"the cause is kept, and the worker serves on")
			}
		})
	}
}

func TestBatcherBadInputs(t *testing.T) {
	b := newBatcher(batcherOptions{MaxBatchSize: 4, InputNames: []string{"x", "y"}}, identityExec(nil))
	defer b.close()
	for _, tc := range []struct {
		name   string
		inputs []*ivalue.Tensor
		msg    string
	}{
		{"none", nil, "at least one input"},
		{"nil tensor", []*ivalue.Tensor{nil}, `input "x": no tensor`},
		{"scalar", []*ivalue.Tensor{ivalue.ScalarTensor(1)}, `input "x": a scalar`},
		{"no rows", []*ivalue.Tensor{ivalue.NewTensor(ivalue.Float32, 0, 2)}, `input "x": shape [0 2]: dim 0 (the batch) must be 1 to the model's max_batch_size 4`},
		{"too many rows", []*ivalue.Tensor{ivalue.NewTensor(ivalue.Float32, 5, 2)}, "max_batch_size 4"},
		{"rows differ", []*ivalue.Tensor{ivalue.NewTensor(ivalue.Float32, 2, 2), ivalue.NewTensor(ivalue.Int64, 3)}, `input "y": shape [3]: dim 0 (the batch) is 3, and input "x"'s is 2`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			outs, _, err := b.submit(context.Background(), tc.inputs)
			require.Error(t, err)
			assert.Equal(t, CodeInvalidArgument, asError(err).Code)
			assert.Contains(t, err.Error(), tc.msg)
			assert.Nil(t, outs)
			assert.Zero(t, b.pending())
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := b.submit(ctx, []*ivalue.Tensor{ivalue.NewTensor(ivalue.Float32, 1, 2)})
	assert.Equal(t, CodeCanceled, asError(err).Code, "a request already cancelled is not queued")
}

func TestBatcherCloseDrains(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent()) // the workers end with close
	g := newGatedExec()
	// An hour's delay: what close finds queued runs without waiting it out.
	b, blocked := startBlockedBatcher(t, g, batcherOptions{MaxBatchSize: 8, MaxQueueDelay: time.Hour})
	var reqs [][]*ivalue.Tensor
	var results []chan submitResult
	for i := range 3 {
		reqs = append(reqs, []*ivalue.Tensor{filledTensor(ivalue.Int64, i, 1+i, 2)})
		results = append(results, goSubmit(context.Background(), b, reqs[i]))
	}
	waitQueued(t, b, 3)

	closed := make(chan struct{})
	go func() { b.close(); close(closed) }()
	require.Eventually(t, func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.closed
	}, 5*time.Second, time.Millisecond)
	_, _, err := b.submit(context.Background(), []*ivalue.Tensor{filledTensor(ivalue.Int64, 9, 1, 2)})
	require.Error(t, err)
	assert.Equal(t, CodeUnavailable, asError(err).Code)
	select {
	case <-closed:
		t.Fatal("close returned with a batch running")
	case <-time.After(10 * time.Millisecond):
	}

	close(g.release)
	require.NoError(t, (<-blocked).err)
	for i, c := range results {
		r := <-c
		require.NoError(t, r.err, "a queued request runs at close")
		assertSameElems(t, reqs[i][0], r.outs[0], fmt.Sprintf("request %d", i))
	}
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("close did not return after the queue drained")
	}
	assert.Equal(t, []int{8, 6}, g.log.batches())
	b.close() // again: returns at once
}

func TestBatcherFullBatchPassesOlderGroup(t *testing.T) {
	var log batchLog
	b := newBatcher(batcherOptions{MaxBatchSize: 4, MaxQueueDelay: time.Hour}, identityExec(&log))
	defer b.close()
	odd := goSubmit(context.Background(), b, []*ivalue.Tensor{filledTensor(ivalue.Float32, 0, 1, 4)})
	waitQueued(t, b, 1)
	var full []chan submitResult
	for i := range 4 {
		full = append(full, goSubmit(context.Background(), b, []*ivalue.Tensor{filledTensor(ivalue.Float32, i, 1, 3)}))
	}
	for _, c := range full {
		require.NoError(t, (<-c).err, "a full batch runs though an older request of another shape waits")
	}
	assert.Equal(t, 1, b.pending())
	b.close()
	require.NoError(t, (<-odd).err, "close runs the one left")
	assert.Equal(t, []int{4, 1}, log.batches())
}

// TestBatcherStress mixes shapes, sizes and callers that give up at
// random moments: every request gets its own rows or its context's
// error, and nothing is left queued.
func TestBatcherStress(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var log batchLog
	b := newBatcher(batcherOptions{MaxBatchSize: 8, MaxQueueDelay: 200 * time.Microsecond, PreferredBatchSizes: []int{4}, Workers: 3}, identityExec(&log))
	const clients, each = 32, 40
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[Code]int{} // of the errors
	answered := 0
	for c := range clients {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(c), 9))
			for i := range each {
				in := []*ivalue.Tensor{filledTensor([]ivalue.DType{ivalue.Float32, ivalue.Int8}[rng.IntN(2)], c*each+i, 1+rng.IntN(8), 1+rng.IntN(2))}
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(rng.IntN(400))*time.Microsecond)
				outs, _, err := b.submit(ctx, in)
				cancel()
				if err != nil {
					code := asError(err).Code
					mu.Lock()
					codes[code]++
					mu.Unlock()
					if !assert.Contains(t, []Code{CodeCanceled, CodeDeadlineExceeded}, code, "%v", err) {
						return
					}
					continue
				}
				assertSameElems(t, in[0], outs[0], "a request that was answered")
				mu.Lock()
				answered++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	b.close()
	assert.Zero(t, b.pending())
	assert.Equal(t, clients*each, answered+codes[CodeDeadlineExceeded]+codes[CodeCanceled], "every request answered: %v", codes)
	for _, rows := range log.batches() {
		assert.LessOrEqual(t, rows, 8)
	}
	t.Logf("answered %d, deadline passed %d; %d batches", answered, codes[CodeDeadlineExceeded], len(log.batches()))
}

// TestBatcherPlan checks the choice of the next batch on queues built by
// hand, without workers or timing: which requests, and when.
func TestBatcherPlan(t *testing.T) {
	type q struct {
		class string // "a" or "b": two shapes that do not batch together
		rows  int
		age   time.Duration
	}
	const delay = time.Hour // far from any scheduling stall
	for _, tc := range []struct {
		name      string
		max       int
		preferred []int
		closed    bool
		queue     []q
		pick      []int         // the batch's queue indices (nil: wait)
		wait      time.Duration // when nil: about this long
	}{
		{"young: wait", 8, nil, false, []q{{"a", 1, 0}}, nil, delay},
		{"old: run", 8, nil, false, []q{{"a", 1, delay + time.Minute}}, []int{0}, 0},
		{"the oldest's group", 8, nil, false, []q{{"a", 1, delay}, {"b", 1, 0}, {"a", 2, 0}}, []int{0, 2}, 0},
		{"wait for the oldest", 8, nil, false, []q{{"a", 1, 20 * time.Minute}, {"b", 1, 0}}, nil, 40 * time.Minute},
		{"full", 8, nil, false, []q{{"a", 4, 0}, {"b", 1, 0}, {"a", 4, 0}, {"a", 1, 0}}, []int{0, 2}, 0},
		{"next does not fit", 8, nil, false, []q{{"a", 5, 0}, {"a", 4, 0}, {"a", 3, 0}}, []int{0}, 0},
		{"preferred", 8, []int{2, 4}, false, []q{{"a", 1, 0}, {"a", 1, 0}, {"a", 1, 0}}, []int{0, 1}, 0},
		{"largest preferred", 8, []int{2, 4}, false, []q{{"a", 1, 0}, {"a", 1, 0}, {"a", 2, 0}, {"a", 1, 0}}, []int{0, 1, 2}, 0},
		{"preferred skipped over", 8, []int{2}, false, []q{{"a", 3, 0}}, nil, delay},
		{"a younger group that is full", 8, nil, false, []q{{"b", 1, 0}, {"a", 4, 0}, {"a", 4, 0}}, []int{1, 2}, 0},
		{"closed: no wait", 8, nil, true, []q{{"a", 1, 0}, {"a", 1, 0}}, []int{0, 1}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &batcher{o: batcherOptions{MaxBatchSize: tc.max, MaxQueueDelay: delay}, preferred: tc.preferred, closed: tc.closed}
			now := time.Now()
			for _, r := range tc.queue {
				dims := map[string]int{"a": 3, "b": 4}[r.class]
				b.queue = append(b.queue, &batchRequest{inputs: []*ivalue.Tensor{ivalue.NewTensor(ivalue.Float32, r.rows, dims)}, rows: r.rows, enq: now.Add(-r.age)})
			}
			n, wait := b.plan()
			if tc.pick == nil {
				require.Zero(t, n, "waits")
				assert.InDelta(t, float64(tc.wait), float64(wait), float64(time.Second), "waits %v", wait)
				return
			}
			require.Equal(t, len(tc.pick), n)
			assert.Equal(t, tc.pick, b.pick[:n])
		})
	}
}
