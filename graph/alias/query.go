package alias

import (
	"slices"

	"github.com/gosr/gosr/graph"
)

// locs returns v's locations; a mutable value the analysis never saw
// (added after Analyze) points to the wildcard.
func (d *DB) locs(v *graph.Value) locSet {
	if !Mutable(v.Type) {
		return nil
	}
	if s := d.ptsOf(v); s != nil {
		return s
	}
	return d.wcSet
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
	// overlap(l, d.outputs), the common locations found per treap node.
	return d.any(l, fOutput) || l.has(wildcard) && d.hasWildLoc(d.outputs) || d.outputs.has(wildcard) && d.hasWildLoc(l)
}

// HasWriters reports whether some node may write v's memory.
func (d *DB) HasWriters(v *graph.Value) bool {
	l := d.locs(v)
	if l == nil || !d.anyWritten {
		return false
	}
	// overlap(l, the written locations)
	return d.any(l, fWritten) || l.has(wildcard) && d.wildWritten || d.wcWritten && d.hasWildLoc(l)
}

// EscapesToContainer reports whether v (or a value aliasing it) is
// stored into a list, tuple or dict, or somewhere the analysis cannot
// follow.
func (d *DB) EscapesToContainer(v *graph.Value) bool {
	return d.any(d.locs(v), fEscapes)
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
				if c != noLoc && c != l {
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
	for e := range d.holders {
		d.holders[e] = [2]loc{noLoc, noLoc}
	}
	for c, elems := range d.contents {
		if !d.wild[c] && !d.contained[c] {
			continue
		}
		for e := range elems.all() {
			h := &d.holders[e]
			switch {
			case h[0] == noLoc:
				h[0] = loc(c)
			case h[1] == noLoc && h[0] != loc(c):
				h[1] = loc(c)
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
	return d.Values().Aliases(v, -1)
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

// Values is the index of every value of the graph (made on first use).
func (d *DB) Values() *Index {
	d.allOnce.Do(func() { d.all = d.newIndex(d.values, true) })
	return d.all
}

// Index answers alias questions about a fixed list of values for many
// values in turn, in time proportional to the locations of the value
// asked about and the answer, where asking MayAlias of each listed value
// costs the length of the list each time.
type Index struct {
	d    *DB
	vals []*graph.Value
	pos  map[*graph.Value]int32 // nil for DB.Values: positions are the DB's
	// locVals[locStart[l]:locStart[l+1]] are the values (positions in
	// vals) that may point to location l (byLocMap[l] for an index of
	// few values); withWild those with a wild location (which alias any
	// value pointing to the wildcard), withWildcard those pointing to the
	// wildcard (which alias any value with a wild location).
	locStart, locVals []int32
	byLocMap          map[loc][]int32
	withWild          []int32
	withWildcard      []int32
	// When the graph's sets are large together (the lists would grow with
	// the square of the graph: a chain of loops), DB.Values has none and
	// first2 gives, per set, the first two values sharing a location.
	first2 func(s *lnode) [2]int32
	roots  []*lnode // per value: its set
	// scan: so few values that asking each is cheapest (and building a
	// list per location would cost more than the questions).
	scan bool
}

// smallIndexMax is how many more (value, location) pairs than four per
// value an index lists before it summarises per DAG node instead (a
// variable for the tests, which exercise both ways).
var smallIndexMax = 4096

// NewIndex indexes vals (values of the analysed graph, or made since:
// those point to the wildcard).
func (d *DB) NewIndex(vals []*graph.Value) *Index { return d.newIndex(vals, false) }

func (d *DB) newIndex(vals []*graph.Value, all bool) *Index {
	x := &Index{d: d, vals: vals, roots: make([]*lnode, len(vals))}
	if !all {
		x.pos = make(map[*graph.Value]int32, len(vals))
	}
	total := 0
	for i, v := range vals {
		if !all {
			if _, dup := x.pos[v]; dup {
				continue
			}
			x.pos[v] = int32(i)
		}
		ls := d.locs(v)
		x.roots[i] = ls
		total += int(ls.len())
		if ls.has(wildcard) {
			x.withWildcard = append(x.withWildcard, int32(i))
		}
		if d.hasWildLoc(ls) {
			x.withWild = append(x.withWild, int32(i))
		}
	}
	switch {
	case !all && len(vals) <= 8:
		x.scan = true
		return x
	case !all && 8*len(vals) < len(d.contents):
		x.byLocMap = map[loc][]int32{}
		for i, ls := range x.roots {
			for l := range ls.all() {
				x.byLocMap[l] = append(x.byLocMap[l], int32(i))
			}
		}
		return x
	case !all || total <= 4*len(vals)+smallIndexMax:
		// One array, in order of location.
		x.locStart = make([]int32, len(d.contents)+1)
		for _, ls := range x.roots {
			for l := range ls.all() {
				x.locStart[l+1]++
			}
		}
		for l := range d.contents {
			x.locStart[l+1] += x.locStart[l]
		}
		x.locVals = make([]int32, total)
		next := slices.Clone(x.locStart[:len(d.contents)])
		for i, ls := range x.roots {
			for l := range ls.all() {
				x.locVals[next[l]] = int32(i)
				next[l]++
			}
		}
		return x
	}
	tags := make([][2]int32, len(vals))
	for i := range tags {
		tags[i] = [2]int32{int32(i), -1}
	}
	x.first2 = perLoc(d, summary[[2]int32]{zero: [2]int32{-1, -1}, merge: first2}, x.roots, tags)
	return x
}

// at lists the values pointing to l.
func (x *Index) at(l loc) []int32 {
	if x.locStart != nil {
		return x.locVals[x.locStart[l]:x.locStart[l+1]]
	}
	return x.byLocMap[l]
}

// posOf is v's position in the index, or -1.
func (x *Index) posOf(v *graph.Value) int32 {
	if x.pos == nil {
		return x.d.index(v)
	}
	if i, ok := x.pos[v]; ok {
		return i
	}
	return -1
}

// first2 merges two lists of at most two positions (-1 for none),
// keeping the two smallest.
func first2(a, b [2]int32) [2]int32 {
	out := [2]int32{-1, -1}
	n := 0
	for _, v := range [4]int32{a[0], a[1], b[0], b[1]} {
		if v < 0 || v == out[0] || v == out[1] {
			continue
		}
		switch {
		case n < 2:
			out[n] = v
			n++
		case v < out[1]:
			out[1] = v
		}
		if n == 2 && out[1] < out[0] {
			out[0], out[1] = out[1], out[0]
		}
	}
	return out
}

// candidates calls f with the positions of the indexed values that may
// alias v (v itself first, when indexed and of a mutable type), maybe
// more than once each, until f returns false. With first2, only some of
// them: at least min(2, their number) distinct ones. Not for scan.
func (x *Index) candidates(v *graph.Value, f func(i int32) bool) {
	if !Mutable(v.Type) {
		return
	}
	if i := x.posOf(v); i >= 0 && !f(i) {
		return
	}
	ls := x.d.locs(v)
	if x.first2 != nil {
		for _, i := range x.first2(ls) {
			if i >= 0 && !f(i) {
				return
			}
		}
	} else {
		for l := range ls.all() {
			for _, i := range x.at(l) {
				if !f(i) {
					return
				}
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
	if limit == 0 || !Mutable(v.Type) {
		return nil
	}
	var found []int32
	if x.scan || x.first2 != nil && (limit < 0 || limit > 2) {
		// Few values, or large sets and a long answer: ask each value.
		for i, u := range x.vals {
			if x.roots[i] != nil && (u == v || x.d.MayAlias(u, v)) {
				found = append(found, int32(i))
				if len(found) == limit {
					break
				}
			}
		}
	} else {
		seen := map[int32]bool{}
		x.candidates(v, func(i int32) bool {
			if !seen[i] {
				seen[i] = true
				found = append(found, i)
			}
			return limit < 0 || len(found) < limit
		})
		slices.Sort(found)
	}
	if len(found) == 0 {
		return nil
	}
	out := make([]*graph.Value, len(found))
	for k, i := range found {
		out[k] = x.vals[i]
	}
	return out
}

// MaxOver returns a function giving, for a value v, the largest score of
// the indexed values that may alias v, or def when none may.
func (x *Index) MaxOver(score func(u *graph.Value) int, def int) func(v *graph.Value) int {
	if x.scan {
		return func(v *graph.Value) int {
			m := def
			for _, u := range x.Aliases(v, -1) {
				m = max(m, score(u))
			}
			return m
		}
	}
	maxOf := func(is []int32) int {
		m := def
		for _, i := range is {
			m = max(m, score(x.vals[i]))
		}
		return m
	}
	var sumOf func(s *lnode) int
	switch {
	case x.first2 != nil:
		tags := make([]int, len(x.vals))
		for i, u := range x.vals {
			if x.roots[i] != nil {
				tags[i] = score(u)
			}
		}
		sumOf = perLoc(x.d, summary[int]{zero: def, merge: func(a, b int) int { return max(a, b) }}, x.roots, tags)
	case x.locStart != nil:
		byLoc := make([]int, len(x.locStart)-1)
		for l := range byLoc {
			byLoc[l] = maxOf(x.at(loc(l)))
		}
		sumOf = func(s *lnode) int {
			m := def
			for l := range s.all() {
				m = max(m, byLoc[l])
			}
			return m
		}
	default:
		byLoc := make(map[loc]int, len(x.byLocMap))
		for l, is := range x.byLocMap {
			byLoc[l] = maxOf(is)
		}
		sumOf = func(s *lnode) int {
			m := def
			for l := range s.all() {
				if b, ok := byLoc[l]; ok {
					m = max(m, b)
				}
			}
			return m
		}
	}
	wild, wildcard_ := maxOf(x.withWild), maxOf(x.withWildcard)
	return func(v *graph.Value) int {
		m := def
		if !Mutable(v.Type) {
			return m
		}
		if i := x.posOf(v); i >= 0 {
			m = max(m, score(x.vals[i]))
		}
		ls := x.d.locs(v)
		m = max(m, sumOf(ls))
		if ls.has(wildcard) {
			m = max(m, wild)
		}
		if x.d.hasWildLoc(ls) {
			m = max(m, wildcard_)
		}
		return m
	}
}
