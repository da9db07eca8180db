package staticruntime_test

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/staticruntime"
)

// A convolution and its silu, sigmoid, hardswish, hardsigmoid or gelu,
// fused by FuseConvAct into gosr::conv_act, give bit for bit what the
// two ops give unfused, on every convolution path (wide, packed,
// pointwise over small and large planes, a gemv over a 1x1 image,
// depthwise, grouped, 1-d, 3-d, split across two threads) and with the
// in-place form of the activation. The activation runs on pieces of
// the output (rows of a block, a plane) instead of the whole tensor:
// the element's result must not depend on the piece.
func TestConvActMatchesUnfused(t *testing.T) {
	withProcs(t, 2)
	r := rand.New(rand.NewSource(17))
	cases := []struct {
		name   string
		x, w   []int
		stride int
		pad    int
		groups int
		act    string
		dims   int
	}{
		{"3x3 wide silu", []int{2, 8, 20, 19}, []int{16, 8, 3, 3}, 1, 1, 1, "aten::silu(%c)", 2},
		{"stride 2 packed sigmoid", []int{1, 8, 21, 21}, []int{72, 8, 3, 3}, 2, 1, 1, "aten::sigmoid(%c)", 2},
		{"stem wide hardswish", []int{1, 3, 33, 31}, []int{24, 3, 3, 3}, 2, 1, 1, "aten::hardswish(%c)", 2},
		{"1x1 7x7 silu", []int{1, 96, 7, 7}, []int{40, 96, 1, 1}, 1, 0, 1, "aten::silu(%c)", 2},
		{"1x1 large silu_", []int{1, 16, 60, 57}, []int{96, 16, 1, 1}, 1, 0, 1, "aten::silu_(%c)", 2},
		{"1x1 over 1x1 sigmoid", []int{1, 20, 1, 1}, []int{61, 20, 1, 1}, 1, 0, 1, "aten::sigmoid(%c)", 2},
		{"depthwise silu", []int{1, 32, 15, 15}, []int{32, 1, 3, 3}, 1, 1, 32, "aten::silu(%c)", 2},
		{"depthwise 5x5 stride 2 hardsigmoid", []int{1, 24, 17, 17}, []int{24, 1, 5, 5}, 2, 2, 24, "aten::hardsigmoid(%c)", 2},
		{"grouped gelu", []int{1, 16, 12, 12}, []int{32, 4, 3, 3}, 1, 1, 4, "aten::gelu(%c, %none)", 2},
		{"large, split silu", []int{1, 64, 56, 56}, []int{64, 64, 3, 3}, 1, 1, 1, "aten::silu(%c)", 2},
		{"1-d gelu", []int{2, 8, 50}, []int{16, 8, 5}, 1, 2, 1, "aten::gelu(%c, %none)", 1},
		{"3-d silu", []int{1, 4, 6, 8, 8}, []int{8, 4, 3, 3, 3}, 1, 1, 1, "aten::silu(%c)", 3},
	}
	for _, tc := range cases {
		list := func(v int) string { return intList(v, tc.dims) }
		ir := fmt.Sprintf(`graph(%%x : Tensor):
  %%w : Tensor = prim::Constant[value=<Tensor>]()
  %%b : Tensor = prim::Constant[value=<Tensor>]()
  %%s : int[] = prim::Constant[value=[%s]]()
  %%p : int[] = prim::Constant[value=[%s]]()
  %%d : int[] = prim::Constant[value=[%s]]()
  %%op : int[] = prim::Constant[value=[%s]]()
  %%g : int = prim::Constant[value=%d]()
  %%none : str = prim::Constant[value="none"]()
  %%false : bool = prim::Constant[value=0]()
  %%c : Tensor = aten::_convolution(%%x, %%w, %%b, %%s, %%p, %%d, %%false, %%op, %%g, %%false, %%false, %%false, %%false)
  %%y : Tensor = %s
  return (%%y)
`, list(tc.stride), list(tc.pad), list(1), list(0), tc.groups, tc.act)
		x := randTensor(r, tc.x...)
		w := randTensor(r, tc.w...)
		b := randTensor(r, tc.w[0])
		for _, threads := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/threads=%d", tc.name, threads), func(t *testing.T) {
				consts := []*ivalue.Tensor{w, b}
				want, fusedOff := runFusion(t, ir, threads, []string{"FuseConvAct"}, "gosr::conv_act", consts, ivalue.FromTensor(x))
				got, fusedOn := runFusion(t, ir, threads, nil, "gosr::conv_act", consts, ivalue.FromTensor(x))
				requireFusedBits(t, want, got, fusedOff, fusedOn, false)
			})
		}
	}
}

// An unknown activation name in a gosr::conv_act node is an error that
// names it, not a panic or a silent identity.
func TestConvActUnknownActivation(t *testing.T) {
	ir := `graph(%x : Tensor):
  %w : Tensor = prim::Constant[value=<Tensor>]()
  %none : NoneType = prim::Constant()
  %s : int[] = prim::Constant[value=[1, 1]]()
  %p : int[] = prim::Constant[value=[0, 0]]()
  %g : int = prim::Constant[value=1]()
  %act : str = prim::Constant[value="swish2"]()
  %y : Tensor = gosr::conv_act(%x, %w, %none, %s, %p, %s, %g, %act)
  return (%y)
`
	r := rand.New(rand.NewSource(18))
	o := staticruntime.DefaultOptions()
	m := prepare(t, ir, &o, randTensor(r, 4, 3, 1, 1))
	defer m.Close()
	_, err := m.NewRuntime().Run(ivalue.FromTensor(randTensor(r, 1, 3, 5, 5)))
	require.ErrorContains(t, err, `unknown activation "swish2"`)
}

// BenchmarkConvAct times efficientnet's expansion (1x1, 16 to 96
// channels at 112x112) and depthwise (3x3, 96 channels, stride 2)
// convolutions with their silu, fused by FuseConvAct and not.
func BenchmarkConvAct(b *testing.B) {
	r := rand.New(rand.NewSource(19))
	for _, s := range []struct {
		name        string
		x, w        []int
		stride, pad int
		groups      int
	}{
		{"1x1/16to96/112", []int{1, 16, 112, 112}, []int{96, 16, 1, 1}, 1, 0, 1},
		{"dw3x3/s2/96/112", []int{1, 96, 112, 112}, []int{96, 1, 3, 3}, 2, 1, 96},
		{"dw5x5/1152/7", []int{1, 1152, 7, 7}, []int{1152, 1, 5, 5}, 1, 2, 1152},
		{"dw5x5/s2/672/14", []int{1, 672, 14, 14}, []int{672, 1, 5, 5}, 2, 2, 672},
	} {
		ir := fmt.Sprintf(`graph(%%x : Tensor):
  %%w : Tensor = prim::Constant[value=<Tensor>]()
  %%bias : Tensor = prim::Constant[value=<Tensor>]()
  %%s : int[] = prim::Constant[value=[%d, %d]]()
  %%p : int[] = prim::Constant[value=[%d, %d]]()
  %%d : int[] = prim::Constant[value=[1, 1]]()
  %%op : int[] = prim::Constant[value=[0, 0]]()
  %%g : int = prim::Constant[value=%d]()
  %%false : bool = prim::Constant[value=0]()
  %%c : Tensor = aten::_convolution(%%x, %%w, %%bias, %%s, %%p, %%d, %%false, %%op, %%g, %%false, %%false, %%false, %%false)
  %%y : Tensor = aten::silu(%%c)
  return (%%y)
`, s.stride, s.stride, s.pad, s.pad, s.groups)
		w, bias := randTensor(r, s.w...), randTensor(r, s.w[0])
		x := ivalue.FromTensor(randTensor(r, s.x...))
		for _, fuse := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/fused=%v", s.name, fuse), func(b *testing.B) {
				o := staticruntime.DefaultOptions()
				if !fuse {
					o.DisablePasses = []string{"FuseConvAct"}
				}
				m := prepare(b, ir, &o, w, bias)
				defer m.Close()
				rt := m.NewRuntime()
				for b.Loop() {
					if _, err := rt.Run(x); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// A linear layer and its activation, fused by FuseLinearAct into
// gosr::linear_act, give bit for bit what the two ops give unfused: a
// small output (the activation after the product) and a large one (in
// the epilogue, block by block), with and without bias, a batch of 1
// (the weight read in place), a 3-d input, a weight that is not a
// constant, 1 and 2 threads.
func TestLinearActMatchesUnfused(t *testing.T) {
	withProcs(t, 2)
	r := rand.New(rand.NewSource(23))
	cases := []struct {
		name   string
		x      []int
		out    int
		bias   bool
		constW bool
		act    string
	}{
		{"small relu", []int{4, 32}, 24, true, true, "aten::relu(%l)"},
		{"small relu_ batch 1", []int{1, 40}, 17, true, true, "aten::relu_(%l)"},
		{"large gelu", []int{200, 96}, 384, true, true, "aten::gelu(%l, %gn)"},
		{"large relu6 3-d", []int{2, 98, 64}, 130, true, true, "aten::hardtanh(%l, %zero, %six)"},
		{"large silu no bias", []int{150, 48}, 200, false, true, "aten::silu(%l)"},
		{"sigmoid, weight an input", []int{64, 40}, 300, true, false, "aten::sigmoid(%l)"},
		{"hardswish", []int{33, 20}, 700, true, true, "aten::hardswish(%l)"},
	}
	for _, tc := range cases {
		wdecl := "  %w : Tensor = prim::Constant[value=<Tensor>]()\n"
		params := "%x : Tensor"
		if !tc.constW {
			wdecl, params = "", "%x : Tensor, %w : Tensor"
		}
		bias := "%b"
		if !tc.bias {
			bias = "%none"
		}
		ir := fmt.Sprintf(`graph(%s):
%s  %%b : Tensor = prim::Constant[value=<Tensor>]()
  %%none : NoneType = prim::Constant()
  %%zero : float = prim::Constant[value=0.]()
  %%six : float = prim::Constant[value=6.]()
  %%gn : str = prim::Constant[value="none"]()
  %%l : Tensor = aten::linear(%%x, %%w, %s)
  %%y : Tensor = %s
  return (%%y)
`, params, wdecl, bias, tc.act)
		x := randTensor(r, tc.x...)
		w := randTensor(r, tc.out, tc.x[len(tc.x)-1])
		b := randTensor(r, tc.out)
		consts := []*ivalue.Tensor{w, b}
		in := []ivalue.IValue{ivalue.FromTensor(x)}
		if !tc.constW {
			consts = []*ivalue.Tensor{b}
			in = append(in, ivalue.FromTensor(w))
		}
		for _, threads := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/threads=%d", tc.name, threads), func(t *testing.T) {
				want, fusedOff := runFusion(t, ir, threads, []string{"FuseLinearAct"}, "gosr::linear_act", consts, in...)
				got, fusedOn := runFusion(t, ir, threads, nil, "gosr::linear_act", consts, in...)
				requireFusedBits(t, want, got, fusedOff, fusedOn, false)
			})
		}
	}
}

// gosr::linear_act names an unknown activation, and a shape error in the
// fused node still names the model's aten::linear.
func TestLinearActBadInput(t *testing.T) {
	r := rand.New(rand.NewSource(24))
	for _, tc := range []struct {
		name, act string
		in        int
		want      string
	}{
		{"unknown activation", "swish2", 4, `unknown activation "swish2"`},
		{"wrong shape", "relu", 5, "aten::linear (with its relu): linear: input sizes [2 5] and weight sizes [3 4] cannot be multiplied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ir := `graph(%x : Tensor):
  %w : Tensor = prim::Constant[value=<Tensor>]()
  %none : NoneType = prim::Constant()
  %act : str = prim::Constant[value="` + tc.act + `"]()
  %y : Tensor = gosr::linear_act(%x, %w, %none, %act)
  return (%y)
`
			o := staticruntime.DefaultOptions()
			m := prepare(t, ir, &o, randTensor(r, 3, 4))
			defer m.Close()
			_, err := m.NewRuntime().Run(ivalue.FromTensor(randTensor(r, 2, tc.in)))
			require.ErrorContains(t, err, tc.want)
		})
	}
}
