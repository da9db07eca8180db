package alias

import (
	"strings"

	"github.com/gosr/gosr/graph"
)

// opAlias is the aliasing behaviour of one overload, from its schema's
// alias annotations (see buildTable).
type opAlias struct {
	schema  string  // annotations stripped, so graph.ParseSchema reads it
	points  [][]int // per return: arguments it may point to
	elems   [][]int // per return (a list): arguments its elements may point to
	wild    []bool  // per return: annotated (*), may alias anything escaped
	writes  []int   // arguments written (!)
	escapes []int   // arguments stored into the wildcard set (a -> *)
}

type parsedOverload struct {
	alias  *opAlias
	schema *graph.Schema // nil where graph.ParseSchema rejects it
}

func parsedOverloads(kind string) ([]parsedOverload, bool) {
	o := infoOf(kind)
	if !o.annotated {
		return nil, false
	}
	return o.overloads(), true
}

// overloads returns the annotated overloads n may be a call of: those
// whose schema matches, else those with n's number of inputs, else all
// (the union of several is the conservative answer). ok is false when the
// op has no annotated overload.
func overloads(n *graph.Node) (ms []*opAlias, ok bool) {
	all, ok := parsedOverloads(n.Kind)
	if !ok {
		return nil, false
	}
	for _, p := range all {
		if s := p.schema; s != nil && s.Matches(n) {
			ms = append(ms, p.alias)
		}
	}
	if len(ms) > 0 {
		return ms, true
	}
	for _, p := range all {
		if s := p.schema; s != nil && (len(s.Arguments) == len(n.Inputs) || s.VarArgs && len(s.Arguments) <= len(n.Inputs)) {
			ms = append(ms, p.alias)
		}
	}
	if len(ms) > 0 {
		return ms, true
	}
	for _, p := range all {
		ms = append(ms, p.alias)
	}
	return ms, true
}

// viewLike are ops whose output may be (a view of) input 0 although
// their schema carries no annotation: type_as returns self when the dtype
// already matches, dropout returns its input when not training.
var viewLike = map[string]bool{
	"aten::type_as":               true,
	"aten::dropout":               true,
	"aten::feature_dropout":       true,
	"aten::alpha_dropout":         true,
	"aten::feature_alpha_dropout": true,
	"prim::unchecked_cast":        true,
	"aten::_unwrap_optional":      true,
	"aten::data":                  true,
}

// listOfViews are ops returning a list of views of input 0 (or of the
// tensors of the input list, for broadcast_tensors and meshgrid).
var listOfViews = map[string]bool{
	"aten::chunk":                   true,
	"aten::split":                   true,
	"aten::split_with_sizes":        true,
	"aten::unsafe_chunk":            true,
	"aten::unsafe_split":            true,
	"aten::unsafe_split_with_sizes": true,
	"aten::unbind":                  true,
	"aten::tensor_split":            true,
	"aten::hsplit":                  true,
	"aten::vsplit":                  true,
	"aten::dsplit":                  true,
	"aten::broadcast_tensors":       true,
	"aten::meshgrid":                true,
}

// gosrFresh are gosr's and static runtime's own ops, which allocate their
// outputs.
var gosrFresh = map[string]bool{
	"prim::VarConcat":                  true,
	"prim::VarStack":                   true,
	"static_runtime::permute_copy":     true,
	"static_runtime::reshape_copy":     true,
	"static_runtime::flatten_copy":     true,
	"static_runtime::to_copy":          true,
	"static_runtime::expand_dims_copy": true,
	"static_runtime::dequantize_copy":  true,
	"static_runtime::clamp_nan_to_num": true,
	"static_runtime::signed_log1p":     true,
	"prim::NumToTensor":                true,
	"gosr::conv_clamp":                 true,
	"gosr::conv_add_clamp":             true,
	"gosr::conv_act":                   true,
	"gosr::conv_scaled":                true,
	"gosr::conv_clamp_scaled":          true,
	"gosr::conv_add_clamp_scaled":      true,
	"gosr::conv_act_scaled":            true,
	"gosr::conv_clamp_max_pool2d":      true,
	"gosr::linear_act":                 true,
	"gosr::batch_norm_clamp":           true,
	"gosr::conv_nchwc":                 true,
	"gosr::to_nchwc":                   true,
	"gosr::from_nchwc":                 true,
}

// mutatingContainerOps write their input 0 (a list or dict).
var mutatingContainerOps = map[string]bool{
	"aten::append":      true,
	"aten::_set_item":   true,
	"aten::insert":      true,
	"aten::extend":      true,
	"aten::pop":         true,
	"aten::clear":       true,
	"aten::remove":      true,
	"aten::reverse":     true,
	"aten::setdefault":  true,
	"aten::update":      true,
	"aten::popitem":     true,
	"aten::__setitem__": true,
	"prim::SetAttr":     true,
}

// IsViewOp reports whether n's output 0 may share memory with its input 0
// without n writing it: views (view, reshape, permute, select, slice, ...),
// ops that may return their input (contiguous, to, detach, type_as,
// dropout) and ops returning lists of views (chunk, split, unbind).
func IsViewOp(n *graph.Node) bool {
	if len(n.Inputs) == 0 || len(n.Outputs) == 0 {
		return false
	}
	if viewLike[n.Kind] || listOfViews[n.Kind] {
		return true
	}
	ms, ok := overloads(n)
	if !ok {
		return false
	}
	for _, m := range ms {
		if contains(m.writes, 0) {
			continue
		}
		if len(m.points) > 0 && contains(m.points[0], 0) || len(m.elems) > 0 && contains(m.elems[0], 0) {
			return true
		}
	}
	return false
}

// IsMutating reports whether n may write one of its inputs: in-place aten
// ops (add_, relu_, copy_, index_put_), out= overloads, list and dict
// mutation (append, _set_item, insert, extend, pop, clear) and
// prim::SetAttr. Ops unknown to the schema table count as mutating when
// their name ends in a single '_'.
func IsMutating(n *graph.Node) bool {
	return len(WrittenInputs(n)) > 0
}

// WrittenInputs returns the indices of the inputs n may write.
func WrittenInputs(n *graph.Node) []int {
	if len(n.Inputs) == 0 {
		return nil
	}
	if mutatingContainerOps[n.Kind] {
		return []int{0}
	}
	ms, ok := overloads(n)
	if !ok {
		if isInPlaceName(n.Kind) {
			return []int{0}
		}
		return nil
	}
	var w []int
	for _, m := range ms {
		for _, i := range m.writes {
			if i < len(n.Inputs) && !contains(w, i) {
				w = append(w, i)
			}
		}
	}
	return w
}

func isInPlaceName(kind string) bool {
	return strings.HasSuffix(kind, "_") && !strings.HasSuffix(kind, "__")
}

// IsNondeterministic reports whether n draws random numbers (it takes a
// Generator, or is a dropout, which samples when training).
func IsNondeterministic(n *graph.Node) bool {
	if infoOf(n.Kind).generator {
		return true
	}
	switch n.Kind {
	case "aten::dropout", "aten::feature_dropout", "aten::alpha_dropout",
		"aten::feature_alpha_dropout", "aten::native_dropout", "aten::dropout_",
		"aten::feature_dropout_", "aten::alpha_dropout_", "aten::feature_alpha_dropout_",
		"aten::rand_like", "aten::randn_like", "aten::randint_like":
		return true
	}
	return false
}

// isKnown reports whether the analysis knows n's aliasing behaviour.
func isKnown(kind string) bool {
	return infoOf(kind).known || gosrFresh[kind] || viewLike[kind] || listOfViews[kind] || mutatingContainerOps[kind]
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// IsKnownOp reports whether the analysis has a model of op kind (a schema
// from PyTorch or one of gosr's own ops); unknown ops are treated as
// aliasing and writing everything they touch.
func IsKnownOp(kind string) bool { return isKnown(kind) }
