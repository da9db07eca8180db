package ops

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// self.new_zeros(size) / new_ones / new_full / new_empty (out variants):
// a tensor of the given size with self's dtype unless dtype is given
// (new_full's fill value does not change it, unlike full's). Models build
// masks with them (torchvision's shifted-window attention).

func newFactoryKernel(dtypeArg int, fill *ivalue.IValue) Kernel {
	return func(p *ProcessedNode) error {
		self, err := shapeInput(p, 0, "self")
		if err != nil {
			return err
		}
		st := shapeStateOf(p)
		st.sizes = p.IntsInto(1, st.sizes)
		for _, s := range st.sizes {
			if s < 0 {
				return Errorf("negative dimension in size %v", st.sizes)
			}
		}
		v := ivalue.FromInt(0)
		if fill != nil {
			v = *fill
		} else if v = *p.Input(2); !v.IsNumber() {
			return Errorf("new_full: expected a number fill_value, got %s", v.Kind())
		}
		dt, err := shapeDType(p, dtypeArg, self.DType())
		if err != nil {
			return err
		}
		out := p.OutTensor(0)
		out.Resize(dt, st.sizes)
		shapeFill(out, v)
		return nil
	}
}

func init() {
	zero, one := ivalue.FromInt(0), ivalue.FromInt(1)
	const opts = "*, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"
	for _, c := range []struct {
		op, schema string
		dtypeArg   int
		fill       *ivalue.IValue
	}{
		{"aten::new_zeros", "aten::new_zeros(Tensor self, SymInt[] size, " + opts, 2, &zero},
		{"aten::new_ones", "aten::new_ones(Tensor self, SymInt[] size, " + opts, 2, &one},
		// new_empty's contents are unspecified: zeros are as good as any
		{"aten::new_empty", "aten::new_empty(Tensor self, SymInt[] size, " + opts, 2, &zero},
		{"aten::new_full", "aten::new_full(Tensor self, SymInt[] size, Scalar fill_value, " + opts, 3, nil},
	} {
		c := c
		RegisterOut(c.op, func(n *graph.Node) Kernel {
			if !n.Matches(c.schema) {
				return nil
			}
			return newFactoryKernel(c.dtypeArg, c.fill)
		})
	}
}
