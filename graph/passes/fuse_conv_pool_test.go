package passes

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// convPoolGraph is a gosr::conv_clamp of weight W (a constant tensor, or
// %x for a weight that is not one) whose output %c goes through POOL,
// with USE after it.
const convPoolGraph = `graph(%x : Tensor, %b : Tensor):
  %w : Tensor = prim::Constant[value=<Tensor>]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %lo : float = prim::Constant[value=0.]()
  %hi : float = prim::Constant[value=inf]()
  %false : bool = prim::Constant[value=0]()
  %s : int[] = prim::ListConstruct(%one, %one)
  %k : int[] = prim::ListConstruct(%two, %two)
  %c : Tensor = gosr::conv_clamp(%x, W, %b, %s, %s, %s, %one, %lo, %hi)
  %r : Tensor = POOL
  USE
  return (%r)`

func TestFuseConvMaxPool(t *testing.T) {
	for _, tc := range []struct {
		name, weight, pool, use string
		w                       *ivalue.Tensor
		fuses                   bool
	}{
		{name: "conv_clamp then max_pool2d", weight: "%w", pool: "aten::max_pool2d(%c, %k, %k, %s, %s, %false)",
			w: ivalue.F32Tensor(make([]float32, 16*3*3*3), 16, 3, 3, 3), fuses: true},
		{name: "conv output read twice", weight: "%w", pool: "aten::max_pool2d(%c, %k, %k, %s, %s, %false)",
			use: "%z : Tensor = aten::relu(%c)", w: ivalue.F32Tensor(make([]float32, 16*3*3*3), 16, 3, 3, 3)},
		{name: "weight not a constant", weight: "%x", pool: "aten::max_pool2d(%c, %k, %k, %s, %s, %false)",
			w: ivalue.F32Tensor(make([]float32, 16*3*3*3), 16, 3, 3, 3)},
		{name: "a 1-d convolution's weight", weight: "%w", pool: "aten::max_pool2d(%c, %k, %k, %s, %s, %false)",
			w: ivalue.F32Tensor(make([]float32, 16*3*3), 16, 3, 3)},
		{name: "a 7x7 stem stays", weight: "%w", pool: "aten::max_pool2d(%c, %k, %k, %s, %s, %false)",
			w: ivalue.F32Tensor(make([]float32, 16*3*7*7), 16, 3, 7, 7)},
		{name: "average pooling", weight: "%w", pool: "aten::avg_pool2d(%c, %k, %k, %s, %false, %false, %one)",
			w: ivalue.F32Tensor(make([]float32, 16*3*3*3), 16, 3, 3, 3)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.NewReplacer("W,", tc.weight+",", "POOL", tc.pool, "USE", tc.use).Replace(convPoolGraph)
			g := parseTemplate(t, src, tc.w)
			require.NoError(t, FuseConvMaxPool(g, fakeOps()))
			require.NoError(t, Verify(g))
			kinds := map[string]int{}
			var fused *graph.Node
			g.Walk(func(n *graph.Node) {
				kinds[n.Kind]++
				if n.Kind == ConvClampMaxPoolKind {
					fused = n
				}
			})
			if !tc.fuses {
				assert.Nil(t, fused, "nothing fused")
				assert.Equal(t, 1, kinds[ConvClampKind])
				return
			}
			require.NotNil(t, fused)
			assert.Zero(t, kinds[ConvClampKind], "the conv_clamp is gone")
			assert.Zero(t, kinds["aten::max_pool2d"], "the pooling is gone")
			assert.Equal(t, g.Outputs()[0], fused.Outputs[0], "the fused node's output is returned")
			// conv_clamp's nine inputs, then the pooling's five after its input.
			require.Len(t, fused.Inputs, 14)
			names := make([]string, len(fused.Inputs))
			for i, v := range fused.Inputs {
				names[i] = v.DebugName()
			}
			assert.Equal(t, []string{"x", "w", "b", "s", "s", "s", "one", "lo", "hi", "k", "k", "s", "s", "false"}, names)
		})
	}
}

// The pass off where the runtime lacks the op.
func TestFuseConvMaxPoolNeedsOp(t *testing.T) {
	src := strings.NewReplacer("W,", "%w,", "POOL", "aten::max_pool2d(%c, %k, %k, %s, %s, %false)", "USE", "").Replace(convPoolGraph)
	g := parseTemplate(t, src, ivalue.F32Tensor(make([]float32, 16*27), 16, 3, 3, 3))
	require.NoError(t, FuseConvMaxPool(g, &Context{HasOp: func(string) bool { return false }}))
	n := 0
	g.Walk(func(nd *graph.Node) {
		if nd.Kind == ConvClampMaxPoolKind {
			n++
		}
	})
	assert.Zero(t, n)
}
