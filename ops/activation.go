package ops

import (
	"math"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// Activations of torch.nn that unary.go does not have: elu, selu, celu,
// hardshrink, softshrink, log_sigmoid, mish, threshold, rrelu (eval),
// prelu (per-channel weight) and glu (halves along a dim). Formulas as
// ATen's CPU kernels (aten/src/ATen/native/cpu/Activation.cpp).
// Floating dtypes only (threshold also takes integers, as PyTorch);
// Half and BFloat16 compute in float32. Strided inputs are first copied
// into per-node scratch, then every loop runs on flat contiguous slices.

type actOp uint8

const (
	actElu        actOp = iota // q0 negcoef, q1 poscoef, q2 negative input scale
	actHardshrink              // q0 lambd
	actSoftshrink              // q0 lambd
	actLogSigmoid
	actMish
	actThreshold // q0 threshold, q1 value
	actLeaky     // q0 slope (rrelu in eval)
)

// seluAlpha and seluScale are PyTorch's SELU constants.
const (
	seluAlpha = 1.6732632423543772848170429916717
	seluScale = 1.0507009873554804934193349852946
)

type actParams struct{ q0, q1, q2 float64 }

// actArg is a Scalar argument: a constant decided at build time, or the
// input to read at run time.
type actArg struct {
	idx int // input index; -1: constant v
	v   float64
}

func actArgOf(n *graph.Node, i int) actArg {
	if v, ok := graph.ConstantValue(n.Inputs[i]); ok && v.IsNumber() {
		return actArg{idx: -1, v: v.AsFloat()}
	}
	return actArg{idx: i}
}

func (a actArg) get(p *ProcessedNode) (float64, error) {
	if a.idx < 0 {
		return a.v, nil
	}
	v := p.Input(a.idx)
	if !v.IsNumber() {
		return 0, Errorf("expected a number as argument %d, got %s", a.idx, v.Kind())
	}
	return v.AsFloat(), nil
}

// actKernel is one activation node: which op, and how its arguments
// become the loop's parameters.
type actKernel struct {
	name   string
	op     actOp
	args   []actArg
	params func(a []float64) (actParams, error)
	ints   bool // integer inputs allowed (threshold)
	train  int  // rrelu: input holding training, -1 none
}

type actState struct {
	ca, tmp, cw *ivalue.Tensor
	args        [3]float64
}

func actStateOf(p *ProcessedNode) *actState {
	st, _ := p.State.(*actState)
	if st == nil {
		st = &actState{}
		p.State = st
	}
	return st
}

// actContig returns t's elements contiguous in dtype cdt: t itself when
// it already is, else a copy in *buf (allocated once, reused).
func actContig(t *ivalue.Tensor, cdt ivalue.DType, buf **ivalue.Tensor) (*ivalue.Tensor, error) {
	if t.DType() == cdt && t.IsContiguous() {
		return t, nil
	}
	if *buf == nil {
		*buf = &ivalue.Tensor{}
	}
	(*buf).Resize(cdt, t.Sizes())
	if t.DType() == cdt {
		ivalue.CopyInto(*buf, t)
		return *buf, nil
	}
	return *buf, CastInto(*buf, t)
}

// actFloatDType checks that dt is a floating dtype and gives the dtype
// the kernels compute in.
func actFloatDType(name string, dt ivalue.DType) (ivalue.DType, error) {
	switch dt {
	case ivalue.Float32, ivalue.Float64:
		return dt, nil
	case ivalue.Float16, ivalue.BFloat16:
		return ivalue.Float32, nil
	}
	return 0, Errorf("%s: expected a floating point tensor, got %s (\"%s\" not implemented for it)", name, dt, name)
}

// actTarget resizes out to (dt, sizes) and returns where the compute
// dtype cdt's result goes: out itself, or scratch cast into out after.
func actTarget(out *ivalue.Tensor, dt, cdt ivalue.DType, sizes []int, st *actState) *ivalue.Tensor {
	out.Resize(dt, sizes)
	if cdt == dt {
		return out
	}
	if st.tmp == nil {
		st.tmp = &ivalue.Tensor{}
	}
	st.tmp.Resize(cdt, sizes)
	return st.tmp
}

func (k *actKernel) run(p *ProcessedNode) error {
	a := p.Tensor(0)
	if a == nil {
		return Errorf("%s: expected a tensor as input 0, got %s", k.name, p.Input(0).Kind())
	}
	st := actStateOf(p)
	if k.train >= 0 && p.Bool(k.train) {
		return Errorf("%s with training=True samples random slopes; gosr runs inference only", k.name)
	}
	args := st.args[:len(k.args)]
	for i, ar := range k.args {
		v, err := ar.get(p)
		if err != nil {
			return Errorf("%s: %v", k.name, err)
		}
		args[i] = v
	}
	q := actParams{}
	if k.params != nil {
		var err error
		if q, err = k.params(args); err != nil {
			return err
		}
	}
	out := p.OutTensor(0)
	dt := a.DType()
	if k.ints && dt.IsInt() {
		return actThresholdInt(p, out, a, q, st)
	}
	cdt, err := actFloatDType(k.name, dt)
	if err != nil {
		return err
	}
	ca, err := actContig(a, cdt, &st.ca)
	if err != nil {
		return err
	}
	target := actTarget(out, dt, cdt, a.Sizes(), st)
	if cdt == ivalue.Float32 {
		actLoop32(k.op, target.F32Contig(), ca.F32Contig(), q)
	} else {
		actLoop64(k.op, target.F64Contig(), ca.F64Contig(), q)
	}
	if target != out {
		return CastInto(out, target)
	}
	return nil
}

// actThresholdInt is threshold on an integer tensor: x <= th ? value : x,
// both compared and stored in the tensor's type (as ATen casts them).
func actThresholdInt(p *ProcessedNode, out, a *ivalue.Tensor, q actParams, st *actState) error {
	ca, err := actContig(a, ivalue.Int64, &st.ca)
	if err != nil {
		return err
	}
	target := actTarget(out, a.DType(), ivalue.Int64, a.Sizes(), st)
	th, v := int64(q.q0), int64(q.q1)
	o := target.I64Contig()
	for i, x := range ca.I64Contig() {
		if x <= th {
			x = v
		}
		o[i] = x
	}
	if target != out {
		return CastInto(out, target)
	}
	return nil
}

func actLoop32(op actOp, o, a []float32, q actParams) {
	a = a[:len(o)]
	switch op {
	case actElu:
		neg, pos, in := float32(q.q0), float32(q.q1), float32(q.q2)
		for i, x := range a {
			if x <= 0 {
				x = (expf(x*in) - 1) * neg
			} else {
				x *= pos
			}
			o[i] = x
		}
	case actHardshrink:
		l := float32(q.q0)
		for i, x := range a {
			if x >= -l && x <= l {
				x = 0
			}
			o[i] = x
		}
	case actSoftshrink:
		for i, x := range a {
			o[i] = softshrinkF(x, float32(q.q0))
		}
	case actLogSigmoid:
		for i, x := range a {
			o[i] = min(x, 0) - float32(math.Log1p(float64(expf(-absF(x)))))
		}
	case actMish:
		for i, x := range a {
			o[i] = mishf(x)
		}
	case actThreshold:
		th, v := float32(q.q0), float32(q.q1)
		for i, x := range a {
			if x <= th {
				x = v
			}
			o[i] = x
		}
	case actLeaky:
		s := float32(q.q0)
		for i, x := range a {
			o[i] = leakyF(x, s)
		}
	}
}

func actLoop64(op actOp, o, a []float64, q actParams) {
	a = a[:len(o)]
	switch op {
	case actElu:
		for i, x := range a {
			if x <= 0 {
				x = math.Expm1(x*q.q2) * q.q0
			} else {
				x *= q.q1
			}
			o[i] = x
		}
	case actHardshrink:
		for i, x := range a {
			if x >= -q.q0 && x <= q.q0 {
				x = 0
			}
			o[i] = x
		}
	case actSoftshrink:
		for i, x := range a {
			o[i] = softshrinkF(x, q.q0)
		}
	case actLogSigmoid:
		for i, x := range a {
			o[i] = min(x, 0) - math.Log1p(math.Exp(-math.Abs(x)))
		}
	case actMish:
		for i, x := range a {
			o[i] = x * math.Tanh(math.Log1p(math.Exp(x)))
		}
	case actThreshold:
		for i, x := range a {
			if x <= q.q0 {
				x = q.q1
			}
			o[i] = x
		}
	case actLeaky:
		for i, x := range a {
			o[i] = leakyF(x, q.q0)
		}
	}
}

// softshrinkF is ATen's a > l ? a - l : (a < -l ? a + l : a * 0): NaN
// stays NaN.
func softshrinkF[T float32 | float64](x, l T) T {
	switch {
	case x > l:
		return x - l
	case x < -l:
		return x + l
	}
	return x * 0
}

// mishf is x*tanh(softplus(x)) with tanh(log1p(e)) written as
// n/(n+2), n = e(e+2), e = exp(x): one exp instead of exp, log1p, tanh.
// Above 20 tanh(softplus(x)) is 1 in float32 (and e*e would overflow).
func mishf(x float32) float32 {
	if x > 20 {
		return x
	}
	e := expf(x)
	n := e * (e + 2)
	return x * n / (n + 2)
}

// ---- prelu ----

// preluKernel: x > 0 ? x : w*x, w a single weight or one per channel
// (dim 1).
func preluKernel(p *ProcessedNode) error {
	a, w := p.Tensor(0), p.Tensor(1)
	if a == nil || w == nil {
		return Errorf("prelu: expected tensors as self and weight")
	}
	dt := a.DType()
	cdt, err := actFloatDType("prelu", dt)
	if err != nil {
		return err
	}
	if w.DType() != dt {
		return Errorf("prelu: weight of dtype %s does not match self's %s", w.DType(), dt)
	}
	if w.Dim() > 1 {
		return Errorf("prelu: expected weight to be a scalar or 1D tensor, got ndim = %d", w.Dim())
	}
	nw := w.Numel()
	channels, inner := 1, 1
	if nw != 1 {
		if a.Dim() == 0 {
			return Errorf("prelu: zero-dim input tensors are not allowed with %d weights", nw)
		}
		if a.Dim() > 1 {
			channels = a.Size(1)
			for _, s := range a.Sizes()[2:] {
				inner *= s
			}
		}
		if channels != nw {
			return Errorf("prelu: mismatch of parameter numbers and input channel size: found %d parameters and channel size %d", nw, channels)
		}
	}
	st := actStateOf(p)
	ca, err := actContig(a, cdt, &st.ca)
	if err != nil {
		return err
	}
	cw, err := actContig(w, cdt, &st.cw)
	if err != nil {
		return err
	}
	out := p.OutTensor(0)
	target := actTarget(out, dt, cdt, a.Sizes(), st)
	if cdt == ivalue.Float32 {
		preluLoop(target.F32Contig(), ca.F32Contig(), cw.F32Contig(), channels, inner)
	} else {
		preluLoop(target.F64Contig(), ca.F64Contig(), cw.F64Contig(), channels, inner)
	}
	if target != out {
		return CastInto(out, target)
	}
	return nil
}

// preluLoop runs over planes of inner elements, plane j with weight
// w[j%channels] (a single weight: one plane of everything).
func preluLoop[T float32 | float64](o, x, w []T, channels, inner int) {
	if channels == 1 {
		s := w[0]
		for i, v := range x[:len(o)] {
			o[i] = max(v, 0) + s*min(v, 0)
		}
		return
	}
	for j, off := 0, 0; off < len(o); j, off = j+1, off+inner {
		s := w[j%channels]
		xs, os := x[off:off+inner], o[off:off+inner]
		for i, v := range xs {
			os[i] = max(v, 0) + s*min(v, 0)
		}
	}
}

// ---- glu ----

type gluState struct {
	actState
	sizes []int
}

// gluKernel: the first half along dim times the sigmoid of the second.
func gluKernel(p *ProcessedNode) error {
	a := p.Tensor(0)
	if a == nil {
		return Errorf("glu: expected a tensor, got %s", p.Input(0).Kind())
	}
	if a.Dim() == 0 {
		return Errorf("glu does not support scalars because halving size must be even")
	}
	d, err := ewWrapDim(p.Int(1), a.Dim())
	if err != nil {
		return err
	}
	n := a.Size(d)
	if n%2 != 0 {
		return Errorf("Halving dimension must be even, but dimension %d is size %d", d, n)
	}
	dt := a.DType()
	cdt, err := actFloatDType("glu", dt)
	if err != nil {
		return err
	}
	st, _ := p.State.(*gluState)
	if st == nil {
		st = &gluState{}
		p.State = st
	}
	ca, err := actContig(a, cdt, &st.ca)
	if err != nil {
		return err
	}
	st.sizes = append(st.sizes[:0], a.Sizes()...)
	st.sizes[d] = n / 2
	out := p.OutTensor(0)
	target := actTarget(out, dt, cdt, st.sizes, &st.actState)
	inner := 1
	for _, s := range a.Sizes()[d+1:] {
		inner *= s
	}
	half := n / 2 * inner
	if cdt == ivalue.Float32 {
		o, x := target.F32Contig(), ca.F32Contig()
		for off := 0; off < len(o); off += half {
			xa := x[2*off : 2*off+half]
			xb := x[2*off+half : 2*off+2*half]
			os := o[off : off+half]
			for i, v := range xa {
				os[i] = v * sigmoidf(xb[i])
			}
		}
	} else {
		o, x := target.F64Contig(), ca.F64Contig()
		for off := 0; off < len(o); off += half {
			xa := x[2*off : 2*off+half]
			xb := x[2*off+half : 2*off+2*half]
			os := o[off : off+half]
			for i, v := range xa {
				os[i] = v * sigmoidF(xb[i])
			}
		}
	}
	if target != out {
		return CastInto(out, target)
	}
	return nil
}

// ---- registration ----

const (
	eluSchema        = "aten::elu(Tensor self, Scalar alpha=1, Scalar scale=1, Scalar input_scale=1) -> Tensor"
	seluSchema       = "aten::selu(Tensor self) -> Tensor"
	celuSchema       = "aten::celu(Tensor self, Scalar alpha=1.) -> Tensor"
	hardshrinkSchema = "aten::hardshrink(Tensor self, Scalar lambd=0.5) -> Tensor"
	softshrinkSchema = "aten::softshrink(Tensor self, Scalar lambd=0.5) -> Tensor"
	logSigmoidSchema = "aten::log_sigmoid(Tensor self) -> Tensor"
	mishSchema       = "aten::mish(Tensor self) -> Tensor"
	thresholdSchema  = "aten::threshold(Tensor self, Scalar threshold, Scalar value) -> Tensor"
	rreluSchema      = "aten::rrelu(Tensor self, Scalar lower=0.125, Scalar upper=0.33333333333333331, bool training=False, Generator? generator=None) -> Tensor"
	preluSchema      = "aten::prelu(Tensor self, Tensor weight) -> Tensor"
	gluSchema        = "aten::glu(Tensor self, int dim=-1) -> Tensor"
)

func init() {
	reg := func(schema string, mk func(n *graph.Node) *actKernel) {
		s, err := graph.ParseSchema(schema)
		if err != nil {
			panic("ops: bad activation schema: " + err.Error())
		}
		RegisterOut(s.Name, func(n *graph.Node) Kernel {
			if !n.Matches(schema) {
				return nil
			}
			k := mk(n)
			if k == nil {
				return nil
			}
			k.name = s.Name
			return k.run
		})
	}
	args := func(n *graph.Node, idx ...int) []actArg {
		as := make([]actArg, len(idx))
		for i, j := range idx {
			as[i] = actArgOf(n, j)
		}
		return as
	}
	reg(eluSchema, func(n *graph.Node) *actKernel {
		return &actKernel{op: actElu, args: args(n, 1, 2, 3), train: -1, params: func(a []float64) (actParams, error) {
			return actParams{a[0] * a[1], a[1], a[2]}, nil
		}}
	})
	reg(seluSchema, func(n *graph.Node) *actKernel {
		return &actKernel{op: actElu, train: -1, params: func([]float64) (actParams, error) {
			return actParams{seluAlpha * seluScale, seluScale, 1}, nil
		}}
	})
	reg(celuSchema, func(n *graph.Node) *actKernel {
		return &actKernel{op: actElu, args: args(n, 1), train: -1, params: func(a []float64) (actParams, error) {
			if a[0] == 0 {
				return actParams{}, Errorf("ZeroDivisionError: alpha cannot be 0 for CELU")
			}
			return actParams{a[0], 1, 1 / a[0]}, nil
		}}
	})
	reg(hardshrinkSchema, func(n *graph.Node) *actKernel {
		return &actKernel{op: actHardshrink, args: args(n, 1), train: -1, params: func(a []float64) (actParams, error) {
			return actParams{q0: a[0]}, nil
		}}
	})
	reg(softshrinkSchema, func(n *graph.Node) *actKernel {
		return &actKernel{op: actSoftshrink, args: args(n, 1), train: -1, params: func(a []float64) (actParams, error) {
			if a[0] < 0 {
				return actParams{}, Errorf("lambda must be greater or equal to 0, but found to be %g.", a[0])
			}
			return actParams{q0: a[0]}, nil
		}}
	})
	reg(logSigmoidSchema, func(n *graph.Node) *actKernel { return &actKernel{op: actLogSigmoid, train: -1} })
	reg(mishSchema, func(n *graph.Node) *actKernel { return &actKernel{op: actMish, train: -1} })
	reg(thresholdSchema, func(n *graph.Node) *actKernel {
		return &actKernel{op: actThreshold, args: args(n, 1, 2), ints: true, train: -1, params: func(a []float64) (actParams, error) {
			return actParams{q0: a[0], q1: a[1]}, nil
		}}
	})
	reg(rreluSchema, func(n *graph.Node) *actKernel {
		k := &actKernel{op: actLeaky, args: args(n, 1, 2), train: 3, params: func(a []float64) (actParams, error) {
			return actParams{q0: (a[0] + a[1]) / 2}, nil
		}}
		if v, ok := graph.ConstantValue(n.Inputs[3]); ok && v.Kind() == ivalue.KindBool && !v.Bool() {
			k.train = -1
		}
		return k
	})
	RegisterOut("aten::prelu", func(n *graph.Node) Kernel {
		if n.Matches(preluSchema) {
			return preluKernel
		}
		return nil
	})
	RegisterOut("aten::glu", func(n *graph.Node) Kernel {
		if n.Matches(gluSchema) {
			return gluKernel
		}
		return nil
	})
}
