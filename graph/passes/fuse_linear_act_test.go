package passes

import "testing"

func TestFuseLinearAct(t *testing.T) {
	head := `graph(%x : Tensor, %w : Tensor, %b : Tensor):
  %none : NoneType = prim::Constant()
  %zero : float = prim::Constant[value=0.]()
  %six : float = prim::Constant[value=6.]()
  %one : float = prim::Constant[value=1.]()
  %gn : str = prim::Constant[value="none"]()
`
	lin := `  %l : Tensor = aten::linear(%x, %w, %b)
`
	fused := func(name string) string {
		return head + `  %act : str = prim::Constant[value="` + name + `"]()
  %r : Tensor = gosr::linear_act(%x, %w, %b, %act)
  return (%r)`
	}
	runCases(t, FuseLinearAct, []passCase{
		{name: "relu (an MLP)", before: head + lin + `  %r : Tensor = aten::relu(%l)
  return (%r)`, after: fused("relu")},
		{name: "relu_ in place", before: head + lin + `  %r : Tensor = aten::relu_(%l)
  return (%r)`, after: fused("relu")},
		{name: "relu6 as hardtanh", before: head + lin + `  %r : Tensor = aten::hardtanh(%l, %zero, %six)
  return (%r)`, after: fused("relu6")},
		{name: "exact gelu (a transformer's MLP)", before: head + lin + `  %r : Tensor = aten::gelu(%l, %gn)
  return (%r)`, after: fused("gelu")},
		{name: "silu, no bias", before: head + `  %l : Tensor = aten::linear(%x, %w, %none)
  %r : Tensor = aten::silu(%l)
  return (%r)`, after: head + `  %act : str = prim::Constant[value="silu"]()
  %r : Tensor = gosr::linear_act(%x, %w, %none, %act)
  return (%r)`},
		{name: "sigmoid", before: head + lin + `  %r : Tensor = aten::sigmoid(%l)
  return (%r)`, after: fused("sigmoid")},
		{name: "hardtanh other than 0..6 stays", before: head + lin + `  %r : Tensor = aten::hardtanh(%l, %zero, %one)
  return (%r)`, after: head + lin + `  %r : Tensor = aten::hardtanh(%l, %zero, %one)
  return (%r)`},
		{name: "output read twice", before: head + lin + `  %r : Tensor = aten::relu(%l)
  return (%r, %l)`, after: head + lin + `  %r : Tensor = aten::relu(%l)
  return (%r, %l)`},
		{name: "op not in the runtime", ctx: &Context{HasOp: func(k string) bool { return k != LinearActKind }}, before: head + lin + `  %r : Tensor = aten::relu(%l)
  return (%r)`, after: head + lin + `  %r : Tensor = aten::relu(%l)
  return (%r)`},
	})
}
