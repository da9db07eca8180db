package ops

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// The overwrite rules of gosr's kernels (see OverwriteRule):
//
//   - unary elementwise ops (unary.go): each element is read before its
//     output is written, so the output may be the input itself when the
//     dtype does not change;
//   - binary elementwise ops (binary.go) with self a tensor: likewise,
//     when the other operand broadcasts to self's shape;
//   - max_pool2d, avg_pool2d, adaptive_avg_pool2d: the kernels order
//     their planes (pool.go's planePlan), Go kernel only;
//   - conv1d, conv2d, _convolution, convolution: depthwise with one
//     output channel per input channel (plane by plane) and 1x1 stride-1
//     unpadded ungrouped ones (column tiles), Go kernel only;
//   - prim::VarStack over its last part: the kernel copies a part whose
//     memory the output covers aside before it writes (stackRun), Go
//     kernel only. A stack's parts and output are all alive at the stack,
//     its peak in a DLRM-style model; the last part is the one most
//     likely made just for it.

func init() {
	RegisterOverwrite("prim::VarStack", func(n *graph.Node) bool { return len(n.Inputs) >= 2 },
		OverwriteRule{InputOf: func(n *graph.Node) int { return len(n.Inputs) - 2 }})

	// Unary ops, as unary.go registers them; floatOnly ops give float32
	// for integer and bool inputs.
	for _, u := range []struct {
		name      string
		floatOnly bool
	}{
		{"neg", false}, {"abs", false}, {"exp", true}, {"log", true},
		{"sqrt", true}, {"rsqrt", true}, {"relu", false}, {"sigmoid", true},
		{"tanh", true}, {"silu", true}, {"reciprocal", true}, {"sign", false},
		{"floor", false}, {"ceil", false}, {"round", false}, {"erf", true},
		{"sin", true}, {"cos", true}, {"log1p", true}, {"expm1", true},
		{"log2", true}, {"log10", true}, {"trunc", false}, {"hardsigmoid", true},
		{"hardswish", true}, {"frac", false}, {"square", false},
	} {
		regOverwrite("aten::"+u.name+"(Tensor self) -> Tensor", elementwiseRule(unarySafe(u.floatOnly)))
	}
	for _, s := range []struct {
		schema    string
		floatOnly bool
	}{
		{"aten::leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor", true},
		{"aten::hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor", false},
		{"aten::relu6(Tensor self) -> Tensor", false},
		{"aten::softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor", true},
		{`aten::gelu(Tensor self, *, str approximate="none") -> Tensor`, true},
	} {
		regOverwrite(s.schema, elementwiseRule(unarySafe(s.floatOnly)))
	}
	regOverwrite("aten::clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", elementwiseRule(clampSafe))
	regOverwrite("aten::logical_not(Tensor self) -> Tensor", elementwiseRule(notSafe(true)))
	regOverwrite("aten::bitwise_not(Tensor self) -> Tensor", elementwiseRule(notSafe(false)))

	// Binary ops with self a tensor, as binary.go registers them (and
	// unary.go's clamp_min/clamp_max with a Scalar bound, which promote
	// the same way). true: true division, float for integer operands
	// unless a rounding mode is given.
	for _, b := range []struct {
		schema  string
		trueDiv bool
	}{
		{"aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", false},
		{"aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", false},
		{"aten::sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", false},
		{"aten::sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", false},
		{"aten::rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", false},
		{"aten::rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", false},
		{"aten::mul.Tensor(Tensor self, Tensor other) -> Tensor", false},
		{"aten::mul.Scalar(Tensor self, Scalar other) -> Tensor", false},
		{"aten::div.Tensor(Tensor self, Tensor other) -> Tensor", true},
		{"aten::div.Scalar(Tensor self, Scalar other) -> Tensor", true},
		{"aten::div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor", true},
		{"aten::div.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) -> Tensor", true},
		{"aten::true_divide.Tensor(Tensor self, Tensor other) -> Tensor", true},
		{"aten::true_divide.Scalar(Tensor self, Scalar other) -> Tensor", true},
		{"aten::floor_divide(Tensor self, Tensor other) -> Tensor", false},
		{"aten::floor_divide.Scalar(Tensor self, Scalar other) -> Tensor", false},
		{"aten::pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor", false},
		{"aten::pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor", false},
		{"aten::remainder.Tensor(Tensor self, Tensor other) -> Tensor", false},
		{"aten::remainder.Scalar(Tensor self, Scalar other) -> Tensor", false},
		{"aten::maximum(Tensor self, Tensor other) -> Tensor", false},
		{"aten::minimum(Tensor self, Tensor other) -> Tensor", false},
		{"aten::max.other(Tensor self, Tensor other) -> Tensor", false},
		{"aten::min.other(Tensor self, Tensor other) -> Tensor", false},
		{"aten::clamp_min.Tensor(Tensor self, Tensor min) -> Tensor", false},
		{"aten::clamp_max.Tensor(Tensor self, Tensor max) -> Tensor", false},
		{"aten::clamp_min(Tensor self, Scalar min) -> Tensor", false},
		{"aten::clamp_max(Tensor self, Scalar max) -> Tensor", false},
	} {
		regOverwrite(b.schema, elementwiseRule(binarySafe(b.trueDiv)))
	}

	// Pooling: the output begins in the input; the Go kernels order
	// their planes so that no unread input is overwritten.
	for _, s := range []string{maxPool2dSchema, avgPool2dSchema, adaptiveAvgSchema} {
		regOverwrite(s, OverwriteRule{Input: 0, Safe: poolSafe, Serial: true})
	}

	// Normalisation, Go kernel only: batch_norm writes element i from
	// element i once the per-channel scale is known (its moments, in
	// training mode, are all read first); layer_norm reads a whole row
	// for its moments before it writes that row; batch_norm_clamp clamps
	// each plane after it wrote it.
	for _, s := range []string{batchNormSchema, BatchNormClampSchema, layerNormSchema} {
		regOverwrite(s, OverwriteRule{Input: 0, Safe: normSafe})
	}

	// Convolution, Go kernel only.
	for _, c := range []struct {
		schema string
		spec   convSpec
	}{
		{conv2dSchema, convSpec{2, false, -1, 6, 0, 0, 0, 0}},
		{conv2dPadSchema, convSpec{2, true, -1, 6, 0, 0, 0, 0}},
		{conv1dSchema, convSpec{1, false, -1, 6, 0, 0, 0, 0}},
		{conv1dPadSchema, convSpec{1, true, -1, 6, 0, 0, 0, 0}},
		{convolutionSch, convSpec{0, false, 6, 8, 0, 0, 0, 0}},
		{convolutionDepr, convSpec{0, false, 6, 8, 0, 0, 0, 0}},
		{convolutionPlain, convSpec{0, false, 6, 8, 0, 0, 0, 0}},
		{ConvClampSchema, convClampSpec},
		{ConvActSchema, convActSpec},
	} {
		regOverwrite(c.schema, OverwriteRule{Input: 0, Safe: convSafe(c.spec), Serial: true})
	}
}

// regOverwrite registers r for the nodes matching schema (parsed once).
func regOverwrite(schema string, r OverwriteRule) {
	s, err := graph.ParseSchema(schema)
	if err != nil {
		panic("ops: bad schema in an overwrite rule: " + err.Error())
	}
	RegisterOverwrite(s.Name, s.Matches, r)
}

// elementwiseRule is the rule of an elementwise op over its self: ATen's
// out= kernels accept out == self as well.
func elementwiseRule(safe func(p *ProcessedNode) bool) OverwriteRule {
	return OverwriteRule{Input: 0, Backend: true, Safe: safe}
}

// contiguousSelf returns input 0 when it is a contiguous tensor.
func contiguousSelf(p *ProcessedNode) *ivalue.Tensor {
	if x := p.Tensor(0); x != nil && x.IsContiguous() {
		return x
	}
	return nil
}

// unarySafe: the output has self's dtype (floatOnly ops turn integer and
// bool inputs into float32; bool inputs are errors otherwise).
func unarySafe(floatOnly bool) func(p *ProcessedNode) bool {
	return func(p *ProcessedNode) bool {
		x := contiguousSelf(p)
		if x == nil {
			return false
		}
		if floatOnly {
			return x.DType().IsFloat()
		}
		return x.DType() != ivalue.Bool
	}
}

// clampSafe: clamp's result dtype promotes self with its Scalar bounds
// (an integer tensor with a float bound gives float32).
func clampSafe(p *ProcessedNode) bool {
	x := contiguousSelf(p)
	if x == nil || x.DType() == ivalue.Bool {
		return false
	}
	wrapped := ivalue.Undefined
	for i := 1; i <= 2; i++ {
		if v := *p.Input(i); !v.IsNone() {
			if !v.IsNumber() {
				return false
			}
			wrapped = PromoteTypes(wrapped, ScalarDType(v))
		}
	}
	return ResultType(x, nil, nil, wrapped) == x.DType()
}

// notSafe: logical_not gives bool, bitwise_not keeps bool and int64.
func notSafe(logical bool) func(p *ProcessedNode) bool {
	return func(p *ProcessedNode) bool {
		x := contiguousSelf(p)
		if x == nil {
			return false
		}
		if logical {
			return x.DType() == ivalue.Bool
		}
		return x.DType() == ivalue.Bool || x.DType() == ivalue.Int64
	}
}

// binarySafe: the other operand (input 1, a tensor or a number)
// broadcasts to self's shape, and the result dtype is self's. (That the
// other operand does not share self's memory is the runtime's part of
// the contract: it links only inputs no other input may alias.) trueDiv:
// division gives float for integer operands unless input 2, the rounding
// mode, is given.
func binarySafe(trueDiv bool) func(p *ProcessedNode) bool {
	return func(p *ProcessedNode) bool {
		x := contiguousSelf(p)
		if x == nil {
			return false
		}
		y := p.Tensor(1)
		wrapped := ivalue.Undefined
		if y == nil {
			v := *p.Input(1)
			if !v.IsNumber() {
				return false
			}
			wrapped = ScalarDType(v)
			// The common case, a float tensor and a number: the tensor's
			// dtype wins (the steady runs of a graph check this per node).
			if x.DType().IsFloat() && !trueDiv {
				return true
			}
		} else if !broadcastsTo(y.Sizes(), x.Sizes()) {
			return false
		} else if y.DType() == x.DType() && (!trueDiv || x.DType().IsFloat()) {
			return true // same dtypes: the result keeps it
		}
		dt := ResultType(x, y, nil, wrapped)
		if trueDiv && !dt.IsFloat() && (p.NumInputs() < 3 || p.IsNone(2)) {
			return false
		}
		return dt == x.DType()
	}
}

// broadcastsTo reports whether shape b broadcast with shape a gives a
// exactly: no more dimensions, each (aligned right) 1 or a's.
func broadcastsTo(b, a []int) bool {
	if len(b) > len(a) {
		return false
	}
	off := len(a) - len(b)
	for i, s := range b {
		if s != 1 && s != a[off+i] {
			return false
		}
	}
	return true
}

// poolSafe: the kernels handle any geometry (stride 1 and padding
// included, where the output is as large as the input or larger); the
// output is float32 like the input.
func poolSafe(p *ProcessedNode) bool {
	x := p.Tensor(0)
	return x != nil && x.DType() == ivalue.Float32
}

// normSafe: a contiguous float32 input, read in place (normContig
// copies only strided inputs); the output is float32 of its shape.
func normSafe(p *ProcessedNode) bool {
	x := contiguousSelf(p)
	return x != nil && x.DType() == ivalue.Float32
}

// convSafe accepts the two geometries convKernel runs over its input:
// depthwise with one output channel per input channel (output plane i
// reads input plane i only), and 1x1, stride 1, padding 0, one group
// (the pointwise gemm, in column tiles). Other convolutions would read
// a copy of the whole input, which saves nothing.
func convSafe(spec convSpec) func(p *ProcessedNode) bool {
	return func(p *ProcessedNode) bool {
		x, w := p.Tensor(0), p.Tensor(1)
		if x == nil || w == nil || x.DType() != ivalue.Float32 || w.DType() != ivalue.Float32 || !x.IsContiguous() {
			return false
		}
		dims := spec.dims
		if dims == 0 {
			if spec.transposed >= 0 {
				if v := *p.Input(spec.transposed); v.Kind() != ivalue.KindBool || v.Bool() {
					return false
				}
			}
			dims = w.Dim() - 2
		}
		if (dims != 1 && dims != 2) || w.Dim() != dims+2 || (x.Dim() != dims+1 && x.Dim() != dims+2) {
			return false
		}
		if v := *p.Input(spec.groups); v.Kind() != ivalue.KindInt {
			return false
		}
		groups := int(p.Int(spec.groups))
		cin := x.Size(x.Dim() - dims - 1)
		if w.Size(1) == 1 && groups == cin {
			// The depthwise kernel: output channel o reads input channel
			// o/(out/in channels).
			return w.Size(0) == cin
		}
		if groups != 1 {
			return false
		}
		for d := 2; d < w.Dim(); d++ {
			if w.Size(d) != 1 {
				return false
			}
		}
		if !convArgAll(p, 3, 1) {
			return false
		}
		// "valid" and "same" both mean no padding for a 1x1 kernel.
		return spec.strPadding || convArgAll(p, 4, 0)
	}
}

// convArgAll reports whether the int or int list at input i holds only v.
func convArgAll(p *ProcessedNode, i, v int) bool {
	in := p.Input(i)
	if in.Kind() == ivalue.KindInt {
		return int(in.Int()) == v
	}
	l := in.List()
	if l == nil || len(l.Items) == 0 {
		return false
	}
	for _, it := range l.Items {
		if it.Kind() != ivalue.KindInt || int(it.Int()) != v {
			return false
		}
	}
	return true
}
