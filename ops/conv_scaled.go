package ops

import "github.com/gosr/gosr/ivalue"

// [Scaled convolution input]
//
// A squeeze-and-excitation block ends in x * s, s one value a channel
// ([N, C, 1, 1]), and the block's projection, a convolution, is the
// product's one reader (efficientnet_b0 has 16, mobilenet_v3_large 8).
// As its own op the product is a pass over the feature map, read and
// written, before the convolution reads it again: 0.36 ms of
// efficientnet_b0's 9. passes.FuseConvScale gives the convolution the
// product's two factors instead (gosr::conv_scaled and the other
// *_scaled kinds), and the kernel takes the scale where it touches the
// input anyway:
//
//   - the channel-blocked direct kernels (see [Channel-blocked direct
//     convolution]; the 7x7 and 14x14 maps) pack each block of eight
//     input channels into their own layout: packRows8ScaledAVX2
//     multiplies each column's eight channels by their factors as it
//     stores them. The products are the mul's, so the output is the
//     unfused one's, bit for bit.
//   - the pointwise rows kernel (see [Pointwise rows]; the 28x28 to
//     112x112 maps) reads the input in place: the weight's [o, c] rows
//     are multiplied by the factors instead (o*c products a run, 512
//     to 9600 here, against c*h*w for the feature map), one image at a
//     time. Each term is then (w*s)*x for w*(s*x), a rounding apart.
//   - anywhere else (another path, a batch of several images on the
//     rows kernel, an output over an operand, a broadcast that is not
//     one value a channel, other dtypes) the product is made first,
//     into the node's own tensor, as aten::mul makes it.

// convScaleInput resolves the scaled convolution's input (see [Scaled
// convolution input]): x and the scale operand, in either order, as
// x's tensor and one factor a channel of each image (scale, N*C
// floats); or, where neither operand is one value a channel of the
// other, the product made now (scale nil).
func convScaleInput(p *ProcessedNode, spec convSpec, st *convState, x, w *ivalue.Tensor) (*ivalue.Tensor, *ivalue.Tensor, error) {
	s := p.Tensor(spec.scale)
	if s == nil {
		return nil, nil, Errorf("conv scale: expected a tensor, got %s", p.Input(spec.scale).Kind())
	}
	if w.Dim() == 4 {
		if channelScale(x, s) {
			return x, s, nil
		}
		if channelScale(s, x) {
			return s, x, nil // x*s is s*x, bit for bit
		}
	}
	xs, err := convScaleNow(st, x, s)
	return xs, nil, err
}

// channelScale reports whether s is one float32 a channel of x's
// images: x a float32 [N, C, H, W], s a contiguous float32 [N, C, 1,
// 1].
func channelScale(x, s *ivalue.Tensor) bool {
	if x.Dim() != 4 || s.Dim() != 4 || x.DType() != ivalue.Float32 || s.DType() != ivalue.Float32 || !s.IsContiguous() {
		return false
	}
	xs, ss := x.Sizes(), s.Sizes()
	return ss[0] == xs[0] && ss[1] == xs[1] && ss[2] == 1 && ss[3] == 1 && (xs[2] != 1 || xs[3] != 1)
}

// convScaleNow makes x * s in the node's tensor as aten::mul does
// (broadcast, types promoted).
func convScaleNow(st *convState, x, s *ivalue.Tensor) (*ivalue.Tensor, error) {
	if st.scaledX == nil {
		st.scaledX, st.scaledBin = &ivalue.Tensor{}, &binState{}
	}
	dt := ResultType(x, s, nil, ivalue.Undefined)
	if err := binGeneral(opMul, st.scaledBin, x, s, ivalue.IValue{}, false, dt, dt, ivalue.FromInt(1), st.scaledX); err != nil {
		return nil, Errorf("conv scale: %v", err)
	}
	return st.scaledX, nil
}

// convScaledFits reports whether the path g takes applies the scale s
// itself (see [Scaled convolution input]): the direct kernels along
// unit-stride rows (their stride-2 packing has no scaled form), or the
// pointwise rows kernel for one image; and the output c meets neither
// operand.
func convScaledFits(g *convGeom, pre *convPrepacked, w, x, s *ivalue.Tensor, c []float32) bool {
	olo, ohi := f32Addr(c), f32Addr(c)+uintptr(len(c))*4
	xlo, xhi := convSpan(x, g)
	slo := f32Addr(s.F32()) + uintptr(s.Offset())*4
	if rangesOverlap(olo, ohi, xlo, xhi) || rangesOverlap(olo, ohi, slo, slo+uintptr(s.Numel())*4) {
		return false
	}
	if convDirectBlockedFits(g, pre, w) {
		return g.strW == 1
	}
	return g.n == 1 && convIsPointwise(g) && convPointwiseRowsFits(g)
}

// convScaleWeights returns the [o, c] weight rows at wd[woff:] with
// column k multiplied by scale[k] (one image's factors), in the node's
// state.
func convScaleWeights(st *convState, g *convGeom, wd []float32, woff int, scale []float32) []float32 {
	n := g.o * g.c
	if cap(st.wscaled) < n {
		st.wscaled = make([]float32, n)
	}
	ws := st.wscaled[:n]
	for o := 0; o < g.o; o++ {
		binLoopF32(opMul, ws[o*g.c:(o+1)*g.c], wd, woff+o*g.c, 1, scale, 0, 1, 1)
	}
	return ws
}
