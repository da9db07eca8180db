// Package passes holds the graph passes run before a graph is prepared
// for the static runtime, as a pass table in the style of the Go
// compiler's cmd/compile/internal/ssa/compile.go: Run applies the
// pipeline in order, optionally verifying the graph after every pass, and
// passOrder states the orderings the pipeline must keep, checked at init.
//
// The package knows no kernels: what a pass needs from the op set
// (evaluating a node, whether an op can run, an in-place op's functional
// form) comes through Context, which the runtime fills from its ops.
package passes

import (
	"context"
	"fmt"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/graph/alias"
	"github.com/gosr/gosr/ivalue"
)

// Pass is one graph transformation.
type Pass struct {
	Name string
	Fn   func(g *graph.Graph, c *Context) error
}

// EvalFunc computes the outputs of node n from its (constant) inputs,
// for constant propagation.
type EvalFunc func(n *graph.Node, inputs []ivalue.IValue) ([]ivalue.IValue, error)

// Context carries the options of a pipeline run and what the passes need
// to know of the op set. A nil op-set field makes the passes that use it
// conservative: they never assume an op they cannot check.
type Context struct {
	// EnableOutVariant enables the passes that only pay off with out
	// variants (ReplaceWithCopy), as StaticModuleOptions.enable_out_variant.
	EnableOutVariant bool
	// Verify checks the graph (g.Verify and the use lists) after every pass.
	Verify bool
	// Eval evaluates nodes for ConstantPropagation; nil folds only what
	// needs no kernel (control flow, tuples, lists of constants).
	Eval EvalFunc
	// HasOp reports whether a kernel exists for an op kind, so passes only
	// introduce ops the runtime can run; nil means no op is known, so
	// RemoveMutation, ReplaceWithCopy and UseInplaceActivations change
	// nothing.
	HasOp func(kind string) bool
	// FunctionalOf returns the functional op computing what an in-place
	// op writes into its self (aten::add for aten::add_), or "" when there
	// is none; nil means none for every op, so RemoveMutation rewrites only
	// the in-place ops it knows itself (aten::zero_, aten::fill_).
	FunctionalOf func(kind string) string
	// Disable names passes to skip.
	Disable map[string]bool
	// Trace, if set, is called with each pass's name and the graph after it.
	Trace func(pass string, g *graph.Graph)

	// ctx is RunPassesContext's; nil means context.Background.
	ctx   context.Context
	ticks uint
}

// pipeline is the default pass order. Names are unique (Disable and Trace
// name passes by them); passOrder states why the order is what it is.
var pipeline = []Pass{
	{Name: "RemoveSelfInput", Fn: RemoveSelfInput},
	{Name: "EliminateNoOps", Fn: EliminateNoOps},
	{Name: "FoldConvBatchNorm", Fn: FoldConvBatchNorm},
	{Name: "RemoveMutation", Fn: RemoveMutation},
	{Name: "ConstantPropagation", Fn: ConstantPropagation},
	{Name: "DeadCodeElimination", Fn: DeadCodeElimination},
	{Name: "UseVariadicCat", Fn: UseVariadicCat},
	{Name: "UseVariadicStack", Fn: UseVariadicStack},
	{Name: "ReplaceWithCopy", Fn: ReplaceWithCopy},
	{Name: "LateDeadCodeElimination", Fn: DeadCodeElimination},
	{Name: "PoolBeforePointwiseConv", Fn: PoolBeforePointwiseConv},
	{Name: "FuseConvAdd", Fn: FuseConvAdd},
	{Name: "FuseConvClamp", Fn: FuseConvClamp},
	{Name: "FuseConvAct", Fn: FuseConvAct},
	{Name: "FuseLinearAct", Fn: FuseLinearAct},
	{Name: "FuseBatchNormClamp", Fn: FuseBatchNormClamp},
	{Name: "FuseConvMaxPool", Fn: FuseConvMaxPool},
	{Name: "FuseConvScale", Fn: FuseConvScale},
	{Name: "UseBlockedLayout", Fn: UseBlockedLayout},
	{Name: "UseInplaceActivations", Fn: UseInplaceActivations},
}

// constraint says pass a must run before pass b.
type constraint struct {
	a, b string
}

// passOrder lists the orderings the pipeline relies on, as the Go
// compiler's passOrder: init checks them, so a reordering that breaks one
// fails at once rather than as a worse plan or a wrong result.
var passOrder = []constraint{
	// A no-op node (aten::detach, a profiling node) between a convolution
	// and its batch norm hides the pair from the fold.
	{"EliminateNoOps", "FoldConvBatchNorm"},
	// Only pure ops fold: RemoveMutation makes in-place ops functional.
	{"RemoveMutation", "ConstantPropagation"},
	// Folding leaves dead the nodes that fed only folded ones.
	{"ConstantPropagation", "DeadCodeElimination"},
	// A dead writer of a view's input still counts as a writer and would
	// keep the view from becoming a copy.
	{"DeadCodeElimination", "ReplaceWithCopy"},
	// The late sweep gives UseInplaceActivations a graph without dead
	// readers: it follows every other rewrite.
	{"UseVariadicCat", "LateDeadCodeElimination"},
	{"UseVariadicStack", "LateDeadCodeElimination"},
	{"ReplaceWithCopy", "LateDeadCodeElimination"},
	// An activation runs in place only if nothing else reads its input:
	// dead readers must be gone first.
	{"LateDeadCodeElimination", "UseInplaceActivations"},
	// RemoveMutation turns in-place ops back into functional ones.
	{"RemoveMutation", "UseInplaceActivations"},
	// A view of the input keeps an activation from running in place, and
	// a write keeps a view from becoming a copy: copies first.
	{"ReplaceWithCopy", "UseInplaceActivations"},
	// A convolution and its activation fuse only when the activation is
	// the one reader: dead readers gone first, and the activation not
	// yet made in place (an in-place relu_ is also fused, but the batch
	// norm must be folded in before: conv, batch_norm, relu).
	{"LateDeadCodeElimination", "FuseConvClamp"},
	{"FoldConvBatchNorm", "FuseConvClamp"},
	{"FuseConvClamp", "UseInplaceActivations"},
	// The same for a convolution, its residual add and activation; and
	// an add_ must be made functional first where it can be.
	{"LateDeadCodeElimination", "FuseConvAdd"},
	{"FoldConvBatchNorm", "FuseConvAdd"},
	{"RemoveMutation", "FuseConvAdd"},
	{"FuseConvAdd", "UseInplaceActivations"},
	// The same for a convolution and its silu, sigmoid, hardswish or
	// gelu; after FuseConvClamp, which takes the clamps a batch norm
	// fold leaves (the two never compete for one node).
	{"LateDeadCodeElimination", "FuseConvAct"},
	{"FoldConvBatchNorm", "FuseConvAct"},
	{"FuseConvAct", "UseInplaceActivations"},
	// A convolution's clamp is fused first, and its pooling the one
	// reader of the clamped output (dead readers gone).
	{"FuseConvClamp", "FuseConvMaxPool"},
	{"LateDeadCodeElimination", "FuseConvMaxPool"},
	// A convolution's input product fuses into the convolution's fused
	// kind: after the fusions that make those (a pooled convolution
	// keeps its kind), with dead readers gone and before the activations
	// go in place (the mul's operands are read later than they were).
	{"FuseConvAdd", "FuseConvScale"},
	{"FuseConvClamp", "FuseConvScale"},
	{"FuseConvAct", "FuseConvScale"},
	{"FuseConvMaxPool", "FuseConvScale"},
	{"LateDeadCodeElimination", "FuseConvScale"},
	{"RemoveMutation", "FuseConvScale"},
	{"FuseConvScale", "UseInplaceActivations"},
	// And for a linear layer and its activation.
	{"LateDeadCodeElimination", "FuseLinearAct"},
	{"RemoveMutation", "FuseLinearAct"},
	{"FuseLinearAct", "UseInplaceActivations"},
	// An average pooling goes before the 1x1 convolution it alone reads
	// (dead readers gone), once a batch norm after that convolution is
	// folded into it and its pooling's list arguments are constants; and
	// before the fusions, which would hide the convolution in a fused
	// kind (a convolution whose output is pooled has no clamp or add to
	// fuse, but the moved one may).
	{"LateDeadCodeElimination", "PoolBeforePointwiseConv"},
	{"FoldConvBatchNorm", "PoolBeforePointwiseConv"},
	{"ConstantPropagation", "PoolBeforePointwiseConv"},
	{"PoolBeforePointwiseConv", "FuseConvAdd"},
	{"PoolBeforePointwiseConv", "FuseConvClamp"},
	{"PoolBeforePointwiseConv", "FuseConvAct"},
	{"PoolBeforePointwiseConv", "FuseConvScale"},
	// And for a batch norm and its clamp; after the fold, which must see
	// a convolution's batch norm as it is (conv, batch_norm, relu).
	{"LateDeadCodeElimination", "FuseBatchNormClamp"},
	{"FoldConvBatchNorm", "FuseBatchNormClamp"},
	{"FuseBatchNormClamp", "UseInplaceActivations"},
	// Chains of convolutions go blocked once the fusions have made
	// each convolution's final kind (a convolution that goes blocked
	// keeps its epilogue but leaves the fusions' kinds), with dead
	// readers gone (a dead reader outside would cost a reorder); the
	// activations go in place after, seeing the reorders' reads.
	{"FuseConvAdd", "UseBlockedLayout"},
	{"FuseConvClamp", "UseBlockedLayout"},
	{"FuseConvAct", "UseBlockedLayout"},
	{"FuseConvMaxPool", "UseBlockedLayout"},
	{"FuseConvScale", "UseBlockedLayout"},
	{"LateDeadCodeElimination", "UseBlockedLayout"},
	{"UseBlockedLayout", "UseInplaceActivations"},
}

func init() {
	if err := checkOrder(pipeline, passOrder); err != nil {
		panic("passes: " + err.Error())
	}
}

// checkOrder reports a repeated or empty name in ps, a constraint naming
// a pass ps lacks, or one ps breaks.
func checkOrder(ps []Pass, order []constraint) error {
	at := make(map[string]int, len(ps))
	for i, p := range ps {
		if p.Name == "" || p.Fn == nil {
			return fmt.Errorf("pass %d has no name or no function", i)
		}
		if j, dup := at[p.Name]; dup {
			return fmt.Errorf("passes %d and %d are both named %s", j, i, p.Name)
		}
		at[p.Name] = i
	}
	for _, c := range order {
		i, ok := at[c.a]
		if !ok {
			return fmt.Errorf("order constraint names %s, which is not in the pipeline", c.a)
		}
		j, ok := at[c.b]
		if !ok {
			return fmt.Errorf("order constraint names %s, which is not in the pipeline", c.b)
		}
		if i >= j {
			return fmt.Errorf("%s must run before %s", c.a, c.b)
		}
	}
	return nil
}

// Names returns the names of the pipeline's passes in order (for
// validating Context.Disable).
func Names() []string {
	names := make([]string, len(pipeline))
	for i, p := range pipeline {
		names[i] = p.Name
	}
	return names
}

// Run applies the pipeline to g. c may be nil (defaults).
func Run(g *graph.Graph, c *Context) error {
	return RunPasses(g, c, pipeline)
}

// RunContext is Run, stopping with ctx's error (wrapped with the pass it
// stopped in) when ctx is done: between passes and, every thousand nodes
// or so, inside them. The graph is then partly transformed: discard it.
func RunContext(ctx context.Context, g *graph.Graph, c *Context) error {
	return RunPassesContext(ctx, g, c, pipeline)
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
		if c.Disable[p.Name] {
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
	return c.HasOp != nil && c.HasOp(kind)
}

func (c *Context) functionalOf(kind string) string {
	if c.FunctionalOf == nil {
		return ""
	}
	return c.FunctionalOf(kind)
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
