package ops

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"math"
)

// Reductions: sum, mean, prod (float32 accumulates in float64), max/min
// (full, or along a dim with indices), amax/amin, argmax/argmin.

// redPlan splits a tensor's dims into kept (outer, in order: the output's
// row-major order) and reduced (inner, merged where contiguous).
type redPlan struct {
	nOuter, nInner     int
	oSize, oStride     [MaxIterDims]int
	iSize, iStride     [MaxIterDims]int
	outerCount, innerN int
	base               int
}

func newRedPlan(t *ivalue.Tensor, red *[MaxIterDims]bool) redPlan {
	var pl redPlan
	pl.base = t.Offset()
	pl.outerCount, pl.innerN = 1, 1
	sz, st := t.Sizes(), t.Strides()
	for d := range sz {
		if red[d] {
			pl.innerN *= sz[d]
			if sz[d] == 1 {
				continue
			}
			if k := pl.nInner; k > 0 && pl.iStride[k-1] == st[d]*sz[d] {
				pl.iSize[k-1] *= sz[d]
				pl.iStride[k-1] = st[d]
				continue
			}
			pl.iSize[pl.nInner], pl.iStride[pl.nInner] = sz[d], st[d]
			pl.nInner++
		} else {
			pl.outerCount *= sz[d]
			pl.oSize[pl.nOuter], pl.oStride[pl.nOuter] = sz[d], st[d]
			pl.nOuter++
		}
	}
	return pl
}

// outerOffset is the storage offset of outer element number k.
func (pl *redPlan) outerOffset(k int) int {
	off := pl.base
	for d := pl.nOuter - 1; d >= 0; d-- {
		s := pl.oSize[d]
		off += (k % s) * pl.oStride[d]
		k /= s
	}
	return off
}

// sumInner sums (or multiplies) the reduced elements from offset off.
func sumInner[T float32 | float64](pl *redPlan, x []T, off int, prod bool) float64 {
	if pl.nInner == 1 && !prod {
		n, s := pl.iSize[0], pl.iStride[0]
		if s == 1 {
			return sumContig(x[off : off+n])
		}
		var acc float64
		for i := 0; i < n; i++ {
			acc += float64(x[off+i*s])
		}
		return acc
	}
	acc := 0.0
	if prod {
		acc = 1
	}
	var idx [MaxIterDims]int
	for k := 0; k < pl.innerN; k++ {
		o := off
		for d := 0; d < pl.nInner; d++ {
			o += idx[d] * pl.iStride[d]
		}
		if prod {
			acc *= float64(x[o])
		} else {
			acc += float64(x[o])
		}
		for d := pl.nInner - 1; d >= 0; d-- {
			if idx[d]++; idx[d] < pl.iSize[d] {
				break
			}
			idx[d] = 0
		}
	}
	return acc
}

// sumContig sums in float64 with four accumulators (for speed; float64
// keeps float32 sums accurate to well within 1e-6 relative).
func sumContig[T float32 | float64](x []T) float64 {
	var a0, a1, a2, a3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		a0 += float64(x[i])
		a1 += float64(x[i+1])
		a2 += float64(x[i+2])
		a3 += float64(x[i+3])
	}
	for ; i < len(x); i++ {
		a0 += float64(x[i])
	}
	return (a0 + a1) + (a2 + a3)
}

func sumInnerI(pl *redPlan, x []int64, off int, prod bool) int64 {
	var acc int64
	if prod {
		acc = 1
	}
	var idx [MaxIterDims]int
	for k := 0; k < pl.innerN; k++ {
		o := off
		for d := 0; d < pl.nInner; d++ {
			o += idx[d] * pl.iStride[d]
		}
		if prod {
			acc *= x[o]
		} else {
			acc += x[o]
		}
		for d := pl.nInner - 1; d >= 0; d-- {
			if idx[d]++; idx[d] < pl.iSize[d] {
				break
			}
			idx[d] = 0
		}
	}
	return acc
}

// bestInner finds the max (or min) of the reduced elements and the
// row-major position of its first occurrence; NaN wins, as in PyTorch.
func bestInner[T ewReal](pl *redPlan, x []T, off int, wantMax bool) (T, int) {
	var idx [MaxIterDims]int
	var best T
	bi := -1
	for k := 0; k < pl.innerN; k++ {
		o := off
		for d := 0; d < pl.nInner; d++ {
			o += idx[d] * pl.iStride[d]
		}
		v := x[o]
		if bi < 0 {
			best, bi = v, k
			if v != v {
				return best, bi
			}
		} else if v != v {
			return v, k
		} else if (wantMax && v > best) || (!wantMax && v < best) {
			best, bi = v, k
		}
		for d := pl.nInner - 1; d >= 0; d-- {
			if idx[d]++; idx[d] < pl.iSize[d] {
				break
			}
			idx[d] = 0
		}
	}
	return best, bi
}

type redKind uint8

const (
	redSum redKind = iota
	redMean
	redProd
	redMax // values only (max(), amax)
	redMin
	redArgmax
	redArgmin
	redMaxDim // values and indices
	redMinDim
)

type redKernel struct {
	kind      redKind
	dimIdx    int  // input with the dim(s); -1: all dims
	keepIdx   int  // -1: keepdim false
	dtypeIdx  int  // -1: none
	needsDims bool // max.dim: a single int, required
}

type redState struct {
	ca, tmp *ivalue.Tensor
	dims    []int
}

// reducedDims marks in red (one entry per dim of the input) the dims a
// reduction over dims (a dim list as given: negative wraps) covers; none
// means all of them. A dim out of range or repeated is an error.
func reducedDims(red []bool, dims []int) error {
	nd := len(red)
	for _, d := range dims {
		w, err := ewWrapDim(int64(d), nd)
		if err != nil {
			return err
		}
		if nd > 0 {
			if red[w] {
				return Errorf("dim %d appears multiple times in the list of dims", w)
			}
			red[w] = true
		}
	}
	if len(dims) == 0 {
		for d := range red {
			red[d] = true
		}
	}
	return nil
}

func (k *redKernel) run(p *ProcessedNode) error {
	a := p.Tensor(0)
	if a == nil {
		return Errorf("expected a tensor as input 0, got %s", p.Input(0).Kind())
	}
	st, _ := p.State.(*redState)
	if st == nil {
		st = &redState{dims: make([]int, 0, MaxIterDims)}
		p.State = st
	}
	nd := a.Dim()
	if nd > MaxIterDims {
		return Errorf("reductions support tensors of rank at most %d, got %d", MaxIterDims, nd)
	}
	var red [MaxIterDims]bool
	if k.dimIdx >= 0 && !p.IsNone(k.dimIdx) {
		st.dims = p.IntsInto(k.dimIdx, st.dims)
	} else {
		st.dims = st.dims[:0]
	}
	if err := reducedDims(red[:nd], st.dims); err != nil {
		return err
	}
	keep := k.keepIdx >= 0 && p.Bool(k.keepIdx)
	// Output shape.
	var shp [MaxIterDims]int
	oshape := shp[:0]
	for d := 0; d < nd; d++ {
		if !red[d] {
			oshape = append(oshape, a.Sizes()[d])
		} else if keep {
			oshape = append(oshape, 1)
		}
	}
	// dtypes
	in := a.DType()
	outDT := in
	switch k.kind {
	case redSum, redProd, redMean:
		if k.dtypeIdx >= 0 && !p.IsNone(k.dtypeIdx) {
			d, err := ivalue.DTypeFromScalarType(p.Int(k.dtypeIdx))
			if err != nil {
				return err
			}
			outDT = d
			in = d
		} else if !in.IsFloat() {
			outDT = ivalue.Int64
		}
		if k.kind == redMean && !outDT.IsFloat() {
			return Errorf("mean(): could not infer output dtype. Input dtype must be either a floating point or complex dtype. Got: %s", outDT.TorchName())
		}
		if outDT.IsFloat() {
			in = computeDType(outDT)
			if in == ivalue.Float32 && a.DType() == ivalue.Float64 {
				in = ivalue.Float64
			}
		} else {
			in = ivalue.Int64
		}
	case redArgmax, redArgmin:
		outDT = ivalue.Int64
		in = computeDType(in)
	default:
		in = computeDType(in)
	}
	if a.Numel() == 0 && k.kind >= redMax {
		if len(st.dims) == 0 || k.kind == redMax || k.kind == redMin {
			return Errorf("max(): Expected reduction dim to be specified for input.numel() == 0")
		}
	}
	ca, err := castScratch(a, in, &st.ca)
	if err != nil {
		return err
	}
	pl := newRedPlan(ca, &red)
	out := p.OutTensor(0)
	out.Resize(outDT, oshape)
	var idxOut []int64
	if k.kind == redMaxDim || k.kind == redMinDim {
		it := p.OutTensor(1)
		it.Resize(ivalue.Int64, oshape)
		idxOut = it.I64Contig()
	}
	if ca.Numel() == 0 {
		return redEmpty(k.kind, out)
	}
	target := out
	tdt := in
	if k.kind == redArgmax || k.kind == redArgmin {
		tdt = ivalue.Int64
	}
	if tdt != outDT {
		if st.tmp == nil {
			st.tmp = &ivalue.Tensor{}
		}
		target = st.tmp
		target.Resize(tdt, oshape)
	}
	switch k.kind {
	case redSum, redMean, redProd:
		prod := k.kind == redProd
		div := 1.0
		if k.kind == redMean {
			div = float64(pl.innerN)
		}
		switch in {
		case ivalue.Float32:
			o, x := target.F32(), ca.F32()
			for j := 0; j < pl.outerCount; j++ {
				o[j] = float32(sumInner(&pl, x, pl.outerOffset(j), prod) / div)
			}
		case ivalue.Float64:
			o, x := target.F64(), ca.F64()
			for j := 0; j < pl.outerCount; j++ {
				o[j] = sumInner(&pl, x, pl.outerOffset(j), prod) / div
			}
		case ivalue.Int64:
			o, x := target.I64(), ca.I64()
			for j := 0; j < pl.outerCount; j++ {
				o[j] = sumInnerI(&pl, x, pl.outerOffset(j), prod)
			}
		default:
			return Errorf("reduction over %s tensors is not supported", a.DType())
		}
	default:
		wantMax := k.kind == redMax || k.kind == redArgmax || k.kind == redMaxDim
		var argOut []int64
		if k.kind == redArgmax || k.kind == redArgmin {
			argOut = target.I64()
		}
		switch in {
		case ivalue.Float32:
			err = bestAll(&pl, valsOf(target, argOut, (*ivalue.Tensor).F32), ca.F32(), idxOut, argOut, wantMax)
		case ivalue.Float64:
			err = bestAll(&pl, valsOf(target, argOut, (*ivalue.Tensor).F64), ca.F64(), idxOut, argOut, wantMax)
		case ivalue.Int64:
			err = bestAll(&pl, valsOf(target, argOut, (*ivalue.Tensor).I64), ca.I64(), idxOut, argOut, wantMax)
		case ivalue.Int32:
			err = bestAll(&pl, valsOf(target, argOut, (*ivalue.Tensor).I32), ca.I32(), idxOut, argOut, wantMax)
		case ivalue.Uint8:
			err = bestAll(&pl, valsOf(target, argOut, (*ivalue.Tensor).U8), ca.U8(), idxOut, argOut, wantMax)
		case ivalue.Int8:
			err = bestAll(&pl, valsOf(target, argOut, (*ivalue.Tensor).I8), ca.I8(), idxOut, argOut, wantMax)
		case ivalue.Int16:
			err = bestAll(&pl, valsOf(target, argOut, (*ivalue.Tensor).I16), ca.I16(), idxOut, argOut, wantMax)
		default:
			err = Errorf("max/min over %s tensors is not supported", a.DType())
		}
		if err != nil {
			return err
		}
	}
	if target != out {
		return CastInto(out, target)
	}
	return nil
}

func bestAll[T ewReal](pl *redPlan, o []T, x []T, idxOut, argOut []int64, wantMax bool) error {
	if pl.innerN == 0 {
		return Errorf("cannot reduce over a zero-size dimension")
	}
	for j := 0; j < pl.outerCount; j++ {
		v, bi := bestInner(pl, x, pl.outerOffset(j), wantMax)
		if argOut != nil {
			argOut[j] = int64(bi)
			continue
		}
		o[j] = v
		if idxOut != nil {
			idxOut[j] = int64(bi)
		}
	}
	return nil
}

func registerReduce(op string, specs ...struct {
	schema string
	k      redKernel
}) {
	RegisterOut(op, func(n *graph.Node) Kernel {
		for _, s := range specs {
			if n.Matches(s.schema) {
				k := s.k
				return k.run
			}
		}
		return nil
	})
}

type redSpec = struct {
	schema string
	k      redKernel
}

func init() {
	for _, r := range []struct {
		name string
		kind redKind
	}{{"sum", redSum}, {"mean", redMean}} {
		registerReduce("aten::"+r.name,
			redSpec{"aten::" + r.name + "(Tensor self, *, ScalarType? dtype=None) -> Tensor", redKernel{kind: r.kind, dimIdx: -1, keepIdx: -1, dtypeIdx: 1}},
			redSpec{"aten::" + r.name + ".dim" + map[bool]string{true: "_IntList", false: ""}[r.name == "sum"] + "(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor", redKernel{kind: r.kind, dimIdx: 1, keepIdx: 2, dtypeIdx: 3}})
	}
	registerReduce("aten::prod",
		redSpec{"aten::prod(Tensor self, *, ScalarType? dtype=None) -> Tensor", redKernel{kind: redProd, dimIdx: -1, keepIdx: -1, dtypeIdx: 1}},
		redSpec{"aten::prod.dim_int(Tensor self, int dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor", redKernel{kind: redProd, dimIdx: 1, keepIdx: 2, dtypeIdx: 3}})
	registerReduce("aten::max",
		redSpec{"aten::max(Tensor self) -> Tensor", redKernel{kind: redMax, dimIdx: -1, keepIdx: -1, dtypeIdx: -1}},
		redSpec{"aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)", redKernel{kind: redMaxDim, dimIdx: 1, keepIdx: 2, dtypeIdx: -1}})
	registerReduce("aten::min",
		redSpec{"aten::min(Tensor self) -> Tensor", redKernel{kind: redMin, dimIdx: -1, keepIdx: -1, dtypeIdx: -1}},
		redSpec{"aten::min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)", redKernel{kind: redMinDim, dimIdx: 1, keepIdx: 2, dtypeIdx: -1}})
	registerReduce("aten::amax",
		redSpec{"aten::amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", redKernel{kind: redMax, dimIdx: 1, keepIdx: 2, dtypeIdx: -1}})
	registerReduce("aten::amin",
		redSpec{"aten::amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor", redKernel{kind: redMin, dimIdx: 1, keepIdx: 2, dtypeIdx: -1}})
	registerReduce("aten::argmax",
		redSpec{"aten::argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", redKernel{kind: redArgmax, dimIdx: 1, keepIdx: 2, dtypeIdx: -1}})
	registerReduce("aten::argmin",
		redSpec{"aten::argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor", redKernel{kind: redArgmin, dimIdx: 1, keepIdx: 2, dtypeIdx: -1}})
}

// valsOf returns target's typed storage for value outputs, nil when the
// kernel writes indices only (argmax: target is int64).
func valsOf[T any](target *ivalue.Tensor, argOut []int64, get func(*ivalue.Tensor) []T) []T {
	if argOut != nil {
		return nil
	}
	return get(target)
}

// redEmpty fills the output of a reduction over no elements, as PyTorch:
// a sum is 0, a product 1, a mean NaN; max, min and the arg forms have no
// answer for a non-empty output.
func redEmpty(kind redKind, out *ivalue.Tensor) error {
	n := out.Numel()
	if n == 0 {
		return nil
	}
	var v ivalue.IValue
	switch kind {
	case redSum:
		v = ivalue.FromInt(0)
	case redProd:
		v = ivalue.FromInt(1)
	case redMean:
		v = ivalue.FromDouble(math.NaN())
	default:
		return Errorf("cannot reduce over a dimension of size 0: the operation has no identity (expected a non-empty reduction)")
	}
	for i := 0; i < n; i++ {
		if err := WriteScalar(out, i, v); err != nil {
			return err
		}
	}
	return nil
}
