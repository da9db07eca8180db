package tscode

import (
	"github.com/gosr/gosr/graph"
)

// annotate(List[...float], x.tolist()): TorchScript compiles Tensor.tolist
// only under a type annotation, into prim::tolist(x, dim, elem_type) with
// the annotation's type as output; dim is the list nesting and elem_type
// 0 for int, 1 for float, 2 for bool (as PyTorch's ir_emitter numbers
// them for the prim::tolist kernel).

// tolist compiles x as annotate(t, base.tolist()); ok is false when the
// annotated expression is not a tolist() call.
func (c *compiler) tolist(x *Call, e *env) (sv, bool, error) {
	if len(x.Args) != 2 {
		return nil, false, nil
	}
	call, ok := x.Args[1].(*Call)
	if !ok || len(call.Args) != 0 || len(call.Keywords) != 0 {
		return nil, false, nil
	}
	a, ok := call.Func.(*Attribute)
	if !ok || a.Attr != "tolist" {
		return nil, false, nil
	}
	t, err := c.typeOf(x.Args[0])
	if err != nil {
		return nil, true, err
	}
	dim, el := 0, t
	for el.Kind == graph.ListType {
		dim++
		el = el.Elem()
	}
	code := map[graph.TypeKind]int64{graph.IntType: 0, graph.FloatType: 1, graph.BoolType: 2}
	ec, known := code[el.Kind]
	if !known {
		return nil, true, c.errf(x, "tolist() annotated %s: the elements must be int, float or bool", t)
	}
	base, err := c.expr(a.X, e)
	if err != nil {
		return nil, true, err
	}
	v, err := c.value(x, base)
	if err != nil {
		return nil, true, err
	}
	if v.Type.Kind != graph.TensorType {
		return nil, true, c.errf(x, "tolist() of %s: expected a tensor", v.Type)
	}
	return c.emit("prim::tolist", []*graph.Value{v, c.intConst(int64(dim)), c.intConst(ec)}, t).Outputs[0], true, nil
}

// isinstanceOf decides isinstance(v, T) where T may be a tuple of types
// and the bare Python types list, tuple and dict (torchvision's
// check_roi_boxes_shape: isinstance(boxes, (list, tuple))).
func (c *compiler) isinstanceOf(v *graph.Value, te Expr) (bool, error) {
	if tup, ok := te.(*Tuple); ok {
		for _, el := range tup.Elts {
			r, err := c.isinstanceOf(v, el)
			if err != nil || r {
				return r, err
			}
		}
		return false, nil
	}
	if n, ok := te.(*Name); ok {
		switch n.ID {
		case "list":
			return v.Type.Kind == graph.ListType, nil
		case "tuple":
			return v.Type.Kind == graph.TupleType, nil
		case "dict":
			return v.Type.Kind == graph.DictType, nil
		}
	}
	t, err := c.typeOf(te)
	if err != nil {
		return false, err
	}
	return v.Type.IsSubtypeOf(t), nil
}
