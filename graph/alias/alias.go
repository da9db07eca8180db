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
	"context"
	"fmt"
	"sync"

	"github.com/gosr/gosr/graph"
)

type loc int32

// wildcard is the location of external memory and of values of unknown
// origin.
const wildcard loc = 0

// noLoc fills a slot that holds no location (0 is the wildcard's).
const noLoc loc = -1

// DB is the result of the analysis of one graph. It is read-only after
// Analyze (the caches below fill on first use, under mu); a pass that
// changes the graph must analyze it again.
type DB struct {
	g *graph.Graph
	// values are the graph's values (inputs, then per node in graph order
	// its blocks' parameters and its outputs); per value, by position:
	// pts its locations (nil until the analysis points it somewhere) and
	// fresh its own location (0 until it has one).
	values                             []*graph.Value
	byID                               []int32                // value position by Value.ID, -1 for none; nil when IDs are sparse
	byPtr                              map[*graph.Value]int32 // value position, when IDs are sparse or repeated
	pts                                []locSet
	fresh                              []loc
	nodes                              []*graph.Node // in graph.Walk's order
	ovl                                []ovlEntry    // per node: its annotated overloads, once found
	contents                           []locSet      // per location
	wild                               []bool        // per location: escaped where the analysis cannot follow
	contained                          []bool        // per location: stored into some container
	written                            []bool        // per location: some node may write it
	anyWritten, wcWritten, wildWritten bool          // some location, the wildcard, a wild location is written (after the analysis)
	// writeDone holds sets already marked written, as wildDone.
	writeDone map[locSet]bool
	outputs   locSet // locations of graph outputs and everything they contain
	wcSet     locSet // {wildcard}, the locations of a value the analysis never saw
	changed   bool
	// wildDone holds sets already marked wild (wild is never unset), so
	// the fixpoint's later sweeps skip them.
	wildDone map[locSet]bool

	// For queries, once the analysis is done: dag is made by finish and
	// only read after; the others are made on first use.
	dag         *dag
	allOnce     sync.Once
	all         *Index // every value of the graph (Aliases)
	holdersOnce sync.Once
	holders     [][2]loc // per location: up to two escaping containers holding it, noLoc for none (ElementsEscape)
}

// Analyze runs the analysis on g.
func Analyze(g *graph.Graph) *DB {
	d, _ := AnalyzeContext(context.Background(), g)
	return d
}

// AnalyzeContext is Analyze, stopping with ctx's error when ctx is done
// (checked every few thousand nodes).
func AnalyzeContext(ctx context.Context, g *graph.Graph) (*DB, error) {
	d := &DB{g: g, wildDone: map[locSet]bool{}, writeDone: map[locSet]bool{}}
	d.newLoc() // the wildcard
	d.wcSet = single(wildcard)
	d.contents[wildcard] = d.wcSet
	d.wild[wildcard] = true

	d.values = append(d.values, g.Inputs()...)
	var visit func(b *graph.Block)
	visit = func(b *graph.Block) {
		for _, n := range b.Nodes {
			d.nodes = append(d.nodes, n)
			for _, sb := range n.Blocks {
				d.values = append(d.values, sb.Inputs()...)
				visit(sb)
			}
			d.values = append(d.values, n.Outputs...)
		}
	}
	visit(g.Block)
	d.number()
	d.ovl = make([]ovlEntry, len(d.nodes))

	for _, in := range g.Inputs() {
		d.point(in, wildcard)
	}
	for _, n := range d.nodes {
		for _, sb := range n.Blocks {
			for _, p := range sb.Inputs() {
				if n.Kind != graph.KindLoop {
					// Closures and unknown block owners: parameters come from anywhere.
					d.point(p, wildcard)
				}
			}
		}
	}

	// The transfer functions only add, so this terminates; loops need
	// more than one sweep to carry values around.
	var err error
	for iter := 0; iter < 1000 && err == nil; iter++ {
		d.changed = false
		for i, n := range d.nodes {
			if i&4095 == 4095 {
				if err = ctx.Err(); err != nil {
					break
				}
			}
			d.transfer(i, n)
		}
		if !d.changed {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("alias analysis: %w", err)
	}
	d.spreadWild()
	d.outputs = d.closure(d.setOf(g.Outputs()...))
	d.wildDone, d.writeDone = nil, nil
	for l, w := range d.written {
		if w {
			d.anyWritten = true
			d.wcWritten = d.wcWritten || loc(l) == wildcard
			d.wildWritten = d.wildWritten || d.wild[l]
		}
	}
	d.finish()
	return d, nil
}

// number gives each value its position: by ID through a slice when the
// IDs are dense and distinct (the usual case), else through a map.
func (d *DB) number() {
	n := len(d.values)
	d.pts = make([]locSet, n)
	d.fresh = make([]loc, n)
	maxID := -1
	for _, v := range d.values {
		maxID = max(maxID, v.ID)
	}
	if maxID < 4*n+1024 {
		d.byID = make([]int32, maxID+1)
		for i := range d.byID {
			d.byID[i] = -1
		}
		dense := true
		for i, v := range d.values {
			if v.ID < 0 || d.byID[v.ID] >= 0 {
				dense = false
				break
			}
			d.byID[v.ID] = int32(i)
		}
		if dense {
			return
		}
		d.byID = nil
	}
	d.byPtr = make(map[*graph.Value]int32, n)
	for i, v := range d.values {
		if _, dup := d.byPtr[v]; !dup {
			d.byPtr[v] = int32(i)
		}
	}
}

// NumValues is the number of values the analysis saw: the graph's
// inputs, its nodes' outputs and its blocks' parameters.
func (d *DB) NumValues() int { return len(d.values) }

// ValueIndex numbers the values the analysis saw from 0 to NumValues()-1
// (for passes keeping a slice per value instead of a map); -1 for any
// other value.
func (d *DB) ValueIndex(v *graph.Value) int { return int(d.index(v)) }

// NumNodes is the number of nodes the analysis saw (sub-blocks' too).
func (d *DB) NumNodes() int { return len(d.nodes) }

// index is v's position in values, or -1 when the analysis never saw v.
func (d *DB) index(v *graph.Value) int32 {
	if d.byID != nil {
		if id := v.ID; id >= 0 && id < len(d.byID) {
			if i := d.byID[id]; i >= 0 && d.values[i] == v {
				return i
			}
		}
		return -1
	}
	if i, ok := d.byPtr[v]; ok {
		return i
	}
	return -1
}

func (d *DB) newLoc() loc {
	d.contents = append(d.contents, nil)
	d.wild = append(d.wild, false)
	d.contained = append(d.contained, false)
	d.written = append(d.written, false)
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
	i := d.index(v)
	if i < 0 {
		return
	}
	s := d.pts[i]
	for _, l := range ls {
		if t := s.add(l); t != s {
			s = t
			d.pts[i] = s
			d.changed = true
		}
	}
}

func (d *DB) pointSet(v *graph.Value, ls locSet) {
	if ls == nil || !Mutable(v.Type) {
		return
	}
	i := d.index(v)
	if i < 0 {
		return
	}
	if s := d.pts[i]; s != ls {
		if t := union(s, ls); t != s {
			d.pts[i] = t
			d.changed = true
		}
	}
}

// freshLoc gives v its own location (once).
func (d *DB) freshLoc(v *graph.Value) loc {
	i := d.index(v)
	if i < 0 { // not in the graph: a location of its own each time
		return d.newLoc()
	}
	l := d.fresh[i]
	if l == 0 {
		l = d.newLoc()
		d.fresh[i] = l
	}
	d.point(v, l)
	return l
}

func (d *DB) addContents(containers locSet, elems locSet) {
	if elems == nil {
		return
	}
	grew := false
	for c := range containers.all() {
		if t := union(d.contents[c], elems); t != d.contents[c] {
			d.contents[c] = t
			d.changed = true
			grew = true
		}
	}
	// Elements already in every container were marked when they went in.
	if !grew {
		return
	}
	for e := range elems.all() {
		if !d.contained[e] {
			d.contained[e] = true
			d.changed = true
		}
	}
}

func (d *DB) markWild(ls locSet) {
	if ls == nil || d.wildDone[ls] {
		return
	}
	for l := range ls.all() {
		if !d.wild[l] {
			d.wild[l] = true
			d.changed = true
		}
	}
	if d.wildDone != nil {
		d.wildDone[ls] = true
	}
}

func (d *DB) write(ls locSet) {
	if ls == nil || d.writeDone[ls] {
		return
	}
	for l := range ls.all() {
		if !d.written[l] {
			d.written[l] = true
			d.changed = true
		}
	}
	d.writeDone[ls] = true
}

// spreadWild marks wild everything a wild location contains: it is
// reachable from outside too.
func (d *DB) spreadWild() {
	var stack []loc
	for l := range d.contents {
		if d.wild[l] {
			stack = append(stack, loc(l))
		}
	}
	for len(stack) > 0 {
		l := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for e := range d.contents[l].all() {
			if !d.wild[e] {
				d.wild[e] = true
				stack = append(stack, e)
			}
		}
	}
}

func (d *DB) ptsOf(v *graph.Value) locSet {
	if i := d.index(v); i >= 0 {
		return d.pts[i]
	}
	return nil
}

func (d *DB) setOf(vs ...*graph.Value) locSet {
	var s locSet
	for _, v := range vs {
		s = union(s, d.ptsOf(v))
	}
	return s
}

func (d *DB) contentsOf(ls locSet) locSet {
	var s locSet
	for l := range ls.all() {
		s = union(s, d.contents[l])
	}
	return s
}

// closure returns ls and every location transitively contained in it.
func (d *DB) closure(ls locSet) locSet {
	s := ls
	var stack []loc
	for l := range ls.all() {
		if d.contents[l] != nil {
			stack = append(stack, l)
		}
	}
	for len(stack) > 0 {
		l := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for e := range d.contents[l].all() {
			if !s.has(e) {
				s = s.add(e)
				if d.contents[e] != nil {
					stack = append(stack, e)
				}
			}
		}
	}
	return s
}

// hasWildLoc reports whether s holds a wild location.
func (d *DB) hasWildLoc(s locSet) bool {
	if d.dag == nil { // during the analysis: wild still changes
		for l := range s.all() {
			if d.wild[l] {
				return true
			}
		}
		return false
	}
	return d.any(s, fWild)
}

// overlap reports whether two location sets may denote common memory:
// a common location, or the wildcard on one side and a wild location
// (or the wildcard) on the other.
func (d *DB) overlap(a, b locSet) bool {
	return intersects(a, b) || a.has(wildcard) && d.hasWildLoc(b) || b.has(wildcard) && d.hasWildLoc(a)
}
