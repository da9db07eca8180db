package ops

import "github.com/gosr/gosr/ops/gemm"

// [Pointwise rows]
//
// A pointwise (1x1, stride 1) convolution is a product of its weight
// [o, c] and its input [c, H*W], and gemm packs that input into panels
// before its kernel reads it: c*H*W floats copied for o*c*H*W
// multiply-adds. With few output channels (mobilenet's and
// efficientnet's 16 to 96 over 112x112 and 56x56 maps) the copy costs
// as much as the products, and a tile of six rows leaves 16 or 40
// channels a partial panel. With AVX-512 such a convolution runs
// without packing (gemm.PointwiseRows, see [Wide rows] in gemm): its
// kernel takes eight output channels and 32 positions at a time, 16
// accumulators, each input channel's 32 values loaded from its row in
// place and its eight weights broadcast, bias first and the residual
// and clamp as it stores (the last columns under masks), in blocks of
// positions whose input rows stay in L1 or L2 while every group of
// eight channels reads them.

// convPointwiseRowsFits reports whether convPointwiseRows takes g (a
// pointwise convolution, see convIsPointwise): AVX-512, one group,
// whole groups of eight output channels, unit-stride input rows, at
// least one chunk of 32 positions. BenchmarkPointwiseRows: 155-200
// GFLOP/s on mobilenet's, efficientnet's and resnet50's shapes, where
// gemm's packed path gives 58-183.
func convPointwiseRowsFits(g *convGeom) bool {
	return gemm.HasRows() && g.groups == 1 && g.o%8 == 0 && g.c > 0 && g.sW == 1 &&
		g.oh*g.ow >= 32
}

// convPointwiseRows computes a pointwise convolution (see [Pointwise
// rows]) whose output c does not overlap its input: c = act(clamp(w x +
// bias + res)), w the [o, c] weight rows at wd[woff:], bias bd[bo+o*bs]
// (nil: none), res laid out as c from roff (nil: none); split across
// sc's team where it has one.
func convPointwiseRows(sc *gemm.Scratch, g *convGeom, xd []float32, xoff int, wd []float32, woff int, bd []float32, bo, bs int, res []float32, roff int, c []float32, ep gemm.Clamp, act gemm.Activation) {
	plane := g.oh * g.ow
	for nn := 0; nn < g.n; nn++ {
		o := nn * g.o * plane
		gemm.PointwiseRows(sc, g.o, g.c, plane, xd, xoff+nn*g.sN, g.sC, wd, woff, bd, bo, bs, res, roff+o, c, o, plane, ep, act)
	}
}
