// Package alias is gosr's alias analysis: which values of a graph may
// share memory, which are written, which escape into containers or out of
// the graph. It is a points-to analysis over abstract memory locations,
// solved to a fixpoint (loops carry values around), conservative where it
// does not know an op: the memory planner and the passes rely on "no" being
// true.
//
// Every value of a mutable type (tensors, lists, dicts, tuples holding
// them, objects) points to a set of locations; a container location has
// contents (the locations of its elements). One location, the wildcard,
// stands for memory from outside the graph (graph inputs, module
// attributes) and anything of unknown origin; locations stored where the
// analysis cannot follow them are marked wild, and a value pointing to the
// wildcard may alias any of them.
package alias

import (
	"github.com/gosr/gosr/graph"
)

type loc int32

// wildcard is the location of external memory and of values of unknown
// origin.
const wildcard loc = 0

type locSet map[loc]struct{}

func (s locSet) has(l loc) bool { _, ok := s[l]; return ok }

// DB is the result of the analysis of one graph. It is read-only after
// Analyze; a pass that changes the graph must analyze it again.
type DB struct {
	g         *graph.Graph
	pts       map[*graph.Value]locSet
	fresh     map[*graph.Value]loc // each value's own location, stable across iterations
	contents  []locSet             // per location
	wild      []bool               // per location: escaped where the analysis cannot follow
	contained []bool               // per location: stored into some container
	written   locSet
	values    []*graph.Value
	outputs   locSet // locations of graph outputs and everything they contain
	changed   bool
	ovl       map[*graph.Node]ovlEntry
}

// Analyze runs the analysis on g.
func Analyze(g *graph.Graph) *DB {
	d := &DB{
		g:       g,
		pts:     map[*graph.Value]locSet{},
		fresh:   map[*graph.Value]loc{},
		written: locSet{},
		ovl:     map[*graph.Node]ovlEntry{},
	}
	d.newLoc() // the wildcard
	d.contents[wildcard] = locSet{wildcard: {}}
	d.wild[wildcard] = true

	for _, in := range g.Inputs() {
		d.values = append(d.values, in)
		d.point(in, wildcard)
	}
	var visit func(b *graph.Block)
	visit = func(b *graph.Block) {
		for _, n := range b.Nodes {
			for _, sb := range n.Blocks {
				for _, p := range sb.Inputs() {
					d.values = append(d.values, p)
					if n.Kind != "prim::Loop" {
						// Closures and unknown block owners: parameters come from anywhere.
						d.point(p, wildcard)
					}
				}
				visit(sb)
			}
			d.values = append(d.values, n.Outputs...)
		}
	}
	visit(g.Block)

	// The transfer functions only add, so this terminates; loops need
	// more than one sweep to carry values around.
	for iter := 0; iter < 1000; iter++ {
		d.changed = false
		g.Walk(d.transfer)
		if !d.changed {
			break
		}
	}
	d.spreadWild()
	d.outputs = d.closure(d.setOf(g.Outputs()...))
	return d
}

func (d *DB) newLoc() loc {
	d.contents = append(d.contents, nil)
	d.wild = append(d.wild, false)
	d.contained = append(d.contained, false)
	return loc(len(d.contents) - 1)
}

// Mutable reports whether values of type t can share memory with others
// (scalars, strings and None cannot).
func Mutable(t *graph.Type) bool {
	if t == nil {
		return true
	}
	switch t.Kind {
	case graph.TensorType, graph.ListType, graph.DictType, graph.ClassType, graph.AnyType, graph.FutureType:
		return true
	case graph.OptionalType:
		return Mutable(t.Elem())
	case graph.TupleType:
		if len(t.Elems) == 0 {
			return true
		}
		for _, e := range t.Elems {
			if Mutable(e) {
				return true
			}
		}
	}
	return false
}

func (d *DB) point(v *graph.Value, ls ...loc) {
	if !Mutable(v.Type) {
		return
	}
	s := d.pts[v]
	if s == nil {
		s = locSet{}
		d.pts[v] = s
	}
	for _, l := range ls {
		if !s.has(l) {
			s[l] = struct{}{}
			d.changed = true
		}
	}
}

func (d *DB) pointSet(v *graph.Value, ls locSet) {
	for l := range ls {
		d.point(v, l)
	}
}

// freshLoc gives v its own location (once).
func (d *DB) freshLoc(v *graph.Value) loc {
	l, ok := d.fresh[v]
	if !ok {
		l = d.newLoc()
		d.fresh[v] = l
	}
	d.point(v, l)
	return l
}

func (d *DB) addContents(containers locSet, elems locSet) {
	for c := range containers {
		if d.contents[c] == nil {
			d.contents[c] = locSet{}
		}
		for e := range elems {
			if !d.contents[c].has(e) {
				d.contents[c][e] = struct{}{}
				d.changed = true
			}
			if !d.contained[e] {
				d.contained[e] = true
				d.changed = true
			}
		}
	}
}

func (d *DB) markWild(ls locSet) {
	for l := range ls {
		if !d.wild[l] {
			d.wild[l] = true
			d.changed = true
		}
	}
}

func (d *DB) write(ls locSet) {
	for l := range ls {
		if !d.written.has(l) {
			d.written[l] = struct{}{}
			d.changed = true
		}
	}
}

// spreadWild marks wild everything a wild location contains: it is
// reachable from outside too.
func (d *DB) spreadWild() {
	for again := true; again; {
		again = false
		for l := range d.contents {
			if !d.wild[l] {
				continue
			}
			for e := range d.contents[l] {
				if !d.wild[e] {
					d.wild[e] = true
					again = true
				}
			}
		}
	}
}

func (d *DB) ptsOf(v *graph.Value) locSet {
	if s, ok := d.pts[v]; ok {
		return s
	}
	return locSet{}
}

func (d *DB) setOf(vs ...*graph.Value) locSet {
	s := locSet{}
	for _, v := range vs {
		for l := range d.ptsOf(v) {
			s[l] = struct{}{}
		}
	}
	return s
}

func (d *DB) contentsOf(ls locSet) locSet {
	s := locSet{}
	for l := range ls {
		for e := range d.contents[l] {
			s[e] = struct{}{}
		}
	}
	return s
}

// closure returns ls and every location transitively contained in it.
func (d *DB) closure(ls locSet) locSet {
	s := locSet{}
	var add func(l loc)
	add = func(l loc) {
		if s.has(l) {
			return
		}
		s[l] = struct{}{}
		for e := range d.contents[l] {
			add(e)
		}
	}
	for l := range ls {
		add(l)
	}
	return s
}

func (d *DB) hasWildLoc(s locSet) bool {
	for l := range s {
		if d.wild[l] {
			return true
		}
	}
	return false
}

// overlap reports whether two location sets may denote common memory:
// a common location, or the wildcard on one side and a wild location
// (or the wildcard) on the other.
func (d *DB) overlap(a, b locSet) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	for l := range a {
		if b.has(l) {
			return true
		}
	}
	return a.has(wildcard) && d.hasWildLoc(b) || b.has(wildcard) && d.hasWildLoc(a)
}
