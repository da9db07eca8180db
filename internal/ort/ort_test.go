package ort

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/internal/reference"
	"github.com/gosr/gosr/ivalue"
)

// The tests need ONNX Runtime's library ($GOSR_ORT_LIB) and PyTorch
// (/usr/bin/python3) to export models; they skip without them unless
// GOSR_REQUIRE_ORT is set (CI, which installs the library).
const python = "/usr/bin/python3"

func requireORT(t *testing.T) string {
	t.Helper()
	path := os.Getenv("GOSR_ORT_LIB")
	_, required := os.LookupEnv("GOSR_REQUIRE_ORT")
	if _, err := os.Stat(path); path == "" || err != nil {
		if required {
			t.Fatalf("GOSR_REQUIRE_ORT is set but GOSR_ORT_LIB=%q is not a file", path)
		}
		t.Skip("no ONNX Runtime library: set GOSR_ORT_LIB (" + InstallHint + ")")
	}
	if err := exec.Command(python, "-c", "import torch").Run(); err != nil {
		if required {
			t.Fatalf("GOSR_REQUIRE_ORT is set but %s cannot import torch: %v", python, err)
		}
		t.Skipf("%s cannot import torch: %v", python, err)
	}
	return path
}

// exportScript writes tiny models with torch.onnx.export (opset 14, as
// srbench compare exports) and, as JSON, their inputs and PyTorch's
// outputs.
const exportScript = `
import json, sys, torch
torch.manual_seed(0)
out = sys.argv[1]

class Two(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(3, 4)
        self.emb = torch.nn.Embedding(10, 4)
    def forward(self, x, idx):
        return torch.relu(self.lin(x)), self.emb(idx) * 2

conv = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
                           torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, 5)).eval()
two = Two().eval()
cases = {
    "conv": (conv, (torch.randn(2, 3, 8, 8),), ["image"], ["logits"], {"image": {0: "batch"}}),
    "two": (two, (torch.randn(2, 3), torch.tensor([1, 7, 3, 0])), ["x", "idx"], ["y", "e"], None),
}
doc = {}
for name, (m, inputs, ins, outs, dyn) in cases.items():
    with torch.no_grad():
        want = m(*inputs)
    want = want if isinstance(want, tuple) else (want,)
    torch.onnx.export(m, inputs, "%s/%s.onnx" % (out, name), opset_version=14,
                      input_names=ins, output_names=outs, dynamic_axes=dyn)
    doc[name] = {
        "inputs": [{"dtype": str(t.dtype), "shape": list(t.shape), "data": t.flatten().tolist()} for t in inputs],
        "outputs": [{"shape": list(t.shape), "data": t.flatten().tolist()} for t in want],
    }
json.dump(doc, open(out + "/cases.json", "w"))
`

type jsonTensor struct {
	DType string    `json:"dtype"`
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
}

func (j jsonTensor) tensor() *ivalue.Tensor {
	if j.DType == "torch.int64" {
		d := make([]int64, len(j.Data))
		for i, v := range j.Data {
			d[i] = int64(v)
		}
		return ivalue.I64Tensor(d, j.Shape...)
	}
	d := make([]float32, len(j.Data))
	for i, v := range j.Data {
		d[i] = float32(v)
	}
	return ivalue.F32Tensor(d, j.Shape...)
}

type exported struct {
	dir   string
	cases map[string]struct {
		Inputs  []jsonTensor `json:"inputs"`
		Outputs []jsonTensor `json:"outputs"`
	}
}

// The models are exported once per test binary (PyTorch takes seconds to
// start), into a directory TestMain removes.
var (
	exportOnce sync.Once
	exportDir  string
	exportErr  error
	exportData *exported
)

func TestMain(m *testing.M) {
	code := m.Run()
	if exportDir != "" {
		os.RemoveAll(exportDir)
	}
	os.Exit(code)
}

func export(t *testing.T) *exported {
	t.Helper()
	exportOnce.Do(func() {
		if exportDir, exportErr = os.MkdirTemp("", "ort-test"); exportErr != nil {
			return
		}
		script := filepath.Join(exportDir, "export.py")
		if exportErr = os.WriteFile(script, []byte(exportScript), 0o644); exportErr != nil {
			return
		}
		if out, err := exec.Command(python, script, exportDir).CombinedOutput(); err != nil {
			exportErr = fmt.Errorf("%s: %v: %s", script, err, out)
			return
		}
		e := &exported{dir: exportDir}
		b, err := os.ReadFile(filepath.Join(exportDir, "cases.json"))
		if err == nil {
			err = json.Unmarshal(b, &e.cases)
		}
		exportData, exportErr = e, err
	})
	require.NoError(t, exportErr)
	return exportData
}

func TestRunMatchesPyTorch(t *testing.T) {
	lib := requireORT(t)
	e := export(t)
	for _, tc := range []struct {
		model   string
		inputs  []string
		outputs []string
	}{
		{"conv", []string{"image"}, []string{"logits"}},
		{"two", []string{"x", "idx"}, []string{"y", "e"}},
	} {
		t.Run(tc.model, func(t *testing.T) {
			s, err := NewSession(filepath.Join(e.dir, tc.model+".onnx"), Options{Library: lib})
			require.NoError(t, err)
			defer s.Close()
			assert.Equal(t, tc.inputs, s.Inputs())
			assert.Equal(t, tc.outputs, s.Outputs())
			c := e.cases[tc.model]
			var in []*ivalue.Tensor
			for _, j := range c.Inputs {
				in = append(in, j.tensor())
			}
			got, err := s.Run(in...)
			require.NoError(t, err)
			require.Len(t, got, len(c.Outputs))
			for i, w := range c.Outputs {
				assert.Equal(t, w.Shape, got[i].Sizes(), "output %d", i)
				assert.NoError(t, reference.Compare(got[i], w.tensor(), 1e-4, 1e-5), "output %d", i)
			}
		})
	}
}

// A dynamic axis takes any size: a batch of 5 through a model exported
// with a batch of 2 gives each row the batch-of-one result.
func TestDynamicBatch(t *testing.T) {
	lib := requireORT(t)
	e := export(t)
	s, err := NewSession(filepath.Join(e.dir, "conv.onnx"), Options{Library: lib, IntraOpThreads: 2})
	require.NoError(t, err)
	defer s.Close()
	assert.Equal(t, []int64{-1, 3, 8, 8}, s.inDims[0])
	x := e.cases["conv"].Inputs[0].tensor() // [2 3 8 8]
	row := x.F32()[:3*8*8]
	five := make([]float32, 0, 5*len(row))
	for range 5 {
		five = append(five, row...)
	}
	got, err := s.Run(ivalue.F32Tensor(five, 5, 3, 8, 8))
	require.NoError(t, err)
	require.Equal(t, []int{5, 5}, got[0].Sizes())
	want := e.cases["conv"].Outputs[0].Data[:5]
	for b := range 5 {
		for j, w := range want {
			assert.InDelta(t, w, got[0].F32()[b*5+j], 1e-5, "row %d col %d", b, j)
		}
	}
}

// A prepared Call runs again and again without allocating, over inputs
// whose values may change between runs.
func TestCallReuse(t *testing.T) {
	lib := requireORT(t)
	e := export(t)
	s, err := NewSession(filepath.Join(e.dir, "two.onnx"), Options{Library: lib})
	require.NoError(t, err)
	defer s.Close()
	c := e.cases["two"]
	x, idx := c.Inputs[0].tensor(), c.Inputs[1].tensor()
	// Named in the other order.
	call, err := s.Bind([]string{"idx", "x"}, []*ivalue.Tensor{idx, x})
	require.NoError(t, err)
	defer call.Close()
	require.NoError(t, call.Run())
	allocs := testing.AllocsPerRun(20, func() {
		if err := call.Run(); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs, "allocations per Call.Run")
	out, err := call.Outputs()
	require.NoError(t, err)
	assert.NoError(t, reference.Compare(out[1], c.Outputs[1].tensor(), 0, 1e-6))
	// New values in place: the next run reads them.
	copy(idx.I64(), []int64{0, 0, 0, 0})
	require.NoError(t, call.Run())
	out, err = call.Outputs()
	require.NoError(t, err)
	e0 := out[1].F32()
	for i := 1; i < 4; i++ {
		assert.Equal(t, e0[:4], e0[i*4:i*4+4])
	}
	assert.NotEqual(t, c.Outputs[1].Data[4], float64(e0[4]))
}

func TestBadInput(t *testing.T) {
	lib := requireORT(t)
	e := export(t)
	two := filepath.Join(e.dir, "two.onnx")
	garbage := filepath.Join(t.TempDir(), "garbage.onnx")
	require.NoError(t, os.WriteFile(garbage, []byte("not a model"), 0o644))
	_, err := NewSession(filepath.Join(e.dir, "missing.onnx"), Options{Library: lib})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "missing.onnx")
	var oe *Error
	require.True(t, errors.As(err, &oe), "%v", err)
	assert.Equal(t, "CreateSession", oe.Op)
	_, err = NewSession(garbage, Options{Library: lib})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "garbage.onnx")
	_, err = NewSession(two, Options{Library: lib, IntraOpThreads: -1})
	assert.ErrorContains(t, err, "IntraOpThreads -1")
	_, err = NewSession(two, Options{Library: lib, Optimization: 7})
	assert.ErrorContains(t, err, "Optimization 7")

	s, err := NewSession(two, Options{Library: lib})
	require.NoError(t, err)
	defer s.Close()
	x := ivalue.F32Tensor(make([]float32, 6), 2, 3)
	idx := ivalue.I64Tensor(make([]int64, 4), 4)
	for _, tc := range []struct {
		name   string
		names  []string
		inputs []*ivalue.Tensor
		want   []string
	}{
		{"wrong name", []string{"x", "nope"}, []*ivalue.Tensor{x, idx}, []string{"two.onnx", `no input named "nope"`, "x, idx"}},
		{"twice", []string{"x", "x"}, []*ivalue.Tensor{x, x}, []string{`input "x" given twice`}},
		{"wrong dtype", nil, []*ivalue.Tensor{x, ivalue.F32Tensor(make([]float32, 4), 4)}, []string{`input "idx"`, "got float32 [4]", "wants int64 [4]"}},
		{"wrong shape", nil, []*ivalue.Tensor{ivalue.F32Tensor(make([]float32, 8), 2, 4), idx}, []string{`input "x"`, "got float32 [2 4]", "wants float32 [2 3]"}},
		{"wrong rank", nil, []*ivalue.Tensor{ivalue.F32Tensor(make([]float32, 6), 6), idx}, []string{`input "x"`, "[6]"}},
		{"too few", nil, []*ivalue.Tensor{x}, []string{"1 input names for 1 inputs"}},
		{"names and inputs", []string{"x"}, []*ivalue.Tensor{x, idx}, []string{"1 input names for 2 inputs"}},
		{"nil", nil, []*ivalue.Tensor{x, nil}, []string{`input "idx": nil tensor`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "too few" {
				_, err := s.RunNamed([]string{"x"}, tc.inputs)
				assert.ErrorContains(t, err, "1 inputs given; the model takes 2 (x, idx)")
				return
			}
			_, err := s.RunNamed(tc.names, tc.inputs)
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
	// An index out of the embedding's range fails in ONNX Runtime's
	// kernel: its message comes back.
	_, err = s.Run(x, ivalue.I64Tensor([]int64{0, 1, 99, 2}, 4))
	require.Error(t, err)
	require.True(t, errors.As(err, &oe), "%v", err)
	assert.Equal(t, "Run", oe.Op)
	assert.NotEmpty(t, oe.Message)
	assert.Contains(t, err.Error(), "two.onnx")

	require.NoError(t, s.Close())
	_, err = s.Run(x, idx)
	assert.ErrorContains(t, err, "the session is closed")
}

// The error path's slots (CreateStatus, GetErrorCode, GetErrorMessage,
// ReleaseStatus) read back what was made.
func TestStatus(t *testing.T) {
	lib := requireORT(t)
	l, err := load(lib)
	require.NoError(t, err)
	msg := cString("it broke")
	st := call(l.fn[slotCreateStatus], 2, uintptr(unsafe.Pointer(&msg[0])))
	err = l.status("Op", st)
	var oe *Error
	require.True(t, errors.As(err, &oe))
	assert.Equal(t, Error{Op: "Op", Code: 2, Message: "it broke"}, *oe)
	assert.NoError(t, l.status("Op", 0))
	info, err := Available("")
	require.NoError(t, err)
	assert.Regexp(t, `^1\.\d+\.\d+`, info.Version)
}

func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct {
		path string
		want string
	}{
		{"", "no library path given"},
		{"/nonexistent/libonnxruntime.so.1", "no library at /nonexistent/libonnxruntime.so.1"},
		{"/", "no library at /"},
	} {
		_, err := loadLib(tc.path)
		require.Error(t, err)
		assert.ErrorIs(t, err, ErrNoLibrary)
		assert.Contains(t, err.Error(), tc.want)
		assert.Contains(t, err.Error(), "npm install")
	}
	// A shared library that is not ONNX Runtime's.
	for _, p := range []string{"/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6"} {
		if _, err := os.Stat(p); err == nil {
			_, err := loadLib(p)
			assert.ErrorIs(t, err, ErrNoLibrary)
			assert.ErrorContains(t, err, "no OrtGetApiBase")
			break
		}
	}
}

// Options.ProfilePrefix writes ONNX Runtime's per-node profile when the
// session closes: a Chrome trace with one model_run per run and the
// convolution's kernel time among its nodes.
func TestProfile(t *testing.T) {
	lib := requireORT(t)
	e := export(t)
	prefix := filepath.Join(t.TempDir(), "prof")
	s, err := NewSession(filepath.Join(e.dir, "conv.onnx"), Options{Library: lib, ProfilePrefix: prefix})
	require.NoError(t, err)
	c := e.cases["conv"]
	for range 3 {
		_, err = s.Run(c.Inputs[0].tensor())
		require.NoError(t, err)
	}
	require.NoError(t, s.Close())
	files, err := filepath.Glob(prefix + "*.json")
	require.NoError(t, err)
	require.Len(t, files, 1, "profile files")
	b, err := os.ReadFile(files[0])
	require.NoError(t, err)
	var events []struct {
		Cat, Name string
		Args      map[string]any
	}
	require.NoError(t, json.Unmarshal(b, &events))
	runs, convs := 0, 0
	for _, ev := range events {
		switch {
		case ev.Cat == "Session" && ev.Name == "model_run":
			runs++
		case ev.Cat == "Node" && ev.Args["op_name"] == "Conv":
			convs++
		}
	}
	assert.Equal(t, 3, runs, "model_run events")
	assert.Positive(t, convs, "Conv node events")
}
