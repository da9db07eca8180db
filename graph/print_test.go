package graph

import (
	"math"
	"testing"

	"github.com/gosr/gosr/ivalue"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPrintBuiltGraph prints a graph made with the constructors, in
// PyTorch's layout (checked against print(scripted.graph) samples).
func TestPrintBuiltGraph(t *testing.T) {
	g := New()
	x := g.AddInput("x.1", Tensor)
	c := g.AddInput("c", Bool)
	one := g.Constant(ivalue.FromInt(1), Int, nil)
	none := g.Constant(ivalue.None(), None, nil)
	_ = none
	split := g.Block.Append(g.NewNode("aten::split", []*Value{x, one}, 1))
	split.Outputs[0].Type = ListOf(Tensor)
	unpack := g.Block.Append(g.NewNode("prim::ListUnpack", []*Value{split.Outputs[0]}, 2))
	unpack.Outputs[0].Name = "a"
	unpack.Outputs[1].Name = "a" // duplicate debug name: printed uniquely
	ifn := g.Block.Append(g.NewNode("prim::If", []*Value{c}, 1))
	then := ifn.AddBlock()
	relu := then.Append(g.NewNode("aten::relu", []*Value{unpack.Outputs[0]}, 1))
	relu.Outputs[0].Type = &Type{Kind: TensorType, DType: ivalue.Float32, Sizes: []int{3, -1}, Device: "cpu"}
	then.AddOutput(relu.Outputs[0])
	els := ifn.AddBlock()
	els.Append(g.NewNode("prim::RaiseException", []*Value{unpack.Outputs[1]}, 0))
	els.AddOutput(unpack.Outputs[1])
	tup := g.Block.Append(g.NewNode("prim::TupleConstruct", []*Value{ifn.Outputs[0], one}, 1))
	tup.Outputs[0].Type = TupleOf(Tensor, Int)
	g.AddOutput(tup.Outputs[0])

	want := `graph(%x.1 : Tensor,
      %c : bool):
  %3 : NoneType = prim::Constant()
  %2 : int = prim::Constant[value=1]()
  %4 : Tensor[] = aten::split(%x.1, %2)
  %a : Tensor, %a_1 : Tensor = prim::ListUnpack(%4)
  %7 : Tensor = prim::If(%c)
    block0():
      %8 : Float(3, *, device=cpu) = aten::relu(%a)
      -> (%8)
    block1():
       = prim::RaiseException(%a_1)
      -> (%a_1)
  %9 : (Tensor, int) = prim::TupleConstruct(%7, %2)
  return (%9)
`
	assert.Equal(t, want, g.String())
	g2, err := Parse(g.String(), nil)
	require.NoError(t, err)
	assert.Equal(t, want, g2.String())
}

func TestFormatDouble(t *testing.T) {
	// Expected strings are what PyTorch 1.13 prints (see testdata/constants_misc.ir).
	for _, tt := range []struct {
		in   float64
		want string
	}{
		{2, "2."}, {-3, "-3."}, {math.Copysign(0, -1), "-0."}, {0, "0."}, {2.5, "2.5"},
		{1e-5, "1.0000000000000001e-05"}, {0.1, "0.10000000000000001"}, {1e10, "10000000000"},
		{1e15, "1000000000000000"}, {1e20, "1e+20"}, {3e-300, "3.0000000000000002e-300"},
		{123456789.5, "123456789.5"}, {0.0001, "0.0001"}, {math.Inf(1), "inf"}, {math.Inf(-1), "-inf"},
		{math.NaN(), "nan"}, {math.Copysign(math.NaN(), -1), "-nan"}, {1e-6 * 0.99999999999999995, "9.9999999999999995e-07"},
	} {
		assert.Equal(t, tt.want, formatDouble(tt.in), "%v", tt.in)
	}
	assert.Equal(t, "3.14159", formatC(3.14159265, 6))
	assert.Equal(t, "1e+06", formatC(1e6, 6))
	assert.Equal(t, "100000", formatC(1e5, 6))
}

func TestQuoteString(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"plain", `"plain"`},
		{"a\"b\\c\n", `"a\"b\\c\n"`},
		{"\t'\a\b\f\r\v", `"\t\'\a\b\f\r\v"`},
		{"\x01\x7f", `"\001\177"`},
		{"café", `"caf\0)+\/.)"`}, // PyTorch's signed-char codes
	} {
		assert.Equal(t, tt.want, quoteString(tt.in))
		p := &parser{src: tt.want, opts: &ParseOptions{}}
		back, err := p.quoted()
		require.NoError(t, err)
		assert.Equal(t, tt.in, back)
	}
}

func TestTypeText(t *testing.T) {
	rg := false
	for _, tt := range []struct {
		t    *Type
		want string
	}{
		{Tensor, "Tensor"},
		{&Type{Kind: TensorType, DType: ivalue.Float32}, "Float"},
		{&Type{Kind: TensorType, DType: ivalue.Int64, RequiresGrad: &rg, Device: "cpu"}, "Long(requires_grad=0, device=cpu)"},
		{&Type{Kind: TensorType, DType: ivalue.Float32, Sizes: []int{3, 4}, Strides: []int{4, 1}, RequiresGrad: &rg, Device: "cpu"}, "Float(3, 4, strides=[4, 1], requires_grad=0, device=cpu)"},
		{&Type{Kind: TensorType, Sizes: []int{-1, 2}, Strides: []int{-1, 1}}, "Tensor(*, 2)"},
		{FutureOf(Tensor), "Future[Tensor]"},
		{TupleOf(Int), "(int)"},
		{ListOf(OptionalOf(Tensor)), "Tensor?[]"},
		{DictOf(Str, ListOf(Int)), "Dict(str, int[])"},
		{&Type{Kind: DictType}, "Dict(Any, Any)"},
		{nil, "Any"},
	} {
		assert.Equal(t, tt.want, typeText(tt.t))
	}
	assert.Equal(t, "List[Tuple[int, Optional[str]]]", annotationText(ListOf(TupleOf(Int, OptionalOf(Str)))))
}

func TestPrintSanitizesNames(t *testing.T) {
	g := New()
	x := g.AddInput("a b", Tensor)
	y := g.AddInput("", Int)
	n := g.Block.Append(g.NewNode("aten::relu", []*Value{x}, 1))
	n.Outputs[0].Name = "1" // collides with y's ID-based name
	g.AddOutput(n.Outputs[0])
	g.AddOutput(y)
	want := "graph(%a_b : Tensor,\n      %1 : int):\n  %1_1 : Tensor = aten::relu(%a_b)\n  return (%1_1, %1)\n"
	require.Equal(t, want, g.String())
	g2, err := Parse(want, nil)
	require.NoError(t, err)
	require.NoError(t, g2.Verify())
}
