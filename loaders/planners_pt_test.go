package loaders_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/internal/fixture"
	"github.com/gosr/gosr/internal/ptfixture"
	"github.com/gosr/gosr/internal/raceflag"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders"
	"github.com/gosr/gosr/memplan"
	"github.com/gosr/gosr/staticruntime"
)

// shapePair is one run of a shapes file: inputs at one batch size and
// the eager output PyTorch computed for them.
type shapePair struct {
	batch  int
	inputs []ivalue.IValue
	want   ivalue.IValue
}

// readShapes reads c.Shapes (a list of (inputs tuple, expected) tuples).
func readShapes(t testing.TB, c ptfixture.Case) []shapePair {
	t.Helper()
	v, err := loaders.ReadTorchSave(c.Shapes)
	require.NoError(t, err)
	require.Equal(t, ivalue.KindList, v.Kind(), "%s: want a list of (inputs, expected)", c.Shapes)
	items := v.List().Items
	require.Len(t, items, len(c.ShapeBatches), "%s: one pair per batch size", c.Shapes)
	pairs := make([]shapePair, len(items))
	for i, it := range items {
		require.Equal(t, ivalue.KindTuple, it.Kind(), "%s: pair %d", c.Shapes, i)
		p := it.List().Items
		require.Len(t, p, 2, "%s: pair %d", c.Shapes, i)
		pairs[i] = shapePair{batch: c.ShapeBatches[i], inputs: p[0].List().Items, want: p[1]}
	}
	return pairs
}

// shapeConfigs are the planners a shapes sequence runs under.
var shapeConfigs = []struct {
	pl        memplan.Planner
	manageOut bool
}{{memplan.None{}, false}, {memplan.StorageGroups{}, false}, {memplan.GreedyBySize{}, false}, {memplan.GreedyBySize{}, true}}

// TestPlannersShapes runs each model's batch sequence (up, down, a new
// largest, back to it, down) on one runtime per planner, with the plan
// checked after every node: PyTorch's outputs at every size; then, the
// largest size having been seen, the sequence again re-plans nothing and
// allocates nothing.
func TestPlannersShapes(t *testing.T) {
	cases, err := ptfixture.Manifest(ptfixture.Committed())
	require.NoError(t, err)
	n := 0
	for _, c := range cases {
		if c.Shapes == "" {
			continue
		}
		n++
		pairs := readShapes(t, c)
		t.Run(c.Name(), func(t *testing.T) {
			for _, cf := range shapeConfigs {
				t.Run(fmt.Sprintf("%s/manage_outputs=%v", cf.pl.Name(), cf.manageOut), func(t *testing.T) {
					m, err := loaders.Load(c.Path)
					require.NoError(t, err)
					defer m.Close()
					o := staticruntime.DefaultOptions()
					o.Planner, o.ManageOutputTensors, o.CheckPlan = cf.pl, cf.manageOut, true
					sm, err := staticruntime.NewStaticModule(m.Graph, &o)
					require.NoError(t, err)
					r := sm.NewRuntime()
					for pass := 0; pass < 2; pass++ {
						for i, p := range pairs {
							out, err := r.Run(p.inputs...)
							require.NoError(t, err, "pass %d, pair %d (batch %d)", pass, i, p.batch)
							got := fixture.Flatten(out)
							want := fixture.Flatten([]ivalue.IValue{p.want})
							require.Equal(t, len(want), len(got), "number of output tensors")
							for j := range got {
								assert.NoError(t, fixture.Compare(got[j], want[j], c.RTol, c.ATol),
									"output %d, pass %d, pair %d (batch %d)", j, pass, i, p.batch)
							}
							r.ReleaseOutputs()
						}
					}
					st := r.MemoryStats()
					before := st.Replans + st.OutputReplans
					for _, p := range pairs {
						_, err := r.Run(p.inputs...)
						require.NoError(t, err)
						r.ReleaseOutputs()
					}
					st = r.MemoryStats()
					assert.Equal(t, before, st.Replans+st.OutputReplans, "re-plans after every size was seen")
					if raceflag.Enabled || testing.Short() {
						return
					}
					o.CheckPlan = false
					sm, err = staticruntime.NewStaticModule(m.Graph, &o)
					require.NoError(t, err)
					r = sm.NewRuntime()
					runAll := func() {
						for _, p := range pairs {
							r.Run(p.inputs...)
							r.ReleaseOutputs()
						}
					}
					runAll()
					assert.Zero(t, testing.AllocsPerRun(3, runAll), "allocations per sequence of %v, once its largest was seen", c.ShapeBatches)
				})
			}
		})
	}
	require.NotZero(t, n, "no committed case has a shapes file")
}

// TestPlannersAgainstPyTorchFigure: on the inputs PyTorch's Static Runtime
// ran, greedy-by-size's slab is never larger than the "Total memory
// managed" PyTorch reported, although gosr's slab holds more tensors
// (the outputs of ops PyTorch 1.13 runs without an out variant, such as
// convolutions, which PyTorch allocates on every run outside its slab):
// planned overwrites (a pooling written over its activation, a 1x1
// convolution over its input) pay for them, and the parts of a cat that
// makes an output are written straight into it. Like for like, all of
// gosr's intermediate memory (slab and the rest) is never above the peak
// PyTorch really reaches. PyTorch's figure leaves out the bodies of
// prim::If and prim::Loop and forked calls: only cases it managed memory
// for are compared.
func TestPlannersAgainstPyTorchFigure(t *testing.T) {
	cases, err := ptfixture.Manifest(ptfixture.Committed())
	require.NoError(t, err)
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-40s %8s %8s %10s %10s %10s %10s %10s %10s\n", "case", "pt n", "gosr n", "pytorch", "groups", "greedy", "lower", "pt peak", "gosr all")
	for _, c := range cases {
		if c.PTManagedBytes == 0 {
			continue
		}
		t.Run(c.Name(), func(t *testing.T) {
			m, err := loaders.Load(c.Path)
			require.NoError(t, err)
			defer m.Close()
			in, err := loaders.ReadTorchSave(c.Inputs)
			require.NoError(t, err)
			var got [2]staticruntime.MemoryStats
			for i, pl := range []memplan.Planner{memplan.StorageGroups{}, memplan.GreedyBySize{}} {
				o := staticruntime.DefaultOptions()
				o.Planner = pl
				sm, err := staticruntime.NewStaticModule(m.Graph, &o)
				require.NoError(t, err)
				r := sm.NewRuntime()
				for run := 0; run < 2; run++ {
					_, err := r.Run(in.List().Items...)
					require.NoError(t, err)
				}
				got[i] = r.MemoryStats()
			}
			all := got[1].ManagedBytes + got[1].UnmanagedBytes
			fmt.Fprintf(&b, "%-40s %8d %8d %10d %10d %10d %10d %10d %10d\n", c.Name(), c.PTManagedTensors, got[1].ManagedTensors,
				c.PTManagedBytes, got[0].ManagedBytes, got[1].ManagedBytes, got[1].LowerBound, c.PTPeakBytes, all)
			// Like for like: all the intermediate memory of a run, planned or
			// not, against the peak PyTorch's Static Runtime really reaches.
			if c.PTPeakBytes > 0 {
				assert.LessOrEqual(t, all, c.PTPeakBytes, "gosr's intermediate memory above PyTorch's real peak")
			}
			assert.LessOrEqual(t, got[1].ManagedBytes, c.PTManagedBytes,
				"greedy's slab above PyTorch's Static Runtime's Total memory managed (%d tensors here, %d in PyTorch)",
				got[1].ManagedTensors, c.PTManagedTensors)
		})
	}
	t.Log(b.String())
}
