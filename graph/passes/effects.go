package passes

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/graph/alias"
)

// sideEffectOps are kept even when their outputs are unused, and never
// folded.
var sideEffectOps = map[string]bool{
	"prim::Print":          true,
	"prim::RaiseException": true,
	"aten::warn":           true,
	"prim::SetAttr":        true,
	"prim::Enter":          true,
	"prim::Exit":           true,
	"prim::AddStatValue":   true,
	"prim::TimePoint":      true,
	"prim::CallFunction":   true,
	"prim::CallMethod":     true,
	"prim::fork":           true,
	"aten::wait":           true,
	"prim::rpc_async":      true,
	"aten::manual_seed":    true,
	"aten::save":           true,
	"prim::RecordFunction": true,
	"prim::profile":        true,
	"prim::profile_ivalue": true,
	"prim::Guard":          true,
	"prim::BailOut":        true,
	"prim::Return":         true,
	"prim::Param":          true,
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
	case "prim::Constant", "prim::ListConstruct", "prim::TupleConstruct", "prim::DictConstruct",
		"prim::ListUnpack", "prim::TupleUnpack", "prim::TupleIndex", "prim::DictIndex",
		"prim::If", "prim::Loop", "prim::GetAttr", "prim::Uninitialized", "prim::TupleSlice",
		"prim::VarConcat", "prim::VarStack", "static_runtime::VarTupleUnpack", "static_runtime::dict_unpack":
		return true
	}
	return alias.IsKnownOp(kind)
}
