package passes

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// intEval evaluates integer add and mul, and fails on anything else, so
// the tests do not depend on which kernels exist.
func intEval(n *graph.Node, in []ivalue.IValue) ([]ivalue.IValue, error) {
	if len(in) != 2 || in[0].Kind() != ivalue.KindInt || in[1].Kind() != ivalue.KindInt {
		return nil, fmt.Errorf("intEval: %s not supported", n.Kind)
	}
	switch n.Kind {
	case "aten::add":
		return []ivalue.IValue{ivalue.FromInt(in[0].Int() + in[1].Int())}, nil
	case "aten::mul":
		return []ivalue.IValue{ivalue.FromInt(in[0].Int() * in[1].Int())}, nil
	}
	return nil, fmt.Errorf("intEval: %s not supported", n.Kind)
}

func TestConstantPropagation(t *testing.T) {
	ctx := &Context{Eval: intEval}
	runCases(t, ConstantPropagation, []passCase{
		{
			name: "chains of constant scalar ops fold",
			ctx:  ctx,
			before: `
graph(%x : Tensor):
  %a : int = prim::Constant[value=2]()
  %b : int = prim::Constant[value=3]()
  %c : int = aten::add(%a, %b)
  %d : int = aten::mul(%c, %c)
  %e : int[] = prim::ListConstruct(%d, %a)
  %y : Tensor = aten::view(%x, %e)
  return (%y)`,
			after: `
graph(%x : Tensor):
  %e : int[] = prim::Constant[value=[25, 2]]()
  %y : Tensor = aten::view(%x, %e)
  return (%y)`,
		},
		{
			name: "non-constant inputs, failed evaluation and side effects are left alone",
			ctx:  ctx,
			before: `
graph(%x : Tensor,
      %i : int):
  %a : int = prim::Constant[value=2]()
  %c : int = aten::add(%a, %i)
  %d : int = aten::sub(%a, %a)
  %msg : str = prim::Constant[value="x"]()
   = prim::Print(%msg)
  return (%c, %d)`,
			after: `
graph(%x : Tensor,
      %i : int):
  %a : int = prim::Constant[value=2]()
  %c : int = aten::add(%a, %i)
  %d : int = aten::sub(%a, %a)
  %msg : str = prim::Constant[value="x"]()
   = prim::Print(%msg)
  return (%c, %d)`,
		},
		{
			name: "a list that is appended to is not folded",
			ctx:  ctx,
			before: `
graph(%x : int):
  %a : int = prim::Constant[value=2]()
  %l : int[] = prim::ListConstruct(%a)
  %l2 : int[] = aten::append(%l, %x)
  return (%l)`,
			after: `
graph(%x : int):
  %a : int = prim::Constant[value=2]()
  %l : int[] = prim::ListConstruct(%a)
  %l2 : int[] = aten::append(%l, %x)
  return (%l)`,
		},
		{
			name: "tuple construct, index and unpack of constants fold",
			ctx:  ctx,
			before: `
graph(%x : Tensor):
  %a : int = prim::Constant[value=2]()
  %b : float = prim::Constant[value=1.5]()
  %one : int = prim::Constant[value=1]()
  %t : (int, float) = prim::TupleConstruct(%a, %b)
  %f : float = prim::TupleIndex(%t, %one)
  %u : int, %v : float = prim::TupleUnpack(%t)
  return (%f, %u)`,
			after: `
graph(%x : Tensor):
  %f : float = prim::Constant[value=1.5]()
  %u : int = prim::Constant[value=2]()
  return (%f, %u)`,
		},
		{
			name: "if with a constant condition is inlined, and folding goes on inside",
			ctx:  ctx,
			before: `
graph(%x : Tensor):
  %t : bool = prim::Constant[value=1]()
  %a : int = prim::Constant[value=2]()
  %y : Tensor, %k : int = prim::If(%t)
    block0():
      %r : Tensor = aten::relu(%x)
      %s : int = aten::mul(%a, %a)
      -> (%r, %s)
    block1():
      -> (%x, %a)
  %z : int = aten::add(%k, %a)
  return (%y, %z)`,
			after: `
graph(%x : Tensor):
  %r : Tensor = aten::relu(%x)
  %z : int = prim::Constant[value=6]()
  return (%r, %z)`,
		},
		{
			name: "false branch of a nested if",
			ctx:  ctx,
			before: `
graph(%x : Tensor,
      %c : bool):
  %f : bool = prim::Constant[value=0]()
  %y : Tensor = prim::If(%c)
    block0():
      %w : Tensor = prim::If(%f)
        block0():
          %r : Tensor = aten::relu(%x)
          -> (%r)
        block1():
          %e : Tensor = aten::exp(%x)
          -> (%e)
      -> (%w)
    block1():
      -> (%x)
  return (%y)`,
			after: `
graph(%x : Tensor,
      %c : bool):
  %y : Tensor = prim::If(%c)
    block0():
      %e : Tensor = aten::exp(%x)
      -> (%e)
    block1():
      -> (%x)
  return (%y)`,
		},
		{
			name: "random ops are not folded",
			ctx:  &Context{Eval: func(n *graph.Node, in []ivalue.IValue) ([]ivalue.IValue, error) { panic("must not evaluate " + n.Kind) }},
			before: `
graph(%x : Tensor):
  %s : int[] = prim::Constant[value=[2]]()
  %n : NoneType = prim::Constant()
  %r : Tensor = aten::rand(%s, %n, %n, %n, %n)
  return (%r)`,
			after: `
graph(%x : Tensor):
  %s : int[] = prim::Constant[value=[2]]()
  %n : NoneType = prim::Constant()
  %r : Tensor = aten::rand(%s, %n, %n, %n, %n)
  return (%r)`,
		},
	})
}

// Without an evaluator only the folds that need no kernel happen: a
// constant condition still picks its branch, an add of constants stays.
func TestConstantPropagationWithoutEval(t *testing.T) {
	g := parse(t, `
graph(%x : Tensor):
  %a : int = prim::Constant[value=2]()
  %t : bool = prim::Constant[value=1]()
  %s : int = aten::add(%a, %a)
  %y : Tensor = prim::If(%t)
    block0():
      %r : Tensor = aten::relu(%x)
      -> (%r)
    block1():
      -> (%x)
  %z : Tensor = aten::mul(%y, %s)
  return (%z)`)
	require.NoError(t, ConstantPropagation(g, &Context{}))
	require.NoError(t, Verify(g))
	text := g.String()
	assert.NotContains(t, text, "prim::If")
	assert.Contains(t, text, "aten::relu")
	assert.Contains(t, text, "aten::add")
}

// unchecked_cast(None) to Tensor sits on paths that never run; folding it
// would make a None constant of type Tensor, an invalid graph.
func TestConstantPropagationKeepsCastOfNone(t *testing.T) {
	g, err := graph.Parse(`graph(%x : Tensor, %c : bool):
  %n : NoneType = prim::Constant()
  %y : Tensor = prim::If(%c)
    block0():
      %b : Tensor = prim::unchecked_cast(%n)
      -> (%b)
    block1():
      -> (%x)
  return (%y)
`, nil)
	require.NoError(t, err)
	require.NoError(t, ConstantPropagation(g, &Context{}))
	require.NoError(t, Verify(g))
	assert.Contains(t, g.String(), "prim::unchecked_cast")
}
