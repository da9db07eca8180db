package ops_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/internal/fixture"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/libtorch"
	"github.com/gosr/gosr/staticruntime"
)

// TestPyTorchOps runs every case of testdata/ops (made by
// scripts/make_testdata.py from frozen TorchScript modules) through the
// static runtime and compares with PyTorch's outputs: contiguous inputs,
// then, when the case allows it, the same inputs with every dimension
// strided, on the same runtime (a second run with new geometry).
func TestPyTorchOps(t *testing.T) {
	cases, err := fixture.LoadDir(filepath.Join("..", "testdata", "ops"))
	require.NoError(t, err)
	for _, be := range backends() {
		t.Run(be.name, func(t *testing.T) {
			opts := be.opts(t)
			var before libtorch.Stats
			if opts != nil {
				before = opts.Backend.(*libtorch.Backend).Stats()
			}
			for _, c := range cases {
				t.Run(c.Name, func(t *testing.T) { runPyTorchCase(t, c, opts) })
			}
			if be.name == "libtorch" {
				// The suite must really have run on ATen: most cases
				// through specialised out variants, some boxed.
				after := opts.Backend.(*libtorch.Backend).Stats()
				spec, boxed := after.Specialized-before.Specialized, after.Boxed-before.Boxed
				t.Logf("libtorch kernels: %d specialised, %d boxed, %d ops", spec, boxed, len(after.Ops))
				assert.Greater(t, spec, 150)
				assert.Greater(t, boxed, 20)
			}
		})
	}
}

func runPyTorchCase(t *testing.T, c *fixture.Case, opts *staticruntime.Options) {
	{
		{
			g, err := graph.Parse(c.IR, &graph.ParseOptions{Tensors: c.Consts})
			require.NoError(t, err, "parse %s.ir", c.Name)
			m, err := staticruntime.NewStaticModule(g, opts)
			require.NoError(t, err)
			r := m.NewRuntime()

			runs := []struct {
				name   string
				inputs []ivalue.IValue
			}{{"contiguous", c.Inputs}}
			if c.NonContig() {
				nc := make([]ivalue.IValue, len(c.Inputs))
				for i, in := range c.Inputs {
					nc[i] = ivalue.FromTensor(fixture.NonContiguous(in.Tensor()))
				}
				runs = append(runs, struct {
					name   string
					inputs []ivalue.IValue
				}{"noncontiguous", nc})
			}
			for _, run := range runs {
				outs, err := r.Run(run.inputs...)
				require.NoError(t, err, run.name)
				checkOutputs(t, c, outs, run.name)
			}
		}
	}
}

func checkOutputs(t *testing.T, c *fixture.Case, outs []ivalue.IValue, run string) {
	t.Helper()
	if want := c.Meta["outputs"]; want != "" {
		require.Equal(t, want, fixture.Structure(outs), "%s: output structure", run)
	}
	got := fixture.Flatten(outs)
	require.Len(t, got, len(c.Expected), "%s: flattened outputs", run)
	for i := range got {
		if err := fixture.Compare(got[i], c.Expected[i], c.RTol, c.ATol); err != nil {
			t.Errorf("%s: output %d: %v", run, i, err)
		}
	}
}
