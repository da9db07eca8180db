package staticruntime_test

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops"
	"github.com/gosr/gosr/staticruntime"
)

// blockedBlockIR is a resnet block and more: a convolution and relu, a
// second one with the block's input added back and a relu, and a third
// (1x1 or 3x3, strided or not) with a hardswish, whose output and the
// block's are returned. UseBlockedLayout turns the three into one
// blocked chain (two reads from outside: none; %x read twice; two
// results read outside).
const blockedBlockIR = `graph(%%x : Tensor):
  %%w1 : Tensor = prim::Constant[value=<Tensor>]()
  %%b1 : Tensor = prim::Constant[value=<Tensor>]()
  %%w2 : Tensor = prim::Constant[value=<Tensor>]()
  %%b2 : Tensor = prim::Constant[value=<Tensor>]()
  %%w3 : Tensor = prim::Constant[value=<Tensor>]()
  %%b3 : Tensor = prim::Constant[value=<Tensor>]()
  %%w4 : Tensor = prim::Constant[value=<Tensor>]()
  %%s : int[] = prim::Constant[value=[1, 1]]()
  %%p : int[] = prim::Constant[value=[%d, %d]]()
  %%s3 : int[] = prim::Constant[value=[%d, %d]]()
  %%p3 : int[] = prim::Constant[value=[%d, %d]]()
  %%z : int[] = prim::Constant[value=[0, 0]]()
  %%g : int = prim::Constant[value=1]()
  %%one : int = prim::Constant[value=1]()
  %%false : bool = prim::Constant[value=0]()
  %%none : NoneType = prim::Constant()
  %%c1 : Tensor = aten::_convolution(%%x, %%w1, %%b1, %%s, %%p, %%s, %%false, %%z, %%g, %%false, %%false, %%false, %%false)
  %%r1 : Tensor = aten::relu(%%c1)
  %%c2 : Tensor = aten::_convolution(%%r1, %%w2, %%b2, %%s, %%p, %%s, %%false, %%z, %%g, %%false, %%false, %%false, %%false)
  %%a : Tensor = aten::add(%%c2, %%x, %%one)
  %%y : Tensor = aten::relu(%%a)
  %%c3 : Tensor = aten::_convolution(%%y, %%w3, %%b3, %%s3, %%p3, %%s, %%false, %%z, %%g, %%false, %%false, %%false, %%false)
  %%h : Tensor = aten::hardswish(%%c3)
  %%c4 : Tensor = aten::_convolution(%%h, %%w4, %%none, %%s, %%z, %%s, %%false, %%z, %%g, %%false, %%false, %%false, %%false)
  return (%%c4, %%y)
`

// TestBlockedLayoutMatchesPlanes: a chain UseBlockedLayout keeps blocked
// gives bit for bit what the convolutions give in planes, on every path
// of the direct kernels in the blocked layout (rows whose width the
// kernels' blocks of positions divide or not, flat maps, the input read
// in place for 1x1 ones, stride 2, an odd number of output blocks, input blocks in chunks, two images
// and one unbatched) on one goroutine and split across two; a map too
// wide for them in planes, within rounding.
func TestBlockedLayoutMatchesPlanes(t *testing.T) {
	withProcs(t, 2)
	cases := []struct {
		name         string
		x            []int // NCHW or CHW
		k, o3, k3, s int   // the first two convolutions' kernel; the third's channels, kernel and stride
		o4           int   // the last 1x1's channels
		near         bool  // in planes not the direct kernels' sums: within 1e-5, not bit for bit
	}{
		{"rows of 28, 1x1 stride 2", []int{1, 16, 28, 28}, 3, 32, 1, 2, 32, false},
		{"rows of 30 (a last block past the row), 3x3 stride 2", []int{1, 16, 30, 30}, 3, 32, 3, 2, 16, false},
		{"flat 7x7", []int{1, 32, 7, 7}, 3, 64, 1, 1, 32, false},
		{"flat 9x9 (a last block past the map)", []int{1, 16, 9, 9}, 3, 48, 3, 1, 16, false},
		{"1x1 over 56x56, in place", []int{1, 16, 56, 56}, 1, 64, 1, 1, 16, false},
		{"1x1 over 15x15", []int{1, 32, 15, 15}, 1, 32, 1, 1, 64, false},
		{"three output blocks (the last one paired with itself)", []int{1, 16, 14, 14}, 3, 48, 3, 1, 16, false},
		{"flat 7x7, the input in chunks (256 channels)", []int{1, 256, 7, 7}, 3, 32, 1, 1, 16, false},
		{"two images", []int{2, 16, 12, 12}, 3, 32, 3, 2, 16, false},
		{"unbatched", []int{16, 10, 10}, 3, 16, 1, 1, 16, false},
		{"wide rows (flat past 504 columns; gemm in planes)", []int{1, 16, 2, 520}, 3, 16, 3, 1, 16, true},
	}
	for _, tc := range cases {
		r := rand.New(rand.NewSource(31))
		c := tc.x[len(tc.x)-3]
		ir := fmt.Sprintf(blockedBlockIR, tc.k/2, tc.k/2, tc.s, tc.s, tc.k3/2, tc.k3/2)
		consts := []*ivalue.Tensor{
			randTensor(r, c, c, tc.k, tc.k), randTensor(r, c),
			randTensor(r, c, c, tc.k, tc.k), randTensor(r, c),
			randTensor(r, tc.o3, c, tc.k3, tc.k3), randTensor(r, tc.o3),
			randTensor(r, tc.o4, tc.o3, 1, 1),
		}
		x := ivalue.FromTensor(randTensor(r, tc.x...))
		for _, threads := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/threads=%d", tc.name, threads), func(t *testing.T) {
				run := func(disable []string) ([][]float32, bool) {
					o := staticruntime.DefaultOptions()
					o.IntraOpThreads = threads
					o.DisablePasses = disable
					m := prepare(t, ir, &o, consts...)
					defer m.Close()
					blocked := false
					for _, n := range m.Nodes() {
						blocked = blocked || n.Op == "gosr::conv_nchwc"
					}
					rt := m.NewRuntime()
					var outs [][]float32
					for range 2 {
						vs, err := rt.Run(x)
						require.NoError(t, err)
						outs = [][]float32{f32(t, vs[0]), f32(t, vs[1])}
					}
					return outs, blocked
				}
				want, blockedOff := run([]string{"UseBlockedLayout"})
				got, blockedOn := run(nil)
				require.False(t, blockedOff)
				require.Equal(t, ops.BlockedLayoutPays(), blockedOn, "the chain went blocked where the kernels pay")
				for i := range want {
					require.Len(t, got[i], len(want[i]))
					for j := range want[i] {
						if tc.near {
							require.InDelta(t, want[i][j], got[i][j], 1e-5, "output %d element %d", i, j)
							continue
						}
						if math.Float32bits(want[i][j]) != math.Float32bits(got[i][j]) {
							require.Failf(t, "differs", "output %d element %d: blocked %v, planes %v", i, j, got[i][j], want[i][j])
						}
					}
				}
			})
		}
	}
}

// TestConvNCHWcOps runs the blocked layout's ops as a graph states them
// (the pass makes the same), including where conv_nchwc falls back to
// planes (a dilation, a residual that broadcasts), against the plain
// convolution, add and clamp.
func TestConvNCHWcOps(t *testing.T) {
	r := rand.New(rand.NewSource(32))
	const head = `graph(%%x : Tensor, %%res : Tensor):
  %%w : Tensor = prim::Constant[value=<Tensor>]()
  %%b : Tensor = prim::Constant[value=<Tensor>]()
  %%s : int[] = prim::Constant[value=[%d, %d]]()
  %%p : int[] = prim::Constant[value=[1, 1]]()
  %%d : int[] = prim::Constant[value=[%d, %d]]()
  %%z : int[] = prim::Constant[value=[0, 0]]()
  %%g : int = prim::Constant[value=1]()
  %%one : int = prim::Constant[value=1]()
  %%false : bool = prim::Constant[value=0]()
  %%lo : float = prim::Constant[value=-0.5]()
  %%hi : float = prim::Constant[value=0.5]()
  %%act : str = prim::Constant[value="%s"]()
`
	// The case names say which path conv_nchwc takes; the test checks
	// the results, not the path.
	cases := []struct {
		name        string
		stride, dil int
		res         []int // nil: no residual
		act         string
	}{
		{"direct, residual", 1, 1, []int{1, 16, 12, 12}, ""},
		{"direct, stride 2, silu", 2, 1, nil, "silu"},
		{"dilation 2 (planes)", 1, 2, nil, ""},
		{"residual that broadcasts (planes)", 1, 1, []int{1, 16, 1, 1}, "sigmoid"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := fmt.Sprintf(head, tc.stride, tc.stride, tc.dil, tc.dil, tc.act)
			pd := tc.dil // keeps the map's size at stride 1
			h = fmt.Sprintf("%s  %%pd : int[] = prim::Constant[value=[%d, %d]]()\n", h, pd, pd)
			other, add := "%none", ""
			if tc.res != nil {
				other = "%rb"
				add = "  %a : Tensor = aten::add(%c, %res, %one)\n"
			} else {
				add = "  %a : Tensor = aten::mul(%c, %one)\n"
			}
			act := "  %y : Tensor = aten::clamp(%a, %lo, %hi)\n"
			if tc.act != "" {
				act += fmt.Sprintf("  %%o : Tensor = aten::%s(%%y)\n", tc.act)
			} else {
				act += "  %o : Tensor = aten::mul(%y, %one)\n"
			}
			plain := h + "  %c : Tensor = aten::_convolution(%x, %w, %b, %s, %pd, %d, %false, %z, %g, %false, %false, %false, %false)\n" +
				add + act + "  return (%o)\n"
			blocked := h + "  %none : NoneType = prim::Constant()\n  %xb : Tensor = gosr::to_nchwc(%x)\n"
			if tc.res != nil {
				blocked += "  %rb : Tensor = gosr::to_nchwc(%res)\n"
			}
			blocked += fmt.Sprintf("  %%cb : Tensor = gosr::conv_nchwc(%%xb, %%w, %%b, %%s, %%pd, %%d, %%g, %s, %%lo, %%hi, %%act)\n", other) +
				"  %o : Tensor = gosr::from_nchwc(%cb)\n  return (%o)\n"
			w, b := randTensor(r, 16, 16, 3, 3), randTensor(r, 16)
			x := randTensor(r, 1, 16, 12, 12)
			res := randTensor(r, 1, 16, 12, 12)
			if tc.res != nil {
				res = randTensor(r, tc.res...)
			}
			in := []ivalue.IValue{ivalue.FromTensor(x), ivalue.FromTensor(res)}
			requireSameOutput(t, plain, blocked, []*ivalue.Tensor{w, b}, in, 1e-5)
		})
	}
}

// TestConvNCHWcShapes runs gosr::conv_nchwc over a sweep of shapes the
// direct kernels take (kernels 1x1 to 5x5 and 1x3, strides 1 and 2,
// padding 0 to 2, maps from 1x1 to 23x9, 16 to 48 channels either side,
// one image or two) against aten::_convolution on planes.
func TestConvNCHWcShapes(t *testing.T) {
	r := rand.New(rand.NewSource(35))
	const ir = `graph(%%x : Tensor):
  %%w : Tensor = prim::Constant[value=<Tensor>]()
  %%b : Tensor = prim::Constant[value=<Tensor>]()
  %%s : int[] = prim::Constant[value=[%d, %d]]()
  %%p : int[] = prim::Constant[value=[%d, %d]]()
  %%d : int[] = prim::Constant[value=[1, 1]]()
  %%z : int[] = prim::Constant[value=[0, 0]]()
  %%g : int = prim::Constant[value=1]()
  %%false : bool = prim::Constant[value=0]()
  %%none : NoneType = prim::Constant()
  %%lo : float = prim::Constant[value=-inf]()
  %%hi : float = prim::Constant[value=inf]()
  %%act : str = prim::Constant[value=""]()
%s`
	const plain = "  %c : Tensor = aten::_convolution(%x, %w, %b, %s, %p, %d, %false, %z, %g, %false, %false, %false, %false)\n  return (%c)\n"
	const blocked = "  %xb : Tensor = gosr::to_nchwc(%x)\n  %cb : Tensor = gosr::conv_nchwc(%xb, %w, %b, %s, %p, %d, %g, %none, %lo, %hi, %act)\n  %c : Tensor = gosr::from_nchwc(%cb)\n  return (%c)\n"
	cases := []struct {
		n, c, h, w, o, kh, kw, s, p int
	}{
		{1, 16, 1, 1, 16, 1, 1, 1, 0},
		{1, 16, 1, 1, 32, 3, 3, 1, 1},
		{1, 32, 2, 3, 16, 3, 3, 2, 1},
		{1, 16, 5, 5, 48, 5, 5, 1, 2},
		{1, 48, 7, 7, 32, 1, 3, 1, 0},
		{2, 16, 9, 11, 16, 3, 3, 2, 0},
		{1, 16, 23, 9, 32, 3, 3, 1, 2},
		{1, 32, 21, 21, 48, 3, 3, 1, 1},
		{1, 16, 25, 25, 16, 1, 1, 2, 0},
		{2, 32, 22, 30, 32, 3, 3, 1, 1},
		{1, 16, 13, 40, 64, 3, 3, 2, 1},
	}
	for _, tc := range cases {
		name := fmt.Sprintf("%dx%dx%dx%d->%d k%dx%d s%d p%d", tc.n, tc.c, tc.h, tc.w, tc.o, tc.kh, tc.kw, tc.s, tc.p)
		t.Run(name, func(t *testing.T) {
			w, b := randTensor(r, tc.o, tc.c, tc.kh, tc.kw), randTensor(r, tc.o)
			x := ivalue.FromTensor(randTensor(r, tc.n, tc.c, tc.h, tc.w))
			head := func(body string) string { return fmt.Sprintf(ir, tc.s, tc.s, tc.p, tc.p, body) }
			requireSameOutput(t, head(plain), head(blocked), []*ivalue.Tensor{w, b}, []ivalue.IValue{x}, 1e-4)
		})
	}
}

// requireSameOutput prepares the graphs want and got without passes
// (constants consts), runs each twice on in and requires their first
// outputs within delta of each other, element by element.
func requireSameOutput(t *testing.T, want, got string, consts []*ivalue.Tensor, in []ivalue.IValue, delta float64) {
	t.Helper()
	run := func(ir string) []float32 {
		o := staticruntime.DefaultOptions()
		o.SkipPasses = true
		m := prepare(t, ir, &o, consts...)
		defer m.Close()
		rt := m.NewRuntime()
		var out []float32
		for range 2 {
			vs, err := rt.Run(in...)
			require.NoError(t, err)
			out = f32(t, vs[0])
		}
		return out
	}
	w, g := run(want), run(got)
	require.Len(t, g, len(w))
	for i := range w {
		require.InDelta(t, w[i], g[i], delta, "element %d", i)
	}
}

// TestConvNCHWcErrors: a tensor that is not blocked, channels a reorder
// cannot block, groups: an error naming the op, no panic.
func TestConvNCHWcErrors(t *testing.T) {
	r := rand.New(rand.NewSource(33))
	const head = `graph(%x : Tensor):
  %w : Tensor = prim::Constant[value=<Tensor>]()
  %s : int[] = prim::Constant[value=[1, 1]]()
  %g : int = prim::Constant[value=GROUPS]()
  %none : NoneType = prim::Constant()
  %lo : float = prim::Constant[value=-inf]()
  %hi : float = prim::Constant[value=inf]()
  %act : str = prim::Constant[value=""]()
`
	cases := []struct {
		name, body, groups string
		x                  []int
		want               string
	}{
		{"conv of planes", "  %c : Tensor = gosr::conv_nchwc(%x, %w, %none, %s, %s, %s, %g, %none, %lo, %hi, %act)\n  return (%c)\n", "1",
			[]int{1, 16, 6, 6}, "conv_nchwc input: expected a blocked tensor"},
		{"reorder of 24 channels", "  %c : Tensor = gosr::to_nchwc(%x)\n  return (%c)\n", "1",
			[]int{1, 24, 6, 6}, "to_nchwc: expected channels a multiple of 16"},
		{"reorder of planes back", "  %c : Tensor = gosr::from_nchwc(%x)\n  return (%c)\n", "1",
			[]int{1, 16, 6, 6}, "from_nchwc: expected a blocked tensor"},
		{"groups", "  %xb : Tensor = gosr::to_nchwc(%x)\n  %c : Tensor = gosr::conv_nchwc(%xb, %w, %none, %s, %s, %s, %g, %none, %lo, %hi, %act)\n  return (%c)\n", "2",
			[]int{1, 16, 6, 6}, "conv_nchwc: expected groups 1, got 2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ir := head + tc.body
			ir = strings.ReplaceAll(ir, "GROUPS", tc.groups)
			o := staticruntime.DefaultOptions()
			o.SkipPasses = true
			m := prepare(t, ir, &o, randTensor(r, 16, 16, 3, 3))
			defer m.Close()
			_, err := m.NewRuntime().Run(ivalue.FromTensor(randTensor(r, tc.x...)))
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestNCHWcReorders: to_nchwc then from_nchwc gives the tensor back,
// batched, unbatched, from a strided view and over an empty map.
func TestNCHWcReorders(t *testing.T) {
	r := rand.New(rand.NewSource(34))
	const ir = `graph(%x : Tensor):
  %b : Tensor = gosr::to_nchwc(%x)
  %y : Tensor = gosr::from_nchwc(%b)
  return (%y, %b)
`
	base := randTensor(r, 1, 16, 5, 7)
	view := &ivalue.Tensor{} // base with H and W swapped: [1, 16, 7, 5]
	view.SetView(base, 0, []int{1, 16, 7, 5}, []int{560, 35, 1, 7})
	for _, x := range []*ivalue.Tensor{randTensor(r, 2, 32, 3, 5), randTensor(r, 48, 4, 6), view, randTensor(r, 1, 16, 0, 5)} {
		t.Run(fmt.Sprint(x.Sizes()), func(t *testing.T) {
			o := staticruntime.DefaultOptions()
			o.SkipPasses = true
			m := prepare(t, ir, &o)
			defer m.Close()
			outs, err := m.NewRuntime().Run(ivalue.FromTensor(x))
			require.NoError(t, err)
			require.Equal(t, x.Sizes(), outs[0].Tensor().Sizes())
			require.Equal(t, f32(t, ivalue.FromTensor(x)), f32(t, outs[0]))
			b := outs[1].Tensor()
			s := x.Sizes()
			require.Equal(t, 16, b.Size(b.Dim()-1))
			if len(s) == 4 && s[2]*s[3] > 0 {
				// The last channel ch of image 0 at (h, w) = (1, 2):
				// block ch/16, lane ch%16.
				ch := s[1] - 1
				want := x.Contiguous().F32Contig()[(ch*s[2]+1)*s[3]+2]
				require.Equal(t, want, b.Contiguous().F32Contig()[((ch/16*s[2]+1)*s[3]+2)*16+ch%16])
			}
		})
	}
}
