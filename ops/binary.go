package ops

import (
	"math"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// Binary arithmetic kernels (add, sub, mul, div, rsub, pow, remainder,
// maximum/minimum, clamp_min/clamp_max with tensor bounds) and the shared
// two-operand driver that the comparison kernels also use.

type binOp uint8

const (
	opAdd binOp = iota
	opAddAlpha
	opSub
	opSubAlpha
	opMul
	opDiv
	opFloorDiv
	opTruncDiv
	opPow
	opMax
	opMin
	opRem
	opEq
	opNe
	opLt
	opLe
	opGt
	opGe
	opLogicalAnd
	opLogicalOr
	opLogicalXor
)

type ewInt interface {
	~int64 | ~int32 | ~int16 | ~int8 | ~uint8
}

var errIntDivZero = Errorf("ZeroDivisionError: integer division or modulo by zero")

func errBadOp(op binOp) error {
	return Errorf("internal: binary op %d not supported for this dtype", op)
}

// binSpec describes one overload: which inputs are the two operands
// (a Scalar operand is wrapped into a 0-d tensor), where alpha and
// rounding_mode are.
type binSpec struct {
	schema           string
	op               binOp
	a, b             int
	aScalar, bScalar bool
	alpha, mode      int // input index, -1 if none
	trueDiv          bool
	cmp              bool // output is bool
}

type binKernel struct {
	binSpec
	alphaConst bool
	alphaV     ivalue.IValue
	modeConst  bool
	modeOp     binOp
	// fixedOp is the op with a constant alpha and rounding mode folded in
	// at build time (the common case), saving the per-run resolution.
	fixed   bool
	fixedOp binOp
	alphaF  float32 // alpha as float32, when constant
}

type binState struct {
	sc, ca, cb, tmp *ivalue.Tensor
	// The split of a large float32 fast path across the team
	// (binLoop32), and its scalar operand.
	split    binSplitState
	rowSplit rowSplitState
	scalar   [1]float32
}

// binStateOf is p's binState, made on its first run.
func binStateOf(p *ProcessedNode) *binState {
	st, _ := p.State.(*binState)
	if st == nil {
		st = &binState{}
		p.State = st
	}
	return st
}

// binScalar holds v as the fast paths' one-element operand, in the
// node's state (a stack array would escape into the split state).
func binScalar(p *ProcessedNode, v float32) []float32 {
	st := binStateOf(p)
	st.scalar[0] = v
	return st.scalar[:]
}

// binSplitState is one split float32 loop: its operands, set per run,
// and the body the splitter calls, made once.
type binSplitState struct {
	splitter
	op             binOp
	o, a, b        []float32
	ia, sa, ib, sb int
	alpha          float32
	fn             func(lo, hi int)
}

// binLoopF32 is binLoopF for float32 with add, sub, mul and div (alpha
// included) over a contiguous a and a contiguous or scalar b (either
// operand scalar for add and mul) in AVX2, eight at a time: a scalar Go
// loop does one element a cycle at best, the residual adds and the
// squeeze-excitation products of the vision models are whole feature
// maps.
func binLoopF32(op binOp, o, a []float32, ia, sa int, b []float32, ib, sb int, alpha float32) {
	if n8 := len(o) &^ 7; useAVX2 && n8 > 0 {
		code := -1
		switch op {
		case opAdd:
			code = 0
		case opSub:
			code = 1
		case opMul:
			code = 2
		case opDiv:
			code = 3
		case opAddAlpha:
			code = 4
		case opSubAlpha:
			code = 5
		}
		if (code == 0 || code == 2) && sa == 0 && sb == 1 {
			// x+y and x*y are y+x and y*x, bit for bit.
			a, ia, sa, b, ib, sb = b, ib, sb, a, ia, sa
		}
		if code >= 0 && sa == 1 && (sb == 1 || sb == 0) {
			_ = a[ia+n8-1]
			_ = b[ib+(n8-1)*sb]
			bin32AVX2(code, &o[0], &a[ia], &b[ib], n8, sb, alpha)
			o = o[n8:]
			ia += n8
			ib += n8 * sb
		}
	}
	if len(o) > 0 {
		binLoopF(op, o, a, ia, sa, b, ib, sb, alpha)
	}
}

// binLoop32 runs binLoopF32 over o, split across p's team when o is
// large (sa and sb are 1, or 0 for a scalar operand).
func binLoop32(p *ProcessedNode, op binOp, o, a []float32, ia, sa int, b []float32, ib, sb int, alpha float32) {
	if p.Scratch.Team() == nil || len(o) < 2*splitMinWork {
		binLoopF32(op, o, a, ia, sa, b, ib, sb, alpha)
		return
	}
	st := binStateOf(p)
	sp := &st.split
	if sp.fn == nil {
		sp.fn = func(lo, hi int) {
			binLoopF32(sp.op, sp.o[lo:hi], sp.a, sp.ia+lo*sp.sa, sp.sa, sp.b, sp.ib+lo*sp.sb, sp.sb, sp.alpha)
		}
	}
	sp.op, sp.o, sp.a, sp.ia, sp.sa, sp.b, sp.ib, sp.sb, sp.alpha = op, o, a, ia, sa, b, ib, sb, alpha
	sp.run(p.Scratch, len(o), 16, len(o), sp.fn)
	sp.o, sp.a, sp.b = nil, nil, nil // not the state's to keep
}

func registerBinary(name string, specs ...binSpec) {
	RegisterOut(name, func(n *graph.Node) Kernel {
		for _, s := range specs {
			if !n.Matches(s.schema) {
				continue
			}
			k := &binKernel{binSpec: s, alphaV: ivalue.FromInt(1), alphaConst: true, modeConst: true, modeOp: s.op}
			if s.alpha >= 0 {
				k.alphaV, k.alphaConst = graph.ConstantValue(n.Inputs[s.alpha])
			}
			if s.mode >= 0 {
				if v, ok := graph.ConstantValue(n.Inputs[s.mode]); ok {
					op, err := roundingModeOp(v)
					if err != nil {
						return func(*ProcessedNode) error { return err }
					}
					k.modeOp = op
				} else {
					k.modeConst = false
				}
			}
			if k.alphaConst && k.modeConst {
				k.fixed, k.fixedOp = true, withAlpha(k.modeOp, k.alphaV)
				k.alphaF = float32(k.alphaV.AsFloat())
			}
			return k.run
		}
		return nil
	})
}

func roundingModeOp(v ivalue.IValue) (binOp, error) {
	if v.IsNone() {
		return opDiv, nil
	}
	switch v.Str() {
	case "floor":
		return opFloorDiv, nil
	case "trunc":
		return opTruncDiv, nil
	}
	return 0, Errorf("div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '%s'", v.Str())
}

func withAlpha(op binOp, alpha ivalue.IValue) binOp {
	if alpha.Kind() == ivalue.KindDouble && alpha.Double() == 1 || alpha.Kind() != ivalue.KindDouble && alpha.Int() == 1 {
		return op
	}
	switch op {
	case opAdd:
		return opAddAlpha
	case opSub:
		return opSubAlpha
	}
	return op
}

func (k *binKernel) run(p *ProcessedNode) error {
	// The per-node-overhead path: two one-element float32 tensors of the
	// same rank under a constant arithmetic op.
	if k.fixed && !k.aScalar && !k.bScalar && k.fixedOp <= opDiv {
		a, b := p.Tensor(k.a), p.Tensor(k.b)
		if a != nil && b != nil && a.DType() == ivalue.Float32 && b.DType() == ivalue.Float32 &&
			a.Dim() == b.Dim() && a.Numel() == 1 && b.Numel() == 1 {
			out := p.OutTensor(0)
			out.Resize(ivalue.Float32, a.Sizes())
			x, y := a.F32()[a.Offset()], b.F32()[b.Offset()]
			var z float32
			switch k.fixedOp {
			case opAdd:
				z = x + y
			case opAddAlpha:
				z = x + k.alphaF*y
			case opSub:
				z = x - y
			case opSubAlpha:
				z = x - k.alphaF*y
			case opMul:
				z = x * y
			case opDiv:
				z = x / y
			}
			out.F32()[0] = z
			return nil
		}
	}
	op := k.fixedOp
	alpha := k.alphaV
	if !k.fixed {
		op = k.modeOp
		if k.alphaConst {
			op = withAlpha(op, alpha)
		}
	}
	if !k.modeConst {
		var err error
		if op, err = roundingModeOp(*p.Input(k.mode)); err != nil {
			return err
		}
	}
	if !k.alphaConst {
		alpha = *p.Input(k.alpha)
		op = withAlpha(op, alpha)
	}
	var a, b *ivalue.Tensor
	if !k.aScalar {
		if a = p.Tensor(k.a); a == nil {
			return Errorf("expected a tensor as input %d, got %s", k.a, p.Input(k.a).Kind())
		}
	}
	if !k.bScalar {
		if b = p.Tensor(k.b); b == nil {
			return Errorf("expected a tensor as input %d, got %s", k.b, p.Input(k.b).Kind())
		}
	}
	out := p.OutTensor(0)
	// Fast paths: float32 operands, contiguous, same shape or one scalar.
	if op <= opMin {
		if a != nil && b != nil && a.DType() == ivalue.Float32 && b.DType() == ivalue.Float32 &&
			len(a.Sizes()) == len(b.Sizes()) && a.Numel() == 1 && b.Numel() == 1 {
			// One element each (same rank): no shape or stride work.
			out.Resize(ivalue.Float32, a.Sizes())
			s := [1]float32{b.F32()[b.Offset()]}
			binLoopF(op, out.F32()[:1], a.F32()[a.Offset():], 0, 0, s[:], 0, 0, float32(alpha.AsFloat()))
			return nil
		}
		af := 1.0
		if op == opAddAlpha || op == opSubAlpha {
			af = alpha.AsFloat()
		}
		switch {
		case a != nil && b != nil:
			if a.DType() == ivalue.Float32 && b.DType() == ivalue.Float32 && SameSizes(a.Sizes(), b.Sizes()) && a.IsContiguous() && b.IsContiguous() {
				out.Resize(ivalue.Float32, a.Sizes())
				binLoop32(p, op, out.F32Contig(), a.F32(), a.Offset(), 1, b.F32(), b.Offset(), 1, float32(af))
				return nil
			}
			if op == opMul && useAVX512 && binScaleRows(p, a, b, out) {
				return nil
			}
		case a != nil:
			if v := p.Input(k.b); a.DType() == ivalue.Float32 && v.IsNumber() && a.IsContiguous() {
				s := binScalar(p, float32(v.AsFloat()))
				out.Resize(ivalue.Float32, a.Sizes())
				binLoop32(p, op, out.F32Contig(), a.F32(), a.Offset(), 1, s, 0, 0, float32(af))
				return nil
			}
		case b != nil:
			if v := p.Input(k.a); b.DType() == ivalue.Float32 && v.IsNumber() && b.IsContiguous() {
				s := binScalar(p, float32(v.AsFloat()))
				out.Resize(ivalue.Float32, b.Sizes())
				binLoop32(p, op, out.F32Contig(), s, 0, 0, b.F32(), b.Offset(), 1, float32(af))
				return nil
			}
		}
	}
	st := binStateOf(p)
	wrapped := ivalue.Undefined
	var sv ivalue.IValue
	if k.aScalar {
		sv = *p.Input(k.a)
	} else if k.bScalar {
		sv = *p.Input(k.b)
	}
	if k.aScalar || k.bScalar {
		if !sv.IsNumber() {
			return Errorf("expected a number as the scalar operand, got %s", sv.Kind())
		}
		wrapped = ScalarDType(sv)
	}
	dt := ResultType(a, b, nil, wrapped)
	outDT := dt
	if k.trueDiv && op == opDiv && !dt.IsFloat() {
		dt, outDT = ivalue.Float32, ivalue.Float32
	}
	if k.cmp {
		outDT = ivalue.Bool
	} else if dt == ivalue.Bool && op == opSub || op == opSubAlpha && dt == ivalue.Bool {
		return Errorf("subtraction, the `-` operator, with two bool tensors is not supported; use the `^` or `logical_xor()` operator instead")
	}
	// PyTorch checks alpha's kind whatever its value (1.0 included).
	if k.alpha >= 0 && !dt.IsFloat() && alpha.Kind() == ivalue.KindDouble {
		return Errorf("for integral input tensors, argument alpha must not be a floating point number")
	}
	if op == opPow && k.bScalar && !dt.IsFloat() && sv.Kind() == ivalue.KindInt && sv.Int() < 0 {
		return Errorf("integers to negative integer powers are not allowed (exponent %d)", sv.Int())
	}
	return binGeneral(op, st, a, b, sv, k.aScalar || k.bScalar, dt, outDT, alpha, out)
}

// computeDType is the dtype a kernel computes in for result dtype dt:
// half types widen to float32, bool works as uint8.
func computeDType(dt ivalue.DType) ivalue.DType {
	switch dt {
	case ivalue.Float16, ivalue.BFloat16:
		return ivalue.Float32
	case ivalue.Bool:
		return ivalue.Uint8
	}
	return dt
}

// binGeneral runs any binary op on any supported dtypes, shapes and
// strides: operands are cast to the compute dtype (into per-node scratch)
// when needed, then iterated with broadcasting.
func binGeneral(op binOp, st *binState, a, b *ivalue.Tensor, sv ivalue.IValue, hasScalar bool, dt, outDT ivalue.DType, alpha ivalue.IValue, out *ivalue.Tensor) error {
	cdt := computeDType(dt)
	if hasScalar {
		if st.sc == nil {
			st.sc = &ivalue.Tensor{}
		}
		st.sc.Resize(cdt, nil)
		if err := WriteScalar(st.sc, 0, sv); err != nil {
			return err
		}
		if a == nil {
			a = st.sc
		} else {
			b = st.sc
		}
	}
	ca, err := castScratch(a, cdt, &st.ca)
	if err != nil {
		return err
	}
	cb, err := castScratch(b, cdt, &st.cb)
	if err != nil {
		return err
	}
	var buf [MaxIterDims]int
	shape, err := BroadcastShapes(buf[:0], ca.Sizes(), cb.Sizes())
	if err != nil {
		return err
	}
	var it Iter
	if err := it.Init(shape, ca, cb, nil); err != nil {
		return err
	}
	targetDT := cdt
	if op >= opEq {
		targetDT = ivalue.Bool
	}
	target := out
	out.Resize(outDT, shape)
	if targetDT != outDT {
		if st.tmp == nil {
			st.tmp = &ivalue.Tensor{}
		}
		target = st.tmp
		target.Resize(targetDT, shape)
	}
	if op >= opEq {
		err = runCmp(&it, op, target.B(), ca, cb)
	} else {
		err = runArith(&it, op, target, ca, cb, alpha)
	}
	if err != nil {
		return err
	}
	if target != out {
		return CastInto(out, target)
	}
	return nil
}

func runArith(it *Iter, op binOp, o, a, b *ivalue.Tensor, alpha ivalue.IValue) error {
	switch o.DType() {
	case ivalue.Float32:
		x, y, z := o.F32(), a.F32(), b.F32()
		for it.Next() {
			binLoopF32(op, x[it.Out:it.Out+it.N], y, it.Off[0], it.Stride[0], z, it.Off[1], it.Stride[1], float32(alpha.AsFloat()))
		}
	case ivalue.Float64:
		x, y, z := o.F64(), a.F64(), b.F64()
		for it.Next() {
			binLoopF(op, x[it.Out:it.Out+it.N], y, it.Off[0], it.Stride[0], z, it.Off[1], it.Stride[1], alpha.AsFloat())
		}
	case ivalue.Int64:
		return runArithI(it, op, o.I64(), a.I64(), b.I64(), alpha.AsInt())
	case ivalue.Int32:
		return runArithI(it, op, o.I32(), a.I32(), b.I32(), int32(alpha.AsInt()))
	case ivalue.Int16:
		return runArithI(it, op, o.I16(), a.I16(), b.I16(), int16(alpha.AsInt()))
	case ivalue.Int8:
		return runArithI(it, op, o.I8(), a.I8(), b.I8(), int8(alpha.AsInt()))
	case ivalue.Uint8:
		return runArithI(it, op, o.U8(), a.U8(), b.U8(), uint8(alpha.AsInt()))
	default:
		return Errorf("elementwise op on %s tensors is not supported", o.DType())
	}
	return nil
}

func runArithI[T ewInt](it *Iter, op binOp, x, y, z []T, alpha T) error {
	for it.Next() {
		if err := binLoopI(op, x[it.Out:it.Out+it.N], y, it.Off[0], it.Stride[0], z, it.Off[1], it.Stride[1], alpha); err != nil {
			return err
		}
	}
	return nil
}

// maxNaN and minNaN propagate NaN from either side, as PyTorch's
// maximum/minimum/clamp do; Go's builtins do the same without a branch.
func maxNaN[T float32 | float64](x, y T) T { return max(x, y) }

func minNaN[T float32 | float64](x, y T) T { return min(x, y) }

// floorDivF is PyTorch's div_floor_floating.
func floorDivF(a, b float64) float64 {
	if b == 0 {
		return a / b
	}
	mod := math.Mod(a, b)
	div := (a - mod) / b
	if mod != 0 && (b < 0) != (mod < 0) {
		div--
	}
	if div == 0 {
		return math.Copysign(0, a/b)
	}
	fd := math.Floor(div)
	if div-fd > 0.5 {
		fd++
	}
	return fd
}

// remF is Python's modulo (the result takes the divisor's sign).
func remF(a, b float64) float64 {
	m := math.Mod(a, b)
	if m != 0 && (b < 0) != (m < 0) {
		m += b
	}
	return m
}

func floorDivI[T ewInt](a, b T) T {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

func remI[T ewInt](a, b T) T {
	m := a % b
	if m != 0 && (m < 0) != (b < 0) {
		m += b
	}
	return m
}

func powF[T float32 | float64](x, y T) T {
	switch y {
	case 2:
		return x * x
	case 1:
		return x
	case 0.5:
		return T(math.Sqrt(float64(x)))
	}
	return T(math.Pow(float64(x), float64(y)))
}

// powI is integer power by squaring; negative exponents give 1/x
// truncated, as PyTorch's powi.
func powI[T ewInt](x, y T) T {
	if y < 0 {
		switch {
		case x == 1:
			return 1
		case x == 0:
			return 0 // PyTorch: undefined; avoid a trap
		case T(0)-1 < 0 && x == T(0)-1:
			if y%2 == 0 {
				return 1
			}
			return x
		}
		return 0
	}
	r := T(1)
	for y > 0 {
		if y&1 == 1 {
			r *= x
		}
		x *= x
		y >>= 1
	}
	return r
}

func init() {
	const none = -1
	registerBinary("aten::add",
		binSpec{schema: "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", op: opAdd, a: 0, b: 1, alpha: 2, mode: none},
		binSpec{schema: "aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", op: opAdd, a: 0, b: 1, bScalar: true, alpha: 2, mode: none})
	registerBinary("aten::sub",
		binSpec{schema: "aten::sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", op: opSub, a: 0, b: 1, alpha: 2, mode: none},
		binSpec{schema: "aten::sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", op: opSub, a: 0, b: 1, bScalar: true, alpha: 2, mode: none})
	// rsub(self, other, alpha) = other - alpha * self.
	registerBinary("aten::rsub",
		binSpec{schema: "aten::rsub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor", op: opSub, a: 1, b: 0, alpha: 2, mode: none},
		binSpec{schema: "aten::rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor", op: opSub, a: 1, b: 0, aScalar: true, alpha: 2, mode: none})
	registerBinary("aten::mul",
		binSpec{schema: "aten::mul.Tensor(Tensor self, Tensor other) -> Tensor", op: opMul, a: 0, b: 1, alpha: none, mode: none},
		binSpec{schema: "aten::mul.Scalar(Tensor self, Scalar other) -> Tensor", op: opMul, a: 0, b: 1, bScalar: true, alpha: none, mode: none})
	registerBinary("aten::div",
		binSpec{schema: "aten::div.Tensor(Tensor self, Tensor other) -> Tensor", op: opDiv, a: 0, b: 1, alpha: none, mode: none, trueDiv: true},
		binSpec{schema: "aten::div.Scalar(Tensor self, Scalar other) -> Tensor", op: opDiv, a: 0, b: 1, bScalar: true, alpha: none, mode: none, trueDiv: true},
		binSpec{schema: "aten::div.Tensor_mode(Tensor self, Tensor other, *, str? rounding_mode) -> Tensor", op: opDiv, a: 0, b: 1, alpha: none, mode: 2, trueDiv: true},
		binSpec{schema: "aten::div.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) -> Tensor", op: opDiv, a: 0, b: 1, bScalar: true, alpha: none, mode: 2, trueDiv: true})
	registerBinary("aten::true_divide",
		binSpec{schema: "aten::true_divide.Tensor(Tensor self, Tensor other) -> Tensor", op: opDiv, a: 0, b: 1, alpha: none, mode: none, trueDiv: true},
		binSpec{schema: "aten::true_divide.Scalar(Tensor self, Scalar other) -> Tensor", op: opDiv, a: 0, b: 1, bScalar: true, alpha: none, mode: none, trueDiv: true})
	registerBinary("aten::floor_divide",
		binSpec{schema: "aten::floor_divide(Tensor self, Tensor other) -> Tensor", op: opFloorDiv, a: 0, b: 1, alpha: none, mode: none},
		binSpec{schema: "aten::floor_divide.Scalar(Tensor self, Scalar other) -> Tensor", op: opFloorDiv, a: 0, b: 1, bScalar: true, alpha: none, mode: none})
	registerBinary("aten::pow",
		binSpec{schema: "aten::pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor", op: opPow, a: 0, b: 1, alpha: none, mode: none},
		binSpec{schema: "aten::pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor", op: opPow, a: 0, b: 1, bScalar: true, alpha: none, mode: none},
		binSpec{schema: "aten::pow.Scalar(Scalar self, Tensor exponent) -> Tensor", op: opPow, a: 0, b: 1, aScalar: true, alpha: none, mode: none})
	registerBinary("aten::remainder",
		binSpec{schema: "aten::remainder.Tensor(Tensor self, Tensor other) -> Tensor", op: opRem, a: 0, b: 1, alpha: none, mode: none},
		binSpec{schema: "aten::remainder.Scalar(Tensor self, Scalar other) -> Tensor", op: opRem, a: 0, b: 1, bScalar: true, alpha: none, mode: none},
		binSpec{schema: "aten::remainder.Scalar_Tensor(Scalar self, Tensor other) -> Tensor", op: opRem, a: 0, b: 1, aScalar: true, alpha: none, mode: none})
	registerBinary("aten::maximum",
		binSpec{schema: "aten::maximum(Tensor self, Tensor other) -> Tensor", op: opMax, a: 0, b: 1, alpha: none, mode: none})
	registerBinary("aten::minimum",
		binSpec{schema: "aten::minimum(Tensor self, Tensor other) -> Tensor", op: opMin, a: 0, b: 1, alpha: none, mode: none})
	registerBinary("aten::max",
		binSpec{schema: "aten::max.other(Tensor self, Tensor other) -> Tensor", op: opMax, a: 0, b: 1, alpha: none, mode: none})
	registerBinary("aten::min",
		binSpec{schema: "aten::min.other(Tensor self, Tensor other) -> Tensor", op: opMin, a: 0, b: 1, alpha: none, mode: none})
	registerBinary("aten::clamp_min",
		binSpec{schema: "aten::clamp_min.Tensor(Tensor self, Tensor min) -> Tensor", op: opMax, a: 0, b: 1, alpha: none, mode: none})
	registerBinary("aten::clamp_max",
		binSpec{schema: "aten::clamp_max.Tensor(Tensor self, Tensor max) -> Tensor", op: opMin, a: 0, b: 1, alpha: none, mode: none})
}

// ---- generated loops: one contiguous and one strided loop per op ----

func binLoopF[T float32 | float64](op binOp, o []T, a []T, ia, sa int, b []T, ib, sb int, alpha T) {
	n := len(o)
	if sa == 1 && sb == 1 {
		a, b := span(a, ia, n), span(b, ib, n)
		switch op {
		case opAdd:
			for i := range o {
				x, y := a[i], b[i]
				o[i] = x + y
			}
		case opAddAlpha:
			for i := range o {
				x, y := a[i], b[i]
				o[i] = x + alpha*y
			}
		case opSub:
			for i := range o {
				x, y := a[i], b[i]
				o[i] = x - y
			}
		case opSubAlpha:
			for i := range o {
				x, y := a[i], b[i]
				o[i] = x - alpha*y
			}
		case opMul:
			for i := range o {
				x, y := a[i], b[i]
				o[i] = x * y
			}
		case opDiv:
			for i := range o {
				x, y := a[i], b[i]
				o[i] = x / y
			}
		case opFloorDiv:
			for i := range o {
				x, y := a[i], b[i]
				o[i] = T(floorDivF(float64(x), float64(y)))
			}
		case opTruncDiv:
			for i := range o {
				x, y := a[i], b[i]
				o[i] = T(math.Trunc(float64(x / y)))
			}
		case opPow:
			for i := range o {
				x, y := a[i], b[i]
				o[i] = powF(x, y)
			}
		case opMax:
			for i := range o {
				x, y := a[i], b[i]
				o[i] = maxNaN(x, y)
			}
		case opMin:
			for i := range o {
				x, y := a[i], b[i]
				o[i] = minNaN(x, y)
			}
		case opRem:
			for i := range o {
				x, y := a[i], b[i]
				o[i] = T(remF(float64(x), float64(y)))
			}
		default:
			return
		}
		return
	}
	if sa == 1 && sb == 0 && (op == opAdd || op == opSub || op == opMul || op == opDiv) {
		// A tensor with a scalar, or a row with one element broadcast
		// (a squeeze-and-excite block's per-channel scale): the same
		// sums as below, without the index arithmetic.
		a, y := span(a, ia, len(o)), b[ib]
		switch op {
		case opAdd:
			for i, x := range a {
				o[i] = x + y
			}
		case opSub:
			for i, x := range a {
				o[i] = x - y
			}
		case opMul:
			for i, x := range a {
				o[i] = x * y
			}
		case opDiv:
			for i, x := range a {
				o[i] = x / y
			}
		}
		return
	}
	switch op {
	case opAdd:
		for i := range o {
			x, y := a[ia+i*sa], b[ib+i*sb]
			o[i] = x + y
		}
	case opAddAlpha:
		for i := range o {
			x, y := a[ia+i*sa], b[ib+i*sb]
			o[i] = x + alpha*y
		}
	case opSub:
		for i := range o {
			x, y := a[ia+i*sa], b[ib+i*sb]
			o[i] = x - y
		}
	case opSubAlpha:
		for i := range o {
			x, y := a[ia+i*sa], b[ib+i*sb]
			o[i] = x - alpha*y
		}
	case opMul:
		for i := range o {
			x, y := a[ia+i*sa], b[ib+i*sb]
			o[i] = x * y
		}
	case opDiv:
		for i := range o {
			x, y := a[ia+i*sa], b[ib+i*sb]
			o[i] = x / y
		}
	case opFloorDiv:
		for i := range o {
			x, y := a[ia+i*sa], b[ib+i*sb]
			o[i] = T(floorDivF(float64(x), float64(y)))
		}
	case opTruncDiv:
		for i := range o {
			x, y := a[ia+i*sa], b[ib+i*sb]
			o[i] = T(math.Trunc(float64(x / y)))
		}
	case opPow:
		for i := range o {
			x, y := a[ia+i*sa], b[ib+i*sb]
			o[i] = powF(x, y)
		}
	case opMax:
		for i := range o {
			x, y := a[ia+i*sa], b[ib+i*sb]
			o[i] = maxNaN(x, y)
		}
	case opMin:
		for i := range o {
			x, y := a[ia+i*sa], b[ib+i*sb]
			o[i] = minNaN(x, y)
		}
	case opRem:
		for i := range o {
			x, y := a[ia+i*sa], b[ib+i*sb]
			o[i] = T(remF(float64(x), float64(y)))
		}
	default:
		return
	}
}

func binLoopI[T ewInt](op binOp, o []T, a []T, ia, sa int, b []T, ib, sb int, alpha T) error {
	n := len(o)
	if sa == 1 && sb == 1 {
		a, b := span(a, ia, n), span(b, ib, n)
		switch op {
		case opAdd:
			for i := range o {
				x, y := a[i], b[i]
				o[i] = x + y
			}
		case opAddAlpha:
			for i := range o {
				x, y := a[i], b[i]
				o[i] = x + alpha*y
			}
		case opSub:
			for i := range o {
				x, y := a[i], b[i]
				o[i] = x - y
			}
		case opSubAlpha:
			for i := range o {
				x, y := a[i], b[i]
				o[i] = x - alpha*y
			}
		case opMul:
			for i := range o {
				x, y := a[i], b[i]
				o[i] = x * y
			}
		case opFloorDiv:
			for i := range o {
				x, y := a[i], b[i]
				if y == 0 {
					return errIntDivZero
				}
				o[i] = floorDivI(x, y)
			}
		case opTruncDiv:
			for i := range o {
				x, y := a[i], b[i]
				if y == 0 {
					return errIntDivZero
				}
				o[i] = x / y
			}
		case opPow:
			for i := range o {
				x, y := a[i], b[i]
				o[i] = powI(x, y)
			}
		case opMax:
			for i := range o {
				x, y := a[i], b[i]
				o[i] = max(x, y)
			}
		case opMin:
			for i := range o {
				x, y := a[i], b[i]
				o[i] = min(x, y)
			}
		case opRem:
			for i := range o {
				x, y := a[i], b[i]
				if y == 0 {
					return errIntDivZero
				}
				o[i] = remI(x, y)
			}
		default:
			return errBadOp(op)
		}
		return nil
	}
	switch op {
	case opAdd:
		for i := range o {
			x, y := a[ia+i*sa], b[ib+i*sb]
			o[i] = x + y
		}
	case opAddAlpha:
		for i := range o {
			x, y := a[ia+i*sa], b[ib+i*sb]
			o[i] = x + alpha*y
		}
	case opSub:
		for i := range o {
			x, y := a[ia+i*sa], b[ib+i*sb]
			o[i] = x - y
		}
	case opSubAlpha:
		for i := range o {
			x, y := a[ia+i*sa], b[ib+i*sb]
			o[i] = x - alpha*y
		}
	case opMul:
		for i := range o {
			x, y := a[ia+i*sa], b[ib+i*sb]
			o[i] = x * y
		}
	case opFloorDiv:
		for i := range o {
			x, y := a[ia+i*sa], b[ib+i*sb]
			if y == 0 {
				return errIntDivZero
			}
			o[i] = floorDivI(x, y)
		}
	case opTruncDiv:
		for i := range o {
			x, y := a[ia+i*sa], b[ib+i*sb]
			if y == 0 {
				return errIntDivZero
			}
			o[i] = x / y
		}
	case opPow:
		for i := range o {
			x, y := a[ia+i*sa], b[ib+i*sb]
			o[i] = powI(x, y)
		}
	case opMax:
		for i := range o {
			x, y := a[ia+i*sa], b[ib+i*sb]
			o[i] = max(x, y)
		}
	case opMin:
		for i := range o {
			x, y := a[ia+i*sa], b[ib+i*sb]
			o[i] = min(x, y)
		}
	case opRem:
		for i := range o {
			x, y := a[ia+i*sa], b[ib+i*sb]
			if y == 0 {
				return errIntDivZero
			}
			o[i] = remI(x, y)
		}
	default:
		return errBadOp(op)
	}
	return nil
}

// [Channel rows]
//
// A squeeze-and-excitation block scales each channel of a feature map
// by one value (x * s, s of sizes [N, C, 1, 1]) and its squeeze is a
// mean over each channel's plane (adaptive_avg_pool2d to 1x1). Taken
// as broadcasts and planes, both ran a row at a time (a call, an
// iterator step and a scalar tail per row): efficientnet_b0's 7x7 maps
// of 1152 channels took 21 us for each, 0.37 ns a float. Both are one
// loop over rows instead, the row's last inner%16 floats through an
// AVX-512 mask (scaleRowsAVX512, meanRowsAVX512). The products are
// the broadcast's, bit for bit; the mean sums in another order than
// sumPlane (four vectors of partial sums), a float32 sum as PyTorch's.
// A batch norm no convolution absorbed (densenet's 62, before each
// layer's 1x1 convolution) is the same shape, a scale and shift a
// channel (affineRowsAVX512, scaleShift's and scaleShiftClamp's bits):
// densenet121's 1.92 -> 1.06 ms a run.

// channelRows reports whether s broadcasts over x as one value a row:
// the same rank, s's sizes x's up to some dimension and 1 after it,
// both float32 and contiguous. rows is s's elements, inner x's per row.
func channelRows(x, s *ivalue.Tensor) (rows, inner int, ok bool) {
	if x.DType() != ivalue.Float32 || s.DType() != ivalue.Float32 || x.Dim() != s.Dim() || x.Dim() == 0 ||
		!x.IsContiguous() || !s.IsContiguous() || x.Numel() == 0 {
		return 0, 0, false
	}
	xs, ss := x.Sizes(), s.Sizes()
	k := 0
	for k < len(xs) && xs[k] == ss[k] {
		k++
	}
	for _, d := range ss[k:] {
		if d != 1 {
			return 0, 0, false
		}
	}
	rows = s.Numel()
	return rows, x.Numel() / rows, true
}

// binScaleRows computes a*b into out where one operand scales the
// other's rows (see [Channel rows]), split across p's team by rows when
// large, and reports whether it did.
func binScaleRows(p *ProcessedNode, a, b, out *ivalue.Tensor) bool {
	x, s := a, b
	rows, inner, ok := channelRows(x, s)
	if !ok {
		x, s = b, a // x*s is s*x, bit for bit
		if rows, inner, ok = channelRows(x, s); !ok {
			return false
		}
	}
	sd := s.F32()[s.Offset() : s.Offset()+rows]
	xd := x.F32()[x.Offset() : x.Offset()+rows*inner]
	out.Resize(ivalue.Float32, x.Sizes())
	o := out.F32Contig()
	// An output over the scales would overwrite them before their rows
	// are done; one over x must start where x does (each float read
	// before it is written). Else the general path.
	olo, ohi := f32Addr(o), f32Addr(o)+uintptr(len(o))*4
	if so := f32Addr(sd); rangesOverlap(so, so+uintptr(rows)*4, olo, ohi) {
		return false
	}
	if xo := f32Addr(xd); xo != olo && rangesOverlap(xo, xo+uintptr(len(xd))*4, olo, ohi) {
		return false
	}
	if p.Scratch.Team() == nil || len(o) < 2*splitMinWork {
		scaleRowsAVX512(&o[0], &xd[0], &sd[0], rows, inner)
		return true
	}
	st := binStateOf(p)
	sp := &st.rowSplit
	if sp.fn == nil {
		sp.fn = func(lo, hi int) {
			scaleRowsAVX512(&sp.o[lo*sp.inner], &sp.x[lo*sp.inner], &sp.s[lo], hi-lo, sp.inner)
		}
	}
	sp.o, sp.x, sp.s, sp.inner = o, xd, sd, inner
	sp.run(p.Scratch, rows, 1, len(o), sp.fn)
	sp.o, sp.x, sp.s = nil, nil, nil
	return true
}

// rowSplitState is binScaleRows's split across a team.
type rowSplitState struct {
	splitter
	o, x, s []float32
	inner   int
	fn      func(lo, hi int)
}
