package passes

import "testing"

func TestUseInplaceActivations(t *testing.T) {
	runCases(t, UseInplaceActivations, []passCase{
		{
			name: "conv, relu, conv, hardtanh: each activation in its input's memory",
			before: `
graph(%x : Tensor, %w : Tensor):
  %lo : float = prim::Constant[value=0.]()
  %hi : float = prim::Constant[value=6.]()
  %c : Tensor = aten::mul(%x, %w)
  %r : Tensor = aten::relu(%c)
  %d : Tensor = aten::mul(%r, %w)
  %h : Tensor = aten::hardtanh(%d, %lo, %hi)
  %o : Tensor = aten::sigmoid(%h)
  return (%o)`,
			after: `
graph(%x : Tensor, %w : Tensor):
  %lo : float = prim::Constant[value=0.]()
  %hi : float = prim::Constant[value=6.]()
  %c : Tensor = aten::mul(%x, %w)
  %r : Tensor = aten::relu_(%c)
  %d : Tensor = aten::mul(%r, %w)
  %h : Tensor = aten::hardtanh_(%d, %lo, %hi)
  %o : Tensor = aten::sigmoid(%h)
  return (%o)`,
		},
		{
			// The second relu's input is the first's result, which aliases %c:
			// left functional (it costs a tensor, not correctness).
			name: "only the first of a chain of activations",
			before: `
graph(%x : Tensor):
  %c : Tensor = aten::neg(%x)
  %r : Tensor = aten::relu(%c)
  %s : Tensor = aten::relu(%r)
  return (%s)`,
			after: `
graph(%x : Tensor):
  %c : Tensor = aten::neg(%x)
  %r : Tensor = aten::relu_(%c)
  %s : Tensor = aten::relu(%r)
  return (%s)`,
		},
		{
			name: "input read again later, a graph input, a graph output, a view, a list: unchanged",
			before: `
graph(%x : Tensor):
  %sh : int[] = prim::Constant[value=[-1]]()
  %c : Tensor = aten::neg(%x)
  %r : Tensor = aten::relu(%c)
  %m : Tensor = aten::mul(%r, %c)
  %i : Tensor = aten::relu(%x)
  %e : Tensor = aten::exp(%x)
  %o : Tensor = aten::relu(%e)
  %f : Tensor = aten::exp(%x)
  %v : Tensor = aten::view(%f, %sh)
  %rf : Tensor = aten::relu(%f)
  %g : Tensor = aten::exp(%x)
  %l : Tensor[] = prim::ListConstruct(%g)
  %rg : Tensor = aten::relu(%g)
  return (%m, %i, %o, %e, %v, %rf, %l, %rg)`,
			after: `
graph(%x : Tensor):
  %sh : int[] = prim::Constant[value=[-1]]()
  %c : Tensor = aten::neg(%x)
  %r : Tensor = aten::relu(%c)
  %m : Tensor = aten::mul(%r, %c)
  %i : Tensor = aten::relu(%x)
  %e : Tensor = aten::exp(%x)
  %o : Tensor = aten::relu(%e)
  %f : Tensor = aten::exp(%x)
  %v : Tensor = aten::view(%f, %sh)
  %rf : Tensor = aten::relu(%f)
  %g : Tensor = aten::exp(%x)
  %l : Tensor[] = prim::ListConstruct(%g)
  %rg : Tensor = aten::relu(%g)
  return (%m, %i, %o, %e, %v, %rf, %l, %rg)`,
		},
		{
			name: "a value from outside a loop body is not written in it",
			before: `
graph(%x : Tensor, %n : int):
  %t : bool = prim::Constant[value=1]()
  %c : Tensor = aten::neg(%x)
  %y : Tensor = prim::Loop(%n, %t, %x)
    block0(%i : int, %acc : Tensor):
      %r : Tensor = aten::relu(%c)
      %a : Tensor = aten::neg(%acc)
      %s : Tensor = aten::relu(%a)
      -> (%t, %s)
  return (%y)`,
			after: `
graph(%x : Tensor, %n : int):
  %t : bool = prim::Constant[value=1]()
  %c : Tensor = aten::neg(%x)
  %y : Tensor = prim::Loop(%n, %t, %x)
    block0(%i : int, %acc : Tensor):
      %r : Tensor = aten::relu(%c)
      %a : Tensor = aten::neg(%acc)
      %s : Tensor = aten::relu_(%a)
      -> (%t, %s)
  return (%y)`,
		},
	})
}
