package ops

import (
	"math"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// torchvision's custom detection ops, as torchvision 0.14's CPU kernels
// compute them (torchvision/csrc/ops/cpu/nms_kernel.cpp and
// roi_align_kernel.cpp): float32 arithmetic in the same order, so that the
// boxes a model keeps and the features it pools match PyTorch's.

const (
	nmsSchema      = "torchvision::nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor"
	roiAlignSchema = "torchvision::roi_align(Tensor input, Tensor rois, float spatial_scale, int pooled_height, int pooled_width, int sampling_ratio, bool aligned) -> Tensor"
)

func init() {
	RegisterOut("torchvision::nms", func(n *graph.Node) Kernel {
		if n.Matches(nmsSchema) {
			return nmsKernel
		}
		return nil
	})
	RegisterOut("torchvision::roi_align", func(n *graph.Node) Kernel {
		if n.Matches(roiAlignSchema) {
			return roiAlignKernel
		}
		return nil
	})
}

// contigF32 returns t's float32 elements in row-major order: t's own
// storage when contiguous, else a copy in *buf.
func contigF32(t *ivalue.Tensor, buf **ivalue.Tensor) []float32 {
	if t.IsContiguous() {
		return t.F32Contig()
	}
	if *buf == nil {
		*buf = &ivalue.Tensor{}
	}
	(*buf).Resize(t.DType(), t.Sizes())
	ivalue.CopyInto(*buf, t)
	return (*buf).F32Contig()
}

type nmsState struct {
	dets, scores *ivalue.Tensor
	areas        []float32
	order, tmp   []int64
	suppressed   []bool
	keep         []int64
}

func nmsKernel(p *ProcessedNode) error {
	dets, scores := p.Tensor(0), p.Tensor(1)
	if dets == nil || scores == nil {
		return Errorf("nms: expected tensors dets and scores")
	}
	if dets.Dim() != 2 {
		return Errorf("nms: boxes should be a 2d tensor, got %dD", dets.Dim())
	}
	if dets.Size(1) != 4 {
		return Errorf("nms: boxes should have 4 elements in dimension 1, got %d", dets.Size(1))
	}
	if scores.Dim() != 1 {
		return Errorf("nms: scores should be a 1d tensor, got %dD", scores.Dim())
	}
	if dets.Size(0) != scores.Size(0) {
		return Errorf("nms: boxes and scores should have same number of elements in dimension 0, got %d and %d",
			dets.Size(0), scores.Size(0))
	}
	if dets.DType() != ivalue.Float32 || scores.DType() != ivalue.Float32 {
		return Errorf("nms: expected float32 boxes and scores, got %s and %s", dets.DType(), scores.DType())
	}
	st, _ := p.State.(*nmsState)
	if st == nil {
		st = &nmsState{}
		p.State = st
	}
	thr := p.Float(2)
	n := dets.Size(0)
	out := p.OutTensor(0)
	if n == 0 {
		out.Resize(ivalue.Int64, []int{0})
		return nil
	}
	d := contigF32(dets, &st.dets)
	s := contigF32(scores, &st.scores)
	st.areas = growF32(st.areas, n)
	for i := 0; i < n; i++ {
		b := d[4*i : 4*i+4]
		st.areas[i] = (b[2] - b[0]) * (b[3] - b[1])
	}
	st.order = growI64(st.order, n)
	st.tmp = growI64(st.tmp, n)
	sortIndicesF32(s, 1, st.order, st.tmp, true)
	st.suppressed = growBool(st.suppressed, n)
	clear(st.suppressed)
	st.keep = growI64(st.keep, n)
	kept := 0
	areas, supp := st.areas, st.suppressed
	for ii := 0; ii < n; ii++ {
		i := st.order[ii]
		if supp[i] {
			continue
		}
		st.keep[kept] = i
		kept++
		ix1, iy1, ix2, iy2 := d[4*i], d[4*i+1], d[4*i+2], d[4*i+3]
		iarea := areas[i]
		for _, j := range st.order[ii+1 : n] {
			if supp[j] {
				continue
			}
			xx1 := max(ix1, d[4*j])
			yy1 := max(iy1, d[4*j+1])
			xx2 := min(ix2, d[4*j+2])
			yy2 := min(iy2, d[4*j+3])
			w := max(0, xx2-xx1)
			h := max(0, yy2-yy1)
			inter := w * h
			ovr := inter / (iarea + areas[j] - inter)
			if float64(ovr) > thr {
				supp[j] = true
			}
		}
	}
	out.Resize(ivalue.Int64, []int{kept})
	copy(out.I64Contig(), st.keep[:kept])
	return nil
}

func growI64(b []int64, n int) []int64 {
	if cap(b) < n {
		return make([]int64, n)
	}
	return b[:n]
}

func growBool(b []bool, n int) []bool {
	if cap(b) < n {
		return make([]bool, n)
	}
	return b[:n]
}

// f32Before reports whether a sorts before b: ascending puts NaN last,
// descending first, as PyTorch's sort does.
func f32Before[T float32 | float64 | int64](a, b T, desc bool) bool {
	an, bn := a != a, b != b
	if desc {
		return (an && !bn) || a > b
	}
	return (bn && !an) || a < b
}

// sortIndicesF32 fills idx (len n) with the stable sort order of the n
// keys v[0], v[stride], ... (tmp is scratch of len n): a bottom-up merge
// sort, which allocates nothing and keeps equal keys in index order.
func sortIndicesF32[T float32 | float64 | int64](v []T, stride int, idx, tmp []int64, desc bool) {
	n := len(idx)
	if n == 0 {
		return
	}
	for i := range idx {
		idx[i] = int64(i)
	}
	// Insertion sort runs of 16, then merge.
	const run = 16
	for lo := 0; lo < n; lo += run {
		hi := min(lo+run, n)
		for i := lo + 1; i < hi; i++ {
			x := idx[i]
			kx := v[int(x)*stride]
			j := i
			for j > lo && f32Before(kx, v[int(idx[j-1])*stride], desc) {
				idx[j] = idx[j-1]
				j--
			}
			idx[j] = x
		}
	}
	src, dst := idx, tmp
	for width := run; width < n; width *= 2 {
		for lo := 0; lo < n; lo += 2 * width {
			mid, hi := min(lo+width, n), min(lo+2*width, n)
			i, j, k := lo, mid, lo
			for i < mid && j < hi {
				// Take from the right only when strictly before: stable.
				if f32Before(v[int(src[j])*stride], v[int(src[i])*stride], desc) {
					dst[k] = src[j]
					j++
				} else {
					dst[k] = src[i]
					i++
				}
				k++
			}
			k += copy(dst[k:], src[i:mid])
			copy(dst[k:], src[j:hi])
		}
		src, dst = dst, src
	}
	if &src[0] != &idx[0] {
		copy(idx, src)
	}
}

type roiAlignState struct {
	in, rois *ivalue.Tensor
	pre      []roiPreCalc
}

// roiPreCalc is one sampling point: the four neighbours' offsets in a
// channel plane and their bilinear weights (all zero outside the map).
type roiPreCalc struct {
	pos1, pos2, pos3, pos4 int
	w1, w2, w3, w4         float32
}

func roiAlignKernel(p *ProcessedNode) error {
	x, rois := p.Tensor(0), p.Tensor(1)
	if x == nil || rois == nil {
		return Errorf("roi_align: expected tensors input and rois")
	}
	if x.Dim() != 4 {
		return Errorf("roi_align: expected a 4-d input (N, C, H, W), got %dD", x.Dim())
	}
	if rois.Dim() != 2 || rois.Size(1) != 5 {
		return Errorf("roi_align: expected rois of shape (K, 5), got %s", ShapeString(rois.Sizes()))
	}
	if x.DType() != ivalue.Float32 || rois.DType() != ivalue.Float32 {
		return Errorf("roi_align: expected float32 input and rois, got %s and %s", x.DType(), rois.DType())
	}
	scale := p.Float(2)
	ph, pw := int(p.Int(3)), int(p.Int(4))
	sampling := int(p.Int(5))
	aligned := p.Bool(6)
	if ph <= 0 || pw <= 0 {
		return Errorf("roi_align: pooled size must be positive, got %dx%d", ph, pw)
	}
	st, _ := p.State.(*roiAlignState)
	if st == nil {
		st = &roiAlignState{}
		p.State = st
	}
	nb, channels, height, width := x.Size(0), x.Size(1), x.Size(2), x.Size(3)
	k := rois.Size(0)
	out := p.OutTensor(0)
	var sz [4]int
	sz[0], sz[1], sz[2], sz[3] = k, channels, ph, pw
	out.Resize(ivalue.Float32, sz[:])
	if k == 0 || channels == 0 {
		return nil
	}
	in := contigF32(x, &st.in)
	rr := contigF32(rois, &st.rois)
	o := out.F32Contig()
	plane := height * width
	var offset float32
	if aligned {
		offset = 0.5
	}
	for n := 0; n < k; n++ {
		r := rr[5*n : 5*n+5]
		batch := int(r[0])
		if batch < 0 || batch >= nb {
			return Errorf("roi_align: roi %d has batch index %d, input has %d images", n, batch, nb)
		}
		// float * double - float, rounded to float, as the C++ does.
		startW := float32(float64(r[1])*scale - float64(offset))
		startH := float32(float64(r[2])*scale - float64(offset))
		endW := float32(float64(r[3])*scale - float64(offset))
		endH := float32(float64(r[4])*scale - float64(offset))
		roiW, roiH := endW-startW, endH-startH
		if !aligned {
			roiW, roiH = max(roiW, 1), max(roiH, 1)
		}
		binH, binW := roiH/float32(ph), roiW/float32(pw)
		gridH, gridW := sampling, sampling
		if sampling <= 0 {
			gridH = int(float32(math.Ceil(float64(roiH / float32(ph)))))
			gridW = int(float32(math.Ceil(float64(roiW / float32(pw)))))
		}
		count := float32(max(gridH*gridW, 1))
		npts := ph * pw * gridH * gridW
		if cap(st.pre) < npts {
			st.pre = make([]roiPreCalc, npts)
		}
		pre := st.pre[:npts]
		roiPreCalcFill(pre, height, width, ph, pw, startH, startW, binH, binW, gridH, gridW)
		for c := 0; c < channels; c++ {
			src := in[(batch*channels+c)*plane : (batch*channels+c+1)*plane]
			dst := o[(n*channels+c)*ph*pw : (n*channels+c+1)*ph*pw]
			idx := 0
			for b := range dst {
				var v float32
				for _, pc := range pre[idx : idx+gridH*gridW] {
					v += pc.w1*src[pc.pos1] + pc.w2*src[pc.pos2] + pc.w3*src[pc.pos3] + pc.w4*src[pc.pos4]
				}
				idx += gridH * gridW
				dst[b] = v / count
			}
		}
	}
	return nil
}

// roiPreCalcFill is torchvision's pre_calc_for_bilinear_interpolate.
func roiPreCalcFill(pre []roiPreCalc, height, width, ph, pw int, startH, startW, binH, binW float32, gridH, gridW int) {
	i := 0
	fh, fw := float32(height), float32(width)
	for py := 0; py < ph; py++ {
		for px := 0; px < pw; px++ {
			for iy := 0; iy < gridH; iy++ {
				yy := startH + float32(py)*binH + float32(float32(iy)+.5)*binH/float32(gridH)
				for ix := 0; ix < gridW; ix++ {
					xx := startW + float32(px)*binW + float32(float32(ix)+.5)*binW/float32(gridW)
					y, x := yy, xx
					if y < -1.0 || y > fh || x < -1.0 || x > fw {
						pre[i] = roiPreCalc{}
						i++
						continue
					}
					if y <= 0 {
						y = 0
					}
					if x <= 0 {
						x = 0
					}
					yl, xl := int(y), int(x)
					var yh, xh int
					if yl >= height-1 {
						yh, yl = height-1, height-1
						y = float32(yl)
					} else {
						yh = yl + 1
					}
					if xl >= width-1 {
						xh, xl = width-1, width-1
						x = float32(xl)
					} else {
						xh = xl + 1
					}
					ly, lx := y-float32(yl), x-float32(xl)
					hy, hx := 1-ly, 1-lx
					pre[i] = roiPreCalc{
						pos1: yl*width + xl, pos2: yl*width + xh, pos3: yh*width + xl, pos4: yh*width + xh,
						w1: hy * hx, w2: hy * lx, w3: ly * hx, w4: ly * lx,
					}
					i++
				}
			}
		}
	}
}
