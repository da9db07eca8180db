package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gosr/gosr/internal/reference"
	"github.com/gosr/gosr/internal/stats"
	"github.com/gosr/gosr/staticruntime"
)

// [Intra-op scaling]
//
// How much faster a model runs with N intra-op threads than with one is
// a ratio of two timings, and on a shared machine whose speed moves
// 10-30% from one minute to the next (and a two-core VM whose second
// core is sometimes busy elsewhere), two timings taken one after the
// other, or two processes run back to back, can give 1.3x or 1.8x for
// the same build. run -intra-op-scaling 1,2 prepares the model once per
// count (one module and one runtime each, all warm), then times rounds
// in which every count runs -iters runs in turn, and reports, for each
// count, the median of its rounds and its speed-up over the first count
// as the median of the rounds' ratios: each ratio compares the counts
// within one round, a second or two of the machine.
//
// What the speed-up is on a VM also depends on where the hypervisor
// put its vCPUs: on the development VM a cache line's round trip
// between two goroutines on two processors was 490 ns at some times
// and 130 at others (two cores on different dies, then near), and
// resnet50's speed-up with 2 threads 1.51x and 1.80x with them. So the
// run times that round trip too (coreRoundTrip), before and after the
// rounds, and prints it beside the speed-ups.

// scalingRow is one intra-op thread count of a scaling run.
type scalingRow struct {
	IntraOpThreads int `json:"intra_op_threads"`
	// UsPerRun is the median over rounds of the round's time per run.
	UsPerRun float64 `json:"us_per_run"`
	// Speedup is the median over rounds of the first row's time in the
	// round over this row's.
	Speedup float64   `json:"speedup"`
	RoundUs []float64 `json:"round_us"`
}

// scalingResult is what run -intra-op-scaling -json prints.
type scalingResult struct {
	Model      string       `json:"model"`
	Rounds     int          `json:"rounds"`
	ItersRound int          `json:"iters_per_round"`
	Rows       []scalingRow `json:"rows"`
	MaxAbsDiff float64      `json:"max_abs_diff"`
	// CoreRoundTripNs is a cache line's round trip between two
	// processors before and after the rounds (coreRoundTrip; 0 with
	// GOMAXPROCS 1).
	CoreRoundTripNs [2]float64 `json:"core_round_trip_ns"`
}

// coreRoundTrip is the mean time for a value to go from one goroutine
// to another on a second processor and back through one cache line
// (see [Intra-op scaling]), 0 where there is one processor.
func coreRoundTrip() time.Duration {
	if runtime.GOMAXPROCS(0) < 2 {
		return 0
	}
	const n = 200_000
	var x atomic.Int64
	done := make(chan struct{})
	go func() {
		for i := int64(1); i < n; i += 2 {
			for x.Load() != i {
			}
			x.Store(i + 1)
		}
		close(done)
	}()
	t := time.Now()
	for i := int64(0); i < n; i += 2 {
		for x.Load() != i {
		}
		x.Store(i + 1)
	}
	<-done
	return time.Since(t) / (n / 2)
}

// parseScaling reads -intra-op-scaling: thread counts of at least 1,
// comma separated, at least two.
func parseScaling(s string) ([]int, error) {
	ns, err := parseCounts("-intra-op-scaling", s)
	if err == nil && len(ns) < 2 {
		err = fmt.Errorf("-intra-op-scaling %s: want at least two counts to compare (as 1,2)", s)
	}
	return ns, err
}

// measureScaling times m at each intra-op thread count, rounds
// interleaved (see [Intra-op scaling]).
func measureScaling(m *model, f benchFlags, counts []int) (*scalingResult, error) {
	if f.usesLibtorch() {
		return nil, fmt.Errorf("-intra-op-scaling: gosr's Go kernels only (libtorch's threads are one setting for the whole process)")
	}
	rts := make([]*staticruntime.StaticRuntime, len(counts))
	res := &scalingResult{Model: m.Name, Rounds: max(f.repeats, 1), MaxAbsDiff: -1}
	for i, n := range counts {
		rf := f.runtimeFlags
		rf.intraOp = n
		sm, err := prepare(m, rf)
		if err != nil {
			return nil, err
		}
		defer sm.Close()
		rts[i] = sm.NewRuntime()
		outs, err := rts[i].Run(m.Inputs...)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.Name, err)
		}
		if len(m.Expected) > 0 {
			res.MaxAbsDiff = max(res.MaxAbsDiff, reference.MaxAbsDiff(reference.Flatten(outs), m.Expected))
		}
		if err := warmUp(rts[i], f.warmup, func(r *staticruntime.StaticRuntime) error {
			_, err := r.Run(m.Inputs...)
			return err
		}); err != nil {
			return nil, fmt.Errorf("%s: %w", m.Name, err)
		}
	}
	timeRuns := func(r *staticruntime.StaticRuntime, iters int) (time.Duration, error) {
		t0 := time.Now()
		for range iters {
			if _, err := r.Run(m.Inputs...); err != nil {
				return 0, fmt.Errorf("%s: %w", m.Name, err)
			}
		}
		return time.Since(t0), nil
	}
	iters := f.iters
	if iters <= 0 {
		// About 0.2 s of the first count a round.
		d, err := timeRuns(rts[0], 1)
		if err != nil {
			return nil, err
		}
		iters = max(1, int(200*time.Millisecond/max(d, time.Microsecond)))
	}
	res.ItersRound = iters
	res.CoreRoundTripNs[0] = float64(coreRoundTrip().Nanoseconds())
	defer func() { res.CoreRoundTripNs[1] = float64(coreRoundTrip().Nanoseconds()) }()
	res.Rows = make([]scalingRow, len(counts))
	for i, n := range counts {
		res.Rows[i].IntraOpThreads = n
	}
	for range res.Rounds {
		for i, r := range rts {
			d, err := timeRuns(r, iters)
			if err != nil {
				return nil, err
			}
			res.Rows[i].RoundUs = append(res.Rows[i].RoundUs, float64(d.Nanoseconds())/1e3/float64(iters))
		}
	}
	for i := range res.Rows {
		row := &res.Rows[i]
		row.UsPerRun, row.Speedup = stats.Median(row.RoundUs), stats.MedianRatio(res.Rows[0].RoundUs, row.RoundUs)
	}
	return res, nil
}

// print writes the scaling table, or JSON.
func (res *scalingResult) print(w io.Writer, asJSON bool) error {
	if asJSON {
		return json.NewEncoder(w).Encode(res)
	}
	fmt.Fprintf(w, "model %s: intra-op scaling, %d rounds of %d runs per count, counts interleaved in each round\n", res.Model, res.Rounds, res.ItersRound)
	fmt.Fprintf(w, "%16s %14s %9s  %s\n", "intra-op threads", "us per run", "speedup", "rounds (us per run)")
	for _, row := range res.Rows {
		rounds := make([]string, len(row.RoundUs))
		for k, v := range row.RoundUs {
			rounds[k] = fmt.Sprintf("%.0f", v)
			if v < 100 {
				rounds[k] = fmt.Sprintf("%.3g", v)
			}
		}
		fmt.Fprintf(w, "%16d %14.1f %8.2fx  %s\n", row.IntraOpThreads, row.UsPerRun, row.Speedup, strings.Join(rounds, " "))
	}
	fmt.Fprintf(w, "(us per run: the median of the rounds; speedup: the median over rounds of the first count's time over this one's, each ratio within one round)\n")
	if rt := res.CoreRoundTripNs; rt[0] > 0 {
		fmt.Fprintf(w, "core-to-core round trip: %.0f ns before the rounds, %.0f after (a cache line between two processors; on a VM it moves with where the vCPUs sit, and the speed-up with it)\n", rt[0], rt[1])
	}
	if res.MaxAbsDiff >= 0 {
		fmt.Fprintf(w, "max abs diff from PyTorch's outputs: %.3g\n", res.MaxAbsDiff)
	}
	return nil
}
