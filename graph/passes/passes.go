// Package passes holds the graph passes run before a graph is prepared
// for the static runtime, as a pass table in the style of the Go
// compiler's cmd/compile/internal/ssa/compile.go: Run applies Pipeline in
// order, optionally verifying the graph after every pass.
package passes

import (
	"context"
	"fmt"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/graph/alias"
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

	// ctx is RunPassesContext's; nil means context.Background.
	ctx   context.Context
	ticks uint
	// ops is the set of registered ops, read once per run (hasOp).
	ops map[string]bool
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

// RunContext is Run, stopping with ctx's error (wrapped with the pass it
// stopped in) when ctx is done: between passes and, every thousand nodes
// or so, inside them. The graph is then partly transformed: discard it.
func RunContext(ctx context.Context, g *graph.Graph, c *Context) error {
	return RunPassesContext(ctx, g, c, Pipeline)
}

// RunPasses applies the given passes in order.
func RunPasses(g *graph.Graph, c *Context, ps []Pass) error {
	return RunPassesContext(context.Background(), g, c, ps)
}

// RunPassesContext is RunPasses honouring ctx as RunContext does.
func RunPassesContext(ctx context.Context, g *graph.Graph, c *Context, ps []Pass) error {
	if g == nil {
		return fmt.Errorf("passes: nil graph")
	}
	if c == nil {
		c = &Context{}
	}
	cc := *c // the caller's Context is not changed
	c = &cc
	c.ctx = ctx
	for _, p := range ps {
		if !p.Required && c.Disable[p.Name] {
			continue
		}
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("before pass %s: %w", p.Name, err)
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
	if c.ops == nil {
		c.ops = map[string]bool{}
		for _, k := range ops.Registered() {
			c.ops[k] = true
		}
	}
	return c.ops[kind]
}

// context is the run's context.
func (c *Context) context() context.Context {
	if c.ctx == nil {
		return context.Background()
	}
	return c.ctx
}

// poll returns the context's error on every 1024th call: cheap enough to
// call once per node.
func (c *Context) poll() error {
	if c.ticks++; c.ticks&1023 != 0 || c.ctx == nil {
		return nil
	}
	return c.ctx.Err()
}

// analyze runs the alias analysis under the run's context.
func (c *Context) analyze(g *graph.Graph) (*alias.DB, error) {
	return alias.AnalyzeContext(c.context(), g)
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
