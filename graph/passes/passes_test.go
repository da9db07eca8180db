package passes

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
)

// The whole pipeline runs on every IR sample PyTorch printed, keeping the
// graph valid after each pass and printable/parsable at the end.
func TestPipelineOnSamples(t *testing.T) {
	files, err := filepath.Glob("../testdata/*.ir")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			src, err := os.ReadFile(f)
			require.NoError(t, err)
			opts := &graph.ParseOptions{AllowUnboundTensors: true}
			g, err := graph.Parse(string(src), opts)
			require.NoError(t, err)
			var trace []string
			c := &Context{EnableOutVariant: true, Verify: true, Trace: func(p string, _ *graph.Graph) { trace = append(trace, p) }}
			require.NoError(t, Run(g, c))
			require.Len(t, trace, len(Pipeline))
			_, err = graph.Parse(g.String(), opts)
			require.NoError(t, err, "printed graph after the pipeline:\n%s", g)
			if ins := g.Inputs(); len(ins) > 0 && ins[0].Type.Kind == graph.ClassType {
				assert.NotEmpty(t, ins[0].Uses, "unused self should be gone")
			}
			g.Walk(func(n *graph.Node) {
				assert.NotEqual(t, "aten::detach", n.Kind)
			})
		})
	}
}

func TestPipelineAttention(t *testing.T) {
	src, err := os.ReadFile("../testdata/attn_frozen.ir")
	require.NoError(t, err)
	g, err := graph.Parse(string(src), &graph.ParseOptions{AllowUnboundTensors: true})
	require.NoError(t, err)
	require.NoError(t, Run(g, &Context{EnableOutVariant: true, Verify: true}))
	require.Len(t, g.Inputs(), 2, "self removed")
	text := g.String()
	// The transpose feeding matmul stays a view (no copy variant); the
	// optional-mask branch keeps its unchecked_cast.
	assert.Contains(t, text, "aten::transpose")
	assert.Contains(t, text, "prim::unchecked_cast")
	assert.Contains(t, text, "aten::layer_norm")
}

func TestRunErrors(t *testing.T) {
	g := parse(t, `
graph(%x : Tensor):
  return (%x)`)
	boom := errors.New("boom")
	ran := map[string]bool{}
	ps := []Pass{
		{Name: "Skipped", Fn: func(*graph.Graph, *Context) error { ran["Skipped"] = true; return nil }},
		{Name: "Kept", Required: true, Fn: func(*graph.Graph, *Context) error { ran["Kept"] = true; return nil }},
	}
	require.NoError(t, RunPasses(g, &Context{Disable: map[string]bool{"Skipped": true, "Kept": true}}, ps))
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
