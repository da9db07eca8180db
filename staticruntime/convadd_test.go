package staticruntime_test

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/staticruntime"
)

// A convolution, the add of a residual and an activation, fused by
// FuseConvAdd into gosr::conv_add_clamp, give bit for bit what the three
// ops give unfused: on every convolution path (wide, packed, 1x1,
// depthwise, grouped, 1-d, 3-d, split across two threads), without an
// activation, with the residual on either side of the add, and with a
// residual that broadcasts (the kernel's late add).
func TestConvAddMatchesUnfused(t *testing.T) {
	withProcs(t, 2)
	r := rand.New(rand.NewSource(13))
	cases := []struct {
		name      string
		x, w, res []int // sizes (res nil: the output's)
		stride    int
		pad       int
		groups    int
		act       string // relu, relu6 or none
		swap      bool   // add(res, conv)
		dims      int
	}{
		{"3x3 wide relu", []int{2, 8, 20, 20}, []int{16, 8, 3, 3}, nil, 1, 1, 1, "relu", false, 2},
		{"stride 2 packed relu", []int{1, 8, 21, 21}, []int{72, 8, 3, 3}, nil, 2, 1, 1, "relu", false, 2},
		{"stem wide relu6", []int{1, 3, 33, 31}, []int{24, 3, 7, 7}, nil, 2, 3, 1, "relu6", true, 2},
		{"1x1 no activation", []int{1, 32, 14, 14}, []int{64, 32, 1, 1}, nil, 1, 0, 1, "none", true, 2},
		{"depthwise relu6", []int{1, 32, 15, 15}, []int{32, 1, 3, 3}, nil, 1, 1, 32, "relu6", false, 2},
		{"grouped relu", []int{1, 16, 12, 12}, []int{32, 4, 3, 3}, nil, 1, 1, 4, "relu", false, 2},
		{"large, split relu", []int{1, 64, 56, 56}, []int{64, 64, 3, 3}, nil, 1, 1, 1, "relu", false, 2},
		{"1-d relu", []int{2, 8, 50}, []int{16, 8, 5}, nil, 1, 2, 1, "relu", false, 1},
		{"3-d relu6", []int{1, 4, 6, 8, 8}, []int{8, 4, 3, 3, 3}, nil, 1, 1, 1, "relu6", false, 3},
		{"broadcast residual relu", []int{1, 8, 10, 10}, []int{16, 8, 3, 3}, []int{16, 1, 1}, 1, 1, 1, "relu", false, 2},
	}
	for _, tc := range cases {
		list := func(v int) string { return intList(v, tc.dims) }
		add := "aten::add(%c, %res, %one)"
		if tc.swap {
			add = "aten::add(%res, %c, %one)"
		}
		act := map[string]string{"relu": "aten::relu(%a)", "relu6": "aten::hardtanh(%a, %lo, %hi)", "none": "aten::mul(%a, %two)"}[tc.act]
		ir := fmt.Sprintf(`graph(%%x : Tensor, %%res : Tensor):
  %%w : Tensor = prim::Constant[value=<Tensor>]()
  %%b : Tensor = prim::Constant[value=<Tensor>]()
  %%s : int[] = prim::Constant[value=[%s]]()
  %%p : int[] = prim::Constant[value=[%s]]()
  %%d : int[] = prim::Constant[value=[%s]]()
  %%op : int[] = prim::Constant[value=[%s]]()
  %%g : int = prim::Constant[value=%d]()
  %%one : int = prim::Constant[value=1]()
  %%two : float = prim::Constant[value=2.]()
  %%false : bool = prim::Constant[value=0]()
  %%lo : float = prim::Constant[value=0.]()
  %%hi : float = prim::Constant[value=6.]()
  %%c : Tensor = aten::_convolution(%%x, %%w, %%b, %%s, %%p, %%d, %%false, %%op, %%g, %%false, %%false, %%false, %%false)
  %%a : Tensor = %s
  %%y : Tensor = %s
  return (%%y)
`, list(tc.stride), list(tc.pad), list(1), list(0), tc.groups, add, act)
		x := randTensor(r, tc.x...)
		w := randTensor(r, tc.w...)
		b := randTensor(r, tc.w[0])
		outSizes := []int{tc.x[0], tc.w[0]}
		for i := 2; i < len(tc.x); i++ {
			outSizes = append(outSizes, (tc.x[i]+2*tc.pad-tc.w[i])/tc.stride+1)
		}
		resSizes := tc.res
		if resSizes == nil {
			resSizes = outSizes
		}
		res := randTensor(r, resSizes...)
		for _, threads := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/threads=%d", tc.name, threads), func(t *testing.T) {
				consts := []*ivalue.Tensor{w, b}
				in := []ivalue.IValue{ivalue.FromTensor(x), ivalue.FromTensor(res)}
				want, fusedOff := runFusion(t, ir, threads, []string{"FuseConvAdd", "FuseConvClamp"}, "gosr::conv_add_clamp", consts, in...)
				got, fusedOn := runFusion(t, ir, threads, nil, "gosr::conv_add_clamp", consts, in...)
				requireFusedBits(t, want, got, fusedOff, fusedOn, tc.act != "none")
			})
		}
	}
}

// BenchmarkConvAdd times a resnet50 bottleneck's last convolution (1x1,
// 64 to 256 channels at 56x56), its residual add and relu, fused by
// FuseConvAdd and not: the fused kernel adds the residual to each block
// of the output in cache instead of in two passes of its own.
func BenchmarkConvAdd(b *testing.B) {
	ir := `graph(%x : Tensor, %res : Tensor):
  %w : Tensor = prim::Constant[value=<Tensor>]()
  %bias : Tensor = prim::Constant[value=<Tensor>]()
  %s : int[] = prim::Constant[value=[1, 1]]()
  %p : int[] = prim::Constant[value=[0, 0]]()
  %op : int[] = prim::Constant[value=[0, 0]]()
  %g : int = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %false : bool = prim::Constant[value=0]()
  %c : Tensor = aten::_convolution(%x, %w, %bias, %s, %p, %s, %false, %op, %g, %false, %false, %false, %false)
  %a : Tensor = aten::add(%c, %res, %one)
  %y : Tensor = aten::relu(%a)
  return (%y)
`
	r := rand.New(rand.NewSource(14))
	w, bias := randTensor(r, 256, 64, 1, 1), randTensor(r, 256)
	x, res := ivalue.FromTensor(randTensor(r, 1, 64, 56, 56)), ivalue.FromTensor(randTensor(r, 1, 256, 56, 56))
	for _, fuse := range []bool{false, true} {
		b.Run(fmt.Sprintf("fused=%v", fuse), func(b *testing.B) {
			o := staticruntime.DefaultOptions()
			if !fuse {
				o.DisablePasses = []string{"FuseConvAdd"}
			}
			m := prepare(b, ir, &o, w, bias)
			defer m.Close()
			rt := m.NewRuntime()
			for b.Loop() {
				if _, err := rt.Run(x, res); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
