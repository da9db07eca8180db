package tscode

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops"
)

// kwVal is a keyword argument.
type kwVal struct {
	name string
	v    *graph.Value
}

// call compiles x given the value of x.Func.
func (c *compiler) call(x *Call, fn sv, e *env) (sv, error) {
	var err error
	if b, ok := fn.(*builtinSV); ok && b.name == "annotate" {
		if v, ok, err := c.tolist(x, e); ok || err != nil {
			return v, err
		}
	}
	// Arguments stay sugared for inlined calls (a module may be passed).
	args := make([]sv, len(x.Args))
	for i, a := range x.Args {
		if b, ok := fn.(*builtinSV); ok && i == 0 && (b.name == "annotate" || b.name == "unchecked_cast" || b.name == "uninitialized" || b.name == "isinstance" && false) {
			continue // a type, read by the builtin
		}
		if b, ok := fn.(*builtinSV); ok && i == 1 && b.name == "isinstance" {
			continue
		}
		if args[i], err = c.expr(a, e); err != nil {
			return nil, err
		}
	}
	kws := make([]struct {
		name string
		v    sv
	}, len(x.Keywords))
	for i, k := range x.Keywords {
		kws[i].name = k.Name
		if kws[i].v, err = c.expr(k.Value, e); err != nil {
			return nil, err
		}
	}
	values := func() ([]*graph.Value, []kwVal, error) {
		vs := make([]*graph.Value, len(args))
		for i, a := range args {
			v, err := c.value(x.Args[i], a)
			if err != nil {
				return nil, nil, err
			}
			vs[i] = v
		}
		kv := make([]kwVal, len(kws))
		for i, k := range kws {
			v, err := c.value(x.Keywords[i].Value, k.v)
			if err != nil {
				return nil, nil, err
			}
			kv[i] = kwVal{name: k.name, v: v}
		}
		return vs, kv, nil
	}
	switch f := fn.(type) {
	case *methodSV:
		def, cls, err := c.method(f.self, f.name, x)
		if err != nil {
			return nil, err
		}
		return c.inline(x, def, cls.file, f.self, args, kws)
	case *funcSV:
		return c.inline(x, f.def, f.file, nil, args, kws)
	case *classMethodSV:
		return c.callClassMethod(x, f, args, kws)
	case *closureSV:
		return c.inlineIn(x, f.def, f.env.file, f.env, nil, args, kws)
	case *builtinSV:
		if f.name == "fork" || f.name == "wait" {
			return c.forkWait(x, f.name, args, kws)
		}
		return c.builtin(x, f.name, args, e)
	case *boundSV:
		vs, kv, err := values()
		if err != nil {
			return nil, err
		}
		return c.callOp(x, "aten::"+f.name, append([]*graph.Value{f.self}, vs...), kv)
	case *nsSV:
		path := f.path
		switch {
		case strings.HasPrefix(path, "__torch__."):
			return c.callTorchPath(x, path, args, kws)
		case path == "torch.jit._fork" || path == "torch.jit.fork":
			return c.forkWait(x, "fork", args, kws)
		case path == "torch.wait" || path == "torch.jit._wait" || path == "torch.jit.wait":
			return c.forkWait(x, "wait", args, kws)
		}
		op, err := opName(path)
		if err != nil {
			return nil, c.errf(x, "%v", err)
		}
		if v, ok := c.isModuleNone(op, args); ok {
			return v, nil
		}
		vs, kv, err := values()
		if err != nil {
			return nil, err
		}
		return c.callOp(x, op, vs, kv)
	case *moduleSV:
		def, cls, err := c.method(f, "forward", x)
		if err != nil {
			// A script class object held by a module (torchvision's
			// LevelMapper) is called through its __call__.
			if d, k, err2 := c.method(f, "__call__", x); err2 == nil {
				def, cls, err = d, k, nil
			}
		}
		if err != nil {
			return nil, err
		}
		return c.inline(x, def, cls.file, f, args, kws)
	}
	return nil, c.errf(x, "%s is not callable", exprText(x.Func))
}

// opName maps torch.X, ops.ns.X and math.X to a qualified op name.
func opName(path string) (string, error) {
	parts := strings.Split(path, ".")
	switch {
	case len(parts) == 2 && parts[0] == "torch":
		if len(overloads("aten::"+parts[1])) == 0 && len(overloads("prim::"+parts[1])) > 0 {
			return "prim::" + parts[1], nil
		}
		return "aten::" + parts[1], nil
	case len(parts) == 3 && parts[0] == "ops":
		return parts[1] + "::" + parts[2], nil
	case len(parts) == 2 && parts[0] == "math":
		return "aten::" + parts[1], nil
	}
	return "", fmt.Errorf("%s is not an operator (torch.NAME, ops.NAMESPACE.NAME and math.NAME are)", path)
}

// callTorchPath calls __torch__.a.b.f (a script function) or
// __torch__.a.b.C (a class: only modules' methods are supported).
func (c *compiler) callTorchPath(x *Call, path string, args []sv, kws []struct {
	name string
	v    sv
}) (sv, error) {
	i := strings.LastIndexByte(path, '.')
	if obj, ok, err := c.newObject(x, path); ok || err != nil {
		return obj, err
	}
	f, err := c.file(path[:i])
	if err != nil {
		return nil, c.errf(x, "%s: source not found: %v", path, err)
	}
	if def, ok := f.funcs[path[i+1:]]; ok {
		return c.inline(x, def, f, nil, args, kws)
	}
	if _, ok := f.classes[path[i+1:]]; ok {
		nt, err := c.namedTupleOf(path)
		if err != nil {
			return nil, err
		}
		if nt != nil {
			return nt.construct(c, x, args, kws)
		}
		return nil, c.errf(x, "constructing %s is not supported (only NamedTuples and module objects from data.pkl are)", path)
	}
	return nil, c.errf(x, "%s is not defined in %s", path[i+1:], f.entry)
}

// inline compiles a call of a script function or method into the current
// block.
func (c *compiler) inline(x *Call, def *FuncDef, file *fileInfo, self sv, args []sv, kws []struct {
	name string
	v    sv
}) (sv, error) {
	return c.inlineIn(x, def, file, nil, self, args, kws)
}

// inlineIn is inline with an enclosing scope (for closures).
func (c *compiler) inlineIn(x *Call, def *FuncDef, file *fileInfo, outer *env, self sv, args []sv, kws []struct {
	name string
	v    sv
}) (sv, error) {
	params := def.Params
	ne := &env{vars: map[string]sv{}, file: file}
	if outer != nil {
		ne = outer.clone()
	}
	if self != nil {
		if len(params) == 0 {
			return nil, c.errf(def, "method %s has no self parameter", def.Name)
		}
		ne.vars[params[0].Name] = self
		params = params[1:]
	}
	if len(args) > len(params) {
		return nil, c.errf(x, "%s takes %d arguments, %d given", def.Name, len(params), len(args))
	}
	bound := make([]bool, len(params))
	for i, a := range args {
		ne.vars[params[i].Name] = a
		bound[i] = true
	}
	for _, k := range kws {
		found := false
		for i, p := range params {
			if p.Name == k.name {
				if bound[i] {
					return nil, c.errf(x, "%s: argument %s given twice", def.Name, k.name)
				}
				ne.vars[p.Name] = k.v
				bound[i], found = true, true
			}
		}
		if !found {
			return nil, c.errf(x, "%s has no parameter %s", def.Name, k.name)
		}
	}
	for i, p := range params {
		if bound[i] {
			continue
		}
		if p.Default == nil {
			return nil, c.errf(x, "%s: missing argument %s", def.Name, p.Name)
		}
		v, err := c.expr(p.Default, &env{vars: map[string]sv{}, file: file})
		if err != nil {
			return nil, err
		}
		ne.vars[p.Name] = v
	}
	// Parameters typed Optional[T] take None or T: nothing to convert.
	saved := c.pos
	ret, err := c.body(def, ne)
	c.pos = saved
	return ret, err
}

// forkWait compiles fork(fn, args...) into a prim::fork node whose
// Subgraph attribute holds the forked call, compiled (and frozen) as a
// graph of its own, and wait(future) into aten::wait, as TorchScript does.
// The subgraph takes the values it reads from the caller as inputs, in
// order of first use; constants are copied into it.
func (c *compiler) forkWait(x *Call, name string, args []sv, kws []struct {
	name string
	v    sv
}) (sv, error) {
	if len(args) == 0 {
		return nil, c.errf(x, "%s needs an argument", name)
	}
	if name == "wait" {
		f, ok := args[0].(*graph.Value)
		if !ok || f.Type.Kind != graph.FutureType {
			return nil, c.errf(x, "wait takes a future from fork")
		}
		return c.emit(graph.KindWait, []*graph.Value{f}, f.Type.Elem()).Outputs[0], nil
	}
	sg := graph.New()
	g, block := c.g, c.block
	c.g, c.block = sg, sg.Block
	out, err := c.forkBody(x, args, kws)
	c.g, c.block = g, block
	if err != nil {
		return nil, err
	}
	sg.AddOutput(out)
	ins := liftFree(sg)
	n := c.emit(graph.KindFork, ins, graph.FutureOf(out.Type))
	n.Attrs = append(n.Attrs, graph.Attr{Name: "Subgraph", Value: ivalue.Object(sg)})
	return n.Outputs[0], nil
}

// forkBody compiles the forked call into the current (sub)graph and
// returns its one result.
func (c *compiler) forkBody(x *Call, args []sv, kws []struct {
	name string
	v    sv
}) (*graph.Value, error) {
	var v sv
	var err error
	switch f := args[0].(type) {
	case *closureSV:
		v, err = c.inlineIn(x, f.def, f.env.file, f.env, nil, args[1:], kws)
	case *methodSV:
		var def *FuncDef
		var cls *classInfo
		if def, cls, err = c.method(f.self, f.name, x); err == nil {
			v, err = c.inline(x, def, cls.file, f.self, args[1:], kws)
		}
	case *moduleSV:
		var def *FuncDef
		var cls *classInfo
		if def, cls, err = c.method(f, "forward", x); err == nil {
			v, err = c.inline(x, def, cls.file, f, args[1:], kws)
		}
	case *funcSV:
		v, err = c.inline(x, f.def, f.file, nil, args[1:], kws)
	default:
		return nil, c.errf(x, "fork of %s is not supported (functions, methods and modules are)", exprText(x.Args[0]))
	}
	if err != nil {
		return nil, err
	}
	return c.value(x, v)
}

// liftFree makes sg self-contained: every value of another graph that a
// node or a block return of sg reads becomes an input of sg (or, for a
// constant, a copy inside sg). It returns the outer values, which the
// prim::fork node passes.
func liftFree(sg *graph.Graph) []*graph.Value {
	var outer []*graph.Value
	mapped := map[*graph.Value]*graph.Value{}
	lift := func(v *graph.Value) *graph.Value {
		if v.Node.Graph() == sg {
			return nil
		}
		if w, ok := mapped[v]; ok {
			return w
		}
		var w *graph.Value
		if cv, ok := graph.ConstantValue(v); ok && v.Node.Kind == graph.KindConstant {
			w = sg.Constant(cv, v.Type, nil)
			w.Name = v.Name
		} else {
			w = sg.AddInput(v.Name, v.Type)
			outer = append(outer, v)
		}
		mapped[v] = w
		return w
	}
	var fix func(b *graph.Block)
	fix = func(b *graph.Block) {
		for _, n := range append(append([]*graph.Node(nil), b.Nodes...), b.Return) {
			for i, in := range n.Inputs {
				if w := lift(in); w != nil {
					n.ReplaceInput(i, w)
				}
			}
			for _, sb := range n.Blocks {
				fix(sb)
			}
		}
	}
	fix(sg.Block)
	return outer
}

func (c *compiler) builtin(x *Call, name string, args []sv, e *env) (sv, error) {
	val := func(i int) (*graph.Value, error) {
		if i >= len(args) {
			return nil, c.errf(x, "%s: missing argument %d", name, i+1)
		}
		return c.value(x.Args[i], args[i])
	}
	vals := func() ([]*graph.Value, error) {
		out := make([]*graph.Value, len(args))
		for i := range args {
			v, err := val(i)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	switch name {
	case "annotate", "unchecked_cast", "uninitialized":
		if len(x.Args) != map[string]int{"annotate": 2, "unchecked_cast": 2, "uninitialized": 1}[name] {
			return nil, c.errf(x, "%s: wrong number of arguments", name)
		}
		t, err := c.typeOf(x.Args[0])
		if err != nil {
			return nil, err
		}
		if name == "uninitialized" {
			return c.emit(graph.KindUninitialized, nil, t).Outputs[0], nil
		}
		if _, ok := args[1].(*graph.Value); !ok {
			return args[1], nil // a module or tuple: already precise
		}
		v, _ := val(1)
		if name == "annotate" {
			return c.annotate(v, t), nil
		}
		if k, ok := constOf(v); ok && (!k.IsNone() || graph.None.IsSubtypeOf(t)) {
			return c.constant(k, t), nil
		}
		// unchecked_cast(Tensor, None) stays a cast: it sits on a path
		// that never runs (its guard is false but not decided statically),
		// and a constant None of type Tensor would be an invalid graph.
		if v.Type.Equal(t) {
			return v, nil
		}
		return c.emit("prim::unchecked_cast", []*graph.Value{v}, t).Outputs[0], nil
	case "getattr", "hasattr":
		if len(x.Args) < 2 {
			return nil, c.errf(x, "%s needs an object and a name", name)
		}
		k, ok := x.Args[1].(*Const)
		if !ok || k.Kind != ConstString {
			return nil, c.errf(x, "%s needs a constant attribute name", name)
		}
		if name == "hasattr" {
			m, ok := args[0].(*moduleSV)
			if !ok {
				return nil, c.errf(x, "hasattr on a non-module")
			}
			_, has := m.obj.GetAttr(k.Str)
			if !has {
				_, _, has = c.classConst(m, k.Str, x)
			}
			return c.boolConst(has), nil
		}
		return c.attr(x, args[0], k.Str)
	case "isinstance":
		v, err := c.exprValue(x.Args[0], e)
		if err != nil {
			return nil, err
		}
		r, err := c.isinstanceOf(v, x.Args[1])
		if err != nil {
			return nil, err
		}
		return c.boolConst(r), nil
	case "float":
		if len(x.Args) == 1 {
			if k, ok := x.Args[0].(*Const); ok && k.Kind == ConstString {
				f, err := strconv.ParseFloat(k.Str, 64)
				if err != nil {
					return nil, c.errf(x, "float(%q): not a number", k.Str)
				}
				return c.constant(ivalue.FromDouble(f), graph.Float), nil
			}
		}
	}
	ops := map[string]string{
		"int": "aten::Int", "float": "aten::Float", "bool": "aten::Bool", "str": "aten::str",
		"len": "aten::len", "min": "prim::min", "max": "prim::max", "abs": "prim::abs",
		"round": "aten::round", "print": "prim::Print", "sum": "aten::sum", "all": "aten::all", "any": "aten::any",
		"divmod": "aten::divmod",
	}
	op, ok := ops[name]
	if !ok {
		return nil, c.errf(x, "builtin %s is not supported", name)
	}
	vs, err := vals()
	if err != nil {
		return nil, err
	}
	if name == "print" {
		return nil, nil // printing is dropped: the runtime has no stdout side effects
	}
	if len(vs) == 1 && (name == "int" && vs[0].Type.Kind == graph.IntType || name == "float" && vs[0].Type.Kind == graph.FloatType || name == "bool" && vs[0].Type.Kind == graph.BoolType) {
		return vs[0], nil
	}
	return c.callOp(x, op, vs, nil)
}

// ---- schema matching

type convKind uint8

const (
	convNone convKind = iota
	convIntToFloat
	convTensorToInt
	convTensorToFloat
	convTensorToScalar
	convTensorToBool
	convTupleToList
	convBroadcast
	convRetype
	convStrToDevice
)

type argPlan struct {
	v    *graph.Value // nil: use the default
	conv convKind
}

// accepts reports whether a value of type a can be passed as formal type
// f, binding type variables, and the conversion needed.
func accepts(f, a *graph.Type, binds map[string]*graph.Type, allow bool, n int) (convKind, bool) {
	switch f.Kind {
	case graph.AnyType:
		if f.Name == "" {
			return convNone, true
		}
		if t, ok := binds[f.Name]; ok {
			if a.IsSubtypeOf(t) && (t.Kind != graph.AnyType || t == emptyElem || t.Name == "") {
				return convNone, true
			}
			if t == emptyElem || t.Kind == graph.ListType && t.Elem() == emptyElem && a.Kind == graph.ListType {
				binds[f.Name] = a
				return convNone, true
			}
			return convNone, a.Equal(t)
		}
		binds[f.Name] = a
		return convNone, true
	case graph.OptionalType:
		switch a.Kind {
		case graph.NoneType:
			return convNone, true
		case graph.OptionalType:
			return accepts(f.Elem(), a.Elem(), binds, allow, n)
		}
		return accepts(f.Elem(), a, binds, allow, n)
	case graph.TensorType:
		return convNone, a.Kind == graph.TensorType
	case graph.IntType:
		if a.Kind == graph.IntType {
			return convNone, true
		}
		if allow && a.Kind == graph.TensorType {
			return convTensorToInt, true
		}
	case graph.FloatType:
		if a.Kind == graph.FloatType {
			return convNone, true
		}
		if allow && a.Kind == graph.IntType {
			return convIntToFloat, true
		}
		if allow && a.Kind == graph.TensorType {
			return convTensorToFloat, true
		}
	case graph.NumberType:
		switch a.Kind {
		case graph.IntType, graph.FloatType, graph.NumberType:
			return convNone, true
		case graph.BoolType:
			return convNone, allow
		case graph.TensorType:
			return convTensorToScalar, allow
		}
	case graph.BoolType:
		if a.Kind == graph.BoolType {
			return convNone, true
		}
		if allow && a.Kind == graph.TensorType {
			return convTensorToBool, true
		}
	case graph.StringType:
		return convNone, a.Kind == graph.StringType
	case graph.DeviceType:
		if a.Kind == graph.DeviceType {
			return convNone, true
		}
		return convStrToDevice, allow && a.Kind == graph.StringType
	case graph.ScalarTypeType, graph.LayoutType, graph.MemoryFormatType:
		return convNone, a.Kind == graph.IntType || a.Kind == f.Kind
	case graph.ListType:
		switch a.Kind {
		case graph.ListType:
			if a.Elem() == emptyElem {
				return convRetype, true
			}
			if k, ok := accepts(f.Elem(), a.Elem(), binds, false, 0); ok && k == convNone {
				return convNone, true
			}
		case graph.TupleType:
			if !allow || len(a.Elems) == 0 {
				return convNone, false
			}
			for _, e := range a.Elems {
				if k, ok := accepts(f.Elem(), e, binds, false, 0); !ok || k != convNone {
					return convNone, false
				}
			}
			return convTupleToList, true
		}
		if n > 0 {
			if k, ok := accepts(f.Elem(), a, binds, false, 0); ok && k == convNone {
				return convBroadcast, true
			}
		}
	case graph.TupleType:
		if a.Kind != graph.TupleType {
			return convNone, false
		}
		if len(f.Elems) == 0 {
			return convNone, true
		}
		if len(f.Elems) != len(a.Elems) {
			return convNone, false
		}
		for i := range f.Elems {
			if k, ok := accepts(f.Elems[i], a.Elems[i], binds, false, 0); !ok || k != convNone {
				return convNone, false
			}
		}
		return convNone, true
	case graph.DictType:
		if a.Kind != graph.DictType {
			return convNone, false
		}
		k1, ok1 := accepts(f.Elems[0], a.Elems[0], binds, false, 0)
		k2, ok2 := accepts(f.Elems[1], a.Elems[1], binds, false, 0)
		return convNone, ok1 && ok2 && k1 == convNone && k2 == convNone
	case graph.ClassType:
		return convNone, a.Kind == graph.ClassType && (f.Name == "" || f.Name == a.Name)
	case graph.GeneratorType:
		return convNone, a.Kind == graph.GeneratorType
	case graph.NoneType:
		return convNone, a.Kind == graph.NoneType
	}
	return convNone, false
}

// match fits positional and keyword arguments to a schema.
func match(s *graph.Schema, args []*graph.Value, kws []kwVal, allow bool) ([]argPlan, []*graph.Value, map[string]*graph.Type, bool) {
	binds := map[string]*graph.Type{}
	plan := make([]argPlan, len(s.Arguments))
	given := make([]bool, len(s.Arguments))
	pos := 0
	var extra []*graph.Value
	for _, a := range args {
		for pos < len(s.Arguments) && s.Arguments[pos].KwargOnly {
			pos = len(s.Arguments)
		}
		if pos >= len(s.Arguments) {
			if !s.VarArgs {
				return nil, nil, nil, false
			}
			extra = append(extra, a)
			continue
		}
		plan[pos].v = a
		given[pos] = true
		pos++
	}
	for _, k := range kws {
		found := false
		for i, f := range s.Arguments {
			if f.Name == k.name {
				if given[i] {
					return nil, nil, nil, false
				}
				plan[i].v, given[i], found = k.v, true, true
			}
		}
		if !found {
			return nil, nil, nil, false
		}
	}
	for i, f := range s.Arguments {
		if !given[i] {
			if f.Default == "" {
				return nil, nil, nil, false
			}
			continue
		}
		conv, ok := accepts(f.Type, plan[i].v.Type, binds, allow, f.N)
		if !ok {
			return nil, nil, nil, false
		}
		plan[i].conv = conv
	}
	return plan, extra, binds, true
}

// subst replaces bound type variables.
func subst(t *graph.Type, binds map[string]*graph.Type) *graph.Type {
	switch t.Kind {
	case graph.AnyType:
		if b, ok := binds[t.Name]; ok && t.Name != "" {
			if b == emptyElem {
				return graph.Tensor
			}
			return b
		}
		return t
	case graph.ListType, graph.OptionalType, graph.TupleType, graph.DictType, graph.FutureType:
		out := &graph.Type{Kind: t.Kind, Elems: make([]*graph.Type, len(t.Elems))}
		for i, e := range t.Elems {
			out.Elems[i] = subst(e, binds)
		}
		return out
	}
	return t
}

// callOp resolves op's overload for the arguments as TorchScript does
// (registration order; first without conversions, then with) and emits it.
func (c *compiler) callOp(at Node, op string, args []*graph.Value, kws []kwVal) (sv, error) {
	if op == "aten::__is__" || op == "aten::__isnot__" {
		if len(args) == 2 {
			if s, err := c.is(at, args[0], args[1], op == "aten::__is__"); err == nil {
				if v, ok := s.(*graph.Value); ok && v.Node.Kind == graph.KindConstant {
					return v, nil
				}
			}
		}
	}
	return c.resolveOp(at, op, args, kws)
}

// resolveOp emits op's overload that takes args and kws.
func (c *compiler) resolveOp(at Node, op string, args []*graph.Value, kws []kwVal) (sv, error) {
	cands := overloads(op)
	if len(cands) == 0 {
		return nil, c.errf(at, "%s", unknownOpMessage(op))
	}
	for pass := 0; pass < 2; pass++ {
		for _, s := range cands {
			if strings.HasSuffix(s.Overload, "out") || strings.Contains(s.Overload, "_out") {
				continue
			}
			plan, extra, binds, ok := match(s, args, kws, pass == 1)
			if ok {
				return c.apply(at, s, plan, extra, binds)
			}
		}
	}
	types := make([]string, 0, len(args)+len(kws))
	for _, a := range args {
		types = append(types, a.Type.String())
	}
	for _, k := range kws {
		types = append(types, k.name+"="+k.v.Type.String())
	}
	var sigs []string
	for i, s := range cands {
		if i == 6 {
			sigs = append(sigs, fmt.Sprintf("... (%d more)", len(cands)-6))
			break
		}
		sigs = append(sigs, s.String())
	}
	return nil, c.errf(at, "no overload of %s takes (%s); its schemas: %s", op, strings.Join(types, ", "), strings.Join(sigs, "; "))
}

func (c *compiler) apply(at Node, s *graph.Schema, plan []argPlan, extra []*graph.Value, binds map[string]*graph.Type) (sv, error) {
	inputs := make([]*graph.Value, 0, len(plan)+len(extra))
	for i, p := range plan {
		f := s.Arguments[i]
		if p.v == nil {
			v, err := c.defaultValue(at, f)
			if err != nil {
				return nil, err
			}
			inputs = append(inputs, v)
			continue
		}
		v, err := c.convert(at, p.v, p.conv, subst(f.Type, binds), f.N)
		if err != nil {
			return nil, err
		}
		inputs = append(inputs, v)
	}
	inputs = append(inputs, extra...)
	if err := c.checkMutation(at, s, inputs); err != nil {
		return nil, err
	}
	outs := make([]*graph.Type, len(s.Returns))
	for i, r := range s.Returns {
		outs[i] = subst(r.Type, binds)
		if outs[i].Kind == graph.ScalarTypeType || outs[i].Kind == graph.LayoutType || outs[i].Kind == graph.MemoryFormatType {
			outs[i] = graph.Int
		}
	}
	// Folded before it is appended: taking a node out of a block is a
	// search of the block, which long code would pay for at every fold.
	n := c.newNode(s.Name, inputs, outs...)
	if folded, ok := c.fold(n, s); ok {
		n = folded
	} else {
		c.block.Append(n)
	}
	switch len(n.Outputs) {
	case 0:
		return nil, nil
	case 1:
		return n.Outputs[0], nil
	}
	elems := make([]sv, len(n.Outputs))
	for i, o := range n.Outputs {
		elems[i] = o
	}
	return &tupleSV{elems: elems}, nil
}

// convert applies an implicit conversion.
func (c *compiler) convert(at Node, v *graph.Value, k convKind, want *graph.Type, n int) (*graph.Value, error) {
	one := func(op string) (*graph.Value, error) {
		s, err := c.callOp(at, op, []*graph.Value{v}, nil)
		if err != nil {
			return nil, err
		}
		return s.(*graph.Value), nil
	}
	switch k {
	case convIntToFloat:
		if kv, ok := constOf(v); ok {
			return c.constant(ivalue.FromDouble(float64(kv.Int())), graph.Float), nil
		}
		return one("aten::Float")
	case convTensorToInt:
		return one("aten::Int")
	case convTensorToFloat:
		return one("aten::Float")
	case convTensorToScalar:
		return one("aten::ScalarImplicit")
	case convTensorToBool:
		return one("aten::Bool")
	case convStrToDevice:
		return one("aten::device")
	case convTupleToList:
		if p := v.Node; p != nil && p.Kind == graph.KindTupleConstruct {
			return c.emit(graph.KindListConstruct, p.Inputs, listType(want)).Outputs[0], nil
		}
		return nil, c.errf(at, "cannot pass a tuple value of type %s as a list", v.Type)
	case convBroadcast:
		ins := make([]*graph.Value, n)
		for i := range ins {
			ins[i] = v
		}
		if kv, ok := constOf(v); ok {
			items := make([]ivalue.IValue, n)
			for i := range items {
				items[i] = kv
			}
			return c.constant(ivalue.NewList(items...), listType(want)), nil
		}
		return c.emit(graph.KindListConstruct, ins, listType(want)).Outputs[0], nil
	case convRetype:
		t := listType(want)
		if len(v.Uses) == 0 && v.Node != nil && v.Node.Kind == graph.KindListConstruct {
			v.Type = t
			return v, nil
		}
		return c.emit(graph.KindListConstruct, nil, t).Outputs[0], nil
	}
	return v, nil
}

func listType(t *graph.Type) *graph.Type {
	if t.Kind == graph.OptionalType {
		t = t.Elem()
	}
	if t.Kind != graph.ListType {
		return graph.ListOf(t)
	}
	if t.Elem().Kind == graph.AnyType {
		return graph.ListOf(graph.Tensor)
	}
	return t
}

// scalarTypes are the names schema defaults use for dtypes.
var scalarTypes = map[string]int64{
	"uint8": 0, "int8": 1, "int16": 2, "int": 3, "long": 4, "half": 5, "float": 6, "double": 7,
	"bool": 11, "bfloat16": 15,
}

var enumDefaults = map[string]int64{
	"contiguous_format": 0, "preserve_format": 1, "channels_last": 2, "channels_last_3d": 3,
	"strided": 0, "Mean": 1, "Sum": 2,
}

// defaultValue makes a constant from a schema argument's default text.
func (c *compiler) defaultValue(at Node, a graph.Argument) (*graph.Value, error) {
	v, t, err := parseDefault(a.Default, a.Type, a.N)
	if err != nil {
		return nil, c.errf(at, "argument %s: %v", a.Name, err)
	}
	return c.constant(v, t), nil
}

func parseDefault(text string, t *graph.Type, n int) (ivalue.IValue, *graph.Type, error) {
	text = strings.TrimSpace(text)
	if text == "None" {
		return ivalue.None(), graph.None, nil
	}
	if t.Kind == graph.OptionalType {
		t = t.Elem()
	}
	switch t.Kind {
	case graph.BoolType:
		return ivalue.FromBool(text == "True"), graph.Bool, nil
	case graph.IntType, graph.ScalarTypeType, graph.LayoutType, graph.MemoryFormatType:
		if v, ok := enumDefaults[text]; ok {
			return ivalue.FromInt(v), graph.Int, nil
		}
		if v, ok := scalarTypes[text]; ok && t.Kind == graph.ScalarTypeType {
			return ivalue.FromInt(v), graph.Int, nil
		}
		i, err := strconv.ParseInt(text, 10, 64)
		if err != nil {
			return ivalue.None(), nil, fmt.Errorf("default %q is not an int", text)
		}
		return ivalue.FromInt(i), graph.Int, nil
	case graph.FloatType:
		f, err := parseFloat(text)
		if err != nil {
			return ivalue.None(), nil, err
		}
		return ivalue.FromDouble(f), graph.Float, nil
	case graph.NumberType:
		if i, err := strconv.ParseInt(text, 10, 64); err == nil {
			return ivalue.FromInt(i), graph.Int, nil
		}
		f, err := parseFloat(text)
		if err != nil {
			return ivalue.None(), nil, err
		}
		return ivalue.FromDouble(f), graph.Float, nil
	case graph.StringType:
		if len(text) >= 2 && (text[0] == '"' || text[0] == '\'') {
			return ivalue.FromString(text[1 : len(text)-1]), graph.Str, nil
		}
		return ivalue.FromString(text), graph.Str, nil
	case graph.DeviceType:
		return ivalue.FromDevice(strings.Trim(text, `"'`)), graph.Device, nil
	case graph.ListType:
		et := t.Elem()
		if !strings.HasPrefix(text, "[") {
			if n == 0 {
				return ivalue.None(), nil, fmt.Errorf("default %q is not a list", text)
			}
			v, _, err := parseDefault(text, et, 0)
			if err != nil {
				return ivalue.None(), nil, err
			}
			items := make([]ivalue.IValue, n)
			for i := range items {
				items[i] = v
			}
			return ivalue.NewList(items...), graph.ListOf(constElem(et)), nil
		}
		inner := strings.TrimSpace(text[1 : len(text)-1])
		var items []ivalue.IValue
		if inner != "" {
			for _, part := range strings.Split(inner, ",") {
				v, _, err := parseDefault(part, et, 0)
				if err != nil {
					return ivalue.None(), nil, err
				}
				items = append(items, v)
			}
		}
		return ivalue.NewList(items...), graph.ListOf(constElem(et)), nil
	}
	return ivalue.None(), nil, fmt.Errorf("default %q of type %s is not supported", text, t)
}

func constElem(t *graph.Type) *graph.Type {
	switch t.Kind {
	case graph.ScalarTypeType, graph.LayoutType, graph.MemoryFormatType:
		return graph.Int
	}
	return t
}

func parseFloat(s string) (float64, error) {
	switch s {
	case "inf":
		return math.Inf(1), nil
	case "-inf":
		return math.Inf(-1), nil
	case "nan":
		return math.NaN(), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("default %q is not a number", s)
	}
	return f, nil
}

// fold evaluates, at compile time, a pure op on constants whose results
// are scalars: branch conditions such as torch.ne(self.padding_mode,
// "zeros") must be known to resolve the branch as freezing does. Tensors
// and lists are left to ConstantPropagation, which knows about aliasing.
// n is not yet in a block; when folded it is destroyed and the constant
// appended.
func (c *compiler) fold(n *graph.Node, s *graph.Schema) (*graph.Node, bool) {
	if len(n.Outputs) != 1 || strings.HasPrefix(n.Kind, "prim::") && n.Kind != "prim::min" && n.Kind != "prim::max" && n.Kind != "prim::abs" && !tensorMetaOps[n.Kind] {
		return nil, false
	}
	if isCustom(n.Kind) {
		return nil, false // custom ops (Python fallbacks) run at run time only
	}
	switch n.Outputs[0].Type.Kind {
	case graph.IntType, graph.FloatType, graph.BoolType, graph.StringType, graph.DeviceType:
	default:
		return nil, false
	}
	for _, a := range s.Arguments {
		if strings.Contains(a.Alias, "!") {
			return nil, false
		}
	}
	switch n.Kind {
	case "aten::warn", "aten::format", "aten::str":
		// cheap at run time and their text differs from Python's in corners
		if n.Kind != "aten::format" {
			return nil, false
		}
	}
	ins := make([]ivalue.IValue, len(n.Inputs))
	for i, in := range n.Inputs {
		k, ok := constOf(in)
		if !ok {
			return nil, false
		}
		if k.Kind() == ivalue.KindTensor && !tensorMetaOps[n.Kind] {
			return nil, false
		}
		ins[i] = k
	}
	outs, err := ops.EvalNode(n, ins)
	if err != nil || len(outs) != 1 {
		return nil, false
	}
	t := n.Outputs[0].Type
	n.Destroy()
	v := c.constant(outs[0], t)
	return v.Node, true
}

// tensorMetaOps read only a tensor's metadata, which a constant (frozen
// weight) keeps for good: they fold on constant tensors too.
var tensorMetaOps = map[string]bool{
	"prim::dtype": true, "prim::device": true, "prim::is_cuda": true, "prim::is_cpu": true,
	"prim::requires_grad": true, "prim::is_nested": true, "aten::dim": true, "aten::numel": true,
	"aten::size": true, "aten::len": true, "aten::is_floating_point": true, "aten::is_complex": true,
}

// op1 is callOp for an op with one result.
func (c *compiler) op1(at Node, op string, args ...*graph.Value) (*graph.Value, error) {
	s, err := c.callOp(at, op, args, nil)
	if err != nil {
		return nil, err
	}
	v, ok := s.(*graph.Value)
	if !ok {
		return nil, c.errf(at, "%s does not return one value", op)
	}
	return v, nil
}
