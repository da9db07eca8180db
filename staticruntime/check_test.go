package staticruntime_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops"
	"github.com/gosr/gosr/staticruntime"
)

// lgammaBackend is a kernel backend that has aten::lgamma and nothing else.
type lgammaBackend struct{}

func (lgammaBackend) Name() string { return "fake" }
func (lgammaBackend) Kernel(n *graph.Node, _ ivalue.Device) (ops.Kernel, ops.Kind, error) {
	if n.Kind == "aten::lgamma" {
		return func(*ops.ProcessedNode) error { return nil }, ops.OutVariant, nil
	}
	return nil, 0, nil
}

const checkIR = `graph(%x : Tensor, %n : int):
  %a : Tensor = aten::lgamma(%x) # code/m.py:3:4
  %b : Tensor = aten::relu(%a) # code/m.py:4:4
  %c : Tensor = aten::digamma(%b) # code/m.py:5:4
  %t : bool = aten::gt(%n, %n)
  %d : Tensor = prim::If(%t)
    block0():
      %e : Tensor = aten::lgamma(%c) # code/m.py:8:8
      -> (%e)
    block1():
      -> (%c)
  return (%d)
`

func TestCheckListsEveryGap(t *testing.T) {
	for _, tc := range []struct {
		name    string
		backend ops.KernelBackend
		want    []staticruntime.Gap
	}{
		{"go", nil, []staticruntime.Gap{
			{Op: "aten::lgamma", Signature: "aten::lgamma(Tensor) -> (Tensor)", Sources: []string{"code/m.py:3:4", "code/m.py:8:8"}},
			{Op: "aten::digamma", Signature: "aten::digamma(Tensor) -> (Tensor)", Sources: []string{"code/m.py:5:4"}},
		}},
		{"backend", lgammaBackend{}, []staticruntime.Gap{
			{Op: "aten::lgamma", Signature: "aten::lgamma(Tensor) -> (Tensor)", Sources: []string{"code/m.py:3:4", "code/m.py:8:8"}, Backend: "fake"},
			{Op: "aten::digamma", Signature: "aten::digamma(Tensor) -> (Tensor)", Sources: []string{"code/m.py:5:4"}},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := graph.Parse(checkIR, nil)
			require.NoError(t, err)
			o := staticruntime.DefaultOptions()
			o.Backend = tc.backend
			gaps, err := staticruntime.Check(g, &o)
			require.NoError(t, err)
			require.Len(t, gaps, len(tc.want))
			for i := range gaps {
				assert.Contains(t, gaps[i].Reason, tc.want[i].Op)
				gaps[i].Reason = ""
			}
			assert.Equal(t, tc.want, gaps)
			// NewStaticModule stops at the first of them.
			g, err = graph.Parse(checkIR, nil)
			require.NoError(t, err)
			_, err = staticruntime.NewStaticModule(g, nil)
			require.ErrorContains(t, err, "aten::lgamma")
			require.ErrorContains(t, err, "code/m.py:3:4")
		})
	}
}

func TestCheckRunnableGraph(t *testing.T) {
	g, err := graph.Parse(`graph(%x : Tensor):
  %a : Tensor = aten::relu(%x)
  return (%a)
`, nil)
	require.NoError(t, err)
	gaps, err := staticruntime.Check(g, nil)
	require.NoError(t, err)
	assert.Empty(t, gaps)
}
