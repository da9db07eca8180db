package ops

import (
	"math"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// Vector norms: aten::norm (its Scalar and ScalarOpt overloads, as
// F.normalize and Tensor.norm emit them), aten::frobenius_norm (torch.norm
// without p) and aten::linalg_vector_norm,
// over all dims or a list of dims, on reduce.go's plan. Floating
// dtypes; sums accumulate in float64. ord 2 is sqrt(sum x**2), 1
// sum |x|, inf max |x|, -inf min |x|, 0 the count of non-zeros, any
// other p (sum |x|**p)**(1/p).

type vnormKernel struct {
	ordIdx   int // input holding ord (-1: 2, frobenius_norm)
	dimIdx   int // -1: all dims
	keepIdx  int // -1: false
	dtypeIdx int // -1: none
}

type vnormState struct {
	ca, tmp *ivalue.Tensor
	dims    []int
}

func init() {
	for _, s := range []struct {
		schema string
		k      vnormKernel
	}{
		{"aten::norm.Scalar(Tensor self, Scalar p=2) -> Tensor", vnormKernel{1, -1, -1, -1}},
		{"aten::norm.ScalarOpt_dim(Tensor self, Scalar? p, int[1] dim, bool keepdim=False) -> Tensor", vnormKernel{1, 2, 3, -1}},
		{"aten::norm.ScalarOpt_dim_dtype(Tensor self, Scalar? p, int[1] dim, bool keepdim, *, ScalarType dtype) -> Tensor", vnormKernel{1, 2, 3, 4}},
		{"aten::norm.ScalarOpt_dtype(Tensor self, Scalar? p, *, ScalarType dtype) -> Tensor", vnormKernel{1, -1, -1, 2}},
		{"aten::frobenius_norm(Tensor self) -> Tensor", vnormKernel{-1, -1, -1, -1}},
		{"aten::frobenius_norm.dim(Tensor self, int[1] dim, bool keepdim=False) -> Tensor", vnormKernel{-1, 1, 2, -1}},
		{"aten::linalg_vector_norm(Tensor self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor", vnormKernel{1, 2, 3, 4}},
	} {
		schema, k := s.schema, s.k
		ps, err := graph.ParseSchema(schema)
		if err != nil {
			panic("ops: bad norm schema: " + err.Error())
		}
		RegisterOut(ps.Name, func(n *graph.Node) Kernel {
			if n.Matches(schema) {
				return k.run
			}
			return nil
		})
	}
}

type vnormOrd uint8

const (
	vnormL2 vnormOrd = iota
	vnormL1
	vnormInf
	vnormNegInf
	vnormL0
	vnormP
)

func (k vnormKernel) run(p *ProcessedNode) error {
	a := p.Tensor(0)
	if a == nil {
		return Errorf("norm: expected a tensor, got %s", p.Input(0).Kind())
	}
	st, _ := p.State.(*vnormState)
	if st == nil {
		st = &vnormState{dims: make([]int, 0, MaxIterDims)}
		p.State = st
	}
	nd := a.Dim()
	if nd > MaxIterDims {
		return Errorf("norm supports tensors of rank at most %d, got %d", MaxIterDims, nd)
	}
	ordv := 2.0
	if k.ordIdx >= 0 && !p.IsNone(k.ordIdx) {
		v := p.Input(k.ordIdx)
		if !v.IsNumber() {
			return Errorf("norm: expected a number as the order, got %s", v.Kind())
		}
		ordv = v.AsFloat()
	}
	ord := vnormP
	switch {
	case ordv == 2:
		ord = vnormL2
	case ordv == 1:
		ord = vnormL1
	case math.IsInf(ordv, 1):
		ord = vnormInf
	case math.IsInf(ordv, -1):
		ord = vnormNegInf
	case ordv == 0:
		ord = vnormL0
	}
	var red [MaxIterDims]bool
	st.dims = st.dims[:0]
	if k.dimIdx >= 0 && !p.IsNone(k.dimIdx) {
		st.dims = p.IntsInto(k.dimIdx, st.dims)
		if k.ordIdx < 0 && len(st.dims) > 2 {
			return Errorf("Expected at most 2 dimensions, but got %d dimensions instead.", len(st.dims))
		}
	}
	if err := reducedDims(red[:nd], st.dims); err != nil {
		return err
	}
	keep := k.keepIdx >= 0 && p.Bool(k.keepIdx)
	dt := a.DType()
	if k.dtypeIdx >= 0 && !p.IsNone(k.dtypeIdx) {
		d, err := ivalue.DTypeFromScalarType(p.Int(k.dtypeIdx))
		if err != nil {
			return err
		}
		dt = d
	}
	if !dt.IsFloat() {
		return Errorf("norm: expected a floating point input or dtype, got %s", dt)
	}
	cdt := computeDType(dt)
	var shp [MaxIterDims]int
	oshape := shp[:0]
	for d := 0; d < nd; d++ {
		if !red[d] {
			oshape = append(oshape, a.Size(d))
		} else if keep {
			oshape = append(oshape, 1)
		}
	}
	ca, err := castScratch(a, cdt, &st.ca)
	if err != nil {
		return err
	}
	pl := newRedPlan(ca, &red)
	if pl.innerN == 0 && (ord == vnormInf || ord == vnormNegInf) && pl.outerCount > 0 {
		return Errorf("linalg.vector_norm cannot compute the %g norm on an empty tensor because the operation does not have an identity", ordv)
	}
	out := p.OutTensor(0)
	out.Resize(dt, oshape)
	target := out
	if cdt != dt {
		if st.tmp == nil {
			st.tmp = &ivalue.Tensor{}
		}
		target = st.tmp
		target.Resize(cdt, oshape)
	}
	if cdt == ivalue.Float32 {
		o, x := target.F32(), ca.F32()
		for j := 0; j < pl.outerCount; j++ {
			o[j] = float32(vnormInner(&pl, x, pl.outerOffset(j), ord, ordv))
		}
	} else {
		o, x := target.F64(), ca.F64()
		for j := 0; j < pl.outerCount; j++ {
			o[j] = vnormInner(&pl, x, pl.outerOffset(j), ord, ordv)
		}
	}
	if target != out {
		return CastInto(out, target)
	}
	return nil
}

// vnormInner is the norm of the reduced elements from offset off.
func vnormInner[T float32 | float64](pl *redPlan, x []T, off int, ord vnormOrd, p float64) float64 {
	if pl.innerN == 0 {
		return 0 // (an empty inf norm is refused before)
	}
	if ord == vnormL2 && pl.nInner == 1 && pl.iStride[0] == 1 {
		var a0, a1 float64
		xs := x[off : off+pl.iSize[0]]
		i := 0
		for ; i+2 <= len(xs); i += 2 {
			v0, v1 := float64(xs[i]), float64(xs[i+1])
			a0 += v0 * v0
			a1 += v1 * v1
		}
		for ; i < len(xs); i++ {
			v := float64(xs[i])
			a0 += v * v
		}
		return math.Sqrt(a0 + a1)
	}
	var acc float64
	switch ord {
	case vnormInf:
		acc = math.Inf(-1)
	case vnormNegInf:
		acc = math.Inf(1)
	}
	var idx [MaxIterDims]int
	for k := 0; k < pl.innerN; k++ {
		o := off
		for d := 0; d < pl.nInner; d++ {
			o += idx[d] * pl.iStride[d]
		}
		v := math.Abs(float64(x[o]))
		switch ord {
		case vnormL2:
			acc += v * v
		case vnormL1:
			acc += v
		case vnormInf:
			acc = maxNaN(acc, v)
		case vnormNegInf:
			acc = minNaN(acc, v)
		case vnormL0:
			if v != 0 {
				acc++
			}
		default:
			acc += math.Pow(v, p)
		}
		for d := pl.nInner - 1; d >= 0; d-- {
			if idx[d]++; idx[d] < pl.iSize[d] {
				break
			}
			idx[d] = 0
		}
	}
	switch ord {
	case vnormL2:
		return math.Sqrt(acc)
	case vnormP:
		return math.Pow(acc, 1/p)
	}
	return acc
}
