package tscode

import (
	"flag"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The goldens are written by scripts/make_tscode_samples.py from CPython's
// own ast module, so they check this parser against Python; -update
// rewrites them from this parser instead (then review the diff).
var update = flag.Bool("update", false, "rewrite testdata/code/*.golden from this parser")

// ---- a stable printed form of the tree, the same as the script's

// treeString prints statements one a line, prefixed by their position and
// indented by nesting; expressions are fully parenthesised.
func treeString(f *File) string {
	var sb strings.Builder
	printStmts(&sb, f.Body, 0)
	return sb.String()
}

func printStmts(sb *strings.Builder, ss []Stmt, depth int) {
	for _, s := range ss {
		printStmt(sb, s, depth)
	}
}

func line(sb *strings.Builder, depth int, pos *Pos, text string) {
	sb.WriteString(strings.Repeat("  ", depth))
	if pos != nil {
		fmt.Fprintf(sb, "%d:%d ", pos.Line, pos.Col)
	}
	sb.WriteString(text)
	sb.WriteByte('\n')
}

func printStmt(sb *strings.Builder, s Stmt, depth int) {
	pos := s.At()
	switch s := s.(type) {
	case *Import:
		line(sb, depth, &pos, "import "+strings.Join(s.Names, ", "))
	case *ClassDef:
		bases := ""
		if len(s.Bases) > 0 {
			bases = "(" + exprList(s.Bases) + ")"
		}
		line(sb, depth, &pos, "class "+s.Name+bases+":")
		printStmts(sb, s.Body, depth+1)
	case *FuncDef:
		for _, d := range s.Decorators {
			dp := d.At()
			line(sb, depth, &dp, "@"+exprSrc(d))
		}
		var params []string
		for _, p := range s.Params {
			t := p.Name
			if p.Type != nil {
				t += ": " + exprSrc(p.Type)
			}
			if p.Default != nil {
				t += " = " + exprSrc(p.Default)
			}
			params = append(params, t)
		}
		ret := ""
		if s.Returns != nil {
			ret = " -> " + exprSrc(s.Returns)
		}
		line(sb, depth, &pos, "def "+s.Name+"("+strings.Join(params, ", ")+")"+ret+":")
		printStmts(sb, s.Body, depth+1)
	case *ExprStmt:
		line(sb, depth, &pos, exprSrc(s.X))
	case *Assign:
		var parts []string
		for _, t := range s.Targets {
			parts = append(parts, exprSrc(t))
		}
		line(sb, depth, &pos, strings.Join(append(parts, exprSrc(s.Value)), " = "))
	case *AugAssign:
		line(sb, depth, &pos, exprSrc(s.Target)+" "+s.Op+"= "+exprSrc(s.Value))
	case *AnnAssign:
		t := exprSrc(s.Target) + " : " + exprSrc(s.Type)
		if s.Value != nil {
			t += " = " + exprSrc(s.Value)
		}
		line(sb, depth, &pos, t)
	case *If:
		line(sb, depth, &pos, "if "+exprSrc(s.Cond)+":")
		printStmts(sb, s.Body, depth+1)
		if s.Else != nil {
			line(sb, depth, nil, "else:")
			printStmts(sb, s.Else, depth+1)
		}
	case *For:
		line(sb, depth, &pos, "for "+exprSrc(s.Target)+" in "+exprSrc(s.Iter)+":")
		printStmts(sb, s.Body, depth+1)
	case *While:
		line(sb, depth, &pos, "while "+exprSrc(s.Cond)+":")
		printStmts(sb, s.Body, depth+1)
	case *Return:
		t := "return"
		if s.Value != nil {
			t += " " + exprSrc(s.Value)
		}
		line(sb, depth, &pos, t)
	case *Raise:
		t := "raise"
		if s.Exc != nil {
			t += " " + exprSrc(s.Exc)
		}
		line(sb, depth, &pos, t)
	case *Assert:
		t := "assert " + exprSrc(s.Cond)
		if s.Msg != nil {
			t += ", " + exprSrc(s.Msg)
		}
		line(sb, depth, &pos, t)
	case *Pass:
		line(sb, depth, &pos, "pass")
	case *Break:
		line(sb, depth, &pos, "break")
	case *Continue:
		line(sb, depth, &pos, "continue")
	case *Delete:
		line(sb, depth, &pos, "del "+exprList(s.Targets))
	case *With:
		var items []string
		for i, it := range s.Items {
			t := exprSrc(it)
			if s.Vars[i] != nil {
				t += " as " + exprSrc(s.Vars[i])
			}
			items = append(items, t)
		}
		line(sb, depth, &pos, "with "+strings.Join(items, ", ")+":")
		printStmts(sb, s.Body, depth+1)
	default:
		line(sb, depth, &pos, fmt.Sprintf("?%T", s))
	}
}

func exprList(xs []Expr) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = exprSrc(x)
	}
	return strings.Join(parts, ", ")
}

// quoteGolden writes printable ASCII as is and everything else as \u{hex},
// a form easy to produce identically from Python.
func quoteGolden(s string) string {
	var sb strings.Builder
	sb.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			sb.WriteByte('\\')
			sb.WriteRune(r)
		case r >= 0x20 && r < 0x7f:
			sb.WriteRune(r)
		default:
			fmt.Fprintf(&sb, "\\u{%x}", r)
		}
	}
	sb.WriteByte('"')
	return sb.String()
}

func floatGolden(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	case math.IsNaN(v):
		return "nan"
	}
	return strconv.FormatFloat(v, 'e', -1, 64)
}

// exprSrc renders x; it writes into one builder, so that a long chain
// (the fuzz seeds have 20k-term sums) takes time linear in its size.
func exprSrc(x Expr) string {
	var sb strings.Builder
	writeExpr(&sb, x)
	return sb.String()
}

func writeExprs(sb *strings.Builder, xs []Expr, sep string) {
	for i, x := range xs {
		if i > 0 {
			sb.WriteString(sep)
		}
		writeExpr(sb, x)
	}
}

func writeExpr(sb *strings.Builder, x Expr) {
	w := sb.WriteString
	switch x := x.(type) {
	case *Name:
		w(x.ID)
		return
	case *Const:
		switch x.Kind {
		case ConstNone:
			w("None")
		case ConstBool:
			if x.Bool {
				w("True")
			} else {
				w("False")
			}
		case ConstInt:
			w(strconv.FormatInt(x.Int, 10))
		case ConstFloat:
			w(floatGolden(x.Float))
		case ConstString:
			w(quoteGolden(x.Str))
		case ConstEllipsis:
			w("...")
		default:
			w(fmt.Sprintf("?%T", x))
		}
		return
	case *Attribute:
		writeExpr(sb, x.X)
		w("." + x.Attr)
		return
	case *Call:
		writeExpr(sb, x.Func)
		w("(")
		writeExprs(sb, x.Args, ", ")
		for i, k := range x.Keywords {
			if i > 0 || len(x.Args) > 0 {
				w(", ")
			}
			w(k.Name + "=")
			writeExpr(sb, k.Value)
		}
		w(")")
		return
	case *Subscript:
		writeExpr(sb, x.X)
		w("[")
		writeExpr(sb, x.Index)
		w("]")
		return
	case *Slice:
		if x.Lo != nil {
			writeExpr(sb, x.Lo)
		}
		w(":")
		if x.Hi != nil {
			writeExpr(sb, x.Hi)
		}
		if x.Step != nil {
			w(":")
			writeExpr(sb, x.Step)
		}
		return
	case *Tuple:
		w("(")
		writeExprs(sb, x.Elts, ", ")
		if len(x.Elts) == 1 {
			w(",")
		}
		w(")")
		return
	case *List:
		w("[")
		writeExprs(sb, x.Elts, ", ")
		w("]")
		return
	case *Dict:
		w("{")
		for i := range x.Keys {
			if i > 0 {
				w(", ")
			}
			writeExpr(sb, x.Keys[i])
			w(": ")
			writeExpr(sb, x.Values[i])
		}
		w("}")
		return
	case *BinOp:
		w("(")
		writeExpr(sb, x.X)
		w(" " + x.Op + " ")
		writeExpr(sb, x.Y)
		w(")")
		return
	case *UnaryOp:
		if x.Op == "not" {
			w("(not ")
		} else {
			w("(" + x.Op)
		}
		writeExpr(sb, x.X)
		w(")")
		return
	case *BoolOp:
		w("(")
		writeExprs(sb, x.Values, " "+x.Op+" ")
		w(")")
		return
	case *Compare:
		w("(")
		writeExpr(sb, x.X)
		for i, op := range x.Ops {
			w(" " + op + " ")
			writeExpr(sb, x.Ys[i])
		}
		w(")")
		return
	case *IfExp:
		w("(")
		writeExpr(sb, x.Then)
		w(" if ")
		writeExpr(sb, x.Cond)
		w(" else ")
		writeExpr(sb, x.Else)
		w(")")
		return
	case *ListComp:
		w("[")
		writeExpr(sb, x.Elt)
		w(" for ")
		writeExpr(sb, x.Target)
		w(" in ")
		writeExpr(sb, x.Iter)
		w("]")
		return
	}
	w(fmt.Sprintf("?%T", x))
}

func optSrc(x Expr) string {
	if x == nil {
		return ""
	}
	return exprSrc(x)
}

// ---- walking, to check that every node has a position

func walkNodes(n Node, fn func(Node)) {
	if n == nil {
		return
	}
	fn(n)
	exprs := func(xs []Expr) {
		for _, x := range xs {
			if x != nil {
				walkNodes(x, fn)
			}
		}
	}
	stmts := func(ss []Stmt) {
		for _, s := range ss {
			walkNodes(s, fn)
		}
	}
	one := func(xs ...Expr) { exprs(xs) }
	switch n := n.(type) {
	case *ClassDef:
		exprs(n.Bases)
		stmts(n.Body)
	case *FuncDef:
		exprs(n.Decorators)
		for _, p := range n.Params {
			fn(p)
			one(p.Type, p.Default)
		}
		one(n.Returns)
		stmts(n.Body)
	case *ExprStmt:
		one(n.X)
	case *Assign:
		exprs(n.Targets)
		one(n.Value)
	case *AugAssign:
		one(n.Target, n.Value)
	case *AnnAssign:
		one(n.Target, n.Type, n.Value)
	case *If:
		one(n.Cond)
		stmts(n.Body)
		stmts(n.Else)
	case *For:
		one(n.Target, n.Iter)
		stmts(n.Body)
	case *While:
		one(n.Cond)
		stmts(n.Body)
	case *Return:
		one(n.Value)
	case *Raise:
		one(n.Exc)
	case *Assert:
		one(n.Cond, n.Msg)
	case *Delete:
		exprs(n.Targets)
	case *With:
		exprs(n.Items)
		exprs(n.Vars)
		stmts(n.Body)
	case *Attribute:
		one(n.X)
	case *Call:
		one(n.Func)
		exprs(n.Args)
		for _, k := range n.Keywords {
			fn(k)
			one(k.Value)
		}
	case *Subscript:
		one(n.X, n.Index)
	case *Slice:
		one(n.Lo, n.Hi, n.Step)
	case *Tuple:
		exprs(n.Elts)
	case *List:
		exprs(n.Elts)
	case *Dict:
		exprs(n.Keys)
		exprs(n.Values)
	case *BinOp:
		one(n.X, n.Y)
	case *UnaryOp:
		one(n.X)
	case *BoolOp:
		exprs(n.Values)
	case *Compare:
		one(n.X)
		exprs(n.Ys)
	case *IfExp:
		one(n.Cond, n.Then, n.Else)
	case *ListComp:
		one(n.Elt, n.Target, n.Iter)
	}
}

func parseOK(t *testing.T, src string) *File {
	t.Helper()
	f, err := Parse("t.py", []byte(src))
	require.NoError(t, err, "source:\n%s", src)
	return f
}

// ---- tests

// TestSamples parses real code/ files written by torch.jit.save and checks
// the tree against the golden written from CPython's ast.
func TestSamples(t *testing.T) {
	var files []string
	err := filepath.WalkDir(filepath.Join("testdata", "code"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".py") {
			files = append(files, path)
		}
		return err
	})
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 20, "samples missing: run scripts/make_tscode_samples.py")
	for _, path := range files {
		t.Run(filepath.ToSlash(strings.TrimPrefix(path, filepath.Join("testdata", "code")+string(filepath.Separator))), func(t *testing.T) {
			src, err := os.ReadFile(path)
			require.NoError(t, err)
			// Named as in the archive: code/ plus the path under the model.
			rel := filepath.ToSlash(path)[len("testdata/code/"):]
			name := "code/" + rel[strings.IndexByte(rel, '/')+1:]
			f, err := Parse(name, src)
			require.NoError(t, err)
			require.NotEmpty(t, f.Body)
			assert.Equal(t, name, f.Name)
			for _, s := range f.Body {
				walkNodes(s, func(n Node) {
					p := n.At()
					if p.File != name || p.Line < 1 || p.Col < 1 {
						t.Errorf("%T has no position: %+v", n, p)
					}
				})
			}
			got := treeString(f)
			golden := path + ".golden"
			if *update {
				require.NoError(t, os.WriteFile(golden, []byte(got), 0o644))
				return
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "no golden: run scripts/make_tscode_samples.py (or go test -update)")
			assert.Equal(t, string(want), got)
		})
	}
}

// exprOf parses `x = <src>` and returns the value's printed form.
func exprOf(t *testing.T, src string) string {
	t.Helper()
	f := parseOK(t, "x = "+src+"\n")
	require.Len(t, f.Body, 1)
	a, ok := f.Body[0].(*Assign)
	require.True(t, ok, "%T", f.Body[0])
	return exprSrc(a.Value)
}

func TestPrecedence(t *testing.T) {
	cases := []struct{ src, want string }{
		{"a + b * c", "(a + (b * c))"},
		{"a * b + c", "((a * b) + c)"},
		{"a - b - c", "((a - b) - c)"},
		{"a ** b ** c", "(a ** (b ** c))"},
		{"-a ** b", "(-(a ** b))"},
		{"-2 ** 2", "(-(2 ** 2))"},
		{"a ** -b", "(a ** (-b))"},
		{"~a + +b", "((~a) + (+b))"},
		{"a // b % c @ d / e", "((((a // b) % c) @ d) / e)"},
		{"a << 1 | b & c ^ d >> 2", "((a << 1) | ((b & c) ^ (d >> 2)))"},
		{"a | b < c", "((a | b) < c)"},
		{"a < b <= c != d", "(a < b <= c != d)"},
		{"a is not None", "(a is not None)"},
		{"a not in b", "(a not in b)"},
		{"a is b in c == d", "(a is b in c == d)"},
		{"not a == b", "(not (a == b))"},
		{"not not a", "(not (not a))"},
		{"a or b and c or d", "(a or (b and c) or d)"},
		{"a and not b or c", "((a and (not b)) or c)"},
		{"x if c else y if d else z", "(x if c else (y if d else z))"},
		{"x if a or b else y", "(x if (a or b) else y)"},
		{"(a + b) * c", "((a + b) * c)"},
		{"f(a)(b).c[d]", "f(a)(b).c[d]"},
		{"-x.y", "(-x.y)"},
		{"-1", "-1"},
		{"-1.5", "-1.5e+00"},
		{"- -1", "(--1)"},
		{"-9223372036854775808", "-9223372036854775808"},
		{"9223372036854775807", "9223372036854775807"},
		{"torch.mul(x, -9223372036854775808)", "torch.mul(x, -9223372036854775808)"},
		{"-inf", "(-inf)"},
		{"a - 1", "(a - 1)"},
		{"a-1", "(a - 1)"},
	}
	for _, c := range cases {
		t.Run(c.src, func(t *testing.T) {
			assert.Equal(t, c.want, exprOf(t, c.src))
		})
	}
}

func TestExpressions(t *testing.T) {
	cases := []struct{ src, want string }{
		{"f()", "f()"},
		{"f(a, b, )", "f(a, b)"},
		{"f(a, k=1, j=b,)", "f(a, k=1, j=b)"},
		{"torch.zeros([1, n, 4], dtype=_2, layout=None, device=_3)", "torch.zeros([1, n, 4], dtype=_2, layout=None, device=_3)"},
		{"x[:, 0:2:1, None]", "x[(:, 0:2:1, None)]"},
		{"x[...]", "x[...]"},
		{"x[..., :1]", "x[(..., :1)]"},
		{"x[::2]", "x[::2]"},
		{"x[::]", "x[:]"},
		{"x[a:]", "x[a:]"},
		{"x[1,]", "x[(1,)]"},
		{"x[-1]", "x[-1]"},
		{"(hx1)[0]", "hx1[0]"},
		{"()", "()"},
		{"(a,)", "(a,)"},
		{"(a, b, )", "(a, b)"},
		{"a, b", "(a, b)"},
		{"a,", "(a,)"},
		{"[]", "[]"},
		{"[1, 2, ]", "[1, 2]"},
		{`["weight", "bias", ]`, `["weight", "bias"]`},
		{"{}", "{}"},
		{`{"a": 1, "b": [2]}`, `{"a": 1, "b": [2]}`},
		{"[x * 2 for x in xs]", "[(x * 2) for x in xs]"},
		{"[a for a, b in pairs]", "[a for (a, b) in pairs]"},
		{"annotate(List[int], [])", "annotate(List[int], [])"},
		{"unchecked_cast(Tuple[Tensor, Tensor], hx)", "unchecked_cast(Tuple[(Tensor, Tensor)], hx)"},
		{"uninitialized(Tensor)", "uninitialized(Tensor)"},
		{`float("inf")`, `float("inf")`},
		{"ops.prim.RaiseException(_6, \"builtins.ValueError\")", "ops.prim.RaiseException(_6, \"builtins.ValueError\")"},
		{"None if True else False", "(None if True else False)"},
		{"0x1F + 0o17 + 0b101 + 0XfF + 1_000", "((((31 + 15) + 5) + 255) + 1000)"},
		{"0", "0"},
		{"00", "0"},
		{"2.", "2e+00"},
		{".5", "5e-01"},
		{"1.0000000000000001e-05", "1e-05"}, // the same float64 as 1e-05
		{"0.10000000000000001", "1e-01"},
		{"1.4999999999999999e-07", "1.5e-07"},
		{"1e10", "1e+10"},
		{"1E-3", "1e-03"},
		{"1e999", "inf"},
		{"(a\n  + b)", "(a + b)"},
		{"[1,\n\n  # comment\n  2]", "[1, 2]"},
		{"a + \\\n  b", "(a + b)"},
		{"a.if_", "a.if_"},
		{"torch.__not__(x)", "torch.__not__(x)"},
	}
	for _, c := range cases {
		t.Run(c.src, func(t *testing.T) {
			assert.Equal(t, c.want, exprOf(t, c.src))
		})
	}
}

func TestStrings(t *testing.T) {
	cases := []struct{ src, want string }{
		{`"abc"`, "abc"},
		{`'abc'`, "abc"},
		{`"don\'t"`, "don't"},
		{`'say "hi"'`, `say "hi"`},
		{`"q\"uote\'s \\ and\ttab"`, "q\"uote's \\ and\ttab"},
		{`"\a\b\f\n\r\t\v"`, "\a\b\f\n\r\t\v"},
		{`"\0\1\12\101\1011"`, "\x00\x01\nAA1"},
		{`"\x41\x7e\xe9"`, "A~\u00e9"},
		{`"\u00e9\u20ac"`, "\u00e9\u20ac"},
		{`"\U0001F600"`, "\U0001F600"},
		{`"\d\w"`, `\d\w`},
		{`"é"`, "é"},
		{`r"a\nb\"c"`, `a\nb\"c`},
		{`R'\x41'`, `\x41`},
		{`u"x\n"`, "x\n"},
		{`"a" "b" 'c'`, "abc"},
		{`("a"` + "\n" + `  "b")`, "ab"},
		{`"""a"b""c"""`, `a"b""c`},
		{"'''line1\nline2'''", "line1\nline2"},
		{"'''x\\\ny'''", "xy"},
		{`""`, ""},
	}
	for _, c := range cases {
		t.Run(c.src, func(t *testing.T) {
			f := parseOK(t, "x = "+c.src+"\n")
			k, ok := f.Body[0].(*Assign).Value.(*Const)
			require.True(t, ok)
			assert.Equal(t, ConstString, k.Kind)
			assert.Equal(t, c.want, k.Str)
		})
	}
}

func TestStatements(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"unpacking", "a, b, = f(x)\n(c, d) = e\n[g, h] = i\n",
			"1:1 (a, b) = f(x)\n2:1 (c, d) = e\n3:1 [g, h] = i\n"},
		{"chained assign", "a = b = c\n", "1:1 a = b = c\n"},
		{"tuple value", "a = 1, 2\nx, y = y, x\n", "1:1 a = (1, 2)\n2:1 (x, y) = (y, x)\n"},
		{"targets", "self.x = 1\nl[0] = 2\nd[\"k\"] = 3\n(self).y = 4\n",
			"1:1 self.x = 1\n2:1 l[0] = 2\n3:1 d[\"k\"] = 3\n4:1 self.y = 4\n"},
		{"annotated", "a : Final[int] = 3\nb: Tensor\n_30 : Optional[Tensor] = None\n",
			"1:1 a : Final[int] = 3\n2:1 b : Tensor\n3:1 _30 : Optional[Tensor] = None\n"},
		{"augmented", "a += 1\nb.c //= 2\nd[0] **= e\nf <<= 1\ng @= h\n",
			"1:1 a += 1\n2:1 b.c //= 2\n3:1 d[0] **= e\n4:1 f <<= 1\n5:1 g @= h\n"},
		{"simple", "pass; break; continue\nreturn\nreturn a, b\nraise\nraise E(\"m\")\ndel a, b[0]\nassert a\nassert a, \"m\"\n",
			"1:1 pass\n1:7 break\n1:14 continue\n2:1 return\n3:1 return (a, b)\n4:1 raise\n5:1 raise E(\"m\")\n6:1 del a, b[0]\n7:1 assert a\n8:1 assert a, \"m\"\n"},
		{"import", "import __torch__.torch.nn\nimport a, b.c\n", "1:1 import __torch__.torch.nn\n2:1 import a, b.c\n"},
		{"if elif else", "if a:\n  x = 1\nelif b:\n  x = 2\nelif c:\n  pass\nelse:\n  x = 3\n",
			"1:1 if a:\n  2:3 x = 1\nelse:\n  3:1 if b:\n    4:3 x = 2\n  else:\n    5:1 if c:\n      6:3 pass\n    else:\n      8:3 x = 3\n"},
		{"one-line blocks", "if a: x = 1\nelse: pass\nwhile b: break\n",
			"1:1 if a:\n  1:7 x = 1\nelse:\n  2:7 pass\n3:1 while b:\n  3:10 break\n"},
		{"for", "for i in range(n):\n  pass\nfor k, v in items:\n  pass\nfor (a, b) in x, y:\n  pass\n",
			"1:1 for i in range(n):\n  2:3 pass\n3:1 for (k, v) in items:\n  4:3 pass\n5:1 for (a, b) in (x, y):\n  6:3 pass\n"},
		{"def", "@torch.jit.export\n@dec(1)\ndef f(self: M,\n    x: Tensor,\n    y: Optional[Tensor]=None,\n    n: int=-5) -> Tuple[Tensor, int]:\n  return (x, n)\n",
			"1:2 @torch.jit.export\n2:2 @dec(1)\n3:1 def f(self: M, x: Tensor, y: Optional[Tensor] = None, n: int = -5) -> Tuple[(Tensor, int)]:\n  7:3 return (x, n)\n"},
		{"def no annotations", "def f(self, x,):\n  pass\n", "1:1 def f(self, x):\n  2:3 pass\n"},
		{"class", "class A(Module):\n  __parameters__ = [\"w\", ]\n  w : Tensor\n  def forward(self):\n    pass\nclass B:\n  pass\nclass C(NamedTuple):\n  x : int\n",
			"1:1 class A(Module):\n  2:3 __parameters__ = [\"w\"]\n  3:3 w : Tensor\n  4:3 def forward(self):\n    5:5 pass\n6:1 class B:\n  7:3 pass\n8:1 class C(NamedTuple):\n  9:3 x : int\n"},
		{"with", "with a as b, c:\n  pass\n", "1:1 with a as b, c:\n  2:3 pass\n"},
		{"expression statements", "f(x)\n(self).g(y, )\n\"doc\"\n", "1:1 f(x)\n2:1 self.g(y)\n3:1 \"doc\"\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, treeString(parseOK(t, c.src)))
		})
	}
}

func TestIndentation(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"dedent several levels",
			"def f(x):\n  if a:\n    for i in y:\n      while b:\n        pass\n  return x\ndef g():\n  pass\n",
			"1:1 def f(x):\n  2:3 if a:\n    3:5 for i in y:\n      4:7 while b:\n        5:9 pass\n  6:3 return x\n7:1 def g():\n  8:3 pass\n"},
		{"blank lines and comments in blocks",
			"# header\n\ndef f(x):\n\n  # comment\n  a = 1  # trailing\n\n      # odd comment indent\n  if a:\n\n    b = 2\n\n  # before dedent\n  return b\n\n\n",
			"3:1 def f(x):\n  6:3 a = 1\n  9:3 if a:\n    11:5 b = 2\n  14:3 return b\n"},
		{"other indent widths", "if a:\n        x = 1\n        if b:\n         y = 2\n", "1:1 if a:\n  2:9 x = 1\n  3:9 if b:\n    4:10 y = 2\n"},
		{"no final newline", "def f():\n  return 1", "1:1 def f():\n  2:3 return 1\n"},
		{"crlf", "def f():\r\n  return 1\r\n", "1:1 def f():\n  2:3 return 1\n"},
		{"continuation lines keep block", "def f(a,\n    b) -> int:\n  x = g(a,\nb)\n  return x\n",
			"1:1 def f(a, b) -> int:\n  3:3 x = g(a, b)\n  5:3 return x\n"},
		{"backslash continuation", "x = 1 + \\\n    2\ny = 3\n", "1:1 x = (1 + 2)\n3:1 y = 3\n"},
		{"empty file", "", ""},
		{"only comments", "# a\n  # b\n\n", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, treeString(parseOK(t, c.src)))
		})
	}
}

func TestPositions(t *testing.T) {
	f := parseOK(t, "def f(x: int):\n  y = (a + b) * torch.add(c, k=d)[0]\n")
	fd := f.Body[0].(*FuncDef)
	assert.Equal(t, Pos{File: "t.py", Line: 1, Col: 7}, fd.Params[0].Pos)
	assert.Equal(t, Pos{File: "t.py", Line: 1, Col: 10}, fd.Params[0].Type.At())
	as := fd.Body[0].(*Assign)
	mul := as.Value.(*BinOp)
	assert.Equal(t, 7, mul.Col, "a BinOp starts at the parenthesis of its left operand")
	assert.Equal(t, 8, mul.X.At().Col, "the parenthesised node starts inside")
	sub := mul.Y.(*Subscript)
	assert.Equal(t, 17, sub.Col)
	call := sub.X.(*Call)
	assert.Equal(t, 17, call.Col)
	assert.Equal(t, 27, call.Args[0].At().Col)
	assert.Equal(t, 30, call.Keywords[0].Col)
	assert.Equal(t, 32, call.Keywords[0].Value.At().Col)
}

func TestErrors(t *testing.T) {
	cases := []struct{ name, src, want string }{
		{"missing colon after for", "def f(x):\n  for i in range(3)\n    pass\n", `t.py:2:20: expected ":" after for-loop header, found end of line`},
		{"bad dedent", "if a:\n    x = 1\n  y = 2\n", "t.py:3:3: unindent to column 3 does not match any outer indentation level"},
		{"unexpected indent", "x = 1\n  y = 2\n", "t.py:2:3: unexpected indent at top level"},
		{"unexpected indent in block", "if a:\n  x = 1\n    y = 2\n", "t.py:3:5: unexpected indent"},
		{"missing block", "if a:\nx = 1\n", "t.py:2:1: expected an indented block after if, found name \"x\""},
		{"tab indent", "if a:\n\tx = 1\n", "t.py:2:1: tab in indentation (only spaces are accepted)"},
		{"unclosed bracket", "x = f(a, [1, 2)\n", `t.py:1:15: closing ")" does not match "[" opened at 1:10`},
		{"unclosed at eof", "x = f(a,\n  b\n", `t.py:1:6: unclosed "(": end of file reached before its match`},
		{"unmatched close", "x = a)\n", `t.py:1:6: unmatched ")"`},
		{"unterminated string", "x = \"abc\ny = 1\n", "t.py:1:5: unterminated string literal: end of line reached before its closing quote"},
		{"unterminated triple", "x = '''abc\n", "t.py:1:5: unterminated string literal: end of file reached before its closing quote"},
		{"unexpected token", "x = = 1\n", `t.py:1:5: expected an expression, found "="`},
		{"unexpected keyword", "x = 1 else\n", `t.py:1:7: expected end of line after statement, found "else"`},
		{"missing paren in call", "f(a b)\n", `t.py:1:5: expected "," or ")" in the call opened at 1:2, found name "b"`},
		{"int overflow", "x = 9223372036854775808\n", "t.py:1:5: integer literal 9223372036854775808 does not fit in int64"},
		{"negative int overflow", "x = -9223372036854775809\n", "t.py:1:5: integer literal -9223372036854775809 does not fit in int64"},
		{"hex overflow", "x = 0x10000000000000000\n", "t.py:1:5: integer literal 0x10000000000000000 does not fit in int64"},
		{"leading zero", "x = 012\n", `t.py:1:5: invalid integer literal "012": leading zeros are not allowed (use 0o for octal)`},
		{"bad exponent", "x = 1e+\n", `t.py:1:5: invalid float literal "1e+": exponent has no digits`},
		{"bytes", "x = b\"a\"\n", "t.py:1:5: bytes literals are not supported in TorchScript code"},
		{"f-string", "x = f\"{a}\"\n", "t.py:1:5: f-strings are not supported in TorchScript code"},
		{"named escape", `x = "\N{DASH}"` + "\n", `t.py:1:6: \N{...} escapes (Unicode names) are not supported`},
		{"bad hex escape", `x = "\x4"` + "\n", `t.py:1:6: truncated \x escape: 2 hex digits expected, found "4\""`},
		{"walrus", "if (a := 1):\n  pass\n", "t.py:1:7: assignment expressions (:=) are not supported"},
		{"assign to call", "f() = 1\n", "t.py:1:1: cannot assign to a function call in assignment"},
		{"assign to literal in tuple", "a, 1 = x\n", "t.py:1:4: cannot assign to a literal in assignment"},
		{"augassign to tuple", "a, b += 1\n", "t.py:1:1: cannot use += on a tuple"},
		{"from import", "from a import b\n", `t.py:1:1: "from ... import" is not supported (PyTorch writes plain "import a.b")`},
		{"lambda", "f = lambda x: x\n", "t.py:1:5: lambda is not supported in TorchScript code"},
		{"try", "try:\n  pass\nexcept:\n  pass\n", "t.py:1:1: try statements are not supported in TorchScript code"},
		{"varargs", "def f(*args):\n  pass\n", `t.py:1:7: "*" parameters are not supported in TorchScript code`},
		{"positional after keyword", "f(a=1, b)\n", "t.py:1:8: positional argument follows keyword argument"},
		{"set display", "x = {1, 2}\n", `t.py:1:6: set displays are not supported (expected ":" after a dict key)`},
		{"comprehension if", "x = [a for a in b if a]\n", `t.py:1:19: list comprehensions with "if" clauses are not supported (a single for only)`},
		{"bad character", "x = a ? b\n", `t.py:1:7: unexpected character '?'`},
		{"backslash not at eol", "x = 1 \\ 2\n", "t.py:1:7: unexpected character after line-continuation backslash"},
		{"bad exponent at eol", "x = 1e\n", `t.py:1:5: invalid float literal "1e": exponent has no digits`},
		{"complex", "x = 1j\n", `t.py:1:5: complex literal "1j" is not supported`},
		{"missing def name", "def (x):\n  pass\n", `t.py:1:5: expected a name after "def", found "("`},
		{"default order", "def f(a=1, b):\n  pass\n", `t.py:1:12: parameter "b" without a default follows one with a default`},
		{"invalid utf8", "x = \xff\n", "t.py:1:5: invalid UTF-8 byte 0xff"},
		{"elif without if", "elif a:\n  pass\n", `t.py:1:1: expected an expression, found "elif"`},
		{"dedent to nothing mid-expression", "def f():\n  return\n", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := Parse("t.py", []byte(c.src))
			if c.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Nil(t, f)
			assert.Equal(t, c.want, err.Error())
			var pe *Error
			assert.ErrorAs(t, err, &pe)
		})
	}
}

func TestDepthLimit(t *testing.T) {
	cases := []struct {
		name string
		src  string
	}{
		{"brackets", "x = " + strings.Repeat("(", 1000) + "1" + strings.Repeat(")", 1000) + "\n"},
		{"lists", "x = " + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + "\n"},
		{"calls", "x = " + strings.Repeat("f(", 1000) + strings.Repeat(")", 1000) + "\n"},
		{"unary", "x = " + strings.Repeat("-", 5000) + "a\n"},
		{"not", "x = " + strings.Repeat("not ", 5000) + "a\n"},
		{"power", "x = a" + strings.Repeat(" ** a", 5000) + "\n"},
		{"subscripts", "x = a" + strings.Repeat("[a", 1000) + strings.Repeat("]", 1000) + "\n"},
		{"blocks", func() string {
			var sb strings.Builder
			for i := 0; i < 1000; i++ {
				sb.WriteString(strings.Repeat(" ", i) + "if a:\n")
			}
			sb.WriteString(strings.Repeat(" ", 1000) + "pass\n")
			return sb.String()
		}()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("t.py", []byte(c.src))
			require.Error(t, err)
			assert.Contains(t, err.Error(), "nesting deeper than")
		})
	}
	// Moderate nesting, as deep as real code goes and more, is fine.
	parseOK(t, "x = "+strings.Repeat("f(", 100)+strings.Repeat(")", 100)+"\n")
	// Long flat chains are loops, not nesting.
	parseOK(t, "x = a"+strings.Repeat(" + a", 20000)+"\n")
	var sb strings.Builder
	sb.WriteString("if a:\n  pass\n")
	for i := 0; i < 5000; i++ {
		sb.WriteString("elif a:\n  pass\n")
	}
	parseOK(t, sb.String())
}
