// Package schemas holds gosr's one list of operator schemas: those
// PyTorch 1.13 (with torchvision 0.14) registers, as
// torch._C._jit_get_all_schemas() prints them. The TorchScript compiler
// resolves calls against it, the alias analysis reads its annotations and
// graph's tests parse it. It imports nothing of gosr, so any package,
// graph included, can use it.
package schemas

import (
	_ "embed"
	"slices"
	"strings"
	"sync"
)

// schemas.txt: one schema per line in registration order, which is the
// order TorchScript tries overloads in, after a '#' line naming the
// versions; gen.py remakes it (make schemas).
//
//go:embed schemas.txt
var text string

var lines = sync.OnceValue(func() []string {
	out := make([]string, 0, strings.Count(text, "\n"))
	for _, l := range strings.Split(text, "\n") {
		if l != "" && l[0] != '#' {
			out = append(out, l)
		}
	}
	return out
})

// Lines returns every schema's text ("aten::add.Tensor(Tensor self,
// Tensor other, *, Scalar alpha=1) -> Tensor"), in registration order.
// The split is done once; each caller gets its own copy of the slice.
func Lines() []string { return slices.Clone(lines()) }
