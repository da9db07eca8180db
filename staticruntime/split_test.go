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
// runs, the alone runs splitting nothing, then keeps a choice per node;
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
		for run := 0; run <= 2*runs; run++ {
			done, _, _ := staticruntime.SplitChoice(rt)
			require.False(t, done, "calibrated before run %d of %d", run, 2*runs+1)
			splits, opSplits := staticruntime.Splits(rt), staticruntime.OpSplits(rt)
			outs, err := rt.Run(x)
			require.NoError(t, err)
			same(outs, run)
			if run%2 == 1 { // alone
				require.Zero(t, staticruntime.Splits(rt)-splits, "run %d alone split products", run)
				require.Zero(t, staticruntime.OpSplits(rt)-opSplits, "run %d alone split ops", run)
			} else {
				require.Positive(t, staticruntime.Splits(rt)-splits+staticruntime.OpSplits(rt)-opSplits, "run %d split nothing", run)
			}
		}
		done, alone, nodes := staticruntime.SplitChoice(rt)
		require.True(t, done)
		require.Positive(t, nodes)
		require.LessOrEqual(t, alone, nodes)
		outs, err := rt.Run(x)
		require.NoError(t, err)
		same(outs, 2*runs+1)
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
	done, _, _ := staticruntime.SplitChoice(rt)
	require.False(t, done, "no calibration when it is off")
}
