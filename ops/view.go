package ops

import (
	"math"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// View ops are native kernels: the output shares input 0's storage. Each
// run rewrites the output's own Tensor object (SetView) with geometry
// computed into per-node scratch, so the steady state allocates nothing.

// viewGeom computes a view's geometry of input in into st.sizes and
// st.strides and returns the storage offset.
type viewGeom func(p *ProcessedNode, in *ivalue.Tensor, st *shapeState) (int, error)

// viewOutTensor returns the Tensor object to turn into output i's view:
// the one set on the previous run unless the node is Fresh or that object
// is itself one of the inputs (a loop-carried value). Unlike OutTensor it
// keeps an object sharing the input's storage, which every view does.
func viewOutTensor(p *ProcessedNode, i int) *ivalue.Tensor {
	if p.Fresh {
		return p.FreshTensor(i)
	}
	t := p.OwnTensor(i)
	// Outside loops no input can be the node's own object; inside, a
	// loop-carried input may be last iteration's.
	if p.Spares != nil && viewIsInput(p, t) {
		t = &ivalue.Tensor{}
		p.Own[i] = t
		p.Values[p.Out[i]] = ivalue.FromTensor(t)
	}
	return t
}

// viewIsInput reports whether t is one of the node's input tensors or a
// tensor of a guarded slot (a loop-carried value), which a view must not
// rewrite in place.
func viewIsInput(p *ProcessedNode, t *ivalue.Tensor) bool {
	return viewSlotsHold(p, p.In, t, nil) || viewSlotsHold(p, p.Guard, t, nil)
}

// viewSlotsHold reports whether a tensor in the given slots (or in lists
// there) is t, or, with s non-nil, views storage s.
func viewSlotsHold(p *ProcessedNode, slots []int32, t *ivalue.Tensor, s *ivalue.Storage) bool {
	hit := func(it *ivalue.Tensor) bool {
		return it != nil && (it == t || (s != nil && it.Storage() == s))
	}
	for _, in := range slots {
		v := &p.Values[in]
		if hit(v.Tensor()) {
			return true
		}
		if l := v.List(); l != nil {
			for k := range l.Items {
				if hit(l.Items[k].Tensor()) {
					return true
				}
			}
		}
	}
	return false
}

// viewKernel makes a native view kernel from a geometry function.
func viewKernel(g viewGeom) Kernel {
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
		viewOutTensor(p, 0).SetView(in, off, st.sizes, st.strides)
		return nil
	}
}

// viewRegister registers a native view kernel for op when the node
// matches schema.
func viewRegister(op, schema string, g viewGeom) {
	RegisterNative(op, func(n *graph.Node) Kernel {
		if !n.Matches(schema) {
			return nil
		}
		return viewKernel(g)
	})
}

// viewSame copies in's geometry (alias, view_as with equal sizes, ...).
func viewSame(_ *ProcessedNode, in *ivalue.Tensor, st *shapeState) (int, error) {
	st.sizes = append(st.sizes[:0], in.Sizes()...)
	st.strides = append(st.strides[:0], in.Strides()...)
	return in.Offset(), nil
}

// viewShapeArg reads the int list at input 1 into st.sizes and infers -1.
func viewShapeArg(p *ProcessedNode, in *ivalue.Tensor, st *shapeState) error {
	st.sizes = p.IntsInto(1, st.sizes)
	return shapeInferSize(st.sizes, in.Numel())
}

// viewShapeOf sets st.sizes to the sizes of the tensor at input 1.
func viewShapeOf(p *ProcessedNode, in *ivalue.Tensor, st *shapeState) error {
	o, err := shapeInput(p, 1, "other")
	if err != nil {
		return err
	}
	st.sizes = append(st.sizes[:0], o.Sizes()...)
	if o.Numel() != in.Numel() {
		return Errorf("shape %v is invalid for input of size %d", o.Sizes(), in.Numel())
	}
	return nil
}

// viewFlattenShape computes flatten(start_dim, end_dim)'s sizes.
func viewFlattenShape(p *ProcessedNode, in *ivalue.Tensor, st *shapeState) error {
	rank := in.Dim()
	start, err := shapeWrapDim(p.Int(1), rank)
	if err != nil {
		return err
	}
	end, err := shapeWrapDim(p.Int(2), rank)
	if err != nil {
		return err
	}
	if start > end {
		return Errorf("flatten() has invalid args: start_dim (%d) cannot come after end_dim (%d)", start, end)
	}
	if rank == 0 {
		st.sizes = append(st.sizes[:0], 1)
		return nil
	}
	sz := in.Sizes()
	st.sizes = append(st.sizes[:0], sz[:start]...)
	st.sizes = append(st.sizes, shapeNumel(sz[start:end+1]))
	st.sizes = append(st.sizes, sz[end+1:]...)
	return nil
}

// viewStridesFor computes strides for viewing in as st.sizes, reporting
// whether the view exists.
func viewStridesFor(in *ivalue.Tensor, st *shapeState) bool {
	st.strides = shapeGrow(st.strides, len(st.sizes))
	return shapeComputeStride(in.Sizes(), in.Strides(), st.sizes, st.strides)
}

func viewOnlyShape(shape func(*ProcessedNode, *ivalue.Tensor, *shapeState) error) viewGeom {
	return func(p *ProcessedNode, in *ivalue.Tensor, st *shapeState) (int, error) {
		if err := shape(p, in, st); err != nil {
			return 0, err
		}
		if !viewStridesFor(in, st) {
			return 0, Errorf("view size %v is not compatible with input tensor's size %v and stride %v (at least one dimension spans across two contiguous subspaces); use .reshape(...) instead", st.sizes, in.Sizes(), in.Strides())
		}
		return in.Offset(), nil
	}
}

// viewReshapeKernel is reshape's native kernel: a view when the strides
// allow it, else a contiguous copy into storage this node owns.
func viewReshapeKernel(shape func(*ProcessedNode, *ivalue.Tensor, *shapeState) error) Kernel {
	return func(p *ProcessedNode) error {
		in, err := shapeInput(p, 0, "self")
		if err != nil {
			return err
		}
		st := shapeStateOf(p)
		if err := shape(p, in, st); err != nil {
			return err
		}
		out := viewOutTensor(p, 0)
		if viewStridesFor(in, st) {
			out.SetView(in, in.Offset(), st.sizes, st.strides)
			return nil
		}
		// Copy. The output object may still view an earlier input's
		// storage; write only into storage this node allocated.
		if p.Fresh || (st.own != nil && (viewSlotsHold(p, p.In, nil, st.own) || viewSlotsHold(p, p.Guard, nil, st.own))) {
			st.own = nil
		}
		if out.Storage() != st.own {
			out.SetStorage(st.own, 0)
		}
		out.Resize(in.DType(), st.sizes)
		st.own = out.Storage()
		copyStrided(out, in)
		return nil
	}
}

func viewPermuteGeom(p *ProcessedNode, in *ivalue.Tensor, st *shapeState) (int, error) {
	st.ints = p.IntsInto(1, st.ints)
	rank := in.Dim()
	if len(st.ints) != rank {
		return 0, Errorf("permute: number of dims in dims (%d) don't match number of dims of the input (%d)", len(st.ints), rank)
	}
	st.sizes = shapeGrow(st.sizes, rank)
	st.strides = shapeGrow(st.strides, rank)
	st.aux = shapeGrow(st.aux, rank)
	for i := range st.aux {
		st.aux[i] = 0
	}
	for i, d := range st.ints {
		w, err := shapeWrapDim(int64(d), rank)
		if err != nil {
			return 0, err
		}
		if st.aux[w] != 0 {
			return 0, Errorf("permute: repeated dim %d in dims %v", w, st.ints)
		}
		st.aux[w] = 1
		st.sizes[i] = in.Sizes()[w]
		st.strides[i] = in.Strides()[w]
	}
	return in.Offset(), nil
}

// viewSwap swaps dims d0 and d1 of in's geometry.
func viewSwap(in *ivalue.Tensor, st *shapeState, d0, d1 int64) (int, error) {
	rank := in.Dim()
	a, err := shapeWrapDim(d0, rank)
	if err != nil {
		return 0, err
	}
	b, err := shapeWrapDim(d1, rank)
	if err != nil {
		return 0, err
	}
	off, _ := viewSame(nil, in, st)
	if rank > 0 {
		st.sizes[a], st.sizes[b] = st.sizes[b], st.sizes[a]
		st.strides[a], st.strides[b] = st.strides[b], st.strides[a]
	}
	return off, nil
}

func viewTransposeGeom(p *ProcessedNode, in *ivalue.Tensor, st *shapeState) (int, error) {
	return viewSwap(in, st, p.Int(1), p.Int(2))
}

func viewTGeom(_ *ProcessedNode, in *ivalue.Tensor, st *shapeState) (int, error) {
	if in.Dim() > 2 {
		return 0, Errorf("t() expects a tensor with <= 2 dimensions, but self is %dD", in.Dim())
	}
	if in.Dim() < 2 {
		return viewSame(nil, in, st)
	}
	return viewSwap(in, st, 0, 1)
}

func viewNumpyTGeom(_ *ProcessedNode, in *ivalue.Tensor, st *shapeState) (int, error) {
	off, _ := viewSame(nil, in, st)
	for i, j := 0, len(st.sizes)-1; i < j; i, j = i+1, j-1 {
		st.sizes[i], st.sizes[j] = st.sizes[j], st.sizes[i]
		st.strides[i], st.strides[j] = st.strides[j], st.strides[i]
	}
	return off, nil
}

func viewSqueezeGeom(_ *ProcessedNode, in *ivalue.Tensor, st *shapeState) (int, error) {
	st.sizes, st.strides = st.sizes[:0], st.strides[:0]
	for i, s := range in.Sizes() {
		if s != 1 {
			st.sizes = append(st.sizes, s)
			st.strides = append(st.strides, in.Strides()[i])
		}
	}
	return in.Offset(), nil
}

func viewSqueezeDimGeom(p *ProcessedNode, in *ivalue.Tensor, st *shapeState) (int, error) {
	d, err := shapeWrapDim(p.Int(1), in.Dim())
	if err != nil {
		return 0, err
	}
	off, _ := viewSame(nil, in, st)
	if in.Dim() > 0 && st.sizes[d] == 1 {
		st.sizes = append(st.sizes[:d], st.sizes[d+1:]...)
		st.strides = append(st.strides[:d], st.strides[d+1:]...)
	}
	return off, nil
}

// viewUnsqueeze inserts a size-1 dim at d (already wrapped for rank+1)
// into st's geometry.
func viewUnsqueeze(st *shapeState, d int) {
	rank := len(st.sizes)
	stride := 1
	if d < rank {
		stride = st.sizes[d] * st.strides[d]
	}
	st.sizes = append(st.sizes, 0)
	st.strides = append(st.strides, 0)
	copy(st.sizes[d+1:], st.sizes[d:rank])
	copy(st.strides[d+1:], st.strides[d:rank])
	st.sizes[d], st.strides[d] = 1, stride
}

func viewUnsqueezeGeom(p *ProcessedNode, in *ivalue.Tensor, st *shapeState) (int, error) {
	d, err := shapeWrapDim(p.Int(1), in.Dim()+1)
	if err != nil {
		return 0, err
	}
	off, _ := viewSame(nil, in, st)
	viewUnsqueeze(st, d)
	return off, nil
}

func viewSelectGeom(p *ProcessedNode, in *ivalue.Tensor, st *shapeState) (int, error) {
	if in.Dim() == 0 {
		return 0, Errorf("select() cannot be applied to a 0-dim tensor")
	}
	d, err := shapeWrapDim(p.Int(1), in.Dim())
	if err != nil {
		return 0, err
	}
	size := int64(in.Sizes()[d])
	idx := p.Int(2)
	if idx < -size || idx >= size {
		return 0, Errorf("select(): index %d out of range for tensor of size %v at dimension %d", idx, in.Sizes(), d)
	}
	if idx < 0 {
		idx += size
	}
	off, _ := viewSame(nil, in, st)
	off += int(idx) * st.strides[d]
	st.sizes = append(st.sizes[:d], st.sizes[d+1:]...)
	st.strides = append(st.strides[:d], st.strides[d+1:]...)
	return off, nil
}

// viewOptInt reads an int? input, returning def for None.
func viewOptInt(p *ProcessedNode, i int, def int64) int64 {
	if p.IsNone(i) {
		return def
	}
	return p.Int(i)
}

func viewSliceGeom(p *ProcessedNode, in *ivalue.Tensor, st *shapeState) (int, error) {
	if in.Dim() == 0 {
		return 0, Errorf("slice() cannot be applied to a 0-dim tensor")
	}
	d, err := shapeWrapDim(p.Int(1), in.Dim())
	if err != nil {
		return 0, err
	}
	start := viewOptInt(p, 2, 0)
	end := viewOptInt(p, 3, math.MaxInt64)
	step := p.Int(4)
	if step <= 0 {
		return 0, Errorf("slice step must be positive, got %d", step)
	}
	size := int64(in.Sizes()[d])
	if start < 0 {
		start += size
	}
	if end < 0 {
		end += size
	}
	start = min(max(start, 0), size)
	end = min(max(end, start), size)
	off, _ := viewSame(nil, in, st)
	off += int(start) * st.strides[d]
	// ceil((end-start)/step) without overflowing for a huge step
	n := (end - start) / step
	if (end-start)%step != 0 {
		n++
	}
	st.sizes[d] = int(n)
	st.strides[d] *= int(step)
	return off, nil
}

// viewNarrowGeom serves narrow and narrow.Tensor (start as a 0-d tensor).
func viewNarrowGeom(p *ProcessedNode, in *ivalue.Tensor, st *shapeState) (int, error) {
	if in.Dim() == 0 {
		return 0, Errorf("narrow() cannot be applied to a 0-dim tensor")
	}
	d, err := shapeWrapDim(p.Int(1), in.Dim())
	if err != nil {
		return 0, err
	}
	var start int64
	if t := p.Tensor(2); t != nil {
		if t.Numel() != 1 || t.DType().IsFloat() || t.DType() == ivalue.Bool {
			return 0, Errorf("narrow(): start must be a 0-dim integral tensor, got %s%v", t.DType(), t.Sizes())
		}
		start = copyLoadI(t.Storage().Data, t.DType(), t.Offset())
	} else {
		start = p.Int(2)
	}
	length := p.Int(3)
	size := int64(in.Sizes()[d])
	if start < -size || start > size {
		return 0, Errorf("narrow(): start (%d) out of range for dimension %d of size %d", start, d, size)
	}
	if start < 0 {
		start += size
	}
	if length < 0 || length > size-start {
		return 0, Errorf("narrow(): start (%d) + length (%d) exceeds dimension size (%d)", start, length, size)
	}
	off, _ := viewSame(nil, in, st)
	off += int(start) * st.strides[d]
	st.sizes[d] = int(length)
	return off, nil
}

// viewExpandTo computes expand's geometry for target sizes in st.ints
// (at::inferExpandGeometry).
func viewExpandTo(in *ivalue.Tensor, st *shapeState) (int, error) {
	nd, td := len(st.ints), in.Dim()
	if nd < td {
		return 0, Errorf("expand: the number of sizes provided (%d) must be greater or equal to the number of dimensions in the tensor (%d)", nd, td)
	}
	st.sizes = shapeGrow(st.sizes, nd)
	st.strides = shapeGrow(st.strides, nd)
	for i := nd - 1; i >= 0; i-- {
		dim := td - nd + i
		size, stride := 1, 1
		if dim >= 0 {
			size, stride = in.Sizes()[dim], in.Strides()[dim]
		} else if i+1 < nd {
			stride = st.sizes[i+1] * st.strides[i+1]
		}
		target := st.ints[i]
		if target == -1 {
			if dim < 0 {
				return 0, Errorf("expand: the expanded size of the tensor (-1) isn't allowed in a leading, non-existing dimension %d", i)
			}
			target = size
		} else if target < 0 {
			return 0, Errorf("expand: invalid size %d at dimension %d", target, i)
		}
		if size != target {
			if size != 1 {
				return 0, Errorf("the expanded size of the tensor (%d) must match the existing size (%d) at non-singleton dimension %d; target sizes %v, tensor sizes %v", target, size, i, st.ints, in.Sizes())
			}
			size, stride = target, 0
		}
		st.sizes[i], st.strides[i] = size, stride
	}
	return in.Offset(), nil
}

func viewExpandGeom(p *ProcessedNode, in *ivalue.Tensor, st *shapeState) (int, error) {
	st.ints = p.IntsInto(1, st.ints)
	return viewExpandTo(in, st)
}

func viewExpandAsGeom(p *ProcessedNode, in *ivalue.Tensor, st *shapeState) (int, error) {
	o, err := shapeInput(p, 1, "other")
	if err != nil {
		return 0, err
	}
	st.ints = append(st.ints[:0], o.Sizes()...)
	return viewExpandTo(in, st)
}

// viewListKernel makes a native kernel for ops returning a Tensor[] of
// views along a dim (split, chunk, unbind); splits fills st.aux with
// the part sizes. drop removes the dim (unbind).
func viewListKernel(splits func(p *ProcessedNode, size int, st *shapeState) error, drop bool) Kernel {
	return func(p *ProcessedNode) error {
		in, err := shapeInput(p, 0, "self")
		if err != nil {
			return err
		}
		if in.Dim() == 0 {
			return Errorf("expected a tensor with at least 1 dimension, got a 0-dim tensor")
		}
		dimArg := 2
		if drop {
			dimArg = 1
		}
		d, err := shapeWrapDim(p.Int(dimArg), in.Dim())
		if err != nil {
			return err
		}
		st := shapeStateOf(p)
		if err := splits(p, in.Sizes()[d], st); err != nil {
			return err
		}
		l := p.OutList(0, len(st.aux), false)
		off := in.Offset()
		stride := in.Strides()[d]
		viewSame(nil, in, st)
		if drop {
			st.sizes = append(st.sizes[:d], st.sizes[d+1:]...)
			st.strides = append(st.strides[:d], st.strides[d+1:]...)
		}
		for i, n := range st.aux {
			t := l.Items[i].Tensor()
			if t == nil || p.Fresh || viewIsInput(p, t) {
				t = &ivalue.Tensor{}
				l.Items[i] = ivalue.FromTensor(t)
			}
			if !drop {
				st.sizes[d] = n
			}
			t.SetView(in, off, st.sizes, st.strides)
			off += n * stride
		}
		return nil
	}
}

// viewSplitEqual fills st.aux with split.Tensor's part sizes.
func viewSplitEqual(p *ProcessedNode, size int, st *shapeState) error {
	split := p.Int(1)
	if split < 0 || (split == 0 && size != 0) {
		return Errorf("split expects split_size be non-negative (and positive for a non-empty dim), but got split_size=%d", split)
	}
	n := 1
	if split > 0 {
		n = max((size+int(split)-1)/int(split), 1)
	}
	st.aux = shapeGrow(st.aux, n)
	for i := range st.aux {
		st.aux[i] = int(split)
	}
	st.aux[n-1] = int(split) - (int(split)*n - size)
	return nil
}

// viewSplitSizes fills st.aux with the explicit part sizes at input 1.
func viewSplitSizes(p *ProcessedNode, size int, st *shapeState) error {
	st.aux = p.IntsInto(1, st.aux)
	sum := 0
	for _, s := range st.aux {
		if s < 0 {
			return Errorf("split_with_sizes expects split_sizes have only non-negative entries, but got split_sizes=%v", st.aux)
		}
		if s > size-sum {
			// checked before adding, so the sum cannot overflow
			sum = -1
			break
		}
		sum += s
	}
	if sum != size {
		return Errorf("split_with_sizes expects split_sizes to sum exactly to %d (input tensor's size at the split dimension), but got split_sizes=%v", size, st.aux)
	}
	return nil
}

// viewChunk fills st.aux with chunk's part sizes.
func viewChunk(p *ProcessedNode, size int, st *shapeState) error {
	chunks := p.Int(1)
	if chunks <= 0 {
		return Errorf("chunk expects `chunks` to be greater than 0, got: %d", chunks)
	}
	// ceil(size/chunks) without overflowing for huge chunks
	split := size / int(chunks)
	if size%int(chunks) != 0 {
		split++
	}
	if split == 0 && size == 0 {
		// every chunk is empty
		st.aux = shapeGrow(st.aux, int(chunks))
		for i := range st.aux {
			st.aux[i] = 0
		}
		return nil
	}
	n := max((size+split-1)/split, 1)
	st.aux = shapeGrow(st.aux, n)
	for i := range st.aux {
		st.aux[i] = split
	}
	st.aux[n-1] = split - (split*n - size)
	return nil
}

func viewUnbindSizes(_ *ProcessedNode, size int, st *shapeState) error {
	st.aux = shapeGrow(st.aux, size)
	for i := range st.aux {
		st.aux[i] = 1
	}
	return nil
}

func viewListRegister(op, schema string, splits func(*ProcessedNode, int, *shapeState) error, drop bool) {
	RegisterNative(op, func(n *graph.Node) Kernel {
		if !n.Matches(schema) {
			return nil
		}
		return viewListKernel(splits, drop)
	})
}

func init() {
	viewRegister("aten::view", "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)", viewOnlyShape(viewShapeArg))
	viewRegister("aten::view_as", "aten::view_as(Tensor(a) self, Tensor other) -> Tensor(a)", viewOnlyShape(viewShapeOf))
	for _, r := range []struct {
		op, schema string
		shape      func(*ProcessedNode, *ivalue.Tensor, *shapeState) error
	}{
		{"aten::reshape", "aten::reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)", viewShapeArg},
		{"aten::reshape_as", "aten::reshape_as(Tensor(a) self, Tensor other) -> Tensor(a)", viewShapeOf},
		{"aten::flatten", "aten::flatten.using_ints(Tensor(a) self, int start_dim=0, int end_dim=-1) -> Tensor(a)", viewFlattenShape},
	} {
		RegisterNative(r.op, func(n *graph.Node) Kernel {
			if !n.Matches(r.schema) {
				return nil
			}
			return viewReshapeKernel(r.shape)
		})
	}
	viewRegister("aten::alias", "aten::alias(Tensor(a) self) -> Tensor(a)", viewSame)
	viewRegister("aten::permute", "aten::permute(Tensor(a) self, int[] dims) -> Tensor(a)", viewPermuteGeom)
	viewRegister("aten::transpose", "aten::transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)", viewTransposeGeom)
	viewRegister("aten::swapaxes", "aten::swapaxes(Tensor(a) self, int axis0, int axis1) -> Tensor(a)", viewTransposeGeom)
	viewRegister("aten::t", "aten::t(Tensor(a) self) -> Tensor(a)", viewTGeom)
	viewRegister("aten::numpy_T", "aten::numpy_T(Tensor(a) self) -> Tensor(a)", viewNumpyTGeom)
	viewRegister("aten::squeeze", "aten::squeeze(Tensor(a) self) -> Tensor(a)", viewSqueezeGeom)
	viewRegister("aten::squeeze", "aten::squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)", viewSqueezeDimGeom)
	viewRegister("aten::unsqueeze", "aten::unsqueeze(Tensor(a) self, int dim) -> Tensor(a)", viewUnsqueezeGeom)
	viewRegister("aten::select", "aten::select.int(Tensor(a) self, int dim, int index) -> Tensor(a)", viewSelectGeom)
	viewRegister("aten::slice", "aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)", viewSliceGeom)
	viewRegister("aten::narrow", "aten::narrow(Tensor(a) self, int dim, int start, int length) -> Tensor(a)", viewNarrowGeom)
	viewRegister("aten::narrow", "aten::narrow.Tensor(Tensor(a) self, int dim, Tensor start, int length) -> Tensor(a)", viewNarrowGeom)
	viewRegister("aten::expand", "aten::expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)", viewExpandGeom)
	viewRegister("aten::expand_as", "aten::expand_as(Tensor(a) self, Tensor other) -> Tensor(a)", viewExpandAsGeom)

	viewListRegister("aten::split", "aten::split.Tensor(Tensor(a -> *) self, int split_size, int dim=0) -> Tensor(a)[]", viewSplitEqual, false)
	viewListRegister("aten::split", "aten::split.sizes(Tensor(a -> *) self, int[] split_size, int dim=0) -> Tensor(a)[]", viewSplitSizes, false)
	viewListRegister("aten::split", "aten::split(Tensor(a -> *) self, int[] split_sizes, int dim=0) -> Tensor(a)[]", viewSplitSizes, false)
	viewListRegister("aten::split_with_sizes", "aten::split_with_sizes(Tensor(a -> *) self, int[] split_sizes, int dim=0) -> Tensor(a)[]", viewSplitSizes, false)
	viewListRegister("aten::chunk", "aten::chunk(Tensor(a -> *) self, int chunks, int dim=0) -> Tensor(a)[]", viewChunk, false)
	// the unsafe_ forms differ only in autograd bookkeeping
	viewListRegister("aten::unsafe_split", "aten::unsafe_split.Tensor(Tensor self, int split_size, int dim=0) -> Tensor[]", viewSplitEqual, false)
	viewListRegister("aten::unsafe_chunk", "aten::unsafe_chunk(Tensor self, int chunks, int dim=0) -> Tensor[]", viewChunk, false)
	viewListRegister("aten::unbind", "aten::unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]", viewUnbindSizes, true)
}
