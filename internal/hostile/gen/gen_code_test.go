package gen

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/loaders/tscode"
)

func TestTSGenerators(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{TSChain("x", "+", 3), "x + x + x"},
		{TSChain("b", "and", 1), "b"},
		{TSChain("x", "+", 0), ""},
		{TSTrailers("x", ".relu()", 2), "x.relu().relu()"},
		{TSNested("f(", "x", ")", 2), "f(f(x))"},
		{TSNested("- ", "x", "", 3), "- - - x"},
		{TSStatements("x = f(x)", 2), "x = f(x)\nx = f(x)\n"},
		{TSElifChain("c%d", "y = 1", "y = 2", 2), "if c0:\n  y = 1\nelif c1:\n  y = 1\nelse:\n  y = 2\n"},
		{TSElifChain("c", "y = 1", "", 1), "if c:\n  y = 1\n"},
		{TSNestedBlocks("if c", "y = x", 2), "if c:\n  if c:\n    y = x\n"},
		{TSIndent("a\n\nb\n", 2), "  a\n\n  b\n"},
		{TSModule("__torch__.m.M", "return x"), "class M(Module):\n  __parameters__ = []\n  __buffers__ = []\n  training : bool\n" +
			"  def forward(self: __torch__.m.M,\n    x: Tensor) -> Tensor:\n    return x\n"},
	} {
		assert.Equal(t, c.want, c.got)
	}
}

// The generated code is valid TorchScript at small sizes: what a test
// gets at large sizes is the limit, not a syntax error.
func TestTSGeneratorsParse(t *testing.T) {
	body := "y = " + TSChain("x", "+", 3) + "\n" +
		"y = " + TSTrailers("y", ".relu()", 3) + "\n" +
		"y = " + TSNested("torch.relu(", "y", ")", 3) + "\n" +
		TSElifChain("bool(y)", "y = torch.neg(y)", "y = y", 3) +
		TSNestedBlocks("if bool(y)", "y = torch.relu(y)", 3) +
		TSStatements("y = torch.relu(y)", 3) +
		"return y"
	_, err := tscode.Parse("code/__torch__.py", []byte(TSModule("__torch__.M", body)))
	require.NoError(t, err)
}

func TestIRGenerators(t *testing.T) {
	for _, c := range []struct {
		name string
		src  string
		// check looks at the parsed graph.
		check func(t *testing.T, g *graph.Graph)
	}{
		{"DeepBlocksIR", DeepBlocksIR(3), func(t *testing.T, g *graph.Graph) {
			depth := 0
			for b := g.Block; len(b.Nodes) > 0 && b.Nodes[0].Kind == "prim::If"; b = b.Nodes[0].Blocks[0] {
				depth++
			}
			assert.Equal(t, 3, depth)
		}},
		{"DeepTypeIR list", DeepTypeIR(3, false), func(t *testing.T, g *graph.Graph) {
			assert.Equal(t, graph.ListOf(graph.ListOf(graph.ListOf(graph.Tensor))).String(), g.Inputs()[0].Type.String())
		}},
		{"DeepTypeIR tuple", DeepTypeIR(2, true), func(t *testing.T, g *graph.Graph) {
			assert.Equal(t, graph.TupleOf(graph.TupleOf(graph.Tensor)).String(), g.Inputs()[0].Type.String())
		}},
		{"DeepLiteralIR", DeepLiteralIR(3), func(t *testing.T, g *graph.Graph) {
			v, ok := g.Block.Nodes[0].Attr("x")
			require.True(t, ok)
			assert.Equal(t, "[[[1]]]", v.String())
		}},
		{"DeepForkIR", DeepForkIR(3), func(t *testing.T, g *graph.Graph) {
			depth := 0
			for sg := g; sg != nil; depth++ {
				var next *graph.Graph
				for _, n := range sg.Block.Nodes {
					if s := graph.Subgraph(n); s != nil {
						next = s
					}
				}
				sg = next
			}
			assert.Equal(t, 4, depth) // the graph and 3 forked ones
		}},
		{"WideNodeIR", WideNodeIR(5), func(t *testing.T, g *graph.Graph) {
			assert.Len(t, g.Outputs()[0].Node.Inputs, 5)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			g, err := graph.Parse(c.src, nil)
			require.NoError(t, err)
			require.NoError(t, g.Verify())
			c.check(t, g)
		})
	}
}
