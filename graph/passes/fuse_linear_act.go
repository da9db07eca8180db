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
	isLinear := func(n *graph.Node) bool { return matches(n, linearSchema) }
	linearArgs := func(n *graph.Node) []*graph.Value {
		return []*graph.Value{n.Inputs[0], n.Inputs[1], n.Inputs[2]}
	}
	// The linear's source range: its shape and dtype errors are the
	// fused node's.
	fuseIntoProducer(g, LinearActKind, isLinear, linearArgs, true, func(e *edits, act *graph.Node) ([]*graph.Value, bool) {
		name, ok := linearActName(act)
		if !ok {
			return nil, false
		}
		return []*graph.Value{e.constant(g, ivalue.FromString(name), graph.Str, act)}, true
	})
	return nil
}

// linearActName names the activation FuseLinearAct folds into a linear
// layer: FuseConvAct's, relu and relu6.
func linearActName(act *graph.Node) (string, bool) {
	if name, ok := fusableActivation(act); ok {
		return name, true
	}
	lo, hi, ok := clampBounds(act)
	switch {
	case !ok:
		return "", false
	case lo == 0 && math.IsInf(hi, 1):
		return "relu", true
	case lo == 0 && hi == 6:
		return "relu6", true
	}
	return "", false
}
