package tscode

import (
	"strings"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// Module attributes of kind Dict (IntermediateLayerGetter's
// return_layers : Dict[str, str], ...) are frozen as constants, as
// freezing does: membership, indexing, len, keys/values/items on them then
// fold at compile time where their other arguments are constants too.
// Mutating one is an error: a constant is shared by every run.

// attrType returns the type a module's class declares for attribute name
// (`return_layers : Dict[str, str]`), or nil.
func (c *compiler) attrType(m *moduleSV, name string) *graph.Type {
	cls, err := c.class(m.obj.ClassName(), nil)
	if err != nil {
		return nil
	}
	for _, s := range cls.def.Body {
		if a, ok := s.(*AnnAssign); ok {
			if n, ok := a.Target.(*Name); ok && n.ID == name {
				t, err := c.typeOf(a.Type)
				if err != nil {
					return nil
				}
				return t
			}
		}
	}
	return nil
}

// dictConst makes a constant of a dict attribute; want is its declared
// type where known.
func (c *compiler) dictConst(v ivalue.IValue, want *graph.Type, at Node) (sv, error) {
	d := v.Dict()
	if d == nil {
		return nil, c.errf(at, "module attribute of kind Dict holds no dict")
	}
	if want != nil && want.Kind == graph.OptionalType {
		want = want.Elem()
	}
	var kt, vt *graph.Type
	for i := range d.Keys {
		kt = unify(kt, constType(d.Keys[i]))
		vt = unify(vt, constType(d.Values[i]))
		if kt == nil || vt == nil {
			break
		}
	}
	t := want
	if t == nil || t.Kind != graph.DictType {
		if len(d.Keys) > 0 && (kt == nil || vt == nil) {
			return nil, c.errf(at, "dict attribute with entries of mixed or unsupported types (declare it Dict[K, V])")
		}
		if kt == nil {
			kt, vt = graph.Str, graph.Tensor
		}
		t = graph.DictOf(kt, vt)
	} else if len(d.Keys) > 0 && (kt == nil || vt == nil || !kt.IsSubtypeOf(t.Elems[0]) || !vt.IsSubtypeOf(t.Elems[1])) {
		return nil, c.errf(at, "dict attribute declared %s holds entries of other types", t)
	}
	return c.constant(v, t), nil
}

// constType is the graph type of a frozen attribute value, nil where
// there is none (modules, objects).
func constType(v ivalue.IValue) *graph.Type { return constTypeN(v, 0) }

func constTypeN(v ivalue.IValue, depth int) *graph.Type {
	if depth > maxValueDepth {
		return nil
	}
	switch v.Kind() {
	case ivalue.KindNone:
		return graph.None
	case ivalue.KindTensor:
		return graph.Tensor
	case ivalue.KindInt:
		return graph.Int
	case ivalue.KindDouble:
		return graph.Float
	case ivalue.KindBool:
		return graph.Bool
	case ivalue.KindString:
		return graph.Str
	case ivalue.KindDevice:
		return graph.Device
	case ivalue.KindList, ivalue.KindTuple:
		var et *graph.Type
		ts := make([]*graph.Type, 0, len(v.List().Items))
		for _, it := range v.List().Items {
			t := constTypeN(it, depth+1)
			if t == nil {
				return nil
			}
			ts = append(ts, t)
			if et = unify(et, t); et == nil && v.Kind() == ivalue.KindList {
				return nil
			}
		}
		if v.Kind() == ivalue.KindTuple {
			return graph.TupleOf(ts...)
		}
		if et == nil {
			return nil // an empty list: its element type is unknown
		}
		return graph.ListOf(et)
	case ivalue.KindDict:
		d := v.Dict()
		var kt, vt *graph.Type
		for i := range d.Keys {
			if kt, vt = unify(kt, constTypeN(d.Keys[i], depth+1)), unify(vt, constTypeN(d.Values[i], depth+1)); kt == nil || vt == nil {
				return nil
			}
		}
		if kt == nil {
			return nil
		}
		return graph.DictOf(kt, vt)
	}
	return nil
}

// checkMutation rejects an op that writes into a frozen dict attribute.
func (c *compiler) checkMutation(at Node, s *graph.Schema, inputs []*graph.Value) error {
	for i, a := range s.Arguments {
		if i >= len(inputs) || !strings.Contains(a.Alias, "!") {
			continue
		}
		in := inputs[i]
		if in.Type.Kind == graph.DictType && in.Node != nil && in.Node.Kind == graph.KindConstant {
			return c.errf(at, "%s writes into a dict module attribute: gosr freezes module attributes for inference", s.Name)
		}
	}
	return nil
}
