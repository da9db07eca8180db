package ops

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops/gemm"
)

// [Blocked layout]
//
// The direct kernels (see [Channel-blocked direct convolution]) compute
// in a channel-blocked layout: each convolution transposes its input's
// NCHW planes into eight-channel blocks ([row][column][8], zero-padded)
// and its sums back into planes. Along a chain of such convolutions
// (a resnet's, from the stem's pooling to the global pooling) both
// transposes are waste: passes.UseBlockedLayout rewrites the chain to
// keep its tensors blocked, NCHW16c as ONNX Runtime's NCHWc
// transformer does with AVX-512 (sixteen channels, one vector, a
// position), with reorders only where the chain begins and ends:
//
//   - gosr::to_nchwc: [N, C, H, W] -> [N, C/16, H, W, 16], element (n,
//     c, h, w) at [n][c/16][h][w][c%16] (C a multiple of 16; unbatched
//     [C, H, W] -> [C/16, H, W, 16]).
//   - gosr::from_nchwc: its inverse.
//   - gosr::conv_nchwc: a convolution (FuseConvClamp's, FuseConvAdd's
//     and FuseConvAct's epilogues in one kind) whose input, residual
//     and output are blocked.
//
// Blocked, a convolution runs the kernels' NCHW16c variants
// (bcRow2x16AVX512, bcRow4x16AVX512, bcRow2x7x16AVX512 in
// conv512_amd64.s): positions 64 bytes apart on both sides, an output
// block's sixteen channels at a position one store. They read each
// input block as two eight-channel halves 32 bytes apart, each with its
// taps, in the order the eight-channel kernels read two blocks, so the
// weight packing is the same and every sum is the planes' bit for bit;
// one output block left over runs as a pair with itself. Its input copy
// is row copies around the padding (dwcPackBlocked; at stride 2 the
// columns dealt by parity, dealBlocks16AVX2), and a 1x1 stride-1 one
// reads its input as it is, which is already the flat copy (see [Flat
// direct convolution]). The kernels write the output itself; only a
// last block of positions that runs past the map's (or row's) end goes
// aside and is copied in. Blocks of 7 positions are taken where they
// divide the map or row (blockedPositions: resnet's 56, 28, 14 and 7).
// The residual, clamp and activation follow as they do on planes, over
// the same elements in the same order, so the blocked chain gives the
// NCHW chain's bits.
//
// Against NCHW8c storage (the eight-channel kernels reading and
// writing blocked tensors directly, their output blocks as two halves)
// resnet50 and resnet18 run in 0.998x and 0.988x the time (alternating
// srbench ops rounds): the arithmetic is the same; sixteen is what a
// 512-bit vector and ONNX Runtime's AVX-512 path hold a position.
//
// Without AVX-512, or where the direct kernels do not take a
// convolution at run time (a dilation, a residual that broadcasts),
// conv_nchwc reorders to planes, runs the gemm path and reorders back:
// the same result, slower. The pass runs only with AVX-512
// (BlockedLayoutPays).

const (
	// ConvNCHWcSchema is gosr::conv_nchwc (see [Blocked layout]): other
	// is the residual (None: none), min and max the clamp after it
	// (-Inf and +Inf for none), act the activation's name ("" for
	// none; see FusedActivation).
	ConvNCHWcSchema = "gosr::conv_nchwc(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, int groups, Tensor? other, float min, float max, str act) -> Tensor"
	ToNCHWcSchema   = "gosr::to_nchwc(Tensor self) -> Tensor"
	FromNCHWcSchema = "gosr::from_nchwc(Tensor self) -> Tensor"
)

// nchwcBlock is the blocked layout's channels a block.
const nchwcBlock = 16

func init() {
	RegisterOut("gosr::conv_nchwc", func(n *graph.Node) Kernel {
		if !n.Matches(ConvNCHWcSchema) {
			return nil
		}
		pre := convPrepack(n, convSpec{transposed: -1, groups: 6})
		return func(p *ProcessedNode) error { return convNCHWcKernel(p, pre) }
	})
	RegisterOut("gosr::to_nchwc", func(n *graph.Node) Kernel {
		if !n.Matches(ToNCHWcSchema) {
			return nil
		}
		return func(p *ProcessedNode) error { return reorderKernel(p, true) }
	})
	RegisterOut("gosr::from_nchwc", func(n *graph.Node) Kernel {
		if !n.Matches(FromNCHWcSchema) {
			return nil
		}
		return func(p *ProcessedNode) error { return reorderKernel(p, false) }
	})
}

// BlockedLayoutPays reports whether the direct kernels run here, so
// that passes.UseBlockedLayout's chains save their transposes: AVX-512
// (the kernels' paired and seven-position blocks).
func BlockedLayoutPays() bool { return useAVX512 }

// nchwcState is a reorder's or a blocked convolution's: the shape it
// computes and, for the convolution's fallback, its planes.
type nchwcState struct {
	shape, in []int
	conv      convState
	// The fallback's (see [Blocked layout]): input, residual and
	// convolution as planes, the sum's add state and result.
	xn, on, cn, sum *ivalue.Tensor
	bin             *binState
}

// reorderKernel runs gosr::to_nchwc (in) or gosr::from_nchwc.
func reorderKernel(p *ProcessedNode, in bool) error {
	st, _ := p.State.(*nchwcState)
	if st == nil {
		st = &nchwcState{}
		p.State = st
	}
	name := "from_nchwc"
	if in {
		name = "to_nchwc"
	}
	x := p.Tensor(0)
	if x == nil {
		return Errorf("%s: expected a Tensor, got %s", name, p.Input(0).Kind())
	}
	if x.DType() != ivalue.Float32 {
		return Errorf("%s: expected a float32 tensor, got %s", name, x.DType())
	}
	out := p.OutTensor(0)
	if in {
		if err := toNCHWc(st, x, out); err != nil {
			return Errorf("to_nchwc: %v", err)
		}
		return nil
	}
	if err := fromNCHWc(st, x, out); err != nil {
		return Errorf("from_nchwc: %v", err)
	}
	return nil
}

// planesOf gives x's images, channels and positions a channel as an
// NCHW (or unbatched CHW) tensor, and whether it is batched.
func planesOf(x *ivalue.Tensor) (n, c, plane int, batched bool, err error) {
	s := x.Sizes()
	switch len(s) {
	case 4:
		return s[0], s[1], s[2] * s[3], true, nil
	case 3:
		return 1, s[0], s[1] * s[2], false, nil
	}
	return 0, 0, 0, false, Errorf("expected an NCHW or CHW tensor, got sizes %v", s)
}

// toNCHWc reorders x (NCHW or CHW, channels a multiple of 16) into out,
// blocked.
func toNCHWc(st *nchwcState, x, out *ivalue.Tensor) error {
	const cb = nchwcBlock
	n, c, plane, batched, err := planesOf(x)
	if err != nil {
		return err
	}
	if c%cb != 0 {
		return Errorf("expected channels a multiple of %d, got sizes %v", cb, x.Sizes())
	}
	s := x.Sizes()
	st.shape = st.shape[:0]
	if batched {
		st.shape = append(st.shape, n)
	}
	st.shape = append(st.shape, c/cb)
	st.shape = append(st.shape, s[len(s)-2:]...)
	st.shape = append(st.shape, cb)
	if !x.IsContiguous() {
		if st.xn == nil {
			st.xn = &ivalue.Tensor{}
		}
		st.xn.Resize(ivalue.Float32, s)
		gemmCopyContig(st.xn.F32Contig(), x)
		x = st.xn
	}
	out.Resize(ivalue.Float32, st.shape)
	blockPlanes(out.F32Contig(), x.F32()[x.Offset():x.Offset()+x.Numel()], n*c/cb, plane)
	return nil
}

// blockPlanes lays nblk blocks of sixteen planes (plane floats each, from
// src) out blocked into dst.
func blockPlanes(dst, src []float32, nblk, plane int) {
	const cb = nchwcBlock
	if plane == 0 { // an empty map: nothing to move
		return
	}
	for b := range nblk {
		copyTranspose32(dst, b*cb*plane, cb, src, b*cb*plane, plane, plane, cb)
	}
}

// unblockPlanes is blockPlanes' inverse.
func unblockPlanes(dst, src []float32, nblk, plane int) {
	const cb = nchwcBlock
	if plane == 0 {
		return
	}
	for b := range nblk {
		copyTranspose32(dst, b*cb*plane, plane, src, b*cb*plane, cb, cb, plane)
	}
}

// fromNCHWc reorders the blocked x into out as planes.
func fromNCHWc(st *nchwcState, x, out *ivalue.Tensor) error {
	return st.unblock(out, x)
}

// unblockedSizes appends to dst[:0] the sizes of the blocked x (see
// [Blocked layout]) as planes: N, C, H and W (or C, H and W).
func unblockedSizes(dst []int, x *ivalue.Tensor) ([]int, error) {
	const cb = nchwcBlock
	s := x.Sizes()
	if (len(s) != 5 && len(s) != 4) || s[len(s)-1] != cb {
		return dst, Errorf("expected a blocked tensor ([N, C/%d, H, W, %d] or [C/%d, H, W, %d]), got sizes %v", cb, cb, cb, cb, s)
	}
	if !x.IsContiguous() {
		return dst, Errorf("expected a contiguous blocked tensor, got sizes %v strides %v", s, x.Strides())
	}
	dst = dst[:0]
	if len(s) == 5 {
		dst = append(dst, s[0])
	}
	return append(dst, s[len(s)-4]*cb, s[len(s)-3], s[len(s)-2]), nil
}

// convNCHWcKernel runs gosr::conv_nchwc (see [Blocked layout]).
func convNCHWcKernel(p *ProcessedNode, pre *convPrepacked) error {
	const cb = nchwcBlock
	st, _ := p.State.(*nchwcState)
	if st == nil {
		st = &nchwcState{}
		p.State = st
	}
	x, err := gemmInput(p, 0, "conv_nchwc input")
	if err != nil {
		return err
	}
	w, err := gemmInput(p, 1, "conv_nchwc weight")
	if err != nil {
		return err
	}
	bias, err := gemmOptInput(p, 2, "conv_nchwc bias")
	if err != nil {
		return err
	}
	var other *ivalue.Tensor
	if !p.IsNone(7) {
		if other = p.Tensor(7); other == nil || other.DType() != ivalue.Float32 {
			return Errorf("conv_nchwc: expected a float32 tensor or None as other, got %s", p.Input(7).Kind())
		}
	}
	// Always on, as conv_add_clamp's: a residual is clamped after.
	ep, err := convEpilogue(p, convSpec{clamp: 8})
	if err != nil {
		return err
	}
	var act gemm.Activation
	if a := p.Input(10); a.Kind() != ivalue.KindString {
		return Errorf("conv_nchwc: expected the activation's name, got %s", a.Kind())
	} else if a.Str() != "" {
		if act = FusedActivation(a.Str()); act == nil {
			return Errorf("conv_nchwc: unknown activation %q (expected one of silu, sigmoid, hardswish, hardsigmoid, gelu, or none)", a.Str())
		}
	}
	xs, err := unblockedSizes(st.in, x)
	if err != nil {
		return Errorf("conv_nchwc input: %v", err)
	}
	st.in = xs
	var g convGeom
	g.batched = len(xs) == 4
	g.n, g.c, g.h, g.w = 1, xs[len(xs)-3], xs[len(xs)-2], xs[len(xs)-1]
	if g.batched {
		g.n = xs[0]
	}
	// Strides of the planes (the fallback's copy).
	g.sW, g.sH, g.sC, g.sN = 1, g.w, g.h*g.w, g.c*g.h*g.w
	if w.Dim() != 4 {
		return Errorf("conv_nchwc weight: expected 4 dims, got sizes %v", w.Sizes())
	}
	g.o, g.kh, g.kw = w.Size(0), w.Size(2), w.Size(3)
	if g.groups = int(p.Int(6)); g.groups != 1 {
		return Errorf("conv_nchwc: expected groups 1, got %d", g.groups)
	}
	if w.Size(1) != g.c || g.o%cb != 0 {
		return Errorf("conv_nchwc: input has %d channels, weight %v expects %d (output channels a multiple of %d)", g.c, w.Sizes(), w.Size(1), cb)
	}
	cs := &st.conv
	if g.strH, g.strW, err = convPair(p, 3, 2, cs, "stride"); err != nil {
		return err
	}
	if g.padH, g.padW, err = convPair(p, 4, 2, cs, "padding"); err != nil {
		return err
	}
	if g.dilH, g.dilW, err = convPair(p, 5, 2, cs, "dilation"); err != nil {
		return err
	}
	if g.strH <= 0 || g.strW <= 0 || g.dilH <= 0 || g.dilW <= 0 || g.padH < 0 || g.padW < 0 {
		return Errorf("conv_nchwc: expected positive stride and dilation and non-negative padding")
	}
	if !g.outputSize() {
		return Errorf("conv_nchwc: input %v (padded) is smaller than the dilated kernel %v", xs, w.Sizes())
	}
	if bias != nil && (bias.Dim() != 1 || bias.Size(0) != g.o) {
		return Errorf("conv_nchwc bias: expected sizes [%d], got %v", g.o, bias.Sizes())
	}
	var bd []float32
	bo, bs := 0, 0
	if bias != nil {
		bd, bo, bs = bias.F32(), bias.Offset(), bias.Strides()[0]
	}
	st.shape = st.shape[:0]
	if g.batched {
		st.shape = append(st.shape, g.n)
	}
	st.shape = append(st.shape, g.o/cb, g.oh, g.ow, cb)
	out := p.OutTensor(0)
	out.Resize(ivalue.Float32, st.shape)
	c := out.F32Contig()
	if len(c) == 0 {
		return nil
	}
	var rd []float32
	roff := 0
	if other != nil {
		if !SameSizes(other.Sizes(), st.shape) || !other.IsContiguous() {
			return convNCHWcPlanes(p, st, &g, pre, x, w, bias, other, ep, act)
		}
		rd, roff = cs.residualApart(other.F32(), other.Offset(), c)
	}
	if !convNCHWcDirectFits(&g, pre, w) {
		return convNCHWcPlanes(p, st, &g, pre, x, w, bias, other, ep, act)
	}
	xd, xoff := x.F32(), x.Offset()
	if xlo := f32Addr(xd) + uintptr(xoff)*4; rangesOverlap(xlo, xlo+uintptr(x.Numel())*4, f32Addr(c), f32Addr(c)+uintptr(len(c))*4) {
		cs.plane = append(cs.plane[:0], xd[xoff:xoff+x.Numel()]...)
		xd, xoff = cs.plane, 0
	}
	r := cs.dwcRunFor(&g, xd, xoff, nil, 0, bd, bo, bs, c, planesApart, ep, act, false)
	r.direct, r.roff, r.ep = true, roff, ep
	r.blkIn, r.blkOut = true, true
	r.runDirect(p.Scratch, pre.blocked(), rd)
	return nil
}

// convNCHWcDirectFits reports whether the direct kernels take a blocked
// convolution of g with the weight w packed in pre: any map (wide ones
// run flat), 1x1 ones too.
func convNCHWcDirectFits(g *convGeom, pre *convPrepacked, w *ivalue.Tensor) bool {
	return useAVX512 && pre != nil && pre.w == w && pre.blkOK && g.groups == 1 && g.strH <= directMaxStride && g.strW <= directMaxStride &&
		g.dilH == 1 && g.dilW == 1 && g.oh > 0 && g.ow > 0
}

// dwcPackBlocked is dwcPack from the blocked layout: the block's rows
// (g.w positions of sixteen channels each, from xd[in]) copied between
// zero padding.
func dwcPackBlocked(xp []float32, g *convGeom, xd []float32, in, rowF int) {
	const cb = nchwcBlock
	clear(xp[:g.padH*rowF])
	clear(xp[(g.padH+g.h)*rowF : (2*g.padH+g.h)*rowF])
	row := g.w * cb
	src := xd[in : in+g.h*row]
	for ih := 0; ih < g.h; ih++ {
		r := (g.padH + ih) * rowF
		clear(xp[r : r+g.padW*cb])
		copy(xp[r+g.padW*cb:r+g.padW*cb+row], src[ih*row:(ih+1)*row])
		clear(xp[r+g.padW*cb+row : r+rowF])
	}
}

// packRowPhasedBlocked is packRowPhased from a blocked row (g.w
// positions of sixteen channels from xd[src]): its columns dealt by
// parity into row; the padding columns are left as they are.
func packRowPhasedBlocked(row []float32, g *convGeom, xd []float32, src, hw2 int) {
	const cb = nchwcBlock
	s := xd[src : src+g.w*cb]
	// Input column i is padded column padW+i: phase (padW+i)%2, column
	// (padW+i)/2 of it.
	c0, c1 := phasedColN(g.padW, hw2, cb), phasedColN(g.padW+1, hw2, cb)
	_ = row[c0+(g.w+1)/2*cb-1]
	if g.w > 1 {
		_ = row[c1+g.w/2*cb-1]
	}
	if useAVX2 {
		dealBlocks16AVX2(&row[c0], &row[c1], &s[0], g.w)
		return
	}
	for i := range g.w {
		d := c0 + i/2*cb
		if i%2 == 1 {
			d = c1 + i/2*cb
		}
		copy(row[d:d+cb], s[i*cb:(i+1)*cb])
	}
}

// convNCHWcPlanes runs a blocked convolution through planes (see
// [Blocked layout]): the input (and residual) reordered, the gemm path,
// the residual added as aten::add would (broadcasting), the result
// reordered into the node's output.
func convNCHWcPlanes(p *ProcessedNode, st *nchwcState, g *convGeom, pre *convPrepacked, x, w, bias, other *ivalue.Tensor, ep gemm.Clamp, act gemm.Activation) error {
	const cb = nchwcBlock
	if st.xn == nil {
		st.xn, st.on, st.cn, st.sum = &ivalue.Tensor{}, &ivalue.Tensor{}, &ivalue.Tensor{}, &ivalue.Tensor{}
	}
	if err := st.unblock(st.xn, x); err != nil {
		return Errorf("conv_nchwc input: %v", err)
	}
	st.shape = st.shape[:0]
	if g.batched {
		st.shape = append(st.shape, g.n)
	}
	st.shape = append(st.shape, g.o, g.oh, g.ow)
	st.cn.Resize(ivalue.Float32, st.shape)
	c := st.cn.F32Contig()
	cep, cact := ep, act
	if other != nil { // clamped and activated after the add
		cep, cact = gemm.Clamp{}, nil
	}
	cb0 := convBias{}
	if bias != nil {
		cb0 = convBias{d: bias.F32(), off: bias.Offset(), stride: bias.Strides()[0]}
	}
	plane := g.oh * g.ow
	pointwise := convIsPointwise(g)
	if pre != nil && pre.w == w && pre.groups == 1 && (!pointwise || (plane > 1 && g.o > 1)) {
		convGemm(p.Scratch, g, st.xn, pre.packedA(), gemm.Mat{}, pointwise, cb0, c, cep, cact)
	} else {
		wd, woff := convWeightRows(&st.conv, w)
		convGemm(p.Scratch, g, st.xn, nil, gemm.Mat{Data: wd, Off: woff, RS: g.c * g.kh * g.kw, CS: 1}, pointwise, cb0, c, cep, cact)
	}
	res := st.cn
	if other != nil {
		if err := st.unblock(st.on, other); err != nil {
			return Errorf("conv_nchwc other: %v", err)
		}
		if st.bin == nil {
			st.bin = &binState{}
		}
		if err := binGeneral(opAdd, st.bin, st.cn, st.on, ivalue.IValue{}, false, ivalue.Float32, ivalue.Float32, ivalue.FromInt(1), st.sum); err != nil {
			return Errorf("conv_nchwc: %v", err)
		}
		res = st.sum
		o := res.F32Contig()
		gemm.Clamp32(o, o, ep.Lo, ep.Hi)
		if act != nil {
			act(o)
		}
	}
	if err := toNCHWc(st, res, p.OutTensor(0)); err != nil {
		return Errorf("conv_nchwc: the result: %v", err)
	}
	return nil
}

// unblock reorders the blocked b into dst as planes.
func (st *nchwcState) unblock(dst, b *ivalue.Tensor) error {
	const cb = nchwcBlock
	s, err := unblockedSizes(st.in, b)
	if err != nil {
		return err
	}
	st.in = s
	dst.Resize(ivalue.Float32, s)
	nblk := s[len(s)-3] / cb
	if len(s) == 4 {
		nblk *= s[0]
	}
	unblockPlanes(dst.F32Contig(), b.F32()[b.Offset():b.Offset()+b.Numel()], nblk, s[len(s)-1]*s[len(s)-2])
	return nil
}

// blockedPositions is the positions a call block of the direct kernels
// covers for g in the blocked layout: 7 where they divide the map (flat)
// or the row and its output blocks pair up, else bpos. Every block is
// then written straight into the output, none aside; and on resnet's
// flat pointwise maps (3136, 784 and 196 positions) bcRow2x7AVX512 ran
// ahead of bcRow4AVX512's blocks of 6 (256->64 at 56x56 0.40 against
// 0.55 ms in the model): resnet50 0.953x the time of the build with
// bpos alone (alternating srbench ops rounds).
func blockedPositions(g *convGeom, flat bool, bpos int) int {
	n := g.ow
	if flat {
		n = g.oh * g.ow
	}
	if useAVX512 && directOutBlocks(g.o)%2 == 0 && n%7 == 0 {
		return 7
	}
	return bpos
}
