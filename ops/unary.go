package ops

import (
	"github.com/gosr/gosr/ops/gemm"
	"math"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// Unary elementwise kernels (activations, math functions, rounding,
// clamp with Scalar bounds), logical_not and bitwise_not.

type unOp uint8

const (
	unNeg unOp = iota
	unAbs
	unExp
	unLog
	unSqrt
	unRsqrt
	unRelu
	unLeakyRelu
	unGelu
	unGeluTanh
	unSigmoid
	unTanh
	unHardtanh
	unSilu
	unReciprocal
	unSign
	unFloor
	unCeil
	unRound
	unErf
	unClamp
	unClampMin
	unClampMax
	unSin
	unCos
	unLog1p
	unExpm1
	unLog2
	unLog10
	unTrunc
	unHardsigmoid
	unHardswish
	unFrac
	unSquare
	unSoftplus
)

func errBadUnOp(op unOp) error { return Errorf("unary op %d is not supported for this dtype", op) }

// unKernel runs one unary op; params come from inputs p0Idx/p1Idx.
type unKernel struct {
	op           unOp
	floatOnly    bool // integer and bool inputs give float32 (exp, sigmoid, ...)
	p0Idx, p1Idx int  // inputs holding the op's Scalar parameters, -1 none
	d0, d1       float64
	clamp        bool // clamp(Tensor, Scalar? min, Scalar? max): op chosen per run
	geluIdx      int  // approximate argument when not constant, -1 none
}

type unState struct{ ca, tmp *ivalue.Tensor }

func (k *unKernel) params(p *ProcessedNode) (unOp, float64, float64, ivalue.DType, error) {
	op, p0, p1 := k.op, k.d0, k.d1
	wrapped := ivalue.Undefined
	if k.clamp {
		lo, hi := !p.IsNone(1), !p.IsNone(2)
		switch {
		case lo && hi:
			op = unClamp
		case lo:
			op = unClampMin
		case hi:
			op = unClampMax
		default:
			return 0, 0, 0, 0, Errorf("torch.clamp: at least one of 'min' or 'max' must not be None")
		}
		if lo {
			p0 = p.Float(1)
			wrapped = ScalarDType(*p.Input(1))
		}
		if hi {
			p1 = p.Float(2)
			wrapped = PromoteTypes(wrapped, ScalarDType(*p.Input(2)))
		}
		return op, p0, p1, wrapped, nil
	}
	if k.p0Idx >= 0 {
		p0 = p.Float(k.p0Idx)
	}
	if k.p1Idx >= 0 {
		p1 = p.Float(k.p1Idx)
	}
	if k.geluIdx >= 0 {
		switch s := p.Input(k.geluIdx).Str(); s {
		case "none":
			op = unGelu
		case "tanh":
			op = unGeluTanh
		default:
			return 0, 0, 0, 0, Errorf("gelu: approximate must be 'none' or 'tanh', got %q", s)
		}
	}
	return op, p0, p1, wrapped, nil
}

func (k *unKernel) run(p *ProcessedNode) error {
	a := p.Tensor(0)
	if a == nil {
		return Errorf("expected a tensor as input 0, got %s", p.Input(0).Kind())
	}
	op, p0, p1, wrapped, err := k.params(p)
	if err != nil {
		return err
	}
	out := p.OutTensor(0)
	if a.DType() == ivalue.Float32 && a.IsContiguous() {
		out.Resize(ivalue.Float32, a.Sizes())
		o := out.F32Contig()
		if ad := a.F32Contig(); unFast32(op, o, ad) || clampFast32(op, o, ad, p0, p1) {
			return nil
		}
		return unLoopF(op, o, a.F32(), a.Offset(), 1, p0, p1)
	}
	if a.DType() == ivalue.Float32 && unFast32(op, nil, nil) {
		// A strided float32 input: gathered into the output first, then
		// the single-precision math in place (the general path computes
		// erf and exp in float64, several times slower).
		out.Resize(ivalue.Float32, a.Sizes())
		copyStrided(out, a)
		o := out.F32Contig()
		unFast32(op, o, o)
		return nil
	}
	dt := a.DType()
	if k.floatOnly && !dt.IsFloat() {
		dt = ivalue.Float32
	}
	if k.clamp {
		dt = ResultType(a, nil, nil, wrapped)
	}
	if dt == ivalue.Bool {
		return Errorf("unary op %d is not supported on bool tensors", op)
	}
	return unGeneral(p, out, a, op, p0, p1, dt)
}

// unGeneral runs op on any dtype, shape and strides: a is cast to the
// compute dtype of result dtype dt (into per-node scratch) when needed.
func unGeneral(p *ProcessedNode, out, a *ivalue.Tensor, op unOp, p0, p1 float64, dt ivalue.DType) error {
	cdt := computeDType(dt)
	st, _ := p.State.(*unState)
	if st == nil {
		st = &unState{}
		p.State = st
	}
	ca, err := castScratch(a, cdt, &st.ca)
	if err != nil {
		return err
	}
	out.Resize(dt, a.Sizes())
	target := out
	if cdt != dt {
		if st.tmp == nil {
			st.tmp = &ivalue.Tensor{}
		}
		target = st.tmp
		target.Resize(cdt, a.Sizes())
	}
	var it Iter
	if err := it.Init(a.Sizes(), ca, nil, nil); err != nil {
		return err
	}
	switch cdt {
	case ivalue.Float32:
		err = unRunF(&it, op, target.F32(), ca.F32(), p0, p1)
	case ivalue.Float64:
		err = unRunF(&it, op, target.F64(), ca.F64(), p0, p1)
	case ivalue.Int64:
		err = unRunI(&it, op, target.I64(), ca.I64(), p0, p1)
	case ivalue.Int32:
		err = unRunI(&it, op, target.I32(), ca.I32(), p0, p1)
	case ivalue.Int16:
		err = unRunI(&it, op, target.I16(), ca.I16(), p0, p1)
	case ivalue.Int8:
		err = unRunI(&it, op, target.I8(), ca.I8(), p0, p1)
	case ivalue.Uint8:
		err = unRunI(&it, op, target.U8(), ca.U8(), p0, p1)
	default:
		err = Errorf("unary op on %s tensors is not supported", dt)
	}
	if err != nil {
		return err
	}
	if target != out {
		return CastInto(out, target)
	}
	return nil
}

func unRunF[T float32 | float64](it *Iter, op unOp, o, a []T, p0, p1 float64) error {
	for it.Next() {
		if err := unLoopF(op, o[it.Out:it.Out+it.N], a, it.Off[0], it.Stride[0], p0, p1); err != nil {
			return err
		}
	}
	return nil
}

func unRunI[T ewInt](it *Iter, op unOp, o, a []T, p0, p1 float64) error {
	for it.Next() {
		if err := unLoopI(op, o[it.Out:it.Out+it.N], a, it.Off[0], it.Stride[0], p0, p1); err != nil {
			return err
		}
	}
	return nil
}

func absF[T float32 | float64](x T) T {
	return T(math.Abs(float64(x))) // -0 gives +0, as PyTorch
}

func absI[T ewInt](x T) T {
	if x < 0 {
		return -x
	}
	return x
}

// reluF keeps NaN (Go's max propagates it, as PyTorch's relu does) and
// has no branch to mispredict on data of mixed sign.
func reluF[T float32 | float64](x T) T { return max(x, 0) }

// leakyF and hardtanhF are branch-free (data of mixed sign would make
// branches mispredict half the time); NaN passes through.
func leakyF[T float32 | float64](x, slope T) T { return max(x, 0) + slope*min(x, 0) }

func hardtanhF[T float32 | float64](x, lo, hi T) T { return min(max(x, lo), hi) }

// clampF is min(max(x, lo), hi): NaN propagates, hi wins when lo > hi.
func clampF[T float32 | float64](x, lo, hi T) T { return minNaN(maxNaN(x, lo), hi) }

func signF[T float32 | float64](x T) T {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return x * 0 // 0 stays 0, NaN stays NaN
}

func signI[T ewInt](x T) T {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return T(0) - 1
	}
	return 0
}

func sigmoidF(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

func siluF(x float64) float64 { return x / (1 + math.Exp(-x)) }

// unFast32 runs the ops whose float64 math (exp, erf) dominated float32
// models with single-precision versions; it reports false for the rest.
func unFast32(op unOp, o, a []float32) bool {
	switch op {
	case unGelu:
		geluVec(o, a)
	case unSigmoid:
		rnnSigmoidVec(o, a)
	case unSilu:
		siluVec(o, a)
	case unHardswish, unHardsigmoid:
		hardVec(op == unHardswish, o, a)
	case unExp:
		for i, x := range a {
			o[i] = expf(x)
		}
	default:
		return false
	}
	return true
}

// hardVec sets o[i] to hardswish(a[i]) (swish) or hardsigmoid(a[i]),
// bit for bit as hardsigmoidF: in one AVX-512 pass (hardAVX512, 2.3x
// hardAVX2's speed in BenchmarkHardswish) or AVX2 pass where there is
// one, else with the clamp of x+3 to [0, 6] through gemm.Clamp32
// (vectorised, NaN passing), 256 elements at a time in a buffer on the
// stack; Go's min and max branch on NaN and signed zeros, which made
// hardswish an eighth of mobilenet_v3's time. o may be a.
func hardVec(swish bool, o, a []float32) {
	o = o[:len(a)]
	sw := 0
	if swish {
		sw = 1
	}
	if n16 := len(a) &^ 15; useAVX512 && n16 > 0 {
		hardAVX512(&o[0], &a[0], n16, sw)
		o, a = o[n16:], a[n16:]
	}
	if n8 := len(a) &^ 7; useAVX2 && n8 > 0 {
		hardAVX2(&o[0], &a[0], n8, sw)
		o, a = o[n8:], a[n8:]
	}
	var t [256]float32
	for i := 0; i < len(a); i += len(t) {
		x := a[i:min(i+len(t), len(a))]
		c := t[:len(x)]
		for k, v := range x {
			c[k] = v + 3
		}
		gemm.Clamp32(c, c, 0, 6)
		y := o[i : i+len(x)]
		if swish {
			for k, v := range x {
				y[k] = v * (c[k] / 6)
			}
			continue
		}
		for k := range x {
			y[k] = c[k] / 6
		}
	}
}

func geluF(x float64) float64 { return 0.5 * x * (1 + math.Erf(x*math.Sqrt2/2)) }

func geluTanhF(x float64) float64 {
	const k = 0.7978845608028654 // sqrt(2/pi)
	return 0.5 * x * (1 + math.Tanh(k*(x+0.044715*x*x*x)))
}

func hardsigmoidF[T float32 | float64](x T) T {
	return min(max(x+3, 0), 6) / 6
}

func softplusF(x, beta, threshold float64) float64 {
	if x*beta > threshold {
		return x
	}
	return math.Log1p(math.Exp(x*beta)) / beta
}

func registerUnary(name string, op unOp, floatOnly bool) {
	schema := "aten::" + name + "(Tensor self) -> Tensor"
	RegisterOut("aten::"+name, func(n *graph.Node) Kernel {
		if !n.Matches(schema) {
			return nil
		}
		return (&unKernel{op: op, floatOnly: floatOnly, p0Idx: -1, p1Idx: -1, geluIdx: -1}).run
	})
}

func init() {
	for _, u := range []struct {
		name      string
		op        unOp
		floatOnly bool
	}{
		{"neg", unNeg, false}, {"abs", unAbs, false}, {"exp", unExp, true}, {"log", unLog, true},
		{"sqrt", unSqrt, true}, {"rsqrt", unRsqrt, true}, {"relu", unRelu, false}, {"sigmoid", unSigmoid, true},
		{"tanh", unTanh, true}, {"silu", unSilu, true}, {"reciprocal", unReciprocal, true}, {"sign", unSign, false},
		{"floor", unFloor, false}, {"ceil", unCeil, false}, {"round", unRound, false}, {"erf", unErf, true},
		{"sin", unSin, true}, {"cos", unCos, true}, {"log1p", unLog1p, true}, {"expm1", unExpm1, true},
		{"log2", unLog2, true}, {"log10", unLog10, true}, {"trunc", unTrunc, false}, {"hardsigmoid", unHardsigmoid, true},
		{"hardswish", unHardswish, true}, {"frac", unFrac, false}, {"square", unSquare, false},
	} {
		registerUnary(u.name, u.op, u.floatOnly)
	}
	RegisterOut("aten::leaky_relu", func(n *graph.Node) Kernel {
		if n.Matches("aten::leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor") {
			return (&unKernel{op: unLeakyRelu, floatOnly: true, p0Idx: 1, p1Idx: -1, geluIdx: -1}).run
		}
		return nil
	})
	RegisterOut("aten::hardtanh", func(n *graph.Node) Kernel {
		if n.Matches("aten::hardtanh(Tensor self, Scalar min_val=-1, Scalar max_val=1) -> Tensor") {
			return (&unKernel{op: unHardtanh, p0Idx: 1, p1Idx: 2, geluIdx: -1}).run
		}
		return nil
	})
	RegisterOut("aten::relu6", func(n *graph.Node) Kernel {
		if n.Matches("aten::relu6(Tensor self) -> Tensor") {
			return (&unKernel{op: unHardtanh, p0Idx: -1, p1Idx: -1, d0: 0, d1: 6, geluIdx: -1}).run
		}
		return nil
	})
	RegisterOut("aten::softplus", func(n *graph.Node) Kernel {
		if n.Matches("aten::softplus(Tensor self, Scalar beta=1, Scalar threshold=20) -> Tensor") {
			return (&unKernel{op: unSoftplus, floatOnly: true, p0Idx: 1, p1Idx: 2, geluIdx: -1}).run
		}
		return nil
	})
	RegisterOut("aten::gelu", func(n *graph.Node) Kernel {
		if !n.Matches(`aten::gelu(Tensor self, *, str approximate="none") -> Tensor`) {
			return nil
		}
		k := &unKernel{op: unGelu, floatOnly: true, p0Idx: -1, p1Idx: -1, geluIdx: -1}
		if v, ok := graph.ConstantValue(n.Inputs[1]); ok {
			switch v.Str() {
			case "none":
			case "tanh":
				k.op = unGeluTanh
			default:
				return nil
			}
		} else {
			k.geluIdx = 1
		}
		return k.run
	})
	RegisterOut("aten::clamp", func(n *graph.Node) Kernel {
		if n.Matches("aten::clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor") {
			return (&unKernel{clamp: true, p0Idx: -1, p1Idx: -1, geluIdx: -1}).run
		}
		return nil
	})
	RegisterOut("aten::clamp_min", func(n *graph.Node) Kernel {
		if n.Matches("aten::clamp_min(Tensor self, Scalar min) -> Tensor") {
			return (&unKernel{clamp: true, p0Idx: -1, p1Idx: -1, geluIdx: -1}).clampOne(1)
		}
		return nil
	})
	RegisterOut("aten::clamp_max", func(n *graph.Node) Kernel {
		if n.Matches("aten::clamp_max(Tensor self, Scalar max) -> Tensor") {
			return (&unKernel{clamp: true, p0Idx: -1, p1Idx: -1, geluIdx: -1}).clampOne(2)
		}
		return nil
	})
	RegisterOut("aten::logical_not", func(n *graph.Node) Kernel {
		if n.Matches("aten::logical_not(Tensor self) -> Tensor") {
			return notKernel(true)
		}
		return nil
	})
	RegisterOut("aten::bitwise_not", func(n *graph.Node) Kernel {
		if n.Matches("aten::bitwise_not(Tensor self) -> Tensor") {
			return notKernel(false)
		}
		return nil
	})
}

// clampOne adapts clamp_min/clamp_max (two inputs) to the clamp kernel
// by viewing the node as clamp(self, min, None) or clamp(self, None, max).
func (k *unKernel) clampOne(pos int) Kernel {
	return func(p *ProcessedNode) error {
		a := p.Tensor(0)
		if a == nil {
			return Errorf("expected a tensor as input 0")
		}
		v := *p.Input(1)
		if !v.IsNumber() {
			return Errorf("expected a number as the bound, got %s", v.Kind())
		}
		op, p0, p1 := unClampMin, v.AsFloat(), 0.0
		if pos == 2 {
			op, p0, p1 = unClampMax, 0, v.AsFloat()
		}
		out := p.OutTensor(0)
		if a.DType() == ivalue.Float32 && a.IsContiguous() {
			out.Resize(ivalue.Float32, a.Sizes())
			if o := out.F32Contig(); clampFast32(op, o, a.F32Contig(), p0, p1) {
				return nil
			}
			return unLoopF(op, out.F32Contig(), a.F32(), a.Offset(), 1, p0, p1)
		}
		dt := ResultType(a, nil, nil, ScalarDType(v))
		if dt == ivalue.Bool {
			return Errorf("clamp is not supported on bool tensors")
		}
		return unGeneral(p, out, a, op, p0, p1, dt)
	}
}

// notKernel: logical_not (any dtype -> bool) or bitwise_not (bool -> bool,
// integers -> ~x).
func notKernel(logical bool) Kernel {
	return func(p *ProcessedNode) error {
		a := p.Tensor(0)
		if a == nil {
			return Errorf("expected a tensor as input 0")
		}
		st, _ := p.State.(*unState)
		if st == nil {
			st = &unState{}
			p.State = st
		}
		out := p.OutTensor(0)
		if !logical && a.DType() != ivalue.Bool {
			switch a.DType() {
			case ivalue.Int64:
				out.Resize(ivalue.Int64, a.Sizes())
				o := out.I64Contig()
				if err := castToNum(o, a); err != nil {
					return err
				}
				for i := range o {
					o[i] = ^o[i]
				}
				return nil
			}
			return Errorf("bitwise_not is only supported for bool and int64 tensors, got %s", a.DType())
		}
		ca, err := castScratch(a, ivalue.Bool, &st.ca)
		if err != nil {
			return err
		}
		out.Resize(ivalue.Bool, a.Sizes())
		o, x := out.BContig(), ca.B()
		var it Iter
		if err := it.Init(a.Sizes(), ca, nil, nil); err != nil {
			return err
		}
		for it.Next() {
			for i := 0; i < it.N; i++ {
				o[it.Out+i] = !x[it.Off[0]+i*it.Stride[0]]
			}
		}
		return nil
	}
}

// ---- generated loops ----

func unLoopF[T float32 | float64](op unOp, o []T, a []T, ia, sa int, p0, p1 float64) error {
	n := len(o)
	if sa == 1 {
		a := span(a, ia, n)
		switch op {
		case unNeg:
			for i, x := range a {
				o[i] = -x
			}
		case unAbs:
			for i, x := range a {
				o[i] = absF(x)
			}
		case unExp:
			for i, x := range a {
				o[i] = T(math.Exp(float64(x)))
			}
		case unLog:
			for i, x := range a {
				o[i] = T(math.Log(float64(x)))
			}
		case unSqrt:
			for i, x := range a {
				o[i] = T(math.Sqrt(float64(x)))
			}
		case unRsqrt:
			for i, x := range a {
				o[i] = T(1 / math.Sqrt(float64(x)))
			}
		case unRelu:
			for i, x := range a {
				o[i] = reluF(x)
			}
		case unLeakyRelu:
			for i, x := range a {
				o[i] = leakyF(x, T(p0))
			}
		case unGelu:
			for i, x := range a {
				o[i] = T(geluF(float64(x)))
			}
		case unGeluTanh:
			for i, x := range a {
				o[i] = T(geluTanhF(float64(x)))
			}
		case unSigmoid:
			for i, x := range a {
				o[i] = T(sigmoidF(float64(x)))
			}
		case unTanh:
			for i, x := range a {
				o[i] = T(math.Tanh(float64(x)))
			}
		case unHardtanh:
			for i, x := range a {
				o[i] = hardtanhF(x, T(p0), T(p1))
			}
		case unSilu:
			for i, x := range a {
				o[i] = T(siluF(float64(x)))
			}
		case unReciprocal:
			for i, x := range a {
				o[i] = 1 / x
			}
		case unSign:
			for i, x := range a {
				o[i] = signF(x)
			}
		case unFloor:
			for i, x := range a {
				o[i] = T(math.Floor(float64(x)))
			}
		case unCeil:
			for i, x := range a {
				o[i] = T(math.Ceil(float64(x)))
			}
		case unRound:
			for i, x := range a {
				o[i] = T(math.RoundToEven(float64(x)))
			}
		case unErf:
			for i, x := range a {
				o[i] = T(math.Erf(float64(x)))
			}
		case unClamp:
			for i, x := range a {
				o[i] = clampF(x, T(p0), T(p1))
			}
		case unClampMin:
			for i, x := range a {
				o[i] = maxNaN(x, T(p0))
			}
		case unClampMax:
			for i, x := range a {
				o[i] = minNaN(x, T(p1))
			}
		case unSin:
			for i, x := range a {
				o[i] = T(math.Sin(float64(x)))
			}
		case unCos:
			for i, x := range a {
				o[i] = T(math.Cos(float64(x)))
			}
		case unLog1p:
			for i, x := range a {
				o[i] = T(math.Log1p(float64(x)))
			}
		case unExpm1:
			for i, x := range a {
				o[i] = T(math.Expm1(float64(x)))
			}
		case unLog2:
			for i, x := range a {
				o[i] = T(math.Log2(float64(x)))
			}
		case unLog10:
			for i, x := range a {
				o[i] = T(math.Log10(float64(x)))
			}
		case unTrunc:
			for i, x := range a {
				o[i] = T(math.Trunc(float64(x)))
			}
		case unHardsigmoid:
			for i, x := range a {
				o[i] = hardsigmoidF(x)
			}
		case unHardswish:
			for i, x := range a {
				o[i] = x * hardsigmoidF(x)
			}
		case unFrac:
			for i, x := range a {
				o[i] = x - T(math.Trunc(float64(x)))
			}
		case unSquare:
			for i, x := range a {
				o[i] = x * x
			}
		case unSoftplus:
			for i, x := range a {
				o[i] = T(softplusF(float64(x), p0, p1))
			}
		default:
			return errBadUnOp(op)
		}
		return nil
	}
	switch op {
	case unNeg:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = -x
		}
	case unAbs:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = absF(x)
		}
	case unExp:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = T(math.Exp(float64(x)))
		}
	case unLog:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = T(math.Log(float64(x)))
		}
	case unSqrt:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = T(math.Sqrt(float64(x)))
		}
	case unRsqrt:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = T(1 / math.Sqrt(float64(x)))
		}
	case unRelu:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = reluF(x)
		}
	case unLeakyRelu:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = leakyF(x, T(p0))
		}
	case unGelu:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = T(geluF(float64(x)))
		}
	case unGeluTanh:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = T(geluTanhF(float64(x)))
		}
	case unSigmoid:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = T(sigmoidF(float64(x)))
		}
	case unTanh:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = T(math.Tanh(float64(x)))
		}
	case unHardtanh:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = hardtanhF(x, T(p0), T(p1))
		}
	case unSilu:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = T(siluF(float64(x)))
		}
	case unReciprocal:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = 1 / x
		}
	case unSign:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = signF(x)
		}
	case unFloor:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = T(math.Floor(float64(x)))
		}
	case unCeil:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = T(math.Ceil(float64(x)))
		}
	case unRound:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = T(math.RoundToEven(float64(x)))
		}
	case unErf:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = T(math.Erf(float64(x)))
		}
	case unClamp:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = clampF(x, T(p0), T(p1))
		}
	case unClampMin:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = maxNaN(x, T(p0))
		}
	case unClampMax:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = minNaN(x, T(p1))
		}
	case unSin:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = T(math.Sin(float64(x)))
		}
	case unCos:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = T(math.Cos(float64(x)))
		}
	case unLog1p:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = T(math.Log1p(float64(x)))
		}
	case unExpm1:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = T(math.Expm1(float64(x)))
		}
	case unLog2:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = T(math.Log2(float64(x)))
		}
	case unLog10:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = T(math.Log10(float64(x)))
		}
	case unTrunc:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = T(math.Trunc(float64(x)))
		}
	case unHardsigmoid:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = hardsigmoidF(x)
		}
	case unHardswish:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = x * hardsigmoidF(x)
		}
	case unFrac:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = x - T(math.Trunc(float64(x)))
		}
	case unSquare:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = x * x
		}
	case unSoftplus:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = T(softplusF(float64(x), p0, p1))
		}
	default:
		return errBadUnOp(op)
	}
	return nil
}

func unLoopI[T ewInt](op unOp, o []T, a []T, ia, sa int, p0, p1 float64) error {
	n := len(o)
	if sa == 1 {
		a := span(a, ia, n)
		switch op {
		case unNeg:
			for i, x := range a {
				o[i] = -x
			}
		case unAbs:
			for i, x := range a {
				o[i] = absI(x)
			}
		case unRelu:
			for i, x := range a {
				o[i] = max(x, 0)
			}
		case unSign:
			for i, x := range a {
				o[i] = signI(x)
			}
		case unFloor:
			for i, x := range a {
				o[i] = x
			}
		case unCeil:
			for i, x := range a {
				o[i] = x
			}
		case unRound:
			for i, x := range a {
				o[i] = x
			}
		case unTrunc:
			for i, x := range a {
				o[i] = x
			}
		case unClamp:
			for i, x := range a {
				o[i] = min(max(x, T(p0)), T(p1))
			}
		case unClampMin:
			for i, x := range a {
				o[i] = max(x, T(p0))
			}
		case unClampMax:
			for i, x := range a {
				o[i] = min(x, T(p1))
			}
		case unHardtanh:
			for i, x := range a {
				o[i] = min(max(x, T(p0)), T(p1))
			}
		case unSquare:
			for i, x := range a {
				o[i] = x * x
			}
		case unFrac:
			for i, x := range a {
				o[i] = x - x
			}
		default:
			return errBadUnOp(op)
		}
		return nil
	}
	switch op {
	case unNeg:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = -x
		}
	case unAbs:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = absI(x)
		}
	case unRelu:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = max(x, 0)
		}
	case unSign:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = signI(x)
		}
	case unFloor:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = x
		}
	case unCeil:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = x
		}
	case unRound:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = x
		}
	case unTrunc:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = x
		}
	case unClamp:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = min(max(x, T(p0)), T(p1))
		}
	case unClampMin:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = max(x, T(p0))
		}
	case unClampMax:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = min(x, T(p1))
		}
	case unHardtanh:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = min(max(x, T(p0)), T(p1))
		}
	case unSquare:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = x * x
		}
	case unFrac:
		for i := range o {
			x := a[ia+i*sa]
			o[i] = x - x
		}
	default:
		return errBadUnOp(op)
	}
	return nil
}
