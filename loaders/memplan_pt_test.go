package loaders_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/graph/alias"
	"github.com/gosr/gosr/internal/fixture"
	"github.com/gosr/gosr/internal/ptfixture"
	"github.com/gosr/gosr/internal/raceflag"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders"
	"github.com/gosr/gosr/memplan"
	"github.com/gosr/gosr/ops"
	"github.com/gosr/gosr/staticruntime"
)

// planCase loads c and prepares it with the given planner.
func planCase(t testing.TB, c ptfixture.Case, o staticruntime.Options) (*staticruntime.StaticModule, []ivalue.IValue, ivalue.IValue) {
	t.Helper()
	m, err := loaders.Load(c.Path)
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	in, err := loaders.ReadTorchSave(c.Inputs)
	require.NoError(t, err)
	inputs := []ivalue.IValue{in}
	if in.Kind() == ivalue.KindTuple || in.Kind() == ivalue.KindList {
		inputs = in.List().Items
	}
	want, err := loaders.ReadTorchSave(c.Expected)
	require.NoError(t, err)
	sm, err := staticruntime.NewStaticModule(m.Graph, &o)
	require.NoError(t, err)
	return sm, inputs, want
}

func checkOutputs(t *testing.T, c ptfixture.Case, got []ivalue.IValue, want ivalue.IValue, what string) {
	t.Helper()
	g := fixture.Flatten(got)
	w := fixture.Flatten([]ivalue.IValue{want})
	require.Equal(t, len(w), len(g), "number of output tensors")
	for i := range g {
		assert.NoError(t, fixture.Compare(g[i], w[i], c.RTol, c.ATol), "output %d, %s", i, what)
	}
}

// memoryRow is one model's figures for the planner table.
type memoryRow struct {
	name                string
	none, groups, greed int64
	lower               int64
	unmanaged           int64
	tensors             int
}

// testPlanners runs each case with every planner (and greedy with managed
// outputs): PyTorch's outputs on every run, the plan checked after every
// node, greedy within 5% of the lower bound and never above storage
// groups, and no allocation in a steady run.
func testPlanners(t *testing.T, cases []ptfixture.Case) []memoryRow {
	var rows []memoryRow
	for _, c := range cases {
		row := memoryRow{name: c.Name()}
		t.Run(c.Name(), func(t *testing.T) {
			type config struct {
				pl        memplan.Planner
				manageOut bool
			}
			configs := []config{{memplan.None{}, false}, {memplan.StorageGroups{}, false}, {memplan.GreedyBySize{}, false}, {memplan.GreedyBySize{}, true}}
			for _, cf := range configs {
				t.Run(fmt.Sprintf("%s/manage_outputs=%v", cf.pl.Name(), cf.manageOut), func(t *testing.T) {
					o := staticruntime.DefaultOptions()
					o.Planner, o.ManageOutputTensors, o.CheckPlan = cf.pl, cf.manageOut, true
					sm, inputs, want := planCase(t, c, o)
					r := sm.NewRuntime()
					for run := 0; run < 2; run++ { // the second run uses the planned memory
						out, err := r.Run(inputs...)
						require.NoError(t, err)
						checkOutputs(t, c, out, want, fmt.Sprintf("run %d", run))
						r.ReleaseOutputs()
					}
					st := r.MemoryStats()
					assert.GreaterOrEqual(t, st.ManagedBytes, st.LowerBound)
					if !cf.manageOut {
						switch cf.pl.(type) {
						case memplan.None:
							row.none = st.ManagedBytes
						case memplan.StorageGroups:
							row.groups = st.ManagedBytes
						case memplan.GreedyBySize:
							row.greed, row.lower, row.tensors, row.unmanaged = st.ManagedBytes, st.LowerBound, st.ManagedTensors, st.UnmanagedBytes
							assert.LessOrEqual(t, float64(st.ManagedBytes), 1.05*float64(st.LowerBound), "greedy within 5%% of the lower bound")
						}
					}
					if raceflag.Enabled || testing.Short() {
						return
					}
					o.CheckPlan = false
					sm, inputs, _ = planCase(t, c, o)
					r = sm.NewRuntime()
					for i := 0; i < 2; i++ {
						_, err := r.Run(inputs...)
						require.NoError(t, err)
						r.ReleaseOutputs()
					}
					n := 10
					if c.Large {
						n = 1
					}
					assert.Zero(t, testing.AllocsPerRun(n, func() { r.Run(inputs...); r.ReleaseOutputs() }), "allocations per steady Run")
				})
			}
			assert.LessOrEqual(t, row.greed, row.groups, "greedy never above storage groups")
			if c.Large && c.PTManagedBytes > 0 {
				// PyTorch's slab leaves out the convolutions' outputs;
				// planned overwrites pay for holding them in gosr's.
				assert.LessOrEqual(t, row.greed, c.PTManagedBytes, "greedy above PyTorch's Total memory managed")
			}
		})
		rows = append(rows, row)
	}
	return rows
}

func logRows(t *testing.T, rows []memoryRow) {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-34s %8s %10s %10s %10s %10s %8s %10s\n", "model", "tensors", "none", "groups", "greedy", "lower", "gr/lb", "unmanaged")
	for _, r := range rows {
		ratio := 0.0
		if r.lower > 0 {
			ratio = float64(r.greed) / float64(r.lower)
		}
		fmt.Fprintf(&b, "%-34s %8d %10d %10d %10d %10d %8.3f %10d\n", r.name, r.tensors, r.none, r.groups, r.greed, r.lower, ratio, r.unmanaged)
	}
	t.Log(b.String())
}

func TestPlannersMatchPyTorch(t *testing.T) {
	cases, err := ptfixture.Manifest(ptfixture.Committed())
	require.NoError(t, err)
	logRows(t, testPlanners(t, cases))
}

func TestPlannersLargeMatchPyTorch(t *testing.T) {
	if testing.Short() {
		t.Skip("large models")
	}
	dir := ptfixture.LargeDir(t)
	cases, err := ptfixture.Manifest(dir)
	require.NoError(t, err)
	// One variant per model: the graphs of a model's variants are the same
	// once frozen, and each run takes tens of milliseconds.
	var pick []ptfixture.Case
	seen := map[string]bool{}
	for _, c := range cases {
		if strings.HasSuffix(c.Variant, "frozen") && !seen[c.Model] {
			seen[c.Model] = true
			pick = append(pick, c)
		}
	}
	logRows(t, testPlanners(t, pick))
}

// TestPlanCostResnet18: computing resnet18's lifetimes (alias analysis
// included) and its greedy plan takes well under 5 ms.
func TestPlanCostResnet18(t *testing.T) {
	if testing.Short() {
		t.Skip("large models")
	}
	dir := ptfixture.LargeDir(t)
	cases, err := ptfixture.Manifest(dir)
	require.NoError(t, err)
	var c *ptfixture.Case
	for i := range cases {
		if cases[i].Model == "resnet18" && strings.HasSuffix(cases[i].Variant, "frozen") {
			c = &cases[i]
			break
		}
	}
	if c == nil {
		t.Skip("no resnet18 fixture")
	}
	sm, inputs, _ := planCase(t, *c, staticruntime.DefaultOptions())
	r := sm.NewRuntime()
	_, err = r.Run(inputs...)
	require.NoError(t, err)
	_, err = r.Run(inputs...)
	require.NoError(t, err)
	reqs := r.MemoryStats().Tensors
	require.NotEmpty(t, reqs)

	g := sm.Graph()
	best := time.Hour
	for i := 0; i < 20; i++ {
		t0 := time.Now()
		db := alias.Analyze(g)
		lts, _ := memplan.Lifetimes(g, db, memplan.LifetimeOptions{Overwrite: func(n *graph.Node) (int, bool) {
			r, ok := ops.OverwriteRuleOf(n)
			return r.Input, ok
		}})
		p := memplan.GreedyBySize{}.Plan(reqs)
		best = min(best, time.Since(t0))
		require.NotEmpty(t, lts)
		require.NoError(t, memplan.Check(reqs, p))
	}
	t.Logf("resnet18: %d managed tensors; alias analysis + lifetimes + greedy plan: %v (best of 20)", len(reqs), best)
	if !raceflag.Enabled {
		assert.Less(t, best, 5*time.Millisecond)
	}
}
