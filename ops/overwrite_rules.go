package ops

import (
	"sync"

	"github.com/gosr/gosr/graph"
)

// Planned overwrites: an out-variant kernel that may write its output over
// the memory of an input that nothing reads after the node. The memory
// planner (memplan.Request.Overwrites, a planned overwrite) then places
// the output at the same offset as that input, so the two cost one tensor
// at the node instead of two: a pooling or strided depthwise convolution
// writes over the activation it reads, an elementwise op over its dead
// operand.
//
// The contract, for a kernel with a rule: when Safe (nil: always) says
// yes for the inputs about to run, and the runtime has made the output's
// storage begin at the first byte of input Input's data (that input
// contiguous, at storage offset 0, nothing else aliasing it), the kernel
// gives exactly the result it gives with disjoint memory. The runtime
// links only an input that no other input of the node may alias (from
// the alias analysis), checks Safe before every run of the node and,
// when it says no, gives the output memory of its own for that run.

// OverwriteRule is an op's planned-overwrite rule.
type OverwriteRule struct {
	// Input is the index of the input whose memory the output may begin in.
	Input int
	// InputOf, when set, gives Input for a node (variadic ops, whose
	// arity varies from node to node).
	InputOf func(n *graph.Node) int
	// Backend says the rule holds for a KernelBackend's kernel as well
	// (ATen's out= kernels accept an out that is exactly self, which is
	// how its elementwise in-place ops run). Otherwise the rule applies
	// only where the node runs gosr's Go kernel.
	Backend bool
	// Safe reports whether, for the inputs in p, the kernel may write
	// over input Input. It must not allocate.
	Safe func(p *ProcessedNode) bool
	// Serial says the kernel runs on one goroutine when it writes over
	// its input (it must go through the planes or columns in order),
	// where it would otherwise share its work across an intra-op team:
	// a module with intra-op threads does not plan it.
	Serial bool
}

type inplaceEntry struct {
	match func(n *graph.Node) bool
	rule  OverwriteRule
}

var (
	inplaceMu    sync.RWMutex
	inplaceRules = map[string][]inplaceEntry{}
)

// RegisterOverwrite adds an overwrite rule for the nodes of op that match
// (nil: all of them).
func RegisterOverwrite(op string, match func(n *graph.Node) bool, r OverwriteRule) {
	inplaceMu.Lock()
	defer inplaceMu.Unlock()
	inplaceRules[op] = append(inplaceRules[op], inplaceEntry{match, r})
}

// OverwriteRuleOf returns the overwrite rule for n, if its op has one that
// matches n.
func OverwriteRuleOf(n *graph.Node) (OverwriteRule, bool) {
	inplaceMu.RLock()
	es := inplaceRules[n.Kind]
	inplaceMu.RUnlock()
	for _, e := range es {
		if e.match == nil || e.match(n) {
			r := e.rule
			if r.InputOf != nil {
				r.Input = r.InputOf(n)
			}
			return r, true
		}
	}
	return OverwriteRule{}, false
}
