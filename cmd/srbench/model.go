package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gosr/gosr/builtin"
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/internal/reference"
	"github.com/gosr/gosr/loaders"
	"github.com/gosr/gosr/staticruntime"
)

// model is a loaded model with the paths PyTorch can read: an IR fixture
// (builtin or FILE.ir) or a TorchScript archive (FILE.pt).
type model struct {
	*reference.Case
	irPath, stPath string
	// TorchScript archives
	ptPath, inputsPath string
	script             *loaders.Model
	// onnxPath: NAME.onnx beside the archive, which compare gives ONNX
	// Runtime instead of exporting the archive (for models whose traced
	// form torch.onnx.export cannot take; see make_kernel_models.py).
	onnxPath string
}

// loadModel loads spec: a built-in name, FILE.ir, or FILE.pt with f's
// inputs and expected outputs.
func loadModel(spec string, f modelFlags) (*model, error) {
	if strings.HasSuffix(spec, ".pt") && isFallbackPackage(spec) {
		return nil, fmt.Errorf("%s: a torch.package archive with Python fallbacks: srbench run takes it (with -interpreters), not ops, graph or compare", spec)
	}
	if strings.HasSuffix(spec, ".pt") {
		return loadScriptModel(spec, f)
	}
	if strings.HasSuffix(spec, ".ir") {
		c, err := reference.Load(spec)
		if err != nil {
			return nil, err
		}
		return &model{Case: c, irPath: spec, stPath: strings.TrimSuffix(spec, ".ir") + ".safetensors"}, nil
	}
	c, err := builtin.Load(spec)
	if err != nil {
		return nil, err
	}
	return &model{Case: c}, nil
}

// graph returns a fresh copy of the model's graph (preparation rewrites it).
func (m *model) graph() (*graph.Graph, error) {
	if m.script != nil {
		return m.scriptGraph()
	}
	g, err := graph.Parse(m.IR, &graph.ParseOptions{Tensors: m.Consts})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.Name, err)
	}
	return g, nil
}

// files writes a built-in model's files to a temporary directory for PyTorch.
func (m *model) files() (ir, st string, cleanup func(), err error) {
	if m.irPath != "" {
		return m.irPath, m.stPath, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "srbench")
	if err != nil {
		return "", "", nil, err
	}
	irData, stData, err := builtin.Files(m.Name)
	if err != nil {
		return "", "", nil, err
	}
	ir, st = filepath.Join(dir, "model.ir"), filepath.Join(dir, "model.safetensors")
	if err := os.WriteFile(ir, irData, 0o644); err != nil {
		return "", "", nil, err
	}
	if err := os.WriteFile(st, stData, 0o644); err != nil {
		return "", "", nil, err
	}
	return ir, st, func() { os.RemoveAll(dir) }, nil
}

// prepare makes a StaticModule of a fresh copy of m's graph with f's
// options.
func prepare(m *model, f runtimeFlags) (*staticruntime.StaticModule, error) {
	opts, err := f.options()
	if err != nil {
		return nil, err
	}
	g, err := m.graph()
	if err != nil {
		return nil, err
	}
	sm, err := staticruntime.NewStaticModule(g, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.Name, err)
	}
	return sm, nil
}

// loadPrepared checks the backend, then loads mf's model and prepares it
// with rf: what ops and graph run on one runtime.
func loadPrepared(mf modelFlags, rf runtimeFlags) (*model, *staticruntime.StaticModule, error) {
	// A backend that cannot load fails before any model is read.
	if err := rf.checkBackend(); err != nil {
		return nil, nil, err
	}
	m, err := loadModel(mf.model, mf)
	if err != nil {
		return nil, nil, err
	}
	sm, err := prepare(m, rf)
	if err != nil {
		return nil, nil, err
	}
	return m, sm, nil
}
