package gen

import (
	"fmt"
	"strings"
)

// Generators of long and deep TorchScript code (the Python subset
// torch.jit.save writes under code/, read by loaders/tscode) and of long
// and deep graph IR text (read by graph.Parse). Each returns the text for
// a size n; the sizes that once overflowed the stack are in the millions
// (a 2M-term sum, a 600k-long method chain), which are a few megabytes of
// text.

// TSChain is n terms joined by a binary operator: TSChain("x", "+", 3) is
// "x + x + x". Left-associative operators (+ and or < ...) nest to the
// left; ** nests to the right.
func TSChain(term, op string, n int) string {
	var b strings.Builder
	b.Grow(n * (len(term) + len(op) + 2))
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(" " + op + " ")
		}
		b.WriteString(term)
	}
	return b.String()
}

// TSTrailers is base followed by n copies of trailer, a left-nested
// chain: TSTrailers("x", ".relu()", 2) is "x.relu().relu()";
// "[0]" gives subscripts, "(x)" calls of calls, ".a" attributes.
func TSTrailers(base, trailer string, n int) string {
	return base + strings.Repeat(trailer, n)
}

// TSNested is inner wrapped n times in open and close, a right-nested
// (bracketed) expression: TSNested("torch.relu(", "x", ")", 2) is
// "torch.relu(torch.relu(x))"; ("(", "x", ")") gives parentheses,
// ("[", "x", "]") lists, ("(", "x", ",)") tuples, ("{\"k\": ", "x", "}")
// dicts, ("- ", "x", "") unary minus, ("not ", "b", "") negations and
// ("x if b else ", "x", "") conditional expressions.
func TSNested(open, inner, close string, n int) string {
	var b strings.Builder
	b.Grow(n*(len(open)+len(close)) + len(inner))
	for i := 0; i < n; i++ {
		b.WriteString(open)
	}
	b.WriteString(inner)
	for i := 0; i < n; i++ {
		b.WriteString(close)
	}
	return b.String()
}

// TSStatements is stmt on n lines at column 0, the shape of traced code:
// long and flat.
func TSStatements(stmt string, n int) string {
	return strings.Repeat(stmt+"\n", n)
}

// TSElifChain is an if with n-1 elifs, each branch running stmt, and an
// else running elseStmt (none if it is empty), at column 0:
//
//	if cond:
//	  stmt
//	elif cond:
//	  stmt
//	else:
//	  elseStmt
//
// A %d in cond is replaced by the branch's index, so that the conditions
// can differ.
func TSElifChain(cond, stmt, elseStmt string, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		kw := "elif"
		if i == 0 {
			kw = "if"
		}
		c := cond
		if strings.Contains(cond, "%d") {
			c = fmt.Sprintf(cond, i)
		}
		b.WriteString(kw + " " + c + ":\n  " + stmt + "\n")
	}
	if elseStmt != "" {
		b.WriteString("else:\n  " + elseStmt + "\n")
	}
	return b.String()
}

// TSNestedBlocks is n compound statements nested in one another, each
// indented two spaces more than the one before, with stmt innermost:
// TSNestedBlocks("if c", "y = x", 2) is "if c:\n  if c:\n    y = x\n".
func TSNestedBlocks(header, stmt string, n int) string {
	var b strings.Builder
	b.Grow(n*n + n*(len(header)+2) + len(stmt) + 2*n)
	for i := 0; i < n; i++ {
		b.WriteString(strings.Repeat("  ", i) + header + ":\n")
	}
	b.WriteString(strings.Repeat("  ", n) + stmt + "\n")
	return b.String()
}

// TSIndent indents every non-empty line of code by n spaces.
func TSIndent(code string, n int) string {
	pad := strings.Repeat(" ", n)
	var b strings.Builder
	b.Grow(len(code) + n*strings.Count(code, "\n") + n)
	for len(code) > 0 {
		line, rest, _ := strings.Cut(code, "\n")
		if line != "" {
			b.WriteString(pad + line)
		}
		b.WriteString("\n")
		code = rest
	}
	return b.String()
}

// TSModule is the source of a module class whose forward(self, x: Tensor)
// -> Tensor runs body (statements at column 0, ending in a return), as
// torch.jit.save writes it. qual is the class's qualified name: for
// "__torch__.M" the source is the archive's code/__torch__.py, for
// "__torch__.m.M" it is code/__torch__/m.py.
func TSModule(qual, body string) string {
	name := qual[strings.LastIndexByte(qual, '.')+1:]
	head := "class " + name + "(Module):\n  __parameters__ = []\n  __buffers__ = []\n  training : bool\n" +
		"  def forward(self: " + qual + ",\n    x: Tensor) -> Tensor:\n"
	return head + TSIndent(body, 4)
}

// DeepBlocksIR is graph IR with n prim::If nested in one another's then
// blocks, each on the graph input %c, around an aten::relu of %x.
// Indentation, which graph.Parse does not read, stops growing after 16
// levels so that the text stays linear in n.
func DeepBlocksIR(n int) string {
	indent := func(level int) string { return strings.Repeat("  ", min(level, 32)) }
	var b strings.Builder
	b.WriteString("graph(%x : Tensor, %c : bool):\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "%s%%i%d : Tensor = prim::If(%%c)\n%sblock0():\n", indent(2*i+1), i, indent(2*i+2))
	}
	fmt.Fprintf(&b, "%s%%r : Tensor = aten::relu(%%x)\n", indent(2*n+1))
	prev := "%r"
	for i := n - 1; i >= 0; i-- {
		fmt.Fprintf(&b, "%s-> (%s)\n%sblock1():\n%s-> (%%x)\n", indent(2*i+3), prev, indent(2*i+2), indent(2*i+3))
		prev = fmt.Sprintf("%%i%d", i)
	}
	fmt.Fprintf(&b, "  return (%s)\n", prev)
	return b.String()
}

// DeepTypeIR is graph IR whose input %x has a type nested n levels:
// Tensor followed by n "[]" (a list of lists ...) if bracket is false,
// else n tuples "(...,)" around Tensor.
func DeepTypeIR(n int, bracket bool) string {
	t := "Tensor" + strings.Repeat("[]", n)
	if bracket {
		t = TSNested("(", "Tensor", ",)", n)
	}
	return "graph(%x : " + t + "):\n  return (%x)\n"
}

// DeepLiteralIR is graph IR with one node whose attribute is a list
// literal nested n levels: prim::Print[x=[[[1]]]]().
func DeepLiteralIR(n int) string {
	return "graph():\n   = prim::Print[x=" + TSNested("[", "1", "]", n) + "]()\n  return ()\n"
}

// DeepForkIR is graph IR with prim::fork subgraphs nested n levels: each
// graph forks the next, whose text follows its return ("with prim::fork_0
// = graph(...)").
func DeepForkIR(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString("with prim::fork_0 = ")
		}
		b.WriteString("graph(%x : Tensor):\n  %f : Future[Tensor] = prim::fork_0(%x)\n  return (%f)\n")
	}
	if n > 0 {
		b.WriteString("with prim::fork_0 = ")
	}
	b.WriteString("graph(%x : Tensor):\n  %r : Tensor = aten::relu(%x)\n  return (%r)\n")
	return b.String()
}

// WideNodeIR is graph IR with one prim::ListConstruct of n inputs, all %x:
// one line of about 5n bytes.
func WideNodeIR(n int) string {
	items := ""
	if n > 0 {
		items = strings.Repeat("%x, ", n-1) + "%x"
	}
	return "graph(%x : Tensor):\n  %l : Tensor[] = prim::ListConstruct(" + items + ")\n  return (%l)\n"
}
