package ops

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// The nested-tensor ops of nn.TransformerEncoder's scripted code. gosr
// has no nested tensors (prim::is_nested is false for every tensor), so
// the branches that make one are never taken with
// enable_nested_tensor=False; these kernels let such graphs prepare.
// aten::_nested_tensor_from_mask_left_aligned is a plain check on the
// mask and runs as PyTorch's; aten::_nested_tensor_from_mask would make
// a nested tensor and is an error; aten::to_padded_tensor of a regular
// tensor is an error in PyTorch too.

const (
	nestedLeftAlignedSchema = "aten::_nested_tensor_from_mask_left_aligned(Tensor t, Tensor mask) -> bool"
	nestedFromMaskSchema    = "aten::_nested_tensor_from_mask(Tensor t, Tensor mask, bool mask_check=True) -> Tensor"
	toPaddedTensorSchema    = "aten::to_padded_tensor(Tensor self, float padding, int[]? output_size=None) -> Tensor"
)

func init() {
	reg := func(op, schema string, k Kernel) {
		RegisterNative(op, func(n *graph.Node) Kernel {
			if !n.Matches(schema) {
				return nil
			}
			return k
		})
	}
	reg("aten::_nested_tensor_from_mask_left_aligned", nestedLeftAlignedSchema, nestedLeftAlignedKernel)
	reg("aten::_nested_tensor_from_mask", nestedFromMaskSchema, func(p *ProcessedNode) error {
		return Errorf("nested tensors are not supported (aten::_nested_tensor_from_mask); use enable_nested_tensor=False")
	})
	reg("aten::to_padded_tensor", toPaddedTensorSchema, func(p *ProcessedNode) error {
		return Errorf("Could not run 'aten::to_padded_tensor' with arguments from the 'CPU' backend: expected a nested tensor")
	})
}

// nestedLeftAlignedKernel reports whether every row of the [N, L] mask
// is a run of true followed by false only (t is [N, L, D]), as PyTorch
// compares each row's count of true with the index of its first false.
func nestedLeftAlignedKernel(p *ProcessedNode) error {
	t, m := p.Tensor(0), p.Tensor(1)
	if t == nil || m == nil {
		return Errorf("expected tensors t and mask, got %s and %s", p.Input(0).Kind(), p.Input(1).Kind())
	}
	if m.DType() != ivalue.Bool {
		return Errorf("Expected mask to be of ScalarType Bool, but got %s instead.", m.DType().TorchName())
	}
	if m.Dim() != 2 {
		return Errorf("Padding mask should be 2D, got sizes %v", m.Sizes())
	}
	if t.Dim() != 3 {
		return Errorf("Input should be a 3D tensor, N * L * D, got sizes %v", t.Sizes())
	}
	if t.Size(0) != m.Size(0) || t.Size(1) != m.Size(1) {
		return Errorf("Mask size should match input size: input %v, mask %v", t.Sizes(), m.Sizes())
	}
	d, off, str := m.B(), m.Offset(), m.Strides()
	aligned := true
	for i := 0; i < m.Size(0) && aligned; i++ {
		seenFalse := false
		for j := 0; j < m.Size(1); j++ {
			v := d[off+i*str[0]+j*str[1]]
			if v && seenFalse {
				aligned = false
				break
			}
			seenFalse = seenFalse || !v
		}
	}
	p.SetOutput(0, ivalue.FromBool(aligned))
	return nil
}
