package staticruntime_test

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/gosr/gosr/ivalue"
)

// A batch norm and its relu or relu6, fused by FuseBatchNormClamp into
// gosr::batch_norm_clamp, give bit for bit what the two ops give: the
// parameters constants (a frozen model's) or inputs, an in-place relu_,
// planes of 49 and 3136 elements.
func TestBatchNormClampMatchesUnfused(t *testing.T) {
	r := rand.New(rand.NewSource(31))
	for _, tc := range []struct {
		name   string
		x      []int
		act    string
		consts bool
	}{
		{"relu_ 7x7 constants", []int{1, 40, 7, 7}, "aten::relu_(%n)", true},
		{"relu6 56x56 constants", []int{1, 16, 56, 56}, "aten::hardtanh(%n, %zero, %six)", true},
		{"relu batch 2 inputs", []int{2, 8, 5, 5}, "aten::relu(%n)", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.x[1]
			params, decl := "", ""
			for _, p := range []string{"w", "b", "m", "v"} {
				if tc.consts {
					decl += fmt.Sprintf("  %%%s : Tensor = prim::Constant[value=<Tensor>]()\n", p)
				} else {
					params += fmt.Sprintf(", %%%s : Tensor", p)
				}
			}
			ir := fmt.Sprintf(`graph(%%x : Tensor%s):
%s  %%zero : float = prim::Constant[value=0.]()
  %%six : float = prim::Constant[value=6.]()
  %%mom : float = prim::Constant[value=0.1]()
  %%eps : float = prim::Constant[value=1e-05]()
  %%false : bool = prim::Constant[value=0]()
  %%true : bool = prim::Constant[value=1]()
  %%n : Tensor = aten::batch_norm(%%x, %%w, %%b, %%m, %%v, %%false, %%mom, %%eps, %%true)
  %%y : Tensor = %s
  return (%%y)
`, params, decl, tc.act)
			x := randTensor(r, tc.x...)
			w, b, m := randTensor(r, c), randTensor(r, c), randTensor(r, c)
			v := randTensor(r, c)
			for i, e := range v.F32() {
				v.F32()[i] = e*e + 0.1
			}
			in := []ivalue.IValue{ivalue.FromTensor(x)}
			var consts []*ivalue.Tensor
			if tc.consts {
				consts = []*ivalue.Tensor{w, b, m, v}
			} else {
				in = append(in, ivalue.FromTensor(w), ivalue.FromTensor(b), ivalue.FromTensor(m), ivalue.FromTensor(v))
			}
			want, fusedOff := runFusion(t, ir, 1, []string{"FuseBatchNormClamp"}, "gosr::batch_norm_clamp", consts, in...)
			got, fusedOn := runFusion(t, ir, 1, nil, "gosr::batch_norm_clamp", consts, in...)
			requireFusedBits(t, want, got, fusedOff, fusedOn, true)
		})
	}
}
