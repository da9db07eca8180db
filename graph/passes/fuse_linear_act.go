package passes

import (
	"math"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// LinearActKind is the op FuseLinearAct makes: a linear layer whose
// output goes through an activation (ops.LinearActSchema: input,
// weight, bias, and the activation's name).
const LinearActKind = "gosr::linear_act"

const linearSchema = "aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor"

// FuseLinearAct fuses aten::linear and the relu, relu6 (hardtanh 0..6),
// silu, sigmoid, hardswish, hardsigmoid or exact gelu that is the only
// reader of its output into one gosr::linear_act node: the activation
// runs on each finished block of a large output while it is in cache
// (a transformer's or convnext's MLP), and a small layer (an MLP
// recommender's) saves the activation's node. Bit for bit the pair's
// results. Only when the runtime has the op; the runtime turns the pass
// off where it turns FuseConvClamp off.
func FuseLinearAct(g *graph.Graph, c *Context) error {
	if !c.hasOp(LinearActKind) {
		return nil
	}
	var e edits
	changed := false
	g.Walk(func(act *graph.Node) {
		name, ok := fusableActivation(act)
		if !ok {
			lo, hi, isClamp := clampBounds(act)
			switch {
			case !isClamp:
				return
			case lo == 0 && math.IsInf(hi, 1):
				name = "relu"
			case lo == 0 && hi == 6:
				name = "relu6"
			default:
				return
			}
		}
		if len(act.Inputs) == 0 {
			return
		}
		x := act.Inputs[0]
		lin := x.Node
		if lin == nil || len(x.Uses) != 1 || len(lin.Outputs) != 1 || lin.Owner != act.Owner || !matches(lin, linearSchema) {
			return
		}
		ins := []*graph.Value{lin.Inputs[0], lin.Inputs[1], lin.Inputs[2], e.constant(g, ivalue.FromString(name), graph.Str, act)}
		// The linear's source range: its shape and dtype errors are the
		// node's.
		replaceNode(g, &e, act, LinearActKind, ins).SourceRange = lin.SourceRange
		e.destroyLater(lin)
		changed = true
	})
	if changed {
		e.apply()
	}
	return nil
}
