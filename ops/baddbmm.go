package ops

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops/gemm"
)

// aten::baddbmm, aten::addbmm and aten::addmv (and their in-place forms)
// on the shared gemm: the result starts as self broadcast to the output
// shape, then gemm adds alpha*product with beta scaling it (beta == 0
// overwrites, so NaNs in self do not propagate, as in PyTorch).

const (
	baddbmmSchema = "aten::baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor"
	addbmmSchema  = "aten::addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor"
	addmvSchema   = "aten::addmv(Tensor self, Tensor mat, Tensor vec, *, Scalar beta=1, Scalar alpha=1) -> Tensor"
)

func init() {
	reg := func(op, schema string, k Kernel) {
		RegisterOut(op, func(n *graph.Node) Kernel {
			if !n.Matches(schema) {
				return nil
			}
			return k
		})
		// The in-place form writes the functional result back into self
		// (whose shape it must have), through the shared in-place kernel.
		// (inplace.go's init registers the map's entries too when it runs
		// after this one; a second identical builder changes nothing.)
		inplaceFunctional[op+"_"] = op
		RegisterNative(op+"_", inplaceBuilder)
	}
	reg("aten::baddbmm", baddbmmSchema, baddbmmKernel)
	reg("aten::addbmm", addbmmSchema, addbmmKernel)
	reg("aten::addmv", addmvSchema, addmvKernel)
}

// gemmThreeInputs reads self and the two factors of an add-product op.
func gemmThreeInputs(p *ProcessedNode, names *[3]string) (self, a, b *ivalue.Tensor, err error) {
	if self, err = gemmInput(p, 0, names[0]); err != nil {
		return
	}
	if a, err = gemmInput(p, 1, names[1]); err != nil {
		return
	}
	b, err = gemmInput(p, 2, names[2])
	return
}

var (
	baddbmmNames = [3]string{"baddbmm self", "baddbmm batch1", "baddbmm batch2"}
	addbmmNames  = [3]string{"addbmm self", "addbmm batch1", "addbmm batch2"}
	addmvNames   = [3]string{"addmv self", "addmv mat", "addmv vec"}
)

func baddbmmKernel(p *ProcessedNode) error {
	self, b1, b2, err := gemmThreeInputs(p, &baddbmmNames)
	if err != nil {
		return err
	}
	if b1.Dim() != 3 || b2.Dim() != 3 {
		return Errorf("baddbmm: batch1 and batch2 must be 3-d, got sizes %v and %v", b1.Sizes(), b2.Sizes())
	}
	bs, m, k, n := b1.Size(0), b1.Size(1), b1.Size(2), b2.Size(2)
	if b2.Size(0) != bs || b2.Size(1) != k {
		return Errorf("baddbmm: batch1 and batch2 shapes cannot be multiplied (%v and %v)", b1.Sizes(), b2.Sizes())
	}
	beta, alpha := float32(p.Float(3)), float32(p.Float(4))
	st := gemmStateOf(p)
	st.shape = append(st.shape[:0], bs, m, n)
	if !attnBroadcastsTo(self.Sizes(), st.shape) {
		return Errorf("baddbmm self: expected a tensor broadcastable to %v, got sizes %v", st.shape, self.Sizes())
	}
	out := p.OutTensor(0)
	out.Resize(ivalue.Float32, st.shape)
	c := out.F32Contig()
	if beta != 0 {
		attnFillBroadcast(c, st.shape, self)
	}
	s1, s2 := b1.Strides(), b2.Strides()
	am := gemm.Mat{Data: b1.F32(), Off: b1.Offset(), RS: s1[1], CS: s1[2]}
	bm := gemm.Mat{Data: b2.F32(), Off: b2.Offset(), RS: s2[1], CS: s2[2]}
	for i := 0; i < bs; i++ {
		gemm.Gemm(p.Scratch, m, n, k, alpha, am, bm, nil, beta, c, i*m*n, n)
		am.Off += s1[0]
		bm.Off += s2[0]
	}
	return nil
}

func addbmmKernel(p *ProcessedNode) error {
	self, b1, b2, err := gemmThreeInputs(p, &addbmmNames)
	if err != nil {
		return err
	}
	if b1.Dim() != 3 || b2.Dim() != 3 {
		return Errorf("addbmm: batch1 and batch2 must be 3-d, got sizes %v and %v", b1.Sizes(), b2.Sizes())
	}
	bs, m, k, n := b1.Size(0), b1.Size(1), b1.Size(2), b2.Size(2)
	if b2.Size(0) != bs || b2.Size(1) != k {
		return Errorf("addbmm: batch1 and batch2 shapes cannot be multiplied (%v and %v)", b1.Sizes(), b2.Sizes())
	}
	beta, alpha := float32(p.Float(3)), float32(p.Float(4))
	st := gemmStateOf(p)
	st.shape = append(st.shape[:0], m, n)
	if !attnBroadcastsTo(self.Sizes(), st.shape) {
		return Errorf("addbmm self: expected a tensor broadcastable to %v, got sizes %v", st.shape, self.Sizes())
	}
	out := p.OutTensor(0)
	out.Resize(ivalue.Float32, st.shape)
	c := out.F32Contig()
	if beta != 0 {
		attnFillBroadcast(c, st.shape, self)
	}
	// PyTorch: result = beta*self, then result.addmm_(b1[i], b2[i]) with
	// beta 1 after the first batch.
	gemm.ScaleC(m, n, beta, c, 0, n)
	s1, s2 := b1.Strides(), b2.Strides()
	am := gemm.Mat{Data: b1.F32(), Off: b1.Offset(), RS: s1[1], CS: s1[2]}
	bm := gemm.Mat{Data: b2.F32(), Off: b2.Offset(), RS: s2[1], CS: s2[2]}
	for i := 0; i < bs; i++ {
		gemm.Gemm(p.Scratch, m, n, k, alpha, am, bm, nil, 1, c, 0, n)
		am.Off += s1[0]
		bm.Off += s2[0]
	}
	return nil
}

func addmvKernel(p *ProcessedNode) error {
	self, mat, vec, err := gemmThreeInputs(p, &addmvNames)
	if err != nil {
		return err
	}
	if mat.Dim() != 2 || vec.Dim() != 1 {
		return Errorf("addmv: expected a 2-d mat and a 1-d vec, got sizes %v and %v", mat.Sizes(), vec.Sizes())
	}
	m, k := mat.Size(0), mat.Size(1)
	if vec.Size(0) != k {
		return Errorf("addmv: size mismatch, mat %v, vec %v", mat.Sizes(), vec.Sizes())
	}
	beta, alpha := float32(p.Float(3)), float32(p.Float(4))
	st := gemmStateOf(p)
	st.shape = append(st.shape[:0], m)
	if !attnBroadcastsTo(self.Sizes(), st.shape) {
		return Errorf("addmv self: expected a tensor broadcastable to %v, got sizes %v", st.shape, self.Sizes())
	}
	out := p.OutTensor(0)
	out.Resize(ivalue.Float32, st.shape)
	c := out.F32Contig()
	if beta != 0 {
		attnFillBroadcast(c, st.shape, self)
	}
	ms, vs := mat.Strides(), vec.Strides()
	am := gemm.Mat{Data: mat.F32(), Off: mat.Offset(), RS: ms[0], CS: ms[1]}
	bm := gemm.Mat{Data: vec.F32(), Off: vec.Offset(), RS: vs[0], CS: 0} // vec as a k x 1 column
	gemm.Gemm(p.Scratch, m, 1, k, alpha, am, bm, nil, beta, c, 0, 1)
	return nil
}

// attnBroadcastsTo reports whether sizes broadcast to shape (without
// changing shape): at most as many dims, each 1 or equal.
func attnBroadcastsTo(sizes, shape []int) bool {
	if len(sizes) > len(shape) {
		return false
	}
	lead := len(shape) - len(sizes)
	for i, s := range sizes {
		if s != 1 && s != shape[lead+i] {
			return false
		}
	}
	return true
}

// attnFillBroadcast writes src broadcast to shape (checked by
// attnBroadcastsTo, at most MaxIterDims dims) into the contiguous c.
func attnFillBroadcast(c []float32, shape []int, src *ivalue.Tensor) {
	var str [MaxIterDims]int
	d := len(shape)
	lead := d - src.Dim()
	for i := lead; i < d; i++ {
		if src.Size(i-lead) != 1 {
			str[i] = src.Strides()[i-lead]
		}
	}
	if d == 0 {
		c[0] = src.F32()[src.Offset()]
		return
	}
	n := shape[d-1]
	if n == 0 || len(c) == 0 {
		return
	}
	data, cs := src.F32(), str[d-1]
	var idx [MaxIterDims]int
	off := src.Offset()
	for k := 0; k < len(c); k += n {
		row := c[k : k+n]
		switch cs {
		case 1:
			copy(row, data[off:off+n])
		case 0:
			v := data[off]
			for j := range row {
				row[j] = v
			}
		default:
			for j := range row {
				row[j] = data[off+j*cs]
			}
		}
		for a := d - 2; a >= 0; a-- {
			idx[a]++
			off += str[a]
			if idx[a] < shape[a] {
				break
			}
			off -= idx[a] * str[a]
			idx[a] = 0
		}
	}
}
