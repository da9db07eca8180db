package ops

import (
	"strings"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// The rest of what torchvision's scripted detection models call:
// aten::as_tensor of numbers/lists (as aten::tensor), prim::type(Device),
// aten::IntImplicit, prim::tolist, aten::_unique2, aten::meshgrid,
// aten::index_put_ with one index tensor (MultiScaleRoIAlign's
// result[idx_in_level] = roi_align(...)) and list insert/extend
// (repeat.go has aten::repeat, norm_vector.go aten::norm).

func init() {
	RegisterOut("aten::as_tensor", func(n *graph.Node) Kernel {
		for _, s := range []string{
			"aten::as_tensor.float(float t, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
			"aten::as_tensor.int(int t, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
			"aten::as_tensor.bool(bool t, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
			"aten::as_tensor.list(t[] data, *, ScalarType? dtype=None, Device? device=None) -> Tensor",
		} {
			if n.Matches(s) {
				return tensorCtorKernel // reads data and dtype only, as aten::tensor
			}
		}
		return nil
	})
	RegisterNative("prim::type", func(n *graph.Node) Kernel {
		if !n.Matches("prim::type(Device self) -> str") {
			return nil
		}
		return func(p *ProcessedNode) error {
			d := p.Input(0)
			if d.Kind() != ivalue.KindDevice {
				return Errorf("prim::type: expected a Device, got %s", d.Kind())
			}
			s := d.Str()
			if i := strings.IndexByte(s, ':'); i >= 0 {
				s = s[:i]
			}
			if cur := p.Output(0); cur.Kind() != ivalue.KindString || cur.Str() != s {
				p.SetOutput(0, ivalue.FromString(s))
			}
			return nil
		}
	})
	RegisterNative("aten::IntImplicit", func(n *graph.Node) Kernel {
		if !n.Matches("aten::IntImplicit(Tensor a) -> int") {
			return nil
		}
		return func(p *ProcessedNode) error {
			t := p.Tensor(0)
			if t == nil {
				return Errorf("IntImplicit: expected a tensor, got %s", p.Input(0).Kind())
			}
			if t.Dim() != 0 {
				return Errorf("Cannot input a tensor of dimension other than 0 as a scalar argument")
			}
			if t.DType().IsFloat() {
				return Errorf("Cannot input a tensor of type %s as an integral argument", t.DType())
			}
			p.SetOutput(0, toIntIV(ReadScalar(t, t.Offset())))
			return nil
		}
	})
	RegisterNative("prim::tolist", func(n *graph.Node) Kernel {
		if len(n.Inputs) != 3 || len(n.Outputs) != 1 {
			return nil
		}
		return tolistKernel
	})
	RegisterOut("aten::_unique2", func(n *graph.Node) Kernel {
		if n.Matches("aten::_unique2(Tensor self, bool sorted=True, bool return_inverse=False, bool return_counts=False) -> (Tensor, Tensor, Tensor)") {
			return unique2Kernel
		}
		return nil
	})
	RegisterNative("aten::meshgrid", func(n *graph.Node) Kernel {
		switch {
		case n.Matches("aten::meshgrid(Tensor[] tensors) -> Tensor[]"):
			return meshgridKernel(false)
		case n.Matches("aten::meshgrid.indexing(Tensor[] tensors, *, str indexing) -> Tensor[]"):
			return meshgridKernel(true)
		}
		return nil
	})
	RegisterNative("aten::index_put_", func(n *graph.Node) Kernel {
		if n.Matches("aten::index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor(a!)") {
			return indexPutKernel
		}
		return nil
	})
	RegisterNative("aten::insert", func(n *graph.Node) Kernel {
		if len(n.Inputs) != 3 || n.Inputs[0].Type.Kind != graph.ListType {
			return nil
		}
		return func(p *ProcessedNode) error {
			l, err := listArg(p, 0)
			if err != nil {
				return err
			}
			// Python's list.insert clamps the position.
			i, sz := int(p.Int(1)), len(l.Items)
			if i < 0 {
				i = max(i+sz, 0)
			}
			i = min(i, sz)
			l.Items = append(l.Items, ivalue.IValue{})
			copy(l.Items[i+1:], l.Items[i:sz])
			l.Items[i] = *p.Input(2)
			return nil
		}
	})
	RegisterNative("aten::extend", func(n *graph.Node) Kernel {
		if len(n.Inputs) != 2 || n.Inputs[0].Type.Kind != graph.ListType {
			return nil
		}
		return func(p *ProcessedNode) error {
			l, err := listArg(p, 0)
			if err != nil {
				return err
			}
			o, err := listArg(p, 1)
			if err != nil {
				return err
			}
			l.Items = append(l.Items, o.Items...)
			return nil
		}
	})
}

// tolistKernel: prim::tolist(Tensor, int dim, int elem_type) for 0- and
// 1-d tensors (elem_type 0 int, 1 float, 2 bool).
func tolistKernel(p *ProcessedNode) error {
	t := p.Tensor(0)
	if t == nil {
		return Errorf("tolist: expected a tensor, got %s", p.Input(0).Kind())
	}
	dim, ety := int(p.Int(1)), p.Int(2)
	if t.Dim() != dim {
		return Errorf("Output annotation list dimension and runtime tensor dimension must match for tolist(): %d and %d", dim, t.Dim())
	}
	conv := map[int64]func(ivalue.IValue) ivalue.IValue{0: toIntIV, 1: toFloatIV, 2: toBoolIV}[ety]
	if conv == nil {
		return Errorf("tolist: unsupported element type code %d", ety)
	}
	switch dim {
	case 0:
		p.SetOutput(0, conv(ReadScalar(t, t.Offset())))
	case 1:
		l := p.OutList(0, t.Size(0), false)
		for i := range l.Items {
			l.Items[i] = conv(ReadScalar(t, t.Offset()+i*t.Strides()[0]))
		}
	default:
		return Errorf("tolist: gosr converts 0- and 1-d tensors, got %d dims", dim)
	}
	return nil
}

type unique2State struct {
	src      *ivalue.Tensor
	idx, tmp []int64
}

// unique2Kernel is torch.unique (sorted ascending; with sorted=False
// PyTorch's CPU order is its hash set's, gosr's stays sorted).
func unique2Kernel(p *ProcessedNode) error {
	x := p.Tensor(0)
	if x == nil {
		return Errorf("_unique2: expected a tensor, got %s", p.Input(0).Kind())
	}
	inv, cnt := p.Bool(2), p.Bool(3)
	st, _ := p.State.(*unique2State)
	if st == nil {
		st = &unique2State{}
		p.State = st
	}
	n := x.Numel()
	src := x
	if !x.IsContiguous() {
		if st.src == nil {
			st.src = &ivalue.Tensor{}
		}
		st.src.Resize(x.DType(), x.Sizes())
		ivalue.CopyInto(st.src, x)
		src = st.src
	}
	st.idx, st.tmp = growI64(st.idx, n), growI64(st.tmp, n)
	out, invT, cntT := p.OutTensor(0), p.OutTensor(1), p.OutTensor(2)
	if inv {
		invT.Resize(ivalue.Int64, x.Sizes())
	} else {
		invT.Resize(ivalue.Int64, []int{0})
	}
	switch x.DType() {
	case ivalue.Float32:
		return unique2Of(src.F32Contig(), out, invT, cntT, st, inv, cnt, ivalue.Float32)
	case ivalue.Float64:
		return unique2Of(src.F64Contig(), out, invT, cntT, st, inv, cnt, ivalue.Float64)
	case ivalue.Int64:
		return unique2Of(src.I64Contig(), out, invT, cntT, st, inv, cnt, ivalue.Int64)
	}
	return Errorf("_unique2: unsupported dtype %s (float32, float64, int64)", x.DType())
}

func unique2Of[T float32 | float64 | int64](v []T, out, invT, cntT *ivalue.Tensor, st *unique2State, inv, cnt bool, dt ivalue.DType) error {
	n := len(v)
	sortIndicesF32(v, 1, st.idx, st.tmp, false)
	u := 0
	for j := 0; j < n; j++ {
		if j == 0 || v[st.idx[j]] != v[st.idx[j-1]] {
			u++
		}
	}
	out.Resize(dt, []int{u})
	var o []T
	switch dt {
	case ivalue.Float32:
		o = any(out.F32Contig()).([]T)
	case ivalue.Float64:
		o = any(out.F64Contig()).([]T)
	default:
		o = any(out.I64Contig()).([]T)
	}
	if cnt {
		cntT.Resize(ivalue.Int64, []int{u})
	} else {
		cntT.Resize(ivalue.Int64, []int{0})
	}
	var iv, cv []int64
	if inv {
		iv = invT.I64Contig()
	}
	if cnt {
		cv = cntT.I64Contig()
		clear(cv)
	}
	k := -1
	for j := 0; j < n; j++ {
		x := v[st.idx[j]]
		if j == 0 || x != v[st.idx[j-1]] {
			k++
			o[k] = x
		}
		if inv {
			iv[st.idx[j]] = int64(k)
		}
		if cnt {
			cv[k]++
		}
	}
	return nil
}

// meshState: meshgrid's outputs are copies, not views: its schema
// declares no alias between the inputs and the outputs, so the memory
// planner may reuse an input's storage while a view would still read it.
type meshState struct {
	sizes, strides []int
	view           ivalue.Tensor
	outs           []*ivalue.Tensor
}

func meshgridKernel(withIndexing bool) Kernel {
	return func(p *ProcessedNode) error {
		l, err := listArg(p, 0)
		if err != nil {
			return err
		}
		xy := false
		if withIndexing {
			switch s := p.Input(1).Str(); s {
			case "ij":
			case "xy":
				xy = true
			default:
				return Errorf("torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but received: %s", s)
			}
		}
		st, _ := p.State.(*meshState)
		if st == nil {
			st = &meshState{}
			p.State = st
		}
		k := len(l.Items)
		if k == 0 {
			return Errorf("meshgrid expects a non-empty TensorList")
		}
		st.sizes, st.strides = shapeGrow(st.sizes, k), shapeGrow(st.strides, k)
		var dt ivalue.DType
		for i, it := range l.Items {
			t := it.Tensor()
			if t == nil || t.Dim() > 1 {
				return Errorf("torch.meshgrid: Expected 0D or 1D tensor in the tensor list")
			}
			if i == 0 {
				dt = t.DType()
			} else if t.DType() != dt {
				return Errorf("torch.meshgrid: Expected all tensors in the tensor list to have the same dtype")
			}
			st.sizes[i] = t.Numel()
		}
		// "xy" is "ij" with the first two inputs' dims swapped.
		dimOf := func(i int) int {
			if xy && k >= 2 && i < 2 {
				return 1 - i
			}
			return i
		}
		if xy && k >= 2 {
			st.sizes[0], st.sizes[1] = st.sizes[1], st.sizes[0]
		}
		for len(st.outs) < k {
			st.outs = append(st.outs, &ivalue.Tensor{})
		}
		out := p.OutList(0, k, false)
		for i, it := range l.Items {
			in := it.Tensor()
			t := st.outs[i]
			if p.Fresh {
				t = &ivalue.Tensor{}
				st.outs[i] = t
			}
			clear(st.strides)
			if in.Dim() == 1 {
				st.strides[dimOf(i)] = in.Strides()[0]
			}
			st.view.SetView(in, in.Offset(), st.sizes, st.strides)
			t.Resize(in.DType(), st.sizes)
			ivalue.CopyInto(t, &st.view)
			out.Items[i] = ivalue.FromTensor(t)
		}
		return nil
	}
}

type indexPutState struct {
	vals   *ivalue.Tensor // values broadcast to [k, rest...], self's dtype
	view   ivalue.Tensor
	sizes  []int
	stride []int
	rows   []int64
}

// indexPutKernel: self[idx] = values for one index tensor on dim 0 (int64
// positions or a bool mask), values broadcast, accumulate=False.
func indexPutKernel(p *ProcessedNode) error {
	self := p.Tensor(0)
	if self == nil {
		return Errorf("index_put_: expected a tensor as self, got %s", p.Input(0).Kind())
	}
	il, err := listArg(p, 1)
	if err != nil {
		return err
	}
	if p.Bool(3) {
		return Errorf("index_put_: accumulate=True is not supported")
	}
	if len(il.Items) != 1 || il.Items[0].Tensor() == nil {
		return Errorf("index_put_: gosr supports one index tensor (self[idx] = v), got %d indices", len(il.Items))
	}
	if !self.IsContiguous() || self.Dim() == 0 {
		return Errorf("index_put_: expected a contiguous self with at least 1 dim")
	}
	idx := il.Items[0].Tensor()
	vals := p.Tensor(2)
	if vals == nil {
		return Errorf("index_put_: expected a tensor of values, got %s", p.Input(2).Kind())
	}
	st, _ := p.State.(*indexPutState)
	if st == nil {
		st = &indexPutState{vals: &ivalue.Tensor{}}
		p.State = st
	}
	n := self.Size(0)
	st.rows = st.rows[:0]
	switch idx.DType() {
	case ivalue.Bool:
		if idx.Dim() != 1 || idx.Size(0) != n {
			return Errorf("index_put_: a mask of shape %s does not match self's first dim %d", ShapeString(idx.Sizes()), n)
		}
		b := idx.B()
		for i := 0; i < n; i++ {
			if b[idx.Offset()+i*idx.Strides()[0]] {
				st.rows = append(st.rows, int64(i))
			}
		}
	case ivalue.Int64:
		if idx.Dim() > 1 {
			return Errorf("index_put_: gosr supports a 0- or 1-d index tensor, got %dD", idx.Dim())
		}
		iv := idx.I64()
		m := idx.Numel()
		for i := 0; i < m; i++ {
			o := idx.Offset()
			if idx.Dim() == 1 {
				o += i * idx.Strides()[0]
			}
			r := iv[o]
			if r < -int64(n) || r >= int64(n) {
				return Errorf("index %d is out of bounds for dimension 0 with size %d", r, n)
			}
			if r < 0 {
				r += int64(n)
			}
			st.rows = append(st.rows, r)
		}
	default:
		return Errorf("tensors used as indices must be long or bool tensors, got %s", idx.DType())
	}
	k := len(st.rows)
	// values broadcast (right-aligned) to [k, self.sizes[1:]...].
	nd := self.Dim()
	st.sizes, st.stride = shapeGrow(st.sizes, nd), shapeGrow(st.stride, nd)
	st.sizes[0] = k
	copy(st.sizes[1:], self.Sizes()[1:])
	if vals.Dim() > nd {
		return Errorf("index_put_: values of shape %s do not broadcast to %s", ShapeString(vals.Sizes()), ShapeString(st.sizes))
	}
	for d := 0; d < nd; d++ {
		vd := d - (nd - vals.Dim())
		switch {
		case vd < 0:
			st.stride[d] = 0
		case vals.Size(vd) == st.sizes[d]:
			st.stride[d] = vals.Strides()[vd]
		case vals.Size(vd) == 1:
			st.stride[d] = 0
		default:
			return Errorf("shape mismatch: value tensor of shape %s cannot be broadcast to indexing result of shape %s",
				ShapeString(vals.Sizes()), ShapeString(st.sizes))
		}
	}
	p.SetOutput(0, ivalue.FromTensor(self))
	if k == 0 {
		return nil
	}
	st.view.SetView(vals, vals.Offset(), st.sizes, st.stride)
	st.vals.Resize(self.DType(), st.sizes)
	if err := CastInto(st.vals, &st.view); err != nil {
		return err
	}
	es := self.DType().Size()
	row := self.Numel() / n * es
	dst := self.Storage().Data[self.Offset()*es:]
	src := st.vals.Storage().Data[st.vals.Offset()*es:]
	for j, r := range st.rows {
		copy(dst[int(r)*row:int(r+1)*row], src[j*row:(j+1)*row])
	}
	return nil
}

func init() {
	// list * n and n * list: the list repeated (SSD's anchor generator,
	// roi_heads' [0] * n).
	RegisterNative("aten::mul", func(n *graph.Node) Kernel {
		li, ni := -1, -1
		switch {
		case n.Matches("aten::mul.left_t(t[] l, int n) -> t[]"):
			li, ni = 0, 1
		case n.Matches("aten::mul.right_(int n, t[] l) -> t[]"):
			li, ni = 1, 0
		default:
			return nil
		}
		return func(p *ProcessedNode) error {
			src, err := listArg(p, li)
			if err != nil {
				return err
			}
			k := max(int(p.Int(ni)), 0)
			m := len(src.Items)
			l := p.OutList(0, m*k, false)
			if l == src {
				return Errorf("mul: list output aliases its input")
			}
			for r := 0; r < k; r++ {
				copy(l.Items[r*m:(r+1)*m], src.Items)
			}
			return nil
		}
	})
}
