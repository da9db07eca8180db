package passes

import (
	"fmt"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/graph/alias"
	"github.com/gosr/gosr/ivalue"
)

// ConstantPropagation evaluates nodes whose inputs are all constants and
// that are pure and deterministic, replacing their outputs with
// prim::Constant nodes; inlines the taken branch of a prim::If with a
// constant condition; folds list and tuple construction from constants
// (when the container is never written) and the unpacking and indexing of
// constant tuples and lists. A node that cannot be evaluated (no kernel,
// an error) is left as it is.
func ConstantPropagation(g *graph.Graph, c *Context) error {
	cp := &constProp{g: g, c: c, db: alias.Analyze(g), orig: map[*graph.Value]*graph.Value{}}
	cp.eval = c.Eval
	if cp.eval == nil {
		cp.eval = DefaultEval
	}
	if err := cp.block(g.Block); err != nil {
		return err
	}
	removeDeadConstants(g.Block)
	return nil
}

// removeDeadConstants drops unused prim::Constant nodes (folding leaves
// its inputs behind), as PyTorch's pass ends with dead code elimination.
func removeDeadConstants(b *graph.Block) {
	for i := len(b.Nodes) - 1; i >= 0; i-- {
		n := b.Nodes[i]
		if n.Kind == "prim::Constant" && unused(n) {
			n.Destroy()
			continue
		}
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
}

func (cp *constProp) analysed(v *graph.Value) *graph.Value {
	if o, ok := cp.orig[v]; ok {
		return o
	}
	return v
}

func (cp *constProp) block(b *graph.Block) error {
	for i := 0; i < len(b.Nodes); i++ {
		n := b.Nodes[i]
		if n.Kind == "prim::If" {
			inlined, err := cp.foldIf(n)
			if err != nil {
				return err
			}
			if inlined {
				i-- // the inlined nodes now start at i: visit them next
				continue
			}
		}
		for _, sb := range n.Blocks {
			if err := cp.block(sb); err != nil {
				return err
			}
		}
		if cp.foldable(n) {
			folded, err := cp.fold(n)
			if err != nil {
				return err
			}
			if folded {
				i--
			}
		}
	}
	return nil
}

// foldIf inlines the taken block of an If whose condition is constant.
func (cp *constProp) foldIf(n *graph.Node) (bool, error) {
	if len(n.Inputs) != 1 || len(n.Blocks) != 2 {
		return false, fmt.Errorf("prim::If with %d inputs and %d blocks, expected 1 and 2", len(n.Inputs), len(n.Blocks))
	}
	cond, ok := graph.ConstantValue(n.Inputs[0])
	if !ok || cond.Kind() != ivalue.KindBool {
		return false, nil
	}
	taken := n.Blocks[1]
	if cond.Bool() {
		taken = n.Blocks[0]
	}
	if len(taken.Outputs()) != len(n.Outputs) {
		return false, fmt.Errorf("prim::If block returns %d values for %d outputs", len(taken.Outputs()), len(n.Outputs))
	}
	for _, m := range taken.Nodes {
		m.InsertBefore(n)
	}
	taken.Nodes = nil
	for i, o := range n.Outputs {
		o.ReplaceAllUsesWith(taken.Outputs()[i])
	}
	n.Destroy()
	return true, nil
}

// foldable reports whether n may be evaluated at preparation time.
func (cp *constProp) foldable(n *graph.Node) bool {
	if n.Kind == "prim::Constant" || len(n.Outputs) == 0 || len(n.Blocks) > 0 {
		return false
	}
	if hasSideEffects(n) || alias.IsNondeterministic(n) || alias.IsMutating(n) {
		return false
	}
	switch n.Kind {
	case "prim::Uninitialized", "prim::GetAttr":
		return false
	case "aten::__is__", "aten::__isnot__":
		// They compare identity, which folding containers would change.
		if !allNoneOrScalar(n) {
			return false
		}
	}
	for _, in := range n.Inputs {
		if _, ok := graph.ConstantValue(in); !ok {
			return false
		}
		// A constant container that is written somewhere is not constant.
		if alias.Mutable(in.Type) && cp.db.HasWriters(cp.analysed(in)) {
			return false
		}
	}
	for _, o := range n.Outputs {
		if alias.Mutable(o.Type) && cp.db.HasWriters(o) {
			return false
		}
	}
	return true
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

func (cp *constProp) fold(n *graph.Node) (bool, error) {
	ins := make([]ivalue.IValue, len(n.Inputs))
	for i, in := range n.Inputs {
		ins[i], _ = graph.ConstantValue(in)
	}
	outs, ok := evalStructural(n, ins)
	if !ok {
		var err error
		outs, err = cp.eval(n, ins)
		if err != nil {
			return false, nil // not foldable here; the runtime will report real errors
		}
	}
	if len(outs) != len(n.Outputs) {
		return false, nil
	}
	for i, o := range n.Outputs {
		if outs[i].IsNone() && !graph.None.IsSubtypeOf(o.Type) {
			// unchecked_cast(None) to Tensor on a path that never runs: a
			// constant None cannot have that type
			return false, nil
		}
	}
	for i, o := range n.Outputs {
		v := outs[i].Clone() // detach from the inputs' and the kernel's memory
		cv := cp.g.Constant(v, o.Type, n)
		cv.Name = o.Name
		cp.orig[cv] = cp.analysed(o)
		o.ReplaceAllUsesWith(cv)
	}
	n.Destroy()
	return true, nil
}

// evalStructural evaluates the container prims directly.
func evalStructural(n *graph.Node, ins []ivalue.IValue) ([]ivalue.IValue, bool) {
	switch n.Kind {
	case "prim::ListConstruct":
		return []ivalue.IValue{ivalue.NewList(append([]ivalue.IValue(nil), ins...)...)}, len(n.Outputs) == 1
	case "prim::TupleConstruct":
		return []ivalue.IValue{ivalue.NewTuple(append([]ivalue.IValue(nil), ins...)...)}, len(n.Outputs) == 1
	case "prim::TupleUnpack", "prim::ListUnpack":
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
