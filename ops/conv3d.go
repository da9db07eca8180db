package ops

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops/gemm"
)

// aten::conv3d (int and "same"/"valid" padding), and aten::_convolution
// / aten::convolution with 5-d weights (convKernel hands those over): one
// gemm per image and group, the weight rows as A and the implicit
// im2col of the volume as B (gemm.ConvSrc with depth), or, for 1x1x1
// stride-1 convolutions over mergeable strides, the input itself.

const (
	conv3dSchema    = "aten::conv3d(Tensor input, Tensor weight, Tensor? bias=None, int[3] stride=1, int[3] padding=0, int[3] dilation=1, int groups=1) -> Tensor"
	conv3dPadSchema = `aten::conv3d.padding(Tensor input, Tensor weight, Tensor? bias=None, int[3] stride=1, str padding="valid", int[3] dilation=1, int groups=1) -> Tensor`
)

func init() {
	reg := func(schema string, spec convSpec) {
		RegisterOut("aten::conv3d", func(n *graph.Node) Kernel {
			if !n.Matches(schema) {
				return nil
			}
			pre := convPrepack(n, spec)
			return func(p *ProcessedNode) error { return convKernel(p, spec, pre) }
		})
	}
	reg(conv3dSchema, convSpec{3, false, -1, 6, 0, 0, 0, 0})
	reg(conv3dPadSchema, convSpec{3, true, -1, 6, 0, 0, 0, 0})
}

// conv3dGeom is one 3-d convolution's geometry.
type conv3dGeom struct {
	n, c, d, h, w      int
	sN, sC, sD, sH, sW int
	o, kd, kh, kw      int
	str, pad, dil      [3]int
	groups             int
	od, oh, ow         int
}

// convTriple reads an int[3] argument at input i (one value repeats).
func convTriple(p *ProcessedNode, i int, st *convState, what string) ([3]int, error) {
	st.ints = p.IntsInto(i, st.ints)
	switch v := st.ints; len(v) {
	case 1:
		return [3]int{v[0], v[0], v[0]}, nil
	case 3:
		return [3]int{v[0], v[1], v[2]}, nil
	}
	return [3]int{}, Errorf("conv3d %s: expected 3 values, got %v", what, st.ints)
}

// conv3dKernel runs a 3-d convolution; x, w and bias are read already.
func conv3dKernel(p *ProcessedNode, spec convSpec, pre *convPrepacked, st *convState, x, w, bias *ivalue.Tensor) error {
	if w.Dim() != 5 {
		return Errorf("conv3d weight: expected 5 dims, got sizes %v", w.Sizes())
	}
	if x.Dim() != 5 && x.Dim() != 4 {
		return Errorf("conv3d input: expected 4 or 5 dims, got sizes %v", x.Sizes())
	}
	var g conv3dGeom
	xs, xst := x.Sizes(), x.Strides()
	batched := x.Dim() == 5
	lead := 0
	g.n = 1
	if batched {
		g.n, g.sN, lead = xs[0], xst[0], 1
	}
	g.c, g.d, g.h, g.w = xs[lead], xs[lead+1], xs[lead+2], xs[lead+3]
	g.sC, g.sD, g.sH, g.sW = xst[lead], xst[lead+1], xst[lead+2], xst[lead+3]
	g.o, g.kd, g.kh, g.kw = w.Size(0), w.Size(2), w.Size(3), w.Size(4)
	g.groups = int(p.Int(spec.groups))
	var err error
	if g.str, err = convTriple(p, 3, st, "stride"); err != nil {
		return err
	}
	if g.dil, err = convTriple(p, 5, st, "dilation"); err != nil {
		return err
	}
	same := false
	if spec.strPadding {
		switch s := p.Input(4).Str(); s {
		case "valid":
		case "same":
			same = true
		default:
			return Errorf(`conv3d padding: expected "same" or "valid", got %q`, s)
		}
	} else if g.pad, err = convTriple(p, 4, st, "padding"); err != nil {
		return err
	}
	in := [3]int{g.d, g.h, g.w}
	k := [3]int{g.kd, g.kh, g.kw}
	var out [3]int
	for i := range 3 {
		if g.str[i] <= 0 || g.dil[i] <= 0 || g.pad[i] < 0 {
			return Errorf("conv3d: expected positive stride and dilation and non-negative padding, got %v, %v, %v", g.str, g.dil, g.pad)
		}
		if same {
			if g.str[i] != 1 {
				return Errorf("conv3d: padding='same' is not supported for strided convolutions")
			}
			// The extra element of an odd total goes after, as PyTorch.
			g.pad[i] = g.dil[i] * (k[i] - 1) / 2
			out[i] = in[i]
			continue
		}
		span := in[i] + 2*g.pad[i] - g.dil[i]*(k[i]-1)
		if span <= 0 {
			return Errorf("conv3d: input %v (padded) is smaller than the dilated kernel %v", x.Sizes(), w.Sizes())
		}
		out[i] = (span-1)/g.str[i] + 1
	}
	g.od, g.oh, g.ow = out[0], out[1], out[2]
	if g.groups <= 0 || g.c%g.groups != 0 || g.o%g.groups != 0 {
		return Errorf("conv3d: groups %d must be positive and divide input channels %d and output channels %d", g.groups, g.c, g.o)
	}
	if w.Size(1)*g.groups != g.c {
		return Errorf("conv3d: input has %d channels, weight %v with groups %d expects %d", g.c, w.Sizes(), g.groups, w.Size(1)*g.groups)
	}
	if bias != nil && (bias.Dim() != 1 || bias.Size(0) != g.o) {
		return Errorf("conv3d bias: expected sizes [%d], got %v", g.o, bias.Sizes())
	}
	st.shape = st.shape[:0]
	if batched {
		st.shape = append(st.shape, g.n)
	}
	st.shape = append(st.shape, g.o, g.od, g.oh, g.ow)
	o := p.OutTensor(0)
	o.Resize(ivalue.Float32, st.shape)
	c := o.F32Contig()
	if o.Numel() == 0 {
		return nil
	}
	vol := g.od * g.oh * g.ow
	var beta float32
	if bias != nil {
		bd, bo, bs := bias.F32(), bias.Offset(), bias.Strides()[0]
		for nn := 0; nn < g.n; nn++ {
			for oc := 0; oc < g.o; oc++ {
				convFill(c[(nn*g.o+oc)*vol:(nn*g.o+oc+1)*vol], bd[bo+oc*bs])
			}
		}
		beta = 1
	}
	cg, og := g.c/g.groups, g.o/g.groups
	kdim := cg * g.kd * g.kh * g.kw
	// 1x1x1, stride 1, no padding, over a volume whose rows merge: B is
	// the input, [cg, d*h*w] with column stride sW.
	pointwise := g.kd == 1 && g.kh == 1 && g.kw == 1 && g.str == [3]int{1, 1, 1} && g.pad == [3]int{} &&
		(g.h == 1 || g.sH == g.w*g.sW) && (g.d == 1 || g.sD == g.h*g.sH)
	var preA []*gemm.PrepackedA
	var wm gemm.Mat
	if pre != nil && pre.w == w && pre.groups == g.groups && (!pointwise || (vol > 1 && og > 1)) {
		preA = pre.packedA()
	} else {
		wd, woff := convWeightRows(st, w)
		wm = gemm.Mat{Data: wd, Off: woff, RS: kdim, CS: 1}
	}
	xd := x.F32()
	cv := gemm.ConvSrc{Data: xd, SC: g.sC, SH: g.sH, SW: g.sW, H: g.h, W: g.w, KH: g.kh, KW: g.kw,
		StrH: g.str[1], StrW: g.str[2], PadH: g.pad[1], PadW: g.pad[2], DilH: g.dil[1], DilW: g.dil[2], OH: g.oh, OW: g.ow,
		SD: g.sD, D: g.d, KD: g.kd, OD: g.od, StrD: g.str[0], PadD: g.pad[0], DilD: g.dil[0]}
	for nn := 0; nn < g.n; nn++ {
		for gr := 0; gr < g.groups; gr++ {
			xoff := x.Offset() + nn*g.sN + gr*cg*g.sC
			coff := (nn*g.o + gr*og) * vol
			var b gemm.Mat
			var src *gemm.ConvSrc
			if pointwise {
				b = gemm.Mat{Data: xd, Off: xoff, RS: g.sC, CS: g.sW}
			} else {
				cv.Off = xoff
				src = &cv
			}
			if preA != nil {
				gemm.WithPrepackedA(p.Scratch, vol, preA[gr], b, src, beta, c, coff, vol)
				continue
			}
			a := wm
			a.Off += gr * og * kdim
			gemm.Gemm(p.Scratch, og, vol, kdim, 1, a, b, src, beta, c, coff, vol)
		}
	}
	return nil
}
