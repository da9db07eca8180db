package passes

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/internal/hostile/gen"
)

func TestRemoveMutation(t *testing.T) {
	runCases(t, RemoveMutation, []passCase{
		{
			name: "conv, batch_norm, relu_, add_, relu_ as torchvision's resnet",
			before: `
graph(%x : Tensor,
      %w : Tensor):
  %n : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %c : Tensor = aten::mul(%x, %w)
  %r : Tensor = aten::relu_(%c)
  %d : Tensor = aten::mul(%r, %w)
  %s : Tensor = aten::add_(%d, %x, %one)
  %o : Tensor = aten::relu_(%s)
  return (%o)`,
			after: `
graph(%x : Tensor,
      %w : Tensor):
  %n : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %c : Tensor = aten::mul(%x, %w)
  %r : Tensor = aten::relu(%c)
  %d : Tensor = aten::mul(%r, %w)
  %s : Tensor = aten::add(%d, %x, %one)
  %o : Tensor = aten::relu(%s)
  return (%o)`,
		},
		{
			name: "later uses of the mutated value read the result, earlier ones the old value",
			before: `
graph(%x : Tensor):
  %lo : float = prim::Constant[value=0.]()
  %hi : float = prim::Constant[value=6.]()
  %c : Tensor = aten::neg(%x)
  %early : Tensor = aten::sigmoid(%c)
  %h : Tensor = aten::hardtanh_(%c, %lo, %hi)
  %late : Tensor = aten::mul(%c, %early)
  return (%late, %c)`,
			after: `
graph(%x : Tensor):
  %lo : float = prim::Constant[value=0.]()
  %hi : float = prim::Constant[value=6.]()
  %c : Tensor = aten::neg(%x)
  %early : Tensor = aten::sigmoid(%c)
  %h : Tensor = aten::hardtanh(%c, %lo, %hi)
  %late : Tensor = aten::mul(%h, %early)
  return (%late, %h)`,
		},
		{
			name: "uses inside later blocks are renamed",
			before: `
graph(%x : Tensor,
      %b : bool):
  %c : Tensor = aten::neg(%x)
  %r : Tensor = aten::relu_(%c)
  %y : Tensor = prim::If(%b)
    block0():
      %e : Tensor = aten::exp(%c)
      -> (%e)
    block1():
      -> (%c)
  return (%y)`,
			after: `
graph(%x : Tensor,
      %b : bool):
  %c : Tensor = aten::neg(%x)
  %r : Tensor = aten::relu(%c)
  %y : Tensor = prim::If(%b)
    block0():
      %e : Tensor = aten::exp(%r)
      -> (%e)
    block1():
      -> (%r)
  return (%y)`,
		},
		{
			name: "chained in-place ops on one value all go",
			before: `
graph(%x : Tensor):
  %two : float = prim::Constant[value=2.]()
  %c : Tensor = aten::neg(%x)
  %a : Tensor = aten::mul_(%c, %two)
  %b : Tensor = aten::relu_(%c)
  return (%c)`,
			after: `
graph(%x : Tensor):
  %two : float = prim::Constant[value=2.]()
  %c : Tensor = aten::neg(%x)
  %a : Tensor = aten::mul(%c, %two)
  %b : Tensor = aten::relu(%a)
  return (%b)`,
		},
		{
			name: "zero_ and fill_ become zeros_like and full_like",
			before: `
graph(%x : Tensor):
  %v : float = prim::Constant[value=3.]()
  %c : Tensor = aten::neg(%x)
  %z : Tensor = aten::zero_(%c)
  %d : Tensor = aten::neg(%x)
  %f : Tensor = aten::fill_(%d, %v)
  return (%z, %f)`,
			after: `
graph(%x : Tensor):
  %v : float = prim::Constant[value=3.]()
  %c : Tensor = aten::neg(%x)
  %n1 : NoneType = prim::Constant()
  %n2 : NoneType = prim::Constant()
  %n3 : NoneType = prim::Constant()
  %n4 : NoneType = prim::Constant()
  %n5 : NoneType = prim::Constant()
  %z : Tensor = aten::zeros_like(%c, %n1, %n2, %n3, %n4, %n5)
  %d : Tensor = aten::neg(%x)
  %m1 : NoneType = prim::Constant()
  %m2 : NoneType = prim::Constant()
  %m3 : NoneType = prim::Constant()
  %m4 : NoneType = prim::Constant()
  %m5 : NoneType = prim::Constant()
  %f : Tensor = aten::full_like(%d, %v, %m1, %m2, %m3, %m4, %m5)
  return (%z, %f)`,
		},
		{
			name: "without HasOp no functional op is known: all kept",
			ctx:  &Context{FunctionalOf: func(k string) string { return fakeFunctional[k] }},
			before: `
graph(%x : Tensor):
  %c : Tensor = aten::neg(%x)
  %r : Tensor = aten::relu_(%c)
  %z : Tensor = aten::zero_(%r)
  return (%z)`,
			after: `
graph(%x : Tensor):
  %c : Tensor = aten::neg(%x)
  %r : Tensor = aten::relu_(%c)
  %z : Tensor = aten::zero_(%r)
  return (%z)`,
		},
		{
			name: "without FunctionalOf only zero_ and fill_ go",
			ctx:  &Context{HasOp: func(string) bool { return true }},
			before: `
graph(%x : Tensor):
  %c : Tensor = aten::neg(%x)
  %r : Tensor = aten::relu_(%c)
  %d : Tensor = aten::neg(%x)
  %z : Tensor = aten::zero_(%d)
  return (%r, %z)`,
			after: `
graph(%x : Tensor):
  %c : Tensor = aten::neg(%x)
  %r : Tensor = aten::relu_(%c)
  %d : Tensor = aten::neg(%x)
  %n1 : NoneType = prim::Constant()
  %n2 : NoneType = prim::Constant()
  %n3 : NoneType = prim::Constant()
  %n4 : NoneType = prim::Constant()
  %n5 : NoneType = prim::Constant()
  %z : Tensor = aten::zeros_like(%d, %n1, %n2, %n3, %n4, %n5)
  return (%r, %z)`,
		},
		{
			name: "a graph input is mutated in place: kept",
			before: `
graph(%x : Tensor):
  %r : Tensor = aten::relu_(%x)
  return (%r)`,
			after: `
graph(%x : Tensor):
  %r : Tensor = aten::relu_(%x)
  return (%r)`,
		},
		{
			name: "a view of the value exists before the op: kept",
			before: `
graph(%x : Tensor):
  %s : int[] = prim::Constant[value=[-1]]()
  %c : Tensor = aten::neg(%x)
  %v : Tensor = aten::view(%c, %s)
  %r : Tensor = aten::relu_(%c)
  return (%v)`,
			after: `
graph(%x : Tensor):
  %s : int[] = prim::Constant[value=[-1]]()
  %c : Tensor = aten::neg(%x)
  %v : Tensor = aten::view(%c, %s)
  %r : Tensor = aten::relu_(%c)
  return (%v)`,
		},
		{
			name: "the value is the output of a view op: kept",
			before: `
graph(%x : Tensor):
  %s : int[] = prim::Constant[value=[-1]]()
  %c : Tensor = aten::neg(%x)
  %v : Tensor = aten::view(%c, %s)
  %r : Tensor = aten::relu_(%v)
  return (%c)`,
			after: `
graph(%x : Tensor):
  %s : int[] = prim::Constant[value=[-1]]()
  %c : Tensor = aten::neg(%x)
  %v : Tensor = aten::view(%c, %s)
  %r : Tensor = aten::relu_(%v)
  return (%c)`,
		},
		{
			name: "mutation inside a loop of a value made outside: kept",
			before: `
graph(%x : Tensor,
      %n : int):
  %t : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %c : Tensor = aten::neg(%x)
  = prim::Loop(%n, %t)
    block0(%i : int):
      %a : Tensor = aten::add_(%c, %x, %one)
      -> (%t)
  return (%c)`,
			after: `
graph(%x : Tensor,
      %n : int):
  %t : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %c : Tensor = aten::neg(%x)
  = prim::Loop(%n, %t)
    block0(%i : int):
      %a : Tensor = aten::add_(%c, %x, %one)
      -> (%t)
  return (%c)`,
		},
		{
			name: "a value stored in a list: kept; an int list of its sizes does not count",
			before: `
graph(%x : Tensor):
  %c : Tensor = aten::neg(%x)
  %l : Tensor[] = prim::ListConstruct(%c)
  %r : Tensor = aten::relu_(%c)
  %d : Tensor = aten::neg(%x)
  %s : int[] = aten::size(%d)
  %q : Tensor = aten::relu_(%d)
  return (%l, %s, %q)`,
			after: `
graph(%x : Tensor):
  %c : Tensor = aten::neg(%x)
  %l : Tensor[] = prim::ListConstruct(%c)
  %r : Tensor = aten::relu_(%c)
  %d : Tensor = aten::neg(%x)
  %s : int[] = aten::size(%d)
  %q : Tensor = aten::relu(%d)
  return (%l, %s, %q)`,
		},
	})
}

// TestRemoveMutationRounds: each round frees one more op of a chain of
// in-place ops; a short chain becomes functional, a long one stops after
// maxMutationRounds rounds with the rest still in place (and the graph
// valid), instead of analysing the graph once per op.
func TestRemoveMutationRounds(t *testing.T) {
	for _, n := range []int{3, maxMutationRounds - 1, 40} {
		g, err := graph.Parse(gen.InplaceChainIR(n), nil)
		require.NoError(t, err)
		require.NoError(t, RemoveMutation(g, fakeOps()))
		require.NoError(t, Verify(g))
		kinds := map[string]int{}
		g.Walk(func(n *graph.Node) { kinds[n.Kind]++ })
		freed := min(n, maxMutationRounds)
		assert.Equal(t, 1+freed, kinds["aten::relu"], "chain of %d", n)
		assert.Equal(t, n-freed, kinds["aten::relu_"], "chain of %d", n)
	}
}
