package alias

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// builder makes small test graphs with the graph/ir.go constructors.
type builder struct {
	g *graph.Graph
	b *graph.Block
}

func newBuilder() *builder {
	g := graph.New()
	return &builder{g: g, b: g.Block}
}

func (b *builder) input(name string, t *graph.Type) *graph.Value { return b.g.AddInput(name, t) }

// op appends kind(ins...) with one output of type t.
func (b *builder) op(kind string, t *graph.Type, ins ...*graph.Value) *graph.Value {
	return b.node(kind, []*graph.Type{t}, ins...).Outputs[0]
}

func (b *builder) node(kind string, outs []*graph.Type, ins ...*graph.Value) *graph.Node {
	n := b.g.NewNode(kind, ins, len(outs))
	for i, t := range outs {
		n.Outputs[i].Type = t
	}
	return b.b.Append(n)
}

func (b *builder) constant(v ivalue.IValue, t *graph.Type) *graph.Value {
	o := b.op("prim::Constant", t)
	if !v.IsNone() {
		o.Node.SetAttr("value", v)
	}
	return o
}

func (b *builder) cint(v int64) *graph.Value { return b.constant(ivalue.FromInt(v), graph.Int) }

func (b *builder) cbool(v bool) *graph.Value { return b.constant(ivalue.FromBool(v), graph.Bool) }

func (b *builder) ints(vs ...int64) *graph.Value {
	items := make([]ivalue.IValue, len(vs))
	for i, v := range vs {
		items[i] = ivalue.FromInt(v)
	}
	return b.constant(ivalue.NewList(items...), graph.ListOf(graph.Int))
}

// block adds a sub-block to n and returns a builder appending to it.
func (b *builder) block(n *graph.Node) *builder { return &builder{g: b.g, b: n.AddBlock()} }

func (b *builder) ret(vs ...*graph.Value) {
	for _, v := range vs {
		b.b.AddOutput(v)
	}
}

func ivalueStr(s string) ivalue.IValue { return ivalue.FromString(s) }
