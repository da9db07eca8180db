package passes

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// RemoveSelfInput drops the first graph input when it is an unused
// module object: frozen modules keep %self though nothing reads it.
func RemoveSelfInput(g *graph.Graph, c *Context) error {
	ins := g.Inputs()
	if len(ins) > 0 && ins[0].Type != nil && ins[0].Type.Kind == graph.ClassType && len(ins[0].Uses) == 0 {
		g.Block.RemoveInput(0)
	}
	return nil
}

// dropoutOps return their input unchanged when not training (or p = 0).
var dropoutOps = map[string]bool{
	"aten::dropout":               true,
	"aten::feature_dropout":       true,
	"aten::alpha_dropout":         true,
	"aten::feature_alpha_dropout": true,
}

// noOpProfiling are profiling and guard nodes that pass their input
// through.
var noOpProfiling = map[string]bool{
	"prim::profile":        true,
	"prim::profile_ivalue": true,
}

// EliminateNoOps replaces nodes that return their input unchanged by that
// input: aten::detach (no autograd at inference), dropout with
// train=False or p=0, profiling nodes. aten::contiguous is kept: it is a
// real copy when its input is strided, and some models rely on that.
func EliminateNoOps(g *graph.Graph, c *Context) error {
	var dead []*graph.Node
	g.Walk(func(n *graph.Node) {
		if isNoOp(n) {
			n.Outputs[0].ReplaceAllUsesWith(n.Inputs[0])
			dead = append(dead, n)
		}
	})
	removeNodes(dead)
	return nil
}

func isNoOp(n *graph.Node) bool {
	if len(n.Outputs) != 1 || len(n.Inputs) == 0 || len(n.Blocks) > 0 {
		return false
	}
	switch {
	case n.Kind == "aten::detach":
		return len(n.Inputs) == 1
	case noOpProfiling[n.Kind]:
		return len(n.Inputs) == 1
	case dropoutOps[n.Kind]:
		if len(n.Inputs) != 3 {
			return false
		}
		if train, ok := graph.ConstantValue(n.Inputs[2]); ok && train.Kind() == ivalue.KindBool && !train.Bool() {
			return true
		}
		p, ok := graph.ConstantValue(n.Inputs[1])
		return ok && p.IsNumber() && p.AsFloat() == 0
	}
	return false
}
