package passes

import "testing"

func TestUseVariadicCat(t *testing.T) {
	runCases(t, UseVariadicCat, []passCase{
		{
			name: "cat of a list construct becomes VarConcat",
			before: `
graph(%x : Tensor,
      %y : Tensor):
  %d : int = prim::Constant[value=1]()
  %l : Tensor[] = prim::ListConstruct(%x, %y, %x)
  %c : Tensor = aten::cat(%l, %d)
  return (%c)`,
			after: `
graph(%x : Tensor,
      %y : Tensor):
  %d : int = prim::Constant[value=1]()
  %c : Tensor = prim::VarConcat(%x, %y, %x, %d)
  return (%c)`,
		},
		{
			name: "a list with other uses stays for them",
			before: `
graph(%x : Tensor,
      %y : Tensor):
  %d : int = prim::Constant[value=0]()
  %l : Tensor[] = prim::ListConstruct(%x, %y)
  %c : Tensor = aten::cat(%l, %d)
  return (%c, %l)`,
			after: `
graph(%x : Tensor,
      %y : Tensor):
  %d : int = prim::Constant[value=0]()
  %l : Tensor[] = prim::ListConstruct(%x, %y)
  %c : Tensor = prim::VarConcat(%x, %y, %d)
  return (%c, %l)`,
		},
		{
			name: "a mutated list or a list from elsewhere is left alone",
			before: `
graph(%x : Tensor,
      %ls : Tensor[]):
  %d : int = prim::Constant[value=0]()
  %l : Tensor[] = prim::ListConstruct(%x)
  %l2 : Tensor[] = aten::append(%l, %x)
  %c : Tensor = aten::cat(%l, %d)
  %e : Tensor = aten::cat(%ls, %d)
  return (%c, %e)`,
			after: `
graph(%x : Tensor,
      %ls : Tensor[]):
  %d : int = prim::Constant[value=0]()
  %l : Tensor[] = prim::ListConstruct(%x)
  %l2 : Tensor[] = aten::append(%l, %x)
  %c : Tensor = aten::cat(%l, %d)
  %e : Tensor = aten::cat(%ls, %d)
  return (%c, %e)`,
		},
		{
			name: "inside a loop body",
			before: `
graph(%x : Tensor):
  %n : int = prim::Constant[value=2]()
  %t : bool = prim::Constant[value=1]()
  %d : int = prim::Constant[value=0]()
  %o : Tensor = prim::Loop(%n, %t, %x)
    block0(%i : int, %a : Tensor):
      %l : Tensor[] = prim::ListConstruct(%a, %x)
      %c : Tensor = aten::cat(%l, %d)
      -> (%t, %c)
  return (%o)`,
			after: `
graph(%x : Tensor):
  %n : int = prim::Constant[value=2]()
  %t : bool = prim::Constant[value=1]()
  %d : int = prim::Constant[value=0]()
  %o : Tensor = prim::Loop(%n, %t, %x)
    block0(%i : int, %a : Tensor):
      %c : Tensor = prim::VarConcat(%a, %x, %d)
      -> (%t, %c)
  return (%o)`,
		},
	})
}

func TestUseVariadicStack(t *testing.T) {
	runCases(t, UseVariadicStack, []passCase{
		{
			name: "stack of a list construct becomes VarStack; cat is untouched",
			before: `
graph(%x : Tensor,
      %y : Tensor):
  %d : int = prim::Constant[value=0]()
  %l : Tensor[] = prim::ListConstruct(%x, %y)
  %s : Tensor = aten::stack(%l, %d)
  %m : Tensor[] = prim::ListConstruct(%x, %y)
  %c : Tensor = aten::cat(%m, %d)
  return (%s, %c)`,
			after: `
graph(%x : Tensor,
      %y : Tensor):
  %d : int = prim::Constant[value=0]()
  %s : Tensor = prim::VarStack(%x, %y, %d)
  %m : Tensor[] = prim::ListConstruct(%x, %y)
  %c : Tensor = aten::cat(%m, %d)
  return (%s, %c)`,
		},
	})
}

func TestReplaceWithCopy(t *testing.T) {
	on := &Context{EnableOutVariant: true, HasOp: func(string) bool { return true }}
	runCases(t, ReplaceWithCopy, []passCase{
		{
			name: "views feeding compute become copies",
			ctx:  on,
			before: `
graph(%x : Tensor):
  %s : int[] = prim::Constant[value=[-1]]()
  %p : int[] = prim::Constant[value=[1, 0]]()
  %z : int = prim::Constant[value=0]()
  %o : int = prim::Constant[value=1]()
  %r : Tensor = aten::reshape(%x, %s)
  %q : Tensor = aten::permute(%x, %p)
  %f : Tensor = aten::flatten(%x, %z, %o)
  %n : Tensor = aten::narrow(%x, %z, %z, %o)
  %v : Tensor = aten::view(%x, %s)
  %a : Tensor = aten::add(%r, %q, %o)
  %b : Tensor = aten::add(%f, %n, %o)
  %c : Tensor = aten::add(%a, %v, %o)
  return (%b, %c)`,
			after: `
graph(%x : Tensor):
  %s : int[] = prim::Constant[value=[-1]]()
  %p : int[] = prim::Constant[value=[1, 0]]()
  %z : int = prim::Constant[value=0]()
  %o : int = prim::Constant[value=1]()
  %r : Tensor = static_runtime::reshape_copy(%x, %s)
  %q : Tensor = static_runtime::permute_copy(%x, %p)
  %f : Tensor = static_runtime::flatten_copy(%x, %z, %o)
  %n : Tensor = aten::narrow_copy(%x, %z, %z, %o)
  %v : Tensor = aten::view(%x, %s)
  %a : Tensor = aten::add(%r, %q, %o)
  %b : Tensor = aten::add(%f, %n, %o)
  %c : Tensor = aten::add(%a, %v, %o)
  return (%b, %c)`,
		},
		{
			name: "written inputs or outputs and returned views stay views",
			ctx:  on,
			before: `
graph(%x : Tensor):
  %s : int[] = prim::Constant[value=[-1]]()
  %o : int = prim::Constant[value=1]()
  %a : Tensor = aten::relu(%x)
  %r : Tensor = aten::reshape(%a, %s)
  %w : Tensor = aten::add_(%a, %o, %o)
  %b : Tensor = aten::exp(%x)
  %r2 : Tensor = aten::reshape(%b, %s)
  %w2 : Tensor = aten::mul_(%r2, %o)
  %c : Tensor = aten::neg(%x)
  %r3 : Tensor = aten::reshape(%c, %s)
  %t : (Tensor, Tensor) = prim::TupleConstruct(%r, %r3)
  return (%t, %w2)`,
			after: `
graph(%x : Tensor):
  %s : int[] = prim::Constant[value=[-1]]()
  %o : int = prim::Constant[value=1]()
  %a : Tensor = aten::relu(%x)
  %r : Tensor = aten::reshape(%a, %s)
  %w : Tensor = aten::add_(%a, %o, %o)
  %b : Tensor = aten::exp(%x)
  %r2 : Tensor = aten::reshape(%b, %s)
  %w2 : Tensor = aten::mul_(%r2, %o)
  %c : Tensor = aten::neg(%x)
  %r3 : Tensor = aten::reshape(%c, %s)
  %t : (Tensor, Tensor) = prim::TupleConstruct(%r, %r3)
  return (%t, %w2)`,
		},
		{
			name: "nothing without HasOp: no copy kernel is known",
			ctx:  &Context{EnableOutVariant: true},
			before: `
graph(%x : Tensor):
  %s : int[] = prim::Constant[value=[-1]]()
  %r : Tensor = aten::reshape(%x, %s)
  %y : Tensor = aten::relu(%r)
  return (%y)`,
			after: `
graph(%x : Tensor):
  %s : int[] = prim::Constant[value=[-1]]()
  %r : Tensor = aten::reshape(%x, %s)
  %y : Tensor = aten::relu(%r)
  return (%y)`,
		},
		{
			name: "nothing without out variants or without the copy kernel",
			ctx:  &Context{EnableOutVariant: false, HasOp: func(string) bool { return true }},
			before: `
graph(%x : Tensor):
  %s : int[] = prim::Constant[value=[-1]]()
  %r : Tensor = aten::reshape(%x, %s)
  %y : Tensor = aten::relu(%r)
  return (%y)`,
			after: `
graph(%x : Tensor):
  %s : int[] = prim::Constant[value=[-1]]()
  %r : Tensor = aten::reshape(%x, %s)
  %y : Tensor = aten::relu(%r)
  return (%y)`,
		},
		{
			name: "copy op not registered",
			ctx:  &Context{EnableOutVariant: true, HasOp: func(k string) bool { return k != "static_runtime::reshape_copy" }},
			before: `
graph(%x : Tensor):
  %s : int[] = prim::Constant[value=[-1]]()
  %r : Tensor = aten::reshape(%x, %s)
  %y : Tensor = aten::relu(%r)
  return (%y)`,
			after: `
graph(%x : Tensor):
  %s : int[] = prim::Constant[value=[-1]]()
  %r : Tensor = aten::reshape(%x, %s)
  %y : Tensor = aten::relu(%r)
  return (%y)`,
		},
	})
}
