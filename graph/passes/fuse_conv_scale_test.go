package passes

import "testing"

func TestFuseConvScale(t *testing.T) {
	head := convHead + `  %sc : Tensor = aten::sigmoid(%b)
  %act : str = prim::Constant[value="silu"]()
`
	mul := `  %m : Tensor = aten::mul(%sc, %x)
`
	runCases(t, FuseConvScale, []passCase{
		{name: "mul then conv2d (squeeze-excitation projection)", before: head + mul + `  %r : Tensor = aten::conv2d(%m, %w, %b, %s, %s, %s, %one)
  return (%r)`, after: head + `  %r : Tensor = gosr::conv_scaled(%sc, %w, %b, %s, %s, %s, %one, %x)
  return (%r)`},
		{name: "_convolution", before: head + mul + `  %r : Tensor = aten::_convolution(%m, %w, %none, %s, %s, %s, %false, %s, %one, %false, %false, %true, %true)
  return (%r)`, after: head + `  %r : Tensor = gosr::conv_scaled(%sc, %w, %none, %s, %s, %s, %one, %x)
  return (%r)`},
		{name: "conv_act keeps its activation", before: head + mul + `  %r : Tensor = gosr::conv_act(%m, %w, %b, %s, %s, %s, %one, %act)
  return (%r)`, after: head + `  %r : Tensor = gosr::conv_act_scaled(%sc, %w, %b, %s, %s, %s, %one, %act, %x)
  return (%r)`},
		{name: "conv_add_clamp (residual)", before: head + mul + `  %r : Tensor = gosr::conv_add_clamp(%m, %w, %b, %s, %s, %s, %one, %x, %zero, %six)
  return (%r)`, after: head + `  %r : Tensor = gosr::conv_add_clamp_scaled(%sc, %w, %b, %s, %s, %s, %one, %x, %zero, %six, %x)
  return (%r)`},
		{name: "conv_clamp", before: head + mul + `  %r : Tensor = gosr::conv_clamp(%m, %w, %b, %s, %s, %s, %one, %zero, %six)
  return (%r)`, after: head + `  %r : Tensor = gosr::conv_clamp_scaled(%sc, %w, %b, %s, %s, %s, %one, %zero, %six, %x)
  return (%r)`},
		{name: "product read twice", before: head + mul + `  %r : Tensor = aten::conv2d(%m, %w, %b, %s, %s, %s, %one)
  return (%r, %m)`, after: head + mul + `  %r : Tensor = aten::conv2d(%m, %w, %b, %s, %s, %s, %one)
  return (%r, %m)`},
		{name: "product as the residual, not the input", before: head + mul + `  %r : Tensor = gosr::conv_add_clamp(%x, %w, %b, %s, %s, %s, %one, %m, %zero, %six)
  return (%r)`, after: head + mul + `  %r : Tensor = gosr::conv_add_clamp(%x, %w, %b, %s, %s, %s, %one, %m, %zero, %six)
  return (%r)`},
		{name: "grouped", before: head + `  %two : int = prim::Constant[value=2]()
` + mul + `  %r : Tensor = aten::conv2d(%m, %w, %b, %s, %s, %s, %two)
  return (%r)`, after: head + `  %two : int = prim::Constant[value=2]()
` + mul + `  %r : Tensor = aten::conv2d(%m, %w, %b, %s, %s, %s, %two)
  return (%r)`},
		{name: "mul by a scalar", before: head + `  %m : Tensor = aten::mul(%x, %f)
  %r : Tensor = aten::conv2d(%m, %w, %b, %s, %s, %s, %one)
  return (%r)`, after: head + `  %m : Tensor = aten::mul(%x, %f)
  %r : Tensor = aten::conv2d(%m, %w, %b, %s, %s, %s, %one)
  return (%r)`},
		{name: "op not in the runtime", ctx: &Context{HasOp: func(k string) bool { return k != ConvScaledKind }}, before: head + mul + `  %r : Tensor = aten::conv2d(%m, %w, %b, %s, %s, %s, %one)
  return (%r)`, after: head + mul + `  %r : Tensor = aten::conv2d(%m, %w, %b, %s, %s, %s, %one)
  return (%r)`},
	})
}
