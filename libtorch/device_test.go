package libtorch_test

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/libtorch"
	"github.com/gosr/gosr/ops"
	"github.com/gosr/gosr/staticruntime"
)

// devices are the devices the tests place modules on: libtorch's CPU
// allocator always, CUDA where libtorch has it and a GPU is present.
func devices(b *libtorch.Backend) []ivalue.Device {
	ds := []ivalue.Device{{Type: ivalue.TorchCPU}}
	if b.Info().CUDADevices > 0 {
		ds = append(ds, ivalue.Device{Type: ivalue.CUDA})
	}
	return ds
}

// TestDeviceMemory: tensors go to a device and back through libtorch's
// allocator and copy, strided and with dtype conversion, and the memory
// is freed once nothing refers to it.
func TestDeviceMemory(t *testing.T) {
	b := open(t)
	for _, d := range devices(b) {
		t.Run(d.String(), func(t *testing.T) {
			require.NoError(t, b.PlaceDevice(d))
			host := ivalue.F32Tensor([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
			dt, err := host.To(d)
			require.NoError(t, err)
			assert.Equal(t, d, dt.Device())
			assert.Equal(t, []int{2, 3}, dt.Sizes())
			assert.Panics(t, func() { dt.F32() }, "Go reads device memory")
			back, err := dt.To(ivalue.Device{})
			require.NoError(t, err)
			assert.Equal(t, []float32{1, 2, 3, 4, 5, 6}, back.F32Contig())

			// A transposed host view into the device: logical order.
			tr := &ivalue.Tensor{}
			tr.SetView(host, 0, []int{3, 2}, []int{1, 3})
			dtr, err := tr.To(d)
			require.NoError(t, err)
			assert.Equal(t, []float64{1, 4, 2, 5, 3, 6}, dtr.Float64s())

			// Device float32 into a host float64: converted.
			f64 := ivalue.NewTensor(ivalue.Float64, 2, 3)
			require.NoError(t, ivalue.CopyTo(f64, dt))
			assert.Equal(t, []float64{1, 2, 3, 4, 5, 6}, f64.F64Contig())
			assert.Contains(t, dt.Clone().String(), "on "+d.String())

			// Numel mismatch is an error, not a partial copy.
			require.ErrorContains(t, ivalue.CopyTo(ivalue.NewTensor(ivalue.Float32, 5), dt), "6 elements into 5")
		})
	}
	// Allocations die with their storages.
	live := b.DeviceStats().Live
	func() {
		for i := 0; i < 64; i++ {
			_, err := ivalue.NewTensorOn(ivalue.Device{Type: ivalue.TorchCPU}, ivalue.Float32, 1024)
			require.NoError(t, err)
		}
	}()
	deadline := time.Now().Add(5 * time.Second)
	for b.DeviceStats().Live > live && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	assert.LessOrEqual(t, b.DeviceStats().Live, live, "device allocations still live after their tensors died")
}

// mlpModule places a small graph (an out variant, an elementwise op, a
// reduction, a size query) on d with a weight and bias baked in as
// constants.
func mlpModule(t *testing.T, b *libtorch.Backend, dev string) *staticruntime.StaticModule {
	g, err := graph.Parse(`graph(%x : Tensor):
  %one : int = prim::Constant[value=1]()
  %keep : bool = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
  %w : Tensor = prim::Constant[value=<Tensor>]()
  %b : Tensor = prim::Constant[value=<Tensor>]()
  %h : Tensor = aten::linear(%x, %w, %b)
  %r : Tensor = aten::relu(%h)
  %n : int = aten::size(%r, %one)
  %one2 : int[] = prim::ListConstruct(%one)
  %s : Tensor = aten::sum(%r, %one2, %keep, %none)
  %m : Tensor = aten::mul(%s, %s)
  return (%m, %n)
`, &graph.ParseOptions{Named: map[string]*ivalue.Tensor{
		"w": ivalue.F32Tensor([]float32{1, -1, 0.5, 2, 0, -2}, 2, 3),
		"b": ivalue.F32Tensor([]float32{0.25, -0.5}, 2),
	}})
	require.NoError(t, err)
	o := staticruntime.DefaultOptions()
	o.Backend, o.BackendMode, o.Device = b, ops.BackendOnly, dev
	m, err := staticruntime.NewStaticModule(g, &o)
	require.NoError(t, err)
	return m
}

// mlpWant is the graph's first output, computed in Go.
func mlpWant(x []float32, rows int) []float32 {
	w := []float32{1, -1, 0.5, 2, 0, -2}
	bias := []float32{0.25, -0.5}
	out := make([]float32, rows)
	for i := 0; i < rows; i++ {
		var s float32
		for j := 0; j < 2; j++ {
			h := bias[j]
			for k := 0; k < 3; k++ {
				h += x[i*3+k] * w[j*3+k]
			}
			s += max(h, 0)
		}
		out[i] = s * s
	}
	return out
}

// TestDeviceModuleConcurrent: runtimes of one placed module on many
// goroutines, each with its own shapes, agree with a computation in Go
// (run with -race).
func TestDeviceModuleConcurrent(t *testing.T) {
	b := open(t)
	for _, d := range devices(b) {
		t.Run(d.String(), func(t *testing.T) {
			m := mlpModule(t, b, d.String())
			var wg sync.WaitGroup
			for w := 0; w < 6; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					r := m.NewRuntime()
					for i := 0; i < 40; i++ {
						rows := 1 + (w+i)%4
						x := make([]float32, rows*3)
						for k := range x {
							x[k] = float32((k+w+i)%7) - 3
						}
						out, err := r.Run(ivalue.FromTensor(ivalue.F32Tensor(x, rows, 3)))
						if !assert.NoError(t, err) {
							return
						}
						got := out[0].Tensor()
						assert.True(t, got.Device().IsHost())
						assert.InDeltaSlice(t, mlpWant(x, rows), got.F32Contig(), 1e-4)
						assert.Equal(t, int64(2), out[1].Int())
					}
				}()
			}
			wg.Wait()
			st := m.NewRuntime().MemoryStats()
			assert.Equal(t, d.String(), st.Device)
		})
	}
}

// TestDeviceBadInput: on a device, libtorch's errors name the node and
// the runtime stays usable; a Go kernel that would read device memory
// and options that cannot hold on a device are refused when the module
// is prepared.
func TestDeviceBadInput(t *testing.T) {
	b := open(t)
	for _, d := range devices(b) {
		t.Run(d.String(), func(t *testing.T) {
			m := mlpModule(t, b, d.String())
			r := m.NewRuntime()
			good := func() {
				out, err := r.Run(ivalue.FromTensor(ivalue.F32Tensor([]float32{1, 2, 3}, 1, 3)))
				require.NoError(t, err)
				assert.InDeltaSlice(t, mlpWant([]float32{1, 2, 3}, 1), out[0].Tensor().F32Contig(), 1e-4)
			}
			good()
			_, err := r.Run(ivalue.FromTensor(ivalue.F32Tensor([]float32{1, 2, 3, 4}, 1, 4)))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "aten::linear")
			assert.Contains(t, err.Error(), "cannot be multiplied")
			good()
			_, err = r.Run(ivalue.FromTensor(ivalue.I64Tensor([]int64{1, 2, 3}, 1, 3)))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "aten::linear")
			good()
		})
	}

	// A Go kernel that reads tensor data is refused when the module is
	// prepared, naming node, op and device.
	ops.RegisterNative("gosrtest::host_first", hostFirst)
	g, err := graph.Parse(`graph(%x : Tensor):
  %y : Tensor = aten::relu(%x)
  %f : float = gosrtest::host_first(%y)
  return (%f)
`, nil)
	require.NoError(t, err)
	o := staticruntime.DefaultOptions()
	o.Backend, o.BackendMode, o.Device = b, ops.BackendOnly, "libtorch-cpu"
	_, err = staticruntime.NewStaticModule(g, &o)
	require.ErrorIs(t, err, ops.ErrNoDeviceKernel)
	assert.ErrorContains(t, err, "node %f = gosrtest::host_first: gosrtest::host_first has no kernel on libtorch-cpu: its Go kernel reads tensor data")
	var nde *ops.NoDeviceKernelError
	require.ErrorAs(t, err, &nde)
	assert.Equal(t, "gosrtest::host_first", nde.Op)
	assert.Equal(t, "libtorch", nde.Backend)

	// An overload gosr keeps off libtorch is refused too, saying why.
	g, err = graph.Parse(`graph(%a : Tensor, %b : Tensor, %c : Tensor):
  %one : int = prim::Constant[value=1]()
  %y : Tensor = aten::baddbmm(%a, %b, %c, %one, %one)
  return (%y)
`, nil)
	require.NoError(t, err)
	_, err = staticruntime.NewStaticModule(g, &o)
	require.ErrorIs(t, err, ops.ErrNoDeviceKernel)
	assert.ErrorContains(t, err, "aten::baddbmm has no kernel on libtorch-cpu")
	assert.ErrorContains(t, err, "misreads")

	// A kernel marked MetadataOnly that reads data anyway (a bug) meets
	// the runtime's net: an error naming the node, not a crash.
	ops.RegisterNative("gosrtest::host_first_mislabeled", hostFirst, ops.MetadataOnly)
	g, err = graph.Parse(`graph(%x : Tensor):
  %y : Tensor = aten::relu(%x)
  %f : float = gosrtest::host_first_mislabeled(%y)
  return (%f)
`, nil)
	require.NoError(t, err)
	m, err := staticruntime.NewStaticModule(g, &o)
	require.NoError(t, err)
	_, err = m.NewRuntime().Run(ivalue.FromTensor(ivalue.F32Tensor([]float32{1, 2})))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "gosrtest::host_first_mislabeled")
	assert.Contains(t, err.Error(), "read by a Go kernel")
	var dae *ivalue.DeviceAccessError
	assert.ErrorAs(t, err, &dae)

	// Options refused up front.
	g, err = graph.Parse(mmGraph, nil)
	require.NoError(t, err)
	o.ManageOutputTensors = true
	_, err = staticruntime.NewStaticModule(g, &o)
	require.ErrorContains(t, err, "ManageOutputTensors")
	o.ManageOutputTensors = false
	o.BackendMode = ops.BackendGo
	_, err = staticruntime.NewStaticModule(g, &o)
	require.ErrorContains(t, err, "needs the libtorch backend")
}

// hostFirst reads its tensor's first element in Go.
func hostFirst(n *graph.Node) ops.Kernel {
	return func(p *ops.ProcessedNode) error {
		p.SetOutput(0, ivalue.FromDouble(float64(p.Tensor(0).F32()[0])))
		return nil
	}
}

// TestDeviceMetadataOps: the Go kernels that stay on a device (control
// flow, lists, size and device queries, which ATen's dispatcher lacks)
// run on the device's tensors and give PyTorch's answers.
func TestDeviceMetadataOps(t *testing.T) {
	b := open(t)
	g, err := graph.Parse(`graph(%x : Tensor, %n : int):
  %true : bool = prim::Constant[value=1]()
  %d : int = aten::dim(%x)
  %k : int = aten::numel(%x)
  %dev : Device = prim::device(%x)
  %cuda : bool = prim::is_cuda(%x)
  %l : Tensor[] = prim::ListConstruct(%x, %x)
  %a : Tensor, %c : Tensor = prim::ListUnpack(%l)
  %o : Tensor = prim::Loop(%n, %true, %a)
    block0(%i : int, %acc : Tensor):
      %acc2 : Tensor = aten::mul(%acc, %c)
      -> (%true, %acc2)
  return (%o, %d, %k, %dev, %cuda)
`, nil)
	require.NoError(t, err)
	for _, d := range devices(b) {
		t.Run(d.String(), func(t *testing.T) {
			require.NoError(t, b.PlaceDevice(d))
			o := staticruntime.DefaultOptions()
			o.Backend, o.BackendMode, o.Device = b, ops.BackendOnly, d.String()
			m, err := staticruntime.NewStaticModule(g, &o)
			require.NoError(t, err)
			out, err := m.NewRuntime().Run(ivalue.FromTensor(ivalue.F32Tensor([]float32{1, 2, 3, -1, 0.5, 2}, 2, 3)), ivalue.FromInt(2))
			require.NoError(t, err)
			require.Len(t, out, 5)
			assert.Equal(t, []float32{1, 8, 27, -1, 0.125, 8}, out[0].Tensor().F32Contig(), "x cubed")
			assert.Equal(t, int64(2), out[1].Int())
			assert.Equal(t, int64(6), out[2].Int())
			wantDev := "cpu" // libtorch's CPU memory is a CPU tensor to a model
			if d.Type == ivalue.CUDA {
				wantDev = d.String()
			}
			assert.Equal(t, wantDev, out[3].Str())
			assert.Equal(t, d.Type == ivalue.CUDA, out[4].Bool())
		})
	}
}
