package memplan

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/graph/alias"
)

func TestLifetimes(t *testing.T) {
	cases := []struct {
		name          string
		ir            string
		manageOutputs bool
		want          []string // "%name start-end" (+ " out")
	}{
		{
			name: "chain",
			ir: `graph(%x : Tensor):
  %a : Tensor = aten::relu(%x)
  %b : Tensor = aten::sigmoid(%a)
  %c : Tensor = aten::tanh(%b)
  %d : Tensor = aten::mul(%c, %a)
  return (%d)`,
			want: []string{"%a 0-3", "%b 1-2", "%c 2-3"},
		},
		{
			name: "outputs managed",
			ir: `graph(%x : Tensor):
  %a : Tensor = aten::relu(%x)
  %b : Tensor = aten::sigmoid(%a)
  return (%b)`,
			manageOutputs: true,
			want:          []string{"%a 0-1", "%b 1-2 out"},
		},
		{
			name: "unused output lives one step",
			ir: `graph(%x : Tensor):
  %a : Tensor = aten::relu(%x)
  %b : Tensor = aten::sigmoid(%x)
  return (%b)`,
			want: []string{"%a 0-0"},
		},
		{
			// A view of %a keeps %a alive; a view of the output is an output.
			name: "views extend lifetimes",
			ir: `graph(%x : Tensor):
  %one : int = prim::Constant[value=1]()
  %s : int[] = prim::Constant[value=[-1]]()
  %a : Tensor = aten::relu(%x)
  %v : Tensor = aten::view(%a, %s)
  %b : Tensor = aten::sigmoid(%x)
  %c : Tensor = aten::add(%v, %b, %one)
  return (%c)`,
			want: []string{"%a 2-5", "%v 3-5", "%b 4-5"}, // nil Candidate: views too
		},
		{
			name: "input aliases and containers are not managed",
			ir: `graph(%x : Tensor):
  %s : int[] = prim::Constant[value=[-1]]()
  %v : Tensor = aten::view(%x, %s)
  %a : Tensor = aten::relu(%v)
  %b : Tensor = aten::sigmoid(%a)
  %l : Tensor[] = prim::ListConstruct(%a, %b)
  %d : int = prim::Constant[value=0]()
  %c : Tensor = aten::cat(%l, %d)
  return (%c)`,
			want: nil,
		},
		{
			// Read inside a loop body: alive until the loop ends. Made in a
			// branch and returned from it: not managed. Made in a branch and
			// used there only: managed at the If's step.
			name: "sub-blocks",
			ir: `graph(%x : Tensor, %n : int, %c : bool):
  %t : bool = prim::Constant[value=1]()
  %a : Tensor = aten::relu(%x)
  %y : Tensor = prim::Loop(%n, %t, %x)
    block0(%i : int, %acc : Tensor):
      %m : Tensor = aten::mul(%acc, %a)
      -> (%t, %m)
  %z : Tensor = prim::If(%c)
    block0():
      %p : Tensor = aten::sigmoid(%y)
      %q : Tensor = aten::tanh(%p)
      -> (%q)
    block1():
      -> (%y)
  %w : Tensor = aten::relu(%z)
  return (%w)`,
			want: []string{"%a 1-2", "%p 3-3"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g, err := graph.Parse(c.ir, nil)
			require.NoError(t, err)
			db := alias.Analyze(g)
			lts, steps := Lifetimes(g, db, LifetimeOptions{ManageOutputs: c.manageOutputs})
			assert.Equal(t, len(g.Block.Nodes), steps)
			var got []string
			for _, lt := range lts {
				s := fmt.Sprintf("%s %d-%d", lt.Value, lt.Start, lt.End)
				if lt.Output {
					s += " out"
				}
				got = append(got, s)
			}
			assert.Equal(t, c.want, got)
		})
	}
}

func TestLifetimesCandidate(t *testing.T) {
	g, err := graph.Parse(`graph(%x : Tensor):
  %a : Tensor = aten::relu(%x)
  %b : Tensor = aten::sigmoid(%a)
  %c : Tensor = aten::tanh(%b)
  return (%c)`, nil)
	require.NoError(t, err)
	lts, _ := Lifetimes(g, alias.Analyze(g), LifetimeOptions{
		Candidate: func(v *graph.Value) bool { return !strings.HasPrefix(v.DebugName(), "b") },
	})
	require.Len(t, lts, 1)
	assert.Equal(t, "a", lts[0].Value.DebugName())
	reqs := Requests(lts, []int64{100})
	assert.Equal(t, []Request{{Size: 100, Start: 0, End: 1}}, reqs)
}

// TestLifetimesOverwrites: an output is linked to the input its op may write
// over only where that input is managed, dies at the node, is made by
// another top-level node, and is not also read through another input.
func TestLifetimesOverwrites(t *testing.T) {
	g, err := graph.Parse(`graph(%x : Tensor, %c : bool):
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::relu(%x)
  %b : Tensor = aten::sigmoid(%a)
  %d : Tensor = aten::tanh(%b)
  %e : Tensor = aten::mul(%d, %b)
  %f : Tensor = aten::sigmoid(%e)
  %g : Tensor = aten::mul(%f, %f)
  %h : Tensor = aten::sigmoid(%g)
  %k : Tensor = aten::add(%h, %h, %one)
  %s : int[] = prim::Constant[value=[-1]]()
  %l : Tensor = aten::sigmoid(%k)
  %v : Tensor = aten::view(%l, %s)
  %u : Tensor = aten::mul(%l, %v)
  %r : Tensor = aten::tanh(%x)
  return (%u, %r)`, nil)
	require.NoError(t, err)
	// Every op here may write over its first input.
	overwrite := func(n *graph.Node) (int, bool) { return 0, true }
	lts, _ := Lifetimes(g, alias.Analyze(g), LifetimeOptions{Overwrite: overwrite})
	got := map[string]string{}
	for _, lt := range lts {
		if lt.Overwrites.OK {
			got[lt.Value.DebugName()] = lts[lt.Overwrites.Index].Value.DebugName()
		} else {
			got[lt.Value.DebugName()] = ""
		}
	}
	assert.Equal(t, map[string]string{
		"a": "",  // over a graph input: not managed
		"b": "a", // relu's result dies at sigmoid
		"d": "",  // %b is read again by the mul
		"e": "d",
		"f": "e",
		"g": "", // %f is both inputs
		"h": "g",
		"k": "", // %h is both inputs
		"l": "k",
		"v": "", // a view (nil Candidate: views too)
	}, got) // %l is read through its view too: %u is not linked; %u and %r are outputs
	// Without the option nothing is linked.
	lts, _ = Lifetimes(g, alias.Analyze(g), LifetimeOptions{})
	for _, lt := range lts {
		assert.Zero(t, lt.Overwrites, lt.Value.DebugName())
	}
}
