package tscode

// Limits that keep the compiler's recursion, and that of the graph passes
// that walk what it builds, bounded on hostile or generated code: each is
// reported as an error naming the limit and the source line.
//
// Length is not nesting: the parser builds left-nested chains (y + y +
// ... + y, x.relu().relu()..., a[0][0]..., a and b and ..., elif chains)
// in loops and does not count them against its depth limit (maxDepth),
// and the compiler walks them in loops too (expr, boolOp, ifStmt).
// What bounds an expression's length is maxStmtTokens.
const (
	// maxStmtTokens bounds the tokens of one logical line (a statement,
	// continuation lines inside brackets included), and so the size of
	// one expression and the memory the lexer spends on it: printed code
	// is long sequences of short statements (PythonPrint inlines only
	// short expressions); a 100,000-term sum still compiles.
	maxStmtTokens = 250_000
	// maxExprDepth bounds the nesting of expressions (brackets, call
	// arguments, right operands), counted across inlined calls (real
	// models' printed code nests a few levels per call; inlining is
	// itself limited to maxInlineDepth calls).
	maxExprDepth = 4000
	// maxInlineDepth bounds nested inlined calls (recursion is not
	// supported by TorchScript either).
	maxInlineDepth = 100
	// maxBlockDepth bounds the nesting of prim::If and prim::Loop blocks
	// in the graph built, inlining included: the graph text parser accepts
	// 200 levels, and passes walk blocks recursively.
	maxBlockDepth = 200
	// maxValueDepth bounds the nesting of containers in module attributes
	// and constants (data.pkl, constants.pkl) made into graph values.
	maxValueDepth = 1000
)

// checkNesting reports an error when a node with blocks appended to the
// current block would nest deeper than maxBlockDepth.
func (c *compiler) checkNesting(at Node) error {
	d := 0
	for b := c.block; b != nil && b.Owner != nil; b = b.Owner.Owner {
		d++
	}
	if d >= maxBlockDepth {
		return c.errf(at, "if/loop blocks nested more than %d levels deep (inlined calls included)", maxBlockDepth)
	}
	return nil
}
