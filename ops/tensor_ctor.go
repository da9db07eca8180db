package ops

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// aten::tensor builds a tensor from a scalar or a (nested) list of
// scalars, as torch.tensor does in TorchScript: int gives int64, float
// the default float32, bool bool, unless dtype says otherwise.
func init() {
	build := func(n *graph.Node) Kernel {
		if len(n.Inputs) != 4 || len(n.Outputs) != 1 {
			return nil
		}
		for _, s := range []string{
			"aten::tensor.int(int t, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False) -> Tensor",
			"aten::tensor.float(float t, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False) -> Tensor",
			"aten::tensor.bool(bool t, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False) -> Tensor",
			"aten::tensor(t[] data, *, ScalarType? dtype=None, Device? device=None, bool requires_grad=False) -> Tensor",
		} {
			if n.Matches(s) {
				return tensorCtorKernel
			}
		}
		return nil
	}
	RegisterOut("aten::tensor", build)
}

type tensorCtorState struct {
	sizes []int
	flat  []ivalue.IValue
}

func tensorCtorKernel(p *ProcessedNode) error {
	st, _ := p.State.(*tensorCtorState)
	if st == nil {
		st = &tensorCtorState{}
		p.State = st
	}
	st.sizes, st.flat = st.sizes[:0], st.flat[:0]
	data := *p.Input(0)
	dt := ivalue.Undefined
	if err := tensorCtorFlatten(st, data, 0); err != nil {
		return err
	}
	for _, v := range st.flat {
		dt = tensorCtorPromote(dt, ScalarDType(v))
	}
	if dt == ivalue.Undefined {
		dt = ivalue.Float32 // torch.tensor([]) is float32
	}
	if !p.IsNone(1) {
		var err error
		if dt, err = ivalue.DTypeFromScalarType(p.Int(1)); err != nil {
			return Errorf("aten::tensor: %v", err)
		}
	}
	out := p.OutTensor(0)
	out.Resize(dt, st.sizes)
	for i, v := range st.flat {
		if err := WriteScalar(out, i, v); err != nil {
			return Errorf("aten::tensor: element %d: %v", i, err)
		}
	}
	return nil
}

func tensorCtorPromote(a, b ivalue.DType) ivalue.DType {
	rank := func(d ivalue.DType) int {
		switch d {
		case ivalue.Bool:
			return 1
		case ivalue.Int64:
			return 2
		case ivalue.Float32:
			return 3
		}
		return 0
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}

// tensorCtorFlatten records the sizes of a nested list (checking it is
// rectangular) and its scalars in row-major order.
func tensorCtorFlatten(st *tensorCtorState, v ivalue.IValue, depth int) error {
	l := v.List()
	if l == nil {
		if !v.IsNumber() {
			return Errorf("aten::tensor: expected numbers or lists of numbers, got %s", v.Kind())
		}
		if depth < len(st.sizes) {
			return Errorf("aten::tensor: expected a list at depth %d, got a number", depth)
		}
		st.flat = append(st.flat, v)
		return nil
	}
	if depth == len(st.sizes) {
		st.sizes = append(st.sizes, len(l.Items))
	} else if st.sizes[depth] != len(l.Items) {
		return Errorf("aten::tensor: expected sequence of length %d at dim %d (got %d)", st.sizes[depth], depth, len(l.Items))
	}
	for _, it := range l.Items {
		if err := tensorCtorFlatten(st, it, depth+1); err != nil {
			return err
		}
	}
	return nil
}
