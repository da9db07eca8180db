package passes

import (
	"github.com/gosr/gosr/graph"
)

// BatchNormClampKind is the op FuseBatchNormClamp makes: a batch norm
// whose output is clamped in the same pass over memory
// (ops.BatchNormClampSchema: batch_norm's nine inputs, then min, max).
const BatchNormClampKind = "gosr::batch_norm_clamp"

// FuseBatchNormClamp fuses a batch norm (aten::batch_norm) and the
// relu, relu6 (hardtanh) or clamp that is the only reader of its output
// into one gosr::batch_norm_clamp node: the batch norms no convolution
// absorbs (FoldConvBatchNorm), as densenet's before each layer's ReLU,
// then take one pass over the tensor instead of two. The bounds follow
// FuseConvClamp's rules. Only when the runtime has the op (HasOp); the
// runtime turns the pass off for libtorch kernels and devices.
func FuseBatchNormClamp(g *graph.Graph, c *Context) error {
	if !c.hasOp(BatchNormClampKind) {
		return nil
	}
	fuseIntoProducer(g, BatchNormClampKind, fusableBatchNorm, func(bn *graph.Node) []*graph.Value { return bn.Inputs }, false, clampArgs(g))
	return nil
}

// fusableBatchNorm reports whether n is the batch_norm FuseBatchNormClamp
// takes (its schema exactly: nine inputs).
func fusableBatchNorm(n *graph.Node) bool {
	return matches(n, "aten::batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor")
}
