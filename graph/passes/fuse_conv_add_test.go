package passes

import (
	"testing"
)

func TestFuseConvAdd(t *testing.T) {
	head := convHead + `  %y : Tensor = aten::mul(%x, %f)
`
	runCases(t, FuseConvAdd, []passCase{
		{name: "conv add relu (resnet)", before: head + `
  %c : Tensor = aten::conv2d(%x, %w, %b, %s, %s, %s, %one)
  %a : Tensor = aten::add(%c, %y, %one)
  %r : Tensor = aten::relu_(%a)
  return (%r)`, after: head + `
  %lo : float = prim::Constant[value=0.]()
  %hi : float = prim::Constant[value=inf]()
  %r : Tensor = gosr::conv_add_clamp(%x, %w, %b, %s, %s, %s, %one, %y, %lo, %hi)
  return (%r)`},
		{name: "other + conv, no activation (inverted residual)", before: head + `
  %c : Tensor = aten::_convolution(%x, %w, %none, %s, %s, %s, %false, %s, %one, %false, %false, %true, %true)
  %a : Tensor = aten::add(%y, %c, %one)
  return (%a)`, after: head + `
  %lo : float = prim::Constant[value=-inf]()
  %hi : float = prim::Constant[value=inf]()
  %a : Tensor = gosr::conv_add_clamp(%x, %w, %none, %s, %s, %s, %one, %y, %lo, %hi)
  return (%a)`},
		{name: "add_ into the convolution, relu6", before: head + `
  %c : Tensor = aten::conv2d(%x, %w, %b, %s, %s, %s, %one)
  %a : Tensor = aten::add_(%c, %y, %one)
  %r : Tensor = aten::hardtanh(%a, %zero, %six)
  return (%r)`, after: head + `
  %lo : float = prim::Constant[value=0.]()
  %hi : float = prim::Constant[value=6.]()
  %r : Tensor = gosr::conv_add_clamp(%x, %w, %b, %s, %s, %s, %one, %y, %lo, %hi)
  return (%r)`},
		{name: "add_ into the other operand", before: head + `
  %c : Tensor = aten::conv2d(%x, %w, %b, %s, %s, %s, %one)
  %a : Tensor = aten::add_(%y, %c, %one)
  return (%a)`, after: head + `
  %c : Tensor = aten::conv2d(%x, %w, %b, %s, %s, %s, %one)
  %a : Tensor = aten::add_(%y, %c, %one)
  return (%a)`},
		{name: "sum read twice: the activation stays", before: head + `
  %c : Tensor = aten::conv2d(%x, %w, %b, %s, %s, %s, %one)
  %a : Tensor = aten::add(%c, %y, %one)
  %r : Tensor = aten::relu(%a)
  return (%r, %a)`, after: head + `
  %lo : float = prim::Constant[value=-inf]()
  %hi : float = prim::Constant[value=inf]()
  %a : Tensor = gosr::conv_add_clamp(%x, %w, %b, %s, %s, %s, %one, %y, %lo, %hi)
  %r : Tensor = aten::relu(%a)
  return (%r, %a)`},
		{name: "conv output read twice", before: head + `
  %c : Tensor = aten::conv2d(%x, %w, %b, %s, %s, %s, %one)
  %a : Tensor = aten::add(%c, %y, %one)
  return (%a, %c)`, after: head + `
  %c : Tensor = aten::conv2d(%x, %w, %b, %s, %s, %s, %one)
  %a : Tensor = aten::add(%c, %y, %one)
  return (%a, %c)`},
		{name: "alpha not 1", before: head + `
  %two : int = prim::Constant[value=2]()
  %c : Tensor = aten::conv2d(%x, %w, %b, %s, %s, %s, %one)
  %a : Tensor = aten::add(%c, %y, %two)
  return (%a)`, after: head + `
  %two : int = prim::Constant[value=2]()
  %c : Tensor = aten::conv2d(%x, %w, %b, %s, %s, %s, %one)
  %a : Tensor = aten::add(%c, %y, %two)
  return (%a)`},
		{name: "transposed", before: head + `
  %c : Tensor = aten::_convolution(%x, %w, %none, %s, %s, %s, %true, %s, %one, %false, %false, %true, %true)
  %a : Tensor = aten::add(%c, %y, %one)
  return (%a)`, after: head + `
  %c : Tensor = aten::_convolution(%x, %w, %none, %s, %s, %s, %true, %s, %one, %false, %false, %true, %true)
  %a : Tensor = aten::add(%c, %y, %one)
  return (%a)`},
		{name: "op not in the runtime", ctx: &Context{HasOp: func(k string) bool { return k != ConvAddClampKind }}, before: head + `
  %c : Tensor = aten::conv2d(%x, %w, %b, %s, %s, %s, %one)
  %a : Tensor = aten::add(%c, %y, %one)
  return (%a)`, after: head + `
  %c : Tensor = aten::conv2d(%x, %w, %b, %s, %s, %s, %one)
  %a : Tensor = aten::add(%c, %y, %one)
  return (%a)`},
	})
}
