package tscode

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/ivalue"
)

// Generated sources deeper than the compiler's limits are errors naming
// the limit and the line, never a stack overflow (long chains:
// hostile_test.go).
func TestCompileLimits(t *testing.T) {
	const head = "class M(Module):\n  training : bool\n  def forward(self: __torch__.m.M, x: Tensor) -> Tensor:\n"
	nestedIfs := func(fn string, n int, tail string) string {
		var b strings.Builder
		fmt.Fprintf(&b, "def %s(x: Tensor) -> Tensor:\n  y = x\n", fn)
		for i := 0; i < n; i++ {
			ind := strings.Repeat(" ", 2*(i+1))
			fmt.Fprintf(&b, "%sif bool(torch.gt(torch.sum(x), %d)):\n", ind, i)
			fmt.Fprintf(&b, "%s  y = torch.relu(y)\n", ind)
		}
		fmt.Fprintf(&b, "%s  y = %s\n  return y\n", strings.Repeat(" ", 2*n), tail)
		return b.String()
	}
	var chain strings.Builder
	for i := 0; i < 150; i++ {
		fmt.Fprintf(&chain, "def f%d(x: Tensor) -> Tensor:\n  return __torch__.m.f%d(x)\n", i, i+1)
	}
	chain.WriteString("def f150(x: Tensor) -> Tensor:\n  return x\n")
	for _, c := range []struct {
		name, src, err string
	}{
		{"inlining 150 calls deep", head + "    return __torch__.m.f0(x)\n" + chain.String(),
			"m.py:203:1: calls nested more than 100 deep inlining f99"},
		{"blocks nested across inlined calls", head + "    return __torch__.m.a(x)\n" + nestedIfs("a", 150, "__torch__.m.b(y)") + nestedIfs("b", 150, "y"),
			"if/loop blocks nested more than 200 levels deep"},
		{"2000 nested calls", head + "    return " + strings.Repeat("torch.relu(", 2000) + "x" + strings.Repeat(")", 2000) + "\n",
			"m.py:4:5490: nesting deeper than 1000 levels"},
		{"100k nested unary minus", head + "    return " + strings.Repeat("-", 100000) + "x\n",
			"nesting deeper than 1000 levels"},
		{"recursion", head + "    return __torch__.m.r(x)\ndef r(x: Tensor) -> Tensor:\n  return __torch__.m.r(torch.relu(x))\n",
			"m.py:5:1: calls nested more than 100 deep inlining r (recursion is not supported)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := &obj{class: "__torch__.m.M", attrs: map[string]ivalue.IValue{"training": ivalue.FromBool(false)}}
			_, err := Compile(root, nil, srcs(map[string]string{"code/__torch__/m.py": c.src}), "forward")
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.err)
			assert.NotContains(t, err.Error(), "internal error")
		})
	}
}

func TestCompileDeepAttribute(t *testing.T) {
	v := ivalue.FromInt(1)
	for i := 0; i < 5000; i++ {
		v = ivalue.NewList(v)
	}
	src := "class M(Module):\n  deep : List[int]\n  def forward(self: __torch__.m.M, x: Tensor) -> Tensor:\n    _0 = self.deep\n    return x\n"
	root := &obj{class: "__torch__.m.M", attrs: map[string]ivalue.IValue{"deep": v}}
	_, err := Compile(root, nil, srcs(map[string]string{"code/__torch__/m.py": src}), "forward")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "m.py:4:10: module attribute nested more than 1000 levels deep")
}
