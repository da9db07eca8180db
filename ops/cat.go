package ops

import (
	"unsafe"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// Concatenation kernels (out variants). Each input is copied straight
// into its slab of the output with the strided copy engine, so contiguous
// inputs become one copy() per input (dim 0) or per outer row.

// catTensors collects the tensor inputs of a list input (cat, stack) or
// of the leading inputs of a variadic node (VarConcat, VarStack) into
// st.tensors.
func catTensors(p *ProcessedNode, st *shapeState, variadic bool) error {
	st.tensors = st.tensors[:0]
	if variadic {
		for i := 0; i < p.NumInputs()-1; i++ {
			t := p.Tensor(i)
			if t == nil {
				return Errorf("expected a Tensor at input %d, got %s", i, p.Input(i).Kind())
			}
			st.tensors = append(st.tensors, t)
		}
	} else {
		l := p.Input(0).List()
		if l == nil {
			return Errorf("expected a Tensor[] at input 0, got %s", p.Input(0).Kind())
		}
		for i := range l.Items {
			t := l.Items[i].Tensor()
			if t == nil {
				return Errorf("expected a Tensor at position %d of the tensors list, got %s", i, l.Items[i].Kind())
			}
			st.tensors = append(st.tensors, t)
		}
	}
	if len(st.tensors) == 0 {
		return Errorf("expected a non-empty list of Tensors")
	}
	return nil
}

// catSkip reports whether t is a legacy empty tensor (1-d, size 0) that
// cat ignores whatever the other shapes are.
func catSkip(t *ivalue.Tensor) bool { return t.Dim() == 1 && t.Sizes()[0] == 0 }

// catDType promotes the dtypes of all inputs, skipped ones included, as
// torch.cat's result_type does.
func catDType(ts []*ivalue.Tensor) ivalue.DType {
	dt := ts[0].DType()
	for _, t := range ts[1:] {
		dt = PromoteTypes(dt, t.DType())
	}
	return dt
}

// catRun concatenates st.tensors along dim (not yet wrapped) into
// output 0.
func catRun(p *ProcessedNode, st *shapeState, dim int64) error {
	ts := st.tensors
	var ref *ivalue.Tensor
	for _, t := range ts {
		if !catSkip(t) {
			ref = t
			break
		}
	}
	dt := catDType(ts)
	out := p.OutTensor(0)
	if ref == nil {
		// only legacy empty tensors: the result is one too
		st.sizes = append(st.sizes[:0], 0)
		out.Resize(dt, st.sizes)
		return nil
	}
	d, err := shapeWrapDim(dim, ref.Dim())
	if err != nil {
		return err
	}
	if ref.Dim() == 0 {
		return Errorf("zero-dimensional tensor cannot be concatenated")
	}
	st.sizes = append(st.sizes[:0], ref.Sizes()...)
	total := 0
	for i, t := range ts {
		if catSkip(t) {
			continue
		}
		if t.Dim() != ref.Dim() {
			return Errorf("tensors must have same number of dimensions: got %d and %d (tensor number %d in the list)", ref.Dim(), t.Dim(), i)
		}
		for k, s := range t.Sizes() {
			if k != d && s != st.sizes[k] {
				return Errorf("sizes of tensors must match except in dimension %d; expected size %d but got size %d for tensor number %d in the list", d, st.sizes[k], s, i)
			}
		}
		total += t.Sizes()[d]
	}
	st.sizes[d] = total
	out.Resize(dt, st.sizes)
	dst := out.Storage().Data
	ostr := out.Strides()
	// With size 1 before dim d, each input is one block of the output;
	// an input already there (the runtime had its node write it in
	// place, see staticruntime's cat parts) has nothing to copy.
	blocks := true
	for _, s := range st.sizes[:d] {
		blocks = blocks && s == 1
	}
	es := dt.Size()
	off := 0
	for _, t := range ts {
		if catSkip(t) || t.Numel() == 0 {
			continue
		}
		at := (out.Offset() + off*ostr[d]) * es
		if !(blocks && t.DType() == dt && at < len(dst) && t.DataPtr() == unsafe.Pointer(&dst[at]) && t.IsContiguous()) {
			copyConvertND(dst, dt, off*ostr[d], ostr, t.Storage().Data, t.DType(), t.Offset(), t.Strides(), t.Sizes())
		}
		off += t.Sizes()[d]
	}
	return nil
}

// stackRun stacks st.tensors along a new dim into output 0.
func stackRun(p *ProcessedNode, st *shapeState, dim int64) error {
	ts := st.tensors
	ref := ts[0]
	d, err := shapeWrapDim(dim, ref.Dim()+1)
	if err != nil {
		return err
	}
	for i, t := range ts[1:] {
		if !SameSizes(t.Sizes(), ref.Sizes()) {
			return Errorf("stack expects each tensor to be equal size, but got %v at entry 0 and %v at entry %d", ref.Sizes(), t.Sizes(), i+1)
		}
	}
	dt := catDType(ts)
	st.sizes = append(st.sizes[:0], ref.Sizes()...)
	st.sizes = append(st.sizes, 0)
	copy(st.sizes[d+1:], st.sizes[d:len(st.sizes)-1])
	st.sizes[d] = len(ts)
	out := p.OutTensor(0)
	out.Resize(dt, st.sizes)
	if out.Numel() == 0 {
		return nil
	}
	// destination strides of one input's slab: the output's minus dim d
	ostr := out.Strides()
	st.aux = append(st.aux[:0], ostr[:d]...)
	st.aux = append(st.aux, ostr[d+1:]...)
	for j, t := range ts {
		if sharesMemory(out, t) {
			// The output may begin in a part's memory (the overwrite rule).
			if stackOverOwnPart(out, ts, j, d) {
				return nil
			}
			// Not the layout stackOverOwnPart handles: read that part from
			// a copy, made before anything is written.
			if st.spare == nil {
				st.spare = &ivalue.Tensor{}
			}
			st.spare.Resize(t.DType(), t.Sizes())
			copyND(st.spare.Storage().Data, 0, st.spare.Strides(), t.Storage().Data, t.Offset(), t.Strides(), t.Sizes(), t.DType().Size())
			ts[j] = st.spare
			break // the rule's contract: at most one part shares the output's memory
		}
	}
	dst := out.Storage().Data
	for i, t := range ts {
		copyConvertND(dst, dt, i*ostr[d], st.aux, t.Storage().Data, t.DType(), t.Offset(), t.Strides(), t.Sizes())
	}
	return nil
}

// stackOverOwnPart stacks ts into out (contiguous, stacked at dim d) when
// out begins exactly where part j does, without a copy of the part: with
// outer the elements before dim d and inner those after, block (o, k) of
// out, at (o*n+k)*inner, overwrites row o*n+k of part j, which block
// (o*n+k, j) reads; writing the blocks for o from the last down, and
// within o = 0 block j first, reads every row of part j before it is
// overwritten. It needs every part contiguous and of out's dtype, and
// reports whether it ran.
func stackOverOwnPart(out *ivalue.Tensor, ts []*ivalue.Tensor, j, d int) bool {
	pj := ts[j]
	if pj.DataPtr() != out.DataPtr() {
		return false
	}
	for _, t := range ts {
		if t.DType() != out.DType() || !t.IsContiguous() {
			return false
		}
	}
	n, es := len(ts), out.DType().Size()
	inner := 1
	for _, s := range pj.Sizes()[d:] {
		inner *= s
	}
	outer := pj.Numel() / max(inner, 1)
	dst := out.Storage().Data[out.Offset()*es:]
	row := inner * es
	put := func(o, k int) {
		t := ts[k]
		src := t.Storage().Data[(t.Offset()+o*inner)*es:]
		copy(dst[(o*n+k)*row:(o*n+k+1)*row], src[:row])
	}
	for o := outer - 1; o >= 0; o-- {
		if o == 0 {
			put(0, j)
		}
		for k := range n {
			if o != 0 || k != j {
				put(o, k)
			}
		}
	}
	return true
}

// sharesMemory reports whether the storages of a and b overlap.
func sharesMemory(a, b *ivalue.Tensor) bool {
	x, y := a.Storage().Data, b.Storage().Data
	if len(x) == 0 || len(y) == 0 {
		return false
	}
	xs, ys := uintptr(unsafe.Pointer(unsafe.SliceData(x))), uintptr(unsafe.Pointer(unsafe.SliceData(y)))
	return xs < ys+uintptr(len(y)) && ys < xs+uintptr(len(x))
}

func catKernel(stack, variadic bool) Kernel {
	return func(p *ProcessedNode) error {
		st := shapeStateOf(p)
		if err := catTensors(p, st, variadic); err != nil {
			return err
		}
		dimArg := 1
		if variadic {
			dimArg = p.NumInputs() - 1
		}
		if k := p.Input(dimArg).Kind(); k != ivalue.KindInt {
			return Errorf("expected an int dim as the last input, got %s", k)
		}
		if stack {
			return stackRun(p, st, p.Int(dimArg))
		}
		return catRun(p, st, p.Int(dimArg))
	}
}

func init() {
	for _, r := range []struct {
		op, schema      string
		stack, variadic bool
	}{
		{"aten::cat", "aten::cat(Tensor[] tensors, int dim=0) -> Tensor", false, false},
		{"aten::stack", "aten::stack(Tensor[] tensors, int dim=0) -> Tensor", true, false},
		{"prim::VarConcat", "prim::VarConcat(...) -> Tensor", false, true},
		{"prim::VarStack", "prim::VarStack(...) -> Tensor", true, true},
	} {
		RegisterOut(r.op, func(n *graph.Node) Kernel {
			if !n.Matches(r.schema) {
				return nil
			}
			if r.variadic && (len(n.Inputs) < 2 || n.Inputs[len(n.Inputs)-1].Type.Kind != graph.IntType) {
				return nil
			}
			return catKernel(r.stack, r.variadic)
		})
	}
}
