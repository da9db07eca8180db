package passes

import "testing"

func TestFuseConvAct(t *testing.T) {
	head := convHead + `  %gn : str = prim::Constant[value="none"]()
  %gt : str = prim::Constant[value="tanh"]()
`
	fused := func(name string) string {
		return head + `  %act : str = prim::Constant[value="` + name + `"]()
  %r : Tensor = gosr::conv_act(%x, %w, %b, %s, %s, %s, %one, %act)
  return (%r)`
	}
	conv := `
  %c : Tensor = aten::conv2d(%x, %w, %b, %s, %s, %s, %one)
`
	runCases(t, FuseConvAct, []passCase{
		{name: "conv2d silu (efficientnet)", before: head + conv + `  %r : Tensor = aten::silu(%c)
  return (%r)`, after: fused("silu")},
		{name: "silu_ in place", before: head + conv + `  %r : Tensor = aten::silu_(%c)
  return (%r)`, after: fused("silu")},
		{name: "_convolution hardswish (mobilenet_v3)", before: head + `
  %c : Tensor = aten::_convolution(%x, %w, %none, %s, %s, %s, %false, %s, %one, %false, %false, %true, %true)
  %r : Tensor = aten::hardswish(%c)
  return (%r)`, after: head + `  %act : str = prim::Constant[value="hardswish"]()
  %r : Tensor = gosr::conv_act(%x, %w, %none, %s, %s, %s, %one, %act)
  return (%r)`},
		{name: "sigmoid (squeeze-excitation)", before: head + conv + `  %r : Tensor = aten::sigmoid(%c)
  return (%r)`, after: fused("sigmoid")},
		{name: "hardsigmoid", before: head + conv + `  %r : Tensor = aten::hardsigmoid_(%c)
  return (%r)`, after: fused("hardsigmoid")},
		{name: "exact gelu", before: head + conv + `  %r : Tensor = aten::gelu(%c, %gn)
  return (%r)`, after: fused("gelu")},
		{name: "tanh gelu stays", before: head + conv + `  %r : Tensor = aten::gelu(%c, %gt)
  return (%r)`, after: head + conv + `  %r : Tensor = aten::gelu(%c, %gt)
  return (%r)`},
		{name: "conv output read twice", before: head + conv + `  %r : Tensor = aten::silu(%c)
  return (%r, %c)`, after: head + conv + `  %r : Tensor = aten::silu(%c)
  return (%r, %c)`},
		{name: "transposed", before: head + `
  %c : Tensor = aten::_convolution(%x, %w, %none, %s, %s, %s, %true, %s, %one, %false, %false, %true, %true)
  %r : Tensor = aten::silu(%c)
  return (%r)`, after: head + `
  %c : Tensor = aten::_convolution(%x, %w, %none, %s, %s, %s, %true, %s, %one, %false, %false, %true, %true)
  %r : Tensor = aten::silu(%c)
  return (%r)`},
		{name: "op not in the runtime", ctx: &Context{HasOp: func(k string) bool { return k != ConvActKind }}, before: head + conv + `  %r : Tensor = aten::silu(%c)
  return (%r)`, after: head + conv + `  %r : Tensor = aten::silu(%c)
  return (%r)`},
	})
}
