package memplan

import (
	"context"
	"fmt"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/graph/alias"
)

// Lifetime is one tensor a planner may place, with the steps it is alive:
// the indices in the top block of the node that writes it and of the last
// node that reads it or anything aliasing it, inclusive. Steps are
// top-level nodes: a tensor made or read inside a sub-block counts at the
// step of the top-level node owning that block, so a tensor read in a
// loop body lives until the whole loop is done.
type Lifetime struct {
	Value      *graph.Value
	Start, End int
	// Output marks a graph output, or a tensor that may alias one. Such
	// tensors are kept only with LifetimeOptions.ManageOutputs; they live
	// past the last step (End is the number of steps).
	Output bool
	// Overwrites, when OK, names (by its index in the list Lifetimes
	// returns) the tensor this one may be written over: see
	// Request.Overwrites and LifetimeOptions.Overwrite.
	Overwrites Overwrite
}

// LifetimeOptions say which values are candidates.
type LifetimeOptions struct {
	// Candidate reports whether the runtime writes v into memory it lets
	// the planner place (an out-variant output, outside loops). Nil means
	// every tensor output of a node.
	Candidate func(v *graph.Value) bool
	// ManageOutputs keeps graph outputs (and tensors that may alias them)
	// as Output lifetimes instead of leaving them unmanaged.
	ManageOutputs bool
	// Overwrite reports, for a node, the index of the input its kernel
	// may write its (single) output over (ops.OverwriteRule), or false. Lifetimes
	// links the output to that input when the input is a tensor of the
	// same kind (both managed, neither an output) made by another
	// top-level node, last read by this node, and aliased by no other
	// input of it.
	Overwrite func(n *graph.Node) (input int, ok bool)
}

// Lifetimes lists the tensors of g a planner may place, in node order,
// and the number of steps. From the alias analysis db (of g), a tensor
// is left out when it:
//   - may alias a graph input, a constant or memory the analysis cannot
//     follow (the runtime does not own that memory);
//   - escapes into a list, tuple or dict (the container may outlive any
//     step the analysis can bound);
//   - is returned from the sub-block it is made in (it becomes the value
//     of the owning If or Loop, whose lifetime its block does not see; as
//     in PyTorch, block outputs are not managed);
//   - is or may alias a graph output, unless ManageOutputs.
func Lifetimes(g *graph.Graph, db *alias.DB, opt LifetimeOptions) ([]Lifetime, int) {
	lts, steps, _ := LifetimesContext(context.Background(), g, db, opt)
	return lts, steps
}

// LifetimesContext is Lifetimes, stopping with ctx's error when ctx is
// done (checked every thousand values or so).
func LifetimesContext(ctx context.Context, g *graph.Graph, db *alias.DB, opt LifetimeOptions) ([]Lifetime, int, error) {
	top := g.Block
	steps := len(top.Nodes)
	stepOf := make(map[*graph.Node]int, steps)
	for i, n := range top.Nodes {
		stepOf[n] = i
	}
	// topStep maps a node (maybe nested, maybe a Return) to the step of
	// its top-level ancestor; the top block's Return is past the end.
	topStep := func(n *graph.Node) int {
		for n.Owner != nil && n.Owner.Owner != nil {
			n = n.Owner.Owner
		}
		if s, ok := stepOf[n]; ok {
			return s
		}
		return steps
	}
	isOutput := map[*graph.Value]bool{}
	for _, v := range g.Outputs() {
		isOutput[v] = true
	}
	// A tensor lives until the last use of anything that may alias it:
	// the largest last use over its aliases, per location, computed once
	// for all values (alias.Index.MaxOver).
	lastUse := db.Values().MaxOver(func(a *graph.Value) int {
		end := -1
		for _, u := range a.Uses {
			end = max(end, topStep(u.User))
		}
		return end
	}, -1)
	lc := &lifetimeCtx{db: db, opt: opt, isOutput: isOutput, topStep: topStep, lastUse: lastUse, steps: steps,
		returns: map[*graph.Block]*alias.Index{}}
	var out []Lifetime
	var err error
	tick := 0
	var walk func(b *graph.Block)
	walk = func(b *graph.Block) {
		for _, n := range b.Nodes {
			if err != nil {
				return
			}
			if tick++; tick&1023 == 0 {
				if err = ctx.Err(); err != nil {
					return
				}
			}
			for _, v := range n.Outputs {
				if lt, ok := lc.lifetime(v); ok {
					out = append(out, lt)
				}
			}
			for _, sb := range n.Blocks {
				walk(sb)
			}
		}
	}
	walk(top)
	if err != nil {
		return nil, 0, fmt.Errorf("memplan: lifetimes: %w", err)
	}
	if opt.Overwrite != nil {
		linkOverwrites(out, db, opt, stepOf)
	}
	return out, steps, nil
}

// linkOverwrites sets Overwrites where an output may be written over a
// dead input (see LifetimeOptions.Overwrite).
func linkOverwrites(lts []Lifetime, db *alias.DB, opt LifetimeOptions, stepOf map[*graph.Node]int) {
	index := make(map[*graph.Value]int, len(lts))
	vals := make([]*graph.Value, len(lts))
	for i, lt := range lts {
		index[lt.Value] = i
		vals[i] = lt.Value
	}
	var managedIdx *alias.Index
	for i := range lts {
		b := &lts[i]
		n := b.Value.Node
		s, top := stepOf[n]
		if !top || len(n.Outputs) != 1 || b.Output {
			continue
		}
		k, ok := opt.Overwrite(n)
		if !ok || k < 0 || k >= len(n.Inputs) {
			continue
		}
		x := n.Inputs[k]
		j, managed := index[x]
		if !managed {
			// The input may be another name for a managed tensor (the
			// result of an in-place op such as relu_, or a view): link to
			// that tensor if it is the only managed one x may alias. The
			// runtime checks that x really begins where it begins.
			if managedIdx == nil {
				managedIdx = db.NewIndex(vals)
			}
			j = -1
			if as := managedIdx.Aliases(x, 2); len(as) == 1 {
				j = index[as[0]]
			}
			managed = j >= 0
		}
		if !managed || lts[j].Output || lts[j].End != s || lts[j].Start >= s {
			continue
		}
		alone := true
		for m, y := range n.Inputs {
			if m != k && (y == x || db.MayAlias(y, x)) {
				alone = false
				break
			}
		}
		if alone {
			b.Overwrites = OverwriteOf(j)
		}
	}
}

// lifetimeCtx is what lifetime needs, made once per graph.
type lifetimeCtx struct {
	db       *alias.DB
	opt      LifetimeOptions
	isOutput map[*graph.Value]bool
	topStep  func(*graph.Node) int
	lastUse  func(*graph.Value) int
	steps    int
	returns  map[*graph.Block]*alias.Index // per sub-block: its returns
}

func (lc *lifetimeCtx) lifetime(v *graph.Value) (Lifetime, bool) {
	db, opt := lc.db, lc.opt
	if v.Type.Kind != graph.TensorType || v.Node == nil || v.Node.Kind == graph.KindConstant {
		return Lifetime{}, false
	}
	if opt.Candidate != nil && !opt.Candidate(v) {
		return Lifetime{}, false
	}
	if db.MayAliasGraphInput(v) || db.EscapesToContainer(v) || lc.escapesBlock(v) {
		return Lifetime{}, false
	}
	output := lc.isOutput[v] || db.MayAliasGraphOutput(v)
	if output && !opt.ManageOutputs {
		return Lifetime{}, false
	}
	lt := Lifetime{Value: v, Start: lc.topStep(v.Node), Output: output}
	lt.End = max(lt.Start, lc.lastUse(v))
	for _, u := range v.Uses { // v itself, if the analysis never saw it
		lt.End = max(lt.End, lc.topStep(u.User))
	}
	if output {
		lt.End = lc.steps
	}
	return lt, true
}

// escapesBlock reports whether v, made inside a sub-block, may alias a
// value that block returns.
func (lc *lifetimeCtx) escapesBlock(v *graph.Value) bool {
	b := v.Node.Owner
	if b == nil || b.Owner == nil {
		return false
	}
	idx, ok := lc.returns[b]
	if !ok {
		idx = lc.db.NewIndex(b.Outputs())
		lc.returns[b] = idx
	}
	return len(idx.Aliases(v, 1)) > 0
}

// Requests turns lifetimes and the byte size of each tensor into a
// planner's requests.
func Requests(lts []Lifetime, sizes []int64) []Request {
	reqs := make([]Request, len(lts))
	for i, lt := range lts {
		reqs[i] = Request{Size: sizes[i], Start: lt.Start, End: lt.End, Overwrites: lt.Overwrites}
	}
	return reqs
}
