package graph

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/gosr/gosr/ivalue"
)

// String prints g as PyTorch 1.13 prints a graph, without the source
// comments: Parse(g.String()) gives back an equivalent graph. Duplicate or
// unprintable debug names are made unique/legal so the text always parses.
func (g *Graph) String() string {
	var b strings.Builder
	pr := &printer{b: &b, names: uniqueNames(g)}
	b.WriteString("graph(")
	pr.params(g.Block, ",\n      ")
	b.WriteString("):\n")
	for _, n := range g.Block.Nodes {
		pr.node(n, 1)
	}
	b.WriteString("  return (")
	pr.uses(g.Block.Return.Inputs)
	b.WriteString(")\n")
	for i, n := range pr.groups {
		fmt.Fprintf(&b, "with %s_%d = %s", n.Kind, i, Subgraph(n).String())
	}
	return b.String()
}

type printer struct {
	b      *strings.Builder
	names  map[*Value]string
	groups []*Node // nodes with a subgraph, printed as kind_N and a `with` section
}

func (pr *printer) name(v *Value) string {
	if v == nil {
		return "%<nil>"
	}
	if s, ok := pr.names[v]; ok {
		return "%" + s
	}
	return "%" + sanitizeName(v.DebugName())
}

func (pr *printer) params(b *Block, sep string) {
	for i, v := range b.Param.Outputs {
		if i > 0 {
			pr.b.WriteString(sep)
		}
		pr.b.WriteString(pr.name(v) + " : " + typeText(v.Type))
	}
}

func (pr *printer) uses(vs []*Value) {
	for i, v := range vs {
		if i > 0 {
			pr.b.WriteString(", ")
		}
		pr.b.WriteString(pr.name(v))
	}
}

func indent(b *strings.Builder, level int) {
	for i := 0; i < level; i++ {
		b.WriteString("  ")
	}
}

func (pr *printer) node(n *Node, level int) {
	b := pr.b
	indent(b, level)
	for i, o := range n.Outputs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(pr.name(o) + " : " + typeText(o.Type))
	}
	b.WriteString(" = ")
	attrs := n.Attrs
	if Subgraph(n) != nil {
		fmt.Fprintf(b, "%s_%d", n.Kind, len(pr.groups))
		pr.groups = append(pr.groups, n)
		attrs = nil
		for _, a := range n.Attrs {
			if a.Name != "Subgraph" {
				attrs = append(attrs, a)
			}
		}
	} else {
		b.WriteString(n.Kind)
	}
	if len(attrs) > 0 {
		b.WriteString("[")
		for i, a := range attrs {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(a.Name + "=")
			if n.Kind == KindConstant && a.Name == "value" {
				var t *Type
				if len(n.Outputs) == 1 {
					t = n.Outputs[0].Type
				}
				b.WriteString(constText(n, a.Value, t))
			} else {
				b.WriteString(reprText(a.Value, n, nil))
			}
		}
		b.WriteString("]")
	}
	b.WriteString("(")
	pr.uses(n.Inputs)
	b.WriteString(")\n")
	for i, sb := range n.Blocks {
		indent(b, level+1)
		fmt.Fprintf(b, "block%d(", i)
		pr.params(sb, ", ")
		b.WriteString("):\n")
		for _, m := range sb.Nodes {
			pr.node(m, level+2)
		}
		indent(b, level+2)
		b.WriteString("-> (")
		pr.uses(sb.Return.Inputs)
		b.WriteString(")\n")
	}
}

// constText prints a prim::Constant's value: scalars bool/int/float/str
// as PyTorch stores them in typed attributes (a bool prints 0/1), other
// values as IValue::repr.
func constText(n *Node, v ivalue.IValue, t *Type) string {
	if v.Kind() == ivalue.KindBool {
		if v.Bool() {
			return "1"
		}
		return "0"
	}
	return reprText(v, n, t)
}

// reprText prints v as c10::IValue::repr (with PyTorch's tensor attribute
// printing for tensors). t, when known, is v's static type: empty lists
// and dicts print it as annotate(List[int], []).
func reprText(v ivalue.IValue, n *Node, t *Type) string {
	for t != nil && t.Kind == OptionalType {
		t = t.Elem()
	}
	elem := func(i int) *Type {
		if t != nil && i < len(t.Elems) {
			return t.Elems[i]
		}
		return nil
	}
	switch v.Kind() {
	case ivalue.KindNone:
		return "None"
	case ivalue.KindBool:
		if v.Bool() {
			return "True"
		}
		return "False"
	case ivalue.KindInt:
		return strconv.FormatInt(v.Int(), 10)
	case ivalue.KindDouble:
		return formatDouble(v.Double())
	case ivalue.KindString, ivalue.KindDevice:
		return quoteString(v.Str())
	case ivalue.KindTensor:
		return tensorText(n, v.Tensor())
	case ivalue.KindList, ivalue.KindTuple:
		var items []ivalue.IValue
		if v.List() != nil {
			items = v.List().Items
		}
		parts := make([]string, len(items))
		for i, it := range items {
			if v.Kind() == ivalue.KindList {
				parts[i] = reprText(it, nil, elem(0))
			} else {
				parts[i] = reprText(it, nil, elem(i))
			}
		}
		if v.Kind() == ivalue.KindList {
			if len(parts) == 0 && t != nil && t.Kind == ListType {
				return "annotate(" + annotationText(t) + ", [])"
			}
			return "[" + strings.Join(parts, ", ") + "]"
		}
		if len(parts) == 1 {
			return "(" + parts[0] + ",)"
		}
		return "(" + strings.Join(parts, ", ") + ")"
	case ivalue.KindDict:
		d := v.Dict()
		if (d == nil || len(d.Keys) == 0) && t != nil && t.Kind == DictType {
			return "annotate(" + annotationText(t) + ",{})"
		}
		if d == nil {
			return "{}"
		}
		parts := make([]string, 0, len(d.Keys))
		for i := range d.Keys {
			if i < len(d.Values) {
				parts = append(parts, reprText(d.Keys[i], nil, elem(0))+": "+reprText(d.Values[i], nil, elem(1)))
			}
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	if _, ok := v.Ref().(*Graph); ok {
		return "<Graph>"
	}
	return "<IValue>"
}

// tensorText prints a tensor attribute: the text it was parsed from while
// the node still holds that tensor, else PyTorch's form for one element
// ({0.5}) and <Tensor> otherwise (PyTorch would print up to 10 elements
// inline; <Tensor> parses back the same way).
func tensorText(n *Node, t *ivalue.Tensor) string {
	if n != nil && n.g != nil {
		if pt, ok := n.g.printed[n]; ok && pt.t == t {
			return pt.text
		}
	}
	if t == nil || IsUnboundTensor(t) || t.Numel() != 1 || t.DType().Size() == 0 || t.Storage() == nil {
		return "<Tensor>"
	}
	x := t.Float64s()[0]
	if t.DType().IsFloat() {
		return "{" + formatC(x, 6) + "}"
	}
	return "{" + strconv.FormatInt(int64(x), 10) + "}"
}

// formatDouble prints a float as IValue::repr does: integral values below
// 1e10 as "2." (or "-0."), others with 17 significant digits (%.17g).
func formatDouble(d float64) string {
	switch {
	case math.IsNaN(d):
		if math.Signbit(d) {
			return "-nan"
		}
		return "nan"
	case math.IsInf(d, 1):
		return "inf"
	case math.IsInf(d, -1):
		return "-inf"
	}
	normal := d == 0 || math.Abs(d) >= 0x1p-1022
	if normal && math.Abs(d) < 1e10 {
		if i := int64(d); float64(i) == d {
			if i == 0 && math.Signbit(d) {
				return "-0."
			}
			return strconv.FormatInt(i, 10) + "."
		}
	}
	return formatC(d, 17)
}

// formatC is C's %.<prec>g for finite d.
func formatC(d float64, prec int) string {
	if math.IsNaN(d) {
		return "nan"
	}
	if math.IsInf(d, 0) {
		if d > 0 {
			return "inf"
		}
		return "-inf"
	}
	e := strconv.FormatFloat(d, 'e', prec-1, 64)
	i := strings.LastIndexByte(e, 'e')
	exp, _ := strconv.Atoi(e[i+1:])
	if exp < -4 || exp >= prec {
		return trimZeros(e[:i]) + e[i:]
	}
	return trimZeros(strconv.FormatFloat(d, 'f', prec-1-exp, 64))
}

func trimZeros(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// quoteString is c10::printQuotedString: C escapes, other unprintable
// bytes as three "octal" digits computed on a signed char, as PyTorch
// does (so bytes >= 0x80 give digits below '0').
func quoteString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\':
			b.WriteString(`\\`)
		case '\'':
			b.WriteString(`\'`)
		case '"':
			b.WriteString(`\"`)
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\v':
			b.WriteString(`\v`)
		default:
			if c >= 0x20 && c < 0x7f {
				b.WriteByte(c)
				continue
			}
			v := int(int8(c))
			d2 := v % 8
			v /= 8
			d1 := v % 8
			v /= 8
			b.WriteByte('\\')
			b.WriteByte(byte('0' + v))
			b.WriteByte(byte('0' + d1))
			b.WriteByte(byte('0' + d2))
		}
	}
	b.WriteByte('"')
	return b.String()
}

// typeText prints t as PyTorch's graph printer does. It differs from
// Type.String where the graph printer differs from schemas: Future[T],
// one-element tuples "(int)", and tensor refinements printed only when
// known ("Float", "Float(3, 4, strides=[4, 1], requires_grad=0, device=cpu)").
func typeText(t *Type) string {
	if t == nil {
		return "Any"
	}
	elem := func(i int) string {
		if i < len(t.Elems) {
			return typeText(t.Elems[i])
		}
		return "Any"
	}
	switch t.Kind {
	case TensorType:
		return tensorTypeText(t)
	case ListType:
		return elem(0) + "[]"
	case OptionalType:
		return elem(0) + "?"
	case FutureType:
		return "Future[" + elem(0) + "]"
	case DictType:
		return "Dict(" + elem(0) + ", " + elem(1) + ")"
	case TupleType:
		parts := make([]string, len(t.Elems))
		for i := range t.Elems {
			parts[i] = elem(i)
		}
		return "(" + strings.Join(parts, ", ") + ")"
	case ClassType:
		if t.Name == "" {
			return "Any"
		}
		return t.Name
	}
	return t.String()
}

// annotationText prints t as a Python annotation (c10::Type::annotation_str):
// List[Optional[int]], Tuple[int, str], Dict[str, Tensor].
func annotationText(t *Type) string {
	if t == nil {
		return "Any"
	}
	elem := func(i int) string {
		if i < len(t.Elems) {
			return annotationText(t.Elems[i])
		}
		return "Any"
	}
	switch t.Kind {
	case TensorType:
		return "Tensor"
	case ListType:
		return "List[" + elem(0) + "]"
	case OptionalType:
		return "Optional[" + elem(0) + "]"
	case FutureType:
		return "Future[" + elem(0) + "]"
	case DictType:
		return "Dict[" + elem(0) + ", " + elem(1) + "]"
	case TupleType:
		parts := make([]string, len(t.Elems))
		for i := range t.Elems {
			parts[i] = elem(i)
		}
		return "Tuple[" + strings.Join(parts, ", ") + "]"
	}
	return typeText(t)
}

func tensorTypeText(t *Type) string {
	var b strings.Builder
	if t.DType != ivalue.Undefined {
		b.WriteString(t.DType.TorchName())
	} else {
		b.WriteString("Tensor")
	}
	var parts []string
	for _, s := range t.Sizes {
		if s < 0 {
			parts = append(parts, "*")
		} else {
			parts = append(parts, strconv.Itoa(s))
		}
	}
	// PyTorch prints strides only when every stride is known and the rank is.
	if len(t.Sizes) > 0 && len(t.Strides) == len(t.Sizes) {
		complete := true
		ss := make([]string, len(t.Strides))
		for i, s := range t.Strides {
			complete = complete && s >= 0
			ss[i] = strconv.Itoa(s)
		}
		if complete {
			parts = append(parts, "strides=["+strings.Join(ss, ", ")+"]")
		}
	}
	if t.RequiresGrad != nil {
		if *t.RequiresGrad {
			parts = append(parts, "requires_grad=1")
		} else {
			parts = append(parts, "requires_grad=0")
		}
	}
	if t.Device != "" {
		parts = append(parts, "device="+t.Device)
	}
	if len(parts) > 0 {
		b.WriteString("(" + strings.Join(parts, ", ") + ")")
	}
	return b.String()
}

// uniqueNames gives every value defined in g (not in its subgraphs) a
// printable name: its debug name unless an earlier value took it or it has
// characters the parser does not accept.
func uniqueNames(g *Graph) map[*Value]string {
	var defs []*Value
	var visit func(b *Block)
	visit = func(b *Block) {
		defs = append(defs, b.Param.Outputs...)
		for _, n := range b.Nodes {
			for _, sb := range n.Blocks {
				visit(sb)
			}
			defs = append(defs, n.Outputs...)
		}
	}
	visit(g.Block)
	all := make(map[string]bool, len(defs))
	for _, v := range defs {
		if v != nil {
			all[sanitizeName(v.DebugName())] = true
		}
	}
	names := make(map[*Value]string, len(defs))
	taken := make(map[string]bool, len(defs))
	for _, v := range defs {
		if v == nil {
			continue
		}
		if _, dup := names[v]; dup {
			continue
		}
		n := sanitizeName(v.DebugName())
		if taken[n] {
			for k := 1; ; k++ {
				c := fmt.Sprintf("%s_%d", n, k)
				if !all[c] && !taken[c] {
					n = c
					break
				}
			}
		}
		taken[n] = true
		names[v] = n
	}
	return names
}

func sanitizeName(s string) string {
	if s == "" {
		return "_"
	}
	ok := true
	for i := 0; i < len(s); i++ {
		if !isIdentByte(s[i]) && s[i] != '.' {
			ok = false
			break
		}
	}
	if ok {
		return s
	}
	b := []byte(s)
	for i, c := range b {
		if !isIdentByte(c) && c != '.' {
			b[i] = '_'
		}
	}
	return string(b)
}
