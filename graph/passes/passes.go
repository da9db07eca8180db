// Package passes holds the graph passes run before a graph is prepared
// for the static runtime, as a pass table in the style of the Go
// compiler's cmd/compile/internal/ssa/compile.go: Run applies Pipeline in
// order, optionally verifying the graph after every pass.
package passes

import (
	"fmt"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops"
)

// Pass is one graph transformation.
type Pass struct {
	Name string
	Fn   func(g *graph.Graph, c *Context) error
	// Required passes run even when named in Context.Disable.
	Required bool
}

// EvalFunc computes the outputs of node n from its (constant) inputs,
// for constant propagation.
type EvalFunc func(n *graph.Node, inputs []ivalue.IValue) ([]ivalue.IValue, error)

// Context carries the options of a pipeline run.
type Context struct {
	// EnableOutVariant enables the passes that only pay off with out
	// variants (ReplaceWithCopy), as StaticModuleOptions.enable_out_variant.
	EnableOutVariant bool
	// OutputsAreImmutable lets ReplaceWithCopy replace views whose result
	// may be (part of) a graph output: the caller promises not to mutate
	// outputs in place, so a copy instead of a view is not observable.
	OutputsAreImmutable bool
	// Verify checks the graph (g.Verify and the use lists) after every pass.
	Verify bool
	// Eval evaluates nodes for ConstantPropagation; nil means DefaultEval.
	Eval EvalFunc
	// HasOp reports whether a kernel exists for an op kind, so passes only
	// introduce ops the runtime can run; nil means the ops registry.
	HasOp func(kind string) bool
	// Disable names passes to skip (unless Required).
	Disable map[string]bool
	// Trace, if set, is called with each pass's name and the graph after it.
	Trace func(pass string, g *graph.Graph)
}

// Pipeline is the default pass order.
var Pipeline = []Pass{
	{Name: "RemoveSelfInput", Fn: RemoveSelfInput},
	{Name: "EliminateNoOps", Fn: EliminateNoOps},
	{Name: "FoldConvBatchNorm", Fn: FoldConvBatchNorm},
	{Name: "RemoveMutation", Fn: RemoveMutation},
	{Name: "ConstantPropagation", Fn: ConstantPropagation},
	{Name: "DeadCodeElimination", Fn: DeadCodeElimination},
	{Name: "UseVariadicCat", Fn: UseVariadicCat},
	{Name: "UseVariadicStack", Fn: UseVariadicStack},
	{Name: "ReplaceWithCopy", Fn: ReplaceWithCopy},
	{Name: "DeadCodeElimination", Fn: DeadCodeElimination},
	{Name: "UseInplaceActivations", Fn: UseInplaceActivations},
}

// Run applies Pipeline to g. c may be nil (defaults).
func Run(g *graph.Graph, c *Context) error {
	return RunPasses(g, c, Pipeline)
}

// RunPasses applies the given passes in order.
func RunPasses(g *graph.Graph, c *Context, ps []Pass) error {
	if g == nil {
		return fmt.Errorf("passes: nil graph")
	}
	if c == nil {
		c = &Context{}
	}
	for _, p := range ps {
		if !p.Required && c.Disable[p.Name] {
			continue
		}
		if err := runOne(g, c, p); err != nil {
			return fmt.Errorf("pass %s: %w", p.Name, err)
		}
		if c.Verify {
			if err := Verify(g); err != nil {
				return fmt.Errorf("graph invalid after pass %s: %w", p.Name, err)
			}
		}
		if c.Trace != nil {
			c.Trace(p.Name, g)
		}
	}
	return nil
}

// runOne turns a panic of a pass (a bug, or a graph shape the pass did not
// expect) into an error.
func runOne(g *graph.Graph, c *Context, p Pass) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("internal error: %v", r)
		}
	}()
	return p.Fn(g, c)
}

func (c *Context) hasOp(kind string) bool {
	if c.HasOp != nil {
		return c.HasOp(kind)
	}
	mu := ops.Registered()
	for _, k := range mu {
		if k == kind {
			return true
		}
	}
	return false
}

// Verify checks g with graph.Verify and checks that use lists match the
// inputs exactly (the invariant every pass must keep).
func Verify(g *graph.Graph) error {
	if err := g.Verify(); err != nil {
		return err
	}
	return checkUses(g)
}

func checkUses(g *graph.Graph) error {
	type use struct {
		n *graph.Node
		i int
	}
	want := map[*graph.Value]map[use]bool{}
	record := func(n *graph.Node) {
		for i, in := range n.Inputs {
			if in == nil {
				return
			}
			if want[in] == nil {
				want[in] = map[use]bool{}
			}
			want[in][use{n, i}] = true
		}
	}
	var values []*graph.Value
	var visit func(b *graph.Block) error
	visit = func(b *graph.Block) error {
		values = append(values, b.Inputs()...)
		for _, n := range b.Nodes {
			if n.Owner != b {
				return fmt.Errorf("%s is in a block it does not name as owner", n.Kind)
			}
			for i, in := range n.Inputs {
				if in == nil {
					return fmt.Errorf("%s: input %d is nil", n.Kind, i)
				}
			}
			record(n)
			for i, o := range n.Outputs {
				if o.Node != n || o.Offset != i {
					return fmt.Errorf("%s: output %d (%s) names the wrong producer or offset", n.Kind, i, o)
				}
			}
			values = append(values, n.Outputs...)
			for _, sb := range n.Blocks {
				if sb.Owner != n {
					return fmt.Errorf("%s: sub-block names the wrong owner", n.Kind)
				}
				if err := visit(sb); err != nil {
					return err
				}
			}
		}
		record(b.Return)
		return nil
	}
	if err := visit(g.Block); err != nil {
		return err
	}
	for _, v := range values {
		if len(v.Uses) != len(want[v]) {
			return fmt.Errorf("value %s has %d recorded uses, %d real ones", v, len(v.Uses), len(want[v]))
		}
		for _, u := range v.Uses {
			if !want[v][use{u.User, u.Index}] {
				return fmt.Errorf("value %s records a use by %s input %d that does not exist", v, u.User.Kind, u.Index)
			}
		}
	}
	return nil
}
