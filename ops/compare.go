package ops

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// Comparison (eq, ne, lt, le, gt, ge -> bool tensors), logical ops, and
// the three-operand kernels: where, masked_fill, clamp with tensor bounds.

func cmpSpecs(name string, op binOp) []binSpec {
	return []binSpec{
		{schema: "aten::" + name + ".Tensor(Tensor self, Tensor other) -> Tensor", op: op, a: 0, b: 1, alpha: -1, mode: -1, cmp: true},
		{schema: "aten::" + name + ".Scalar(Tensor self, Scalar other) -> Tensor", op: op, a: 0, b: 1, bScalar: true, alpha: -1, mode: -1, cmp: true},
	}
}

func runCmp(it *Iter, op binOp, o []bool, a, b *ivalue.Tensor) error {
	switch a.DType() {
	case ivalue.Float32:
		runCmpT(it, op, o, a.F32(), b.F32())
	case ivalue.Float64:
		runCmpT(it, op, o, a.F64(), b.F64())
	case ivalue.Int64:
		runCmpT(it, op, o, a.I64(), b.I64())
	case ivalue.Int32:
		runCmpT(it, op, o, a.I32(), b.I32())
	case ivalue.Int16:
		runCmpT(it, op, o, a.I16(), b.I16())
	case ivalue.Int8:
		runCmpT(it, op, o, a.I8(), b.I8())
	case ivalue.Uint8:
		runCmpT(it, op, o, a.U8(), b.U8())
	default:
		return Errorf("comparison of %s tensors is not supported", a.DType())
	}
	return nil
}

func runCmpT[T ewReal](it *Iter, op binOp, o []bool, a, b []T) {
	for it.Next() {
		cmpLoop(op, o[it.Out:it.Out+it.N], a, it.Off[0], it.Stride[0], b, it.Off[1], it.Stride[1], 0)
	}
}

// logicalKernel: logical_and/or/xor on any dtypes (nonzero is true) -> bool.
func logicalKernel(op binOp) Kernel {
	return func(p *ProcessedNode) error {
		a, b := p.Tensor(0), p.Tensor(1)
		if a == nil || b == nil {
			return Errorf("expected two tensors")
		}
		st, _ := p.State.(*binState)
		if st == nil {
			st = &binState{}
			p.State = st
		}
		ca, err := castScratch(a, ivalue.Bool, &st.ca)
		if err != nil {
			return err
		}
		cb, err := castScratch(b, ivalue.Bool, &st.cb)
		if err != nil {
			return err
		}
		var buf [MaxIterDims]int
		shape, err := BroadcastShapes(buf[:0], a.Sizes(), b.Sizes())
		if err != nil {
			return err
		}
		var it Iter
		if err := it.Init(shape, ca, cb, nil); err != nil {
			return err
		}
		out := p.OutTensor(0)
		out.Resize(ivalue.Bool, shape)
		o, x, y := out.B(), ca.B(), cb.B()
		for it.Next() {
			oo := o[it.Out : it.Out+it.N]
			ia, sa, ib, sb := it.Off[0], it.Stride[0], it.Off[1], it.Stride[1]
			for i := range oo {
				u, v := x[ia+i*sa], y[ib+i*sb]
				switch op {
				case opLogicalAnd:
					oo[i] = u && v
				case opLogicalOr:
					oo[i] = u || v
				default:
					oo[i] = u != v
				}
			}
		}
		return nil
	}
}

// ---- three operands ----

type ternState struct {
	sa, sb, ca, cb, cc, cond, tmp *ivalue.Tensor
}

func ternStateOf(p *ProcessedNode) *ternState {
	st, _ := p.State.(*ternState)
	if st == nil {
		st = &ternState{}
		p.State = st
	}
	return st
}

// scalarOperand wraps input v of p as a 0-d tensor of dtype dt in *buf.
func scalarOperand(v ivalue.IValue, dt ivalue.DType, buf **ivalue.Tensor) (*ivalue.Tensor, error) {
	if !v.IsNumber() {
		return nil, Errorf("expected a number, got %s", v.Kind())
	}
	if *buf == nil {
		*buf = &ivalue.Tensor{}
	}
	(*buf).Resize(dt, nil)
	return *buf, WriteScalar(*buf, 0, v)
}

// whereKernel: where(cond, self, other), self/other tensors or scalars.
func whereKernel(selfScalar, otherScalar bool) Kernel {
	return func(p *ProcessedNode) error {
		cond := p.Tensor(0)
		if cond == nil || (cond.DType() != ivalue.Bool && cond.DType() != ivalue.Uint8) {
			return Errorf("where expected condition to be a bool tensor")
		}
		var a, b *ivalue.Tensor
		wrapped := ivalue.Undefined
		if selfScalar {
			wrapped = ScalarDType(*p.Input(1))
		} else if a = p.Tensor(1); a == nil {
			return Errorf("where expected a tensor as self")
		}
		if otherScalar {
			wrapped = PromoteTypes(wrapped, ScalarDType(*p.Input(2)))
		} else if b = p.Tensor(2); b == nil {
			return Errorf("where expected a tensor as other")
		}
		dt := ResultType(a, b, nil, wrapped)
		if selfScalar && otherScalar {
			// where.Scalar: both wrapped; PyTorch gives the default dtype for floats.
			dt = wrapped
		}
		st := ternStateOf(p)
		cdt := computeDType(dt)
		var err error
		if selfScalar {
			if a, err = scalarOperand(*p.Input(1), cdt, &st.sa); err != nil {
				return err
			}
		}
		if otherScalar {
			if b, err = scalarOperand(*p.Input(2), cdt, &st.sb); err != nil {
				return err
			}
		}
		if a, err = castScratch(a, cdt, &st.ca); err != nil {
			return err
		}
		if b, err = castScratch(b, cdt, &st.cb); err != nil {
			return err
		}
		if cond, err = castScratch(cond, ivalue.Bool, &st.cond); err != nil {
			return err
		}
		var buf [MaxIterDims]int
		shape, err := BroadcastShapes3(buf[:0], cond.Sizes(), a.Sizes(), b.Sizes())
		if err != nil {
			return err
		}
		var it Iter
		if err := it.Init(shape, cond, a, b); err != nil {
			return err
		}
		out := p.OutTensor(0)
		out.Resize(dt, shape)
		target := out
		if cdt != dt {
			if st.tmp == nil {
				st.tmp = &ivalue.Tensor{}
			}
			target = st.tmp
			target.Resize(cdt, shape)
		}
		c := cond.B()
		switch cdt {
		case ivalue.Float32:
			whereLoop(&it, target.F32(), c, a.F32(), b.F32())
		case ivalue.Float64:
			whereLoop(&it, target.F64(), c, a.F64(), b.F64())
		case ivalue.Int64:
			whereLoop(&it, target.I64(), c, a.I64(), b.I64())
		case ivalue.Int32:
			whereLoop(&it, target.I32(), c, a.I32(), b.I32())
		case ivalue.Int16:
			whereLoop(&it, target.I16(), c, a.I16(), b.I16())
		case ivalue.Int8:
			whereLoop(&it, target.I8(), c, a.I8(), b.I8())
		case ivalue.Uint8:
			whereLoop(&it, target.U8(), c, a.U8(), b.U8())
		default:
			return Errorf("where on %s tensors is not supported", dt)
		}
		if target != out {
			return CastInto(out, target)
		}
		return nil
	}
}

func whereLoop[T ewReal](it *Iter, o []T, c []bool, a, b []T) {
	for it.Next() {
		oo := o[it.Out : it.Out+it.N]
		ic, sc, ia, sa, ib, sb := it.Off[0], it.Stride[0], it.Off[1], it.Stride[1], it.Off[2], it.Stride[2]
		for i := range oo {
			if c[ic+i*sc] {
				oo[i] = a[ia+i*sa]
			} else {
				oo[i] = b[ib+i*sb]
			}
		}
	}
}

// maskedFillKernel: masked_fill(self, mask, value) keeps self's dtype;
// self and mask broadcast together (PyTorch's expand_outplace: traced
// MultiheadAttention fills a [1, L, S] mask by a [N*H, 1, S] padding
// mask; masked_fill_ rejects a result self cannot hold when writing it
// back), value is a Scalar or a 0-d tensor.
func maskedFillKernel(tensorValue bool) Kernel {
	return func(p *ProcessedNode) error {
		self, mask := p.Tensor(0), p.Tensor(1)
		if self == nil || mask == nil || mask.DType() != ivalue.Bool {
			return Errorf("masked_fill expected a tensor and a bool mask")
		}
		v := *p.Input(2)
		if tensorValue {
			vt := p.Tensor(2)
			if vt == nil || vt.Dim() != 0 {
				return Errorf("masked_fill only supports a 0-dimensional value tensor")
			}
			v = ReadScalar(vt, vt.Offset())
		}
		st := ternStateOf(p)
		dt := self.DType()
		cdt := computeDType(dt)
		val, err := scalarOperand(v, cdt, &st.sb)
		if err != nil {
			return err
		}
		a, err := castScratch(self, cdt, &st.ca)
		if err != nil {
			return err
		}
		var buf [MaxIterDims]int
		shape, err := BroadcastShapes(buf[:0], self.Sizes(), mask.Sizes())
		if err != nil {
			return err
		}
		var it Iter
		if err := it.Init(shape, mask, val, a); err != nil {
			return err
		}
		out := p.OutTensor(0)
		out.Resize(dt, shape)
		target := out
		if cdt != dt {
			if st.tmp == nil {
				st.tmp = &ivalue.Tensor{}
			}
			target = st.tmp
			target.Resize(cdt, shape)
		}
		c := mask.B()
		switch cdt {
		case ivalue.Float32:
			whereLoop(&it, target.F32(), c, val.F32(), a.F32())
		case ivalue.Float64:
			whereLoop(&it, target.F64(), c, val.F64(), a.F64())
		case ivalue.Int64:
			whereLoop(&it, target.I64(), c, val.I64(), a.I64())
		case ivalue.Int32:
			whereLoop(&it, target.I32(), c, val.I32(), a.I32())
		case ivalue.Int16:
			whereLoop(&it, target.I16(), c, val.I16(), a.I16())
		case ivalue.Int8:
			whereLoop(&it, target.I8(), c, val.I8(), a.I8())
		case ivalue.Uint8:
			whereLoop(&it, target.U8(), c, val.U8(), a.U8())
		default:
			return Errorf("masked_fill on %s tensors is not supported", dt)
		}
		if target != out {
			return CastInto(out, target)
		}
		return nil
	}
}

// clampTensorKernel: clamp(self, Tensor? min, Tensor? max) =
// min(max(self, min), max), with type promotion over all three.
func clampTensorKernel(p *ProcessedNode) error {
	self := p.Tensor(0)
	if self == nil {
		return Errorf("clamp expected a tensor")
	}
	lo, hi := p.Tensor(1), p.Tensor(2)
	if lo == nil && hi == nil {
		return Errorf("torch.clamp: at least one of 'min' or 'max' must not be None")
	}
	st := ternStateOf(p)
	dt := ResultType(self, lo, hi, ivalue.Undefined)
	cdt := computeDType(dt)
	if dt == ivalue.Bool {
		return Errorf("clamp is not supported for bool tensors")
	}
	a, err := castScratch(self, cdt, &st.ca)
	if err != nil {
		return err
	}
	// A missing bound is replaced by self (any tensor of a broadcastable
	// shape) and skipped by the loop.
	hasLo, hasHi := lo != nil, hi != nil
	if !hasLo {
		lo = a
	} else if lo, err = castScratch(lo, cdt, &st.cb); err != nil {
		return err
	}
	if !hasHi {
		hi = a
	} else if hi, err = castScratch(hi, cdt, &st.cc); err != nil {
		return err
	}
	var buf [MaxIterDims]int
	shape, err := BroadcastShapes3(buf[:0], a.Sizes(), lo.Sizes(), hi.Sizes())
	if err != nil {
		return err
	}
	var it Iter
	if err := it.Init(shape, a, lo, hi); err != nil {
		return err
	}
	out := p.OutTensor(0)
	out.Resize(dt, shape)
	target := out
	if cdt != dt {
		if st.tmp == nil {
			st.tmp = &ivalue.Tensor{}
		}
		target = st.tmp
		target.Resize(cdt, shape)
	}
	switch cdt {
	case ivalue.Float32:
		clampLoopF(&it, target.F32(), a.F32(), lo.F32(), hi.F32(), hasLo, hasHi)
	case ivalue.Float64:
		clampLoopF(&it, target.F64(), a.F64(), lo.F64(), hi.F64(), hasLo, hasHi)
	case ivalue.Int64:
		clampLoopI(&it, target.I64(), a.I64(), lo.I64(), hi.I64(), hasLo, hasHi)
	case ivalue.Int32:
		clampLoopI(&it, target.I32(), a.I32(), lo.I32(), hi.I32(), hasLo, hasHi)
	case ivalue.Int16:
		clampLoopI(&it, target.I16(), a.I16(), lo.I16(), hi.I16(), hasLo, hasHi)
	case ivalue.Int8:
		clampLoopI(&it, target.I8(), a.I8(), lo.I8(), hi.I8(), hasLo, hasHi)
	case ivalue.Uint8:
		clampLoopI(&it, target.U8(), a.U8(), lo.U8(), hi.U8(), hasLo, hasHi)
	default:
		return Errorf("clamp on %s tensors is not supported", dt)
	}
	if target != out {
		return CastInto(out, target)
	}
	return nil
}

func clampLoopF[T float32 | float64](it *Iter, o, a, lo, hi []T, hasLo, hasHi bool) {
	for it.Next() {
		oo := o[it.Out : it.Out+it.N]
		for i := range oo {
			v := a[it.Off[0]+i*it.Stride[0]]
			if hasLo {
				v = maxNaN(v, lo[it.Off[1]+i*it.Stride[1]])
			}
			if hasHi {
				v = minNaN(v, hi[it.Off[2]+i*it.Stride[2]])
			}
			oo[i] = v
		}
	}
}

func clampLoopI[T ewInt](it *Iter, o, a, lo, hi []T, hasLo, hasHi bool) {
	for it.Next() {
		oo := o[it.Out : it.Out+it.N]
		for i := range oo {
			v := a[it.Off[0]+i*it.Stride[0]]
			if hasLo {
				v = max(v, lo[it.Off[1]+i*it.Stride[1]])
			}
			if hasHi {
				v = min(v, hi[it.Off[2]+i*it.Stride[2]])
			}
			oo[i] = v
		}
	}
}

func init() {
	for _, c := range []struct {
		name string
		op   binOp
	}{{"eq", opEq}, {"ne", opNe}, {"lt", opLt}, {"le", opLe}, {"gt", opGt}, {"ge", opGe}} {
		registerBinary("aten::"+c.name, cmpSpecs(c.name, c.op)...)
	}
	for _, c := range []struct {
		name string
		op   binOp
	}{{"logical_and", opLogicalAnd}, {"logical_or", opLogicalOr}, {"logical_xor", opLogicalXor}} {
		schema := "aten::" + c.name + "(Tensor self, Tensor other) -> Tensor"
		op := c.op
		RegisterOut("aten::"+c.name, func(n *graph.Node) Kernel {
			if !n.Matches(schema) {
				return nil
			}
			return logicalKernel(op)
		})
	}
	// __and__/__or__/__xor__ and bitwise_and/or on bool tensors.
	for _, c := range []struct {
		name string
		op   binOp
	}{{"__and__", opLogicalAnd}, {"__or__", opLogicalOr}, {"__xor__", opLogicalXor}, {"bitwise_and", opLogicalAnd}, {"bitwise_or", opLogicalOr}} {
		schema := "aten::" + c.name + ".Tensor(Tensor self, Tensor other) -> Tensor"
		op := c.op
		RegisterOut("aten::"+c.name, func(n *graph.Node) Kernel {
			if !n.Matches(schema) {
				return nil
			}
			k := logicalKernel(op)
			return func(p *ProcessedNode) error {
				if a, b := p.Tensor(0), p.Tensor(1); a == nil || b == nil || a.DType() != ivalue.Bool || b.DType() != ivalue.Bool {
					return Errorf("bitwise ops are only supported on bool tensors")
				}
				return k(p)
			}
		})
	}
	RegisterOut("aten::where", func(n *graph.Node) Kernel {
		switch {
		case n.Matches("aten::where.self(Tensor condition, Tensor self, Tensor other) -> Tensor"):
			return whereKernel(false, false)
		case n.Matches("aten::where.ScalarOther(Tensor condition, Tensor self, Scalar other) -> Tensor"):
			return whereKernel(false, true)
		case n.Matches("aten::where.ScalarSelf(Tensor condition, Scalar self, Tensor other) -> Tensor"):
			return whereKernel(true, false)
		case n.Matches("aten::where.Scalar(Tensor condition, Scalar self, Scalar other) -> Tensor"):
			return whereKernel(true, true)
		}
		return nil
	})
	RegisterOut("aten::masked_fill", func(n *graph.Node) Kernel {
		switch {
		case n.Matches("aten::masked_fill.Scalar(Tensor self, Tensor mask, Scalar value) -> Tensor"):
			return maskedFillKernel(false)
		case n.Matches("aten::masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor"):
			return maskedFillKernel(true)
		}
		return nil
	})
	RegisterOut("aten::clamp", func(n *graph.Node) Kernel {
		if n.Matches("aten::clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor") {
			// Both None constants: the Scalar overload's kernel handles it.
			for _, in := range n.Inputs[1:] {
				if t := in.Type; t.Kind == graph.TensorType || t.Kind == graph.OptionalType && t.Elem().Kind == graph.TensorType {
					return clampTensorKernel
				}
			}
		}
		return nil
	})
}

// ---- generated loops ----

func cmpLoop[T ewReal](op binOp, o []bool, a []T, ia, sa int, b []T, ib, sb int, _ T) {
	n := len(o)
	if sa == 1 && sb == 1 {
		a, b := span(a, ia, n), span(b, ib, n)
		switch op {
		case opEq:
			for i := range o {
				x, y := a[i], b[i]
				o[i] = x == y
			}
		case opNe:
			for i := range o {
				x, y := a[i], b[i]
				o[i] = x != y
			}
		case opLt:
			for i := range o {
				x, y := a[i], b[i]
				o[i] = x < y
			}
		case opLe:
			for i := range o {
				x, y := a[i], b[i]
				o[i] = x <= y
			}
		case opGt:
			for i := range o {
				x, y := a[i], b[i]
				o[i] = x > y
			}
		case opGe:
			for i := range o {
				x, y := a[i], b[i]
				o[i] = x >= y
			}
		default:
			return
		}
		return
	}
	switch op {
	case opEq:
		for i := range o {
			x, y := a[ia+i*sa], b[ib+i*sb]
			o[i] = x == y
		}
	case opNe:
		for i := range o {
			x, y := a[ia+i*sa], b[ib+i*sb]
			o[i] = x != y
		}
	case opLt:
		for i := range o {
			x, y := a[ia+i*sa], b[ib+i*sb]
			o[i] = x < y
		}
	case opLe:
		for i := range o {
			x, y := a[ia+i*sa], b[ib+i*sb]
			o[i] = x <= y
		}
	case opGt:
		for i := range o {
			x, y := a[ia+i*sa], b[ib+i*sb]
			o[i] = x > y
		}
	case opGe:
		for i := range o {
			x, y := a[ia+i*sa], b[ib+i*sb]
			o[i] = x >= y
		}
	default:
		return
	}
}
