package ops

import (
	"sync"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops/gemm"
)

// aten::conv2d, aten::conv1d (int and "same"/"valid" padding) and
// aten::_convolution (as traced graphs emit it; 3-d weights go to
// conv3d.go, transposed ones to conv_transpose.go). Depthwise
// convolutions run a direct kernel; the rest run the gemm with the im2col
// matrix packed straight from the input (no im2col buffer), or, for 1x1
// stride-1 convolutions, the input itself as B.

const (
	conv2dSchema     = "aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, int[2] padding=0, int[2] dilation=1, int groups=1) -> Tensor"
	conv2dPadSchema  = `aten::conv2d.padding(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, str padding="valid", int[2] dilation=1, int groups=1) -> Tensor`
	conv1dSchema     = "aten::conv1d(Tensor input, Tensor weight, Tensor? bias=None, int[1] stride=[1], int[1] padding=[0], int[1] dilation=[1], int groups=1) -> Tensor"
	conv1dPadSchema  = `aten::conv1d.padding(Tensor input, Tensor weight, Tensor? bias=None, int[1] stride=[1], str padding="valid", int[1] dilation=[1], int groups=1) -> Tensor`
	convolutionSch   = "aten::_convolution(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, bool transposed, int[] output_padding, int groups, bool benchmark, bool deterministic, bool cudnn_enabled, bool allow_tf32) -> Tensor"
	convolutionDepr  = "aten::_convolution.deprecated(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, bool transposed, int[] output_padding, int groups, bool benchmark, bool deterministic, bool cudnn_enabled) -> Tensor"
	convolutionPlain = "aten::convolution(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, bool transposed, int[] output_padding, int groups) -> Tensor"
	// ConvClampSchema is gosr's convolution with a clamp epilogue
	// (passes.FuseConvClamp makes it of a convolution and the relu,
	// relu6 or hardtanh that alone reads it): 1-d, 2-d or 3-d from the
	// weight's rank, never transposed; min <= max.
	ConvClampSchema = "gosr::conv_clamp(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, int groups, float min, float max) -> Tensor"
	// ConvAddClampSchema is gosr's convolution with a residual epilogue
	// (passes.FuseConvAdd makes it of a convolution, the add of its
	// output and other, and the clamp that alone reads the sum, if any:
	// min -Inf and max +Inf without one). other broadcasts as add's.
	ConvAddClampSchema = "gosr::conv_add_clamp(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, int groups, Tensor other, float min, float max) -> Tensor"
	// ConvActSchema is gosr's convolution with an activation epilogue
	// (passes.FuseConvAct makes it of a convolution and the silu,
	// hardswish, hardsigmoid, sigmoid or gelu that alone reads it; act
	// names it, as FusedActivation knows them).
	ConvActSchema = "gosr::conv_act(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, int groups, str act) -> Tensor"
	// ConvScaledSchema and the three after it are the convolutions above
	// (and a plain one) of input * scale, the product of the convolution's
	// input by one value a channel that the convolution alone read
	// (passes.FuseConvScale makes them of a squeeze-and-excitation
	// block's aten::mul and the convolution after it; see [Scaled
	// convolution input]). input and scale are the mul's operands in
	// its order: whichever is one value a channel scales the other.
	ConvScaledSchema         = "gosr::conv_scaled(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, int groups, Tensor scale) -> Tensor"
	ConvClampScaledSchema    = "gosr::conv_clamp_scaled(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, int groups, float min, float max, Tensor scale) -> Tensor"
	ConvAddClampScaledSchema = "gosr::conv_add_clamp_scaled(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, int groups, Tensor other, float min, float max, Tensor scale) -> Tensor"
	ConvActScaledSchema      = "gosr::conv_act_scaled(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, int groups, str act, Tensor scale) -> Tensor"
)

// convSpec says where a conv overload keeps its arguments.
type convSpec struct {
	dims       int // 1 or 2; 0: from the weight's rank (_convolution)
	strPadding bool
	transposed int // input index of the transposed flag, or -1
	groups     int // input index of groups
	clamp      int // input index of the epilogue's min (max follows), or 0: none
	res        int // input index of the residual added before the clamp, or 0: none
	act        int // input index of the activation's name, or 0: none
	scale      int // input index of the input's other factor (see [Scaled convolution input]), or 0: none
}

// convClampSpec is gosr::conv_clamp's, convAddClampSpec
// gosr::conv_add_clamp's.
var (
	convClampSpec    = convSpec{dims: 0, transposed: -1, groups: 6, clamp: 7}
	convAddClampSpec = convSpec{dims: 0, transposed: -1, groups: 6, clamp: 8, res: 7}
	convActSpec      = convSpec{dims: 0, transposed: -1, groups: 6, act: 7}
)

type convState struct {
	ints  []int
	shape []int
	wbuf  []float32
	// depthwise (convDepthwiseRows): the padded, phase-split input
	// plane, a block of output rows as wide, and the taps' offsets
	padIn, padOut []float32
	offs          []int
	// offsFor is the geometry offs and offsMax were computed for: the
	// same for every plane of a node, and their divisions cost more
	// than a small plane's taps.
	offsFor [8]int
	offsMax int
	// depthwise and grouped (convDepthwiseBlocked, convGroupedBlocked):
	// the run's arguments and buffers, and the taps' offsets
	dwc     dwcRun
	dwcOffs []int
	// In place (output over the input, see OverwriteRule): one depthwise
	// output plane computed aside, or a copy of the whole input when
	// neither that nor the pointwise column tiles (in the runtime's
	// scratch) apply.
	plane []float32
	tile  []float32 // the pointwise tile when the node has no scratch
	xcopy *ivalue.Tensor
	cols  []float32 // transposed: the gemm's product before col2im
	// conv_add_clamp: resLate, the residual is added after the
	// convolution by binGeneral (resConv holds the convolution,
	// resBin the add's state); resCopy, a copy of a residual that
	// overlaps the output.
	resLate bool
	resConv *ivalue.Tensor
	resBin  *binState
	resCopy []float32
	// pooled is gosr::conv_clamp_max_pool2d's pooling (nil for the
	// other convolutions): see [Pooled convolution].
	pooled *convPool
	// The scaled convolutions' (see [Scaled convolution input]): the
	// product where no path takes the scale (and its mul's state), and
	// the weight rows times the scale.
	scaledX   *ivalue.Tensor
	scaledBin *binState
	wscaled   []float32
}

func init() {
	reg := func(op, schema string, spec convSpec) {
		RegisterOut(op, func(n *graph.Node) Kernel {
			if !n.Matches(schema) {
				return nil
			}
			pre := convPrepack(n, spec)
			return func(p *ProcessedNode) error { return convKernel(p, spec, pre) }
		})
	}
	reg("aten::conv2d", conv2dSchema, convSpec{2, false, -1, 6, 0, 0, 0, 0})
	reg("aten::conv2d", conv2dPadSchema, convSpec{2, true, -1, 6, 0, 0, 0, 0})
	reg("aten::conv1d", conv1dSchema, convSpec{1, false, -1, 6, 0, 0, 0, 0})
	reg("aten::conv1d", conv1dPadSchema, convSpec{1, true, -1, 6, 0, 0, 0, 0})
	reg("aten::_convolution", convolutionSch, convSpec{0, false, 6, 8, 0, 0, 0, 0})
	reg("aten::_convolution", convolutionDepr, convSpec{0, false, 6, 8, 0, 0, 0, 0})
	reg("aten::convolution", convolutionPlain, convSpec{0, false, 6, 8, 0, 0, 0, 0})
	reg("gosr::conv_clamp", ConvClampSchema, convClampSpec)
	reg("gosr::conv_add_clamp", ConvAddClampSchema, convAddClampSpec)
	reg("gosr::conv_act", ConvActSchema, convActSpec)
	reg("gosr::conv_scaled", ConvScaledSchema, convSpec{transposed: -1, groups: 6, scale: 7})
	reg("gosr::conv_clamp_scaled", ConvClampScaledSchema, convSpec{transposed: -1, groups: 6, clamp: 7, scale: 9})
	reg("gosr::conv_add_clamp_scaled", ConvAddClampScaledSchema, convSpec{transposed: -1, groups: 6, clamp: 8, res: 7, scale: 10})
	reg("gosr::conv_act_scaled", ConvActScaledSchema, convSpec{transposed: -1, groups: 6, act: 7, scale: 8})
}

// convActivation is the node's activation epilogue (nil for none).
func convActivation(p *ProcessedNode, spec convSpec) (gemm.Activation, error) {
	if spec.act == 0 {
		return nil, nil
	}
	v := p.Input(spec.act)
	if v.Kind() != ivalue.KindString {
		return nil, Errorf("conv_act: expected the activation's name, got %s", v.Kind())
	}
	act := FusedActivation(v.Str())
	if act == nil {
		return nil, Errorf("conv_act: unknown activation %q (expected one of silu, sigmoid, hardswish, hardsigmoid, gelu)", v.Str())
	}
	return act, nil
}

// FusedActivation is the float32 activation gosr::conv_act and
// gosr::linear_act apply for name, as the op of that name computes it
// over a whole tensor (see gemm.Activation), or nil: silu, sigmoid,
// hardswish, hardsigmoid and gelu (its exact, erf form).
func FusedActivation(name string) gemm.Activation {
	switch name {
	case "silu":
		return actSilu
	case "sigmoid":
		return actSigmoid
	case "hardswish":
		return actHardswish
	case "hardsigmoid":
		return actHardsigmoid
	case "gelu":
		return actGelu
	}
	return nil
}

func actSilu(x []float32)        { siluVec(x, x) }
func actSigmoid(x []float32)     { rnnSigmoidVec(x, x) }
func actHardswish(x []float32)   { hardVec(true, x, x) }
func actHardsigmoid(x []float32) { hardVec(false, x, x) }
func actGelu(x []float32)        { geluVec(x, x) }

// convEpilogue is the node's clamp epilogue (the zero Clamp for a plain
// convolution).
func convEpilogue(p *ProcessedNode, spec convSpec) (gemm.Clamp, error) {
	if spec.clamp == 0 {
		return gemm.Clamp{}, nil
	}
	lo, hi := p.Input(spec.clamp), p.Input(spec.clamp+1)
	if !lo.IsNumber() || !hi.IsNumber() {
		return gemm.Clamp{}, Errorf("conv_clamp: expected numbers as min and max, got %s and %s", lo.Kind(), hi.Kind())
	}
	ep := gemm.Clamp{On: true, Lo: float32(lo.AsFloat()), Hi: float32(hi.AsFloat())}
	if !(ep.Lo <= ep.Hi) {
		return gemm.Clamp{}, Errorf("conv_clamp: min %v must not be above max %v (nor NaN)", ep.Lo, ep.Hi)
	}
	return ep, nil
}

// convPrepacked is a constant weight packed once per group as the
// gemm's A operand, shared read-only by all runtimes. The packing waits
// for the first run whose path reads it (packedA): on AVX-512 most
// convolutions take the rows or the channel-blocked kernels instead, and
// a second packed copy of every weight (resnet18: 47 MB, as large as the
// file) would sit unused in every process.
type convPrepacked struct {
	w      *ivalue.Tensor
	groups int
	// rows is the weight's rows, contiguous (the tensor's memory, or a
	// copy of a strided one), which both packings read; nil for a
	// transposed weight, packed when made.
	rows  []float32
	a     []*gemm.PrepackedA
	aOnce sync.Once
	// The weight for convDirectBlocked (see [Channel-blocked direct
	// convolution]), for ungrouped 2-d kernels of a multiple of 8 input
	// and 8 output channels (blkOK; see [Half output blocks]; a 1x1 one
	// takes the path only when strided or over a small map): packed on the first run that takes that path, once for
	// all runtimes.
	blkOK   bool
	blkOnce sync.Once
	blk     []float32
	// dw is a depthwise weight (one input channel a group, as many
	// groups as output channels) laid out for convDepthwiseBlocked, made
	// with the rest; nil for other weights.
	dw []float32
}

// packedA returns the weight packed per group as gemm's A, packing it
// on the first call.
func (p *convPrepacked) packedA() []*gemm.PrepackedA {
	p.aOnce.Do(func() {
		if p.rows == nil {
			return // packed when made (transposed weights)
		}
		o := p.w.Size(0)
		og, kdim := o/p.groups, len(p.rows)/o
		for gr := 0; gr < p.groups; gr++ {
			p.a = append(p.a, gemm.PrepackA(og, kdim, gemm.Mat{Data: p.rows, Off: gr * og * kdim, RS: kdim, CS: 1}))
		}
	})
	return p.a
}

// blocked returns the weight packed for convDirectBlocked.
func (p *convPrepacked) blocked() []float32 {
	p.blkOnce.Do(func() {
		w := p.w
		p.blk = directBlockedWeights(p.rows, w.Size(0), w.Size(1), w.Size(2)*w.Size(3))
	})
	return p.blk
}

// convPrepack packs a constant weight (frozen graphs) with constant
// groups, or returns nil. Depthwise weights (one input channel per
// group) are left alone: they run the direct kernel.
func convPrepack(n *graph.Node, spec convSpec) *convPrepacked {
	c, ok := graph.ConstantValue(n.Inputs[1])
	if !ok {
		return nil
	}
	w := c.Tensor()
	gv, ok := graph.ConstantValue(n.Inputs[spec.groups])
	if spec.transposed >= 0 {
		// Transposed weights are [in, out/groups, ...]: packed as their
		// transpose by conv_transpose.go.
		tv, ok := graph.ConstantValue(n.Inputs[spec.transposed])
		if !ok || tv.Kind() != ivalue.KindBool {
			return nil
		}
		if tv.Bool() {
			return convTransposePrepack(n, spec.groups)
		}
	}
	if w == nil || !ok || gv.Kind() != ivalue.KindInt || w.DType() != ivalue.Float32 || w.Dim() < 3 || w.Dim() > 5 ||
		(spec.dims != 0 && w.Dim() != spec.dims+2) || w.Numel() == 0 {
		return nil
	}
	if w.Size(1) <= 1 {
		return convPrepackDepthwise(w, gv.Int())
	}
	groups := int(gv.Int())
	o := w.Size(0)
	if groups <= 0 || o%groups != 0 {
		return nil
	}
	pre := &convPrepacked{w: w, groups: groups, rows: prepackRows(w)}
	pre.blkOK = useAVX2 && groups == 1 && w.Dim() == 4 && w.Size(1)%8 == 0 && o%8 == 0
	return pre
}

// convPrepackDepthwise lays out a 2-d depthwise weight with groups
// groups for convDepthwiseBlocked, or returns nil: other weights of one
// input channel a group run from the weight's rows.
func convPrepackDepthwise(w *ivalue.Tensor, groups int64) *convPrepacked {
	o := w.Size(0)
	if !useAVX2 || w.Dim() != 4 || w.Size(1) != 1 || groups != int64(o) || o < 2 {
		return nil
	}
	rows := prepackRows(w)
	return &convPrepacked{w: w, groups: o, rows: rows, dw: depthwiseBlockedWeights(rows, o, w.Size(2)*w.Size(3))}
}

// prepackRows is a constant weight's elements in order: its own memory
// where contiguous, else a copy (convPrepacked.rows).
func prepackRows(w *ivalue.Tensor) []float32 {
	if !w.IsContiguous() {
		wd := make([]float32, w.Numel())
		gemmCopyContig(wd, w)
		return wd
	}
	return w.F32()[w.Offset() : w.Offset()+w.Numel()]
}

// convGeom is one convolution's geometry, 1-d as 2-d with height 1.
type convGeom struct {
	n, c, h, w     int
	sN, sC, sH, sW int
	o, kh, kw      int
	strH, strW     int
	padH, padW     int
	dilH, dilW     int
	groups         int
	oh, ow         int
	batched        bool
}

// outputSize sets g's output map from its input, kernel, stride,
// padding and dilation, or reports false where the padded input is
// smaller than the dilated kernel.
func (g *convGeom) outputSize() bool {
	if g.h+2*g.padH-g.dilH*(g.kh-1) <= 0 || g.w+2*g.padW-g.dilW*(g.kw-1) <= 0 {
		return false
	}
	g.oh = (g.h+2*g.padH-g.dilH*(g.kh-1)-1)/g.strH + 1
	g.ow = (g.w+2*g.padW-g.dilW*(g.kw-1)-1)/g.strW + 1
	return true
}

// residualApart returns the residual rd from roff, or a copy of it in
// st where it overlaps the output c: never planned so (no overwrite
// rule), but a caller's tensors could be.
func (st *convState) residualApart(rd []float32, roff int, c []float32) ([]float32, int) {
	if lo := f32Addr(rd) + uintptr(roff)*4; rangesOverlap(lo, lo+uintptr(len(c))*4, f32Addr(c), f32Addr(c)+uintptr(len(c))*4) {
		st.resCopy = append(st.resCopy[:0], rd[roff:roff+len(c)]...)
		return st.resCopy, 0
	}
	return rd, roff
}

// setStrides sets g's input strides from x (g.batched and the rank
// set: 1-d as 2-d with height 1).
func (g *convGeom) setStrides(x *ivalue.Tensor) {
	xst := x.Strides()
	lead := 0
	g.sN = 0
	if g.batched {
		g.sN, lead = xst[0], 1
	}
	g.sC = xst[lead]
	if len(xst)-lead == 3 {
		g.sH, g.sW = xst[lead+1], xst[lead+2]
	} else {
		g.sH, g.sW = 0, xst[lead+1]
	}
}

// wideConv is g's geometry for gemm's wide paths, with groups groups.
func (g *convGeom) wideConv(groups int) gemm.WideConv {
	return gemm.WideConv{C: g.c, H: g.h, W: g.w, KH: g.kh, KW: g.kw, StrH: g.strH, StrW: g.strW,
		PadH: g.padH, PadW: g.padW, DilH: g.dilH, DilW: g.dilW, OH: g.oh, OW: g.ow, Groups: groups}
}

// convPair reads an int list argument of d (1 or 2) values; a single
// value is repeated, as PyTorch expands int[2] arguments.
func convPair(p *ProcessedNode, i, d int, st *convState, what string) (int, int, error) {
	st.ints = p.IntsInto(i, st.ints)
	v := st.ints
	switch {
	case len(v) == 1:
		return v[0], v[0], nil
	case len(v) == d && d == 2:
		return v[0], v[1], nil
	}
	return 0, 0, Errorf("conv %s: expected %d values, got %v", what, d, v)
}

func convKernel(p *ProcessedNode, spec convSpec, pre *convPrepacked) error {
	st, _ := p.State.(*convState)
	if st == nil {
		st = &convState{}
		p.State = st
	}
	if spec.res == 0 {
		return convRun(p, spec, pre, st, nil, p.OutTensor(0))
	}
	other := p.Tensor(spec.res)
	if other == nil {
		return Errorf("conv_add_clamp: expected a tensor as other, got %s", p.Input(spec.res).Kind())
	}
	if err := convRun(p, spec, pre, st, other, p.OutTensor(0)); err != nil || !st.resLate {
		return err
	}
	// other is not laid out as the output (a broadcast, another dtype,
	// strides): the convolution ran alone, the add and clamp follow as
	// their own ops would.
	ep, err := convEpilogue(p, spec)
	if err != nil {
		return err
	}
	out := p.OutTensor(0)
	if st.resConv == nil {
		st.resConv = &ivalue.Tensor{}
	}
	// The convolution's output is float32 and contiguous.
	st.resConv.Resize(ivalue.Float32, out.Sizes())
	copy(st.resConv.F32Contig(), out.F32Contig())
	if st.resBin == nil {
		st.resBin = &binState{}
	}
	dt := ResultType(st.resConv, other, nil, ivalue.Undefined)
	if err := binGeneral(opAdd, st.resBin, st.resConv, other, ivalue.IValue{}, false, dt, dt, ivalue.FromInt(1), out); err != nil {
		return Errorf("conv_add_clamp: %v", err)
	}
	if ep.On {
		switch out.DType() {
		case ivalue.Float32:
			o := out.F32Contig()
			gemm.Clamp32(o, o, ep.Lo, ep.Hi)
		default:
			return Errorf("conv_add_clamp: the sum is %s: only float32 is clamped", out.DType())
		}
	}
	return nil
}

// convRun is convKernel with other, the residual (nil: none): added
// in the epilogue where the output's path has one and other is a
// contiguous float32 tensor of the output's shape; else st.resLate is
// set and the convolution runs without its epilogue. The convolution
// goes into out: the node's output, or gosr::conv_clamp_max_pool2d's
// tensor aside, whose st.pooled takes the convolution instead where its
// bands fit (see [Pooled convolution]).
func convRun(p *ProcessedNode, spec convSpec, pre *convPrepacked, st *convState, other *ivalue.Tensor, out *ivalue.Tensor) error {
	st.resLate = false
	x, err := gemmInput(p, 0, "conv input")
	if err != nil {
		return err
	}
	w, err := gemmInput(p, 1, "conv weight")
	if err != nil {
		return err
	}
	// The scaled convolutions' factor of one value a channel, where it
	// is one (see [Scaled convolution input]).
	var scale *ivalue.Tensor
	if spec.scale != 0 {
		if x, scale, err = convScaleInput(p, spec, st, x, w); err != nil {
			return err
		}
	}
	bias, err := gemmOptInput(p, 2, "conv bias")
	if err != nil {
		return err
	}
	ep, err := convEpilogue(p, spec)
	if err != nil {
		return err
	}
	act, err := convActivation(p, spec)
	if err != nil {
		return err
	}
	dims := spec.dims
	if dims == 0 {
		if spec.transposed >= 0 && p.Bool(spec.transposed) {
			return convTransposeKernel(p, convTransposeOfConvolution, pre, st, x, w, bias)
		}
		switch w.Dim() {
		case 3:
			dims = 1
		case 4:
			dims = 2
		case 5:
			dims = 3
		default:
			return Errorf("conv weight: expected 3, 4 or 5 dims (1-d, 2-d or 3-d convolution), got sizes %v", w.Sizes())
		}
	}
	if dims == 3 {
		if other != nil {
			st.resLate, ep = true, gemm.Clamp{}
		}
		if err := conv3dKernel(p, spec, pre, st, x, w, bias); err != nil {
			return err
		}
		// No epilogue in the 3-d kernel: the clamp and activation follow it.
		o := p.Output(0).Tensor().F32Contig()
		if ep.On {
			gemm.Clamp32(o, o, ep.Lo, ep.Hi)
		}
		if act != nil {
			act(o)
		}
		return nil
	}
	if w.Dim() != dims+2 {
		return Errorf("conv%dd weight: expected %d dims, got sizes %v", dims, dims+2, w.Sizes())
	}
	if x.Dim() != dims+2 && x.Dim() != dims+1 {
		return Errorf("conv%dd input: expected %d or %d dims, got sizes %v", dims, dims+1, dims+2, x.Sizes())
	}
	var g convGeom
	g.batched = x.Dim() == dims+2
	xs := x.Sizes()
	lead := 0
	g.n = 1
	if g.batched {
		g.n, lead = xs[0], 1
	}
	g.c = xs[lead]
	if dims == 2 {
		g.h, g.w = xs[lead+1], xs[lead+2]
		g.kh, g.kw = w.Size(2), w.Size(3)
	} else {
		g.h, g.w = 1, xs[lead+1]
		g.kh, g.kw = 1, w.Size(2)
	}
	g.setStrides(x)
	g.o = w.Size(0)
	g.groups = int(p.Int(spec.groups))
	if g.strH, g.strW, err = convPair(p, 3, dims, st, "stride"); err != nil {
		return err
	}
	if g.dilH, g.dilW, err = convPair(p, 5, dims, st, "dilation"); err != nil {
		return err
	}
	same := false
	if spec.strPadding {
		switch s := p.Input(4).Str(); s {
		case "valid":
		case "same":
			same = true
		default:
			return Errorf(`conv padding: expected "same" or "valid", got %q`, s)
		}
	} else if g.padH, g.padW, err = convPair(p, 4, dims, st, "padding"); err != nil {
		return err
	}
	if dims == 1 {
		g.strH, g.dilH, g.padH = 1, 1, 0
	}
	if g.strH <= 0 || g.strW <= 0 || g.dilH <= 0 || g.dilW <= 0 || g.padH < 0 || g.padW < 0 {
		return Errorf("conv: expected positive stride and dilation and non-negative padding")
	}
	if same {
		if g.strH != 1 || g.strW != 1 {
			return Errorf("conv: padding='same' is not supported for strided convolutions")
		}
		// Asymmetric padding puts the extra element after, as PyTorch.
		g.padH, g.padW = g.dilH*(g.kh-1)/2, g.dilW*(g.kw-1)/2
	}
	if g.groups <= 0 || g.c%g.groups != 0 || g.o%g.groups != 0 {
		return Errorf("conv: groups %d must be positive and divide input channels %d and output channels %d", g.groups, g.c, g.o)
	}
	if w.Size(1)*g.groups != g.c {
		return Errorf("conv: input has %d channels, weight %v with groups %d expects %d", g.c, w.Sizes(), g.groups, w.Size(1)*g.groups)
	}
	if bias != nil && (bias.Dim() != 1 || bias.Size(0) != g.o) {
		return Errorf("conv bias: expected sizes [%d], got %v", g.o, bias.Sizes())
	}
	if same {
		g.oh, g.ow = g.h, g.w
	} else {
		if !g.outputSize() {
			return Errorf("conv: input %v (padded) is smaller than the dilated kernel %v", x.Sizes(), w.Sizes())
		}
	}
	var bd []float32
	bo, bs := 0, 0
	if bias != nil {
		bd, bo, bs = bias.F32(), bias.Offset(), bias.Strides()[0]
	}
	if st.pooled != nil && other == nil && act == nil && dims == 2 {
		st.pooled.convNumel = int64(g.n * g.o * g.oh * g.ow)
		ok, err := st.pooled.fits(p, &g, x)
		if err != nil {
			return err
		}
		if ok {
			wd, woff := convWeightRows(st, w)
			st.pooled.run(p.Scratch, &g, x, wd, woff, bd, bo, bs, ep)
			return nil
		}
	}
	st.shape = st.shape[:0]
	if g.batched {
		st.shape = append(st.shape, g.n)
	}
	st.shape = append(st.shape, g.o)
	if dims == 2 {
		st.shape = append(st.shape, g.oh)
	}
	st.shape = append(st.shape, g.ow)
	out.Resize(ivalue.Float32, st.shape)
	c := out.F32Contig()
	if out.Numel() == 0 {
		return nil
	}
	var sd []float32 // scale's factors: N*C floats
	if scale != nil {
		if !convScaledFits(&g, pre, w, x, scale, c) {
			if x, err = convScaleNow(st, x, scale); err != nil {
				return err
			}
			g.setStrides(x)
		} else {
			sd = scale.F32()[scale.Offset() : scale.Offset()+scale.Numel()]
		}
	}
	// The residual, when it is laid out as the output: added in the
	// epilogue (the gemm's and the wide path's) or right after the
	// convolution (the other paths, which then clamp with inner, none,
	// and leave the clamp to addRes).
	var rd []float32
	roff := 0
	if other != nil {
		if other.DType() != ivalue.Float32 || !SameSizes(other.Sizes(), st.shape) || !other.IsContiguous() {
			st.resLate, ep = true, gemm.Clamp{}
		} else {
			rd, roff = st.residualApart(other.F32(), other.Offset(), c)
		}
	}
	inner := ep
	if rd != nil {
		inner = gemm.Clamp{}
	}
	addRes := func() {
		if rd != nil {
			binLoopF32(opAdd, c, c, 0, 1, rd, roff, 1, 1)
			if ep.On {
				gemm.Clamp32(c, c, ep.Lo, ep.Hi)
			}
		}
	}
	plane := g.oh * g.ow
	kdim := w.Size(1) * g.kh * g.kw
	og := g.o / g.groups
	depthwise := w.Size(1) == 1 && g.groups == g.c
	// The output may begin in the input's memory (an overwrite rule):
	// depthwise convolutions with one output channel per input channel
	// go plane by plane, 1x1 ones column tile by column tile, anything
	// else reads a copy of the input.
	ord := planesApart
	xlo, xhi := convSpan(x, &g)
	if olo := f32Addr(c); rangesOverlap(olo, olo+uintptr(len(c))*4, xlo, xhi) {
		ord = planesCopy
		plain := convPlain(&g)
		switch {
		case depthwise && g.o == g.c && plain:
			ord = planePlan(c, plane, xlo, xhi, g.n*g.c, g.h*g.w, true)
		case g.groups == 1 && plain && olo == xlo && convIsPointwise(&g):
			if g.n == 1 && sd == nil && convDirectBlockedFits(&g, pre, w) {
				// The direct kernels (a small map, see [Small pointwise
				// maps]) copy all of the image into their channel-blocked
				// buffer before they write any output: in place they run
				// as out of place, the same bits, with no column tiles to
				// copy.
				convDirectBlocked(p.Scratch, &g, pre.blocked(), x.F32(), x.Offset(), nil, bd, bo, bs, rd, roff, c, st, ep, act)
				return nil
			}
			var preA []*gemm.PrepackedA
			var wm gemm.Mat
			// The rows kernel where it runs out of place, so both give
			// the same bits; it reads the weight's rows.
			rows := convPointwiseRowsFits(&g)
			if !rows && pre != nil && pre.w == w && pre.groups == g.groups && plane > 1 && og > 1 {
				preA = pre.packedA()
			} else {
				wd, woff := convWeightRows(st, w)
				wm = gemm.Mat{Data: wd, Off: woff, RS: kdim, CS: 1}
			}
			convPointwiseInPlace(p.Scratch, st, &g, x.F32(), x.Offset(), preA, wm, rows, bd, bo, bs, rd, roff, c, ep, act)
			return nil
		}
		if ord == planesCopy {
			x = convCopyInput(st, x, &g, dims)
			ord = planesApart
		}
	}
	if depthwise {
		wd, woff := convWeightRows(st, w)
		var wblk []float32
		if pre != nil && pre.w == w && g.o == g.c {
			wblk = pre.dw
		}
		convDepthwise(p.Scratch, &g, x.F32(), x.Offset(), wd, woff, wblk, bd, bo, bs, c, ord, xlo, st, inner, act)
		addRes()
		return nil
	}
	if convDirectBlockedFits(&g, pre, w) {
		convDirectBlocked(p.Scratch, &g, pre.blocked(), x.F32(), x.Offset(), sd, bd, bo, bs, rd, roff, c, st, ep, act)
		return nil
	}
	if rd == nil && convGroupedBlockedFits(&g) {
		wd, woff := convWeightRows(st, w)
		convGroupedBlocked(p.Scratch, &g, x.F32(), x.Offset(), wd, woff, bd, bo, bs, c, st, ep, act)
		return nil
	}
	if convWideRowsFits(&g) {
		wg := g.wideConv(1)
		wd, woff := convWeightRows(st, w)
		for nn := 0; nn < g.n; nn++ {
			gemm.ConvWideRows(p.Scratch, &wg, g.o, wd, woff, x.F32(), x.Offset()+nn*g.sN, g.sC, g.sH, g.sW, bd, bo, bs, rd, roff+nn*g.o*plane, c, nn*g.o*plane, ep, act)
		}
		return nil
	}
	if pre != nil && pre.w == w && pre.groups == g.groups && convUseWide(&g) {
		wg := g.wideConv(g.groups)
		for nn := 0; nn < g.n; nn++ {
			gemm.ConvWide(p.Scratch, &wg, pre.packedA(), x.F32(), x.Offset()+nn*g.sN, g.sC, g.sH, g.sW, bd, bo, bs, rd, roff+nn*g.o*plane, c, nn*g.o*plane, ep, act)
		}
		return nil
	}
	pointwise := convIsPointwise(&g)
	if pointwise && convPointwiseRowsFits(&g) {
		wd, woff := convWeightRows(st, w)
		if sd != nil {
			wd, woff = convScaleWeights(st, &g, wd, woff, sd), 0
		}
		convPointwiseRows(p.Scratch, &g, x.F32(), x.Offset(), wd, woff, bd, bo, bs, rd, roff, c, ep, act)
		return nil
	}
	cb := convBias{bd, bo, bs, rd, roff}
	if pre != nil && pre.w == w && pre.groups == g.groups && (!pointwise || (plane > 1 && og > 1)) {
		// The weight packed once for all runtimes (pointwise gemvs
		// read it directly instead, as gemm would).
		convGemm(p.Scratch, &g, x, pre.packedA(), gemm.Mat{}, pointwise, cb, c, ep, act)
		return nil
	}
	wd, woff := convWeightRows(st, w)
	convGemm(p.Scratch, &g, x, nil, gemm.Mat{Data: wd, Off: woff, RS: kdim, CS: 1}, pointwise, cb, c, ep, act)
	return nil
}

// convWeightRows returns the weight as [o, cg*kh*kw] rows (storage and
// offset), copied into the state only if not contiguous.
func convWeightRows(st *convState, w *ivalue.Tensor) ([]float32, int) {
	if w.IsContiguous() {
		return w.F32(), w.Offset()
	}
	if cap(st.wbuf) < w.Numel() {
		st.wbuf = make([]float32, w.Numel())
	}
	st.wbuf = st.wbuf[:w.Numel()]
	gemmCopyContig(st.wbuf, w)
	return st.wbuf, 0
}

// convUseWide picks gemm.ConvWide (no im2col packing) over the packed
// im2col: for every kernel at stride 1 but the pointwise one (whose B,
// the input itself, packs cheaply, while its rows, a whole plane apart,
// thrash L1 when read in place); strided, for every kernel larger than
// 1x1 (resnet's stride-2 3x3 convolutions: 5-10% faster) and 1x1 ones
// with up to 64 output channels a group (above that, their plain
// strided im2col packs cheaply enough to win). BenchmarkConvWide
// measures both.
func convUseWide(g *convGeom) bool {
	if convIsPointwise(g) {
		return false
	}
	return g.strH == 1 && g.strW == 1 || g.kh*g.kw > 1 || g.o/g.groups <= 64
}

// wideRowsMaxK bounds the taps (input channels times kernel size)
// convWideRowsFits takes: the stems of vision networks (27 to 147),
// whose short sums leave gemm's tiles more stores than products.
const wideRowsMaxK = 160

// convWideRowsFits reports whether gemm.ConvWideRows takes g (see
// [Wide rows] in gemm): the rows kernels, one group, whole groups of
// eight output channels, few taps, and not a pointwise convolution.
func convWideRowsFits(g *convGeom) bool {
	return gemm.HasRows() && g.groups == 1 && g.o%8 == 0 && g.c*g.kh*g.kw <= wideRowsMaxK && g.oh > 0 && g.ow > 0 &&
		!convIsPointwise(g)
}

// convIsPointwise reports a 1x1 stride-1 unpadded convolution over rows
// that merge into one dimension: the gemm's B is the input itself.
func convIsPointwise(g *convGeom) bool {
	return g.kh == 1 && g.kw == 1 && g.strH == 1 && g.strW == 1 && g.padH == 0 && g.padW == 0 &&
		(g.h == 1 || g.sH == g.w*g.sW)
}

// convPlain reports whether the input's planes lie contiguous, one after
// the other.
func convPlain(g *convGeom) bool {
	return (g.w == 1 || g.sW == 1) && (g.h == 1 || g.sH == g.w) &&
		(g.c == 1 || g.sC == g.h*g.w) && (g.n == 1 || g.sN == g.c*g.h*g.w)
}

// convSpan is the byte range the input's elements occupy.
func convSpan(x *ivalue.Tensor, g *convGeom) (uintptr, uintptr) {
	if g.n == 0 || g.c == 0 || g.h == 0 || g.w == 0 {
		return 0, 0
	}
	xd := x.F32()
	last := x.Offset() + (g.n-1)*g.sN + (g.c-1)*g.sC + (g.h-1)*g.sH + (g.w-1)*g.sW
	return f32Addr(xd) + uintptr(x.Offset())*4, f32Addr(xd) + uintptr(last+1)*4
}

// convCopyInput copies x into the state (contiguous) and points g's
// strides at the copy, which it returns.
func convCopyInput(st *convState, x *ivalue.Tensor, g *convGeom, dims int) *ivalue.Tensor {
	if st.xcopy == nil {
		st.xcopy = &ivalue.Tensor{}
	}
	st.xcopy.Resize(ivalue.Float32, x.Sizes())
	gemmCopyContig(st.xcopy.F32Contig(), x)
	g.sW, g.sC, g.sN = 1, g.h*g.w, g.c*g.h*g.w
	if dims == 2 {
		g.sH = g.w
	}
	return st.xcopy
}

// pointwiseTileFloats and pointwiseTileCols size convPointwiseInPlace's
// tile of input columns: 64 KiB, but at least 128 columns (eight
// panels). An input of 672 channels (mobilenet_v3's projections at
// 14x14) went in tiles of 16 columns, a gemm each, 10-20% slower than
// with output memory of its own; with 128 it is as fast
// (BenchmarkInPlacePointwise).
const (
	pointwiseTileFloats = 1 << 14
	pointwiseTileCols   = 128
)

// convPointwiseInPlace runs a 1x1, stride-1, ungrouped convolution whose
// output c begins at the first byte of its input, whose planes lie
// contiguous: input and output are [n, channels, plane] with the same
// plane, so a write to output (nn, o, j) lands on column j of some input
// plane. Per image, each tile of columns is copied aside before the
// gemm writes its output columns from the copy; images run first to last
// when the output has no more channels than the input (output image nn
// ends before input image nn+1 begins), else last to first (output image
// nn begins at or after input image nn). Tiles are whole panels of the
// gemm and take the path the whole image takes, so every element comes
// out bit for bit as with separate memory. A residual rd (nil: none),
// laid out as c from roff, is added in the gemm's epilogue, before the
// clamp.
// With rows each tile runs through gemm.PointwiseRows instead, over
// the weight's rows w (see [Pointwise rows]), as convRun does out of
// place.
func convPointwiseInPlace(sc *gemm.Scratch, st *convState, g *convGeom, xd []float32, xoff int, pre []*gemm.PrepackedA, w gemm.Mat, rows bool, bd []float32, bo, bs int, rd []float32, roff int, c []float32, cl gemm.Clamp, act gemm.Activation) {
	plane := g.oh * g.ow
	tw := plane
	if g.c*plane > pointwiseTileFloats {
		tw = min(plane, max(pointwiseTileCols, pointwiseTileFloats/g.c/gemm.NR*gemm.NR))
	}
	// The runtime's scratch, not the node's state: one tile for all the
	// runtime's in-place convolutions.
	var tile []float32
	if sc != nil {
		tile = sc.Floats(g.c * tw)
	} else {
		if cap(st.tile) < g.c*tw {
			st.tile = make([]float32, g.c*tw)
		}
		tile = st.tile[:g.c*tw]
	}
	for k := 0; k < g.n; k++ {
		nn := k
		if g.o > g.c {
			nn = g.n - 1 - k
		}
		for j0 := 0; j0 < plane; j0 += tw {
			n := min(tw, plane-j0)
			for ci := 0; ci < g.c; ci++ {
				s := xoff + nn*g.sN + ci*g.sC + j0
				copy(tile[ci*tw:ci*tw+n], xd[s:s+n])
			}
			coff := nn*g.o*plane + j0
			ep := gemm.Epilogue{Clamp: cl, Act: act}
			if bd != nil {
				ep.Bias, ep.BiasOff, ep.BiasStride = bd, bo, bs
			}
			if rd != nil {
				ep.Res, ep.ResOff, ep.ResLd = rd, roff+coff, plane
			}
			if rows {
				// As convPointwiseRows computes it out of place.
				var rr []float32
				if rd != nil {
					rr = rd[roff:]
				}
				gemm.PointwiseRows(sc, g.o, g.c, n, tile, 0, tw, w.Data, w.Off, bd, bo, bs, rr, coff, c, coff, plane, cl, act)
				continue
			}
			b := gemm.Mat{Data: tile, RS: tw, CS: 1}
			if pre != nil {
				gemm.WithPrepackedAEpilogue(sc, n, pre[0], b, nil, 0, c, coff, plane, ep)
			} else {
				gemm.ColsEpilogue(sc, g.o, n, plane, g.c, w, b, 0, c, coff, plane, ep)
			}
		}
	}
}

// convBias is a convolution's bias (d nil: none): output channel o's
// is d[off+o*stride].
type convBias struct {
	d           []float32
	off, stride int
	// res, when not nil, is the residual, laid out as the output from
	// res[resOff], added after the bias.
	res    []float32
	resOff int
}

// convGemm runs the convolution as one gemm per image and group, with A
// the group's weight rows: packed in advance (pre, one per group) or
// read from w ([o, cg*kh*kw] rows). The bias and the clamp are the
// gemm's epilogue.
func convGemm(sc *gemm.Scratch, g *convGeom, x *ivalue.Tensor, pre []*gemm.PrepackedA, w gemm.Mat, pointwise bool, bias convBias, c []float32, ep gemm.Clamp, act gemm.Activation) {
	cg, og := g.c/g.groups, g.o/g.groups
	kdim := w.RS
	if pre != nil {
		kdim = pre[0].K()
	}
	plane := g.oh * g.ow
	xd := x.F32()
	cv := gemm.ConvSrc{Data: xd, SC: g.sC, SH: g.sH, SW: g.sW, H: g.h, W: g.w, KH: g.kh, KW: g.kw,
		StrH: g.strH, StrW: g.strW, PadH: g.padH, PadW: g.padW, DilH: g.dilH, DilW: g.dilW, OH: g.oh, OW: g.ow,
		D: 1, KD: 1, OD: 1, StrD: 1, DilD: 1}
	for nn := 0; nn < g.n; nn++ {
		for gr := 0; gr < g.groups; gr++ {
			xoff := x.Offset() + nn*g.sN + gr*cg*g.sC
			coff := (nn*g.o + gr*og) * plane
			var b gemm.Mat
			var src *gemm.ConvSrc
			if pointwise {
				b = gemm.Mat{Data: xd, Off: xoff, RS: g.sC, CS: g.sW}
			} else {
				cv.Off = xoff
				src = &cv
			}
			epi := gemm.Epilogue{Clamp: ep, Act: act}
			if bias.d != nil {
				epi.Bias, epi.BiasOff, epi.BiasStride = bias.d, bias.off+gr*og*bias.stride, bias.stride
			}
			if bias.res != nil {
				epi.Res, epi.ResOff, epi.ResLd = bias.res, bias.resOff+coff, plane
			}
			if pre != nil {
				gemm.WithPrepackedAEpilogue(sc, plane, pre[gr], b, src, 0, c, coff, plane, epi)
				continue
			}
			a := w
			a.Off += gr * og * kdim
			gemm.GemmEpilogue(sc, og, plane, kdim, 1, a, b, src, 0, c, coff, plane, epi)
		}
	}
}

// convDepthwise runs a convolution with one input channel per group
// directly, plane by plane (each output plane starts as its bias or 0),
// in order ord over input planes at xlo (see planesRun) when the output
// overlaps the input.
func convDepthwise(sc *gemm.Scratch, g *convGeom, xd []float32, xoff int, wd []float32, woff int, wblk []float32, bd []float32, bo, bs int, c []float32, ord planeOrder, xlo uintptr, st *convState, ep gemm.Clamp, act gemm.Activation) {
	if convDepthwiseBlockedFits(g) {
		convDepthwiseBlocked(sc, g, xd, xoff, wd, woff, wblk, bd, bo, bs, c, ord, st, ep, act)
		return
	}
	mult := g.o / g.groups
	kk := g.kh * g.kw
	rows := convDepthwiseRowsFits(g)
	planesRun(c, g.oh*g.ow, ord, xlo, g.h*g.w, &st.plane, func(i int, dst []float32) {
		nn, o := i/g.o, i%g.o
		in := xoff + nn*g.sN + (o/mult)*g.sC
		wk := wd[woff+o*kk : woff+(o+1)*kk]
		if rows {
			var b float32
			if bd != nil {
				b = bd[bo+o*bs]
			}
			convDepthwiseRows(g, xd, in, wk, b, dst, st, ep)
			if act != nil { // the plane is in cache
				act(dst)
			}
			return
		}
		if bd != nil {
			convFill(dst, bd[bo+o*bs])
		} else {
			clear(dst)
		}
		convDepthwiseOne(g, xd, in, wk, dst)
		if ep.On { // the plane is in cache
			gemm.Clamp32(dst, dst, ep.Lo, ep.Hi)
		}
		if act != nil {
			act(dst)
		}
	})
}

// convDepthwiseOne adds one output plane's taps into dst: per kernel tap,
// an axpy over the valid part of each output row. The input plane starts
// at in, the taps are wk.
func convDepthwiseOne(g *convGeom, xd []float32, in int, wk []float32, dst []float32) {
	for ki := 0; ki < g.kh; ki++ {
		for kj := 0; kj < g.kw; kj++ {
			wv := wk[ki*g.kw+kj]
			dw := kj*g.dilW - g.padW
			// Output columns whose input column lies inside.
			lo := 0
			if dw < 0 {
				lo = (-dw + g.strW - 1) / g.strW
			}
			hi := g.ow
			if last := (g.ow-1)*g.strW + dw; last >= g.w {
				hi = (g.w - dw + g.strW - 1) / g.strW
			}
			if lo >= hi {
				continue
			}
			for oh := 0; oh < g.oh; oh++ {
				ih := oh*g.strH + ki*g.dilH - g.padH
				if uint(ih) >= uint(g.h) {
					continue
				}
				row := dst[oh*g.ow+lo : oh*g.ow+hi]
				src := in + ih*g.sH + (lo*g.strW+dw)*g.sW
				if step := g.strW * g.sW; step == 1 {
					gemm.Axpy(wv, xd[src:src+len(row)], row)
				} else {
					for t := range row {
						row[t] += wv * xd[src+t*step]
					}
				}
			}
		}
	}
}

// convFill sets every element of row to v by doubling copies, which run
// as vector moves (a plain loop stores one float at a time).
func convFill(row []float32, v float32) {
	if len(row) == 0 {
		return
	}
	row[0] = v
	for n := 1; n < len(row); n *= 2 {
		copy(row[n:], row[:n])
	}
}
