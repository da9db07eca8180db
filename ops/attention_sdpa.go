package ops

import (
	"math"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// aten::_scaled_dot_product_attention (F._scaled_dot_product_attention of
// PyTorch 1.13; on CPU always its math path): q and k each divided by
// sqrt(sqrt(E)), attn = softmax(q k^T + mask) along the last dim, where
// a bool mask keeps its true positions (the others get -inf), a float
// mask is added, and is_causal keeps j <= i; the result is attn v, and
// attn itself is the second output whatever need_attn_weights says.
// Dropout draws random numbers (PyTorch applies it even in eval), so
// dropout_p > 0 is an error.

const (
	sdpaSchema     = "aten::_scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, float dropout_p=0., bool need_attn_weights=False, bool is_causal=False) -> (Tensor, Tensor)"
	sdpaMathSchema = "aten::_scaled_dot_product_attention_math(Tensor query, Tensor key, Tensor value, Tensor? attn_mask=None, float dropout_p=0., bool need_attn_weights=False, bool is_causal=False) -> (Tensor, Tensor)"
)

func init() {
	for op, schema := range map[string]string{
		"aten::_scaled_dot_product_attention":      sdpaSchema,
		"aten::_scaled_dot_product_attention_math": sdpaMathSchema,
	} {
		RegisterOut(op, func(n *graph.Node) Kernel {
			if !n.Matches(schema) {
				return nil
			}
			return sdpaKernel
		})
	}
}

type sdpaState struct {
	qs, ks, kt, mcast *ivalue.Tensor
	ints              []int
	mbuf              []float32
	gs                gemmState
}

func sdpaKernel(p *ProcessedNode) error {
	var ts [3]*ivalue.Tensor
	for i, what := range [3]string{"query", "key", "value"} {
		t, err := gemmInput(p, i, what)
		if err != nil {
			return err
		}
		ts[i] = t
	}
	q, k, v := ts[0], ts[1], ts[2]
	if q.Dim() < 2 || k.Dim() < 2 {
		return Errorf("_scaled_dot_product_attention: expected query and key of at least 2 dims, got sizes %v and %v", q.Sizes(), k.Sizes())
	}
	if dp := p.Float(4); dp > 0 {
		return Errorf("_scaled_dot_product_attention: dropout_p %g > 0 draws random numbers (PyTorch applies dropout even in eval); not supported", dp)
	}
	causal := p.Bool(6)
	var mask *ivalue.Tensor
	if !p.IsNone(3) {
		if mask = p.Tensor(3); mask == nil {
			return Errorf("attn_mask: expected a Tensor, got %s", p.Input(3).Kind())
		}
		if causal {
			return Errorf("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
		}
	}
	st, _ := p.State.(*sdpaState)
	if st == nil {
		st = &sdpaState{qs: &ivalue.Tensor{}, ks: &ivalue.Tensor{}, kt: &ivalue.Tensor{}}
		p.State = st
	}
	s := float32(math.Sqrt(math.Sqrt(float64(q.Size(-1)))))
	for _, c := range [2]struct{ src, dst *ivalue.Tensor }{{q, st.qs}, {k, st.ks}} {
		c.dst.Resize(ivalue.Float32, c.src.Sizes())
		d := c.dst.F32Contig()
		gemmCopyContig(d, c.src)
		for i := range d {
			d[i] /= s
		}
	}
	// k^T: the last two dims of the scaled k swapped, a view.
	kd := k.Dim()
	st.ints = append(append(st.ints[:0], st.ks.Sizes()...), st.ks.Strides()...)
	sz, str := st.ints[:kd], st.ints[kd:]
	sz[kd-2], sz[kd-1] = sz[kd-1], sz[kd-2]
	str[kd-2], str[kd-1] = str[kd-1], str[kd-2]
	st.kt.SetView(st.ks, 0, sz, str)
	attn := p.OutTensor(1)
	if err := matmulRun(p.Scratch, st.qs, st.kt, attn, &st.gs); err != nil {
		return err
	}
	a := attn.F32Contig()
	L, S := attn.Size(-2), attn.Size(-1)
	ninf := float32(math.Inf(-1))
	if causal && L*S > 0 {
		for base := 0; base < len(a); base += L * S {
			for i := 0; i < L; i++ {
				row := a[base+i*S : base+(i+1)*S]
				for j := i + 1; j < S; j++ {
					row[j] += ninf
				}
			}
		}
	}
	if mask != nil {
		if !attnBroadcastsTo(mask.Sizes(), attn.Sizes()) {
			return Errorf("attn_mask: sizes %v do not broadcast to the attention's %v", mask.Sizes(), attn.Sizes())
		}
		mf, err := castScratch(mask, ivalue.Float32, &st.mcast)
		if err != nil {
			return err
		}
		m := attnGrow(&st.mbuf, len(a))
		attnFillBroadcast(m, attn.Sizes(), mf)
		if mask.DType() == ivalue.Bool {
			for i, x := range m {
				if x == 0 {
					a[i] += ninf
				}
			}
		} else {
			for i, x := range m {
				a[i] += x
			}
		}
	}
	if S > 0 {
		for base := 0; base < len(a); base += S {
			attnSoftmaxRow32(a[base:base+S], a[base:base+S])
		}
	}
	return matmulRun(p.Scratch, attn, v, p.OutTensor(0), &st.gs)
}
