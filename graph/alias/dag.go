package alias

// The points-to sets share treap nodes, so together they form a DAG whose
// size grows like n log n where listing every (value, location) pair can
// grow like n squared (a chain of loops). Questions about sets are
// answered per DAG node, once, and the answers shared.

// Per-location properties, summarised per treap node (dag.flags): some
// location of the node's subtree has them.
const (
	fWild    uint8 = 1 << iota // wild
	fEscapes                   // wild, or stored into a container
	fOutput                    // in DB.outputs
	fWritten                   // written (DB.written)
)

// dag numbers the treap nodes of every set the analysis made, children
// before parents (lnode.id).
type dag struct {
	nodes []*lnode
	flags []uint8
}

// id is s's number in the DAG, or -1 (a set made by a query).
func (g *dag) id(s *lnode) int32 {
	if i := s.id; i >= 0 && int(i) < len(g.nodes) && g.nodes[i] == s {
		return i
	}
	return -1
}

// finish builds the DAG once the analysis is done; the queries only read
// it after.
func (d *DB) finish() {
	g := &dag{}
	var visit func(s *lnode)
	visit = func(s *lnode) {
		if s == nil || g.id(s) >= 0 {
			return
		}
		visit(s.left)
		visit(s.right)
		s.id = int32(len(g.nodes))
		g.nodes = append(g.nodes, s)
	}
	visit(d.wcSet)
	visit(d.outputs)
	for _, s := range d.pts {
		visit(s)
	}
	for _, s := range d.contents {
		visit(s)
	}
	g.flags = make([]uint8, len(g.nodes))
	for i, s := range g.nodes {
		f := d.locFlags(s.key)
		if s.left != nil {
			f |= g.flags[s.left.id]
		}
		if s.right != nil {
			f |= g.flags[s.right.id]
		}
		g.flags[i] = f
	}
	d.dag = g
}

func (d *DB) locFlags(l loc) uint8 {
	var f uint8
	if d.wild[l] {
		f |= fWild | fEscapes
	}
	if d.contained[l] {
		f |= fEscapes
	}
	if d.outputs.has(l) {
		f |= fOutput
	}
	if d.written[l] {
		f |= fWritten
	}
	return f
}

// any reports whether a location of s has the property flag.
func (d *DB) any(s *lnode, flag uint8) bool {
	if s == nil {
		return false
	}
	if id := d.dag.id(s); id >= 0 {
		return d.dag.flags[id]&flag != 0
	}
	// A set a query made: its shared subtrees are in the DAG.
	return d.locFlags(s.key)&flag != 0 || d.any(s.left, flag) || d.any(s.right, flag)
}

// summary is a commutative, associative, idempotent merge of facts about
// values (the largest score, the first two positions).
type summary[S any] struct {
	zero  S
	merge func(a, b S) S
}

// perLoc computes, for every location l, the merge of tag(u) over the
// values u whose set holds l, and then, per DAG node, the merge of that
// over the node's locations; sum(s) returns the latter for any set s.
// roots[i] is a value's set and tags[i] its fact. Cost: the size of the
// DAG, not the total size of the sets.
func perLoc[S any](d *DB, sm summary[S], roots []*lnode, tags []S) (sum func(s *lnode) S) {
	g := d.dag
	down := make([]S, len(g.nodes))
	for i := range down {
		down[i] = sm.zero
	}
	var extra map[*lnode]S // roots outside the DAG (sets made after it)
	for i, r := range roots {
		if r == nil {
			continue
		}
		if id := g.id(r); id >= 0 {
			down[id] = sm.merge(down[id], tags[i])
			continue
		}
		if extra == nil {
			extra = map[*lnode]S{}
		}
		e, ok := extra[r]
		if !ok {
			e = sm.zero
		}
		extra[r] = sm.merge(e, tags[i])
	}
	byLoc := make([]S, len(d.contents))
	for i := range byLoc {
		byLoc[i] = sm.zero
	}
	// Sets outside the DAG are few (the wildcard set is in it): walk them.
	for r, t := range extra {
		for l := range r.all() {
			byLoc[l] = sm.merge(byLoc[l], t)
		}
	}
	// Parents before children: a set's fact holds for all its locations.
	for i := len(g.nodes) - 1; i >= 0; i-- {
		s := g.nodes[i]
		byLoc[s.key] = sm.merge(byLoc[s.key], down[i])
		if c := s.left; c != nil {
			down[c.id] = sm.merge(down[c.id], down[i])
		}
		if c := s.right; c != nil {
			down[c.id] = sm.merge(down[c.id], down[i])
		}
	}
	up := down // reused: children before parents
	for i, s := range g.nodes {
		u := byLoc[s.key]
		if s.left != nil {
			u = sm.merge(u, up[s.left.id])
		}
		if s.right != nil {
			u = sm.merge(u, up[s.right.id])
		}
		up[i] = u
	}
	var sumOf func(s *lnode) S
	sumOf = func(s *lnode) S {
		if s == nil {
			return sm.zero
		}
		if id := g.id(s); id >= 0 {
			return up[id]
		}
		return sm.merge(byLoc[s.key], sm.merge(sumOf(s.left), sumOf(s.right)))
	}
	return sumOf
}
