package memplan

import (
	"fmt"
	"slices"
	"strings"
)

// None gives every tensor its own region of the slab: no memory shared
// between tensors, but one allocation reused across runs. It is the
// baseline the other planners are measured against.
type None struct{}

// Name implements Planner.
func (None) Name() string { return "none" }

// Plan implements Planner.
func (None) Plan(reqs []Request) Plan {
	p := Plan{Offsets: make([]int64, len(reqs))}
	for i, r := range reqs {
		p.Offsets[i] = p.Total
		p.Total += Align(r.Size)
	}
	return p
}

// StorageGroups is PyTorch Static Runtime's planner
// (assignStorageToManagedTensors in memory_planner.cpp). Walking the
// steps in order, each tensor joins the group freed most recently, or a
// new group when none is free; a tensor's group is freed after the step
// of its last use. Sizes play no part in the grouping. The slab holds
// the groups one after the other, each as large as its largest tensor.
type StorageGroups struct{}

// Name implements Planner.
func (StorageGroups) Name() string { return "storage-groups" }

// Plan implements Planner.
func (StorageGroups) Plan(reqs []Request) Plan {
	groups := storageGroups(reqs)
	p := Plan{Offsets: make([]int64, len(reqs)), Groups: groups}
	for _, g := range groups {
		var size int64
		for _, i := range g {
			size = max(size, Align(reqs[i].Size))
			p.Offsets[i] = p.Total
		}
		p.Total += size
	}
	return p
}

// storageGroups assigns requests to groups as PyTorch does. Free groups
// are a stack: the group freed last is reused first.
func storageGroups(reqs []Request) [][]int {
	byStart := make([]int, len(reqs))
	byEnd := make([]int, len(reqs))
	for i := range reqs {
		byStart[i], byEnd[i] = i, i
	}
	slices.SortStableFunc(byStart, func(a, b int) int { return reqs[a].Start - reqs[b].Start })
	slices.SortStableFunc(byEnd, func(a, b int) int { return reqs[a].End - reqs[b].End })
	groupOf := make([]int, len(reqs))
	var groups [][]int
	var free []int
	s, e := 0, 0
	for s < len(byStart) {
		step := reqs[byStart[s]].Start
		// Outputs of the step's node first: they may not share a group with
		// the tensors the node reads, which are freed only after it.
		for ; s < len(byStart) && reqs[byStart[s]].Start == step; s++ {
			i := byStart[s]
			if n := len(free); n > 0 {
				groupOf[i] = free[n-1]
				free = free[:n-1]
				groups[groupOf[i]] = append(groups[groupOf[i]], i)
			} else {
				groupOf[i] = len(groups)
				groups = append(groups, []int{i})
			}
		}
		// Free every group whose tensor's last use is at or before the
		// next step that assigns.
		next := int(^uint(0) >> 1)
		if s < len(byStart) {
			next = reqs[byStart[s]].Start
		}
		for ; e < len(byEnd) && reqs[byEnd[e]].End < next; e++ {
			free = append(free, groupOf[byEnd[e]])
		}
	}
	return groups
}

// GreedyBySize places tensors by offset, largest first, each at the
// place that wastes least among those its neighbours in time leave free
// ("Greedy by Size for Offset Calculation", Pisarchyk and Lee,
// arXiv:2001.03288, section 5.2). Unlike storage groups a tensor may
// straddle the memory of several earlier ones.
//
// Greedy heuristics have bad cases, so Plan also runs the variants below
// and keeps the smallest slab: best fit and first fit (the lowest offset
// that fits), tensors of equal size in order of their lifetimes' length,
// and PyTorch's storage groups. Each is valid, so the result is valid and
// never larger than storage groups gives.
type GreedyBySize struct{}

// Name implements Planner.
func (GreedyBySize) Name() string { return "greedy" }

// Plan implements Planner.
func (GreedyBySize) Plan(reqs []Request) Plan {
	best := StorageGroups{}.Plan(reqs)
	best.Groups = nil
	lb := LowerBound(reqs)
	if best.Total == lb {
		return best
	}
	order := make([]int, len(reqs))
	for i := range order {
		order[i] = i
	}
	// By size, then the longer lifetime first (it constrains more), then
	// the earlier start: deterministic for equal sizes.
	bySizeLife := slices.Clone(order)
	slices.SortStableFunc(bySizeLife, func(a, b int) int {
		ra, rb := reqs[a], reqs[b]
		if sa, sb := Align(ra.Size), Align(rb.Size); sa != sb {
			return cmpDesc(sa, sb)
		}
		if la, lb := ra.End-ra.Start, rb.End-rb.Start; la != lb {
			return lb - la
		}
		return ra.Start - rb.Start
	})
	bySizeStart := slices.Clone(order)
	slices.SortStableFunc(bySizeStart, func(a, b int) int {
		ra, rb := reqs[a], reqs[b]
		if sa, sb := Align(ra.Size), Align(rb.Size); sa != sb {
			return cmpDesc(sa, sb)
		}
		return ra.Start - rb.Start
	})
	var pl placer
	for _, ord := range [][]int{bySizeLife, bySizeStart} {
		for _, bestFit := range []bool{true, false} {
			p := pl.place(reqs, ord, bestFit)
			if p.Total < best.Total {
				best = p
			}
			if best.Total == lb {
				return best
			}
		}
	}
	// Planned overwrites: the same greedy over chains of tensors that
	// share one offset (a tensor and the dead input it is written over).
	// It is tried after the plain placement, which ignores the links and
	// is kept when it is as small.
	if ls := overwrites(reqs); slices.ContainsFunc(ls, func(j int) bool { return j >= 0 }) {
		for _, bySize := range []bool{true, false} {
			for _, bestFit := range []bool{true, false} {
				p := placeChains(reqs, ls, bySize, bestFit)
				if p.Total < best.Total {
					best = p
				}
				if best.Total == lb {
					return best
				}
			}
		}
	}
	return best
}

func cmpDesc(a, b int64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// placer holds the scratch of one greedy placement.
type placer struct {
	placed []int // placed requests, ordered by offset
}

// place puts the requests at offsets in the given order. For each, it
// walks the placed requests that share a step with it in offset order;
// the gaps between them are the candidate places, plus the end.
func (pl *placer) place(reqs []Request, order []int, bestFit bool) Plan {
	p := Plan{Offsets: make([]int64, len(reqs))}
	pl.placed = pl.placed[:0]
	for _, i := range order {
		r := reqs[i]
		size := Align(r.Size)
		var prev int64
		bestOff, bestGap := int64(-1), int64(-1)
		for _, j := range pl.placed {
			q := reqs[j]
			if q.End < r.Start || r.End < q.Start || q.Size == 0 {
				continue
			}
			if gap := p.Offsets[j] - prev; gap >= size && (bestOff < 0 || bestFit && gap < bestGap) {
				bestOff, bestGap = prev, gap
				if !bestFit {
					break
				}
			}
			prev = max(prev, p.Offsets[j]+Align(q.Size))
		}
		if bestOff < 0 {
			bestOff = prev
		}
		p.Offsets[i] = bestOff
		p.Total = max(p.Total, bestOff+size)
		// Keep placed sorted by offset.
		k, _ := slices.BinarySearchFunc(pl.placed, bestOff, func(j int, off int64) int {
			if p.Offsets[j] <= off {
				return -1
			}
			return 1
		})
		pl.placed = slices.Insert(pl.placed, k, i)
	}
	return p
}

// Planners lists the planners by name, in the order srbench shows them.
var Planners = []Planner{None{}, StorageGroups{}, GreedyBySize{}}

// ByName returns the planner called name: none, storage-groups or greedy.
func ByName(name string) (Planner, error) {
	var names []string
	for _, p := range Planners {
		if p.Name() == name {
			return p, nil
		}
		names = append(names, p.Name())
	}
	return nil, fmt.Errorf("memplan: unknown planner %q (have %s)", name, strings.Join(names, ", "))
}

// TensorBytes is the sum of the requests' aligned sizes: what the slab
// would take with no sharing at all.
func TensorBytes(reqs []Request) int64 {
	var n int64
	for _, r := range reqs {
		n += Align(r.Size)
	}
	return n
}

// placeChains is greedy-by-size over chains: requests joined by
// overwrite links (ls, from overwrites) are placed as one unit at one offset, each
// member occupying its own size during its own steps. Units go largest
// first (ties: the longer span first if bySize, then the earlier start);
// each goes at the lowest offset where no member overlaps a placed
// request alive with it (first fit), or where the space left above it is
// smallest (best fit).
func placeChains(reqs []Request, ls []int, bySize, bestFit bool) Plan {
	p := Plan{Offsets: make([]int64, len(reqs))}
	// Chains are paths: each request overwrites at most one and is
	// overwritten by at most one.
	next := make([]int, len(reqs))
	for i := range next {
		next[i] = -1
	}
	for i, j := range ls {
		if j >= 0 {
			next[j] = i
		}
	}
	type unit struct {
		members    []int
		size       int64
		start, end int
	}
	var units []unit
	for i := range reqs {
		if ls[i] >= 0 {
			continue // not the head of its chain
		}
		u := unit{start: reqs[i].Start, end: reqs[i].End}
		for k := i; k >= 0; k = next[k] {
			u.members = append(u.members, k)
			u.size = max(u.size, Align(reqs[k].Size))
			u.start, u.end = min(u.start, reqs[k].Start), max(u.end, reqs[k].End)
		}
		units = append(units, u)
	}
	slices.SortStableFunc(units, func(a, b unit) int {
		if a.size != b.size {
			return cmpDesc(a.size, b.size)
		}
		if la, lb := a.end-a.start, b.end-b.start; bySize && la != lb {
			return lb - la
		}
		return a.start - b.start
	})
	type conflict struct{ need, off, size int64 }
	var placed []int
	var cs []conflict
	var cands []int64
	for _, u := range units {
		cs, cands = cs[:0], append(cands[:0], 0)
		for _, m := range u.members {
			rm := reqs[m]
			if rm.Size == 0 {
				continue
			}
			for _, q := range placed {
				rq := reqs[q]
				if rq.Size == 0 || rq.End < rm.Start || rm.End < rq.Start {
					continue
				}
				c := conflict{Align(rm.Size), p.Offsets[q], Align(rq.Size)}
				cs = append(cs, c)
				cands = append(cands, c.off+c.size)
			}
		}
		slices.Sort(cands)
		cands = slices.Compact(cands)
		bestOff, bestSlack := int64(-1), int64(-1)
		for _, o := range cands {
			ok, slack := true, int64(-1)
			for _, c := range cs {
				if o+c.need <= c.off {
					if s := c.off - o - c.need; slack < 0 || s < slack {
						slack = s
					}
				} else if c.off+c.size > o {
					ok = false
					break
				}
			}
			if !ok {
				continue
			}
			if !bestFit {
				bestOff = o
				break
			}
			// slack < 0: nothing above (the end); any gap that fits wins
			// over the end, the tightest gap first.
			if bestOff < 0 || slack >= 0 && (bestSlack < 0 || slack < bestSlack) {
				bestOff, bestSlack = o, slack
			}
		}
		for _, m := range u.members {
			p.Offsets[m] = bestOff
			p.Total = max(p.Total, bestOff+Align(reqs[m].Size))
		}
		placed = append(placed, u.members...)
	}
	return p
}
