package staticruntime

import (
	"fmt"

	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/memplan"
	"github.com/gosr/gosr/ops"
)

// runPlanner is a runtime's memory planner. It keeps two regions: the
// slab of intermediate tensors, placed by the module's Planner, and, with
// ManageOutputTensors, the arena of output tensors.
//
// Each region records the largest size each of its tensors reached. At
// the start of the run after a change it plans anew and points every
// tensor at its window; kernels then resize into that memory without
// allocating. A tensor that outgrows its window takes its own buffer for
// the rest of that run (its window is then simply unused), and the region
// is re-planned before the next run: with storage groups this is PyTorch's
// "grow the group at the end of the run"; with greedy-by-size it is a new
// plan, which PyTorch's greedy planner never makes. Sizes only grow, so
// runs at the largest shape seen, or smaller, allocate nothing.
type runPlanner struct {
	inter, outs region
	// lent is set while the caller holds the outputs of the last run
	// (ManageOutputTensors, until ReleaseOutputs).
	lent bool
	// abandoned counts arenas left to callers who kept their outputs.
	abandoned int
	// allocs is ivalue.StorageAllocs at the start of the run.
	allocs uint64
}

// region is one planned block of memory and the tensors placed in it.
type region struct {
	infos    []managedInfo
	planner  memplan.Planner
	sizes    []int64           // the largest size seen per tensor
	storages []*ivalue.Storage // each tensor's window, once planned
	slab     *ivalue.Storage
	device   ivalue.Device
	plan     memplan.Plan
	reqs     []memplan.Request
	dirty    bool
	replans  int
	// linked marks, per tensor, an overwrite link the current plan honours
	// (the tensor begins where the input it is written over begins);
	// unlinked, a link dropped after a run whose inputs did not allow it.
	linked, unlinked []bool
	// memos remember, per linked tensor, the inputs last found safe.
	memos []linkMemo
}

// minLinkBytes is the smallest pair of tensors an overwrite link is
// offered to the planner for: a link saves at most the smaller of the
// two, and each one honoured costs a check before its node on every run
// (a few nanoseconds). 256 bytes keeps links off the scalar-sized
// tensors of control code and still lets a DLRM-style model's stack of
// 256-byte features write over its last feature (the model's peak).
const minLinkBytes = 256

// linkMemo is what a link's last successful check saw: the plan, the
// output tensor and the node's tensor inputs, each with its geometry
// generation (ivalue.Tensor.Gen). While none has moved, the verdict
// stands, and the check costs a few compares.
type linkMemo struct {
	replans int
	out     *ivalue.Tensor
	outGen  uint32
	ts      []*ivalue.Tensor
	gens    []uint32
}

func (m *linkMemo) holds(g *region, p *ops.ProcessedNode, b *ivalue.Tensor, mi *managedInfo) bool {
	if m.out == nil || m.replans != g.replans || m.out != b || m.outGen != b.Gen() {
		return false
	}
	for k, in := range mi.memo {
		t := p.Tensor(in)
		if t != m.ts[k] || t != nil && t.Gen() != m.gens[k] {
			return false
		}
	}
	return true
}

func (m *linkMemo) record(g *region, p *ops.ProcessedNode, b *ivalue.Tensor, mi *managedInfo) {
	m.replans, m.out, m.outGen = g.replans, b, b.Gen()
	for k, in := range mi.memo {
		t := p.Tensor(in)
		m.ts[k] = t
		if t != nil {
			m.gens[k] = t.Gen()
		}
	}
}

func (g *region) init(infos []managedInfo, pl memplan.Planner, d ivalue.Device) {
	g.infos, g.planner, g.device = infos, pl, d
	g.sizes = make([]int64, len(infos))
	g.storages = make([]*ivalue.Storage, len(infos))
	g.reqs = make([]memplan.Request, len(infos))
	g.linked = make([]bool, len(infos))
	g.unlinked = make([]bool, len(infos))
	g.memos = make([]linkMemo, len(infos))
	for i, mi := range infos {
		if mi.memoOK {
			g.memos[i].ts = make([]*ivalue.Tensor, len(mi.memo))
			g.memos[i].gens = make([]uint32, len(mi.memo))
		}
	}
}

func (g *region) reset() {
	clear(g.sizes)
	clear(g.storages)
	g.slab = nil
	g.plan = memplan.Plan{}
	g.dirty = false
	clear(g.linked)
}

func (p *runPlanner) init(m *StaticModule) {
	p.inter.init(m.managed, m.planner, m.device)
	// Outputs are all alive when the run returns: no placement can share
	// memory between them, so the arena lays them side by side.
	p.outs.init(m.managedOut, memplan.None{}, m.device)
}

func (p *runPlanner) reset() {
	p.inter.reset()
	p.outs.reset()
	p.lent = false
}

// allocate runs before the nodes.
func (p *runPlanner) allocate(r *StaticRuntime) error {
	p.allocs = ivalue.StorageAllocs()
	if p.lent {
		// The caller kept the last outputs: they are theirs now. The run
		// writes into new tensors and a new arena.
		r.detachOutputs()
		if len(p.outs.infos) > 0 {
			p.outs.slab = nil
			p.outs.dirty = true
		}
		p.abandoned++
	}
	p.lent = r.m.opts.ManageOutputTensors
	replans := p.inter.replans
	if err := p.inter.allocate(r); err != nil {
		return err
	}
	if p.inter.replans != replans && len(r.linkHooks) > 0 {
		r.refreshHooks() // the new plan's links
	}
	return p.outs.allocate(r)
}

func (g *region) allocate(r *StaticRuntime) error {
	if !g.dirty {
		return nil
	}
	plan := g.planner.Plan(g.requests())
	// On a device the slab comes from the backend's allocator.
	slab := &ivalue.Storage{Data: ivalue.AlignedBytes(int(plan.Total))}
	if !g.device.IsHost() {
		var err error
		if slab, err = ivalue.AllocStorage(g.device, int(plan.Total)); err != nil {
			return fmt.Errorf("staticruntime: memory plan: slab of %d bytes: %w", plan.Total, err)
		}
	}
	g.dirty = false
	g.plan, g.slab = plan, slab
	g.replans++
	for i, rq := range g.reqs {
		g.linked[i] = rq.Overwrites.OK && plan.Offsets[i] == plan.Offsets[rq.Overwrites.Index] && rq.Size > 0
	}
	for i, mi := range g.infos {
		t := r.values[mi.slot].Tensor()
		if t == nil || g.sizes[i] == 0 {
			g.storages[i] = nil
			continue
		}
		s := g.slab.Window(int(g.plan.Offsets[i]), int(g.sizes[i]))
		g.storages[i] = s
		t.SetStorage(s, 0)
	}
	return nil
}

func (g *region) requests() []memplan.Request {
	for i, mi := range g.infos {
		g.reqs[i] = memplan.Request{Size: g.sizes[i], Start: mi.start, End: mi.end}
		if ow := mi.overwrites; ow.OK && !g.unlinked[i] && min(g.sizes[i], g.sizes[ow.Index]) >= minLinkBytes {
			g.reqs[i].Overwrites = ow
		}
	}
	return g.reqs
}

// checkOverwrite runs before the top-level node that writes managed
// tensor i, which the plan may have put over the tensor it overwrites
// (an overwrite link). The kernel may write over its input only if that input begins
// where the plan put that tensor (its window, offset 0, contiguous: an
// op that passes another tensor through, or a view, leaves it elsewhere)
// and the op's check accepts this run's inputs (ops.OverwriteRule.Safe:
// shapes, dtypes). If not,
// the output takes memory of its own for this run, and the next plan
// keeps the two apart, so it costs one allocation, once.
func (g *region) checkOverwrite(r *StaticRuntime, i int, p *ops.ProcessedNode) {
	mi := &g.infos[i]
	if !g.linked[i] {
		// Before the first plan, drop the links this run's inputs already
		// rule out (a convolution no kernel can write over its input), so
		// that the first plan is the one that lasts.
		if g.replans == 0 && !g.unlinked[i] {
			a := p.Tensor(mi.input)
			if a == nil || a.Offset() != 0 || !a.IsContiguous() || mi.safe != nil && !mi.safe(p) {
				g.unlinked[i] = true
			}
		}
		return
	}
	j := mi.overwrites.Index
	b := r.values[mi.slot].Tensor()
	memo := &g.memos[i]
	if mi.memoOK && b != nil && memo.holds(g, p, b, mi) {
		return
	}
	a := p.Tensor(mi.input)
	if a != nil && b != nil && a.Storage() == g.storages[j] && a.Offset() == 0 && a.IsContiguous() &&
		b.Storage() == g.storages[i] && (mi.safe == nil || mi.safe(p)) {
		if mi.memoOK {
			memo.record(g, p, b, mi)
		}
		return
	}
	if b != nil && b.Storage() == g.storages[i] {
		b.SetStorage(nil, 0)
	}
	g.linked[i] = false
	g.unlinked[i] = true
	g.dirty = true
}

// deallocate runs after a successful run: it notes tensors that grew or
// appeared (a branch taken for the first time), so the next run re-plans.
func (p *runPlanner) deallocate(r *StaticRuntime) error {
	// No storage made anywhere during the run: every managed tensor is
	// still in its window (the steady state).
	if p.inter.replans > 0 && (p.outs.replans > 0 || len(p.outs.infos) == 0) &&
		ivalue.StorageAllocs() == p.allocs && !r.m.opts.CheckPlan {
		return nil
	}
	for _, g := range []*region{&p.inter, &p.outs} {
		if err := g.deallocate(r); err != nil {
			return err
		}
	}
	return nil
}

func (g *region) deallocate(r *StaticRuntime) error {
	for i, mi := range g.infos {
		t := r.values[mi.slot].Tensor()
		if t == nil || t.Storage() == g.storages[i] {
			continue // in its window (Resize replaces a storage it outgrows)
		}
		if nb := int64(t.Nbytes()); nb > g.sizes[i] {
			g.sizes[i] = nb
			g.dirty = true
		} else if nb > 0 {
			g.dirty = true // a tensor object the plan has not seen yet
		}
	}
	if r.m.opts.CheckPlan && !g.dirty {
		if err := memplan.Check(g.requests(), g.plan); err != nil {
			return fmt.Errorf("staticruntime: memory plan: %w", err)
		}
		for i, mi := range g.infos {
			t := r.values[mi.slot].Tensor()
			if t != nil && t.Nbytes() > 0 && t.Storage() != g.storages[i] {
				return fmt.Errorf("staticruntime: memory plan: managed tensor in slot %d is not in its planned window", mi.slot)
			}
		}
	}
	return nil
}

// checkStep verifies, after the top-level node of the given step ran,
// that no two managed tensors alive at that step share a byte of memory:
// the planner's invariant, checked on the tensors themselves rather than
// on the plan. It runs in the CheckPlan debug mode.
func (p *runPlanner) checkStep(r *StaticRuntime, step int) error {
	type span struct {
		lo, hi uintptr
		slot   int32
		g      *region
		i      int
	}
	var live []span
	for _, g := range []*region{&p.inter, &p.outs} {
		for i, mi := range g.infos {
			if mi.start > step || mi.end < step {
				continue
			}
			t := r.values[mi.slot].Tensor()
			if t == nil || t.Storage() == nil || t.Storage().Len() == 0 {
				continue
			}
			lo := uintptr(t.Storage().Ptr())
			live = append(live, span{lo, lo + uintptr(t.Storage().Len()), mi.slot, g, i})
		}
	}
	// An output written over its input (an honoured overwrite link)
	// begins where that input begins, at the step it is written.
	overwrites := func(a, b span) bool {
		return a.g == b.g && a.lo == b.lo &&
			(a.g.linked[b.i] && a.g.infos[b.i].overwrites.Index == a.i || a.g.linked[a.i] && a.g.infos[a.i].overwrites.Index == b.i)
	}
	for i, a := range live {
		for _, b := range live[i+1:] {
			if a.lo < b.hi && b.lo < a.hi && !overwrites(a, b) {
				return fmt.Errorf("staticruntime: memory plan: after step %d, live tensors %s and %s share memory",
					step, r.m.slotName(a.slot), r.m.slotName(b.slot))
			}
		}
	}
	return nil
}

// MemoryStats describe the memory plan of a runtime after its runs.
type MemoryStats struct {
	Planner string
	// Device is where the slab lives (Options.Device).
	Device         string
	ManagedTensors int   // intermediate tensors the planner places
	ManagedBytes   int64 // slab size
	LowerBound     int64 // largest total of managed tensors alive at one node
	TensorBytes    int64 // sum of the managed tensors' sizes (aligned)
	ReusedBytes    int64 // TensorBytes - ManagedBytes: what sharing saved
	// Overwrites counts the tensors the plan writes over the input they
	// overwrite (memplan.Request.Overwrites): a pooling over its
	// activation.
	Overwrites int
	Replans    int // times the slab was (re)planned
	// Groups are the storage groups (request indices) for planners that
	// group; Offsets the place of each managed tensor in the slab.
	Groups  [][]int
	Offsets []int64
	// Tensors describe each managed tensor: its lifetime and size.
	Tensors []memplan.Request
	// Output arena, with ManageOutputTensors.
	OutputTensors   int
	OutputBytes     int64
	OutputReplans   int
	AbandonedArenas int // runs that found the last outputs still held
	// UnmanagedBytes is the memory of intermediate tensors outside the
	// slab: results of nodes the planner may not place (native and
	// fallback ops, loop bodies, values escaping into containers), each
	// storage counted once; graph inputs, constants and outputs excluded.
	// ManagedBytes+UnmanagedBytes is the intermediate memory of a run.
	UnmanagedBytes int64
}

// MemoryStats reports the current plan.
func (r *StaticRuntime) MemoryStats() MemoryStats {
	p := &r.planner
	g := &p.inter
	reqs := append([]memplan.Request(nil), g.requests()...)
	st := MemoryStats{
		Planner: r.m.planner.Name(), Device: r.m.device.String(), ManagedTensors: len(g.infos), ManagedBytes: g.plan.Total,
		Replans: g.replans, Groups: g.plan.Groups, Offsets: append([]int64(nil), g.plan.Offsets...),
		Tensors:       reqs,
		OutputTensors: len(p.outs.infos), OutputBytes: p.outs.plan.Total,
		OutputReplans: p.outs.replans, AbandonedArenas: p.abandoned,
	}
	if len(g.infos) == 0 {
		st.Offsets = nil
	}
	for _, l := range g.linked {
		if l {
			st.Overwrites++
		}
	}
	st.LowerBound = memplan.LowerBound(reqs)
	st.TensorBytes = memplan.TensorBytes(reqs)
	st.ReusedBytes = st.TensorBytes - st.ManagedBytes
	st.UnmanagedBytes = r.unmanagedBytes()
	return st
}

// unmanagedBytes sums the storages of intermediate tensors the planner
// does not place (see MemoryStats.UnmanagedBytes).
func (r *StaticRuntime) unmanagedBytes() int64 {
	skip := map[*ivalue.Storage]bool{}
	for _, g := range []*region{&r.planner.inter, &r.planner.outs} {
		for _, s := range g.storages {
			skip[s] = true
		}
	}
	var exclude func(v ivalue.IValue)
	exclude = func(v ivalue.IValue) {
		if t := v.Tensor(); t != nil && t.Storage() != nil {
			skip[t.Storage()] = true
		}
		if l := v.List(); l != nil {
			for _, it := range l.Items {
				exclude(it)
			}
		}
	}
	for _, s := range r.m.inputs {
		exclude(r.values[s])
	}
	for _, c := range r.m.consts {
		exclude(r.values[c.slot])
	}
	for _, o := range r.outputs {
		exclude(o)
	}
	var n int64
	seen := map[*ivalue.Storage]bool{}
	for _, ni := range r.m.nodes {
		for _, s := range ni.out {
			t := r.values[s].Tensor()
			if t == nil || t.Storage() == nil || skip[t.Storage()] || seen[t.Storage()] || r.catWindow(t.Storage()) {
				continue
			}
			seen[t.Storage()] = true
			n += int64(t.Storage().Len())
		}
	}
	return n
}

// ReleaseOutputs tells the runtime the caller is done with the outputs of
// the last Run. It matters only with ManageOutputTensors, where outputs
// live in an arena of their own:
//
//   - outputs stay valid and unchanged until ReleaseOutputs, even across
//     later calls that do not touch this runtime;
//   - after ReleaseOutputs the next Run reuses their memory, so a steady
//     loop of Run, use, ReleaseOutputs allocates nothing; the released
//     tensors must not be used any more;
//   - a Run before ReleaseOutputs leaves the previous outputs to the
//     caller (valid for as long as the caller keeps them, then collected
//     by Go's GC) and takes new tensors and a new arena for its own: safe,
//     at the cost of allocating. MemoryStats.AbandonedArenas counts it.
//
// Without ManageOutputTensors it does nothing: outputs belong to the
// runtime and the next Run overwrites them.
func (r *StaticRuntime) ReleaseOutputs() {
	r.planner.lent = false
}
