package staticruntime

import (
	"context"
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
	TotalTime      time.Duration // sum of the node times per iteration
	PlannerTime    time.Duration // memory planning per iteration
	TimePerNode    []time.Duration
	Nodes          []NodeInfo // the top-level nodes, in order
	TimePerOp      map[string]time.Duration
	InstancesPerOp map[string]int
	KindPerOp      map[string]ops.Kind
	OutNodes       int
	NativeNodes    int
	FallbackNodes  int
	Memory         MemoryStats
}

// BenchmarkIndividualOps runs the graph warmup times, then iters times
// timing every top-level node.
func (r *StaticRuntime) BenchmarkIndividualOps(args []ivalue.IValue, warmup, iters int) (*IndividualMetrics, error) {
	if iters < 1 {
		return nil, fmt.Errorf("staticruntime: iters must be at least 1")
	}
	if err := r.enter(); err != nil {
		return nil, err
	}
	defer r.leave()
	run := func() error {
		_, err := r.runEntered(nil, nil, false, args, nil)
		return err
	}
	t0 := time.Now()
	if err := run(); err != nil {
		return nil, err
	}
	met := &IndividualMetrics{Iters: iters, FirstIterTime: time.Since(t0)}
	release := func() {
		if r.m.opts.ManageOutputTensors {
			r.ReleaseOutputs() // as a caller done with each run's outputs
		}
	}
	release()
	for i := 0; i < warmup; i++ {
		if err := run(); err != nil {
			return nil, err
		}
		release()
	}
	// The nodes run one by one below, as in a run: forks go to the
	// module's inter-op pool and are drained after every iteration.
	r.ctx, r.done, r.launcher, r.inTask = context.Background(), nil, r.m.launcher, false
	defer func() {
		if r.sites != nil {
			r.drainForks()
		}
		r.ctx, r.launcher = nil, nil
	}()
	nodes := r.top.nodes
	per := make([]time.Duration, len(nodes))
	var plan time.Duration
	for it := 0; it < iters; it++ {
		if err := r.setInputs(args, nil); err != nil {
			return nil, err
		}
		ts := time.Now()
		r.planner.allocate(r)
		plan += time.Since(ts)
		for i := range nodes {
			s := time.Now()
			if err := nodes[i].Kernel(&nodes[i]); err != nil {
				r.broken = true
				return nil, r.top.nodeError(i, err)
			}
			per[i] += time.Since(s)
		}
		for i, s := range r.m.outputs {
			r.outputs[i] = r.values[s]
		}
		ts = time.Now()
		if err := r.planner.deallocate(r); err != nil {
			return nil, err
		}
		plan += time.Since(ts)
		if r.sites != nil {
			r.drainForks()
		}
		release()
	}
	met.PlannerTime = plan / time.Duration(iters)
	met.TimePerOp = map[string]time.Duration{}
	met.InstancesPerOp = map[string]int{}
	met.KindPerOp = map[string]ops.Kind{}
	for i := range nodes {
		d := per[i] / time.Duration(iters)
		met.TimePerNode = append(met.TimePerNode, d)
		met.TotalTime += d
		op := nodes[i].Node.Kind
		met.Nodes = append(met.Nodes, NodeInfo{Op: op, Kind: nodes[i].Kind, Node: describe(nodes[i].Node)})
		met.TimePerOp[op] += d
		met.InstancesPerOp[op]++
		met.KindPerOp[op] = nodes[i].Kind
	}
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
	for _, r := range rows {
		pct := 0.0
		if m.TotalTime > 0 {
			pct = 100 * float64(r.d) / float64(m.TotalTime)
		}
		fmt.Fprintf(&b, "%18s. %8.3f%%. %s (%d nodes, %s)\n", ms(r.d), pct, r.op, m.InstancesPerOp[r.op], m.KindPerOp[r.op])
	}
	fmt.Fprintf(&b, "%18s. in Total\n", ms(m.TotalTime))
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
