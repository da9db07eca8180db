package gen

import (
	"fmt"
	"strings"
)

// The graph generators below return TorchScript IR text (graph.Parse
// reads it) for graphs of about n op nodes, each a shape that once made
// some part of preparation superlinear. Every graph takes %x : Tensor (a
// 2-D float tensor is a valid input) and the ones with control flow also
// %c : bool and %k : int, and all of them run.

// ReluChainIR is a chain of n aten::relu, each reading the one before.
func ReluChainIR(n int) string {
	var b strings.Builder
	b.WriteString("graph(%x : Tensor):\n")
	prev := "%x"
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  %%r%d : Tensor = aten::relu(%s)\n", i, prev)
		prev = fmt.Sprintf("%%r%d", i)
	}
	fmt.Fprintf(&b, "  return (%s)\n", prev)
	return b.String()
}

// WideIR is n independent aten::relu all reading %x, summed by a
// balanced tree of aten::add (n-1 more nodes, depth log n).
func WideIR(n int) string {
	var b strings.Builder
	b.WriteString("graph(%x : Tensor):\n  %one : int = prim::Constant[value=1]()\n")
	level := make([]string, 0, n)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  %%w%d : Tensor = aten::relu(%%x)\n", i)
		level = append(level, fmt.Sprintf("%%w%d", i))
	}
	if n == 0 {
		level = append(level, "%x")
	}
	k := 0
	for len(level) > 1 {
		var next []string
		for i := 0; i+1 < len(level); i += 2 {
			fmt.Fprintf(&b, "  %%s%d : Tensor = aten::add(%s, %s, %%one)\n", k, level[i], level[i+1])
			next = append(next, fmt.Sprintf("%%s%d", k))
			k++
		}
		if len(level)%2 == 1 {
			next = append(next, level[len(level)-1])
		}
		level = next
	}
	fmt.Fprintf(&b, "  return (%s)\n", level[0])
	return b.String()
}

// WideDeadIR is n aten::relu of %x whose results nobody reads: dead code
// elimination removes all n uses of one value.
func WideDeadIR(n int) string {
	var b strings.Builder
	b.WriteString("graph(%x : Tensor):\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  %%d%d : Tensor = aten::relu(%%x)\n", i)
	}
	b.WriteString("  %y : Tensor = aten::relu(%x)\n  return (%y)\n")
	return b.String()
}

// InplaceChainIR is aten::relu of %x followed by a chain of n
// aten::relu_, each writing the one before: RemoveMutation frees one more
// of them per round.
func InplaceChainIR(n int) string {
	var b strings.Builder
	b.WriteString("graph(%x : Tensor):\n  %y : Tensor = aten::relu(%x)\n")
	prev := "%y"
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  %%m%d : Tensor = aten::relu_(%s)\n", i, prev)
		prev = fmt.Sprintf("%%m%d", i)
	}
	fmt.Fprintf(&b, "  return (%s)\n", prev)
	return b.String()
}

// ViewChainIR is a fresh tensor followed by a chain of n views of it
// (aten::t, aten::unsqueeze, aten::squeeze, aten::t in turn), all
// aliasing one another, and an aten::relu of the last: a tensor with n
// aliases. The result is relu(x), transposed when the chain holds an odd
// number of aten::t.
func ViewChainIR(n int) string {
	var b strings.Builder
	b.WriteString("graph(%x : Tensor):\n  %zero : int = prim::Constant[value=0]()\n")
	b.WriteString("  %v : Tensor = aten::relu(%x)\n")
	prev := "%v"
	for i := 0; i < n; i++ {
		switch i % 4 {
		case 0, 3:
			fmt.Fprintf(&b, "  %%v%d : Tensor = aten::t(%s)\n", i, prev)
		case 1:
			fmt.Fprintf(&b, "  %%v%d : Tensor = aten::unsqueeze(%s, %%zero)\n", i, prev)
		case 2:
			fmt.Fprintf(&b, "  %%v%d : Tensor = aten::squeeze(%s, %%zero)\n", i, prev)
		}
		prev = fmt.Sprintf("%%v%d", i)
	}
	if n%4 == 2 { // one unsqueeze not yet undone
		fmt.Fprintf(&b, "  %%vs : Tensor = aten::squeeze(%s, %%zero)\n", prev)
		prev = "%vs"
	}
	fmt.Fprintf(&b, "  %%y : Tensor = aten::relu(%s)\n  return (%%y)\n", prev)
	return b.String()
}

// ListIR is n aten::relu of %x gathered by one prim::ListConstruct of n
// inputs into an aten::cat along dimension 0.
func ListIR(n int) string {
	var b strings.Builder
	b.WriteString("graph(%x : Tensor):\n  %zero : int = prim::Constant[value=0]()\n")
	items := make([]string, n)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  %%l%d : Tensor = aten::relu(%%x)\n", i)
		items[i] = fmt.Sprintf("%%l%d", i)
	}
	if n == 0 {
		items = append(items, "%x")
	}
	fmt.Fprintf(&b, "  %%list : Tensor[] = prim::ListConstruct(%s)\n", strings.Join(items, ", "))
	b.WriteString("  %y : Tensor = aten::cat(%list, %zero)\n  return (%y)\n")
	return b.String()
}

// IfChainIR is a chain of n prim::If on the graph input %c, each taking
// the value before it to aten::relu in one branch and aten::neg in the
// other: n sub-blocks each side.
func IfChainIR(n int) string {
	var b strings.Builder
	b.WriteString("graph(%x : Tensor, %c : bool):\n")
	prev := "%x"
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  %%i%d : Tensor = prim::If(%%c)\n", i)
		fmt.Fprintf(&b, "    block0():\n      %%a%d : Tensor = aten::relu(%s)\n      -> (%%a%d)\n", i, prev, i)
		fmt.Fprintf(&b, "    block1():\n      %%b%d : Tensor = aten::neg(%s)\n      -> (%%b%d)\n", i, prev, i)
		prev = fmt.Sprintf("%%i%d", i)
	}
	fmt.Fprintf(&b, "  return (%s)\n", prev)
	return b.String()
}

// LoopChainIR is a chain of n prim::Loop of %k iterations, each carrying
// the value before it through one aten::add per iteration.
func LoopChainIR(n int) string {
	var b strings.Builder
	b.WriteString("graph(%x : Tensor, %k : int):\n")
	b.WriteString("  %true : bool = prim::Constant[value=1]()\n  %one : int = prim::Constant[value=1]()\n")
	prev := "%x"
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  %%o%d : Tensor = prim::Loop(%%k, %%true, %s)\n", i, prev)
		fmt.Fprintf(&b, "    block0(%%it%d : int, %%c%d : Tensor):\n", i, i)
		fmt.Fprintf(&b, "      %%n%d : Tensor = aten::add(%%c%d, %%one, %%one)\n      -> (%%true, %%n%d)\n", i, i, i)
		prev = fmt.Sprintf("%%o%d", i)
	}
	fmt.Fprintf(&b, "  return (%s)\n", prev)
	return b.String()
}

// ConstChainIR is a chain of n aten::add, each adding its own tensor
// constant (prim::Constant[value=<Tensor>]) to the value before: n tensor
// constants, to bind in order through graph.ParseOptions.Tensors (any
// tensors that broadcast with %x).
func ConstChainIR(n int) string {
	var b strings.Builder
	b.WriteString("graph(%x : Tensor):\n  %one : int = prim::Constant[value=1]()\n")
	prev := "%x"
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  %%k%d : Tensor = prim::Constant[value=<Tensor>]()\n", i)
		fmt.Fprintf(&b, "  %%a%d : Tensor = aten::add(%s, %%k%d, %%one)\n", i, prev, i)
		prev = fmt.Sprintf("%%a%d", i)
	}
	fmt.Fprintf(&b, "  return (%s)\n", prev)
	return b.String()
}
