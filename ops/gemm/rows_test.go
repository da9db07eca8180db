package gemm

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/gosr/gosr/ops/parallel"
	"github.com/stretchr/testify/require"
)

// TestConvWideRows runs every ungrouped geometry of the wide
// convolution table, with 8 and 24 output channels, and two stems at
// full size, through ConvWideRows against the float64 reference
// (bias, clamp, channels-last inputs; nothing around the output
// written), with a fresh scratch, one earlier cases left dirty, and one
// split across a team of two.
func TestConvWideRows(t *testing.T) {
	if !HasRows() {
		t.Skip("no AVX-512 on this CPU or build")
	}
	cases := append(wideCases(),
		wideCase{name: "stem3x3/s2", c: 3, h: 224, w: 224, o: 16, kh: 3, kw: 3, strH: 2, strW: 2, padH: 1, padW: 1, dilH: 1, dilW: 1, groups: 1, bias: true, clamp: true},
		wideCase{name: "stem7x7/s2", c: 3, h: 64, w: 70, o: 8, kh: 7, kw: 7, strH: 2, strW: 2, padH: 3, padW: 3, dilH: 1, dilW: 1, groups: 1, bias: true},
	)
	r := rand.New(rand.NewSource(31))
	dirty := &Scratch{}
	team := parallel.New(2)
	t.Cleanup(team.Close)
	split := NewScratch(team)
	saved := parMinPart
	parMinPart = 1 << 10
	t.Cleanup(func() { parMinPart = saved })
	for _, wc := range cases {
		if wc.groups != 1 {
			continue
		}
		for _, o := range []int{8, 24} {
			wc.o = o
			ru := wc.build(r)
			for _, sc := range []*Scratch{{}, dirty, nil, split} {
				name := fmt.Sprintf("%s/o%d/scratch %p", wc.name, o, sc)
				out := make([]float32, len(ru.want)+2)
				out[0], out[len(out)-1] = 7, 7
				ConvWideRows(sc, &ru.g, o, ru.w, 0, ru.x, ru.xoff, ru.sC, ru.sH, ru.sW, ru.bias, 0, 1, nil, 0, out, 1, ru.ep, nil)
				require.Equal(t, float32(7), out[0], "%s: the element before the output was written", name)
				require.Equal(t, float32(7), out[len(out)-1], "%s: the element after the output was written", name)
				ru.verify(t, out[1:len(out)-1], name)
			}
		}
	}
	if team.Size() > 1 {
		require.Positive(t, split.OpSplits(), "no convolution was split across the team")
	}
}

// TestRowsAllocs: steady PointwiseRows and ConvWideRows calls allocate
// nothing, on one goroutine and split across a team.
func TestRowsAllocs(t *testing.T) {
	if !HasRows() {
		t.Skip("no AVX-512 on this CPU or build")
	}
	r := rand.New(rand.NewSource(3))
	team := parallel.New(2)
	t.Cleanup(team.Close)
	g := WideConv{C: 3, H: 40, W: 40, KH: 3, KW: 3, StrH: 2, StrW: 2, PadH: 1, PadW: 1, DilH: 1, DilW: 1, OH: 20, OW: 20, Groups: 1}
	x, w, bias := normals32(r, 3*40*40), normals32(r, 16*27), normals32(r, 16)
	px, pw := normals32(r, 32*3136), normals32(r, 16*32)
	out := make([]float32, 16*3136)
	act := func(d []float32) {}
	for _, sc := range []*Scratch{{}, NewScratch(team)} {
		run := func() {
			ConvWideRows(sc, &g, 16, w, 0, x, 0, 1600, 40, 1, bias, 0, 1, nil, 0, out, 0, Clamp{On: true, Hi: 6}, act)
			PointwiseRows(sc, 16, 32, 3136, px, 0, 3136, pw, 0, bias, 0, 1, out, 0, out, 0, 3136, Clamp{}, act)
		}
		run()
		require.Zero(t, testing.AllocsPerRun(20, run), "team %v", sc.Team() != nil)
	}
}
