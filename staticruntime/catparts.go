package staticruntime

import (
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/graph/alias"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops"
)

// Cat parts written in place: when each input of a concatenation is
// made by an out-variant node for it alone, those nodes write their
// results straight into their places in the output, and the
// concatenation has nothing left to copy. The parts then take no memory
// of their own: a traced model that unrolls a loop into results joined
// by one cat keeps none of them alive in the slab, and a fire module
// (squeezenet) writes its two branches where the cat would have copied
// them. The output is a graph output or an intermediate; one the
// planner places is alive from its first part's node on (module.go), so
// that nothing alive in between shares its memory.
//
// Before the first part's node runs, the runtime sizes the output as the
// last run's parts say and points each part's tensor at its window of
// the output; the kernels resize into that memory. Before the cat runs it
// checks that every part is still exactly in its window (shapes may have
// changed); a part that is not, but lies in the output's memory, is moved
// out first, so the cat never reads memory it is writing. Only the Go
// cat kernel is used this way (ATen's refuses inputs inside its output).

// catGroup is one such concatenation: the top-level node indices (in the
// runner's list) of the cat and of its first part's writer, and the
// slots of the parts.
type catGroup struct {
	cat, first int
	// parts are the slots of the cat's inputs; own marks those written
	// in place (first is the first of their nodes).
	parts []int32
	own   []bool
	dim   int
	// out is the output, when the planner may place it (an
	// intermediate), else nil.
	out *graph.Value
}

// findCatGroups finds the prim::VarConcat nodes whose parts may be
// written in place (see above).
func (m *StaticModule) findCatGroups(db *alias.DB, writer map[*graph.Value]*nodeInfo) {
	index := map[*graph.Node]int{}
	for i, ni := range m.top.nodes {
		index[ni.node] = i
	}
	isOutput := map[*graph.Value]bool{}
	for _, v := range m.graph.Outputs() {
		isOutput[v] = true
	}
	for ci, ni := range m.top.nodes {
		n := ni.node
		if n.Kind != "prim::VarConcat" || ni.kind != ops.OutVariant || len(n.Inputs) < 2 || len(n.Outputs) != 1 {
			continue
		}
		y := n.Outputs[0]
		dimV := n.Inputs[len(n.Inputs)-1]
		if dimV.Node == nil || dimV.Node.Kind != graph.KindConstant {
			continue
		}
		var out *graph.Value
		if !(isOutput[y] || db.MayAliasGraphOutput(y)) {
			// An intermediate. When the planner places it, its lifetime
			// is stretched (module.go); else (it escapes into a list, as
			// shufflenet's chunked halves) its memory is the node's own,
			// which nothing reads between the first part and the cat.
			if writer[y] == nil {
				continue
			}
			out = y
		}
		dv, ok := dimV.Node.Attr("value")
		if !ok || dv.Kind() != ivalue.KindInt || dv.Int() < 0 {
			continue // a negative dim needs the rank; rare in traced graphs
		}
		g := catGroup{cat: ci, first: ci, dim: int(dv.Int()), out: out}
		seen := map[*graph.Value]bool{}
		some := false
		for i, x := range n.Inputs[:len(n.Inputs)-1] {
			if seen[x] {
				some = false // one tensor twice: leave the cat alone
				break
			}
			seen[x] = true
			w := writer[x]
			wi, top := index[x.Node]
			// A part written in place is made for the cat alone; the
			// others (a view, a graph input: shufflenet's chunked half)
			// the cat copies into its place as before.
			own := w != nil && top && len(x.Uses) == 1 && !isOutput[x] && !db.MayAliasGraphInput(x) &&
				!db.MayAliasGraphOutput(x) && !db.EscapesToContainer(x) && len(db.Values().Aliases(x, 2)) == 1
			g.parts = append(g.parts, ni.in[i])
			g.own = append(g.own, own)
			if own {
				some = true
				g.first = min(g.first, wi)
			}
		}
		if some {
			m.cats = append(m.cats, g)
			for i, x := range n.Inputs[:len(n.Inputs)-1] {
				if g.own[i] {
					m.catPart[x] = true
				}
			}
		}
	}
}

// catState is one runtime's state of a group: the storage its windows
// were cut from, the windows, and the layout armed for this run.
type catState struct {
	from  *ivalue.Storage
	wins  []*ivalue.Storage
	armed bool
	sizes []int // the output's sizes as armed
	// off is set once a run's parts did not come out as armed (their
	// shapes changed from the run before): from then on the cat copies
	// them, which costs no allocation when shapes keep changing.
	off bool
}

// catArm runs before the first part's node: it sizes the output and
// points each part at its window, from the parts' shapes of the last run.
func (r *StaticRuntime) catArm(k int) {
	g, st := &r.m.cats[k], &r.cats[k]
	st.armed = false
	if st.off {
		return
	}
	y := r.top.nodes[g.cat].OwnTensor(0)
	dt, ok := r.catSizes(k)
	if !ok {
		if st.from != nil {
			// Armed before, not now (a batch dim above 1 before the
			// cat's): the parts would keep outgrowing their windows.
			r.catOff(k)
		}
		return
	}
	y.Resize(dt, st.sizes)
	if !y.Device().IsHost() {
		return
	}
	// Windows are cut again when the output's memory or the split moved
	// (a steady run keeps them: no allocation).
	same := y.Storage() == st.from && len(st.wins) == len(g.parts)
	for i, s := range g.parts {
		same = same && r.values[s].Tensor().Nbytes() == st.wins[i].Len()
	}
	if !same {
		st.from = y.Storage()
		st.wins = st.wins[:0]
		off := y.Offset() * dt.Size()
		for _, s := range g.parts {
			n := r.values[s].Tensor().Nbytes()
			st.wins = append(st.wins, st.from.Window(off, n))
			off += n
		}
	}
	for i, s := range g.parts {
		if t := r.values[s].Tensor(); g.own[i] && t.Storage() != st.wins[i] {
			t.SetStorage(st.wins[i], 0)
		}
	}
	st.armed = true
}

// catSizes sets st.sizes to the output's sizes as the parts of the last
// run give them, and reports their dtype; false when there are none yet
// (the first run) or they are not contiguous blocks of the output.
func (r *StaticRuntime) catSizes(k int) (ivalue.DType, bool) {
	g, st := &r.m.cats[k], &r.cats[k]
	first := r.values[g.parts[0]].Tensor()
	if first == nil || first.Dim() <= g.dim {
		return 0, false // the first run, or a rank the cat would refuse
	}
	dt := first.DType()
	st.sizes = append(st.sizes[:0], first.Sizes()...)
	for i := 0; i < g.dim; i++ {
		if st.sizes[i] != 1 {
			return 0, false // parts are not contiguous blocks of the output
		}
	}
	total := 0
	for _, s := range g.parts {
		t := r.values[s].Tensor()
		if t == nil || t.DType() != dt || t.Dim() != len(st.sizes) || t.Numel() == 0 {
			return 0, false
		}
		for i, n := range t.Sizes() {
			if i != g.dim && n != st.sizes[i] {
				return 0, false
			}
		}
		total += t.Sizes()[g.dim]
	}
	st.sizes[g.dim] = total
	return dt, true
}

// catOff turns group k off for the runtime's life: the parts written
// in place leave their windows (their next run gives them memory of
// their own, once) and the cat copies them from then on.
func (r *StaticRuntime) catOff(k int) {
	g, st := &r.m.cats[k], &r.cats[k]
	st.off = true
	for i, s := range g.parts {
		if t := r.values[s].Tensor(); g.own[i] && t != nil && i < len(st.wins) && t.Storage() == st.wins[i] {
			t.SetStorage(nil, 0)
		}
	}
}

// catCheck runs before the cat: every part must be exactly in its window
// with the shape it was armed with; a part that is not, yet lies in the
// output's memory, moves to memory of its own before the cat reads it,
// and the group is off for the rest of the runtime's life.
func (r *StaticRuntime) catCheck(k int) {
	g, st := &r.m.cats[k], &r.cats[k]
	if !st.armed {
		return
	}
	st.armed = false
	inPlace := true
	for i, s := range g.parts {
		t := r.values[s].Tensor()
		if !g.own[i] {
			// Copied by the cat: it must not lie in the output's memory
			// (the planner keeps a live tensor out of it).
			if t == nil || t.Nbytes() != st.wins[i].Len() || t.Storage() != nil && overlaps(t.Storage(), st.from) {
				inPlace = false
				break
			}
			continue
		}
		if t == nil || t.Storage() != st.wins[i] || t.Offset() != 0 || !t.IsContiguous() || t.Nbytes() != st.wins[i].Len() {
			inPlace = false
			break
		}
	}
	if inPlace {
		return
	}
	st.off = true
	lo := uintptr(st.from.Ptr())
	hi := lo + uintptr(st.from.Len())
	for _, s := range g.parts {
		t := r.values[s].Tensor()
		if t == nil || t.Storage() == nil {
			continue
		}
		if p := uintptr(t.Storage().Ptr()); p >= lo && p < hi {
			// A copy of its own: the group is off, the cat copies it.
			c := t.Clone()
			t.SetView(c, c.Offset(), c.Sizes(), c.Strides())
		}
	}
}

// catWindow reports whether s is one of the runtime's part windows (they
// are the outputs' memory, not intermediates of their own).
func (r *StaticRuntime) catWindow(s *ivalue.Storage) bool {
	for i := range r.cats {
		for _, w := range r.cats[i].wins {
			if w == s {
				return true
			}
		}
	}
	return false
}

// overlaps reports whether two host storages share a byte.
func overlaps(a, b *ivalue.Storage) bool {
	alo, blo := uintptr(a.Ptr()), uintptr(b.Ptr())
	return alo < blo+uintptr(b.Len()) && blo < alo+uintptr(a.Len())
}
