package passes

import "testing"

func TestDeadCodeElimination(t *testing.T) {
	runCases(t, DeadCodeElimination, []passCase{
		{
			name: "unused pure nodes and constants go",
			before: `
graph(%x : Tensor):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::relu(%x)
  %b : Tensor = aten::add(%a, %a, %one)
  %c : Tensor = aten::sigmoid(%x)
  return (%c)`,
			after: `
graph(%x : Tensor):
  %c : Tensor = aten::sigmoid(%x)
  return (%c)`,
		},
		{
			name: "side effects stay",
			before: `
graph(%x : Tensor):
  %msg : str = prim::Constant[value="boom"]()
  %n : NoneType = prim::Constant()
  %w : int = prim::Constant[value=2]()
   = aten::warn(%msg, %w)
   = prim::Print(%x)
  return (%n)`,
			after: `
graph(%x : Tensor):
  %msg : str = prim::Constant[value="boom"]()
  %n : NoneType = prim::Constant()
  %w : int = prim::Constant[value=2]()
   = aten::warn(%msg, %w)
   = prim::Print(%x)
  return (%n)`,
		},
		{
			name: "mutation of a live value stays, of a dead one goes",
			before: `
graph(%x : Tensor):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::relu(%x)
  %v : Tensor = aten::view(%a, %one)
  %b : Tensor = aten::add_(%v, %one, %one)
  %d : Tensor = aten::exp(%x)
  %e : Tensor = aten::mul_(%d, %one)
  return (%a)`,
			after: `
graph(%x : Tensor):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::relu(%x)
  %v : Tensor = aten::view(%a, %one)
  %b : Tensor = aten::add_(%v, %one, %one)
  return (%a)`,
		},
		{
			name: "writes to a graph input and list appends that are read stay",
			before: `
graph(%x : Tensor):
  %one : int = prim::Constant[value=1]()
  %b : Tensor = aten::add_(%x, %one, %one)
  %l : Tensor[] = prim::ListConstruct()
  %r : Tensor = aten::relu(%x)
  %l2 : Tensor[] = aten::append(%l, %r)
  %c : Tensor = aten::cat(%l, %one)
  %m : Tensor[] = prim::ListConstruct()
  %m2 : Tensor[] = aten::append(%m, %r)
  return (%c)`,
			after: `
graph(%x : Tensor):
  %one : int = prim::Constant[value=1]()
  %b : Tensor = aten::add_(%x, %one, %one)
  %l : Tensor[] = prim::ListConstruct()
  %r : Tensor = aten::relu(%x)
  %l2 : Tensor[] = aten::append(%l, %r)
  %c : Tensor = aten::cat(%l, %one)
  return (%c)`,
		},
		{
			name: "unused if outputs and their block returns go",
			before: `
graph(%x : Tensor,
      %c : bool):
  %y : Tensor, %z : Tensor = prim::If(%c)
    block0():
      %a : Tensor = aten::relu(%x)
      %b : Tensor = aten::exp(%x)
      -> (%a, %b)
    block1():
      %d : Tensor = aten::neg(%x)
      -> (%x, %d)
  return (%y)`,
			after: `
graph(%x : Tensor,
      %c : bool):
  %y : Tensor = prim::If(%c)
    block0():
      %a : Tensor = aten::relu(%x)
      -> (%a)
    block1():
      -> (%x)
  return (%y)`,
		},
		{
			name: "an if with no used output and no effects goes; one with an effect stays",
			before: `
graph(%x : Tensor,
      %c : bool):
  %y : Tensor = prim::If(%c)
    block0():
      %a : Tensor = aten::relu(%x)
      -> (%a)
    block1():
      -> (%x)
  %z : Tensor = prim::If(%c)
    block0():
      %b : Tensor = aten::exp(%x)
       = prim::Print(%b)
      -> (%b)
    block1():
      -> (%x)
  return (%x)`,
			after: `
graph(%x : Tensor,
      %c : bool):
   = prim::If(%c)
    block0():
      %b : Tensor = aten::exp(%x)
       = prim::Print(%b)
      -> ()
    block1():
      -> ()
  return (%x)`,
		},
		{
			name: "loop body results that are carried stay",
			before: `
graph(%x : Tensor):
  %n : int = prim::Constant[value=3]()
  %t : bool = prim::Constant[value=1]()
  %dead : Tensor = prim::Loop(%n, %t, %x)
    block0(%i : int, %y.1 : Tensor):
      %y.2 : Tensor = aten::relu(%y.1)
      -> (%t, %y.2)
  %out : Tensor = prim::Loop(%n, %t, %x)
    block0(%j : int, %w.1 : Tensor):
      %w.2 : Tensor = aten::exp(%w.1)
      %unused : Tensor = aten::neg(%w.1)
      -> (%t, %w.2)
  return (%out)`,
			after: `
graph(%x : Tensor):
  %n : int = prim::Constant[value=3]()
  %t : bool = prim::Constant[value=1]()
  %out : Tensor = prim::Loop(%n, %t, %x)
    block0(%j : int, %w.1 : Tensor):
      %w.2 : Tensor = aten::exp(%w.1)
      -> (%t, %w.2)
  return (%out)`,
		},
		{
			name: "unknown ops are kept",
			before: `
graph(%x : Tensor):
  %a : Tensor = mylib::log_it(%x)
  return (%x)`,
			after: `
graph(%x : Tensor):
  %a : Tensor = mylib::log_it(%x)
  return (%x)`,
		},
	})
}
