package graph_test

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/internal/hostile/gen"
)

// Deep IR text is an error naming the line, column and limit, never a
// stack overflow; the stack is capped so that a recursion as deep as the
// input crashes the test rather than passing by luck.
func TestParseHostileDeep(t *testing.T) {
	defer debug.SetMaxStack(debug.SetMaxStack(32 << 20))
	for _, c := range []struct {
		name, src, err string
	}{
		{"10k nested blocks", gen.DeepBlocksIR(10_000), "400:73: nesting deeper than 200"},
		{"1M list type suffixes", gen.DeepTypeIR(1_000_000, false), "1:414: type nested deeper than 200"},
		{"100k nested tuple types", gen.DeepTypeIR(100_000, true), "1:211: nesting deeper than 200"},
		{"100k nested list literal", gen.DeepLiteralIR(100_000), "2:219: nesting deeper than 200"},
		{"10k nested subgraphs", gen.DeepForkIR(10_000), "596:15: nesting deeper than 200"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := graph.Parse(c.src, nil)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.err)
		})
	}
}

// Nesting up to the limit parses, verifies and prints back the same.
func TestParseHostileAtLimit(t *testing.T) {
	defer debug.SetMaxStack(debug.SetMaxStack(32 << 20))
	for _, c := range []struct {
		name string
		src  string
	}{
		{"150 nested blocks", gen.DeepBlocksIR(150)},
		{"190 list type suffixes", gen.DeepTypeIR(190, false)},
		{"190 nested list literal", gen.DeepLiteralIR(190)},
		{"190 nested subgraphs", gen.DeepForkIR(190)},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, err := graph.Parse(c.src, nil)
			require.NoError(t, err)
			require.NoError(t, g.Verify())
			g2, err := graph.Parse(g.String(), nil)
			require.NoError(t, err)
			assert.Equal(t, g.String(), g2.String())
		})
	}
}

// A node with 300k inputs of one value (a 1.2 MB line) parses and
// verifies in time linear in its size (Verify once scanned the value's
// uses for each input).
func TestParseWideNode(t *testing.T) {
	const n = 300_000
	g, err := graph.Parse(gen.WideNodeIR(n), nil)
	require.NoError(t, err)
	require.NoError(t, g.Verify())
	list := g.Outputs()[0].Node
	assert.Equal(t, "prim::ListConstruct", list.Kind)
	assert.Len(t, list.Inputs, n)
	assert.Len(t, g.Inputs()[0].Uses, n)
}
