package main

import (
	"encoding/json"
	"testing"

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
