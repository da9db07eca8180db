package graph

import (
	"fmt"
	"strings"
	"testing"
)

// FuzzParse: Parse never panics; a graph it accepts verifies without
// panicking and prints to text that parses back to the same text.
func FuzzParse(f *testing.F) {
	for _, text := range samples(f) {
		f.Add(text)
	}
	f.Add("graph():\n  return ()\n")
	// Deep and long text (internal/hostile generates bigger): nesting past
	// the limit of 200 is an error, a long line is fine.
	nestedIfs := func(n int) string {
		var b strings.Builder
		b.WriteString("graph(%x : Tensor, %c : bool):\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "  %%i%d : Tensor = prim::If(%%c)\n  block0():\n", i)
		}
		b.WriteString("  %r : Tensor = aten::relu(%x)\n")
		prev := "%r"
		for i := n - 1; i >= 0; i-- {
			fmt.Fprintf(&b, "  -> (%s)\n  block1():\n  -> (%%x)\n", prev)
			prev = fmt.Sprintf("%%i%d", i)
		}
		return b.String() + "  return (" + prev + ")\n"
	}
	forks := func(n int) string {
		return strings.Repeat("graph(%x : Tensor):\n  %f : Future[Tensor] = prim::fork_0(%x)\n  return (%f)\nwith prim::fork_0 = ", n) +
			"graph(%x : Tensor):\n  return (%x)\n"
	}
	for _, text := range []string{
		nestedIfs(150), nestedIfs(250), forks(150), forks(250),
		"graph(%x : Tensor" + strings.Repeat("[]", 250) + "):\n  return (%x)\n",
		"graph(%x : Tensor" + strings.Repeat("?", 250) + "):\n  return (%x)\n",
		"graph(%x : " + strings.Repeat("(", 250) + "Tensor" + strings.Repeat(",)", 250) + "):\n  return (%x)\n",
		"graph():\n   = prim::Print[x=" + strings.Repeat("[", 250) + "1" + strings.Repeat("]", 250) + "]()\n  return ()\n",
		"graph(%x : Tensor):\n  %l : Tensor[] = prim::ListConstruct(" + strings.Repeat("%x, ", 20_000) + "%x)\n  return (%l)\n",
	} {
		f.Add(text)
	}
	f.Fuzz(func(t *testing.T, src string) {
		opts := &ParseOptions{AllowUnboundTensors: true}
		g, err := Parse(src, opts)
		if err != nil {
			return
		}
		_ = g.Verify()
		_ = TensorConstantNodes(g)
		printed := g.String()
		g2, err := Parse(printed, opts)
		if err != nil {
			t.Fatalf("printed graph does not parse: %v\n%s", err, printed)
		}
		if again := g2.String(); again != printed {
			t.Fatalf("print is not stable:\n%s\n---\n%s", printed, again)
		}
	})
}
