package passes

import (
	"slices"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/graph/alias"
)

// UseVariadicCat rewrites aten::cat(prim::ListConstruct(a, b, c), dim) as
// prim::VarConcat(a, b, c, dim), as PyTorch's UseVariadicCat: no list to
// build per run. The list must never be written (its elements at the cat
// are then the ListConstruct's inputs); a ListConstruct left without uses
// is removed.
func UseVariadicCat(g *graph.Graph, c *Context) error {
	return useVariadic(g, c, "aten::cat", "prim::VarConcat")
}

// UseVariadicStack does the same for aten::stack -> prim::VarStack.
func UseVariadicStack(g *graph.Graph, c *Context) error {
	return useVariadic(g, c, "aten::stack", "prim::VarStack")
}

func useVariadic(g *graph.Graph, c *Context, op, variadic string) error {
	var db *alias.DB
	var err error
	var todo []*graph.Node
	g.Walk(func(n *graph.Node) {
		if n.Kind != op || len(n.Inputs) != 2 || len(n.Outputs) != 1 {
			return
		}
		list, dim := n.Inputs[0], n.Inputs[1]
		if list.Node == nil || list.Node.Kind != graph.KindListConstruct || len(list.Node.Inputs) == 0 {
			return
		}
		if dim.Type == nil || dim.Type.Kind != graph.IntType {
			return // the Dimname overload
		}
		if err != nil {
			return
		}
		if db == nil {
			if db, err = c.analyze(g); err != nil {
				return
			}
		}
		if db.HasWriters(list) {
			return
		}
		todo = append(todo, n)
	})
	if err != nil {
		return err
	}
	var e edits
	var lists []*graph.Value
	for _, n := range todo {
		list := n.Inputs[0]
		ins := append(append([]*graph.Value(nil), list.Node.Inputs...), n.Inputs[1])
		replaceNode(g, &e, n, variadic, ins)
		lists = append(lists, list)
	}
	e.apply()
	var dead []*graph.Node
	done := map[*graph.Node]bool{}
	for _, list := range lists {
		if len(list.Uses) == 0 && !done[list.Node] {
			done[list.Node] = true
			dead = append(dead, list.Node)
		}
	}
	removeNodes(dead)
	return nil
}

// copyVariants maps view ops to their copying versions, as PyTorch's
// ReplaceWithCopy, for the overloads listed.
var copyVariants = []struct {
	schema string
	copyOp string
}{
	{"aten::permute(Tensor self, int[] dims) -> Tensor", "static_runtime::permute_copy"},
	{"aten::reshape(Tensor self, SymInt[] shape) -> Tensor", "static_runtime::reshape_copy"},
	{"aten::flatten.using_ints(Tensor self, int start_dim=0, int end_dim=-1) -> Tensor", "static_runtime::flatten_copy"},
	{"aten::narrow(Tensor self, int dim, int start, int length) -> Tensor", "aten::narrow_copy"},
}

// ReplaceWithCopy replaces view ops (permute, reshape, flatten, narrow)
// by copying versions whose outputs the memory planner can manage, as
// PyTorch's ReplaceWithCopy. Only with out variants enabled, and only
// where a copy is indistinguishable from a view: neither the input nor
// the output (nor anything aliasing them) is ever written, and the output
// is not (part of) a graph output.
// A copy op without a registered kernel is not introduced.
func ReplaceWithCopy(g *graph.Graph, c *Context) error {
	if !c.EnableOutVariant {
		return nil
	}
	type repl struct {
		n  *graph.Node
		op string
	}
	var todo []repl
	g.Walk(func(n *graph.Node) {
		if len(n.Outputs) != 1 || len(n.Inputs) == 0 {
			return
		}
		for _, cv := range copyVariants {
			if !matches(n, cv.schema) {
				continue
			}
			if c.hasOp(cv.copyOp) {
				todo = append(todo, repl{n, cv.copyOp})
			}
			return
		}
	})
	if len(todo) == 0 {
		return nil
	}
	db, err := c.analyze(g)
	if err != nil {
		return err
	}
	todo = slices.DeleteFunc(todo, func(r repl) bool {
		n := r.n
		return db.HasWriters(n.Inputs[0]) || db.HasWriters(n.Outputs[0]) ||
			db.MayAliasGraphOutput(n.Outputs[0])
	})
	var e edits
	for _, r := range todo {
		replaceNode(g, &e, r.n, r.op, append([]*graph.Value(nil), r.n.Inputs...))
	}
	e.apply()
	return nil
}
