package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/gosr/gosr/internal/ptfixture"
	"github.com/gosr/gosr/internal/reference"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMeasureBuiltin(t *testing.T) {
	m, err := loadModel("mlp", modelFlags{})
	require.NoError(t, err)
	res, err := measure(m, benchFlags{timingFlags: timingFlags{iters: 20, warmup: 2, threads: 2, repeats: 3}}, "")
	require.NoError(t, err)
	assert.Less(t, res.MaxAbsDiff, 1e-5)
	assert.Equal(t, 3, res.Nodes, "each linear fused with its relu")
	assert.Zero(t, res.FallbackNodes)
	assert.Equal(t, 3, res.OutVariantNodes, "the three gosr::linear_act")
	assert.Zero(t, res.AllocsPerRun)
	assert.Greater(t, res.UsPerIter, 0.0)
	assert.Greater(t, res.Throughput, 0.0)
	assert.Greater(t, res.ManagedBytes, int64(0))

	b, err := json.Marshal(res)
	require.NoError(t, err)
	var keys map[string]any
	require.NoError(t, json.Unmarshal(b, &keys))
	for _, k := range []string{"us_per_iter", "max_abs_diff", "nodes", "out_variant_nodes", "native_nodes", "fallback_nodes", "managed_bytes", "allocs_per_run", "throughput",
		"planner", "managed_tensors", "lower_bound_bytes", "tensor_bytes", "reused_bytes", "replans", "overwrites", "manage_outputs", "output_tensors", "output_bytes"} {
		assert.Contains(t, keys, k)
	}
	assert.Equal(t, "greedy", keys["planner"], "no -planner: the runtime's default")
	assert.EqualValues(t, res.LowerBoundBytes, keys["lower_bound_bytes"])
}

// quick are flags for measure with f's options that keep a test fast.
func quick(f runtimeFlags) benchFlags {
	return benchFlags{f, timingFlags{iters: 20, warmup: 2, threads: 1, repeats: 3}}
}

func TestPlannerFlag(t *testing.T) {
	_, err := runtimeFlags{planner: "best-fit"}.options()
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
		m, err := loadModel(tc.model, modelFlags{})
		require.NoError(t, err, name)
		res, err := measure(m, quick(runtimeFlags{planner: tc.planner, manageOutputs: tc.manageOutputs}), "")
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
		m, err := loadModel("dlrm_like", modelFlags{})
		require.NoError(t, err)
		res, err := measure(m, quick(runtimeFlags{planner: tc.planner, manageOutputs: tc.manageOutputs}), "")
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
	m, err := loadModel("dlrm_like", modelFlags{})
	require.NoError(t, err)
	f := quick(runtimeFlags{})
	res, err := measure(m, f, "")
	require.NoError(t, err)
	cr := compareResult{Model: m.Name, GosrUs: res.UsPerIter, Planner: res.Planner, ManagedBytes: res.ManagedBytes, ManagedTensors: res.ManagedTensors}
	require.NoError(t, planMemory(m, f.runtimeFlags, &cr))
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
		require.NoError(t, runPyTorch(py, m, compareFlags{benchFlags: benchFlags{timingFlags: timingFlags{warmup: 2, repeats: 1}}}, res, &cr))
		require.NotNil(t, cr.TorchSRManagedBytes, "sr_managed_bytes from pytorch_bench.py")
		require.NotNil(t, cr.TorchSRManagedTensors)
		assert.Greater(t, *cr.TorchSRManagedBytes, int64(0))
		assert.Greater(t, *cr.TorchSRManagedTensors, 0)
		assert.Equal(t, 1, cr.TorchIntraOp, "torch.get_num_threads() in the child: one intra-op thread by default")
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
	_, err := loadModel("no_such_model", modelFlags{})
	require.ErrorContains(t, err, "no model")
	_, err = loadModel("/nonexistent/model.ir", modelFlags{})
	require.Error(t, err)
}

func TestMeasureScriptArchive(t *testing.T) {
	dir := ptfixture.Committed()
	for _, tc := range []struct {
		spec string
		f    modelFlags
	}{
		{dir + "/deep_and_wide.scripted.pt", modelFlags{}}, // inputs and expected found beside it
		{dir + "/dlrm_like.traced_frozen.pt", modelFlags{inputs: dir + "/dlrm_like.inputs.pt", expected: dir + "/dlrm_like.expected.pt"}},
	} {
		m, err := loadModel(tc.spec, tc.f)
		require.NoError(t, err, tc.spec)
		save := filepath.Join(t.TempDir(), "out.pt")
		res, err := measure(m, benchFlags{timingFlags: timingFlags{iters: 20, warmup: 2, threads: 2, repeats: 3}}, save)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, res.MaxAbsDiff, 0.0)
		assert.Less(t, res.MaxAbsDiff, 1e-5)
		assert.Zero(t, res.AllocsPerRun)
		assert.Greater(t, res.Nodes, 0)
		// The saved outputs read back as what PyTorch expects.
		v, err := loaders.ReadTorchSave(save)
		require.NoError(t, err)
		assert.Less(t, reference.MaxAbsDiff(reference.Flatten([]ivalue.IValue{v}), m.Expected), 1e-5)
	}

	// pytorch_bench_pt.py passes back PyTorch Static Runtime's managed
	// bytes and tensors.
	if py := findPython(""); py != "" {
		spec := dir + "/dlrm_like.scripted_frozen.pt"
		m, err := loadModel(spec, modelFlags{})
		require.NoError(t, err)
		f := compareFlags{benchFlags: quick(runtimeFlags{planner: "storage-groups"})}
		res, err := measure(m, f.benchFlags, "")
		require.NoError(t, err)
		f.repeats = 1
		var cr compareResult
		require.NoError(t, runPyTorchScript(py, m, f, res, &cr), spec)
		require.NotNil(t, cr.TorchSRManagedBytes, "%s: sr_managed_bytes", spec)
		require.NotNil(t, cr.TorchSRManagedTensors, spec)
		assert.Greater(t, *cr.TorchSRManagedBytes, int64(0), spec)
		assert.True(t, cr.Agree, spec)
	}
	_, err := loadModel(dir+"/mlp.scripted.pt", modelFlags{inputs: dir + "/deep_and_wide.inputs.pt"})
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

func TestMeasurePoolPercentiles(t *testing.T) {
	for _, tc := range []struct {
		model         string
		threads       int
		manageOutputs bool
	}{
		{"mlp", 1, false},
		{"mlp", 2, false},
		// ReleaseOutputs runs inside Do, before the runtime goes back.
		{"dlrm_like", 2, true},
	} {
		name := fmt.Sprintf("%s -threads %d -manage-outputs=%v", tc.model, tc.threads, tc.manageOutputs)
		m, err := loadModel(tc.model, modelFlags{})
		require.NoError(t, err, name)
		f := quick(runtimeFlags{manageOutputs: tc.manageOutputs})
		f.threads = tc.threads
		res, err := measure(m, f, "")
		require.NoError(t, err, name)
		assert.Less(t, res.MaxAbsDiff, 1e-5, name)
		// Through the pool too, a steady request allocates nothing.
		assert.Zero(t, res.AllocsPerRun, "%s: allocations per run", name)
		assert.Equal(t, tc.threads, res.Threads, name)
		assert.Equal(t, runtime.GOMAXPROCS(0), res.Interop, "%s: interop 0 (runtimeFlags{}) is GOMAXPROCS", name)
		assert.Equal(t, f.iters*f.repeats*tc.threads, res.Requests, "%s: every request timed", name)
		assert.Greater(t, res.P50Us, 0.0, name)
		assert.LessOrEqual(t, res.P50Us, res.P90Us, name)
		assert.LessOrEqual(t, res.P90Us, res.P99Us, name)
		assert.Greater(t, res.MeanUs, 0.0, name)
		assert.Greater(t, res.Throughput, 0.0, name)
		if tc.manageOutputs {
			assert.Zero(t, res.Mem.AbandonedArenas, "%s: every run's outputs were released", name)
		}

		b, err := json.Marshal(res)
		require.NoError(t, err)
		var keys map[string]any
		require.NoError(t, json.Unmarshal(b, &keys))
		for _, k := range []string{"p50_us", "p90_us", "p99_us", "mean_us", "interop", "threads", "throughput", "allocs_per_run"} {
			assert.Contains(t, keys, k, name)
		}
		assert.EqualValues(t, res.P99Us, keys["p99_us"], name)
	}
}

func TestPercentiles(t *testing.T) {
	seq := func(n int) []int64 { // 1..n µs, shuffled order
		s := make([]int64, n)
		for i := range s {
			s[i] = int64((i*7919)%n+1) * 1000
		}
		return s
	}
	for _, tc := range []struct {
		name string
		ns   []int64
		want latencyStats
	}{
		{"empty", nil, latencyStats{}},
		{"one", []int64{2500}, latencyStats{2.5, 2.5, 2.5, 2.5}},
		// Nearest rank: the smallest value with at least p% at or below it.
		{"1..100", seq(100), latencyStats{50, 90, 99, 50.5}},
		{"1..10", seq(10), latencyStats{5, 9, 10, 5.5}},
		{"tail", []int64{1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 100000}, latencyStats{1, 1, 100, 10.9}},
	} {
		got := percentiles(tc.ns)
		assert.InDelta(t, tc.want.P50, got.P50, 1e-9, tc.name)
		assert.InDelta(t, tc.want.P90, got.P90, 1e-9, tc.name)
		assert.InDelta(t, tc.want.P99, got.P99, 1e-9, tc.name)
		assert.InDelta(t, tc.want.Mean, got.Mean, 1e-9, tc.name)
	}
}

func TestParseFlags(t *testing.T) {
	for _, tc := range []struct {
		cmd     string
		args    []string
		model   string
		threads int
		interop int
		timeout time.Duration // compare's -pt-timeout
		err     string
	}{
		{"run", []string{"mlp"}, "mlp", 1, 1, 0, ""},
		{"run", []string{"m.pt", "-threads", "2", "-interop", "2"}, "m.pt", 2, 2, 0, ""},
		{"compare", []string{"m.pt"}, "m.pt", 1, 1, defaultPTTimeout, ""},
		{"compare", []string{"-interop", "3", "m.pt", "-pt-timeout", "5s"}, "m.pt", 1, 3, 5 * time.Second, ""},
		{"run", []string{"-interop", "0"}, "mlp", 1, 0, 0, ""},
		{"run", []string{"-interop", "-1"}, "", 0, 0, 0, "-interop -1: want at least 1"},
		{"run", []string{"-interop", "two"}, "", 0, 0, 0, `invalid value "two" for flag -interop`},
		{"run", []string{"-threads", "0"}, "", 0, 0, 0, "-threads 0: want at least 1"},
		{"compare", []string{"-pt-timeout", "0s"}, "", 0, 0, 0, "-pt-timeout 0s: want a positive duration"},
		{"run", []string{"-pt-timeout", "5s"}, "", 0, 0, 0, "flag provided but not defined: -pt-timeout"},
		{"run", []string{"-planner", "best-fit"}, "", 0, 0, 0, `-planner: memplan: unknown planner "best-fit"`},
	} {
		name := tc.cmd + " " + strings.Join(tc.args, " ")
		c := newCommand(tc.cmd)
		err := parse(tc.cmd, c, tc.args, io.Discard)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, name)
			continue
		}
		require.NoError(t, err, name)
		var f benchFlags
		var model string
		var timeout time.Duration
		switch c := c.(type) {
		case *runFlags:
			f, model = c.benchFlags, c.model
		case *compareFlags:
			f, model, timeout = c.benchFlags, c.model, c.ptTimeout
		}
		assert.Equal(t, tc.model, model, name)
		assert.Equal(t, tc.threads, f.threads, name)
		assert.Equal(t, tc.interop, f.interop, name)
		assert.Equal(t, tc.timeout, timeout, name)
		opts, err := f.options()
		require.NoError(t, err, name)
		assert.Equal(t, f.interopThreads(), opts.InterOpThreads, "%s: -interop sizes Options.InterOpThreads", name)
		if tc.interop == 0 {
			assert.Equal(t, runtime.GOMAXPROCS(0), f.interopThreads(), "%s: 0 is GOMAXPROCS", name)
		}
	}
}

// TestForkEnsembleInterop runs a model whose two branches are
// torch.jit.fork tasks on 2 inter-op workers, from 1 and 2 goroutines,
// and checks its outputs against PyTorch's.
func TestForkEnsembleInterop(t *testing.T) {
	spec := ptfixture.Committed() + "/fork_ensemble.scripted_frozen.pt"
	for _, threads := range []int{1, 2} {
		m, err := loadModel(spec, modelFlags{})
		require.NoError(t, err, spec)
		f := quick(runtimeFlags{interop: 2})
		f.threads = threads
		res, err := measure(m, f, "")
		require.NoError(t, err, "%s -threads %d", spec, threads)
		assert.Equal(t, 2, res.Interop)
		assert.GreaterOrEqual(t, res.MaxAbsDiff, 0.0, "%s: expected outputs found", spec)
		assert.Less(t, res.MaxAbsDiff, 1e-5, "%s -threads %d", spec, threads)
		// Tasks, futures and the forks' runtimes are reused across runs.
		assert.Zero(t, res.AllocsPerRun, "%s -threads %d: allocations per run", spec, threads)
		assert.LessOrEqual(t, res.P50Us, res.P99Us)
	}

	// PyTorch's child runs with 2 inter-op threads (it reports them) and
	// agrees with gosr.
	py := findPython("")
	if py == "" {
		t.Skip("no python3 with torch")
	}
	m, err := loadModel(spec, modelFlags{})
	require.NoError(t, err)
	f := compareFlags{benchFlags: quick(runtimeFlags{interop: 2})}
	res, err := measure(m, f.benchFlags, "")
	require.NoError(t, err)
	f.repeats = 1
	var cr compareResult
	require.NoError(t, runPyTorchScript(py, m, f, res, &cr), spec)
	assert.Equal(t, 2, cr.TorchInterop, "torch.get_num_interop_threads() in the child")
	assert.True(t, cr.Agree, "%s: gosr against PyTorch's Static Runtime", spec)
	assert.Less(t, cr.GosrVsTorch, 1e-5, spec)
}

// fakePython writes an executable shell script standing in for python3.
func fakePython(t *testing.T, body string) string {
	p := filepath.Join(t.TempDir(), "python3")
	require.NoError(t, os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755))
	return p
}

func TestRunChildTimeout(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	for _, tc := range []struct {
		name, body string
		timedOut   bool
		err        string
	}{
		// Silent: killed once the timeout passes (exec: the kill reaches sleep).
		{"hang", "echo loading; exec sleep 30", true, ""},
		// Progress keeps it alive past the timeout: only silence counts.
		{"slow but progressing", "for i in 1 2 3 4 5 6 7 8; do echo repeat $i; sleep 0.1; done; echo '{}'", false, ""},
		{"fails", "echo boom >&2; exit 3", false, "exit status 3: boom"},
	} {
		py := fakePython(t, tc.body)
		t0 := time.Now()
		out, err := runChild(2*time.Second, 1, py, "script.py") // 20x the progress interval: loaded CI machines stall children
		el := time.Since(t0)
		assert.Less(t, el, 10*time.Second, "%s: runChild returned late", tc.name)
		var cr compareResult
		switch {
		case tc.timedOut:
			require.ErrorIs(t, err, errPTTimeout, tc.name)
			assert.Contains(t, out, "loading", "%s: output before the kill is kept", tc.name)
			cr.noteTorchError(err)
			assert.True(t, cr.TorchTimedOut, tc.name)
			assert.True(t, strings.HasPrefix(cr.Note, "PyTorch timed out"), "%s: note %q", tc.name, cr.Note)
		case tc.err != "":
			require.ErrorContains(t, err, tc.err, tc.name)
			assert.NotErrorIs(t, err, errPTTimeout, tc.name)
			cr.noteTorchError(err)
			assert.False(t, cr.TorchTimedOut, tc.name)
			assert.Contains(t, cr.Note, "PyTorch failed: ", tc.name)
		default:
			require.NoError(t, err, tc.name)
			assert.Greater(t, el, 400*time.Millisecond, "%s: ran past the timeout", tc.name)
			assert.Contains(t, out, "repeat 8", tc.name)
		}
	}
}

func TestCompareHeader(t *testing.T) {
	for _, tc := range []struct {
		f         benchFlags
		torch     bool
		want, not []string
	}{
		{benchFlags{runtimeFlags{interop: 2}, timingFlags{threads: 1}}, true,
			[]string{"gosr: 1 goroutine(s) through one pool of 1 runtime(s), 2 inter-op thread(s)", "PyTorch: one caller thread, 1 intra-op thread, 2 inter-op thread(s)"},
			[]string{"single-threaded"}},
		{benchFlags{runtimeFlags{interop: 1}, timingFlags{threads: 2}}, true, []string{"pool of 2 runtime(s)", "PyTorch: one caller thread", "single-threaded"}, nil},
		{benchFlags{runtimeFlags{interop: 1}, timingFlags{threads: 2}}, false, []string{"gosr: 2 goroutine(s)"}, []string{"PyTorch"}},
	} {
		var b strings.Builder
		printCompareHeader(&b, tc.f, tc.torch)
		for _, w := range tc.want {
			assert.Contains(t, b.String(), w)
		}
		for _, w := range tc.not {
			assert.NotContains(t, b.String(), w)
		}
	}
}

// runPyTorch times an IR fixture with PyTorch (pytorchIR) and fills cr.
func runPyTorch(py string, m *model, f compareFlags, res *runResult, cr *compareResult) error {
	ts, err := pytorchIR(py, m, f, res, "")
	if err != nil {
		return err
	}
	ts.apply(cr)
	return nil
}

// runPyTorchScript times the archive with PyTorch's TorchScript
// interpreter and Static Runtime in a child python3 (pytorchScript), and
// compares gosr's outputs with PyTorch's (gosrAgainstTorch).
func runPyTorchScript(py string, m *model, f compareFlags, res *runResult, cr *compareResult) error {
	ts, err := pytorchScript(py, m, f, res, "")
	if err != nil {
		return err
	}
	ts.apply(cr)
	return gosrAgainstTorch(m, f.runtimeFlags, ts, cr)
}

// Where PyTorch's Static Runtime and interpreter disagree (as on
// convnext_tiny), gosr is checked against the interpreter's outputs,
// and the note says so; where they agree, against the Static Runtime's.
// A stand-in python3 writes an output file whose first (Static Runtime)
// half is off by one and whose second (interpreter) half is PyTorch's
// eager output.
func TestPyTorchScriptDisagree(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	m, err := loadModel(filepath.Join(ptfixture.Committed(), "mlp.traced_frozen.pt"), modelFlags{})
	require.NoError(t, err)
	require.Len(t, m.Expected, 1)
	right := m.Expected[0]
	wrong := right.Clone()
	for i, v := range wrong.F32() {
		wrong.F32()[i] = v + 1
	}
	outs := filepath.Join(t.TempDir(), "outs.pt")
	require.NoError(t, loaders.WriteTorchSave(outs, ivalue.NewTuple(ivalue.FromTensor(wrong), ivalue.FromTensor(right))))
	f := compareFlags{benchFlags: quick(runtimeFlags{})}
	res, err := measure(m, f.benchFlags, "")
	require.NoError(t, err)
	for _, agree := range []bool{false, true} {
		py := fakePython(t, fmt.Sprintf(`cp %s "$7" && echo '{"interp_us": [3], "sr_us": [2], "outputs_agree": %v, "torch_version": "1.13"}'`, outs, agree))
		ts, err := pytorchScript(py, m, f, res, "")
		require.NoError(t, err)
		var cr compareResult
		ts.apply(&cr)
		require.NoError(t, gosrAgainstTorch(m, f.runtimeFlags, ts, &cr))
		if agree {
			assert.False(t, cr.Agree, "checked against the (wrong) Static Runtime outputs")
			assert.InDelta(t, 1, cr.GosrVsTorch, 1e-5)
			assert.NotContains(t, cr.Note, "disagree")
			continue
		}
		assert.True(t, cr.Agree, "checked against the interpreter's outputs")
		assert.Less(t, cr.GosrVsTorch, 1e-5)
		assert.Contains(t, cr.Note, "PyTorch's interpreter and Static Runtime disagree; outputs checked against the interpreter")
	}
}

// run -intra-op-scaling: one row per count, every count timed in every
// round, the first count's speed-up 1 by definition, the outputs
// checked, a table and JSON; libtorch's kernels refused.
func TestMeasureScaling(t *testing.T) {
	m, err := loadModel("mlp", modelFlags{})
	require.NoError(t, err)
	f := benchFlags{timingFlags: timingFlags{iters: 5, warmup: 1, threads: 1, repeats: 3}}
	res, err := measureScaling(m, f, []int{1, 2})
	require.NoError(t, err)
	require.Len(t, res.Rows, 2)
	assert.Equal(t, 3, res.Rounds)
	assert.Equal(t, 5, res.ItersRound)
	assert.Less(t, res.MaxAbsDiff, 1e-5)
	assert.Equal(t, 1.0, res.Rows[0].Speedup)
	if runtime.GOMAXPROCS(0) > 1 {
		assert.Positive(t, res.CoreRoundTripNs[0], "the round trip before the rounds")
		assert.Positive(t, res.CoreRoundTripNs[1], "and after")
	}
	for i, row := range res.Rows {
		assert.Equal(t, []int{1, 2}[i], row.IntraOpThreads)
		require.Len(t, row.RoundUs, 3)
		assert.Greater(t, row.UsPerRun, 0.0)
		assert.Contains(t, row.RoundUs, row.UsPerRun, "the median is one of the rounds")
		assert.Greater(t, row.Speedup, 0.0)
	}

	var out strings.Builder
	require.NoError(t, res.print(&out, false))
	assert.Contains(t, out.String(), "intra-op scaling, 3 rounds of 5 runs per count")
	assert.Contains(t, out.String(), "max abs diff from PyTorch's outputs")
	out.Reset()
	require.NoError(t, res.print(&out, true))
	var keys map[string]any
	require.NoError(t, json.Unmarshal([]byte(out.String()), &keys))
	for _, k := range []string{"model", "rounds", "iters_per_round", "rows", "max_abs_diff", "core_round_trip_ns"} {
		assert.Contains(t, keys, k)
	}

	f.backend = backendLibtorch
	_, err = measureScaling(m, f, []int{1, 2})
	require.ErrorContains(t, err, "Go kernels only")
}
