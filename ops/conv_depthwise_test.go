package ops

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/gosr/gosr/ops/gemm"
	"github.com/gosr/gosr/ops/parallel"
	"github.com/stretchr/testify/require"
)

// convDepthwiseRows against a float64 direct convolution, assembly and
// Go, at strides 1 to 3 along W and 1 or 2 along H, kernels 1 to 7,
// padded or not, dilated, odd and even sizes, planes of several blocks
// and of one row, with a bias and a clamp; at stride 1 under the
// assembly also against convDepthwiseOne (an axpy per tap and row: the
// same fused sums in the same order, so the same bits).
func TestDepthwiseRows(t *testing.T) {
	type dwCase struct{ h, w, k, pad, strH, strW, dilH, dilW int }
	cases := []dwCase{
		{112, 112, 3, 1, 1, 1, 1, 1}, {57, 56, 5, 2, 1, 1, 1, 1}, {400, 9, 3, 1, 1, 1, 1, 1}, {300, 7, 3, 1, 1, 1, 1, 1},
		{64, 64, 3, 2, 1, 1, 2, 2}, {33, 70, 7, 3, 1, 1, 1, 1}, {90, 40, 1, 0, 1, 1, 1, 1}, {7, 7, 3, 1, 1, 1, 1, 1},
		{1, 30, 3, 1, 1, 1, 1, 1}, {112, 112, 3, 1, 2, 2, 1, 1}, {57, 57, 5, 2, 2, 2, 1, 1}, {20, 9, 3, 0, 2, 2, 1, 1},
		{30, 31, 3, 1, 1, 2, 1, 1}, {16, 16, 5, 2, 2, 2, 2, 1}, {7, 7, 3, 1, 2, 2, 1, 1}, {19, 23, 3, 1, 3, 3, 1, 2},
		{14, 14, 3, 0, 1, 1, 1, 1},
	}
	for _, asm := range []bool{false, true} {
		if asm && !useAVX2 {
			continue
		}
		saved := useAVX2
		useAVX2 = asm
		r := rand.New(rand.NewSource(8))
		for _, c := range cases {
			for _, ep := range []gemm.Clamp{{}, {On: true, Lo: -0.5, Hi: 0.75}} {
				g := convGeom{n: 1, c: 1, h: c.h, w: c.w, sC: c.h * c.w, sH: c.w, sW: 1, o: 1, kh: c.k, kw: c.k,
					strH: c.strH, strW: c.strW, padH: c.pad, padW: c.pad, dilH: c.dilH, dilW: c.dilW, groups: 1}
				g.oh = (c.h+2*c.pad-c.dilH*(c.k-1)-1)/c.strH + 1
				g.ow = (c.w+2*c.pad-c.dilW*(c.k-1)-1)/c.strW + 1
				name := fmt.Sprintf("asm%v/%+v/clamp%v", asm, c, ep.On)
				require.True(t, convDepthwiseRowsFits(&g), name)
				x, wk := normals(r, c.h*c.w), normals(r, c.k*c.k)
				got := make([]float32, g.oh*g.ow+1)
				got[len(got)-1] = 9
				convDepthwiseRows(&g, x, 0, wk, 0.5, got[:g.oh*g.ow], &convState{}, ep)
				require.Equal(t, float32(9), got[len(got)-1], "%s: wrote past the plane", name)
				for oh := 0; oh < g.oh; oh++ {
					for ow := 0; ow < g.ow; ow++ {
						want := 0.5
						for ki := 0; ki < c.k; ki++ {
							for kj := 0; kj < c.k; kj++ {
								ih, iw := oh*c.strH+ki*c.dilH-c.pad, ow*c.strW+kj*c.dilW-c.pad
								if ih >= 0 && ih < c.h && iw >= 0 && iw < c.w {
									want += float64(wk[ki*c.k+kj]) * float64(x[ih*c.w+iw])
								}
							}
						}
						if ep.On {
							want = math.Min(math.Max(want, -0.5), 0.75)
						}
						require.InDelta(t, want, float64(got[oh*g.ow+ow]), 1e-5, "%s: output (%d, %d)", name, oh, ow)
					}
				}
				if asm && c.strH == 1 && c.strW == 1 && !ep.On {
					one := make([]float32, g.oh*g.ow)
					for i := range one {
						one[i] = 0.5
					}
					convDepthwiseOne(&g, x, 0, wk, one)
					require.Equal(t, one, got[:g.oh*g.ow], "%s: bits of convDepthwiseOne", name)
				}
			}
		}
		useAVX2 = saved
	}
}

// normals is n draws of N(0, 1).
func normals(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// convDepthwiseBlocked against a float64 direct convolution and, bit
// for bit, against convDepthwiseRows plane by plane (the same fused sums
// in the same order): channel counts that fill eight-channel blocks and
// ones that leave a partial block, row widths below, at and past 8,
// strides 1 and 2 along W (1 to 3 along H), kernels 1 to 7, padding,
// dilation, batches, input planes strided apart (a channel slice), a
// bias or none, a clamp or none, an activation.
func TestDepthwiseBlocked(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2: convDepthwiseBlocked is not used")
	}
	type dwCase struct{ n, c, h, w, k, pad, strH, strW, dil, gap int }
	cases := []dwCase{
		{1, 16, 7, 7, 5, 2, 1, 1, 1, 0}, {1, 24, 14, 14, 5, 2, 2, 2, 1, 0}, {1, 8, 112, 112, 3, 1, 2, 2, 1, 0},
		{1, 16, 56, 56, 3, 1, 1, 1, 1, 0}, {2, 13, 9, 11, 3, 1, 1, 1, 1, 0}, {1, 3, 5, 30, 3, 0, 1, 2, 1, 0},
		{1, 32, 28, 28, 7, 3, 1, 1, 1, 0}, {1, 8, 16, 16, 3, 2, 1, 1, 2, 0}, {1, 17, 1, 30, 3, 1, 1, 1, 1, 0},
		{2, 16, 15, 17, 3, 1, 3, 2, 1, 5}, {1, 8, 20, 9, 1, 0, 1, 1, 1, 0}, {1, 40, 4, 4, 3, 1, 2, 2, 1, 3},
		// Rows of one or three 8-position blocks, odd and even in
		// number, with AVX-512 the odd blocks two rows at a time (at
		// row stride 2 too).
		{1, 24, 11, 7, 3, 1, 2, 1, 1, 0}, {2, 16, 6, 20, 3, 1, 1, 1, 1, 0},
	}
	r := rand.New(rand.NewSource(9))
	for _, sc := range blockedScratches(t) {
		for _, c := range cases {
			for _, v := range []struct {
				bias, act bool
				ep        gemm.Clamp
			}{{false, false, gemm.Clamp{}}, {true, false, gemm.Clamp{On: true, Lo: -0.5, Hi: 0.75}}, {true, true, gemm.Clamp{}}} {
				name := fmt.Sprintf("%+v/bias%v/act%v/clamp%v", c, v.bias, v.act, v.ep.On)
				plane := c.h*c.w + c.gap
				g := convGeom{n: c.n, c: c.c, h: c.h, w: c.w, sN: c.c * plane, sC: plane, sH: c.w, sW: 1, o: c.c,
					kh: c.k, kw: c.k, strH: c.strH, strW: c.strW, padH: c.pad, padW: c.pad, dilH: c.dil, dilW: c.dil, groups: c.c}
				g.oh = (c.h+2*c.pad-c.dil*(c.k-1)-1)/c.strH + 1
				g.ow = (c.w+2*c.pad-c.dil*(c.k-1)-1)/c.strW + 1
				require.True(t, convDepthwiseBlockedFits(&g), name)
				x, w := normals(r, 3+c.n*c.c*plane), normals(r, c.c*c.k*c.k)
				var bias []float32
				if v.bias {
					bias = normals(r, 2*c.c)
				}
				act := testAct(v.act)
				op := g.oh * g.ow
				got := make([]float32, c.n*c.c*op+1)
				got[len(got)-1] = 9
				st := &convState{}
				convDepthwise(sc, &g, x, 3, w, 0, nil, bias, 1, 2, got[:len(got)-1], planesApart, 0, st, v.ep, act)
				require.Equal(t, float32(9), got[len(got)-1], "%s: wrote past the output", name)
				// The weight laid out once for the module gives the same bits.
				pre := make([]float32, len(got))
				convDepthwise(sc, &g, x, 3, w, 0, depthwiseBlockedWeights(w, c.c, c.k*c.k), bias, 1, 2, pre[:len(pre)-1], planesApart, 0, st, v.ep, act)
				require.Equal(t, got[:len(got)-1], pre[:len(pre)-1], "%s: prepacked weight", name)
				want := make([]float32, op)
				for nn := 0; nn < c.n; nn++ {
					for ch := 0; ch < c.c; ch++ {
						in := 3 + nn*g.sN + ch*plane
						wk := w[ch*c.k*c.k : (ch+1)*c.k*c.k]
						var b float32
						if v.bias {
							b = bias[1+2*ch]
						}
						convDepthwiseRows(&g, x, in, wk, b, want, st, v.ep)
						if act != nil {
							act(want)
						}
						gp := got[(nn*c.c+ch)*op : (nn*c.c+ch+1)*op]
						require.Equal(t, want, gp, "%s: image %d channel %d: bits of convDepthwiseRows", name, nn, ch)
						for oh := 0; oh < g.oh; oh++ {
							for ow := 0; ow < g.ow; ow++ {
								ref := float64(b)
								for ki := 0; ki < c.k; ki++ {
									for kj := 0; kj < c.k; kj++ {
										ih, iw := oh*c.strH+ki*c.dil-c.pad, ow*c.strW+kj*c.dil-c.pad
										if ih >= 0 && ih < c.h && iw >= 0 && iw < c.w {
											ref += float64(wk[ki*c.k+kj]) * float64(x[in+ih*c.w+iw])
										}
									}
								}
								if v.ep.On {
									ref = math.Min(math.Max(ref, -0.5), 0.75)
								}
								if act != nil {
									ref = 2*ref + 1
								}
								require.InDelta(t, ref, float64(gp[oh*g.ow+ow]), 1e-4, "%s: (%d, %d, %d, %d)", name, nn, ch, oh, ow)
							}
						}
					}
				}
			}
		}
		requireSplit(t, sc)
	}
}

// blockedScratches is a scratch of one goroutine and, where there are
// two processors, one with a team of two (closed when t ends).
func blockedScratches(t *testing.T) []*gemm.Scratch {
	scs := []*gemm.Scratch{nil}
	if team := parallel.New(2); team != nil {
		t.Cleanup(team.Close)
		scs = append(scs, gemm.NewScratch(team))
	}
	return scs
}

// requireSplit checks that a scratch with a team split some op across it.
func requireSplit(t *testing.T, sc *gemm.Scratch) {
	if sc.Team() != nil {
		require.Positive(t, sc.OpSplits(), "no op was split across the team")
	}
}

// convDepthwiseBlocked writing its output over its input, in the order
// planePlan picks: forward for output planes no larger than the input's
// (stride 2, or no padding), backward for larger ones (padding past the
// kernel's reach), batches included, against the same convolution into
// separate memory.
func TestDepthwiseBlockedInPlace(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2: convDepthwiseBlocked is not used")
	}
	type dwCase struct {
		n, c, h, k, pad, str int
		ord                  planeOrder
	}
	r := rand.New(rand.NewSource(10))
	scs := blockedScratches(t)
	team2 := scs[len(scs)-1] // in place, a team must keep the order
	for _, c := range []dwCase{
		{2, 24, 14, 3, 1, 2, planesForward}, {1, 20, 9, 3, 0, 1, planesForward}, {1, 16, 7, 3, 1, 1, planesForward},
		{2, 16, 6, 3, 2, 1, planesBackward}, {1, 12, 5, 1, 1, 1, planesBackward},
	} {
		name := fmt.Sprintf("%+v", c)
		g := convGeom{n: c.n, c: c.c, h: c.h, w: c.h, sN: c.c * c.h * c.h, sC: c.h * c.h, sH: c.h, sW: 1, o: c.c,
			kh: c.k, kw: c.k, strH: c.str, strW: c.str, padH: c.pad, padW: c.pad, dilH: 1, dilW: 1, groups: c.c}
		g.oh = (c.h+2*c.pad-c.k)/c.str + 1
		g.ow = g.oh
		in, op := c.n*c.c*c.h*c.h, g.oh*g.ow
		x, w, bias := normals(r, in), normals(r, c.c*c.k*c.k), normals(r, c.c)
		want := make([]float32, c.n*c.c*op)
		convDepthwise(nil, &g, x, 0, w, 0, nil, bias, 0, 1, want, planesApart, 0, &convState{}, gemm.Clamp{}, nil)
		buf := make([]float32, max(in, len(want)))
		copy(buf, x)
		out := buf[:len(want)]
		xlo := f32Addr(buf)
		ord := planePlan(out, op, xlo, xlo+uintptr(in)*4, c.n*c.c, c.h*c.h, true)
		require.Equal(t, c.ord, ord, name)
		convDepthwise(team2, &g, buf, 0, w, 0, depthwiseBlockedWeights(w, c.c, c.k*c.k), bias, 0, 1, out, ord, xlo, &convState{}, gemm.Clamp{}, nil)
		require.Equal(t, want, out, name)
	}
}

// convGroupedBlocked against a float64 direct convolution: groups of 8
// and 16 input channels with 8 to 64 output channels each, row widths
// below, at and past 8, strides 1 and 2 along W (1 to 3 along H),
// kernels 1 to 5, padding, dilation, batches, input planes strided apart,
// a bias or none, a clamp or none, an activation.
func TestGroupedBlocked(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2: convGroupedBlocked is not used")
	}
	type gcCase struct{ n, groups, cg, og, h, w, k, pad, strH, strW, dil, gap int }
	cases := []gcCase{
		{1, 6, 8, 8, 112, 112, 3, 1, 2, 2, 1, 0}, {1, 13, 8, 8, 28, 28, 3, 1, 1, 1, 1, 0}, {1, 3, 8, 8, 7, 7, 3, 1, 1, 1, 1, 0},
		{2, 2, 16, 16, 9, 11, 3, 1, 2, 2, 1, 4}, {1, 2, 8, 24, 14, 14, 5, 2, 1, 1, 1, 0}, {1, 4, 16, 64, 6, 5, 1, 0, 1, 1, 1, 0},
		{1, 2, 8, 8, 15, 17, 3, 2, 3, 2, 2, 0}, {1, 5, 8, 16, 1, 30, 3, 1, 1, 1, 1, 0},
	}
	r := rand.New(rand.NewSource(11))
	for _, sc := range blockedScratches(t) {
		for _, c := range cases {
			for _, v := range []struct {
				bias, act bool
				ep        gemm.Clamp
			}{{false, false, gemm.Clamp{}}, {true, false, gemm.Clamp{On: true, Lo: 0, Hi: float32(math.Inf(1))}}, {true, true, gemm.Clamp{}}} {
				name := fmt.Sprintf("%+v/bias%v/act%v/clamp%v", c, v.bias, v.act, v.ep.On)
				ch, o := c.groups*c.cg, c.groups*c.og
				plane := c.h*c.w + c.gap
				g := convGeom{n: c.n, c: ch, h: c.h, w: c.w, sN: ch * plane, sC: plane, sH: c.w, sW: 1, o: o,
					kh: c.k, kw: c.k, strH: c.strH, strW: c.strW, padH: c.pad, padW: c.pad, dilH: c.dil, dilW: c.dil, groups: c.groups}
				g.oh = (c.h+2*c.pad-c.dil*(c.k-1)-1)/c.strH + 1
				g.ow = (c.w+2*c.pad-c.dil*(c.k-1)-1)/c.strW + 1
				require.True(t, convGroupedBlockedFits(&g), name)
				kk := c.k * c.k
				x, w := normals(r, 2+c.n*ch*plane), normals(r, 1+o*c.cg*kk)
				var bias []float32
				if v.bias {
					bias = normals(r, o)
				}
				act := testAct(v.act)
				op := g.oh * g.ow
				got := make([]float32, c.n*o*op+1)
				got[len(got)-1] = 9
				convGroupedBlocked(sc, &g, x, 2, w, 1, bias, 0, 1, got[:len(got)-1], &convState{}, v.ep, act)
				require.Equal(t, float32(9), got[len(got)-1], "%s: wrote past the output", name)
				for nn := 0; nn < c.n; nn++ {
					for oc := 0; oc < o; oc++ {
						gr := oc / c.og
						for oh := 0; oh < g.oh; oh++ {
							for ow := 0; ow < g.ow; ow++ {
								ref := 0.0
								if v.bias {
									ref = float64(bias[oc])
								}
								for ci := 0; ci < c.cg; ci++ {
									in := 2 + nn*g.sN + (gr*c.cg+ci)*plane
									for ki := 0; ki < c.k; ki++ {
										for kj := 0; kj < c.k; kj++ {
											ih, iw := oh*c.strH+ki*c.dil-c.pad, ow*c.strW+kj*c.dil-c.pad
											if ih >= 0 && ih < c.h && iw >= 0 && iw < c.w {
												ref += float64(w[1+(oc*c.cg+ci)*kk+ki*c.k+kj]) * float64(x[in+ih*c.w+iw])
											}
										}
									}
								}
								if v.ep.On {
									ref = math.Max(ref, 0)
								}
								if act != nil {
									ref = 2*ref + 1
								}
								require.InDelta(t, ref, float64(got[(nn*o+oc)*op+oh*g.ow+ow]), 2e-4, "%s: (%d, %d, %d, %d)", name, nn, oc, oh, ow)
							}
						}
					}
				}
			}
		}
		requireSplit(t, sc)
	}
}

// convDirectBlocked against a float64 direct convolution: 8 to 24 input
// and 16, 32 or 48 output channels (AVX-512 pairs blocks), 3x3 and 5x5 kernels, padding or none,
// row widths 20 to 56 (multiples of 6 and not), flat maps and stride 2,
// 1x1s at stride 2 and, over small maps, at stride 1,
// batches, input planes strided apart, a bias or none, a clamp or none,
// a residual (added before the clamp), an activation; one goroutine and
// a team of two.
func TestDirectBlocked(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2: convDirectBlocked is not used")
	}
	type dcCase struct{ n, c, o, h, w, k, pad, gap, s int }
	cases := []dcCase{
		{1, 64, 32, 28, 28, 3, 1, 0, 1}, {2, 8, 16, 21, 20, 3, 1, 3, 1}, {1, 24, 16, 30, 56, 5, 2, 0, 1}, {1, 16, 32, 24, 25, 3, 0, 0, 1},
		// Flat maps: 7x7 and 14x14 as in resnet, a 5x5 kernel, a map of
		// 1x2 outputs, and one of more positions than a chunk.
		{1, 32, 32, 7, 7, 3, 1, 0, 1}, {2, 16, 16, 14, 14, 3, 1, 5, 1}, {1, 8, 16, 9, 11, 5, 2, 0, 1}, {1, 8, 16, 3, 4, 3, 0, 0, 1},
		{1, 8, 16, 60, 12, 3, 1, 0, 1},
		// Stride 2 (flat at every width): resnet's 14x14 -> 7x7, odd
		// sizes, a 5x5 kernel, a wide map in chunks.
		{1, 32, 32, 14, 14, 3, 1, 0, 2}, {2, 16, 16, 15, 13, 3, 1, 2, 2}, {1, 8, 16, 11, 12, 5, 2, 0, 2}, {1, 8, 32, 56, 56, 3, 1, 0, 2},
		// 1x1 at stride 2 (resnet's downsampling), odd and even sizes.
		{1, 32, 64, 14, 14, 1, 0, 0, 2}, {2, 16, 32, 15, 13, 1, 0, 3, 2},
		// Three output blocks: a pair and one alone, by rows and flat;
		// seven: four, a pair and one.
		{1, 16, 48, 9, 24, 3, 1, 0, 1}, {1, 16, 48, 7, 7, 3, 1, 0, 1}, {1, 16, 112, 9, 24, 3, 1, 0, 1}, {1, 16, 112, 7, 7, 3, 1, 0, 1},
		// Seven-position blocks (see [Seven-position blocks]): rows of
		// 56 and 27 (28 with one dropped), a 7x7 map flat; and 30 wide,
		// where six fit.
		{1, 16, 64, 6, 56, 3, 1, 0, 1}, {2, 16, 32, 5, 27, 3, 1, 2, 1}, {1, 16, 64, 7, 7, 3, 1, 0, 1}, {1, 16, 32, 4, 30, 3, 1, 0, 1},
		// 1x1 at stride 1 over small maps (see [Small pointwise maps]):
		// flat (7x7, a batch of 6x8) and by rows (10x24).
		{1, 32, 64, 7, 7, 1, 0, 0, 1}, {2, 16, 48, 6, 8, 1, 0, 3, 1}, {1, 16, 240, 10, 24, 1, 0, 0, 1},
		// One pair of output blocks, so a team shares positions (see
		// [Position splits]): densenet121's 3x3 into 32 at 56x56 by rows,
		// at 14x14 and 7x7 flat, one half block, a map of one position
		// block a goroutine and less.
		{1, 128, 32, 56, 56, 3, 1, 0, 1}, {1, 128, 32, 14, 14, 3, 1, 0, 1}, {2, 64, 32, 7, 7, 3, 1, 1, 1}, {1, 32, 8, 20, 20, 3, 1, 0, 1},
		{1, 64, 16, 3, 5, 3, 1, 0, 1},
		// A half last output block (see [Half output blocks]): alone, after
		// a pair, after four; by rows and flat; 3x3, 1x1 over a small map
		// (squeezenet1_1's classifier, 1000 at 13x13, flat).
		{1, 16, 8, 9, 24, 3, 1, 0, 1}, {2, 16, 40, 7, 7, 3, 1, 2, 1}, {1, 16, 72, 9, 24, 3, 1, 0, 1}, {1, 8, 56, 12, 12, 3, 1, 0, 2},
		{1, 32, 200, 10, 20, 1, 0, 0, 1}, {1, 64, 1000, 13, 13, 1, 0, 0, 1},
	}
	r := rand.New(rand.NewSource(14))
	// A flat map's input blocks run in chunks that fit L2; with a budget
	// of 1 byte every block is its own chunk, adding to the sums so far.
	savedL2 := directFlatL2
	t.Cleanup(func() { directFlatL2 = savedL2 })
	for _, sc := range blockedScratches(t) {
		for i, c := range cases {
			directFlatL2 = []int{1, savedL2}[i%2]
			for _, v := range []struct {
				bias, res, act bool
				ep             gemm.Clamp
			}{{false, false, false, gemm.Clamp{}}, {true, false, false, gemm.Clamp{On: true, Lo: 0, Hi: 6}}, {true, true, false, gemm.Clamp{On: true, Lo: 0, Hi: float32(math.Inf(1))}}, {false, true, true, gemm.Clamp{}}} {
				name := fmt.Sprintf("%+v/bias%v/res%v/act%v/clamp%v/team%v/l2 %d", c, v.bias, v.res, v.act, v.ep.On, sc.Team() != nil, directFlatL2)
				plane := c.h*c.w + c.gap
				g := convGeom{n: c.n, c: c.c, h: c.h, w: c.w, sN: c.c * plane, sC: plane, sH: c.w, sW: 1, o: c.o,
					kh: c.k, kw: c.k, strH: c.s, strW: c.s, padH: c.pad, padW: c.pad, dilH: 1, dilW: 1, groups: 1}
				g.oh, g.ow = (c.h+2*c.pad-c.k)/c.s+1, (c.w+2*c.pad-c.k)/c.s+1
				kk := c.k * c.k
				x, w := normals(r, 1+c.n*c.c*plane), normals(r, c.o*c.c*kk)
				pre := &convPrepacked{blkOK: true, blk: directBlockedWeights(w, c.o, c.c, kk)}
				if c.k > 1 || c.s > 1 || useAVX512 {
					require.True(t, convDirectBlockedFits(&g, pre, nil), name)
				}
				if want, ok := map[int]int{56: 7, 27: 7, 7: 7, 30: 6}[g.ow]; ok && useAVX512 && c.o%32 == 0 {
					require.Equal(t, want, directBlockPositions(&g, g.ow < directBlockedMinRow), name)
				}
				var bias, res []float32
				if v.bias {
					bias = normals(r, c.o)
				}
				op := g.oh * g.ow
				if v.res {
					res = normals(r, 2+c.n*c.o*op)
				}
				act := testAct(v.act)
				got := make([]float32, c.n*c.o*op+1)
				got[len(got)-1] = 9
				convDirectBlocked(sc, &g, pre.blk, x, 1, nil, bias, 0, 1, res, 2, got[:len(got)-1], &convState{}, v.ep, act)
				require.Equal(t, float32(9), got[len(got)-1], "%s: wrote past the output", name)
				if useAVX512 {
					// Paired output blocks give bcRowAVX2's bits (see
					// [Paired output blocks]).
					useAVX512 = false
					one := make([]float32, len(got)-1)
					convDirectBlocked(sc, &g, pre.blk, x, 1, nil, bias, 0, 1, res, 2, one, &convState{}, v.ep, act)
					useAVX512 = true
					require.Equal(t, one, got[:len(got)-1], "%s: AVX-512 and AVX2 differ", name)
				}
				if sc.Team() != nil {
					// Split by output blocks or by positions (see
					// [Position splits]), the bits of one goroutine.
					alone := make([]float32, len(got)-1)
					convDirectBlocked(nil, &g, pre.blk, x, 1, nil, bias, 0, 1, res, 2, alone, &convState{}, v.ep, act)
					require.Equal(t, alone, got[:len(got)-1], "%s: split and alone differ", name)
				}
				for nn := 0; nn < c.n; nn++ {
					for oc := 0; oc < c.o; oc++ {
						for oh := 0; oh < g.oh; oh++ {
							for ow := 0; ow < g.ow; ow++ {
								ref := 0.0
								if v.bias {
									ref = float64(bias[oc])
								}
								for ci := 0; ci < c.c; ci++ {
									in := 1 + nn*g.sN + ci*plane
									for ki := 0; ki < c.k; ki++ {
										for kj := 0; kj < c.k; kj++ {
											ih, iw := c.s*oh+ki-c.pad, c.s*ow+kj-c.pad
											if ih >= 0 && ih < c.h && iw >= 0 && iw < c.w {
												ref += float64(w[(oc*c.c+ci)*kk+ki*c.k+kj]) * float64(x[in+ih*c.w+iw])
											}
										}
									}
								}
								idx := (nn*c.o+oc)*op + oh*g.ow + ow
								if v.res {
									ref += float64(res[2+idx])
								}
								if v.ep.On {
									ref = math.Min(math.Max(ref, float64(v.ep.Lo)), float64(v.ep.Hi))
								}
								if act != nil {
									ref = 2*ref + 1
								}
								require.InDelta(t, ref, float64(got[idx]), 5e-4, "%s: (%d, %d, %d, %d)", name, nn, oc, oh, ow)
							}
						}
					}
				}
			}
		}
		requireSplit(t, sc)
	}
}

// testAct is an activation the blocked-convolution tests check for
// (2x+1, so an activation run twice or not at all shows), or nil.
func testAct(on bool) gemm.Activation {
	if !on {
		return nil
	}
	return func(d []float32) {
		for i := range d {
			d[i] = 2*d[i] + 1
		}
	}
}
