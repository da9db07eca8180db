package staticruntime_test

import (
	"maps"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/internal/fixture"
	"github.com/gosr/gosr/internal/raceflag"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/staticruntime"
)

func loadModel(t *testing.T, c *fixture.Case) *staticruntime.StaticRuntime {
	t.Helper()
	g, err := graph.Parse(c.IR, &graph.ParseOptions{Tensors: c.Consts})
	require.NoError(t, err, "parse %s/model.ir", c.Name)
	m, err := staticruntime.NewStaticModule(g, nil)
	require.NoError(t, err)
	return m.NewRuntime()
}

func compareModel(t *testing.T, c *fixture.Case, outs []ivalue.IValue, run string) {
	t.Helper()
	require.Equal(t, c.Meta["outputs"], fixture.Structure(outs), "%s: output structure", run)
	got := fixture.Flatten(outs)
	require.Len(t, got, len(c.Expected), run)
	for i := range got {
		if err := fixture.Compare(got[i], c.Expected[i], c.RTol, c.ATol); err != nil {
			t.Errorf("%s: output %d: %v", run, i, err)
		}
	}
}

// TestModelsMatchPyTorch runs every model of builtin/models twice on one
// runtime; both runs must match PyTorch (the second reuses the first's
// tensors and memory plan).
func TestModelsMatchPyTorch(t *testing.T) {
	cases, err := fixture.LoadDir(filepath.Join("..", "builtin", "models"))
	require.NoError(t, err)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			r := loadModel(t, c)
			outs, err := r.Run(c.Inputs...)
			require.NoError(t, err)
			compareModel(t, c, outs, "first run")
			first := make([]ivalue.IValue, len(outs))
			for i, o := range outs {
				first[i] = o.Clone()
			}
			outs, err = r.Run(c.Inputs...)
			require.NoError(t, err)
			compareModel(t, c, outs, "second run")
			assert.Zero(t, fixture.MaxAbsDiff(fixture.Flatten(outs), fixture.Flatten(first)), "second run differs from the first")
		})
	}
}

// TestModelsSteadyRunAllocsNothing: after warm-up, Run on a model with
// static shapes allocates nothing.
func TestModelsSteadyRunAllocsNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts are slow to measure")
	}
	if raceflag.Enabled {
		t.Skip("allocation counts are not meaningful under -race")
	}
	cases, err := fixture.LoadDir(filepath.Join("..", "builtin", "models"))
	require.NoError(t, err)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			r := loadModel(t, c)
			for i := 0; i < 2; i++ {
				_, err := r.Run(c.Inputs...)
				require.NoError(t, err)
			}
			var runErr error
			allocs := testing.AllocsPerRun(20, func() {
				if _, err := r.Run(c.Inputs...); err != nil {
					runErr = err
				}
			})
			require.NoError(t, runErr)
			assert.Zero(t, allocs, "allocations per steady Run of %s", c.Name)
		})
	}
}

// BenchmarkModels times a steady Run of every built-in model (the figures
// srbench compare puts beside PyTorch's Static Runtime).
func BenchmarkModels(b *testing.B) {
	cases, err := fixture.LoadDir(filepath.Join("..", "builtin", "models"))
	require.NoError(b, err)
	for _, c := range cases {
		b.Run(c.Name, func(b *testing.B) {
			g, err := graph.Parse(c.IR, &graph.ParseOptions{Tensors: c.Consts})
			require.NoError(b, err)
			m, err := staticruntime.NewStaticModule(g, nil)
			require.NoError(b, err)
			r := m.NewRuntime()
			for i := 0; i < 2; i++ { // the second run plans the slab
				_, err = r.Run(c.Inputs...)
				require.NoError(b, err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := r.Run(c.Inputs...); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestModelsBadInputs feeds each model inputs of the wrong rank, size and
// dtype: every run succeeds or returns an error (no kernel panics, which
// the runtime would report as an internal error), and the runtime gives
// PyTorch's answer afterwards.
func TestModelsBadInputs(t *testing.T) {
	cases, err := fixture.LoadDir(filepath.Join("..", "builtin", "models"))
	require.NoError(t, err)
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			r := loadModel(t, c)
			for i, in := range c.Inputs {
				// In name order, so that a failure does not depend on
				// which bad input ran first.
				bad := fixture.BadVariants(in.Tensor())
				for _, name := range slices.Sorted(maps.Keys(bad)) {
					args := append([]ivalue.IValue(nil), c.Inputs...)
					args[i] = ivalue.FromTensor(bad[name])
					_, err := r.Run(args...)
					if err != nil {
						assert.NotContains(t, err.Error(), "internal error", "input %d %s", i, name)
					}
				}
			}
			outs, err := r.Run(c.Inputs...)
			require.NoError(t, err)
			compareModel(t, c, outs, "after bad inputs")
		})
	}
}
