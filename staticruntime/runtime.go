package staticruntime

import (
	"cmp"
	"context"
	"fmt"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/gosr/gosr/fork"
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops"
	"github.com/gosr/gosr/ops/gemm"
)

// StaticRuntime runs a StaticModule. It owns the values array that all
// its BlockRunners and ProcessedNodes share. Use it from one goroutine at
// a time: a run entered while another is in flight on the same runtime
// returns ErrConcurrentUse and leaves the other alone.
type StaticRuntime struct {
	// state holds the running and closed bits (lifetime.go): what makes a
	// second goroutine's run an error instead of a wrong result.
	state   atomic.Uint32
	m       *StaticModule
	values  []ivalue.IValue
	top     *BlockRunner
	outputs []ivalue.IValue
	planner runPlanner
	// cats is the state of the module's concatenations whose parts are
	// written in place (catparts.go).
	cats []catState
	// linkHooks are the checks of the overwrite links (setHooks).
	linkHooks []linkHook
	// broken is set when a run failed part-way; the next run resets
	// every slot so no half-written state survives.
	broken bool
	// recyclers of the Fresh nodes, reset at the start of every run.
	recyclers []*ops.Recycler
	// pool is the Pool that made the runtime (nil outside pools); lent
	// is true while the pool has lent it out.
	pool *Pool
	lent atomic.Bool

	// The current run: its context (done is ctx.Done(), nil when it
	// cannot end), where its forks go, and whether it is itself a forked
	// task (whose waits may run queued tasks, see fork.Future.Reset).
	ctx      context.Context
	done     <-chan struct{}
	launcher fork.Launcher
	inTask   bool
	// checked sends the current run's blocks through runChecked: it can
	// be cancelled, runs on a device or is timed.
	checked bool
	// prof, while BenchmarkIndividualOps times runs, collects the
	// planner's time (the nodes' go to their BlockRunners' prof).
	prof *runProfile
	// scratch is the kernels' per-runtime memory (gemm packing buffers)
	// and the intra-op team, if any (lifetime.go: newTeam).
	scratch *gemm.Scratch
	// sites are the runtime's prim::fork nodes.
	sites []*forkSite
	// A placed module's inputs on the device and outputs on the host,
	// reused across runs (see Options.Device).
	devIn   []*ivalue.Tensor
	hostOut []*ivalue.Tensor
	// RunAsync's reused future and arguments.
	async         *fork.Future
	asyncArgs     []ivalue.IValue
	asyncLauncher fork.Launcher
}

// BlockRunner runs the nodes of one block (the graph's top block or a
// sub-block of prim::If / prim::Loop) against the shared values array.
type BlockRunner struct {
	rt    *StaticRuntime
	info  *blockInfo
	nodes []ops.ProcessedNode
	// check, in the CheckPlan debug mode, verifies the memory plan after
	// the node of a step.
	check func(step int) error
	// pre (top block only, nil if none) holds, per node, what the runtime
	// does before the node runs, or nil: check an overwrite link (the
	// node writes a managed tensor over its input), place the parts of a
	// concatenation in its output, or check them before the cat.
	pre []func(p *ops.ProcessedNode)
	// prof, while BenchmarkIndividualOps times runs, receives the time
	// and count of every node's executions.
	prof *blockProfile
	// at is the node running, -1 when the block is not running: where a
	// kernel's panic struck (see runTop).
	at int
	// cal is the top block's calibration of its nodes' splits while it
	// lasts; then, with aloneOn, alone[i] says node i runs without the
	// intra-op team (see [Split per node]).
	cal     *splitCal
	alone   []bool
	aloneOn bool
	// chosen is the whole-run candidate the calibration kept (an index
	// of splitCal.cands).
	chosen int
}

// Inputs implements ops.BlockRunner: the slots of the block parameters.
func (b *BlockRunner) Inputs() []int32 { return b.info.inputs }

// Outputs implements ops.BlockRunner: the slots of the returned values.
func (b *BlockRunner) Outputs() []int32 { return b.info.outputs }

// Run implements ops.BlockRunner: every run of a block, and
// BenchmarkIndividualOps's, goes through it to runNodes (each node's
// pre hook, then its kernel), runChecked or the split calibration.
func (b *BlockRunner) Run() error {
	if b.check != nil || b.rt.checked {
		return b.runChecked()
	}
	if b.cal != nil {
		return b.runCalibrating()
	}
	var alone []bool
	if b.aloneOn {
		alone = b.alone
	}
	return b.runNodes(alone)
}

// runNodes runs the block's nodes in order, node i alone when alone[i]
// (alone nil: each split as the kernels' thresholds allow).
func (b *BlockRunner) runNodes(alone []bool) error {
	nodes, pre := b.nodes, b.pre
	for i := range nodes {
		b.at = i
		if pre != nil && pre[i] != nil {
			pre[i](&nodes[i])
		}
		if alone != nil {
			b.rt.scratch.SetAlone(alone[i])
		}
		if err := nodes[i].Kernel(&nodes[i]); err != nil {
			return b.fail(i, err)
		}
	}
	if alone != nil {
		b.rt.scratch.SetAlone(false)
	}
	b.at = -1
	return nil
}

// runChecked is Run with the context checked before every node (a run
// that can be cancelled), each node timed (BenchmarkIndividualOps) and
// the memory plan checked after it (the CheckPlan debug mode, top block
// only).
func (b *BlockRunner) runChecked() error {
	nodes, pre, prof := b.nodes, b.pre, b.prof
	done := b.rt.done
	for i := range nodes {
		b.at = i
		if done != nil {
			select {
			case <-done:
				return b.fail(i, fmt.Errorf("run stopped before this node: %w", b.rt.ctx.Err()))
			default:
			}
		}
		if pre != nil && pre[i] != nil {
			pre[i](&nodes[i])
		}
		if b.aloneOn {
			b.rt.scratch.SetAlone(b.alone[i])
		}
		var err error
		if prof != nil {
			t := time.Now()
			err = nodes[i].Kernel(&nodes[i])
			prof.time[i] += time.Since(t)
			prof.runs[i]++
			if err == nil {
				prof.flops[i] += ops.FLOPs(&nodes[i])
			}
		} else {
			err = nodes[i].Kernel(&nodes[i])
		}
		if err != nil {
			return b.fail(i, err)
		}
		if b.check != nil {
			if err := b.check(b.info.nodes[i].step); err != nil {
				return b.fail(i, err)
			}
		}
	}
	b.at = -1
	return nil
}

// fail ends a run of the block at node i with err.
func (b *BlockRunner) fail(i int, err error) error {
	b.at = -1
	return b.nodeError(i, err)
}

// runTop runs the top block with the safety net for kernels, which
// return errors: one that panics anyway (a bug) fails the run with an
// internal error naming the innermost node running. The net is here
// alone, not in every block, as a deferred recover per loop iteration
// would slow loops; the blocks' at fields say where the panic struck.
func (b *BlockRunner) runTop() (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = b.panicError(p)
		}
		// A run that ended at a node left alone leaves the team free
		// for what follows.
		b.rt.scratch.SetAlone(false)
	}()
	return b.Run()
}

// panicError is the error of a kernel's panic p under the running node
// of b. A panic carrying an error (ivalue.DeviceAccessError: a Go
// kernel read a tensor on a device) stays reachable through errors.As.
func (b *BlockRunner) panicError(p any) error {
	e, ok := p.(error)
	if !ok {
		e = fmt.Errorf("%v", p)
	}
	if f, ok := p.(interface{ Addr() uintptr }); ok {
		e = fmt.Errorf("%w (memory fault at %#x: a weight's file changed or was truncated while mapped?)", e, f.Addr())
	}
	e = fmt.Errorf("internal error: %w\n%s", e, debug.Stack())
	if b.at < 0 {
		return fmt.Errorf("staticruntime: %w", e)
	}
	// Blocks left by an error or at their end have at -1: the path of
	// blocks still at a node leads from the top to the panic.
	for {
		i := b.at
		b.at = -1
		var inner *BlockRunner
		for _, sb := range b.nodes[i].Blocks {
			if sb := sb.(*BlockRunner); sb.at >= 0 {
				inner = sb
			}
		}
		if inner == nil {
			return b.nodeError(i, e)
		}
		b = inner
	}
}

// NodeError is the error of a kernel, with the node it ran.
type NodeError struct {
	Node string // the node as printed, with its source position
	Op   string
	Err  error
}

func (e *NodeError) Error() string { return e.Node + ": " + e.Err.Error() }
func (e *NodeError) Unwrap() error { return e.Err }

func (b *BlockRunner) nodeError(i int, err error) error {
	if _, ok := err.(*NodeError); ok {
		return err // from a sub-block: already names the innermost node
	}
	n := b.nodes[i].Node
	return &NodeError{Node: describe(n), Op: n.Kind, Err: err}
}

// NewRuntime makes a runtime for m. Runtimes are independent; make one
// per goroutine. A runtime of a closed module returns ErrClosed from
// every run.
func (m *StaticModule) NewRuntime() *StaticRuntime {
	r := &StaticRuntime{m: m}
	if !m.life.register(r) {
		r.scratch = &gemm.Scratch{}
		return m.closedRuntime(r)
	}
	r.scratch = gemm.NewScratch(newTeam(r, m.opts.IntraOpThreads))
	defer r.leave() // register left it running, against a Close meanwhile
	r.values = make([]ivalue.IValue, m.numValues)
	// A copy that fails (on a device) leaves the runtime broken: its
	// first run tries again and returns the error.
	r.broken = r.resetValues() != nil
	r.top = r.newBlockRunner(m.top, nil)
	r.outputs = make([]ivalue.IValue, len(m.outputs))
	if !m.device.IsHost() {
		r.devIn = make([]*ivalue.Tensor, len(m.inputs))
		r.hostOut = make([]*ivalue.Tensor, len(m.outputs))
	}
	r.planner.init(m)
	r.setHooks()
	if n := m.opts.IntraOpCalibrationRuns; r.scratch.Team() != nil && n >= 0 {
		if n == 0 {
			n = splitCalibrationRuns
		}
		r.top.startSplitCal(n)
	}
	if m.opts.CheckPlan {
		r.top.check = func(step int) error { return r.planner.checkStep(r, step) }
	}
	return r
}

// setHooks prepares what the top runner does before some nodes (see
// BlockRunner.pre): the overwrite links' checks and the concatenations'
// parts (catparts.go). refreshHooks installs them.
func (r *StaticRuntime) setHooks() {
	m := r.m
	// Steps count the top block's nodes as the graph has them; the
	// runner's list may leave some out (constants). The runner's indices
	// by step, found once: a scan of the list per link cost links × nodes.
	var byStep map[int][]int
	for i, mi := range m.managed {
		if !mi.overwrites.OK {
			continue
		}
		if byStep == nil {
			byStep = map[int][]int{}
			for k, ni := range m.top.nodes {
				byStep[ni.step] = append(byStep[ni.step], k)
			}
		}
		for _, k := range byStep[mi.node] {
			r.linkHooks = append(r.linkHooks, linkHook{node: k, tensor: i,
				f: func(p *ops.ProcessedNode) { r.planner.inter.checkOverwrite(r, i, p) }})
		}
	}
	r.cats = make([]catState, len(m.cats))
	r.refreshHooks()
}

// linkHook is the check of one overwrite link, before its node.
type linkHook struct {
	node, tensor int
	f            func(p *ops.ProcessedNode)
}

// refreshHooks fills the top runner's pre for the current plan: the
// links it honours (and, before the first plan, every link not yet ruled
// out, to rule out the rest), and every concatenation's hooks. A link
// the plan does not honour costs nothing on the steady path. It runs
// when a plan is made (which allocates anyway), not on steady runs.
func (r *StaticRuntime) refreshHooks() {
	g := &r.planner.inter
	clear(r.top.pre)
	any := false
	add := func(k int, f func(p *ops.ProcessedNode)) {
		if r.top.pre == nil {
			r.top.pre = make([]func(p *ops.ProcessedNode), len(r.top.nodes))
		}
		any = true
		if h := r.top.pre[k]; h != nil {
			r.top.pre[k] = func(p *ops.ProcessedNode) { h(p); f(p) }
		} else {
			r.top.pre[k] = f
		}
	}
	for _, h := range r.linkHooks {
		if g.linked[h.tensor] || g.replans == 0 && !g.unlinked[h.tensor] {
			add(h.node, h.f)
		}
	}
	for k, cg := range r.m.cats {
		add(cg.first, func(*ops.ProcessedNode) { r.catArm(k) })
		add(cg.cat, func(*ops.ProcessedNode) { r.catCheck(k) })
	}
	if !any {
		r.top.pre = nil
	}
}

// detachOutputs gives the caller the outputs of the last run for good:
// every node whose output object, list or memory the outputs hold gets a
// new object to write next time, so nothing the caller holds is written
// again.
func (r *StaticRuntime) detachOutputs() {
	held := heldSet{tensors: map[*ivalue.Tensor]bool{}, storages: map[*ivalue.Storage]bool{},
		lists: map[*ivalue.List]bool{}, dicts: map[*ivalue.Dict]bool{}}
	for _, o := range r.outputs {
		held.add(o)
	}
	var walk func(b *BlockRunner)
	walk = func(b *BlockRunner) {
		for i := range b.nodes {
			p := &b.nodes[i]
			for k, s := range p.Out {
				v := p.Values[s]
				ownHeld := p.Own != nil && p.Own[k] != nil && held.tensor(p.Own[k])
				if ownHeld {
					p.Own[k] = &ivalue.Tensor{}
				}
				if p.Spares != nil && p.Spares[k] != nil && held.tensor(p.Spares[k]) {
					p.Spares[k] = nil
				}
				switch {
				case ownHeld:
					p.Values[s] = ivalue.FromTensor(p.Own[k])
				case v.Tensor() != nil && held.tensor(v.Tensor()), v.List() != nil && held.lists[v.List()],
					v.Dict() != nil && held.dicts[v.Dict()]:
					p.Values[s] = ivalue.None()
				}
			}
			for _, sb := range p.Blocks {
				walk(sb.(*BlockRunner))
			}
		}
	}
	walk(r.top)
	for _, rc := range r.recyclers {
		rc.Forget()
	}
	clear(r.outputs)
	// An output may be a forked subgraph's result (through aten::wait),
	// written by the task's runtime: detach those too.
	for _, s := range r.sites {
		for _, t := range s.tasks {
			if t.rt != nil {
				t.rt.detachOutputs()
			}
		}
	}
}

// heldSet is what a caller holds: tensors, their memory and containers.
type heldSet struct {
	tensors  map[*ivalue.Tensor]bool
	storages map[*ivalue.Storage]bool
	lists    map[*ivalue.List]bool
	dicts    map[*ivalue.Dict]bool
}

func (h heldSet) add(v ivalue.IValue) {
	if t := v.Tensor(); t != nil {
		h.tensors[t] = true
		if s := t.Storage(); s != nil {
			h.storages[s] = true
		}
	}
	if l := v.List(); l != nil && !h.lists[l] {
		h.lists[l] = true
		for _, it := range l.Items {
			h.add(it)
		}
	}
	if d := v.Dict(); d != nil && !h.dicts[d] {
		h.dicts[d] = true
		for _, it := range d.Values {
			h.add(it)
		}
	}
}

func (h heldSet) tensor(t *ivalue.Tensor) bool {
	return h.tensors[t] || t.Storage() != nil && h.storages[t.Storage()]
}

// slotName names the value in a slot, for errors.
func (m *StaticModule) slotName(slot int32) string {
	for _, ni := range m.nodes {
		for i, s := range ni.out {
			if s == slot {
				return ni.node.Outputs[i].String()
			}
		}
	}
	return fmt.Sprintf("slot %d", slot)
}

// Clone returns a new runtime of the same module.
func (r *StaticRuntime) Clone() *StaticRuntime { return r.m.NewRuntime() }

// context is the current run's context (Background between runs).
func (r *StaticRuntime) context() context.Context {
	if r.ctx == nil {
		return context.Background()
	}
	return r.ctx
}

// Module returns the runtime's module.
func (r *StaticRuntime) Module() *StaticModule { return r.m }

// resetValues puts the module's constants in the values array and
// clears the rest. Its error is a failed copy on a device.
func (r *StaticRuntime) resetValues() error {
	clear(r.values)
	for _, c := range r.m.consts {
		r.values[c.slot] = c.v
	}
	// A constant that may reach an output gets a copy per runtime.
	for _, c := range r.m.consts {
		if c.perRuntime {
			v, err := c.v.CloneErr()
			if err != nil {
				return fmt.Errorf("staticruntime: copying constant %s: %w", r.m.slotName(c.slot), err)
			}
			r.values[c.slot] = v
		}
	}
	return nil
}

func (r *StaticRuntime) newBlockRunner(bi *blockInfo, guard []int32) *BlockRunner {
	b := &BlockRunner{rt: r, info: bi, nodes: make([]ops.ProcessedNode, len(bi.nodes)), at: -1}
	for i, ni := range bi.nodes {
		p := &b.nodes[i]
		*p = ops.ProcessedNode{
			Node: ni.node, Kind: ni.kind, Kernel: ni.kernel,
			Values: r.values, In: ni.in, Out: ni.out, Fresh: ni.fresh, Guard: guard,
			Scratch: r.scratch,
		}
		if ni.inLoop {
			p.Spares = make([]*ivalue.Tensor, len(ni.out))
		}
		if ni.sub != nil {
			s := &forkSite{r: r, sub: ni.sub, desc: describe(ni.node)}
			r.sites = append(r.sites, s)
			p.State = s
		}
		if r.m.opts.Python != nil && ops.IsPythonCall(ni.node) {
			c, err := r.m.opts.Python.NewPythonCaller(ni.node, r.context)
			if err != nil {
				p.State = ops.PythonCallerError{Err: err}
			} else {
				p.State = c
			}
		}
		if ni.fresh && ni.kind != ops.Fallback {
			p.Recycle = ops.NewRecycler(len(ni.out))
			r.recyclers = append(r.recyclers, p.Recycle)
		}
		for _, sb := range ni.blocks {
			g := guard
			if ni.node.Kind == graph.KindLoop {
				g = append(append([]int32(nil), guard...), sb.inputs...)
			}
			p.Blocks = append(p.Blocks, r.newBlockRunner(sb, g))
		}
	}
	return b
}

// Run runs the graph on positional arguments and returns the graph's
// outputs. The returned slice and the tensors in it belong to the runtime
// and are overwritten by the next Run: Clone what you keep. Inputs are
// read, never written; they must stay unchanged during the run.
func (r *StaticRuntime) Run(args ...ivalue.IValue) ([]ivalue.IValue, error) {
	return r.runWith(nil, nil, false, args, nil)
}

// RunKw runs with positional args followed by keyword args, named as the
// graph's inputs (x for a value printed %x.1).
func (r *StaticRuntime) RunKw(args []ivalue.IValue, kwargs map[string]ivalue.IValue) ([]ivalue.IValue, error) {
	return r.runWith(nil, nil, false, args, kwargs)
}

// runWith runs under ctx (nil: a run that cannot be cancelled) with forks
// on launcher (nil: the module's inter-op pool); inTask marks a forked
// subgraph's run. It is the door of every run: a runtime already running
// (another goroutine's run) or closed is refused there.
func (r *StaticRuntime) runWith(ctx context.Context, launcher fork.Launcher, inTask bool, args []ivalue.IValue, kwargs map[string]ivalue.IValue) ([]ivalue.IValue, error) {
	if err := r.enter(); err != nil {
		return nil, err
	}
	defer r.leave()
	return r.runEntered(ctx, launcher, inTask, args, kwargs)
}

// [Faults in mapped weights]: weights view the archive's file through
// mmap, so a file truncated or rewritten in place under a loaded model
// (a redeploy that overwrites model.pt) makes reading them fault, and a
// fault kills the process. Go's documented answer for memory-mapped
// files is debug.SetPanicOnFault: set for the run's goroutine, the fault
// becomes a panic that runTop's recover turns into an error naming the
// node, and the runtime is marked broken. Closing the model while
// modules use it cannot cause this (they hold the mapping, see
// StaticModule.Close); only a change to the file itself can.

// runEntered is runWith for a caller that has entered r.
func (r *StaticRuntime) runEntered(ctx context.Context, launcher fork.Launcher, inTask bool, args []ivalue.IValue, kwargs map[string]ivalue.IValue) (outs []ivalue.IValue, err error) {
	if ctx == nil {
		ctx = context.Background()
	} else if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("staticruntime: run not started: %w", err)
	}
	if launcher == nil {
		launcher = r.m.launcher
	}
	r.ctx, r.done, r.launcher, r.inTask = ctx, ctx.Done(), launcher, inTask
	r.checked = r.done != nil || !r.m.device.IsHost() || r.prof != nil
	// See [Faults in mapped weights].
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			r.broken = true
			outs, err = nil, fmt.Errorf("staticruntime: internal error during run: %v\n%s", p, debug.Stack())
		}
		if r.sites != nil {
			r.drainForks()
		}
		r.ctx, r.done, r.launcher, r.checked = nil, nil, nil, false
	}()
	return r.run(args, kwargs)
}

func (r *StaticRuntime) run(args []ivalue.IValue, kwargs map[string]ivalue.IValue) (outs []ivalue.IValue, err error) {
	if r.broken {
		if err := r.resetValues(); err != nil {
			return nil, err
		}
		r.planner.reset()
		r.broken = false
	}
	if err := r.setInputs(args, kwargs); err != nil {
		return nil, err
	}
	for _, rc := range r.recyclers {
		rc.Reset()
	}
	t := r.prof.start()
	if err := r.planner.allocate(r); err != nil {
		r.broken = true
		return nil, err
	}
	r.prof.stop(t)
	if err := r.top.runTop(); err != nil {
		r.broken = true
		return nil, err
	}
	for i, s := range r.m.outputs {
		r.outputs[i] = r.values[s]
	}
	t = r.prof.start()
	if err := r.planner.deallocate(r); err != nil {
		return nil, err
	}
	r.prof.stop(t)
	if r.devIn != nil && !r.inTask {
		if err := r.copyOut(); err != nil {
			r.broken = true
			return nil, err
		}
	}
	return r.outputs, nil
}

// copyIn puts input i of a placed module on its device: a host tensor is
// copied into the runtime's tensor for that input (resized, so a steady
// run allocates nothing); tensors in lists and tuples too (in new lists).
func (r *StaticRuntime) copyIn(i int, v ivalue.IValue) (ivalue.IValue, error) {
	d := r.m.device
	if t := v.Tensor(); t != nil {
		if t.Device() == d {
			return v, nil
		}
		dt := r.devIn[i]
		if dt == nil {
			dt = &ivalue.Tensor{}
			dt.SetDevice(d)
			r.devIn[i] = dt
		}
		if err := dt.ResizeErr(t.DType(), t.Sizes()); err != nil {
			return v, err
		}
		if err := ivalue.CopyTo(dt, t); err != nil {
			return v, err
		}
		return ivalue.FromTensor(dt), nil
	}
	return toDevice(v, d)
}

// copyOut copies a placed module's tensor outputs to the host.
func (r *StaticRuntime) copyOut() error {
	for i, o := range r.outputs {
		t := o.Tensor()
		if t == nil {
			if o.List() != nil {
				v, err := toDevice(o, ivalue.Device{})
				if err != nil {
					return fmt.Errorf("staticruntime: copying output %d to the host: %w", i, err)
				}
				r.outputs[i] = v
			}
			continue
		}
		if t.Device().IsHost() {
			continue
		}
		h := r.hostOut[i]
		if h == nil {
			h = &ivalue.Tensor{}
			r.hostOut[i] = h
		}
		if err := h.ResizeErr(t.DType(), t.Sizes()); err != nil {
			return err
		}
		if err := ivalue.CopyTo(h, t); err != nil {
			return fmt.Errorf("staticruntime: copying output %d to the host: %w", i, err)
		}
		r.outputs[i] = ivalue.FromTensor(h)
	}
	return nil
}

func (r *StaticRuntime) setInputs(args []ivalue.IValue, kwargs map[string]ivalue.IValue) error {
	m := r.m
	if len(args)+len(kwargs) != len(m.inputs) && !m.defaultsCover(args, kwargs) || len(args) > len(m.inputs) {
		return fmt.Errorf("staticruntime: expected %d inputs %v, got %d positional and %d keyword", len(m.inputs), m.argNames, len(args), len(kwargs))
	}
	for i, s := range m.inputs {
		var v ivalue.IValue
		if i < len(args) {
			v = args[i]
		} else {
			kv, ok := kwargs[m.argNames[i]]
			if !ok && i < len(m.defaults) && m.defaults[i] != nil {
				kv, ok = *m.defaults[i], true
			}
			if !ok {
				return fmt.Errorf("staticruntime: missing input %q (argument %d)", m.argNames[i], i)
			}
			v = kv
		}
		if err := checkInput(m.argNames[i], i, m.inputTys[i], v); err != nil {
			return err
		}
		if r.devIn != nil && !r.inTask {
			dv, err := r.copyIn(i, v)
			if err != nil {
				return fmt.Errorf("staticruntime: input %q to %s: %w", m.argNames[i], m.device, err)
			}
			v = dv
		} else if r.ownsPart(v) {
			// An output of a previous run (or a part of one) fed back: the
			// run would rewrite it while reading it, so read a copy.
			c, err := v.CloneErr()
			if err != nil {
				return fmt.Errorf("staticruntime: copying input %q: %w", m.argNames[i], err)
			}
			v = c
		}
		r.values[s] = v
	}
	return nil
}

// ownsPart reports whether v is, or contains, a tensor or container this
// runtime wrote: part of its current outputs. Inputs that are not
// tensors or containers never are.
func (r *StaticRuntime) ownsPart(v ivalue.IValue) bool {
	if t := v.Tensor(); t != nil {
		for _, o := range r.outputs {
			if holdsTensor(o, t) {
				return true
			}
		}
		return false
	}
	if l := v.List(); l != nil {
		for _, o := range r.outputs {
			if holdsList(o, l) {
				return true
			}
		}
		for _, it := range l.Items {
			if r.ownsPart(it) {
				return true
			}
		}
	}
	if d := v.Dict(); d != nil {
		for _, it := range d.Values {
			if r.ownsPart(it) {
				return true
			}
		}
	}
	return false
}

// holdsList reports whether v is or contains (at any depth) the list l.
func holdsList(v ivalue.IValue, l *ivalue.List) bool {
	if vl := v.List(); vl != nil {
		if vl == l {
			return true
		}
		for _, it := range vl.Items {
			if holdsList(it, l) {
				return true
			}
		}
	}
	if d := v.Dict(); d != nil {
		for _, it := range d.Values {
			if holdsList(it, l) {
				return true
			}
		}
	}
	return false
}

// holdsTensor reports whether v is, views, or contains (at any depth) a
// tensor sharing t's memory.
func holdsTensor(v ivalue.IValue, t *ivalue.Tensor) bool {
	if ot := v.Tensor(); ot != nil {
		return ot == t || ot.SharesStorage(t)
	}
	if l := v.List(); l != nil {
		for _, it := range l.Items {
			if holdsTensor(it, t) {
				return true
			}
		}
	}
	if d := v.Dict(); d != nil {
		for _, it := range d.Values {
			if holdsTensor(it, t) {
				return true
			}
		}
	}
	return false
}

// checkInput validates an argument against the graph input's type,
// including dtype and sizes where the graph records them, and the
// elements of lists and tuples.
func checkInput(name string, i int, t *graph.Type, v ivalue.IValue) error {
	if got := mismatch(t, v); got != "" {
		return fmt.Errorf("staticruntime: input %d (%s): expected %s, got %s", i, name, t, got)
	}
	if err := ivalue.CheckHoldable(v.Tensor()); err != nil {
		return fmt.Errorf("staticruntime: input %d (%s) of sizes %v: %w", i, name, v.Tensor().Sizes(), err)
	}
	return nil
}

// mismatch describes what v is when it does not fit type t, or returns "".
func mismatch(t *graph.Type, v ivalue.IValue) string {
	kindIs := func(ks ...ivalue.Kind) string {
		for _, k := range ks {
			if v.Kind() == k {
				return ""
			}
		}
		return v.Kind().String()
	}
	switch t.Kind {
	case graph.TensorType:
		tv := v.Tensor()
		if tv == nil {
			return v.Kind().String()
		}
		if t.DType != ivalue.Undefined && tv.DType() != t.DType {
			return fmt.Sprintf("a %s tensor", tv.DType())
		}
		if t.Sizes != nil {
			ok := len(t.Sizes) == tv.Dim()
			for d := 0; ok && d < len(t.Sizes); d++ {
				ok = t.Sizes[d] < 0 || t.Sizes[d] == tv.Size(d)
			}
			if !ok {
				return fmt.Sprintf("a tensor of sizes %v", tv.Sizes())
			}
		}
	case graph.IntType:
		return kindIs(ivalue.KindInt)
	case graph.FloatType:
		return kindIs(ivalue.KindDouble, ivalue.KindInt)
	case graph.NumberType:
		return kindIs(ivalue.KindDouble, ivalue.KindInt, ivalue.KindBool)
	case graph.BoolType:
		return kindIs(ivalue.KindBool)
	case graph.StringType:
		return kindIs(ivalue.KindString)
	case graph.ListType:
		if got := kindIs(ivalue.KindList); got != "" || v.List() == nil {
			return cmp.Or(got, "a nil List")
		}
		for k, it := range v.List().Items {
			if got := mismatch(t.Elem(), it); got != "" {
				return fmt.Sprintf("a List holding %s at index %d", got, k)
			}
		}
	case graph.TupleType:
		if got := kindIs(ivalue.KindTuple); got != "" || v.List() == nil {
			return cmp.Or(got, "a nil Tuple")
		}
		items := v.List().Items
		if len(t.Elems) > 0 && len(items) != len(t.Elems) {
			return fmt.Sprintf("a Tuple of %d elements", len(items))
		}
		for k := range t.Elems {
			if got := mismatch(t.Elems[k], items[k]); got != "" {
				return fmt.Sprintf("a Tuple holding %s at index %d", got, k)
			}
		}
	case graph.OptionalType:
		if !v.IsNone() {
			return mismatch(t.Elem(), v)
		}
	case graph.DictType:
		return kindIs(ivalue.KindDict)
	}
	return ""
}

// RunTensors is Run for graphs whose inputs are all tensors.
func (r *StaticRuntime) RunTensors(ts ...*ivalue.Tensor) ([]ivalue.IValue, error) {
	if len(ts) > 16 {
		args := make([]ivalue.IValue, len(ts))
		for i, t := range ts {
			args[i] = ivalue.FromTensor(t)
		}
		return r.Run(args...)
	}
	var buf [16]ivalue.IValue
	for i, t := range ts {
		buf[i] = ivalue.FromTensor(t)
	}
	return r.Run(buf[:len(ts)]...)
}
