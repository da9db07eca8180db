package passes

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// convAvgPoolGraph is a convolution CONV of constant weight %w (or %x
// where W says so) and bias BIAS whose output %c goes through an
// average pooling of kernel %k, stride STRIDE, padding PAD and divisor
// DIV, with USE after it.
const convAvgPoolGraph = `graph(%x : Tensor, %b : Tensor):
  %w : Tensor = prim::Constant[value=<Tensor>]()
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %three : int = prim::Constant[value=3]()
  %false : bool = prim::Constant[value=0]()
  %true : bool = prim::Constant[value=1]()
  %s1 : int[] = prim::Constant[value=[1, 1]]()
  %s2 : int[] = prim::Constant[value=[2, 2]]()
  %p0 : int[] = prim::Constant[value=[0, 0]]()
  %p1 : int[] = prim::Constant[value=[1, 1]]()
  %e : int[] = prim::Constant[value=[]]()
  %c : Tensor = CONV
  %r : Tensor = aten::avg_pool2d(%c, %s2, STRIDE, PAD, %false, %true, DIV)
  USE
  return (%r)`

func TestPoolBeforePointwiseConv(t *testing.T) {
	const conv2d = "aten::conv2d(%x, W, BIAS, CS, CP, %s1, %one)"
	const conv = "aten::_convolution(%x, W, BIAS, CS, CP, %s1, %false, %p0, %one, %false, %false, %true, %true)"
	w1 := ivalue.F32Tensor(make([]float32, 8*4), 8, 4, 1, 1)
	w3 := ivalue.F32Tensor(make([]float32, 8*4*9), 8, 4, 3, 3)
	for _, tc := range []struct {
		name, conv, weight, bias, cs, cp, stride, pad, div, use string
		w                                                       *ivalue.Tensor
		moves                                                   bool
	}{
		{name: "densenet's transition (_convolution, no bias)", conv: conv, moves: true},
		{name: "conv2d with a bias", conv: conv2d, bias: "%b", moves: true},
		{name: "stride=[] (the kernel's)", conv: conv, stride: "%e", moves: true},
		{name: "divisor_override without a bias", conv: conv, div: "%three", moves: true},
		{name: "divisor_override with a bias", conv: conv, bias: "%b", div: "%three"},
		{name: "padded pooling", conv: conv, pad: "%p1"},
		{name: "pooling at stride 1", conv: conv, stride: "%s1"},
		{name: "3x3 convolution", conv: conv, w: w3},
		{name: "strided convolution", conv: conv, cs: "%s2"},
		{name: "padded convolution", conv: conv, cp: "%p1"},
		{name: "weight not a constant", conv: conv, weight: "%x"},
		{name: "convolution read twice", conv: conv, use: "%z : Tensor = aten::relu(%c)"},
		{name: "transposed", conv: strings.Replace(conv, "%s1, %false, %p0", "%s1, %true, %p0", 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			def := func(s, d string) string {
				if s == "" {
					return d
				}
				return s
			}
			cv := strings.NewReplacer("W,", def(tc.weight, "%w")+",", "BIAS", def(tc.bias, "%none"), "CS", def(tc.cs, "%s1"), "CP", def(tc.cp, "%p0")).Replace(tc.conv)
			src := strings.NewReplacer("CONV", cv, "STRIDE", def(tc.stride, "%s2"), "PAD", def(tc.pad, "%p0"), "DIV", def(tc.div, "%none"), "USE", tc.use).Replace(convAvgPoolGraph)
			w := tc.w
			if w == nil {
				w = w1
			}
			g := parseTemplate(t, src, w)
			convKind := g.Block.Nodes[len(g.Block.Nodes)-2].Kind
			if tc.use != "" {
				convKind = g.Block.Nodes[len(g.Block.Nodes)-3].Kind
			}
			require.NoError(t, PoolBeforePointwiseConv(g, fakeOps()))
			require.NoError(t, Verify(g))
			var order []string
			for _, n := range g.Block.Nodes {
				if n.Kind != graph.KindConstant {
					order = append(order, n.Kind)
				}
			}
			if !tc.moves {
				want := []string{convKind, "aten::avg_pool2d"}
				if tc.use != "" {
					want = []string{convKind, "aten::avg_pool2d", "aten::relu"}
				}
				assert.Equal(t, want, order, "nothing moved")
				return
			}
			require.Equal(t, []string{"aten::avg_pool2d", convKind}, order)
			pool, moved := g.Block.Nodes[len(g.Block.Nodes)-2], g.Block.Nodes[len(g.Block.Nodes)-1]
			assert.Equal(t, "x", pool.Inputs[0].DebugName(), "the pooling reads the convolution's input")
			assert.Equal(t, pool.Outputs[0], moved.Inputs[0], "the convolution reads the pooling")
			assert.Equal(t, g.Outputs()[0], moved.Outputs[0], "the convolution's output is returned")
			assert.Equal(t, "w", moved.Inputs[1].DebugName())
		})
	}
}
