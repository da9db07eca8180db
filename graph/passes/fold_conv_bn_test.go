package passes

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

const convBNBefore = `
graph(%x : Tensor):
  %w : Float(2, 1, 1, 1) = prim::Constant[value=<Tensor>]()
  %b : Float(2) = prim::Constant[value=<Tensor>]()
  %g : Float(2) = prim::Constant[value=<Tensor>]()
  %beta : Float(2) = prim::Constant[value=<Tensor>]()
  %m : Float(2) = prim::Constant[value=<Tensor>]()
  %v : Float(2) = prim::Constant[value=<Tensor>]()
  %s : int[] = prim::Constant[value=[1, 1]]()
  %p : int[] = prim::Constant[value=[0, 0]]()
  %one : int = prim::Constant[value=1]()
  %f : bool = prim::Constant[value=0]()
  %t : bool = prim::Constant[value=1]()
  %mom : float = prim::Constant[value=0.1]()
  %eps : float = prim::Constant[value=0.5]()
  %none : NoneType = prim::Constant()
  %c : Tensor = aten::conv2d(%x, %w, %BIAS, %s, %p, %s, %one)
  %y : Tensor = aten::batch_norm(%c, %g, %beta, %m, %v, %TRAINING, %mom, %eps, %t)
  %USE
  return (%y)`

func convBNGraph(t *testing.T, bias, training, use string) *graph.Graph {
	src := strings.NewReplacer("%BIAS", bias, "%TRAINING", training, "%USE", use).Replace(convBNBefore)
	f := func(v ...float32) *ivalue.Tensor { return ivalue.F32Tensor(v, len(v)) }
	w := ivalue.F32Tensor([]float32{2, -3}, 2, 1, 1, 1)
	return parseTemplate(t, src, w, f(1, 0.5), f(3, 4), f(0.25, -1), f(0.5, 2), f(1.5, 3.5))
}

func TestFoldConvBatchNorm(t *testing.T) {
	for _, tc := range []struct {
		name, bias, training, use string
		folds                     bool
		wantW, wantB              []float64
	}{
		// scale = g / sqrt(v + eps) = 3/sqrt(2), 4/sqrt(4) = 2.1213, 2
		{name: "with bias", bias: "%b", training: "%f", folds: true,
			wantW: []float64{2 * 3 / math.Sqrt2, -3 * 2}, wantB: []float64{(1-0.5)*3/math.Sqrt2 + 0.25, (0.5-2)*2 - 1}},
		{name: "conv without bias", bias: "%none", training: "%f", folds: true,
			wantW: []float64{2 * 3 / math.Sqrt2, -3 * 2}, wantB: []float64{-0.5*3/math.Sqrt2 + 0.25, -2*2 - 1}},
		{name: "training batch norm stays", bias: "%b", training: "%t"},
		{name: "conv output used elsewhere stays", bias: "%b", training: "%f", use: "%z : Tensor = aten::relu(%c)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := convBNGraph(t, tc.bias, tc.training, tc.use)
			require.NoError(t, FoldConvBatchNorm(g, &Context{}))
			require.NoError(t, Verify(g))
			var conv, bn *graph.Node
			g.Walk(func(n *graph.Node) {
				switch n.Kind {
				case "aten::conv2d":
					conv = n
				case "aten::batch_norm":
					bn = n
				}
			})
			require.NotNil(t, conv)
			if !tc.folds {
				assert.NotNil(t, bn, "batch_norm must stay")
				return
			}
			require.Nil(t, bn, "batch_norm must be folded")
			assert.Equal(t, conv.Outputs[0], g.Outputs()[0], "the conv's output is returned")
			w, ok := graph.ConstantValue(conv.Inputs[1])
			require.True(t, ok)
			b, ok := graph.ConstantValue(conv.Inputs[2])
			require.True(t, ok)
			assert.Equal(t, []int{2, 1, 1, 1}, w.Tensor().Sizes())
			assert.InDeltaSlice(t, tc.wantW, w.Tensor().Float64s(), 1e-6)
			assert.InDeltaSlice(t, tc.wantB, b.Tensor().Float64s(), 1e-6)
		})
	}
}
