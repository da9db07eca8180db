package ops_test

import (
	"math/rand"
	"testing"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops"
	"github.com/gosr/gosr/ops/gemm"
)

// buildNode makes a graph holding one node of the given kind, selects its
// kernel and returns the processed node ready to run (values array filled
// with the inputs). Input i becomes a prim::Constant when constant[i] is
// true (builders then see it through graph.ConstantValue), else a graph
// input. A nil constant slice means: tensors (and lists holding tensors)
// are graph inputs, everything else is a constant, as in scripted graphs.
// It returns the Select error, if any, with a nil node.
func buildNode(t testing.TB, kind string, inputs []ivalue.IValue, inputTypes []*graph.Type, outTypes []*graph.Type, constant []bool) (*ops.ProcessedNode, error) {
	t.Helper()
	if len(inputs) != len(inputTypes) {
		t.Fatalf("buildNode %s: %d inputs, %d input types", kind, len(inputs), len(inputTypes))
	}
	g := graph.New()
	vals := make([]*graph.Value, len(inputs))
	var graphInputs []int // indices into inputs fed through graph inputs
	for i, v := range inputs {
		isConst := !holdsTensor(v)
		if constant != nil {
			isConst = constant[i]
		}
		if isConst {
			vals[i] = g.Constant(v, inputTypes[i], nil)
		} else {
			vals[i] = g.AddInput("", inputTypes[i])
			graphInputs = append(graphInputs, i)
		}
	}
	n := g.NewNode(kind, vals, len(outTypes))
	for i, ot := range outTypes {
		n.Outputs[i].Type = ot
	}
	g.Block.Append(n)
	for _, o := range n.Outputs {
		g.AddOutput(o)
	}
	k, kk, err := ops.Select(n, ops.Options{})
	if err != nil {
		return nil, err
	}
	// Slots: one per node input (constants and graph inputs alike), then
	// one per output.
	// A scratch as the runtime gives every node: kernels keep their
	// working memory there between runs.
	p := &ops.ProcessedNode{Node: n, Kind: kk, Kernel: k, Scratch: &gemm.Scratch{}}
	p.Values = make([]ivalue.IValue, len(inputs)+len(outTypes))
	for i, v := range inputs {
		p.Values[i] = v
		p.In = append(p.In, int32(i))
	}
	for i := range outTypes {
		p.Out = append(p.Out, int32(len(inputs)+i))
	}
	return p, nil
}

func holdsTensor(v ivalue.IValue) bool {
	if v.IsTensor() {
		return true
	}
	if l := v.List(); l != nil {
		for _, it := range l.Items {
			if holdsTensor(it) {
				return true
			}
		}
	}
	return false
}

// runNode builds a one-node graph of the given kind (tensor inputs as
// graph inputs, other inputs as prim::Constant values), selects its kernel
// with ops.Select and runs it once. It returns the outputs, the kind of
// kernel chosen and the Select or kernel error.
func runNode(t testing.TB, kind string, inputs []ivalue.IValue, inputTypes []*graph.Type, outTypes []*graph.Type) ([]ivalue.IValue, ops.Kind, error) {
	t.Helper()
	p, err := buildNode(t, kind, inputs, inputTypes, outTypes, nil)
	if err != nil {
		return nil, 0, err
	}
	if err := p.Run(); err != nil {
		return nil, p.Kind, err
	}
	outs := make([]ivalue.IValue, len(p.Out))
	for i := range outs {
		outs[i] = *p.Output(i)
	}
	return outs, p.Kind, nil
}

// runNodeDyn is runNode with every input a graph input (no constants), to
// exercise kernels on runtime-only values.
func runNodeDyn(t testing.TB, kind string, inputs []ivalue.IValue, inputTypes []*graph.Type, outTypes []*graph.Type) ([]ivalue.IValue, ops.Kind, error) {
	t.Helper()
	constant := make([]bool, len(inputs))
	p, err := buildNode(t, kind, inputs, inputTypes, outTypes, constant)
	if err != nil {
		return nil, 0, err
	}
	if err := p.Run(); err != nil {
		return nil, p.Kind, err
	}
	outs := make([]ivalue.IValue, len(p.Out))
	for i := range outs {
		outs[i] = *p.Output(i)
	}
	return outs, p.Kind, nil
}

// Shorthands for tests.
var (
	tT   = graph.Tensor
	tI   = graph.Int
	tF   = graph.Float
	tB   = graph.Bool
	tS   = graph.Str
	tN   = graph.None
	tNum = graph.Number
)

func iv(t *ivalue.Tensor) ivalue.IValue { return ivalue.FromTensor(t) }
func ivI(v int64) ivalue.IValue         { return ivalue.FromInt(v) }
func ivF(v float64) ivalue.IValue       { return ivalue.FromDouble(v) }
func ivB(v bool) ivalue.IValue          { return ivalue.FromBool(v) }
func ivS(s string) ivalue.IValue        { return ivalue.FromString(s) }
func ivInts(vs ...int64) ivalue.IValue {
	items := make([]ivalue.IValue, len(vs))
	for i, v := range vs {
		items[i] = ivalue.FromInt(v)
	}
	return ivalue.NewList(items...)
}

// randTensor is a float32 tensor of sizes holding r's normal draws.
func randTensor(r *rand.Rand, sizes ...int) *ivalue.Tensor {
	t := ivalue.NewTensor(ivalue.Float32, sizes...)
	for i := range t.F32() {
		t.F32()[i] = float32(r.NormFloat64())
	}
	return t
}
