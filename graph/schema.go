package graph

import (
	"fmt"
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
	b.WriteString(") -> ")
	if len(s.Returns) == 1 {
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
	} else {
		s.Name = name
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
	if strings.HasPrefix(rest, "(") && matchParen(rest, 0) == len(rest)-1 {
		// A parenthesised return list, unless it is a single tuple type
		// such as "(Tensor, Tensor)" which reads the same: both mean
		// several returns.
		rets, err := parseArgList(rest[1:len(rest)-1], &s.VarRets)
		if err != nil {
			return nil, fmt.Errorf("schema %q: returns: %v", src, err)
		}
		s.Returns = rets
	} else if rest != "" {
		rets, err := parseArgList(rest, &s.VarRets)
		if err != nil {
			return nil, fmt.Errorf("schema %q: returns: %v", src, err)
		}
		s.Returns = rets
	}
	return s, nil
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
// int[2], int[1]?, Scalar?, Tensor?[], (Tensor, Tensor), Dict(str, Tensor),
// t (type variables become Any). It returns the fixed list length and the
// alias annotation, if any.
func ParseSchemaType(s string) (t *Type, n int, alias string, err error) {
	s = strings.TrimSpace(s)
	if strings.HasSuffix(s, "?") {
		inner, n, alias, err := ParseSchemaType(s[:len(s)-1])
		if err != nil {
			return nil, 0, "", err
		}
		return OptionalOf(inner), n, alias, nil
	}
	if strings.HasSuffix(s, "]") {
		open := strings.LastIndexByte(s, '[')
		if open < 0 {
			return nil, 0, "", fmt.Errorf("bad type %q", s)
		}
		inner, _, alias, err := ParseSchemaType(s[:open])
		if err != nil {
			return nil, 0, "", err
		}
		if num := s[open+1 : len(s)-1]; num != "" {
			fmt.Sscan(num, &n)
		}
		return ListOf(inner), n, alias, nil
	}
	if strings.HasPrefix(s, "(") {
		close := matchParen(s, 0)
		if close != len(s)-1 {
			return nil, 0, "", fmt.Errorf("bad tuple type %q", s)
		}
		var elems []*Type
		for _, p := range splitTop(s[1:close]) {
			e, _, _, err := ParseSchemaType(p)
			if err != nil {
				return nil, 0, "", err
			}
			elems = append(elems, e)
		}
		return TupleOf(elems...), 0, "", nil
	}
	base, rest := s, ""
	if i := strings.IndexByte(s, '('); i >= 0 {
		base, rest = s[:i], s[i:]
	}
	switch base {
	case "Tensor":
		if rest != "" {
			alias = strings.Trim(rest, "()")
		}
		return Tensor, 0, alias, nil
	case "Dict":
		parts := splitTop(rest[1 : len(rest)-1])
		if len(parts) != 2 {
			return nil, 0, "", fmt.Errorf("bad dict type %q", s)
		}
		k, _, _, err := ParseSchemaType(parts[0])
		if err != nil {
			return nil, 0, "", err
		}
		v, _, _, err := ParseSchemaType(parts[1])
		if err != nil {
			return nil, 0, "", err
		}
		return DictOf(k, v), 0, "", nil
	case "Future":
		e, _, _, err := ParseSchemaType(rest[1 : len(rest)-1])
		if err != nil {
			return nil, 0, "", err
		}
		return FutureOf(e), 0, "", nil
	}
	if rest != "" {
		alias = strings.Trim(rest, "()")
	}
	switch base {
	case "int", "SymInt":
		return Int, 0, alias, nil
	case "float":
		return Float, 0, alias, nil
	case "bool":
		return Bool, 0, alias, nil
	case "str":
		return Str, 0, alias, nil
	case "Scalar":
		return Number, 0, alias, nil
	case "ScalarType":
		return ScalarTyp, 0, alias, nil
	case "Layout":
		return Layout, 0, alias, nil
	case "MemoryFormat":
		return MemFormat, 0, alias, nil
	case "Device":
		return Device, 0, alias, nil
	case "Generator":
		return Generator, 0, alias, nil
	case "NoneType":
		return None, 0, alias, nil
	case "Any", "t", "t1", "t2", "tVal", "tKey", "AnyClassType", "Storage", "Stream":
		return Any, 0, alias, nil
	}
	if len(base) == 1 { // other type variables
		return Any, 0, alias, nil
	}
	return nil, 0, "", fmt.Errorf("unknown schema type %q", s)
}

// Matches reports whether n is a call of the schema: same op name, an
// input per argument (nodes carry all arguments positionally), each
// input's type acceptable for its argument, and as many outputs as
// returns. An int list argument written int[N] also accepts a single int,
// as TorchScript does.
func (n *Node) Matches(schema string) bool {
	s, err := ParseSchema(schema)
	if err != nil {
		panic(fmt.Sprintf("graph: bad schema in Matches: %v", err))
	}
	return s.Matches(n)
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
