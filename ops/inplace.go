package ops

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// In-place elementwise ops (aten::relu_, aten::add_, aten::hardtanh_, ...)
// as native kernels: the result is computed by the functional op's kernel
// into a tensor the node keeps, then written back into self (cast to
// self's dtype, into any strides), and the output is self itself, as
// PyTorch returns it. The RemoveMutation pass turns most in-place ops of
// frozen models into their functional forms; these kernels run the rest
// (a value mutated inside a loop, a graph input, a value with views).

// inplaceFunctional maps an in-place op to its functional op, for the
// ops whose result has self's shape element for element, so that writing
// it back into self is what the in-place op does.
var inplaceFunctional = map[string]string{}

func init() {
	for _, name := range []string{
		"relu", "hardtanh", "leaky_relu", "clamp", "clamp_min", "clamp_max",
		"sigmoid", "tanh", "hardsigmoid", "hardswish", "silu", "gelu",
		"neg", "abs", "exp", "log", "sqrt", "rsqrt", "reciprocal", "sign",
		"floor", "ceil", "round", "trunc", "frac", "sin", "cos", "erf",
		"log1p", "expm1", "log2", "log10", "square",
		"add", "sub", "mul", "div", "pow", "remainder", "floor_divide", "true_divide",
		"masked_fill", "logical_not", "bitwise_not",
		"eq", "ne", "lt", "le", "gt", "ge",
	} {
		inplaceFunctional["aten::"+name+"_"] = "aten::" + name
	}
	for in := range inplaceFunctional {
		RegisterNative(in, inplaceBuilder)
	}
	RegisterNative("aten::zero_", func(n *graph.Node) Kernel {
		if n.Matches("aten::zero_(Tensor self) -> Tensor") {
			return zeroKernel
		}
		return nil
	})
	RegisterNative("aten::fill_", func(n *graph.Node) Kernel {
		if n.Matches("aten::fill_.Scalar(Tensor self, Scalar value) -> Tensor") ||
			n.Matches("aten::fill_.Tensor(Tensor self, Tensor value) -> Tensor") {
			return fillKernel
		}
		return nil
	})
	RegisterNative("aten::copy_", func(n *graph.Node) Kernel {
		if n.Matches("aten::copy_(Tensor self, Tensor src, bool non_blocking=False) -> Tensor") {
			return copyKernel
		}
		return nil
	})
}

// FunctionalOf returns the functional op computing what in-place op kind
// writes into its self (aten::add for aten::add_), or "" when kind is not
// an in-place elementwise op gosr knows.
func FunctionalOf(kind string) string { return inplaceFunctional[kind] }

type inplaceState struct {
	inner ProcessedNode
	clamp clampSplit // relu_ and hardtanh_'s split across the team
}

// inplaceBuilder finds the functional op's kernel for the same inputs:
// the node is viewed under the functional op's name (not inserted in the
// graph, so the graph's use lists stay as they are).
func inplaceBuilder(n *graph.Node) Kernel {
	if len(n.Inputs) == 0 || len(n.Outputs) != 1 || n.Inputs[0].Type.Kind != graph.TensorType {
		return nil
	}
	fn := inplaceFunctional[n.Kind]
	if fn == "" {
		return nil
	}
	fake := &graph.Node{Kind: fn, Inputs: n.Inputs, Outputs: n.Outputs, Attrs: n.Attrs, Owner: n.Owner, SourceRange: n.SourceRange}
	fk, kind, err := Select(fake, Options{})
	if err != nil {
		return nil
	}
	// relu_ and hardtanh_ (ReLU6) on contiguous float32 run in place
	// directly, without the result tensor and the copy back.
	clampOp := unOp(255)
	switch {
	case n.Matches("aten::relu_(Tensor self) -> Tensor"):
		clampOp = unRelu
	case n.Matches("aten::hardtanh_(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor"):
		clampOp = unHardtanh
	}
	return func(p *ProcessedNode) error {
		self := p.Tensor(0)
		if self == nil {
			return Errorf("expected a tensor as self, got %s", p.Input(0).Kind())
		}
		st, _ := p.State.(*inplaceState)
		if st == nil {
			st = &inplaceState{inner: ProcessedNode{Kernel: fk, Kind: kind, Node: fake}}
			p.State = st
		}
		if clampOp != 255 && self.DType() == ivalue.Float32 && self.IsContiguous() {
			var p0, p1 float64
			if clampOp == unHardtanh {
				p0, p1 = p.Float(1), p.Float(2)
			}
			if lo, hi, ok := clampBounds32(clampOp, p0, p1); ok {
				d := self.F32Contig()
				clamp32Team(p.Scratch, &st.clamp, d, d, lo, hi)
				p.SetOutput(0, ivalue.FromTensor(self))
				return nil
			}
		}
		in := &st.inner
		in.Values, in.In, in.Out, in.Scratch = p.Values, p.In, p.Out, p.Scratch
		// The functional kernel writes its result into the output slot;
		// on return the slot holds self again.
		err := in.Kernel(in)
		res := p.Output(0).Tensor()
		p.SetOutput(0, ivalue.FromTensor(self))
		if err != nil {
			return err
		}
		if res == nil {
			return Errorf("%s gave no tensor", fn)
		}
		return writeBack(self, res, fn)
	}
}

// writeBack stores res (the functional result) into self, as the
// in-place op's result: same shape, a dtype that casts to self's.
func writeBack(self, res *ivalue.Tensor, op string) error {
	if res == self {
		return nil
	}
	if !SameSizes(self.Sizes(), res.Sizes()) {
		return Errorf("output with shape %s doesn't match the broadcast shape %s (in-place %s)",
			ShapeString(self.Sizes()), ShapeString(res.Sizes()), op)
	}
	if !canCast(res.DType(), self.DType()) {
		return Errorf("result type %s can't be cast to the desired output type %s (in-place %s)",
			res.DType(), self.DType(), op)
	}
	storeInto(self, res)
	return nil
}

// storeInto writes src (contiguous, self's shape, any dtype) into self's
// elements, whatever self's strides.
func storeInto(self, src *ivalue.Tensor) {
	if self.Numel() == 0 {
		return
	}
	if self.DType() == src.DType() && self.IsContiguous() && src.IsContiguous() {
		ivalue.CopyInto(self, src)
		return
	}
	copyConvertND(self.Storage().Data, self.DType(), self.Offset(), self.Strides(),
		src.Storage().Data, src.DType(), src.Offset(), src.Strides(), self.Sizes())
}

// canCast is PyTorch's canCast: no float to integer, nothing but bool to
// bool.
func canCast(from, to ivalue.DType) bool {
	if from.IsFloat() && !to.IsFloat() {
		return false
	}
	if from != ivalue.Bool && to == ivalue.Bool {
		return false
	}
	return true
}

type fillState struct{ tmp *ivalue.Tensor }

func zeroKernel(p *ProcessedNode) error {
	self := p.Tensor(0)
	if self == nil {
		return Errorf("expected a tensor as self, got %s", p.Input(0).Kind())
	}
	return fillWith(p, self, ivalue.FromInt(0))
}

func fillKernel(p *ProcessedNode) error {
	self := p.Tensor(0)
	if self == nil {
		return Errorf("expected a tensor as self, got %s", p.Input(0).Kind())
	}
	v := *p.Input(1)
	if t := v.Tensor(); t != nil {
		if t.Dim() != 0 {
			return Errorf("fill_ only supports 0-dimension value tensor but got tensor with %d dimensions", t.Dim())
		}
		v = ReadScalar(t, t.Offset())
	}
	if !v.IsNumber() {
		return Errorf("fill_: expected a number, got %s", v.Kind())
	}
	return fillWith(p, self, v)
}

// fillWith writes v into every element of self: one element is converted
// into a scratch tensor, which is then broadcast (stride 0) into self.
func fillWith(p *ProcessedNode, self *ivalue.Tensor, v ivalue.IValue) error {
	st, _ := p.State.(*fillState)
	if st == nil {
		st = &fillState{tmp: &ivalue.Tensor{}}
		p.State = st
	}
	st.tmp.Resize(self.DType(), nil)
	if err := WriteScalar(st.tmp, 0, v); err != nil {
		return err
	}
	p.SetOutput(0, ivalue.FromTensor(self))
	if self.Numel() == 0 {
		return nil
	}
	var zs [copyMaxDims]int // all 0: the one element, broadcast
	var strides []int
	if self.Dim() > copyMaxDims {
		strides = make([]int, self.Dim())
	} else {
		strides = zs[:self.Dim()]
	}
	copyND(self.Storage().Data, self.Offset(), self.Strides(), st.tmp.Storage().Data, st.tmp.Offset(), strides, self.Sizes(), self.DType().Size())
	return nil
}

type copyState struct {
	tmp     *ivalue.Tensor
	strides []int
}

// copyKernel is aten::copy_: src broadcast to self's shape and cast to
// its dtype. A src sharing memory with self is copied aside first.
func copyKernel(p *ProcessedNode) error {
	self, src := p.Tensor(0), p.Tensor(1)
	if self == nil || src == nil {
		return Errorf("copy_: expected tensors as self and src")
	}
	st, _ := p.State.(*copyState)
	if st == nil {
		st = &copyState{tmp: &ivalue.Tensor{}}
		p.State = st
	}
	p.SetOutput(0, ivalue.FromTensor(self))
	if src.Dim() > self.Dim() {
		return Errorf("copy_: src of shape %s does not broadcast to self's %s", ShapeString(src.Sizes()), ShapeString(self.Sizes()))
	}
	if self.Numel() == 0 {
		return nil
	}
	if src.SharesStorage(self) {
		st.tmp.Resize(src.DType(), src.Sizes())
		ivalue.CopyInto(st.tmp, src)
		src = st.tmp
	}
	// src's strides aligned to self's dims: 0 where src is broadcast.
	if cap(st.strides) < self.Dim() {
		st.strides = make([]int, self.Dim())
	}
	ss := st.strides[:self.Dim()]
	off := self.Dim() - src.Dim()
	for d := range ss {
		ss[d] = 0
		if d < off {
			continue
		}
		switch s := src.Size(d - off); {
		case s == self.Size(d):
			ss[d] = src.Strides()[d-off]
		case s == 1:
		default:
			return Errorf("copy_: src of shape %s does not broadcast to self's %s", ShapeString(src.Sizes()), ShapeString(self.Sizes()))
		}
	}
	copyConvertND(self.Storage().Data, self.DType(), self.Offset(), self.Strides(),
		src.Storage().Data, src.DType(), src.Offset(), ss, self.Sizes())
	return nil
}
