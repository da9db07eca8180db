package ops

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops/gemm"
)

// aten::conv_transpose1d/2d/3d and aten::_convolution / convolution with
// transposed=True. Per image and group, one gemm makes the columns
// cols = W_g^T X_g ([cout_g*taps, input positions], the weight read
// transposed in place or packed once when constant), then col2im adds
// each column row into the output (which starts as the bias or 0): a
// tap's contributions along an input row land evenly strided in one
// output row.

const (
	convT1dSchema = "aten::conv_transpose1d(Tensor input, Tensor weight, Tensor? bias=None, int[1] stride=[1], int[1] padding=[0], int[1] output_padding=[0], int groups=1, int[1] dilation=[1]) -> Tensor"
	convT2dSchema = "aten::conv_transpose2d.input(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, int[2] padding=0, int[2] output_padding=0, int groups=1, int[2] dilation=1) -> Tensor"
	convT3dSchema = "aten::conv_transpose3d.input(Tensor input, Tensor weight, Tensor? bias=None, int[3] stride=1, int[3] padding=0, int[3] output_padding=0, int groups=1, int[3] dilation=1) -> Tensor"
)

// convTransposeSpec says where an overload keeps its arguments.
type convTransposeSpec struct {
	dims                                int // 1, 2, 3; 0: from the weight's rank
	stride, padding, outPad, dil, group int
}

var convTransposeOfConvolution = convTransposeSpec{0, 3, 4, 7, 5, 8}

func init() {
	reg := func(op, schema string, spec convTransposeSpec) {
		RegisterOut(op, func(n *graph.Node) Kernel {
			if !n.Matches(schema) {
				return nil
			}
			pre := convTransposePrepack(n, spec.group)
			return func(p *ProcessedNode) error {
				st, _ := p.State.(*convState)
				if st == nil {
					st = &convState{}
					p.State = st
				}
				x, err := gemmInput(p, 0, "conv_transpose input")
				if err != nil {
					return err
				}
				w, err := gemmInput(p, 1, "conv_transpose weight")
				if err != nil {
					return err
				}
				bias, err := gemmOptInput(p, 2, "conv_transpose bias")
				if err != nil {
					return err
				}
				return convTransposeKernel(p, spec, pre, st, x, w, bias)
			}
		})
	}
	reg("aten::conv_transpose1d", convT1dSchema, convTransposeSpec{1, 3, 4, 5, 7, 6})
	reg("aten::conv_transpose2d", convT2dSchema, convTransposeSpec{2, 3, 4, 5, 7, 6})
	reg("aten::conv_transpose3d", convT3dSchema, convTransposeSpec{3, 3, 4, 5, 7, 6})
}

// convTransposeA is group gr's A operand, W_g^T: [cout_g*taps, cin_g]
// read from the weight's [cin, cout_g*taps] rows.
func convTransposeA(wd []float32, woff, cg, m, gr int) gemm.Mat {
	return gemm.Mat{Data: wd, Off: woff + gr*cg*m, RS: 1, CS: m}
}

// convTransposePrepack packs a constant weight (with constant groups)
// per group as W_g^T, or returns nil.
func convTransposePrepack(n *graph.Node, groupsIdx int) *convPrepacked {
	c, ok := graph.ConstantValue(n.Inputs[1])
	if !ok {
		return nil
	}
	w := c.Tensor()
	gv, ok := graph.ConstantValue(n.Inputs[groupsIdx])
	if w == nil || !ok || gv.Kind() != ivalue.KindInt || w.DType() != ivalue.Float32 || w.Dim() < 3 || w.Dim() > 5 || w.Numel() == 0 {
		return nil
	}
	groups := int(gv.Int())
	cin := w.Size(0)
	if groups <= 0 || cin%groups != 0 {
		return nil
	}
	wd, woff := w.F32(), w.Offset()
	if !w.IsContiguous() {
		wd, woff = make([]float32, w.Numel()), 0
		gemmCopyContig(wd, w)
	}
	cg, m := cin/groups, w.Numel()/cin
	pre := &convPrepacked{w: w, groups: groups}
	for gr := 0; gr < groups; gr++ {
		pre.a = append(pre.a, gemm.PrepackA(m, cg, convTransposeA(wd, woff, cg, m, gr)))
	}
	return pre
}

// convTransposeArg reads an int list argument of dims values (one value
// repeats) into the last dims entries of a triple whose others are def.
func convTransposeArg(p *ProcessedNode, i, dims int, st *convState, def int, what string) ([3]int, error) {
	st.ints = p.IntsInto(i, st.ints)
	r := [3]int{def, def, def}
	switch v := st.ints; {
	case len(v) == 1:
		for k := 3 - dims; k < 3; k++ {
			r[k] = v[0]
		}
	case len(v) == dims:
		copy(r[3-dims:], v)
	default:
		return r, Errorf("conv_transpose%dd %s: expected %d values, got %v", dims, what, dims, v)
	}
	return r, nil
}

func convTransposeKernel(p *ProcessedNode, spec convTransposeSpec, pre *convPrepacked, st *convState, x, w, bias *ivalue.Tensor) error {
	dims := spec.dims
	if dims == 0 {
		dims = w.Dim() - 2
	}
	if dims < 1 || dims > 3 || w.Dim() != dims+2 {
		return Errorf("conv_transpose weight: expected %d dims, got sizes %v", dims+2, w.Sizes())
	}
	if x.Dim() != dims+2 && x.Dim() != dims+1 {
		return Errorf("conv_transpose%dd input: expected %d or %d dims, got sizes %v", dims, dims+1, dims+2, x.Sizes())
	}
	str, err := convTransposeArg(p, spec.stride, dims, st, 1, "stride")
	if err != nil {
		return err
	}
	pad, err := convTransposeArg(p, spec.padding, dims, st, 0, "padding")
	if err != nil {
		return err
	}
	opad, err := convTransposeArg(p, spec.outPad, dims, st, 0, "output_padding")
	if err != nil {
		return err
	}
	dil, err := convTransposeArg(p, spec.dil, dims, st, 1, "dilation")
	if err != nil {
		return err
	}
	groups := int(p.Int(spec.group))
	xs, xst := x.Sizes(), x.Strides()
	batched := x.Dim() == dims+2
	lead, n, sN := 0, 1, 0
	if batched {
		n, sN, lead = xs[0], xst[0], 1
	}
	cin, sC := xs[lead], xst[lead]
	// Spatial sizes and strides as (d, h, w), missing ones 1 and 0.
	in, sIn, k := [3]int{1, 1, 1}, [3]int{}, [3]int{1, 1, 1}
	for i := 0; i < dims; i++ {
		in[3-dims+i], sIn[3-dims+i] = xs[lead+1+i], xst[lead+1+i]
		k[3-dims+i] = w.Size(2 + i)
	}
	if groups <= 0 || cin%groups != 0 {
		return Errorf("conv_transpose: groups %d must be positive and divide input channels %d", groups, cin)
	}
	if w.Size(0) != cin {
		return Errorf("conv_transpose: input has %d channels, weight %v expects %d", cin, w.Sizes(), w.Size(0))
	}
	og := w.Size(1)
	cout := og * groups
	if bias != nil && (bias.Dim() != 1 || bias.Size(0) != cout) {
		return Errorf("conv_transpose bias: expected sizes [%d], got %v", cout, bias.Sizes())
	}
	var out [3]int
	for i := range 3 {
		if str[i] <= 0 || dil[i] <= 0 || pad[i] < 0 || opad[i] < 0 {
			return Errorf("conv_transpose: expected positive stride and dilation and non-negative padding, got %v, %v, %v", str, dil, pad)
		}
		if opad[i] >= str[i] && opad[i] >= dil[i] {
			return Errorf("conv_transpose: output padding must be smaller than either stride or dilation, got output_padding %v, stride %v, dilation %v", opad, str, dil)
		}
		out[i] = (in[i]-1)*str[i] - 2*pad[i] + dil[i]*(k[i]-1) + opad[i] + 1
		if out[i] <= 0 {
			return Errorf("conv_transpose: output size %v is too small (input %v, weight %v)", out, x.Sizes(), w.Sizes())
		}
	}
	st.shape = st.shape[:0]
	if batched {
		st.shape = append(st.shape, n)
	}
	st.shape = append(st.shape, cout)
	st.shape = append(st.shape, out[3-dims:]...)
	o := p.OutTensor(0)
	o.Resize(ivalue.Float32, st.shape)
	c := o.F32Contig()
	if o.Numel() == 0 {
		return nil
	}
	outVol := out[0] * out[1] * out[2]
	inVol := in[0] * in[1] * in[2]
	if bias != nil {
		bd, bo, bs := bias.F32(), bias.Offset(), bias.Strides()[0]
		for nn := 0; nn < n; nn++ {
			for oc := 0; oc < cout; oc++ {
				convFill(c[(nn*cout+oc)*outVol:(nn*cout+oc+1)*outVol], bd[bo+oc*bs])
			}
		}
	} else {
		clear(c)
	}
	// B is an image's [cin_g, in positions] rows: the input itself when
	// its positions merge into one stride, else a contiguous copy.
	xd, xoff, sPos := x.F32(), x.Offset(), sIn[2]
	if !((in[1] == 1 || sIn[1] == in[2]*sIn[2]) && (in[0] == 1 || sIn[0] == in[1]*sIn[1])) {
		if st.xcopy == nil {
			st.xcopy = &ivalue.Tensor{}
		}
		st.xcopy.Resize(ivalue.Float32, x.Sizes())
		gemmCopyContig(st.xcopy.F32Contig(), x)
		xd, xoff, sPos, sC, sN = st.xcopy.F32Contig(), 0, 1, inVol, cin*inVol
	}
	cg := cin / groups
	taps := k[0] * k[1] * k[2]
	m := og * taps
	if cap(st.cols) < m*inVol {
		st.cols = make([]float32, m*inVol)
	}
	cols := st.cols[:m*inVol]
	usePre := pre != nil && pre.w == w && pre.groups == groups
	var wd []float32
	var woff int
	if !usePre {
		wd, woff = convWeightRows(st, w)
	}
	g := col2imGeom{in: in, out: out, k: k, str: str, pad: pad, dil: dil}
	for nn := 0; nn < n; nn++ {
		for gr := 0; gr < groups; gr++ {
			b := gemm.Mat{Data: xd, Off: xoff + nn*sN + gr*cg*sC, RS: sC, CS: sPos}
			if usePre {
				gemm.WithPrepackedA(p.Scratch, inVol, pre.a[gr], b, nil, 0, cols, 0, inVol)
			} else {
				gemm.Gemm(p.Scratch, m, inVol, cg, 1, convTransposeA(wd, woff, cg, m, gr), b, nil, 0, cols, 0, inVol)
			}
			base := (nn*cout + gr*og) * outVol
			col2imAdd(&g, cols, og, c[base:base+og*outVol])
		}
	}
	return nil
}

// col2imGeom is a transposed convolution's geometry as (d, h, w).
type col2imGeom struct {
	in, out, k, str, pad, dil [3]int
}

// col2imAdd adds the columns cols ([channels*taps, input positions]) into
// dst (channels output volumes): input position i of tap t lands on
// output position i*stride - pad + t*dilation, per dimension.
func col2imAdd(g *col2imGeom, cols []float32, channels int, dst []float32) {
	inVol := g.in[0] * g.in[1] * g.in[2]
	outVol := g.out[0] * g.out[1] * g.out[2]
	ohw, ihw := g.out[1]*g.out[2], g.in[1]*g.in[2]
	row := 0
	for ch := 0; ch < channels; ch++ {
		plane := dst[ch*outVol : (ch+1)*outVol]
		for kz := 0; kz < g.k[0]; kz++ {
			for ki := 0; ki < g.k[1]; ki++ {
				for kj := 0; kj < g.k[2]; kj++ {
					src := cols[row*inVol : (row+1)*inVol]
					row++
					// Input columns whose output column lies inside.
					dw := kj*g.dil[2] - g.pad[2]
					lo, hi := col2imRange(dw, g.str[2], g.in[2], g.out[2])
					if lo >= hi {
						continue
					}
					for iz := 0; iz < g.in[0]; iz++ {
						oz := iz*g.str[0] - g.pad[0] + kz*g.dil[0]
						if uint(oz) >= uint(g.out[0]) {
							continue
						}
						for ih := 0; ih < g.in[1]; ih++ {
							oh := ih*g.str[1] - g.pad[1] + ki*g.dil[1]
							if uint(oh) >= uint(g.out[1]) {
								continue
							}
							s := src[iz*ihw+ih*g.in[2]+lo : iz*ihw+ih*g.in[2]+hi]
							d0 := oz*ohw + oh*g.out[2] + lo*g.str[2] + dw
							if g.str[2] == 1 {
								gemm.Axpy(1, s, plane[d0:d0+len(s)])
								continue
							}
							d := plane[d0 : d0+(len(s)-1)*g.str[2]+1]
							for t, v := range s {
								d[t*g.str[2]] += v
							}
						}
					}
				}
			}
		}
	}
}

// col2imRange is the range [lo, hi) of input positions i in [0, n) with
// i*stride + off in [0, out).
func col2imRange(off, stride, n, out int) (int, int) {
	lo := 0
	if off < 0 {
		lo = (-off + stride - 1) / stride
	}
	hi := n
	if last := (n-1)*stride + off; last >= out {
		hi = (out - off + stride - 1) / stride
	}
	return lo, max(lo, hi)
}
