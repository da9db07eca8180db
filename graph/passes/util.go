package passes

import (
	"fmt"
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

// removeNodes destroys nodes as graph.Node.Destroy does, each of whose
// outputs is unused or used only by the nodes removed (or inside them),
// in time linear in what they touch: Destroy finds the node in its block
// and each use in its value's list, so removing many nodes of one block,
// or many users of one value, one at a time grows with the square.
func removeNodes(nodes []*graph.Node) {
	if len(nodes) == 0 {
		return
	}
	gone := map[*graph.Node]bool{}
	var touched []*graph.Value
	seen := map[*graph.Value]bool{}
	var drop func(n *graph.Node)
	drop = func(n *graph.Node) {
		gone[n] = true
		for _, in := range n.Inputs {
			if !seen[in] {
				seen[in] = true
				touched = append(touched, in)
			}
		}
		for _, b := range n.Blocks {
			for _, m := range b.Nodes {
				drop(m)
			}
			drop(b.Return)
		}
	}
	var blocks []*graph.Block
	inBlocks := map[*graph.Block]bool{}
	top := map[*graph.Node]bool{}
	for _, n := range nodes {
		drop(n)
		top[n] = true
		if b := n.Owner; b != nil && !inBlocks[b] {
			inBlocks[b] = true
			blocks = append(blocks, b)
		}
	}
	for _, n := range nodes {
		for _, o := range n.Outputs {
			for _, u := range o.Uses {
				if !gone[u.User] {
					panic(fmt.Sprintf("graph: destroying %s whose output %s has uses", n.Kind, o))
				}
			}
		}
	}
	for _, v := range touched {
		v.Uses = slices.DeleteFunc(v.Uses, func(u graph.Use) bool { return gone[u.User] })
	}
	for n := range gone {
		n.Inputs = nil
	}
	for _, b := range blocks {
		b.Nodes = slices.DeleteFunc(b.Nodes, func(n *graph.Node) bool { return top[n] })
	}
	for _, n := range nodes {
		n.Owner = nil
	}
}
