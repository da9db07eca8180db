package serve

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/gosr/gosr/ivalue"
)

// BenchmarkBatcherSubmit is the batcher's own cost per request: 32
// goroutines submit one-row requests to an exec that does nothing (it
// returns its inputs, which are the outputs' dim 0 already; nobody reads
// them), so ns/op is queueing, concatenation, splitting and hand-over.
func BenchmarkBatcherSubmit(b *testing.B) {
	trivial := func(_ context.Context, in []*ivalue.Tensor) ([]*ivalue.Tensor, error) { return in, nil }
	for _, bc := range []struct {
		delay   time.Duration
		workers int
	}{
		{0, 1},
		{0, 2},
		{100 * time.Microsecond, 2},
	} {
		b.Run(fmt.Sprintf("delay=%v/workers=%d", bc.delay, bc.workers), func(b *testing.B) {
			bt := newBatcher(batcherOptions{MaxBatchSize: 32, MaxQueueDelay: bc.delay, Workers: bc.workers}, trivial)
			defer bt.close()
			b.SetParallelism((32 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
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
