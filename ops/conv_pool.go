package ops

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops/gemm"
)

// ConvClampMaxPoolSchema is gosr's convolution with a clamp epilogue
// whose output a max pooling alone reads (passes.FuseConvMaxPool makes it
// of a gosr::conv_clamp and that aten::max_pool2d): conv_clamp's inputs,
// then max_pool2d's after its input.
const ConvClampMaxPoolSchema = "gosr::conv_clamp_max_pool2d(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, int[] dilation, int groups, float min, float max, int[] kernel_size, int[] pool_stride, int[] pool_padding, int[] pool_dilation, bool ceil_mode) -> Tensor"

// convPoolFirst is the input index of the pooling's kernel_size.
const convPoolFirst = 9

// [Pooled convolution]
//
// The stems of squeezenet and shufflenet (and of resnets and densenets,
// which passes.FuseConvMaxPool leaves apart) are a convolution, its relu
// and a max pooling: the convolution writes its
// whole output (64 planes of 112x112, 3.2 MB, past L2) and the pooling
// reads it back once. gosr::conv_clamp_max_pool2d computes the
// convolution eight output channels at a time over the whole map
// (gemm.ConvWideRowsBands: the rows kernel's unit) into a buffer that
// stays in L2 (convPoolBandFloats) and pools those planes before the
// next eight are computed. The convolution's planes and the pooling's
// windows are computed by the same kernels as the two nodes', so the
// output is the same bits. Where the rows kernels do not take the
// convolution (no AVX-512, groups, many taps) or the output overlaps
// the input, the convolution runs whole into a tensor of the node's own
// and the pooling reads it, as the two nodes would. Bands of rows
// (every channel, a few rows, the shared rows carried) were tried
// first: the pooling's per-plane calls on four rows at a time cost more
// than the cache saved. squeezenet's stem and pooling 0.72 -> 0.57 ms
// (srbench ops -per-node, the unfused build in the same minute); its
// next node is unchanged, where resnet18's 3x3 after the pooling reads
// planes the bands have pushed out of L2 and loses about what the stem
// gains.

// convPoolBandFloats bounds the band buffer: 512 KB, in L2 beside the
// input copy the band reads.
const convPoolBandFloats = 128 << 10

// convPool is one gosr::conv_clamp_max_pool2d node's pooling: its
// state, and one run's geometry for the bands.
type convPool struct {
	pool       poolState
	q          poolParams
	group      int       // output channels a band
	oh, ow, ch int       // the convolution's output rows, columns, channels
	out        []float32 // the node's output (all images)
	img        []float32 // the image whose bands run
	ran        bool      // the bands took this run
	// convNumel is the latest run's convolution output's elements (for
	// FLOPs: the node's output is the pooled one).
	convNumel int64
	// aside is the convolution's output where the bands do not apply.
	aside *ivalue.Tensor
}

func init() {
	RegisterOut("gosr::conv_clamp_max_pool2d", func(n *graph.Node) Kernel {
		if !n.Matches(ConvClampMaxPoolSchema) {
			return nil
		}
		pre := convPrepack(n, convClampSpec)
		return func(p *ProcessedNode) error { return convPoolKernel(p, pre) }
	})
}

// convPoolKernel runs gosr::conv_clamp_max_pool2d (see [Pooled
// convolution]).
func convPoolKernel(p *ProcessedNode, pre *convPrepacked) error {
	st, _ := p.State.(*convState)
	if st == nil {
		st = &convState{pooled: &convPool{aside: &ivalue.Tensor{}}}
		p.State = st
	}
	if w := p.Tensor(1); w == nil || w.Dim() != 4 {
		return Errorf("conv_clamp_max_pool2d: expected a 4-d weight (a 2-d convolution)")
	}
	cp := st.pooled
	// convRun takes the bands where they fit (cp.fits, cp.run); else
	// the convolution lands in cp.aside, pooled from there.
	cp.ran = false
	if err := convRun(p, convClampSpec, pre, st, nil, cp.aside); err != nil || cp.ran {
		return err
	}
	in, err := poolInputOf(cp.aside, "conv_clamp_max_pool2d's pooling")
	if err != nil {
		return err
	}
	q, err := poolParamsRead(p, convPoolFirst, &in, &cp.pool, "conv_clamp_max_pool2d", true)
	if err != nil {
		return err
	}
	o := poolOutput(p, 0, &in, q.oh, q.ow, ivalue.Float32, &cp.pool).F32Contig()
	maxPoolRun(p.Scratch, &cp.pool, &in, &q, o)
	return nil
}

// fits reports whether the bands take convolution g of x: the rows
// kernels take the convolution, and the node's output (sized here)
// does not overlap x (the bands write it while x is still read).
func (cp *convPool) fits(p *ProcessedNode, g *convGeom, x *ivalue.Tensor) (bool, error) {
	if !convWideRowsFits(g) || g.n == 0 {
		return false, nil
	}
	in := poolInput{n: g.n, c: g.o, h: g.oh, w: g.ow, batched: g.batched}
	q, err := poolParamsRead(p, convPoolFirst, &in, &cp.pool, "conv_clamp_max_pool2d", true)
	if err != nil {
		return false, err
	}
	o := poolOutput(p, 0, &in, q.oh, q.ow, ivalue.Float32, &cp.pool).F32Contig()
	xlo, xhi := convSpan(x, g)
	if olo := f32Addr(o); rangesOverlap(olo, olo+uintptr(len(o))*4, xlo, xhi) {
		return false, nil
	}
	cp.q, cp.out = q, o
	return true, nil
}

// run computes the pooled convolution of x (geometry g, weight rows wd
// at woff, bias bd[bo+o*bs], nil: none) into cp.out, which fits sized, image by image, band by
// band.
func (cp *convPool) run(sc *gemm.Scratch, g *convGeom, x *ivalue.Tensor, wd []float32, woff int, bd []float32, bo, bs int, ep gemm.Clamp) {
	// Channels a band: whole groups of 8 whose planes fit
	// convPoolBandFloats, at least 8.
	plane := g.oh * g.ow
	cp.group = max(8, convPoolBandFloats/plane/8*8)
	cp.oh, cp.ow, cp.ch = g.oh, g.ow, g.o
	band := sc.Floats(min(cp.group, g.o) * plane)
	wg := g.wideConv(1)
	img := g.o * cp.q.oh * cp.q.ow
	for nn := 0; nn < g.n; nn++ {
		cp.img = cp.out[nn*img : (nn+1)*img]
		gemm.ConvWideRowsBands(sc, &wg, g.o, wd, woff, x.F32(), x.Offset()+nn*g.sN, g.sC, g.sH, g.sW, bd, bo, bs, ep, band, cp)
	}
	cp.img, cp.out, cp.ran = nil, nil, true
}

// BandChannels implements gemm.BandSink: band i's output channels.
func (cp *convPool) BandChannels(i int) (int, int, bool) {
	o0 := i * cp.group
	if o0 >= cp.ch {
		return 0, 0, false
	}
	return o0, min(cp.ch, o0+cp.group), true
}

// Band implements gemm.BandSink: pools band i's planes from it.
func (cp *convPool) Band(i int, band []float32, o0, o1 int) {
	plane := cp.oh * cp.ow
	in := poolInput{data: band, n: 1, c: o1 - o0, h: cp.oh, w: cp.ow, sC: plane, sH: cp.ow, sW: 1}
	pplane := cp.q.oh * cp.q.ow
	for ch := o0; ch < o1; ch++ {
		maxPoolPlane(&in, &cp.q, (ch-o0)*plane, cp.img[ch*pplane:(ch+1)*pplane])
	}
}
