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
// tensors of the run before), so more of them allocate no more.
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
	assert.Equal(t, allocs(1), allocs(41))
	r := m.NewRuntime()
	for range 2 {
		_, err := r.Run(args...)
		require.NoError(t, err)
	}
	assert.Zero(t, testing.AllocsPerRun(10, func() { r.Run(args...) }), "Run")
}
