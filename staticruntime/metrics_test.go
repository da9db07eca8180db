package staticruntime_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/internal/raceflag"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/staticruntime"
)

// loopListIR builds a list in a loop (its items are Fresh: the nodes that
// make them hand out a new tensor per iteration, recycled across runs)
// and concatenates it.
const loopListIR = `graph(%x : Tensor, %n : int):
  %true : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %l0 : Tensor[] = prim::ListConstruct()
  %l : Tensor[] = prim::Loop(%n, %true, %l0)
    block0(%i : int, %acc : Tensor[]):
      %m : Tensor = aten::add(%x, %i, %one)
      %r : Tensor = aten::relu(%m)
      %acc2 : Tensor[] = aten::append(%acc, %r)
      -> (%true, %acc)
  %c : Tensor = aten::cat(%l, %zero)
  %y : Tensor = aten::relu(%c)
  return (%y)
`

// TestBenchmarkIndividualOpsCoversBlocks: every node of every block is
// timed, with as many executions as the run made (a loop body's nodes
// once per trip, an untaken branch's never), and a control-flow node's
// time covers its sub-blocks'.
func TestBenchmarkIndividualOpsCoversBlocks(t *testing.T) {
	const iters = 5
	x := ivalue.FromTensor(ivalue.F32Tensor([]float32{1, -2}, 2))
	tests := []struct {
		name string
		ir   string
		args []ivalue.IValue
		// runs per iteration of the node of each output, by name.
		runs map[string]int
		want []float32
	}{
		{"loop building a list", loopListIR, []ivalue.IValue{x, ivalue.FromInt(7)},
			map[string]int{"%l0": 1, "%l": 1, "%m": 7, "%r": 7, "%acc2": 7, "%c": 1, "%y": 1},
			[]float32{1, 0, 2, 0, 3, 0, 4, 1, 5, 2, 6, 3, 7, 4}},
		{"loop then if", loopIfIR, []ivalue.IValue{ivalue.FromTensor(ivalue.F32Tensor([]float32{1, 2}, 2)), ivalue.FromInt(3)},
			map[string]int{"%y": 1, "%acc.2": 3, "%s": 1, "%pos": 1, "%c": 1, "%z": 1, "%z.1": 1, "%z.2": 0},
			[]float32{8, 16}},
	}
	for _, tc := range tests {
		for _, checkPlan := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/checkplan=%v", tc.name, checkPlan), func(t *testing.T) {
				o := staticruntime.DefaultOptions()
				o.CheckPlan = checkPlan // verified after every node, timed or not
				r := prepare(t, tc.ir, &o).NewRuntime()
				met, err := r.BenchmarkIndividualOps(tc.args, 2, iters)
				require.NoError(t, err)
				got := map[string]int{}
				var inner time.Duration // the sub-block nodes' time
				for k, n := range met.EveryNode {
					name := strings.Fields(strings.TrimPrefix(n.Node, "node "))[0]
					got[name] = n.Runs / iters
					assert.Zero(t, n.Runs%iters, n.Node)
					if n.Runs > 0 {
						assert.Positive(t, n.Time, n.Node)
					} else {
						assert.Zero(t, n.Time, n.Node)
					}
					if n.Depth == 0 {
						require.Less(t, k, len(met.EveryNode))
						inner = 0
						for _, c := range met.EveryNode[k+1:] {
							if c.Depth == 0 {
								break
							}
							inner += c.Time
						}
						assert.GreaterOrEqual(t, n.Time, inner, "%s: time of its sub-blocks", n.Node)
					}
				}
				assert.Equal(t, tc.runs, got)
				// The top-level nodes are the report's.
				var top []staticruntime.NodeInfo
				for _, n := range met.EveryNode {
					if n.Depth == 0 {
						top = append(top, n.NodeInfo)
					}
				}
				assert.Equal(t, met.Nodes, top)
				// The runtime is left as a run leaves it.
				outs, err := r.Run(tc.args...)
				require.NoError(t, err)
				assert.Equal(t, tc.want, f32(t, outs[0]))
			})
		}
	}
}

// TestBenchmarkIndividualOpsAllocatesNothing: the timed iterations are
// steady runs, which allocate nothing (nodes in a loop body reuse the
// tensors of the run before), so more of them allocate no more (within
// what other goroutines of the process allocate meanwhile).
func TestBenchmarkIndividualOpsAllocatesNothing(t *testing.T) {
	if raceflag.Enabled {
		t.Skip("allocation counts differ under -race")
	}
	m := prepare(t, loopListIR, nil)
	args := []ivalue.IValue{ivalue.FromTensor(ivalue.F32Tensor([]float32{1, -2}, 2)), ivalue.FromInt(7)}
	allocs := func(iters int) float64 {
		return testing.AllocsPerRun(3, func() {
			_, err := m.NewRuntime().BenchmarkIndividualOps(args, 2, iters)
			require.NoError(t, err)
		})
	}
	// 40 more iterations would add 40 allocations or more if a steady
	// one allocated; a few are the process's own (a cleanup of a
	// runtime an earlier test dropped, run by the GC meanwhile: CI saw
	// 142 against 141 under load).
	assert.InDelta(t, allocs(1), allocs(41), 3)
	r := m.NewRuntime()
	for range 2 {
		_, err := r.Run(args...)
		require.NoError(t, err)
	}
	assert.Zero(t, testing.AllocsPerRun(10, func() { r.Run(args...) }), "Run")
}

// TestBenchmarkIndividualOpsFLOPs: the FLOPs of convolutions (grouped,
// strided, transposed) and matrix products, 2 per multiply-add, counted
// by hand from the shapes; a loop body's per trip; elementwise ops none.
func TestBenchmarkIndividualOpsFLOPs(t *testing.T) {
	const ir = `graph(%x : Tensor, %w : Tensor, %wg : Tensor, %wt : Tensor, %lw : Tensor, %m : Tensor, %n : int):
  %none : NoneType = prim::Constant()
  %true : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %zero : int = prim::Constant[value=0]()
  %s1 : int[] = prim::ListConstruct(%one, %one)
  %s2 : int[] = prim::ListConstruct(%two, %two)
  %p1 : int[] = prim::ListConstruct(%one, %one)
  %p0 : int[] = prim::ListConstruct(%zero, %zero)
  %c1 : Tensor = aten::conv2d(%x, %w, %none, %s1, %p1, %s1, %one)
  %r : Tensor = aten::relu(%c1)
  %c2 : Tensor = aten::conv2d(%r, %wg, %none, %s2, %p1, %s1, %two)
  %ct : Tensor = aten::conv_transpose2d(%c2, %wt, %none, %s2, %p0, %p0, %one, %s1)
  %f : Tensor = aten::flatten(%ct, %one, %zero)
  %l : Tensor = aten::linear(%ct, %lw, %none)
  %y : Tensor = prim::Loop(%n, %true, %m)
    block0(%i : int, %acc : Tensor):
      %acc2 : Tensor = aten::matmul(%acc, %m)
      -> (%true, %acc2)
  return (%l, %y)
`
	f := func(shape ...int) ivalue.IValue {
		n := 1
		for _, d := range shape {
			n *= d
		}
		d := make([]float32, n)
		for i := range d {
			d[i] = float32(i%7) * 0.01
		}
		return ivalue.FromTensor(ivalue.F32Tensor(d, shape...))
	}
	args := []ivalue.IValue{
		f(1, 3, 8, 8), // x
		f(4, 3, 3, 3), // w: 3 -> 4 channels, 3x3, pad 1: out 1x4x8x8
		f(6, 2, 3, 3), // wg: groups 2, 4 -> 6, stride 2: out 1x6x4x4
		f(6, 5, 2, 2), // wt: transposed 6 -> 5, 2x2 stride 2: out 1x5x8x8
		f(3, 8),       // lw: linear over the last dim 8 -> 3: out 1x5x8x3
		f(5, 5),       // m: 5x5 @ 5x5 per trip
		ivalue.FromInt(3),
	}
	r := prepare(t, ir, nil).NewRuntime()
	met, err := r.BenchmarkIndividualOps(args, 1, 4)
	require.NoError(t, err)
	want := map[string]int64{
		"gosr::conv_clamp":       2 * (1 * 4 * 8 * 8) * (3 * 3 * 3), // the first conv2d and its relu, fused
		"aten::conv2d":           2 * (1 * 6 * 4 * 4) * (2 * 3 * 3),
		"aten::conv_transpose2d": 2 * (1 * 6 * 4 * 4) * (5 * 2 * 2),
		"aten::linear":           2 * (1 * 5 * 8 * 3) * 8,
		"aten::matmul":           3 * 2 * (5 * 5) * 5,
	}
	assert.Equal(t, want, met.FLOPsPerOp)
	var total int64
	for _, v := range want {
		total += v
	}
	assert.Equal(t, total, met.FLOPs)
	for _, n := range met.EveryNode {
		if want[n.Op] == 0 {
			assert.Zero(t, n.FLOPs, n.Node)
		}
	}
	assert.Contains(t, met.String(), "GFLOP/s")

	// PerNode: a line a node, in order, the loop body's indented with
	// its trips per iteration; each line's rate is its FLOPs over its
	// time, and its sizes those of its output.
	lines := strings.Split(strings.TrimSuffix(met.PerNode(), "\n"), "\n")
	require.Equal(t, "Time per node:", lines[0])
	require.Len(t, lines, 1+len(met.EveryNode))
	for i, n := range met.EveryNode {
		l := lines[1+i]
		assert.Contains(t, l, n.Node)
		if n.FLOPs > 0 {
			assert.Contains(t, l, fmt.Sprintf("%6.1f GF/s", float64(n.FLOPs)/n.Time.Seconds()/1e9))
		} else {
			assert.NotContains(t, l, "GF/s")
		}
		if n.Depth > 0 {
			assert.Contains(t, l, " x3 ", "three trips a run")
		}
	}
	conv := met.EveryNode[0]
	require.Equal(t, "gosr::conv_clamp", conv.Op)
	assert.Equal(t, []int{1, 4, 8, 8}, conv.Shape)
	assert.Contains(t, lines[1], "[1 4 8 8] node")
}
