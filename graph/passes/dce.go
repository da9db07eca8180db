package passes

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/graph/alias"
)

// DeadCodeElimination removes nodes whose outputs are unused and that have
// no side effects, inside sub-blocks too, and the unused outputs of
// prim::If (with their block returns). A node that writes memory some
// live value (or a graph input or output) may see is kept.
func DeadCodeElimination(g *graph.Graph, c *Context) error {
	for {
		pruned := pruneIfOutputs(g.Block)
		removed := dceOnce(g)
		if !pruned && !removed {
			return nil
		}
	}
}

// pruneIfOutputs removes unused prim::If outputs, outer nodes first, so
// that inner nodes feeding only those outputs die.
func pruneIfOutputs(b *graph.Block) bool {
	changed := false
	for _, n := range b.Nodes {
		if n.Kind == "prim::If" && len(n.Blocks) == 2 {
			for i := len(n.Outputs) - 1; i >= 0; i-- {
				if len(n.Outputs[i].Uses) == 0 && i < len(n.Blocks[0].Outputs()) && i < len(n.Blocks[1].Outputs()) {
					removeOutput(n, i)
					for _, sb := range n.Blocks {
						removeReturn(sb, i)
					}
					changed = true
				}
			}
		}
		for _, sb := range n.Blocks {
			if pruneIfOutputs(sb) {
				changed = true
			}
		}
	}
	return changed
}

func dceOnce(g *graph.Graph) bool {
	db := alias.Analyze(g)
	live := map[*graph.Node]bool{}
	liveVals := map[*graph.Value]bool{}
	var liveList []*graph.Value
	addVal := func(v *graph.Value) {
		if !liveVals[v] {
			liveVals[v] = true
			liveList = append(liveList, v)
		}
	}
	for _, v := range g.Outputs() {
		addVal(v)
	}
	var mark func(n *graph.Node)
	mark = func(n *graph.Node) {
		if live[n] {
			return
		}
		live[n] = true
		for _, in := range n.Inputs {
			addVal(in)
		}
		for _, sb := range n.Blocks {
			for _, r := range sb.Outputs() {
				addVal(r)
			}
		}
		// A live node inside a block keeps the node owning the block.
		if n.Owner != nil && n.Owner.Owner != nil {
			mark(n.Owner.Owner)
		}
	}
	for changed := true; changed; {
		changed = false
		g.Walk(func(n *graph.Node) {
			if live[n] {
				return
			}
			if keep(n, db, liveVals, liveList) {
				mark(n)
				changed = true
			}
		})
	}
	removed := false
	var sweep func(b *graph.Block)
	sweep = func(b *graph.Block) {
		for i := len(b.Nodes) - 1; i >= 0; i-- {
			n := b.Nodes[i]
			if !live[n] && unused(n) {
				n.Destroy()
				removed = true
				continue
			}
			for _, sb := range n.Blocks {
				sweep(sb)
			}
		}
	}
	sweep(g.Block)
	return removed
}

func unused(n *graph.Node) bool {
	for _, o := range n.Outputs {
		if len(o.Uses) > 0 {
			return false
		}
	}
	return true
}

// keep reports whether n must stay: an output is live, it has side
// effects, or it writes memory that something live may observe.
func keep(n *graph.Node, db *alias.DB, liveVals map[*graph.Value]bool, liveList []*graph.Value) bool {
	for _, o := range n.Outputs {
		if liveVals[o] {
			return true
		}
	}
	if len(n.Blocks) == 0 && hasSideEffects(n) {
		return true
	}
	if n.Kind == "prim::Loop" || n.Kind == "prim::If" {
		return false // kept through their contents or outputs
	}
	if len(n.Blocks) > 0 && !knownOp(n.Kind) {
		return true
	}
	for _, i := range alias.WrittenInputs(n) {
		w := n.Inputs[i]
		if db.MayAliasGraphInput(w) || db.MayAliasGraphOutput(w) || db.ReachableFrom(w, liveList) {
			return true
		}
	}
	return false
}
