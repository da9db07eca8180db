package ops_test

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops"
	"github.com/gosr/gosr/ops/gemm"
	"github.com/gosr/gosr/ops/parallel"
)

// gosr::conv_clamp_max_pool2d against the gosr::conv_clamp and
// aten::max_pool2d it fuses, run one after the other: the same bits,
// through the bands (stems of every shape, poolings with and without
// padding, ceil mode, a 2x2 and a stride-1 one, a batch, several bands
// of channels, an unbatched input) and through the whole convolution
// where the rows kernels do not take it (groups, a 5x5 kernel of many
// taps), with one goroutine and with a team of two; steady runs
// allocate nothing.
func TestConvClampMaxPool(t *testing.T) {
	r := rand.New(rand.NewSource(21))
	ints := graph.ListOf(graph.Int)
	type cs struct {
		n, c, h, w, o, k, s, pad, groups int
		pk, ps, pp                       int
		ceil                             bool
	}
	cases := []cs{
		{1, 3, 33, 30, 16, 3, 2, 1, 1, 3, 2, 1, false},  // a 3x3 stem, its pooling padded
		{1, 3, 35, 35, 16, 3, 2, 0, 1, 3, 2, 0, true},   // squeezenet's: no padding, ceil mode
		{2, 3, 40, 38, 8, 7, 2, 3, 1, 3, 2, 1, false},   // resnet's 7x7 stem, a batch of two
		{1, 4, 20, 20, 24, 3, 1, 1, 1, 2, 2, 0, false},  // a 2x2 pooling
		{1, 3, 16, 17, 8, 3, 1, 1, 1, 3, 1, 1, false},   // a stride-1 pooling
		{1, 3, 258, 258, 24, 3, 2, 0, 1, 3, 2, 0, true}, // 128x128 maps: three bands of 8 channels
		{1, 16, 12, 12, 16, 3, 1, 1, 2, 2, 2, 0, false}, // grouped: the whole convolution
		{1, 8, 15, 15, 16, 5, 1, 2, 1, 3, 2, 1, true},   // 200 taps: the whole convolution
		{0, 3, 21, 19, 8, 3, 2, 1, 1, 3, 2, 1, false},   // unbatched
		{0, 8, 9, 9, 16, 5, 1, 2, 1, 2, 2, 0, false},    // unbatched, the whole convolution
	}
	var team *parallel.Team
	if tm := parallel.New(2); tm != nil {
		team = tm
		t.Cleanup(tm.Close)
	}
	for _, c := range cases {
		for _, split := range []bool{false, true} {
			if split && team == nil {
				continue
			}
			name := fmt.Sprintf("%+v/team=%v", c, split)
			x := randTensor(r, c.n, c.c, c.h, c.w)
			if c.n == 0 { // unbatched: [C, H, W]
				x = randTensor(r, c.c, c.h, c.w)
			}
			w, bias := randTensor(r, c.o, c.c/c.groups, c.k, c.k), randTensor(r, c.o)
			conv := []ivalue.IValue{iv(x), iv(w), iv(bias), ivInts(int64(c.s), int64(c.s)), ivInts(int64(c.pad), int64(c.pad)), ivInts(1, 1), ivI(int64(c.groups)), ivF(0), ivF(6)}
			convT := []*graph.Type{tT, tT, tT, ints, ints, ints, tI, tF, tF}
			pool := []ivalue.IValue{ivInts(int64(c.pk), int64(c.pk)), ivInts(int64(c.ps), int64(c.ps)), ivInts(int64(c.pp), int64(c.pp)), ivInts(1, 1), ivB(c.ceil)}
			poolT := []*graph.Type{ints, ints, ints, ints, tB}
			constant := []bool{false, true, true, true, true, true, true, true, true, true, true, true, true, true}
			scratch := func() *gemm.Scratch {
				if split {
					return gemm.NewScratch(team)
				}
				return &gemm.Scratch{}
			}

			cp, err := buildNode(t, "gosr::conv_clamp", conv, convT, []*graph.Type{tT}, constant[:9])
			require.NoError(t, err, name)
			cp.Scratch = scratch()
			require.NoError(t, cp.Run(), name)
			mid := cp.Output(0).Tensor()
			pp, err := buildNode(t, "aten::max_pool2d", append([]ivalue.IValue{iv(mid)}, pool...), append([]*graph.Type{tT}, poolT...), []*graph.Type{tT}, nil)
			require.NoError(t, err, name)
			pp.Scratch = scratch()
			require.NoError(t, pp.Run(), name)
			want := pp.Output(0).Tensor()

			fp, err := buildNode(t, "gosr::conv_clamp_max_pool2d", append(conv, pool...), append(convT, poolT...), []*graph.Type{tT}, constant)
			require.NoError(t, err, name)
			require.Equal(t, ops.OutVariant, fp.Kind, name)
			fp.Scratch = scratch()
			for run := 0; run < 2; run++ {
				require.NoError(t, fp.Run(), name)
				got := fp.Output(0).Tensor()
				require.Equal(t, want.Sizes(), got.Sizes(), name)
				require.Equal(t, want.F32(), got.F32(), "%s: run %d: the bits of conv_clamp then max_pool2d", name, run)
			}
			require.Zero(t, testing.AllocsPerRun(3, func() { _ = fp.Run() }), name)
		}
	}
}

// A bad pooling argument is an error that names the op, on either path.
func TestConvClampMaxPoolBadInput(t *testing.T) {
	r := rand.New(rand.NewSource(22))
	ints := graph.ListOf(graph.Int)
	for _, k := range []int{3, 5} { // one group: the bands (36 and 100 taps); two: the whole convolution
		for _, groups := range []int64{1, 2} {
			x := randTensor(r, 1, 4, 12, 12)
			w, bias := randTensor(r, 8, 4/int(groups), k, k), randTensor(r, 8)
			in := []ivalue.IValue{iv(x), iv(w), iv(bias), ivInts(1, 1), ivInts(0, 0), ivInts(1, 1), ivI(groups), ivF(0), ivF(6),
				ivInts(0, 0), ivInts(2, 2), ivInts(0, 0), ivInts(1, 1), ivB(false)}
			types := []*graph.Type{tT, tT, tT, ints, ints, ints, tI, tF, tF, ints, ints, ints, ints, tB}
			p, err := buildNode(t, "gosr::conv_clamp_max_pool2d", in, types, []*graph.Type{tT}, nil)
			require.NoError(t, err)
			err = p.Run()
			require.Error(t, err)
			require.Contains(t, err.Error(), "conv_clamp_max_pool2d")
			require.Contains(t, err.Error(), "kernel_size")
		}
	}
}
