package ops

import (
	"fmt"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// EvalNode runs n's kernel (chosen with Select) once on inputs, through a
// throwaway ProcessedNode, and returns its outputs: constant folding's
// evaluator (passes.Context.Eval). A kernel's panic becomes an error.
func EvalNode(n *graph.Node, inputs []ivalue.IValue) (outs []ivalue.IValue, err error) {
	if len(inputs) != len(n.Inputs) {
		return nil, fmt.Errorf("eval %s: %d input values for %d inputs", n.Kind, len(inputs), len(n.Inputs))
	}
	k, kind, err := Select(n, Options{})
	if err != nil {
		return nil, err
	}
	vals := make([]ivalue.IValue, len(inputs)+len(n.Outputs))
	copy(vals, inputs)
	p := &ProcessedNode{Node: n, Kind: kind, Kernel: k, Values: vals, Fresh: true}
	for i := range inputs {
		p.In = append(p.In, int32(i))
	}
	for i := range n.Outputs {
		p.Out = append(p.Out, int32(len(inputs)+i))
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("eval %s: kernel panicked: %v", n.Kind, r)
		}
	}()
	if err := p.Run(); err != nil {
		return nil, fmt.Errorf("eval %s: %w", n.Kind, err)
	}
	return vals[len(inputs):], nil
}
