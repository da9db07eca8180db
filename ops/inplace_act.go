package ops

// In-place forms of activation.go's ops and of tril/triu, as TorchScript
// emits them (F.elu(x, inplace=True) is aten::elu_). They go through
// inplaceBuilder (inplace.go): the functional kernel's result is written
// back into self. This file sorts after inplace.go, whose init registers
// the names it lists itself.

func init() {
	for _, name := range []string{
		"elu", "celu", "selu", "mish", "threshold", "rrelu", "relu6", "tril", "triu",
	} {
		in := "aten::" + name + "_"
		inplaceFunctional[in] = "aten::" + name
		RegisterNative(in, inplaceBuilder)
	}

	// Memory-planner rules (see OverwriteRule): each output element is computed
	// from the input element at the same index only, read before written.
	// Go kernel only: ATen's out= would do, but is not relied on.
	for _, s := range []string{
		eluSchema, seluSchema, celuSchema, hardshrinkSchema, softshrinkSchema,
		logSigmoidSchema, mishSchema, rreluSchema,
	} {
		regOverwrite(s, OverwriteRule{Input: 0, Safe: unarySafe(true)})
	}
	regOverwrite(thresholdSchema, OverwriteRule{Input: 0, Safe: unarySafe(false)})
	regOverwrite(preluSchema, OverwriteRule{Input: 0, Safe: preluSafe})
}

// preluSafe: a floating self that the weight (input 1) cannot be.
func preluSafe(p *ProcessedNode) bool {
	x := contiguousSelf(p)
	w := p.Tensor(1)
	return x != nil && w != nil && x.DType().IsFloat() && w.DType() == x.DType()
}
