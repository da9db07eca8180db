package ops

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// aten::tril, aten::triu (any dtype; tril_/triu_ through inplace.go's
// write-back) and aten::tril_indices, aten::triu_indices.

const (
	trilSchema        = "aten::tril(Tensor self, int diagonal=0) -> Tensor"
	triuSchema        = "aten::triu(Tensor self, int diagonal=0) -> Tensor"
	trilIndicesSchema = "aten::tril_indices(int row, int col, int offset=0, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"
	triuIndicesSchema = "aten::triu_indices(int row, int col, int offset=0, *, ScalarType? dtype=4, Layout? layout=None, Device? device=None, bool? pin_memory=None) -> Tensor"
)

func init() {
	for _, c := range []struct {
		op, schema string
		upper      bool
	}{{"aten::tril", trilSchema, false}, {"aten::triu", triuSchema, true}} {
		schema, upper := c.schema, c.upper
		RegisterOut(c.op, func(n *graph.Node) Kernel {
			if n.Matches(schema) {
				return func(p *ProcessedNode) error { return triKernel(p, upper) }
			}
			return nil
		})
	}
	for _, c := range []struct {
		op, schema string
		upper      bool
	}{{"aten::tril_indices", trilIndicesSchema, false}, {"aten::triu_indices", triuIndicesSchema, true}} {
		schema, upper := c.schema, c.upper
		RegisterOut(c.op, func(n *graph.Node) Kernel {
			if n.Matches(schema) {
				return func(p *ProcessedNode) error { return triIndicesKernel(p, upper) }
			}
			return nil
		})
	}
}

// triKernel keeps the elements on and below (tril) or on and above
// (triu) the given diagonal of the last two dims; the rest are zero.
func triKernel(p *ProcessedNode, upper bool) error {
	x := p.Tensor(0)
	name := "tril"
	if upper {
		name = "triu"
	}
	if x == nil {
		return Errorf("%s: expected a tensor, got %s", name, p.Input(0).Kind())
	}
	nd := x.Dim()
	if nd < 2 {
		return Errorf("%s: input tensor must have at least 2 dimensions", name)
	}
	diag := int(p.Int(1))
	out := p.OutTensor(0)
	out.Resize(x.DType(), x.Sizes())
	if out.Numel() == 0 {
		return nil
	}
	rows, cols := x.Size(nd-2), x.Size(nd-1)
	rs, cs := x.Strides()[nd-2], x.Strides()[nd-1]
	es := x.DType().Size()
	dst, src := out.Storage().Data, x.Storage().Data
	xs := x.Strides()
	mats := out.Numel() / (rows * cols)
	// Batch odometer over the leading dims.
	var idxBuf [MaxIterDims]int
	var idx []int
	if nd-2 <= MaxIterDims {
		idx = idxBuf[:nd-2]
	} else {
		idx = make([]int, nd-2)
	}
	sBase := x.Offset()
	dRow := out.Offset()
	for m := 0; m < mats; m++ {
		for i := 0; i < rows; i++ {
			// Columns [lo, hi) are kept.
			lo, hi := 0, min(cols, max(0, i+diag+1))
			if upper {
				lo, hi = min(cols, max(0, i+diag)), cols
			}
			row := dst[dRow*es : (dRow+cols)*es]
			clear(row[:lo*es])
			if hi > lo {
				copyRun(dst, dRow+lo, 1, src, sBase+i*rs+lo*cs, cs, hi-lo, es)
			}
			clear(row[max(hi, lo)*es:])
			dRow += cols
		}
		for d := nd - 3; d >= 0; d-- {
			idx[d]++
			sBase += xs[d]
			if idx[d] < x.Size(d) {
				break
			}
			sBase -= idx[d] * xs[d]
			idx[d] = 0
		}
	}
	return nil
}

// triIndicesKernel is tril_indices/triu_indices: the [2, N] coordinates
// (row-major order) of the lower (upper) triangle of a row x col matrix
// with the given offset.
func triIndicesKernel(p *ProcessedNode, upper bool) error {
	row, col, off := int(p.Int(0)), int(p.Int(1)), int(p.Int(2))
	name := "tril_indices"
	if upper {
		name = "triu_indices"
	}
	if row < 0 {
		return Errorf("row must be non-negative, got%d", row)
	}
	if col < 0 {
		return Errorf("col must be non-negative, got%d", col)
	}
	dt, err := shapeDType(p, 3, ivalue.Int64)
	if err != nil {
		return err
	}
	if dt != ivalue.Int64 && dt != ivalue.Int32 {
		return Errorf("%s: dtype %s is not supported (int64 and int32 are)", name, dt)
	}
	// Per row i, columns [lo, hi).
	span := func(i int) (int, int) {
		if upper {
			return min(col, max(0, i+off)), col
		}
		return 0, min(col, max(0, i+off+1))
	}
	n := 0
	for i := 0; i < row; i++ {
		lo, hi := span(i)
		n += max(0, hi-lo)
	}
	st := shapeStateOf(p)
	st.sizes = append(st.sizes[:0], 2, n)
	out := p.OutTensor(0)
	out.Resize(dt, st.sizes)
	k := 0
	if dt == ivalue.Int64 {
		o := out.I64Contig()
		for i := 0; i < row; i++ {
			lo, hi := span(i)
			for j := lo; j < hi; j++ {
				o[k], o[n+k] = int64(i), int64(j)
				k++
			}
		}
		return nil
	}
	o := out.I32Contig()
	for i := 0; i < row; i++ {
		lo, hi := span(i)
		for j := lo; j < hi; j++ {
			o[k], o[n+k] = int32(i), int32(j)
			k++
		}
	}
	return nil
}
