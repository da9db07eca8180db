package tscode

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// maxDepth bounds the nesting of expressions and blocks (a bracket counts
// about two), so that hostile input (1000 nested brackets) is an error and
// not a deep stack.
const maxDepth = 1000

// Parse parses one TorchScript source file (an archive's code/ entry) into
// its syntax tree. name is the archive entry, used in positions and in
// errors, which are *Error: `name:line:col: what was found, what was
// expected`.
//
// Positions follow Python's ast: a node starts at its first token,
// parentheses around its leading operand included. Beyond Python's tree, a minus sign directly before a numeric literal
// is folded into the Const: PythonPrint writes INT64_MIN as
// -9223372036854775808, whose digits alone do not fit in int64.
func Parse(name string, src []byte) (f *File, err error) {
	toks, err := lex(name, src)
	if err != nil {
		return nil, err
	}
	p := &parser{toks: toks}
	defer func() {
		// The parser reports errors by panicking with *Error; anything else
		// is a bug, still returned as an error rather than escaping.
		if r := recover(); r != nil {
			if e, ok := r.(*Error); ok {
				f, err = nil, e
				return
			}
			f, err = nil, &Error{Pos: p.tok().pos, Msg: fmt.Sprintf("internal parser error: %v", r)}
		}
	}()
	return p.file(name), nil
}

type parser struct {
	toks  []token
	i     int
	depth int
}

func (p *parser) tok() token { return p.toks[p.i] }

func (p *parser) peek(n int) token {
	if p.i+n < len(p.toks) {
		return p.toks[p.i+n]
	}
	return p.toks[len(p.toks)-1]
}

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) failAt(pos Pos, format string, args ...any) {
	panic(&Error{Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

// expected fails at the current token: "expected X, found Y".
func (p *parser) expected(what string) {
	t := p.tok()
	p.failAt(t.pos, "expected %s, found %s", what, t.describe())
}

func (p *parser) isOp(op string) bool {
	t := p.tok()
	return t.kind == tOp && t.text == op
}

func (p *parser) isKw(kw string) bool {
	t := p.tok()
	return t.kind == tKeyword && t.text == kw
}

func (p *parser) acceptOp(op string) bool {
	if p.isOp(op) {
		p.next()
		return true
	}
	return false
}

func (p *parser) acceptKw(kw string) bool {
	if p.isKw(kw) {
		p.next()
		return true
	}
	return false
}

func (p *parser) expectOp(op, context string) token {
	if !p.isOp(op) {
		p.expected(fmt.Sprintf("%q %s", op, context))
	}
	return p.next()
}

func (p *parser) expectName(context string) token {
	if p.tok().kind != tName {
		p.expected("a name " + context)
	}
	return p.next()
}

func (p *parser) enter() {
	p.depth++
	if p.depth > maxDepth {
		p.failAt(p.tok().pos, "nesting deeper than %d levels", maxDepth)
	}
}

func (p *parser) leave() { p.depth-- }

// ---- statements

func (p *parser) file(name string) *File {
	f := &File{Name: name}
	for p.tok().kind != tEOF {
		switch p.tok().kind {
		case tNewline:
			p.next()
		case tIndent:
			p.failAt(p.tok().pos, "unexpected indent at top level")
		default:
			f.Body = append(f.Body, p.statement()...)
		}
	}
	return f
}

// block parses the body after a compound statement's colon: an indented
// suite, or simple statements on the same line.
func (p *parser) block(context string) []Stmt {
	p.enter()
	defer p.leave()
	if p.tok().kind != tNewline {
		return p.simpleStatements()
	}
	p.next()
	if p.tok().kind != tIndent {
		p.expected("an indented block " + context)
	}
	p.next()
	var body []Stmt
	for p.tok().kind != tDedent && p.tok().kind != tEOF {
		body = append(body, p.statement()...)
	}
	p.next()
	return body
}

func (p *parser) statement() []Stmt {
	p.enter()
	defer p.leave()
	t := p.tok()
	if t.kind == tIndent {
		p.failAt(t.pos, "unexpected indent")
	}
	if t.kind == tOp && t.text == "@" {
		return []Stmt{p.decorated()}
	}
	if t.kind == tKeyword {
		switch t.text {
		case "if":
			p.next()
			return []Stmt{p.ifStmt(t.pos)}
		case "while":
			p.next()
			cond := p.namedTest()
			p.expectOp(":", "after while-loop condition")
			body := p.block("after while")
			if p.isKw("else") {
				p.failAt(p.tok().pos, "while-else is not supported")
			}
			return []Stmt{&While{Pos: t.pos, Cond: cond, Body: body}}
		case "for":
			p.next()
			target := p.targetList("in")
			p.checkTarget(target, "for-loop")
			if !p.acceptKw("in") {
				p.expected(`"in" after for-loop target`)
			}
			iter := p.testList()
			p.expectOp(":", "after for-loop header")
			body := p.block("after for")
			if p.isKw("else") {
				p.failAt(p.tok().pos, "for-else is not supported")
			}
			return []Stmt{&For{Pos: t.pos, Target: target, Iter: iter, Body: body}}
		case "def":
			return []Stmt{p.funcDef(nil)}
		case "class":
			return []Stmt{p.classDef()}
		case "with":
			return []Stmt{p.withStmt()}
		case "try":
			p.failAt(t.pos, "try statements are not supported in TorchScript code")
		case "async":
			p.failAt(t.pos, "async is not supported in TorchScript code")
		}
	}
	return p.simpleStatements()
}

func (p *parser) ifStmt(pos Pos) *If {
	cond := p.namedTest()
	p.expectOp(":", "after if condition")
	s := &If{Pos: pos, Cond: cond, Body: p.block("after if")}
	// elif chains are built in a loop: their length is not nesting.
	cur := s
	for p.isKw("elif") {
		t := p.next()
		cond := p.namedTest()
		p.expectOp(":", "after elif condition")
		n := &If{Pos: t.pos, Cond: cond, Body: p.block("after elif")}
		cur.Else = []Stmt{n}
		cur = n
	}
	if p.acceptKw("else") {
		p.expectOp(":", "after else")
		cur.Else = p.block("after else")
	}
	return s
}

func (p *parser) decorated() Stmt {
	var decos []Expr
	for p.isOp("@") {
		p.next()
		decos = append(decos, p.namedTest())
		if p.tok().kind != tNewline {
			p.expected("end of line after decorator")
		}
		p.next()
	}
	if p.isKw("class") {
		p.failAt(p.tok().pos, "class decorators are not supported")
	}
	if !p.isKw("def") {
		p.expected(`"def" after decorators`)
	}
	return p.funcDef(decos)
}

func (p *parser) funcDef(decos []Expr) *FuncDef {
	pos := p.next().pos // def
	name := p.expectName(`after "def"`)
	fd := &FuncDef{Pos: pos, Name: name.text, Decorators: decos}
	p.expectOp("(", "after function name "+name.text)
	seenDefault := false
	for !p.isOp(")") {
		t := p.tok()
		if t.kind == tOp && (t.text == "*" || t.text == "**" || t.text == "/") {
			p.failAt(t.pos, "%q parameters are not supported in TorchScript code", t.text)
		}
		pn := p.expectName("for a parameter of " + name.text)
		prm := &Param{Pos: pn.pos, Name: pn.text}
		for _, q := range fd.Params {
			if q.Name == pn.text {
				p.failAt(pn.pos, "duplicate parameter %q in %s", pn.text, name.text)
			}
		}
		if p.acceptOp(":") {
			prm.Type = p.test()
		}
		if p.acceptOp("=") {
			prm.Default = p.test()
			seenDefault = true
		} else if seenDefault {
			p.failAt(pn.pos, "parameter %q without a default follows one with a default", pn.text)
		}
		fd.Params = append(fd.Params, prm)
		if !p.acceptOp(",") {
			break
		}
	}
	p.expectOp(")", "to close the parameters of "+name.text)
	if p.acceptOp("->") {
		fd.Returns = p.test()
	}
	p.expectOp(":", "after the signature of "+name.text)
	fd.Body = p.block("for the body of " + name.text)
	return fd
}

func (p *parser) classDef() *ClassDef {
	pos := p.next().pos // class
	name := p.expectName(`after "class"`)
	cd := &ClassDef{Pos: pos, Name: name.text}
	if p.acceptOp("(") {
		for !p.isOp(")") {
			if p.tok().kind == tName && p.peek(1).kind == tOp && p.peek(1).text == "=" {
				p.failAt(p.tok().pos, "keyword arguments in class bases are not supported")
			}
			cd.Bases = append(cd.Bases, p.test())
			if !p.acceptOp(",") {
				break
			}
		}
		p.expectOp(")", "to close the bases of class "+name.text)
	}
	p.expectOp(":", "after class "+name.text)
	cd.Body = p.block("for the body of class " + name.text)
	return cd
}

func (p *parser) withStmt() *With {
	pos := p.next().pos // with
	w := &With{Pos: pos}
	for {
		w.Items = append(w.Items, p.test())
		var v Expr
		if p.acceptKw("as") {
			v = p.expr()
			p.checkTarget(v, "with-item")
		}
		w.Vars = append(w.Vars, v)
		if !p.acceptOp(",") {
			break
		}
	}
	p.expectOp(":", "after with items")
	w.Body = p.block("after with")
	return w
}

// simpleStatements parses `small (; small)* [;] NEWLINE`.
func (p *parser) simpleStatements() []Stmt {
	var out []Stmt
	for {
		out = append(out, p.smallStatement())
		if !p.acceptOp(";") || p.tok().kind == tNewline {
			break
		}
	}
	if p.tok().kind != tNewline {
		p.expected("end of line after statement")
	}
	p.next()
	return out
}

func (p *parser) smallStatement() Stmt {
	t := p.tok()
	if t.kind == tKeyword {
		switch t.text {
		case "pass":
			p.next()
			return &Pass{Pos: t.pos}
		case "break":
			p.next()
			return &Break{Pos: t.pos}
		case "continue":
			p.next()
			return &Continue{Pos: t.pos}
		case "return":
			p.next()
			s := &Return{Pos: t.pos}
			if !p.atStmtEnd() {
				s.Value = p.testList()
			}
			return s
		case "raise":
			p.next()
			s := &Raise{Pos: t.pos}
			if !p.atStmtEnd() {
				s.Exc = p.test()
				if p.isKw("from") {
					p.failAt(p.tok().pos, "raise ... from is not supported")
				}
			}
			return s
		case "assert":
			p.next()
			s := &Assert{Pos: t.pos, Cond: p.test()}
			if p.acceptOp(",") {
				s.Msg = p.test()
			}
			return s
		case "del":
			p.next()
			s := &Delete{Pos: t.pos}
			for {
				x := p.expr()
				p.checkTarget(x, "del")
				s.Targets = append(s.Targets, x)
				if !p.acceptOp(",") || p.atStmtEnd() {
					break
				}
			}
			return s
		case "import":
			p.next()
			s := &Import{Pos: t.pos}
			for {
				s.Names = append(s.Names, p.dottedName())
				if p.isKw("as") {
					p.failAt(p.tok().pos, `"import ... as" is not supported`)
				}
				if !p.acceptOp(",") {
					break
				}
			}
			return s
		case "from":
			p.failAt(t.pos, `"from ... import" is not supported (PyTorch writes plain "import a.b")`)
		case "global", "nonlocal":
			p.failAt(t.pos, "%s statements are not supported in TorchScript code", t.text)
		case "yield", "await", "lambda":
			p.failAt(t.pos, "%s is not supported in TorchScript code", t.text)
		}
	}
	return p.exprStatement()
}

func (p *parser) atStmtEnd() bool {
	t := p.tok()
	return t.kind == tNewline || t.kind == tEOF || t.kind == tOp && t.text == ";"
}

func (p *parser) dottedName() string {
	parts := []string{p.expectName("in import").text}
	for p.acceptOp(".") {
		parts = append(parts, p.expectName(`after "." in import`).text)
	}
	return strings.Join(parts, ".")
}

var augOps = map[string]bool{
	"+=": true, "-=": true, "*=": true, "/=": true, "//=": true, "%=": true, "**=": true,
	"@=": true, "&=": true, "|=": true, "^=": true, "<<=": true, ">>=": true,
}

// exprStatement parses an expression statement or an assignment of any
// kind.
func (p *parser) exprStatement() Stmt {
	start := p.tok()
	first := p.testList()
	t := p.tok()
	switch {
	case t.kind == tOp && t.text == ":":
		p.next()
		if _, ok := first.(*Tuple); ok {
			p.failAt(start.pos, "only a single target can be annotated")
		}
		p.checkTarget(first, "annotated assignment")
		s := &AnnAssign{Pos: start.pos, Target: first, Type: p.test()}
		if p.acceptOp("=") {
			s.Value = p.testList()
		}
		return s
	case t.kind == tOp && augOps[t.text]:
		p.next()
		switch first.(type) {
		case *Name, *Attribute, *Subscript:
		default:
			p.failAt(start.pos, "cannot use %s on %s", t.text, describeExpr(first))
		}
		return &AugAssign{Pos: start.pos, Target: first, Op: strings.TrimSuffix(t.text, "="), Value: p.testList()}
	case t.kind == tOp && t.text == "=":
		s := &Assign{Pos: start.pos}
		value := first
		for p.acceptOp("=") {
			p.checkTarget(value, "assignment")
			s.Targets = append(s.Targets, value)
			value = p.testList()
		}
		s.Value = value
		return s
	}
	return &ExprStmt{Pos: start.pos, X: first}
}

// checkTarget rejects what cannot be assigned to.
func (p *parser) checkTarget(x Expr, context string) {
	switch x := x.(type) {
	case *Name, *Attribute, *Subscript:
		return
	case *Tuple:
		for _, e := range x.Elts {
			p.checkTarget(e, context)
		}
		return
	case *List:
		for _, e := range x.Elts {
			p.checkTarget(e, context)
		}
		return
	}
	p.failAt(x.At(), "cannot assign to %s in %s", describeExpr(x), context)
}

func describeExpr(x Expr) string {
	switch x := x.(type) {
	case *Call:
		return "a function call"
	case *Const:
		return "a literal"
	case *BinOp, *UnaryOp, *BoolOp:
		return "an operator expression"
	case *Compare:
		return "a comparison"
	case *IfExp:
		return "a conditional expression"
	case *Dict:
		return "a dict display"
	case *ListComp:
		return "a list comprehension"
	case *Slice:
		return "a slice"
	case *Tuple:
		return "a tuple"
	case *Name:
		return "name " + x.ID
	}
	return fmt.Sprintf("%T", x)
}

// ---- expressions

// testList parses `test (, test)* [,]`: several make a Tuple without
// parentheses (`return a, b`, `a, b = f()`).
func (p *parser) testList() Expr {
	start := p.tok().pos
	first := p.test()
	if !p.isOp(",") {
		return first
	}
	tu := &Tuple{Pos: start, Elts: []Expr{first}}
	for p.acceptOp(",") {
		if !p.startsExpr() {
			break
		}
		tu.Elts = append(tu.Elts, p.test())
	}
	return tu
}

// targetList parses a for-loop target: exprs (no comparisons, so that
// "in" ends it), several making a Tuple.
func (p *parser) targetList(stop string) Expr {
	start := p.tok().pos
	first := p.expr()
	if !p.isOp(",") {
		return first
	}
	tu := &Tuple{Pos: start, Elts: []Expr{first}}
	for p.acceptOp(",") {
		if p.isKw(stop) {
			break
		}
		tu.Elts = append(tu.Elts, p.expr())
	}
	return tu
}

// startsExpr tells whether the current token can begin an expression (to
// end a list after a trailing comma).
func (p *parser) startsExpr() bool {
	t := p.tok()
	switch t.kind {
	case tName, tInt, tFloat, tString:
		return true
	case tKeyword:
		switch t.text {
		case "None", "True", "False", "not", "lambda", "await", "yield":
			return true
		}
	case tOp:
		switch t.text {
		case "(", "[", "{", "-", "+", "~", "...", "*", "**":
			return true
		}
	}
	return false
}

// namedTest is a test; `:=` is rejected by the lexer.
func (p *parser) namedTest() Expr { return p.test() }

// test: or_test ['if' or_test 'else' test]
func (p *parser) test() Expr {
	p.enter()
	defer p.leave()
	t := p.tok()
	if t.kind == tKeyword && (t.text == "lambda" || t.text == "yield" || t.text == "await") {
		p.failAt(t.pos, "%s is not supported in TorchScript code", t.text)
	}
	start := p.tok().pos
	x := p.orTest()
	if p.isKw("if") {
		p.next()
		cond := p.orTest()
		if !p.acceptKw("else") {
			p.expected(`"else" in conditional expression`)
		}
		return &IfExp{Pos: start, Cond: cond, Then: x, Else: p.test()}
	}
	return x
}

func (p *parser) orTest() Expr  { return p.boolOp("or", p.andTest) }
func (p *parser) andTest() Expr { return p.boolOp("and", p.notTest) }

func (p *parser) boolOp(op string, sub func() Expr) Expr {
	start := p.tok().pos
	x := sub()
	if !p.isKw(op) {
		return x
	}
	b := &BoolOp{Pos: start, Op: op, Values: []Expr{x}}
	for p.acceptKw(op) {
		b.Values = append(b.Values, sub())
	}
	return b
}

func (p *parser) notTest() Expr {
	if t := p.tok(); t.kind == tKeyword && t.text == "not" {
		p.next()
		p.enter()
		defer p.leave()
		return &UnaryOp{Pos: t.pos, Op: "not", X: p.notTest()}
	}
	return p.comparison()
}

// compOp reads a comparison operator, if one is next.
func (p *parser) compOp() (string, bool) {
	t := p.tok()
	switch {
	case t.kind == tOp:
		switch t.text {
		case "<", ">", "==", ">=", "<=", "!=":
			p.next()
			return t.text, true
		}
	case t.kind == tKeyword && t.text == "in":
		p.next()
		return "in", true
	case t.kind == tKeyword && t.text == "is":
		p.next()
		if p.acceptKw("not") {
			return "is not", true
		}
		return "is", true
	case t.kind == tKeyword && t.text == "not" && p.peek(1).kind == tKeyword && p.peek(1).text == "in":
		p.next()
		p.next()
		return "not in", true
	}
	return "", false
}

func (p *parser) comparison() Expr {
	start := p.tok().pos
	x := p.expr()
	op, ok := p.compOp()
	if !ok {
		return x
	}
	c := &Compare{Pos: start, X: x}
	for ok {
		c.Ops = append(c.Ops, op)
		c.Ys = append(c.Ys, p.expr())
		op, ok = p.compOp()
	}
	return c
}

// binary levels, loosest first: | ^ & shifts arith term.
var binLevels = [][]string{
	{"|"}, {"^"}, {"&"}, {"<<", ">>"}, {"+", "-"}, {"*", "@", "/", "%", "//"},
}

// expr parses the bitwise-or level (Python's `expr`).
func (p *parser) expr() Expr { return p.binary(0) }

func (p *parser) binary(level int) Expr {
	if level == len(binLevels) {
		return p.factor()
	}
	start := p.tok().pos
	x := p.binary(level + 1)
	for {
		t := p.tok()
		if t.kind != tOp || !contains(binLevels[level], t.text) {
			return x
		}
		p.next()
		x = &BinOp{Pos: start, Op: t.text, X: x, Y: p.binary(level + 1)}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// factor: ('+'|'-'|'~') factor | power
func (p *parser) factor() Expr {
	t := p.tok()
	if t.kind == tOp && (t.text == "-" || t.text == "+" || t.text == "~") {
		p.next()
		p.enter()
		defer p.leave()
		if t.text == "-" {
			if n := p.tok(); (n.kind == tInt || n.kind == tFloat) && !(p.peek(1).kind == tOp && isTrailerOrPower(p.peek(1).text)) {
				p.next()
				return p.number(n, true, t.pos)
			}
		}
		return &UnaryOp{Pos: t.pos, Op: t.text, X: p.factor()}
	}
	return p.power()
}

// isTrailerOrPower says whether op after a literal binds tighter than a
// unary minus (so -2**2 stays -(2**2)).
func isTrailerOrPower(op string) bool {
	return op == "**" || op == "." || op == "(" || op == "["
}

// power: atom trailer* ['**' factor]
func (p *parser) power() Expr {
	start := p.tok().pos
	x := p.trailers(p.atom(), start)
	if t := p.tok(); t.kind == tOp && t.text == "**" {
		p.next()
		p.enter()
		defer p.leave()
		return &BinOp{Pos: start, Op: "**", X: x, Y: p.factor()}
	}
	return x
}

func (p *parser) trailers(x Expr, start Pos) Expr {
	for {
		t := p.tok()
		if t.kind != tOp {
			return x
		}
		switch t.text {
		case ".":
			p.next()
			n := p.tok()
			if n.kind != tName && n.kind != tKeyword {
				p.expected(`an attribute name after "."`)
			}
			p.next()
			x = &Attribute{Pos: start, X: x, Attr: n.text}
		case "(":
			p.next()
			x = p.call(x, t, start)
		case "[":
			p.next()
			x = &Subscript{Pos: start, X: x, Index: p.subscriptList()}
			p.expectOp("]", "to close the subscript")
		default:
			return x
		}
	}
}

func (p *parser) call(fn Expr, open token, start Pos) *Call {
	p.enter()
	defer p.leave()
	c := &Call{Pos: start, Func: fn}
	for !p.isOp(")") {
		t := p.tok()
		if t.kind == tOp && (t.text == "*" || t.text == "**") {
			p.failAt(t.pos, "%q arguments are not supported in TorchScript code", t.text)
		}
		if t.kind == tName && p.peek(1).kind == tOp && p.peek(1).text == "=" {
			p.next()
			p.next()
			for _, k := range c.Keywords {
				if k.Name == t.text {
					p.failAt(t.pos, "keyword argument %q repeated", t.text)
				}
			}
			c.Keywords = append(c.Keywords, &Keyword{Pos: t.pos, Name: t.text, Value: p.test()})
		} else {
			arg := p.test()
			if p.isKw("for") {
				p.failAt(p.tok().pos, "generator expressions are not supported")
			}
			if len(c.Keywords) > 0 {
				p.failAt(arg.At(), "positional argument follows keyword argument")
			}
			c.Args = append(c.Args, arg)
		}
		if !p.acceptOp(",") {
			break
		}
	}
	if !p.isOp(")") {
		p.expected(fmt.Sprintf(`"," or ")" in the call opened at %d:%d`, open.pos.Line, open.pos.Col))
	}
	p.next()
	return c
}

// subscriptList: subscript (, subscript)* [,] ; several (or a trailing
// comma) make a Tuple.
func (p *parser) subscriptList() Expr {
	p.enter()
	defer p.leave()
	start := p.tok().pos
	first := p.subscript()
	if !p.isOp(",") {
		return first
	}
	tu := &Tuple{Pos: start, Elts: []Expr{first}}
	for p.acceptOp(",") {
		if p.isOp("]") {
			break
		}
		tu.Elts = append(tu.Elts, p.subscript())
	}
	return tu
}

// subscript: test | [test] ':' [test] [':' [test]]
func (p *parser) subscript() Expr {
	t := p.tok()
	var lo Expr
	if !p.isOp(":") {
		lo = p.test()
		if !p.isOp(":") {
			return lo
		}
	}
	p.next()
	s := &Slice{Pos: t.pos, Lo: lo}
	if !p.isOp(":") && !p.isOp(",") && !p.isOp("]") {
		s.Hi = p.test()
	}
	if p.acceptOp(":") {
		if !p.isOp(",") && !p.isOp("]") {
			s.Step = p.test()
		}
	}
	return s
}

func (p *parser) atom() Expr {
	t := p.tok()
	switch t.kind {
	case tName:
		p.next()
		return &Name{Pos: t.pos, ID: t.text}
	case tInt, tFloat:
		p.next()
		return p.number(t, false, t.pos)
	case tString:
		return p.strings()
	case tKeyword:
		switch t.text {
		case "None":
			p.next()
			return &Const{Pos: t.pos, Kind: ConstNone}
		case "True", "False":
			p.next()
			return &Const{Pos: t.pos, Kind: ConstBool, Bool: t.text == "True"}
		case "lambda", "yield", "await":
			p.failAt(t.pos, "%s is not supported in TorchScript code", t.text)
		}
	case tOp:
		switch t.text {
		case "...":
			p.next()
			return &Const{Pos: t.pos, Kind: ConstEllipsis}
		case "(":
			p.next()
			return p.paren(t)
		case "[":
			p.next()
			return p.list(t)
		case "{":
			p.next()
			return p.dict(t)
		case "*":
			p.failAt(t.pos, "starred expressions are not supported")
		}
	}
	p.expected("an expression")
	return nil
}

func (p *parser) paren(open token) Expr {
	p.enter()
	defer p.leave()
	if p.acceptOp(")") {
		return &Tuple{Pos: open.pos}
	}
	first := p.test()
	if p.isKw("for") {
		p.failAt(p.tok().pos, "generator expressions are not supported")
	}
	if p.acceptOp(")") {
		return first
	}
	if !p.isOp(",") {
		p.expected(fmt.Sprintf(`"," or ")" in the parenthesis opened at %d:%d`, open.pos.Line, open.pos.Col))
	}
	tu := &Tuple{Pos: open.pos, Elts: []Expr{first}}
	for p.acceptOp(",") {
		if p.isOp(")") {
			break
		}
		tu.Elts = append(tu.Elts, p.test())
	}
	p.expectOp(")", fmt.Sprintf("to close the tuple opened at %d:%d", open.pos.Line, open.pos.Col))
	return tu
}

func (p *parser) list(open token) Expr {
	p.enter()
	defer p.leave()
	l := &List{Pos: open.pos}
	if p.acceptOp("]") {
		return l
	}
	first := p.test()
	if p.acceptKw("for") {
		target := p.targetList("in")
		p.checkTarget(target, "list comprehension")
		if !p.acceptKw("in") {
			p.expected(`"in" in list comprehension`)
		}
		iter := p.orTest()
		if p.isKw("if") || p.isKw("for") {
			p.failAt(p.tok().pos, "list comprehensions with %q clauses are not supported (a single for only)", p.tok().text)
		}
		p.expectOp("]", "to close the list comprehension")
		return &ListComp{Pos: open.pos, Elt: first, Target: target, Iter: iter}
	}
	l.Elts = append(l.Elts, first)
	for p.acceptOp(",") {
		if p.isOp("]") {
			break
		}
		l.Elts = append(l.Elts, p.test())
	}
	if !p.isOp("]") {
		p.expected(fmt.Sprintf(`"," or "]" in the list opened at %d:%d`, open.pos.Line, open.pos.Col))
	}
	p.next()
	return l
}

func (p *parser) dict(open token) Expr {
	p.enter()
	defer p.leave()
	d := &Dict{Pos: open.pos}
	for !p.isOp("}") {
		k := p.test()
		if !p.isOp(":") {
			if p.isOp(",") || p.isOp("}") {
				p.failAt(k.At(), "set displays are not supported (expected \":\" after a dict key)")
			}
			p.expected(`":" after dict key`)
		}
		p.next()
		d.Keys = append(d.Keys, k)
		d.Values = append(d.Values, p.test())
		if p.isKw("for") {
			p.failAt(p.tok().pos, "dict comprehensions are not supported")
		}
		if !p.acceptOp(",") {
			break
		}
	}
	if !p.isOp("}") {
		p.expected(fmt.Sprintf(`"," or "}" in the dict opened at %d:%d`, open.pos.Line, open.pos.Col))
	}
	p.next()
	return d
}

// strings joins adjacent string literals, as Python does.
func (p *parser) strings() Expr {
	first := p.tok()
	var sb strings.Builder
	for p.tok().kind == tString {
		t := p.next()
		if t.bad != "" {
			p.failAt(t.pos, "%s", t.bad)
		}
		sb.WriteString(t.str)
	}
	return &Const{Pos: first.pos, Kind: ConstString, Str: sb.String()}
}

// number converts a numeric literal; neg folds a leading minus into it.
func (p *parser) number(t token, neg bool, pos Pos) *Const {
	text := strings.ReplaceAll(t.text, "_", "")
	if t.kind == tFloat {
		v, err := strconv.ParseFloat(text, 64)
		if err != nil && !isRangeErr(err) { // out of range reads as inf or 0, as in Python
			p.failAt(t.pos, "invalid float literal %s", t.text)
		}
		if neg {
			v = -v
		}
		return &Const{Pos: pos, Kind: ConstFloat, Float: v}
	}
	base := 10
	if len(text) > 1 && text[0] == '0' {
		switch text[1] | 0x20 {
		case 'x':
			base = 16
		case 'o':
			base = 8
		case 'b':
			base = 2
		}
		if base != 10 {
			text = text[2:]
		}
	}
	u, err := strconv.ParseUint(text, base, 64)
	sign := ""
	if neg {
		sign = "-"
	}
	if err != nil || !neg && u > math.MaxInt64 || neg && u > 1<<63 {
		p.failAt(pos, "integer literal %s%s does not fit in int64", sign, t.text)
	}
	v := int64(u)
	if neg {
		v = -v // also right for 1<<63, which wraps to MinInt64
	}
	return &Const{Pos: pos, Kind: ConstInt, Int: v}
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}
