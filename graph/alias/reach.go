package alias

import "github.com/gosr/gosr/graph"

// Reach is the memory reachable from a set of values that only grows:
// what ReachableFrom answers for one list, kept up to date as values are
// added, so that a pass growing a live set (dead code elimination) pays
// for each location once instead of recomputing the closure of the whole
// list for every question.
type Reach struct {
	d       *DB
	in      []bool // per location: reachable
	hasWild bool   // some reachable location is wild
	hasWc   bool   // the wildcard is reachable
	// Callbacks waiting for a location, for any wild location (values
	// pointing to the wildcard), for the wildcard (values with a wild
	// location).
	onLoc  map[loc][]*waiter
	onWild []*waiter
	onWc   []*waiter
	// done holds the treap nodes all of whose locations are reachable:
	// sets share them, so adding many values with large sets (a chain of
	// loops) looks at each node once.
	done map[*lnode]bool
}

type waiter struct {
	done bool
	f    func()
}

// NewReach returns an empty reachable set.
func (d *DB) NewReach() *Reach {
	return &Reach{d: d, in: make([]bool, len(d.contents)), onLoc: map[loc][]*waiter{}, done: map[*lnode]bool{}}
}

// Add makes v's memory and everything it contains reachable, calling the
// callbacks (OnReach) this makes due, after: they may call Add.
func (r *Reach) Add(v *graph.Value) {
	var due []*waiter
	var stack []loc
	var visit func(s *lnode)
	visit = func(s *lnode) {
		if s == nil || r.done[s] {
			return
		}
		r.done[s] = true
		visit(s.left)
		visit(s.right)
		if !r.in[s.key] {
			stack = append(stack, s.key)
		}
	}
	visit(r.d.locs(v))
	for len(stack) > 0 {
		l := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if r.in[l] {
			continue
		}
		r.in[l] = true
		due = append(due, r.onLoc[l]...)
		delete(r.onLoc, l)
		if r.d.wild[l] && !r.hasWild {
			r.hasWild = true
			due = append(due, r.onWild...)
			r.onWild = nil
		}
		if l == wildcard && !r.hasWc {
			r.hasWc = true
			due = append(due, r.onWc...)
			r.onWc = nil
		}
		for e := range r.d.contents[l].all() {
			if !r.in[e] {
				stack = append(stack, e)
			}
		}
	}
	for _, w := range due {
		if !w.done {
			w.done = true
			w.f()
		}
	}
}

// Waiting reports whether some OnReach callback has not been called yet.
func (r *Reach) Waiting() bool {
	return len(r.onLoc) > 0 || len(r.onWild) > 0 || len(r.onWc) > 0
}

// OnReach calls f once, now or from a later Add, when a's memory becomes
// reachable: when ReachableFrom(a, values added) becomes true.
func (r *Reach) OnReach(a *graph.Value, f func()) {
	la := r.d.locs(a)
	if la == nil {
		return
	}
	hasWc, hasWild := la.has(wildcard), r.d.hasWildLoc(la)
	if hasWc && r.hasWild || hasWild && r.hasWc {
		f()
		return
	}
	for l := range la.all() {
		if r.in[l] {
			f()
			return
		}
	}
	w := &waiter{f: f}
	for l := range la.all() {
		r.onLoc[l] = append(r.onLoc[l], w)
	}
	if hasWc {
		r.onWild = append(r.onWild, w)
	}
	if hasWild {
		r.onWc = append(r.onWc, w)
	}
}
