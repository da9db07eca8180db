package ops

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// In-place forms of activation.go's ops, of tril/triu and of dropout, as TorchScript
// emits them (F.elu(x, inplace=True) is aten::elu_, nn.Dropout(inplace=
// True) aten::dropout_). The activations go through inplaceBuilder
// (inplace.go): the functional kernel's result is written back into
// self. This file sorts after inplace.go, whose init registers the names
// it lists itself.

func init() {
	for _, name := range []string{
		"elu", "celu", "selu", "mish", "threshold", "rrelu", "relu6", "tril", "triu",
	} {
		in := "aten::" + name + "_"
		inplaceFunctional[in] = "aten::" + name
		RegisterNative(in, inplaceBuilder)
	}

	// Dropout in inference is the identity; in-place, it returns self.
	// RemoveMutation may turn dropout_ into dropout (which EliminateNoOps
	// removes when train is a constant false).
	for _, name := range []string{"dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout"} {
		in := "aten::" + name + "_"
		inplaceFunctional[in] = "aten::" + name
		schema := in + "(Tensor(a!) self, float p, bool train) -> Tensor(a!)"
		RegisterNative(in, func(n *graph.Node) Kernel {
			if !n.Matches(schema) {
				return nil
			}
			return dropoutKernel(n)
		})
	}
	// convert.go registers the other three functional dropouts.
	RegisterNative("aten::feature_alpha_dropout", func(n *graph.Node) Kernel {
		if !n.Matches("aten::feature_alpha_dropout(Tensor input, float p, bool train) -> Tensor") {
			return nil
		}
		return dropoutKernel(n)
	})

	// Memory-planner rules (see InPlace): each output element is computed
	// from the input element at the same index only, read before written.
	// Go kernel only: ATen's out= would do, but is not relied on.
	for _, s := range []string{
		eluSchema, seluSchema, celuSchema, hardshrinkSchema, softshrinkSchema,
		logSigmoidSchema, mishSchema, rreluSchema,
	} {
		regInPlace(s, InPlace{Input: 0, Safe: unarySafe(true)})
	}
	regInPlace(thresholdSchema, InPlace{Input: 0, Safe: unarySafe(false)})
	regInPlace(preluSchema, InPlace{Input: 0, Safe: preluSafe})
}

// dropoutKernel is dropout with train=False: the input itself. A train
// that is a constant false is not checked per run; train=True is an
// error (gosr runs inference only).
func dropoutKernel(n *graph.Node) Kernel {
	if v, ok := graph.ConstantValue(n.Inputs[2]); ok && v.Kind() == ivalue.KindBool && !v.Bool() {
		return func(p *ProcessedNode) error {
			p.SetOutput(0, *p.Input(0))
			return nil
		}
	}
	kind := n.Kind
	return func(p *ProcessedNode) error {
		if p.Bool(2) {
			return Errorf("%s with train=True is not supported (inference only)", kind)
		}
		p.SetOutput(0, *p.Input(0))
		return nil
	}
}

// preluSafe: a floating self that the weight (input 1) cannot be.
func preluSafe(p *ProcessedNode) bool {
	x := contiguousSelf(p)
	w := p.Tensor(1)
	return x != nil && w != nil && x.DType().IsFloat() && w.DType() == x.DType()
}
