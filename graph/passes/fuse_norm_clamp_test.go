package passes

import (
	"testing"

	"github.com/gosr/gosr/graph/alias"
	"github.com/stretchr/testify/assert"
)

// bnHead is the start of the graphs below: an input, the batch norm's
// parameters and flags.
const bnHead = `graph(%x : Tensor, %w : Tensor, %b : Tensor, %m : Tensor, %v : Tensor, %f : float):
  %zero : float = prim::Constant[value=0.]()
  %six : float = prim::Constant[value=6.]()
  %mom : float = prim::Constant[value=0.1]()
  %eps : float = prim::Constant[value=1e-05]()
  %false : bool = prim::Constant[value=0]()
  %true : bool = prim::Constant[value=1]()
`

func TestFuseBatchNormClamp(t *testing.T) {
	runCases(t, FuseBatchNormClamp, []passCase{
		{name: "batch_norm relu_", before: bnHead + `
  %n : Tensor = aten::batch_norm(%x, %w, %b, %m, %v, %false, %mom, %eps, %true)
  %r : Tensor = aten::relu_(%n)
  return (%r)`, after: bnHead + `
  %lo : float = prim::Constant[value=0.]()
  %hi : float = prim::Constant[value=inf]()
  %r : Tensor = gosr::batch_norm_clamp(%x, %w, %b, %m, %v, %false, %mom, %eps, %true, %lo, %hi)
  return (%r)`},
		{name: "batch_norm relu6", before: bnHead + `
  %n : Tensor = aten::batch_norm(%x, %w, %b, %m, %v, %false, %mom, %eps, %true)
  %r : Tensor = aten::hardtanh(%n, %zero, %six)
  return (%r)`, after: bnHead + `
  %lo : float = prim::Constant[value=0.]()
  %hi : float = prim::Constant[value=6.]()
  %r : Tensor = gosr::batch_norm_clamp(%x, %w, %b, %m, %v, %false, %mom, %eps, %true, %lo, %hi)
  return (%r)`},
		{name: "output read twice", before: bnHead + `
  %n : Tensor = aten::batch_norm(%x, %w, %b, %m, %v, %false, %mom, %eps, %true)
  %r : Tensor = aten::relu(%n)
  return (%r, %n)`, after: bnHead + `
  %n : Tensor = aten::batch_norm(%x, %w, %b, %m, %v, %false, %mom, %eps, %true)
  %r : Tensor = aten::relu(%n)
  return (%r, %n)`},
		{name: "bounds not constant", before: bnHead + `
  %n : Tensor = aten::batch_norm(%x, %w, %b, %m, %v, %false, %mom, %eps, %true)
  %r : Tensor = aten::hardtanh(%n, %zero, %f)
  return (%r)`, after: bnHead + `
  %n : Tensor = aten::batch_norm(%x, %w, %b, %m, %v, %false, %mom, %eps, %true)
  %r : Tensor = aten::hardtanh(%n, %zero, %f)
  return (%r)`},
		{name: "op not in the runtime", ctx: &Context{HasOp: func(k string) bool { return k != BatchNormClampKind }}, before: bnHead + `
  %n : Tensor = aten::batch_norm(%x, %w, %b, %m, %v, %false, %mom, %eps, %true)
  %r : Tensor = aten::relu(%n)
  return (%r)`, after: bnHead + `
  %n : Tensor = aten::batch_norm(%x, %w, %b, %m, %v, %false, %mom, %eps, %true)
  %r : Tensor = aten::relu(%n)
  return (%r)`},
	})
}

// Every op a fusion pass makes is known to the alias analysis as one
// that allocates its output: unknown, it would be taken to alias
// anything, and the planner would leave its tensors (and its inputs')
// unmanaged, as gosr::batch_norm_clamp's were before it was listed.
func TestFusedOpsKnownToAliasAnalysis(t *testing.T) {
	for _, kind := range []string{ConvClampKind, ConvAddClampKind, ConvActKind, LinearActKind, BatchNormClampKind} {
		assert.True(t, alias.IsKnownOp(kind), kind)
	}
}
