package ops_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops"
)

// reluBackend has aten::relu and nothing else; its kernel is told apart
// from Go's by the error it returns.
type reluBackend struct{}

var errReluBackend = errors.New("reluBackend's kernel")

func (reluBackend) Name() string { return "fakelib" }
func (reluBackend) Kernel(n *graph.Node, _ ivalue.Device) (ops.Kernel, ops.Kind, error) {
	if n.Kind == "aten::relu" {
		return func(*ops.ProcessedNode) error { return errReluBackend }, ops.OutVariant, nil
	}
	return nil, 0, nil
}

const deviceSelectIR = `graph(%x : Tensor, %n : int):
  %r : Tensor = aten::relu(%x)
  %d : int = aten::dim(%r)
  %l : Tensor[] = prim::ListConstruct(%r, %x)
  %dev : Device = prim::device(%r)
  %m : int = aten::mul(%n, %d)
  %t : Tensor = prim::NumToTensor(%m)
  %h : Scalar = aten::ScalarImplicit(%t)
  %s : Tensor = aten::sigmoid(%r)
  %i : int = aten::Int(%r)
  %y : float[] = prim::tolist(%r, %n, %n)
  %e : Scalar = aten::ScalarImplicit(%r)
  return (%l, %dev, %h, %s, %i, %y, %e)
`

// TestSelectOnDevice: on a device, the backend runs what it has; Go keeps
// the ops whose kernels touch no tensor element (MetadataOnly), those
// that take no tensor and those that read only tensors Go made on the
// host; every other Go kernel (out variant or native) is refused with a
// NoDeviceKernelError naming op, device and backend.
func TestSelectOnDevice(t *testing.T) {
	g, err := graph.Parse(deviceSelectIR, nil)
	require.NoError(t, err)
	dev := ivalue.Device{Type: ivalue.TorchCPU}
	opts := ops.Options{Backend: reluBackend{}, BackendMode: ops.BackendOnly, Device: dev, HostTensors: map[*graph.Value]bool{}}
	want := []string{ // per node: "backend", "go" or "refused"
		"backend", // relu
		"go",      // dim: MetadataOnly
		"go",      // ListConstruct
		"go",      // prim::device
		"go",      // mul of ints: no tensor
		"go",      // NumToTensor: makes a host tensor, reads none
		"go",      // ScalarImplicit of that host tensor
		"refused", // sigmoid: an out variant
		"refused", // Int: native, reads the element
		"refused", // tolist
		"refused", // ScalarImplicit of a device tensor
	}
	require.Len(t, g.Block.Nodes, len(want))
	for i, n := range g.Block.Nodes {
		t.Run(n.Outputs[0].DebugName()+"="+n.Kind, func(t *testing.T) {
			k, _, err := ops.Select(n, opts)
			switch want[i] {
			case "backend":
				require.NoError(t, err)
				assert.ErrorIs(t, k(nil), errReluBackend)
			case "go":
				require.NoError(t, err)
				require.NotNil(t, k)
			case "refused":
				require.Error(t, err)
				assert.Nil(t, k)
				assert.ErrorIs(t, err, ops.ErrNoDeviceKernel)
				var nde *ops.NoDeviceKernelError
				require.ErrorAs(t, err, &nde)
				assert.Equal(t, n.Kind, nde.Op)
				assert.Equal(t, dev, nde.Device)
				assert.Equal(t, "fakelib", nde.Backend)
				assert.Contains(t, err.Error(), n.Kind+" has no kernel on libtorch-cpu: its Go kernel reads tensor data")
			}
		})
	}
	assert.Len(t, opts.HostTensors, 1, "only NumToTensor's output is on the host")

	// On the host the same Go kernels are chosen, refused ones included.
	opts.Device = ivalue.Device{}
	for _, n := range g.Block.Nodes {
		_, _, err := ops.Select(n, opts)
		assert.NoError(t, err, n.Kind)
	}
}

// TestMetadataOnlyTrait: a builder registered MetadataOnly runs on a
// device's tensors; the same kernel registered without it is refused
// there (unmarked kernels are taken to read tensor data).
func TestMetadataOnlyTrait(t *testing.T) {
	build := func(n *graph.Node) ops.Kernel {
		return func(p *ops.ProcessedNode) error { return nil }
	}
	ops.RegisterNative("gosrtest::meta_marked", build, ops.MetadataOnly)
	ops.RegisterNative("gosrtest::meta_unmarked", build)
	opts := ops.Options{Backend: reluBackend{}, BackendMode: ops.BackendOnly, Device: ivalue.Device{Type: ivalue.CUDA, Index: 1}}
	for _, tc := range []struct {
		op      string
		allowed bool
	}{
		{"gosrtest::meta_marked", true},
		{"gosrtest::meta_unmarked", false},
	} {
		t.Run(tc.op, func(t *testing.T) {
			g, err := graph.Parse("graph(%x : Tensor):\n  %s : int = "+tc.op+"(%x)\n  return (%s)\n", nil)
			require.NoError(t, err)
			_, _, err = ops.Select(g.Block.Nodes[0], opts)
			if tc.allowed {
				assert.NoError(t, err)
				return
			}
			assert.ErrorIs(t, err, ops.ErrNoDeviceKernel)
			assert.ErrorContains(t, err, tc.op+" has no kernel on cuda:1")
		})
	}
}
