package ops

import (
	"math"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// shapeState is the per-node scratch of the shape, view, cat and index
// kernels: geometry buffers reused across runs so that a steady run
// allocates nothing.
type shapeState struct {
	ints    []int // an int-list argument
	sizes   []int // computed output sizes
	strides []int // computed output strides
	aux     []int // a second scratch (source strides, split sizes, ...)
	offs    []int // per-element offsets (advanced indexing)
	own     *ivalue.Storage
	tensors []*ivalue.Tensor
	spare   *ivalue.Tensor // a copy of an input the output overwrites
}

// shapeStateOf returns p's scratch, creating it on the first run.
func shapeStateOf(p *ProcessedNode) *shapeState {
	if st, ok := p.State.(*shapeState); ok {
		return st
	}
	st := &shapeState{}
	p.State = st
	return st
}

// shapeGrow returns buf resized to n, reusing its capacity.
func shapeGrow(buf []int, n int) []int {
	if cap(buf) < n {
		return make([]int, n, n+4)
	}
	return buf[:n]
}

// shapeWrapDim normalises a possibly negative dim for a tensor of rank
// rank, as c10::maybe_wrap_dim does (a 0-d tensor accepts -1 and 0).
func shapeWrapDim(dim int64, rank int) (int, error) {
	r := int64(rank)
	if r == 0 {
		r = 1
	}
	if dim < -r || dim >= r {
		return 0, Errorf("dimension out of range (expected to be in range of [%d, %d], but got %d)", -r, r-1, dim)
	}
	if dim < 0 {
		dim += r
	}
	return int(dim), nil
}

// shapeNumel is the product of sizes.
func shapeNumel(sizes []int) int {
	n := 1
	for _, s := range sizes {
		n *= s
	}
	return n
}

// shapeInferSize replaces a single -1 in shape so that it holds numel
// elements, as at::infer_size does.
func shapeInferSize(shape []int, numel int) error {
	prod, infer := 1, -1
	for i, s := range shape {
		switch {
		case s == -1:
			if infer >= 0 {
				return Errorf("only one dimension can be inferred, got shape %v", shape)
			}
			infer = i
		case s < 0:
			return Errorf("invalid shape dimension %d in %v", s, shape)
		default:
			prod *= s
		}
	}
	if infer >= 0 {
		if prod == 0 {
			return Errorf("cannot reshape tensor of %d elements into shape %v because the unspecified dimension size -1 can be any value and is ambiguous", numel, shape)
		}
		if numel%prod == 0 {
			shape[infer] = numel / prod
			return nil
		}
	} else if prod == numel {
		return nil
	}
	return Errorf("shape %v is invalid for input of size %d", shape, numel)
}

// shapeComputeStride computes strides for viewing a tensor of oldSizes and
// oldStrides as newSizes without copying, writing them into newStrides; it
// reports false when no such view exists (at::detail::computeStride).
func shapeComputeStride(oldSizes, oldStrides, newSizes, newStrides []int) bool {
	if len(oldSizes) == 0 {
		for i := range newStrides {
			newStrides[i] = 1
		}
		return true
	}
	numel := shapeNumel(oldSizes)
	if numel == 0 {
		// Any shape of zero elements is a view; give it contiguous strides
		// the way PyTorch does when the sizes match, else row-major.
		copyContigStrides(newStrides, newSizes)
		return true
	}
	viewD := len(newSizes) - 1
	chunkBase := oldStrides[len(oldStrides)-1]
	tensorNumel, viewNumel := 1, 1
	for d := len(oldSizes) - 1; d >= 0; d-- {
		tensorNumel *= oldSizes[d]
		if d == 0 || (oldSizes[d-1] != 1 && oldStrides[d-1] != tensorNumel*chunkBase) {
			for viewD >= 0 && (viewNumel < tensorNumel || newSizes[viewD] == 1) {
				newStrides[viewD] = viewNumel * chunkBase
				viewNumel *= newSizes[viewD]
				viewD--
			}
			if viewNumel != tensorNumel {
				return false
			}
			if d > 0 {
				chunkBase = oldStrides[d-1]
				tensorNumel, viewNumel = 1, 1
			}
		}
	}
	return viewD == -1
}

// shapeDType returns the dtype of a ScalarType? argument at input i, or def
// when it is None.
func shapeDType(p *ProcessedNode, i int, def ivalue.DType) (ivalue.DType, error) {
	if p.IsNone(i) {
		return def, nil
	}
	dt, err := ivalue.DTypeFromScalarType(p.Int(i))
	if err != nil {
		return 0, Errorf("dtype argument: %v", err)
	}
	return dt, nil
}

// shapeInput returns input i as a tensor or an error naming it.
func shapeInput(p *ProcessedNode, i int, what string) (*ivalue.Tensor, error) {
	t := p.Tensor(i)
	if t == nil {
		return nil, Errorf("expected a Tensor for %s (input %d), got %s", what, i, p.Input(i).Kind())
	}
	return t, nil
}

// Copy variants: the out-variant twins of view ops that PyTorch's
// ReplaceWithCopy pass substitutes when the view is not needed. They
// write a fresh contiguous result into the node's output.

// shapeCopyKernel copies the view geometry g of input 0 into a
// contiguous output.
func shapeCopyKernel(g viewGeom) Kernel {
	return func(p *ProcessedNode) error {
		in, err := shapeInput(p, 0, "self")
		if err != nil {
			return err
		}
		st := shapeStateOf(p)
		off, err := g(p, in, st)
		if err != nil {
			return err
		}
		out := p.OutTensor(0)
		out.Resize(in.DType(), st.sizes)
		es := in.DType().Size()
		st.aux = shapeGrow(st.aux, len(st.sizes))
		copyContigStrides(st.aux, st.sizes)
		copyND(out.Storage().Data, 0, st.aux, in.Storage().Data, off, st.strides, st.sizes, es)
		return nil
	}
}

// shapeReshapeCopyKernel copies input 0 in logical order into an output
// of the sizes shape computes (reshape_copy, flatten_copy).
func shapeReshapeCopyKernel(shape func(*ProcessedNode, *ivalue.Tensor, *shapeState) error) Kernel {
	return func(p *ProcessedNode) error {
		in, err := shapeInput(p, 0, "self")
		if err != nil {
			return err
		}
		st := shapeStateOf(p)
		if err := shape(p, in, st); err != nil {
			return err
		}
		out := p.OutTensor(0)
		out.Resize(in.DType(), st.sizes)
		copyStrided(out, in)
		return nil
	}
}

// shapeExpandDimsGeom inserts a size-1 dim at each of dims in turn.
func shapeExpandDimsGeom(p *ProcessedNode, in *ivalue.Tensor, st *shapeState) (int, error) {
	st.ints = p.IntsInto(1, st.ints)
	off, _ := viewSame(nil, in, st)
	for _, d := range st.ints {
		w, err := shapeWrapDim(int64(d), len(st.sizes)+1)
		if err != nil {
			return 0, err
		}
		viewUnsqueeze(st, w)
	}
	return off, nil
}

func shapeRegisterOut(op, schema string, k func() Kernel) {
	RegisterOut(op, func(n *graph.Node) Kernel {
		if !n.Matches(schema) {
			return nil
		}
		return k()
	})
}

// Creation ops (out variants): shapes from arguments, filled every run
// because the output's storage may be reused by the memory planner.

// shapeFill sets every element of contiguous t to v (an int, float or
// bool IValue) converted to t's dtype.
func shapeFill(t *ivalue.Tensor, v ivalue.IValue) {
	n := t.Numel()
	if n == 0 {
		return
	}
	switch t.DType() {
	case ivalue.Float32:
		shapeFillT(t.F32Contig(), float32(v.AsFloat()))
	case ivalue.Float64:
		shapeFillT(t.F64Contig(), v.AsFloat())
	case ivalue.Int64:
		shapeFillT(t.I64Contig(), v.AsInt())
	case ivalue.Int32:
		shapeFillT(t.I32Contig(), int32(v.AsInt()))
	case ivalue.Int16:
		shapeFillT(t.I16()[:n], int16(v.AsInt()))
	case ivalue.Int8:
		shapeFillT(t.I8()[:n], int8(v.AsInt()))
	case ivalue.Uint8:
		shapeFillT(t.U8Contig(), uint8(v.AsInt()))
	case ivalue.Bool:
		shapeFillT(t.BContig(), v.AsFloat() != 0)
	case ivalue.Float16:
		shapeFillT(t.U16()[:n], ivalue.Float32ToHalf(float32(v.AsFloat())))
	case ivalue.BFloat16:
		shapeFillT(t.U16()[:n], ivalue.Float32ToBFloat16(float32(v.AsFloat())))
	}
}

func shapeFillT[T any](d []T, v T) {
	if len(d) == 0 {
		return
	}
	// doubling copies are faster than a store loop for large fills
	d[0] = v
	for k := 1; k < len(d); k *= 2 {
		copy(d[k:], d[:k])
	}
}

// shapeScalarDType is the dtype PyTorch infers for a Python scalar
// (full's fill value, arange's bounds) when no dtype is given.
func shapeScalarDType(v ivalue.IValue) ivalue.DType {
	switch v.Kind() {
	case ivalue.KindBool:
		return ivalue.Bool
	case ivalue.KindInt:
		return ivalue.Int64
	}
	return ivalue.Float32
}

// shapeCreateKernel builds zeros/ones/full/empty: size list at input 0,
// dtype at dtypeArg; fill is nil for full (value at input 1), or fixed.
func shapeCreateKernel(dtypeArg int, fill *ivalue.IValue) Kernel {
	return func(p *ProcessedNode) error {
		st := shapeStateOf(p)
		st.sizes = p.IntsInto(0, st.sizes)
		for _, s := range st.sizes {
			if s < 0 {
				return Errorf("negative dimension in size %v", st.sizes)
			}
		}
		v := ivalue.FromInt(0)
		def := ivalue.Float32
		if fill != nil {
			v = *fill
		} else {
			v = *p.Input(1)
			if !v.IsNumber() {
				return Errorf("full: expected a number fill_value, got %s", v.Kind())
			}
			def = shapeScalarDType(v)
		}
		dt, err := shapeDType(p, dtypeArg, def)
		if err != nil {
			return err
		}
		out := p.OutTensor(0)
		out.Resize(dt, st.sizes)
		shapeFill(out, v)
		return nil
	}
}

// shapeLikeKernel builds zeros_like/ones_like/full_like.
func shapeLikeKernel(dtypeArg int, fill *ivalue.IValue) Kernel {
	return func(p *ProcessedNode) error {
		in, err := shapeInput(p, 0, "self")
		if err != nil {
			return err
		}
		return shapeFillOut(p, "full_like", fill, 1, dtypeArg, in.DType(), in.Sizes())
	}
}

// shapeFillOut resizes output 0 to sizes, of the dtype at input dtypeArg
// (def when None), and fills it with *fill, or with the number at input
// fillArg when fill is nil (op names the op in that error).
func shapeFillOut(p *ProcessedNode, op string, fill *ivalue.IValue, fillArg, dtypeArg int, def ivalue.DType, sizes []int) error {
	var v ivalue.IValue
	if fill != nil {
		v = *fill
	} else {
		v = *p.Input(fillArg)
		if !v.IsNumber() {
			return Errorf("%s: expected a number fill_value, got %s", op, v.Kind())
		}
	}
	dt, err := shapeDType(p, dtypeArg, def)
	if err != nil {
		return err
	}
	out := p.OutTensor(0)
	out.Resize(dt, sizes)
	shapeFill(out, v)
	return nil
}

// shapeArangeKernel builds arange; start/step inputs are -1 when absent.
func shapeArangeKernel(startArg, endArg, stepArg, dtypeArg int) Kernel {
	return func(p *ProcessedNode) error {
		start, end, step := ivalue.FromInt(0), *p.Input(endArg), ivalue.FromInt(1)
		if startArg >= 0 {
			start = *p.Input(startArg)
		}
		if stepArg >= 0 {
			step = *p.Input(stepArg)
		}
		if !start.IsNumber() || !end.IsNumber() || !step.IsNumber() {
			return Errorf("arange: expected numbers for start, end, step, got %s, %s, %s", start.Kind(), end.Kind(), step.Kind())
		}
		def := ivalue.Int64
		for _, v := range [...]ivalue.IValue{start, end, step} {
			if v.Kind() == ivalue.KindDouble {
				def = ivalue.Float32
			}
		}
		dt, err := shapeDType(p, dtypeArg, def)
		if err != nil {
			return err
		}
		if dt == ivalue.Bool {
			return Errorf("arange: bool dtype is not supported")
		}
		s, e, d := start.AsFloat(), end.AsFloat(), step.AsFloat()
		// An integral dtype works on the bounds truncated to int64 (its
		// accumulate type), as PyTorch's arange_out does.
		integral := !dt.IsFloat()
		si, ei, di := start.AsInt(), end.AsInt(), step.AsInt()
		if !integral && (math.IsNaN(s) || math.IsInf(s, 0) || math.IsNaN(e) || math.IsInf(e, 0)) {
			return Errorf("arange: unsupported range: %v -> %v", s, e)
		}
		if (integral && di == 0) || (!integral && d == 0) {
			return Errorf("arange: step must be nonzero")
		}
		if (integral && ((di > 0 && ei < si) || (di < 0 && ei > si))) || (!integral && ((d > 0 && e < s) || (d < 0 && e > s))) {
			return Errorf("arange: upper bound and larger bound inconsistent with step sign")
		}
		var n int
		if dt == ivalue.Int64 {
			// int64 sizes in int64 arithmetic; other dtypes in double
			n = int((ei - si + di - shapeSign64(di)) / di)
		} else {
			n = int(math.Ceil((e - s) / d))
		}
		if n < 0 {
			return Errorf("arange: invalid size %d for range %v -> %v step %v", n, s, e, d)
		}
		st := shapeStateOf(p)
		st.sizes = append(st.sizes[:0], n)
		out := p.OutTensor(0)
		out.Resize(dt, st.sizes)
		switch dt {
		case ivalue.Float32:
			o := out.F32Contig()
			for i := range o {
				o[i] = float32(s + float64(i)*d)
			}
		case ivalue.Float64:
			o := out.F64Contig()
			for i := range o {
				o[i] = s + float64(i)*d
			}
		case ivalue.Int64:
			o := out.I64Contig()
			for i := range o {
				o[i] = si + int64(i)*di
			}
		default:
			b := out.Storage().Data
			for i := 0; i < n; i++ {
				if integral {
					copyStoreI(b, dt, i, si+int64(i)*di)
				} else {
					copyStoreF(b, dt, i, s+float64(i)*d)
				}
			}
		}
		return nil
	}
}

func shapeSign64(v int64) int64 {
	if v < 0 {
		return -1
	}
	return 1
}

func init() {
	shapeRegisterOut("static_runtime::reshape_copy", "static_runtime::reshape_copy(Tensor self, int[] shape) -> Tensor",
		func() Kernel { return shapeReshapeCopyKernel(viewShapeArg) })
	shapeRegisterOut("static_runtime::flatten_copy", "static_runtime::flatten_copy.using_ints(Tensor self, int start_dim=0, int end_dim=-1) -> Tensor",
		func() Kernel { return shapeReshapeCopyKernel(viewFlattenShape) })
	shapeRegisterOut("static_runtime::permute_copy", "static_runtime::permute_copy(Tensor self, int[] dims) -> Tensor",
		func() Kernel { return shapeCopyKernel(viewPermuteGeom) })
	shapeRegisterOut("aten::narrow_copy", "aten::narrow_copy(Tensor self, int dim, SymInt start, SymInt length) -> Tensor",
		func() Kernel { return shapeCopyKernel(viewNarrowGeom) })
	shapeRegisterOut("static_runtime::expand_dims_copy", "static_runtime::expand_dims_copy(Tensor input, int[] dims) -> Tensor",
		func() Kernel { return shapeCopyKernel(shapeExpandDimsGeom) })

	zero, one := ivalue.FromInt(0), ivalue.FromInt(1)
	shapeRegisterOut("aten::zeros", "aten::zeros(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
		func() Kernel { return shapeCreateKernel(1, &zero) })
	shapeRegisterOut("aten::ones", "aten::ones(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
		func() Kernel { return shapeCreateKernel(1, &one) })
	shapeRegisterOut("aten::empty", "aten::empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
		func() Kernel { return shapeCreateKernel(1, &zero) })
	shapeRegisterOut("aten::full", "aten::full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
		func() Kernel { return shapeCreateKernel(2, nil) })
	shapeRegisterOut("aten::zeros_like", "aten::zeros_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
		func() Kernel { return shapeLikeKernel(1, &zero) })
	shapeRegisterOut("aten::ones_like", "aten::ones_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
		func() Kernel { return shapeLikeKernel(1, &one) })
	shapeRegisterOut("aten::full_like", "aten::full_like(Tensor self, Scalar fill_value, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
		func() Kernel { return shapeLikeKernel(2, nil) })
	shapeRegisterOut("aten::arange", "aten::arange(Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
		func() Kernel { return shapeArangeKernel(-1, 0, -1, 1) })
	shapeRegisterOut("aten::arange", "aten::arange.start(Scalar start, Scalar end, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
		func() Kernel { return shapeArangeKernel(0, 1, -1, 2) })
	shapeRegisterOut("aten::arange", "aten::arange.start_step(Scalar start, Scalar end, Scalar step=1, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor",
		func() Kernel { return shapeArangeKernel(0, 1, 2, 3) })
}
