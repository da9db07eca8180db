package ops

import (
	"math"
	"unsafe"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops/gemm"
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
	plane []float32 // in place: one output plane computed aside
	xcopy []float32 // in place, input not in plain planes: its copy
	split poolSplit // max pooling's planes across the team
}

// poolSplit is a max pooling's output planes shared out across the team
// (when no plane overlaps the input, so any order works).
type poolSplit struct {
	splitter
	in poolInput
	q  poolParams
	o  []float32
	op int // floats per output plane
	fn func(lo, hi int)
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
	return poolInputOf(x, what)
}

// poolInputOf is a pooling's input x, 3-d or 4-d float32.
func poolInputOf(x *ivalue.Tensor, what string) (poolInput, error) {
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

// poolParamsRead reads a pooling's kernel_size, stride, padding,
// dilation (hasDil) and ceil_mode, inputs first on, and its output
// size over in.
func poolParamsRead(p *ProcessedNode, first int, in *poolInput, st *poolState, op string, hasDil bool) (poolParams, error) {
	var q poolParams
	var err error
	if q.kh, q.kw, err = poolPair(p, first, st, op, "kernel_size", 0, 0, false); err != nil {
		return q, err
	}
	if q.sh, q.sw, err = poolPair(p, first+1, st, op, "stride", q.kh, q.kw, true); err != nil {
		return q, err
	}
	if q.ph, q.pw, err = poolPair(p, first+2, st, op, "padding", 0, 0, false); err != nil {
		return q, err
	}
	q.dh, q.dw = 1, 1
	ceilIdx := first + 3
	if hasDil {
		if q.dh, q.dw, err = poolPair(p, first+3, st, op, "dilation", 1, 1, false); err != nil {
			return q, err
		}
		ceilIdx = first + 4
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
	q, err := poolParamsRead(p, 1, &in, st, "max_pool2d", true)
	if err != nil {
		return err
	}
	o := poolOutput(p, 0, &in, q.oh, q.ow, ivalue.Float32, st).F32Contig()
	maxPoolRun(p.Scratch, st, &in, &q, o)
	return nil
}

// maxPoolRun max-pools in into o (laid out [n,] c, q.oh, q.ow), which may
// overlap it, across sc's team where the planes are apart.
func maxPoolRun(sc *gemm.Scratch, st *poolState, inp *poolInput, qp *poolParams, o []float32) {
	in, q := *inp, *qp
	ord := poolPlan(st, &in, o, q.oh*q.ow)
	op := q.oh * q.ow
	if sc.Team() != nil && ord == planesApart && op > 0 {
		sp := &st.split
		if sp.fn == nil {
			sp.fn = func(lo, hi int) {
				for i := lo; i < hi; i++ {
					maxPoolPlane(&sp.in, &sp.q, sp.in.planeBase(i), sp.o[i*sp.op:(i+1)*sp.op])
				}
			}
		}
		sp.in, sp.q, sp.o, sp.op = in, q, o, op
		sp.run(sc, len(o)/op, 1, len(o)*q.kh*q.kw, sp.fn)
		sp.in.data, sp.o = nil, nil
		return
	}
	planesRun(o, op, ord, in.planeAddr(), in.h*in.w, &st.plane, func(i int, dst []float32) {
		maxPoolPlane(&in, &q, in.planeBase(i), dst)
	})
}

// maxPoolPlane computes one output plane from the input plane at base.
func maxPoolPlane(in *poolInput, q *poolParams, base int, dst []float32) {
	if q.dh == 1 && q.dw == 1 && (in.sW == 1 || in.w == 1) {
		maxPoolPlaneRows(in, q, base, dst)
		return
	}
	negInf := float32(math.Inf(-1))
	k := 0
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
			dst[k] = m
			k++
		}
	}
}

// maxPoolPlaneRows is maxPoolPlane for unit dilation and contiguous
// rows: each output row takes, from each input row its window covers, a
// running max over slices, so the columns whose window lies inside the
// row need no bounds tests (2x2 stride 2, the common case, is a loop of
// pairs). Border columns (padding) take the clipped window.
func maxPoolPlaneRows(in *poolInput, q *poolParams, base int, dst []float32) {
	if useAVX2 && in.w <= maxPoolVecW {
		maxPoolPlaneVec(in, q, base, dst)
		return
	}
	negInf := float32(math.Inf(-1))
	kw, sw, pw := q.kw, q.sw, q.pw
	lo, hi := poolInsideCols(q, in.w)
	for oh := 0; oh < q.oh; oh++ {
		out := dst[oh*q.ow : (oh+1)*q.ow]
		for i := range out {
			out[i] = negInf
		}
		h0 := oh*q.sh - q.ph
		for i := 0; i < q.kh; i++ {
			ih := h0 + i
			if uint(ih) >= uint(in.h) {
				continue
			}
			row := in.data[base+ih*in.sH : base+ih*in.sH+in.w]
			if kw == 2 && sw == 2 && pw == 0 {
				mid := out[lo:hi]
				r := row[:2*len(mid)]
				for ow := range mid {
					mid[ow] = max(mid[ow], max(r[2*ow], r[2*ow+1]))
				}
			} else if kw == 3 && sw == 2 && hi > lo {
				// 3x3 stride 2 (the stem of resnets and densenets): the
				// window of column ow starts at 2*ow-pw, inside.
				mid := out[lo:hi]
				r := row[2*lo-pw : 2*lo-pw+2*len(mid)+1]
				for ow := range mid {
					w := r[2*ow : 2*ow+3 : 2*ow+3]
					mid[ow] = max(mid[ow], max(max(w[0], w[1]), w[2]))
				}
			} else {
				for ow := lo; ow < hi; ow++ {
					m := out[ow]
					for _, v := range row[ow*sw-pw : ow*sw-pw+kw] {
						m = max(m, v)
					}
					out[ow] = m
				}
			}
			maxPoolEdges(out, row, lo, hi, kw, sw, pw)
		}
	}
}

// poolInsideCols is the range [lo, hi) of output columns whose window
// [ow*sw-pw, +kw) lies inside an input row of w columns; the columns
// either side take the clipped window.
func poolInsideCols(q *poolParams, w int) (lo, hi int) {
	lo = min((q.pw+q.sw-1)/q.sw, q.ow)
	hi = max(lo, min(q.ow, (w-q.kw+q.pw)/q.sw+1))
	if w-q.kw+q.pw < 0 {
		hi = lo
	}
	return lo, hi
}

// maxPoolVecW is the widest input row maxPoolPlaneVec takes: its row
// buffers live on the stack (a split pooling runs it on several
// goroutines at once).
const maxPoolVecW = 1024

// maxPoolPlaneVec is maxPoolPlaneRows in vector passes over whole rows:
// per output row, the running max of the input rows its windows cover
// (max32, in place over one row), then the windows along that row: at
// stride 2 with 2- or 3-wide windows the row is dealt into its even and
// odd elements, so that the windows are two or three max32 passes; else
// a loop over the row. The clipped windows at the borders take the
// loop. NaN wins everywhere, as in PyTorch.
func maxPoolPlaneVec(in *poolInput, q *poolParams, base int, dst []float32) {
	if useAVX2 && q.sw == 2 && (q.kw == 2 || q.kw == 3) && q.kh <= 3 {
		maxPoolPlaneS2(in, q, base, dst)
		return
	}
	var buf [2 * maxPoolVecW]float32
	t := buf[:in.w]
	half := (in.w + 1) / 2
	ev, od := buf[maxPoolVecW:maxPoolVecW+half], buf[maxPoolVecW+half:maxPoolVecW+2*half]
	negInf := float32(math.Inf(-1))
	kw, sw, pw := q.kw, q.sw, q.pw
	lo, hi := poolInsideCols(q, in.w)
	for oh := 0; oh < q.oh; oh++ {
		out := dst[oh*q.ow : (oh+1)*q.ow]
		h0 := oh*q.sh - q.ph
		rows := 0
		for i := 0; i < q.kh; i++ {
			ih := h0 + i
			if uint(ih) >= uint(in.h) {
				continue
			}
			row := in.data[base+ih*in.sH : base+ih*in.sH+in.w]
			if rows == 0 {
				copy(t, row)
			} else {
				max32(t, row)
			}
			rows++
		}
		if rows == 0 {
			for i := range out {
				out[i] = negInf
			}
			continue
		}
		mid := out[lo:hi]
		n := len(mid)
		switch {
		case n > 0 && sw == 2 && (kw == 2 || kw == 3):
			// Window ow starts at u[2*(ow-lo)]: its elements are e[j],
			// o[j] (and e[j+1]).
			u := t[2*lo-pw:]
			ne := n + kw - 2
			gemm.Deal2(ev[:ne], od[:n], u)
			copy(mid, ev[:n])
			max32(mid, od[:n])
			if kw == 3 {
				max32(mid, ev[1:n+1])
			}
		default:
			for j := range mid {
				a := (lo+j)*sw - pw
				m := t[a]
				for _, v := range t[a+1 : a+kw] {
					m = max(m, v)
				}
				mid[j] = m
			}
		}
		for _, e := range [2][]float32{out[:lo], out[hi:]} {
			for i := range e {
				e[i] = negInf
			}
		}
		maxPoolEdges(out, t, lo, hi, kw, sw, pw)
	}
}

// maxPoolPlaneS2 is maxPoolPlaneVec, with AVX2, for windows of at most 3 rows and
// 2 or 3 columns at column stride 2 (the stems of resnets, densenets and
// shufflenets, squeezenet's pools, VGG's 2x2 ones): the general path's
// separate passes cost more in calls than in arithmetic on rows this
// short, so each run of output rows whose windows cover the same number
// of input rows is one call of maxPoolS2RowsAVX2, straight from the
// input. Columns whose windows the padding clips take maxPoolEdges.
func maxPoolPlaneS2(in *poolInput, q *poolParams, base int, dst []float32) {
	negInf := float32(math.Inf(-1))
	lo, hi := poolInsideCols(q, in.w)
	// window returns output row oh's first input row and row count.
	window := func(oh int) (int, int) {
		h0 := oh*q.sh - q.ph
		r0 := max(h0, 0)
		return r0, max(0, min(h0+q.kh, in.h)-r0)
	}
	a := 2*lo - q.pw
	for oh := 0; oh < q.oh; {
		r0, nr := window(oh)
		end := oh + 1
		for end < q.oh {
			r, c := window(end)
			if c != nr || r != r0+(end-oh)*q.sh {
				break
			}
			end++
		}
		if nr == 0 {
			for i := range dst[oh*q.ow : end*q.ow] {
				dst[oh*q.ow+i] = negInf
			}
			oh = end
			continue
		}
		if hi > lo {
			n, vin := hi-lo, in.w-a
			full := min(n/8, (vin-2*(q.kw-2))/16)
			d1, d2 := 0, 0
			if nr >= 2 {
				d1 = 4 * in.sH
			}
			if nr == 3 {
				d2 = 4 * in.sH
			}
			// Bounds: the last output row's first element, and its
			// last input row's last column.
			_ = dst[(end-1)*q.ow+hi-1]
			_ = in.data[base+(r0+(end-1-oh)*q.sh+nr-1)*in.sH+in.w-1]
			maxPoolS2RowsAVX2(&dst[oh*q.ow+lo], 4*q.ow, &in.data[base+r0*in.sH+a], 4*q.sh*in.sH, d1, d2,
				end-oh, n, full, vin, q.kw-2)
		}
		if lo > 0 || hi < q.ow {
			// The clipped windows, each whole at once: per row and
			// window only its one or two columns.
			for o := oh; o < end; o++ {
				rb := base + (r0+(o-oh)*q.sh)*in.sH
				for ow := 0; ow < q.ow; ow++ {
					if ow == lo {
						if ow = hi; ow >= q.ow {
							break
						}
					}
					a, b := max(ow*2-q.pw, 0), min(ow*2-q.pw+q.kw, in.w)
					m := negInf
					for i := 0; i < nr; i++ {
						for _, v := range in.data[rb+i*in.sH+a : rb+i*in.sH+max(a, b)] {
							m = max(m, v)
						}
					}
					dst[o*q.ow+ow] = m
				}
			}
		}
		oh = end
	}
}

// maxPoolEdges sets out[ow] = max(out[ow], row's part of window ow) for
// the output columns outside [lo, hi), whose windows the padding clips.
func maxPoolEdges(out, row []float32, lo, hi, kw, sw, pw int) {
	for ow := 0; ow < len(out); ow++ {
		if ow == lo {
			ow = hi
			if ow >= len(out) {
				break
			}
		}
		a, b := max(ow*sw-pw, 0), min(ow*sw-pw+kw, len(row))
		m := out[ow]
		for _, v := range row[a:max(a, b)] {
			m = max(m, v)
		}
		out[ow] = m
	}
}

// max32 sets dst[i] = max(dst[i], src[i]), a NaN in either winning.
func max32(dst, src []float32) {
	n := len(dst)
	src = src[:n]
	i := 0
	if useAVX2 && n >= 8 {
		i = n &^ 7
		max32AVX2(&dst[0], &src[0], i)
	}
	for ; i < n; i++ {
		dst[i] = max(dst[i], src[i])
	}
}

func avgPool2dKernel(p *ProcessedNode) error {
	in, err := poolRead(p, "avg_pool2d input")
	if err != nil {
		return err
	}
	st := poolStateOf(p)
	q, err := poolParamsRead(p, 1, &in, st, "avg_pool2d", false)
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
	ord := poolPlan(st, &in, o, q.oh*q.ow)
	if useAVX512 && avgPool2x2Fits(&in, &q) && in.plain() && in.h == 2*q.oh && in.w == 2*q.ow && len(o) > 0 &&
		(ord == planesApart || ord == planesForward) {
		// Every plane's rows as one plane: output row r reads input rows
		// 2r and 2r+1 across planes, one call (densenet's 7x7
		// transitions are 1024 planes of 7 rows). Forward, no output
		// meets an input not yet read.
		all := q
		all.oh = len(o) / q.ow
		avgPool2x2(&in, &all, in.off, divisor, o)
		return nil
	}
	planesRun(o, q.oh*q.ow, ord, in.planeAddr(), in.h*in.w, &st.plane, func(i int, dst []float32) {
		avgPoolPlane(&in, &q, in.planeBase(i), includePad, divisor, dst)
	})
	return nil
}

// avgPool2x2Fits reports whether avgPool2x2 takes q over in: a 2x2
// window at stride 2, unpadded, rows contiguous, every window inside.
func avgPool2x2Fits(in *poolInput, q *poolParams) bool {
	return q.kh == 2 && q.kw == 2 && q.sh == 2 && q.sw == 2 && q.ph == 0 && q.pw == 0 && in.sW == 1 &&
		2*q.oh <= in.h && 2*q.ow <= in.w
}

// avgPoolPlane computes one output plane from the input plane at base.
func avgPoolPlane(in *poolInput, q *poolParams, base int, includePad bool, divisor int, dst []float32) {
	if avgPool2x2Fits(in, q) {
		avgPool2x2(in, q, base, divisor, dst)
		return
	}
	avgPoolPlaneAny(in, q, base, includePad, divisor, dst)
}

// avgPoolPlaneAny is avgPoolPlane for any window, stride and padding.
func avgPoolPlaneAny(in *poolInput, q *poolParams, base int, includePad bool, divisor int, dst []float32) {
	k := 0
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
				dst[k] = 0
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
			dst[k] = s / float32(div)
			k++
		}
	}
}

// avgPool2x2 is avgPoolPlane for densenet's transitions and the like: a
// 2x2 window at stride 2, unpadded, every window inside the image, rows
// contiguous. The general loop spent 18 ns an output finding each
// window's bounds; this one sums the same four values in the same order
// ((a+b)+c)+d and divides by the same divisor, so the same bits.
func avgPool2x2(in *poolInput, q *poolParams, base, divisor int, dst []float32) {
	div := float32(4)
	if divisor != 0 {
		div = float32(divisor)
	}
	if useAVX512 && q.ow > 0 && q.oh > 0 {
		// The same sums and division, sixteen outputs a step.
		_ = in.data[base+(2*q.oh-1)*in.sH+2*q.ow-1]
		_ = dst[q.oh*q.ow-1]
		avgPool2x2RowsAVX512(&dst[0], &in.data[base], q.oh, q.ow, in.sH, div)
		return
	}
	for oh := 0; oh < q.oh; oh++ {
		r0 := in.data[base+2*oh*in.sH:][:2*q.ow]
		r1 := in.data[base+(2*oh+1)*in.sH:][:2*q.ow]
		out := dst[oh*q.ow : oh*q.ow+q.ow]
		for ow := range out {
			out[ow] = (((r0[2*ow] + r0[2*ow+1]) + r1[2*ow]) + r1[2*ow+1]) / div
		}
	}
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
	ord := poolPlan(st, &in, o, oh*ow)
	if oh == 1 && ow == 1 && useAVX512 && in.plain() && len(o) > 0 &&
		(ord == planesApart || ord == planesForward) {
		// See [Channel rows]. Forward over the input, no mean meets a
		// later row, and each row is read before its mean is stored.
		meanRowsAVX512(&o[0], &in.data[in.off], len(o), in.h*in.w)
		return nil
	}
	planesRun(o, oh*ow, ord, in.planeAddr(), in.h*in.w, &st.plane, func(i int, dst []float32) {
		adaptiveAvgPlane(&in, oh, ow, in.planeBase(i), dst)
	})
	return nil
}

// adaptiveAvgPlane computes one output plane from the input plane at base.
func adaptiveAvgPlane(in *poolInput, oh, ow, base int, dst []float32) {
	if oh == 1 && ow == 1 && (in.w == 1 || in.sW == 1) && (in.h == 1 || in.sH == in.w) {
		// A global pooling over a contiguous plane (squeeze-and-excite
		// blocks, classifier heads): one sum over many accumulators,
		// where a single running sum waits on each addition's latency.
		dst[0] = sumPlane(in.data[base:base+in.h*in.w]) / float32(in.h*in.w)
		return
	}
	k := 0
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
			dst[k] = s / float32((h1-h0)*(w1-w0))
			k++
		}
	}
}

// sumPlane is the sum of x: 32 elements at a time in four vectors of
// partial sums under the assembly (sum32AVX2), the rest (all of it
// without the assembly) by sum8.
func sumPlane(x []float32) float32 {
	n := len(x) &^ 31
	if !useAVX2 || n == 0 {
		return sum8(x)
	}
	return sum32AVX2(&x[0], n) + sum8(x[n:])
}

// sum8 is the sum of x over eight interleaved partial sums, added
// pairwise at the end.
func sum8(x []float32) float32 {
	var a [8]float32
	i := 0
	for ; i+8 <= len(x); i += 8 {
		v := (*[8]float32)(x[i : i+8])
		a[0] += v[0]
		a[1] += v[1]
		a[2] += v[2]
		a[3] += v[3]
		a[4] += v[4]
		a[5] += v[5]
		a[6] += v[6]
		a[7] += v[7]
	}
	for j := 0; i < len(x); i, j = i+1, j+1 {
		a[j] += x[i]
	}
	return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]))
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

// ---- outputs over their input ----
//
// An overwrite rule (see OverwriteRule) lets the runtime place a pooling or
// depthwise convolution's output at the first byte of its input. These
// kernels compute output plane i (one image, one channel) from input
// plane i alone, so they stay exact by walking the planes in an order in
// which no plane's output reaches an input plane not yet read, and
// computing a plane whose output overlaps its own input plane aside.

// planeOrder says how to write output planes that may overlap the input.
type planeOrder uint8

const (
	planesApart    planeOrder = iota // no overlap: planes in order, in place
	planesForward                    // first to last
	planesBackward                   // last to first
	planesCopy                       // no order works: copy the input aside first
)

// f32Addr is the address of s's first element, for overlap tests.
func f32Addr(s []float32) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(s))) }

// rangesOverlap reports whether byte ranges [a0, a1) and [b0, b1) meet.
func rangesOverlap(a0, a1, b0, b1 uintptr) bool { return a0 < a1 && b0 < b1 && a0 < b1 && b0 < a1 }

// planePlan picks the order for writing o (planes of op floats) when the
// input spans bytes [xlo, xhi) and, if plain, is n contiguous planes of
// ip floats from xlo. Forward works when no output plane meets a later
// input plane (output planes no larger than input planes, same start);
// backward when none meets an earlier one (larger output planes).
func planePlan(o []float32, op int, xlo, xhi uintptr, n, ip int, plain bool) planeOrder {
	if len(o) == 0 || op == 0 {
		return planesApart
	}
	olo := f32Addr(o)
	if !rangesOverlap(olo, olo+uintptr(len(o))*4, xlo, xhi) {
		return planesApart
	}
	if !plain {
		return planesCopy
	}
	fwd, bwd := true, true
	for i := 0; i < n && (fwd || bwd); i++ {
		a := olo + uintptr(i*op)*4
		b := a + uintptr(op)*4
		if fwd && rangesOverlap(a, b, xlo+uintptr((i+1)*ip)*4, xhi) {
			fwd = false
		}
		if bwd && rangesOverlap(a, b, xlo, xlo+uintptr(i*ip)*4) {
			bwd = false
		}
	}
	switch {
	case fwd:
		return planesForward
	case bwd:
		return planesBackward
	}
	return planesCopy
}

// planesRun calls plane(i, dst) to compute each output plane i of o in
// order ord (planesCopy must have been resolved to planesApart). A plane
// whose output overlaps its own input plane (ip floats at xlo+i*ip) is
// computed into *buf (grown once, then reused) and copied into place.
// plane must not retain dst.
func planesRun(o []float32, op int, ord planeOrder, xlo uintptr, ip int, buf *[]float32, plane func(i int, dst []float32)) {
	if op == 0 {
		return
	}
	n := len(o) / op
	for k := 0; k < n; k++ {
		i := k
		if ord == planesBackward {
			i = n - 1 - k
		}
		dst := o[i*op : (i+1)*op]
		if ord == planesForward || ord == planesBackward {
			a := f32Addr(dst)
			in := xlo + uintptr(i*ip)*4
			if rangesOverlap(a, a+uintptr(op)*4, in, in+uintptr(ip)*4) {
				if cap(*buf) < op {
					*buf = make([]float32, op)
				}
				s := (*buf)[:op]
				plane(i, s)
				copy(dst, s)
				continue
			}
		}
		plane(i, dst)
	}
}

// planeBase is the storage index of plane i's first element.
func (in *poolInput) planeBase(i int) int {
	return in.off + i/in.c*in.sN + i%in.c*in.sC
}

// planeAddr is the address of the input's first element.
func (in *poolInput) planeAddr() uintptr {
	return f32Addr(in.data) + uintptr(in.off)*4
}

// plain reports whether the planes lie contiguous, one after the other.
func (in *poolInput) plain() bool {
	return (in.w == 1 || in.sW == 1) && (in.h == 1 || in.sH == in.w) &&
		(in.c == 1 || in.sC == in.h*in.w) && (in.n == 1 || in.sN == in.c*in.h*in.w)
}

// poolPlan returns the order for writing o over the input; when no order
// works it copies the input into the state and points in at the copy.
func poolPlan(st *poolState, in *poolInput, o []float32, op int) planeOrder {
	if len(o) == 0 {
		return planesApart
	}
	last := in.off + (in.n-1)*in.sN + (in.c-1)*in.sC + (in.h-1)*in.sH + (in.w-1)*in.sW
	xlo := in.planeAddr()
	xhi := f32Addr(in.data) + uintptr(last+1)*4
	ord := planePlan(o, op, xlo, xhi, in.n*in.c, in.h*in.w, in.plain())
	if ord != planesCopy {
		return ord
	}
	need := in.n * in.c * in.h * in.w
	if cap(st.xcopy) < need {
		st.xcopy = make([]float32, need)
	}
	xc := st.xcopy[:need]
	k := 0
	for n := 0; n < in.n; n++ {
		for c := 0; c < in.c; c++ {
			for h := 0; h < in.h; h++ {
				row := in.off + n*in.sN + c*in.sC + h*in.sH
				for w := 0; w < in.w; w++ {
					xc[k] = in.data[row+w*in.sW]
					k++
				}
			}
		}
	}
	in.data, in.off = xc, 0
	in.sW, in.sH, in.sC, in.sN = 1, in.w, in.h*in.w, in.c*in.h*in.w
	return planesApart
}
