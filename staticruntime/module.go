package staticruntime

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/gosr/gosr/fork"
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/graph/alias"
	"github.com/gosr/gosr/graph/passes"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/memplan"
	"github.com/gosr/gosr/ops"
)

// StaticModule is a graph prepared for running: passes applied, a kernel
// chosen for every node, a slot assigned to every value. It is read-only
// after NewStaticModule and shared by all its runtimes.
type StaticModule struct {
	graph     *graph.Graph
	opts      Options
	planner   memplan.Planner
	top       *blockInfo
	numValues int
	consts    []constSlot
	inputs    []int32 // slots of the graph inputs
	inputTys  []*graph.Type
	argNames  []string         // schema names of the inputs, for kwargs
	defaults  []*ivalue.IValue // the inputs' default values (graph.Graph.InputDefaults)
	outputs   []int32          // slots of the graph outputs
	nodes     []*nodeInfo
	managed   []managedInfo // intermediate tensors the planner places in the slab
	// cats are the concatenations whose parts are written in place, and
	// catPart their parts (see catparts.go).
	cats    []catGroup
	catPart map[*graph.Value]bool
	// managedOut are the graph outputs (and tensors that may alias them)
	// placed in the output arena, with ManageOutputTensors.
	managedOut []managedInfo
	steps      int // top-level node count (lifetime steps)
	// launcher is where forks go when a run names none: the shared
	// inter-op pool of Options.InterOpThreads workers (nil without forks).
	launcher fork.Launcher
	// forkResultsEscape: a forked task's result may reach this graph's
	// outputs, so the runtimes of its tasks stay with the forking runtime
	// until its next run instead of going back to the subgraph's pool.
	forkResultsEscape bool
	// taskRuntimes are the idle runtimes of this module when it is a
	// forked subgraph, shared by every runtime of the forking module.
	taskRuntimes runtimeStack
	// auto records BackendAuto's per-node choices.
	auto *ops.AutoTable
	// device holds the module's tensors (Options.Device).
	device ivalue.Device
	// life holds the graph's backing and the runtimes Close stops.
	life lifetime
}

// Device is where the module's tensors live (Options.Device).
func (m *StaticModule) Device() ivalue.Device { return m.device }

// AutoChoices reports, with ops.BackendAuto, which kernel each node with
// two implementations runs (empty until the first runs have measured).
func (m *StaticModule) AutoChoices() []ops.AutoChoice {
	var nodes []*graph.Node
	m.graph.Walk(func(n *graph.Node) { nodes = append(nodes, n) })
	out := m.auto.Choices(nodes)
	// A forked subgraph is a module of its own.
	for _, ni := range m.nodes {
		if ni.sub != nil {
			out = append(out, ni.sub.AutoChoices()...)
		}
	}
	return out
}

type constSlot struct {
	slot int32
	v    ivalue.IValue
	val  *graph.Value
	// perRuntime: the constant may reach a graph output (directly, through
	// prim::If, a view or a container), so each runtime gets its own copy
	// and a caller writing to an output cannot change the shared module.
	perRuntime bool
}

type blockInfo struct {
	block   *graph.Block
	inputs  []int32
	outputs []int32
	nodes   []*nodeInfo
}

type nodeInfo struct {
	node   *graph.Node
	kernel ops.Kernel
	kind   ops.Kind
	in     []int32
	out    []int32
	blocks []*blockInfo
	fresh  bool
	inLoop bool
	step   int // index of the top-level node this node runs under
	// sub is the forked subgraph of a prim::fork, prepared as its own
	// module with the same options.
	sub *StaticModule
}

// managedInfo is one tensor the memory planner may place: the slot an
// out-variant node writes, with its lifetime in top-level steps.
type managedInfo struct {
	slot       int32
	start, end int
	output     bool // a graph output (managed only with ManageOutputTensors)
	// overwrites, when OK, names (by its index among the same region's
	// infos) the tensor this one may be written over (a planned
	// overwrite); node is the top-level node that writes it, input the
	// index of the node's input that reads that tensor, and safe its
	// op's check (ops.OverwriteRule).
	overwrites memplan.Overwrite
	node       int
	input      int
	safe       func(p *ops.ProcessedNode) bool
	// memo lists the node's inputs a verdict of safe depends on (its
	// tensors); memoOK is false when another input may change between
	// runs (a scalar or list not constant), so nothing is remembered.
	memo   []int
	memoOK bool
}

// NewStaticModule runs gosr's passes on g (which it takes over: do not
// use g afterwards), selects a kernel for every node and lays out the
// values. opts nil means DefaultOptions. A node no kernel handles is an
// error naming the op and its signature. The module retains g.Backing
// (the archive its weights view) until Close; a backing already gone is
// an error.
func NewStaticModule(g *graph.Graph, opts *Options) (*StaticModule, error) {
	return NewStaticModuleContext(context.Background(), g, opts)
}

// NewStaticModuleContext is NewStaticModule, giving up with ctx's error
// (wrapped with the step it stopped in: errors.Is finds
// context.Canceled or context.DeadlineExceeded) when ctx is done before
// the module is ready. It looks at ctx between passes and every thousand
// nodes or so within them, so it returns soon after ctx is done even on
// a very large graph. After such an error g is partly transformed:
// discard it.
func NewStaticModuleContext(ctx context.Context, g *graph.Graph, opts *Options) (m *StaticModule, err error) {
	var hold backingHold // the memory the constants view (lifetime.go)
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, fmt.Errorf("staticruntime: preparing graph: internal error: %v", r)
		}
		hold.settle(m)
	}()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("staticruntime: preparing graph: %w", err)
	}
	if err := hold.retain(g); err != nil {
		return nil, fmt.Errorf("staticruntime: %w", err)
	}
	o := DefaultOptions()
	if opts != nil {
		o = *opts
	}
	if err := g.Verify(); err != nil {
		return nil, fmt.Errorf("staticruntime: invalid graph: %w", err)
	}
	dev, err := ivalue.ParseDevice(o.Device)
	if err != nil {
		return nil, fmt.Errorf("staticruntime: Options.Device: %w", err)
	}
	if !dev.IsHost() {
		db, ok := o.Backend.(DeviceBackend)
		if !ok || o.BackendMode == ops.BackendGo {
			return nil, fmt.Errorf("staticruntime: device %s needs the libtorch backend (Options.Backend, BackendMode other than go); gosr's Go kernels run on the CPU", dev)
		}
		if o.ManageOutputTensors {
			return nil, fmt.Errorf("staticruntime: device %s: ManageOutputTensors is for host modules (a placed module copies its outputs into host tensors it owns)", dev)
		}
		if err := db.PlaceDevice(dev); err != nil {
			return nil, fmt.Errorf("staticruntime: %w", err)
		}
	}
	if err := runPassesContext(ctx, g, o, dev); err != nil {
		return nil, err
	}
	m = &StaticModule{graph: g, opts: o, planner: o.Planner, device: dev}
	if m.planner == nil {
		m.planner = memplan.GreedyBySize{}
	}
	slots := map[*graph.Value]int32{}
	slotOf := func(v *graph.Value) int32 {
		if s, ok := slots[v]; ok {
			return s
		}
		s := int32(m.numValues)
		m.numValues++
		slots[v] = s
		return s
	}
	m.defaults = g.InputDefaults
	for _, v := range g.Inputs() {
		m.inputs = append(m.inputs, slotOf(v))
		m.inputTys = append(m.inputTys, v.Type)
		m.argNames = append(m.argNames, argName(v.DebugName()))
	}
	// %x.1 and %x.2 both read as x: such inputs keep their full names.
	seen := map[string]int{}
	for _, n := range m.argNames {
		seen[n]++
	}
	for i, n := range m.argNames {
		if seen[n] > 1 {
			m.argNames[i] = g.Inputs()[i].DebugName()
		}
	}
	sel := ops.Options{DisableOutVariants: !o.EnableOutVariant, Backend: o.Backend, BackendMode: o.BackendMode, Device: dev}
	if !dev.IsHost() {
		sel.HostTensors = map[*graph.Value]bool{}
	}
	if o.Backend != nil && o.BackendMode == ops.BackendAuto && dev.IsHost() {
		m.auto = &ops.AutoTable{}
		sel.AutoTable = m.auto
	}
	tick := 0
	var prepare func(b *graph.Block, inLoop bool, step int) (*blockInfo, error)
	prepare = func(b *graph.Block, inLoop bool, step int) (*blockInfo, error) {
		bi := &blockInfo{block: b}
		for _, v := range b.Inputs() {
			bi.inputs = append(bi.inputs, slotOf(v))
		}
		for _, n := range b.Nodes {
			if tick++; tick&1023 == 0 {
				if err := ctx.Err(); err != nil {
					return nil, fmt.Errorf("staticruntime: selecting kernels: %w", err)
				}
			}
			if b.Owner == nil {
				step = m.steps
				m.steps++
			}
			if n.Kind == graph.KindConstant {
				cv, _ := n.Attr("value")
				if n.Outputs[0].Type.Kind == graph.TensorType && (cv.Tensor() == nil || graph.IsUnboundTensor(cv.Tensor())) {
					return nil, fmt.Errorf("staticruntime: tensor constant %s has no tensor bound", n.Outputs[0])
				}
				m.consts = append(m.consts, constSlot{slot: slotOf(n.Outputs[0]), v: cv, val: n.Outputs[0]})
				continue
			}
			ni := &nodeInfo{node: n, inLoop: inLoop, step: step}
			for _, v := range n.Inputs {
				s, ok := slots[v]
				if !ok {
					return nil, fmt.Errorf("staticruntime: %s uses %s before it is defined", describe(n), v)
				}
				ni.in = append(ni.in, s)
			}
			for _, v := range n.Outputs {
				ni.out = append(ni.out, slotOf(v))
			}
			k, kind, err := ops.Select(n, sel)
			if err != nil {
				return nil, fmt.Errorf("staticruntime: %s: %w", describe(n), err)
			}
			ni.kernel, ni.kind = k, kind
			// A fallback's results may be anything, so it writes new
			// objects each run; a python_call's tensors are copies the
			// node makes itself (pyfallback), safe to reuse as an out
			// variant's.
			ni.fresh = kind == ops.Fallback && !ops.IsPythonCall(n)
			if n.Kind == graph.KindFork {
				sub, err := prepareFork(ctx, n, o)
				if err != nil {
					return nil, err
				}
				ni.sub = sub
				if m.launcher == nil {
					m.launcher = fork.Shared(o.InterOpThreads)
				}
			}
			for _, sb := range n.Blocks {
				sbi, err := prepare(sb, inLoop || n.Kind == graph.KindLoop, step)
				if err != nil {
					return nil, err
				}
				ni.blocks = append(ni.blocks, sbi)
			}
			bi.nodes = append(bi.nodes, ni)
			m.nodes = append(m.nodes, ni)
		}
		for _, v := range b.Outputs() {
			s, ok := slots[v]
			if !ok {
				return nil, fmt.Errorf("staticruntime: block returns %s, which is not defined", v)
			}
			bi.outputs = append(bi.outputs, s)
		}
		return bi, nil
	}
	top, err := prepare(g.Block, false, 0)
	if err != nil {
		return nil, err
	}
	m.top = top
	m.outputs = top.outputs
	if err := m.analyze(ctx); err != nil {
		return nil, err
	}
	if !dev.IsHost() {
		// The weights move to the device once, for every runtime.
		for i := range m.consts {
			v, err := toDevice(m.consts[i].v, dev)
			if err != nil {
				return nil, fmt.Errorf("staticruntime: moving constant %s to %s: %w", m.consts[i].val, dev, err)
			}
			m.consts[i].v = v
		}
	}
	return m, nil
}

// toDevice returns v with its tensors (and those of its lists and
// tuples) on d; other values as they are.
func toDevice(v ivalue.IValue, d ivalue.Device) (ivalue.IValue, error) {
	if t := v.Tensor(); t != nil {
		if t.Device() == d {
			return v, nil
		}
		c, err := t.To(d)
		if err != nil {
			return v, err
		}
		return ivalue.FromTensor(c), nil
	}
	if l := v.List(); l != nil {
		items := make([]ivalue.IValue, len(l.Items))
		moved := false
		for i, it := range l.Items {
			c, err := toDevice(it, d)
			if err != nil {
				return v, err
			}
			items[i] = c
			moved = moved || c.Tensor() != it.Tensor()
		}
		if !moved {
			return v, nil
		}
		nl := &ivalue.List{Items: items}
		if v.Kind() == ivalue.KindTuple {
			return ivalue.TupleOf(nl), nil
		}
		return ivalue.ListOf(nl), nil
	}
	return v, nil
}

// runPasses runs gosr's pass pipeline on g as o asks (none with SkipPasses).
func runPasses(g *graph.Graph, o Options, dev ivalue.Device) error {
	return runPassesContext(context.Background(), g, o, dev)
}

// runPassesContext is runPasses under ctx.
func runPassesContext(ctx context.Context, g *graph.Graph, o Options, dev ivalue.Device) error {
	if o.SkipPasses {
		return nil
	}
	pc := passContext()
	pc.EnableOutVariant, pc.Verify = o.EnableOutVariant, o.VerifyPasses
	// The fusions make gosr's own ops (gosr::conv_clamp, conv_add_clamp,
	// conv_act, linear_act, batch_norm_clamp, conv_clamp_max_pool2d, the
	// *_scaled convolutions).
	fusions := []string{"FuseConvClamp", "FuseConvAdd", "FuseConvAct", "FuseLinearAct", "FuseBatchNormClamp", "FuseConvMaxPool", "FuseConvScale", "UseBlockedLayout"}
	if !dev.IsHost() {
		// These passes and the fusions bring in gosr's own ops
		// (prim::VarCat, static_runtime::*_copy and the fused ones),
		// which ATen does not have.
		pc.Disable = map[string]bool{"UseVariadicCat": true, "UseVariadicStack": true, "ReplaceWithCopy": true}
		for _, f := range fusions {
			pc.Disable[f] = true
		}
	}
	if o.Backend != nil && !pc.Disable["FuseConvClamp"] {
		// A libtorch backend runs ATen's convolutions: a fused node
		// would take them back to the Go kernels.
		if pc.Disable == nil {
			pc.Disable = map[string]bool{}
		}
		for _, f := range fusions {
			pc.Disable[f] = true
		}
	}
	if !ops.BlockedLayoutPays() {
		// Without the kernels' AVX-512 blocks a blocked chain would
		// reorder for convolutions that run through planes anyway.
		if pc.Disable == nil {
			pc.Disable = map[string]bool{}
		}
		pc.Disable["UseBlockedLayout"] = true
	}
	for _, name := range o.DisablePasses {
		if !slices.Contains(passes.Names(), name) {
			return fmt.Errorf("staticruntime: DisablePasses: no pass named %q in the pipeline (its passes: %s)", name, strings.Join(passes.Names(), ", "))
		}
		if pc.Disable == nil {
			pc.Disable = map[string]bool{}
		}
		pc.Disable[name] = true
	}
	if err := passes.RunContext(ctx, g, pc); err != nil {
		return fmt.Errorf("staticruntime: %w", err)
	}
	return nil
}

// passContext gives the passes what they need of the op set: the
// registered kernels (read once per preparation), constant folding by
// running them, and the functional forms of in-place ops.
func passContext() *passes.Context {
	known := map[string]bool{}
	for _, k := range ops.Registered() {
		known[k] = true
	}
	return &passes.Context{
		Eval:         ops.EvalNode,
		HasOp:        func(kind string) bool { return known[kind] },
		FunctionalOf: ops.FunctionalOf,
	}
}

// prepareFork prepares the subgraph of a prim::fork node as a module of
// its own (Static Runtime's fork handling): its outputs are read by the
// forking run after aten::wait, so they are never managed.
func prepareFork(ctx context.Context, n *graph.Node, o Options) (*StaticModule, error) {
	sg := graph.Subgraph(n)
	if sg == nil {
		return nil, fmt.Errorf("staticruntime: %s has no subgraph", describe(n))
	}
	if len(sg.Inputs()) != len(n.Inputs) || len(sg.Outputs()) != 1 {
		return nil, fmt.Errorf("staticruntime: %s: the subgraph takes %d inputs and returns %d values; the node passes %d and its future holds 1",
			describe(n), len(sg.Inputs()), len(sg.Outputs()), len(n.Inputs))
	}
	so := o
	so.ManageOutputTensors = false
	so.IntraOpThreads = 1 // tasks already run in parallel, on the inter-op pool
	sub, err := NewStaticModuleContext(ctx, sg, &so)
	if err != nil {
		return nil, fmt.Errorf("staticruntime: the subgraph of %s: %w", describe(n), err)
	}
	return sub, nil
}

// analyze marks loop nodes whose outputs outlive an iteration and
// chooses the tensors the memory planner manages, from the alias analysis.
func (m *StaticModule) analyze(ctx context.Context) error {
	db, err := alias.AnalyzeContext(ctx, m.graph)
	if err != nil {
		return fmt.Errorf("staticruntime: %w", err)
	}
	outs := map[*graph.Value]bool{}
	for _, v := range m.graph.Outputs() {
		outs[v] = true
	}
	for i := range m.consts {
		c := &m.consts[i]
		c.perRuntime = (c.v.IsTensor() || c.v.List() != nil || c.v.Dict() != nil) &&
			(outs[c.val] || db.MayAliasGraphOutput(c.val))
	}
	slotOf := map[*graph.Value]int32{}
	var index func(bi *blockInfo)
	index = func(bi *blockInfo) {
		for _, ni := range bi.nodes {
			for i, v := range ni.node.Outputs {
				slotOf[v] = ni.out[i]
			}
			for _, sb := range ni.blocks {
				index(sb)
			}
		}
	}
	index(m.top)

	for _, ni := range m.nodes {
		if ni.node.Kind == graph.KindWait && db.MayAliasGraphOutput(ni.node.Outputs[0]) {
			m.forkResultsEscape = true
		}
	}

	// Loop bodies: a result stored in a container, or reaching a loop's
	// returns other than directly, may live past the iteration: its node
	// must write fresh objects each time. A tensor returned directly is
	// safe with the ping-pong of ProcessedNode.OutTensor; a container is
	// not (OutList has no spare, and rebuilding last iteration's list in
	// place changes it while the next iteration still reads it).
	returns := map[*graph.Block]*alias.Index{} // per loop body: its returns
	for _, ni := range m.nodes {
		if !ni.inLoop {
			continue
		}
		for _, v := range ni.node.Outputs {
			// A list's elements too: a view list (split, unbind) rebuilds
			// its tensor objects in place, under an element kept elsewhere.
			if db.EscapesToContainer(v) || aliasesLoopReturn(db, returns, ni.node, v, isContainer(v.Type)) ||
				isContainer(v.Type) && db.ElementsEscape(v) {
				ni.fresh = true
			}
		}
	}

	if !m.opts.EnableOutVariant || !m.opts.OptimizeMemory {
		return nil
	}
	// The planner manages what out-variant nodes outside loops write; the
	// lifetimes and what may be managed at all come from memplan.
	writer := map[*graph.Value]*nodeInfo{}
	for _, ni := range m.nodes {
		if ni.kind == ops.OutVariant && !ni.fresh && !ni.inLoop {
			for _, v := range ni.node.Outputs {
				writer[v] = ni
			}
		}
	}
	// Planned overwrites: ATen's kernels take an out that is exactly self
	// (rules marked Backend); the other rules hold for Go kernels only,
	// so they apply only where every node runs Go's.
	//
	// [Serial overwrites]
	//
	// A convolution or pooling written over its input goes through its
	// planes or column tiles in order on one goroutine, where out of
	// place it shares them across the runtime's intra-op team. With
	// intra-op threads, which trade memory for latency already, the
	// planner leaves those (rules marked Serial) apart: mobilenet_v3_large
	// and efficientnet_b0 ran about as fast on two threads as on one
	// with their depthwise and pointwise convolutions in place (1.25x,
	// 1.22x), 1.60x and 1.63x without. On one thread the overwrites
	// stay: they hold the slab at or under PyTorch's
	// (TestPlannersAgainstPyTorchFigure).
	goOnly := m.opts.Backend == nil || m.opts.BackendMode == ops.BackendGo
	rules := map[*graph.Node]ops.OverwriteRule{}
	overwrite := func(n *graph.Node) (int, bool) {
		r, ok := ops.OverwriteRuleOf(n)
		if !ok || !(r.Backend || goOnly) || m.opts.DisableOverwrites {
			return 0, false
		}
		if r.Serial && min(m.opts.IntraOpThreads, runtime.GOMAXPROCS(0)) > 1 {
			// In place the kernel would run on one goroutine: see
			// [Serial overwrites].
			return 0, false
		}
		rules[n] = r
		return r.Input, true
	}
	m.catPart = map[*graph.Value]bool{}
	if goOnly && !m.opts.DisableOverwrites && m.device.IsHost() {
		m.findCatGroups(db, writer)
	}
	lts, _, err := memplan.LifetimesContext(ctx, m.graph, db, memplan.LifetimeOptions{
		Candidate:     func(v *graph.Value) bool { return writer[v] != nil && !m.catPart[v] },
		ManageOutputs: m.opts.ManageOutputTensors,
		Overwrite:     overwrite,
	})
	if err != nil {
		return fmt.Errorf("staticruntime: %w", err)
	}
	// A placed cat output is alive from its first part's node on (see
	// [Cat parts written in place]).
	catFrom := map[*graph.Value]int{}
	for _, g := range m.cats {
		if g.out != nil {
			catFrom[g.out] = m.top.nodes[g.first].step
		}
	}
	// Lifetimes indexes the whole list; the regions index their own.
	at := make([]int, len(lts))
	for i, lt := range lts {
		if lt.Output {
			at[i] = len(m.managedOut)
			m.managedOut = append(m.managedOut, managedInfo{slot: slotOf[lt.Value], start: lt.Start, end: lt.End, output: true})
			continue
		}
		at[i] = len(m.managed)
		mi := managedInfo{slot: slotOf[lt.Value], start: lt.Start, end: lt.End}
		if from, ok := catFrom[lt.Value]; ok {
			mi.start = min(mi.start, from)
		}
		if lt.Overwrites.OK {
			// Both are intermediates (Lifetimes links no outputs), so the
			// input's index is already in m.managed.
			mi.overwrites = memplan.OverwriteOf(at[lt.Overwrites.Index])
			mi.node = lt.Start
			n := lt.Value.Node
			mi.input = rules[n].Input
			mi.safe = rules[n].Safe
			mi.memoOK = true
			for k, in := range n.Inputs {
				switch {
				case in.Type.Kind == graph.TensorType:
					mi.memo = append(mi.memo, k)
				case in.Node == nil || in.Node.Kind != graph.KindConstant:
					mi.memoOK = false
				}
			}
		}
		m.managed = append(m.managed, mi)
	}
	return nil
}

// aliasesLoopReturn reports whether v may alias a return of an enclosing
// loop body: other than v itself, or v too when direct is set. returns
// caches an index of each body's returns.
func aliasesLoopReturn(db *alias.DB, returns map[*graph.Block]*alias.Index, n *graph.Node, v *graph.Value, direct bool) bool {
	for b := n.Owner; b != nil && b.Owner != nil; b = b.Owner.Owner {
		if b.Owner.Kind != graph.KindLoop {
			continue
		}
		idx, ok := returns[b]
		if !ok {
			idx = db.NewIndex(b.Outputs())
			returns[b] = idx
		}
		// v itself comes first when it is a return: two answers are
		// enough to see another.
		for _, r := range idx.Aliases(v, 2) {
			if direct || r != v {
				return true
			}
		}
	}
	return false
}

// isContainer reports whether values of type t are lists, tuples or dicts.
func isContainer(t *graph.Type) bool {
	switch t.Kind {
	case graph.ListType, graph.TupleType, graph.DictType:
		return true
	case graph.OptionalType:
		return isContainer(t.Elem())
	}
	return false
}

// argName turns a value's debug name (x.1) into its argument name (x).
func argName(debug string) string {
	if i := strings.LastIndexByte(debug, '.'); i > 0 {
		suffix := debug[i+1:]
		if suffix != "" && strings.Trim(suffix, "0123456789") == "" {
			return debug[:i]
		}
	}
	return debug
}

// describe names a node for error messages: its outputs, kind and the
// source position PyTorch recorded.
func describe(n *graph.Node) string {
	var outs []string
	for _, o := range n.Outputs {
		outs = append(outs, o.String())
	}
	s := n.Kind
	if len(outs) > 0 {
		s = strings.Join(outs, ", ") + " = " + n.Kind
	}
	s = "node " + s
	if n.SourceRange != "" {
		s += " (" + n.SourceRange + ")"
	}
	return s
}

// Graph returns the graph as prepared (after passes). Do not modify it.
func (m *StaticModule) Graph() *graph.Graph { return m.graph }

// Options returns the options the module was prepared with.
func (m *StaticModule) Options() Options { return m.opts }

// NumInputs is the number of graph inputs Run expects.
func (m *StaticModule) NumInputs() int { return len(m.inputs) }

// InputNames are the argument names usable as kwargs.
func (m *StaticModule) InputNames() []string { return append([]string(nil), m.argNames...) }

// NodeInfo describes how one node runs.
type NodeInfo struct {
	Op   string   // aten::linear
	Kind ops.Kind // out variant, native or fallback
	Node string   // the node as printed: outputs and op
}

// Nodes lists every executed node (sub-blocks included) in order.
func (m *StaticModule) Nodes() []NodeInfo {
	out := make([]NodeInfo, len(m.nodes))
	for i, ni := range m.nodes {
		out[i] = NodeInfo{Op: ni.node.Kind, Kind: ni.kind, Node: describe(ni.node)}
	}
	return out
}

// KindCounts counts executed nodes by kernel kind.
func (m *StaticModule) KindCounts() (out, native, fallback int) {
	for _, ni := range m.nodes {
		switch ni.kind {
		case ops.OutVariant:
			out++
		case ops.Native:
			native++
		case ops.Fallback:
			fallback++
		}
	}
	return
}
