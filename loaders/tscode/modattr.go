package tscode

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// Module attributes assigned in code (torchvision's anchor generator sets
// self.cell_anchors = [a.to(dtype, device) for a in self.cell_anchors]
// on every forward; its detection models set self._has_warned = True
// after warning once). gosr makes such attributes run-local: every run
// starts from the archive's values, and an assignment rebinds the
// attribute for the rest of the run. That is PyTorch's result whenever a
// run writes an attribute before reading it again, or the value written
// does not change what later runs compute (both torchvision cases: the
// anchors converted to the dtype and device they already have, a flag
// that only silences a repeated warning, so gosr warns on every run
// where PyTorch warns on the first). An assignment inside a branch or
// loop cannot be merged at compile time: reading the attribute after it
// is reported as unsupported.

type attrKey struct {
	obj  Object
	name string
}

// moduleAttrAssign records m.name = v.
func (c *compiler) moduleAttrAssign(t *Attribute, m *moduleSV, v sv) error {
	if c.attrs == nil {
		c.attrs = map[attrKey]attrState{}
	}
	k := attrKey{m.obj, t.Attr}
	if c.block != c.g.Block {
		c.attrs[k] = attrState{branch: true}
		return nil
	}
	c.attrs[k] = attrState{v: v}
	return nil
}

type attrState struct {
	v      sv
	branch bool // assigned in a nested block: its value after the join is unknown
}

// moduleAttrOverride returns the value a run-local assignment gave m.name.
func (c *compiler) moduleAttrOverride(at Node, m *moduleSV, name string) (sv, bool, error) {
	s, ok := c.attrs[attrKey{m.obj, name}]
	if !ok {
		return nil, false, nil
	}
	if s.branch {
		return nil, true, c.errf(at, "module attribute %s is read after an assignment inside a branch or loop: not supported (gosr keeps module attributes run-local)", name)
	}
	return s.v, true, nil
}

// assignModuleAttr handles target.attr = v where target is a module.
func (c *compiler) assignModuleAttr(t *Attribute, v sv, e *env) (bool, error) {
	base, err := c.expr(t.X, e)
	if err != nil {
		return true, err
	}
	m, ok := base.(*moduleSV)
	if !ok {
		return false, nil
	}
	if _, isVal := v.(*graph.Value); !isVal && v != nil {
		if _, isTuple := v.(*tupleSV); !isTuple {
			return true, c.errf(t, "assigning %T to module attribute %s is not supported", v, t.Attr)
		}
	}
	return true, c.moduleAttrAssign(t, m, v)
}

// isModuleNone decides torch.__is__(m, None) / __isnot__ for a module or
// script object m (an Optional attribute that holds one, such as
// MultiScaleRoIAlign.map_levels once set): never None.
func (c *compiler) isModuleNone(op string, args []sv) (sv, bool) {
	if (op != "aten::__is__" && op != "aten::__isnot__") || len(args) != 2 {
		return nil, false
	}
	obj := func(s sv) bool {
		switch s.(type) {
		case *moduleSV, *objectSV:
			return true
		}
		return false
	}
	none := func(s sv) bool {
		if s == nil {
			return true
		}
		v, ok := s.(*graph.Value)
		return ok && v.Type.Kind == graph.NoneType
	}
	if (obj(args[0]) && none(args[1])) || (obj(args[1]) && none(args[0])) {
		return c.boolConst(op == "aten::__isnot__"), true
	}
	return nil, false
}

// inputDefault records the default of the method's i-th input when it
// is a constant (None, a number, a string, a bool).
func (c *compiler) inputDefault(p *Param, i int) error {
	if p.Default == nil {
		return nil
	}
	k, ok := p.Default.(*Const)
	if !ok {
		return nil // not a constant: the input must be given
	}
	s, err := c.expr(k, &env{vars: map[string]sv{}})
	if err != nil {
		return err
	}
	var v ivalue.IValue
	switch s := s.(type) {
	case nil:
		v = ivalue.None()
	case *graph.Value:
		kv, ok := constOf(s)
		if !ok {
			return nil
		}
		v = kv
	default:
		return nil
	}
	for len(c.g.InputDefaults) <= i {
		c.g.InputDefaults = append(c.g.InputDefaults, nil)
	}
	c.g.InputDefaults[i] = &v
	return nil
}
