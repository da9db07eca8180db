package main

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/staticruntime"
)

// warmUp goes on past -warmup until a runtime's intra-op split
// calibration is over (1 + 2 x 4 runs timing nodes, then 3 x 2 x 4
// whole runs with the default), so that no timed run is one of them;
// without a team, or with the calibration off, it runs -warmup runs. run
// and compare report the choice.
func TestWarmUpCalibration(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	m, err := loadModel("mlp", modelFlags{})
	require.NoError(t, err)
	for _, tc := range []struct {
		intraOp, calibration, warmup, want int
	}{
		{2, 0, 2, 1 + 2*4 + 6*4},
		{2, 1, 2, 1 + 2 + 6},
		{2, 1, 20, 20},
		{2, -1, 3, 3},
		{1, 0, 3, 3},
		{2, 0, 0, 33},
	} {
		sm, err := prepare(m, runtimeFlags{intraOp: tc.intraOp, calibration: tc.calibration})
		require.NoError(t, err)
		r := sm.NewRuntime()
		n := 0
		require.NoError(t, warmUp(r, tc.warmup, func(r *staticruntime.StaticRuntime) error {
			n++
			_, err := r.Run(m.Inputs...)
			return err
		}))
		assert.Equal(t, tc.want, n, "%+v", tc)
		sp := r.IntraOpSplit()
		assert.False(t, sp.Calibrating)
		assert.Equal(t, tc.intraOp > 1 && tc.calibration >= 0, sp.Choice != "", "%+v: choice %q", tc, sp.Choice)
		sm.Close()
	}

	f := quick(runtimeFlags{intraOp: 2})
	res, err := measure(m, f, "")
	require.NoError(t, err)
	require.NotNil(t, res.Split)
	assert.Contains(t, []string{"per-node", "all-split", "all-alone"}, res.Split.Choice)
	assert.Positive(t, res.Split.Nodes)
	assert.Zero(t, res.AllocsPerRun)
}
