package ops

import (
	"math"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// aten::upsample_{nearest,_nearest_exact}{1,2,3}d, upsample_linear1d,
// upsample_bilinear2d, upsample_bicubic2d and upsample_trilinear3d, in
// both overload families: explicit output_size with optional per-dim
// scales, and .vec (output_size or scale_factors, as F.interpolate calls
// them). Index and weight tables per spatial dim are built on the first
// run for a geometry and kept in the state; each output row is then a
// weighted sum of input rows gathered through the width table. The
// index and weight rules are PyTorch 1.13's (UpSample.h): scales in
// float32, nearest floor(dst*scale) with scale = in/out or 1/scale_factor,
// linear with the output==input shortcut and source indices clamped at
// 0, cubic (A = -0.75) with border taps clamped.

type upsampleMode uint8

const (
	upNearest upsampleMode = iota
	upNearestExact
	upLinear
	upCubic
	upLinearAA // antialiased (PIL-style support scaled on downsampling)
	upCubicAA
)

type upsampleSpec struct {
	mode  upsampleMode
	dims  int
	vec   bool
	align bool // has an align_corners argument (input 2)
}

func init() {
	type ov struct {
		op, schema string
		spec       upsampleSpec
	}
	var ovs []ov
	for _, m := range []struct {
		name  string
		mode  upsampleMode
		dims  int
		align bool
	}{
		{"upsample_nearest1d", upNearest, 1, false},
		{"upsample_nearest2d", upNearest, 2, false},
		{"upsample_nearest3d", upNearest, 3, false},
		{"_upsample_nearest_exact1d", upNearestExact, 1, false},
		{"_upsample_nearest_exact2d", upNearestExact, 2, false},
		{"_upsample_nearest_exact3d", upNearestExact, 3, false},
		{"upsample_linear1d", upLinear, 1, true},
		{"upsample_bilinear2d", upLinear, 2, true},
		{"upsample_trilinear3d", upLinear, 3, true},
		{"upsample_bicubic2d", upCubic, 2, true},
		{"_upsample_bilinear2d_aa", upLinearAA, 2, true},
		{"_upsample_bicubic2d_aa", upCubicAA, 2, true},
	} {
		scales := map[int]string{1: "float? scales=None", 2: "float? scales_h=None, float? scales_w=None",
			3: "float? scales_d=None, float? scales_h=None, float? scales_w=None"}[m.dims]
		ac, acv := "", ""
		if m.align {
			ac, acv = "bool align_corners, ", "bool align_corners, "
		}
		op := "aten::" + m.name
		base := op + "(Tensor self, SymInt[" + string(rune('0'+m.dims)) + "] output_size, " + ac + scales + ") -> Tensor"
		vec := op + ".vec(Tensor input, SymInt[]? output_size, " + acv + "float[]? scale_factors) -> Tensor"
		ovs = append(ovs, ov{op, base, upsampleSpec{m.mode, m.dims, false, m.align}},
			ov{op, vec, upsampleSpec{m.mode, m.dims, true, m.align}})
	}
	for _, o := range ovs {
		RegisterOut(o.op, func(n *graph.Node) Kernel {
			if !n.Matches(o.schema) {
				return nil
			}
			spec := o.spec
			return func(p *ProcessedNode) error { return upsampleKernel(p, spec) }
		})
	}
}

// upsampleKey is the geometry a state's tables were built for.
type upsampleKey struct {
	in, out [3]int
	str     [3]int // input strides (d, h, w)
	scale   [3]float64
	align   bool
}

// upsampleTab maps each output position of one dim to k input
// positions (pre-multiplied by the input stride) and weights.
type upsampleTab struct {
	k   int
	idx []int
	w   []float32
}

type upsampleState struct {
	ints  []int
	shape []int
	built bool
	key   upsampleKey
	tabs  [3]upsampleTab
	rows  []int // per output row: the input row offsets of its taps
	rw    []float32
	same  []bool // output row r has row r-1's taps and weights
	cache upsampleCache
}

func upsampleKernel(p *ProcessedNode, spec upsampleSpec) error {
	st, _ := p.State.(*upsampleState)
	if st == nil {
		st = &upsampleState{}
		p.State = st
	}
	x := p.Tensor(0)
	if x == nil {
		return Errorf("upsample input: expected a tensor")
	}
	if x.DType() != ivalue.Float32 {
		return Errorf("upsample input: expected float32, got %v", x.DType())
	}
	d := spec.dims
	if x.Dim() != d+2 {
		return Errorf("upsample %dd: expected a %d-d input, got sizes %v", d, d+2, x.Sizes())
	}
	var key upsampleKey
	key.in, key.out = [3]int{1, 1, 1}, [3]int{1, 1, 1}
	xs, xst := x.Sizes(), x.Strides()
	for i := 0; i < d; i++ {
		key.in[3-d+i], key.str[3-d+i] = xs[2+i], xst[2+i]
	}
	for i := range key.scale {
		key.scale[i] = -1 // none
	}
	sidx := 2 // first scale argument of the base overload
	if spec.align {
		key.align = p.Bool(2)
		sidx = 3
	}
	if spec.vec {
		sfIdx := 2
		if spec.align {
			sfIdx = 3
		}
		hasSize, hasScale := !p.IsNone(1), !p.IsNone(sfIdx)
		if hasSize == hasScale {
			return Errorf("upsample %dd: must specify exactly one of output_size and scale_factors", d)
		}
		if hasSize {
			st.ints = p.IntsInto(1, st.ints)
			if len(st.ints) != d {
				return Errorf("upsample %dd output_size: expected %d values, got %v", d, d, st.ints)
			}
			copy(key.out[3-d:], st.ints)
		} else {
			l := p.Input(sfIdx).List()
			if l == nil || len(l.Items) != d {
				return Errorf("upsample %dd scale_factors: expected %d values", d, d)
			}
			for i, it := range l.Items {
				s := it.AsFloat()
				key.scale[3-d+i] = s
				key.out[3-d+i] = int(float64(key.in[3-d+i]) * s)
			}
		}
	} else {
		st.ints = p.IntsInto(1, st.ints)
		if len(st.ints) != d {
			return Errorf("upsample %dd output_size: expected %d values, got %v", d, d, st.ints)
		}
		copy(key.out[3-d:], st.ints)
		for i := 0; i < d; i++ {
			if !p.IsNone(sidx + i) {
				key.scale[3-d+i] = p.Float(sidx + i)
			}
		}
	}
	for i := 3 - d; i < 3; i++ {
		if key.in[i] <= 0 || key.out[i] <= 0 {
			out := append([]int(nil), key.out[3-d:]...) // a copy: a slice of key would move key to the heap
			return Errorf("upsample %dd: input and output sizes should be greater than 0, got input %v and output %v", d, xs[2:], out)
		}
	}
	st.shape = append(st.shape[:0], xs[0], xs[1])
	st.shape = append(st.shape, key.out[3-d:]...)
	out := p.OutTensor(0)
	out.Resize(ivalue.Float32, st.shape)
	o := out.F32Contig()
	if !st.built || st.key != key {
		st.key, st.built = key, true
		upsampleBuild(st, &st.key, spec.mode, d) // not &key: it would escape, a heap allocation per run
	}
	nc := xs[0] * xs[1]
	if nc == 0 {
		return nil
	}
	xd := x.F32()
	oplane := key.out[0] * key.out[1] * key.out[2]
	tw := &st.tabs[2]
	ow := key.out[2]
	nrows := key.out[0] * key.out[1]
	nr := len(st.rows) / nrows // taps (input rows) per output row
	cached := nr > 1
	if cached {
		st.cache.reset(nr, ow)
	}
	for b := 0; b < nc; b++ {
		base := x.Offset() + b/xs[1]*xst[0] + b%xs[1]*xst[1]
		plane := o[b*oplane : (b+1)*oplane]
		if cached {
			st.cache.invalidate()
		}
		for r := 0; r < nrows; r++ {
			dst := plane[r*ow : (r+1)*ow]
			rows, rw := st.rows[r*nr:(r+1)*nr], st.rw[r*nr:(r+1)*nr]
			if r > 0 && st.same[r] {
				// The same input rows and weights as the row above.
				copy(dst, plane[(r-1)*ow:r*ow])
				continue
			}
			switch {
			case tw.k == 1 && rw[0] == 1: // nearest
				src := xd[base+rows[0]:]
				for j, i := range tw.idx[:ow] {
					dst[j] = src[i]
				}
			case !cached: // one input row (linear1d), weight 1
				upsampleWidth(dst, xd[base+rows[0]:], tw)
				if rw[0] != 1 {
					for j := range dst {
						dst[j] *= rw[0]
					}
				}
			default:
				// Each input row is interpolated along the width once
				// (kept while output rows still use it), then the output
				// row blends its input rows: t0*w0 + t1*w1 + ..., as
				// PyTorch's separable kernels sum.
				if nr == 2 {
					b0 := st.cache.row(rows[0], 0, xd[base+rows[0]:], tw)
					b1 := st.cache.row(rows[1], 1, xd[base+rows[1]:], tw)
					w0, w1 := rw[0], rw[1]
					b0, b1 = b0[:len(dst)], b1[:len(dst)]
					for j := range dst {
						dst[j] = b0[j]*w0 + b1[j]*w1
					}
					continue
				}
				for t, off := range rows {
					buf := st.cache.row(off, t, xd[base+off:], tw)
					wr := rw[t]
					if t == 0 {
						for j, v := range buf {
							dst[j] = v * wr
						}
						continue
					}
					for j, v := range buf {
						dst[j] += v * wr
					}
				}
			}
		}
	}
	return nil
}

// upsampleWidth interpolates one input row (src from its first element)
// along the width into dst through the width table, tap by tap in order.
func upsampleWidth(dst, src []float32, tw *upsampleTab) {
	switch k := tw.k; {
	case k != 2 && k != 4:
		idx, w := tw.idx[:k*len(dst)], tw.w[:k*len(dst)]
		for j := range dst {
			i, ww := idx[k*j:k*j+k], w[k*j:k*j+k]
			v := src[i[0]] * ww[0]
			for t := 1; t < k; t++ {
				v += src[i[t]] * ww[t]
			}
			dst[j] = v
		}
		return
	case k == 2:
		idx, w := tw.idx[:2*len(dst)], tw.w[:2*len(dst)]
		for j := range dst {
			dst[j] = src[idx[2*j]]*w[2*j] + src[idx[2*j+1]]*w[2*j+1]
		}
		return
	}
	idx, w := tw.idx[:4*len(dst)], tw.w[:4*len(dst)]
	for j := range dst {
		i, ww := idx[4*j:4*j+4], w[4*j:4*j+4]
		dst[j] = src[i[0]]*ww[0] + src[i[1]]*ww[1] + src[i[2]]*ww[2] + src[i[3]]*ww[3]
	}
}

// upsampleCache holds width-interpolated input rows of one plane, by
// input row offset; output rows walk input rows in order, so a few
// slots (as many as an output row has taps) catch every reuse.
type upsampleCache struct {
	bufs  [][]float32
	tags  []int // input row offset per slot, -1 empty
	stamp []int // last use per slot
	clock int
}

func (c *upsampleCache) reset(n, width int) {
	if len(c.bufs) != n || (n > 0 && len(c.bufs[0]) != width) {
		c.bufs, c.tags, c.stamp = make([][]float32, n), make([]int, n), make([]int, n)
		for i := range c.bufs {
			c.bufs[i] = make([]float32, width)
		}
	}
}

func (c *upsampleCache) invalidate() {
	for i := range c.tags {
		c.tags[i] = -1
	}
}

// row returns input row off interpolated along the width (computing it
// from src into the least recently used slot if not held). Tap t of an
// output row never evicts taps 0..t-1 of the same row: those were used
// at the current clock and there are as many slots as taps.
func (c *upsampleCache) row(off, t int, src []float32, tw *upsampleTab) []float32 {
	if t == 0 {
		c.clock++
	}
	lru := 0
	for i, tag := range c.tags {
		if tag == off {
			c.stamp[i] = c.clock
			return c.bufs[i]
		}
		if c.stamp[i] < c.stamp[lru] || c.tags[i] < 0 && c.tags[lru] >= 0 {
			lru = i
		}
	}
	c.tags[lru], c.stamp[lru] = off, c.clock
	upsampleWidth(c.bufs[lru], src, tw)
	return c.bufs[lru]
}

// upsampleBuild makes the per-dim tables and, per output row (od, oh),
// the offsets and weights of its input rows.
func upsampleBuild(st *upsampleState, key *upsampleKey, mode upsampleMode, d int) {
	for i := range 3 {
		t := &st.tabs[i]
		if i < 3-d {
			t.k = 1
			t.idx = append(t.idx[:0], 0)
			t.w = append(t.w[:0], 1)
			continue
		}
		upsampleTable(t, mode, key.in[i], key.out[i], key.str[i], key.scale[i], key.align)
	}
	td, th := &st.tabs[0], &st.tabs[1]
	st.rows, st.rw = st.rows[:0], st.rw[:0]
	for od := 0; od < key.out[0]; od++ {
		for oh := 0; oh < key.out[1]; oh++ {
			for a := 0; a < td.k; a++ {
				for b := 0; b < th.k; b++ {
					st.rows = append(st.rows, td.idx[od*td.k+a]+th.idx[oh*th.k+b])
					w := th.w[oh*th.k+b]
					if td.k > 1 {
						w *= td.w[od*td.k+a]
					}
					st.rw = append(st.rw, w)
				}
			}
		}
	}
	n := len(st.rows) / (key.out[0] * key.out[1])
	st.same = st.same[:0]
	for r := 0; r < key.out[0]*key.out[1]; r++ {
		same := r > 0
		for t := 0; same && t < n; t++ {
			same = st.rows[r*n+t] == st.rows[(r-1)*n+t] && st.rw[r*n+t] == st.rw[(r-1)*n+t]
		}
		st.same = append(st.same, same)
	}
}

// upsampleScale is PyTorch's area_pixel_compute_scale in float32.
func upsampleScale(in, out int, align bool, scale float64) float32 {
	if align {
		if out > 1 {
			return float32(in-1) / float32(out-1)
		}
		return 0
	}
	if scale > 0 {
		return float32(1 / scale)
	}
	return float32(in) / float32(out)
}

// upsampleSource is area_pixel_compute_source_index: the arithmetic
// mixes float and double as the C++ does.
func upsampleSource(scale float32, dst int, align, cubic bool) float32 {
	if align {
		return scale * float32(dst)
	}
	s := float32(float64(scale)*(float64(dst)+0.5) - 0.5)
	if !cubic && s < 0 {
		return 0
	}
	return s
}

func upsampleTable(t *upsampleTab, mode upsampleMode, in, out, stride int, scale float64, align bool) {
	if mode == upLinearAA || mode == upCubicAA {
		upsampleTableAA(t, mode, in, out, stride, scale, align)
		return
	}
	k := 1
	switch mode {
	case upLinear:
		k = 2
	case upCubic:
		k = 4
	}
	t.k = k
	if cap(t.idx) < out*k {
		t.idx, t.w = make([]int, out*k), make([]float32, out*k)
	}
	t.idx, t.w = t.idx[:out*k], t.w[:out*k]
	switch mode {
	case upNearest, upNearestExact:
		sc := upsampleScale(in, out, false, scale)
		for j := 0; j < out; j++ {
			var f float32
			if mode == upNearest {
				f = float32(j) * sc
			} else {
				f = float32((float64(j) + 0.5) * float64(sc))
			}
			t.idx[j] = min(int(math.Floor(float64(f))), in-1) * stride
			t.w[j] = 1
		}
	case upLinear:
		sc := upsampleScale(in, out, align, scale)
		for j := 0; j < out; j++ {
			i0, i1, l0, l1 := j, j, float32(1), float32(0)
			if in != out {
				src := upsampleSource(sc, j, align, false)
				i0 = int(src)
				i1 = i0
				if i0 < in-1 {
					i1++
				}
				l1 = min(max(src-float32(i0), 0), 1)
				l0 = 1 - l1
			}
			t.idx[2*j], t.idx[2*j+1] = i0*stride, i1*stride
			t.w[2*j], t.w[2*j+1] = l0, l1
		}
	case upCubic:
		sc := upsampleScale(in, out, align, scale)
		for j := 0; j < out; j++ {
			src := upsampleSource(sc, j, align, true)
			f := float32(math.Floor(float64(src)))
			c := upsampleCubicCoeffs(src - f)
			for q := 0; q < 4; q++ {
				t.idx[4*j+q] = min(max(int(f)-1+q, 0), in-1) * stride
				t.w[4*j+q] = c[q]
			}
		}
	}
}

// upsampleCubicCoeffs is get_cubic_upsample_coefficients (A = -0.75).
func upsampleCubicCoeffs(t float32) [4]float32 {
	const a = float32(-0.75)
	conv1 := func(x float32) float32 { return ((a+2)*x-(a+3))*x*x + 1 }
	conv2 := func(x float32) float32 { return ((a*x-5*a)*x+8*a)*x - 4*a }
	x2 := 1 - t
	return [4]float32{conv2(t + 1), conv1(t), conv1(x2), conv2(x2 + 1)}
}

// upsampleTableAA is the antialiased table (PyTorch 1.13's
// _compute_indices_weights_aa, after PIL): output j averages the inputs
// within support of its center scale*(j+0.5) through the filter
// stretched by the scale when downsampling, weights normalised to sum 1.
// Positions with fewer taps than the widest get zero-weight taps on
// their first input, so every position has t.k taps.
func upsampleTableAA(t *upsampleTab, mode upsampleMode, in, out, stride int, scale float64, align bool) {
	size := float32(2)
	filter := upsampleFilterLinear
	if mode == upCubicAA {
		size, filter = 4, upsampleFilterCubic
	}
	sc := upsampleScale(in, out, align, scale)
	support := size * 0.5
	invscale := float32(1)
	if sc >= 1 {
		support = size * 0.5 * sc
		invscale = float32(1.0 / float64(sc))
	}
	k := 0
	for j := 0; j < out; j++ {
		_, n := upsampleAABounds(sc, support, j, in)
		k = max(k, n)
	}
	k = max(k, 1)
	t.k = k
	if cap(t.idx) < out*k {
		t.idx, t.w = make([]int, out*k), make([]float32, out*k)
	}
	t.idx, t.w = t.idx[:out*k], t.w[:out*k]
	for j := 0; j < out; j++ {
		xmin, n := upsampleAABounds(sc, support, j, in)
		center := float32(float64(sc) * (float64(j) + 0.5))
		idx, w := t.idx[j*k:(j+1)*k], t.w[j*k:(j+1)*k]
		var total float32
		for q := 0; q < n; q++ {
			w[q] = filter(float32((float64(float32(q+xmin)-center) + 0.5) * float64(invscale)))
			total += w[q]
		}
		for q := range w {
			if q >= n {
				w[q] = 0
			} else if total != 0 {
				w[q] /= total
			}
			idx[q] = (xmin + min(q, max(n-1, 0))) * stride
		}
	}
}

// upsampleAABounds is the first input and the number of inputs output j
// reads (xmin, xsize).
func upsampleAABounds(scale, support float32, j, in int) (int, int) {
	center := float32(float64(scale) * (float64(j) + 0.5))
	xmin := max(int(float64(center-support)+0.5), 0)
	xmax := min(int(float64(center+support)+0.5), in)
	return xmin, max(xmax-xmin, 0)
}

func upsampleFilterLinear(x float32) float32 {
	if x < 0 {
		x = -x
	}
	if x < 1 {
		return 1 - x
	}
	return 0
}

// upsampleFilterCubic is PIL's bicubic filter (a = -0.5), evaluated in
// double as the C++ literals make it.
func upsampleFilterCubic(x float32) float32 {
	const a = -0.5
	if x < 0 {
		x = -x
	}
	xd := float64(x)
	if x < 1 {
		return float32(((a+2.0)*xd-(a+3.0))*xd*xd + 1)
	}
	if x < 2 {
		return float32((((xd-5)*xd+8)*xd - 4) * a)
	}
	return 0
}
