package alias

import "iter"

// locSet is an immutable set of locations: a treap whose priorities are
// a bijective hash of the keys, so a set has one shape whatever order it
// was built in, and whose nodes are shared between sets. Points-to sets
// grow by union along the graph (a loop's result may be its input or
// anything its body made, so a chain of n loops gives sets of 1..n
// locations); with shared nodes a union that adds k locations costs about
// k log n and one that adds nothing returns its first operand unchanged,
// where copying sets would cost n squared over the chain.
//
// The empty set is nil.
type locSet = *lnode

type lnode struct {
	key         loc
	prio        uint32
	size        int32
	id          int32 // its number in the DB's DAG (dag.go), or noID
	left, right *lnode
}

// prio is a bijection of the key (an odd multiplier and xor-shifts), so
// no two keys tie.
func prio(l loc) uint32 {
	x := uint32(l)
	x ^= x >> 16
	x *= 0x7feb352d
	x ^= x >> 15
	x *= 0x846ca68b
	x ^= x >> 16
	return x
}

// noID is the id of a node outside the DAG: one made after it (by a
// query), or before it is built. The constructors set it, since 0 is a
// number in the DAG.
const noID = -1

func mk(key loc, p uint32, l, r *lnode) *lnode {
	return &lnode{key: key, prio: p, size: 1 + l.len() + r.len(), id: noID, left: l, right: r}
}

// single is {l}.
func single(l loc) locSet { return &lnode{key: l, prio: prio(l), size: 1, id: noID} }

func (s *lnode) len() int32 {
	if s == nil {
		return 0
	}
	return s.size
}

func (s *lnode) has(l loc) bool {
	for s != nil {
		switch {
		case l < s.key:
			s = s.left
		case l > s.key:
			s = s.right
		default:
			return true
		}
	}
	return false
}

// all yields the locations in increasing order.
func (s *lnode) all() iter.Seq[loc] {
	return func(yield func(loc) bool) {
		s.walk(yield)
	}
}

func (s *lnode) walk(yield func(loc) bool) bool {
	for s != nil {
		if !s.left.walk(yield) || !yield(s.key) {
			return false
		}
		s = s.right
	}
	return true
}

// split returns the locations of s below l and above l.
func split(s *lnode, l loc) (lo, hi *lnode) {
	if s == nil {
		return nil, nil
	}
	switch {
	case l < s.key:
		a, b := split(s.left, l)
		return a, mk(s.key, s.prio, b, s.right)
	case l > s.key:
		a, b := split(s.right, l)
		return mk(s.key, s.prio, s.left, a), b
	}
	return s.left, s.right
}

// union returns a ∪ b; it is a itself (or b) when the other adds nothing,
// so callers detect change by comparing pointers.
func union(a, b *lnode) *lnode {
	switch {
	case a == nil:
		return b
	case b == nil || a == b:
		return a
	}
	if a.prio < b.prio {
		// b's root outranks every key of a: if a ⊆ b this returns b.
		a, b = b, a
	}
	lo, hi := split(b, a.key)
	l, r := union(a.left, lo), union(a.right, hi)
	if l == a.left && r == a.right {
		return a
	}
	return mk(a.key, a.prio, l, r)
}

// add returns s ∪ {l}.
func (s *lnode) add(l loc) *lnode {
	if s.has(l) {
		return s
	}
	return union(s, single(l))
}

// intersects reports whether a and b share a location.
func intersects(a, b *lnode) bool {
	if a == nil || b == nil {
		return false
	}
	if a == b {
		return true
	}
	if a.len() > b.len() {
		a, b = b, a
	}
	for l := range a.all() {
		if b.has(l) {
			return true
		}
	}
	return false
}

// setOfLocs builds a set from a list of locations.
func setOfLocs(ls ...loc) locSet {
	var s locSet
	for _, l := range ls {
		s = s.add(l)
	}
	return s
}
