package main

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gosr/gosr/internal/reference"
	"github.com/gosr/gosr/internal/stats"
	"github.com/gosr/gosr/staticruntime"
)

// latencyStats are percentiles of per-request latencies, in microseconds.
type latencyStats struct {
	P50, P90, P99, Mean float64
}

// percentiles sorts ns (request latencies in nanoseconds) in place and
// returns the nearest-rank p50, p90 and p99 and the mean.
func percentiles(ns []int64) latencyStats {
	if len(ns) == 0 {
		return latencyStats{}
	}
	slices.Sort(ns)
	rank := func(p float64) float64 { return nearestRank(ns, p) }
	var sum float64
	for _, v := range ns {
		sum += float64(v)
	}
	return latencyStats{P50: rank(50), P90: rank(90), P99: rank(99), Mean: sum / float64(len(ns)) / 1e3}
}

// nearestRank is the p-th percentile of sorted (nanoseconds), in
// microseconds: the smallest value with at least p% at or below it.
func nearestRank(sorted []int64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return float64(sorted[min(max(i, 0), len(sorted)-1)]) / 1e3
}

// warmUp runs r warmup times (at least once), then on while its
// intra-op split calibration lasts: those runs time every node and split
// some nodes and not others by turns (see [Split per node] in
// staticruntime), so a timed run among them measures no choice. With
// -intra-op-threads 2 and the default calibration that is 33 runs, and
// before this srbench timed most of them (resnet50 at 2 threads 1.38x
// one thread in -intra-op-scaling with -warmup 5, 1.51-1.62x after).
func warmUp(r *staticruntime.StaticRuntime, warmup int, run func(*staticruntime.StaticRuntime) error) error {
	for i := 0; i < max(warmup, 1) || r.IntraOpSplit().Calibrating; i++ {
		if err := run(r); err != nil {
			return err
		}
	}
	return nil
}

// measure runs m the way a server would: f.threads goroutines send
// requests through one staticruntime.Pool of f.threads runtimes over one
// shared StaticModule (take, run, give back), timing every request. The
// first run's outputs are written to save unless it is "" (run's
// -save-outputs).
func measure(m *model, f benchFlags, save string) (*runResult, error) {
	threads := max(f.threads, 1)
	sm, err := prepare(m, f.runtimeFlags)
	if err != nil {
		return nil, err
	}
	pool := staticruntime.NewPool(sm, threads)
	ctx := context.Background()
	res := &runResult{Model: m.Name, Backend: f.backendName(), Threads: threads, Interop: f.interopThreads()}
	if f.usesLibtorch() || f.intraOpThreads() > 1 {
		res.IntraOpThreads = f.intraOpThreads()
	}
	res.OutVariantNodes, res.NativeNodes, res.FallbackNodes = sm.KindCounts()
	res.Nodes = res.OutVariantNodes + res.NativeNodes + res.FallbackNodes

	// With -manage-outputs every run is followed by ReleaseOutputs before
	// the runtime goes back, as a caller done with the outputs would: the
	// output arena is then reused (without it each run would leave its
	// arena to the caller and allocate).
	run := func(r *staticruntime.StaticRuntime) error {
		_, err := r.Run(m.Inputs...)
		if f.manageOutputs {
			r.ReleaseOutputs()
		}
		return err
	}

	// The first run checks the outputs (valid only inside Do).
	res.MaxAbsDiff = -1 // no expected outputs
	check := func(first bool) error {
		return pool.Do(ctx, func(r *staticruntime.StaticRuntime) error {
			outs, err := r.Run(m.Inputs...)
			if err != nil {
				return fmt.Errorf("%s: %w", m.Name, err)
			}
			if len(m.Expected) > 0 {
				res.MaxAbsDiff = max(res.MaxAbsDiff, reference.MaxAbsDiff(reference.Flatten(outs), m.Expected))
			}
			if first && save != "" {
				if err := saveOutputs(save, outs); err != nil {
					return err
				}
			}
			if f.manageOutputs {
				r.ReleaseOutputs()
			}
			return nil
		})
	}
	if err := check(true); err != nil {
		return nil, err
	}

	// Take every runtime the pool may make at once, so all of them exist
	// and are warm (their plans made) before anything is timed.
	rts := make([]*staticruntime.StaticRuntime, threads)
	for i := range rts {
		if rts[i], err = pool.Get(ctx); err != nil {
			return nil, err
		}
	}
	for _, r := range rts {
		if err := warmUp(r, f.warmup, run); err != nil {
			return nil, fmt.Errorf("%s: %w", m.Name, err)
		}
	}
	if f.intraOpThreads() > 1 && !f.usesLibtorch() {
		sp := rts[0].IntraOpSplit()
		res.Split = &splitSummary{Choice: sp.Choice, Alone: sp.Alone, Nodes: sp.Nodes}
	}
	auto := f.backendName() == backendAuto
	if auto {
		// auto times both kernels of each node on its first runs: the
		// timed runs (and the allocation count) begin once every node
		// that runs has chosen.
		if err := settleAuto(sm, rts, max(f.warmup, 1)+1, run); err != nil {
			return nil, fmt.Errorf("%s: %w", m.Name, err)
		}
	}
	for _, r := range rts {
		if err := pool.Put(r); err != nil {
			return nil, err
		}
	}
	if auto {
		// The outputs again, with the kernels auto chose.
		if err := check(false); err != nil {
			return nil, err
		}
	}

	// Through the pool, as the timed loops run: 0 for static shapes.
	var allocErr error
	res.AllocsPerRun = testing.AllocsPerRun(200, func() {
		if err := pool.Do(ctx, run); err != nil && allocErr == nil {
			allocErr = err
		}
	})
	if allocErr != nil {
		return nil, allocErr
	}

	iters := f.iters
	if iters <= 0 { // calibrate to about 0.2 s per repeat
		t0 := time.Now()
		n := 0
		for time.Since(t0) < 20*time.Millisecond {
			if err := pool.Do(ctx, run); err != nil {
				return nil, err
			}
			n++
		}
		iters = max(10, n*10)
	}
	repeats := max(f.repeats, 1)
	// Every request's latency, per goroutine, allocated before timing.
	lat := make([][]int64, threads)
	for t := range lat {
		lat[t] = make([]int64, iters*repeats)
	}
	var per, tput []float64
	errs := make([]error, threads)
	// Each goroutine's own elapsed time: throughput is the sum of their
	// rates, so one goroutine's tail does not count as the others' idle
	// time (timing the whole repeat would).
	ends := make([]time.Duration, threads)
	for rep := range repeats {
		var wg sync.WaitGroup
		t0 := time.Now()
		for t := range threads {
			wg.Add(1)
			go func(l []int64) {
				defer wg.Done()
				// One clock read per request: a request's latency is the
				// time from the end of the one before (the loop's own
				// overhead is a few ns).
				prev := time.Since(t0)
				for i := range l {
					if err := pool.Do(ctx, run); err != nil {
						errs[t] = err
						return
					}
					now := time.Since(t0)
					l[i] = int64(now - prev)
					prev = now
				}
				ends[t] = prev
			}(lat[t][rep*iters : (rep+1)*iters])
		}
		wg.Wait()
		el := time.Since(t0)
		for _, e := range errs {
			if e != nil {
				return nil, fmt.Errorf("%s: %w", m.Name, e)
			}
		}
		per = append(per, float64(el.Nanoseconds())/1e3/float64(iters))
		rate := 0.0
		for _, e := range ends {
			rate += float64(iters) / e.Seconds()
		}
		tput = append(tput, rate)
	}
	res.UsPerIter = stats.Median(per)
	res.Throughput = stats.Median(tput)
	all := slices.Concat(lat...)
	ls := percentiles(all)
	res.P50Us, res.P90Us, res.P99Us, res.MeanUs = ls.P50, ls.P90, ls.P99, ls.Mean
	res.Requests = len(all)

	r, err := pool.Get(ctx)
	if err != nil {
		return nil, err
	}
	res.setMemory(r.MemoryStats(), f.manageOutputs)
	if auto {
		res.Auto = summarizeAuto(sm.AutoChoices())
	}
	return res, pool.Put(r)
}
