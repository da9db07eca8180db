package passes

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

func parse(t *testing.T, src string) *graph.Graph {
	t.Helper()
	g, err := graph.Parse(strings.TrimSpace(src)+"\n", nil)
	require.NoError(t, err)
	require.NoError(t, Verify(g))
	return g
}

// parseTemplate parses a test's graph template once its placeholders
// are filled: a line a placeholder left empty (an optional USE) is
// dropped, and the template's prim::Constant[value=<Tensor>] values
// take tensors, in order.
func parseTemplate(t *testing.T, src string, tensors ...*ivalue.Tensor) *graph.Graph {
	t.Helper()
	src = strings.Replace(src, "  \n", "", 1)
	g, err := graph.Parse(strings.TrimSpace(src)+"\n", &graph.ParseOptions{Tensors: tensors})
	require.NoError(t, err)
	return g
}

var nameRE = regexp.MustCompile(`%[A-Za-z0-9_.]+`)

// canon renames values by order of first appearance, so tests compare
// structure, not the numbering of values a pass created.
func canon(s string) string {
	names := map[string]string{}
	return strings.TrimSpace(nameRE.ReplaceAllStringFunc(s, func(n string) string {
		if m, ok := names[n]; ok {
			return m
		}
		m := "%v" + string(rune('a'+len(names)%26)) + strings.Repeat("'", len(names)/26)
		names[n] = m
		return m
	}))
}

type passCase struct {
	name          string
	ctx           *Context
	before, after string
}

// runCases runs pass on each case's graph and compares the result, after
// checking use lists, with the expected graph.
func runCases(t *testing.T, pass func(*graph.Graph, *Context) error, cases []passCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := parse(t, tc.before)
			c := tc.ctx
			if c == nil {
				c = fakeOps()
			}
			require.NoError(t, pass(g, c))
			require.NoError(t, Verify(g))
			want := parse(t, tc.after)
			require.Equal(t, canon(want.String()), canon(g.String()))
		})
	}
}

// fakeOps stands in for the runtime's op set (the package knows no
// kernels): every op has a kernel, and the in-place ops the tests use have
// the functional forms ops gives them (pipeline_test checks that).
func fakeOps() *Context {
	return &Context{
		HasOp:        func(string) bool { return true },
		FunctionalOf: func(kind string) string { return fakeFunctional[kind] },
	}
}

var fakeFunctional = map[string]string{
	"aten::add_":      "aten::add",
	"aten::mul_":      "aten::mul",
	"aten::relu_":     "aten::relu",
	"aten::hardtanh_": "aten::hardtanh",
}
