package staticruntime

import (
	"cmp"
	"slices"
	"time"
)

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
// from then on runs alone every node that was no slower alone.
//
// The per-node choices need not compose, though: a node timed alone in a
// run where every node ran alone read data its own core wrote, and in
// the mixed run it may follow a split node whose output is half on the
// other core. With the choice made that way, on the far vCPUs above,
// mobilenet_v3_large ran 0.84x as fast with two threads as with one,
// efficientnet_b0 0.93x. So the choice is then checked whole: the
// per-node mix, every node split and every node alone take turns, two
// runs at a time, the second timed whole (the first puts the data where
// that choice puts it: a run timed straight after another choice's
// reads what that one left on the other core, which had every node
// alone look slower than one thread on shufflenet_v2_x1_0), as many
// turns as the per-node runs, and the fastest of the three is kept:
// mobilenet_v3_large 1.00x, efficientnet_b0 1.01x, squeezenet1_1 1.06x
// -> 1.13x, resnet50 unchanged (srbench run -intra-op-scaling 1,2, a
// round trip of 470-520 ns).
//
// Of the three, a choice that splits more nodes is kept only where its
// run is faster by splitMargin than that of the best one that splits
// fewer: where they are within the machine's noise, one thread's worth
// of work stays on one core and the other is left to the pool's other
// runtimes. Without it the choice followed the noise: mobilenet_v3_large
// kept every node split in one calibration and every node alone in the
// next, each about one thread's time.
//
// The first run (first-run allocations, packing on first use) is not
// timed, nor are the runs that go through runChecked (a context that
// can end, per-node profiling, CheckPlan): they run every node split
// where it may until the calibration is over. A node with sub-blocks
// (If, Loop) is timed and chosen whole; its nodes follow it. Every
// choice gives the same bits: a split op computes what one goroutine
// computes.

// splitCalibrationRuns is the default Options.IntraOpCalibrationRuns.
const splitCalibrationRuns = 4

// splitMargin is how much faster a whole run must be for the choice
// that splits more nodes to be kept (see [Split per node]).
const splitMargin = 0.03

// splitCal is a top block's calibration in progress.
type splitCal struct {
	runs  int // runs done
	pairs int // timed runs each way
	// best[0][i] is node i's fastest timed run split, best[1][i] alone.
	best [2][]time.Duration
	// The whole-run check: the candidate choices (the per-node mix,
	// every node split, every node alone), each one's fastest timed
	// whole run, and the check's runs so far (two a turn).
	cands [3][]bool
	whole [3]time.Duration
	wruns int
}

// startSplitCal starts the calibration of b's nodes over pairs runs
// each way, and sizes b.alone, set when it ends.
func (b *BlockRunner) startSplitCal(pairs int) {
	n := len(b.nodes)
	b.cal = &splitCal{pairs: pairs, best: [2][]time.Duration{make([]time.Duration, n), make([]time.Duration, n)}}
	for i := range b.cal.cands {
		b.cal.cands[i] = make([]bool, n)
	}
	for i := range b.cal.cands[2] {
		b.cal.cands[2][i] = true
	}
	b.alone = make([]bool, n)
}

// runCalibrating is Run while the calibration lasts: each node timed,
// split or alone by the run's parity (see [Split per node]).
func (b *BlockRunner) runCalibrating() error {
	c, sc := b.cal, b.rt.scratch
	if c.runs > 2*c.pairs {
		return b.runWholeCheck()
	}
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
		for i := range c.cands[0] {
			c.cands[0][i] = c.best[1][i] <= c.best[0][i]
		}
	}
	return nil
}

// runWholeCheck is Run during the whole-run check (see [Split per
// node]): the candidate choices take turns of two runs, the second
// timed whole; after pairs turns of each, the fastest is kept.
func (b *BlockRunner) runWholeCheck() error {
	c := b.cal
	k := c.wruns / 2 % len(c.cands)
	t := time.Now()
	if err := b.runNodes(c.cands[k]); err != nil {
		return err
	}
	d := time.Since(t)
	if c.wruns%2 == 1 && (c.whole[k] == 0 || d < c.whole[k]) {
		c.whole[k] = d
	}
	if c.wruns++; c.wruns >= 2*len(c.cands)*c.pairs {
		var split [3]int
		for k, cand := range c.cands {
			for _, alone := range cand {
				if !alone {
					split[k]++
				}
			}
		}
		best := chooseSplit(c.whole, split)
		copy(b.alone, c.cands[best])
		b.cal, b.aloneOn, b.chosen = nil, true, best
	}
	return nil
}

// chooseSplit picks among choices timed whole (whole[k], the fastest
// run of choice k, which splits split[k] nodes): from the one that
// splits fewest, each that splits more replaces the pick only where it
// is faster by splitMargin (see [Split per node]). Ties in split count
// keep the earlier choice unless the later is faster.
func chooseSplit(whole [3]time.Duration, split [3]int) int {
	order := []int{0, 1, 2}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(split[a], split[b]) })
	best := order[0]
	for _, k := range order[1:] {
		limit := whole[best]
		if split[k] > split[best] {
			limit = time.Duration(float64(limit) * (1 - splitMargin))
		}
		if whole[k] < limit {
			best = k
		}
	}
	return best
}

// splitChoiceNames names splitCal.cands' choices, in order.
var splitChoiceNames = [3]string{"per-node", "all-split", "all-alone"}

// IntraOpSplit is where a runtime stands with its split choice (see
// [Split per node]).
type IntraOpSplit struct {
	// Calibrating reports that the runtime is still timing its choice:
	// until it is made, runs split some nodes and not others by turns and
	// time every node, so they measure neither choice. RunsLeft of them
	// are left (runs with per-node profiling, a context that can end or
	// CheckPlan do not count).
	Calibrating bool
	RunsLeft    int
	// Choice is the choice kept once the calibration is over: per-node
	// (each node split where that was faster), all-split or all-alone;
	// "" while calibrating, and where there is no calibration (no team,
	// or Options.IntraOpCalibrationRuns negative: every node splits
	// where the kernels' thresholds allow).
	Choice string
	// Nodes is the nodes of the top block, Alone those that the choice
	// runs without the team.
	Nodes, Alone int
}

// IntraOpSplit reports r's split choice. Callers that time r should run
// it until Calibrating is false first.
func (r *StaticRuntime) IntraOpSplit() IntraOpSplit {
	b := r.top
	s := IntraOpSplit{Nodes: len(b.nodes)}
	if c := b.cal; c != nil {
		s.Calibrating = true
		s.RunsLeft = max(0, 2*c.pairs+1-c.runs) + 2*len(c.cands)*c.pairs - c.wruns
		return s
	}
	if b.aloneOn {
		s.Choice = splitChoiceNames[b.chosen]
		for _, a := range b.alone {
			if a {
				s.Alone++
			}
		}
	}
	return s
}
