package staticruntime

import "time"

// [Split per node]
//
// An intra-op team splits an op only where ops/gemm's and ops'
// thresholds say it is large enough, yet a split can cost more than it
// saves: the helper's wake-up, and data that the other core wrote or
// must read from the first one's cache. On a VM whose two vCPUs sit on
// different dies (a cache line's round trip 480-520 ns where near ones
// take 130) mobilenet_v3_large ran 0.71-0.80x as fast with two threads
// as with one, efficientnet_b0 and shufflenet_v2 slower too. So a
// runtime with a team times each node of its top block over its first
// runs, alternately split as the thresholds allow and alone
// (gemm.Scratch.SetAlone), keeps each node's fastest run each way, and
// from then on runs alone every node that was no slower alone. The
// first run (first-run allocations, packing on first use) is not
// timed, nor are the runs that go through runChecked (a context that
// can end, per-node profiling, CheckPlan): they run every node split
// where it may until the calibration is over. A node with sub-blocks (If, Loop) is timed and chosen whole;
// its nodes follow it. Every choice gives the same bits: a split op
// computes what one goroutine computes.

// splitCalibrationRuns is the default Options.IntraOpCalibrationRuns.
const splitCalibrationRuns = 4

// splitCal is a top block's calibration in progress.
type splitCal struct {
	runs  int // runs done
	pairs int // timed runs each way
	// best[0][i] is node i's fastest timed run split, best[1][i] alone.
	best [2][]time.Duration
}

// startSplitCal starts the calibration of b's nodes over pairs runs
// each way, and sizes b.alone, set when it ends.
func (b *BlockRunner) startSplitCal(pairs int) {
	n := len(b.nodes)
	b.cal = &splitCal{pairs: pairs, best: [2][]time.Duration{make([]time.Duration, n), make([]time.Duration, n)}}
	b.alone = make([]bool, n)
}

// runCalibrating is Run while the calibration lasts: each node timed,
// split or alone by the run's parity (see [Split per node]).
func (b *BlockRunner) runCalibrating() error {
	c, sc := b.cal, b.rt.scratch
	mode := c.runs % 2 // 0: split as the thresholds allow, 1: alone
	timed := c.runs > 0
	nodes, pre := b.nodes, b.pre
	for i := range nodes {
		b.at = i
		if pre != nil && pre[i] != nil {
			pre[i](&nodes[i])
		}
		sc.SetAlone(mode == 1)
		t := time.Now()
		err := nodes[i].Kernel(&nodes[i])
		d := time.Since(t)
		sc.SetAlone(false)
		if err != nil {
			return b.fail(i, err)
		}
		if best := c.best[mode]; timed && (best[i] == 0 || d < best[i]) {
			best[i] = d
		}
	}
	b.at = -1
	if c.runs++; c.runs > 2*c.pairs {
		for i := range b.alone {
			b.alone[i] = c.best[1][i] <= c.best[0][i]
		}
		b.cal, b.aloneOn = nil, true
	}
	return nil
}
