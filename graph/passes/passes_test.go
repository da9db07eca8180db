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
