package alias

import "github.com/gosr/gosr/graph"

// locs returns v's locations; a mutable value the analysis never saw
// (added after Analyze) points to the wildcard.
func (d *DB) locs(v *graph.Value) locSet {
	if !Mutable(v.Type) {
		return nil
	}
	if s, ok := d.pts[v]; ok {
		return s
	}
	return locSet{wildcard: {}}
}

// MayAlias reports whether a and b may share memory.
func (d *DB) MayAlias(a, b *graph.Value) bool {
	if a == b {
		return Mutable(a.Type)
	}
	la, lb := d.locs(a), d.locs(b)
	if len(la) == 0 || len(lb) == 0 {
		return false
	}
	return d.overlap(la, lb)
}

// MayContainAlias reports whether a or anything it contains may share
// memory with b or anything b contains.
func (d *DB) MayContainAlias(a, b *graph.Value) bool {
	la, lb := d.locs(a), d.locs(b)
	if len(la) == 0 || len(lb) == 0 {
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
	if len(l) == 0 {
		return false
	}
	return d.overlap(l, d.outputs)
}

// HasWriters reports whether some node may write v's memory.
func (d *DB) HasWriters(v *graph.Value) bool {
	l := d.locs(v)
	if len(l) == 0 || len(d.written) == 0 {
		return false
	}
	return d.overlap(l, d.written)
}

// EscapesToContainer reports whether v (or a value aliasing it) is
// stored into a list, tuple or dict, or somewhere the analysis cannot
// follow.
func (d *DB) EscapesToContainer(v *graph.Value) bool {
	for l := range d.locs(v) {
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
	for l := range d.locs(v) {
		for e := range d.contents[l] {
			// The wildcard element (a split of a graph input) counts too:
			// conservative, it makes more loop nodes fresh than needed.
			for c := range d.contents {
				// Another container that itself escapes (stored, or
				// wild): a temporary index list ([idx] for aten::index)
				// does not keep the element past the iteration.
				if loc(c) != l && d.contents[c].has(e) && (d.wild[c] || d.contained[c]) {
					return true
				}
			}
		}
	}
	return false
}

// Aliases returns the values of the graph that may alias v, v included
// (nil for values of immutable types), in graph order.
func (d *DB) Aliases(v *graph.Value) []*graph.Value {
	if !Mutable(v.Type) {
		return nil
	}
	var out []*graph.Value
	for _, u := range d.values {
		if d.MayAlias(u, v) {
			out = append(out, u)
		}
	}
	return out
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
	if len(la) == 0 || len(lb) == 0 {
		return false
	}
	return d.overlap(d.closure(la), d.closure(lb))
}

// ReachableFrom reports whether a's memory may be reached through any of
// bs: aliased by one, or contained (at any depth) in one.
func (d *DB) ReachableFrom(a *graph.Value, bs []*graph.Value) bool {
	la, lb := d.locs(a), d.locsOf(bs)
	if len(la) == 0 || len(lb) == 0 {
		return false
	}
	return d.overlap(la, d.closure(lb))
}

// locsOf is the union of the locations of vs.
func (d *DB) locsOf(vs []*graph.Value) locSet {
	s := locSet{}
	for _, v := range vs {
		for l := range d.locs(v) {
			s[l] = struct{}{}
		}
	}
	return s
}
