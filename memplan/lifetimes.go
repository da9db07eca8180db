package memplan

import (
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
	// Follows, when not 0, is 1 + the index (in the list Lifetimes
	// returns) of the tensor this one may be written over in place: see
	// Request.Follows and LifetimeOptions.InPlace.
	Follows int
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
	// InPlace reports, for a node, the index of the input its kernel may
	// write its (single) output over (ops.InPlace), or false. Lifetimes
	// links the output to that input when the input is a tensor of the
	// same kind (both managed, neither an output) made by another
	// top-level node, last read by this node, and aliased by no other
	// input of it.
	InPlace func(n *graph.Node) (input int, ok bool)
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
	var out []Lifetime
	var walk func(b *graph.Block)
	walk = func(b *graph.Block) {
		for _, n := range b.Nodes {
			for _, v := range n.Outputs {
				if lt, ok := lifetime(v, db, opt, isOutput, topStep, steps); ok {
					out = append(out, lt)
				}
			}
			for _, sb := range n.Blocks {
				walk(sb)
			}
		}
	}
	walk(top)
	if opt.InPlace != nil {
		linkInPlace(out, db, opt, stepOf)
	}
	return out, steps
}

// linkInPlace sets Follows where an output may be written over a dead
// input (see LifetimeOptions.InPlace).
func linkInPlace(lts []Lifetime, db *alias.DB, opt LifetimeOptions, stepOf map[*graph.Node]int) {
	index := make(map[*graph.Value]int, len(lts))
	for i, lt := range lts {
		index[lt.Value] = i
	}
	for i := range lts {
		b := &lts[i]
		n := b.Value.Node
		s, top := stepOf[n]
		if !top || len(n.Outputs) != 1 || b.Output {
			continue
		}
		k, ok := opt.InPlace(n)
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
			j = -1
			for _, a := range db.Aliases(x) {
				if i, ok := index[a]; ok {
					if j >= 0 {
						j = -2
						break
					}
					j = i
				}
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
			b.Follows = j + 1
		}
	}
}

func lifetime(v *graph.Value, db *alias.DB, opt LifetimeOptions, isOutput map[*graph.Value]bool,
	topStep func(*graph.Node) int, steps int) (Lifetime, bool) {
	if v.Type.Kind != graph.TensorType || v.Node == nil || v.Node.Kind == "prim::Constant" {
		return Lifetime{}, false
	}
	if opt.Candidate != nil && !opt.Candidate(v) {
		return Lifetime{}, false
	}
	if db.MayAliasGraphInput(v) || db.EscapesToContainer(v) || escapesBlock(v, db) {
		return Lifetime{}, false
	}
	output := isOutput[v] || db.MayAliasGraphOutput(v)
	if output && !opt.ManageOutputs {
		return Lifetime{}, false
	}
	lt := Lifetime{Value: v, Start: topStep(v.Node), Output: output}
	lt.End = lt.Start
	for _, a := range append(db.Aliases(v), v) {
		for _, u := range a.Uses {
			lt.End = max(lt.End, topStep(u.User))
		}
	}
	if output {
		lt.End = steps
	}
	return lt, true
}

// escapesBlock reports whether v, made inside a sub-block, may alias a
// value that block returns.
func escapesBlock(v *graph.Value, db *alias.DB) bool {
	b := v.Node.Owner
	if b == nil || b.Owner == nil {
		return false
	}
	for _, r := range b.Outputs() {
		if r == v || db.MayAlias(r, v) {
			return true
		}
	}
	return false
}

// Requests turns lifetimes and the byte size of each tensor into a
// planner's requests.
func Requests(lts []Lifetime, sizes []int64) []Request {
	reqs := make([]Request, len(lts))
	for i, lt := range lts {
		reqs[i] = Request{Size: sizes[i], Start: lt.Start, End: lt.End, Follows: lt.Follows}
	}
	return reqs
}
