package tscode

import (
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"strings"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// Object is a module instance from the archive's data.pkl (a
// loaders.ScriptObject): its class's qualified name and its attributes.
type Object interface {
	ClassName() string
	GetAttr(name string) (ivalue.IValue, bool)
}

// Sources returns the bytes of an archive entry such as
// "code/__torch__/torch/nn/modules/linear.py"; a missing entry is an error
// wrapping fs.ErrNotExist.
type Sources func(entry string) ([]byte, error)

// Result is a compiled method.
type Result struct {
	Graph      *graph.Graph
	InputNames []string // the method's parameters after self
}

// Compile compiles method (usually "forward") of root into a graph, freezing
// as PyTorch's freeze_module and PrepareForStaticModule do: calls of
// submodule methods and script functions are inlined, module attributes
// (parameters, buffers, submodule flags such as training) become constants,
// and branches on constant conditions are resolved. constants are the
// archive's constants.pkl entries, read by CONSTANTS.cN.
func Compile(root Object, constants []ivalue.IValue, src Sources, method string) (res *Result, err error) {
	c := &compiler{src: src, consts: constants, files: map[string]*fileInfo{}, tuples: map[string]*namedTuple{}, g: graph.New()}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("compiling %s.%s: internal error: %v", root.ClassName(), method, r)
		}
	}()
	self := &moduleSV{obj: root}
	fn, cls, err := c.method(self, method, Pos{File: root.ClassName()})
	if err != nil {
		return nil, err
	}
	if len(fn.Params) == 0 {
		return nil, c.errf(fn, "method %s has no self parameter", fn.Name)
	}
	e := &env{vars: map[string]sv{fn.Params[0].Name: self}, file: cls.file}
	c.block = c.g.Block
	var names []string
	for _, p := range fn.Params[1:] {
		t, err := c.typeOf(p.Type)
		if err != nil {
			return nil, err
		}
		v := c.g.AddInput(p.Name, t)
		e.vars[p.Name] = v
		names = append(names, p.Name)
		if err := c.inputDefault(p, len(names)-1); err != nil {
			return nil, err
		}
	}
	out, err := c.body(fn, e)
	if err != nil {
		return nil, err
	}
	v, err := c.value(fn, out)
	if err != nil {
		return nil, err
	}
	c.g.AddOutput(v)
	if err := c.g.Verify(); err != nil {
		return nil, fmt.Errorf("compiling %s.%s: the graph built is invalid: %w", root.ClassName(), method, err)
	}
	return &Result{Graph: c.g, InputNames: names}, nil
}

type compiler struct {
	src    Sources
	consts []ivalue.IValue
	files  map[string]*fileInfo
	tuples map[string]*namedTuple // NamedTuple classes by qualified name (nil: not one)
	g      *graph.Graph
	block  *graph.Block // where nodes are appended
	depth  int          // inlining depth
	// exprDepth is the nesting of expressions being compiled (c.expr).
	exprDepth int
	pos       Pos // current statement, for SourceRange
	// attrs holds module attributes assigned in code (modattr.go).
	attrs map[attrKey]attrState
}

type fileInfo struct {
	path    string // module path: __torch__.torch.nn.modules.linear
	entry   string // code/__torch__/torch/nn/modules/linear.py
	classes map[string]*ClassDef
	funcs   map[string]*FuncDef
}

type classInfo struct {
	def  *ClassDef
	file *fileInfo
}

// env is one function's local scope.
type env struct {
	vars map[string]sv
	file *fileInfo
}

func (e *env) clone() *env {
	m := make(map[string]sv, len(e.vars))
	for k, v := range e.vars {
		m[k] = v
	}
	return &env{vars: m, file: e.file}
}

// sv is a compile-time ("sugared") value: a *graph.Value or one of the
// types below.
type sv any

type moduleSV struct{ obj Object }

type methodSV struct {
	self *moduleSV
	name string
}

type funcSV struct {
	def  *FuncDef
	file *fileInfo
}

// nsSV is a dotted prefix still being resolved: torch, ops.aten,
// __torch__.torch.nn.functional, CONSTANTS.
type nsSV struct{ path string }

// tupleSV is a tuple whose elements stay separate (multiple returns, tuples
// holding modules).
type tupleSV struct{ elems []sv }

// closureSV is a function defined inside a function, with the scope it
// was defined in.
type closureSV struct {
	def *FuncDef
	env *env
}

// builtinSV is a Python builtin (int, len, annotate, ...).
type builtinSV struct{ name string }

// errf formats an error at node n's position.
func (c *compiler) errf(n Node, format string, args ...any) error {
	p := Pos{}
	if rv := reflect.ValueOf(n); n != nil && (rv.Kind() != reflect.Pointer || !rv.IsNil()) {
		p = n.At()
	}
	if p.File == "" {
		p = c.pos
	}
	return &CompileError{Pos: p, Msg: fmt.Sprintf(format, args...)}
}

// CompileError is an error at a line of serialized code.
type CompileError struct {
	Pos Pos
	Msg string
}

func (e *CompileError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.Pos.File, e.Pos.Line, e.Pos.Col, e.Msg)
}

// ---- sources

func entryOf(modPath string) string {
	return "code/" + strings.ReplaceAll(modPath, ".", "/") + ".py"
}

// file parses (once) the source of a module path.
func (c *compiler) file(modPath string) (*fileInfo, error) {
	if f, ok := c.files[modPath]; ok {
		if f == nil {
			return nil, fmt.Errorf("%s: %w", entryOf(modPath), fs.ErrNotExist)
		}
		return f, nil
	}
	entry := entryOf(modPath)
	data, err := c.src(entry)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			c.files[modPath] = nil
		}
		return nil, err
	}
	ast, err := Parse(entry, data)
	if err != nil {
		return nil, err
	}
	f := &fileInfo{path: modPath, entry: entry, classes: map[string]*ClassDef{}, funcs: map[string]*FuncDef{}}
	for _, s := range ast.Body {
		switch s := s.(type) {
		case *ClassDef:
			f.classes[s.Name] = s
		case *FuncDef:
			f.funcs[s.Name] = s
		}
	}
	c.files[modPath] = f
	return f, nil
}

// class finds a class by qualified name (__torch__.a.b.Name).
func (c *compiler) class(qual string, at Node) (*classInfo, error) {
	i := strings.LastIndexByte(qual, '.')
	if i < 0 {
		return nil, c.errf(at, "class %q has no module path", qual)
	}
	f, err := c.file(qual[:i])
	if err != nil {
		if _, ok := err.(*Error); ok {
			return nil, err // a syntax error, with its own position
		}
		return nil, c.errf(at, "class %s: source not found: %v", qual, err)
	}
	def, ok := f.classes[qual[i+1:]]
	if !ok {
		return nil, c.errf(at, "class %s is not defined in %s", qual, f.entry)
	}
	return &classInfo{def: def, file: f}, nil
}

// method finds a method of a module object's class.
func (c *compiler) method(m *moduleSV, name string, at Node) (*FuncDef, *classInfo, error) {
	cls, err := c.class(m.obj.ClassName(), at)
	if err != nil {
		return nil, nil, err
	}
	for _, s := range cls.def.Body {
		if f, ok := s.(*FuncDef); ok && f.Name == name {
			return f, cls, nil
		}
	}
	return nil, nil, c.errf(at, "class %s has no method %s", m.obj.ClassName(), name)
}

// classConst finds a class-level constant (`eps : Final[float] = 1e-05`).
func (c *compiler) classConst(m *moduleSV, name string, at Node) (Expr, *classInfo, bool) {
	cls, err := c.class(m.obj.ClassName(), at)
	if err != nil {
		return nil, nil, false
	}
	for _, s := range cls.def.Body {
		switch s := s.(type) {
		case *AnnAssign:
			if n, ok := s.Target.(*Name); ok && n.ID == name && s.Value != nil {
				return s.Value, cls, true
			}
		case *Assign:
			for _, t := range s.Targets {
				if n, ok := t.(*Name); ok && n.ID == name {
					return s.Value, cls, true
				}
			}
		}
	}
	return nil, nil, false
}

// ---- nodes

// emit appends a node of kind with inputs and outputs of the given types.
func (c *compiler) emit(kind string, inputs []*graph.Value, outs ...*graph.Type) *graph.Node {
	return c.block.Append(c.newNode(kind, inputs, outs...))
}

// newNode makes the node emit appends, without appending it.
func (c *compiler) newNode(kind string, inputs []*graph.Value, outs ...*graph.Type) *graph.Node {
	n := c.g.NewNode(kind, inputs, len(outs))
	for i, t := range outs {
		n.Outputs[i].Type = t
	}
	if c.pos.File != "" {
		n.SourceRange = fmt.Sprintf("%s:%d:%d", c.pos.File, c.pos.Line, c.pos.Col)
	}
	return n
}

// constant appends a prim::Constant.
func (c *compiler) constant(v ivalue.IValue, t *graph.Type) *graph.Value {
	n := c.emit(graph.KindConstant, nil, t)
	if !v.IsNone() {
		n.Attrs = []graph.Attr{{Name: "value", Value: v}}
	}
	return n.Outputs[0]
}

func (c *compiler) intConst(i int64) *graph.Value { return c.constant(ivalue.FromInt(i), graph.Int) }
func (c *compiler) boolConst(b bool) *graph.Value { return c.constant(ivalue.FromBool(b), graph.Bool) }
func (c *compiler) noneConst() *graph.Value       { return c.constant(ivalue.None(), graph.None) }

// constOf returns the constant a value holds, if it is a prim::Constant.
func constOf(v *graph.Value) (ivalue.IValue, bool) {
	return graph.ConstantValue(v)
}

// ivalueConst turns a module attribute's value into a graph value.
func (c *compiler) ivalueConst(v ivalue.IValue, at Node) (sv, error) {
	return c.ivalueConstN(v, at, 0)
}

func (c *compiler) ivalueConstN(v ivalue.IValue, at Node, depth int) (sv, error) {
	if depth > maxValueDepth {
		return nil, c.errf(at, "module attribute nested more than %d levels deep", maxValueDepth)
	}
	switch v.Kind() {
	case ivalue.KindNone:
		return c.noneConst(), nil
	case ivalue.KindTensor:
		return c.constant(v, graph.Tensor), nil
	case ivalue.KindInt:
		return c.constant(v, graph.Int), nil
	case ivalue.KindDouble:
		return c.constant(v, graph.Float), nil
	case ivalue.KindBool:
		return c.constant(v, graph.Bool), nil
	case ivalue.KindString:
		return c.constant(v, graph.Str), nil
	case ivalue.KindDevice:
		return c.constant(v, graph.Device), nil
	case ivalue.KindDict:
		return c.dictConst(v, nil, at)
	case ivalue.KindObject:
		if o, ok := v.Ref().(Object); ok {
			return &moduleSV{obj: o}, nil
		}
	case ivalue.KindList, ivalue.KindTuple:
		items := v.List().Items
		elems := make([]sv, len(items))
		for i, it := range items {
			e, err := c.ivalueConstN(it, at, depth+1)
			if err != nil {
				return nil, err
			}
			elems[i] = e
		}
		if v.Kind() == ivalue.KindTuple {
			return &tupleSV{elems: elems}, nil
		}
		vals := make([]*graph.Value, len(elems))
		var et *graph.Type
		for i, e := range elems {
			gv, ok := e.(*graph.Value)
			if !ok {
				return nil, c.errf(at, "a list of modules is only supported through getattr")
			}
			vals[i] = gv
			et = unify(et, gv.Type)
		}
		if et == nil {
			et = graph.Tensor
		}
		return c.emit(graph.KindListConstruct, vals, graph.ListOf(et)).Outputs[0], nil
	}
	return nil, c.errf(at, "module attribute of kind %s is not supported", v.Kind())
}

// unify returns the type of a value that may be a or b.
func unify(a, b *graph.Type) *graph.Type {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	case a.Equal(b):
		return a
	case a.Kind == graph.TensorType && b.Kind == graph.TensorType:
		return graph.Tensor
	case a.Kind == graph.NoneType && b.Kind == graph.OptionalType, b.Kind == graph.NoneType && a.Kind == graph.OptionalType:
		if a.Kind == graph.OptionalType {
			return a
		}
		return b
	case a.Kind == graph.NoneType:
		return graph.OptionalOf(b)
	case b.Kind == graph.NoneType:
		return graph.OptionalOf(a)
	case a.Kind == graph.OptionalType && b.IsSubtypeOf(a.Elem()):
		return a
	case b.Kind == graph.OptionalType && a.IsSubtypeOf(b.Elem()):
		return b
	case a.Kind == graph.ListType && b.Kind == graph.ListType:
		if e := unify(a.Elem(), b.Elem()); e != nil {
			return graph.ListOf(e)
		}
	case a.Kind == graph.TupleType && b.Kind == graph.TupleType && len(a.Elems) == len(b.Elems):
		es := make([]*graph.Type, len(a.Elems))
		for i := range es {
			if es[i] = unify(a.Elems[i], b.Elems[i]); es[i] == nil {
				return nil
			}
		}
		return graph.TupleOf(es...)
	case a.IsSubtypeOf(b):
		return b
	case b.IsSubtypeOf(a):
		return a
	}
	return nil
}

// value turns a sugared value into a graph value.
func (c *compiler) value(at Node, s sv) (*graph.Value, error) {
	switch s := s.(type) {
	case *graph.Value:
		return s, nil
	case *tupleSV:
		vals := make([]*graph.Value, len(s.elems))
		types := make([]*graph.Type, len(s.elems))
		for i, e := range s.elems {
			v, err := c.value(at, e)
			if err != nil {
				return nil, err
			}
			vals[i], types[i] = v, v.Type
		}
		return c.emit(graph.KindTupleConstruct, vals, graph.TupleOf(types...)).Outputs[0], nil
	case nil:
		return c.noneConst(), nil
	case *objectSV:
		if s.val == nil {
			return nil, c.errf(at, "%s object used before its __init__", s.nt.qual)
		}
		return s.val, nil
	case *classMethodSV:
		return nil, c.errf(at, "method %s used as a value", s.def.Name)
	case *moduleSV:
		return nil, c.errf(at, "module %s used as a value (only its methods and attributes can be used)", s.obj.ClassName())
	case *nsSV:
		return nil, c.errf(at, "%s is not a value", s.path)
	case *funcSV:
		return nil, c.errf(at, "function %s used as a value (first-class functions are not supported)", s.def.Name)
	case *methodSV:
		return nil, c.errf(at, "method %s used as a value", s.name)
	case *builtinSV:
		return nil, c.errf(at, "builtin %s used as a value", s.name)
	case *closureSV:
		return nil, c.errf(at, "function %s used as a value", s.def.Name)
	}
	return nil, c.errf(at, "unsupported value %T", s)
}

// ---- statements

// body compiles a function body (inlined into the current block) and
// returns the value of its return statement, nil for none.
func (c *compiler) body(fn *FuncDef, e *env) (sv, error) {
	c.depth++
	defer func() { c.depth-- }()
	if c.depth > maxInlineDepth {
		return nil, c.errf(fn, "calls nested more than %d deep inlining %s (recursion is not supported)", maxInlineDepth, fn.Name)
	}
	stmts := fn.Body
	var ret sv
	for i, s := range stmts {
		if r, ok := s.(*Return); ok {
			if i != len(stmts)-1 {
				return nil, c.errf(s, "return before the end of %s is not supported", fn.Name)
			}
			if r.Value == nil {
				return nil, nil
			}
			c.pos = r.Pos
			v, err := c.expr(r.Value, e)
			if err != nil {
				return nil, err
			}
			ret = v
			break
		}
		if err := c.stmt(s, e); err != nil {
			return nil, err
		}
	}
	return ret, nil
}

func (c *compiler) stmts(ss []Stmt, e *env) error {
	for _, s := range ss {
		if err := c.stmt(s, e); err != nil {
			return err
		}
	}
	return nil
}

func (c *compiler) stmt(s Stmt, e *env) error {
	c.pos = s.At()
	switch s := s.(type) {
	case *Pass:
		return nil
	case *ExprStmt:
		if k, ok := s.X.(*Const); ok && k.Kind == ConstString {
			return nil // docstring
		}
		_, err := c.expr(s.X, e)
		return err
	case *Assign:
		v, err := c.expr(s.Value, e)
		if err != nil {
			return err
		}
		for _, t := range s.Targets {
			if err := c.assign(t, v, e); err != nil {
				return err
			}
		}
		return nil
	case *AnnAssign:
		if s.Value == nil {
			return nil
		}
		t, err := c.typeOf(s.Type)
		if err != nil {
			return err
		}
		v, err := c.expr(s.Value, e)
		if err != nil {
			return err
		}
		if gv, ok := v.(*graph.Value); ok {
			v = c.annotate(gv, t)
		}
		return c.assign(s.Target, v, e)
	case *AugAssign:
		return c.augAssign(s, e)
	case *If:
		return c.ifStmt(s, e)
	case *For:
		return c.forStmt(s, e)
	case *While:
		return c.whileStmt(s, e)
	case *Raise:
		msg := "Exception"
		if s.Exc != nil {
			msg = exprText(s.Exc)
			if call, ok := s.Exc.(*Call); ok && len(call.Args) == 1 {
				if k, ok := call.Args[0].(*Const); ok && k.Kind == ConstString {
					msg = k.Str
				}
			}
		}
		c.emit(graph.KindRaiseException, []*graph.Value{c.constant(ivalue.FromString(msg), graph.Str), c.noneConst()})
		return nil
	case *Assert:
		cond, err := c.expr(s.Cond, e)
		if err != nil {
			return err
		}
		cv, err := c.condValue(s.Cond, cond)
		if err != nil {
			return err
		}
		if k, ok := constOf(cv); ok && k.Bool() {
			return nil
		}
		if err := c.checkNesting(s); err != nil {
			return err
		}
		n := c.emit(graph.KindIf, []*graph.Value{cv})
		n.AddBlock()
		eb := n.AddBlock()
		saved := c.block
		c.block = eb
		msg := "AssertionError: "
		if s.Msg != nil {
			if k, ok := s.Msg.(*Const); ok && k.Kind == ConstString {
				msg += k.Str
			}
		}
		c.emit(graph.KindRaiseException, []*graph.Value{c.constant(ivalue.FromString(msg), graph.Str), c.noneConst()})
		c.block = saved
		return nil
	case *Return:
		return c.errf(s, "return inside a block is not supported (PyTorch prints returns only at the end of a function)")
	case *Break, *Continue:
		return c.errf(s, "break and continue are not supported (PyTorch's printed code has none)")
	case *FuncDef:
		// A nested function: PyTorch prints fork's closures this way.
		e.vars[s.Name] = &closureSV{def: s, env: e.clone()}
		return nil
	case *Import, *ClassDef:
		return nil
	}
	return c.errf(s, "statement %s is not supported (supported: assignment, if, for ... in range, while, return at the end, raise, assert, expression calls)", strings.TrimPrefix(typeName(s), "*tscode."))
}

func typeName(v any) string { return fmt.Sprintf("%T", v) }

// assign binds target to v.
func (c *compiler) assign(t Expr, v sv, e *env) error {
	switch t := t.(type) {
	case *Name:
		e.vars[t.ID] = v
		return nil
	case *Tuple:
		return c.unpack(t, t.Elts, v, e)
	case *List:
		return c.unpack(t, t.Elts, v, e)
	case *Attribute:
		if ok, err := c.assignField(t, v, e); ok || err != nil {
			return err
		}
		if ok, err := c.assignModuleAttr(t, v, e); ok || err != nil {
			return err
		}
		return c.errf(t, "assigning module attribute %s is not supported: gosr freezes modules for inference", exprText(t))
	case *Subscript:
		obj, err := c.expr(t.X, e)
		if err != nil {
			return err
		}
		ov, err := c.value(t, obj)
		if err != nil {
			return err
		}
		idx, err := c.expr(t.Index, e)
		if err != nil {
			return err
		}
		iv, err := c.value(t, idx)
		if err != nil {
			return err
		}
		val, err := c.value(t, v)
		if err != nil {
			return err
		}
		switch ov.Type.Kind {
		case graph.ListType:
			_, err = c.callOp(t, "aten::_set_item", []*graph.Value{ov, iv, val}, nil)
		case graph.DictType:
			_, err = c.callOp(t, "aten::_set_item", []*graph.Value{ov, iv, val}, nil)
		default:
			return c.errf(t, "assignment to an element of %s is not supported", ov.Type)
		}
		return err
	}
	return c.errf(t, "cannot assign to %s", exprText(t))
}

// unpack assigns the elements of v to targets.
func (c *compiler) unpack(at Node, targets []Expr, v sv, e *env) error {
	elems, err := c.elements(at, v, len(targets))
	if err != nil {
		return err
	}
	for i, t := range targets {
		if err := c.assign(t, elems[i], e); err != nil {
			return err
		}
	}
	return nil
}

// elements splits a tuple or list value into n parts.
func (c *compiler) elements(at Node, v sv, n int) ([]sv, error) {
	if t, ok := v.(*tupleSV); ok {
		if len(t.elems) != n {
			return nil, c.errf(at, "cannot unpack %d values into %d", len(t.elems), n)
		}
		return t.elems, nil
	}
	gv, err := c.value(at, v)
	if err != nil {
		return nil, err
	}
	if p := gv.Node; p != nil && (p.Kind == graph.KindTupleConstruct || p.Kind == graph.KindListConstruct) && len(gv.Uses) == 0 {
		if len(p.Inputs) != n {
			return nil, c.errf(at, "cannot unpack %d values into %d", len(p.Inputs), n)
		}
		out := make([]sv, n)
		for i, in := range p.Inputs {
			out[i] = in
		}
		return out, nil
	}
	var node *graph.Node
	switch gv.Type.Kind {
	case graph.TupleType:
		if len(gv.Type.Elems) != n {
			return nil, c.errf(at, "cannot unpack %s into %d values", gv.Type, n)
		}
		node = c.emit(graph.KindTupleUnpack, []*graph.Value{gv}, gv.Type.Elems...)
	case graph.ListType:
		ts := make([]*graph.Type, n)
		for i := range ts {
			ts[i] = gv.Type.Elem()
		}
		node = c.emit(graph.KindListUnpack, []*graph.Value{gv}, ts...)
	default:
		return nil, c.errf(at, "cannot unpack a value of type %s", gv.Type)
	}
	out := make([]sv, n)
	for i, o := range node.Outputs {
		out[i] = o
	}
	return out, nil
}

func (c *compiler) augAssign(s *AugAssign, e *env) error {
	cur, err := c.expr(s.Target, e)
	if err != nil {
		return err
	}
	cv, err := c.value(s, cur)
	if err != nil {
		return err
	}
	rhs, err := c.expr(s.Value, e)
	if err != nil {
		return err
	}
	rv, err := c.value(s, rhs)
	if err != nil {
		return err
	}
	op, ok := binOps[s.Op]
	if !ok {
		return c.errf(s, "operator %s= is not supported", s.Op)
	}
	if cv.Type.Kind == graph.TensorType {
		op += "_" // in place, as Python's += on tensors
	}
	out, err := c.callOp(s, op, []*graph.Value{cv, rv}, nil)
	if err != nil {
		return err
	}
	return c.assign(s.Target, out, e)
}

// condValue converts an if/while condition to a bool value.
func (c *compiler) condValue(at Node, s sv) (*graph.Value, error) {
	v, err := c.value(at, s)
	if err != nil {
		return nil, err
	}
	switch v.Type.Kind {
	case graph.BoolType:
		return v, nil
	case graph.TensorType, graph.IntType, graph.FloatType:
		return c.op1(at, "aten::Bool", v)
	}
	return nil, c.errf(at, "condition of type %s is not a bool", v.Type)
}

// terminates reports whether a branch always raises. An elif chain is
// followed in a loop: its length is not nesting.
func terminates(ss []Stmt) bool {
	for len(ss) > 0 {
		switch s := ss[len(ss)-1].(type) {
		case *Raise:
			return true
		case *ExprStmt:
			if call, ok := s.X.(*Call); ok {
				if name, ok := dotted(call.Func); ok && (name == "ops.prim.RaiseException" || name == "torch.prim.RaiseException") {
					return true
				}
			}
			return false
		case *If:
			if !terminates(s.Body) {
				return false
			}
			ss = s.Else
			continue
		}
		return false
	}
	return false
}

func (c *compiler) ifStmt(s *If, e *env) error {
	var cv *graph.Value
	for {
		cond, err := c.expr(s.Cond, e)
		if err != nil {
			return err
		}
		if cv, err = c.condValue(s.Cond, cond); err != nil {
			return err
		}
		k, ok := constOf(cv)
		if !ok {
			break
		}
		// Resolved now, as freezing does: the other branch may touch what
		// inference has no use for (training-only buffers, SetAttr).
		if k.Bool() {
			return c.stmts(s.Body, e)
		}
		// An elif is an If alone in Else: a long chain of them is taken
		// in this loop, not by recursion.
		elif, ok := soleIf(s.Else)
		if !ok {
			return c.stmts(s.Else, e)
		}
		s = elif
		c.pos = s.Pos
	}
	if err := c.checkNesting(s); err != nil {
		return err
	}
	n := c.emit(graph.KindIf, []*graph.Value{cv})
	branches := [2][]Stmt{s.Body, s.Else}
	var envs [2]*env
	var blocks [2]*graph.Block
	saved := c.block
	for i, ss := range branches {
		blocks[i] = n.AddBlock()
		c.block = blocks[i]
		envs[i] = e.clone()
		if err := c.stmts(ss, envs[i]); err != nil {
			c.block = saved
			return err
		}
	}
	c.block = saved
	return c.merge(s, n, blocks, envs, [2]bool{terminates(s.Body), terminates(s.Else)}, e)
}

// soleIf returns the If that is the only statement of ss (an elif).
func soleIf(ss []Stmt) (*If, bool) {
	if len(ss) != 1 {
		return nil, false
	}
	s, ok := ss[0].(*If)
	return s, ok
}

// merge makes the variables assigned in an if's branches outputs of n.
func (c *compiler) merge(at Node, n *graph.Node, blocks [2]*graph.Block, envs [2]*env, term [2]bool, e *env) error {
	names := map[string]bool{}
	for _, be := range envs {
		for k, v := range be.vars {
			if old, ok := e.vars[k]; !ok || !sameSV(old, v) {
				names[k] = true
			}
		}
	}
	for _, name := range sortedKeys(names) {
		var vals [2]sv
		var have [2]bool
		for i := range envs {
			vals[i], have[i] = envs[i].vars[name]
		}
		switch {
		case have[0] && have[1]:
		case term[0] && have[1], term[1] && have[0]:
		default:
			delete(e.vars, name) // defined on one path only: not visible after
			continue
		}
		if have[0] && have[1] && sameSV(vals[0], vals[1]) {
			e.vars[name] = vals[0]
			continue
		}
		if v, ok := c.mergedStatically(vals, have, term, blocks); ok {
			e.vars[name] = v
			continue
		}
		var gvs [2]*graph.Value
		var t *graph.Type
		for i := range vals {
			if !have[i] {
				continue
			}
			saved := c.block
			c.block = blocks[i]
			v, err := c.value(at, vals[i])
			c.block = saved
			if err != nil {
				if term[0] || term[1] {
					delete(e.vars, name)
					continue
				}
				return c.errf(at, "variable %s: branches assign values that cannot be merged: %v", name, err)
			}
			gvs[i] = v
			t = unify(t, v.Type)
		}
		if t == nil {
			if gvs[0] == nil || gvs[1] == nil {
				continue
			}
			return c.errf(at, "variable %s is %s in one branch and %s in the other", name, gvs[0].Type, gvs[1].Type)
		}
		for i := range gvs {
			if gvs[i] == nil {
				saved := c.block
				c.block = blocks[i]
				gvs[i] = c.emit(graph.KindUninitialized, nil, t).Outputs[0]
				c.block = saved
			}
			blocks[i].AddOutput(gvs[i])
		}
		out := n.AddOutput(t)
		out.Name = name
		e.vars[name] = out
	}
	return nil
}

func sameSV(a, b sv) bool {
	if ma, ok := a.(*moduleSV); ok {
		mb, ok := b.(*moduleSV)
		return ok && ma.obj == mb.obj
	}
	return a == b
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	// deterministic output order
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// assigned lists the names a statement list assigns, recursively (elif
// chains, whose length is not nesting, through a work list).
func assigned(ss []Stmt, out map[string]bool) {
	var target func(t Expr)
	target = func(t Expr) {
		switch t := t.(type) {
		case *Name:
			out[t.ID] = true
		case *Tuple:
			for _, x := range t.Elts {
				target(x)
			}
		case *List:
			for _, x := range t.Elts {
				target(x)
			}
		}
	}
	for work := [][]Stmt{ss}; len(work) > 0; {
		ss := work[len(work)-1]
		work = work[:len(work)-1]
		for _, s := range ss {
			switch s := s.(type) {
			case *Assign:
				for _, t := range s.Targets {
					target(t)
				}
			case *AnnAssign:
				target(s.Target)
			case *AugAssign:
				target(s.Target)
			case *If:
				work = append(work, s.Body, s.Else)
			case *For:
				target(s.Target)
				work = append(work, s.Body)
			case *While:
				work = append(work, s.Body)
			}
		}
	}
}

func (c *compiler) forStmt(s *For, e *env) error {
	call, ok := s.Iter.(*Call)
	var trip *graph.Value
	var start, step *graph.Value
	var list *graph.Value
	if fn, _ := dotted(callFunc(call)); ok && fn == "range" {
		args := make([]*graph.Value, len(call.Args))
		for i, a := range call.Args {
			v, err := c.expr(a, e)
			if err != nil {
				return err
			}
			if args[i], err = c.value(a, v); err != nil {
				return err
			}
			if args[i].Type.Kind != graph.IntType {
				return c.errf(a, "range() argument of type %s (expected int)", args[i].Type)
			}
		}
		switch len(args) {
		case 1:
			trip = args[0]
		case 2, 3:
			start = args[0]
			step = c.intConst(1)
			if len(args) == 3 {
				step = args[2]
			}
			// trip = max(0, ceil((end-start)/step)), as TorchScript's range does.
			var err error
			trip, err = c.op1(s, "aten::__range_length", args[0], args[1], step)
			if err != nil {
				return err
			}
		default:
			return c.errf(s, "range() takes 1 to 3 arguments")
		}
	} else {
		it, err := c.expr(s.Iter, e)
		if err != nil {
			return err
		}
		if t, ok := it.(*tupleSV); ok { // unrolled, as TorchScript does for tuples and module lists
			for _, el := range t.elems {
				if err := c.assign(s.Target, el, e); err != nil {
					return err
				}
				if err := c.stmts(s.Body, e); err != nil {
					return err
				}
			}
			return nil
		}
		if list, err = c.value(s.Iter, it); err != nil {
			return err
		}
		if list.Type.Kind == graph.DictType { // for k in d: its keys, in order
			if list, err = c.op1(s.Iter, "aten::keys", list); err != nil {
				return err
			}
		}
		if list.Type.Kind != graph.ListType {
			return c.errf(s.Iter, "for loops over %s are not supported (range(...) and lists are)", list.Type)
		}
		if trip, err = c.op1(s, "aten::len", list); err != nil {
			return err
		}
	}
	return c.loop(s, trip, nil, s.Body, e, func(i *graph.Value, be *env) error {
		var v *graph.Value
		var err error
		switch {
		case list != nil:
			v, err = c.op1(s, "aten::__getitem__", list, i)
		case start != nil:
			var m *graph.Value
			if m, err = c.op1(s, "aten::mul", i, step); err == nil {
				v, err = c.op1(s, "aten::add", start, m)
			}
		default:
			v = i
		}
		if err != nil {
			return err
		}
		return c.assign(s.Target, v, be)
	}, nil)
}

func callFunc(c *Call) Expr {
	if c == nil {
		return nil
	}
	return c.Func
}

func (c *compiler) whileStmt(s *While, e *env) error {
	cond, err := c.expr(s.Cond, e)
	if err != nil {
		return err
	}
	cv, err := c.condValue(s.Cond, cond)
	if err != nil {
		return err
	}
	if k, ok := constOf(cv); ok && !k.Bool() {
		return nil
	}
	trip := c.intConst(1<<63 - 1)
	return c.loop(s, trip, cv, s.Body, e, nil, func(be *env) (*graph.Value, error) {
		v, err := c.expr(s.Cond, be)
		if err != nil {
			return nil, err
		}
		return c.condValue(s.Cond, v)
	})
}

// loop emits a prim::Loop with the variables the body assigns that exist
// before it as loop-carried values.
func (c *compiler) loop(at Node, trip, cond *graph.Value, body []Stmt, e *env,
	bind func(i *graph.Value, be *env) error, next func(be *env) (*graph.Value, error)) error {
	names := map[string]bool{}
	assigned(body, names)
	var carried []string
	for _, name := range sortedKeys(names) {
		if v, ok := e.vars[name]; ok {
			if _, isVal := v.(*graph.Value); isVal {
				carried = append(carried, name)
			}
		}
	}
	if cond == nil {
		cond = c.boolConst(true)
	}
	inputs := []*graph.Value{trip, cond}
	for _, name := range carried {
		inputs = append(inputs, e.vars[name].(*graph.Value))
	}
	if err := c.checkNesting(at); err != nil {
		return err
	}
	n := c.emit(graph.KindLoop, inputs)
	b := n.AddBlock()
	i := b.AddInput("i", graph.Int)
	be := e.clone()
	for _, name := range carried {
		p := b.AddInput(name, e.vars[name].(*graph.Value).Type)
		be.vars[name] = p
	}
	saved := c.block
	c.block = b
	defer func() { c.block = saved }()
	if bind != nil {
		if err := bind(i, be); err != nil {
			return err
		}
	}
	if err := c.stmts(body, be); err != nil {
		return err
	}
	var nextCond *graph.Value
	if next != nil {
		v, err := next(be)
		if err != nil {
			return err
		}
		nextCond = v
	} else {
		nextCond = c.boolConst(true)
	}
	b.AddOutput(nextCond)
	for _, name := range carried {
		v, err := c.value(at, be.vars[name])
		if err != nil {
			return c.errf(at, "loop variable %s: %v", name, err)
		}
		want := e.vars[name].(*graph.Value).Type
		if !v.Type.IsSubtypeOf(want) {
			return c.errf(at, "loop variable %s changes type from %s to %s", name, want, v.Type)
		}
		b.AddOutput(v)
	}
	c.block = saved
	for _, name := range carried {
		out := n.AddOutput(e.vars[name].(*graph.Value).Type)
		out.Name = name
		e.vars[name] = out
	}
	return nil
}
