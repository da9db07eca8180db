package main

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/internal/reference"
	"github.com/gosr/gosr/internal/stats"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders"
	"github.com/gosr/gosr/staticruntime"
)

// saveOutputs writes a run's outputs with torch.save's format: one output
// as itself, several as a tuple.
func saveOutputs(path string, outs []ivalue.IValue) error {
	v := ivalue.NewTuple(outs...)
	if len(outs) == 1 {
		v = outs[0]
	}
	return loaders.WriteTorchSave(path, v.Clone())
}

//go:embed pytorch_bench_pt.py
var pytorchBenchPT string

// loadScriptModel loads a TorchScript archive with its inputs and expected
// outputs (torch.save files).
func loadScriptModel(path string, f modelFlags) (*model, error) {
	sm, err := loaders.Load(path)
	if err != nil {
		return nil, err
	}
	base := strings.TrimSuffix(path, ".pt")
	name := filepath.Base(base)
	// NAME.variant.pt shares NAME.inputs.pt and NAME.expected.pt.
	stem := base
	if i := strings.LastIndexByte(filepath.Base(base), '.'); i > 0 {
		stem = filepath.Join(filepath.Dir(base), filepath.Base(base)[:i])
	}
	inputs, expected := f.inputs, f.expected
	if inputs == "" {
		for _, p := range []string{base + ".inputs.pt", stem + ".inputs.pt"} {
			if _, err := os.Stat(p); err == nil {
				inputs = p
				break
			}
		}
	}
	if expected == "" && f.inputs == "" {
		for _, p := range []string{base + ".expected.pt", stem + ".expected.pt"} {
			if _, err := os.Stat(p); err == nil {
				expected = p
				break
			}
		}
	}
	m := &model{Case: &reference.Case{Name: name}, ptPath: path, inputsPath: inputs, script: sm}
	for _, p := range []string{base + ".onnx", stem + ".onnx"} {
		if _, err := os.Stat(p); err == nil {
			m.onnxPath = p
			break
		}
	}
	if inputs == "" {
		return nil, fmt.Errorf("%s: no inputs: pass -inputs FILE.pt (a torch.save of the tuple of forward's inputs)", path)
	}
	in, err := loaders.ReadTorchSave(inputs)
	if err != nil {
		return nil, err
	}
	switch in.Kind() {
	case ivalue.KindTuple, ivalue.KindList:
		m.Inputs = in.List().Items
	case ivalue.KindDict: // keyword arguments, by forward's parameter names
		for _, name := range sm.InputNames {
			v, ok := in.Dict().Get(ivalue.FromString(name))
			if !ok {
				return nil, fmt.Errorf("%s: %s has no entry %q (forward takes %s)", path, inputs, name, strings.Join(sm.InputNames, ", "))
			}
			m.Inputs = append(m.Inputs, v)
		}
		if n := len(in.Dict().Keys); n != len(sm.InputNames) {
			return nil, fmt.Errorf("%s: %s has %d entries; forward takes %d (%s)", path, inputs, n, len(sm.InputNames), strings.Join(sm.InputNames, ", "))
		}
	default:
		m.Inputs = []ivalue.IValue{in}
	}
	if len(m.Inputs) != len(sm.InputNames) {
		return nil, fmt.Errorf("%s: %s holds %d inputs; forward takes %d (%s)", path, inputs, len(m.Inputs), len(sm.InputNames), strings.Join(sm.InputNames, ", "))
	}
	if expected != "" {
		out, err := loaders.ReadTorchSave(expected)
		if err != nil {
			return nil, err
		}
		m.Expected = reference.Flatten([]ivalue.IValue{out})
	}
	return m, nil
}

// scriptGraph reloads the archive's graph: preparation rewrites a graph,
// and each StaticModule needs its own.
func (m *model) scriptGraph() (*graph.Graph, error) {
	if m.script.Graph != nil {
		g := m.script.Graph
		m.script.Graph = nil // the first user takes the loaded one
		return g, nil
	}
	sm, err := loaders.Load(m.ptPath)
	if err != nil {
		return nil, err
	}
	return sm.Graph, nil
}

// torchResult is the last line pytorch_bench_pt.py prints.
type torchResult struct {
	InterpUs        []float64 `json:"interp_us"`
	SRUs            []float64 `json:"sr_us"`
	LoadMs          float64   `json:"load_ms"`
	FreezeMs        float64   `json:"freeze_ms"`
	StaticModuleMs  float64   `json:"static_module_ms"`
	PrepareMs       float64   `json:"prepare_ms"`
	OutputsAgree    bool      `json:"outputs_agree"`
	TorchVersion    string    `json:"torch_version"`
	InteropThreads  int       `json:"interop_threads"`
	IntraOpThreads  int       `json:"intraop_threads"`
	AlreadyFrozen   bool      `json:"already_frozen"`
	InterpreterNote string    `json:"interp_note"`
	// From the last benchmark report; nil when it lacks the line.
	SRManagedBytes   *int64 `json:"sr_managed_bytes"`
	SRManagedTensors *int   `json:"sr_managed_tensors"`
	// ONNXError: torch.onnx.export failed (when asked for).
	ONNXError string `json:"onnx_error"`
	// SRError: PyTorch's Static Runtime could not build or run the
	// model; SRUs is empty and the outputs are the interpreter's.
	SRError string `json:"sr_error"`
}

// pytorchScript runs pytorch_bench_pt.py on the archive: PyTorch's
// timings, preparation time and its Static Runtime's outputs; it exports
// the module to ONNX at onnx unless that is "".
func pytorchScript(py string, m *model, f compareFlags, res *runResult, onnx string) (*torchSide, error) {
	dir, err := os.MkdirTemp("", "srbench")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	script := filepath.Join(dir, "pytorch_bench_pt.py")
	if err := os.WriteFile(script, []byte(pytorchBenchPT), 0o644); err != nil {
		return nil, err
	}
	outPath := filepath.Join(dir, "out.pt")
	args := append([]string{script, m.ptPath, m.inputsPath}, ptArgs(f.timingFlags, res.UsPerIter)...)
	args = append(args, outPath, strconv.Itoa(f.interopThreads()), strconv.Itoa(f.intraOpThreads()))
	if onnx != "" {
		args = append(args, onnx)
	}
	out, err := runChild(f.ptTimeout, f.intraOpThreads(), py, args...)
	if err != nil {
		return nil, err
	}
	var tr torchResult
	srs, err := readChild(out, &tr)
	if err != nil {
		return nil, err
	}
	if len(srs) == 0 || tr.SRError != "" {
		srs = tr.SRUs
	}
	ts := &torchSide{srUs: stats.Median(srs), interpUs: stats.Median(tr.InterpUs), interpNoPython: true,
		version: tr.TorchVersion, interop: tr.InteropThreads, intraOp: tr.IntraOpThreads,
		prepareMs: tr.PrepareMs, managedBytes: tr.SRManagedBytes, managedTensors: tr.SRManagedTensors,
		disagree: !tr.OutputsAgree, onnxError: tr.ONNXError, srError: tr.SRError}
	// PyTorch's Static Runtime's outputs, copied out of the file (its
	// directory goes when this returns).
	pt, err := loaders.ReadTorchSave(outPath)
	if err != nil {
		return nil, err
	}
	if pt.Kind() == ivalue.KindTuple && len(pt.List().Items) == 2 {
		// Where the Static Runtime and the interpreter disagree, the
		// interpreter is the reference: it runs the graph as written
		// (torchvision's convnext_tiny: PyTorch 1.13's Static Runtime is
		// off by up to 3 where the interpreter matches the eager module).
		ref := pt.List().Items[:1]
		if ts.disagree {
			ref = pt.List().Items[1:]
		}
		ts.srOut = []*ivalue.Tensor{}
		for _, t := range reference.Flatten(ref) {
			ts.srOut = append(ts.srOut, t.Clone())
		}
	}
	return ts, nil
}

// gosrAgainstTorch times gosr's load and preparation of the archive with
// f's backend and checks its outputs against PyTorch's on the same
// inputs (ts.srOut: its Static Runtime's, or its interpreter's where the
// two disagree or the Static Runtime failed).
func gosrAgainstTorch(m *model, f runtimeFlags, ts *torchSide, cr *compareResult) error {
	opts, err := f.options()
	if err != nil {
		return err
	}
	t0 := time.Now()
	lm, err := loaders.Load(m.ptPath)
	if err != nil {
		return err
	}
	if _, err := staticruntime.NewStaticModule(lm.Graph, opts); err != nil {
		return err
	}
	cr.GosrPrepareMs = float64(time.Since(t0).Microseconds()) / 1e3
	if ts.srOut == nil {
		return nil
	}
	want := ts.srOut
	sm, err := prepare(m, f)
	if err != nil {
		return err
	}
	got, err := sm.NewRuntime().Run(m.Inputs...)
	if err != nil {
		return err
	}
	cr.GosrVsTorch = reference.MaxAbsDiff(reference.Flatten(got), want)
	cr.Agree = len(reference.Flatten(got)) == len(want) && agree(reference.Flatten(got), want)
	cr.HasAgree = true
	return nil
}

func agree(got, want []*ivalue.Tensor) bool {
	for i := range got {
		if reference.Compare(got[i], want[i], 1e-4, 1e-5) != nil {
			return false
		}
	}
	return true
}
