package staticruntime

import (
	"fmt"

	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/memplan"
)

// runPlanner is a runtime's memory planner: it records the size each
// managed tensor reached, and at the start of the run after a change it
// plans a slab with the module's Planner and points every managed tensor
// at its window. Kernels then resize into that memory without allocating.
// A tensor that outgrows its window gets its own buffer for the rest of
// that run, and the slab is re-planned before the next one.
type runPlanner struct {
	m        *StaticModule
	sizes    []int64           // the largest size seen per managed tensor
	storages []*ivalue.Storage // each managed tensor's window, once planned
	slab     []byte
	plan     memplan.Plan
	dirty    bool
	replans  int
	// allocs is ivalue.StorageAllocs at the start of the run.
	allocs uint64
}

func (p *runPlanner) init(m *StaticModule) {
	p.m = m
	p.sizes = make([]int64, len(m.managed))
	p.storages = make([]*ivalue.Storage, len(m.managed))
}

func (p *runPlanner) reset() {
	clear(p.sizes)
	clear(p.storages)
	p.slab = nil
	p.dirty = false
}

func (p *runPlanner) allocate(r *StaticRuntime) {
	p.allocs = ivalue.StorageAllocs()
	if !p.dirty {
		return
	}
	p.dirty = false
	reqs := p.requests()
	p.plan = p.m.planner.Plan(reqs)
	p.slab = ivalue.AlignedBytes(int(p.plan.Total))
	p.replans++
	for i, mi := range p.m.managed {
		t := r.values[mi.slot].Tensor()
		if t == nil || p.sizes[i] == 0 {
			p.storages[i] = nil
			continue
		}
		off := p.plan.Offsets[i]
		s := &ivalue.Storage{Data: p.slab[off : off+p.sizes[i] : off+p.sizes[i]]}
		p.storages[i] = s
		t.SetStorage(s, 0)
	}
}

func (p *runPlanner) requests() []memplan.Request {
	reqs := make([]memplan.Request, len(p.m.managed))
	for i, mi := range p.m.managed {
		reqs[i] = memplan.Request{Size: p.sizes[i], Start: mi.start, End: mi.end}
	}
	return reqs
}

// deallocate runs after a successful run: it notes tensors that grew or
// appeared (a branch taken for the first time), so the next run re-plans.
func (p *runPlanner) deallocate(r *StaticRuntime) error {
	// No storage made anywhere during the run: every managed tensor is
	// still in its window (the steady state).
	if p.replans > 0 && ivalue.StorageAllocs() == p.allocs && !r.m.opts.CheckPlan {
		return nil
	}
	for i, mi := range p.m.managed {
		t := r.values[mi.slot].Tensor()
		if t == nil || t.Storage() == p.storages[i] {
			continue // in its window (Resize replaces a storage it outgrows)
		}
		if nb := int64(t.Nbytes()); nb > p.sizes[i] {
			p.sizes[i] = nb
			p.dirty = true
		} else if t.Storage() != p.storages[i] && nb > 0 {
			p.dirty = true // a tensor object the plan has not seen yet
		}
	}
	if r.m.opts.CheckPlan && !p.dirty {
		if err := memplan.Check(p.requests(), p.plan); err != nil {
			return fmt.Errorf("staticruntime: memory plan: %w", err)
		}
		for i, mi := range p.m.managed {
			t := r.values[mi.slot].Tensor()
			if t != nil && t.Nbytes() > 0 && t.Storage() != p.storages[i] {
				return fmt.Errorf("staticruntime: memory plan: managed tensor in slot %d is not in its planned window", mi.slot)
			}
		}
	}
	return nil
}

// MemoryStats describe the memory plan of a runtime after its runs.
type MemoryStats struct {
	Planner        string
	ManagedTensors int   // tensors the planner places
	ManagedBytes   int64 // slab size
	LowerBound     int64 // largest total of managed tensors alive at one node
	TensorBytes    int64 // sum of the managed tensors' sizes
	Replans        int   // times the slab was (re)planned
}

// MemoryStats reports the current plan.
func (r *StaticRuntime) MemoryStats() MemoryStats {
	p := &r.planner
	st := MemoryStats{Planner: r.m.planner.Name(), ManagedTensors: len(r.m.managed), ManagedBytes: p.plan.Total, Replans: p.replans}
	reqs := p.requests()
	st.LowerBound = memplan.LowerBound(reqs)
	for _, q := range reqs {
		st.TensorBytes += memplan.Align(q.Size)
	}
	return st
}
