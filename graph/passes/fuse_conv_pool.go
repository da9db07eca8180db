package passes

import (
	"github.com/gosr/gosr/graph"
)

// ConvClampMaxPoolKind is the op FuseConvMaxPool makes: a convolution
// with its clamp whose output a max pooling alone reads
// (ops.ConvClampMaxPoolSchema: gosr::conv_clamp's inputs, then
// max_pool2d's kernel_size, stride, padding, dilation and ceil_mode).
const ConvClampMaxPoolKind = "gosr::conv_clamp_max_pool2d"

// FuseConvMaxPool fuses a gosr::conv_clamp of a constant 4-d weight (a
// 2-d convolution) of few taps and the aten::max_pool2d that is the
// only reader of its output into one gosr::conv_clamp_max_pool2d node:
// the 3x3 stems of squeezenet and shufflenet (conv, relu, max pool),
// whose convolution output, the largest tensor of the network, is then
// pooled eight planes at a time while in cache and never written whole
// (see [Pooled convolution] in ops). The result is the two ops', bit for
// bit. Only when the runtime has the op; the runtime turns the pass off
// where it turns FuseConvClamp off.
func FuseConvMaxPool(g *graph.Graph, c *Context) error {
	if !c.hasOp(ConvClampMaxPoolKind) {
		return nil
	}
	fuseIntoProducer(g, ConvClampMaxPoolKind, pooledConv, func(conv *graph.Node) []*graph.Value {
		return conv.Inputs[:9]
	}, true, func(e *edits, pool *graph.Node) ([]*graph.Value, bool) {
		if !matches(pool, "aten::max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> Tensor") {
			return nil, false
		}
		return pool.Inputs[1:6], true
	})
	return nil
}

// pooledConvMaxTaps bounds the taps (input channels a group times the
// kernel) of a convolution FuseConvMaxPool takes: the 3x3 stems over
// three channels (27: squeezenet's, shufflenet's), whose output is large
// beside their work. The 7x7 stems of resnets and densenets (147) stay
// apart: their convolution outweighs the pooling, and the 3x3 after the
// pooling read planes the bands had pushed out of L2 (resnet18 about
// even, paired rounds).
const pooledConvMaxTaps = 32

// pooledConv reports whether conv is a gosr::conv_clamp FuseConvMaxPool
// takes: its weight a constant 4-d tensor of at most pooledConvMaxTaps
// taps.
func pooledConv(conv *graph.Node) bool {
	if conv.Kind != ConvClampKind || len(conv.Inputs) != 9 {
		return false
	}
	w, ok := graph.ConstantValue(conv.Inputs[1])
	if !ok || w.Tensor() == nil || w.Tensor().Dim() != 4 {
		return false
	}
	t := w.Tensor()
	return t.Size(1)*t.Size(2)*t.Size(3) <= pooledConvMaxTaps
}
