package passes

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// blockedHead declares a graph's input %x, four weights (%wsq: 16 to
// 16 channels 3x3, %wup: 16 to 32 1x1, %wodd: 16 to 24, %wb: 32 to 16) and
// the constants the convolutions read.
const blockedHead = `graph(%x : Tensor):
  %wsq : Tensor = prim::Constant[value=<Tensor>]()
  %wup : Tensor = prim::Constant[value=<Tensor>]()
  %wodd : Tensor = prim::Constant[value=<Tensor>]()
  %wb : Tensor = prim::Constant[value=<Tensor>]()
  %none : NoneType = prim::Constant()
  %s : int[] = prim::Constant[value=[1, 1]]()
  %s2 : int[] = prim::Constant[value=[2, 2]]()
  %s3 : int[] = prim::Constant[value=[3, 3]]()
  %z : int[] = prim::Constant[value=[0, 0]]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %false : bool = prim::Constant[value=0]()
  %lo : float = prim::Constant[value=0.]()
  %hi : float = prim::Constant[value=inf]()
  %act : str = prim::Constant[value="silu"]()
`

// blockedWeights are blockedHead's weights, in order.
func blockedWeights() []*ivalue.Tensor {
	return []*ivalue.Tensor{
		ivalue.NewTensor(ivalue.Float32, 16, 16, 3, 3),
		ivalue.NewTensor(ivalue.Float32, 32, 16, 1, 1),
		ivalue.NewTensor(ivalue.Float32, 24, 16, 1, 1),
		ivalue.NewTensor(ivalue.Float32, 16, 32, 1, 1),
	}
}

// kindsOf lists g's top-level node kinds but constants.
func kindsOf(g *graph.Graph) []string {
	var ks []string
	for _, n := range g.Block.Nodes {
		if n.Kind != graph.KindConstant {
			ks = append(ks, n.Kind)
		}
	}
	return ks
}

func TestUseBlockedLayout(t *testing.T) {
	resnet := `
  %c1 : Tensor = gosr::conv_clamp(%x, %wsq, %none, %s, %s, %s, %one, %lo, %hi)
  %c2 : Tensor = gosr::conv_add_clamp(%c1, %wsq, %none, %s, %s, %s, %one, %x, %lo, %hi)
  %c3 : Tensor = aten::conv2d(%c2, %wup, %none, %s2, %z, %s, %one)
  return (%c3)`
	cases := []struct {
		name string
		body string
		ctx  *Context
		want []string // kinds after, constants left out; nil: as before
	}{
		{name: "resnet block: one reorder at each end", body: resnet,
			want: []string{ToNCHWcKind, ConvNCHWcKind, ConvNCHWcKind, ConvNCHWcKind, FromNCHWcKind}},
		{name: "two convolutions, two reorders: left in planes", body: `
  %c1 : Tensor = gosr::conv_clamp(%x, %wsq, %none, %s, %s, %s, %one, %lo, %hi)
  %c2 : Tensor = gosr::conv_act(%c1, %wup, %none, %s, %z, %s, %one, %act)
  return (%c2)`},
		{name: "output read outside and inside", body: `
  %c1 : Tensor = gosr::conv_clamp(%x, %wsq, %none, %s, %s, %s, %one, %lo, %hi)
  %c2 : Tensor = gosr::conv_clamp(%c1, %wsq, %none, %s, %s, %s, %one, %lo, %hi)
  %c3 : Tensor = gosr::conv_clamp(%c2, %wsq, %none, %s, %s, %s, %one, %lo, %hi)
  %c4 : Tensor = gosr::conv_act(%c3, %wup, %none, %s, %z, %s, %one, %act)
  %m : Tensor = aten::mul(%c1, %two)
  return (%c4, %m)`,
			want: []string{ToNCHWcKind, ConvNCHWcKind, FromNCHWcKind, ConvNCHWcKind, ConvNCHWcKind, ConvNCHWcKind, FromNCHWcKind, "aten::mul"}},
		{name: "residual the chain does not read: that convolution stays out", body: `
  %y : Tensor = aten::mul(%x, %two)
  %c1 : Tensor = gosr::conv_clamp(%x, %wsq, %none, %s, %s, %s, %one, %lo, %hi)
  %c2 : Tensor = gosr::conv_add_clamp(%c1, %wsq, %none, %s, %s, %s, %one, %y, %lo, %hi)
  %c3 : Tensor = gosr::conv_clamp(%c2, %wsq, %none, %s, %s, %s, %one, %lo, %hi)
  %c4 : Tensor = gosr::conv_clamp(%c3, %wsq, %none, %s, %s, %s, %one, %lo, %hi)
  %c5 : Tensor = aten::conv2d(%c4, %wup, %none, %s, %z, %s, %one)
  return (%c5)`,
			want: []string{"aten::mul", "gosr::conv_clamp", "gosr::conv_add_clamp", ToNCHWcKind, ConvNCHWcKind, ConvNCHWcKind, ConvNCHWcKind, FromNCHWcKind}},
		{name: "input written in place: left in planes", body: `
  %c1 : Tensor = gosr::conv_clamp(%x, %wsq, %none, %s, %s, %s, %one, %lo, %hi)
  %c2 : Tensor = gosr::conv_clamp(%c1, %wsq, %none, %s, %s, %s, %one, %lo, %hi)
  %m : Tensor = aten::mul_(%x, %two)
  %c3 : Tensor = gosr::conv_add_clamp(%c2, %wsq, %none, %s, %s, %s, %one, %x, %lo, %hi)
  %c4 : Tensor = aten::conv2d(%c3, %wup, %none, %s, %z, %s, %one)
  return (%c4)`},
		{name: "output channels not a multiple of 16 end the chain", body: `
  %c1 : Tensor = gosr::conv_clamp(%x, %wsq, %none, %s, %s, %s, %one, %lo, %hi)
  %c2 : Tensor = gosr::conv_clamp(%c1, %wsq, %none, %s, %s, %s, %one, %lo, %hi)
  %c3 : Tensor = aten::conv2d(%c2, %wodd, %none, %s, %z, %s, %one)
  return (%c3)`},
		{name: "stride 3, dilation and groups end the chain", body: `
  %c1 : Tensor = aten::conv2d(%x, %wsq, %none, %s3, %s, %s, %one)
  %c2 : Tensor = aten::conv2d(%c1, %wsq, %none, %s, %s, %s2, %one)
  %c3 : Tensor = aten::conv2d(%c2, %wsq, %none, %s, %s, %s, %two)
  return (%c3)`},
		{name: "32 to 16 channels and _convolution join", body: `
  %c1 : Tensor = aten::conv2d(%x, %wup, %none, %s, %z, %s, %one)
  %c2 : Tensor = aten::_convolution(%c1, %wb, %none, %s, %z, %s, %false, %z, %one, %false, %false, %false, %false)
  %c3 : Tensor = gosr::conv_act(%c2, %wsq, %none, %s, %s, %s, %one, %act)
  return (%c3)`,
			want: []string{ToNCHWcKind, ConvNCHWcKind, ConvNCHWcKind, ConvNCHWcKind, FromNCHWcKind}},
		{name: "op not in the runtime", body: resnet, ctx: &Context{HasOp: func(k string) bool { return k != FromNCHWcKind }}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g := parseTemplate(t, blockedHead+tc.body, blockedWeights()...)
			before := kindsOf(g)
			c := tc.ctx
			if c == nil {
				c = fakeOps()
			}
			require.NoError(t, UseBlockedLayout(g, c))
			require.NoError(t, Verify(g))
			want := tc.want
			if want == nil {
				want = before
			}
			require.Equal(t, want, kindsOf(g), "graph after:\n%s", g)
		})
	}
}

// TestUseBlockedLayoutWiring checks what the rewritten resnet block
// reads: the reorder of the input for the first convolution and for
// the residual, each convolution's epilogue kept, and the reorder back
// returned.
func TestUseBlockedLayoutWiring(t *testing.T) {
	g := parseTemplate(t, blockedHead+`
  %c1 : Tensor = gosr::conv_clamp(%x, %wsq, %none, %s, %s, %s, %one, %lo, %hi)
  %c2 : Tensor = gosr::conv_add_clamp(%c1, %wsq, %none, %s, %s, %s, %one, %x, %lo, %hi)
  %c3 : Tensor = gosr::conv_act(%c2, %wup, %none, %s2, %z, %s, %one, %act)
  return (%c3)`, blockedWeights()...)
	require.NoError(t, UseBlockedLayout(g, fakeOps()))
	require.NoError(t, Verify(g))
	var convs []*graph.Node
	var in, out *graph.Node
	for _, n := range g.Block.Nodes {
		switch n.Kind {
		case ConvNCHWcKind:
			convs = append(convs, n)
		case ToNCHWcKind:
			in = n
		case FromNCHWcKind:
			out = n
		}
	}
	require.Len(t, convs, 3)
	require.NotNil(t, in)
	require.NotNil(t, out)
	require.Equal(t, "x", in.Inputs[0].DebugName())
	constant := func(v *graph.Value) string {
		c, ok := graph.ConstantValue(v)
		require.True(t, ok, "%s is a constant", v)
		return fmt.Sprint(c)
	}
	// conv_nchwc(input, weight, bias, stride, padding, dilation, groups, other, min, max, act)
	require.Same(t, in.Outputs[0], convs[0].Inputs[0])
	require.Equal(t, "None", constant(convs[0].Inputs[7]))
	require.Equal(t, []string{"0", "+Inf", ""}, []string{constant(convs[0].Inputs[8]), constant(convs[0].Inputs[9]), strings.Trim(constant(convs[0].Inputs[10]), `"'`)})
	require.Same(t, convs[0].Outputs[0], convs[1].Inputs[0])
	require.Same(t, in.Outputs[0], convs[1].Inputs[7], "the residual reads the same reorder")
	require.Same(t, convs[1].Outputs[0], convs[2].Inputs[0])
	require.Equal(t, "-Inf", constant(convs[2].Inputs[8]))
	require.Equal(t, "silu", strings.Trim(constant(convs[2].Inputs[10]), `"'`))
	require.Equal(t, "s2", convs[2].Inputs[3].DebugName())
	require.Same(t, convs[2].Outputs[0], out.Inputs[0])
	require.Same(t, out.Outputs[0], g.Block.Return.Inputs[0])
}

// TestUseBlockedLayoutLinear: a chain of 20,000 residual blocks (a
// hostile graph's size) goes blocked in one pass over it, in time
// linear in its size: one reorder in, one out.
func TestUseBlockedLayoutLinear(t *testing.T) {
	const blocks = 20_000
	var b strings.Builder
	b.WriteString(blockedHead)
	prev := "%x"
	for i := range blocks {
		fmt.Fprintf(&b, "  %%c%d : Tensor = gosr::conv_clamp(%s, %%wsq, %%none, %%s, %%s, %%s, %%one, %%lo, %%hi)\n", i, prev)
		fmt.Fprintf(&b, "  %%r%d : Tensor = gosr::conv_add_clamp(%%c%d, %%wsq, %%none, %%s, %%s, %%s, %%one, %s, %%lo, %%hi)\n", i, i, prev)
		prev = fmt.Sprintf("%%r%d", i)
	}
	b.WriteString("  return (" + prev + ")\n")
	g := parseTemplate(t, b.String(), blockedWeights()...)
	start := time.Now()
	require.NoError(t, UseBlockedLayout(g, fakeOps()))
	elapsed := time.Since(start)
	counts := map[string]int{}
	for _, k := range kindsOf(g) {
		counts[k]++
	}
	require.Equal(t, map[string]int{ToNCHWcKind: 1, ConvNCHWcKind: 2 * blocks, FromNCHWcKind: 1}, counts)
	// Linear: tens of milliseconds here; a pass quadratic in the
	// chain would take minutes.
	require.Less(t, elapsed, 20*time.Second)
}

// TestUseBlockedLayoutDeterministic: a graph of six chains reading one
// input comes out the same, value numbers included, on every run, the
// six sharing the input's reorder.
func TestUseBlockedLayoutDeterministic(t *testing.T) {
	var b strings.Builder
	b.WriteString(blockedHead)
	for c := range 6 {
		prev := "%x"
		for i := range 3 {
			fmt.Fprintf(&b, "  %%c%d_%d : Tensor = gosr::conv_clamp(%s, %%wsq, %%none, %%s, %%s, %%s, %%one, %%lo, %%hi)\n", c, i, prev)
			prev = fmt.Sprintf("%%c%d_%d", c, i)
		}
		fmt.Fprintf(&b, "  %%m%d : Tensor = aten::mul(%s, %%two)\n", c, prev)
	}
	b.WriteString("  return (%m0, %m1, %m2, %m3, %m4, %m5)\n")
	var first string
	for run := range 10 {
		g := parseTemplate(t, b.String(), blockedWeights()...)
		require.NoError(t, UseBlockedLayout(g, fakeOps()))
		require.NoError(t, Verify(g))
		if run == 0 {
			first = g.String()
			require.Equal(t, 1, strings.Count(first, ToNCHWcKind+"("), "the chains reading %%x share its reorder:\n%s", first)
			require.Equal(t, 6, strings.Count(first, FromNCHWcKind+"("), "one reorder out a chain:\n%s", first)
			continue
		}
		require.Equal(t, first, g.String(), "run %d", run)
	}
}
