package ops

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// In-place dropout (nn.Dropout(inplace=True) is aten::dropout_, ...) and
// feature_alpha_dropout; convert.go has the other functional dropouts.
// This file sorts after inplace.go (see inplace_act.go).

func init() {
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
