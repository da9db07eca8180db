package staticruntime_test

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/staticruntime"
)

// TestConvClampMatchesUnfused: a convolution fused with its relu or
// relu6 (gosr::conv_clamp) gives the bits of the convolution followed by
// the activation, through each of the convolution's paths, with one
// thread and split across two.
func TestConvClampMatchesUnfused(t *testing.T) {
	withProcs(t, 2)
	r := rand.New(rand.NewSource(11))
	cases := []struct {
		name   string
		x, w   []int // sizes
		stride int
		pad    int
		groups int
		act    string
		constW bool
		dims   int
	}{
		{"3x3 prepacked relu", []int{2, 8, 20, 20}, []int{16, 8, 3, 3}, 1, 1, 1, "relu", true, 2},
		{"3x3 runtime weight relu6", []int{1, 8, 20, 20}, []int{16, 8, 3, 3}, 1, 1, 1, "relu6", false, 2},
		{"stride 2 relu", []int{1, 3, 33, 31}, []int{24, 3, 7, 7}, 2, 3, 1, "relu", true, 2},
		{"1x1 relu", []int{1, 32, 14, 14}, []int{64, 32, 1, 1}, 1, 0, 1, "relu", true, 2},
		{"depthwise relu6", []int{1, 32, 15, 15}, []int{32, 1, 3, 3}, 1, 1, 32, "relu6", true, 2},
		{"grouped relu", []int{1, 16, 12, 12}, []int{32, 4, 3, 3}, 1, 1, 4, "relu", true, 2},
		{"1x1 output (a vector) relu", []int{1, 64, 3, 3}, []int{128, 64, 3, 3}, 1, 0, 1, "relu", true, 2},
		{"large, split relu", []int{1, 64, 56, 56}, []int{64, 64, 3, 3}, 1, 1, 1, "relu", true, 2},
		{"1-d relu", []int{2, 8, 50}, []int{16, 8, 5}, 1, 2, 1, "relu", true, 1},
		{"3-d relu6", []int{1, 4, 6, 8, 8}, []int{8, 4, 3, 3, 3}, 1, 1, 1, "relu6", true, 3},
	}
	for _, tc := range cases {
		list := func(v int) string { return intList(v, tc.dims) }
		act := "aten::relu(%c)"
		if tc.act == "relu6" {
			act = "aten::hardtanh(%c, %lo, %hi)"
		}
		wDecl, args := "%w : Tensor = prim::Constant[value=<Tensor>]()\n  ", "%x : Tensor"
		if !tc.constW {
			wDecl, args = "", "%x : Tensor, %w : Tensor"
		}
		ir := fmt.Sprintf(`graph(%s):
  %s%%b : Tensor = prim::Constant[value=<Tensor>]()
  %%s : int[] = prim::Constant[value=[%s]]()
  %%p : int[] = prim::Constant[value=[%s]]()
  %%d : int[] = prim::Constant[value=[%s]]()
  %%op : int[] = prim::Constant[value=[%s]]()
  %%g : int = prim::Constant[value=%d]()
  %%false : bool = prim::Constant[value=0]()
  %%lo : float = prim::Constant[value=0.]()
  %%hi : float = prim::Constant[value=6.]()
  %%c : Tensor = aten::_convolution(%%x, %%w, %%b, %%s, %%p, %%d, %%false, %%op, %%g, %%false, %%false, %%false, %%false)
  %%y : Tensor = %s
  return (%%y)
`, args, wDecl, list(tc.stride), list(tc.pad), list(1), list(0), tc.groups, act)
		x := randTensor(r, tc.x...)
		w := randTensor(r, tc.w...)
		b := randTensor(r, tc.w[0])
		consts := []*ivalue.Tensor{w, b}
		inputs := []ivalue.IValue{ivalue.FromTensor(x)}
		if !tc.constW {
			consts = []*ivalue.Tensor{b}
			inputs = append(inputs, ivalue.FromTensor(w))
		}
		for _, threads := range []int{1, 2} {
			t.Run(fmt.Sprintf("%s/threads=%d", tc.name, threads), func(t *testing.T) {
				want, fusedOff := runFusion(t, ir, threads, []string{"FuseConvClamp"}, "gosr::conv_clamp", consts, inputs...)
				got, fusedOn := runFusion(t, ir, threads, nil, "gosr::conv_clamp", consts, inputs...)
				requireFusedBits(t, want, got, fusedOff, fusedOn, true)
			})
		}
	}
}

// runFusion prepares ir with consts, with the passes disable turned
// off, runs it twice on one runtime (the second run on the memory
// plan) with threads intra-op threads, and returns the output and
// whether a node of kind op is in the module.
func runFusion(t *testing.T, ir string, threads int, disable []string, op string, consts []*ivalue.Tensor, inputs ...ivalue.IValue) ([]float32, bool) {
	o := staticruntime.DefaultOptions()
	o.IntraOpThreads = threads
	o.DisablePasses = disable
	m := prepare(t, ir, &o, consts...)
	defer m.Close()
	fused := false
	for _, n := range m.Nodes() {
		fused = fused || n.Op == op
	}
	rt := m.NewRuntime()
	var out []float32
	for range 2 {
		outs, err := rt.Run(inputs...)
		require.NoError(t, err)
		out = f32(t, outs[0])
	}
	return out, fused
}

// intList is v repeated n times, comma-separated: an int[] constant of
// an n-d convolution in IR text.
func intList(v, n int) string {
	s := fmt.Sprintf("%d", v)
	for range n - 1 {
		s += fmt.Sprintf(", %d", v)
	}
	return s
}

// requireFusedBits fails unless the pass fused only when on and the
// fused output has the unfused one's bits, with some outputs clamped
// to 0 where clamped is set.
func requireFusedBits(t *testing.T, want, got []float32, fusedOff, fusedOn, clamped bool) {
	t.Helper()
	require.False(t, fusedOff, "fused with the pass off")
	require.True(t, fusedOn, "the pass fused the ops")
	require.Len(t, got, len(want))
	zeros := 0
	for i := range want {
		if math.Float32bits(want[i]) != math.Float32bits(got[i]) {
			require.Failf(t, "differs", "element %d: fused %v, unfused %v", i, got[i], want[i])
		}
		if want[i] == 0 {
			zeros++
		}
	}
	if clamped {
		require.Positive(t, zeros, "some outputs clamped")
	}
}
