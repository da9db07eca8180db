// Package builtin carries small reference models inside the binary, so
// srbench and the tests can run without any file: each is a graph in IR
// text with its tensors (constants, inputs and PyTorch's outputs) in a
// safetensors file, made by scripts/make_testdata.py.
package builtin

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"

	"github.com/gosr/gosr/internal/reference"
)

//go:embed models
var models embed.FS

// Names lists the built-in models.
func Names() []string {
	entries, _ := fs.ReadDir(models, "models")
	var names []string
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	return names
}

// Files returns a model's IR text and safetensors bytes.
func Files(name string) (ir, st []byte, err error) {
	dir := path.Join("models", name)
	if ir, err = models.ReadFile(path.Join(dir, "model.ir")); err != nil {
		return nil, nil, fmt.Errorf("builtin: no model %q (have %v)", name, Names())
	}
	if st, err = models.ReadFile(path.Join(dir, "model.safetensors")); err != nil {
		return nil, nil, fmt.Errorf("builtin: model %q has no tensors: %v", name, err)
	}
	return ir, st, nil
}

// Load returns a built-in model as a reference case.
func Load(name string) (*reference.Case, error) {
	ir, st, err := Files(name)
	if err != nil {
		return nil, err
	}
	return reference.Parse(name, string(ir), st)
}
