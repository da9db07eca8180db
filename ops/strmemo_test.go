package ops_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/internal/raceflag"
	"github.com/gosr/gosr/ivalue"
)

// The strings a scripted model formats on every run from the same inputs
// (nn.TransformerEncoder's reasons for not taking its fast path: a format
// of a size list) are made once; a steady run allocates nothing, and a
// changed input, a list changed in place included, makes a new string.
func TestStringOpsKeepTheirResult(t *testing.T) {
	sizes := ivalue.NewList(ivI(2), ivI(3))
	p, err := buildNode(t, "aten::format", []ivalue.IValue{ivS("sizes {} of {}"), sizes, ivF(0.5)},
		[]*graph.Type{tS, graph.ListOf(tI), tF}, []*graph.Type{tS}, []bool{false, false, false})
	require.NoError(t, err)
	require.NoError(t, p.Run())
	assert.Equal(t, "sizes [2, 3] of 0.5", p.Output(0).Str())
	if !raceflag.Enabled {
		assert.Zero(t, testing.AllocsPerRun(10, func() { _ = p.Run() }))
	}
	sizes.List().Items[1] = ivI(4) // in place, as aten::_set_item would
	require.NoError(t, p.Run())
	assert.Equal(t, "sizes [2, 4] of 0.5", p.Output(0).Str())
	p.Values[2] = ivF(1)
	require.NoError(t, p.Run())
	assert.Equal(t, "sizes [2, 4] of 1.", p.Output(0).Str())
	q, err := buildNode(t, "aten::add", []ivalue.IValue{ivS("a"), ivS("b")}, []*graph.Type{tS, tS}, []*graph.Type{tS}, []bool{false, false})
	require.NoError(t, err)
	require.NoError(t, q.Run())
	assert.Equal(t, "ab", q.Output(0).Str())
	q.Values[1] = ivS("c")
	require.NoError(t, q.Run())
	assert.Equal(t, "ac", q.Output(0).Str())
}
