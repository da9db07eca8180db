package ops

import (
	"math"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// aten::max_pool2d, aten::avg_pool2d, aten::adaptive_avg_pool2d and
// aten::adaptive_max_pool2d on 3-d [C, H, W] or 4-d [N, C, H, W] inputs
// of any strides, with PyTorch's output-size and window formulas.

const (
	maxPool2dSchema   = "aten::max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> Tensor"
	avgPool2dSchema   = "aten::avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor"
	adaptiveAvgSchema = "aten::adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor"
	adaptiveMaxSchema = "aten::adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)"
)

type poolState struct {
	ints  []int
	shape []int
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
	reg("aten::max_pool2d", maxPool2dSchema, maxPool2dKernel)
	reg("aten::avg_pool2d", avgPool2dSchema, avgPool2dKernel)
	reg("aten::adaptive_avg_pool2d", adaptiveAvgSchema, adaptiveAvgPool2dKernel)
	reg("aten::adaptive_max_pool2d", adaptiveMaxSchema, adaptiveMaxPool2dKernel)
}

// poolInput is the input geometry, 3-d inputs as batch 1.
type poolInput struct {
	data           []float32
	off            int
	n, c, h, w     int
	sN, sC, sH, sW int
	batched        bool
}

func poolRead(p *ProcessedNode, what string) (poolInput, error) {
	x, err := gemmInput(p, 0, what)
	if err != nil {
		return poolInput{}, err
	}
	if x.Dim() != 3 && x.Dim() != 4 {
		return poolInput{}, Errorf("%s: expected a 3-d or 4-d tensor, got sizes %v", what, x.Sizes())
	}
	in := poolInput{data: x.F32(), off: x.Offset(), n: 1, batched: x.Dim() == 4}
	sz, st := x.Sizes(), x.Strides()
	d := 0
	if in.batched {
		in.n, in.sN, d = sz[0], st[0], 1
	}
	in.c, in.h, in.w = sz[d], sz[d+1], sz[d+2]
	in.sC, in.sH, in.sW = st[d], st[d+1], st[d+2]
	if in.h == 0 || in.w == 0 {
		return poolInput{}, Errorf("%s: expected non-empty spatial dims, got sizes %v", what, sz)
	}
	return in, nil
}

// poolOutput resizes output i to [n,] c, oh, ow.
func poolOutput(p *ProcessedNode, i int, in *poolInput, oh, ow int, dt ivalue.DType, st *poolState) *ivalue.Tensor {
	st.shape = st.shape[:0]
	if in.batched {
		st.shape = append(st.shape, in.n)
	}
	st.shape = append(st.shape, in.c, oh, ow)
	out := p.OutTensor(i)
	out.Resize(dt, st.shape)
	return out
}

func poolStateOf(p *ProcessedNode) *poolState {
	st, _ := p.State.(*poolState)
	if st == nil {
		st = &poolState{}
		p.State = st
	}
	return st
}

// poolPair reads an int[2] argument (one value repeats); def is used for
// an empty list when allowEmpty.
func poolPair(p *ProcessedNode, i int, st *poolState, op, arg string, defH, defW int, allowEmpty bool) (int, int, error) {
	st.ints = p.IntsInto(i, st.ints)
	switch v := st.ints; {
	case len(v) == 0 && allowEmpty:
		return defH, defW, nil
	case len(v) == 1:
		return v[0], v[0], nil
	case len(v) == 2:
		return v[0], v[1], nil
	}
	return 0, 0, Errorf("%s %s: expected 1 or 2 values, got %v", op, arg, st.ints)
}

// poolOutSize is PyTorch's pooling_output_shape.
func poolOutSize(in, k, pad, stride, dil int, ceil bool) int {
	num := in + 2*pad - dil*(k-1) - 1
	if ceil {
		num += stride - 1
	}
	out := poolFloorDiv(num, stride) + 1
	if ceil && (out-1)*stride >= in+pad {
		out--
	}
	return out
}

func poolFloorDiv(a, b int) int {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

type poolParams struct {
	kh, kw, sh, sw, ph, pw, dh, dw int
	oh, ow                         int
}

func poolParamsRead(p *ProcessedNode, in *poolInput, st *poolState, op string, hasDil bool) (poolParams, error) {
	var q poolParams
	var err error
	if q.kh, q.kw, err = poolPair(p, 1, st, op, "kernel_size", 0, 0, false); err != nil {
		return q, err
	}
	if q.sh, q.sw, err = poolPair(p, 2, st, op, "stride", q.kh, q.kw, true); err != nil {
		return q, err
	}
	if q.ph, q.pw, err = poolPair(p, 3, st, op, "padding", 0, 0, false); err != nil {
		return q, err
	}
	q.dh, q.dw = 1, 1
	ceilIdx := 4
	if hasDil {
		if q.dh, q.dw, err = poolPair(p, 4, st, op, "dilation", 1, 1, false); err != nil {
			return q, err
		}
		ceilIdx = 5
	}
	if q.kh <= 0 || q.kw <= 0 || q.sh <= 0 || q.sw <= 0 || q.dh <= 0 || q.dw <= 0 || q.ph < 0 || q.pw < 0 {
		return q, Errorf("%s: expected positive kernel_size, stride and dilation and non-negative padding", op)
	}
	if q.ph > ((q.kh-1)*q.dh+1)/2 || q.pw > ((q.kw-1)*q.dw+1)/2 {
		return q, Errorf("%s: pad should be at most half of effective kernel size, got padding [%d, %d] for kernel [%d, %d]", op, q.ph, q.pw, q.kh, q.kw)
	}
	ceil := p.Bool(ceilIdx)
	q.oh = poolOutSize(in.h, q.kh, q.ph, q.sh, q.dh, ceil)
	q.ow = poolOutSize(in.w, q.kw, q.pw, q.sw, q.dw, ceil)
	if q.oh <= 0 || q.ow <= 0 {
		return q, Errorf("%s: output size [%d, %d] is too small for input [%d, %d]", op, q.oh, q.ow, in.h, in.w)
	}
	return q, nil
}

func maxPool2dKernel(p *ProcessedNode) error {
	in, err := poolRead(p, "max_pool2d input")
	if err != nil {
		return err
	}
	st := poolStateOf(p)
	q, err := poolParamsRead(p, &in, st, "max_pool2d", true)
	if err != nil {
		return err
	}
	o := poolOutput(p, 0, &in, q.oh, q.ow, ivalue.Float32, st).F32Contig()
	negInf := float32(math.Inf(-1))
	k := 0
	for n := 0; n < in.n; n++ {
		for c := 0; c < in.c; c++ {
			base := in.off + n*in.sN + c*in.sC
			for oh := 0; oh < q.oh; oh++ {
				h0 := oh*q.sh - q.ph
				for ow := 0; ow < q.ow; ow++ {
					w0 := ow*q.sw - q.pw
					m := negInf
					for i := 0; i < q.kh; i++ {
						ih := h0 + i*q.dh
						if uint(ih) >= uint(in.h) {
							continue
						}
						row := base + ih*in.sH
						for j := 0; j < q.kw; j++ {
							iw := w0 + j*q.dw
							if uint(iw) >= uint(in.w) {
								continue
							}
							// Go's max lets NaN win, as PyTorch does, and
							// compiles without a branch to mispredict.
							m = max(m, in.data[row+iw*in.sW])
						}
					}
					o[k] = m
					k++
				}
			}
		}
	}
	return nil
}

func avgPool2dKernel(p *ProcessedNode) error {
	in, err := poolRead(p, "avg_pool2d input")
	if err != nil {
		return err
	}
	st := poolStateOf(p)
	q, err := poolParamsRead(p, &in, st, "avg_pool2d", false)
	if err != nil {
		return err
	}
	includePad := p.Bool(5)
	divisor := 0
	if !p.IsNone(6) {
		if divisor = int(p.Int(6)); divisor == 0 {
			return Errorf("avg_pool2d: divisor_override must be non-zero")
		}
	}
	o := poolOutput(p, 0, &in, q.oh, q.ow, ivalue.Float32, st).F32Contig()
	k := 0
	for n := 0; n < in.n; n++ {
		for c := 0; c < in.c; c++ {
			base := in.off + n*in.sN + c*in.sC
			for oh := 0; oh < q.oh; oh++ {
				hs := oh*q.sh - q.ph
				he := min(hs+q.kh, in.h+q.ph)
				for ow := 0; ow < q.ow; ow++ {
					ws := ow*q.sw - q.pw
					we := min(ws+q.kw, in.w+q.pw)
					poolSize := (he - hs) * (we - ws)
					h0, h1 := max(hs, 0), min(he, in.h)
					w0, w1 := max(ws, 0), min(we, in.w)
					if h0 >= h1 || w0 >= w1 {
						o[k] = 0
						k++
						continue
					}
					var s float32
					for ih := h0; ih < h1; ih++ {
						row := base + ih*in.sH
						for iw := w0; iw < w1; iw++ {
							s += in.data[row+iw*in.sW]
						}
					}
					div := divisor
					if div == 0 {
						if includePad {
							div = poolSize
						} else {
							div = (h1 - h0) * (w1 - w0)
						}
					}
					o[k] = s / float32(div)
					k++
				}
			}
		}
	}
	return nil
}

// poolAdaptiveSize reads output_size, checking it.
func poolAdaptiveSize(p *ProcessedNode, st *poolState, op string) (int, int, error) {
	oh, ow, err := poolPair(p, 1, st, op, "output_size", 0, 0, false)
	if err == nil && (oh < 0 || ow < 0) {
		err = Errorf("%s: expected non-negative output_size, got [%d, %d]", op, oh, ow)
	}
	return oh, ow, err
}

func adaptiveAvgPool2dKernel(p *ProcessedNode) error {
	in, err := poolRead(p, "adaptive_avg_pool2d input")
	if err != nil {
		return err
	}
	st := poolStateOf(p)
	oh, ow, err := poolAdaptiveSize(p, st, "adaptive_avg_pool2d")
	if err != nil {
		return err
	}
	o := poolOutput(p, 0, &in, oh, ow, ivalue.Float32, st).F32Contig()
	k := 0
	for n := 0; n < in.n; n++ {
		for c := 0; c < in.c; c++ {
			base := in.off + n*in.sN + c*in.sC
			for i := 0; i < oh; i++ {
				h0, h1 := i*in.h/oh, ((i+1)*in.h+oh-1)/oh
				for j := 0; j < ow; j++ {
					w0, w1 := j*in.w/ow, ((j+1)*in.w+ow-1)/ow
					var s float32
					for ih := h0; ih < h1; ih++ {
						row := base + ih*in.sH
						for iw := w0; iw < w1; iw++ {
							s += in.data[row+iw*in.sW]
						}
					}
					o[k] = s / float32((h1-h0)*(w1-w0))
					k++
				}
			}
		}
	}
	return nil
}

func adaptiveMaxPool2dKernel(p *ProcessedNode) error {
	in, err := poolRead(p, "adaptive_max_pool2d input")
	if err != nil {
		return err
	}
	st := poolStateOf(p)
	oh, ow, err := poolAdaptiveSize(p, st, "adaptive_max_pool2d")
	if err != nil {
		return err
	}
	o := poolOutput(p, 0, &in, oh, ow, ivalue.Float32, st).F32Contig()
	idx := poolOutput(p, 1, &in, oh, ow, ivalue.Int64, st).I64Contig()
	negInf := float32(math.Inf(-1))
	k := 0
	for n := 0; n < in.n; n++ {
		for c := 0; c < in.c; c++ {
			base := in.off + n*in.sN + c*in.sC
			for i := 0; i < oh; i++ {
				h0, h1 := i*in.h/oh, ((i+1)*in.h+oh-1)/oh
				for j := 0; j < ow; j++ {
					w0, w1 := j*in.w/ow, ((j+1)*in.w+ow-1)/ow
					m, at := negInf, h0*in.w+w0
					for ih := h0; ih < h1; ih++ {
						row := base + ih*in.sH
						for iw := w0; iw < w1; iw++ {
							if v := in.data[row+iw*in.sW]; v > m || v != v {
								m, at = v, ih*in.w+iw
							}
						}
					}
					o[k], idx[k] = m, int64(at)
					k++
				}
			}
		}
	}
	return nil
}
