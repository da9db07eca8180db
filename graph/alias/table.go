package alias

import (
	"slices"
	"strings"
	"sync"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/graph/schemas"
)

// opInfo is what the analysis knows of one op name from PyTorch's
// schemas (package schemas' list), read when a node of that op is first
// analysed: reading all four thousand schemas up front would cost every
// program milliseconds for ops it never meets.
type opInfo struct {
	// known: the op has schemas gosr reads (some overload uses no type
	// gosr never carries; see unsupported).
	known bool
	// annotated: at least one of those overloads is alias-annotated; when
	// none is, the op is fresh: its outputs never share memory with its
	// inputs.
	annotated bool
	// generator: an overload takes a Generator (the op draws random
	// numbers).
	generator bool
	// overloads: for annotated ops, the overloads' schemas in
	// registration order, each read and parsed once.
	overloads func() []parsedOverload
}

func (o *opInfo) fresh() bool { return o.known && !o.annotated }

// torchvisionNamespaces are the namespaces of the ops torchvision
// registers. The analysis has modelled only PyTorch's own ops: these stay
// unknown (conservative: aliasing and writing whatever they touch), as
// they were before the schema list included torchvision.
var torchvisionNamespaces = []string{"torchvision::", "image::", "video_reader::"}

// schemasByOp groups the schema list by op name, in registration order,
// on first use (not at init).
var schemasByOp = sync.OnceValue(func() map[string][]string { return groupByOp(schemas.Lines()) })

func groupByOp(lines []string) map[string][]string {
	by := make(map[string][]string, len(lines)/2)
	for _, l := range lines {
		if !hasAnyPrefix(l, torchvisionNamespaces) {
			name := opName(l)
			by[name] = append(by[name], l)
		}
	}
	return by
}

var (
	opInfos sync.Map // op name with schemas -> *opInfo
	noInfo  = &opInfo{}
)

// infoOf returns what the analysis knows of op kind. Only ops in the
// schema list are cached: graphs may name any number of other kinds.
func infoOf(kind string) *opInfo {
	if o, ok := opInfos.Load(kind); ok {
		return o.(*opInfo)
	}
	lines, ok := schemasByOp()[kind]
	if !ok {
		return noInfo
	}
	o, _ := opInfos.LoadOrStore(kind, readOp(lines))
	return o.(*opInfo)
}

// readOp reads an op's schemas. Schemas with types gosr never carries
// are left out; an op all of whose schemas are is unknown.
func readOp(lines []string) *opInfo {
	o := &opInfo{}
	var supported []string
	for _, l := range lines {
		if unsupported(l) {
			continue
		}
		supported = append(supported, l)
		// Only a schema with an annotation or a Generator has anything
		// to read here.
		if open, _ := findAnnotation(l); open >= 0 || strings.Contains(l, "Generator") {
			_, annotated, gen := parseAlias(l)
			o.annotated = o.annotated || annotated
			o.generator = o.generator || gen
		}
	}
	o.known = len(supported) > 0
	if o.annotated {
		o.overloads = sync.OnceValue(func() []parsedOverload { return parseOverloads(supported) })
	}
	return o
}

// parseOverloads reads the alias behaviour of an op's overloads and
// parses their schemas (nil where graph.ParseSchema rejects one: such an
// overload is matched by no node, and overloads falls back on the
// others).
func parseOverloads(lines []string) []parsedOverload {
	all := aliasOf(lines)
	ps := make([]parsedOverload, len(all))
	for i := range all {
		s, err := graph.ParseSchema(all[i].schema)
		if err != nil {
			s = nil
		}
		ps[i] = parsedOverload{&all[i], s}
	}
	return ps
}

// aliasOf reads the alias behaviour of an op's overloads.
func aliasOf(lines []string) []opAlias {
	out := make([]opAlias, len(lines))
	for i, l := range lines {
		out[i], _, _ = parseAlias(l)
	}
	return out
}

// opName is a schema's op name without its overload: "aten::add" for
// "aten::add.Tensor(...) -> Tensor".
func opName(text string) string {
	head, _, _ := strings.Cut(text, "(")
	if i := strings.Index(head, "::"); i >= 0 {
		if j := strings.IndexByte(head[i+2:], '.'); j >= 0 {
			return head[:i+2+j]
		}
	}
	return head
}

// unsupported reports whether text uses a type gosr graphs never carry
// (and graph.ParseSchema does not read): complex, RRef, Future,
// AnyEnumType or a TorchScript class (__torch__.x). It is the regular
// expression \b(complex|RRef|Future|AnyEnumType|__torch__\.[\w.]+)\b,
// in one pass over text's words (TestUnsupported holds it to the regexp).
func unsupported(text string) bool {
	for i := 0; i < len(text); {
		if !isWordByte(text[i]) {
			i++
			continue
		}
		j := i
		for j < len(text) && isWordByte(text[j]) {
			j++
		}
		switch text[i:j] {
		case "complex", "RRef", "Future", "AnyEnumType":
			return true
		case "__torch__":
			// \.[\w.]+\b: a dot, then a run of word bytes and dots
			// holding a word byte.
			if j < len(text) && text[j] == '.' {
				for k := j + 1; k < len(text) && (isWordByte(text[k]) || text[k] == '.'); k++ {
					if isWordByte(text[k]) {
						return true
					}
				}
			}
		}
		i = j
	}
	return false
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// findAnnotation finds the first alias annotation in s: (a), (a!),
// (a -> *), (a|b), (*); that is, the first match of
// \(([a-z*|]+(?: -> [a-z*|]+)?!?)\). It returns the indices of its
// parentheses, or -1.
func findAnnotation(s string) (open, close int) {
	for open = strings.IndexByte(s, '('); open >= 0; {
		if end := matchAnnotation(s, open+1); end >= 0 {
			return open, end
		}
		next := strings.IndexByte(s[open+1:], '(')
		if next < 0 {
			break
		}
		open += 1 + next
	}
	return -1, -1
}

// matchAnnotation matches [a-z*|]+(?: -> [a-z*|]+)?!?\) at s[i:] and
// returns the index of the closing parenthesis, or -1. The set's
// characters exclude ' ', '!' and ')', so the greedy match never needs to
// back off.
func matchAnnotation(s string, i int) int {
	i = skipSet(s, i)
	if i < 0 {
		return -1
	}
	if strings.HasPrefix(s[i:], " -> ") {
		if i = skipSet(s, i+len(" -> ")); i < 0 {
			return -1
		}
	}
	if i < len(s) && s[i] == '!' {
		i++
	}
	if i < len(s) && s[i] == ')' {
		return i
	}
	return -1
}

// skipSet skips [a-z*|]+ at s[i:]: the index after it, or -1 if empty.
func skipSet(s string, i int) int {
	j := i
	for j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || s[j] == '*' || s[j] == '|') {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// stripAnnotations removes every alias annotation: Tensor(a!) -> Tensor,
// t[](a) -> t[].
func stripAnnotations(s string) string {
	var b strings.Builder
	for {
		open, close := findAnnotation(s)
		if open < 0 {
			if b.Len() == 0 {
				return s
			}
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:open])
		s = s[close+1:]
	}
}

// parseAlias reads one schema's text: its alias behaviour (the arguments each return may point to, those a
// returned list's elements may point to, whether a return is a wildcard
// (*), the arguments written (!) and those that escape into the wildcard
// set (a -> *)), whether any argument or return is annotated and whether
// an argument is a Generator.
func parseAlias(text string) (m opAlias, annotated, takesGenerator bool) {
	_, rest, _ := strings.Cut(text, "(")
	argsText, retsText := rest, ""
	if i := strings.LastIndex(rest, ") -> "); i >= 0 {
		argsText, retsText = rest[:i], rest[i+len(") -> "):]
	}
	var args []string
	for _, a := range splitTop(argsText) {
		if a != "*" && a != "..." {
			args = append(args, a)
		}
	}
	retsText = strings.TrimSpace(retsText)
	var rets []string
	switch {
	case strings.HasPrefix(retsText, "(") && strings.HasSuffix(retsText, ")"):
		rets = splitTop(retsText[1 : len(retsText)-1])
	case retsText != "":
		rets = []string{retsText}
	}

	argSets := make([]*annotation, len(args))
	for i, a := range args {
		decl, _, _ := strings.Cut(a, "=")
		if typ, _, ok := cutLast(decl, " "); ok && strings.Contains(typ, "Generator") {
			takesGenerator = true
		}
		st := parseAnnotation(decl)
		argSets[i] = st
		if st == nil {
			continue
		}
		annotated = true
		if st.write {
			m.writes = append(m.writes, i)
		}
		if slices.Contains(st.after, "*") && !slices.Contains(st.before, "*") {
			m.escapes = append(m.escapes, i)
		}
	}
	points, elems, wild := make([][]int, len(rets)), make([][]int, len(rets)), make([]bool, len(rets))
	anyPoints, anyElems, anyWild := false, false, false
	for r, ret := range rets {
		st := parseAnnotation(ret)
		if st == nil {
			continue
		}
		annotated = true
		elem := strings.Contains(ret, ")[]") && !strings.HasSuffix(strings.TrimRight(ret, " \t\n"), ")")
		if slices.Contains(st.before, "*") {
			wild[r], anyWild = true, true
		}
		for i, a := range argSets {
			if a == nil || !a.sharesSetWith(st) {
				continue
			}
			if elem {
				elems[r], anyElems = append(elems[r], i), true
			} else {
				points[r], anyPoints = append(points[r], i), true
			}
		}
	}
	// nil where no return has any, as the analysis and the golden table
	// expect.
	if anyPoints {
		m.points = points
	}
	if anyElems {
		m.elems = elems
	}
	if anyWild {
		m.wild = wild
	}
	m.schema = stripAnnotations(text)
	return m, annotated, takesGenerator
}

// annotation is one alias annotation: the sets before and after "->"
// (the same when there is no arrow) and whether it writes (!).
type annotation struct {
	before, after []string
	write         bool
}

func parseAnnotation(s string) *annotation {
	open, close := findAnnotation(s)
	if open < 0 {
		return nil
	}
	a := s[open+1 : close]
	st := &annotation{write: strings.HasSuffix(a, "!")}
	a = strings.TrimRight(a, "!")
	before, after, ok := strings.Cut(a, " -> ")
	if !ok {
		after = before
	}
	st.before, st.after = strings.Split(before, "|"), strings.Split(after, "|")
	return st
}

// sharesSetWith reports whether the argument annotation a and the return
// annotation r name a common alias set other than the wildcard.
func (a *annotation) sharesSetWith(r *annotation) bool {
	for _, s := range a.before {
		if s != "*" && slices.Contains(r.before, s) {
			return true
		}
	}
	return false
}

// splitTop splits s at the commas outside brackets, trimming each part.
func splitTop(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	if strings.TrimSpace(s[start:]) != "" {
		parts = append(parts, s[start:])
	}
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return parts
}

// cutLast is strings.Cut at the last sep.
func cutLast(s, sep string) (before, after string, found bool) {
	if i := strings.LastIndex(s, sep); i >= 0 {
		return s[:i], s[i+len(sep):], true
	}
	return s, "", false
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
