package ops

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// aten::_pack_padded_sequence and aten::_pad_packed_sequence, the kernels
// of torch.nn.utils.rnn.pack_padded_sequence and pad_packed_sequence
// (aten/src/ATen/native/PackedSequence.cpp): a padded (seq, batch, *)
// batch, sorted by decreasing length, to PackedSequence's data (step by
// step, the rows still running) and batch_sizes, and back. Rows move with
// the strided copy engine, any dtype.

const (
	packPaddedSchema = "aten::_pack_padded_sequence(Tensor input, Tensor lengths, bool batch_first) -> (Tensor, Tensor)"
	padPackedSchema  = "aten::_pad_packed_sequence(Tensor data, Tensor batch_sizes, bool batch_first, Scalar padding_value, int total_length) -> (Tensor, Tensor)"
)

type rnnPackState struct {
	src, dst      ivalue.Tensor // row views
	sizes, rowStr []int         // a row's geometry
	osz           []int         // an output's sizes
	contig        []int
	bs            []int
}

func init() {
	RegisterOut("aten::_pack_padded_sequence", func(n *graph.Node) Kernel {
		if !n.Matches(packPaddedSchema) {
			return nil
		}
		return packPaddedKernel
	})
	RegisterOut("aten::_pad_packed_sequence", func(n *graph.Node) Kernel {
		if !n.Matches(padPackedSchema) {
			return nil
		}
		return padPackedKernel
	})
}

func rnnPackStateOf(p *ProcessedNode) *rnnPackState {
	st, _ := p.State.(*rnnPackState)
	if st == nil {
		st = &rnnPackState{}
		p.State = st
	}
	return st
}

// rowViews sets st.sizes and st.rowStr to the trailing dims of t from
// dim `from` on (one row's geometry), st.contig to their contiguous
// strides, and returns the number of elements of a row.
func (st *rnnPackState) rowViews(t *ivalue.Tensor, from int) int {
	st.sizes = append(st.sizes[:0], t.Sizes()[from:]...)
	st.rowStr = append(st.rowStr[:0], t.Strides()[from:]...)
	st.contig = append(st.contig[:0], st.sizes...)
	f := 1
	for i := len(st.sizes) - 1; i >= 0; i-- {
		st.contig[i] = f
		f *= st.sizes[i]
	}
	return f
}

// copyRow copies the row of src at element offset so into dst (whose
// storage is contiguous) at element offset do.
func (st *rnnPackState) copyRow(dst, src *ivalue.Tensor, do, so int) {
	st.src.SetView(src, so, st.sizes, st.rowStr)
	st.dst.SetView(dst, do, st.sizes, st.contig)
	ivalue.CopyInto(&st.dst, &st.src)
}

func packPaddedKernel(p *ProcessedNode) error {
	in, lens := p.Tensor(0), p.Tensor(1)
	if in == nil || lens == nil {
		return Errorf("_pack_padded_sequence: expected Tensor input and lengths")
	}
	if lens.DType() != ivalue.Int64 || lens.Dim() != 1 {
		return Errorf("'lengths' argument should be a 1D CPU int64 tensor, but got %dD %s tensor", lens.Dim(), lens.DType())
	}
	bf := p.Bool(2)
	if in.Dim() < 2 {
		return Errorf("_pack_padded_sequence: expected input of at least 2 dims (seq, batch, *), got sizes %v", in.Sizes())
	}
	if in.Numel() == 0 {
		return Errorf("Cannot pack empty tensors.")
	}
	dT, dB := 0, 1
	if bf {
		dT, dB = 1, 0
	}
	T, B := in.Size(dT), in.Size(dB)
	sT, sB := in.Strides()[dT], in.Strides()[dB]
	if lens.Size(0) != B {
		return Errorf("Expected `len(lengths)` to be equal to batch_size, but got %d (batch_size=%d)", lens.Size(0), B)
	}
	lv, lo, ls := lens.I64(), lens.Offset(), lens.Strides()[0]
	length := func(b int) int { return int(lv[lo+b*ls]) }
	if length(B-1) <= 0 {
		return Errorf("Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0")
	}
	for b := 1; b < B; b++ {
		if length(b) > length(b-1) {
			return Errorf("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement if you do not need ONNX exportability.")
		}
	}
	steps := length(0)
	if steps > T {
		return Errorf("_pack_padded_sequence: a length of %d exceeds the sequence length %d", steps, T)
	}
	st := rnnPackStateOf(p)
	bsOut := p.OutTensor(1)
	st.osz = append(st.osz[:0], steps)
	bsOut.Resize(ivalue.Int64, st.osz)
	bsd := bsOut.I64Contig()
	rows, b := 0, B
	for t := 0; t < steps; t++ {
		for b > 0 && length(b-1) <= t {
			b--
		}
		bsd[t] = int64(b)
		rows += b
	}
	out := p.OutTensor(0)
	st.osz = append(append(st.osz[:0], rows), in.Sizes()[2:]...)
	out.Resize(in.DType(), st.osz)
	f := st.rowViews(in, 2)
	r := 0
	for t := 0; t < steps; t++ {
		for b := 0; b < int(bsd[t]); b++ {
			st.copyRow(out, in, r*f, in.Offset()+t*sT+b*sB)
			r++
		}
	}
	return nil
}

func padPackedKernel(p *ProcessedNode) error {
	data, bsT := p.Tensor(0), p.Tensor(1)
	if data == nil || bsT == nil {
		return Errorf("_pad_packed_sequence: expected Tensor data and batch_sizes")
	}
	if bsT.DType() != ivalue.Int64 || bsT.Dim() != 1 || bsT.Size(0) == 0 {
		return Errorf("'batch_sizes' argument should be a non-empty 1D CPU int64 tensor, but got %dD %s tensor of sizes %v", bsT.Dim(), bsT.DType(), bsT.Sizes())
	}
	if data.Dim() < 1 {
		return Errorf("_pad_packed_sequence: expected data of at least 1 dim, got a 0-d tensor")
	}
	bf, total := p.Bool(2), int(p.Int(4))
	st := rnnPackStateOf(p)
	st.bs = st.bs[:0]
	rows := 0
	bv, bo, bstr := bsT.I64(), bsT.Offset(), bsT.Strides()[0]
	for t := 0; t < bsT.Size(0); t++ {
		b := int(bv[bo+t*bstr])
		if b <= 0 || (t > 0 && b > st.bs[t-1]) {
			return Errorf("_pad_packed_sequence: batch_sizes must be positive and non-increasing, got %d at step %d", b, t)
		}
		st.bs = append(st.bs, b)
		rows += b
	}
	if rows != data.Size(0) {
		return Errorf("_pad_packed_sequence: batch_sizes sum to %d but data has %d rows", rows, data.Size(0))
	}
	steps, B := len(st.bs), st.bs[0]
	T := steps
	if total > 0 {
		if total < steps {
			return Errorf("Expected total_length to be at least the length of the longest sequence in input, but got total_length=%d and max sequence length being %d", total, steps)
		}
		T = total
	}
	lensOut := p.OutTensor(1)
	st.osz = append(st.osz[:0], B)
	lensOut.Resize(ivalue.Int64, st.osz)
	ld := lensOut.I64Contig()
	for b := range ld {
		ld[b] = 0
	}
	for t, n := range st.bs {
		for b := 0; b < n; b++ {
			ld[b] = int64(t + 1)
		}
	}
	out := p.OutTensor(0)
	if bf {
		st.osz = append(st.osz[:0], B, T)
	} else {
		st.osz = append(st.osz[:0], T, B)
	}
	st.osz = append(st.osz, data.Sizes()[1:]...)
	out.Resize(data.DType(), st.osz)
	shapeFill(out, *p.Input(3))
	f := st.rowViews(data, 1)
	ds := data.Strides()[0]
	r := 0
	for t, n := range st.bs {
		for b := 0; b < n; b++ {
			o := t*B + b
			if bf {
				o = b*T + t
			}
			st.copyRow(out, data, o*f, data.Offset()+r*ds)
			r++
		}
	}
	return nil
}
