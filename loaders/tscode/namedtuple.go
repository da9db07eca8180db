package tscode

import (
	"github.com/gosr/gosr/graph"
)

// NamedTuples. TorchScript prints a typing.NamedTuple as a class whose
// base is NamedTuple and whose body declares the typed fields in order:
//
//	class GoogLeNetOutputs(NamedTuple):
//	  logits : Tensor
//	  aux_logits2 : Optional[Tensor]
//
// Its type is a tuple type (graph.TupleType with Name set to the class's
// qualified name); constructing one is a prim::TupleConstruct, and a field
// is read by name (x.logits) or by index (x[0]), as in TorchScript.

// namedTuple is a NamedTuple class: its fields in order, their declared
// types and defaults (nil where none).
type namedTuple struct {
	qual     string
	fields   []string
	types    []*graph.Type
	defaults []Expr
	file     *fileInfo
	typ      *graph.Type
	cls      *classInfo // a script class (scriptclass.go), nil for a NamedTuple
}

func isNamedTupleBase(e Expr) bool {
	name, ok := dotted(e)
	return ok && (name == "NamedTuple" || name == "typing.NamedTuple")
}

// namedTupleOf returns the NamedTuple class qual, or nil when qual is
// not one (a module class, or no source for it).
func (c *compiler) namedTupleOf(qual string) (*namedTuple, error) {
	if nt, ok := c.tuples[qual]; ok {
		return nt, nil
	}
	c.tuples[qual] = nil
	cls, err := c.class(qual, nil)
	if err != nil {
		return nil, nil // not a class in code/: not a NamedTuple
	}
	named := false
	for _, b := range cls.def.Bases {
		named = named || isNamedTupleBase(b)
	}
	script := !named && isScriptClass(cls)
	if !named && !script {
		return nil, nil
	}
	nt := &namedTuple{qual: qual, file: cls.file}
	if script {
		nt.cls = cls
	}
	for _, s := range cls.def.Body {
		a, ok := s.(*AnnAssign)
		if !ok {
			continue
		}
		n, ok := a.Target.(*Name)
		if !ok {
			continue
		}
		t, err := c.typeOf(a.Type)
		if err != nil {
			return nil, err
		}
		nt.fields = append(nt.fields, n.ID)
		nt.types = append(nt.types, t)
		nt.defaults = append(nt.defaults, a.Value)
	}
	nt.typ = &graph.Type{Kind: graph.TupleType, Elems: nt.types, Name: qual}
	c.tuples[qual] = nt
	return nt, nil
}

// construct compiles NT(args..., field=value...) into a TupleConstruct of
// the NamedTuple's type.
func (nt *namedTuple) construct(c *compiler, x *Call, args []sv, kws []struct {
	name string
	v    sv
}) (sv, error) {
	if len(args) > len(nt.fields) {
		return nil, c.errf(x, "%s takes %d fields, %d given", nt.qual, len(nt.fields), len(args))
	}
	vals := make([]sv, len(nt.fields))
	given := make([]bool, len(nt.fields))
	for i, a := range args {
		vals[i], given[i] = a, true
	}
	for _, k := range kws {
		i := nt.field(k.name)
		if i < 0 {
			return nil, c.errf(x, "%s has no field %s", nt.qual, k.name)
		}
		if given[i] {
			return nil, c.errf(x, "%s: field %s given twice", nt.qual, k.name)
		}
		vals[i], given[i] = k.v, true
	}
	ins := make([]*graph.Value, len(vals))
	for i := range vals {
		if !given[i] {
			if nt.defaults[i] == nil {
				return nil, c.errf(x, "%s: missing field %s", nt.qual, nt.fields[i])
			}
			d, err := c.expr(nt.defaults[i], &env{vars: map[string]sv{}, file: nt.file})
			if err != nil {
				return nil, err
			}
			vals[i] = d
		}
		v, err := c.value(x, vals[i])
		if err != nil {
			return nil, err
		}
		if !v.Type.IsSubtypeOf(nt.types[i]) {
			return nil, c.errf(x, "%s: field %s is declared %s, got %s", nt.qual, nt.fields[i], nt.types[i], v.Type)
		}
		ins[i] = v
	}
	return c.emit(graph.KindTupleConstruct, ins, nt.typ).Outputs[0], nil
}

func (nt *namedTuple) field(name string) int {
	for i, f := range nt.fields {
		if f == name {
			return i
		}
	}
	return -1
}

// tupleField reads field name of a NamedTuple value, or reports false
// when v is not a NamedTuple or has no such field.
func (c *compiler) tupleField(at Node, v *graph.Value, name string) (sv, bool, error) {
	if v.Type.Kind != graph.TupleType || v.Type.Name == "" {
		return nil, false, nil
	}
	nt, err := c.namedTupleOf(v.Type.Name)
	if err != nil || nt == nil {
		return nil, false, err
	}
	i := nt.field(name)
	if i < 0 {
		return nil, false, c.errf(at, "NamedTuple %s has no field %s (fields: %v)", nt.qual, name, nt.fields)
	}
	if p := v.Node; p != nil && p.Kind == graph.KindTupleConstruct && len(p.Inputs) == len(nt.fields) {
		return p.Inputs[i], true, nil
	}
	return c.emit("prim::TupleIndex", []*graph.Value{v, c.intConst(int64(i))}, nt.types[i]).Outputs[0], true, nil
}
