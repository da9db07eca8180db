package graph

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph/schemas"
)

// TestParseAllTorchSchemas parses every schema PyTorch 1.13 and
// torchvision register (package schemas' list).
func TestParseAllTorchSchemas(t *testing.T) {
	lines := schemas.Lines()
	require.Greater(t, len(lines), 1000)
	var failed []string
	for _, l := range lines {
		s, err := ParseSchema(l)
		if err != nil {
			failed = append(failed, err.Error())
			continue
		}
		if !strings.HasPrefix(l, s.Name) || !strings.Contains(s.Name, "::") {
			failed = append(failed, l+": bad name "+s.Name)
		}
	}
	if len(failed) > 100 {
		failed = append(failed[:100], "...")
	}
	require.Empty(t, failed, "%d schemas failed", len(failed))
}

func loadSchemas(t *testing.T) map[string][]*Schema {
	byName := map[string][]*Schema{}
	for _, l := range schemas.Lines() {
		s, err := ParseSchema(l)
		require.NoError(t, err)
		byName[s.Name] = append(byName[s.Name], s)
	}
	return byName
}

// TestSchemaReparse: printing a parsed schema and parsing it again keeps
// names, argument names, types, defaults and kwarg-only marks.
func TestSchemaReparse(t *testing.T) {
	for _, ss := range loadSchemas(t) {
		for _, s := range ss {
			s2, err := ParseSchema(s.String())
			require.NoError(t, err, s.String())
			require.Equal(t, s.Name, s2.Name)
			require.Equal(t, s.Overload, s2.Overload)
			require.Len(t, s2.Arguments, len(s.Arguments), s.String())
			for i, a := range s.Arguments {
				b := s2.Arguments[i]
				require.Equal(t, a.Name, b.Name, s.String())
				require.Equal(t, a.Default, b.Default, s.String())
				require.Equal(t, a.KwargOnly, b.KwargOnly, s.String())
				require.Equal(t, a.Type.String(), b.Type.String(), s.String())
			}
			require.Len(t, s2.Returns, len(s.Returns), s.String())
			require.Equal(t, s.VarArgs, s2.VarArgs, s.String())
			require.Equal(t, s.VarRets, s2.VarRets, s.String())
		}
	}
}

func TestParseSchemaDetails(t *testing.T) {
	type arg struct {
		name, typ, def, alias string
		kw                    bool
		n                     int
	}
	tests := []struct {
		src     string
		args    []arg
		returns []string
		varargs bool
	}{
		{"aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
			[]arg{{"self", "Tensor", "", "", false, 0}, {"other", "Tensor", "", "", false, 0}, {"alpha", "Scalar", "1", "", true, 0}},
			[]string{"Tensor"}, false},
		{"aten::add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
			[]arg{{"self", "Tensor", "", "a!", false, 0}, {"other", "Tensor", "", "", false, 0}, {"alpha", "Scalar", "1", "", true, 0}},
			[]string{"Tensor"}, false},
		{"aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, int[2] padding=0, int[2] dilation=1, int groups=1) -> Tensor",
			[]arg{{"input", "Tensor", "", "", false, 0}, {"weight", "Tensor", "", "", false, 0}, {"bias", "Tensor?", "None", "", false, 0},
				{"stride", "int[]", "1", "", false, 2}, {"padding", "int[]", "0", "", false, 2}, {"dilation", "int[]", "1", "", false, 2}, {"groups", "int", "1", "", false, 0}},
			[]string{"Tensor"}, false},
		{"aten::append.t(t[](a!) self, t(c -> *) el) -> t[](a!)",
			[]arg{{"self", "Any[]", "", "a!", false, 0}, {"el", "Any", "", "c -> *", false, 0}},
			[]string{"Any[]"}, false},
		{"aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
			[]arg{{"self", "Tensor", "", "", false, 0}, {"dim", "int", "", "", false, 0}, {"keepdim", "bool", "False", "", false, 0}},
			[]string{"Tensor", "Tensor"}, false},
		{"aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
			[]arg{{"self", "Tensor", "", "", false, 0}, {"indices", "Tensor?[]", "", "", false, 0}},
			[]string{"Tensor"}, false},
		{"aten::clear.str(Dict(str, t)(a!) self) -> ()",
			[]arg{{"self", "Dict(str, Any)", "", "a!", false, 0}},
			nil, false},
		{`aten::div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor`,
			[]arg{{"self", "Tensor", "", "", false, 0}, {"other", "Tensor", "", "", false, 0}, {"rounding_mode", "str?", "", "", true, 0}},
			[]string{"Tensor"}, false},
		{`aten::format(str self, ...) -> str`,
			[]arg{{"self", "str", "", "", false, 0}},
			[]string{"str"}, true},
		{`aten::gelu(Tensor self, *, str approximate="none") -> Tensor`,
			[]arg{{"self", "Tensor", "", "", false, 0}, {"approximate", "str", `"none"`, "", true, 0}},
			[]string{"Tensor"}, false},
		{`aten::wait(Future(t) self) -> t`,
			[]arg{{"self", "Future(Any)", "", "", false, 0}},
			[]string{"Any"}, false},
		{`aten::dict.Dict_str(Dict(str, t)(a) self) -> Dict(str, t)`,
			[]arg{{"self", "Dict(str, Any)", "", "a", false, 0}},
			[]string{"Dict(str, Any)"}, false},
		{`aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]`,
			[]arg{{"self", "Tensor", "", "a -> *", false, 0}, {"split_size", "int", "", "", false, 0}, {"dim", "int", "0", "", false, 0}},
			[]string{"Tensor[]"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			s, err := ParseSchema(tt.src)
			require.NoError(t, err)
			require.Len(t, s.Arguments, len(tt.args))
			for i, a := range tt.args {
				got := s.Arguments[i]
				require.Equal(t, a, arg{got.Name, got.Type.String(), got.Default, got.Alias, got.KwargOnly, got.N}, "argument %d", i)
			}
			var rets []string
			for _, r := range s.Returns {
				rets = append(rets, r.Type.String())
			}
			require.Equal(t, tt.returns, rets)
			require.Equal(t, tt.varargs, s.VarArgs)
		})
	}
	for _, bad := range []string{"aten::foo", "aten::foo(Tensor self", "aten::foo(Tensor self)", "aten::foo(Blob self) -> Tensor", "aten::foo(int[x] a) -> Tensor", "aten::foo(Tensor(a self) -> Tensor"} {
		_, err := ParseSchema(bad)
		require.Error(t, err, bad)
	}
}

// TestSchemaMatchesSamples: every aten:: node in the PyTorch-made sample
// graphs matches at least one registered overload of its op, and none of
// an op with another name.
func TestSchemaMatchesSamples(t *testing.T) {
	byName := loadSchemas(t)
	checked := 0
	for name, text := range samples(t) {
		g, err := Parse(text, &ParseOptions{AllowUnboundTensors: true})
		require.NoError(t, err)
		var walk func(g *Graph)
		walk = func(g *Graph) {
			g.Walk(func(n *Node) {
				if sg := Subgraph(n); sg != nil {
					walk(sg)
				}
				if !strings.HasPrefix(n.Kind, "aten::") {
					return
				}
				ss := byName[n.Kind]
				require.NotEmpty(t, ss, "%s: no schema for %s", name, n.Kind)
				var matched []string
				for _, s := range ss {
					if s.Matches(n) {
						matched = append(matched, s.String())
					}
				}
				assert.NotEmpty(t, matched, "%s: %s with inputs %s matches no overload", name, n.Kind, inputTypes(n))
				assert.False(t, byName["aten::mul"][0].Matches(n) && n.Kind != "aten::mul")
				checked++
			})
		}
		walk(g)
	}
	assert.Greater(t, checked, 200)
}

func inputTypes(n *Node) string {
	var parts []string
	for _, in := range n.Inputs {
		parts = append(parts, typeText(in.Type))
	}
	return strings.Join(parts, ", ")
}

func TestSchemaMatchesOverloads(t *testing.T) {
	g, err := Parse(`graph(%x : Tensor, %y : Float(2, strides=[1], requires_grad=0, device=cpu), %i : int, %f : float, %l : int[], %o : Tensor?):
  %one : int = prim::Constant[value=1]()
  %none : NoneType = prim::Constant()
  %a : Tensor = aten::add(%x, %y, %one)
  %b : Tensor = aten::add(%x, %f, %one)
  %c : int = aten::add(%i, %one)
  %d : Tensor = aten::conv2d(%x, %y, %none, %one, %l, %l, %one)
  %e : Tensor = aten::linear(%x, %y, %o)
  return (%a)
`, nil)
	require.NoError(t, err)
	n := g.Block.Nodes
	for _, tt := range []struct {
		node   *Node
		schema string
		want   bool
	}{
		{n[2], "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", true},
		{n[2], "aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", false},
		{n[3], "aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", true},
		{n[3], "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", false},
		{n[4], "aten::add.int(int a, int b) -> int", true},
		{n[4], "aten::add.float(float a, float b) -> float", false},
		{n[4], "aten::add.complex(complex a, complex b) -> complex", false},
		{n[4], "aten::sub.int(int a, int b) -> int", false},
		{n[5], "aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, int[2] padding=0, int[2] dilation=1, int groups=1) -> Tensor", true},
		{n[6], "aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor", true},
		{n[6], "aten::linear(Tensor input, Tensor weight, Tensor bias) -> Tensor", false},
	} {
		assert.Equal(t, tt.want, tt.node.Matches(tt.schema), "%s vs %s", tt.node.Kind, tt.schema)
	}
}
