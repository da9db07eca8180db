package ops_test

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops"
)

// r3d_18's first layer: Conv3d(3, 64, (3, 7, 7), stride (1, 2, 2),
// padding (1, 3, 3), bias=False) on a 16-frame 112x112 clip (the
// torchvision default), and on the zoo's 4-frame 32x32 clip.
func benchConv3dNode(t testing.TB, r *rand.Rand, frames, hw int, constW bool) *ops.ProcessedNode {
	ints := graph.ListOf(graph.Int)
	p, err := buildNode(t, "aten::conv3d",
		[]ivalue.IValue{iv(benchRand(r, 1, 3, frames, hw, hw)), iv(benchRand(r, 64, 3, 3, 7, 7)), ivalue.None(),
			ivInts(1, 2, 2), ivInts(1, 3, 3), ivInts(1, 1, 1), ivI(1)},
		[]*graph.Type{tT, tT, graph.OptionalOf(tT), ints, ints, ints, tI}, []*graph.Type{tT},
		[]bool{false, constW, true, true, true, true, true})
	require.NoError(t, err)
	return p
}

func BenchmarkSpatialConv3d(b *testing.B) {
	r := rand.New(rand.NewSource(7))
	for _, c := range []struct {
		name       string
		frames, hw int
		constW     bool
	}{{"r3d_18_stem/16x112x112", 16, 112, false}, {"r3d_18_stem/16x112x112/constW", 16, 112, true},
		{"r3d_18_stem/4x32x32/constW", 4, 32, true}} {
		b.Run(c.name, func(b *testing.B) {
			p := benchConv3dNode(b, r, c.frames, c.hw, c.constW)
			oh := (c.hw+6-7)/2 + 1
			benchRun(b, 2*float64(64*3*3*7*7*c.frames*oh*oh), p)
		})
	}
}

// r2plus1d_18's factored convolutions on small late-stage volumes: the
// temporal (3, 1, 1) and spatial (1, 3, 3) halves (constant weights).
func BenchmarkSpatialConv3dFactored(b *testing.B) {
	r := rand.New(rand.NewSource(7))
	ints := graph.ListOf(graph.Int)
	for _, c := range []struct {
		name             string
		cin, cout, d, hw int
		k, pad           []int64
	}{{"t311/64/4x8x8", 64, 64, 4, 8, []int64{3, 1, 1}, []int64{1, 0, 0}}, {"s133/64/4x8x8", 64, 144, 4, 8, []int64{1, 3, 3}, []int64{0, 1, 1}}} {
		b.Run(c.name, func(b *testing.B) {
			p, err := buildNode(b, "aten::conv3d",
				[]ivalue.IValue{iv(benchRand(r, 1, c.cin, c.d, c.hw, c.hw)), iv(benchRand(r, c.cout, c.cin, int(c.k[0]), int(c.k[1]), int(c.k[2]))), ivalue.None(),
					ivInts(1, 1, 1), ivInts(c.pad...), ivInts(1, 1, 1), ivI(1)},
				[]*graph.Type{tT, tT, graph.OptionalOf(tT), ints, ints, ints, tI}, []*graph.Type{tT},
				[]bool{false, true, true, true, true, true, true})
			require.NoError(b, err)
			benchRun(b, 2*float64(c.cout*c.cin*int(c.k[0]*c.k[1]*c.k[2])*c.d*c.hw*c.hw), p)
		})
	}
}

// A DCGAN-style upsampling layer: ConvTranspose2d(64, 32, 4, stride 2,
// padding 1) from 32x32 to 64x64.
func BenchmarkSpatialConvTranspose2d(b *testing.B) {
	r := rand.New(rand.NewSource(10))
	ints := graph.ListOf(graph.Int)
	for _, constW := range []bool{false, true} {
		name := "64-32/k4s2/32x32"
		if constW {
			name += "/constW"
		}
		b.Run(name, func(b *testing.B) {
			p, err := buildNode(b, "aten::conv_transpose2d",
				[]ivalue.IValue{iv(benchRand(r, 1, 64, 32, 32)), iv(benchRand(r, 64, 32, 4, 4)), iv(benchRand(r, 32)),
					ivInts(2, 2), ivInts(1, 1), ivInts(0, 0), ivI(1), ivInts(1, 1)},
				[]*graph.Type{tT, tT, graph.OptionalOf(tT), ints, ints, ints, tI, ints}, []*graph.Type{tT},
				[]bool{false, constW, constW, true, true, true, true, true})
			require.NoError(b, err)
			benchRun(b, 2*float64(64*32*16*32*32), p)
		})
	}
}

// A segmentation head's final resize: 21 classes from stride 8 back to
// the input size (fcn_resnet50 on 520x520, and on 224x224).
func benchBilinearNode(t testing.TB, r *rand.Rand, in, out int, align bool) *ops.ProcessedNode {
	p, err := buildNode(t, "aten::upsample_bilinear2d",
		[]ivalue.IValue{iv(benchRand(r, 1, 21, in, in)), ivInts(int64(out), int64(out)), ivB(align), ivalue.None()},
		[]*graph.Type{tT, graph.OptionalOf(graph.ListOf(graph.Int)), tB, graph.OptionalOf(graph.ListOf(graph.Float))}, []*graph.Type{tT},
		[]bool{false, true, true, true})
	require.NoError(t, err)
	return p
}

func BenchmarkSpatialUpsampleBilinear(b *testing.B) {
	r := rand.New(rand.NewSource(8))
	for _, c := range []struct {
		name    string
		in, out int
	}{{"21x65x65-520x520", 65, 520}, {"21x28x28-224x224", 28, 224}} {
		b.Run(c.name, func(b *testing.B) {
			p := benchBilinearNode(b, r, c.in, c.out, false)
			// Reported as output elements per ns (GFLOP/s column: Gelem/s).
			benchRun(b, float64(21*c.out*c.out), p)
		})
	}
}

// TestSpatialSteadyAllocs: after the first run (tables, scratch), the
// spatial kernels allocate nothing.
func TestSpatialSteadyAllocs(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	ints := graph.ListOf(graph.Int)
	type nodeCase struct {
		name string
		p    *ops.ProcessedNode
	}
	mk := func(kind string, in []ivalue.IValue, types []*graph.Type) *ops.ProcessedNode {
		consts := make([]bool, len(in))
		for i := 1; i < len(in); i++ {
			consts[i] = true
		}
		p, err := buildNode(t, kind, in, types, []*graph.Type{tT}, consts)
		require.NoError(t, err, kind)
		return p
	}
	cases := []nodeCase{
		{"conv3d", benchConv3dNode(t, r, 4, 16, false)},
		{"conv3d/constW", benchConv3dNode(t, r, 4, 16, true)},
		{"conv_transpose2d", mk("aten::conv_transpose2d", []ivalue.IValue{iv(benchRand(r, 1, 4, 6, 5)), iv(benchRand(r, 4, 3, 3, 3)), iv(benchRand(r, 3)),
			ivInts(2, 2), ivInts(1, 1), ivInts(1, 1), ivI(1), ivInts(1, 1)},
			[]*graph.Type{tT, tT, graph.OptionalOf(tT), ints, ints, ints, tI, ints})},
		{"bilinear", benchBilinearNode(t, r, 7, 12, false)},
		{"bicubic/scale", mk("aten::upsample_bicubic2d", []ivalue.IValue{iv(benchRand(r, 1, 2, 5, 6)), ivalue.None(), ivB(true),
			ivalue.NewList(ivF(1.5), ivF(2))},
			[]*graph.Type{tT, graph.OptionalOf(ints), tB, graph.OptionalOf(graph.ListOf(graph.Float))})},
		{"nearest3d", mk("aten::upsample_nearest3d", []ivalue.IValue{iv(benchRand(r, 1, 2, 3, 5, 6)), ivInts(4, 7, 9), ivalue.None(), ivalue.None(), ivalue.None()},
			[]*graph.Type{tT, ints, graph.OptionalOf(tF), graph.OptionalOf(tF), graph.OptionalOf(tF)})},
		{"pad/reflect", mk("aten::pad", []ivalue.IValue{iv(benchRand(r, 1, 2, 5, 6)), ivInts(1, 2, 3, 1), ivS("reflect"), ivalue.None()},
			[]*graph.Type{tT, ints, tS, graph.OptionalOf(tF)})},
		{"max_pool3d", mk("aten::max_pool3d", []ivalue.IValue{iv(benchRand(r, 1, 2, 5, 6, 7)), ivInts(2, 2, 2), ivInts(2, 2, 2), ivInts(0, 0, 0), ivInts(1, 1, 1), ivB(false)},
			[]*graph.Type{tT, ints, ints, ints, ints, tB})},
		{"roll", mk("aten::roll", []ivalue.IValue{iv(benchRand(r, 1, 6, 7, 4)), ivInts(-2, -2), ivInts(1, 2)}, []*graph.Type{tT, ints, ints})},
		{"roll/flat", mk("aten::roll", []ivalue.IValue{iv(benchRand(r, 3, 5)), ivInts(4), ivInts()}, []*graph.Type{tT, ints, ints})},
		{"pixel_shuffle", mk("aten::pixel_shuffle", []ivalue.IValue{iv(benchRand(r, 1, 8, 3, 4)), ivI(2)}, []*graph.Type{tT, tI})},
		{"im2col", mk("aten::im2col", []ivalue.IValue{iv(benchRand(r, 1, 3, 7, 9)), ivInts(3, 2), ivInts(1, 2), ivInts(1, 1), ivInts(2, 1)},
			[]*graph.Type{tT, ints, ints, ints, ints})},
		{"col2im", mk("aten::col2im", []ivalue.IValue{iv(benchRand(r, 1, 12, 16)), ivInts(7, 9), ivInts(2, 3), ivInts(2, 1), ivInts(1, 2), ivInts(2, 3)},
			[]*graph.Type{tT, ints, ints, ints, ints, ints})},
		{"upsample_bilinear2d_aa", mk("aten::_upsample_bilinear2d_aa", []ivalue.IValue{iv(benchRand(r, 1, 2, 17, 23)), ivInts(5, 7), ivB(false), ivalue.None()},
			[]*graph.Type{tT, graph.OptionalOf(ints), tB, graph.OptionalOf(graph.ListOf(graph.Float))})},
		{"adaptive_avg_pool3d", mk("aten::adaptive_avg_pool3d", []ivalue.IValue{iv(benchRand(r, 1, 2, 5, 6, 7)), ivInts(1, 1, 1)},
			[]*graph.Type{tT, ints})},
	}
	for _, c := range cases {
		require.NoError(t, c.p.Run(), c.name)
		allocs := testing.AllocsPerRun(5, func() { _ = c.p.Run() })
		require.Zero(t, allocs, "%s: allocations per steady run", c.name)
	}
}
