// Package graph holds gosr's TorchScript-like IR: a Graph owns a top
// Block; a Block is a list of Nodes with parameters (block inputs) and
// returns; a Node is one op application, with input and output Values and
// nested Blocks for control flow (prim::If, prim::Loop). The text form is
// the one PyTorch prints for `scripted.graph`.
package graph

import (
	"fmt"
	"slices"

	"github.com/gosr/gosr/ivalue"
)

// Value is an SSA value: a node output or a block parameter.
type Value struct {
	ID   int    // unique within the graph
	Name string // debug name without the %, e.g. "x.1"; empty means print ID
	Type *Type
	// Node is the producer: the node it is an output of, or, for a
	// block parameter, the block's Param node.
	Node   *Node
	Offset int // index among Node's outputs
	Uses   []Use
}

// Use is one consumer of a value: input Index of User. Block returns are
// uses by the block's Return node.
type Use struct {
	User  *Node
	Index int
}

// DebugName returns the name printed after %.
func (v *Value) DebugName() string {
	if v.Name != "" {
		return v.Name
	}
	return fmt.Sprint(v.ID)
}

func (v *Value) String() string { return "%" + v.DebugName() }

// ReplaceAllUsesWith redirects every use of v to w.
func (v *Value) ReplaceAllUsesWith(w *Value) {
	if v == w {
		return
	}
	for _, u := range v.Uses {
		u.User.Inputs[u.Index] = w
		w.Uses = append(w.Uses, u)
	}
	v.Uses = nil
}

// Attr is a named node attribute, as in prim::Constant[value=1] or
// prim::GetAttr[name="fc"].
type Attr struct {
	Name  string
	Value ivalue.IValue
}

// Node is one operation.
type Node struct {
	Kind    string // qualified op name: "aten::add", KindConstant
	Inputs  []*Value
	Outputs []*Value
	Blocks  []*Block
	Attrs   []Attr
	Owner   *Block // the block whose Nodes list holds this node
	// SourceRange is the trailing "# file:line:col" comment, if any; kept
	// for error messages only.
	SourceRange string

	g *Graph
}

// Attr returns the attribute named name.
func (n *Node) Attr(name string) (ivalue.IValue, bool) {
	for _, a := range n.Attrs {
		if a.Name == name {
			return a.Value, true
		}
	}
	return ivalue.IValue{}, false
}

// SetAttr sets or replaces an attribute.
func (n *Node) SetAttr(name string, v ivalue.IValue) {
	for i, a := range n.Attrs {
		if a.Name == name {
			n.Attrs[i].Value = v
			return
		}
	}
	n.Attrs = append(n.Attrs, Attr{Name: name, Value: v})
}

// Output returns the single output of n (panics if n has several: a
// programming error in a pass).
func (n *Node) Output() *Value {
	if len(n.Outputs) != 1 {
		panic(fmt.Sprintf("graph: %s has %d outputs", n.Kind, len(n.Outputs)))
	}
	return n.Outputs[0]
}

// Graph returns the graph that owns n.
func (n *Node) Graph() *Graph { return n.g }

// AddInput appends an input and records the use.
func (n *Node) AddInput(v *Value) {
	n.Inputs = append(n.Inputs, v)
	v.Uses = append(v.Uses, Use{User: n, Index: len(n.Inputs) - 1})
}

// ReplaceInput sets input i to v, maintaining use lists.
func (n *Node) ReplaceInput(i int, v *Value) {
	old := n.Inputs[i]
	old.removeUse(n, i)
	n.Inputs[i] = v
	v.Uses = append(v.Uses, Use{User: n, Index: i})
}

// RemoveAllInputs drops every input and its use record.
func (n *Node) RemoveAllInputs() {
	for i, in := range n.Inputs {
		in.removeUse(n, i)
	}
	n.Inputs = nil
}

// SetInputs replaces all inputs.
func (n *Node) SetInputs(vs []*Value) {
	n.RemoveAllInputs()
	for _, v := range vs {
		n.AddInput(v)
	}
}

func (v *Value) removeUse(n *Node, i int) {
	for k, u := range v.Uses {
		if u.User == n && u.Index == i {
			v.Uses = slices.Delete(v.Uses, k, k+1)
			return
		}
	}
}

// AddOutput appends a fresh output of type t.
func (n *Node) AddOutput(t *Type) *Value {
	v := &Value{ID: n.g.nextID(), Type: t, Node: n, Offset: len(n.Outputs)}
	n.Outputs = append(n.Outputs, v)
	return v
}

// AddBlock appends a fresh, empty sub-block.
func (n *Node) AddBlock() *Block {
	b := newBlock(n.g, n)
	n.Blocks = append(n.Blocks, b)
	return b
}

// Destroy removes n from its block. Its outputs must be unused.
func (n *Node) Destroy() {
	for _, o := range n.Outputs {
		if len(o.Uses) > 0 {
			panic(fmt.Sprintf("graph: destroying %s whose output %s has uses", n.Kind, o))
		}
	}
	n.RemoveAllInputs()
	for _, b := range n.Blocks {
		for i := len(b.Nodes) - 1; i >= 0; i-- {
			b.Nodes[i].dropUsesDeep()
		}
		b.Return.RemoveAllInputs()
	}
	if n.Owner != nil {
		n.Owner.remove(n)
	}
}

func (n *Node) dropUsesDeep() {
	n.RemoveAllInputs()
	for _, b := range n.Blocks {
		for _, m := range b.Nodes {
			m.dropUsesDeep()
		}
		b.Return.RemoveAllInputs()
	}
}

// IsBefore reports whether n comes before m in the same block.
func (n *Node) IsBefore(m *Node) bool {
	if n.Owner != m.Owner {
		return false
	}
	return n.Owner.Index(n) < n.Owner.Index(m)
}

// Block is a straight-line list of nodes with parameters and returns.
type Block struct {
	Graph  *Graph
	Owner  *Node // the node holding this sub-block; nil for the top block
	Param  *Node // prim::Param: its Outputs are the block inputs
	Return *Node // prim::Return: its Inputs are the block outputs
	Nodes  []*Node
}

func newBlock(g *Graph, owner *Node) *Block {
	b := &Block{Graph: g, Owner: owner}
	b.Param = &Node{Kind: KindParam, Owner: b, g: g}
	b.Return = &Node{Kind: KindReturn, Owner: b, g: g}
	return b
}

// Inputs returns the block parameters.
func (b *Block) Inputs() []*Value { return b.Param.Outputs }

// Outputs returns the returned values.
func (b *Block) Outputs() []*Value { return b.Return.Inputs }

// AddInput appends a parameter of type t named name (may be empty).
func (b *Block) AddInput(name string, t *Type) *Value {
	v := b.Param.AddOutput(t)
	v.Name = name
	return v
}

// RemoveInput deletes parameter i, which must be unused.
func (b *Block) RemoveInput(i int) {
	v := b.Param.Outputs[i]
	if len(v.Uses) > 0 {
		panic(fmt.Sprintf("graph: removing used block input %s", v))
	}
	b.Param.Outputs = slices.Delete(b.Param.Outputs, i, i+1)
	for k := i; k < len(b.Param.Outputs); k++ {
		b.Param.Outputs[k].Offset = k
	}
}

// AddOutput appends v to the block's returns.
func (b *Block) AddOutput(v *Value) { b.Return.AddInput(v) }

// Index returns n's position in b.Nodes, or -1.
func (b *Block) Index(n *Node) int { return slices.Index(b.Nodes, n) }

func (b *Block) remove(n *Node) {
	if i := b.Index(n); i >= 0 {
		b.Nodes = slices.Delete(b.Nodes, i, i+1)
	}
	n.Owner = nil
}

// NewNode creates a node of the given kind with the given inputs and n
// outputs of type Tensor, not yet inserted anywhere (Append, InsertBefore).
func (g *Graph) NewNode(kind string, inputs []*Value, nOutputs int) *Node {
	n := &Node{Kind: kind, g: g}
	for _, v := range inputs {
		n.AddInput(v)
	}
	for i := 0; i < nOutputs; i++ {
		n.Outputs = append(n.Outputs, &Value{ID: g.nextID(), Type: Tensor, Node: n, Offset: i})
	}
	return n
}

// Append adds n at the end of b.
func (b *Block) Append(n *Node) *Node {
	n.Owner = b
	b.Nodes = append(b.Nodes, n)
	return n
}

// InsertBefore puts n just before pos (in pos's block).
func (n *Node) InsertBefore(pos *Node) *Node {
	b := pos.Owner
	i := b.Index(pos)
	n.Owner = b
	b.Nodes = slices.Insert(b.Nodes, i, n)
	return n
}

// InsertAfter puts n just after pos (in pos's block).
func (n *Node) InsertAfter(pos *Node) *Node {
	b := pos.Owner
	i := b.Index(pos)
	n.Owner = b
	b.Nodes = slices.Insert(b.Nodes, i+1, n)
	return n
}

// Graph is a function: the top block plus the value numbering.
type Graph struct {
	Block *Block
	ids   int
	// printed keeps the text tensor constants were parsed from, so the
	// printer reproduces PyTorch's (see parse.go).
	printed map[*Node]printedTensor
	// InputDefaults holds, per graph input, the default value of the
	// method's parameter (forward(self, images, targets=None)), nil where
	// it has none; nil or shorter than the inputs when there are none.
	InputDefaults []*ivalue.IValue
	// Backing owns memory the tensor constants view without a copy (a
	// loader's memory-mapped archive); nil when they are Go memory.
	Backing Backing
}

// New returns an empty graph.
func New() *Graph {
	g := &Graph{}
	g.Block = newBlock(g, nil)
	return g
}

func (g *Graph) nextID() int { g.ids++; return g.ids - 1 }

// Inputs returns the graph inputs.
func (g *Graph) Inputs() []*Value { return g.Block.Inputs() }

// Outputs returns the graph outputs.
func (g *Graph) Outputs() []*Value { return g.Block.Outputs() }

// AddInput adds a graph input.
func (g *Graph) AddInput(name string, t *Type) *Value { return g.Block.AddInput(name, t) }

// AddOutput adds a graph output.
func (g *Graph) AddOutput(v *Value) { g.Block.AddOutput(v) }

// Constant appends (to b, before pos if pos is non-nil) a prim::Constant
// holding v, typed t, and returns its output.
func (g *Graph) Constant(v ivalue.IValue, t *Type, pos *Node) *Value {
	n := g.NewNode(KindConstant, nil, 1)
	n.Outputs[0].Type = t
	if !v.IsNone() {
		n.Attrs = []Attr{{Name: "value", Value: v}}
	}
	if pos != nil {
		n.InsertBefore(pos)
	} else {
		g.Block.Nodes = slices.Insert(g.Block.Nodes, 0, n)
		n.Owner = g.Block
	}
	return n.Outputs[0]
}

// Walk calls f for every node of b and its sub-blocks, in order,
// parents before their sub-blocks' nodes.
func (b *Block) Walk(f func(*Node)) {
	for _, n := range b.Nodes {
		f(n)
		for _, sb := range n.Blocks {
			sb.Walk(f)
		}
	}
}

// Walk visits every node of the graph.
func (g *Graph) Walk(f func(*Node)) { g.Block.Walk(f) }

// ConstantValue returns the value of a prim::Constant's output and true,
// or false if v is not a constant.
func ConstantValue(v *Value) (ivalue.IValue, bool) {
	if v.Node == nil || v.Node.Kind != KindConstant {
		return ivalue.IValue{}, false
	}
	c, _ := v.Node.Attr("value")
	return c, true
}
