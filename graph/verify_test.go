package graph

import (
	"slices"
	"testing"

	"github.com/gosr/gosr/ivalue"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const verifyBase = `graph(%x : Tensor,
      %n : int,
      %c : bool):
  %one : int = prim::Constant[value=1]()
  %y : Tensor = prim::Loop(%n, %c, %x)
    block0(%i : int, %y.1 : Tensor):
      %y.2 : Tensor = aten::mul(%y.1, %one)
      -> (%c, %y.2)
  %z : Tensor = prim::If(%c)
    block0():
      %z.1 : Tensor = aten::relu(%y)
      -> (%z.1)
    block1():
      -> (%y)
  return (%z)
`

func TestVerify(t *testing.T) {
	find := func(g *Graph, kind string) *Node {
		var found *Node
		g.Walk(func(n *Node) {
			if n.Kind == kind && found == nil {
				found = n
			}
		})
		return found
	}
	tests := []struct {
		name   string
		mutate func(g *Graph)
		want   string // "" means valid
	}{
		{"valid", func(g *Graph) {}, ""},
		{"if condition not bool", func(g *Graph) {
			find(g, "prim::If").ReplaceInput(0, g.Inputs()[1])
		}, "prim::If (producing %z): expected one bool condition input"},
		{"if one block", func(g *Graph) {
			n := find(g, "prim::If")
			n.Blocks = n.Blocks[:1]
		}, "expected 2 blocks (then, else), got 1"},
		{"if block returns too many", func(g *Graph) {
			find(g, "prim::If").Blocks[1].AddOutput(g.Inputs()[0])
		}, "block1 returns 2 values, expected 1"},
		{"loop cond not bool", func(g *Graph) {
			find(g, "prim::Loop").ReplaceInput(1, g.Inputs()[1])
		}, "prim::Loop (producing %y): expected inputs (int max trip count, bool condition, carried...)"},
		{"loop body params", func(g *Graph) {
			find(g, "prim::Loop").Blocks[0].AddInput("extra", Tensor)
		}, "body parameters: expected (int i, 1 carried), got 3"},
		{"loop body returns", func(g *Graph) {
			b := find(g, "prim::Loop").Blocks[0]
			b.Return.RemoveAllInputs()
			b.AddOutput(g.Inputs()[0])
			b.AddOutput(g.Inputs()[0])
		}, "body returns: expected (bool condition, 1 carried)"},
		{"loop outputs", func(g *Graph) {
			find(g, "prim::Loop").AddOutput(Tensor)
		}, "2 outputs, expected 1 (one per carried value)"},
		{"constant with input", func(g *Graph) {
			find(g, "prim::Constant").AddInput(g.Inputs()[0])
		}, "prim::Constant (producing %one): expected no inputs"},
		{"constant value type", func(g *Graph) {
			find(g, "prim::Constant").SetAttr("value", ivalue.FromString("x"))
		}, "value str does not fit type int"},
		{"constant no value", func(g *Graph) {
			find(g, "prim::Constant").Attrs = nil
		}, "no value, expected a value of type int"},
		{"use of inner value outside", func(g *Graph) {
			inner := find(g, "aten::relu").Outputs[0]
			g.Block.Return.ReplaceInput(0, inner)
		}, "graph outputs: prim::Return (no outputs): input 0 %z.1 is not defined"},
		{"use before definition", func(g *Graph) {
			find(g, "aten::mul").ReplaceInput(1, find(g, "aten::relu").Outputs[0])
		}, "aten::mul (producing %y.2): input 1 %z.1 is not defined before this node"},
		{"value from another graph", func(g *Graph) {
			other := New().AddInput("o", Tensor)
			find(g, "aten::relu").ReplaceInput(0, other)
		}, "input 0 %o is not defined"},
		{"missing use record", func(g *Graph) {
			g.Inputs()[0].Uses = nil
		}, "prim::Loop (producing %y): input 2 %x has no use record"},
		{"missing use record among many", func(g *Graph) {
			// Past manyUses, records are looked up in a set, not scanned.
			x := g.Inputs()[0]
			var last *Node
			for i := 0; i < 2*manyUses; i++ {
				last = g.NewNode("aten::relu", []*Value{x}, 1)
				last.Outputs[0].Type = Tensor
				last.InsertBefore(find(g, "prim::Loop"))
			}
			x.Uses = slices.DeleteFunc(x.Uses, func(u Use) bool { return u.User == last })
		}, "): input 0 %x has no use record for this node"},
		{"stale use record", func(g *Graph) {
			x := g.Inputs()[0]
			x.Uses = append(x.Uses, Use{User: find(g, "aten::relu"), Index: 0})
		}, "prim::Param (producing %x, %n, %c): output %x has a stale use record (input 0 of aten::relu)"},
		{"wrong producer", func(g *Graph) {
			find(g, "aten::relu").Outputs[0].Offset = 3
		}, "records producer aten::relu and offset 3, expected this node and 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := Parse(verifyBase, nil)
			require.NoError(t, err)
			tt.mutate(g)
			err = g.Verify()
			if tt.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestVerifySamples(t *testing.T) {
	for name, text := range samples(t) {
		g, err := Parse(text, &ParseOptions{AllowUnboundTensors: true})
		require.NoError(t, err, name)
		require.NoError(t, g.Verify(), name)
	}
}
