package staticruntime

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops"
)

// IndividualMetrics are per-op timings of a runtime, as PyTorch's
// StaticRuntime::benchmark_individual_ops reports them. Times are
// averages per iteration; a control-flow node's time includes its
// sub-blocks.
type IndividualMetrics struct {
	Iters          int
	FirstIterTime  time.Duration
	TotalTime      time.Duration // sum of the top-level node times per iteration
	PlannerTime    time.Duration // memory planning per iteration
	TimePerNode    []time.Duration
	Nodes          []NodeInfo // the top-level nodes, in order
	TimePerOp      map[string]time.Duration
	InstancesPerOp map[string]int
	// FLOPs is one iteration's floating-point work (ops.FLOPs: the
	// convolutions and matrix products, 2 per multiply-add) over every
	// node of every block; FLOPsPerOp splits it by op.
	FLOPs      int64
	FLOPsPerOp map[string]int64
	KindPerOp  map[string]ops.Kind
	// EveryNode times every node of every block, depth first (a node's
	// sub-blocks' nodes follow it). Forked subgraphs run on runtimes of
	// their own and are timed as their aten::wait.
	EveryNode     []NodeTiming
	OutNodes      int
	NativeNodes   int
	FallbackNodes int
	Memory        MemoryStats
}

// NodeTiming is one node's share of the timed iterations.
type NodeTiming struct {
	NodeInfo
	Depth int           // 0 in the top block, 1 in a sub-block of it, ...
	Time  time.Duration // per iteration, all its executions together
	FLOPs int64         // per iteration, all its executions together
	// Runs counts its executions in all the timed iterations: Iters for
	// a top-level node, Iters times the trip count in a loop body, fewer
	// in a branch not always taken.
	Runs int
	// Shape is the sizes of its first output after the last timed run,
	// nil where that is not a tensor.
	Shape []int
}

// runProfile is what a timed run collects besides the nodes' times.
type runProfile struct {
	plan time.Duration
}

// start and stop time a step of the run when r is timed (p not nil).
func (p *runProfile) start() time.Time {
	if p == nil {
		return time.Time{}
	}
	return time.Now()
}

func (p *runProfile) stop(t time.Time) {
	if p != nil {
		p.plan += time.Since(t)
	}
}

// blockProfile holds, per node of a block, the time and number of its
// executions.
type blockProfile struct {
	time  []time.Duration
	runs  []int
	flops []int64
}

// profile makes r's runs timed (on) or not: every BlockRunner of r gets
// (or drops) a blockProfile.
func (r *StaticRuntime) profile(on bool) {
	r.prof = nil
	if on {
		r.prof = &runProfile{}
	}
	var walk func(b *BlockRunner)
	walk = func(b *BlockRunner) {
		b.prof = nil
		if on {
			n := len(b.nodes)
			b.prof = &blockProfile{time: make([]time.Duration, n), runs: make([]int, n), flops: make([]int64, n)}
		}
		for i := range b.nodes {
			for _, sb := range b.nodes[i].Blocks {
				walk(sb.(*BlockRunner))
			}
		}
	}
	walk(r.top)
}

// BenchmarkIndividualOps runs the graph once and warmup times, then iters
// times timing every node. The runs are ordinary runs (the same path as
// Run, with the per-node timer on): only the timing differs.
func (r *StaticRuntime) BenchmarkIndividualOps(args []ivalue.IValue, warmup, iters int) (*IndividualMetrics, error) {
	if iters < 1 {
		return nil, fmt.Errorf("staticruntime: iters must be at least 1")
	}
	if err := r.enter(); err != nil {
		return nil, err
	}
	defer r.leave()
	run := func() error {
		if _, err := r.runEntered(nil, nil, false, args, nil); err != nil {
			return err
		}
		if r.m.opts.ManageOutputTensors {
			r.ReleaseOutputs() // as a caller done with each run's outputs
		}
		return nil
	}
	t0 := time.Now()
	if err := run(); err != nil {
		return nil, err
	}
	met := &IndividualMetrics{Iters: iters, FirstIterTime: time.Since(t0)}
	for i := 0; i < warmup; i++ {
		if err := run(); err != nil {
			return nil, err
		}
	}
	r.profile(true)
	prof, top := r.prof, r.top.prof
	defer r.profile(false)
	for it := 0; it < iters; it++ {
		if err := run(); err != nil {
			return nil, err
		}
	}
	perIter := func(d time.Duration) time.Duration { return d / time.Duration(iters) }
	met.PlannerTime = perIter(prof.plan)
	met.TimePerOp = map[string]time.Duration{}
	met.InstancesPerOp = map[string]int{}
	met.KindPerOp = map[string]ops.Kind{}
	met.FLOPsPerOp = map[string]int64{}
	nodes := r.top.nodes
	for i := range nodes {
		d := perIter(top.time[i])
		met.TimePerNode = append(met.TimePerNode, d)
		met.TotalTime += d
		op := nodes[i].Node.Kind
		met.Nodes = append(met.Nodes, NodeInfo{Op: op, Kind: nodes[i].Kind, Node: describe(nodes[i].Node)})
		met.TimePerOp[op] += d
		met.InstancesPerOp[op]++
		met.KindPerOp[op] = nodes[i].Kind
	}
	var walk func(b *BlockRunner, depth int)
	walk = func(b *BlockRunner, depth int) {
		for i := range b.nodes {
			p := &b.nodes[i]
			fl := b.prof.flops[i] / int64(iters)
			var shape []int
			if len(p.Out) > 0 {
				if t := p.Values[p.Out[0]].Tensor(); t != nil {
					shape = append(shape, t.Sizes()...)
				}
			}
			met.EveryNode = append(met.EveryNode, NodeTiming{
				NodeInfo: NodeInfo{Op: p.Node.Kind, Kind: p.Kind, Node: describe(p.Node)},
				Depth:    depth, Time: perIter(b.prof.time[i]), Runs: b.prof.runs[i], FLOPs: fl, Shape: shape,
			})
			if fl > 0 {
				met.FLOPs += fl
				met.FLOPsPerOp[p.Node.Kind] += fl
			}
			for _, sb := range p.Blocks {
				walk(sb.(*BlockRunner), depth+1)
			}
		}
	}
	walk(r.top, 0)
	met.OutNodes, met.NativeNodes, met.FallbackNodes = r.m.KindCounts()
	met.Memory = r.MemoryStats()
	return met, nil
}

// String prints the report in the layout PyTorch uses.
func (m *IndividualMetrics) String() string {
	var b strings.Builder
	ms := func(d time.Duration) string { return fmt.Sprintf("%.6f ms", float64(d)/1e6) }
	fmt.Fprintf(&b, "Static runtime ms per iter: %s\n", ms(m.TotalTime+m.PlannerTime))
	b.WriteString("Time per node type:\n")
	type row struct {
		op string
		d  time.Duration
	}
	var rows []row
	for op, d := range m.TimePerOp {
		rows = append(rows, row{op, d})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].d > rows[j].d || rows[i].d == rows[j].d && rows[i].op < rows[j].op })
	// An op's GFLOP/s is over its own nodes' time, sub-blocks' included
	// (TimePerOp has the top block's only).
	opTime := map[string]time.Duration{}
	for _, n := range m.EveryNode {
		if m.FLOPsPerOp[n.Op] > 0 {
			opTime[n.Op] += n.Time
		}
	}
	for _, r := range rows {
		pct := 0.0
		if m.TotalTime > 0 {
			pct = 100 * float64(r.d) / float64(m.TotalTime)
		}
		rate := ""
		if fl, d := m.FLOPsPerOp[r.op], opTime[r.op]; fl > 0 && d > 0 {
			rate = fmt.Sprintf(", %.1f GFLOP/s", float64(fl)/d.Seconds()/1e9)
		}
		fmt.Fprintf(&b, "%18s. %8.3f%%. %s (%d nodes, %s%s)\n", ms(r.d), pct, r.op, m.InstancesPerOp[r.op], m.KindPerOp[r.op], rate)
	}
	fmt.Fprintf(&b, "%18s. in Total\n", ms(m.TotalTime))
	if m.FLOPs > 0 && m.TotalTime > 0 {
		fmt.Fprintf(&b, "FLOPs per iter: %.4g GFLOP (convolutions and matrix products), %.1f GFLOP/s over the nodes' total time\n",
			float64(m.FLOPs)/1e9, float64(m.FLOPs)/m.TotalTime.Seconds()/1e9)
	}
	fmt.Fprintf(&b, "Memory planning time: %s\n", ms(m.PlannerTime))
	fmt.Fprintf(&b, "First iter time: %s\n", ms(m.FirstIterTime))
	total := m.OutNodes + m.NativeNodes + m.FallbackNodes
	fmt.Fprintf(&b, "Number of operators: %d\n", total)
	fmt.Fprintf(&b, "Total number of managed tensors: %d\n", m.Memory.ManagedTensors)
	fmt.Fprintf(&b, "Total memory managed: %d bytes (planner %s, lower bound %d)\n", m.Memory.ManagedBytes, m.Memory.Planner, m.Memory.LowerBound)
	if total > 0 {
		fmt.Fprintf(&b, "Total number of 'out' variant nodes/total number of nodes: %d/%d (%.0f%%)\n", m.OutNodes, total, 100*float64(m.OutNodes)/float64(total))
		fmt.Fprintf(&b, "Native nodes: %d, fallback nodes: %d\n", m.NativeNodes, m.FallbackNodes)
	}
	return b.String()
}

// PerNode lists every node of every block in order, as PyTorch's
// benchmark prints with print_per_node_time: its time per iteration, its
// share of the total, its GFLOP/s where it has floating-point work, its
// first output's sizes and the node; a sub-block's nodes are indented
// under theirs, with their executions per iteration.
func (m *IndividualMetrics) PerNode() string {
	var b strings.Builder
	b.WriteString("Time per node:\n")
	for _, n := range m.EveryNode {
		pct := 0.0
		if m.TotalTime > 0 {
			pct = 100 * float64(n.Time) / float64(m.TotalTime)
		}
		extra := ""
		if n.FLOPs > 0 && n.Time > 0 {
			extra = fmt.Sprintf(" %6.1f GF/s", float64(n.FLOPs)/n.Time.Seconds()/1e9)
		} else {
			extra = strings.Repeat(" ", 12)
		}
		if n.Depth > 0 && m.Iters > 0 {
			extra += fmt.Sprintf(" x%g", float64(n.Runs)/float64(m.Iters))
		}
		shape := ""
		if n.Shape != nil {
			shape = fmt.Sprint(n.Shape) + " "
		}
		fmt.Fprintf(&b, "%14.6f ms. %7.3f%%.%s %s%s%s\n", float64(n.Time)/1e6, pct, extra, strings.Repeat("  ", n.Depth), shape, n.Node)
	}
	return b.String()
}
