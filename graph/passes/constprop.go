package passes

import (
	"fmt"
	"slices"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/graph/alias"
	"github.com/gosr/gosr/ivalue"
)

// ConstantPropagation evaluates nodes whose inputs are all constants and
// that are pure and deterministic, replacing their outputs with
// prim::Constant nodes; inlines the taken branch of a prim::If with a
// constant condition; folds list and tuple construction from constants
// (when the container is never written) and the unpacking and indexing of
// constant tuples and lists. Other nodes are evaluated with Context.Eval
// (none without it); a node that cannot be evaluated (no kernel, an
// error) is left as it is.
func ConstantPropagation(g *graph.Graph, c *Context) error {
	var db *alias.DB
	if mayFold(g) {
		var err error
		if db, err = c.analyze(g); err != nil {
			return err
		}
	}
	cp := &constProp{g: g, c: c, db: db, eval: c.Eval, orig: map[*graph.Value]*graph.Value{}}
	err := cp.block(g.Block)
	// The folded nodes' uses of their (constant) inputs go in one batch.
	cp.dead.apply()
	if err != nil {
		return err
	}
	removeDeadConstants(g.Block)
	return nil
}

// removeDeadConstants drops unused prim::Constant nodes (folding leaves
// its inputs behind), as PyTorch's pass ends with dead code elimination.
func removeDeadConstants(b *graph.Block) {
	// Constants read nothing, so dropping one frees no other.
	b.Nodes = slices.DeleteFunc(b.Nodes, func(n *graph.Node) bool {
		if n.Kind == graph.KindConstant && unused(n) {
			n.RemoveAllInputs()
			n.Owner = nil
			return true
		}
		return false
	})
	for _, n := range b.Nodes {
		for _, sb := range n.Blocks {
			removeDeadConstants(sb)
		}
	}
}

type constProp struct {
	g    *graph.Graph
	c    *Context
	db   *alias.DB
	eval EvalFunc
	// orig maps a constant made by the pass to the value it replaced, for
	// alias queries (the analysis predates the new value).
	orig map[*graph.Value]*graph.Value
	// dead are the nodes folded away, out of their blocks' lists already;
	// their uses are dropped at the end.
	dead edits
}

func (cp *constProp) analysed(v *graph.Value) *graph.Value {
	if o, ok := cp.orig[v]; ok {
		return o
	}
	return v
}

// block folds what it can in b, building b's new node list as it goes:
// a folded node gives way to its constants, an If with a constant
// condition to the nodes of its taken block, which are visited next.
func (cp *constProp) block(b *graph.Block) error {
	out := make([]*graph.Node, 0, len(b.Nodes))
	work := [][]*graph.Node{b.Nodes}
	defer func() {
		// On an error too: the list must hold what is left.
		for i := len(work) - 1; i >= 0; i-- {
			out = append(out, work[i]...)
		}
		b.Nodes = out
	}()
	for len(work) > 0 {
		top := len(work) - 1
		if len(work[top]) == 0 {
			work = work[:top]
			continue
		}
		n := work[top][0]
		work[top] = work[top][1:]
		if err := cp.c.poll(); err != nil {
			out = append(out, n)
			return err
		}
		if n.Kind == graph.KindIf {
			taken, err := cp.foldIf(n)
			if err != nil {
				out = append(out, n)
				return err
			}
			if taken != nil {
				for _, m := range taken {
					m.Owner = b
				}
				work = append(work, taken)
				continue
			}
		}
		for _, sb := range n.Blocks {
			if err := cp.block(sb); err != nil {
				out = append(out, n)
				return err
			}
		}
		if cp.foldable(n) {
			consts, err := cp.fold(n)
			if err != nil {
				out = append(out, n)
				return err
			}
			if consts != nil {
				out = append(out, consts...)
				continue
			}
		}
		out = append(out, n)
	}
	return nil
}

// foldIf inlines the taken block of an If whose condition is constant:
// it returns the taken block's nodes, which take the If's place (nil
// when the condition is not constant).
func (cp *constProp) foldIf(n *graph.Node) ([]*graph.Node, error) {
	if len(n.Inputs) != 1 || len(n.Blocks) != 2 {
		return nil, fmt.Errorf("prim::If with %d inputs and %d blocks, expected 1 and 2", len(n.Inputs), len(n.Blocks))
	}
	cond, ok := graph.ConstantValue(n.Inputs[0])
	if !ok || cond.Kind() != ivalue.KindBool {
		return nil, nil
	}
	taken := n.Blocks[1]
	if cond.Bool() {
		taken = n.Blocks[0]
	}
	if len(taken.Outputs()) != len(n.Outputs) {
		return nil, fmt.Errorf("prim::If block returns %d values for %d outputs", len(taken.Outputs()), len(n.Outputs))
	}
	nodes := taken.Nodes
	taken.Nodes = nil
	for i, o := range n.Outputs {
		o.ReplaceAllUsesWith(taken.Outputs()[i])
	}
	cp.gone(n)
	if nodes == nil {
		nodes = []*graph.Node{}
	}
	return nodes, nil
}

// gone destroys n, which its block's new list (block) leaves out.
func (cp *constProp) gone(n *graph.Node) { cp.dead.destroyLater(n) }

// foldable reports whether n may be evaluated at preparation time.
func (cp *constProp) foldable(n *graph.Node) bool {
	if n.Kind == graph.KindConstant || len(n.Outputs) == 0 || len(n.Blocks) > 0 || !constantInputs(n) {
		return false
	}
	if hasSideEffects(n) || alias.IsNondeterministic(n) || alias.IsMutating(n) {
		return false
	}
	switch n.Kind {
	case graph.KindUninitialized, graph.KindGetAttr:
		return false
	case "aten::__is__", "aten::__isnot__":
		// They compare identity, which folding containers would change.
		if !allNoneOrScalar(n) {
			return false
		}
	}
	db := cp.analysis()
	for _, in := range n.Inputs {
		// A constant container that is written somewhere is not constant.
		if alias.Mutable(in.Type) && db.HasWriters(cp.analysed(in)) {
			return false
		}
	}
	for _, o := range n.Outputs {
		if alias.Mutable(o.Type) && db.HasWriters(o) {
			return false
		}
	}
	return true
}

// constantInputs reports whether every input of n is a constant.
func constantInputs(n *graph.Node) bool {
	for _, in := range n.Inputs {
		if in.Node == nil || in.Node.Kind != graph.KindConstant {
			return false
		}
	}
	return true
}

// mayFold reports whether ConstantPropagation may change g: some node
// has only constant inputs, or an If a constant condition. When none
// does, none will (folding and inlining are what make more constants),
// and the pass needs no alias analysis.
func mayFold(g *graph.Graph) bool {
	found := false
	g.Walk(func(n *graph.Node) {
		if !found && n.Kind != graph.KindConstant && constantInputs(n) { // an If's only input is its condition
			found = true
		}
	})
	return found
}

// analysis is the analysis of the graph as the pass found it.
func (cp *constProp) analysis() *alias.DB {
	if cp.db == nil {
		// mayFold said nothing would fold: an error in that reasoning
		// costs time here (the graph may have changed), not correctness
		// of what was folded before.
		cp.db = alias.Analyze(cp.g)
	}
	return cp.db
}

func allNoneOrScalar(n *graph.Node) bool {
	for _, in := range n.Inputs {
		v, ok := graph.ConstantValue(in)
		if !ok || !(v.IsNone() || v.IsNumber()) {
			return false
		}
	}
	return true
}

// fold evaluates n and returns the constants that replace it (nil when
// it cannot be folded).
func (cp *constProp) fold(n *graph.Node) ([]*graph.Node, error) {
	ins := make([]ivalue.IValue, len(n.Inputs))
	for i, in := range n.Inputs {
		ins[i], _ = graph.ConstantValue(in)
	}
	outs, ok := evalStructural(n, ins)
	if !ok {
		if cp.eval == nil {
			return nil, nil // no evaluator: only structural folds
		}
		var err error
		outs, err = cp.eval(n, ins)
		if err != nil {
			return nil, nil // not foldable here; the runtime will report real errors
		}
	}
	if len(outs) != len(n.Outputs) {
		return nil, nil
	}
	for i, o := range n.Outputs {
		if outs[i].IsNone() && !graph.None.IsSubtypeOf(o.Type) {
			// unchecked_cast(None) to Tensor on a path that never runs: a
			// constant None cannot have that type
			return nil, nil
		}
	}
	consts := make([]*graph.Node, 0, len(n.Outputs))
	for i, o := range n.Outputs {
		v := outs[i].Clone() // detach from the inputs' and the kernel's memory
		k := newConstant(cp.g, v, o.Type)
		k.Owner = n.Owner
		cv := k.Outputs[0]
		cv.Name = o.Name
		cp.orig[cv] = cp.analysed(o)
		o.ReplaceAllUsesWith(cv)
		consts = append(consts, k)
	}
	cp.gone(n)
	return consts, nil
}

// evalStructural evaluates the container prims directly.
func evalStructural(n *graph.Node, ins []ivalue.IValue) ([]ivalue.IValue, bool) {
	switch n.Kind {
	case graph.KindListConstruct:
		return []ivalue.IValue{ivalue.NewList(append([]ivalue.IValue(nil), ins...)...)}, len(n.Outputs) == 1
	case graph.KindTupleConstruct:
		return []ivalue.IValue{ivalue.NewTuple(append([]ivalue.IValue(nil), ins...)...)}, len(n.Outputs) == 1
	case graph.KindTupleUnpack, graph.KindListUnpack:
		if len(ins) != 1 || ins[0].List() == nil || len(ins[0].List().Items) != len(n.Outputs) {
			return nil, false
		}
		return append([]ivalue.IValue(nil), ins[0].List().Items...), true
	case "prim::TupleIndex":
		if len(ins) != 2 || ins[0].List() == nil || ins[1].Kind() != ivalue.KindInt {
			return nil, false
		}
		return itemAt(ins[0].List().Items, ins[1].Int())
	case "aten::__getitem__":
		if len(ins) != 2 || ins[0].Kind() != ivalue.KindList || ins[1].Kind() != ivalue.KindInt {
			return nil, false
		}
		return itemAt(ins[0].List().Items, ins[1].Int())
	}
	return nil, false
}

// itemAt is items[i] with Python's negative indices, as a one-output
// result; ok is false out of range.
func itemAt(items []ivalue.IValue, i int64) ([]ivalue.IValue, bool) {
	if i < 0 {
		i += int64(len(items))
	}
	if i < 0 || i >= int64(len(items)) {
		return nil, false
	}
	return []ivalue.IValue{items[i]}, true
}
