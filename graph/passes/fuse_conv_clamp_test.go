package passes

import (
	"testing"
)

// convHead is the start of the graphs below: an input, constant weight
// and lists, a conv2d feeding %c.
const convHead = `graph(%x : Tensor, %w : Tensor, %b : Tensor, %f : float):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %zero : float = prim::Constant[value=0.]()
  %six : float = prim::Constant[value=6.]()
  %false : bool = prim::Constant[value=0]()
  %true : bool = prim::Constant[value=1]()
  %s : int[] = prim::ListConstruct(%one, %one)
`

func TestFuseConvClamp(t *testing.T) {
	runCases(t, FuseConvClamp, []passCase{
		{name: "conv2d relu", before: convHead + `
  %c : Tensor = aten::conv2d(%x, %w, %b, %s, %s, %s, %one)
  %r : Tensor = aten::relu(%c)
  return (%r)`, after: convHead + `
  %lo : float = prim::Constant[value=0.]()
  %hi : float = prim::Constant[value=inf]()
  %r : Tensor = gosr::conv_clamp(%x, %w, %b, %s, %s, %s, %one, %lo, %hi)
  return (%r)`},
		{name: "_convolution relu6 in place", before: convHead + `
  %c : Tensor = aten::_convolution(%x, %w, %none, %s, %s, %s, %false, %s, %one, %false, %false, %true, %true)
  %r : Tensor = aten::hardtanh_(%c, %zero, %six)
  return (%r)`, after: convHead + `
  %lo : float = prim::Constant[value=0.]()
  %hi : float = prim::Constant[value=6.]()
  %r : Tensor = gosr::conv_clamp(%x, %w, %none, %s, %s, %s, %one, %lo, %hi)
  return (%r)`},
		{name: "conv output read twice", before: convHead + `
  %c : Tensor = aten::conv2d(%x, %w, %b, %s, %s, %s, %one)
  %r : Tensor = aten::relu(%c)
  return (%r, %c)`, after: convHead + `
  %c : Tensor = aten::conv2d(%x, %w, %b, %s, %s, %s, %one)
  %r : Tensor = aten::relu(%c)
  return (%r, %c)`},
		{name: "transposed", before: convHead + `
  %c : Tensor = aten::_convolution(%x, %w, %none, %s, %s, %s, %true, %s, %one, %false, %false, %true, %true)
  %r : Tensor = aten::relu(%c)
  return (%r)`, after: convHead + `
  %c : Tensor = aten::_convolution(%x, %w, %none, %s, %s, %s, %true, %s, %one, %false, %false, %true, %true)
  %r : Tensor = aten::relu(%c)
  return (%r)`},
		{name: "bounds not constant", before: convHead + `
  %c : Tensor = aten::conv2d(%x, %w, %b, %s, %s, %s, %one)
  %r : Tensor = aten::hardtanh(%c, %zero, %f)
  return (%r)`, after: convHead + `
  %c : Tensor = aten::conv2d(%x, %w, %b, %s, %s, %s, %one)
  %r : Tensor = aten::hardtanh(%c, %zero, %f)
  return (%r)`},
		{name: "clamp min above max", before: convHead + `
  %c : Tensor = aten::conv2d(%x, %w, %b, %s, %s, %s, %one)
  %r : Tensor = aten::clamp(%c, %six, %zero)
  return (%r)`, after: convHead + `
  %c : Tensor = aten::conv2d(%x, %w, %b, %s, %s, %s, %one)
  %r : Tensor = aten::clamp(%c, %six, %zero)
  return (%r)`},
		{name: "not an activation", before: convHead + `
  %c : Tensor = aten::conv2d(%x, %w, %b, %s, %s, %s, %one)
  %r : Tensor = aten::sigmoid(%c)
  return (%r)`, after: convHead + `
  %c : Tensor = aten::conv2d(%x, %w, %b, %s, %s, %s, %one)
  %r : Tensor = aten::sigmoid(%c)
  return (%r)`},
		{name: "op not in the runtime", ctx: &Context{HasOp: func(k string) bool { return k != ConvClampKind }}, before: convHead + `
  %c : Tensor = aten::conv2d(%x, %w, %b, %s, %s, %s, %one)
  %r : Tensor = aten::relu(%c)
  return (%r)`, after: convHead + `
  %c : Tensor = aten::conv2d(%x, %w, %b, %s, %s, %s, %one)
  %r : Tensor = aten::relu(%c)
  return (%r)`},
	})
}
