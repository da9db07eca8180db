package passes

import "testing"

func TestRemoveSelfInput(t *testing.T) {
	runCases(t, RemoveSelfInput, []passCase{
		{
			name: "unused self is dropped",
			before: `
graph(%self : __torch__.M,
      %x : Tensor):
  %y : Tensor = aten::relu(%x)
  return (%y)`,
			after: `
graph(%x : Tensor):
  %y : Tensor = aten::relu(%x)
  return (%y)`,
		},
		{
			name: "used self is kept",
			before: `
graph(%self : __torch__.M,
      %x : Tensor):
  %w : Tensor = prim::GetAttr[name="w"](%self)
  %y : Tensor = aten::mul(%x, %w)
  return (%y)`,
			after: `
graph(%self : __torch__.M,
      %x : Tensor):
  %w : Tensor = prim::GetAttr[name="w"](%self)
  %y : Tensor = aten::mul(%x, %w)
  return (%y)`,
		},
		{
			name: "a first tensor input is not self",
			before: `
graph(%x : Tensor,
      %z : Tensor):
  return (%z)`,
			after: `
graph(%x : Tensor,
      %z : Tensor):
  return (%z)`,
		},
	})
}

func TestEliminateNoOps(t *testing.T) {
	runCases(t, EliminateNoOps, []passCase{
		{
			name: "detach and eval-mode dropout go, contiguous stays",
			before: `
graph(%x : Tensor):
  %f : bool = prim::Constant[value=0]()
  %p : float = prim::Constant[value=0.5]()
  %a : Tensor = aten::detach(%x)
  %b : Tensor = aten::dropout(%a, %p, %f)
  %c : Tensor = aten::feature_dropout(%b, %p, %f)
  %d : Tensor = aten::contiguous(%c)
  %e : Tensor = aten::relu(%d)
  return (%e)`,
			after: `
graph(%x : Tensor):
  %f : bool = prim::Constant[value=0]()
  %p : float = prim::Constant[value=0.5]()
  %d : Tensor = aten::contiguous(%x)
  %e : Tensor = aten::relu(%d)
  return (%e)`,
		},
		{
			name: "training dropout stays, p=0 goes",
			before: `
graph(%x : Tensor,
      %train : bool):
  %t : bool = prim::Constant[value=1]()
  %p : float = prim::Constant[value=0.5]()
  %z : float = prim::Constant[value=0.]()
  %a : Tensor = aten::dropout(%x, %p, %t)
  %b : Tensor = aten::dropout(%a, %p, %train)
  %c : Tensor = aten::alpha_dropout(%b, %z, %t)
  return (%c)`,
			after: `
graph(%x : Tensor,
      %train : bool):
  %t : bool = prim::Constant[value=1]()
  %p : float = prim::Constant[value=0.5]()
  %z : float = prim::Constant[value=0.]()
  %a : Tensor = aten::dropout(%x, %p, %t)
  %b : Tensor = aten::dropout(%a, %p, %train)
  return (%b)`,
		},
		{
			name: "detach inside a block",
			before: `
graph(%x : Tensor,
      %c : bool):
  %y : Tensor = prim::If(%c)
    block0():
      %a : Tensor = aten::detach(%x)
      -> (%a)
    block1():
      -> (%x)
  return (%y)`,
			after: `
graph(%x : Tensor,
      %c : bool):
  %y : Tensor = prim::If(%c)
    block0():
      -> (%x)
    block1():
      -> (%x)
  return (%y)`,
		},
	})
}
