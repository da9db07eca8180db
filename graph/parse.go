package graph

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gosr/gosr/ivalue"
)

// ParseOptions binds tensor constants. PyTorch prints large tensor
// constants as prim::Constant[value=<Tensor>]() and small ones inline
// (value= 1  1  1 [ CPUFloatType{3} ]); both are bound to supplied tensors,
// never to the rounded printed numbers.
type ParseOptions struct {
	// Tensors binds the i-th tensor constant (in printing order, see
	// TensorConstantNodes) to Tensors[i]. A constant bound by Named still
	// takes its position, so indices do not shift.
	Tensors []*ivalue.Tensor
	// Named binds by value debug name (without %); it takes precedence
	// over Tensors.
	Named map[string]*ivalue.Tensor
	// AllowUnboundTensors leaves unbound tensor constants as an empty
	// placeholder tensor (see IsUnboundTensor): enough to print or
	// transform a graph, an error to run it.
	AllowUnboundTensors bool
}

// ParseError is a syntax or semantic error in IR text.
type ParseError struct {
	Line, Col int // 1-based
	Msg       string
}

func (e *ParseError) Error() string { return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg) }

// IsUnboundTensor reports whether t is the placeholder Parse leaves for an
// unbound tensor constant under AllowUnboundTensors.
func IsUnboundTensor(t *ivalue.Tensor) bool {
	return t != nil && t.DType() == ivalue.Undefined && t.Storage() == nil
}

// printedTensor keeps the text PyTorch printed for a tensor constant, so
// the printer reproduces it as long as the node still holds tensor t.
type printedTensor struct {
	t    *ivalue.Tensor
	text string
}

// Parse reads a graph in the text form PyTorch 1.13 prints
// (print(scripted.graph)), including `with prim::fork_0 = graph(...)`
// subgraph sections. opts may be nil.
func Parse(src string, opts *ParseOptions) (*Graph, error) {
	if opts == nil {
		opts = &ParseOptions{}
	}
	p := &parser{src: src, opts: opts}
	g, err := p.parseGraph()
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos < len(p.src) {
		return nil, p.errf(p.pos, "expected end of input after the graph, got %q", p.snippet())
	}
	if len(opts.Tensors) > p.nTensors {
		return nil, &ParseError{Line: 1, Col: 1, Msg: fmt.Sprintf("%d tensors supplied but the graph has %d tensor constants", len(opts.Tensors), p.nTensors)}
	}
	return g, nil
}

type parser struct {
	src      string
	pos      int
	opts     *ParseOptions
	nTensors int // tensor constants seen so far, across subgraphs
	depth    int // nesting of types, literals and subgraphs, bounded against stack exhaustion
}

const maxDepth = 200

// graphState is what one graph (or subgraph) being parsed needs.
type graphState struct {
	g       *Graph
	scopes  []map[string]*Value // innermost last
	defined map[string]int      // every name defined in the graph -> position, for "defined twice"
	groups  []*Node             // nodes printed as kind_N, resolved by `with` sections
	maxNum  int                 // largest numeric debug name, to keep fresh IDs from colliding
}

func (p *parser) lineCol(pos int) (int, int) {
	if pos > len(p.src) {
		pos = len(p.src)
	}
	line := 1 + strings.Count(p.src[:pos], "\n")
	col := pos - strings.LastIndexByte(p.src[:pos], '\n')
	return line, col
}

func (p *parser) errf(pos int, format string, args ...any) error {
	l, c := p.lineCol(pos)
	return &ParseError{Line: l, Col: c, Msg: fmt.Sprintf(format, args...)}
}

// snippet describes what is at the current position, for error messages.
func (p *parser) snippet() string {
	if p.pos >= len(p.src) {
		return "end of input"
	}
	s := p.src[p.pos:]
	if i := strings.IndexAny(s, "\n"); i >= 0 {
		s = s[:i]
	}
	if len(s) > 20 {
		s = s[:20] + "..."
	}
	return s
}

// skipSpace skips blanks, newlines and # comments.
func (p *parser) skipSpace() {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ' ', '\t', '\r', '\n':
			p.pos++
		case '#':
			for p.pos < len(p.src) && p.src[p.pos] != '\n' {
				p.pos++
			}
		default:
			return
		}
	}
}

// skipBlanks skips spaces and tabs only (not newlines or comments).
func (p *parser) skipBlanks() {
	for p.pos < len(p.src) && (p.src[p.pos] == ' ' || p.src[p.pos] == '\t' || p.src[p.pos] == '\r') {
		p.pos++
	}
}

func (p *parser) peek(s string) bool {
	p.skipSpace()
	return strings.HasPrefix(p.src[p.pos:], s)
}

func (p *parser) accept(s string) bool {
	if p.peek(s) {
		p.pos += len(s)
		return true
	}
	return false
}

func (p *parser) expect(s, what string) error {
	if !p.accept(s) {
		return p.errf(p.pos, "expected %q %s, got %q", s, what, p.snippet())
	}
	return nil
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// word reads [A-Za-z0-9_]* (plus dots if dots).
func (p *parser) word(dots bool) string {
	p.skipSpace()
	start := p.pos
	for p.pos < len(p.src) && (isIdentByte(p.src[p.pos]) || dots && p.src[p.pos] == '.') {
		p.pos++
	}
	return p.src[start:p.pos]
}

// peekWord reports whether the next word is exactly w (not a prefix of a
// longer identifier).
func (p *parser) peekWord(w string) bool {
	if !p.peek(w) {
		return false
	}
	end := p.pos + len(w)
	return end >= len(p.src) || !isIdentByte(p.src[end])
}

func (p *parser) enter(pos int) error {
	p.depth++
	if p.depth > maxDepth {
		return p.errf(pos, "nesting deeper than %d", maxDepth)
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

func (p *parser) parseGraph() (*Graph, error) {
	if err := p.enter(p.pos); err != nil {
		return nil, err
	}
	defer p.leave()
	gs := &graphState{g: New(), defined: map[string]int{}, maxNum: -1}
	gs.scopes = []map[string]*Value{{}}
	if !p.peekWord("graph") {
		return nil, p.errf(p.pos, "expected \"graph\", got %q", p.snippet())
	}
	p.pos += len("graph")
	if err := p.expect("(", "after graph"); err != nil {
		return nil, err
	}
	if err := p.parseParams(gs, gs.g.Block); err != nil {
		return nil, err
	}
	if err := p.expect(":", "after the graph inputs"); err != nil {
		return nil, err
	}
	if err := p.parseStmts(gs, gs.g.Block, "return"); err != nil {
		return nil, err
	}
	p.pos += len("return")
	if err := p.parseReturns(gs, gs.g.Block); err != nil {
		return nil, err
	}
	for i, n := range gs.groups {
		want := fmt.Sprintf("%s_%d", n.Kind, i)
		if !p.peekWord("with") {
			return nil, p.errf(p.pos, "expected \"with %s = graph(...)\" for the subgraph of %s, got %q", want, want, p.snippet())
		}
		p.pos += len("with")
		pos := p.pos
		if k := p.kind(); k != want {
			return nil, p.errf(pos, "expected subgraph name %s, got %q", want, k)
		}
		if err := p.expect("=", "after the subgraph name"); err != nil {
			return nil, err
		}
		sub, err := p.parseGraph()
		if err != nil {
			return nil, err
		}
		n.Attrs = append([]Attr{{Name: "Subgraph", Value: ivalue.Object(sub)}}, n.Attrs...)
	}
	// Keep IDs of values created later from printing like a parsed
	// numeric name.
	if gs.g.ids <= gs.maxNum {
		gs.g.ids = gs.maxNum + 1
	}
	return gs.g, nil
}

// parseParams reads "%a : T, %b : U)" (the closing paren included) into
// b's parameters.
func (p *parser) parseParams(gs *graphState, b *Block) error {
	if p.accept(")") {
		return nil
	}
	for {
		pos := p.pos
		name, err := p.valueName()
		if err != nil {
			return err
		}
		t, err := p.typeAnnotation(name)
		if err != nil {
			return err
		}
		v := b.AddInput(name, t)
		if err := p.define(gs, v, pos); err != nil {
			return err
		}
		if p.accept(",") {
			continue
		}
		return p.expect(")", "after a parameter")
	}
}

func (p *parser) typeAnnotation(name string) (*Type, error) {
	if !p.accept(":") {
		return nil, p.errf(p.pos, "expected \":\" and a type for %%%s, got %q", name, p.snippet())
	}
	return p.parseType()
}

// valueName reads %name and returns name.
func (p *parser) valueName() (string, error) {
	p.skipSpace()
	if p.pos >= len(p.src) || p.src[p.pos] != '%' {
		return "", p.errf(p.pos, "expected a value (%%name), got %q", p.snippet())
	}
	p.pos++
	start := p.pos
	for p.pos < len(p.src) && (isIdentByte(p.src[p.pos]) || p.src[p.pos] == '.') {
		p.pos++
	}
	if p.pos == start {
		return "", p.errf(start, "expected a value name after %%, got %q", p.snippet())
	}
	return p.src[start:p.pos], nil
}

func (p *parser) define(gs *graphState, v *Value, pos int) error {
	if prev, ok := gs.defined[v.Name]; ok {
		l, c := p.lineCol(prev)
		return p.errf(pos, "value %%%s defined twice (first at %d:%d)", v.Name, l, c)
	}
	gs.defined[v.Name] = pos
	gs.scopes[len(gs.scopes)-1][v.Name] = v
	if n, err := strconv.Atoi(v.Name); err == nil && n > gs.maxNum && n < 1<<30 {
		gs.maxNum = n
	}
	return nil
}

func (p *parser) use(gs *graphState) (*Value, error) {
	p.skipSpace()
	pos := p.pos
	name, err := p.valueName()
	if err != nil {
		return nil, err
	}
	for i := len(gs.scopes) - 1; i >= 0; i-- {
		if v, ok := gs.scopes[i][name]; ok {
			return v, nil
		}
	}
	if prev, ok := gs.defined[name]; ok {
		l, c := p.lineCol(prev)
		return nil, p.errf(pos, "value %%%s is not visible here (defined inside a block at %d:%d)", name, l, c)
	}
	return nil, p.errf(pos, "undefined value %%%s (values must be defined before use)", name)
}

// parseUses reads "(%a, %b)" including both parens.
func (p *parser) parseUses(gs *graphState, what string) ([]*Value, error) {
	if err := p.expect("(", what); err != nil {
		return nil, err
	}
	var vs []*Value
	if p.accept(")") {
		return vs, nil
	}
	for {
		v, err := p.use(gs)
		if err != nil {
			return nil, err
		}
		vs = append(vs, v)
		if p.accept(",") {
			continue
		}
		return vs, p.expect(")", "after a value in "+what)
	}
}

func (p *parser) parseReturns(gs *graphState, b *Block) error {
	vs, err := p.parseUses(gs, "(the returned values)")
	if err != nil {
		return err
	}
	for _, v := range vs {
		b.AddOutput(v)
	}
	return nil
}

// kind reads a qualified op name such as aten::add or prim::fork_0.
func (p *parser) kind() string {
	p.skipSpace()
	start := p.pos
	for p.pos < len(p.src) && isIdentByte(p.src[p.pos]) {
		p.pos++
	}
	if !strings.HasPrefix(p.src[p.pos:], "::") || p.pos == start {
		return p.src[start:p.pos]
	}
	p.pos += 2
	ns := p.pos
	for p.pos < len(p.src) && isIdentByte(p.src[p.pos]) {
		p.pos++
	}
	if p.pos == ns {
		return p.src[start:p.pos]
	}
	return p.src[start:p.pos]
}

// parseStmts reads nodes into b until the terminator keyword ("return" or
// "->"), which it leaves unread.
func (p *parser) parseStmts(gs *graphState, b *Block, end string) error {
	for {
		p.skipSpace()
		if p.pos >= len(p.src) {
			return p.errf(p.pos, "expected a node or %q, got end of input", end)
		}
		if end == "return" && p.peekWord("return") || end == "->" && p.peek("->") {
			return nil
		}
		if err := p.parseNode(gs, b); err != nil {
			return err
		}
	}
}

type outDecl struct {
	name string
	t    *Type
	pos  int
}

func (p *parser) parseNode(gs *graphState, b *Block) error {
	var outs []outDecl
	if p.peek("%") {
		for {
			pos := p.pos
			name, err := p.valueName()
			if err != nil {
				return err
			}
			t, err := p.typeAnnotation(name)
			if err != nil {
				return err
			}
			outs = append(outs, outDecl{name, t, pos})
			if !p.accept(",") {
				break
			}
		}
	}
	if !p.accept("=") {
		if len(outs) == 0 {
			return p.errf(p.pos, "expected a node (\"%%v : T = kind(...)\" or \" = kind(...)\"), got %q", p.snippet())
		}
		return p.errf(p.pos, "expected \"=\" after the outputs, got %q", p.snippet())
	}
	p.skipSpace()
	kpos := p.pos
	kind := p.kind()
	if !strings.Contains(kind, "::") || strings.HasSuffix(kind, "::") {
		return p.errf(kpos, "expected an op name such as aten::add, got %q", kind)
	}
	n := gs.g.NewNode(kind, nil, 0)
	for _, o := range outs {
		v := n.AddOutput(o.t)
		v.Name = o.name
	}
	if p.accept("[") {
		if err := p.parseAttrs(gs, n); err != nil {
			return err
		}
	}
	ins, err := p.parseUses(gs, "(the inputs of "+kind+")")
	if err != nil {
		return err
	}
	for _, v := range ins {
		n.AddInput(v)
	}
	p.skipBlanks()
	// Traced graphs print the module scope: ", scope: __module.fc1".
	if strings.HasPrefix(p.src[p.pos:], ", scope: ") {
		p.pos += len(", scope: ")
		for p.pos < len(p.src) && p.src[p.pos] != ' ' && p.src[p.pos] != '\n' && p.src[p.pos] != '#' {
			p.pos++
		}
		p.skipBlanks()
	}
	if p.pos < len(p.src) && p.src[p.pos] == '#' {
		start := p.pos
		for p.pos < len(p.src) && p.src[p.pos] != '\n' {
			p.pos++
		}
		n.SourceRange = strings.TrimSpace(strings.TrimPrefix(p.src[start:p.pos], "#"))
	}
	b.Append(n)
	if base, ok := strings.CutSuffix(kind, fmt.Sprintf("_%d", len(gs.groups))); ok && !strings.HasSuffix(base, "::") && !hasAttr(n, "Subgraph") {
		// kind_N names the N-th subgraph, printed after the graph.
		n.Kind = base
		gs.groups = append(gs.groups, n)
	}
	if err := p.parseBlocks(gs, n); err != nil {
		return err
	}
	// Outputs become visible after the node's blocks, as in PyTorch.
	for i, o := range outs {
		if err := p.define(gs, n.Outputs[i], o.pos); err != nil {
			return err
		}
	}
	return nil
}

func hasAttr(n *Node, name string) bool {
	_, ok := n.Attr(name)
	return ok
}

func (p *parser) parseBlocks(gs *graphState, n *Node) error {
	for {
		if !p.peek("block") {
			return nil
		}
		pos := p.pos
		w := p.word(false)
		if w != fmt.Sprintf("block%d", len(n.Blocks)) {
			return p.errf(pos, "expected block%d of %s, got %q", len(n.Blocks), n.Kind, w)
		}
		if err := p.enter(pos); err != nil {
			return err
		}
		sb := n.AddBlock()
		gs.scopes = append(gs.scopes, map[string]*Value{})
		if err := p.expect("(", "after "+w); err != nil {
			return err
		}
		if err := p.parseParams(gs, sb); err != nil {
			return err
		}
		if err := p.expect(":", "after the block parameters"); err != nil {
			return err
		}
		if err := p.parseStmts(gs, sb, "->"); err != nil {
			return err
		}
		p.pos += len("->")
		if err := p.parseReturns(gs, sb); err != nil {
			return err
		}
		gs.scopes = gs.scopes[:len(gs.scopes)-1]
		p.leave()
	}
}

func (p *parser) parseAttrs(gs *graphState, n *Node) error {
	for {
		pos := p.pos
		name := p.word(false)
		if name == "" {
			return p.errf(p.pos, "expected an attribute name in %s[...], got %q", n.Kind, p.snippet())
		}
		if hasAttr(n, name) {
			return p.errf(pos, "attribute %s given twice", name)
		}
		if err := p.expect("=", "after attribute "+name); err != nil {
			return err
		}
		var v ivalue.IValue
		var err error
		if n.Kind == KindConstant && name == "value" && len(n.Outputs) == 1 {
			v, err = p.constValue(gs, n, n.Outputs[0].Type)
		} else {
			v, err = p.literal()
		}
		if err != nil {
			return err
		}
		n.Attrs = append(n.Attrs, Attr{Name: name, Value: v})
		if p.accept(",") {
			continue
		}
		return p.expect("]", "after the attributes of "+n.Kind)
	}
}

// constValue reads the value of a prim::Constant whose output has type t.
func (p *parser) constValue(gs *graphState, n *Node, t *Type) (ivalue.IValue, error) {
	start := p.pos // inline tensors start with blanks that belong to their text
	tt := t
	if tt.Kind == OptionalType && !p.peekWord("None") {
		tt = tt.Elem()
	}
	if tt.Kind == TensorType {
		p.pos = start
		return p.tensorConst(gs, n, tt, start)
	}
	v, err := p.typedLiteral(t)
	if err != nil {
		return v, err
	}
	return v, nil
}

// tensorConst reads a tensor constant's printed text (<Tensor>, {0.5} or
// an inline tensor) and binds the node to a supplied tensor.
func (p *parser) tensorConst(gs *graphState, n *Node, t *Type, pos int) (ivalue.IValue, error) {
	text, err := p.rawTensorText()
	if err != nil {
		return ivalue.IValue{}, err
	}
	idx := p.nTensors
	p.nTensors++
	name := n.Outputs[0].Name
	var tensor *ivalue.Tensor
	if tn, ok := p.opts.Named[name]; ok && tn != nil {
		tensor = tn
	} else if idx < len(p.opts.Tensors) && p.opts.Tensors[idx] != nil {
		tensor = p.opts.Tensors[idx]
	}
	if tensor == nil {
		if !p.opts.AllowUnboundTensors {
			return ivalue.IValue{}, p.errf(pos, "unbound tensor constant %%%s (tensor constant #%d): supply it in ParseOptions.Named or Tensors", name, idx)
		}
		tensor = &ivalue.Tensor{}
	} else if err := tensorFits(tensor, t); err != nil {
		return ivalue.IValue{}, p.errf(pos, "tensor bound to %%%s does not fit its type %s: %v", name, typeText(t), err)
	}
	if gs.g.printed == nil {
		gs.g.printed = map[*Node]printedTensor{}
	}
	gs.g.printed[n] = printedTensor{t: tensor, text: text}
	return ivalue.FromTensor(tensor), nil
}

// tensorFits checks a bound tensor against the refinements of its type.
func tensorFits(x *ivalue.Tensor, t *Type) error {
	if t.DType != ivalue.Undefined && x.DType() != t.DType {
		return fmt.Errorf("dtype %s, expected %s", x.DType(), t.DType)
	}
	if t.Sizes != nil {
		if len(t.Sizes) != x.Dim() {
			return fmt.Errorf("sizes %v, expected %d dims", x.Sizes(), len(t.Sizes))
		}
		for i, s := range t.Sizes {
			if s >= 0 && x.Sizes()[i] != s {
				return fmt.Errorf("sizes %v, expected %s", x.Sizes(), typeText(t))
			}
		}
	}
	return nil
}

// rawTensorText reads up to the ']' closing the attribute list, keeping
// brackets balanced (inline tensors print as "... [ CPUFloatType{3} ]" and
// "(1,.,.) = ...").
func (p *parser) rawTensorText() (string, error) {
	start := p.pos
	var stack []byte
	for i := p.pos; i < len(p.src); i++ {
		c := p.src[i]
		switch c {
		case '(', '[', '{':
			stack = append(stack, c)
		case ')', ']', '}':
			if len(stack) == 0 {
				if c == ']' {
					text := p.src[start:i]
					if strings.TrimSpace(text) == "" {
						return "", p.errf(start, "expected a tensor value, got %q", p.snippet())
					}
					p.pos = i
					return text, nil
				}
				return "", p.errf(i, "unbalanced %q in tensor constant", string(c))
			}
			open := stack[len(stack)-1]
			if open == '(' && c != ')' || open == '[' && c != ']' || open == '{' && c != '}' {
				return "", p.errf(i, "unbalanced %q in tensor constant", string(c))
			}
			stack = stack[:len(stack)-1]
		case ',':
			if len(stack) == 0 { // another attribute follows
				if strings.TrimSpace(p.src[start:i]) == "" {
					return "", p.errf(start, "expected a tensor value, got %q", p.snippet())
				}
				p.pos = i
				return p.src[start:i], nil
			}
		case '\n':
			if len(stack) == 0 {
				return "", p.errf(i, "expected ']' to end the tensor constant")
			}
		}
	}
	return "", p.errf(len(p.src), "unterminated tensor constant")
}

// number reads a numeric literal (or inf, nan with an optional sign) and
// returns its text and whether it is an integer literal.
func (p *parser) number() (string, bool, error) {
	p.skipSpace()
	start := p.pos
	i := p.pos
	if i < len(p.src) && (p.src[i] == '-' || p.src[i] == '+') {
		i++
	}
	for _, w := range []string{"inf", "nan"} {
		if strings.HasPrefix(p.src[i:], w) && (i+3 >= len(p.src) || !isIdentByte(p.src[i+3])) {
			p.pos = i + 3
			return p.src[start:p.pos], false, nil
		}
	}
	digits := 0
	isInt := true
	for i < len(p.src) && p.src[i] >= '0' && p.src[i] <= '9' {
		i++
		digits++
	}
	if i < len(p.src) && p.src[i] == '.' {
		isInt = false
		i++
		for i < len(p.src) && p.src[i] >= '0' && p.src[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return "", false, p.errf(start, "expected a number, got %q", p.snippet())
	}
	if i < len(p.src) && (p.src[i] == 'e' || p.src[i] == 'E') {
		j := i + 1
		if j < len(p.src) && (p.src[j] == '-' || p.src[j] == '+') {
			j++
		}
		k := j
		for k < len(p.src) && p.src[k] >= '0' && p.src[k] <= '9' {
			k++
		}
		if k == j {
			return "", false, p.errf(i, "expected exponent digits in number")
		}
		isInt = false
		i = k
	}
	p.pos = i
	return p.src[start:i], isInt, nil
}

func parseFloatText(s string) (float64, error) {
	neg := strings.HasPrefix(s, "-")
	switch strings.TrimLeft(s, "+-") {
	case "inf":
		if neg {
			return math.Inf(-1), nil
		}
		return math.Inf(1), nil
	case "nan":
		if neg {
			return math.Copysign(math.NaN(), -1), nil
		}
		return math.NaN(), nil
	}
	return strconv.ParseFloat(s, 64)
}

// typedLiteral reads a constant's value as IValue::repr prints it for
// type t.
func (p *parser) typedLiteral(t *Type) (ivalue.IValue, error) {
	p.skipSpace()
	pos := p.pos
	if err := p.enter(pos); err != nil {
		return ivalue.IValue{}, err
	}
	defer p.leave()
	bad := func(what string) error {
		return p.errf(pos, "constant of type %s: expected %s, got %q", typeText(t), what, p.snippet())
	}
	switch t.Kind {
	case IntType, LayoutType, ScalarTypeType, MemoryFormatType:
		s, isInt, err := p.number()
		if err != nil || !isInt {
			p.pos = pos
			return ivalue.IValue{}, bad("an integer")
		}
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return ivalue.IValue{}, p.errf(pos, "constant %s does not fit type %s (64-bit int)", s, typeText(t))
		}
		return ivalue.FromInt(i), nil
	case FloatType:
		s, _, err := p.number()
		if err != nil {
			p.pos = pos
			return ivalue.IValue{}, bad("a float")
		}
		f, err := parseFloatText(s)
		if err != nil {
			return ivalue.IValue{}, p.errf(pos, "constant %s does not fit type float", s)
		}
		return ivalue.FromDouble(f), nil
	case NumberType:
		s, isInt, err := p.number()
		if err != nil {
			p.pos = pos
			return ivalue.IValue{}, bad("a number")
		}
		if isInt {
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return ivalue.FromInt(i), nil
			}
		}
		f, err := parseFloatText(s)
		if err != nil {
			return ivalue.IValue{}, p.errf(pos, "constant %s does not fit type Scalar", s)
		}
		return ivalue.FromDouble(f), nil
	case BoolType:
		switch {
		case p.acceptWord("True"), p.acceptWord("1"):
			return ivalue.FromBool(true), nil
		case p.acceptWord("False"), p.acceptWord("0"):
			return ivalue.FromBool(false), nil
		}
		return ivalue.IValue{}, bad("0, 1, True or False")
	case StringType:
		if !p.peek("\"") {
			return ivalue.IValue{}, bad("a quoted string")
		}
		s, err := p.quoted()
		if err != nil {
			return ivalue.IValue{}, err
		}
		return ivalue.FromString(s), nil
	case DeviceType:
		if !p.peek("\"") {
			return ivalue.IValue{}, bad("a quoted device such as \"cpu\"")
		}
		s, err := p.quoted()
		if err != nil {
			return ivalue.IValue{}, err
		}
		return ivalue.FromDevice(s), nil
	case NoneType:
		if p.acceptWord("None") {
			return ivalue.None(), nil
		}
		return ivalue.IValue{}, bad("None")
	case OptionalType:
		if p.acceptWord("None") {
			return ivalue.None(), nil
		}
		return p.typedLiteral(t.Elem())
	case ListType, DictType:
		if p.peek("annotate(") {
			// Empty containers print as annotate(List[int], []); the
			// annotation repeats the node's type.
			p.pos += len("annotate(")
			if err := p.skipAnnotation(); err != nil {
				return ivalue.IValue{}, err
			}
			v, err := p.typedLiteral(t)
			if err != nil {
				return v, err
			}
			return v, p.expect(")", "to end annotate(...)")
		}
	}
	switch t.Kind {
	case ListType:
		if !p.accept("[") {
			return ivalue.IValue{}, bad("a list [...]")
		}
		items := []ivalue.IValue{}
		if p.accept("]") {
			return ivalue.NewList(items...), nil
		}
		for {
			v, err := p.typedLiteral(t.Elem())
			if err != nil {
				return v, err
			}
			items = append(items, v)
			if p.accept(",") {
				continue
			}
			if err := p.expect("]", "to end the list constant"); err != nil {
				return ivalue.IValue{}, err
			}
			return ivalue.NewList(items...), nil
		}
	case TupleType:
		if !p.accept("(") {
			return ivalue.IValue{}, bad("a tuple (...)")
		}
		items := []ivalue.IValue{}
		for i := 0; ; i++ {
			if p.accept(")") {
				break
			}
			if i >= len(t.Elems) {
				return ivalue.IValue{}, p.errf(p.pos, "constant does not fit type %s: more than %d elements", typeText(t), len(t.Elems))
			}
			v, err := p.typedLiteral(t.Elems[i])
			if err != nil {
				return v, err
			}
			items = append(items, v)
			if !p.accept(",") {
				if err := p.expect(")", "to end the tuple constant"); err != nil {
					return ivalue.IValue{}, err
				}
				break
			}
		}
		if len(items) != len(t.Elems) {
			return ivalue.IValue{}, p.errf(pos, "constant does not fit type %s: %d elements, expected %d", typeText(t), len(items), len(t.Elems))
		}
		return ivalue.NewTuple(items...), nil
	case DictType:
		if !p.accept("{") {
			return ivalue.IValue{}, bad("a dict {...}")
		}
		d := &ivalue.Dict{}
		for !p.accept("}") {
			k, err := p.typedLiteral(t.Elems[0])
			if err != nil {
				return k, err
			}
			if err := p.expect(":", "after a dict key"); err != nil {
				return ivalue.IValue{}, err
			}
			v, err := p.typedLiteral(t.Elems[1])
			if err != nil {
				return v, err
			}
			d.Keys = append(d.Keys, k)
			d.Values = append(d.Values, v)
			if !p.accept(",") {
				if err := p.expect("}", "to end the dict constant"); err != nil {
					return ivalue.IValue{}, err
				}
				break
			}
		}
		return ivalue.DictOf(d), nil
	}
	return ivalue.IValue{}, p.errf(pos, "a constant of type %s is not supported", typeText(t))
}

// skipAnnotation skips a Python type annotation up to and including the
// ',' that follows it.
func (p *parser) skipAnnotation() error {
	depth := 0
	for i := p.pos; i < len(p.src) && p.src[i] != '\n'; i++ {
		switch p.src[i] {
		case '[', '(':
			depth++
		case ']', ')':
			depth--
			if depth < 0 {
				return p.errf(i, "unbalanced %q in annotate(...)", string(p.src[i]))
			}
		case ',':
			if depth == 0 {
				p.pos = i + 1
				return nil
			}
		}
	}
	return p.errf(p.pos, "expected \"annotate(Type, value)\"")
}

func (p *parser) acceptWord(w string) bool {
	if p.peekWord(w) {
		p.pos += len(w)
		return true
	}
	return false
}

// literal reads an untyped attribute value: number, string, None,
// True/False, list or tuple.
func (p *parser) literal() (ivalue.IValue, error) {
	p.skipSpace()
	pos := p.pos
	if err := p.enter(pos); err != nil {
		return ivalue.IValue{}, err
	}
	defer p.leave()
	switch {
	case p.peek("\""):
		s, err := p.quoted()
		return ivalue.FromString(s), err
	case p.acceptWord("None"):
		return ivalue.None(), nil
	case p.acceptWord("True"):
		return ivalue.FromBool(true), nil
	case p.acceptWord("False"):
		return ivalue.FromBool(false), nil
	case p.peek("["), p.peek("("):
		open := p.src[p.pos]
		p.pos++
		closer := "]"
		if open == '(' {
			closer = ")"
		}
		items := []ivalue.IValue{}
		for !p.accept(closer) {
			v, err := p.literal()
			if err != nil {
				return v, err
			}
			items = append(items, v)
			if !p.accept(",") {
				if err := p.expect(closer, "to end the attribute value"); err != nil {
					return ivalue.IValue{}, err
				}
				break
			}
		}
		if open == '(' {
			return ivalue.NewTuple(items...), nil
		}
		return ivalue.NewList(items...), nil
	}
	s, isInt, err := p.number()
	if err != nil {
		return ivalue.IValue{}, p.errf(pos, "expected an attribute value (number, string, list), got %q", p.snippet())
	}
	if isInt {
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return ivalue.IValue{}, p.errf(pos, "integer %s does not fit 64 bits", s)
		}
		return ivalue.FromInt(i), nil
	}
	f, err := parseFloatText(s)
	if err != nil {
		return ivalue.IValue{}, p.errf(pos, "bad float %s", s)
	}
	return ivalue.FromDouble(f), nil
}

// quoted reads a string as c10::printQuotedString writes it: C escapes and
// three-character octal codes. Bytes >= 0x80 come out of PyTorch as
// "octal" digits below '0' (it divides a signed char); they are decoded
// back to the original byte.
func (p *parser) quoted() (string, error) {
	p.skipSpace()
	start := p.pos
	p.pos++ // opening quote
	var b strings.Builder
	for {
		if p.pos >= len(p.src) || p.src[p.pos] == '\n' {
			return "", p.errf(start, "unterminated string")
		}
		c := p.src[p.pos]
		p.pos++
		if c == '"' {
			return b.String(), nil
		}
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		if p.pos >= len(p.src) {
			return "", p.errf(start, "unterminated string")
		}
		e := p.src[p.pos]
		p.pos++
		switch e {
		case '\\', '\'', '"', '?':
			b.WriteByte(e)
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 't':
			b.WriteByte('\t')
		case 'v':
			b.WriteByte('\v')
		default:
			if p.pos+2 <= len(p.src) && e >= '.' && e <= '7' && isOctalish(p.src[p.pos]) && isOctalish(p.src[p.pos+1]) {
				// Signed digits: PyTorch's codes for negative chars wrap back to the byte.
				v := (int(e)-'0')*64 + (int(p.src[p.pos])-'0')*8 + int(p.src[p.pos+1]) - '0'
				b.WriteByte(byte(v))
				p.pos += 2
				continue
			}
			return "", p.errf(p.pos-2, "bad escape \\%c in string", e)
		}
	}
}

// isOctalish accepts '0'-'7' and the characters ')'..'/' that PyTorch
// writes for negative (non-ASCII) chars.
func isOctalish(c byte) bool { return c >= ')' && c <= '7' }

// parseType reads a type as PyTorch's graph printer writes it.
func (p *parser) parseType() (*Type, error) {
	p.skipSpace()
	pos := p.pos
	if err := p.enter(pos); err != nil {
		return nil, err
	}
	defer p.leave()
	var t *Type
	if p.accept("(") {
		var elems []*Type
		for !p.accept(")") {
			e, err := p.parseType()
			if err != nil {
				return nil, err
			}
			elems = append(elems, e)
			if !p.accept(",") {
				if err := p.expect(")", "to end the tuple type"); err != nil {
					return nil, err
				}
				break
			}
		}
		t = TupleOf(elems...)
	} else {
		name := p.word(true)
		switch name {
		case "":
			return nil, p.errf(pos, "expected a type, got %q", p.snippet())
		case "Dict":
			if err := p.expect("(", "after Dict"); err != nil {
				return nil, err
			}
			k, err := p.parseType()
			if err != nil {
				return nil, err
			}
			if err := p.expect(",", "between the Dict key and value types"); err != nil {
				return nil, err
			}
			v, err := p.parseType()
			if err != nil {
				return nil, err
			}
			if err := p.expect(")", "to end the Dict type"); err != nil {
				return nil, err
			}
			t = DictOf(k, v)
		case "Future":
			closer := "]"
			if !p.accept("[") {
				if err := p.expect("(", "after Future"); err != nil {
					return nil, err
				}
				closer = ")"
			}
			e, err := p.parseType()
			if err != nil {
				return nil, err
			}
			if err := p.expect(closer, "to end the Future type"); err != nil {
				return nil, err
			}
			t = FutureOf(e)
		default:
			if prim, ok := irPrimTypes[name]; ok {
				t = prim
				break
			}
			if name == "Tensor" {
				t = &Type{Kind: TensorType}
			} else if dt, err := ivalue.DTypeFromTorchName(name); err == nil && dt.TorchName() == name {
				t = &Type{Kind: TensorType, DType: dt}
			} else if name == "Function" || strings.HasPrefix(name, "__torch__.") && !strings.HasSuffix(name, ".") && !strings.Contains(name, "..") {
				// Function (the type of prim::Constant[name="relu"]) is
				// kept as a class type: nothing else needs it.
				t = ClassOf(name)
				break
			} else {
				return nil, p.errf(pos, "unknown type %q", name)
			}
			if p.pos < len(p.src) && p.src[p.pos] == '(' {
				p.pos++
				if err := p.tensorRefinement(t); err != nil {
					return nil, err
				}
			}
			if t.Kind == TensorType && t.DType == ivalue.Undefined && t.Sizes == nil && t.RequiresGrad == nil && t.Device == "" {
				t = Tensor
			}
		}
	}
	// Postfix: T[] is a list, T? an optional (both may repeat). Each
	// nests t one level more, counted against maxDepth like brackets:
	// printing and comparing types recurse.
	for nested := p.depth; p.pos < len(p.src); nested++ {
		if strings.HasPrefix(p.src[p.pos:], "[]") || p.src[p.pos] == '?' {
			if nested >= maxDepth {
				return nil, p.errf(p.pos, "type nested deeper than %d", maxDepth)
			}
		}
		if strings.HasPrefix(p.src[p.pos:], "[]") {
			p.pos += 2
			t = ListOf(t)
		} else if p.src[p.pos] == '?' {
			p.pos++
			t = OptionalOf(t)
		} else {
			break
		}
	}
	return t, nil
}

var irPrimTypes = map[string]*Type{
	"int": Int, "float": Float, "bool": Bool, "str": Str, "NoneType": None,
	"Device": Device, "Scalar": Number, "number": Number, "Any": Any, "Layout": Layout,
	"MemoryFormat": MemFormat, "ScalarType": ScalarTyp, "Generator": Generator,
}

// tensorRefinement reads the inside of Float(3, *, strides=[4, 1],
// requires_grad=0, device=cpu) after the '('.
func (p *parser) tensorRefinement(t *Type) error {
	sawKey := false
	var sizes []int
	for !p.accept(")") {
		p.skipSpace()
		pos := p.pos
		switch {
		case p.accept("*"):
			if sawKey {
				return p.errf(pos, "tensor type: sizes must come before strides/requires_grad/device")
			}
			sizes = append(sizes, -1)
		case p.accept("strides="):
			sawKey = true
			if err := p.expect("[", "after strides="); err != nil {
				return err
			}
			strides := []int{}
			for !p.accept("]") {
				if p.accept("*") {
					strides = append(strides, -1)
				} else {
					n, err := p.smallInt()
					if err != nil {
						return err
					}
					strides = append(strides, n)
				}
				if !p.accept(",") {
					if err := p.expect("]", "to end the strides"); err != nil {
						return err
					}
					break
				}
			}
			t.Strides = strides
		case p.accept("requires_grad="):
			sawKey = true
			var rg bool
			switch {
			case p.acceptWord("0"):
			case p.acceptWord("1"):
				rg = true
			default:
				return p.errf(p.pos, "tensor type: expected requires_grad=0 or 1, got %q", p.snippet())
			}
			t.RequiresGrad = &rg
		case p.accept("device="):
			sawKey = true
			start := p.pos
			for p.pos < len(p.src) && (isIdentByte(p.src[p.pos]) || p.src[p.pos] == ':') {
				p.pos++
			}
			if p.pos == start {
				return p.errf(start, "tensor type: expected a device after device=, got %q", p.snippet())
			}
			t.Device = p.src[start:p.pos]
		default:
			if sawKey {
				return p.errf(pos, "tensor type: expected strides=, requires_grad= or device=, got %q", p.snippet())
			}
			n, err := p.smallInt()
			if err != nil {
				return p.errf(pos, "tensor type: expected a size, *, strides=, requires_grad= or device=, got %q", p.snippet())
			}
			sizes = append(sizes, n)
		}
		if !p.accept(",") {
			if err := p.expect(")", "to end the tensor type"); err != nil {
				return err
			}
			break
		}
	}
	if sizes != nil {
		t.Sizes = sizes
	}
	return nil
}

// smallInt reads a non-negative int that fits comfortably in an int.
func (p *parser) smallInt() (int, error) {
	p.skipSpace()
	start := p.pos
	for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
		p.pos++
	}
	n, err := strconv.Atoi(p.src[start:p.pos])
	if err != nil || n > 1<<40 {
		p.pos = start
		return 0, p.errf(start, "expected a non-negative integer, got %q", p.snippet())
	}
	return n, nil
}

// TensorConstantNodes returns the prim::Constant nodes holding tensors in
// the order ParseOptions.Tensors binds them: printing order, the graph's
// own nodes (depth first) before its subgraphs'.
func TensorConstantNodes(g *Graph) []*Node {
	var out []*Node
	var subs []*Graph
	g.Walk(func(n *Node) {
		if n.Kind == KindConstant {
			if v, ok := n.Attr("value"); ok && v.IsTensor() {
				out = append(out, n)
			}
		}
		if sg := Subgraph(n); sg != nil {
			subs = append(subs, sg)
		}
	})
	for _, sg := range subs {
		out = append(out, TensorConstantNodes(sg)...)
	}
	return out
}

// Subgraph returns the graph held in n's Subgraph attribute (prim::fork,
// fusion groups), or nil.
func Subgraph(n *Node) *Graph {
	v, ok := n.Attr("Subgraph")
	if !ok {
		return nil
	}
	sg, _ := v.Ref().(*Graph)
	return sg
}
