package hostile

import (
	"strconv"
	"strings"

	"github.com/gosr/gosr/ivalue"
)

// Expectations of a case that loads and runs an input.
type expect int

const (
	mustReject expect = iota // an error; running it is wrong
	mustRun                  // runs, and the result is right
	either                   // unusual but legal: an error (a limit) or the right result
)

// codeCase is a case that loads module M with forward's body and runs it
// on x4, checking the result with check.
func codeCase(name string, e expect, body func() string, check func(outs []ivalue.IValue) error) Case {
	return Case{Name: ClassLongCode + "/" + name, Class: ClassLongCode, Run: func() error {
		b := body()
		outs, err := loadAndRun(scriptArchive(b), ivalue.FromTensor(x4()))
		return judge(e, outs, err, check, "forward: %.60s... (%d bytes)", b, len(b))
	}}
}

// judge applies an expectation to what a run gave.
func judge(e expect, outs []ivalue.IValue, err error, check func([]ivalue.IValue) error, what string, args ...any) error {
	switch {
	case e == mustReject:
		return rejected(err, what, args...)
	case err != nil && e == mustRun:
		return Wrongf("failed on a valid input: %v", err)
	case err != nil:
		return err
	}
	return check(outs)
}

// want checks for one tensor of values vals in x4's shape.
func want(vals ...float32) func([]ivalue.IValue) error {
	return func(outs []ivalue.IValue) error {
		return expectTensor(outs, ivalue.F32Tensor(vals, 1, 4))
	}
}

// codeJoin is "x OP x OP ... x" with n terms.
func codeJoin(term, op string, n int) string {
	var b strings.Builder
	b.Grow(n * (len(term) + len(op)))
	for i := range n {
		if i > 0 {
			b.WriteString(op)
		}
		b.WriteString(term)
	}
	return b.String()
}

// Long chains of TorchScript code: the parser bounds nesting, but
// left-nested chains (a + b + c, x.f().g()) are as deep for the compiler
// and the passes, and a 2M-term sum is an 8 MB line from 10 KB of zip.
// Bodies are made in the child that runs the case.
func longCodeCases() []Case {
	ret := func(expr string) string { return "    return " + expr + "\n" }
	elif := func() string {
		var b strings.Builder
		b.WriteString("    y = x\n    if bool(torch.gt(torch.sum(x), 0)):\n      y = torch.relu(x)\n")
		for i := range 100_000 {
			b.WriteString("    elif bool(torch.gt(torch.sum(x), " + strconv.Itoa(i+1) + ")):\n      y = torch.neg(x)\n")
		}
		return b.String() + "    return y\n"
	}
	// 2,000 levels, ten times the compiler's limit: the indentation alone
	// is 4 MB (10,000 would be 100 MB, more than a fair input).
	nestedIf := func() string {
		var b strings.Builder
		b.WriteString("    y = x\n")
		for i := range 2_000 {
			b.WriteString(strings.Repeat(" ", 4+2*i) + "if bool(torch.gt(torch.sum(x), -1)):\n")
		}
		return b.String() + strings.Repeat(" ", 4+2*2_000) + "y = torch.relu(x)\n    return y\n"
	}
	relu := want(1, 0, 3, 0)
	same := want(1, -2, 3, -4)
	return []Case{
		// The reference: the generated module itself loads and runs.
		codeCase("baseline-relu", mustRun, func() string { return ret("torch.relu(x)") }, relu),
		codeCase("sum-2M-terms", mustReject, func() string { return ret(codeJoin("x", " + ", terms)) }, nil),
		codeCase("sub-2M-terms", mustReject, func() string { return ret(codeJoin("x", " - ", terms)) }, nil),
		codeCase("mul-add-2M-terms", mustReject, func() string { return ret(codeJoin("x * x", " + ", terms/2)) }, nil),
		codeCase("relu-chain-600k", mustReject, func() string { return ret("x" + strings.Repeat(".relu()", chainLen)) }, nil),
		codeCase("method-chain-600k-mixed", mustReject, func() string { return ret("x" + strings.Repeat(".relu().neg()", chainLen/2)) }, nil),
		codeCase("attribute-chain-1M", mustReject, func() string { return ret("self" + strings.Repeat(".a", nesting)) }, nil),
		codeCase("subscript-chain-1M", mustReject, func() string { return ret("x" + strings.Repeat("[0]", nesting)) }, nil),
		codeCase("call-chain-1M", mustReject, func() string { return ret("torch.relu" + strings.Repeat("(x)", nesting)) }, nil),
		codeCase("parens-1M", mustReject, func() string { return ret(strings.Repeat("(", nesting) + "x" + strings.Repeat(")", nesting)) }, nil),
		codeCase("nested-calls-1M", mustReject, func() string {
			return ret(strings.Repeat("torch.relu(", nesting) + "x" + strings.Repeat(")", nesting))
		}, nil),
		codeCase("unary-minus-1M", mustReject, func() string { return ret(strings.Repeat("-", nesting) + "x") }, nil),
		codeCase("not-1M", mustReject, func() string { return "    b = " + strings.Repeat("not ", nesting) + "bool(x)\n" + ret("x") }, nil),
		codeCase("and-chain-1M", mustReject, func() string { return "    b = " + codeJoin("bool(x)", " and ", nesting) + "\n" + ret("x") }, nil),
		codeCase("compare-chain-1M", mustReject, func() string { return "    b = " + codeJoin("1", " < ", nesting) + "\n" + ret("x") }, nil),
		codeCase("power-chain-1M", mustReject, func() string { return ret(codeJoin("x", " ** ", nesting)) }, nil),
		codeCase("nested-lists-1M", mustReject, func() string {
			return "    l = " + strings.Repeat("[", nesting) + strings.Repeat("]", nesting) + "\n" + ret("x")
		}, nil),
		codeCase("ternary-chain-500k", mustReject, func() string { return ret(strings.Repeat("x if bool(x) else ", nesting/2) + "x") }, nil),
		codeCase("elif-100k", mustReject, elif, nil),
		codeCase("nested-if-2k", mustReject, nestedIf, nil),
		codeCase("view-rank-1M", mustReject, func() string { return ret("torch.view(x, [" + codeJoin("1", ", ", nesting) + ", 4])") }, nil),
		// Wide rather than deep, or just big: legal, so either refused by
		// a limit or run right.
		codeCase("tuple-1M-wide", either, func() string { return "    t = (" + codeJoin("x", ", ", nesting) + ")\n" + ret("torch.relu(x)") }, relu),
		codeCase("cat-100k-inputs", either, func() string {
			return ret("torch.sum(torch.cat([" + codeJoin("x", ", ", 100_000) + "]), [0], True)")
		}, want(100_000, -200_000, 300_000, -400_000)),
		codeCase("identifier-16MB", either, func() string { return "    " + strings.Repeat("y", 16<<20) + " = x\n" + ret("x") }, same),
		codeCase("string-literal-64MB", either, func() string { return "    s = \"" + strings.Repeat("s", 64<<20) + "\"\n" + ret("x") }, same),
	}
}
