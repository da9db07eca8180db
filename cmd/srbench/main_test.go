package main

import (
	"encoding/json"
	"path/filepath"
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
	assert.Equal(t, 6, res.OutVariantNodes)
	assert.Zero(t, res.AllocsPerRun)
	assert.Greater(t, res.UsPerIter, 0.0)
	assert.Greater(t, res.Throughput, 0.0)
	assert.Greater(t, res.ManagedBytes, int64(0))

	b, err := json.Marshal(res)
	require.NoError(t, err)
	var keys map[string]any
	require.NoError(t, json.Unmarshal(b, &keys))
	for _, k := range []string{"us_per_iter", "max_abs_diff", "nodes", "out_variant_nodes", "native_nodes", "fallback_nodes", "managed_bytes", "allocs_per_run", "throughput"} {
		assert.Contains(t, keys, k)
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
	_, err := loadModel(dir+"/mlp.scripted.pt", flags{inputs: dir + "/deep_and_wide.inputs.pt"})
	require.ErrorContains(t, err, "forward takes 1")
}
