package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gosr/gosr/internal/fixture"
	"github.com/gosr/gosr/internal/ptfixture"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMeasureBuiltin(t *testing.T) {
	m, err := loadModel("mlp", flags{})
	require.NoError(t, err)
	res, err := measure(m, flags{iters: 20, warmup: 2, threads: 2, repeats: 3})
	require.NoError(t, err)
	assert.Less(t, res.MaxAbsDiff, 1e-5)
	assert.Equal(t, 6, res.Nodes)
	// Out variant or native (the in-place pass makes relu native relu_),
	// never a fallback.
	assert.Zero(t, res.FallbackNodes)
	assert.GreaterOrEqual(t, res.OutVariantNodes, 3, "the three linears")
	assert.Zero(t, res.AllocsPerRun)
	assert.Greater(t, res.UsPerIter, 0.0)
	assert.Greater(t, res.Throughput, 0.0)
	assert.Greater(t, res.ManagedBytes, int64(0))

	b, err := json.Marshal(res)
	require.NoError(t, err)
	var keys map[string]any
	require.NoError(t, json.Unmarshal(b, &keys))
	for _, k := range []string{"us_per_iter", "max_abs_diff", "nodes", "out_variant_nodes", "native_nodes", "fallback_nodes", "managed_bytes", "allocs_per_run", "throughput",
		"planner", "managed_tensors", "lower_bound_bytes", "tensor_bytes", "reused_bytes", "replans", "manage_outputs", "output_tensors", "output_bytes"} {
		assert.Contains(t, keys, k)
	}
	assert.Equal(t, "greedy", keys["planner"], "no -planner: the runtime's default")
	assert.EqualValues(t, res.LowerBoundBytes, keys["lower_bound_bytes"])
}

// quick are flags for measure that keep a test fast.
func quick(f flags) flags {
	f.iters, f.warmup, f.threads, f.repeats = 20, 2, 1, 3
	return f
}

func TestPlannerFlag(t *testing.T) {
	_, err := flags{planner: "best-fit"}.options()
	require.ErrorContains(t, err, `unknown planner "best-fit"`)
	assert.ErrorContains(t, err, "none, storage-groups, greedy", "the error lists the valid planners")

	for _, tc := range []struct {
		model, planner string
		manageOutputs  bool
	}{
		{"mlp", "none", false},
		{"mlp", "storage-groups", false},
		{"mlp", "greedy", false},
		{"dlrm_like", "none", false},
		{"dlrm_like", "storage-groups", false},
		{"dlrm_like", "greedy", false},
		{"dlrm_like", "greedy", true},
		{"dlrm_like", "storage-groups", true},
	} {
		name := tc.model + "/" + tc.planner
		m, err := loadModel(tc.model, flags{})
		require.NoError(t, err, name)
		res, err := measure(m, quick(flags{planner: tc.planner, manageOutputs: tc.manageOutputs}))
		require.NoError(t, err, name)
		assert.Equal(t, tc.planner, res.Planner, name)
		assert.Less(t, res.MaxAbsDiff, 1e-5, name)
		// ReleaseOutputs in the loops keeps the output arena reused.
		assert.Zero(t, res.AllocsPerRun, "%s: allocations per run", name)
		assert.Greater(t, res.ManagedTensors, 0, name)
		assert.GreaterOrEqual(t, res.ManagedBytes, res.LowerBoundBytes, "%s: managed bytes below the lower bound", name)
		assert.Equal(t, res.TensorBytes-res.ManagedBytes, res.ReusedBytes, name)
		if tc.planner == "none" {
			// One slab, nothing shared.
			assert.Equal(t, res.TensorBytes, res.ManagedBytes, name)
			assert.Zero(t, res.ReusedBytes, name)
		}
		assert.Equal(t, tc.manageOutputs, res.ManageOutputs, name)
		if tc.manageOutputs {
			assert.Greater(t, res.OutputTensors, 0, name)
			assert.Greater(t, res.OutputBytes, int64(0), name)
			assert.Zero(t, res.Mem.AbandonedArenas, "%s: every run's outputs were released", name)
		} else {
			assert.Zero(t, res.OutputBytes, name)
		}
	}
}

func TestRunMemoryBlock(t *testing.T) {
	for _, tc := range []struct {
		planner       string
		verbose       bool
		manageOutputs bool
		want, not     []string
	}{
		{"greedy", false, false,
			[]string{"memory (planner greedy)", "managed tensors: ", "managed bytes: ", "lower bound: ", "managed/lower bound: ", "tensor bytes: ", "bytes reused: ", "re-plans: "},
			[]string{"output arena", "tensor 0:", "group 0:"}},
		{"greedy", true, false, []string{"tensor 0: offset ", ", steps "}, []string{"group 0:"}},
		{"storage-groups", true, false, []string{"memory (planner storage-groups)", "group 0: ", ", tensors ", "tensor 0: offset "}, nil},
		{"none", false, true, []string{"memory (planner none)", "bytes reused: 0 (0.0% of tensor bytes)", "output arena: 1 tensors, "}, nil},
	} {
		name := tc.planner + map[bool]string{true: " -v", false: ""}[tc.verbose]
		m, err := loadModel("dlrm_like", flags{})
		require.NoError(t, err)
		res, err := measure(m, quick(flags{planner: tc.planner, manageOutputs: tc.manageOutputs}))
		require.NoError(t, err, name)
		var b strings.Builder
		printMemory(&b, res, tc.verbose)
		for _, w := range tc.want {
			assert.Contains(t, b.String(), w, name)
		}
		for _, w := range tc.not {
			assert.NotContains(t, b.String(), w, name)
		}
		if tc.verbose {
			// One line per managed tensor.
			assert.Equal(t, res.ManagedTensors, strings.Count(b.String(), ": offset "), name)
		}
	}
}

func TestCompareMemory(t *testing.T) {
	m, err := loadModel("dlrm_like", flags{})
	require.NoError(t, err)
	f := quick(flags{})
	res, err := measure(m, f)
	require.NoError(t, err)
	cr := compareResult{Model: m.Name, GosrUs: res.UsPerIter, Planner: res.Planner, ManagedBytes: res.ManagedBytes, ManagedTensors: res.ManagedTensors}
	require.NoError(t, planMemory(m, f, &cr))
	none, sg, greedy := cr.PlannerBytes["none"], cr.PlannerBytes["storage-groups"], cr.PlannerBytes["greedy"]
	assert.Equal(t, res.ManagedBytes, greedy, "the timed planner's bytes")
	assert.Equal(t, res.LowerBoundBytes, cr.LowerBoundBytes)
	assert.Greater(t, cr.LowerBoundBytes, int64(0))
	assert.GreaterOrEqual(t, none, sg)
	assert.GreaterOrEqual(t, sg, greedy)
	assert.GreaterOrEqual(t, greedy, cr.LowerBoundBytes)

	// PyTorch Static Runtime's "Total memory managed", from its report.
	if py := findPython(""); py == "" {
		t.Log("no python3 with torch: PyTorch's managed bytes not checked")
	} else {
		require.NoError(t, runPyTorch(py, m, flags{warmup: 2, repeats: 1}, res, &cr))
		require.NotNil(t, cr.TorchSRManagedBytes, "sr_managed_bytes from pytorch_bench.py")
		require.NotNil(t, cr.TorchSRManagedTensors)
		assert.Greater(t, *cr.TorchSRManagedBytes, int64(0))
		assert.Greater(t, *cr.TorchSRManagedTensors, 0)
	}

	b, err := json.Marshal(cr)
	require.NoError(t, err)
	var keys map[string]any
	require.NoError(t, json.Unmarshal(b, &keys))
	for _, k := range []string{"planner", "managed_bytes", "managed_bytes_by_planner", "lower_bound_bytes"} {
		assert.Contains(t, keys, k)
	}

	var tab strings.Builder
	printMemoryTable(&tab, []compareResult{cr})
	for _, w := range []string{"none", "storage-groups", "greedy", "lower bound", "greedy/lb", "PyTorch SR", "greedy/PyTorch", "dlrm_like"} {
		assert.Contains(t, tab.String(), w)
	}
}

func TestLoadModelErrors(t *testing.T) {
	_, err := loadModel("no_such_model", flags{})
	require.ErrorContains(t, err, "no model")
	_, err = loadModel("/nonexistent/model.ir", flags{})
	require.Error(t, err)
}

func TestMeasureScriptArchive(t *testing.T) {
	dir := ptfixture.Committed()
	for _, tc := range []struct {
		spec string
		f    flags
	}{
		{dir + "/deep_and_wide.scripted.pt", flags{}}, // inputs and expected found beside it
		{dir + "/dlrm_like.traced_frozen.pt", flags{inputs: dir + "/dlrm_like.inputs.pt", expected: dir + "/dlrm_like.expected.pt"}},
	} {
		m, err := loadModel(tc.spec, tc.f)
		require.NoError(t, err, tc.spec)
		f := tc.f
		f.iters, f.warmup, f.threads, f.repeats = 20, 2, 2, 3
		f.save = filepath.Join(t.TempDir(), "out.pt")
		res, err := measure(m, f)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, res.MaxAbsDiff, 0.0)
		assert.Less(t, res.MaxAbsDiff, 1e-5)
		assert.Zero(t, res.AllocsPerRun)
		assert.Greater(t, res.Nodes, 0)
		// The saved outputs read back as what PyTorch expects.
		v, err := loaders.ReadTorchSave(f.save)
		require.NoError(t, err)
		assert.Less(t, fixture.MaxAbsDiff(fixture.Flatten([]ivalue.IValue{v}), m.Expected), 1e-5)
	}

	// pytorch_bench_pt.py passes back PyTorch Static Runtime's managed
	// bytes and tensors.
	if py := findPython(""); py != "" {
		spec := dir + "/dlrm_like.scripted_frozen.pt"
		m, err := loadModel(spec, flags{})
		require.NoError(t, err)
		f := quick(flags{planner: "storage-groups"})
		res, err := measure(m, f)
		require.NoError(t, err)
		f.repeats = 1
		var cr compareResult
		require.NoError(t, runPyTorchScript(py, m, f, res, &cr), spec)
		require.NotNil(t, cr.TorchSRManagedBytes, "%s: sr_managed_bytes", spec)
		require.NotNil(t, cr.TorchSRManagedTensors, spec)
		assert.Greater(t, *cr.TorchSRManagedBytes, int64(0), spec)
		assert.True(t, cr.Agree, spec)
	}
	_, err := loadModel(dir+"/mlp.scripted.pt", flags{inputs: dir + "/deep_and_wide.inputs.pt"})
	require.ErrorContains(t, err, "forward takes 1")
}

func TestIsDataFile(t *testing.T) {
	// compare DIR skips the torch.save files kept beside the archives.
	for p, want := range map[string]bool{
		"testdata/pt/mlp.scripted.pt":      false,
		"testdata/pt/mlp.traced_frozen.pt": false,
		"testdata/pt/mlp.inputs.pt":        true,
		"testdata/pt/mlp.expected.pt":      true,
		"testdata/pt/dlrm_like.shapes.pt":  true,
		"testdata/pt/shapes.scripted.pt":   false,
	} {
		assert.Equal(t, want, isDataFile(p), p)
	}
}
