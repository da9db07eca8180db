package gemm

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/gosr/gosr/ops/parallel"
	"github.com/stretchr/testify/require"
)

// wideCase is one ConvWide geometry: each way the phase-split copy and
// the wide grid can go (strides 1 to 4, unequal strides, dilation,
// padding wider than the kernel's reach, no padding, a strided input,
// groups, 1-d, output rows narrower than a tile, more than KC rows, more
// than MC output channels, more than NC grid columns).
type wideCase struct {
	name         string
	c, h, w, o   int
	kh, kw       int
	strH, strW   int
	padH, padW   int
	dilH, dilW   int
	groups       int
	bias, clamp  bool
	channelsLast bool
}

func wideCases() []wideCase {
	return []wideCase{
		{name: "3x3", c: 5, h: 13, w: 17, o: 7, kh: 3, kw: 3, strH: 1, strW: 1, padH: 1, padW: 1, dilH: 1, dilW: 1, groups: 1, bias: true},
		{name: "3x3/s2", c: 4, h: 15, w: 20, o: 13, kh: 3, kw: 3, strH: 2, strW: 2, padH: 1, padW: 1, dilH: 1, dilW: 1, groups: 1, clamp: true},
		{name: "7x7/s2/stem", c: 3, h: 30, w: 29, o: 8, kh: 7, kw: 7, strH: 2, strW: 2, padH: 3, padW: 3, dilH: 1, dilW: 1, groups: 1, bias: true, clamp: true},
		{name: "4x4/s4/patchify", c: 3, h: 16, w: 20, o: 6, kh: 4, kw: 4, strH: 4, strW: 4, dilH: 1, dilW: 1, groups: 1, bias: true},
		{name: "3x2/s3x1", c: 2, h: 14, w: 9, o: 5, kh: 3, kw: 2, strH: 3, strW: 1, padH: 2, padW: 0, dilH: 1, dilW: 1, groups: 1},
		{name: "3x3/dil2/pad3", c: 3, h: 11, w: 12, o: 6, kh: 3, kw: 3, strH: 1, strW: 1, padH: 3, padW: 3, dilH: 2, dilW: 2, groups: 1, bias: true},
		{name: "3x3/dil2/s2", c: 3, h: 17, w: 16, o: 6, kh: 3, kw: 3, strH: 2, strW: 2, padH: 2, padW: 1, dilH: 2, dilW: 3, groups: 1},
		{name: "1x1/s2", c: 9, h: 10, w: 11, o: 12, kh: 1, kw: 1, strH: 2, strW: 2, dilH: 1, dilW: 1, groups: 1, bias: true},
		{name: "groups", c: 16, h: 9, w: 10, o: 24, kh: 3, kw: 3, strH: 1, strW: 1, padH: 1, padW: 1, dilH: 1, dilW: 1, groups: 4, bias: true, clamp: true},
		{name: "groups/s2", c: 16, h: 12, w: 12, o: 16, kh: 3, kw: 3, strH: 2, strW: 2, padH: 1, padW: 1, dilH: 1, dilW: 1, groups: 2},
		{name: "1d", c: 4, h: 1, w: 40, o: 5, kh: 1, kw: 5, strH: 1, strW: 1, padW: 2, dilH: 1, dilW: 1, groups: 1, bias: true},
		{name: "tiny", c: 2, h: 3, w: 2, o: 3, kh: 3, kw: 3, strH: 1, strW: 1, padH: 1, padW: 1, dilH: 1, dilW: 1, groups: 1, clamp: true},
		{name: "channelsLast", c: 6, h: 8, w: 9, o: 7, kh: 3, kw: 3, strH: 1, strW: 2, padH: 1, padW: 1, dilH: 1, dilW: 1, groups: 1, channelsLast: true},
		{name: "k>KC/m>MC", c: 33, h: 7, w: 8, o: MC + 11, kh: 3, kw: 3, strH: 1, strW: 1, padH: 1, padW: 1, dilH: 1, dilW: 1, groups: 1, bias: true},
		{name: "n>NC", c: 2, h: 40, w: 37, o: 5, kh: 3, kw: 3, strH: 1, strW: 1, padH: 1, padW: 1, dilH: 1, dilW: 1, groups: 1, bias: true, clamp: true},
	}
}

// wideRun is one case's operands and its float64 reference.
type wideRun struct {
	g                WideConv
	x                []float32
	xoff, sC, sH, sW int
	w, bias          []float32
	pre              []*PrepackedA
	ep               Clamp
	want, bound      []float64
	out              []float32
}

func (wc wideCase) build(r *rand.Rand) *wideRun {
	oh := (wc.h+2*wc.padH-wc.dilH*(wc.kh-1)-1)/wc.strH + 1
	ow := (wc.w+2*wc.padW-wc.dilW*(wc.kw-1)-1)/wc.strW + 1
	ru := &wideRun{g: WideConv{C: wc.c, H: wc.h, W: wc.w, KH: wc.kh, KW: wc.kw, StrH: wc.strH, StrW: wc.strW,
		PadH: wc.padH, PadW: wc.padW, DilH: wc.dilH, DilW: wc.dilW, OH: oh, OW: ow, Groups: wc.groups}}
	ru.xoff = 3
	ru.x = make([]float32, ru.xoff+wc.c*wc.h*wc.w+2)
	for i := range ru.x {
		ru.x[i] = float32(r.NormFloat64())
	}
	if wc.channelsLast {
		ru.sC, ru.sW, ru.sH = 1, wc.c, wc.w*wc.c
	} else {
		ru.sW, ru.sH, ru.sC = 1, wc.w, wc.h*wc.w
	}
	cg, og := wc.c/wc.groups, wc.o/wc.groups
	k := cg * wc.kh * wc.kw
	ru.w = make([]float32, wc.o*k)
	for i := range ru.w {
		ru.w[i] = float32(r.NormFloat64())
	}
	for gr := 0; gr < wc.groups; gr++ {
		ru.pre = append(ru.pre, PrepackA(og, k, Mat{Data: ru.w, Off: gr * og * k, RS: k, CS: 1}))
	}
	if wc.bias {
		ru.bias = make([]float32, wc.o)
		for i := range ru.bias {
			ru.bias[i] = float32(r.NormFloat64())
		}
	}
	if wc.clamp {
		ru.ep = Clamp{On: true, Lo: -0.5, Hi: 1}
	}
	const u = 0x1p-24
	gamma := float64(k+2) * u / (1 - float64(k+2)*u)
	ru.want = make([]float64, wc.o*oh*ow)
	ru.bound = make([]float64, len(ru.want))
	for o := 0; o < wc.o; o++ {
		gr := o / og
		for y := 0; y < oh; y++ {
			for xx := 0; xx < ow; xx++ {
				var s, mag float64
				for ci := 0; ci < cg; ci++ {
					for ki := 0; ki < wc.kh; ki++ {
						for kj := 0; kj < wc.kw; kj++ {
							iy := y*wc.strH + ki*wc.dilH - wc.padH
							ix := xx*wc.strW + kj*wc.dilW - wc.padW
							if iy < 0 || iy >= wc.h || ix < 0 || ix >= wc.w {
								continue
							}
							v := float64(ru.x[ru.xoff+(gr*cg+ci)*ru.sC+iy*ru.sH+ix*ru.sW]) *
								float64(ru.w[o*k+(ci*wc.kh+ki)*wc.kw+kj])
							s += v
							mag += math.Abs(v)
						}
					}
				}
				if ru.bias != nil {
					s += float64(ru.bias[o])
					mag += math.Abs(float64(ru.bias[o]))
				}
				if wc.clamp {
					s = math.Min(math.Max(s, -0.5), 1)
				}
				i := (o*oh+y)*ow + xx
				ru.want[i], ru.bound[i] = s, gamma*mag+1e-30
			}
		}
	}
	return ru
}

// run computes the case into a fresh output with one slack element
// either side, and checks the slack is untouched.
func (ru *wideRun) run(t *testing.T, sc *Scratch) []float32 {
	out := make([]float32, len(ru.want)+2)
	out[0], out[len(out)-1] = 7, 7
	ConvWide(sc, &ru.g, ru.pre, ru.x, ru.xoff, ru.sC, ru.sH, ru.sW, ru.bias, 0, 1, nil, 0, out, 1, ru.ep, nil)
	require.Equal(t, float32(7), out[0], "the element before the output was written")
	require.Equal(t, float32(7), out[len(out)-1], "the element after the output was written")
	return out[1 : len(out)-1]
}

func (ru *wideRun) verify(t *testing.T, got []float32, what string) {
	t.Helper()
	for i, want := range ru.want {
		if g := float64(got[i]); math.IsNaN(g) || math.Abs(g-want) > ru.bound[i] {
			require.Failf(t, "wrong element", "%s: element %d = %v, want %v within %.3g", what, i, g, want, ru.bound[i])
		}
	}
}

// TestConformanceWide runs every geometry under every kernel variant
// against a float64 direct convolution, with a fresh scratch and one
// that earlier cases left dirty (the copy and the wide C are reused).
func TestConformanceWide(t *testing.T) {
	forEachVariant(t, func(t *testing.T) {
		r := rand.New(rand.NewSource(5))
		dirty := &Scratch{}
		for _, wc := range wideCases() {
			ru := wc.build(r)
			ru.verify(t, ru.run(t, &Scratch{}), wc.name+"/fresh")
			ru.verify(t, ru.run(t, dirty), wc.name+"/dirty")
			ru.verify(t, ru.run(t, nil), wc.name+"/nil")
		}
	})
}

// TestWideSplitMatchesOneGoroutine: a split ConvWide computes each
// element as one goroutine does, bit for bit.
func TestWideSplitMatchesOneGoroutine(t *testing.T) {
	for _, n := range []int{2, 3} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			withTeam(t, n, func(sc *Scratch) {
				r := rand.New(rand.NewSource(6))
				var counts splitCounts
				for _, wc := range wideCases() {
					ru := wc.build(r)
					want := ru.run(t, &Scratch{})
					before := sc.Splits()
					got := ru.run(t, sc)
					require.Greater(t, sc.Splits(), before, "%s: not split", wc.name)
					counts.add(sc)
					requireSameBits(t, want, got, wc.name)
				}
				require.Positive(t, counts.alongN, "no convolution split along its columns")
				require.Positive(t, counts.alongM, "no convolution split along its rows")
			})
		})
	}
}

// TestWideSteadyAllocs: after the first call grows the buffers, a
// ConvWide allocates nothing, split or not.
func TestWideSteadyAllocs(t *testing.T) {
	ru := wideCases()[2].build(rand.New(rand.NewSource(7)))
	out := make([]float32, len(ru.want))
	sc := &Scratch{}
	call := func() {
		ConvWide(sc, &ru.g, ru.pre, ru.x, ru.xoff, ru.sC, ru.sH, ru.sW, ru.bias, 0, 1, nil, 0, out, 0, ru.ep, nil)
	}
	call()
	require.Zero(t, testing.AllocsPerRun(10, call))
	withTeam(t, 2, func(ts *Scratch) {
		sc = ts
		call()
		require.Zero(t, testing.AllocsPerRun(10, call))
	})
}

// BenchmarkConvWide times ConvWide beside the packed im2col path
// (WithPrepackedA over a ConvSrc) on convolutions of the 224x224
// classifiers, one goroutine, in GFLOP/s.
func BenchmarkConvWide(b *testing.B) {
	shapes := []struct {
		name                         string
		c, h, o, k, str, pad, groups int
	}{
		{"densenet/3x3/128to32/56", 128, 56, 32, 3, 1, 1, 1},
		{"densenet/3x3/128to32/7", 128, 7, 32, 3, 1, 1, 1},
		{"resnet/3x3/64/56", 64, 56, 64, 3, 1, 1, 1},
		{"resnet/3x3/256/14", 256, 14, 256, 3, 1, 1, 1},
		{"resnet/3x3/512/7", 512, 7, 512, 3, 1, 1, 1},
		{"resnet/3x3/s2/128/56", 128, 56, 128, 3, 2, 1, 1},
		{"resnet/3x3/s2/256/28", 256, 28, 256, 3, 2, 1, 1},
		{"resnet/3x3/s2/512/14", 512, 14, 512, 3, 2, 1, 1},
		{"resnet/stem/7x7/s2", 3, 224, 64, 7, 2, 3, 1},
		{"mobilenet/stem/3x3/s2", 3, 224, 16, 3, 2, 1, 1},
		{"efficientnet/stem/3x3/s2", 3, 224, 32, 3, 2, 1, 1},
		{"squeezenet/stem/3x3/s2", 3, 224, 64, 3, 2, 0, 1},
		{"resnet/1x1/s2/256to512/56", 256, 56, 512, 1, 2, 0, 1},
		{"resnet/1x1/s2/1024to2048/14", 1024, 14, 2048, 1, 2, 0, 1},
		{"resnet18/1x1/s2/128to256/28", 128, 28, 256, 1, 2, 0, 1},
		{"regnet/3x3/g8/104/28", 104, 28, 104, 3, 1, 1, 13},
		{"regnet/3x3/g8/s2/208/28", 208, 28, 208, 3, 2, 1, 26},
		{"resnet50/1x1/64to256/56", 64, 56, 256, 1, 1, 0, 1},
		{"resnet50/1x1/256to64/56", 256, 56, 64, 1, 1, 0, 1},
		{"resnet50/1x1/1024to256/14", 1024, 14, 256, 1, 1, 0, 1},
		{"densenet/1x1/512to128/28", 512, 28, 128, 1, 1, 0, 1},
		{"resnet50/1x1/2048to512/7", 2048, 7, 512, 1, 1, 0, 1},
		{"mobilenet/1x1/160to960/7", 160, 7, 960, 1, 1, 0, 1},
		{"resnet50/1x1/256to1024/14", 256, 14, 1024, 1, 1, 0, 1},
		{"squeezenet/1x1/128to16/55", 128, 55, 16, 1, 1, 0, 1},
		{"squeezenet/1x1/256to32/27", 256, 27, 32, 1, 1, 0, 1},
		{"squeezenet/1x1/512to64/13", 512, 13, 64, 1, 1, 0, 1},
		{"squeezenet/1x1/512to1000/13", 512, 13, 1000, 1, 1, 0, 1},
	}
	r := rand.New(rand.NewSource(1))
	for _, s := range shapes {
		oh := (s.h+2*s.pad-s.k)/s.str + 1
		g := WideConv{C: s.c, H: s.h, W: s.h, KH: s.k, KW: s.k, StrH: s.str, StrW: s.str, PadH: s.pad, PadW: s.pad,
			DilH: 1, DilW: 1, OH: oh, OW: oh, Groups: s.groups}
		x := make([]float32, s.c*s.h*s.h)
		for i := range x {
			x[i] = float32(r.NormFloat64())
		}
		cg, og := s.c/s.groups, s.o/s.groups
		kd := cg * s.k * s.k
		w := make([]float32, s.o*kd)
		for i := range w {
			w[i] = float32(r.NormFloat64())
		}
		var pre []*PrepackedA
		for gr := 0; gr < s.groups; gr++ {
			pre = append(pre, PrepackA(og, kd, Mat{Data: w, Off: gr * og * kd, RS: kd, CS: 1}))
		}
		bias := make([]float32, s.o)
		out := make([]float32, s.o*oh*oh)
		flops := 2 * float64(s.o) * float64(kd) * float64(oh*oh)
		sc := &Scratch{}
		b.Run(s.name+"/wide", func(b *testing.B) {
			for b.Loop() {
				ConvWide(sc, &g, pre, x, 0, s.h*s.h, s.h, 1, bias, 0, 1, nil, 0, out, 0, Clamp{}, nil)
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		b.Run(s.name+"/packed", func(b *testing.B) {
			for b.Loop() {
				if s.k == 1 && s.str == 1 {
					WithPrepackedA(sc, oh*oh, pre[0], Mat{Data: x, RS: oh * oh, CS: 1}, nil, 0, out, 0, oh*oh)
					continue
				}
				for gr := 0; gr < s.groups; gr++ {
					cv := ConvSrc{Data: x, Off: gr * cg * s.h * s.h, SC: s.h * s.h, SH: s.h, SW: 1, H: s.h, W: s.h, KH: s.k, KW: s.k,
						StrH: s.str, StrW: s.str, PadH: s.pad, PadW: s.pad, DilH: 1, DilW: 1, OH: oh, OW: oh,
						D: 1, KD: 1, OD: 1, StrD: 1, DilD: 1}
					WithPrepackedA(sc, oh*oh, pre[gr], Mat{}, &cv, 0, out, gr*og*oh*oh, oh*oh)
				}
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// BenchmarkConvWideThreads times resnet's 3x3 convolutions at each
// image size on teams of 1 and 2, in GFLOP/s.
func BenchmarkConvWideThreads(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	for _, s := range []struct{ c, h int }{{64, 56}, {128, 28}, {256, 14}, {512, 7}} {
		g := WideConv{C: s.c, H: s.h, W: s.h, KH: 3, KW: 3, StrH: 1, StrW: 1, PadH: 1, PadW: 1, DilH: 1, DilW: 1, OH: s.h, OW: s.h, Groups: 1}
		x := normals32(r, s.c*s.h*s.h)
		kd := s.c * 9
		pre := []*PrepackedA{PrepackA(s.c, kd, Mat{Data: normals32(r, s.c*kd), RS: kd, CS: 1})}
		out := make([]float32, s.c*s.h*s.h)
		flops := 2 * float64(s.c*kd*s.h*s.h)
		benchTeams(b, fmt.Sprintf("%dx%dx%d", s.c, s.h, s.h), flops, func(sc *Scratch) {
			ConvWide(sc, &g, pre, x, 0, s.h*s.h, s.h, 1, nil, 0, 1, nil, 0, out, 0, Clamp{}, nil)
		})
	}
}

// benchTeams times run as sub-benchmark name/threads=N on teams of 1
// and 2, flops a run, in GFLOP/s.
func benchTeams(b *testing.B, name string, flops float64, run func(sc *Scratch)) {
	for _, th := range []int{1, 2} {
		team := parallel.New(th)
		sc := NewScratch(team)
		b.Run(fmt.Sprintf("%s/threads=%d", name, team.Size()), func(b *testing.B) {
			for b.Loop() {
				run(sc)
			}
			b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
		team.Close()
	}
}

// normals32 is n draws of N(0, 1).
func normals32(r *rand.Rand, n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

// PhaseRow2 against its definition, under the assembly and without it:
// rows of 0 to 40 elements (pairs past the 8 the assembly deals at a
// time, odd lengths), padding 0 to 3, phase rows one column wider than
// needed or exactly as wide.
func TestPhaseRow2(t *testing.T) {
	r := rand.New(rand.NewSource(13))
	for _, asm := range []bool{false, true} {
		if asm && !cpuHasAsm {
			continue
		}
		saved := useAsm
		useAsm = asm
		for n := 0; n <= 40; n++ {
			for pad := 0; pad <= 3; pad++ {
				for extra := 0; extra <= 1; extra++ {
					src := normals32(r, n)
					ws := (n+2*pad+1)/2 + extra
					plane := ws + 3
					dst := normals32(r, plane+ws+2) // garbage, to be overwritten
					tail := append([]float32(nil), dst[plane+ws:]...)
					PhaseRow2(dst, plane, ws, pad, src)
					for ph := 0; ph < 2; ph++ {
						for c := 0; c < ws; c++ {
							want := float32(0)
							if iw := 2*c + ph - pad; iw >= 0 && iw < n {
								want = src[iw]
							}
							require.Equal(t, want, dst[ph*plane+c], "asm %v, n %d, pad %d, phase %d, column %d", asm, n, pad, ph, c)
						}
					}
					require.Equal(t, tail, dst[plane+ws:], "asm %v, n %d, pad %d: wrote past phase 1's row", asm, n, pad)
				}
			}
		}
		useAsm = saved
	}
}

// BenchmarkConvWideRowsThreads times the stems ConvWideRows takes
// (resnet's 7x7 at stride 2 into 64 channels, squeezenet's 3x3 at
// stride 2) on teams of 1 and 2, in GFLOP/s.
func BenchmarkConvWideRowsThreads(b *testing.B) {
	if !HasRows() {
		b.Skip("no rows kernels on this CPU or build")
	}
	r := rand.New(rand.NewSource(1))
	for _, s := range []struct{ k, pad, o, oh int }{{7, 3, 64, 112}, {3, 0, 64, 111}} {
		g := WideConv{C: 3, H: 224, W: 224, KH: s.k, KW: s.k, StrH: 2, StrW: 2, PadH: s.pad, PadW: s.pad, DilH: 1, DilW: 1, OH: s.oh, OW: s.oh, Groups: 1}
		x := normals32(r, 3*224*224)
		kd := 3 * s.k * s.k
		w, bias := normals32(r, s.o*kd), normals32(r, s.o)
		out := make([]float32, s.o*s.oh*s.oh)
		flops := 2 * float64(s.o*kd*s.oh*s.oh)
		benchTeams(b, fmt.Sprintf("k%d_%dx%d", s.k, s.oh, s.oh), flops, func(sc *Scratch) {
			ConvWideRows(sc, &g, s.o, w, 0, x, 0, 224*224, 224, 1, bias, 0, 1, nil, 0, out, 0, Clamp{On: true, Hi: 3.4e38}, nil)
		})
	}
}
