package ops_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/internal/fixture"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/staticruntime"
)

// TestActSteadyAllocs runs the PyTorch fixtures of this area's ops
// (scripts/op_cases_act.py) on strided inputs too, and checks that a
// steady run allocates nothing.
func TestActSteadyAllocs(t *testing.T) {
	cases, err := fixture.LoadDir(filepath.Join("..", "testdata", "ops"))
	require.NoError(t, err)
	n := 0
	for _, c := range cases {
		if !actAllocCase(c.Name) {
			continue
		}
		n++
		t.Run(c.Name, func(t *testing.T) {
			g, err := graph.Parse(c.IR, &graph.ParseOptions{Tensors: c.Consts})
			require.NoError(t, err)
			m, err := staticruntime.NewStaticModule(g, nil)
			require.NoError(t, err)
			r := m.NewRuntime()
			ins := c.Inputs
			if c.NonContig() {
				ins = nonContigInputs(c)
			}
			_, err = r.Run(ins...)
			require.NoError(t, err)
			assert.Zero(t, testing.AllocsPerRun(5, func() { _, _ = r.Run(ins...) }))
		})
	}
	assert.NotZero(t, n, "no fixtures of this area found")
}

func actAllocCase(name string) bool {
	if name == "elt_nonzero" { // where(condition) is a fallback: new tensors every run
		return false
	}
	for _, p := range []string{"act_", "norm_instance", "pixel_", "einsum_", "elt_"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

func nonContigInputs(c *fixture.Case) []ivalue.IValue {
	nc := make([]ivalue.IValue, len(c.Inputs))
	for i, in := range c.Inputs {
		nc[i] = ivalue.FromTensor(fixture.NonContiguous(in.Tensor()))
	}
	return nc
}
