package alias

import (
	"slices"

	"github.com/gosr/gosr/graph"
)

// wildcardSet is {wildcard}, shared: sets are immutable.
var wildcardSet = single(wildcard)

// locs returns v's locations; a mutable value the analysis never saw
// (added after Analyze) points to the wildcard.
func (d *DB) locs(v *graph.Value) locSet {
	if !Mutable(v.Type) {
		return nil
	}
	if s := d.pts[v]; s != nil {
		return s
	}
	return wildcardSet
}

// finish fills what the queries read and never change: which treap
// nodes hold a wild location (hasWildLoc), for every set the analysis
// made, so that queries on sets sharing nodes share the work.
func (d *DB) finish() {
	d.wildMemo = map[*lnode]bool{}
	var fill func(s *lnode) bool
	fill = func(s *lnode) bool {
		if s == nil {
			return false
		}
		if w, ok := d.wildMemo[s]; ok {
			return w
		}
		l, r := fill(s.left), fill(s.right) // both, to fill every node
		w := d.wild[s.key] || l || r
		d.wildMemo[s] = w
		return w
	}
	for _, s := range d.pts {
		fill(s)
	}
	fill(d.written)
	fill(d.outputs)
	for _, s := range d.contents {
		fill(s)
	}
}

// MayAlias reports whether a and b may share memory.
func (d *DB) MayAlias(a, b *graph.Value) bool {
	if a == b {
		return Mutable(a.Type)
	}
	la, lb := d.locs(a), d.locs(b)
	if la == nil || lb == nil {
		return false
	}
	return d.overlap(la, lb)
}

// MayContainAlias reports whether a or anything it contains may share
// memory with b or anything b contains.
func (d *DB) MayContainAlias(a, b *graph.Value) bool {
	la, lb := d.locs(a), d.locs(b)
	if la == nil || lb == nil {
		return false
	}
	return d.overlap(d.closure(la), d.closure(lb))
}

// MayAliasGraphInput reports whether v may share memory with a graph
// input (or a module attribute, or memory stored where the analysis
// cannot follow it).
func (d *DB) MayAliasGraphInput(v *graph.Value) bool {
	return d.hasWildLoc(d.locs(v))
}

// MayAliasGraphOutput reports whether v may share memory with a graph
// output or with something a graph output contains.
func (d *DB) MayAliasGraphOutput(v *graph.Value) bool {
	l := d.locs(v)
	if l == nil {
		return false
	}
	return d.overlap(l, d.outputs)
}

// HasWriters reports whether some node may write v's memory.
func (d *DB) HasWriters(v *graph.Value) bool {
	l := d.locs(v)
	if l == nil || d.written == nil {
		return false
	}
	return d.overlap(l, d.written)
}

// EscapesToContainer reports whether v (or a value aliasing it) is
// stored into a list, tuple or dict, or somewhere the analysis cannot
// follow.
func (d *DB) EscapesToContainer(v *graph.Value) bool {
	for l := range d.locs(v).all() {
		if d.contained[l] || d.wild[l] {
			return true
		}
	}
	return false
}

// ElementsEscape reports whether an element of container v may also be
// held by another container that escapes (an element read out with
// __getitem__ and appended to a list that is returned, or the list copied
// by aten::list into a dict).
func (d *DB) ElementsEscape(v *graph.Value) bool {
	d.holdersOnce.Do(d.findHolders)
	for l := range d.locs(v).all() {
		for e := range d.contents[l].all() {
			// The wildcard element (a split of a graph input) counts too:
			// conservative, it makes more loop nodes fresh than needed.
			for _, c := range d.holders[e] {
				if c != 0 && c-1 != l {
					return true
				}
			}
		}
	}
	return false
}

// findHolders records, per location, up to two of the containers holding
// it that themselves escape (stored, or wild): a temporary index list
// ([idx] for aten::index) does not keep the element past the iteration.
// Two are enough to know whether one other than a given container does.
func (d *DB) findHolders() {
	d.holders = make([][2]loc, len(d.contents))
	for c, elems := range d.contents {
		if !d.wild[c] && !d.contained[c] {
			continue
		}
		for e := range elems.all() {
			h := &d.holders[e]
			switch {
			case h[0] == 0:
				h[0] = loc(c) + 1
			case h[1] == 0 && h[0] != loc(c)+1:
				h[1] = loc(c) + 1
			}
		}
	}
}

// Aliases returns the values of the graph that may alias v, v included
// (nil for values of immutable types), in graph order.
func (d *DB) Aliases(v *graph.Value) []*graph.Value {
	if !Mutable(v.Type) {
		return nil
	}
	return d.everything().Aliases(v, -1)
}

// IsWildcard reports whether v may be any external or escaped value
// (a graph input, a module attribute, the result of an unknown op).
func (d *DB) IsWildcard(v *graph.Value) bool {
	return d.locs(v).has(wildcard)
}

// MayContainAliasAny reports whether a or anything it contains may share
// memory with any of bs or anything they contain.
func (d *DB) MayContainAliasAny(a *graph.Value, bs []*graph.Value) bool {
	la, lb := d.locs(a), d.locsOf(bs)
	if la == nil || lb == nil {
		return false
	}
	return d.overlap(d.closure(la), d.closure(lb))
}

// ReachableFrom reports whether a's memory may be reached through any of
// bs: aliased by one, or contained (at any depth) in one.
func (d *DB) ReachableFrom(a *graph.Value, bs []*graph.Value) bool {
	la, lb := d.locs(a), d.locsOf(bs)
	if la == nil || lb == nil {
		return false
	}
	return d.overlap(la, d.closure(lb))
}

// locsOf is the union of the locations of vs.
func (d *DB) locsOf(vs []*graph.Value) locSet {
	var s locSet
	for _, v := range vs {
		s = union(s, d.locs(v))
	}
	return s
}

// everything is the index of every value of the graph.
func (d *DB) everything() *Index {
	d.allOnce.Do(func() { d.all = d.NewIndex(d.values) })
	return d.all
}

// Index answers alias questions about a fixed list of values for many
// values in turn, in time proportional to the locations of the value
// asked about and the answer, where asking MayAlias of each listed value
// costs the length of the list each time.
type Index struct {
	d    *DB
	vals []*graph.Value
	pos  map[*graph.Value]int32
	// byLoc lists, per location, the values (positions in vals) that may
	// point to it; withWild those with a wild location (which alias any
	// value pointing to the wildcard), withWildcard those pointing to the
	// wildcard (which alias any value with a wild location).
	byLoc        map[loc][]int32
	withWild     []int32
	withWildcard []int32
}

// NewIndex indexes vals (values of the analysed graph, or made since:
// those point to the wildcard).
func (d *DB) NewIndex(vals []*graph.Value) *Index {
	x := &Index{d: d, vals: vals, pos: make(map[*graph.Value]int32, len(vals)), byLoc: map[loc][]int32{}}
	for i, v := range vals {
		if _, dup := x.pos[v]; dup {
			continue
		}
		x.pos[v] = int32(i)
		ls := d.locs(v)
		for l := range ls.all() {
			x.byLoc[l] = append(x.byLoc[l], int32(i))
		}
		if ls.has(wildcard) {
			x.withWildcard = append(x.withWildcard, int32(i))
		}
		if d.hasWildLoc(ls) {
			x.withWild = append(x.withWild, int32(i))
		}
	}
	return x
}

// candidates calls f with the positions of the indexed values that may
// alias v (v itself first, when indexed and of a mutable type), maybe
// more than once each, until f returns false.
func (x *Index) candidates(v *graph.Value, f func(i int32) bool) {
	if !Mutable(v.Type) {
		return
	}
	if i, ok := x.pos[v]; ok && !f(i) {
		return
	}
	ls := x.d.locs(v)
	for l := range ls.all() {
		for _, i := range x.byLoc[l] {
			if !f(i) {
				return
			}
		}
	}
	if ls.has(wildcard) {
		for _, i := range x.withWild {
			if !f(i) {
				return
			}
		}
	}
	if x.d.hasWildLoc(ls) {
		for _, i := range x.withWildcard {
			if !f(i) {
				return
			}
		}
	}
}

// Aliases returns the indexed values that may alias v (v included, when
// indexed), in the index's order; at most limit of them when limit >= 0
// (then which ones is unspecified).
func (x *Index) Aliases(v *graph.Value, limit int) []*graph.Value {
	if limit == 0 {
		return nil
	}
	seen := map[int32]bool{}
	var found []int32
	x.candidates(v, func(i int32) bool {
		if !seen[i] {
			seen[i] = true
			found = append(found, i)
		}
		return limit < 0 || len(found) < limit
	})
	slices.Sort(found)
	out := make([]*graph.Value, len(found))
	for k, i := range found {
		out[k] = x.vals[i]
	}
	return out
}

// MaxOver returns a function giving, for a value v, the largest score of
// the indexed values that may alias v, or def when none may.
func (x *Index) MaxOver(score func(u *graph.Value) int, def int) func(v *graph.Value) int {
	byLoc := make(map[loc]int, len(x.byLoc))
	for l, is := range x.byLoc {
		m := def
		for _, i := range is {
			m = max(m, score(x.vals[i]))
		}
		byLoc[l] = m
	}
	maxOf := func(is []int32) int {
		m := def
		for _, i := range is {
			m = max(m, score(x.vals[i]))
		}
		return m
	}
	wild, wildcard_ := maxOf(x.withWild), maxOf(x.withWildcard)
	return func(v *graph.Value) int {
		m := def
		if !Mutable(v.Type) {
			return m
		}
		if i, ok := x.pos[v]; ok {
			m = max(m, score(x.vals[i]))
		}
		ls := x.d.locs(v)
		for l := range ls.all() {
			if s, ok := byLoc[l]; ok {
				m = max(m, s)
			}
		}
		if ls.has(wildcard) {
			m = max(m, wild)
		}
		if x.d.hasWildLoc(ls) {
			m = max(m, wildcard_)
		}
		return m
	}
}
