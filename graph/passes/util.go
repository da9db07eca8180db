package passes

import (
	"slices"

	"github.com/gosr/gosr/graph"
)

// removeOutput deletes n's output i, which must be unused, renumbering
// the outputs after it.
func removeOutput(n *graph.Node, i int) {
	n.Outputs = slices.Delete(n.Outputs, i, i+1)
	for k := i; k < len(n.Outputs); k++ {
		n.Outputs[k].Offset = k
	}
}

// removeReturn deletes b's return i, keeping use lists exact.
func removeReturn(b *graph.Block, i int) {
	outs := slices.Clone(b.Outputs())
	outs = slices.Delete(outs, i, i+1)
	b.Return.SetInputs(outs)
}

// replaceNode puts a new node of kind with inputs ins before old, moves
// old's output uses to it (same types and names), and destroys old.
func replaceNode(g *graph.Graph, old *graph.Node, kind string, ins []*graph.Value) *graph.Node {
	n := g.NewNode(kind, ins, len(old.Outputs))
	for i, o := range old.Outputs {
		n.Outputs[i].Type = o.Type
		n.Outputs[i].Name = o.Name
	}
	n.SourceRange = old.SourceRange
	n.InsertBefore(old)
	for i, o := range old.Outputs {
		o.ReplaceAllUsesWith(n.Outputs[i])
	}
	old.Destroy()
	return n
}
