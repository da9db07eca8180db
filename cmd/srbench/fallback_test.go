package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/internal/ptfixture"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders"
	"github.com/gosr/gosr/pyfallback"
)

const tokenizerPkg = "../../testdata/pyfallback/tokenizer.pt"

func TestParseInterpreters(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []int
		err  string
	}{
		{nil, []int{1}, ""},
		{[]string{"-interpreters", "1,2"}, []int{1, 2}, ""},
		{[]string{"-interpreters", " 2, 1 ,4"}, []int{2, 1, 4}, ""},
		{[]string{"-interpreters", "0"}, nil, "-interpreters 0: want counts of at least 1"},
		{[]string{"-interpreters", "1,,2"}, nil, "-interpreters 1,,2: want counts"},
		{[]string{"-interpreters", "two"}, nil, "-interpreters two: want counts"},
		{[]string{"-round", "0s"}, nil, "-round 0s: want a positive duration"},
	} {
		var f runFlags
		err := parse("run", &f, tc.args, io.Discard)
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err, "%v", tc.args)
			continue
		}
		require.NoError(t, err, "%v", tc.args)
		assert.Equal(t, tc.want, f.interpList, "%v", tc.args)
	}
}

func TestIsFallbackPackage(t *testing.T) {
	for _, tc := range []struct {
		path string
		want bool
	}{
		{tokenizerPkg, true},
		{"../../testdata/pyfallback/tokenizer.expected.pt", false}, // torch.save
		{ptfixture.Committed() + "/mlp.scripted.pt", false},        // torch.jit.save
		{"/nonexistent/x.pt", false},
	} {
		assert.Equal(t, tc.want, isFallbackPackage(tc.path), tc.path)
	}
	// ops, graph and compare say that run is the command for it.
	_, err := loadModel(tokenizerPkg, modelFlags{})
	require.ErrorContains(t, err, "srbench run takes it")
}

// TestRunFallbackPackage runs the tokenizer archive (its python_call in
// private interpreters) with 1 and 2 interpreters under 2 goroutines,
// its cases from the expected file beside it or from -inputs/-expected
// lists, and checks the rows, the outputs and the report.
func TestRunFallbackPackage(t *testing.T) {
	m, err := pyfallback.NewManager(pyfallback.Options{})
	if errors.Is(err, pyfallback.ErrNoLibPython) {
		t.Skip(err)
	}
	require.NoError(t, err)
	m.Close() // its interpreter is reused below

	// The first case alone, as plain lists: [[args...]] and [output].
	exp, err := loaders.ReadTorchSave("../../testdata/pyfallback/tokenizer.expected.pt")
	require.NoError(t, err)
	first := func(key string) ivalue.IValue {
		v, ok := exp.Dict().Get(ivalue.FromString(key))
		require.True(t, ok, key)
		return ivalue.NewList(v.List().Items[0])
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.pt"), filepath.Join(dir, "out.pt")
	require.NoError(t, loaders.WriteTorchSave(in, first("inputs")))
	require.NoError(t, loaders.WriteTorchSave(out, first("outputs")))

	for _, tc := range []struct {
		name         string
		inputs, want string
		cases        int
	}{
		{"expected.pt beside it", "", "", 4},
		{"first case as lists", in, out, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := runFlags{modelFlags: modelFlags{inputs: tc.inputs, expected: tc.want},
				benchFlags: benchFlags{runtimeFlags{planner: "greedy", interop: 1}, timingFlags{iters: 5, warmup: 1, threads: 2, repeats: 2}},
				interpList: []int{1, 2}, round: time.Second}
			res, err := measureFallback(tokenizerPkg, f)
			require.NoError(t, err)
			assert.Equal(t, tc.cases, res.Cases)
			assert.Equal(t, 1, res.PythonNodes, "the tokenize call")
			require.Len(t, res.Rows, 2)
			for i, r := range res.Rows {
				assert.Equal(t, []int{1, 2}[i], r.Interpreters)
				assert.Equal(t, 2, r.Threads)
				assert.Greater(t, r.Throughput, 0.0)
				assert.Greater(t, r.P99Us, 0.0)
				assert.Equal(t, 2*5*2, r.Requests, "threads x iters x rounds")
				assert.Len(t, r.RoundTputs, 2)
			}
			assert.Equal(t, 1.0, res.Rows[0].Ratio)
			assert.Greater(t, res.Rows[1].Ratio, 0.0)
			assert.Equal(t, 1.0, res.Rows[0].PairedRatio)
			// Two rounds: the median is the mean of the per-round ratios,
			// and the throughput the mean of the rounds'.
			r0, r1 := res.Rows[0].RoundTputs, res.Rows[1].RoundTputs
			assert.InDelta(t, (r1[0]/r0[0]+r1[1]/r0[1])/2, res.Rows[1].PairedRatio, 1e-12)
			assert.InDelta(t, (r1[0]+r1[1])/2, res.Rows[1].Throughput, 1e-9)
			assert.Equal(t, tc.cases, res.Rows[0].CasesTested)
			assert.GreaterOrEqual(t, res.Rows[0].MaxAbsDiff, 0.0, "expected outputs known")
			assert.Less(t, res.Rows[0].MaxAbsDiff, 1e-5, "gosr's outputs are PyTorch's")
			assert.Len(t, res.Startup, 3, "one interpreter, then two")
			require.Len(t, res.RSS, 2)
			assert.Greater(t, res.RSS[0].StartedKB, int64(0))

			var buf bytes.Buffer
			printFallback(&buf, res)
			assert.Regexp(t, `interpreters\s+threads\s+runs/s\s+p50 us\s+p90 us\s+p99 us\s+ratio\s+interp busy\s+us/py call`, buf.String())
			assert.Regexp(t, `(?m)^\s+1\s+2\s+[0-9.]+ .* 1\.00x\s+\d+%\s+[0-9.]+$`, buf.String())
			assert.Regexp(t, `(?m)^\s+2\s+2\s+[0-9.]+ .*x\s+\d+%\s+[0-9.]+$`, buf.String())
			assert.Contains(t, buf.String(), "start-up")
			assert.Contains(t, buf.String(), "MiB each")
			assert.Regexp(t, `rounds, 2 interpreter\(s\): [0-9 ]+ runs/s; round by round to the first row's: median [0-9.]+x`, buf.String())
			// A spare P while the managers are open (pyfallback.SpareProc).
			assert.Equal(t, res.GOMAXPROCSBefore+1, res.GOMAXPROCS)
			assert.Regexp(t, fmt.Sprintf(`GOMAXPROCS %d while the managers were open: %d and a spare P`, res.GOMAXPROCS, res.GOMAXPROCSBefore), buf.String())

			b, err := json.Marshal(res)
			require.NoError(t, err)
			var j struct {
				Rows    []map[string]any `json:"rows"`
				Startup []map[string]any `json:"interpreter_startup"`
				RSS     []map[string]any `json:"rss"`
			}
			require.NoError(t, json.Unmarshal(b, &j))
			require.Len(t, j.Rows, 2)
			for _, k := range []string{"interpreters", "threads", "throughput", "p50_us", "p90_us", "p99_us", "mean_us", "ratio", "python_calls", "python_calls_handed_over"} {
				assert.Contains(t, j.Rows[1], k)
			}
			assert.EqualValues(t, 2, j.Rows[1]["interpreters"])
			for _, r := range res.Rows {
				// Every request made one python_call: the interpreters ran calls, and were busy part of the time.
				assert.Greater(t, r.CallUs, 0.0)
				assert.Greater(t, r.InterpBusy, 0.0)
				assert.LessOrEqual(t, r.InterpBusy, 1.0)
				assert.GreaterOrEqual(t, r.Calls, uint64(r.Requests), "a python_call a request")
				assert.LessOrEqual(t, r.HandedOver, r.Calls)
			}
			assert.Contains(t, j.Startup[0], "startup_ms")
			assert.Contains(t, j.RSS[0], "rss_per_interpreter_kb")
		})
	}
}
