package graph

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gosr/gosr/ivalue"
	"github.com/stretchr/testify/assert"

	"github.com/stretchr/testify/require"
)

// commentRE matches the trailing source comments the printer omits.
var commentRE = regexp.MustCompile(`(?m) # [^\n]*$`)

func stripComments(s string) string { return commentRE.ReplaceAllString(s, "") }

func samples(t testing.TB) map[string]string {
	files, err := filepath.Glob("testdata/*.ir")
	require.NoError(t, err)
	require.NotEmpty(t, files, "run scripts/make_ir_samples.py")
	out := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		out[strings.TrimSuffix(filepath.Base(f), ".ir")] = string(b)
	}
	return out
}

func TestRoundTripSamples(t *testing.T) {
	for name, text := range samples(t) {
		t.Run(name, func(t *testing.T) {
			g, err := Parse(text, &ParseOptions{AllowUnboundTensors: true})
			require.NoError(t, err)
			require.NoError(t, g.Verify())
			printed := g.String()
			require.Equal(t, stripComments(text), printed)
			g2, err := Parse(printed, &ParseOptions{AllowUnboundTensors: true})
			require.NoError(t, err)
			require.Equal(t, printed, g2.String())
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, src string
		pos, want string // "line:col" and a substring of the message
	}{
		{"missing colon", "graph(%x : Tensor)\n  return (%x)\n", "2:3", `expected ":" after the graph inputs, got "return (%x)"`},
		{"not a graph", "grap(%x : Tensor):\n", "1:1", `expected "graph"`},
		{"undefined value", "graph(%x : Tensor):\n  %y : Tensor = aten::relu(%z)\n  return (%y)\n", "2:28", "undefined value %z"},
		{"use before definition", "graph(%x : Tensor):\n  %y : Tensor = aten::add(%x, %w)\n  %w : Tensor = aten::relu(%x)\n  return (%y)\n", "2:31", "undefined value %w"},
		{"defined twice", "graph(%x : Tensor):\n  %x : Tensor = aten::relu(%x)\n  return (%x)\n", "2:3", "%x defined twice (first at 1:7)"},
		{"unknown type", "graph(%x : Tensr):\n  return (%x)\n", "1:12", `unknown type "Tensr"`},
		{"garbled tensor type", "graph(%x : Float(3, strides=[1):\n  return (%x)\n", "1:31", "to end the strides"},
		{"garbled tensor type key", "graph(%x : Float(3, foo=1)):\n  return (%x)\n", "1:21", "tensor type: expected a size, *, strides=, requires_grad= or device=, got \"foo=1)):\""},
		{"missing type annotation", "graph(%l : Tensor[]):\n  %a, %b : Tensor = prim::ListUnpack(%l)\n  return (%a)\n", "2:5", `expected ":" and a type for %a`},
		{"bad kind", "graph(%x : Tensor):\n  %y : Tensor = relu(%x)\n  return (%y)\n", "2:17", "expected an op name"},
		{"unbound tensor", "graph():\n  %w : Float(2, strides=[1], requires_grad=0, device=cpu) = prim::Constant[value=<Tensor>]()\n  return (%w)\n", "2:82", "unbound tensor constant %w"},
		{"float for int", "graph():\n  %a : int = prim::Constant[value=1.5]()\n  return (%a)\n", "2:35", "constant of type int: expected an integer"},
		{"int overflow", "graph():\n  %a : int = prim::Constant[value=9223372036854775808]()\n  return (%a)\n", "2:35", "does not fit type int"},
		{"tuple too long", "graph():\n  %a : (int, int) = prim::Constant[value=(1, 2, 3)]()\n  return (%a)\n", "2:49", "more than 2 elements"},
		{"string for bool", "graph():\n  %a : bool = prim::Constant[value=\"x\"]()\n  return (%a)\n", "2:36", "expected 0, 1, True or False"},
		{"unterminated string", "graph():\n  %a : str = prim::Constant[value=\"x]()\n  return (%a)\n", "2:35", "unterminated string"},
		{"not visible", "graph(%c : bool):\n  %r : int = prim::If(%c)\n    block0():\n      %one : int = prim::Constant[value=1]()\n      -> (%one)\n    block1():\n      -> (%one)\n  return (%r)\n", "7:11", "%one is not visible here"},
		{"block out of order", "graph(%c : bool):\n   = prim::If(%c)\n    block1():\n      -> ()\n  return ()\n", "3:5", "expected block0 of prim::If"},
		{"missing with", "graph(%x : Tensor):\n  %f : Future[Tensor] = prim::fork_0(%x)\n  return (%f)\n", "4:1", "expected \"with prim::fork_0 = graph(...)\""},
		{"trailing garbage", "graph():\n  return ()\nfoo", "3:1", "expected end of input"},
		{"eof in block", "graph(%c : bool):\n   = prim::If(%c)\n    block0():\n", "4:1", `expected a node or "->"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.src, nil)
			require.Error(t, err)
			var pe *ParseError
			require.ErrorAs(t, err, &pe)
			assert.Contains(t, err.Error(), tt.want)
			assert.True(t, strings.HasPrefix(err.Error(), tt.pos+": "), "position: got %q, want %s", err.Error(), tt.pos)
		})
	}
}

func TestParseConstants(t *testing.T) {
	src := `graph():
  %b : bool = prim::Constant[value=1]()
  %b0 : bool = prim::Constant[value=0]()
  %i : int = prim::Constant[value=-9223372036854775808]()
  %f : float = prim::Constant[value=1.0000000000000001e-05]()
  %f2 : float = prim::Constant[value=2.]()
  %f3 : float = prim::Constant[value=10000000000]()
  %inf : float = prim::Constant[value=-inf]()
  %nan : float = prim::Constant[value=nan]()
  %s : str = prim::Constant[value="a\"b\\c\n\t\'\001caf\0)+\/.)"]()
  %d : Device = prim::Constant[value="cuda:1"]()
  %n : NoneType = prim::Constant()
  %li : int[] = prim::Constant[value=[-1, 2, 3]]()
  %lf : float[] = prim::Constant[value=[1.5, 2.]]()
  %lb : bool[] = prim::Constant[value=[True, False]]()
  %ls : str[] = prim::Constant[value=["x", "y"]]()
  %t : (int, str, float) = prim::Constant[value=(1, "a", 2.5)]()
  %t1 : (int) = prim::Constant[value=(7,)]()
  %e : int?[] = prim::Constant[value=annotate(List[Optional[int]], [])]()
  %ed : Dict(str, int) = prim::Constant[value=annotate(Dict[str, int],{})]()
  %get : Tensor = prim::GetAttr[name="fc"]()
  return (%b)
`
	g, err := Parse(src, nil)
	require.NoError(t, err)
	require.NoError(t, g.Verify())
	vals := map[string]ivalue.IValue{}
	g.Walk(func(n *Node) {
		v, _ := n.Attr("value")
		vals[n.Outputs[0].Name] = v
	})
	assert.Equal(t, ivalue.KindBool, vals["b"].Kind())
	assert.True(t, vals["b"].Bool())
	assert.False(t, vals["b0"].Bool())
	assert.Equal(t, int64(math.MinInt64), vals["i"].Int())
	assert.Equal(t, 1e-5, vals["f"].Double())
	assert.Equal(t, ivalue.KindDouble, vals["f2"].Kind())
	assert.Equal(t, 2.0, vals["f2"].Double())
	assert.Equal(t, 1e10, vals["f3"].Double())
	assert.True(t, math.IsInf(vals["inf"].Double(), -1))
	assert.True(t, math.IsNaN(vals["nan"].Double()))
	assert.Equal(t, "a\"b\\c\n\t'\x01café", vals["s"].Str())
	assert.Equal(t, ivalue.KindDevice, vals["d"].Kind())
	assert.Equal(t, "cuda:1", vals["d"].Str())
	assert.True(t, vals["n"].IsNone())
	assert.Equal(t, "[-1, 2, 3]", vals["li"].String())
	assert.Equal(t, "[1.5, 2]", vals["lf"].String())
	assert.Equal(t, "[True, False]", vals["lb"].String())
	assert.Equal(t, `["x", "y"]`, vals["ls"].String())
	assert.Equal(t, ivalue.KindTuple, vals["t"].Kind())
	assert.Equal(t, `(1, "a", 2.5)`, vals["t"].String())
	assert.Equal(t, "(7)", vals["t1"].String())
	assert.Equal(t, ivalue.KindList, vals["e"].Kind())
	assert.Empty(t, vals["e"].List().Items)
	assert.Equal(t, ivalue.KindDict, vals["ed"].Kind())
	get := g.Block.Nodes[len(g.Block.Nodes)-1]
	name, _ := get.Attr("name")
	assert.Equal(t, "fc", name.Str())
	// The printer reproduces every form.
	assert.Equal(t, src, g.String())
}

func TestParseStructure(t *testing.T) {
	src := `graph(%self : __torch__.___torch_mangle_0.M,
      %x.1 : Tensor,
      %n.1 : int):
  %5 : bool = prim::Constant[value=1]()
  %l : Tensor[] = aten::split(%x.1, %n.1) # a.py:3:4
  %a : Tensor, %b : Tensor = prim::ListUnpack(%l)
  %y : Tensor = prim::Loop(%n.1, %5, %a)
    block0(%i : int, %y.21 : Tensor):
      %y.5 : Tensor = aten::mul(%y.21, %b)
      -> (%5, %y.5)
  return (%y)
`
	g, err := Parse(src, nil)
	require.NoError(t, err)
	require.Len(t, g.Inputs(), 3)
	assert.Equal(t, "__torch__.___torch_mangle_0.M", g.Inputs()[0].Type.Name)
	nodes := g.Block.Nodes
	require.Len(t, nodes, 4)
	assert.Equal(t, "a.py:3:4", nodes[1].SourceRange)
	unpack := nodes[2]
	require.Len(t, unpack.Outputs, 2)
	assert.Equal(t, "b", unpack.Outputs[1].Name)
	assert.Equal(t, 1, unpack.Outputs[1].Offset)
	loop := nodes[3]
	require.Len(t, loop.Blocks, 1)
	body := loop.Blocks[0]
	assert.Equal(t, []string{"i", "y.21"}, []string{body.Inputs()[0].Name, body.Inputs()[1].Name})
	assert.Same(t, unpack.Outputs[1], body.Nodes[0].Inputs[1])
	assert.Equal(t, []Use{{User: body.Nodes[0], Index: 1}}, unpack.Outputs[1].Uses)
	assert.Same(t, body.Nodes[0].Outputs[0], body.Outputs()[1])
	assert.Same(t, loop.Outputs[0], g.Outputs()[0])
	// Fresh values never print like a parsed numeric name.
	v := g.NewNode("aten::relu", []*Value{g.Inputs()[1]}, 1).Outputs[0]
	assert.Greater(t, v.ID, 5)
}

func TestParseTypes(t *testing.T) {
	for _, s := range []string{
		"Tensor", "Float(3, 4, strides=[4, 1], requires_grad=0, device=cpu)", "Long(requires_grad=0, device=cpu)",
		"Float(*, *, requires_grad=0, device=cpu)", "Double(2, strides=[1], requires_grad=1, device=cuda:0)", "Float",
		"int", "float", "bool", "str", "NoneType", "Device", "Scalar", "int[]", "Tensor[]", "Tensor?", "int?",
		"Tensor?[]", "int[]?", "(Tensor, int)", "(int)", "()", "Dict(str, Tensor)", "Future[Tensor]", "Future[Tensor][]",
		"__torch__.___torch_mangle_0.M", "Any", "Layout", "ScalarType", "MemoryFormat", "Generator", "Function",
		"(Dict(str, Tensor), (int, float, str), str)", "float[][]",
	} {
		t.Run(s, func(t *testing.T) {
			p := &parser{src: s, opts: &ParseOptions{}}
			ty, err := p.parseType()
			require.NoError(t, err)
			assert.Equal(t, len(s), p.pos)
			assert.Equal(t, s, typeText(ty))
		})
	}
	p := &parser{src: "Float(3, 4, strides=[4, 1], requires_grad=0, device=cpu)", opts: &ParseOptions{}}
	ty, err := p.parseType()
	require.NoError(t, err)
	assert.Equal(t, ivalue.Float32, ty.DType)
	assert.Equal(t, []int{3, 4}, ty.Sizes)
	assert.Equal(t, []int{4, 1}, ty.Strides)
	require.NotNil(t, ty.RequiresGrad)
	assert.False(t, *ty.RequiresGrad)
	assert.Equal(t, "cpu", ty.Device)
}

const tensorSrc = `graph(%x : Tensor):
  %self.b : Float(3, strides=[1], requires_grad=0, device=cpu) = prim::Constant[value= 1.5000 -2.2500  3.0000 [ CPUFloatType{3} ]]()
  %w : Float(2, 2, strides=[2, 1], requires_grad=0, device=cpu) = prim::Constant[value=<Tensor>]()
  %s : Float(requires_grad=0, device=cpu) = prim::Constant[value={0.5}]()
  %y : Tensor = aten::mul(%x, %self.b)
  return (%y)
`

func TestParseBindsTensors(t *testing.T) {
	b := ivalue.F32Tensor([]float32{1.51, -2.25, 3}, 3)
	w := ivalue.F32Tensor([]float32{1, 2, 3, 4}, 2, 2)
	s := ivalue.ScalarTensor(0.5)
	b2 := ivalue.F32Tensor([]float32{7, 8, 9}, 3)

	g, err := Parse(tensorSrc, &ParseOptions{Tensors: []*ivalue.Tensor{b, w, s}})
	require.NoError(t, err)
	nodes := TensorConstantNodes(g)
	require.Len(t, nodes, 3)
	for i, want := range []*ivalue.Tensor{b, w, s} {
		v, _ := nodes[i].Attr("value")
		assert.Same(t, want, v.Tensor(), "constant %d", i)
	}
	// Printing keeps PyTorch's text, not the bound values.
	assert.Equal(t, tensorSrc, g.String())

	// Named takes precedence and keeps positions.
	g, err = Parse(tensorSrc, &ParseOptions{Tensors: []*ivalue.Tensor{b, w, s}, Named: map[string]*ivalue.Tensor{"self.b": b2}})
	require.NoError(t, err)
	v, _ := TensorConstantNodes(g)[0].Attr("value")
	assert.Same(t, b2, v.Tensor())
	v, _ = TensorConstantNodes(g)[1].Attr("value")
	assert.Same(t, w, v.Tensor())

	// Replacing the tensor drops the parsed text.
	nodes = TensorConstantNodes(g)
	nodes[2].SetAttr("value", ivalue.FromTensor(ivalue.ScalarTensor(0.25)))
	nodes[0].SetAttr("value", ivalue.FromTensor(b))
	out := g.String()
	assert.Contains(t, out, "prim::Constant[value={0.25}]()")
	assert.Contains(t, out, "%self.b : Float(3, strides=[1], requires_grad=0, device=cpu) = prim::Constant[value=<Tensor>]()")

	_, err = Parse(tensorSrc, &ParseOptions{Tensors: []*ivalue.Tensor{b, w}})
	assert.ErrorContains(t, err, "unbound tensor constant %s")
	_, err = Parse(tensorSrc, &ParseOptions{Tensors: []*ivalue.Tensor{w, w, s}})
	assert.ErrorContains(t, err, "tensor bound to %self.b does not fit its type")
	_, err = Parse(tensorSrc, &ParseOptions{Tensors: []*ivalue.Tensor{b, ivalue.I64Tensor([]int64{1, 2, 3, 4}, 2, 2), s}})
	assert.ErrorContains(t, err, "dtype int64, expected float32")
	_, err = Parse(tensorSrc, &ParseOptions{Tensors: []*ivalue.Tensor{b, w, s, s}})
	assert.ErrorContains(t, err, "4 tensors supplied but the graph has 3 tensor constants")

	g, err = Parse(tensorSrc, &ParseOptions{AllowUnboundTensors: true})
	require.NoError(t, err)
	for _, n := range TensorConstantNodes(g) {
		v, _ := n.Attr("value")
		assert.True(t, IsUnboundTensor(v.Tensor()))
	}
}

func TestParseSubgraphs(t *testing.T) {
	text := samples(t)["fork_loop_frozen"]
	g, err := Parse(text, &ParseOptions{AllowUnboundTensors: true})
	require.NoError(t, err)
	var forks []*Node
	g.Walk(func(n *Node) {
		if n.Kind == "prim::fork" {
			forks = append(forks, n)
		}
	})
	require.Len(t, forks, 2)
	for _, f := range forks {
		sg := Subgraph(f)
		require.NotNil(t, sg)
		assert.Equal(t, "aten::linear", sg.Block.Nodes[2].Kind)
	}
	// Binding order: the main graph's constants, then each subgraph's.
	nodes := TensorConstantNodes(g)
	require.Len(t, nodes, 4)
	assert.Equal(t, "self.bias", nodes[0].Outputs[0].Name)
	assert.Same(t, Subgraph(forks[0]), nodes[0].Graph())
	assert.Same(t, Subgraph(forks[1]), nodes[3].Graph())
}

// TestRoundTripForms covers forms PyTorch rarely prints: each line must
// parse, verify and print back unchanged.
func TestRoundTripForms(t *testing.T) {
	for _, line := range []string{
		`%a : Scalar = prim::Constant[value=2]()`,
		`%a : Scalar = prim::Constant[value=2.5]()`,
		`%a : int? = prim::Constant[value=3]()`,
		`%a : int? = prim::Constant[value=None]()`,
		`%a : Dict(str, int) = prim::Constant[value={"a": 1, "b": -2}]()`,
		`%a : Dict(int, float[]) = prim::Constant[value={1: [1., 2.5]}]()`,
		`%a : ((int, str), bool[]) = prim::Constant[value=((1, "x"), [True])]()`,
		`%a : int[][] = prim::Constant[value=[[1], annotate(List[int], [])]]()`,
		`%a : ScalarType = prim::Constant[value=6]()`,
		`%a : Tensor? = prim::Constant[value=<Tensor>]()`,
		`%a : Float(2, strides=[1], requires_grad=0, device=cpu) = prim::Constant[value= 1  2 [ CPUFloatType{2} ], extra=1]()`,
		`%a : Tensor = aten::foo[i=1, f=2.5, s="x\n", l=[1, 2], fl=[1.5], t=(1, "a"), n=None, b=True, e=[], neg=-inf]()`,
		`%a : Function = prim::Constant[name="relu"]()`,
		`%a : Tensor = prim::Constant()`,
	} {
		t.Run(line, func(t *testing.T) {
			src := "graph():\n  " + line + "\n  return (%a)\n"
			g, err := Parse(src, &ParseOptions{AllowUnboundTensors: true})
			require.NoError(t, err)
			require.Equal(t, src, g.String())
			if strings.Contains(line, "prim::Constant()") {
				assert.ErrorContains(t, g.Verify(), "prim::Constant (producing %a): no value, expected a value of type Tensor")
			} else {
				assert.NoError(t, g.Verify())
			}
		})
	}
}

func TestParseTracedScope(t *testing.T) {
	g, err := Parse(`graph(%x : Float(1, 4)):
  %1 : Tensor = aten::relu(%x), scope: __module.net/__module.net.1 # /usr/lib/python3/dist-packages/torch/nn/functional.py:1457:0
  %2 : Tensor = aten::neg(%1), scope: __module.net
  return (%2)
`, nil)
	require.NoError(t, err)
	require.Len(t, g.Block.Nodes, 2)
	assert.Equal(t, "/usr/lib/python3/dist-packages/torch/nn/functional.py:1457:0", g.Block.Nodes[0].SourceRange)
}
