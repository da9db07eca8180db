package passes_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/graph/passes"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops"
)

// opsContext fills the op-set fields from gosr's kernels, as staticruntime
// does: these tests run the pipeline the runtime runs.
func opsContext() *passes.Context {
	known := map[string]bool{}
	for _, k := range ops.Registered() {
		known[k] = true
	}
	return &passes.Context{
		Eval:         ops.EvalNode,
		HasOp:        func(kind string) bool { return known[kind] },
		FunctionalOf: ops.FunctionalOf,
	}
}

// The whole pipeline runs on every IR sample PyTorch printed, keeping the
// graph valid after each pass and printable/parsable at the end.
func TestPipelineOnSamples(t *testing.T) {
	files, err := filepath.Glob("../testdata/*.ir")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			src, err := os.ReadFile(f)
			require.NoError(t, err)
			opts := &graph.ParseOptions{AllowUnboundTensors: true}
			g, err := graph.Parse(string(src), opts)
			require.NoError(t, err)
			var trace []string
			c := opsContext()
			c.EnableOutVariant, c.Verify = true, true
			c.Trace = func(p string, _ *graph.Graph) { trace = append(trace, p) }
			require.NoError(t, passes.Run(g, c))
			require.Equal(t, passes.Names(), trace)
			_, err = graph.Parse(g.String(), opts)
			require.NoError(t, err, "printed graph after the pipeline:\n%s", g)
			if ins := g.Inputs(); len(ins) > 0 && ins[0].Type.Kind == graph.ClassType {
				assert.NotEmpty(t, ins[0].Uses, "unused self should be gone")
			}
			g.Walk(func(n *graph.Node) {
				assert.NotEqual(t, "aten::detach", n.Kind)
			})
		})
	}
}

func TestPipelineAttention(t *testing.T) {
	src, err := os.ReadFile("../testdata/attn_frozen.ir")
	require.NoError(t, err)
	g, err := graph.Parse(string(src), &graph.ParseOptions{AllowUnboundTensors: true})
	require.NoError(t, err)
	c := opsContext()
	c.EnableOutVariant, c.Verify = true, true
	require.NoError(t, passes.Run(g, c))
	require.Len(t, g.Inputs(), 2, "self removed")
	text := g.String()
	// The transpose feeding matmul stays a view (no copy variant); the
	// optional-mask branch keeps its unchecked_cast.
	assert.Contains(t, text, "aten::transpose")
	assert.Contains(t, text, "prim::unchecked_cast")
	assert.Contains(t, text, "aten::layer_norm")
}

// ops.EvalNode runs the registered kernels: tensor results become tensor
// constants.
func TestConstantPropagationEvalNode(t *testing.T) {
	g, err := graph.Parse(`graph(%x : Tensor):
  %a : Tensor = prim::Constant[value=<Tensor>]()
  %b : Tensor = prim::Constant[value=<Tensor>]()
  %one : int = prim::Constant[value=1]()
  %c : Tensor = aten::add(%a, %b, %one)
  %d : Tensor = aten::relu(%c)
  %y : Tensor = aten::mul(%x, %d)
  return (%y)
`, &graph.ParseOptions{Named: map[string]*ivalue.Tensor{
		"a": ivalue.F32Tensor([]float32{1, -5, 3}, 3),
		"b": ivalue.F32Tensor([]float32{1, 1, 1}, 3),
	}})
	require.NoError(t, err)
	require.NoError(t, passes.ConstantPropagation(g, opsContext()))
	require.NoError(t, passes.Verify(g))
	mul := g.Outputs()[0].Node
	require.Equal(t, "aten::mul", mul.Kind)
	v, ok := graph.ConstantValue(mul.Inputs[1])
	require.True(t, ok, "relu(add(a, b)) should be a constant, got %s", mul.Inputs[1].Node.Kind)
	require.True(t, v.IsTensor())
	assert.Equal(t, []float32{2, 0, 4}, v.Tensor().Contiguous().F32Contig())
	assert.Equal(t, []int{3}, v.Tensor().Sizes())
}

// The internal tests' fake op set says what ops says of the ops it names.
func TestFakeOpsMatchOps(t *testing.T) {
	registered := ops.Registered()
	for in, fn := range passes.FakeFunctional {
		assert.Equal(t, fn, ops.FunctionalOf(in), in)
		assert.Contains(t, registered, fn)
		assert.Contains(t, registered, in)
	}
}
