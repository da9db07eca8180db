package passes

import (
	"fmt"
	"slices"
	"sync"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// removeOutputs deletes n's outputs i where drop[i], which must be
// unused, renumbering the others.
func removeOutputs(n *graph.Node, drop []bool) {
	k := 0
	for i, o := range n.Outputs {
		if i < len(drop) && drop[i] {
			continue
		}
		o.Offset = k
		n.Outputs[k] = o
		k++
	}
	clear(n.Outputs[k:])
	n.Outputs = n.Outputs[:k]
}

// removeReturns deletes b's returns i where drop[i], keeping use lists
// exact.
func removeReturns(b *graph.Block, drop []bool) {
	var outs []*graph.Value
	for i, v := range b.Outputs() {
		if i >= len(drop) || !drop[i] {
			outs = append(outs, v)
		}
	}
	b.Return.SetInputs(outs)
}

// replaceNode puts a new node of kind with inputs ins in old's place (in
// e), moves old's output uses to it (same types and names), and destroys
// old, its uses of its inputs dropped when e is applied.
func replaceNode(g *graph.Graph, e *edits, old *graph.Node, kind string, ins []*graph.Value) *graph.Node {
	n := g.NewNode(kind, ins, len(old.Outputs))
	for i, o := range old.Outputs {
		n.Outputs[i].Type = o.Type
		n.Outputs[i].Name = o.Name
	}
	n.SourceRange = old.SourceRange
	for i, o := range old.Outputs {
		o.ReplaceAllUsesWith(n.Outputs[i])
	}
	e.replace(old, n)
	return n
}

// removeNodes destroys nodes as graph.Node.Destroy does, each of whose
// outputs is unused or used only by the nodes removed (or inside them),
// in time linear in what they touch: Destroy finds the node in its block
// and each use in its value's list, so removing many nodes of one block,
// or many users of one value, one at a time grows with the square.
func removeNodes(nodes []*graph.Node) {
	var e edits
	for _, n := range nodes {
		e.destroyLater(n)
	}
	e.apply()
}

// edits batches changes to the node lists of blocks, each of which costs
// a search of the block when done one at a time (graph.Block.Index):
// nodes put before others, put in others' places, taken out. Until apply, the
// blocks' lists are as they were; the nodes' Owner fields are already
// what they will be (nil for those taken out). Uses are kept exact,
// except those of nodes given to destroyLater.
type edits struct {
	before  map[*graph.Node][]*graph.Node
	after   map[*graph.Node][]*graph.Node
	subst   map[*graph.Node]*graph.Node
	drop    map[*graph.Node]bool
	later   []*graph.Node // destroyLater's, their uses to drop in apply
	blocks  []*graph.Block
	touched map[*graph.Block]bool
}

func (e *edits) touch(b *graph.Block) {
	if e.touched == nil {
		e.touched = map[*graph.Block]bool{}
		e.before = map[*graph.Node][]*graph.Node{}
		e.after = map[*graph.Node][]*graph.Node{}
		e.subst = map[*graph.Node]*graph.Node{}
		e.drop = map[*graph.Node]bool{}
	}
	if b != nil && !e.touched[b] {
		e.touched[b] = true
		e.blocks = append(e.blocks, b)
	}
}

// insertBefore puts n just before pos, as n.InsertBefore(pos); pos may
// be a node put in by these edits.
func (e *edits) insertBefore(n, pos *graph.Node) {
	e.touch(pos.Owner)
	n.Owner = pos.Owner
	e.before[pos] = append(e.before[pos], n)
}

// insertAfter puts n just after pos (after what replaces pos, if it
// is replaced), as n.InsertAfter(pos); b is pos's block (pos may be
// taken out already).
func (e *edits) insertAfter(n, pos *graph.Node, b *graph.Block) {
	e.touch(b)
	n.Owner = b
	e.after[pos] = append(e.after[pos], n)
}

// constant is g.Constant(v, t, pos) for pos non-nil.
func (e *edits) constant(g *graph.Graph, v ivalue.IValue, t *graph.Type, pos *graph.Node) *graph.Value {
	n := newConstant(g, v, t)
	e.insertBefore(n, pos)
	return n.Outputs[0]
}

// newConstant is the node graph.Graph.Constant makes, not yet in a block.
func newConstant(g *graph.Graph, v ivalue.IValue, t *graph.Type) *graph.Node {
	n := g.NewNode(graph.KindConstant, nil, 1)
	n.Outputs[0].Type = t
	if !v.IsNone() {
		n.Attrs = []graph.Attr{{Name: "value", Value: v}}
	}
	return n
}

// replace puts n in old's place and destroys old later (destroyLater),
// as n.InsertBefore(old); old.Destroy() would.
func (e *edits) replace(old, n *graph.Node) {
	e.touch(old.Owner)
	n.Owner = old.Owner
	e.subst[old] = n
	e.destroyLater(old)
}

// destroy is n.Destroy() but for the block's list, which apply fixes.
func (e *edits) destroy(n *graph.Node) {
	e.touch(n.Owner)
	e.drop[n] = true
	n.Owner = nil
	dropUses(n)
}

// destroyLater is destroy, but n's uses of its inputs (and those of the
// nodes inside it) stay recorded until apply, which drops all such uses
// in one pass over each value's list: for passes that read no use list
// in between.
func (e *edits) destroyLater(n *graph.Node) {
	e.touch(n.Owner)
	e.drop[n] = true
	n.Owner = nil
	e.later = append(e.later, n)
}

// dropUses removes the uses n and the nodes of its blocks make, as
// graph.Node.Destroy does.
func dropUses(n *graph.Node) {
	n.RemoveAllInputs()
	for _, b := range n.Blocks {
		for i := len(b.Nodes) - 1; i >= 0; i-- {
			dropUses(b.Nodes[i])
		}
		b.Return.RemoveAllInputs()
	}
}

// apply rebuilds the node lists of the blocks touched.
func (e *edits) apply() {
	if len(e.later) > 0 {
		gone := map[*graph.Node]bool{}
		var vals []*graph.Value
		seen := map[*graph.Value]bool{}
		var walk func(n *graph.Node)
		walk = func(n *graph.Node) {
			gone[n] = true
			for _, in := range n.Inputs {
				if !seen[in] {
					seen[in] = true
					vals = append(vals, in)
				}
			}
			for _, b := range n.Blocks {
				for _, m := range b.Nodes {
					walk(m)
				}
				walk(b.Return)
			}
		}
		for _, n := range e.later {
			walk(n)
		}
		for _, n := range e.later {
			for _, o := range n.Outputs {
				for _, u := range o.Uses {
					if !gone[u.User] {
						panic(fmt.Sprintf("graph: destroying %s whose output %s has uses", n.Kind, o))
					}
				}
			}
		}
		for _, v := range vals {
			v.Uses = slices.DeleteFunc(v.Uses, func(u graph.Use) bool { return gone[u.User] })
		}
		for n := range gone {
			n.Inputs = nil
		}
		e.later = nil
	}
	for _, b := range e.blocks {
		out := make([]*graph.Node, 0, len(b.Nodes))
		var emit func(n *graph.Node)
		emit = func(n *graph.Node) {
			for _, m := range e.before[n] {
				emit(m)
			}
			if s, ok := e.subst[n]; ok {
				emit(s)
			}
			if !e.drop[n] {
				out = append(out, n)
			}
			for _, m := range e.after[n] {
				emit(m)
			}
		}
		for _, n := range b.Nodes {
			emit(n)
		}
		b.Nodes = out
	}
	*e = edits{}
}

// schemas caches parsed schemas for matches.
var schemas sync.Map // schema text -> *graph.Schema

// matches is n.Matches(schema), parsing schema once per process:
// graph.Node.Matches parses it on every call, and passes ask it of every
// node.
func matches(n *graph.Node, schema string) bool {
	if s, ok := schemas.Load(schema); ok {
		return s.(*graph.Schema).Matches(n)
	}
	s, err := graph.ParseSchema(schema)
	if err != nil {
		panic(fmt.Sprintf("passes: bad schema %q: %v", schema, err))
	}
	schemas.Store(schema, s)
	return s.Matches(n)
}
