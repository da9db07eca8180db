package alias

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
)

var (
	T     = graph.Tensor
	TList = graph.ListOf(graph.Tensor)
)

// pair is one expectation about two values.
type pair struct {
	a, b string
	want bool
}

func TestAnalyze(t *testing.T) {
	tests := []struct {
		name string
		// build returns the graph's named values.
		build    func(b *builder) map[string]*graph.Value
		mayAlias []pair
		// flags: value name -> expected results of the per-value queries.
		input, output, writers, escapes map[string]bool
	}{
		{
			name: "fresh ops and views",
			build: func(b *builder) map[string]*graph.Value {
				x := b.input("x", T)
				r := b.op("aten::relu", T, x)
				v := b.op("aten::view", T, r, b.ints(-1))
				p := b.op("aten::permute", T, x, b.ints(1, 0))
				s := b.op("aten::sigmoid", T, v)
				b.ret(s)
				return map[string]*graph.Value{"x": x, "r": r, "v": v, "p": p, "s": s}
			},
			mayAlias: []pair{{"r", "v", true}, {"x", "r", false}, {"x", "p", true}, {"v", "s", false}, {"p", "r", false}},
			input:    map[string]bool{"x": true, "p": true, "r": false, "v": false, "s": false},
			output:   map[string]bool{"s": true, "v": false, "x": false},
			writers:  map[string]bool{"x": false, "r": false},
			escapes:  map[string]bool{"r": false},
		},
		{
			name: "in-place op writes its input and the input's views",
			build: func(b *builder) map[string]*graph.Value {
				x := b.input("x", T)
				r := b.op("aten::relu", T, x)
				v := b.op("aten::view", T, r, b.ints(-1))
				m := b.op("aten::mul", T, x, x)
				a := b.op("aten::add_", T, v, m, b.cint(1))
				b.ret(a)
				return map[string]*graph.Value{"r": r, "v": v, "m": m, "a": a}
			},
			mayAlias: []pair{{"a", "r", true}, {"a", "m", false}},
			writers:  map[string]bool{"r": true, "v": true, "a": true, "m": false},
			output:   map[string]bool{"r": true, "m": false},
		},
		{
			name: "list construct, cat, unpack and getitem",
			build: func(b *builder) map[string]*graph.Value {
				x := b.input("x", T)
				p := b.op("aten::relu", T, x)
				q := b.op("aten::tanh", T, x)
				l := b.op("prim::ListConstruct", TList, p, q)
				c := b.op("aten::cat", T, l, b.cint(0))
				u := b.node("prim::ListUnpack", []*graph.Type{T, T}, l)
				g := b.op("aten::__getitem__", T, l, b.cint(1))
				b.ret(c)
				return map[string]*graph.Value{"x": x, "p": p, "q": q, "l": l, "c": c, "u0": u.Outputs[0], "g": g}
			},
			mayAlias: []pair{{"u0", "p", true}, {"g", "q", true}, {"c", "p", false}, {"p", "q", false}, {"l", "p", false}},
			escapes:  map[string]bool{"p": true, "q": true, "c": false, "g": true},
			input:    map[string]bool{"g": false, "p": false},
			output:   map[string]bool{"p": false, "c": true},
		},
		{
			name: "append stores into the list and writes only the list",
			build: func(b *builder) map[string]*graph.Value {
				x := b.input("x", T)
				l := b.op("prim::ListConstruct", TList)
				a := b.op("aten::sigmoid", T, x)
				b.op("aten::append", TList, l, a)
				g := b.op("aten::__getitem__", T, l, b.cint(0))
				b.ret(l)
				return map[string]*graph.Value{"l": l, "a": a, "g": g}
			},
			mayAlias: []pair{{"g", "a", true}},
			writers:  map[string]bool{"l": true, "a": false},
			escapes:  map[string]bool{"a": true},
			output:   map[string]bool{"a": true, "g": true},
		},
		{
			name: "tuple output contains its elements",
			build: func(b *builder) map[string]*graph.Value {
				x := b.input("x", T)
				p := b.op("aten::relu", T, x)
				q := b.op("aten::exp", T, x)
				tu := b.op("prim::TupleConstruct", graph.TupleOf(T, T), p, x)
				b.ret(tu)
				return map[string]*graph.Value{"p": p, "q": q}
			},
			output: map[string]bool{"p": true, "q": false},
		},
		{
			name: "if outputs alias both branches",
			build: func(b *builder) map[string]*graph.Value {
				x := b.input("x", T)
				c := b.input("c", graph.Bool)
				p := b.op("aten::relu", T, x)
				q := b.op("aten::exp", T, x)
				n := b.node("prim::If", []*graph.Type{T}, c)
				t := b.block(n)
				tv := t.op("aten::view", T, p, t.ints(-1))
				t.ret(tv)
				b.block(n).ret(q)
				s := b.op("aten::neg", T, n.Outputs[0])
				b.ret(s)
				return map[string]*graph.Value{"p": p, "q": q, "o": n.Outputs[0], "c": c, "x": x}
			},
			mayAlias: []pair{{"o", "p", true}, {"o", "q", true}, {"p", "q", false}, {"c", "x", false}},
			input:    map[string]bool{"o": false, "c": false},
		},
		{
			name: "loop carried values alias the initial value and the body results",
			build: func(b *builder) map[string]*graph.Value {
				x := b.input("x", T)
				y0 := b.op("aten::relu", T, x)
				n := b.node("prim::Loop", []*graph.Type{T}, b.cint(3), b.cbool(true), y0)
				body := b.block(n)
				body.b.AddInput("i", graph.Int)
				y := body.b.AddInput("y", T)
				y2 := body.op("aten::view", T, y, body.ints(-1))
				body.ret(body.cbool(true), y2)
				z := b.op("aten::abs", T, x)
				b.ret(n.Outputs[0])
				return map[string]*graph.Value{"x": x, "y0": y0, "y": y, "y2": y2, "out": n.Outputs[0], "z": z}
			},
			mayAlias: []pair{{"out", "y0", true}, {"y", "y2", true}, {"y2", "y0", true}, {"out", "x", false}, {"z", "y", false}},
			output:   map[string]bool{"y0": true, "y2": true, "z": false},
		},
		{
			name: "chunk returns views of its input",
			build: func(b *builder) map[string]*graph.Value {
				x := b.input("x", T)
				r := b.op("aten::relu", T, x)
				l := b.op("aten::chunk", TList, r, b.cint(2), b.cint(0))
				u := b.node("prim::ListUnpack", []*graph.Type{T, T}, l)
				return map[string]*graph.Value{"r": r, "u1": u.Outputs[1], "l": l}
			},
			mayAlias: []pair{{"u1", "r", true}, {"l", "r", false}},
			input:    map[string]bool{"u1": false},
		},
		{
			name: "unknown op may alias and write anything",
			build: func(b *builder) map[string]*graph.Value {
				x := b.input("x", T)
				r := b.op("aten::relu", T, x)
				u := b.op("mylib::mystery", T, r)
				q := b.op("aten::exp", T, x)
				return map[string]*graph.Value{"r": r, "u": u, "x": x, "q": q}
			},
			mayAlias: []pair{{"u", "r", true}, {"u", "x", true}, {"q", "u", false}},
			writers:  map[string]bool{"r": true, "q": false},
			input:    map[string]bool{"u": true, "r": true},
		},
		{
			name: "graph inputs of mutable types may alias each other, scalars never",
			build: func(b *builder) map[string]*graph.Value {
				x := b.input("x", T)
				y := b.input("y", T)
				i := b.input("i", graph.Int)
				j := b.op("aten::add", graph.Int, i, i)
				return map[string]*graph.Value{"x": x, "y": y, "i": i, "j": j}
			},
			mayAlias: []pair{{"x", "y", true}, {"x", "i", false}, {"i", "j", false}, {"i", "i", false}},
			input:    map[string]bool{"i": false},
		},
		{
			name: "SetAttr makes the stored value external",
			build: func(b *builder) map[string]*graph.Value {
				self := b.input("self", graph.ClassOf("__torch__.M"))
				x := b.input("x", T)
				r := b.op("aten::relu", T, x)
				n := b.node("prim::SetAttr", nil, self, r)
				n.SetAttr("name", ivalueStr("buf"))
				w := b.op("prim::GetAttr", T, self)
				return map[string]*graph.Value{"r": r, "w": w, "self": self}
			},
			mayAlias: []pair{{"w", "r", true}},
			input:    map[string]bool{"r": true},
			writers:  map[string]bool{"self": true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newBuilder()
			vs := tt.build(b)
			d := Analyze(b.g)
			get := func(name string) *graph.Value {
				v, ok := vs[name]
				require.True(t, ok, "no value %q", name)
				return v
			}
			for _, p := range tt.mayAlias {
				assert.Equal(t, p.want, d.MayAlias(get(p.a), get(p.b)), "MayAlias(%s, %s)", p.a, p.b)
				assert.Equal(t, p.want, d.MayAlias(get(p.b), get(p.a)), "MayAlias(%s, %s)", p.b, p.a)
			}
			check := func(what string, m map[string]bool, f func(*graph.Value) bool) {
				for name, want := range m {
					assert.Equal(t, want, f(get(name)), "%s(%s)", what, name)
				}
			}
			check("MayAliasGraphInput", tt.input, d.MayAliasGraphInput)
			check("MayAliasGraphOutput", tt.output, d.MayAliasGraphOutput)
			check("HasWriters", tt.writers, d.HasWriters)
			check("EscapesToContainer", tt.escapes, d.EscapesToContainer)
		})
	}
}

func TestAliases(t *testing.T) {
	b := newBuilder()
	x := b.input("x", T)
	r := b.op("aten::relu", T, x)
	v := b.op("aten::view", T, r, b.ints(-1))
	tr := b.op("aten::t", T, v)
	b.op("aten::exp", T, x)
	one := b.cint(1)
	d := Analyze(b.g)
	assert.Equal(t, []*graph.Value{r, v, tr}, d.Aliases(v))
	assert.Nil(t, d.Aliases(one))
	// A value made after Analyze is unknown: it may alias external memory.
	late := b.op("aten::relu", T, x)
	assert.True(t, d.MayAliasGraphInput(late))
}

func TestOpTables(t *testing.T) {
	b := newBuilder()
	x := b.input("x", T)
	l := b.op("prim::ListConstruct", TList, x)
	tests := []struct {
		kind     string
		ins      []*graph.Value
		view     bool
		mutating bool
		nondet   bool
	}{
		{"aten::view", []*graph.Value{x, b.ints(-1)}, true, false, false},
		{"aten::reshape", []*graph.Value{x, b.ints(-1)}, true, false, false},
		{"aten::flatten", []*graph.Value{x, b.cint(0), b.cint(-1)}, true, false, false},
		{"aten::transpose", []*graph.Value{x, b.cint(0), b.cint(1)}, true, false, false},
		{"aten::select", []*graph.Value{x, b.cint(0), b.cint(1)}, true, false, false},
		{"aten::contiguous", []*graph.Value{x, b.cint(0)}, true, false, false},
		{"aten::detach", []*graph.Value{x}, true, false, false},
		{"aten::type_as", []*graph.Value{x, x}, true, false, false},
		{"aten::expand_as", []*graph.Value{x, x}, true, false, false},
		{"aten::add", []*graph.Value{x, x, b.cint(1)}, false, false, false},
		{"aten::add_", []*graph.Value{x, x, b.cint(1)}, false, true, false},
		{"aten::relu_", []*graph.Value{x}, false, true, false},
		{"aten::copy_", []*graph.Value{x, x, b.cbool(false)}, false, true, false},
		{"aten::append", []*graph.Value{l, x}, false, true, false},
		{"aten::clone", []*graph.Value{x, b.cint(0)}, false, false, false},
		{"aten::randn_like", []*graph.Value{x}, false, false, true},
		{"aten::dropout", []*graph.Value{x, b.cint(0), b.cbool(false)}, true, false, true},
		{"mylib::thing_", []*graph.Value{x}, false, true, false},
		{"aten::__and__", []*graph.Value{x, x}, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			n := b.node(tt.kind, []*graph.Type{T}, tt.ins...)
			assert.Equal(t, tt.view, IsViewOp(n), "IsViewOp")
			assert.Equal(t, tt.mutating, IsMutating(n), "IsMutating")
			assert.Equal(t, tt.nondet, IsNondeterministic(n), "IsNondeterministic")
		})
	}
}
