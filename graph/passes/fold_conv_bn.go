package passes

import (
	"math"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// FoldConvBatchNorm folds an eval-mode aten::batch_norm into the
// convolution feeding it, as PyTorch's FoldFrozenConvBatchnorm does when
// it freezes a module:
//
//	W' = W * g / sqrt(var + eps)   (per output channel)
//	b' = (b - mean) * g / sqrt(var + eps) + beta
//
// when the convolution (conv1d, conv2d, _convolution or convolution, not
// transposed) has constant weight and bias (or None), the batch norm's
// statistics, weight, bias and eps are constants, training is False, and
// the convolution's output has no other use. The folded parameters are
// computed in float64 and stored in the weight's dtype; the result
// differs from conv then batch_norm by float32 rounding only.
func FoldConvBatchNorm(g *graph.Graph, _ *Context) error {
	var bns []*graph.Node
	g.Walk(func(n *graph.Node) {
		if n.Kind == "aten::batch_norm" {
			bns = append(bns, n)
		}
	})
	// The node lists change at the end: one at a time, inserting and
	// removing cost a pass over the block each.
	var e edits
	for _, bn := range bns {
		foldOne(g, &e, bn)
	}
	e.apply()
	return nil
}

const bnSchema = "aten::batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor"

// foldableConv reports whether conv is a non-transposed convolution this
// pass can fold into, with weight at input 1 and bias at input 2.
func foldableConv(conv *graph.Node) bool {
	switch {
	case matches(conv, "aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, int[2] padding=0, int[2] dilation=1, int groups=1) -> Tensor"),
		matches(conv, `aten::conv2d.padding(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, str padding="valid", int[2] dilation=1, int groups=1) -> Tensor`),
		matches(conv, "aten::conv1d(Tensor input, Tensor weight, Tensor? bias=None, int[1] stride=[1], int[1] padding=[0], int[1] dilation=[1], int groups=1) -> Tensor"),
		matches(conv, `aten::conv1d.padding(Tensor input, Tensor weight, Tensor? bias=None, int[1] stride=[1], str padding="valid", int[1] dilation=[1], int groups=1) -> Tensor`):
		return true
	case matches(conv, "aten::_convolution(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, bool transposed, int[] output_padding, int groups, bool benchmark, bool deterministic, bool cudnn_enabled, bool allow_tf32) -> Tensor"),
		matches(conv, "aten::_convolution.deprecated(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, bool transposed, int[] output_padding, int groups, bool benchmark, bool deterministic, bool cudnn_enabled) -> Tensor"),
		matches(conv, "aten::convolution(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, bool transposed, int[] output_padding, int groups) -> Tensor"):
		tr, ok := graph.ConstantValue(conv.Inputs[6])
		return ok && tr.Kind() == ivalue.KindBool && !tr.Bool()
	}
	return false
}

// constTensor returns the float tensor held by constant v; with
// allowNone, None gives (nil, true).
func constTensor(v *graph.Value, allowNone bool) (*ivalue.Tensor, bool) {
	c, ok := graph.ConstantValue(v)
	if !ok {
		return nil, false
	}
	if c.IsNone() {
		return nil, allowNone
	}
	t := c.Tensor()
	if t == nil || graph.IsUnboundTensor(t) || !(t.DType() == ivalue.Float32 || t.DType() == ivalue.Float64) {
		return nil, false
	}
	return t, true
}

func foldOne(g *graph.Graph, e *edits, bn *graph.Node) {
	if !matches(bn, bnSchema) {
		return
	}
	conv := bn.Inputs[0].Node
	if conv == nil || conv.Kind == graph.KindParam || !foldableConv(conv) || len(conv.Outputs[0].Uses) != 1 {
		return
	}
	if tr, ok := graph.ConstantValue(bn.Inputs[5]); !ok || tr.Kind() != ivalue.KindBool || tr.Bool() {
		return
	}
	epsV, ok := graph.ConstantValue(bn.Inputs[7])
	if !ok || !epsV.IsNumber() {
		return
	}
	w, okW := constTensor(conv.Inputs[1], false)
	b, okB := constTensor(conv.Inputs[2], true)
	gamma, okG := constTensor(bn.Inputs[1], true)
	beta, okBeta := constTensor(bn.Inputs[2], true)
	mean, okM := constTensor(bn.Inputs[3], false)
	vr, okV := constTensor(bn.Inputs[4], false)
	if !okW || !okB || !okG || !okBeta || !okM || !okV || w.Dim() < 2 {
		return
	}
	cout := w.Size(0)
	for _, t := range []*ivalue.Tensor{b, gamma, beta, mean, vr} {
		if t != nil && (t.Dim() != 1 || t.Size(0) != cout) {
			return
		}
	}
	eps := epsV.AsFloat()
	vals := func(t *ivalue.Tensor, def float64) []float64 {
		if t == nil {
			out := make([]float64, cout)
			for i := range out {
				out[i] = def
			}
			return out
		}
		return t.Float64s()
	}
	bs, gs, betas, ms, vs := vals(b, 0), vals(gamma, 1), vals(beta, 0), vals(mean, 0), vals(vr, 0)
	scale := make([]float64, cout)
	bias := make([]float64, cout)
	for o := 0; o < cout; o++ {
		scale[o] = gs[o] / math.Sqrt(vs[o]+eps)
		bias[o] = (bs[o]-ms[o])*scale[o] + betas[o]
	}
	ws := w.Float64s()
	per := len(ws) / max(cout, 1)
	nw := ivalue.NewTensor(w.DType(), w.Sizes()...)
	nb := ivalue.NewTensor(w.DType(), cout)
	for i, v := range ws {
		setFloat(nw, i, v*scale[i/per])
	}
	for o, v := range bias {
		setFloat(nb, o, v)
	}
	wt := conv.Inputs[1].Type
	bt := graph.Tensor
	if b != nil {
		bt = conv.Inputs[2].Type
	}
	conv.ReplaceInput(1, e.constant(g, ivalue.FromTensor(nw), wt, conv))
	conv.ReplaceInput(2, e.constant(g, ivalue.FromTensor(nb), bt, conv))
	bn.Outputs[0].ReplaceAllUsesWith(conv.Outputs[0])
	e.destroy(bn) // its uses go now: the next batch norm counts them
}

func setFloat(t *ivalue.Tensor, i int, v float64) {
	if t.DType() == ivalue.Float64 {
		t.F64()[i] = v
		return
	}
	t.F32()[i] = float32(v)
}
