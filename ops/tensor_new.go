package ops

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// Tensor.new_zeros, new_ones, new_full and new_empty: a tensor of the
// given size with self's dtype unless one is given (new_full too: its
// fill value does not pick the dtype). Out variants, filled every run
// (the memory planner may reuse the storage); new_empty is zero-filled.

func init() {
	zero, one := ivalue.FromInt(0), ivalue.FromInt(1)
	for _, c := range []struct {
		op, schema string
		fill       *ivalue.IValue
	}{
		{"aten::new_zeros", "aten::new_zeros(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor", &zero},
		{"aten::new_ones", "aten::new_ones(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor", &one},
		{"aten::new_empty", "aten::new_empty(Tensor self, SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor", &zero},
		{"aten::new_full", "aten::new_full(Tensor self, SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor", nil},
	} {
		schema, fill := c.schema, c.fill
		RegisterOut(c.op, func(n *graph.Node) Kernel {
			if n.Matches(schema) {
				return newTensorKernel(fill)
			}
			return nil
		})
	}
}

func newTensorKernel(fill *ivalue.IValue) Kernel {
	dtypeArg := 2
	if fill == nil {
		dtypeArg = 3
	}
	return func(p *ProcessedNode) error {
		self, err := shapeInput(p, 0, "self")
		if err != nil {
			return err
		}
		st := shapeStateOf(p)
		st.sizes = p.IntsInto(1, st.sizes)
		for _, s := range st.sizes {
			if s < 0 {
				return Errorf("Trying to create tensor with negative dimension %d: %v", s, st.sizes)
			}
		}
		return shapeFillOut(p, "new_full", fill, 2, dtypeArg, self.DType(), st.sizes)
	}
}
