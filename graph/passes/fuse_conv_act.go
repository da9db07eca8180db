package passes

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// ConvActKind is the op FuseConvAct makes: a convolution whose output
// goes through an activation as its blocks are finished
// (ops.ConvActSchema: input, weight, bias, stride, padding, dilation,
// groups, and the activation's name).
const ConvActKind = "gosr::conv_act"

// FuseConvAct fuses a convolution (as FuseConvClamp takes) and the silu,
// sigmoid, hardswish, hardsigmoid or gelu (approximate="none") that is
// the only reader of its output into one gosr::conv_act node, so the
// activation is applied to each block of the output while it is in
// cache (efficientnet's silu, mobilenet_v3's hardswish) instead of in a
// pass of its own over a tensor that has left the cache. The kernel
// computes each activation as the unfused op does, bit for bit. Only
// when the runtime has the op; the runtime turns the pass off where it
// turns FuseConvClamp off.
func FuseConvAct(g *graph.Graph, c *Context) error {
	if !c.hasOp(ConvActKind) {
		return nil
	}
	fuseIntoProducer(g, ConvActKind, fusableConv, convArgs, false, func(e *edits, act *graph.Node) ([]*graph.Value, bool) {
		name, ok := fusableActivation(act)
		if !ok {
			return nil, false
		}
		return []*graph.Value{e.constant(g, ivalue.FromString(name), graph.Str, act)}, true
	})
	return nil
}

// fusableActivation names the activation FuseConvAct folds into a
// convolution (the names ops.FusedActivation knows), in-place forms
// included: the convolution's output, read by nothing else, is free to
// write.
func fusableActivation(n *graph.Node) (string, bool) {
	for _, a := range []struct{ name, schema, inPlace string }{
		{"silu", "aten::silu(Tensor self) -> Tensor", "aten::silu_(Tensor(a!) self) -> Tensor(a!)"},
		{"sigmoid", "aten::sigmoid(Tensor self) -> Tensor", "aten::sigmoid_(Tensor(a!) self) -> Tensor(a!)"},
		{"hardswish", "aten::hardswish(Tensor self) -> Tensor", "aten::hardswish_(Tensor(a!) self) -> Tensor(a!)"},
		{"hardsigmoid", "aten::hardsigmoid(Tensor self) -> Tensor", "aten::hardsigmoid_(Tensor(a!) self) -> Tensor(a!)"},
	} {
		if matches(n, a.schema) || matches(n, a.inPlace) {
			return a.name, true
		}
	}
	if matches(n, `aten::gelu(Tensor self, *, str approximate="none") -> Tensor`) ||
		matches(n, `aten::gelu_(Tensor(a!) self, *, str approximate="none") -> Tensor(a!)`) {
		if v, ok := graph.ConstantValue(n.Inputs[1]); ok && v.Kind() == ivalue.KindString && v.Str() == "none" {
			return "gelu", true
		}
	}
	return "", false
}
