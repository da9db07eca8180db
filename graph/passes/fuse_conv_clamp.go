package passes

import (
	"math"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// ConvClampKind is the op FuseConvClamp makes: a convolution whose
// output is clamped as its blocks are finished (ops.ConvClampSchema:
// input, weight, bias, stride, padding, dilation, groups, min, max).
const ConvClampKind = "gosr::conv_clamp"

// FuseConvClamp fuses a convolution (conv1d, conv2d, _convolution or
// convolution with integer padding, not transposed) and the relu,
// relu6 (hardtanh) or clamp that is the only reader of its output into
// one gosr::conv_clamp node, so the activation is applied to each block
// of the output while it is in cache instead of in a pass of its own.
// The bounds must be constants with min <= max (clamp's min > max rule
// differs); relu is [0, +Inf]. Only when the runtime has the op (HasOp);
// the runtime turns the pass off for libtorch kernels and devices, which
// lack it.
func FuseConvClamp(g *graph.Graph, c *Context) error {
	if !c.hasOp(ConvClampKind) {
		return nil
	}
	fuseIntoProducer(g, ConvClampKind, fusableConv, convArgs, false, clampArgs(g))
	return nil
}

// clampArgs gives a clamp-fusing pass's extra arguments: the bounds of
// the activation (clampBounds) as float constants, min then max.
func clampArgs(g *graph.Graph) func(e *edits, act *graph.Node) ([]*graph.Value, bool) {
	return func(e *edits, act *graph.Node) ([]*graph.Value, bool) {
		lo, hi, ok := clampBounds(act)
		if !ok {
			return nil, false
		}
		return []*graph.Value{e.constant(g, ivalue.FromDouble(lo), graph.Float, act), e.constant(g, ivalue.FromDouble(hi), graph.Float, act)}, true
	}
}

// fuseIntoProducer replaces each node act whose extra gives its fused
// arguments (ok) and whose first input is the one output of a producer
// (fusable says which) read by act alone, in act's block, with one node
// of kind: the producer's args, then extra's. The epilogue fusions
// (FuseConvClamp, FuseConvAct, FuseLinearAct) are this loop with their
// own matches. extra runs only where the producer fuses. The fused node
// takes act's source range, or the producer's (prodSource).
func fuseIntoProducer(g *graph.Graph, kind string, fusable func(*graph.Node) bool, args func(*graph.Node) []*graph.Value,
	prodSource bool, extra func(e *edits, act *graph.Node) ([]*graph.Value, bool)) {
	var e edits
	changed := false
	g.Walk(func(act *graph.Node) {
		if len(act.Inputs) == 0 {
			return
		}
		x := act.Inputs[0]
		prod := x.Node
		if prod == nil || len(x.Uses) != 1 || len(prod.Outputs) != 1 || prod.Owner != act.Owner || !fusable(prod) {
			return
		}
		more, ok := extra(&e, act)
		if !ok {
			return
		}
		n := replaceNode(g, &e, act, kind, append(args(prod), more...))
		if prodSource {
			n.SourceRange = prod.SourceRange
		}
		e.destroyLater(prod)
		changed = true
	})
	if changed {
		e.apply()
	}
}

// convArgs is a fusable convolution's input, weight, bias, stride,
// padding, dilation and groups: the fused ops' first seven inputs.
func convArgs(conv *graph.Node) []*graph.Value {
	groups := 6
	if len(conv.Inputs) > 9 || conv.Kind == "aten::convolution" {
		groups = 8 // _convolution's and convolution's
	}
	return []*graph.Value{conv.Inputs[0], conv.Inputs[1], conv.Inputs[2], conv.Inputs[3], conv.Inputs[4], conv.Inputs[5], conv.Inputs[groups]}
}

// fusableConv reports whether conv is a convolution FuseConvClamp takes:
// integer padding (not "same"/"valid"), not transposed.
func fusableConv(conv *graph.Node) bool {
	switch conv.Kind {
	case "aten::conv1d", "aten::conv2d":
		return foldableConv(conv) && conv.Inputs[4].Type != nil && conv.Inputs[4].Type.Kind != graph.StringType
	case "aten::_convolution", "aten::convolution":
		return foldableConv(conv)
	}
	return false
}

// clampBounds gives the bounds of an activation FuseConvClamp can fold:
// relu (0, +Inf), hardtanh (relu6 among them) and clamp with constant
// numbers, min <= max.
func clampBounds(n *graph.Node) (lo, hi float64, ok bool) {
	switch {
	case matches(n, "aten::relu(Tensor self) -> Tensor"), matches(n, "aten::relu_(Tensor(a!) self) -> Tensor(a!)"):
		return 0, math.Inf(1), true
	case matches(n, "aten::hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor"),
		matches(n, "aten::hardtanh_(Tensor(a!) self, Scalar min_val=-1, Scalar max_val=1) -> Tensor(a!)"),
		matches(n, "aten::clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor"),
		matches(n, "aten::clamp_(Tensor(a!) self, Scalar? min=None, Scalar? max=None) -> Tensor(a!)"):
		a, aok := graph.ConstantValue(n.Inputs[1])
		b, bok := graph.ConstantValue(n.Inputs[2])
		if !aok || !bok || !a.IsNumber() || !b.IsNumber() {
			return 0, 0, false
		}
		lo, hi = a.AsFloat(), b.AsFloat()
		// float32 bounds, as the kernels use them
		if f, g := float32(lo), float32(hi); !(f <= g) {
			return 0, 0, false
		}
		return lo, hi, true
	}
	return 0, 0, false
}
