package ops

import (
	"math"
	"strings"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// aten::max_pool3d, aten::avg_pool3d, aten::adaptive_avg_pool3d and
// aten::adaptive_max_pool3d on 4-d [C, D, H, W] or 5-d [N, C, D, H, W]
// inputs of any strides, with the 2-d kernels' formulas (pool.go) in
// three dimensions; their 1-d forms (max_pool1d, avg_pool1d,
// adaptive_avg_pool1d, adaptive_max_pool1d) run the same kernels with
// depth and height 1, and max_pool{1,2,3}d_with_indices run the 3-d max
// pooling with indices. No overwrite rule covers them: the output never
// overlaps the input.

const (
	maxPool3dSchema     = "aten::max_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) -> Tensor"
	avgPool3dSchema     = "aten::avg_pool3d(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor"
	adaptiveAvg3dSchema = "aten::adaptive_avg_pool3d(Tensor self, int[3] output_size) -> Tensor"
	adaptiveMax3dSchema = "aten::adaptive_max_pool3d(Tensor self, int[3] output_size) -> (Tensor, Tensor)"
	maxPool1dIdxSchema  = "aten::max_pool1d_with_indices(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], int[1] dilation=[1], bool ceil_mode=False) -> (Tensor, Tensor)"
	maxPool2dIdxSchema  = "aten::max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)"
	maxPool3dIdxSchema  = "aten::max_pool3d_with_indices(Tensor self, int[3] kernel_size, int[3] stride=[], int[3] padding=0, int[3] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)"
	maxPool1dSchema     = "aten::max_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], int[1] dilation=[1], bool ceil_mode=False) -> Tensor"
	avgPool1dSchema     = "aten::avg_pool1d(Tensor self, int[1] kernel_size, int[1] stride=[], int[1] padding=[0], bool ceil_mode=False, bool count_include_pad=True) -> Tensor"
	adaptiveAvg1dSchema = "aten::adaptive_avg_pool1d(Tensor self, int[1] output_size) -> Tensor"
	adaptiveMax1dSchema = "aten::adaptive_max_pool1d(Tensor self, int[1] output_size) -> (Tensor, Tensor)"
)

func init() {
	reg := func(op, schema string, dims int, k func(p *ProcessedNode, dims int) error) {
		RegisterOut(op, func(n *graph.Node) Kernel {
			if !n.Matches(schema) {
				return nil
			}
			return func(p *ProcessedNode) error { return k(p, dims) }
		})
	}
	reg("aten::max_pool3d", maxPool3dSchema, 3, maxPool3dKernel)
	reg("aten::avg_pool3d", avgPool3dSchema, 3, avgPool3dKernel)
	reg("aten::adaptive_avg_pool3d", adaptiveAvg3dSchema, 3, adaptiveAvgPool3dKernel)
	reg("aten::adaptive_max_pool3d", adaptiveMax3dSchema, 3, adaptiveMaxPool3dKernel)
	reg("aten::max_pool1d", maxPool1dSchema, 1, maxPool3dKernel)
	reg("aten::max_pool1d_with_indices", maxPool1dIdxSchema, 1, maxPool3dKernel)
	reg("aten::max_pool2d_with_indices", maxPool2dIdxSchema, 2, maxPool3dKernel)
	reg("aten::max_pool3d_with_indices", maxPool3dIdxSchema, 3, maxPool3dKernel)
	reg("aten::avg_pool1d", avgPool1dSchema, 1, avgPool3dKernel)
	reg("aten::adaptive_avg_pool1d", adaptiveAvg1dSchema, 1, adaptiveAvgPool3dKernel)
	reg("aten::adaptive_max_pool1d", adaptiveMax1dSchema, 1, adaptiveMaxPool3dKernel)
}

// pool3dInput is the input geometry, unbatched inputs as batch 1 and
// 1-d pooling as depth and height 1.
type pool3dInput struct {
	dims    int // spatial dims: 1 or 3
	data    []float32
	off     int
	n, c    int
	sN, sC  int
	sz, str [3]int // (d, h, w)
	batched bool
}

func pool3dRead(p *ProcessedNode, what string, dims int) (pool3dInput, error) {
	x, err := gemmInput(p, 0, what)
	if err != nil {
		return pool3dInput{}, err
	}
	if x.Dim() != dims+1 && x.Dim() != dims+2 {
		return pool3dInput{}, Errorf("%s: expected a %d-d or %d-d tensor, got sizes %v", what, dims+1, dims+2, x.Sizes())
	}
	in := pool3dInput{dims: dims, data: x.F32(), off: x.Offset(), n: 1, batched: x.Dim() == dims+2}
	sz, st := x.Sizes(), x.Strides()
	d := 0
	if in.batched {
		in.n, in.sN, d = sz[0], st[0], 1
	}
	in.c, in.sC = sz[d], st[d]
	in.sz = [3]int{1, 1, 1}
	for i := 3 - dims; i < 3; i++ {
		in.sz[i], in.str[i] = sz[d+1+i-(3-dims)], st[d+1+i-(3-dims)]
		if in.sz[i] == 0 {
			return pool3dInput{}, Errorf("%s: expected non-empty spatial dims, got sizes %v", what, sz)
		}
	}
	return in, nil
}

// pool3dOutput resizes output i to [n,] c, out.
func pool3dOutput(p *ProcessedNode, i int, in *pool3dInput, out [3]int, dt ivalue.DType, st *poolState) *ivalue.Tensor {
	st.shape = st.shape[:0]
	if in.batched {
		st.shape = append(st.shape, in.n)
	}
	st.shape = append(st.shape, in.c)
	st.shape = append(st.shape, out[3-in.dims:]...)
	o := p.OutTensor(i)
	o.Resize(dt, st.shape)
	return o
}

// pool3dTriple reads an int[dims] argument (one value repeats) into the
// last dims entries, the others neutral; def is used for an empty list
// when allowEmpty.
func pool3dTriple(p *ProcessedNode, i, dims int, st *poolState, op, arg string, neutral int, def [3]int, allowEmpty bool) ([3]int, error) {
	st.ints = p.IntsInto(i, st.ints)
	r := [3]int{neutral, neutral, neutral}
	switch v := st.ints; {
	case len(v) == 0 && allowEmpty:
		return def, nil
	case len(v) == 1:
		for k := 3 - dims; k < 3; k++ {
			r[k] = v[0]
		}
		return r, nil
	case len(v) == dims:
		copy(r[3-dims:], v)
		return r, nil
	}
	return r, Errorf("%s %s: expected 1 or %d values, got %v", op, arg, dims, st.ints)
}

type pool3dParams struct {
	k, s, pad, dil, out [3]int
}

func pool3dParamsRead(p *ProcessedNode, in *pool3dInput, st *poolState, op string, hasDil bool) (pool3dParams, error) {
	var q pool3dParams
	var err error
	dims := in.dims
	if q.k, err = pool3dTriple(p, 1, dims, st, op, "kernel_size", 1, [3]int{}, false); err != nil {
		return q, err
	}
	if q.s, err = pool3dTriple(p, 2, dims, st, op, "stride", 1, q.k, true); err != nil {
		return q, err
	}
	if q.pad, err = pool3dTriple(p, 3, dims, st, op, "padding", 0, [3]int{}, false); err != nil {
		return q, err
	}
	q.dil = [3]int{1, 1, 1}
	ceilIdx := 4
	if hasDil {
		if q.dil, err = pool3dTriple(p, 4, dims, st, op, "dilation", 1, q.dil, false); err != nil {
			return q, err
		}
		ceilIdx = 5
	}
	ceil := p.Bool(ceilIdx)
	for i := range 3 {
		if q.k[i] <= 0 || q.s[i] <= 0 || q.dil[i] <= 0 || q.pad[i] < 0 {
			return q, Errorf("%s: expected positive kernel_size, stride and dilation and non-negative padding", op)
		}
		if q.pad[i] > ((q.k[i]-1)*q.dil[i]+1)/2 {
			return q, Errorf("%s: pad should be at most half of effective kernel size, got padding %v for kernel %v", op, q.pad, q.k)
		}
		q.out[i] = poolOutSize(in.sz[i], q.k[i], q.pad[i], q.s[i], q.dil[i], ceil)
		if q.out[i] <= 0 {
			return q, Errorf("%s: output size %v is too small for input %v", op, q.out, in.sz)
		}
	}
	return q, nil
}

func maxPool3dKernel(p *ProcessedNode, dims int) error {
	in, err := pool3dRead(p, poolOpName("max_pool3d input", dims), dims)
	if err != nil {
		return err
	}
	st := poolStateOf(p)
	q, err := pool3dParamsRead(p, &in, st, poolOpName("max_pool3d", dims), true)
	if err != nil {
		return err
	}
	o := pool3dOutput(p, 0, &in, q.out, ivalue.Float32, st).F32Contig()
	var idx []int64 // nil: max_pool3d, without indices
	if p.NumOutputs() > 1 {
		idx = pool3dOutput(p, 1, &in, q.out, ivalue.Int64, st).I64Contig()
	}
	maxPoolIndices(&in, &q, o, idx)
	return nil
}

// maxPoolIndices is max pooling that also gives each maximum's index
// within its input plane (volume), as max_pool*d_with_indices, when idx
// is not nil: the first maximum wins, a NaN wins over numbers (PyTorch's
// val > max || isnan, for both ops).
func maxPoolIndices(in *pool3dInput, q *pool3dParams, o []float32, idx []int64) {
	negInf := float32(math.Inf(-1))
	hw := in.sz[1] * in.sz[2]
	k := 0
	for n := 0; n < in.n; n++ {
		for c := 0; c < in.c; c++ {
			base := in.off + n*in.sN + c*in.sC
			for od := 0; od < q.out[0]; od++ {
				d0 := od*q.s[0] - q.pad[0]
				for oh := 0; oh < q.out[1]; oh++ {
					h0 := oh*q.s[1] - q.pad[1]
					for ow := 0; ow < q.out[2]; ow++ {
						w0 := ow*q.s[2] - q.pad[2]
						// The first position inside the input, as PyTorch's
						// initial index.
						fd, fh, fw := poolFirstIn(d0, q.dil[0]), poolFirstIn(h0, q.dil[1]), poolFirstIn(w0, q.dil[2])
						m, at := negInf, fd*hw+fh*in.sz[2]+fw
						for a := 0; a < q.k[0]; a++ {
							id := d0 + a*q.dil[0]
							if uint(id) >= uint(in.sz[0]) {
								continue
							}
							for b := 0; b < q.k[1]; b++ {
								ih := h0 + b*q.dil[1]
								if uint(ih) >= uint(in.sz[1]) {
									continue
								}
								row := base + id*in.str[0] + ih*in.str[1]
								for e := 0; e < q.k[2]; e++ {
									iw := w0 + e*q.dil[2]
									if uint(iw) >= uint(in.sz[2]) {
										continue
									}
									if v := in.data[row+iw*in.str[2]]; v > m || v != v {
										m, at = v, id*hw+ih*in.sz[2]+iw
									}
								}
							}
						}
						o[k] = m
						if idx != nil {
							idx[k] = int64(at)
						}
						k++
					}
				}
			}
		}
	}
}

// poolFirstIn is the first window position start + i*dil that is not
// negative.
func poolFirstIn(start, dil int) int {
	for start < 0 {
		start += dil
	}
	return start
}

func avgPool3dKernel(p *ProcessedNode, dims int) error {
	in, err := pool3dRead(p, poolOpName("avg_pool3d input", dims), dims)
	if err != nil {
		return err
	}
	st := poolStateOf(p)
	q, err := pool3dParamsRead(p, &in, st, poolOpName("avg_pool3d", dims), false)
	if err != nil {
		return err
	}
	includePad := p.Bool(5)
	divisor := 0
	if p.NumInputs() > 6 && !p.IsNone(6) {
		if divisor = int(p.Int(6)); divisor == 0 {
			return Errorf("avg_pool3d: divisor_override must be non-zero")
		}
	}
	o := pool3dOutput(p, 0, &in, q.out, ivalue.Float32, st).F32Contig()
	k := 0
	for n := 0; n < in.n; n++ {
		for c := 0; c < in.c; c++ {
			base := in.off + n*in.sN + c*in.sC
			for od := 0; od < q.out[0]; od++ {
				ds := od*q.s[0] - q.pad[0]
				de := min(ds+q.k[0], in.sz[0]+q.pad[0])
				for oh := 0; oh < q.out[1]; oh++ {
					hs := oh*q.s[1] - q.pad[1]
					he := min(hs+q.k[1], in.sz[1]+q.pad[1])
					for ow := 0; ow < q.out[2]; ow++ {
						ws := ow*q.s[2] - q.pad[2]
						we := min(ws+q.k[2], in.sz[2]+q.pad[2])
						poolSize := (de - ds) * (he - hs) * (we - ws)
						d0, d1 := max(ds, 0), min(de, in.sz[0])
						h0, h1 := max(hs, 0), min(he, in.sz[1])
						w0, w1 := max(ws, 0), min(we, in.sz[2])
						if d0 >= d1 || h0 >= h1 || w0 >= w1 {
							o[k] = 0
							k++
							continue
						}
						var s float32
						for id := d0; id < d1; id++ {
							for ih := h0; ih < h1; ih++ {
								row := base + id*in.str[0] + ih*in.str[1]
								for iw := w0; iw < w1; iw++ {
									s += in.data[row+iw*in.str[2]]
								}
							}
						}
						div := divisor
						if div == 0 {
							if includePad {
								div = poolSize
							} else {
								div = (d1 - d0) * (h1 - h0) * (w1 - w0)
							}
						}
						o[k] = s / float32(div)
						k++
					}
				}
			}
		}
	}
	return nil
}

// pool3dAdaptiveSize reads output_size, checking it.
func pool3dAdaptiveSize(p *ProcessedNode, dims int, st *poolState, op string) ([3]int, error) {
	out, err := pool3dTriple(p, 1, dims, st, op, "output_size", 1, [3]int{}, false)
	if err == nil && (out[0] < 0 || out[1] < 0 || out[2] < 0) {
		err = Errorf("%s: expected non-negative output_size, got %v", op, out)
	}
	return out, err
}

// adaptiveRange is PyTorch's adaptive pooling window [start, end) of
// output i of out over in.
func adaptiveRange(i, in, out int) (int, int) {
	return i * in / out, ((i+1)*in + out - 1) / out
}

func adaptiveAvgPool3dKernel(p *ProcessedNode, dims int) error {
	in, err := pool3dRead(p, poolOpName("adaptive_avg_pool3d input", dims), dims)
	if err != nil {
		return err
	}
	st := poolStateOf(p)
	out, err := pool3dAdaptiveSize(p, dims, st, "adaptive_avg_pool3d")
	if err != nil {
		return err
	}
	o := pool3dOutput(p, 0, &in, out, ivalue.Float32, st).F32Contig()
	k := 0
	for n := 0; n < in.n; n++ {
		for c := 0; c < in.c; c++ {
			base := in.off + n*in.sN + c*in.sC
			for od := 0; od < out[0]; od++ {
				d0, d1 := adaptiveRange(od, in.sz[0], out[0])
				for oh := 0; oh < out[1]; oh++ {
					h0, h1 := adaptiveRange(oh, in.sz[1], out[1])
					for ow := 0; ow < out[2]; ow++ {
						w0, w1 := adaptiveRange(ow, in.sz[2], out[2])
						var s float32
						for id := d0; id < d1; id++ {
							for ih := h0; ih < h1; ih++ {
								row := base + id*in.str[0] + ih*in.str[1]
								if in.str[2] == 1 {
									for _, v := range in.data[row+w0 : row+w1] {
										s += v
									}
									continue
								}
								for iw := w0; iw < w1; iw++ {
									s += in.data[row+iw*in.str[2]]
								}
							}
						}
						o[k] = s / float32((d1-d0)*(h1-h0)*(w1-w0))
						k++
					}
				}
			}
		}
	}
	return nil
}

func adaptiveMaxPool3dKernel(p *ProcessedNode, dims int) error {
	in, err := pool3dRead(p, poolOpName("adaptive_max_pool3d input", dims), dims)
	if err != nil {
		return err
	}
	st := poolStateOf(p)
	out, err := pool3dAdaptiveSize(p, dims, st, "adaptive_max_pool3d")
	if err != nil {
		return err
	}
	o := pool3dOutput(p, 0, &in, out, ivalue.Float32, st).F32Contig()
	idx := pool3dOutput(p, 1, &in, out, ivalue.Int64, st).I64Contig()
	negInf := float32(math.Inf(-1))
	hw := in.sz[1] * in.sz[2]
	k := 0
	for n := 0; n < in.n; n++ {
		for c := 0; c < in.c; c++ {
			base := in.off + n*in.sN + c*in.sC
			for od := 0; od < out[0]; od++ {
				d0, d1 := adaptiveRange(od, in.sz[0], out[0])
				for oh := 0; oh < out[1]; oh++ {
					h0, h1 := adaptiveRange(oh, in.sz[1], out[1])
					for ow := 0; ow < out[2]; ow++ {
						w0, w1 := adaptiveRange(ow, in.sz[2], out[2])
						m, at := negInf, d0*hw+h0*in.sz[2]+w0
						for id := d0; id < d1; id++ {
							for ih := h0; ih < h1; ih++ {
								row := base + id*in.str[0] + ih*in.str[1]
								for iw := w0; iw < w1; iw++ {
									if v := in.data[row+iw*in.str[2]]; v > m || v != v {
										m, at = v, id*hw+ih*in.sz[2]+iw
									}
								}
							}
						}
						o[k] = m
						if idx != nil {
							idx[k] = int64(at)
						}
						k++
					}
				}
			}
		}
	}
	return nil
}

// poolOpName names a 3-d pooling op's message for its 1-d or 2-d form
// (made once: kernels pass these on every run).
func poolOpName(name string, dims int) string {
	if n, ok := poolNames[name]; ok && dims >= 1 && dims <= 3 {
		return n[dims]
	}
	return name
}

var poolNames = func() map[string][4]string {
	m := map[string][4]string{}
	for _, op := range []string{"max_pool3d", "avg_pool3d", "adaptive_avg_pool3d", "adaptive_max_pool3d"} {
		for _, s := range []string{"", " input"} {
			var n [4]string
			for d := 1; d <= 3; d++ {
				n[d] = strings.Replace(op, "3d", string(rune('0'+d))+"d", 1) + s
			}
			m[op+s] = n
		}
	}
	return m
}()
