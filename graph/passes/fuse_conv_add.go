package passes

import (
	"math"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// ConvAddClampKind is the op FuseConvAdd makes: a convolution whose
// output gets another tensor added, then a clamp, as its blocks are
// finished (ops.ConvAddClampSchema: input, weight, bias, stride,
// padding, dilation, groups, other, min, max).
const ConvAddClampKind = "gosr::conv_add_clamp"

const (
	addSchema        = "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
	addInPlaceSchema = "aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)"
)

// FuseConvAdd fuses a convolution (as FuseConvClamp takes), an add with
// alpha 1 that is the only reader of its output (a residual connection:
// resnets, regnets, mobilenets' inverted residuals), and the relu,
// relu6 (hardtanh) or clamp that alone reads the sum, if there is one,
// into one gosr::conv_add_clamp node (bounds -Inf and +Inf without an
// activation). Its kernel adds the other operand and clamps each block
// of the output while the block is in cache, so neither the add nor the
// activation makes a pass of its own. An in-place add_ is fused only
// when the convolution's output is the tensor it writes. Only when the
// runtime has the op; the runtime turns the pass off where it turns
// FuseConvClamp off.
func FuseConvAdd(g *graph.Graph, c *Context) error {
	if !c.hasOp(ConvAddClampKind) {
		return nil
	}
	var e edits
	changed := false
	g.Walk(func(add *graph.Node) {
		inPlace := matches(add, addInPlaceSchema)
		if !inPlace && !matches(add, addSchema) {
			return
		}
		if a, ok := graph.ConstantValue(add.Inputs[2]); !ok || !a.IsNumber() || a.AsFloat() != 1 {
			return
		}
		for side := 0; side < 2; side++ {
			if inPlace && side == 1 {
				return // add_ writes its self: that must be the convolution
			}
			x, other := add.Inputs[side], add.Inputs[1-side]
			conv := x.Node
			if conv == nil || x == other || len(x.Uses) != 1 || len(conv.Outputs) != 1 || conv.Owner != add.Owner || !fusableConv(conv) {
				continue
			}
			end, lo, hi := add, math.Inf(-1), math.Inf(1)
			if sum := add.Outputs[0]; len(sum.Uses) == 1 {
				act := sum.Uses[0].User
				if l, h, ok := clampBounds(act); ok && act.Owner == add.Owner && len(act.Inputs) > 0 && act.Inputs[0] == sum {
					end, lo, hi = act, l, h
				}
			}
			ins := append(convArgs(conv), other,
				e.constant(g, ivalue.FromDouble(lo), graph.Float, end), e.constant(g, ivalue.FromDouble(hi), graph.Float, end))
			replaceNode(g, &e, end, ConvAddClampKind, ins)
			if end != add {
				e.destroyLater(add)
			}
			e.destroyLater(conv)
			changed = true
			return
		}
	})
	if changed {
		e.apply()
	}
	return nil
}
