package builtin_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/builtin"
)

func TestModels(t *testing.T) {
	names := builtin.Names()
	for _, want := range []string{"control_flow", "deep_and_wide", "dlrm_like", "mlp", "mul_relu_chain", "small_cnn", "transformer_block"} {
		assert.Contains(t, names, want)
	}
	for _, name := range names {
		c, err := builtin.Load(name)
		require.NoError(t, err, name)
		assert.Equal(t, name, c.Name)
		assert.Contains(t, c.IR, "graph(")
		assert.NotEmpty(t, c.Inputs, name)
		assert.NotEmpty(t, c.Expected, name)
	}
	_, err := builtin.Load("nope")
	require.ErrorContains(t, err, `no model "nope"`)
}
