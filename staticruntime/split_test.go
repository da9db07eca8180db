package staticruntime_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/internal/raceflag"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/staticruntime"
)

// TestIntraOpCalibration: a runtime with 2 intra-op threads times its
// nodes split and alone over its first 1 + 2 x IntraOpCalibrationRuns
// runs, the alone runs splitting nothing, then runs the per-node mix,
// every node split and every node alone in turns of two runs,
// IntraOpCalibrationRuns turns of each (the alone ones splitting
// nothing, the split ones something), then keeps a choice per node;
// every run gives one thread's bits, and a steady run after the choice
// allocates nothing. With the calibration off there is no choice.
func TestIntraOpCalibration(t *testing.T) {
	withProcs(t, 2)
	x, want := convNetOneThread(t)
	same := func(outs []ivalue.IValue, run int) {
		got := f32(t, outs[0])
		for i := range want {
			if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
				require.Failf(t, "result differs", "run %d: element %d is %v, one thread gives %v", run, i, got[i], want[i])
			}
		}
	}
	for _, runs := range []int{2, 0} {
		opts := staticruntime.DefaultOptions()
		opts.IntraOpThreads = 2
		opts.IntraOpCalibrationRuns = runs
		m := convNetOpts(t, opts)
		rt := m.NewRuntime()
		if runs == 0 {
			runs = 4 // the default
		}
		total := 2*runs + 1 + 6*runs
		for run := 0; run < total; run++ {
			st := rt.IntraOpSplit()
			require.True(t, st.Calibrating, "calibrated before run %d of %d", run, total)
			require.Equal(t, total-run, st.RunsLeft, "runs left before run %d", run)
			require.Empty(t, st.Choice)
			splits, opSplits := staticruntime.Splits(rt), staticruntime.OpSplits(rt)
			outs, err := rt.Run(x)
			require.NoError(t, err)
			same(outs, run)
			split := staticruntime.Splits(rt) - splits + staticruntime.OpSplits(rt) - opSplits
			switch whole := run - (2*runs + 1); {
			case whole >= 0 && whole/2%3 == 0: // the per-node mix: either
			case whole >= 0 && whole/2%3 == 1, whole < 0 && run%2 == 0: // every node split
				require.Positive(t, split, "run %d split nothing", run)
			default: // every node alone
				require.Zero(t, split, "run %d alone split products or ops", run)
			}
		}
		st := rt.IntraOpSplit()
		require.False(t, st.Calibrating)
		require.Zero(t, st.RunsLeft)
		require.Contains(t, []string{"per-node", "all-split", "all-alone"}, st.Choice)
		require.Positive(t, st.Nodes)
		require.LessOrEqual(t, st.Alone, st.Nodes)
		switch st.Choice {
		case "all-split":
			require.Zero(t, st.Alone)
		case "all-alone":
			require.Equal(t, st.Nodes, st.Alone)
		}
		outs, err := rt.Run(x)
		require.NoError(t, err)
		same(outs, total)
		if !raceflag.Enabled {
			require.Zero(t, testing.AllocsPerRun(5, func() { _, _ = rt.Run(x) }), "steady run after the choice")
		}
		m.Close()
	}

	opts := staticruntime.DefaultOptions()
	opts.IntraOpThreads = 2
	opts.IntraOpCalibrationRuns = -1
	m := convNetOpts(t, opts)
	defer m.Close()
	rt := m.NewRuntime()
	for range 12 {
		_, err := rt.Run(x)
		require.NoError(t, err)
	}
	st := rt.IntraOpSplit()
	require.False(t, st.Calibrating, "no calibration when it is off")
	require.Empty(t, st.Choice)
	require.Zero(t, st.Alone)
}
