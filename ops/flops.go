package ops

import "github.com/gosr/gosr/ivalue"

// FLOPs is the floating-point work of one execution of p, counted after
// it ran (from its inputs' and outputs' shapes) the way compute-bound
// engines report it: 2 per multiply-add of the convolutions and matrix
// products, which are nearly all of a vision model's or a transformer's
// arithmetic. Elementwise ops, pooling, normalisation and softmax count
// 0, as do nodes whose tensors are not there (a node not yet run).
//
// It is what `srbench ops` and `srbench compare` divide by time for
// GFLOP/s; the same count for every engine, so the ratios hold.
func FLOPs(p *ProcessedNode) int64 {
	if p.Node == nil || len(p.Out) == 0 {
		return 0
	}
	in := func(i int) *ivalue.Tensor {
		if i >= len(p.In) || !p.Values[p.In[i]].IsTensor() {
			return nil
		}
		return p.Values[p.In[i]].Tensor()
	}
	out := (*ivalue.Tensor)(nil)
	if p.Values[p.Out[0]].IsTensor() {
		out = p.Values[p.Out[0]].Tensor()
	}
	if out == nil {
		return 0
	}
	// lastDim is t's innermost size: a matrix product's K.
	lastDim := func(t *ivalue.Tensor) int64 {
		if t == nil || t.Dim() == 0 {
			return 0
		}
		return int64(t.Size(t.Dim() - 1))
	}
	// window is a convolution weight's elements per output element:
	// in-channels per group times the kernel's extent.
	window := func(w *ivalue.Tensor) int64 {
		if w == nil || w.Dim() < 2 {
			return 0
		}
		n := int64(1)
		for _, d := range w.Sizes()[1:] {
			n *= int64(d)
		}
		return n
	}
	numel := int64(out.Numel())
	switch p.Node.Kind {
	case "aten::conv1d", "aten::conv2d", "aten::conv3d", "gosr::conv_clamp", "gosr::conv_add_clamp", "gosr::conv_act",
		"gosr::conv_scaled", "gosr::conv_clamp_scaled", "gosr::conv_add_clamp_scaled", "gosr::conv_act_scaled", "gosr::conv_nchwc":
		return 2 * numel * window(in(1))
	case "gosr::conv_clamp_max_pool2d":
		// The convolution's output, not the pooled one: the run noted
		// its size.
		if st, ok := p.State.(*convState); ok && st.pooled != nil {
			return 2 * st.pooled.convNumel * window(in(1))
		}
		return 0
	case "aten::_convolution":
		if len(p.In) > 6 && p.Values[p.In[6]].Kind() == ivalue.KindBool && p.Values[p.In[6]].Bool() {
			// Transposed: each input element meets out-channels per
			// group times the kernel (the weight is in x out/g x k).
			if x := in(0); x != nil {
				return 2 * int64(x.Numel()) * window(in(1))
			}
			return 0
		}
		return 2 * numel * window(in(1))
	case "aten::conv_transpose1d", "aten::conv_transpose2d", "aten::conv_transpose3d":
		if x := in(0); x != nil {
			return 2 * int64(x.Numel()) * window(in(1))
		}
	case "aten::linear", "gosr::linear_act", "aten::mm", "aten::bmm", "aten::matmul":
		return 2 * numel * lastDim(in(0))
	case "aten::addmm", "aten::baddbmm", "aten::addmv":
		return 2 * numel * lastDim(in(1))
	case "aten::addbmm": // a sum over the batch of b1 @ b2
		if b1 := in(1); b1 != nil && b1.Dim() == 3 {
			return 2 * numel * int64(b1.Size(0)) * lastDim(b1)
		}
	case "aten::_native_multi_head_attention":
		// query [.., L, E], key and value [.., S, E]: the q, k, v and out
		// projections (E x E each) and the two products of attention,
		// QK^T and its softmax times V (L x S x E each).
		q, k := in(0), in(1)
		if q == nil || k == nil || q.Dim() < 2 || k.Dim() < 2 {
			return 0
		}
		e := lastDim(q)
		l, s := int64(q.Size(q.Dim()-2)), int64(k.Size(k.Dim()-2))
		if e == 0 || l == 0 {
			return 0
		}
		batch := int64(q.Numel()) / (l * e)
		return 2 * batch * (2*l*e*e + 2*s*e*e + 2*l*s*e)
	}
	return 0
}
