package ops

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops/gemm"
)

// aten::mm, aten::bmm and aten::matmul (every rank case of
// torch.matmul) on the shared gemm. Strided operands (transposes,
// broadcast batch dims) are read in place.

const (
	mmSchema     = "aten::mm(Tensor self, Tensor mat2) -> Tensor"
	bmmSchema    = "aten::bmm(Tensor self, Tensor mat2) -> Tensor"
	matmulSchema = "aten::matmul(Tensor self, Tensor other) -> Tensor"
)

func init() {
	reg := func(op, schema string, k Kernel) {
		RegisterOut(op, func(n *graph.Node) Kernel {
			if !n.Matches(schema) {
				return nil
			}
			return k
		})
	}
	reg("aten::mm", mmSchema, mmKernel)
	reg("aten::bmm", bmmSchema, bmmKernel)
	reg("aten::matmul", matmulSchema, matmulKernel)
}

// gemmTwoInputs reads self and other; the names are passed whole so no
// string is built on the hot path.
func gemmTwoInputs(p *ProcessedNode, selfName, otherName string) (*ivalue.Tensor, *ivalue.Tensor, error) {
	a, err := gemmInput(p, 0, selfName)
	if err != nil {
		return nil, nil, err
	}
	b, err := gemmInput(p, 1, otherName)
	if err != nil {
		return nil, nil, err
	}
	return a, b, nil
}

func mmKernel(p *ProcessedNode) error {
	a, b, err := gemmTwoInputs(p, "mm self", "mm mat2")
	if err != nil {
		return err
	}
	if a.Dim() != 2 || b.Dim() != 2 {
		return Errorf("mm: expected 2-d tensors, got sizes %v and %v", a.Sizes(), b.Sizes())
	}
	return matmulRun(p.Scratch, a, b, p.OutTensor(0), gemmStateOf(p))
}

func bmmKernel(p *ProcessedNode) error {
	a, b, err := gemmTwoInputs(p, "bmm self", "bmm mat2")
	if err != nil {
		return err
	}
	if a.Dim() != 3 || b.Dim() != 3 {
		return Errorf("bmm: expected 3-d tensors, got sizes %v and %v", a.Sizes(), b.Sizes())
	}
	if a.Size(0) != b.Size(0) {
		return Errorf("bmm: batch sizes differ: %v and %v", a.Sizes(), b.Sizes())
	}
	return matmulRun(p.Scratch, a, b, p.OutTensor(0), gemmStateOf(p))
}

func matmulKernel(p *ProcessedNode) error {
	a, b, err := gemmTwoInputs(p, "matmul self", "matmul other")
	if err != nil {
		return err
	}
	return matmulRun(p.Scratch, a, b, p.OutTensor(0), gemmStateOf(p))
}

// matmulRun computes torch.matmul(a, b) into out.
func matmulRun(sc *gemm.Scratch, a, b, out *ivalue.Tensor, st *gemmState) error {
	da, db := a.Dim(), b.Dim()
	if da == 0 || db == 0 {
		return Errorf("matmul: both arguments need at least 1 dim, got sizes %v and %v", a.Sizes(), b.Sizes())
	}
	k := a.Size(-1)
	kb := b.Size(0)
	if db >= 2 {
		kb = b.Size(-2)
	}
	if k != kb {
		return Errorf("matmul: shapes %v and %v cannot be multiplied (%d != %d)", a.Sizes(), b.Sizes(), k, kb)
	}
	as, bs := a.Strides(), b.Strides()
	n, bm := 1, gemm.Mat{Data: b.F32(), Off: b.Offset(), RS: bs[0], CS: 0} // b as a k x 1 column
	if db >= 2 {
		n = b.Size(-1)
		bm = gemm.Mat{Data: b.F32(), Off: b.Offset(), RS: bs[db-2], CS: bs[db-1]}
	}
	switch {
	case da == 1 && db <= 2:
		st.shape = st.shape[:0]
		if db == 2 {
			st.shape = append(st.shape, n)
		}
		out.Resize(ivalue.Float32, st.shape)
		am := gemm.Mat{Data: a.F32(), Off: a.Offset(), RS: 0, CS: as[0]}
		gemm.Gemm(sc, 1, n, k, 1, am, bm, nil, 0, out.F32Contig(), 0, n)
		return nil
	case db <= 2:
		// Fold a's batch dims into rows.
		st.shape = append(st.shape[:0], a.Sizes()[:da-1]...)
		if db == 2 {
			st.shape = append(st.shape, n)
		}
		out.Resize(ivalue.Float32, st.shape)
		m := 1
		for _, s := range a.Sizes()[:da-1] {
			m *= s
		}
		am := gemmMatrixOf(a, da-1, st)
		gemm.Gemm(sc, m, n, k, 1, am, bm, nil, 0, out.F32Contig(), 0, n)
		return nil
	}
	// Batched, broadcasting the batch dims.
	m, am := 1, gemm.Mat{Data: a.F32(), Off: a.Offset(), RS: 0, CS: as[da-1]}
	var batchA []int
	if da >= 2 {
		m = a.Size(-2)
		am.RS = as[da-2]
		batchA = a.Sizes()[:da-2]
	}
	batchB := b.Sizes()[:db-2]
	var err error
	st.bshape, err = BroadcastShapes(st.bshape[:0], batchA, batchB)
	if err != nil {
		return Errorf("matmul: batch dims of %v and %v: %v", a.Sizes(), b.Sizes(), err)
	}
	nd := len(st.bshape)
	st.sa, st.sb, st.idx = st.sa[:0], st.sb[:0], st.idx[:0]
	nb := 1
	for i, s := range st.bshape {
		nb *= s
		st.sa = append(st.sa, gemmBatchStride(a, batchA, i, nd))
		st.sb = append(st.sb, gemmBatchStride(b, batchB, i, nd))
		st.idx = append(st.idx, 0)
	}
	st.shape = append(st.shape[:0], st.bshape...)
	if da >= 2 {
		st.shape = append(st.shape, m)
	}
	st.shape = append(st.shape, n)
	out.Resize(ivalue.Float32, st.shape)
	c := out.F32Contig()
	offA, offB := a.Offset(), b.Offset()
	for bi := 0; bi < nb; bi++ {
		am.Off, bm.Off = offA, offB
		gemm.Gemm(sc, m, n, k, 1, am, bm, nil, 0, c, bi*m*n, n)
		for d := nd - 1; d >= 0; d-- {
			st.idx[d]++
			offA += st.sa[d]
			offB += st.sb[d]
			if st.idx[d] < st.bshape[d] {
				break
			}
			offA -= st.idx[d] * st.sa[d]
			offB -= st.idx[d] * st.sb[d]
			st.idx[d] = 0
		}
	}
	return nil
}

// gemmBatchStride is the stride of t's batch dim aligned with broadcast
// dim i of nd (0 where t lacks it or broadcasts it).
func gemmBatchStride(t *ivalue.Tensor, batch []int, i, nd int) int {
	j := i - (nd - len(batch))
	if j < 0 || batch[j] == 1 {
		return 0
	}
	return t.Strides()[j]
}
