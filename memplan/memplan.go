// Package memplan plans where the tensors a runtime manages live: their
// lifetimes, from a graph and its alias analysis (Lifetimes), and their
// places in one slab (the planners: None, StorageGroups, GreedyBySize).
// It knows nothing of runtimes: a planner gets the size and the lifetime
// of each managed tensor and returns an offset for each.
package memplan

import "fmt"

// Alignment of every tensor in a slab, as PyTorch's CPU allocator gives.
const Alignment = 64

// Align rounds n up to a multiple of Alignment.
func Align(n int64) int64 { return (n + Alignment - 1) &^ (Alignment - 1) }

// Request is one managed tensor: its size in bytes and the steps (node
// indices of the top-level block) at which it is first written and last
// read, inclusive.
type Request struct {
	Size       int64
	Start, End int
	// Overwrites, when OK, names the request this tensor may be written
	// over (a planned overwrite): that request is last read at this
	// one's Start, by the node writing this one, whose kernel can write
	// its output beginning at the input's first byte (ops.OverwriteRule).
	// A planner may honour the link (same offset: the two cost one tensor
	// at that step) or ignore it (disjoint memory, as for any two tensors
	// alive together). Links whose steps do not meet are ignored.
	Overwrites Overwrite
}

// Overwrite names, by its index in the same list, the tensor another
// tensor may be written over. The zero value names none, so a Request or
// Lifetime written without one overwrites nothing.
type Overwrite struct {
	Index int  // the tensor written over, when OK
	OK    bool // false: no overwrite
}

// OverwriteOf is the Overwrite naming tensor i.
func OverwriteOf(i int) Overwrite { return Overwrite{Index: i, OK: true} }

// overwrites returns, per request, the index of the request it is
// written over, or -1: its Overwrites when the steps meet (the input is
// last read where this tensor is written) and no earlier request already
// overwrites the same input.
func overwrites(reqs []Request) []int {
	ls := make([]int, len(reqs))
	taken := map[int]bool{}
	for i, r := range reqs {
		ls[i] = -1
		j := r.Overwrites.Index
		if !r.Overwrites.OK || j < 0 || j >= len(reqs) || j == i || taken[j] {
			continue
		}
		if reqs[j].End != r.Start || reqs[j].Start >= r.Start {
			continue
		}
		ls[i] = j
		taken[j] = true
	}
	return ls
}

// HasOverwrites reports whether any request is written over another.
func HasOverwrites(reqs []Request) bool {
	for _, j := range overwrites(reqs) {
		if j >= 0 {
			return true
		}
	}
	return false
}

// Plan is the placement of a set of requests.
type Plan struct {
	Offsets []int64 // one per request, aligned
	Total   int64   // slab size in bytes
	// Groups lists, for planners that share memory by storage group, the
	// requests of each group; nil for planners that place by offset.
	Groups [][]int
}

// Planner computes a plan. Implementations must place requests whose
// lifetimes overlap at disjoint byte ranges.
type Planner interface {
	Name() string
	Plan(reqs []Request) Plan
}

// Check verifies that no two requests alive at the same step overlap in
// memory, except a tensor and the input it is written over (Overwrites)
// at the same offset, and that every request fits in the slab.
// It is for tests and debug modes.
func Check(reqs []Request, p Plan) error {
	if len(p.Offsets) != len(reqs) {
		return fmt.Errorf("memplan: %d offsets for %d requests", len(p.Offsets), len(reqs))
	}
	ls := overwrites(reqs)
	for i, a := range reqs {
		if p.Offsets[i]%Alignment != 0 {
			return fmt.Errorf("memplan: tensor %d at offset %d is not %d-aligned", i, p.Offsets[i], Alignment)
		}
		if p.Offsets[i] < 0 || p.Offsets[i]+a.Size > p.Total {
			return fmt.Errorf("memplan: tensor %d [%d, %d) outside slab of %d bytes", i, p.Offsets[i], p.Offsets[i]+a.Size, p.Total)
		}
		for j := i + 1; j < len(reqs); j++ {
			b := reqs[j]
			if a.End < b.Start || b.End < a.Start || a.Size == 0 || b.Size == 0 {
				continue
			}
			if p.Offsets[i] < p.Offsets[j]+b.Size && p.Offsets[j] < p.Offsets[i]+a.Size &&
				!((ls[i] == j || ls[j] == i) && p.Offsets[i] == p.Offsets[j]) {
				return fmt.Errorf("memplan: tensors %d and %d are alive together (steps %d-%d, %d-%d) and overlap in memory", i, j, a.Start, a.End, b.Start, b.End)
			}
		}
	}
	return nil
}

// LowerBound is the largest total size of requests alive at one step,
// where a tensor written over its input (Overwrites) counts as the
// larger of the two at the step they meet.
func LowerBound(reqs []Request) int64 {
	maxStep := 0
	for _, r := range reqs {
		maxStep = max(maxStep, r.End)
	}
	live := make([]int64, maxStep+2)
	for _, r := range reqs {
		live[r.Start] += Align(r.Size)
		live[r.End+1] -= Align(r.Size)
	}
	for i, j := range overwrites(reqs) {
		if r := reqs[i]; j >= 0 {
			live[r.Start] -= min(Align(r.Size), Align(reqs[j].Size))
			live[r.Start+1] += min(Align(r.Size), Align(reqs[j].Size))
		}
	}
	var cur, best int64
	for _, d := range live {
		cur += d
		best = max(best, cur)
	}
	return best
}
