package passes

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// ConvScaledKind is the op FuseConvScale makes of a plain convolution;
// convScaledKinds names the one for each fused convolution.
const ConvScaledKind = "gosr::conv_scaled"

// convScaledKinds maps each convolution kind FuseConvScale takes to the
// kind it makes: the convolution's inputs (a plain one's as convArgs
// gives them), then the mul's second operand (ops.ConvScaledSchema and
// the three after it).
var convScaledKinds = map[string]string{
	"aten::conv2d":       ConvScaledKind,
	"aten::_convolution": ConvScaledKind,
	"aten::convolution":  ConvScaledKind,
	ConvClampKind:        "gosr::conv_clamp_scaled",
	ConvAddClampKind:     "gosr::conv_add_clamp_scaled",
	ConvActKind:          "gosr::conv_act_scaled",
}

const mulSchema = "aten::mul.Tensor(Tensor self, Tensor other) -> Tensor"

// FuseConvScale gives a 2-d convolution of one group whose input is an
// aten::mul read by it alone the mul's two operands instead (the end of
// a squeeze-and-excitation block, x * s with s one value a channel,
// and the projection after it: efficientnet's and mobilenet_v3's), so
// the kernel multiplies the input as it reads it and the product never
// makes a pass of its own (see [Scaled convolution input] in ops). The
// kernel makes the product first where its shapes are not of that
// kind, so any mul fuses; only a convolution whose groups are the
// constant 1 and whose weight, when constant, is 4-d. After the other
// convolution fusions, whose kinds it takes. Only when the runtime has
// the op; the runtime turns the pass off where it turns FuseConvClamp
// off.
func FuseConvScale(g *graph.Graph, c *Context) error {
	if !c.hasOp(ConvScaledKind) {
		return nil
	}
	var e edits
	changed := false
	g.Walk(func(conv *graph.Node) {
		kind, ok := convScaledKinds[conv.Kind]
		if !ok || len(conv.Inputs) < 7 || len(conv.Outputs) != 1 {
			return
		}
		plain := kind == ConvScaledKind
		if plain && !fusableConv(conv) {
			return
		}
		var ins []*graph.Value
		if plain {
			ins = convArgs(conv)
		} else {
			ins = append(ins, conv.Inputs...)
		}
		if gv, ok := graph.ConstantValue(ins[6]); !ok || gv.Kind() != ivalue.KindInt || gv.Int() != 1 {
			return
		}
		if wv, ok := graph.ConstantValue(ins[1]); ok && (wv.Tensor() == nil || wv.Tensor().Dim() != 4) {
			return
		}
		x := conv.Inputs[0]
		mul := x.Node
		if mul == nil || len(x.Uses) != 1 || len(mul.Outputs) != 1 || mul.Owner != conv.Owner || !matches(mul, mulSchema) {
			return
		}
		ins[0] = mul.Inputs[0]
		replaceNode(g, &e, conv, kind, append(ins, mul.Inputs[1]))
		e.destroyLater(mul)
		changed = true
	})
	if changed {
		e.apply()
	}
	return nil
}
