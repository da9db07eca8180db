package passes

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/graph/alias"
)

// sideEffectOps are kept even when their outputs are unused, and never
// folded.
var sideEffectOps = map[string]bool{
	"prim::Print":            true,
	graph.KindRaiseException: true,
	"aten::warn":             true,
	"prim::SetAttr":          true,
	"prim::Enter":            true,
	"prim::Exit":             true,
	"prim::AddStatValue":     true,
	"prim::TimePoint":        true,
	graph.KindCallFunction:   true,
	graph.KindCallMethod:     true,
	graph.KindFork:           true,
	graph.KindWait:           true,
	"prim::rpc_async":        true,
	"aten::manual_seed":      true,
	"aten::save":             true,
	"prim::RecordFunction":   true,
	"prim::profile":          true,
	"prim::profile_ivalue":   true,
	"prim::Guard":            true,
	"prim::BailOut":          true,
	graph.KindReturn:         true,
	graph.KindParam:          true,
}

// hasSideEffects reports whether n must run even if nothing uses its
// outputs. Ops the alias analysis does not know count as side-effecting.
func hasSideEffects(n *graph.Node) bool {
	if sideEffectOps[n.Kind] {
		return true
	}
	return !knownOp(n.Kind)
}

// knownOp reports whether n's kind is a known op (from PyTorch's schemas,
// gosr's own ops or the IR's structural prims).
func knownOp(kind string) bool {
	switch kind {
	case graph.KindConstant, graph.KindListConstruct, graph.KindTupleConstruct, graph.KindDictConstruct,
		graph.KindListUnpack, graph.KindTupleUnpack, "prim::TupleIndex", "prim::DictIndex",
		graph.KindIf, graph.KindLoop, graph.KindGetAttr, graph.KindUninitialized, "prim::TupleSlice",
		"prim::VarConcat", "prim::VarStack", "static_runtime::VarTupleUnpack", "static_runtime::dict_unpack":
		return true
	}
	return alias.IsKnownOp(kind)
}
