package passes

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
)

func TestRunErrors(t *testing.T) {
	g := parse(t, `
graph(%x : Tensor):
  return (%x)`)
	boom := errors.New("boom")
	ran := map[string]bool{}
	ps := []Pass{
		{Name: "Skipped", Fn: func(*graph.Graph, *Context) error { ran["Skipped"] = true; return nil }},
		{Name: "Kept", Fn: func(*graph.Graph, *Context) error { ran["Kept"] = true; return nil }},
	}
	require.NoError(t, RunPasses(g, &Context{Disable: map[string]bool{"Skipped": true}}, ps))
	assert.Equal(t, map[string]bool{"Kept": true}, ran)

	tests := []struct {
		name string
		pass Pass
		want string
	}{
		{"error", Pass{Name: "Fails", Fn: func(*graph.Graph, *Context) error { return boom }}, "pass Fails: boom"},
		{"panic", Pass{Name: "Panics", Fn: func(*graph.Graph, *Context) error { panic("oops") }}, "pass Panics: internal error: oops"},
		{"broken uses", Pass{Name: "Breaks", Fn: func(g *graph.Graph, _ *Context) error {
			g.Inputs()[0].Uses = nil // forget the return's use
			return nil
		}}, "graph invalid after pass Breaks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := RunPasses(g, &Context{Verify: true}, []Pass{tt.pass})
			require.Error(t, err)
			assert.True(t, strings.Contains(err.Error(), tt.want), err.Error())
		})
	}
	require.Error(t, Run(nil, nil))
}

// checkOrder, which init runs on the pipeline, catches repeated names,
// constraints naming missing passes, and broken orderings.
func TestCheckOrder(t *testing.T) {
	nop := func(*graph.Graph, *Context) error { return nil }
	abc := []Pass{{Name: "A", Fn: nop}, {Name: "B", Fn: nop}, {Name: "C", Fn: nop}}
	tests := []struct {
		name  string
		ps    []Pass
		order []constraint
		want  string // "" for no error
	}{
		{"the pipeline keeps passOrder", pipeline, passOrder, ""},
		{"kept", abc, []constraint{{"A", "B"}, {"A", "C"}, {"B", "C"}}, ""},
		{"broken", abc, []constraint{{"A", "B"}, {"C", "B"}}, "C must run before B"},
		{"a pass before itself", abc, []constraint{{"B", "B"}}, "B must run before B"},
		{"unknown first", abc, []constraint{{"X", "B"}}, "order constraint names X, which is not in the pipeline"},
		{"unknown second", abc, []constraint{{"A", "Y"}}, "order constraint names Y, which is not in the pipeline"},
		{"repeated name", []Pass{{Name: "A", Fn: nop}, {Name: "B", Fn: nop}, {Name: "A", Fn: nop}}, nil, "passes 0 and 2 are both named A"},
		{"no name", []Pass{{Fn: nop}}, nil, "pass 0 has no name or no function"},
		{"no function", []Pass{{Name: "A"}}, nil, "pass 0 has no name or no function"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := checkOrder(tt.ps, tt.order)
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.EqualError(t, err, tt.want)
		})
	}
}

// Names lists the pipeline in order, each pass once (Disable and
// staticruntime's DisablePasses name passes by it).
func TestNames(t *testing.T) {
	names := Names()
	require.Len(t, names, len(pipeline))
	seen := map[string]bool{}
	for i, n := range names {
		assert.Equal(t, pipeline[i].Name, n)
		assert.False(t, seen[n], "%s twice", n)
		seen[n] = true
	}
	assert.True(t, seen["DeadCodeElimination"] && seen["LateDeadCodeElimination"])
	names[0] = "changed"
	assert.NotEqual(t, "changed", pipeline[0].Name, "Names returns a copy")
}
