package tscode

import (
	"math"
	"strconv"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// binOps maps Python operators to the ops TorchScript lowers them to.
var binOps = map[string]string{
	"+": "aten::add", "-": "aten::sub", "*": "aten::mul", "/": "aten::div",
	"//": "aten::floordiv", "%": "aten::remainder", "**": "aten::pow", "@": "aten::matmul",
	"&": "aten::__and__", "|": "aten::__or__", "^": "aten::__xor__",
	"<<": "aten::__lshift__", ">>": "aten::__rshift__",
}

var cmpOps = map[string]string{
	"==": "aten::eq", "!=": "aten::ne", "<": "aten::lt", "<=": "aten::le", ">": "aten::gt", ">=": "aten::ge",
}

// builtins are the Python builtins printed TorchScript code uses.
var builtins = map[string]bool{
	"int": true, "float": true, "bool": true, "str": true, "len": true, "annotate": true,
	"unchecked_cast": true, "uninitialized": true, "getattr": true, "hasattr": true, "isinstance": true,
	"min": true, "max": true, "abs": true, "round": true, "print": true, "range": true,
	"fork": true, "wait": true, "sum": true, "all": true, "any": true, "divmod": true,
}

// emptyElem is the element type of a list literal with no elements and no
// annotation; it takes the type the list is passed as.
var emptyElem = &graph.Type{Kind: graph.AnyType}

func (c *compiler) expr(x Expr, e *env) (sv, error) {
	// Every nested expression passes here, inlined calls' included, so
	// this bounds the compiler's recursion.
	c.exprDepth++
	defer func() { c.exprDepth-- }()
	if c.exprDepth > maxExprDepth {
		return nil, c.errf(x, "expression nested more than %d levels deep (inlined calls included)", maxExprDepth)
	}
	// A chain of left operands (y + y + ... + y, x.relu().relu()...,
	// a[0][0]..., f(a)(b)) is as deep as it is long and its length is not
	// nesting: it is walked with a slice, leftmost operand first, so that
	// generated code with long flat chains compiles in constant stack.
	var buf [8]Expr
	chain := buf[:0]
	for {
		l := leftOperand(x)
		if l == nil {
			break
		}
		chain = append(chain, x)
		x = l
	}
	v, err := c.expr1(x, e)
	for i := len(chain) - 1; i >= 0 && err == nil; i-- {
		v, err = c.applyTo(chain[i], v, e)
	}
	return v, err
}

// leftOperand returns the operand of x that is evaluated first and that
// a chain nests through (BinOp.X, Attribute.X, Call.Func, Subscript.X),
// nil for other expressions.
func leftOperand(x Expr) Expr {
	switch x := x.(type) {
	case *BinOp:
		return x.X
	case *Attribute:
		return x.X
	case *Call:
		return x.Func
	case *Subscript:
		return x.X
	}
	return nil
}

// applyTo compiles x, one link of a chain, given its left operand's value.
func (c *compiler) applyTo(x Expr, left sv, e *env) (sv, error) {
	switch x := x.(type) {
	case *BinOp:
		op, ok := binOps[x.Op]
		if !ok {
			return nil, c.errf(x, "operator %s is not supported", x.Op)
		}
		a, err := c.value(x.X, left)
		if err != nil {
			return nil, err
		}
		b, err := c.exprValue(x.Y, e)
		if err != nil {
			return nil, err
		}
		return c.callOp(x, op, []*graph.Value{a, b}, nil)
	case *Attribute:
		return c.attr(x, left, x.Attr)
	case *Call:
		return c.call(x, left, e)
	case *Subscript:
		return c.subscript(x, left, e)
	}
	return nil, c.errf(x, "expression %s is not supported", exprText(x))
}

func (c *compiler) expr1(x Expr, e *env) (sv, error) {
	switch x := x.(type) {
	case *Const:
		switch x.Kind {
		case ConstNone:
			return c.noneConst(), nil
		case ConstBool:
			return c.boolConst(x.Bool), nil
		case ConstInt:
			return c.intConst(x.Int), nil
		case ConstFloat:
			return c.constant(ivalue.FromDouble(x.Float), graph.Float), nil
		case ConstString:
			return c.constant(ivalue.FromString(x.Str), graph.Str), nil
		}
		return nil, c.errf(x, "... is only supported in subscripts")
	case *Name:
		return c.name(x, e)
	case *Tuple:
		elems := make([]sv, len(x.Elts))
		allValues := true
		for i, el := range x.Elts {
			v, err := c.expr(el, e)
			if err != nil {
				return nil, err
			}
			elems[i] = v
			_, isVal := v.(*graph.Value)
			allValues = allValues && isVal
		}
		t := &tupleSV{elems: elems}
		if !allValues {
			return t, nil
		}
		return c.value(x, t)
	case *List:
		vals := make([]*graph.Value, len(x.Elts))
		var et *graph.Type
		for i, el := range x.Elts {
			v, err := c.expr(el, e)
			if err != nil {
				return nil, err
			}
			if vals[i], err = c.value(el, v); err != nil {
				return nil, err
			}
			if et = unify(et, vals[i].Type); et == nil {
				return nil, c.errf(x, "list elements of different types (%s, ...)", vals[0].Type)
			}
		}
		if et == nil {
			et = emptyElem
		}
		return c.emit(graph.KindListConstruct, vals, graph.ListOf(et)).Outputs[0], nil
	case *Dict:
		var ins []*graph.Value
		var kt, vt *graph.Type
		for i := range x.Keys {
			k, err := c.expr(x.Keys[i], e)
			if err != nil {
				return nil, err
			}
			kv, err := c.value(x.Keys[i], k)
			if err != nil {
				return nil, err
			}
			v, err := c.expr(x.Values[i], e)
			if err != nil {
				return nil, err
			}
			vv, err := c.value(x.Values[i], v)
			if err != nil {
				return nil, err
			}
			ins = append(ins, kv, vv)
			kt, vt = unify(kt, kv.Type), unify(vt, vv.Type)
			if kt == nil || vt == nil {
				return nil, c.errf(x, "dict entries of different types")
			}
		}
		if kt == nil {
			kt, vt = graph.Str, graph.Tensor
		}
		return c.emit(graph.KindDictConstruct, ins, graph.DictOf(kt, vt)).Outputs[0], nil
	case *UnaryOp:
		a, err := c.exprValue(x.X, e)
		if err != nil {
			return nil, err
		}
		switch x.Op {
		case "+":
			return a, nil
		case "-":
			if k, ok := constOf(a); ok {
				switch k.Kind() {
				case ivalue.KindInt:
					return c.intConst(-k.Int()), nil
				case ivalue.KindDouble:
					return c.constant(ivalue.FromDouble(-k.Double()), graph.Float), nil
				}
			}
			return c.callOp(x, "aten::neg", []*graph.Value{a}, nil)
		case "not":
			if a.Type.Kind != graph.BoolType {
				if a, err = c.condValue(x, a); err != nil {
					return nil, err
				}
			}
			if k, ok := constOf(a); ok {
				return c.boolConst(!k.Bool()), nil
			}
			return c.callOp(x, "aten::__not__", []*graph.Value{a}, nil)
		case "~":
			return c.callOp(x, "aten::bitwise_not", []*graph.Value{a}, nil)
		}
		return nil, c.errf(x, "unary operator %s is not supported", x.Op)
	case *BoolOp:
		return c.boolOp(x, e)
	case *Compare:
		return c.compare(x, e)
	case *IfExp:
		cond, err := c.expr(x.Cond, e)
		if err != nil {
			return nil, err
		}
		cv, err := c.condValue(x.Cond, cond)
		if err != nil {
			return nil, err
		}
		if k, ok := constOf(cv); ok {
			if k.Bool() {
				return c.expr(x.Then, e)
			}
			return c.expr(x.Else, e)
		}
		return c.ifValue(x, cv, func() (sv, error) { return c.expr(x.Then, e) }, func() (sv, error) { return c.expr(x.Else, e) })
	}
	return nil, c.errf(x, "expression %s is not supported", exprText(x))
}

func (c *compiler) exprValue(x Expr, e *env) (*graph.Value, error) {
	v, err := c.expr(x, e)
	if err != nil {
		return nil, err
	}
	return c.value(x, v)
}

// ifValue emits prim::If producing one value from two branches.
func (c *compiler) ifValue(at Node, cond *graph.Value, then, els func() (sv, error)) (sv, error) {
	if err := c.checkNesting(at); err != nil {
		return nil, err
	}
	n := c.emit(graph.KindIf, []*graph.Value{cond})
	saved := c.block
	defer func() { c.block = saved }()
	var outs [2]*graph.Value
	var blocks [2]*graph.Block
	var t *graph.Type
	for i, f := range []func() (sv, error){then, els} {
		blocks[i] = n.AddBlock()
		c.block = blocks[i]
		s, err := f()
		if err != nil {
			return nil, err
		}
		if outs[i], err = c.value(at, s); err != nil {
			return nil, err
		}
		if t = unify(t, outs[i].Type); t == nil {
			return nil, c.errf(at, "branches give %s and %s", outs[0].Type, outs[i].Type)
		}
	}
	c.block = saved
	if v, ok := c.mergedStatically([2]sv{outs[0], outs[1]}, [2]bool{true, true}, [2]bool{}, blocks); ok {
		return v, nil // the If is left without outputs; DCE drops it if it does nothing else
	}
	for i := range blocks {
		blocks[i].AddOutput(outs[i])
	}
	return n.AddOutput(t), nil
}

// boolOp compiles `a and b and c` left-nested, as PyTorch does
// ((a and b) and c): each operand's prim::If takes the previous one's
// output as its condition, so a long chain is a flat list of Ifs and a
// loop here, not nested blocks and recursion.
func (c *compiler) boolOp(x *BoolOp, e *env) (sv, error) {
	isAnd := x.Op == "and"
	var acc *graph.Value
	for _, operand := range x.Values {
		operand := operand
		next := func() (sv, error) {
			s, err := c.expr(operand, e)
			if err != nil {
				return nil, err
			}
			return c.condValue(operand, s)
		}
		var s sv
		var err error
		if acc == nil {
			s, err = next()
		} else if k, ok := constOf(acc); ok {
			if k.Bool() != isAnd {
				return acc, nil // decided: the rest is not evaluated
			}
			s, err = next()
		} else {
			short := func() (sv, error) { return c.boolConst(!isAnd), nil }
			if isAnd {
				s, err = c.ifValue(x, acc, next, short)
			} else {
				s, err = c.ifValue(x, acc, short, next)
			}
		}
		if err != nil {
			return nil, err
		}
		if acc, err = c.value(x, s); err != nil {
			return nil, err
		}
	}
	return acc, nil
}

func (c *compiler) compare(x *Compare, e *env) (sv, error) {
	left, err := c.exprValue(x.X, e)
	if err != nil {
		return nil, err
	}
	var result *graph.Value
	for i, op := range x.Ops {
		right, err := c.exprValue(x.Ys[i], e)
		if err != nil {
			return nil, err
		}
		var r sv
		switch op {
		case "is", "is not":
			r, err = c.is(x, left, right, op == "is")
		case "in", "not in":
			r, err = c.callOp(x, "aten::__contains__", []*graph.Value{right, left}, nil)
			if err == nil && op == "not in" {
				rv, _ := r.(*graph.Value)
				r, err = c.callOp(x, "aten::__not__", []*graph.Value{rv}, nil)
			}
		default:
			name, ok := cmpOps[op]
			if !ok {
				return nil, c.errf(x, "comparison %s is not supported", op)
			}
			r, err = c.callOp(x, name, []*graph.Value{left, right}, nil)
		}
		if err != nil {
			return nil, err
		}
		rv, err := c.value(x, r)
		if err != nil {
			return nil, err
		}
		if result == nil {
			result = rv
		} else {
			prev := result
			s, err := c.ifValue(x, prev, func() (sv, error) { return rv, nil }, func() (sv, error) { return c.boolConst(false), nil })
			if err != nil {
				return nil, err
			}
			result = s.(*graph.Value)
		}
		left = right
	}
	return result, nil
}

// is decides `a is b` statically where the types allow (always, for
// frozen module attributes against None), else emits aten::__is__.
func (c *compiler) is(at Node, a, b *graph.Value, is bool) (sv, error) {
	ka, ta := a.Type.Kind, b.Type.Kind
	maybeNone := func(k graph.TypeKind) bool {
		return k == graph.NoneType || k == graph.OptionalType || k == graph.AnyType
	}
	switch {
	case ka == graph.NoneType && ta == graph.NoneType:
		return c.boolConst(is), nil
	case ka == graph.NoneType && !maybeNone(ta), ta == graph.NoneType && !maybeNone(ka):
		return c.boolConst(!is), nil
	}
	// Not callOp, which decides `is` statically through this function.
	if is {
		return c.resolveOp(at, "aten::__is__", []*graph.Value{a, b}, nil)
	}
	return c.resolveOp(at, "aten::__isnot__", []*graph.Value{a, b}, nil)
}

func (c *compiler) name(x *Name, e *env) (sv, error) {
	if v, ok := e.vars[x.ID]; ok {
		return v, nil
	}
	switch x.ID {
	case "torch", "ops", "__torch__", "CONSTANTS", "math":
		return &nsSV{path: x.ID}, nil
	case "inf":
		return c.constant(ivalue.FromDouble(math.Inf(1)), graph.Float), nil
	case "nan":
		return c.constant(ivalue.FromDouble(math.NaN()), graph.Float), nil
	case "True", "False":
		return c.boolConst(x.ID == "True"), nil
	case "None":
		return c.noneConst(), nil
	}
	if e.file != nil {
		if f, ok := e.file.funcs[x.ID]; ok {
			return &funcSV{def: f, file: e.file}, nil
		}
	}
	if builtins[x.ID] {
		return &builtinSV{name: x.ID}, nil
	}
	return nil, c.errf(x, "name %s is not defined", x.ID)
}

// boundSV is a method looked up on a graph value: x.size -> torch.size(x, ...).
type boundSV struct {
	self *graph.Value
	name string
}

func (c *compiler) attr(at Node, base sv, name string) (sv, error) {
	switch b := base.(type) {
	case *nsSV:
		switch b.path {
		case "CONSTANTS":
			if len(name) > 1 && name[0] == 'c' {
				if i, err := strconv.Atoi(name[1:]); err == nil && i >= 0 && i < len(c.consts) {
					return c.ivalueConst(c.consts[i], at)
				}
			}
			return nil, c.errf(at, "CONSTANTS.%s: the archive's constants.pkl has %d constants", name, len(c.consts))
		case "math":
			switch name {
			case "inf":
				return c.constant(ivalue.FromDouble(math.Inf(1)), graph.Float), nil
			case "nan":
				return c.constant(ivalue.FromDouble(math.NaN()), graph.Float), nil
			case "pi":
				return c.constant(ivalue.FromDouble(math.Pi), graph.Float), nil
			case "e":
				return c.constant(ivalue.FromDouble(math.E), graph.Float), nil
			}
		}
		return &nsSV{path: b.path + "." + name}, nil
	case *moduleSV:
		if v, ok, err := c.moduleAttrOverride(at, b, name); ok || err != nil {
			return v, err
		}
		if v, ok := b.obj.GetAttr(name); ok {
			if v.Kind() == ivalue.KindDict {
				return c.dictConst(v, c.attrType(b, name), at)
			}
			return c.ivalueConst(v, at)
		}
		if x, cls, ok := c.classConst(b, name, at); ok {
			return c.expr(x, &env{vars: map[string]sv{}, file: cls.file})
		}
		if _, err := c.class(b.obj.ClassName(), at); err != nil {
			return nil, err // a missing or broken source file, not a missing attribute
		}
		if _, _, err := c.method(b, name, at); err == nil {
			return &methodSV{self: b, name: name}, nil
		}
		return nil, c.errf(at, "module %s has no attribute %s", b.obj.ClassName(), name)
	case *tupleSV:
		return nil, c.errf(at, "tuple has no attribute %s", name)
	case *objectSV:
		return c.objectAttr(at, b, name)
	}
	v, err := c.value(at, base)
	if err != nil {
		return nil, err
	}
	if m, ok, err := c.classMethod(v, name); ok || err != nil {
		return m, err
	}
	if f, ok, err := c.tupleField(at, v, name); ok || err != nil {
		return f, err
	}
	switch name {
	case "shape":
		return c.callOp(at, "aten::size", []*graph.Value{v}, nil)
	case "dtype":
		return c.callOp(at, "prim::dtype", []*graph.Value{v}, nil)
	case "device":
		return c.callOp(at, "prim::device", []*graph.Value{v}, nil)
	case "is_cuda":
		return c.callOp(at, "prim::is_cuda", []*graph.Value{v}, nil)
	case "T":
		return c.callOp(at, "aten::numpy_T", []*graph.Value{v}, nil)
	}
	return &boundSV{self: v, name: name}, nil
}

// subscript compiles x given the value of x.X.
func (c *compiler) subscript(x *Subscript, base sv, e *env) (sv, error) {
	constIndex := func() (int64, bool) {
		if k, ok := x.Index.(*Const); ok && k.Kind == ConstInt {
			return k.Int, true
		}
		if u, ok := x.Index.(*UnaryOp); ok && u.Op == "-" {
			if k, ok := u.X.(*Const); ok && k.Kind == ConstInt {
				return -k.Int, true
			}
		}
		return 0, false
	}
	switch b := base.(type) {
	case *moduleSV:
		if i, ok := constIndex(); ok {
			return c.attr(x, b, strconv.FormatInt(i, 10))
		}
		return nil, c.errf(x, "indexing module %s needs a constant index", b.obj.ClassName())
	case *tupleSV:
		if i, ok := constIndex(); ok {
			if i < 0 {
				i += int64(len(b.elems))
			}
			if i < 0 || i >= int64(len(b.elems)) {
				return nil, c.errf(x, "tuple index %d out of range", i)
			}
			return b.elems[i], nil
		}
	}
	bv, err := c.value(x, base)
	if err != nil {
		return nil, err
	}
	switch bv.Type.Kind {
	case graph.TupleType:
		i, ok := constIndex()
		if !ok {
			return nil, c.errf(x, "tuple index must be a constant")
		}
		n := int64(len(bv.Type.Elems))
		if i < 0 {
			i += n
		}
		if i < 0 || i >= n {
			return nil, c.errf(x, "tuple index %d out of range for %s", i, bv.Type)
		}
		if p := bv.Node; p != nil && p.Kind == graph.KindTupleConstruct {
			return p.Inputs[i], nil
		}
		return c.emit("prim::TupleIndex", []*graph.Value{bv, c.intConst(i)}, bv.Type.Elems[i]).Outputs[0], nil
	case graph.TensorType:
		return c.tensorIndex(x, bv, e)
	}
	if s, ok := x.Index.(*Slice); ok {
		args := []*graph.Value{bv}
		for _, part := range []Expr{s.Lo, s.Hi, s.Step} {
			if part == nil {
				args = append(args, c.noneConst())
				continue
			}
			v, err := c.exprValue(part, e)
			if err != nil {
				return nil, err
			}
			args = append(args, v)
		}
		if s.Step == nil {
			args[3] = c.intConst(1)
		}
		return c.callOp(x, "aten::slice", args, nil)
	}
	iv, err := c.exprValue(x.Index, e)
	if err != nil {
		return nil, err
	}
	return c.callOp(x, "aten::__getitem__", []*graph.Value{bv, iv}, nil)
}

// tensorIndex lowers basic tensor indexing (ints, slices, None) to
// select/slice/unsqueeze, as TorchScript does.
func (c *compiler) tensorIndex(x *Subscript, t *graph.Value, e *env) (sv, error) {
	var idx []Expr
	if tu, ok := x.Index.(*Tuple); ok {
		idx = tu.Elts
	} else {
		idx = []Expr{x.Index}
	}
	dim := int64(0)
	cur := t
	for _, ix := range idx {
		var err error
		switch ix := ix.(type) {
		case *Slice:
			args := []*graph.Value{cur, c.intConst(dim)}
			for _, part := range []Expr{ix.Lo, ix.Hi} {
				if part == nil {
					args = append(args, c.noneConst())
					continue
				}
				v, err := c.exprValue(part, e)
				if err != nil {
					return nil, err
				}
				args = append(args, v)
			}
			step := c.intConst(1)
			if ix.Step != nil {
				if step, err = c.exprValue(ix.Step, e); err != nil {
					return nil, err
				}
			}
			args = append(args, step)
			var s sv
			if s, err = c.callOp(x, "aten::slice", args, nil); err != nil {
				return nil, err
			}
			cur = s.(*graph.Value)
			dim++
		default:
			if k, ok := ix.(*Const); ok && k.Kind == ConstNone {
				if cur, err = c.op1(x, "aten::unsqueeze", cur, c.intConst(dim)); err != nil {
					return nil, err
				}
				dim++
				continue
			}
			iv, err := c.exprValue(ix, e)
			if err != nil {
				return nil, err
			}
			if iv.Type.Kind != graph.IntType {
				return nil, c.errf(x, "tensor indexing with %s is not supported (ints, slices and None are)", iv.Type)
			}
			s, err := c.callOp(x, "aten::select", []*graph.Value{cur, c.intConst(dim), iv}, nil)
			if err != nil {
				return nil, err
			}
			cur = s.(*graph.Value)
		}
	}
	return cur, nil
}

// annotate gives an empty list or dict literal its declared type.
func (c *compiler) annotate(v *graph.Value, t *graph.Type) *graph.Value {
	if p := v.Node; p != nil && (p.Kind == graph.KindListConstruct || p.Kind == graph.KindDictConstruct) && len(p.Inputs) == 0 && len(v.Uses) == 0 {
		v.Type = t
		return v
	}
	if t.Kind == graph.OptionalType && v.Type.Kind != graph.OptionalType {
		return v // refinement happens at use
	}
	if v.Type.Kind == graph.ListType && v.Type.Elem() == emptyElem && t.Kind == graph.ListType {
		v.Type = t
	}
	return v
}
