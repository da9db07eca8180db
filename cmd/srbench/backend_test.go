package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gosr/gosr/libtorch"
	"github.com/gosr/gosr/ops"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMain runs srbench's main instead of the tests when
// SRBENCH_TEST_MAIN is set, so that a test can run the command in a child
// process (exit status, stderr) without building it.
func TestMain(m *testing.M) {
	if args := os.Getenv("SRBENCH_TEST_MAIN"); args != "" {
		os.Args = append([]string{"srbench"}, strings.Fields(args)...)
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// srbench runs this test binary as srbench with args and env.
func srbench(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(append(os.Environ(), "SRBENCH_TEST_MAIN="+strings.Join(args, " ")), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return o.String(), e.String(), code
}

// requireLibtorch opens the libtorch backend, or skips the test when the
// shim is missing (fails instead with GOSR_REQUIRE_LIBTORCH=1, as in CI).
func requireLibtorch(t *testing.T) {
	t.Helper()
	_, err := openLibtorch(1)
	if errors.Is(err, libtorch.ErrNoShim) && os.Getenv("GOSR_REQUIRE_LIBTORCH") == "" {
		t.Skipf("no libtorch shim (make libtorch; GOSR_REQUIRE_LIBTORCH=1 fails here instead): %v", err)
	}
	require.NoError(t, err)
}

func TestParseFlagsBackend(t *testing.T) {
	for _, tc := range []struct {
		cmd     string
		args    []string
		backend string
		intraOp int
		err     string
	}{
		{"run", nil, "go", 1, ""},
		{"run", []string{"mlp", "-backend", "libtorch"}, "libtorch", 1, ""},
		{"run", []string{"-backend", "auto", "m.pt", "-intra-op-threads", "2"}, "auto", 2, ""},
		{"ops", []string{"-backend", "libtorch"}, "libtorch", 1, ""},
		{"compare", []string{"-backend", "all"}, "all", 1, ""},
		{"compare", []string{"-backend", "go", "-intra-op-threads", "4"}, "go", 4, ""},
		{"run", []string{"-backend", "all"}, "", 0, "-backend all: only compare runs every backend"},
		{"run", []string{"-backend", "torch"}, "", 0, `-backend "torch": want go, libtorch or auto`},
		{"run", []string{"-backend", ""}, "", 0, `-backend "": want go, libtorch or auto`},
		{"run", []string{"-backend", "Go"}, "", 0, `-backend "Go": want go, libtorch or auto`},
		{"compare", []string{"-backend", "cuda"}, "", 0, `-backend "cuda": want go, libtorch, auto or all`},
		{"run", []string{"-intra-op-threads", "0"}, "", 0, "-intra-op-threads 0: want at least 1"},
		{"run", []string{"-intra-op-threads", "x"}, "", 0, `invalid value "x" for flag -intra-op-threads`},
		{"run", []string{"-backend", "libtorch", "-device", "cuda:1"}, "libtorch", 1, ""},
		{"run", []string{"-device", "cuda"}, "", 0, "-device cuda:0: gosr's Go kernels read host memory only; use -backend libtorch"},
		{"run", []string{"-backend", "auto", "-device", "libtorch-cpu"}, "", 0, "use -backend libtorch"},
		{"run", []string{"-backend", "libtorch", "-device", "tpu"}, "", 0, `-device: unknown device "tpu"`},
	} {
		name := tc.cmd + " " + strings.Join(tc.args, " ")
		c := newCommand(tc.cmd)
		err := parse(tc.cmd, c, tc.args, io.Discard)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, name)
			continue
		}
		require.NoError(t, err, name)
		rf := c.(interface {
			backendName() string
			intraOpThreads() int
		})
		assert.Equal(t, tc.backend, rf.backendName(), name)
		assert.Equal(t, tc.intraOp, rf.intraOpThreads(), name)
	}

	// go needs no shim: Options keep the Go kernels.
	var f runFlags
	require.NoError(t, parse("run", &f, nil, io.Discard))
	opts, err := f.options()
	require.NoError(t, err)
	assert.Nil(t, opts.Backend)
	assert.Equal(t, ops.BackendGo, opts.BackendMode)
	assert.Equal(t, 1, opts.IntraOpThreads, "one goroutine per op by default")
	// -intra-op-threads splits gosr's Go kernels too.
	require.NoError(t, parse("run", &f, []string{"-intra-op-threads", "2"}, io.Discard))
	opts, err = f.options()
	require.NoError(t, err)
	assert.Equal(t, 2, opts.IntraOpThreads)
	assert.Equal(t, "go (2 intra-op threads)", f.backendLabel())
	require.NoError(t, f.checkBackend())
	// all is compare's, row by row: never a module's backend.
	_, err = runtimeFlags{backend: backendAll}.options()
	require.ErrorContains(t, err, "no single backend")
}

// TestBackendNoShim runs srbench with the shim looked for where it is not:
// libtorch and auto fail before loading a model, with libtorch's message
// (what to install, where it looked), and exit non-zero; go runs.
func TestBackendNoShim(t *testing.T) {
	env := []string{"GOSR_LIBTORCH_SHIM=/nonexistent/libgosrtorch.so"}
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"run", "-model", "mlp", "-backend", "libtorch"}, 1},
		{[]string{"run", "-backend", "auto", "no_such_model"}, 1},
		{[]string{"compare", "-model", "mlp", "-backend", "all"}, 1},
		{[]string{"ops", "-model", "mlp", "-backend", "libtorch"}, 1},
		{[]string{"run", "-model", "mlp", "-backend", "bogus"}, 2},
	} {
		name := strings.Join(tc.args, " ")
		stdout, stderr, code := srbench(t, env, tc.args...)
		assert.Equal(t, tc.code, code, "%s: exit status; stderr %s", name, stderr)
		assert.Empty(t, stdout, name)
		if tc.code == 1 {
			assert.Contains(t, stderr, "srbench: -backend ", name)
			assert.Contains(t, stderr, libtorch.ErrNoShim.Error(), name)
			assert.Contains(t, stderr, "/nonexistent/libgosrtorch.so", "%s: names the file looked for", name)
			assert.Contains(t, stderr, "libtorch-dev", "%s: says what to install", name)
			assert.NotContains(t, stderr, "no model", "%s: fails before loading the model", name)
		}
	}
	stdout, stderr, code := srbench(t, env, "run", "-model", "mlp", "-backend", "go", "-warmup", "2", "-iters", "20", "-repeats", "1", "-json")
	require.Zero(t, code, stderr)
	assert.Contains(t, stdout, `"backend":"go"`)
}

func TestRunBackends(t *testing.T) {
	for _, tc := range []struct {
		backend string
		mode    ops.BackendMode
		shim    bool
	}{
		{"go", ops.BackendGo, false},
		{"libtorch", ops.BackendOnly, true},
		{"auto", ops.BackendAuto, true},
	} {
		t.Run(tc.backend, func(t *testing.T) {
			if tc.shim {
				requireLibtorch(t)
			}
			f := quick(runtimeFlags{backend: tc.backend, intraOp: 1})
			opts, err := f.options()
			require.NoError(t, err)
			assert.Equal(t, tc.mode, opts.BackendMode)
			assert.Equal(t, tc.shim, opts.Backend != nil)

			m, err := loadModel("mlp", modelFlags{})
			require.NoError(t, err)
			res, err := measure(m, f, "")
			require.NoError(t, err)
			assert.Less(t, res.MaxAbsDiff, 1e-5)
			assert.GreaterOrEqual(t, res.MaxAbsDiff, 0.0)
			assert.Zero(t, res.FallbackNodes)
			assert.Zero(t, res.AllocsPerRun)
			assert.Equal(t, tc.backend, res.Backend)

			b, err := json.Marshal(res)
			require.NoError(t, err)
			var keys map[string]any
			require.NoError(t, json.Unmarshal(b, &keys))
			assert.Equal(t, tc.backend, keys["backend"])
			if tc.shim {
				assert.EqualValues(t, 1, keys["intra_op_threads"])
			}

			if tc.backend != backendAuto {
				assert.Nil(t, res.Auto)
				assert.NotContains(t, keys, "auto")
				return
			}
			// -warmup 2 is below auto's 16: the warm-up went on until the
			// three linears had chosen, before anything was timed.
			require.NotNil(t, res.Auto)
			assert.Zero(t, res.Auto.Measuring)
			assert.Len(t, res.Auto.Nodes, 3)
			assert.Equal(t, 3, res.Auto.Libtorch+res.Auto.Go)
			assert.Contains(t, keys, "auto")
			for _, n := range res.Auto.Nodes {
				assert.Equal(t, "aten::linear", n.Node)
				assert.Contains(t, []string{"go", "libtorch"}, n.Choice)
				assert.Greater(t, n.GoUs, 0.0)
				assert.Greater(t, n.LibtorchUs, 0.0)
			}
			var short, long strings.Builder
			printAuto(&short, "", "", res.Auto, false)
			printAuto(&long, "", "", res.Auto, true)
			assert.Regexp(t, `^auto: \d of 3 nodes chose libtorch, \d chose go\n$`, short.String())
			assert.Equal(t, 4, strings.Count(long.String(), "\n"), long.String())
			assert.Contains(t, long.String(), "aten::linear %")
			assert.Contains(t, long.String(), "chose ")
		})
	}
}

// TestRunDevice runs a built-in model placed on libtorch's CPU allocator
// (the device path without a GPU) and, where libtorch has none, asks for
// CUDA and gets libtorch's reason.
func TestRunDevice(t *testing.T) {
	requireLibtorch(t)
	f := quick(runtimeFlags{backend: backendLibtorch, intraOp: 1, device: "libtorch-cpu"})
	opts, err := f.options()
	require.NoError(t, err)
	assert.Equal(t, "libtorch-cpu", opts.Device)
	m, err := loadModel("mlp", modelFlags{})
	require.NoError(t, err)
	res, err := measure(m, f, "")
	require.NoError(t, err)
	assert.Less(t, res.MaxAbsDiff, 1e-5)
	assert.Zero(t, res.AllocsPerRun)
	assert.Equal(t, "libtorch-cpu", res.Device)
	var w strings.Builder
	printMemory(&w, res, false)
	assert.Contains(t, w.String(), "on libtorch-cpu")

	b, err := openLibtorch(1)
	require.NoError(t, err)
	if b.Info().CUDADevices == 0 {
		f.device = "cuda"
		_, err = measure(m, f, "")
		require.ErrorContains(t, err, "has no CUDA")
	}
}

// TestCompareAllBackends runs compare -backend all without PyTorch: one
// row per backend, each naming it.
func TestCompareAllBackends(t *testing.T) {
	requireLibtorch(t)
	f := compareFlags{modelFlags: modelFlags{model: "mlp"}, benchFlags: quick(runtimeFlags{backend: backendAll, intraOp: 1}),
		python: "/nonexistent/python3", json: true}
	var out strings.Builder
	require.NoError(t, f.run(&out))
	var rows []map[string]any
	require.NoError(t, json.Unmarshal([]byte(out.String()), &rows), out.String())
	require.Len(t, rows, 3)
	for i, be := range allBackends {
		assert.Equal(t, "mlp", rows[i]["model"])
		assert.Equal(t, be, rows[i]["backend"])
		assert.EqualValues(t, 1, rows[i]["intra_op_threads"])
		assert.Less(t, rows[i]["gosr_max_abs_diff"], 1e-5)
		assert.Equal(t, be == backendAuto, rows[i]["auto"] != nil, be)
	}

	var b strings.Builder
	printCompareHeader(&b, f.benchFlags, true)
	assert.Contains(t, b.String(), "backend all (go, libtorch and auto, one row each; libtorch with 1 intra-op thread)")
	b.Reset()
	printCompareHeader(&b, benchFlags{runtimeFlags: runtimeFlags{backend: backendLibtorch, intraOp: 2}}, true)
	assert.Contains(t, b.String(), "backend libtorch (2 intra-op threads)")
	assert.Contains(t, b.String(), "PyTorch: one caller thread, 2 intra-op threads")
}

// TestPyTorchIntraOp checks that compare's PyTorch child gets
// -intra-op-threads: as an argument (torch.set_num_threads) and as
// OMP_NUM_THREADS/MKL_NUM_THREADS. The stand-in reports intraop_threads
// only when both agree.
func TestPyTorchIntraOp(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	// pytorch_bench.py SCRIPT IR ST WARMUP ITERS REPEATS INTEROP INTRAOP
	py := fakePython(t, `n=-1; [ "$OMP_NUM_THREADS" = "$8" ] && [ "$MKL_NUM_THREADS" = "$8" ] && n=$8
echo "Static runtime ms per iter: 0.01"
echo "{\"torch\": \"fake\", \"interop_threads\": $7, \"intraop_threads\": $n, \"interp_us_python_loop\": 20, \"sr_max_abs_diff\": 0}"`)
	m, err := loadModel("mlp", modelFlags{})
	require.NoError(t, err)
	for _, n := range []int{1, 3} {
		var cr compareResult
		cr.GosrUs = 5
		f := compareFlags{benchFlags: benchFlags{runtimeFlags{interop: 2, intraOp: n}, timingFlags{warmup: 1, repeats: 1}}}
		require.NoError(t, runPyTorch(py, m, f, &runResult{UsPerIter: 5}, &cr))
		assert.Equal(t, n, cr.TorchIntraOp, "-intra-op-threads %d", n)
		assert.Equal(t, 2, cr.TorchInterop)
		assert.InDelta(t, 10.0, cr.TorchSRUs, 1e-9)
		assert.InDelta(t, 2.0, cr.Speedup, 1e-9)
	}
}
