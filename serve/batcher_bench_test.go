package serve

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gosr/gosr/builtin"
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/staticruntime"
)

// concurrency32 makes RunParallel run 32 goroutines.
func concurrency32(b *testing.B) {
	b.SetParallelism((32 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
}

// BenchmarkBatcherSubmit is the batcher's own cost per request: 1 or 32
// goroutines submit one-row requests to an exec that does nothing (it
// returns its inputs, which are the outputs' dim 0 already; nobody reads
// them), so ns/op is queueing, concatenation, splitting and hand-over.
func BenchmarkBatcherSubmit(b *testing.B) {
	trivial := func(_ context.Context, in []*ivalue.Tensor) ([]*ivalue.Tensor, error) { return in, nil }
	for _, bc := range []struct {
		clients int
		delay   time.Duration
		workers int
	}{
		{1, 0, 1},
		{32, 0, 1},
		{32, 0, 2},
		{32, 100 * time.Microsecond, 2},
	} {
		b.Run(fmt.Sprintf("clients=%d/delay=%v/workers=%d", bc.clients, bc.delay, bc.workers), func(b *testing.B) {
			bt := newBatcher(batcherOptions{MaxBatchSize: 32, MaxQueueDelay: bc.delay, Workers: bc.workers}, trivial)
			defer bt.close()
			if bc.clients == 1 {
				in := []*ivalue.Tensor{ivalue.NewTensor(ivalue.Float32, 1, 64)}
				b.ReportAllocs()
				for b.Loop() {
					if _, _, err := bt.submit(context.Background(), in); err != nil {
						b.Fatal(err)
					}
				}
				return
			}
			concurrency32(b)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				in := []*ivalue.Tensor{ivalue.NewTensor(ivalue.Float32, 1, 64)}
				for pb.Next() {
					if _, _, err := bt.submit(context.Background(), in); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkBatcherMLP serves the built-in mlp to 32 goroutines sending
// one row each, on a pool of two runtimes: each request run alone
// ("unbatched"), or through the batcher. ns/op is the inverse of the
// throughput; p99-µs is the 99th percentile of a request's latency.
func BenchmarkBatcherMLP(b *testing.B) {
	c, err := builtin.Load("mlp")
	if err != nil {
		b.Fatal(err)
	}
	g, err := graph.Parse(c.IR, &graph.ParseOptions{Tensors: c.Consts})
	if err != nil {
		b.Fatal(err)
	}
	m, err := staticruntime.NewStaticModule(g, nil)
	if err != nil {
		b.Fatal(err)
	}
	const workers = 2
	pool := staticruntime.NewPool(m, workers)
	run := func(ctx context.Context, in []*ivalue.Tensor) ([]*ivalue.Tensor, error) {
		var outs []*ivalue.Tensor
		err := pool.Do(ctx, func(r *staticruntime.StaticRuntime) error {
			o, err := r.RunContext(ctx, ivalue.FromTensor(in[0]))
			if err != nil {
				return err
			}
			outs = []*ivalue.Tensor{o[0].Tensor().Clone()}
			return nil
		})
		return outs, err
	}
	for _, bc := range []struct {
		name  string
		delay time.Duration // < 0: no batcher
	}{
		{"unbatched", -1},
		{"batched/delay=0", 0},
		{"batched/delay=200µs", 200 * time.Microsecond},
	} {
		b.Run(bc.name, func(b *testing.B) {
			call := func(in []*ivalue.Tensor) error { _, err := run(context.Background(), in); return err }
			if bc.delay >= 0 {
				bt := newBatcher(batcherOptions{MaxBatchSize: 32, MaxQueueDelay: bc.delay, Workers: workers}, run)
				defer bt.close()
				call = func(in []*ivalue.Tensor) error { _, _, err := bt.submit(context.Background(), in); return err }
			}
			var mu sync.Mutex
			var lat []time.Duration
			concurrency32(b)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				in := []*ivalue.Tensor{ivalue.NewTensor(ivalue.Float32, 1, 64)}
				var mine []time.Duration
				for pb.Next() {
					start := time.Now()
					if err := call(in); err != nil {
						b.Error(err)
						return
					}
					mine = append(mine, time.Since(start))
				}
				mu.Lock()
				lat = append(lat, mine...)
				mu.Unlock()
			})
			if len(lat) > 0 {
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
				b.ReportMetric(float64(lat[len(lat)-1].Microseconds()), "max-µs")
			}
		})
	}
}
