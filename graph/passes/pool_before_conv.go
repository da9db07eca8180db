package passes

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// [Pool before pointwise convolution]
//
// A 1x1 convolution at stride 1 is the same linear map at every
// position, and an average pooling is a weighted sum of positions in
// each channel apart, so the two commute: avg_pool(conv1x1(x)) =
// conv1x1(avg_pool(x)), bias included where every window's divisor is
// the count of the values it sums (no padding, no divisor_override:
// the bias, averaged over the window, is the bias again). Pooled
// first, the convolution runs over the pooled positions: densenet's
// three transitions (a 1x1 convolution halving the channels, then a
// 2x2 average pooling at stride 2) do a quarter of their multiply-adds,
// 0.46 of densenet121's 5.67 GFLOP, and the pooling reads twice the
// channels it did, which costs far less. ONNX Runtime and PyTorch run
// the two in the graph's order.
//
// The sums are taken in another order (each output is a sum over
// channels of averages instead of an average of sums over channels), so
// the result differs from the graph's order by float32 rounding (PyTorch's
// own outputs are matched to its tolerances, testdata/ops'
// conv1x1_avg_pool cases). Only where the pooling shrinks the map (a
// stride above 1): at stride 1 the convolution would run over as many
// positions and the pooling over more channels.

// PoolBeforePointwiseConv rewrites an aten::avg_pool2d whose input is a
// 1x1, stride-1, unpadded, non-transposed convolution of a constant
// weight that nothing else reads into the pooling of the convolution's
// input, then the convolution (see [Pool before pointwise
// convolution]).
func PoolBeforePointwiseConv(g *graph.Graph, _ *Context) error {
	var pools []*graph.Node
	g.Walk(func(n *graph.Node) {
		if n.Kind == "aten::avg_pool2d" {
			pools = append(pools, n)
		}
	})
	// The node lists change at the end (see FoldConvBatchNorm).
	var e edits
	for _, pool := range pools {
		conv := pooledPointwiseConv(pool)
		if conv == nil {
			continue
		}
		ins := append([]*graph.Value{conv.Inputs[0]}, pool.Inputs[1:]...)
		pooled := g.NewNode(pool.Kind, ins, 1)
		pooled.Outputs[0].Type = pool.Outputs[0].Type
		pooled.SourceRange = pool.SourceRange
		e.insertBefore(pooled, pool)
		cins := append([]*graph.Value{pooled.Outputs[0]}, conv.Inputs[1:]...)
		moved := replaceNode(g, &e, pool, conv.Kind, cins)
		moved.SourceRange = conv.SourceRange
		e.destroyLater(conv)
	}
	e.apply()
	return nil
}

const avgPool2dSchema = "aten::avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor"

// pooledPointwiseConv returns the convolution PoolBeforePointwiseConv
// moves after pool, or nil.
func pooledPointwiseConv(pool *graph.Node) *graph.Node {
	if !matches(pool, avgPool2dSchema) {
		return nil
	}
	conv := pool.Inputs[0].Node
	if conv == nil || conv.Owner != pool.Owner || len(conv.Outputs) != 1 || len(conv.Outputs[0].Uses) != 1 || !fusableConv(conv) {
		return nil
	}
	// The pooling: unpadded, shrinking, a divisor that is each window's
	// count unless the convolution has no bias.
	kernel, okK := constInts(pool.Inputs[1])
	stride, okS := constInts(pool.Inputs[2])
	pad, okP := constInts(pool.Inputs[3])
	if !okK || !okS || !okP || len(kernel) == 0 || !allAre(pad, 0) {
		return nil
	}
	if len(stride) == 0 { // stride=[]: the kernel size
		stride = kernel
	}
	if allAre(stride, 1) {
		return nil
	}
	div, ok := graph.ConstantValue(pool.Inputs[6])
	if !ok {
		return nil
	}
	if b, ok := graph.ConstantValue(conv.Inputs[2]); !div.IsNone() && !(ok && b.IsNone()) {
		return nil
	}
	// The convolution: 1x1 over a 2-d map (a 4-d weight), stride 1, no
	// padding.
	w, ok := constTensor(conv.Inputs[1], false)
	if !ok || w.Dim() != 4 || w.Size(2) != 1 || w.Size(3) != 1 {
		return nil
	}
	cs, okCS := constInts(conv.Inputs[3])
	cp, okCP := constInts(conv.Inputs[4])
	if !okCS || !okCP || !allAre(cs, 1) || !allAre(cp, 0) {
		return nil
	}
	return conv
}

// constInts returns the ints of constant v: an int list, or one int (a
// conv's stride=1).
func constInts(v *graph.Value) ([]int64, bool) {
	c, ok := graph.ConstantValue(v)
	if !ok {
		return nil, false
	}
	switch c.Kind() {
	case ivalue.KindInt:
		return []int64{c.Int()}, true
	case ivalue.KindList:
		l := c.List()
		if l == nil {
			return nil, false
		}
		out := make([]int64, len(l.Items))
		for i, it := range l.Items {
			if it.Kind() != ivalue.KindInt {
				return nil, false
			}
			out[i] = it.Int()
		}
		return out, true
	}
	return nil, false
}

// allAre reports whether every element of xs is v.
func allAre(xs []int64, v int64) bool {
	for _, x := range xs {
		if x != v {
			return false
		}
	}
	return true
}
