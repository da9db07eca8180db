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
		removed, err := dceOnce(g, c)
		if err != nil {
			return err
		}
		if !pruned && !removed {
			return nil
		}
	}
}

// pruneIfOutputs removes unused prim::If outputs, outer nodes first, so
// that inner nodes feeding only those outputs die. Each If's outputs and
// returns are rebuilt once, however many go.
func pruneIfOutputs(b *graph.Block) bool {
	changed := false
	for _, n := range b.Nodes {
		if n.Kind == graph.KindIf && len(n.Blocks) == 2 {
			limit := min(len(n.Outputs), len(n.Blocks[0].Outputs()), len(n.Blocks[1].Outputs()))
			drop := make([]bool, len(n.Outputs))
			some := false
			for i := 0; i < limit; i++ {
				if len(n.Outputs[i].Uses) == 0 {
					drop[i] = true
					some = true
				}
			}
			if some {
				removeOutputs(n, drop)
				for _, sb := range n.Blocks {
					removeReturns(sb, drop)
				}
				changed = true
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

// dceOnce finds the live nodes, the least set holding the producers of
// the graph's outputs and of live nodes' inputs (and block returns), the
// nodes keepAlone keeps, the writers of memory a live value may reach,
// and the owners of live nodes' blocks, by a worklist: each node is
// looked at once, and a node writing memory waits until something live
// can reach that memory (alias.Reach). It then removes the nodes that
// are not live and whose outputs nothing left reads.
func dceOnce(g *graph.Graph, c *Context) (bool, error) {
	db, err := c.analyze(g)
	if err != nil {
		return false, err
	}
	live := make(map[*graph.Node]bool, db.NumNodes())
	// Per value, by the analysis's numbering: live, and uses dropped by
	// the sweep. Every value the graph holds is numbered.
	liveVals := make([]bool, db.NumValues())
	reach := db.NewReach()
	var queue []*graph.Node
	mark := func(n *graph.Node) {
		if !live[n] {
			live[n] = true
			queue = append(queue, n)
		}
	}
	var liveOther map[*graph.Value]bool // values the analysis did not number (none in a valid graph)
	addVal := func(v *graph.Value) {
		if i := db.ValueIndex(v); i >= 0 {
			if liveVals[i] {
				return
			}
			liveVals[i] = true
		} else {
			if liveOther[v] {
				return
			}
			if liveOther == nil {
				liveOther = map[*graph.Value]bool{}
			}
			liveOther[v] = true
		}
		// A live output keeps its node (not a block's parameters).
		if p := v.Node; p != nil && p.Owner != nil && p != p.Owner.Param {
			mark(p)
		}
		// Writers register in the walk below, before any value is added:
		// once none waits, what is reachable no longer matters.
		if reach.Waiting() {
			reach.Add(v)
		}
	}
	// What keeps a node whatever else is live.
	walkErr := error(nil)
	g.Walk(func(n *graph.Node) {
		if walkErr == nil {
			walkErr = c.poll()
		}
		if walkErr == nil && keepAlone(n, db, reach, mark) {
			mark(n)
		}
	})
	if walkErr != nil {
		return false, walkErr
	}
	for _, v := range g.Outputs() {
		addVal(v)
	}
	for len(queue) > 0 {
		n := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		if err := c.poll(); err != nil {
			return false, err
		}
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

	// Nodes go last first, so a chain of dead nodes goes at once; the
	// uses of what they read are dropped together at the end.
	dropped := make([]int32, db.NumValues())
	unused := func(n *graph.Node) bool {
		for _, o := range n.Outputs {
			if i := db.ValueIndex(o); i < 0 || len(o.Uses) > int(dropped[i]) {
				return false
			}
		}
		return true
	}
	var dropUses func(n *graph.Node)
	dropUses = func(n *graph.Node) {
		for _, in := range n.Inputs {
			if i := db.ValueIndex(in); i >= 0 {
				dropped[i]++
			}
		}
		for _, sb := range n.Blocks {
			for _, m := range sb.Nodes {
				dropUses(m)
			}
			dropUses(sb.Return)
		}
	}
	var dead []*graph.Node
	var sweep func(b *graph.Block)
	sweep = func(b *graph.Block) {
		for i := len(b.Nodes) - 1; i >= 0; i-- {
			n := b.Nodes[i]
			if !live[n] && unused(n) {
				dead = append(dead, n)
				dropUses(n)
				continue
			}
			for _, sb := range n.Blocks {
				sweep(sb)
			}
		}
	}
	sweep(g.Block)
	removeNodes(dead)
	return len(dead) > 0, nil
}

// keepAlone reports whether n must stay whatever else is live: it has
// side effects, or writes memory a graph input or output may see. A
// node writing other memory is marked (mark) once a live value may reach
// that memory. A node with a live output stays too (see dceOnce).
func keepAlone(n *graph.Node, db *alias.DB, reach *alias.Reach, mark func(*graph.Node)) bool {
	if len(n.Blocks) == 0 && hasSideEffects(n) {
		return true
	}
	if n.Kind == graph.KindLoop || n.Kind == graph.KindIf {
		return false // kept through their contents or outputs
	}
	if len(n.Blocks) > 0 && !knownOp(n.Kind) {
		return true
	}
	written := alias.WrittenInputs(n)
	for _, i := range written {
		w := n.Inputs[i]
		if db.MayAliasGraphInput(w) || db.MayAliasGraphOutput(w) {
			return true
		}
	}
	for _, i := range written {
		reach.OnReach(n.Inputs[i], func() { mark(n) })
	}
	return false
}

// unused reports whether nothing reads n's outputs.
func unused(n *graph.Node) bool {
	for _, o := range n.Outputs {
		if len(o.Uses) > 0 {
			return false
		}
	}
	return true
}
