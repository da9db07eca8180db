package ptfixture

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders"
)

// PyTorch's Static Runtime ran every committed case; it manages memory for
// all of them but the fork models, whose forked calls run in runtimes of
// their own that its report leaves out (it plans the caller's graph only:
// nothing for fork_ensemble, fork_cnn and fork_loop, whose callers hold no
// intermediate it manages).
func TestCommittedPTManaged(t *testing.T) {
	cases, err := Manifest(Committed())
	require.NoError(t, err)
	callerPlan := map[string]bool{"fork_ensemble": false, "fork_cnn": false, "fork_nested": true, "fork_loop": false}
	for _, c := range cases {
		t.Run(c.Name(), func(t *testing.T) {
			assert.NotContains(t, c.Note, "cannot run", "PyTorch's Static Runtime failed on it")
			assert.GreaterOrEqual(t, c.PTPeakBytes, c.PTManagedBytes, "pt_peak_bytes")
			assert.Equal(t, c.PTManagedBytes+c.PTUnmanagedPeakBytes, c.PTPeakBytes, "pt_peak_bytes")
			// PyTorch's planner rounds every tensor up to 64 bytes.
			assert.Zero(t, c.PTManagedBytes%64, "pt_managed_bytes %d is not a multiple of 64", c.PTManagedBytes)
			if plans, ok := callerPlan[c.Model]; ok {
				if plans {
					assert.Positive(t, c.PTManagedBytes, "pt_managed_bytes")
				} else {
					assert.Zero(t, c.PTManagedBytes, "pt_managed_bytes")
				}
				// The forked calls' own plans and outputs are all per run.
				assert.Positive(t, c.PTUnmanagedPeakBytes, "pt_unmanaged_peak_bytes")
				assert.Contains(t, c.Note, "forked call")
				return
			}
			assert.Positive(t, c.PTManagedBytes, "pt_managed_bytes")
			assert.Positive(t, c.PTManagedTensors, "pt_managed_tensors")
		})
	}
}

// shapeBatches is what scripts/pt_models.py SHAPE_BATCHES holds.
var shapeBatches = []int{1, 4, 2, 8, 3, 8, 1}

// Which variants reproduce their model's shapes file: all but the traces
// of control_flow, whose loop over y's rows was unrolled for 5 of them.
func TestCommittedShapes(t *testing.T) {
	cases, err := Manifest(Committed())
	require.NoError(t, err)
	got := map[string][]string{}
	for _, c := range cases {
		if c.Shapes == "" {
			continue
		}
		got[c.Model] = append(got[c.Model], c.Variant)
		assert.Equal(t, shapeBatches, c.ShapeBatches, c.Name())
		assert.Equal(t, c.Model+".shapes.pt", strings.TrimPrefix(c.Shapes, Committed()+"/"), c.Name())
	}
	assert.Equal(t, map[string][]string{
		"mlp":                       all,
		"deep_and_wide":             all,
		"dlrm_like":                 all,
		"transformer_block":         all,
		"transformer_encoder_layer": {"traced", "traced_frozen"},
		"fork_ensemble":             all,
		"fork_cnn":                  all,
		"fork_nested":               all,
		"fork_loop":                 all,
		"control_flow":              {"scripted", "scripted_frozen"},
		"small_cnn":                 all,
		"se_block":                  all,
		"text_classifier":           all,
	}, got)
	for _, c := range cases {
		if c.Model == "control_flow" && strings.HasPrefix(c.Variant, "traced") {
			assert.Contains(t, c.Note, "control_flow.shapes.pt does not apply", c.Name())
		}
	}
}

// batchDim is the dimension of a model's first input that is the batch.
var batchDim = map[string]int{"transformer_encoder_layer": 1} // batch_first=False

// Every shapes file reads back in Go as a list of (inputs, expected)
// tuples: inputs as the model's inputs file (same count, dtypes and ranks)
// at the recorded batch sizes, expected as its expected file.
func TestCommittedShapesRead(t *testing.T) {
	cases, err := Manifest(Committed())
	require.NoError(t, err)
	done := map[string]bool{}
	for _, c := range cases {
		if c.Shapes == "" || done[c.Shapes] {
			continue
		}
		done[c.Shapes] = true
		t.Run(c.Model, func(t *testing.T) {
			in, err := loaders.ReadTorchSave(c.Inputs)
			require.NoError(t, err)
			exp, err := loaders.ReadTorchSave(c.Expected)
			require.NoError(t, err)
			sh, err := loaders.ReadTorchSave(c.Shapes)
			require.NoError(t, err)
			require.Equal(t, ivalue.KindList, sh.Kind(), "%s: want a list of (inputs, expected)", c.Shapes)
			pairs := sh.List().Items
			require.Len(t, pairs, len(c.ShapeBatches), "%s: one pair per batch size", c.Shapes)
			for i, p := range pairs {
				require.Equal(t, ivalue.KindTuple, p.Kind(), "%s: pair %d", c.Shapes, i)
				require.Len(t, p.List().Items, 2, "%s: pair %d", c.Shapes, i)
				inputs, want := p.List().Items[0], p.List().Items[1]
				require.Equal(t, ivalue.KindTuple, inputs.Kind(), "%s: pair %d inputs", c.Shapes, i)
				require.Len(t, inputs.List().Items, len(in.List().Items), "%s: pair %d inputs", c.Shapes, i)
				for j, x := range inputs.List().Items {
					ref := in.List().Items[j].Tensor()
					require.True(t, x.IsTensor(), "%s: pair %d input %d", c.Shapes, i, j)
					assert.Equal(t, ref.DType(), x.Tensor().DType(), "%s: pair %d input %d", c.Shapes, i, j)
					assert.Equal(t, ref.Dim(), x.Tensor().Dim(), "%s: pair %d input %d", c.Shapes, i, j)
				}
				first := inputs.List().Items[0].Tensor()
				assert.Equal(t, c.ShapeBatches[i], first.Size(batchDim[c.Model]), "%s: pair %d: batch of input 0 (sizes %v)",
					c.Shapes, i, first.Sizes())
				assert.Equal(t, exp.Kind(), want.Kind(), "%s: pair %d expected", c.Shapes, i)
				assert.Equal(t, len(flatten(exp)), len(flatten(want)), "%s: pair %d: number of expected tensors", c.Shapes, i)
			}
		})
	}
}

func flatten(v ivalue.IValue) []*ivalue.Tensor {
	if v.IsTensor() {
		return []*ivalue.Tensor{v.Tensor()}
	}
	var out []*ivalue.Tensor
	if v.Kind() == ivalue.KindTuple || v.Kind() == ivalue.KindList {
		for _, x := range v.List().Items {
			out = append(out, flatten(x)...)
		}
	}
	return out
}

// Where PyTorch's Static Runtime allocates beyond its plan on each run:
// ops without an out variant in 1.13 (convolutions, embedding) and the
// blocks it plans separately; an MLP's ops all have one.
func TestCommittedPTUnmanaged(t *testing.T) {
	cases, err := Manifest(Committed())
	require.NoError(t, err)
	tests := []struct {
		model string
		none  bool // everything intermediate is in the plan
	}{
		{"mlp", true},
		{"small_cnn", false},       // conv2d, max_pool2d
		{"text_classifier", false}, // embedding
		{"control_flow", false},    // prim::If / prim::Loop bodies (scripted); aten::cat
		{"fork_ensemble", false},   // forked calls
		{"fork_cnn", false},        // forked calls; conv2d, max_pool2d
		{"fork_nested", false},     // forked calls, and the calls they fork
		{"fork_loop", false},       // forked calls
	}
	for _, tc := range tests {
		t.Run(tc.model, func(t *testing.T) {
			n := 0
			for _, c := range cases {
				if c.Model != tc.model {
					continue
				}
				n++
				if tc.none {
					assert.Zero(t, c.PTUnmanagedPeakBytes, c.Name())
					assert.Equal(t, c.PTManagedBytes, c.PTPeakBytes, c.Name())
				} else {
					assert.Positive(t, c.PTUnmanagedPeakBytes, c.Name())
				}
			}
			assert.Positive(t, n, "no cases of %s", tc.model)
		})
	}
}
