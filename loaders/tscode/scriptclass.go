package tscode

import (
	"strings"

	"github.com/gosr/gosr/graph"
)

// Script classes: a TorchScript class that is not a module (torchvision's
// ImageList) is printed with its typed fields and methods:
//
//	class ImageList:
//	  tensors : Tensor
//	  image_sizes : List[Tuple[int, int]]
//	  def __init__(self: ..., tensors: Tensor, image_sizes: ...) -> NoneType:
//	    self.tensors = tensors
//	    ...
//
// and built as `x = C.__new__(C)` then `_ = (x).__init__(args)`. gosr
// lowers such an object to a tuple of its fields in declaration order
// (the type is a named tuple type, as for NamedTuples), which holds as
// long as the fields do not change after __init__: __init__ is inlined
// with self a compile-time object whose field assignments are recorded,
// and must assign every field in straight-line code; afterwards the
// object is its TupleConstruct, fields are read with TupleIndex and
// methods are inlined with that tuple as self. Assigning a field after
// __init__ is reported as unsupported.

// objectSV is a script class object: under construction until __init__
// returns, then val is its tuple.
type objectSV struct {
	nt     *namedTuple
	fields []sv
	block  *graph.Block // where __init__ must assign fields
	val    *graph.Value
}

// classMethodSV is a method of a script class, bound to an object (an
// *objectSV under construction or the tuple value).
type classMethodSV struct {
	self sv
	nt   *namedTuple
	def  *FuncDef
}

// isScriptClass reports whether cls is a plain script class: no bases, a
// __init__ method.
func isScriptClass(cls *classInfo) bool {
	if len(cls.def.Bases) != 0 {
		return false
	}
	for _, s := range cls.def.Body {
		if f, ok := s.(*FuncDef); ok && f.Name == "__init__" {
			return true
		}
	}
	return false
}

func (nt *namedTuple) method(name string) *FuncDef {
	if nt.cls == nil {
		return nil
	}
	for _, s := range nt.cls.def.Body {
		if f, ok := s.(*FuncDef); ok && f.Name == name {
			return f
		}
	}
	return nil
}

// newObject compiles C.__new__(C) for a script class C (path is
// "C.__new__"); ok is false when C is not one.
func (c *compiler) newObject(x *Call, path string) (sv, bool, error) {
	qual, ok := strings.CutSuffix(path, ".__new__")
	if !ok {
		return nil, false, nil
	}
	nt, err := c.namedTupleOf(qual)
	if err != nil {
		return nil, true, err
	}
	if nt == nil || nt.cls == nil {
		return nil, true, c.errf(x, "constructing %s is not supported (only NamedTuples, script classes and module objects from data.pkl are)", qual)
	}
	return &objectSV{nt: nt, fields: make([]sv, len(nt.fields)), block: c.block}, true, nil
}

// objectAttr reads a field or method of an object under construction.
func (c *compiler) objectAttr(at Node, o *objectSV, name string) (sv, error) {
	if o.val != nil {
		return c.attr(at, o.val, name)
	}
	if i := o.nt.field(name); i >= 0 {
		if o.fields[i] == nil {
			return nil, c.errf(at, "%s.%s read before __init__ assigned it", o.nt.qual, name)
		}
		return o.fields[i], nil
	}
	if def := o.nt.method(name); def != nil {
		return &classMethodSV{self: o, nt: o.nt, def: def}, nil
	}
	return nil, c.errf(at, "script class %s has no attribute %s", o.nt.qual, name)
}

// classMethod finds method name of a script class value v.
func (c *compiler) classMethod(v *graph.Value, name string) (sv, bool, error) {
	if v.Type.Kind != graph.TupleType || v.Type.Name == "" {
		return nil, false, nil
	}
	nt, err := c.namedTupleOf(v.Type.Name)
	if err != nil || nt == nil {
		return nil, false, err
	}
	if nt.field(name) >= 0 {
		return nil, false, nil
	}
	if def := nt.method(name); def != nil {
		return &classMethodSV{self: v, nt: nt, def: def}, true, nil
	}
	return nil, false, nil
}

// callClassMethod inlines a script class method; a call of __init__ on an
// object under construction then builds the object's tuple.
func (c *compiler) callClassMethod(x *Call, m *classMethodSV, args []sv, kws []struct {
	name string
	v    sv
}) (sv, error) {
	o, building := m.self.(*objectSV)
	if m.def.Name == "__init__" {
		if !building || o.val != nil {
			return nil, c.errf(x, "%s.__init__ called on a built object", m.nt.qual)
		}
		for _, s := range m.def.Body {
			switch s.(type) {
			case *If, *For, *While:
				return nil, c.errf(s, "%s.__init__ has control flow: script class fields assigned in branches or loops are not supported", m.nt.qual)
			}
		}
	} else if building && o.val == nil {
		return nil, c.errf(x, "%s.%s called before __init__", m.nt.qual, m.def.Name)
	}
	self := m.self
	if building && o.val != nil {
		self = o.val
	}
	r, err := c.inline(x, m.def, m.nt.cls.file, self, args, kws)
	if err != nil || m.def.Name != "__init__" {
		return r, err
	}
	ins := make([]*graph.Value, len(o.fields))
	for i, f := range o.fields {
		if f == nil {
			return nil, c.errf(x, "%s.__init__ does not assign field %s", m.nt.qual, m.nt.fields[i])
		}
		v, err := c.value(x, f)
		if err != nil {
			return nil, err
		}
		if !v.Type.IsSubtypeOf(m.nt.types[i]) {
			return nil, c.errf(x, "%s: field %s is declared %s, got %s", m.nt.qual, m.nt.fields[i], m.nt.types[i], v.Type)
		}
		ins[i] = v
	}
	o.val = c.emit(graph.KindTupleConstruct, ins, m.nt.typ).Outputs[0]
	return nil, nil
}

// assignField records self.name = v in a script class's __init__.
func (c *compiler) assignField(t *Attribute, v sv, e *env) (bool, error) {
	n, ok := t.X.(*Name)
	if !ok {
		return false, nil
	}
	o, ok := e.vars[n.ID].(*objectSV)
	if !ok {
		return false, nil
	}
	if o.val != nil {
		return true, c.errf(t, "assigning %s of a built %s object is not supported (gosr lowers script class objects to immutable tuples)", t.Attr, o.nt.qual)
	}
	if c.block != o.block {
		return true, c.errf(t, "%s.__init__ assigns %s in a nested block: not supported", o.nt.qual, t.Attr)
	}
	i := o.nt.field(t.Attr)
	if i < 0 {
		return true, c.errf(t, "script class %s declares no field %s", o.nt.qual, t.Attr)
	}
	o.fields[i] = v
	return true, nil
}
