package ops

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// Indexing kernels (out variants): index_select, gather, advanced
// indexing (aten::index.Tensor) and masked_select. They move elements by
// byte size, so every dtype is handled by one code path per element size.

// idxState is the per-node scratch of the indexing kernels.
type idxState struct {
	sizes, bsizes, tmp []int
	a, b, c, d         []int
	offs               []int
	dims               []*ivalue.Tensor // per self dim: the index tensor, or nil
	masks              []*ivalue.Tensor // nonzero() results of bool masks, reused
}

func idxStateOf(p *ProcessedNode) *idxState {
	if st, ok := p.State.(*idxState); ok {
		return st
	}
	st := &idxState{}
	p.State = st
	return st
}

// idxAt reads the k-th element (logical order) of a 0-d or 1-d int64 or
// int32 index tensor.
func idxAt(t *ivalue.Tensor, k int) int64 {
	pos := t.Offset()
	if t.Dim() > 0 {
		pos += k * t.Strides()[0]
	}
	if t.DType() == ivalue.Int32 {
		return int64(t.I32()[pos])
	}
	return t.I64()[pos]
}

// idxCopyElem copies one element of es bytes.
func idxCopyElem(dst []byte, di int, src []byte, si int, es int) {
	switch es {
	case 4:
		copyAs[uint32](dst)[di] = copyAs[uint32](src)[si]
	case 8:
		copyAs[uint64](dst)[di] = copyAs[uint64](src)[si]
	case 2:
		copyAs[uint16](dst)[di] = copyAs[uint16](src)[si]
	case 1:
		dst[di] = src[si]
	default:
		copy(dst[di*es:di*es+es], src[si*es:si*es+es])
	}
}

func idxSelectKernel(p *ProcessedNode) error {
	in, err := shapeInput(p, 0, "self")
	if err != nil {
		return err
	}
	index, err := shapeInput(p, 2, "index")
	if err != nil {
		return err
	}
	if index.DType() != ivalue.Int64 && index.DType() != ivalue.Int32 {
		return Errorf("index_select(): expected dtype int32 or int64 for index, got %s", index.DType())
	}
	if index.Dim() > 1 {
		return Errorf("index_select(): index must be a vector, got %d dims", index.Dim())
	}
	if in.Dim() == 0 {
		return Errorf("index_select(): self must have at least one dimension")
	}
	d, err := shapeWrapDim(p.Int(1), in.Dim())
	if err != nil {
		return err
	}
	st := idxStateOf(p)
	n := index.Numel()
	st.sizes = append(st.sizes[:0], in.Sizes()...)
	size := st.sizes[d]
	st.sizes[d] = n
	out := p.OutTensor(0)
	out.Resize(in.DType(), st.sizes)
	// one slab per index: the self slice at that index, minus dim d
	ostr, sstr := out.Strides(), in.Strides()
	st.a = append(append(st.a[:0], ostr[:d]...), ostr[d+1:]...)
	st.b = append(append(st.b[:0], sstr[:d]...), sstr[d+1:]...)
	st.bsizes = append(append(st.bsizes[:0], in.Sizes()[:d]...), in.Sizes()[d+1:]...)
	dst, src, es := out.Storage().Data, in.Storage().Data, in.DType().Size()
	for j := 0; j < n; j++ {
		v := idxAt(index, j)
		if v < 0 || v >= int64(size) {
			return Errorf("index_select(): index %d out of range for dimension %d of size %d", v, d, size)
		}
		if out.Numel() > 0 {
			copyND(dst, j*ostr[d], st.a, src, in.Offset()+int(v)*sstr[d], st.b, st.bsizes, es)
		}
	}
	return nil
}

func idxGatherKernel(p *ProcessedNode) error {
	in, err := shapeInput(p, 0, "self")
	if err != nil {
		return err
	}
	index, err := shapeInput(p, 2, "index")
	if err != nil {
		return err
	}
	if index.DType() != ivalue.Int64 {
		return Errorf("gather(): expected dtype int64 for index, got %s", index.DType())
	}
	rank := max(in.Dim(), 1)
	d, err := shapeWrapDim(p.Int(1), in.Dim())
	if err != nil {
		return err
	}
	if max(index.Dim(), 1) != rank {
		return Errorf("gather(): index tensor must have the same number of dimensions as input tensor (%d vs %d)", index.Dim(), in.Dim())
	}
	st := idxStateOf(p)
	// geometry padded to rank >= 1 so 0-d tensors index like 1-element vectors
	st.sizes = idxPad(st.sizes, index.Sizes())
	st.a = idxPad(st.a, index.Strides())
	st.b = idxPad(st.b, in.Strides())
	st.c = idxPad(st.c, in.Sizes())
	for k := range st.sizes {
		if k != d && st.sizes[k] > st.c[k] {
			return Errorf("gather(): size of index (%v) must not exceed the size of self (%v) at dimension %d", index.Sizes(), in.Sizes(), k)
		}
	}
	out := p.OutTensor(0)
	out.Resize(in.DType(), index.Sizes())
	n := index.Numel()
	if n == 0 {
		return nil
	}
	dst, src, es := out.Storage().Data, in.Storage().Data, in.DType().Size()
	ix := index.I64()
	st.d = shapeGrow(st.d, rank)
	for k := range st.d {
		st.d[k] = 0
	}
	size := int64(st.c[d])
	ioff, soff := index.Offset(), in.Offset()
	for k := 0; k < n; k++ {
		v := ix[ioff]
		if v < 0 || v >= size {
			return Errorf("gather(): index %d is out of bounds for dimension %d with size %d", v, d, size)
		}
		idxCopyElem(dst, k, src, soff+int(v)*st.b[d], es)
		// advance the multi-index over index's shape; dim d does not move self
		for m := rank - 1; m >= 0; m-- {
			st.d[m]++
			ioff += st.a[m]
			if m != d {
				soff += st.b[m]
			}
			if st.d[m] < st.sizes[m] {
				break
			}
			ioff -= st.a[m] * st.sizes[m]
			if m != d {
				soff -= st.b[m] * st.sizes[m]
			}
			st.d[m] = 0
		}
	}
	return nil
}

// idxPad copies v into buf, as [1] when v is empty (0-d geometry).
func idxPad(buf, v []int) []int {
	if len(v) == 0 {
		return append(buf[:0], 1)
	}
	return append(buf[:0], v...)
}

// idxNonzero fills out (Resized to [count]) per mask dim with the
// coordinates of the true elements of mask, in row-major order.
func idxNonzero(st *idxState, mask *ivalue.Tensor, first int) (int, error) {
	k := mask.Dim()
	for len(st.masks) < first+k {
		st.masks = append(st.masks, &ivalue.Tensor{})
	}
	mb := mask.Storage().Data
	count := 0
	idxWalk(mask.Sizes(), mask.Strides(), mask.Offset(), &st.tmp, func(pos int, _ []int) {
		if mb[pos] != 0 {
			count++
		}
	})
	var one [1]int
	one[0] = count
	for j := 0; j < k; j++ {
		st.masks[first+j].Resize(ivalue.Int64, one[:])
	}
	c := 0
	idxWalk(mask.Sizes(), mask.Strides(), mask.Offset(), &st.tmp, func(pos int, coord []int) {
		if mb[pos] != 0 {
			for j := 0; j < k; j++ {
				st.masks[first+j].I64()[c] = int64(coord[j])
			}
			c++
		}
	})
	return k, nil
}

// idxWalk calls f with the storage position and coordinates of every
// element of a strided geometry in row-major order (cold paths: masks).
func idxWalk(sizes, strides []int, off int, buf *[]int, f func(pos int, coord []int)) {
	n := shapeNumel(sizes)
	if n == 0 {
		return
	}
	*buf = shapeGrow(*buf, len(sizes))
	c := *buf
	for i := range c {
		c[i] = 0
	}
	for k := 0; k < n; k++ {
		f(off, c)
		for m := len(sizes) - 1; m >= 0; m-- {
			c[m]++
			off += strides[m]
			if c[m] < sizes[m] {
				break
			}
			off -= strides[m] * sizes[m]
			c[m] = 0
		}
	}
}

func idxIndexKernel(p *ProcessedNode) error {
	in, err := shapeInput(p, 0, "self")
	if err != nil {
		return err
	}
	l := p.Input(1).List()
	if l == nil {
		return Errorf("index(): expected a Tensor?[] of indices, got %s", p.Input(1).Kind())
	}
	st := idxStateOf(p)
	rank := in.Dim()
	// 1. one entry per self dim: an int64 index tensor or nil (full slice);
	// bool masks expand into one index tensor per masked dim.
	st.dims = st.dims[:0]
	nmask := 0
	for i := range l.Items {
		it := &l.Items[i]
		if it.IsNone() {
			st.dims = append(st.dims, nil)
			continue
		}
		t := it.Tensor()
		if t == nil {
			return Errorf("index(): expected a Tensor or None at position %d of indices, got %s", i, it.Kind())
		}
		switch t.DType() {
		case ivalue.Int64:
			st.dims = append(st.dims, t)
		case ivalue.Bool, ivalue.Uint8:
			if t.Dim() == 0 {
				return Errorf("index(): 0-dim boolean indices are not supported")
			}
			at := len(st.dims)
			if at+t.Dim() > rank {
				return Errorf("index(): too many indices for tensor of dimension %d", rank)
			}
			for j, s := range t.Sizes() {
				if in.Sizes()[at+j] != s {
					return Errorf("index(): the shape of the mask %v at index %d does not match the shape of the indexed tensor %v at index %d", t.Sizes(), j, in.Sizes(), at+j)
				}
			}
			k, _ := idxNonzero(st, t, nmask)
			for j := 0; j < k; j++ {
				st.dims = append(st.dims, st.masks[nmask+j])
			}
			nmask += k
		default:
			return Errorf("index(): tensors used as indices must be long, byte or bool tensors, got %s", t.DType())
		}
	}
	if len(st.dims) > rank {
		return Errorf("index(): too many indices for tensor of dimension %d (got %d)", rank, len(st.dims))
	}
	for len(st.dims) < rank {
		st.dims = append(st.dims, nil)
	}
	// 2. broadcast the index tensors and find where their dims go
	first, last, count := -1, -1, 0
	st.bsizes = st.bsizes[:0]
	for d, t := range st.dims {
		if t == nil {
			continue
		}
		if first < 0 {
			first = d
		}
		last = d
		count++
		st.tmp, err = BroadcastShapes(st.tmp, st.bsizes, t.Sizes())
		if err != nil {
			return Errorf("index(): shape mismatch: indexing tensors could not be broadcast together: %v", err)
		}
		st.bsizes, st.tmp = st.tmp, st.bsizes
	}
	if count == 0 {
		// no advanced index: the result is a copy of self
		out := p.OutTensor(0)
		out.Resize(in.DType(), in.Sizes())
		copyStrided(out, in)
		return nil
	}
	adjacent := last-first+1 == count
	nb := shapeNumel(st.bsizes)
	// 3. per broadcast position: the storage offset the indices select
	st.offs = shapeGrow(st.offs, nb)
	for i := range st.offs {
		st.offs[i] = 0
	}
	for d, t := range st.dims {
		if t == nil {
			continue
		}
		if err := idxAccumulate(st, t, in.Sizes()[d], in.Strides()[d], d); err != nil {
			return err
		}
	}
	// 4. output = pre dims, the broadcast dims, post dims
	st.sizes, st.a, st.b, st.c = st.sizes[:0], st.a[:0], st.b[:0], st.c[:0] // out sizes; pre sizes/strides; post strides
	st.d = st.d[:0]                                                         // post sizes
	for d, t := range st.dims {
		if t != nil {
			continue
		}
		if adjacent && d < first {
			st.a = append(st.a, in.Sizes()[d])
			st.b = append(st.b, in.Strides()[d])
		} else {
			st.d = append(st.d, in.Sizes()[d])
			st.c = append(st.c, in.Strides()[d])
		}
	}
	st.sizes = append(append(append(st.sizes, st.a...), st.bsizes...), st.d...)
	out := p.OutTensor(0)
	out.Resize(in.DType(), st.sizes)
	if out.Numel() == 0 {
		return nil
	}
	post := shapeNumel(st.d)
	ostr := out.Strides()[len(out.Strides())-len(st.d):]
	dst, src, es := out.Storage().Data, in.Storage().Data, in.DType().Size()
	pos := 0
	npre := shapeNumel(st.a)
	st.tmp = shapeGrow(st.tmp, len(st.a))
	for i := range st.tmp {
		st.tmp[i] = 0
	}
	base := in.Offset()
	for k := 0; k < npre; k++ {
		for _, o := range st.offs {
			if post == 1 {
				idxCopyElem(dst, pos, src, base+o, es)
			} else {
				copyND(dst, pos, ostr, src, base+o, st.c, st.d, es)
			}
			pos += post
		}
		for m := len(st.a) - 1; m >= 0; m-- {
			st.tmp[m]++
			base += st.b[m]
			if st.tmp[m] < st.a[m] {
				break
			}
			base -= st.b[m] * st.a[m]
			st.tmp[m] = 0
		}
	}
	return nil
}

// idxAccumulate adds, for every position of the broadcast index shape,
// the storage offset index tensor t selects along a dim of the given
// size and stride (negative indices wrap).
func idxAccumulate(st *idxState, t *ivalue.Tensor, size, stride, dim int) error {
	nb := len(st.offs)
	if nb == 0 {
		return nil
	}
	rb := len(st.bsizes)
	// t's strides aligned to the broadcast shape, 0 where broadcast
	st.tmp = shapeGrow(st.tmp, 2*rb)
	tstr, c := st.tmp[:rb], st.tmp[rb:]
	lead := rb - t.Dim()
	for m := 0; m < rb; m++ {
		tstr[m], c[m] = 0, 0
		if j := m - lead; j >= 0 && t.Sizes()[j] != 1 {
			tstr[m] = t.Strides()[j]
		}
	}
	ix := t.I64()
	off := t.Offset()
	for k := 0; k < nb; k++ {
		v := ix[off]
		if v < -int64(size) || v >= int64(size) {
			return Errorf("index(): index %d is out of bounds for dimension %d with size %d", v, dim, size)
		}
		if v < 0 {
			v += int64(size)
		}
		st.offs[k] += int(v) * stride
		for m := rb - 1; m >= 0; m-- {
			c[m]++
			off += tstr[m]
			if c[m] < st.bsizes[m] {
				break
			}
			off -= tstr[m] * st.bsizes[m]
			c[m] = 0
		}
	}
	return nil
}

func idxMaskedSelectKernel(p *ProcessedNode) error {
	in, err := shapeInput(p, 0, "self")
	if err != nil {
		return err
	}
	mask, err := shapeInput(p, 1, "mask")
	if err != nil {
		return err
	}
	if mask.DType() != ivalue.Bool && mask.DType() != ivalue.Uint8 {
		return Errorf("masked_select(): expected a bool mask, got %s", mask.DType())
	}
	st := idxStateOf(p)
	st.bsizes, err = BroadcastShapes(st.bsizes, in.Sizes(), mask.Sizes())
	if err != nil {
		return Errorf("masked_select(): %v", err)
	}
	rb := len(st.bsizes)
	// both operands' strides aligned to the broadcast shape
	st.a = idxAlignStrides(st.a, in, rb)
	st.b = idxAlignStrides(st.b, mask, rb)
	st.c = shapeGrow(st.c, rb)
	n := shapeNumel(st.bsizes)
	mb := mask.Storage().Data
	count := 0
	idxWalk2(st, n, 0, mask.Offset(), func(_, mpos int) {
		if mb[mpos] != 0 {
			count++
		}
	})
	st.sizes = append(st.sizes[:0], count)
	out := p.OutTensor(0)
	out.Resize(in.DType(), st.sizes)
	dst, src, es := out.Storage().Data, in.Storage().Data, in.DType().Size()
	k := 0
	idxWalk2(st, n, in.Offset(), mask.Offset(), func(spos, mpos int) {
		if mb[mpos] != 0 {
			idxCopyElem(dst, k, src, spos, es)
			k++
		}
	})
	return nil
}

func idxAlignStrides(buf []int, t *ivalue.Tensor, rb int) []int {
	buf = shapeGrow(buf, rb)
	lead := rb - t.Dim()
	for m := range buf {
		buf[m] = 0
		if j := m - lead; j >= 0 && t.Sizes()[j] != 1 {
			buf[m] = t.Strides()[j]
		}
	}
	return buf
}

// idxWalk2 walks the broadcast shape st.bsizes with two operands of
// strides st.a and st.b, using st.c as the counter.
func idxWalk2(st *idxState, n, aoff, boff int, f func(apos, bpos int)) {
	c := st.c
	for i := range c {
		c[i] = 0
	}
	for k := 0; k < n; k++ {
		f(aoff, boff)
		for m := len(c) - 1; m >= 0; m-- {
			c[m]++
			aoff += st.a[m]
			boff += st.b[m]
			if c[m] < st.bsizes[m] {
				break
			}
			aoff -= st.a[m] * st.bsizes[m]
			boff -= st.b[m] * st.bsizes[m]
			c[m] = 0
		}
	}
}

func idxRegister(op, schema string, k Kernel) {
	RegisterOut(op, func(n *graph.Node) Kernel {
		if !n.Matches(schema) {
			return nil
		}
		return k
	})
}

func init() {
	idxRegister("aten::index_select", "aten::index_select(Tensor self, int dim, Tensor index) -> Tensor", idxSelectKernel)
	idxRegister("aten::gather", "aten::gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False) -> Tensor", idxGatherKernel)
	idxRegister("aten::index", "aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor", idxIndexKernel)
	idxRegister("aten::index", "aten::index.Tensor_hacked_twin(Tensor self, Tensor[] indices) -> Tensor", idxIndexKernel)
	idxRegister("aten::masked_select", "aten::masked_select(Tensor self, Tensor mask) -> Tensor", idxMaskedSelectKernel)
}
