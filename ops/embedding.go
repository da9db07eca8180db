package ops

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops/gemm"
)

// aten::embedding and aten::embedding_bag (both overloads). The bag op
// returns PyTorch's four CPU results: output, offset2bag, bag_size and
// max_indices, laid out as PyTorch 1.13 computes them (where PyTorch
// leaves them uninitialised, in sum mode, they are zeros).

const (
	embeddingSchema    = "aten::embedding(Tensor weight, Tensor indices, int padding_idx=-1, bool scale_grad_by_freq=False, bool sparse=False) -> Tensor"
	embeddingBagSchema = "aten::embedding_bag(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq=False, int mode=0, bool sparse=False, Tensor? per_sample_weights=None, bool include_last_offset=False) -> (Tensor, Tensor, Tensor, Tensor)"
	embeddingBagPadSch = "aten::embedding_bag.padding_idx(Tensor weight, Tensor indices, Tensor offsets, bool scale_grad_by_freq, int mode, bool sparse, Tensor? per_sample_weights, bool include_last_offset, int? padding_idx) -> (Tensor, Tensor, Tensor, Tensor)"
)

const (
	embModeSum = iota
	embModeMean
	embModeMax
)

type embState struct {
	shape []int
	idx   []int64 // indices in logical order
	offs  []int64 // bag starts, plus the end
}

func embStateOf(p *ProcessedNode) *embState {
	st, _ := p.State.(*embState)
	if st == nil {
		st = &embState{}
		p.State = st
	}
	return st
}

func init() {
	RegisterOut("aten::embedding", func(n *graph.Node) Kernel {
		if !n.Matches(embeddingSchema) {
			return nil
		}
		return embeddingKernel
	})
	RegisterOut("aten::embedding_bag", func(n *graph.Node) Kernel {
		switch {
		case n.Matches(embeddingBagSchema):
			return func(p *ProcessedNode) error { return embeddingBagKernel(p, false) }
		case n.Matches(embeddingBagPadSch):
			return func(p *ProcessedNode) error { return embeddingBagKernel(p, true) }
		}
		return nil
	})
}

// embIndices copies an int64 or int32 index tensor into st.idx in
// logical order, checking every index against rows.
func embIndices(t *ivalue.Tensor, rows int, st *embState, what string) ([]int64, error) {
	n := t.Numel()
	if cap(st.idx) < n {
		st.idx = make([]int64, n)
	}
	idx := st.idx[:n]
	switch t.DType() {
	case ivalue.Int64:
		if t.IsContiguous() {
			copy(idx, t.I64Contig())
		} else {
			src, k := t.I64(), 0
			embForEach(t, func(i int) { idx[k] = src[i]; k++ })
		}
	case ivalue.Int32:
		src, k := t.I32(), 0
		embForEach(t, func(i int) { idx[k] = int64(src[i]); k++ })
	default:
		return nil, Errorf("%s: expected an int64 or int32 tensor, got %s", what, t.DType())
	}
	for _, v := range idx {
		if v < 0 || v >= int64(rows) {
			return nil, Errorf("%s: index %d out of range for %d embeddings", what, v, rows)
		}
	}
	return idx, nil
}

// embForEach visits t's storage indices in logical order without
// allocating (up to MaxIterDims dims).
func embForEach(t *ivalue.Tensor, f func(int)) {
	sz, str := t.Sizes(), t.Strides()
	n := t.Numel()
	if n == 0 {
		return
	}
	d := len(sz)
	if d > MaxIterDims {
		t.ForEachIndex(f)
		return
	}
	var c [MaxIterDims]int
	off := t.Offset()
	for k := 0; k < n; k++ {
		f(off)
		for a := d - 1; a >= 0; a-- {
			c[a]++
			off += str[a]
			if c[a] < sz[a] {
				break
			}
			off -= c[a] * str[a]
			c[a] = 0
		}
	}
}

// embWeight checks a 2-d float32 weight.
func embWeight(p *ProcessedNode, what string) (*ivalue.Tensor, error) {
	w, err := gemmInput(p, 0, what)
	if err != nil {
		return nil, err
	}
	if w.Dim() != 2 {
		return nil, Errorf("%s: expected 2 dims [num_embeddings, embedding_dim], got sizes %v", what, w.Sizes())
	}
	return w, nil
}

func embeddingKernel(p *ProcessedNode) error {
	w, err := embWeight(p, "embedding weight")
	if err != nil {
		return err
	}
	it := p.Tensor(1)
	if it == nil {
		return Errorf("embedding indices: expected a Tensor, got %s", p.Input(1).Kind())
	}
	st := embStateOf(p)
	idx, err := embIndices(it, w.Size(0), st, "embedding indices")
	if err != nil {
		return err
	}
	dim := w.Size(1)
	st.shape = append(append(st.shape[:0], it.Sizes()...), dim)
	out := p.OutTensor(0)
	out.Resize(ivalue.Float32, st.shape)
	o := out.F32Contig()
	wd, wo, ws := w.F32(), w.Offset(), w.Strides()
	for k, v := range idx {
		dst := o[k*dim : (k+1)*dim]
		src := wo + int(v)*ws[0]
		if ws[1] == 1 {
			copy(dst, wd[src:src+dim])
			continue
		}
		for j := range dst {
			dst[j] = wd[src+j*ws[1]]
		}
	}
	return nil
}

func embeddingBagKernel(p *ProcessedNode, hasPad bool) error {
	w, err := embWeight(p, "embedding_bag weight")
	if err != nil {
		return err
	}
	rows, dim := w.Size(0), w.Size(1)
	it, ot := p.Tensor(1), p.Tensor(2)
	if it == nil || ot == nil {
		return Errorf("embedding_bag: expected indices and offsets tensors")
	}
	mode := int(p.Int(4))
	if mode < embModeSum || mode > embModeMax {
		return Errorf("embedding_bag: mode must be 0 (sum), 1 (mean) or 2 (max), got %d", mode)
	}
	ilo := p.Bool(7)
	pad := int64(-1)
	if hasPad && !p.IsNone(8) {
		pad = p.Int(8)
		if pad < -int64(rows) || pad >= int64(rows) {
			return Errorf("embedding_bag: padding_idx must be within -%d through %d, got %d", rows, rows-1, pad)
		}
		if pad < 0 {
			pad += int64(rows)
		}
	}
	var psw *ivalue.Tensor
	if !p.IsNone(6) {
		if psw, err = gemmInput(p, 6, "embedding_bag per_sample_weights"); err != nil {
			return err
		}
		if mode != embModeSum {
			return Errorf("embedding_bag: per_sample_weights is only supported for mode='sum', got mode %d", mode)
		}
		if psw.Numel() != it.Numel() {
			return Errorf("embedding_bag: per_sample_weights sizes %v must match indices sizes %v", psw.Sizes(), it.Sizes())
		}
	}
	st := embStateOf(p)
	idx, err := embIndices(it, rows, st, "embedding_bag indices")
	if err != nil {
		return err
	}
	nIdx := len(idx)
	// Bag starts: from offsets, or every row of 2-d indices.
	nOff := 0
	switch it.Dim() {
	case 1:
		if ot.Dim() != 1 {
			return Errorf("embedding_bag offsets: expected a 1-d tensor, got sizes %v", ot.Sizes())
		}
		if ot.DType() != ivalue.Int64 && ot.DType() != ivalue.Int32 {
			return Errorf("embedding_bag offsets: expected an int64 or int32 tensor, got %s", ot.DType())
		}
		nOff = ot.Size(0)
		if cap(st.offs) < nOff {
			st.offs = make([]int64, nOff)
		}
		st.offs = st.offs[:nOff]
		k := 0
		if ot.DType() == ivalue.Int64 {
			src := ot.I64()
			embForEach(ot, func(i int) { st.offs[k] = src[i]; k++ })
		} else {
			src := ot.I32()
			embForEach(ot, func(i int) { st.offs[k] = int64(src[i]); k++ })
		}
	case 2:
		// As F.embedding_bag: one bag per row, offsets ignored.
		nb, l := it.Size(0), it.Size(1)
		nOff, ilo = nb, false
		if cap(st.offs) < nOff {
			st.offs = make([]int64, nOff)
		}
		st.offs = st.offs[:nOff]
		for b := range st.offs {
			st.offs[b] = int64(b * l)
		}
	default:
		return Errorf("embedding_bag indices: expected 1 or 2 dims, got sizes %v", it.Sizes())
	}
	offs := st.offs
	if nOff == 0 {
		return Errorf("embedding_bag offsets: expected at least one offset")
	}
	if offs[0] != 0 {
		return Errorf("embedding_bag: offsets[0] has to be 0, got %d", offs[0])
	}
	for b := 1; b < nOff; b++ {
		if offs[b] < offs[b-1] || offs[b] > int64(nIdx) {
			return Errorf("embedding_bag: offsets must be non-decreasing and at most %d (the number of indices), got %d after %d", nIdx, offs[b], offs[b-1])
		}
	}
	nBags := nOff
	if ilo {
		nBags = nOff - 1
		if offs[nOff-1] != int64(nIdx) {
			return Errorf("embedding_bag: with include_last_offset the last offset must equal the number of indices %d, got %d", nIdx, offs[nOff-1])
		}
	}
	bagEnd := func(b int) int {
		if b+1 < nOff {
			return int(offs[b+1])
		}
		return nIdx
	}
	// Outputs.
	st.shape = append(st.shape[:0], nBags, dim)
	outT := p.OutTensor(0)
	outT.Resize(ivalue.Float32, st.shape)
	out := outT.F32Contig()
	clear(out)
	wd, wo, ws := w.F32(), w.Offset(), w.Strides()
	fastSum := mode == embModeSum && ws[1] == 1 && pad < 0 && (psw == nil || psw.Dim() != 1 || psw.Strides()[0] == 1)
	o2bLen := nIdx
	if fastSum {
		o2bLen = 0
	}
	o2bT := p.OutTensor(1)
	st.shape = append(st.shape[:0], o2bLen)
	o2bT.Resize(ivalue.Int64, st.shape)
	o2b := o2bT.I64Contig()
	for b := 0; b < nOff && o2bLen > 0; b++ {
		for i := int(offs[b]); i < bagEnd(b) && i < nIdx; i++ {
			o2b[i] = int64(b)
		}
	}
	sizeLen := nOff
	if mode != embModeSum {
		sizeLen = nBags
	}
	bsT := p.OutTensor(2)
	st.shape = append(st.shape[:0], sizeLen)
	bsT.Resize(ivalue.Int64, st.shape)
	bagSize := bsT.I64Contig()
	clear(bagSize)
	if mode != embModeSum {
		for b := range bagSize {
			bagSize[b] = int64(bagEnd(b)) - offs[b]
		}
	}
	miT := p.OutTensor(3)
	st.shape = append(st.shape[:0], sizeLen)
	if mode == embModeMax {
		st.shape = append(st.shape[:0], nBags, dim)
	}
	miT.Resize(ivalue.Int64, st.shape)
	maxIdx := miT.I64Contig()
	clear(maxIdx)

	var pswData []float32
	pswOff, pswStep := 0, 0
	if psw != nil {
		pswData, pswOff = psw.F32(), psw.Offset()
		if psw.Dim() == 1 {
			pswStep = psw.Strides()[0]
		} else if psw.Dim() == 2 && psw.IsContiguous() {
			pswStep = 1
		} else {
			return Errorf("embedding_bag per_sample_weights: expected a 1-d tensor (or contiguous 2-d), got sizes %v", psw.Sizes())
		}
	}
	for b := 0; b < nBags; b++ {
		dst := out[b*dim : (b+1)*dim]
		first := true
		for i := int(offs[b]); i < bagEnd(b); i++ {
			v := idx[i]
			if v == pad {
				if mode != embModeSum {
					bagSize[b]--
				}
				continue
			}
			src := wo + int(v)*ws[0]
			switch mode {
			case embModeMax:
				mi := maxIdx[b*dim : (b+1)*dim]
				for j := range dst {
					x := wd[src+j*ws[1]]
					if first || x > dst[j] {
						dst[j], mi[j] = x, v
					}
				}
			default:
				scale := float32(1)
				if pswData != nil {
					scale = pswData[pswOff+i*pswStep]
				}
				if ws[1] == 1 {
					gemm.Axpy(scale, wd[src:src+dim], dst)
				} else {
					for j := range dst {
						dst[j] += scale * wd[src+j*ws[1]]
					}
				}
			}
			first = false
		}
	}
	if mode == embModeMean {
		for b := 0; b < nBags; b++ {
			n := bagSize[b]
			if nOff != 1 {
				n = max(n, 1) // empty bags stay 0; a single empty bag gives 0/0, as in PyTorch
			}
			d := float32(n)
			for j := range out[b*dim : (b+1)*dim] {
				out[b*dim+j] /= d
			}
		}
		copy(maxIdx, bagSize)
	}
	return nil
}
