package ops

import (
	"math"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// aten::batch_norm (inference, or training mode without running stats:
// batch statistics), aten::layer_norm and aten::group_norm. Statistics
// accumulate in float64. A non-contiguous input is first copied into
// per-runtime scratch.

const (
	batchNormSchema = "aten::batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled) -> Tensor"
	// BatchNormClampSchema is gosr's batch norm with its clamp (relu,
	// relu6) in the same pass (passes.FuseBatchNormClamp makes it).
	BatchNormClampSchema = "gosr::batch_norm_clamp(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled, float min, float max) -> Tensor"
	layerNormSchema      = "aten::layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, float eps=1.0000000000000001e-05, bool cudnn_enable=True) -> Tensor"
	groupNormSchema      = "aten::group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, float eps=1.0000000000000001e-05, bool cudnn_enabled=True) -> Tensor"
)

type normState struct {
	xbuf         []float32
	scale, shift []float32
	ints         []int
	// constSS: batch_norm's scale and shift, computed from parameters
	// that are all graph constants (a frozen model's), hold for every
	// run; constChecked says whether that was looked at.
	constSS, constChecked bool
}

func normStateOf(p *ProcessedNode) *normState {
	st, _ := p.State.(*normState)
	if st == nil {
		st = &normState{}
		p.State = st
	}
	return st
}

func init() {
	reg := func(op, schema string, k Kernel) {
		RegisterOut(op, func(n *graph.Node) Kernel {
			if !n.Matches(schema) {
				return nil
			}
			return k
		})
	}
	reg("aten::batch_norm", batchNormSchema, batchNormKernel)
	reg("gosr::batch_norm_clamp", BatchNormClampSchema, batchNormKernel)
	reg("aten::layer_norm", layerNormSchema, layerNormKernel)
	reg("aten::group_norm", groupNormSchema, groupNormKernel)
}

// normContig returns x's elements in logical order, copying into
// st.xbuf when x is not contiguous.
func normContig(x *ivalue.Tensor, st *normState) []float32 {
	return attnContig(x, &st.xbuf)
}

// normVec returns element i of an optional 1-d parameter, or def.
type normVec struct {
	data      []float32
	off, step int
	ok        bool
}

func normVecOf(t *ivalue.Tensor) normVec {
	if t == nil {
		return normVec{}
	}
	return normVec{t.F32(), t.Offset(), t.Strides()[0], true}
}

func (v normVec) at(i int, def float32) float32 {
	if !v.ok {
		return def
	}
	return v.data[v.off+i*v.step]
}

// normParam reads optional parameter i, checking it is 1-d of size n.
func normParam(p *ProcessedNode, i, n int, what string) (normVec, error) {
	t, err := gemmOptInput(p, i, what)
	if err != nil || t == nil {
		return normVec{}, err
	}
	if t.Dim() != 1 || t.Size(0) != n {
		return normVec{}, Errorf("%s: expected sizes [%d], got %v", what, n, t.Sizes())
	}
	return normVecOf(t), nil
}

// normCall is a batch_norm-shaped call (input, weight, bias,
// running_mean, running_var, a flag, momentum, eps) as its kernel reads it.
type normCall struct {
	w, b, mean, vr normVec
	flag           bool // batch_norm's training, instance_norm's use_input_stats
	eps            float64
	st             *normState
	xs, o          []float32 // the input's elements in order; output 0, resized as the input
	n, c, inner    int       // the input as [n, c, inner]
}

// normNames are the argument names a batch_norm-shaped op's errors use,
// made once (joining them per run would allocate).
type normNames struct {
	input  string
	params [4]string // weight, bias, running_mean, running_var
}

func newNormNames(op string) *normNames {
	return &normNames{op + " input", [4]string{op + " weight", op + " bias", op + " running_mean", op + " running_var"}}
}

var batchNormNames = newNormNames("batch_norm")

// readNormCall reads the op's arguments and resizes its output; the
// callers check the flag against the running stats, in their ops' own
// words.
func readNormCall(p *ProcessedNode, names *normNames) (normCall, error) {
	var nc normCall
	x, err := gemmInput(p, 0, names.input)
	if err != nil {
		return nc, err
	}
	if x.Dim() < 2 {
		return nc, Errorf("%s: expected at least 2 dims [N, C, ...], got sizes %v", names.input, x.Sizes())
	}
	nc.c = x.Size(1)
	var pv [4]normVec
	for i, what := range names.params {
		if pv[i], err = normParam(p, i+1, nc.c, what); err != nil {
			return nc, err
		}
	}
	nc.w, nc.b, nc.mean, nc.vr = pv[0], pv[1], pv[2], pv[3]
	nc.flag = p.Bool(5)
	nc.eps = p.Float(7)
	nc.st = normStateOf(p)
	nc.xs = normContig(x, nc.st)
	out := p.OutTensor(0)
	out.Resize(ivalue.Float32, x.Sizes())
	nc.o = out.F32Contig()
	nc.n, nc.inner = x.Size(0), 1
	for _, s := range x.Sizes()[2:] {
		nc.inner *= s
	}
	return nc, nil
}

func batchNormKernel(p *ProcessedNode) error {
	nc, err := readNormCall(p, batchNormNames)
	if err != nil {
		return err
	}
	w, b, mean, vr, training, eps := nc.w, nc.b, nc.mean, nc.vr, nc.flag, nc.eps
	if !training && (!mean.ok || !vr.ok) {
		return Errorf("batch_norm: running_mean and running_var must be defined in evaluation mode")
	}
	if training && (mean.ok || vr.ok) {
		return Errorf("batch_norm: training=True with running stats (which it updates in place) is not supported")
	}
	st, xs, o, nb, c, inner := nc.st, nc.xs, nc.o, nc.n, nc.c, nc.inner
	if !st.constChecked {
		st.constChecked = true
		st.constSS = !training && normConstParams(p)
	}
	// With constant parameters the first run's scale and shift stand (c
	// cannot change: the weight is a constant of c elements).
	fresh := !st.constSS || len(st.scale) != c
	if cap(st.scale) < c {
		st.scale, st.shift = make([]float32, c), make([]float32, c)
	}
	st.scale, st.shift = st.scale[:c], st.shift[:c]
	scale, shift := st.scale, st.shift
	for ch := 0; fresh && ch < c; ch++ {
		var m, v float64
		if training {
			m, v = normMoments(xs, nb, ch*inner, c*inner, inner)
		} else {
			m, v = float64(mean.at(ch, 0)), float64(vr.at(ch, 1))
		}
		sc := float64(w.at(ch, 1)) / math.Sqrt(v+eps)
		scale[ch] = float32(sc)
		shift[ch] = float32(float64(b.at(ch, 0)) - m*sc)
	}
	clamp := p.NumInputs() == 11 // gosr::batch_norm_clamp
	var lo, hi float32
	if clamp {
		lo, hi = float32(p.Float(9)), float32(p.Float(10))
	}
	if useAVX512 && c > 0 && inner > 0 {
		// Every channel's plane in one loop (see [Channel rows]), the
		// same operations as below.
		cl := 0
		if clamp {
			cl = 1
		}
		for n := 0; n < nb; n++ {
			base := n * c * inner
			_, _ = o[base+c*inner-1], xs[base+c*inner-1]
			affineRowsAVX512(&o[base], &xs[base], &scale[0], &shift[0], c, inner, lo, hi, cl)
		}
		return nil
	}
	for n := 0; n < nb; n++ {
		for ch := 0; ch < c; ch++ {
			base := (n*c + ch) * inner
			if clamp {
				// In the same pass: what a relu after the op gives,
				// bit for bit.
				scaleShiftClamp(o[base:base+inner], xs[base:base+inner], scale[ch], shift[ch], lo, hi)
			} else {
				scaleShift(o[base:base+inner], xs[base:base+inner], scale[ch], shift[ch])
			}
		}
	}
	return nil
}

// normConstParams reports whether a batch_norm's weight, bias, running
// statistics, training flag and eps are all graph constants, so that
// its per-channel scale and shift (a square root and a division each)
// are the same on every run: densenet121's 62 batch norms, left after
// the ones folded into convolutions, have 31,000 channels.
func normConstParams(p *ProcessedNode) bool {
	if p.Node == nil || len(p.Node.Inputs) < 8 {
		return false
	}
	for _, i := range [...]int{1, 2, 3, 4, 5, 7} {
		if in := p.Node.Inputs[i]; in.Node == nil || in.Node.Kind != graph.KindConstant {
			return false
		}
	}
	return true
}

// scaleShift sets dst[i] = src[i]*sc + sh (a multiply, then an add, as
// the Go expression rounds), eight at a time where it can
// (normAffineAVX2 without weight and bias).
func scaleShift(dst, src []float32, sc, sh float32) {
	dst = dst[:len(src)]
	i := 0
	if n8 := len(src) &^ 7; useAVX2 && n8 > 0 {
		normAffineAVX2(&dst[0], &src[0], nil, nil, n8, sc, sh, 0, 0, 0)
		i = n8
	}
	for ; i < len(src); i++ {
		dst[i] = src[i]*sc + sh
	}
}

// scaleShiftClamp is scaleShift, each result then clamped to [lo, hi]
// as gemm.Clamp32 clamps (NaN passing), in the same pass.
func scaleShiftClamp(dst, src []float32, sc, sh, lo, hi float32) {
	dst = dst[:len(src)]
	i := 0
	if n8 := len(src) &^ 7; useAVX2 && n8 > 0 {
		normAffineAVX2(&dst[0], &src[0], nil, nil, n8, sc, sh, 4, lo, hi)
		i = n8
	}
	for ; i < len(src); i++ {
		// clamp32Go's comparisons: a NaN stays.
		x := src[i]*sc + sh
		if x < lo {
			x = lo
		}
		if x > hi {
			x = hi
		}
		dst[i] = x
	}
}

// normMoments returns the mean and biased variance of the reps runs of
// length inner starting at start, start+step, ...
func normMoments(x []float32, reps, start, step, inner int) (float64, float64) {
	var s float64
	for r := 0; r < reps; r++ {
		s += sum64(x[start+r*step : start+r*step+inner])
	}
	cnt := float64(reps * inner)
	if cnt == 0 {
		return math.NaN(), math.NaN()
	}
	m := s / cnt
	var q float64
	for r := 0; r < reps; r++ {
		q += sqDev64(x[start+r*step:start+r*step+inner], m)
	}
	return m, q / cnt
}

// sum64 is the sum of x in float64, in four running sums: one sum's
// chain of dependent adds made layer_norm's statistics (a row of 96 to
// 768 floats) latency-bound, 4 ns an element in convnext.
func sum64(x []float32) float64 {
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		v := x[i : i+4 : i+4]
		s0 += float64(v[0])
		s1 += float64(v[1])
		s2 += float64(v[2])
		s3 += float64(v[3])
	}
	for ; i < len(x); i++ {
		s0 += float64(x[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// sqDev64 is the sum of (x[i]-m)**2 in float64, as sum64 sums.
func sqDev64(x []float32, m float64) float64 {
	var q0, q1, q2, q3 float64
	i := 0
	for ; i+4 <= len(x); i += 4 {
		v := x[i : i+4 : i+4]
		d0, d1, d2, d3 := float64(v[0])-m, float64(v[1])-m, float64(v[2])-m, float64(v[3])-m
		q0 += d0 * d0
		q1 += d1 * d1
		q2 += d2 * d2
		q3 += d3 * d3
	}
	for ; i < len(x); i++ {
		d := float64(x[i]) - m
		q0 += d * d
	}
	return (q0 + q1) + (q2 + q3)
}

func layerNormKernel(p *ProcessedNode) error {
	x, err := gemmInput(p, 0, "layer_norm input")
	if err != nil {
		return err
	}
	st := normStateOf(p)
	st.ints = p.IntsInto(1, st.ints)
	ns := st.ints
	d := x.Dim()
	if len(ns) == 0 || len(ns) > d {
		return Errorf("layer_norm: normalized_shape %v does not fit input sizes %v", ns, x.Sizes())
	}
	inner := 1
	for i, s := range ns {
		if x.Size(d-len(ns)+i) != s {
			return Errorf("layer_norm: given normalized_shape=%v, expected input with shape [*, %v], but got input of size %v", ns, ns, x.Sizes())
		}
		inner *= s
	}
	var wb [2]*ivalue.Tensor
	for i, what := range [2]string{"layer_norm weight", "layer_norm bias"} {
		t, err := gemmOptInput(p, 2+i, what)
		if err != nil {
			return err
		}
		if t != nil && t.Numel() != inner {
			return Errorf("%s: expected %d elements (normalized_shape %v), got sizes %v", what, inner, ns, t.Sizes())
		}
		wb[i] = t
	}
	eps := p.Float(4)
	xs := normContig(x, st)
	// Weight and bias in logical order (copied if strided).
	var w, b []float32
	if wb[0] != nil || wb[1] != nil {
		if cap(st.scale) < inner {
			st.scale, st.shift = make([]float32, inner), make([]float32, inner)
		}
		if wb[0] != nil {
			w = st.scale[:inner]
			gemmCopyContig(w, wb[0])
		}
		if wb[1] != nil {
			b = st.shift[:inner]
			gemmCopyContig(b, wb[1])
		}
	}
	out := p.OutTensor(0)
	out.Resize(ivalue.Float32, x.Sizes())
	o := out.F32Contig()
	if inner == 0 {
		return nil
	}
	layerNormRows(o, xs, inner, eps, w, b)
	return nil
}

// layerNormRows layer-normalises each run of inner values of xs into o
// (w, b optional, per element).
func layerNormRows(o, xs []float32, inner int, eps float64, w, b []float32) {
	rows := len(o) / inner
	for r := 0; r < rows; r++ {
		src, dst := xs[r*inner:(r+1)*inner], o[r*inner:(r+1)*inner]
		m, v := normMoments(src, 1, 0, 0, inner)
		rstd := 1 / math.Sqrt(v+eps)
		normAffine(dst, src, m, rstd, w, b)
	}
}

// normAffine writes dst = (src-m)*rstd*w + b (w, b optional, per element).
func normAffine(dst, src []float32, m, rstd float64, w, b []float32) {
	sc, sh := float32(rstd), float32(-m*rstd)
	if w == nil && b == nil {
		scaleShift(dst, src, sc, sh)
		return
	}
	dst = dst[:len(src)]
	if n8 := len(src) &^ 7; useAVX2 && n8 > 0 {
		// The same operations eight at a time (normAffineAVX2), then
		// the rest below.
		mode := 0
		var wp, bp *float32
		if w != nil {
			mode, wp = 1, &w[:len(src)][0]
		}
		if b != nil {
			mode, bp = mode|2, &b[:len(src)][0]
		}
		normAffineAVX2(&dst[0], &src[0], wp, bp, n8, sc, sh, mode, 0, 0)
		dst, src = dst[n8:], src[n8:]
		if w != nil {
			w = w[n8:]
		}
		if b != nil {
			b = b[n8:]
		}
	}
	switch {
	case w != nil && b != nil:
		for i, v := range src {
			dst[i] = (v*sc+sh)*w[i] + b[i]
		}
	case w != nil:
		for i, v := range src {
			dst[i] = (v*sc + sh) * w[i]
		}
	default:
		for i, v := range src {
			dst[i] = v*sc + sh + b[i]
		}
	}
}

func groupNormKernel(p *ProcessedNode) error {
	x, err := gemmInput(p, 0, "group_norm input")
	if err != nil {
		return err
	}
	if x.Dim() < 2 {
		return Errorf("group_norm input: expected at least 2 dims [N, C, ...], got sizes %v", x.Sizes())
	}
	nb, c := x.Size(0), x.Size(1)
	g := int(p.Int(1))
	if g <= 0 || c%g != 0 {
		return Errorf("group_norm: expected number of channels %d to be divisible by num_groups %d", c, g)
	}
	w, err := normParam(p, 2, c, "group_norm weight")
	if err != nil {
		return err
	}
	b, err := normParam(p, 3, c, "group_norm bias")
	if err != nil {
		return err
	}
	eps := p.Float(4)
	st := normStateOf(p)
	xs := normContig(x, st)
	out := p.OutTensor(0)
	out.Resize(ivalue.Float32, x.Sizes())
	o := out.F32Contig()
	inner := 1
	for _, s := range x.Sizes()[2:] {
		inner *= s
	}
	cg := c / g
	for n := 0; n < nb; n++ {
		for gr := 0; gr < g; gr++ {
			start := (n*c + gr*cg) * inner
			m, v := normMoments(xs, 1, start, 0, cg*inner)
			rstd := 1 / math.Sqrt(v+eps)
			for ch := gr * cg; ch < (gr+1)*cg; ch++ {
				base := (n*c + ch) * inner
				sc := float32(rstd * float64(w.at(ch, 1)))
				sh := float32(float64(b.at(ch, 0)) - m*rstd*float64(w.at(ch, 1)))
				src, dst := xs[base:base+inner], o[base:base+inner]
				for i, v := range src {
					dst[i] = v*sc + sh
				}
			}
		}
	}
	return nil
}
