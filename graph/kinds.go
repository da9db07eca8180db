package graph

// The node kinds the graph layer, the passes and the runtime treat by
// structure rather than as kernels: control flow, constants, containers,
// forks, attribute access. Ops with kernels are named by their strings
// in the op registry.
const (
	KindParam          = "prim::Param"
	KindReturn         = "prim::Return"
	KindConstant       = "prim::Constant"
	KindLoop           = "prim::Loop"
	KindIf             = "prim::If"
	KindFork           = "prim::fork"
	KindWait           = "aten::wait"
	KindTupleConstruct = "prim::TupleConstruct"
	KindTupleUnpack    = "prim::TupleUnpack"
	KindListConstruct  = "prim::ListConstruct"
	KindListUnpack     = "prim::ListUnpack"
	KindDictConstruct  = "prim::DictConstruct"
	KindGetAttr        = "prim::GetAttr"
	KindCallMethod     = "prim::CallMethod"
	KindCallFunction   = "prim::CallFunction"
	KindUninitialized  = "prim::Uninitialized"
	KindRaiseException = "prim::RaiseException"
)
