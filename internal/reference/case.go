// Package reference reads the reference computations PyTorch made for
// gosr and compares gosr's outputs with them: the built-in models, the
// op fixtures under testdata/ and srbench's FILE.ir models.
//
// A case is <name>.ir (a graph as PyTorch prints it) plus <name>.safetensors
// holding c0.. (every tensor-typed prim::Constant in printing order), in0..
// (the inputs) and out0.. (the outputs flattened depth-first, scalars as 0-d
// int64/float64/bool tensors), and metadata ("outputs" structure,
// "noncontig", "rtol", "atol", "graph_kind"), as scripts/make_testdata.py
// writes them.
package reference

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders"
)

// Case is one reference computation.
type Case struct {
	Name     string
	IR       string
	Consts   []*ivalue.Tensor
	Inputs   []ivalue.IValue
	Expected []*ivalue.Tensor // flattened outputs
	Meta     map[string]string
	RTol     float64
	ATol     float64
}

// NonContig reports whether the case should also run with non-contiguous inputs.
func (c *Case) NonContig() bool { return c.Meta["noncontig"] == "1" }

// Load reads irPath and the .safetensors beside it; irPath may also be a
// model directory holding model.ir and model.safetensors.
func Load(irPath string) (*Case, error) {
	if st, err := os.Stat(irPath); err == nil && st.IsDir() {
		irPath = filepath.Join(irPath, "model.ir")
	}
	name := strings.TrimSuffix(filepath.Base(irPath), ".ir")
	if name == "model" {
		name = filepath.Base(filepath.Dir(irPath))
	}
	ir, err := os.ReadFile(irPath)
	if err != nil {
		return nil, fmt.Errorf("reference case %s: %w", irPath, err)
	}
	stPath := strings.TrimSuffix(irPath, ".ir") + ".safetensors"
	tf, err := loaders.ReadSafetensors(stPath)
	if err != nil {
		return nil, fmt.Errorf("reference case %s: %w", name, err)
	}
	return fromFile(name, stPath, string(ir), tf)
}

// Parse builds a case from an IR text and the bytes of its safetensors
// file (for fixtures embedded in a binary). Tensors view st.
func Parse(name, ir string, st []byte) (*Case, error) {
	tf, err := loaders.ParseSafetensors(st)
	if err != nil {
		return nil, fmt.Errorf("reference case %s: %w", name, err)
	}
	return fromFile(name, name+".safetensors", ir, tf)
}

func fromFile(name, stPath, ir string, tf *loaders.TensorFile) (*Case, error) {
	c := &Case{Name: name, IR: ir, Meta: tf.Metadata, RTol: 1e-4, ATol: 1e-5}
	for _, g := range []struct {
		prefix string
		add    func(*ivalue.Tensor)
	}{
		{"c", func(t *ivalue.Tensor) { c.Consts = append(c.Consts, t) }},
		{"in", func(t *ivalue.Tensor) { c.Inputs = append(c.Inputs, ivalue.FromTensor(t)) }},
		{"out", func(t *ivalue.Tensor) { c.Expected = append(c.Expected, t) }},
	} {
		for i := 0; ; i++ {
			t, ok := tf.Tensors[g.prefix+strconv.Itoa(i)]
			if !ok {
				break
			}
			g.add(t)
		}
	}
	if n := len(c.Consts) + len(c.Inputs) + len(c.Expected); n != len(tf.Tensors) {
		return nil, fmt.Errorf("reference case %s: %d tensors are not numbered c0.., in0.., out0.. without gaps", stPath, len(tf.Tensors)-n)
	}
	for key, dst := range map[string]*float64{"rtol": &c.RTol, "atol": &c.ATol} {
		if s, ok := c.Meta[key]; ok {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, fmt.Errorf("reference case %s: metadata %s=%q is not a number", stPath, key, s)
			}
			*dst = v
		}
	}
	return c, nil
}
