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

// reluDevice is a device backend with aten::relu only. Modules are
// prepared on it, not run (it allocates nothing).
type reluDevice struct{}

func (reluDevice) Name() string { return "fakelib" }
func (reluDevice) Kernel(n *graph.Node, _ ivalue.Device) (ops.Kernel, ops.Kind, error) {
	if n.Kind == "aten::relu" {
		return func(*ops.ProcessedNode) error { return nil }, ops.OutVariant, nil
	}
	return nil, 0, nil
}
func (reluDevice) PlaceDevice(ivalue.Device) error { return nil }

// TestDeviceRefusesGoKernels: a module placed off the host whose node
// has only a Go kernel that reads tensor data fails in NewStaticModule
// with an error naming the node, its op and the device (not in its first
// run); one whose Go nodes touch only metadata prepares.
func TestDeviceRefusesGoKernels(t *testing.T) {
	for _, tc := range []struct {
		name, ir string
		node     string // "" when it prepares
		op       string
	}{
		{"metadata only", `graph(%x : Tensor, %n : int):
  %r : Tensor = aten::relu(%x)
  %d : int = aten::dim(%r)
  %l : Tensor[] = prim::ListConstruct(%r, %x)
  %a : Tensor, %b : Tensor = prim::ListUnpack(%l)
  %true : bool = prim::Constant[value=1]()
  %o : Tensor = prim::Loop(%n, %true, %a)
    block0(%i : int, %c : Tensor):
      %c2 : Tensor = aten::relu(%c)
      -> (%true, %c2)
  return (%o, %d, %b)
`, "", ""},
		{"reads an element", `graph(%x : Tensor):
  %r : Tensor = aten::relu(%x)
  %i : int = aten::Int(%r) # code/m.py:7:8
  return (%i)
`, "node %i = aten::Int (code/m.py:7:8)", "aten::Int"},
		{"out variant in a loop", `graph(%x : Tensor, %n : int):
  %true : bool = prim::Constant[value=1]()
  %o : Tensor = prim::Loop(%n, %true, %x)
    block0(%i : int, %c : Tensor):
      %c2 : Tensor = aten::sigmoid(%c)
      -> (%true, %c2)
  return (%o)
`, "node %c2 = aten::sigmoid", "aten::sigmoid"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := graph.Parse(tc.ir, nil)
			require.NoError(t, err)
			o := staticruntime.DefaultOptions()
			o.Backend, o.BackendMode, o.Device = reluDevice{}, ops.BackendOnly, "libtorch-cpu"
			m, err := staticruntime.NewStaticModule(g, &o)
			if tc.node == "" {
				require.NoError(t, err)
				assert.Equal(t, "libtorch-cpu", m.Device().String())
				return
			}
			require.Error(t, err)
			assert.Nil(t, m)
			assert.ErrorIs(t, err, ops.ErrNoDeviceKernel)
			var nde *ops.NoDeviceKernelError
			require.ErrorAs(t, err, &nde)
			assert.Equal(t, tc.op, nde.Op)
			assert.Equal(t, ivalue.Device{Type: ivalue.TorchCPU}, nde.Device)
			assert.Contains(t, err.Error(), tc.node+": "+tc.op+" has no kernel on libtorch-cpu")
		})
	}
}
