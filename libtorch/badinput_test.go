package libtorch_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/libtorch"
	"github.com/gosr/gosr/ops"
	"github.com/gosr/gosr/staticruntime"
)

const mmGraph = `graph(%a : Tensor, %b : Tensor):
  %c : Tensor = aten::mm(%a, %b)
  %d : Tensor = aten::relu(%c)
  return (%d)
`

func mmRuntime(t *testing.T) *staticruntime.StaticRuntime {
	b := open(t)
	g, err := graph.Parse(mmGraph, nil)
	require.NoError(t, err)
	o := staticruntime.DefaultOptions()
	o.Backend, o.BackendMode = b, ops.BackendOnly
	m, err := staticruntime.NewStaticModule(g, &o)
	require.NoError(t, err)
	return m.NewRuntime()
}

func f32(rows, cols int, v float32) ivalue.IValue {
	d := make([]float32, rows*cols)
	for i := range d {
		d[i] = v
	}
	return ivalue.FromTensor(ivalue.F32Tensor(d, rows, cols))
}

// TestKernelErrors: libtorch's own errors come back as Go errors that
// name the node and carry libtorch's message; the runtime stays usable,
// before and after its out variants are warm.
func TestKernelErrors(t *testing.T) {
	r := mmRuntime(t)
	good := func() {
		out, err := r.Run(f32(2, 3, 1), f32(3, 4, 2))
		require.NoError(t, err)
		assert.Equal(t, []int{2, 4}, out[0].Tensor().Sizes())
		assert.Equal(t, float32(6), out[0].Tensor().F32Contig()[0])
	}
	tests := []struct {
		name string
		in   []ivalue.IValue
		want []string
	}{
		{"shape mismatch", []ivalue.IValue{f32(2, 3, 1), f32(4, 5, 1)},
			[]string{"aten::mm", "libtorch", "cannot be multiplied (2x3 and 4x5)"}},
		{"dtype libtorch rejects", []ivalue.IValue{
			ivalue.FromTensor(ivalue.BoolTensor([]bool{true, false, true, true}, 2, 2)),
			ivalue.FromTensor(ivalue.BoolTensor([]bool{true, false, true, true}, 2, 2))},
			[]string{"aten::mm", "not implemented for 'Bool'"}},
		{"rank the op rejects", []ivalue.IValue{
			ivalue.FromTensor(ivalue.F32Tensor([]float32{1, 2, 3})), f32(3, 4, 2)},
			[]string{"aten::mm", "self must be a matrix"}},
	}
	for _, warm := range []bool{false, true} {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				if warm {
					good()
				}
				_, err := r.Run(tc.in...)
				require.Error(t, err)
				for _, w := range tc.want {
					assert.Contains(t, err.Error(), w)
				}
				good()
				good()
			})
		}
	}
}

// TestConcurrentRuntimes: runtimes of one module on many goroutines,
// each with its own shapes, agree with the Go kernels (run with -race).
func TestConcurrentRuntimes(t *testing.T) {
	b := open(t)
	g, err := graph.Parse(mmGraph, nil)
	require.NoError(t, err)
	o := staticruntime.DefaultOptions()
	o.Backend, o.BackendMode = b, ops.BackendOnly
	m, err := staticruntime.NewStaticModule(g, &o)
	require.NoError(t, err)
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := m.NewRuntime()
			for i := 0; i < 50; i++ {
				n := 1 + (w+i)%5
				out, err := r.Run(f32(n, 3, 1), f32(3, 2, float32(w)))
				if !assert.NoError(t, err) {
					return
				}
				assert.Equal(t, []int{n, 2}, out[0].Tensor().Sizes())
				for _, x := range out[0].Tensor().F32Contig() {
					assert.Equal(t, float32(3*w), x)
				}
			}
		}()
	}
	wg.Wait()
}

// TestDevice: CUDA placement fails clearly where libtorch has no CUDA
// (Debian's is CPU-only) or no backend is given.
func TestDevice(t *testing.T) {
	b := open(t)
	require.NoError(t, b.CheckDevice("cpu"))
	g, err := graph.Parse(mmGraph, nil)
	require.NoError(t, err)
	o := staticruntime.DefaultOptions()
	o.Device = "cuda"
	_, err = staticruntime.NewStaticModule(g, &o)
	require.ErrorContains(t, err, "needs the libtorch backend")
	o.Backend, o.BackendMode = b, ops.BackendOnly
	_, err = staticruntime.NewStaticModule(g, &o)
	require.Error(t, err)
	if b.Info().CUDADevices == 0 {
		assert.Contains(t, err.Error(), "has no CUDA")
	}
	o.Device = "tpu"
	_, err = staticruntime.NewStaticModule(g, &o)
	require.ErrorContains(t, err, "unknown device")
}

// TestFakeShimOtherVersion builds a stand-in shim that reports another
// libtorch version and ABI, and checks the loader refuses it with a
// message saying to rebuild.
func TestFakeShimOtherVersion(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler")
	}
	dir := t.TempDir()
	for _, tc := range []struct{ name, info, want string }{
		{"abi", "gosr-torch abi=99 torch=1.13.0", "C ABI 99"},
		{"garbled", "something else", "unrecognised shim build line"},
	} {
		src := filepath.Join(dir, tc.name+".c")
		so := filepath.Join(dir, tc.name+".so")
		require.NoError(t, os.WriteFile(src, []byte(`const char* gosr_shim_info(void) { return "`+tc.info+`"; }
const char* gosr_torch_library(void) { return "/usr/lib/x86_64-linux-gnu/libtorch_cpu.so.1.13"; }
`), 0o644))
		out, err := exec.Command(cc, "-shared", "-fPIC", "-o", so, src).CombinedOutput()
		require.NoError(t, err, string(out))
		err = libtorch.LoadShimForTest(so)
		require.Error(t, err, tc.name)
		assert.Contains(t, err.Error(), tc.want)
		assert.Contains(t, err.Error(), "make libtorch")
	}
}
