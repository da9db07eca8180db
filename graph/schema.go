package graph

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Argument is one parameter or return of a schema.
type Argument struct {
	Name      string
	Type      *Type
	Default   string // the default's source text, "" if none
	KwargOnly bool
	// N is the fixed length of a list type written int[2]; 0 if none.
	N int
	// Alias is the alias annotation ("a", "a!"), if any.
	Alias string
}

// Schema is a parsed operator schema, as PyTorch's FunctionSchema:
// "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor".
type Schema struct {
	Name      string // aten::add
	Overload  string // Tensor
	Arguments []Argument
	Returns   []Argument
	VarArgs   bool // "..." in the argument list
	VarRets   bool
}

func (s *Schema) String() string {
	var b strings.Builder
	b.WriteString(s.Name)
	if s.Overload != "" {
		b.WriteString("." + s.Overload)
	}
	b.WriteString("(")
	kw := false
	for i, a := range s.Arguments {
		if i > 0 {
			b.WriteString(", ")
		}
		if a.KwargOnly && !kw {
			b.WriteString("*, ")
			kw = true
		}
		b.WriteString(a.Type.String() + " " + a.Name)
		if a.Default != "" {
			b.WriteString("=" + a.Default)
		}
	}
	if s.VarArgs {
		if len(s.Arguments) > 0 {
			b.WriteString(", ")
		}
		b.WriteString("...")
	}
	b.WriteString(") -> ")
	if s.VarRets {
		b.WriteString("...")
	} else if len(s.Returns) == 1 && s.Returns[0].Type.Kind != TupleType {
		// A single tuple return needs its own parentheses: "-> ((Tensor, t))".
		b.WriteString(s.Returns[0].Type.String())
	} else {
		b.WriteString("(")
		for i, r := range s.Returns {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(r.Type.String())
		}
		b.WriteString(")")
	}
	return b.String()
}

var schemaCache sync.Map // string -> *Schema or error

// ParseSchema parses a schema string. Results are cached.
func ParseSchema(src string) (*Schema, error) {
	if v, ok := schemaCache.Load(src); ok {
		if err, isErr := v.(error); isErr {
			return nil, err
		}
		return v.(*Schema), nil
	}
	s, err := parseSchema(src)
	if err != nil {
		schemaCache.Store(src, err)
		return nil, err
	}
	schemaCache.Store(src, s)
	return s, nil
}

// MustParseSchema is ParseSchema for schemas written in Go source.
func MustParseSchema(src string) *Schema {
	s, err := ParseSchema(src)
	if err != nil {
		panic(err)
	}
	return s
}

func parseSchema(src string) (*Schema, error) {
	open := strings.IndexByte(src, '(')
	if open < 0 {
		return nil, fmt.Errorf("schema %q: missing '('", src)
	}
	s := &Schema{}
	name := strings.TrimSpace(src[:open])
	if i := strings.IndexByte(name, '.'); i >= 0 {
		s.Name, s.Overload = name[:i], name[i+1:]
		if s.Overload == "" {
			return nil, fmt.Errorf("schema %q: empty overload name", src)
		}
	} else {
		s.Name = name
	}
	if !isOpName(s.Name) || strings.ContainsFunc(s.Overload, func(r rune) bool { return r > 0x7f || !isIdentByte(byte(r)) }) {
		return nil, fmt.Errorf("schema %q: bad operator name %q", src, name)
	}
	close := matchParen(src, open)
	if close < 0 {
		return nil, fmt.Errorf("schema %q: unbalanced parentheses", src)
	}
	args, err := parseArgList(src[open+1:close], &s.VarArgs)
	if err != nil {
		return nil, fmt.Errorf("schema %q: %v", src, err)
	}
	s.Arguments = args
	rest := strings.TrimSpace(src[close+1:])
	if !strings.HasPrefix(rest, "->") {
		return nil, fmt.Errorf("schema %q: missing '->'", src)
	}
	rest = strings.TrimSpace(rest[2:])
	if rest == "" {
		return nil, fmt.Errorf("schema %q: missing returns after '->' (none is written \"()\")", src)
	}
	if strings.HasPrefix(rest, "(") && matchParen(rest, 0) == len(rest)-1 {
		// A parenthesised return list, unless it is a single tuple type
		// such as "(Tensor, Tensor)" which reads the same: both mean
		// several returns.
		rets, err := parseArgList(rest[1:len(rest)-1], &s.VarRets)
		if err != nil {
			return nil, fmt.Errorf("schema %q: returns: %v", src, err)
		}
		s.Returns = rets
	} else {
		rets, err := parseArgList(rest, &s.VarRets)
		if err != nil {
			return nil, fmt.Errorf("schema %q: returns: %v", src, err)
		}
		s.Returns = rets
	}
	return s, nil
}

// isOpName reports whether s is an operator name: identifiers joined by
// "::" (aten::add, prim::TupleIndex, quantized::conv2d).
func isOpName(s string) bool {
	for _, part := range strings.Split(s, "::") {
		if part == "" || strings.ContainsFunc(part, func(r rune) bool { return r > 0x7f || !isIdentByte(byte(r)) }) {
			return false
		}
	}
	return true
}

func matchParen(s string, open int) int {
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// splitTop splits s at commas outside brackets and quotes.
func splitTop(s string) []string {
	var parts []string
	depth, start := 0, 0
	inStr := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inStr != 0 {
			if c == '\\' {
				i++
			} else if c == inStr {
				inStr = 0
			}
			continue
		}
		switch c {
		case '"', '\'':
			inStr = c
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	if strings.TrimSpace(s[start:]) != "" || len(parts) > 0 {
		parts = append(parts, s[start:])
	}
	return parts
}

func parseArgList(s string, varargs *bool) ([]Argument, error) {
	var args []Argument
	kw := false
	for _, part := range splitTop(s) {
		part = strings.TrimSpace(part)
		switch part {
		case "":
			return nil, fmt.Errorf("empty argument")
		case "*":
			kw = true
			continue
		case "...":
			*varargs = true
			continue
		}
		var a Argument
		a.KwargOnly = kw
		if eq := indexTop(part, '='); eq >= 0 {
			a.Default = strings.TrimSpace(part[eq+1:])
			part = strings.TrimSpace(part[:eq])
			if a.Default == "" {
				return nil, fmt.Errorf("empty default in %q", part+"=")
			}
		}
		// The name is the last identifier after the type, unless the whole
		// thing is a type (returns may be unnamed).
		typ := part
		if sp := strings.LastIndexByte(part, ' '); sp >= 0 && !strings.ContainsAny(part[sp+1:], "()[]?") {
			typ, a.Name = strings.TrimSpace(part[:sp]), part[sp+1:]
		}
		t, n, alias, err := ParseSchemaType(typ)
		if err != nil {
			return nil, err
		}
		a.Type, a.N, a.Alias = t, n, alias
		args = append(args, a)
	}
	return args, nil
}

func indexTop(s string, c byte) int {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case c:
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}

// ParseSchemaType parses a type as schemas write it: Tensor, Tensor(a!),
// int[2], int[1]?, Scalar?, Tensor?[], Tensor(a!)[], t[](a!), t(c -> *),
// (Tensor, Tensor), Dict(str, t)(a), Future(t), class types
// (__torch__.torch.classes.x.Y). Type variables become Any. It returns
// the fixed list length and the alias annotation (the outermost one), if
// any.
func ParseSchemaType(s string) (t *Type, n int, alias string, err error) {
	sp := &schemaTypeParser{src: strings.TrimSpace(s)}
	t, n, alias, err = sp.parse()
	if err == nil && sp.pos != len(sp.src) {
		err = fmt.Errorf("bad type %q: unexpected %q", s, sp.src[sp.pos:])
	}
	if err != nil {
		return nil, 0, "", err
	}
	return t, n, alias, nil
}

type schemaTypeParser struct {
	src   string
	pos   int
	depth int
}

func (p *schemaTypeParser) skip() {
	for p.pos < len(p.src) && p.src[p.pos] == ' ' {
		p.pos++
	}
}

func (p *schemaTypeParser) accept(c byte) bool {
	p.skip()
	if p.pos < len(p.src) && p.src[p.pos] == c {
		p.pos++
		return true
	}
	return false
}

// annotation reads an alias annotation "(a!)", "(a -> *)", "(b|c)" after
// the '(' and returns its inside.
func (p *schemaTypeParser) annotation() (string, error) {
	end := strings.IndexByte(p.src[p.pos:], ')')
	if end < 0 {
		return "", fmt.Errorf("bad type %q: unterminated alias annotation", p.src)
	}
	a := strings.TrimSpace(p.src[p.pos : p.pos+end])
	p.pos += end + 1
	return a, nil
}

// schemaPrims maps named schema types; opaque ones (complex, enums, RRef)
// get a class type of their own so that they match nothing else.
var schemaPrims = map[string]*Type{
	"int": Int, "SymInt": Int, "float": Float, "bool": Bool, "str": Str, "Scalar": Number,
	"ScalarType": ScalarTyp, "Layout": Layout, "MemoryFormat": MemFormat, "Device": Device,
	"Generator": Generator, "NoneType": None, "Tensor": Tensor, "number": Number,
	"Any": Any, "AnyClassType": Any, "Storage": Any, "Stream": Any, "Capsule": Any,
	"AnyTupleType": Any, "AnyListType": Any, "QScheme": Int, "Dimname": Str, "ConstQuantizerPtr": Any,
}

func isTypeVar(name string) bool {
	if len(name) == 1 || name == "tVal" || name == "tKey" {
		return true
	}
	if name[0] != 't' {
		return false
	}
	_, err := strconv.Atoi(name[1:])
	return err == nil
}

func (p *schemaTypeParser) parse() (*Type, int, string, error) {
	p.depth++
	defer func() { p.depth-- }()
	if p.depth > 50 {
		return nil, 0, "", fmt.Errorf("type %q nested too deeply", p.src)
	}
	var t *Type
	var n int
	var alias string
	p.skip()
	switch {
	case p.accept('('):
		var elems []*Type
		for !p.accept(')') {
			e, _, _, err := p.parse()
			if err != nil {
				return nil, 0, "", err
			}
			elems = append(elems, e)
			if !p.accept(',') {
				if !p.accept(')') {
					return nil, 0, "", fmt.Errorf("bad tuple type %q", p.src)
				}
				break
			}
		}
		t = TupleOf(elems...)
	default:
		start := p.pos
		for p.pos < len(p.src) && (isIdentByte(p.src[p.pos]) || p.src[p.pos] == '.') {
			p.pos++
		}
		name := p.src[start:p.pos]
		switch name {
		case "":
			return nil, 0, "", fmt.Errorf("bad type %q: expected a type name at %q", p.src, p.src[p.pos:])
		case "Dict", "Future", "RRef", "Union", "Optional", "List":
			if (name == "RRef" || name == "Union") && !strings.HasPrefix(p.src[p.pos:], "(") {
				t = ClassOf(name) // as Type.String prints the opaque types
				break
			}
			if !p.accept('(') && !p.accept('[') {
				return nil, 0, "", fmt.Errorf("bad type %q: expected ( after %s", p.src, name)
			}
			var elems []*Type
			for {
				e, _, _, err := p.parse()
				if err != nil {
					return nil, 0, "", err
				}
				elems = append(elems, e)
				if !p.accept(',') {
					break
				}
			}
			if !p.accept(')') && !p.accept(']') {
				return nil, 0, "", fmt.Errorf("bad type %q: unterminated %s(...)", p.src, name)
			}
			switch {
			case name == "Dict" && len(elems) == 2:
				t = DictOf(elems[0], elems[1])
			case name == "Future" && len(elems) == 1:
				t = FutureOf(elems[0])
			case name == "Optional" && len(elems) == 1:
				t = OptionalOf(elems[0])
			case name == "List" && len(elems) == 1:
				t = ListOf(elems[0])
			case name == "RRef" || name == "Union":
				t = ClassOf(name) // opaque: unsupported here
			default:
				return nil, 0, "", fmt.Errorf("bad %s type %q", name, p.src)
			}
		default:
			if prim, ok := schemaPrims[name]; ok {
				t = prim
			} else if strings.HasPrefix(name, "__torch__.") || name == "complex" || name == "AnyEnumType" {
				t = ClassOf(name)
			} else if isTypeVar(name) {
				// Type variables (t, t1, tVal, ...) are Any, named so that
				// overload resolution can bind them.
				t = &Type{Kind: AnyType, Name: name}
			} else {
				return nil, 0, "", fmt.Errorf("unknown schema type %q", name)
			}
		}
	}
	// Postfix: an alias annotation, list brackets (with an optional fixed
	// length) and '?', in any order.
	for {
		p.skip()
		if p.pos >= len(p.src) {
			break
		}
		c := p.src[p.pos]
		if c == '(' {
			p.pos++
			a, err := p.annotation()
			if err != nil {
				return nil, 0, "", err
			}
			alias = a
		} else if c == '[' {
			end := strings.IndexByte(p.src[p.pos:], ']')
			if end < 0 {
				return nil, 0, "", fmt.Errorf("bad type %q: unterminated [", p.src)
			}
			num := strings.TrimSpace(p.src[p.pos+1 : p.pos+end])
			n = 0
			if num != "" {
				v, err := strconv.Atoi(num)
				if err != nil || v < 0 {
					return nil, 0, "", fmt.Errorf("bad list length in type %q", p.src)
				}
				n = v
			}
			p.pos += end + 1
			t = ListOf(t)
		} else if c == '?' {
			p.pos++
			t = OptionalOf(t)
		} else {
			break
		}
	}
	return t, n, alias, nil
}

// Matches reports whether n is a call of the schema: same op name, an
// input per argument (nodes carry all arguments positionally), each
// input's type acceptable for its argument, and as many outputs as
// returns. An int list argument written int[N] also accepts a single int,
// as TorchScript does. The schema is one written in Go source, so a
// malformed one panics, as with MustParseSchema; parse others with
// ParseSchema and use Schema.Matches.
func (n *Node) Matches(schema string) bool {
	return MustParseSchema(schema).Matches(n)
}

// Matches is Node.Matches for a parsed schema.
func (s *Schema) Matches(n *Node) bool {
	if n.Kind != s.Name {
		return false
	}
	if s.VarArgs {
		if len(n.Inputs) < len(s.Arguments) {
			return false
		}
	} else if len(n.Inputs) != len(s.Arguments) {
		return false
	}
	if !s.VarRets && len(s.Returns) != len(n.Outputs) {
		return false
	}
	for i, a := range s.Arguments {
		it := n.Inputs[i].Type
		if it.IsSubtypeOf(a.Type) {
			continue
		}
		if a.N > 0 && a.Type.Kind == ListType && it.Kind == IntType {
			continue
		}
		return false
	}
	return true
}
