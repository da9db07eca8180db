package passes

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/graph/alias"
	"github.com/gosr/gosr/ivalue"
)

// RemoveMutation turns in-place ops into their functional forms where
// that cannot be observed, as PyTorch's RemoveTensorMutation
// (torch/csrc/jit/passes/remove_mutation.cpp): in
//
//	%y = aten::batch_norm(...)
//	%z = aten::relu_(%y)
//
// %y is fresh memory nobody else sees, so relu_ becomes relu and the uses
// of %y after it read %z. Functional ops get out variants and planned
// memory; in-place ones only native kernels. The mutated value must be
//   - made in the same block by a node without blocks or side effects
//     that is not a constant (constants are shared by all runtimes) and
//     whose output does not alias (or contain) any of its inputs;
//   - aliased by no other value (no views, no other in-place results), not
//     stored in a container or escaped, and not a graph input.
//
// aten::zero_ and aten::fill_ become zeros_like and full_like. Rewriting
// one op can free the next (x.add_(y).relu_()), so the pass repeats until
// nothing changes, or for maxMutationRounds: each round analyses the
// whole graph and frees one more op of such a chain, so a chain of n
// in-place ops would cost n analyses; the ops left keep working in place.
func RemoveMutation(g *graph.Graph, c *Context) error {
	// No in-place op with a functional form: nothing to analyse.
	found := false
	g.Walk(func(n *graph.Node) { found = found || functionalKind(n, c) != "" })
	if !found {
		return nil
	}
	for round := 0; round < maxMutationRounds; round++ {
		db, err := c.analyze(g)
		if err != nil {
			return err
		}
		rm := &mutRemover{g: g, db: db, pos: map[*graph.Node]int{}}
		// Positions, not graph.Block.Index: that is a search of the block.
		// Originals at even numbers, nodes put before one at the number
		// below it.
		g.Walk(func(n *graph.Node) { rm.pos[n] = 2 * len(rm.pos) })
		changed := false
		var visit func(b *graph.Block)
		visit = func(b *graph.Block) {
			for _, n := range b.Nodes {
				if err != nil {
					return
				}
				if err = c.poll(); err != nil {
					return
				}
				for _, sb := range n.Blocks {
					visit(sb)
				}
				if kind := functionalKind(n, c); kind != "" && rm.removable(n) {
					rm.rewrite(n, kind)
					changed = true
				}
			}
		}
		visit(g.Block)
		rm.e.apply()
		if err != nil {
			return err
		}
		if !changed {
			return nil
		}
	}
	return nil
}

// maxMutationRounds bounds RemoveMutation's rounds: models need two or
// three (a round that changes something, one that finds nothing more).
const maxMutationRounds = 16

// mutRemover holds one round of RemoveMutation: the analysis, the
// positions of the nodes, and the node lists' changes, applied at the
// end of the round.
type mutRemover struct {
	g   *graph.Graph
	db  *alias.DB
	pos map[*graph.Node]int
	e   edits
}

// index is n's position in its block, as graph.Block.Index compares: -1
// for a node not in a block's list (a Param, a Return).
func (rm *mutRemover) index(n *graph.Node) int {
	if p, ok := rm.pos[n]; ok {
		return p
	}
	return -1
}

// functionalKind returns the op computing n's result without mutation,
// or "" when there is none the runtime can run.
func functionalKind(n *graph.Node, c *Context) string {
	if len(n.Inputs) == 0 || len(n.Outputs) != 1 || n.Inputs[0].Type.Kind != graph.TensorType {
		return ""
	}
	fn := c.functionalOf(n.Kind)
	switch {
	case matches(n, "aten::zero_(Tensor self) -> Tensor"):
		fn = "aten::zeros_like"
	case matches(n, "aten::fill_.Scalar(Tensor self, Scalar value) -> Tensor"):
		fn = "aten::full_like"
	}
	if fn == "" || !c.hasOp(fn) {
		return ""
	}
	return fn
}

// removable checks that nothing but the uses after n can see the memory n
// writes (see RemoveMutation).
func (rm *mutRemover) removable(n *graph.Node) bool {
	db := rm.db
	x := n.Inputs[0]
	p := x.Node
	b := n.Owner
	if p == nil || p.Owner != b || p.Kind == graph.KindParam || p.Kind == graph.KindConstant {
		return false
	}
	if len(p.Blocks) > 0 || hasSideEffects(p) || alias.IsMutating(p) {
		return false
	}
	if db.MayContainAliasAny(x, p.Inputs) || db.MayAliasGraphInput(x) {
		return false
	}
	aliases := db.Aliases(x)
	// The analysis counts x as stored in a container when a fresh list is
	// made from it, even an int[] (aten::size): look at the uses.
	if db.EscapesToContainer(x) && mayCapture(aliases) {
		return false
	}
	// Other aliases (views, later in-place results) must all be made
	// after n, from uses of x that the rewrite redirects: one made before
	// n would keep seeing the old memory.
	at := rm.index(n)
	for _, a := range aliases {
		if a == x || a == n.Outputs[0] {
			continue
		}
		top := ancestorIn(a.Node, b)
		if top == nil || rm.index(top) <= at {
			return false
		}
	}
	return true
}

// ancestorIn returns the node of block b that is n or holds n in its
// sub-blocks (nil when there is none; b.Return for b's return).
func ancestorIn(n *graph.Node, b *graph.Block) *graph.Node {
	for n != nil && n.Owner != b {
		if n.Owner == nil {
			return nil
		}
		n = n.Owner.Owner
	}
	return n
}

// rewrite replaces in-place n by kind(ins...): uses of the mutated value
// after n, and of n's output, read the new result.
func (rm *mutRemover) rewrite(n *graph.Node, kind string) {
	g := rm.g
	x := n.Inputs[0]
	ins := n.Inputs
	none := func() *graph.Value {
		c := rm.e.constant(g, ivalue.None(), graph.None, n)
		rm.pos[c.Node] = rm.pos[n] - 1
		return c
	}
	switch kind {
	case "aten::zeros_like": // dtype, layout, device, pin_memory, memory_format
		ins = []*graph.Value{x, none(), none(), none(), none(), none()}
	case "aten::full_like":
		ins = []*graph.Value{x, n.Inputs[1], none(), none(), none(), none(), none()}
	}
	m := g.NewNode(kind, ins, 1)
	m.Outputs[0].Type = n.Outputs[0].Type
	m.Outputs[0].Name = n.Outputs[0].Name
	m.SourceRange = n.SourceRange
	rm.e.insertBefore(m, n)
	rm.pos[m] = rm.pos[n] - 1
	rm.replaceUsesAfter(x, n, m.Outputs[0])
	n.Outputs[0].ReplaceAllUsesWith(m.Outputs[0])
	rm.e.destroy(n)
}

// replaceUsesAfter redirects the uses of v by nodes after pos in pos's
// block (at any depth inside them) and by the block's return, as PyTorch's
// replaceAllUsesAfterNodeWith.
func (rm *mutRemover) replaceUsesAfter(v *graph.Value, pos *graph.Node, w *graph.Value) {
	b := pos.Owner
	at := rm.index(pos)
	var kept []graph.Use
	for _, u := range v.Uses {
		top := ancestorIn(u.User, b)
		if top != nil && (top == b.Return || rm.index(top) > at) {
			u.User.Inputs[u.Index] = w
			w.Uses = append(w.Uses, u)
			continue
		}
		kept = append(kept, u)
	}
	v.Uses = kept
}

// mayCapture reports whether a use of one of vs may store it where the
// alias analysis stops following it: a container that can hold tensors
// (built, appended to, set), an op the analysis does not know.
func mayCapture(vs []*graph.Value) bool {
	for _, v := range vs {
		for _, u := range v.Uses {
			n := u.User
			if n.Kind == graph.KindReturn || n.Kind == graph.KindIf || n.Kind == graph.KindLoop {
				continue // block returns and carried values are aliases the caller checks
			}
			if !knownOp(n.Kind) || alias.IsMutating(n) && n.Inputs[0].Type.Kind != graph.TensorType {
				return true
			}
			for _, o := range n.Outputs {
				if o.Type.Kind != graph.TensorType && holdsTensor(o.Type) {
					return true
				}
			}
		}
	}
	return false
}

// holdsTensor reports whether values of type t may contain a tensor.
func holdsTensor(t *graph.Type) bool {
	if t == nil {
		return true
	}
	switch t.Kind {
	case graph.TensorType, graph.AnyType, graph.ClassType:
		return true
	}
	for _, e := range t.Elems {
		if holdsTensor(e) {
			return true
		}
	}
	return false
}
