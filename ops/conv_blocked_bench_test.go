package ops

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/gosr/gosr/ops/gemm"
	"github.com/gosr/gosr/ops/parallel"
)

// BenchmarkDirectBlocked: convDirectBlocked on resnet's 3x3
// convolutions, row by row (56x56, 28x28) and flat (14x14, 7x7, and
// every stride-2 one), its stride-2 1x1 downsampling ones, and
// squeezenet's expanding 3x3s, in GFLOP/s.
func BenchmarkDirectBlocked(b *testing.B) {
	if !useAVX2 {
		b.Skip("no AVX2: convDirectBlocked is not used")
	}
	r := rand.New(rand.NewSource(3))
	for _, c := range []directCase{
		{64, 64, 56, 3, 1}, {128, 128, 28, 3, 1}, {256, 256, 14, 3, 1}, {512, 512, 7, 3, 1},
		{64, 128, 56, 3, 2}, {128, 256, 28, 3, 2}, {256, 512, 14, 3, 2}, {128, 128, 56, 3, 2}, {256, 256, 28, 3, 2}, {512, 512, 14, 3, 2},
		{256, 512, 56, 1, 2}, {512, 1024, 28, 1, 2}, {1024, 2048, 14, 1, 2},
		// squeezenet's expanding 3x3s: few input channels, a short sum.
		{16, 64, 55, 3, 1}, {32, 128, 27, 3, 1}, {64, 256, 13, 3, 1},
		// densenet121's growth convolutions: 128 channels to 32.
		{128, 32, 56, 3, 1}, {128, 32, 28, 3, 1}, {128, 32, 14, 3, 1}, {128, 32, 7, 3, 1},
		// squeezenet1_1's classifier, a half last output block (see
		// [Half output blocks]; the rows kernel's in BenchmarkPointwiseRows).
		{512, 1000, 13, 1, 1},
	} {
		b.Run(c.String(), func(b *testing.B) { benchDirect(b, r, &gemm.Scratch{}, c) })
	}
}

// directCase is a convolution of BenchmarkDirectBlocked: c channels of
// hw x hw to o, a k x k kernel at stride s, padded by k/2.
type directCase struct{ c, o, hw, k, s int }

func (c directCase) String() string {
	return fmt.Sprintf("%dx%dx%d_%d_k%d_s%d", c.c, c.hw, c.hw, c.o, c.k, c.s)
}

// inputs is c's geometry, a random input, a random weight packed for
// convDirectBlocked, and room for the output.
func (c directCase) inputs(r *rand.Rand) (g convGeom, x, blk, out []float32) {
	g = squareGeom(c.c, c.o, c.hw, c.k, c.s, 1)
	kk := c.k * c.k
	x = normals(r, c.c*c.hw*c.hw)
	blk = directBlockedWeights(normals(r, c.o*c.c*kk), c.o, c.c, kk)
	return g, x, blk, make([]float32, c.o*g.oh*g.ow)
}

// benchDirect times convDirectBlocked on c with sc (clamped at 0, no
// bias), in GFLOP/s.
func benchDirect(b *testing.B, r *rand.Rand, sc *gemm.Scratch, c directCase) {
	g, x, blk, out := c.inputs(r)
	kk := c.k * c.k
	st := &convState{}
	ep := gemm.Clamp{On: true, Lo: 0, Hi: float32(3.4e38)}
	convDirectBlocked(sc, &g, blk, x, 0, nil, nil, 0, 0, nil, 0, out, st, ep, nil)
	b.ResetTimer()
	for range b.N {
		convDirectBlocked(sc, &g, blk, x, 0, nil, nil, 0, 0, nil, 0, out, st, ep, nil)
	}
	flops := 2 * float64(c.o*c.c*kk*g.oh*g.ow)
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkDepthwise: mobilenet_v3_large's and efficientnet_b0's
// depthwise convolutions (bias, clamp at 0) by the channel-blocked path
// (see [Channel-blocked depthwise]), in µs a run (ns/op) and GB/s of
// the input and output planes, to set beside ONNX Runtime's per-node
// profile (srbench compare -ort-profile).
func BenchmarkDepthwise(b *testing.B) {
	if !useAVX2 {
		b.Skip("no AVX2: convDepthwiseBlocked is not used")
	}
	r := rand.New(rand.NewSource(3))
	for _, c := range []struct{ c, hw, k, s int }{
		{16, 112, 3, 1}, {32, 112, 3, 1}, {64, 112, 3, 2}, {96, 112, 3, 2}, {72, 56, 3, 1}, {144, 56, 3, 1},
		{72, 56, 5, 2}, {144, 56, 5, 2}, {120, 28, 5, 1}, {240, 28, 5, 1}, {240, 28, 3, 2}, {480, 14, 3, 1},
	} {
		g := squareGeom(c.c, c.c, c.hw, c.k, c.s, c.c)
		b.Run(fmt.Sprintf("%dx%dx%d_k%d_s%d", c.c, c.hw, c.hw, c.k, c.s), func(b *testing.B) {
			kk := c.k * c.k
			x, w, bias := normals(r, c.c*c.hw*c.hw), normals(r, c.c*kk), normals(r, c.c)
			blk := depthwiseBlockedWeights(w, c.c, kk)
			out := make([]float32, c.c*g.oh*g.ow)
			st := &convState{}
			sc := &gemm.Scratch{}
			ep := gemm.Clamp{On: true, Lo: 0, Hi: float32(3.4e38)}
			convDepthwise(sc, &g, x, 0, w, 0, blk, bias, 0, 1, out, planesApart, 0, st, ep, nil)
			b.ResetTimer()
			for range b.N {
				convDepthwise(sc, &g, x, 0, w, 0, blk, bias, 0, 1, out, planesApart, 0, st, ep, nil)
			}
			bytes := 4 * float64(len(x)+len(out))
			b.ReportMetric(bytes*float64(b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}

// BenchmarkDirectBlockedThreads: convDirectBlocked on resnet's 3x3
// convolutions (row by row at 56x56 and 28x28, flat at 14x14, 7x7 and
// stride 2) with teams of 1 and 2, in GFLOP/s: how far each scales
// alone, beside BenchmarkFMAPeakCores in ops/gemm (the cores' own).
func BenchmarkDirectBlockedThreads(b *testing.B) {
	if !useAVX2 {
		b.Skip("no AVX2: convDirectBlocked is not used")
	}
	r := rand.New(rand.NewSource(3))
	for _, c := range []directCase{
		{64, 64, 56, 3, 1}, {128, 128, 28, 3, 1}, {256, 256, 14, 3, 1}, {512, 512, 7, 3, 1}, {128, 128, 56, 3, 2},
	} {
		for _, th := range []int{1, 2} {
			team := parallel.New(th)
			b.Run(fmt.Sprintf("%s/t%d", c, th), func(b *testing.B) { benchDirect(b, r, gemm.NewScratch(team), c) })
			team.Close()
		}
	}
}

// squareGeom is one image of c channels of hw x hw into o, a k x k
// kernel at stride s padded by k/2, in groups, contiguous NCHW.
func squareGeom(c, o, hw, k, s, groups int) convGeom {
	p := k / 2
	g := convGeom{n: 1, c: c, h: hw, w: hw, sN: c * hw * hw, sC: hw * hw, sH: hw, sW: 1, o: o,
		kh: k, kw: k, strH: s, strW: s, padH: p, padW: p, dilH: 1, dilW: 1, groups: groups}
	g.oh, g.ow = (hw+2*p-k)/s+1, (hw+2*p-k)/s+1
	return g
}

// BenchmarkDirectBlockedEvicted times convDirectBlocked on small-map
// convolutions whose weight outweighs the input (efficientnet_b0's and
// mobilenet_v3_large's pointwise ones at 7x7 and 14x14, resnet50's
// last 3x3) after 32 MB of other memory was written, as a model's other
// layers do between two runs of a node: the weight comes from memory,
// as in the model (see [Weight prefetch]). The median of single runs,
// in µs.
func BenchmarkDirectBlockedEvicted(b *testing.B) {
	if !useAVX2 {
		b.Skip("no AVX2: convDirectBlocked is not used")
	}
	r := rand.New(rand.NewSource(3))
	other := make([]float32, 32<<20/4)
	for _, c := range []directCase{
		{1152, 320, 7, 1, 1}, {320, 1280, 7, 1, 1}, {192, 1152, 7, 1, 1}, {1152, 192, 7, 1, 1}, {672, 192, 7, 1, 1},
		{112, 672, 14, 1, 1}, {512, 512, 7, 3, 1},
	} {
		g, x, blk, out := c.inputs(r)
		bias := normals(r, c.o)
		st, sc := &convState{}, &gemm.Scratch{}
		b.Run(c.String(), func(b *testing.B) {
			benchEvicted(b, other, func() {
				convDirectBlocked(sc, &g, blk, x, 0, nil, bias, 0, 1, nil, 0, out, st, gemm.Clamp{}, nil)
			})
		})
	}
}
