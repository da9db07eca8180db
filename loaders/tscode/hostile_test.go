package tscode_test

import (
	"fmt"
	"io/fs"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/internal/hostile/gen"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders/tscode"
)

// maxStack is the goroutine stack the hostile tests run with: enough
// for the limits' depths, too little for a recursion as long as the
// chains they compile (a regression crashes the test binary).
const maxStack = 16 << 20

type module struct{}

func (module) ClassName() string { return "__torch__.M" }
func (module) GetAttr(name string) (ivalue.IValue, bool) {
	if name == "training" {
		return ivalue.FromBool(false), true
	}
	return ivalue.IValue{}, false
}

// compileBody compiles module M whose forward(self, x) runs body; body's
// first line is line 7 of code/__torch__.py.
func compileBody(body string) (*tscode.Result, error) {
	src := gen.TSModule("__torch__.M", body)
	return tscode.Compile(module{}, nil, func(entry string) ([]byte, error) {
		if entry != "code/__torch__.py" {
			return nil, fmt.Errorf("%s: %w", entry, fs.ErrNotExist)
		}
		return []byte(src), nil
	}, "forward")
}

// chainOf follows input 0 from v back through nodes of kind, checking
// that input 1 of each (if it has more than one) is other; it returns the
// number of nodes and the value the chain starts from.
func chainOf(t *testing.T, v *graph.Value, kind string, other *graph.Value) (int, *graph.Value) {
	n := 0
	for v.Node != nil && v.Node.Kind == kind {
		if len(v.Node.Inputs) > 1 && other != nil {
			require.Same(t, other, v.Node.Inputs[1], "input 1 of %s number %d from the end", kind, n)
		}
		v = v.Node.Inputs[0]
		n++
	}
	return n, v
}

// counts returns the number of nodes of each kind and the deepest
// nesting of blocks.
func counts(g *graph.Graph) (map[string]int, int) {
	kinds := map[string]int{}
	deepest := 0
	var walk func(b *graph.Block, depth int)
	walk = func(b *graph.Block, depth int) {
		deepest = max(deepest, depth)
		for _, n := range b.Nodes {
			kinds[n.Kind]++
			for _, sb := range n.Blocks {
				walk(sb, depth+1)
			}
		}
	}
	walk(g.Block, 0)
	return kinds, deepest
}

// Long flat chains, which generated code has, compile in constant stack:
// the compiler walks left-nested operands (y + y + ..., x.f().g(),
// a[0][0], elif chains) in loops.
func TestHostileLongChainsCompile(t *testing.T) {
	defer debug.SetMaxStack(debug.SetMaxStack(maxStack))
	for _, c := range []struct {
		name  string
		body  string
		check func(t *testing.T, g *graph.Graph)
	}{
		{"10k-term sum", "return " + gen.TSChain("x", "+", 10_000), func(t *testing.T, g *graph.Graph) {
			// ((x + x) + x) + ...: 9,999 adds, each adding x to the one before.
			n, first := chainOf(t, g.Outputs()[0], "aten::add", g.Inputs()[0])
			assert.Equal(t, 9_999, n)
			assert.Same(t, g.Inputs()[0], first)
		}},
		{"10k-long relu chain", "return " + gen.TSTrailers("x", ".relu()", 10_000), func(t *testing.T, g *graph.Graph) {
			n, first := chainOf(t, g.Outputs()[0], "aten::relu", nil)
			assert.Equal(t, 10_000, n)
			assert.Same(t, g.Inputs()[0], first)
		}},
		{"10k subscripts", "return " + gen.TSTrailers("x", "[0]", 10_000), func(t *testing.T, g *graph.Graph) {
			n, first := chainOf(t, g.Outputs()[0], "aten::select", nil)
			assert.Equal(t, 10_000, n)
			assert.Same(t, g.Inputs()[0], first)
		}},
		{"20k-term and", "b = bool(x)\nc = " + gen.TSChain("b", "and", 20_000) + "\nif c:\n  y = torch.relu(x)\nelse:\n  y = x\nreturn y",
			func(t *testing.T, g *graph.Graph) {
				// (b and b) and b ...: each If tests the one before; none nests.
				kinds, deepest := counts(g)
				assert.Equal(t, 20_000, kinds["prim::If"]) // 19,999 and the if statement
				assert.Equal(t, 1, deepest)
			}},
		{"10k-term comparison", "c = " + gen.TSChain("x.dim()", "<", 10_000) + "\nif c:\n  y = torch.relu(x)\nelse:\n  y = x\nreturn y",
			func(t *testing.T, g *graph.Graph) {
				kinds, deepest := counts(g)
				assert.Equal(t, 9_999, kinds["aten::lt"])
				assert.Equal(t, 1, deepest)
			}},
		{"30k constant elifs in a loop", "y = x\nfor i in range(3):\n" + gen.TSIndent("if bool(torch.gt(torch.sum(y), 0)):\n  y = torch.neg(y)\nelse:\n"+
			gen.TSIndent(gen.TSElifChain("False", "y = torch.neg(y)", "y = torch.relu(y)", 30_000), 2), 2) + "return y",
			func(t *testing.T, g *graph.Graph) {
				// The elifs fold away: one loop, one if, neg in one branch
				// and relu in the other, y carried.
				kinds, deepest := counts(g)
				assert.Equal(t, 1, kinds["prim::Loop"])
				assert.Equal(t, 1, kinds["prim::If"])
				assert.Equal(t, 1, kinds["aten::neg"])
				assert.Equal(t, 1, kinds["aten::relu"])
				assert.Equal(t, 2, deepest)
				assert.Equal(t, "prim::Loop", g.Outputs()[0].Node.Kind)
			}},
		{"30k statements", gen.TSStatements("x = torch.relu(x)", 30_000) + "return x", func(t *testing.T, g *graph.Graph) {
			n, first := chainOf(t, g.Outputs()[0], "aten::relu", nil)
			assert.Equal(t, 30_000, n)
			assert.Same(t, g.Inputs()[0], first)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := compileBody(c.body)
			require.NoError(t, err)
			c.check(t, res.Graph)
		})
	}
}

// Expressions too long or too deep are errors naming the file, line,
// column and limit, never a stack overflow. Sizes are those that
// overflowed, or that would have without the limits.
func TestHostileDeepCodeRejected(t *testing.T) {
	defer debug.SetMaxStack(debug.SetMaxStack(maxStack))
	const tooLong = "code/__torch__.py:7:5: statement longer than 250000 tokens"
	const tooDeep = "nesting deeper than 1000 levels"
	ret := func(x string) string { return "return " + x }
	for _, c := range []struct {
		name, body, err string
	}{
		{"2M-term sum", ret(gen.TSChain("x", "+", 2_000_000)), tooLong},
		{"600k-long relu chain", ret(gen.TSTrailers("x", ".relu()", 600_000)), tooLong},
		{"1M subscripts", ret(gen.TSTrailers("x", "[0]", 1_000_000)), tooLong},
		{"1M attributes", ret(gen.TSTrailers("self", ".a", 1_000_000)), tooLong},
		{"100k-term and of calls", "b = " + gen.TSChain("bool(x)", "and", 100_000) + "\nreturn x", tooLong},
		{"1M nested calls", ret(gen.TSNested("torch.relu(", "x", ")", 1_000_000)), tooLong},
		{"600 nested calls", ret(gen.TSNested("torch.relu(", "x", ")", 600)), "code/__torch__.py:7:5490: " + tooDeep},
		{"100k unary minus", ret(gen.TSNested("- ", "x", "", 100_000)), tooDeep},
		{"100k not", "b = " + gen.TSNested("not ", "bool(x)", "", 100_000) + "\nreturn x", tooDeep},
		{"100k parentheses", ret(gen.TSNested("(", "x", ")", 100_000)), tooDeep},
		{"100k lists", ret(gen.TSNested("[", "x", "]", 100_000)), tooDeep},
		{"50k tuples", ret(gen.TSNested("(", "x", ",)", 50_000)), tooDeep},
		{"30k dicts", ret(gen.TSNested(`{"k": `, "x", "}", 30_000)), tooDeep},
		{"30k conditional expressions", ret(gen.TSNested("x if bool(x) else ", "x", "", 30_000)), tooDeep},
		{"100k powers", ret(gen.TSChain("x", "**", 100_000)), tooDeep},
		{"1000 nested ifs", "y = x\n" + gen.TSNestedBlocks("if bool(x)", "y = torch.relu(x)", 1000) + "return y", tooDeep},
		{"1000 nested loops", "y = x\n" + gen.TSNestedBlocks("for i in range(2)", "y = torch.relu(y)", 1000) + "return y", tooDeep},
		{"1000 runtime elifs", "y = x\n" + gen.TSElifChain("bool(torch.gt(torch.sum(x), %d))", "y = torch.neg(x)", "y = x", 1000) + "return y",
			"if/loop blocks nested more than 200 levels deep"},
		{"10k calls of calls", ret(gen.TSTrailers("torch.relu", "(x)", 10_000)), "code/__torch__.py:7:12: torch.relu(...) is not callable"},
		{"10k attributes", ret(gen.TSTrailers("self", ".a", 10_000)), "code/__torch__.py:7:12: module __torch__.M has no attribute a"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := compileBody(c.body)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.err)
			assert.True(t, strings.HasPrefix(err.Error(), "code/__torch__.py:"), err.Error())
			assert.NotContains(t, err.Error(), "internal error")
		})
	}
}

// The statement limit is on tokens: one under it parses.
func TestStatementTokenLimit(t *testing.T) {
	// "y = 1 + 1 + ... + 1" then NEWLINE: 2 + 2n-1 + 1 tokens.
	for _, c := range []struct {
		terms int
		ok    bool
	}{{124_999, true}, {125_000, false}} {
		_, err := tscode.Parse("m.py", []byte("y = "+gen.TSChain("1", "+", c.terms)+"\n"))
		if c.ok {
			assert.NoError(t, err, "%d terms", c.terms)
		} else {
			assert.EqualError(t, err, "m.py:1:1: statement longer than 250000 tokens", "%d terms", c.terms)
		}
	}
}

// BenchmarkCompileChains compiles long chains, and refuses the ones over
// the statement limit.
func BenchmarkCompileChains(b *testing.B) {
	for _, c := range []struct {
		name string
		body func() string
		ok   bool
	}{
		{"sum-10k", func() string { return "return " + gen.TSChain("x", "+", 10_000) }, true},
		{"sum-100k", func() string { return "return " + gen.TSChain("x", "+", 100_000) }, true},
		{"relu-10k", func() string { return "return " + gen.TSTrailers("x", ".relu()", 10_000) }, true},
		{"sum-2M-refused", func() string { return "return " + gen.TSChain("x", "+", 2_000_000) }, false},
		{"relu-600k-refused", func() string { return "return " + gen.TSTrailers("x", ".relu()", 600_000) }, false},
	} {
		b.Run(c.name, func(b *testing.B) {
			body := c.body()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := compileBody(body); (err == nil) != c.ok {
					b.Fatalf("compiled: %v, error: %v", err == nil, err)
				}
			}
		})
	}
}
