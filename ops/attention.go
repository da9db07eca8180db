package ops

import (
	"math"
	"unsafe"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops/gemm"
)

// PyTorch 1.13's fused attention ops (aten/src/ATen/native/transformers):
// aten::_native_multi_head_attention (nn.MultiheadAttention's fast path),
// aten::_transformer_encoder_layer_fwd (nn.TransformerEncoderLayer's),
// aten::_masked_softmax and aten::_transform_bias_rescale_qkv.
//
// The attention runs on the shared gemm over strided views of one
// [B*T, 3D] projection buffer: q k^T per (batch, head) reads q and k in
// place, the context is written straight into its [B, T, D] place (the
// 0213 transform of PyTorch fused into the gemm's output stride), then
// the output projection is a linear. Semantics as 1.13 on CPU: a 2-d
// mask is a [B, T] key padding mask, a 4-d one must be [B, H, T, T];
// mask_type must be given with a mask, and 0 (src_mask) is an error
// ("not currently supported on CPU"); masked positions are left out of
// the softmax, and a row masked entirely gives NaNs.

const (
	mhaSchema            = "aten::_native_multi_head_attention(Tensor query, Tensor key, Tensor value, int embed_dim, int num_head, Tensor qkv_weight, Tensor qkv_bias, Tensor proj_weight, Tensor proj_bias, Tensor? mask=None, bool need_weights=True, bool average_attn_weights=True, int? mask_type=None) -> (Tensor, Tensor)"
	encoderLayerSchema   = "aten::_transformer_encoder_layer_fwd(Tensor src, int embed_dim, int num_heads, Tensor qkv_weight, Tensor qkv_bias, Tensor proj_weight, Tensor proj_bias, bool use_gelu, bool norm_first, float eps, Tensor norm_weight_1, Tensor norm_bias_1, Tensor norm_weight_2, Tensor norm_bias_2, Tensor ffn_weight_1, Tensor ffn_bias_1, Tensor ffn_weight_2, Tensor ffn_bias_2, Tensor? mask=None, int? mask_type=None) -> Tensor"
	maskedSoftmaxSchema  = "aten::_masked_softmax(Tensor self, Tensor mask, int? dim=None, int? mask_type=None) -> Tensor"
	transformBiasSchema  = "aten::_transform_bias_rescale_qkv(Tensor qkv, Tensor qkv_bias, int num_heads) -> (Tensor, Tensor, Tensor)"
	mhaMaskTypeUndefined = -1
)

func init() {
	RegisterOut("aten::_native_multi_head_attention", func(n *graph.Node) Kernel {
		if !n.Matches(mhaSchema) {
			return nil
		}
		// Constant weights (frozen graphs) are packed once here.
		pw := &mhaWeights{}
		pw.qkv, pw.qkvW = linearPrepack(n, 5)
		pw.proj, pw.projW = linearPrepack(n, 7)
		return func(p *ProcessedNode) error { return mhaKernel(p, pw) }
	})
	RegisterOut("aten::_transformer_encoder_layer_fwd", func(n *graph.Node) Kernel {
		if !n.Matches(encoderLayerSchema) {
			return nil
		}
		pw := &encoderWeights{}
		pw.mha.qkv, pw.mha.qkvW = linearPrepack(n, 3)
		pw.mha.proj, pw.mha.projW = linearPrepack(n, 5)
		pw.ffn1, pw.ffn1W = linearPrepack(n, 14)
		pw.ffn2, pw.ffn2W = linearPrepack(n, 16)
		return func(p *ProcessedNode) error { return encoderLayerKernel(p, pw) }
	})
	RegisterOut("aten::_masked_softmax", func(n *graph.Node) Kernel {
		if !n.Matches(maskedSoftmaxSchema) {
			return nil
		}
		return maskedSoftmaxKernel
	})
	RegisterOut("aten::_transform_bias_rescale_qkv", func(n *graph.Node) Kernel {
		if !n.Matches(transformBiasSchema) {
			return nil
		}
		return transformBiasRescaleKernel
	})
}

// mhaWeights are the weights packed at preparation (nil where not
// constant); each is used only while the node's input is that tensor.
type mhaWeights struct {
	qkv, proj   *gemm.PrepackedB
	qkvW, projW *ivalue.Tensor
}

// mhaState is the per-runtime scratch of the attention ops.
type mhaState struct {
	shape      []int
	qkv        []float32 // [B*T, 3D]: q (biased, scaled), k, v
	ctx        []float32 // [B*T, D]: attention context, heads side by side
	scores     []float32 // [T, T]: one head's attention
	qbuf       [3][]float32
	maskCast   *ivalue.Tensor
	xbuf, hbuf []float32 // encoder layer: contiguous src, normed input
	abuf, fbuf []float32 // encoder layer: attention + residual, ffn hidden
	pbuf       [6][]float32
	cbuf       [2]*ivalue.Tensor
	// mask is the run's mask view, kept here rather than on the stack:
	// the gemm operands the kernel passes may be handed to other
	// goroutines (an intra-op team), which escape analysis cannot tell
	// from a pointer into the args that refer to it.
	mask attnMask
}

func mhaStateOf(p *ProcessedNode) *mhaState {
	st, _ := p.State.(*mhaState)
	if st == nil {
		st = &mhaState{}
		p.State = st
	}
	return st
}

// attnGrow returns buf with length n, reallocated only when it grows.
func attnGrow(buf *[]float32, n int) []float32 {
	if cap(*buf) < n {
		*buf = make([]float32, n)
	}
	*buf = (*buf)[:n]
	return *buf
}

// attnRows views t ([..., cols]) as a matrix of its rows, copying into
// buf when its leading dims do not merge.
func attnRows(t *ivalue.Tensor, buf *[]float32) gemm.Mat {
	return gemmMatrixInto(t, t.Dim()-1, buf)
}

// attnContig returns t's elements in logical order, copying into buf
// when t is not contiguous.
func attnContig(t *ivalue.Tensor, buf *[]float32) []float32 {
	if t.IsContiguous() {
		return t.F32Contig()
	}
	b := attnGrow(buf, t.Numel())
	gemmCopyContig(b, t)
	return b
}

// attnMask is a boolean mask read as [B, H, T, T] through strides (a
// [B, T] key padding mask has zero strides for the head and query dims).
type attnMask struct {
	data                []bool
	off, sb, sh, si, sj int
}

// mhaArgs is one multi-head attention call.
type mhaArgs struct {
	B, T, D, H   int
	q, k, v      *ivalue.Tensor
	qkvW, qkvB   *ivalue.Tensor
	projW, projB *ivalue.Tensor
	mask         *attnMask
	needW, avg   bool
	out          []float32 // [B*T, D]
	wout         []float32 // [B, T, T] (avg) or [B, H, T, T]; nil without weights
	self         bool      // q, k and v are one tensor
	qm           gemm.Mat  // query's rows, when already known
	qmSet        bool
	sc           *gemm.Scratch
	st           *mhaState
	pw           *mhaWeights
}

// mhaCheck applies _native_multi_head_attention's argument checks.
func mhaCheck(q, k, v *ivalue.Tensor, D, H int, qkvW, qkvB *ivalue.Tensor) error {
	if q.Dim() != 3 {
		return Errorf("expected 3-D `query`, got %d-D tensor", q.Dim())
	}
	if q.Size(2) != D {
		return Errorf("passed-in embed_dim %d didn't match last dim of query %d", D, q.Size(2))
	}
	if k.Dim() != 3 {
		return Errorf("expected 3-D `key`, got %d-D tensor", k.Dim())
	}
	if v.Dim() != 3 {
		return Errorf("expected 3-D `value`, got %d-D tensor", v.Dim())
	}
	if !sameInts(q.Sizes(), k.Sizes()) || !sameInts(k.Sizes(), v.Sizes()) {
		return Errorf("expected `query`/`key`/`value` shapes to match, got %v, %v and %v", q.Sizes(), k.Sizes(), v.Sizes())
	}
	if qkvW.Dim() != 2 {
		return Errorf("expected 2-D `qkv_weight`, got %d-D tensor", qkvW.Dim())
	}
	if qkvW.Size(0) != 3*D {
		return Errorf("expected `qkv_weight` first dim to be 3x embed_dim, got sizes %v", qkvW.Sizes())
	}
	if qkvW.Size(1) != D {
		return Errorf("expected `qkv_weight` second dim to be embed_Dim, got sizes %v", qkvW.Sizes())
	}
	if qkvB.Dim() != 1 {
		return Errorf("expected 1-D `qkv_bias`, got %d-D tensor", qkvB.Dim())
	}
	if qkvB.Size(0) != 3*D {
		return Errorf("expected `qkv_bias` first dim and first dim of query to be equal, got sizes %v", qkvB.Sizes())
	}
	if H <= 0 || D%H != 0 {
		return Errorf("`embed_dim` must divide evenly by `num_heads` (%d, %d)", D, H)
	}
	return nil
}

func sameInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// mhaMaskOf reads the optional mask input i for attention scores
// [B, H, T, T] as 1.13 does: a non-bool mask is cast to bool, a 2-d one
// must be [B, T] (key padding), any other must be [B, H, T, T] exactly,
// and mask_type must be 1 or 2 (0, src_mask, is not supported on CPU).
func mhaMaskOf(p *ProcessedNode, i int, st *mhaState, B, H, T int, maskType int64, typeSet bool, m *attnMask) (*attnMask, error) {
	if p.IsNone(i) {
		return nil, nil
	}
	t := p.Tensor(i)
	if t == nil {
		return nil, Errorf("mask: expected a Tensor, got %s", p.Input(i).Kind())
	}
	t, err := castScratch(t, ivalue.Bool, &st.maskCast)
	if err != nil {
		return nil, err
	}
	str := t.Strides()
	if t.Dim() == 2 {
		if t.Size(0) != B {
			return nil, Errorf("Expected attn_mask->sizes()[0] == batch_size to be true, but got false (mask sizes %v, batch size %d)", t.Sizes(), B)
		}
		if t.Size(1) != T {
			return nil, Errorf("Expected attn_mask->sizes()[1] == seq_len to be true, but got false (mask sizes %v, sequence length %d)", t.Sizes(), T)
		}
		*m = attnMask{t.B(), t.Offset(), str[0], 0, 0, str[1]}
	} else {
		if t.Dim() != 4 || t.Size(0) != B || t.Size(1) != H || t.Size(2) != T || t.Size(3) != T {
			return nil, Errorf("Mask shape should match input shape: mask sizes %v, attention [%d, %d, %d, %d]", t.Sizes(), B, H, T, T)
		}
		*m = attnMask{t.B(), t.Offset(), str[0], str[1], str[2], str[3]}
	}
	if err := maskTypeCheck(maskType, typeSet); err != nil {
		return nil, err
	}
	return m, nil
}

func maskTypeCheck(maskType int64, set bool) error {
	switch {
	case !set:
		return Errorf("Mask Type should be defined")
	case maskType < 0 || maskType > 2:
		return Errorf("Mask Type should be 0 (src_mask) or 1 (src_key_padding_mask), or 2 (default_mask), got %d", maskType)
	case maskType == 0:
		return Errorf("src_mask not currently supported on CPU")
	}
	return nil
}

func mhaKernel(p *ProcessedNode, pw *mhaWeights) error {
	var ts [7]*ivalue.Tensor
	for j, i := range [7]int{0, 1, 2, 5, 6, 7, 8} {
		t, err := gemmInput(p, i, mhaInputNames[j])
		if err != nil {
			return err
		}
		ts[j] = t
	}
	q, k, v := ts[0], ts[1], ts[2]
	D, H := int(p.Int(3)), int(p.Int(4))
	if err := mhaCheck(q, k, v, D, H, ts[3], ts[4]); err != nil {
		return err
	}
	st := mhaStateOf(p)
	B, T := q.Size(0), q.Size(1)
	maskType, typeSet := int64(0), !p.IsNone(12)
	if typeSet {
		maskType = p.Int(12)
	}
	mask, err := mhaMaskOf(p, 9, st, B, H, T, maskType, typeSet, &st.mask)
	if err != nil {
		return err
	}
	needW, avg := p.Bool(10), p.Bool(11)
	out := p.OutTensor(0)
	if B*T*D == 0 {
		// PyTorch returns (empty_like(query), undefined).
		out.Resize(ivalue.Float32, q.Sizes())
		p.SetOutput(1, ivalue.None())
		return nil
	}
	// The output projection is a linear: any out_features.
	projW := ts[5]
	if projW.Dim() != 2 || projW.Size(1) != D {
		return Errorf("proj_weight: expected sizes [out_features, %d], got %v", D, projW.Sizes())
	}
	st.shape = append(st.shape[:0], B, T, projW.Size(0))
	out.Resize(ivalue.Float32, st.shape)
	a := mhaArgs{B: B, T: T, D: D, H: H, q: q, k: k, v: v, qkvW: ts[3], qkvB: ts[4], projW: ts[5], projB: ts[6],
		mask: mask, needW: needW, avg: avg, out: out.F32Contig(), sc: p.Scratch, st: st, pw: pw,
		self: q == k && k == v}
	if needW {
		w := p.OutTensor(1)
		if avg {
			st.shape = append(st.shape[:0], B, T, T)
		} else {
			st.shape = append(st.shape[:0], B, H, T, T)
		}
		w.Resize(ivalue.Float32, st.shape)
		a.wout = w.F32Contig()
	} else {
		p.SetOutput(1, ivalue.None())
	}
	return mhaRun(&a)
}

var mhaInputNames = [7]string{"query", "key", "value", "qkv_weight", "qkv_bias", "proj_weight", "proj_bias"}

// mhaRun computes one attention (shapes checked, B*T*D > 0).
func mhaRun(a *mhaArgs) error {
	B, T, D, H := a.B, a.T, a.D, a.H
	st, sc := a.st, a.sc
	m, D3 := B*T, 3*D
	qkv := attnGrow(&st.qkv, m*D3)
	// qkv = [q | k | v] projections plus their biases (the bias is what
	// _transform_bias_rescale_qkv adds; the gemm adds into it).
	if err := gemmFillBroadcast(qkv, m, D3, a.qkvB); err != nil {
		return Errorf("qkv_bias: %v", err)
	}
	qm := a.qm
	if !a.qmSet {
		qm = attnRows(a.q, &st.qbuf[0])
	}
	if a.self {
		// Self-attention: one gemm against the whole weight.
		w := a.qkvW
		if a.pw != nil && a.pw.qkv != nil && w == a.pw.qkvW && m > 1 {
			gemm.WithPrepackedB(sc, m, 1, qm, a.pw.qkv, 1, qkv, 0, D3)
		} else {
			ws := w.Strides()
			gemm.Gemm(sc, m, D3, D, 1, qm, gemm.Mat{Data: w.F32(), Off: w.Offset(), RS: ws[1], CS: ws[0]}, nil, 1, qkv, 0, D3)
		}
	} else {
		w := a.qkvW
		ws := w.Strides()
		for c, t := range [3]*ivalue.Tensor{a.q, a.k, a.v} {
			x := qm
			if c > 0 {
				x = attnRows(t, &st.qbuf[c])
			}
			wc := gemm.Mat{Data: w.F32(), Off: w.Offset() + c*D*ws[0], RS: ws[1], CS: ws[0]}
			gemm.Gemm(sc, m, D, D, 1, x, wc, nil, 1, qkv, c*D, D3)
		}
	}
	dh := D / H
	scale := float32(1 / float64(float32(math.Sqrt(float64(dh)))))
	for r := 0; r < m; r++ {
		row := qkv[r*D3 : r*D3+D]
		for j := range row {
			row[j] *= scale
		}
	}
	ctx := attnGrow(&st.ctx, m*D)
	scores := attnGrow(&st.scores, T*T)
	for b := 0; b < B; b++ {
		base := b * T * D3
		for h := 0; h < H; h++ {
			s, soff := scores, 0
			if a.wout != nil && !a.avg {
				s, soff = a.wout, (b*H+h)*T*T
			}
			qh := gemm.Mat{Data: qkv, Off: base + h*dh, RS: D3, CS: 1}
			kt := gemm.Mat{Data: qkv, Off: base + D + h*dh, RS: 1, CS: D3} // k^T, read in place
			gemm.Gemm(sc, T, T, dh, 1, qh, kt, nil, 0, s, soff, T)
			for i := 0; i < T; i++ {
				row := s[soff+i*T : soff+i*T+T]
				if a.mask != nil {
					mk := a.mask
					attnSoftmax(row, 0, 1, row, 0, 1, mk.data, mk.off+b*mk.sb+h*mk.sh+i*mk.si, mk.sj, T)
				} else {
					attnSoftmax(row, 0, 1, row, 0, 1, nil, 0, 0, T)
				}
			}
			if a.wout != nil && a.avg {
				w := a.wout[b*T*T : (b+1)*T*T]
				if h == 0 {
					copy(w, s[:T*T])
				} else {
					for j, x := range s[:T*T] {
						w[j] += x
					}
				}
			}
			vh := gemm.Mat{Data: qkv, Off: base + 2*D + h*dh, RS: D3, CS: 1}
			gemm.Gemm(sc, T, dh, T, 1, gemm.Mat{Data: s, Off: soff, RS: T, CS: 1}, vh, nil, 0, ctx, b*T*D+h*dh, D)
		}
	}
	if a.wout != nil && a.avg {
		hf := float32(H)
		for j := range a.wout {
			a.wout[j] /= hf
		}
	}
	var pre *gemm.PrepackedB
	var preW *ivalue.Tensor
	if a.pw != nil {
		pre, preW = a.pw.proj, a.pw.projW
	}
	return linearRun(sc, m, a.projW.Size(0), D, gemm.Mat{Data: ctx, RS: D, CS: 1}, a.projW, a.projB, pre, preW, a.out, linearAct{})
}

// attnSoftmax writes the softmax of the n values x[xo+i*xs] to
// o[oo+i*os], leaving out those where m[mo+i*ms] is true (m nil: none),
// as PyTorch's host_softmax: the max of the values kept, exp in single
// precision for float32, the sum in float64, masked outputs 0 times the
// inverse sum (so a row masked entirely is NaN). o may be x.
func attnSoftmax[T float32 | float64](o []T, oo, os int, x []T, xo, xs int, m []bool, mo, ms, n int) {
	var t T
	f32 := unsafe.Sizeof(t) == 4
	if m == nil && os == 1 && xs == 1 && f32 && n > 0 {
		// The attention's rows: contiguous, unmasked.
		attnSoftmaxRow32(unsafe.Slice((*float32)(unsafe.Pointer(&o[oo])), n), unsafe.Slice((*float32)(unsafe.Pointer(&x[xo])), n))
		return
	}
	mx := math.Inf(-1)
	seen := false
	for i := 0; i < n; i++ {
		if m != nil && m[mo+i*ms] {
			continue
		}
		v := float64(x[xo+i*xs])
		if !seen {
			mx, seen = v, true
			continue
		}
		mx = max(mx, v) // NaN wins
	}
	var sum float64
	for i := 0; i < n; i++ {
		var e float64
		if m == nil || !m[mo+i*ms] {
			if f32 {
				e = float64(expf(float32(float64(x[xo+i*xs]) - mx)))
			} else {
				e = math.Exp(float64(x[xo+i*xs]) - mx)
			}
		}
		sum += e
		o[oo+i*os] = T(e)
	}
	inv := 1 / sum
	for i := 0; i < n; i++ {
		o[oo+i*os] = T(float64(o[oo+i*os]) * inv)
	}
}

// attnSoftmaxRow32 is attnSoftmax of a contiguous float32 row without a
// mask (o may be x).
func attnSoftmaxRow32(o, x []float32) {
	if len(x) == 0 || softmaxRowVec(o, x) {
		return
	}
	softmaxRow32Scalar(o, x)
}

// softmaxRow32Scalar is attnSoftmaxRow32 one element at a time (short
// rows, and builds without the vector kernels).
func softmaxRow32Scalar(o, x []float32) {
	o = o[:len(x)]
	mx := x[0]
	for _, v := range x[1:] {
		mx = max(mx, v) // NaN wins
	}
	var sum float64
	for i, v := range x {
		e := expf(v - mx)
		sum += float64(e)
		o[i] = e
	}
	inv := 1 / sum
	for i, v := range o {
		o[i] = float32(float64(v) * inv)
	}
}

// ---------------------------------------------------------------- encoder layer

type encoderWeights struct {
	mha          mhaWeights
	ffn1, ffn2   *gemm.PrepackedB
	ffn1W, ffn2W *ivalue.Tensor
}

var encoderInputNames = [...]string{
	3: "qkv_weight", 4: "qkv_bias", 5: "proj_weight", 6: "proj_bias",
	10: "norm_weight_1", 11: "norm_bias_1", 12: "norm_weight_2", 13: "norm_bias_2",
	14: "ffn_weight_1", 15: "ffn_bias_1", 16: "ffn_weight_2", 17: "ffn_bias_2",
}

func encoderLayerKernel(p *ProcessedNode, pw *encoderWeights) error {
	src, err := gemmInput(p, 0, "src")
	if err != nil {
		return err
	}
	var ts [18]*ivalue.Tensor
	for i := 3; i < 18; i++ {
		if i >= 7 && i <= 9 {
			continue
		}
		if ts[i], err = gemmInput(p, i, encoderInputNames[i]); err != nil {
			return err
		}
	}
	D, H := int(p.Int(1)), int(p.Int(2))
	useGelu, normFirst, eps := p.Bool(7), p.Bool(8), p.Float(9)
	st := mhaStateOf(p)
	out := p.OutTensor(0)
	out.Resize(ivalue.Float32, src.Sizes())
	if src.Numel() == 0 {
		return nil // PyTorch returns src.clone()
	}
	if err := mhaCheck(src, src, src, D, H, ts[3], ts[4]); err != nil {
		return err
	}
	B, T := src.Size(0), src.Size(1)
	m := B * T
	if pj := ts[5]; pj.Dim() != 2 || pj.Size(0) != D || pj.Size(1) != D {
		return Errorf("proj_weight: expected sizes [%d, %d], got %v", D, D, pj.Sizes())
	}
	maskType, typeSet := int64(0), !p.IsNone(19)
	if typeSet {
		maskType = p.Int(19)
	}
	mask, err := mhaMaskOf(p, 18, st, B, H, T, maskType, typeSet, &st.mask)
	if err != nil {
		return err
	}
	// Norm parameters in logical order.
	var norms [4][]float32
	for j := range norms {
		t := ts[10+j]
		if t.Numel() != D {
			return Errorf("%s: expected %d elements, got sizes %v", encoderInputNames[10+j], D, t.Sizes())
		}
		norms[j] = attnContig(t, &st.pbuf[j])
	}
	w1, w2 := ts[14], ts[16]
	if w1.Dim() != 2 || w2.Dim() != 2 {
		return Errorf("2d weights expected, got ffn weights of sizes %v and %v", w1.Sizes(), w2.Sizes())
	}
	F := w1.Size(0)
	if w1.Size(1) != D || w2.Size(0) != D || w2.Size(1) != F {
		return Errorf("ffn weights: expected sizes [F, %d] and [%d, F], got %v and %v", D, D, w1.Sizes(), w2.Sizes())
	}
	x := attnContig(src, &st.xbuf)
	// Attention input: src, or layer_norm_1(src) with norm_first.
	ain := x
	if normFirst {
		ain = attnGrow(&st.hbuf, m*D)
		layerNormRows(ain, x, D, eps, norms[0], norms[1])
	}
	attn := attnGrow(&st.abuf, m*D)
	a := mhaArgs{B: B, T: T, D: D, H: H, qkvW: ts[3], qkvB: ts[4], projW: ts[5], projB: ts[6],
		mask: mask, out: attn, sc: p.Scratch, st: st, pw: &pw.mha,
		qm: gemm.Mat{Data: ain, RS: D, CS: 1}, qmSet: true, self: true}
	if err := mhaRun(&a); err != nil {
		return err
	}
	for i, v := range x {
		attn[i] += v
	}
	if !normFirst {
		layerNormRows(attn, attn, D, eps, norms[0], norms[1])
	}
	fin := attn
	if normFirst {
		fin = attnGrow(&st.hbuf, m*D)
		layerNormRows(fin, attn, D, eps, norms[2], norms[3])
	}
	hid := attnGrow(&st.fbuf, m*F)
	// The activation is the first linear's epilogue (vectorised gelu,
	// or relu as a clamp), not a scalar pass of its own.
	act := linearAct{clamp: gemm.Clamp{On: true, Lo: 0, Hi: float32(math.Inf(1))}}
	if useGelu {
		act = linearAct{f: actGelu}
	}
	if err := linearRun(p.Scratch, m, F, D, gemm.Mat{Data: fin, RS: D, CS: 1}, w1, ts[15], pw.ffn1, pw.ffn1W, hid, act); err != nil {
		return Errorf("ffn 1: %v", err)
	}
	o := out.F32Contig()
	if err := linearRun(p.Scratch, m, D, F, gemm.Mat{Data: hid, RS: F, CS: 1}, w2, ts[17], pw.ffn2, pw.ffn2W, o, linearAct{}); err != nil {
		return Errorf("ffn 2: %v", err)
	}
	for i, v := range attn {
		o[i] += v
	}
	if !normFirst {
		layerNormRows(o, o, D, eps, norms[2], norms[3])
	}
	return nil
}

// ---------------------------------------------------------------- _masked_softmax

func maskedSoftmaxKernel(p *ProcessedNode) error {
	x := p.Tensor(0)
	mk := p.Tensor(1)
	if x == nil || mk == nil {
		return Errorf("_masked_softmax: expected tensors, got %s and %s", p.Input(0).Kind(), p.Input(1).Kind())
	}
	if !sameInts(x.Sizes(), mk.Sizes()) {
		return Errorf("Mask shape should match input shape: input %v, mask %v", x.Sizes(), mk.Sizes())
	}
	if mk.DType() != ivalue.Bool {
		return Errorf("Mask should be a boolean tensor, got %s", mk.DType())
	}
	typeSet := !p.IsNone(3)
	var maskType int64
	if typeSet {
		maskType = p.Int(3)
	}
	if err := maskTypeCheck(maskType, typeSet); err != nil {
		return err
	}
	if x.DType() != ivalue.Float32 && x.DType() != ivalue.Float64 {
		return Errorf("\"masked_softmax\" not implemented for '%s'", x.DType().TorchName())
	}
	d := x.Dim() - 1
	if !p.IsNone(2) {
		var err error
		if d, err = ewWrapDim(p.Int(2), x.Dim()); err != nil {
			return err
		}
	}
	d = max(d, 0)
	st := mhaStateOf(p)
	for i, t := range [2]*ivalue.Tensor{x, mk} {
		if st.cbuf[i] == nil {
			st.cbuf[i] = &ivalue.Tensor{}
		}
		if !t.IsContiguous() {
			st.cbuf[i].Resize(t.DType(), t.Sizes())
			ivalue.CopyInto(st.cbuf[i], t)
		}
	}
	xc, mc := x, mk
	if !x.IsContiguous() {
		xc = st.cbuf[0]
	}
	if !mk.IsContiguous() {
		mc = st.cbuf[1]
	}
	out := p.OutTensor(0)
	out.Resize(x.DType(), x.Sizes())
	n, inner := 1, 1
	if x.Dim() > 0 {
		n = x.Size(d)
		for _, s := range x.Sizes()[d+1:] {
			inner *= s
		}
	}
	if out.Numel() == 0 {
		return nil
	}
	outer := out.Numel() / (n * inner)
	mb := mc.BContig()
	if x.DType() == ivalue.Float32 {
		maskedSoftmaxLines(out.F32Contig(), xc.F32Contig(), mb, outer, n, inner)
	} else {
		maskedSoftmaxLines(out.F64Contig(), xc.F64Contig(), mb, outer, n, inner)
	}
	return nil
}

func maskedSoftmaxLines[T float32 | float64](o, x []T, m []bool, outer, n, inner int) {
	for j := 0; j < outer; j++ {
		for in := 0; in < inner; in++ {
			s := j*n*inner + in
			attnSoftmax(o, s, inner, x, s, inner, m, s, inner, n)
		}
	}
}

// ---------------------------------------------------------------- _transform_bias_rescale_qkv

func transformBiasRescaleKernel(p *ProcessedNode) error {
	qkv, err := gemmInput(p, 0, "qkv")
	if err != nil {
		return err
	}
	bias, err := gemmInput(p, 1, "qkv_bias")
	if err != nil {
		return err
	}
	H := int(p.Int(2))
	if qkv.Dim() != 3 {
		return Errorf("_transform_bias_rescale_qkv: expected a 3-d qkv [B, T, 3D], got sizes %v", qkv.Sizes())
	}
	B, T, D3 := qkv.Size(0), qkv.Size(1), qkv.Size(2)
	D := D3 / 3
	if H <= 0 || D%H != 0 {
		return Errorf("Expected D %% num_head == 0 to be true, but got false (D %d, num_head %d)", D, H)
	}
	if D3%3 != 0 {
		return Errorf("Expected _3D %% 3 == 0 to be true, but got false (_3D %d)", D3)
	}
	if bias.Numel() < D3 {
		return Errorf("qkv_bias: expected %d elements, got sizes %v", D3, bias.Sizes())
	}
	st := mhaStateOf(p)
	x := attnContig(qkv, &st.xbuf)
	bv := attnContig(bias, &st.pbuf[0])
	dh := D / H
	scale := float32(1 / float64(float32(math.Sqrt(float64(dh)))))
	st.shape = append(st.shape[:0], B, H, T, dh)
	var outs [3][]float32
	for c := range outs {
		t := p.OutTensor(c)
		t.Resize(ivalue.Float32, st.shape)
		outs[c] = t.F32Contig()
	}
	for b := 0; b < B; b++ {
		for t := 0; t < T; t++ {
			row := x[(b*T+t)*D3 : (b*T+t+1)*D3]
			for h := 0; h < H; h++ {
				o := ((b*H+h)*T + t) * dh
				for c := 0; c < 3; c++ {
					src := row[c*D+h*dh : c*D+h*dh+dh]
					bb := bv[c*D+h*dh : c*D+h*dh+dh]
					dst := outs[c][o : o+dh]
					for j := range dst {
						v := src[j] + bb[j]
						if c == 0 {
							v *= scale
						}
						dst[j] = v
					}
				}
			}
		}
	}
	return nil
}
