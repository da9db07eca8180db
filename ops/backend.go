package ops

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// KernelBackend offers kernels other than gosr's pure-Go ones for the
// same ops (package libtorch's ATen kernels). Kernel returns nil when the
// backend has no implementation of n's overload. Its kernels keep their
// per-runtime state in ProcessedNode.BackendState, so a Go kernel and a
// backend kernel can share a node (BackendAuto).
type KernelBackend interface {
	Name() string
	Kernel(n *graph.Node, dev ivalue.Device) (Kernel, Kind, error)
}

// BackendMode says how Select uses a KernelBackend.
type BackendMode uint8

const (
	// BackendGo uses the pure-Go kernels only (the default).
	BackendGo BackendMode = iota
	// BackendOnly runs every op the backend has on the backend; views,
	// scalars and lists (gosr's native ops) and what the backend lacks
	// stay in Go.
	BackendOnly
	// BackendAuto times both implementations of each node on its first
	// runs and keeps the faster (see AutoKernel).
	BackendAuto
)

func (m BackendMode) String() string {
	switch m {
	case BackendGo:
		return "go"
	case BackendOnly:
		return "backend"
	case BackendAuto:
		return "auto"
	}
	return fmt.Sprintf("BackendMode(%d)", m)
}

// selectWithBackend combines the Go choice (g.k nil when Go has none)
// with the backend's.
func selectWithBackend(n *graph.Node, opts Options, g goChoice, gerr error) (Kernel, Kind, error) {
	if !opts.Device.IsHost() {
		return selectOnDevice(n, opts, g, gerr)
	}
	gk, gkind := g.k, g.kind
	// Native Go ops (views, scalars, lists, control flow) are not kernels
	// in ATen's sense: they stay in Go, as Static Runtime keeps its native
	// ops whatever the kernels.
	if gk != nil && gkind == Native {
		return gk, gkind, nil
	}
	bk, bkind, berr := opts.Backend.Kernel(n, ivalue.Device{})
	if berr != nil || bk == nil {
		if gk != nil {
			return gk, gkind, nil
		}
		if berr != nil {
			return nil, 0, fmt.Errorf("%w; %s: %v", gerr, opts.Backend.Name(), berr)
		}
		return nil, 0, gerr
	}
	if opts.DisableOutVariants && bkind == OutVariant {
		bkind = Fallback
	}
	if gk == nil || opts.BackendMode == BackendOnly {
		return bk, bkind, nil
	}
	// Both run a node the same way only if the runtime treats their
	// outputs the same; otherwise keep Go's.
	if bkind != gkind {
		return gk, gkind, nil
	}
	a := &autoKernel{node: n, goK: gk, bk: bk, backend: opts.Backend.Name()}
	if t := opts.AutoTable; t != nil {
		t.mu.Lock()
		if t.nodes == nil {
			t.nodes = map[*graph.Node]*autoKernel{}
		}
		t.nodes[n] = a
		t.mu.Unlock()
	}
	return a.run, gkind, nil
}

// selectOnDevice chooses for a module placed on a device, whose tensors
// Go kernels cannot read: the backend runs every op it has, views and
// size queries included; Go keeps the ops the backend lacks whose Go
// kernels touch no tensor element (MetadataOnly: lists, tuples, dicts,
// control flow, fork and wait, size and dtype queries: what PyTorch's JIT
// runs outside the dispatcher), any op that takes no tensor, and any op
// whose tensors all come from those on the host (opts.HostTensors). Any
// other node is refused here, at preparation, with a NoDeviceKernelError,
// rather than failing its first run. Auto has no choice to make there.
func selectOnDevice(n *graph.Node, opts Options, g goChoice, gerr error) (Kernel, Kind, error) {
	bk, bkind, berr := opts.Backend.Kernel(n, opts.Device)
	if berr == nil && bk != nil {
		if opts.DisableOutVariants && bkind == OutVariant {
			bkind = Fallback
		}
		return bk, bkind, nil
	}
	if g.k != nil {
		switch {
		case !touchesTensors(n):
			return g.k, g.kind, nil
		case !takesTensors(n) || readsHostOnly(n, opts.HostTensors):
			// It makes tensors from scalars (prim::NumToTensor) or reads
			// only such tensors (aten::ScalarImplicit of one, as traced
			// models do): it runs in Go on the host, its tensors in memory
			// of their own (Native: the planner, whose slab is on the
			// device, does not place them); ATen takes 0-d CPU tensors
			// beside a device's.
			if opts.HostTensors != nil && len(n.Blocks) == 0 && n.Kind != graph.KindFork {
				for _, v := range n.Outputs {
					if hasTensor(v.Type) {
						opts.HostTensors[v] = true
					}
				}
			}
			return g.k, Native, nil
		case g.traits&MetadataOnly != 0:
			return g.k, g.kind, nil
		}
	}
	why := "it has no such op"
	if berr != nil {
		why = berr.Error()
	}
	if g.k == nil {
		return nil, 0, fmt.Errorf("%w; %s: %s", gerr, opts.Backend.Name(), why)
	}
	return nil, 0, &NoDeviceKernelError{Op: n.Kind, Device: opts.Device, Backend: opts.Backend.Name(), Why: why}
}

// readsHostOnly reports whether every input of n that holds tensors is
// one a Go kernel of the device module made on the host (in host).
func readsHostOnly(n *graph.Node, host map[*graph.Value]bool) bool {
	if host == nil {
		return false
	}
	for _, v := range n.Inputs {
		if hasTensor(v.Type) && !host[v] {
			return false
		}
	}
	return true
}

// ErrNoDeviceKernel matches (errors.Is) every NoDeviceKernelError.
var ErrNoDeviceKernel = errors.New("no kernel on the device")

// NoDeviceKernelError refuses a node of a module placed on a device: the
// backend that owns the device cannot run its op, and gosr's Go kernel
// for it reads tensor elements, which live where Go must not read.
type NoDeviceKernelError struct {
	Op      string        // the node's op, "aten::foo"
	Device  ivalue.Device // where the module is placed
	Backend string        // the backend that owns Device
	Why     string        // why the backend has no kernel for the node
}

func (e *NoDeviceKernelError) Error() string {
	return fmt.Sprintf("%s has no kernel on %s: its Go kernel reads tensor data, which there only %s may read, and %s cannot run it (%s); run the module on the host (Device \"cpu\") or without this op",
		e.Op, e.Device, e.Backend, e.Backend, e.Why)
}

// Is makes errors.Is(err, ErrNoDeviceKernel) hold.
func (e *NoDeviceKernelError) Is(target error) bool { return target == ErrNoDeviceKernel }

func takesTensors(n *graph.Node) bool {
	for _, v := range n.Inputs {
		if hasTensor(v.Type) {
			return true
		}
	}
	return false
}

func hasTensor(t *graph.Type) bool {
	if t == nil {
		return false
	}
	if t.Kind == graph.TensorType {
		return true
	}
	for _, e := range t.Elems {
		if hasTensor(e) {
			return true
		}
	}
	return false
}

// touchesTensors reports whether a node takes or makes tensors (directly
// or inside containers).
func touchesTensors(n *graph.Node) bool {
	if takesTensors(n) {
		return true
	}
	for _, v := range n.Outputs {
		if hasTensor(v.Type) {
			return true
		}
	}
	return false
}

// AutoTable collects a module's BackendAuto nodes, to report choices.
type AutoTable struct {
	mu    sync.Mutex
	nodes map[*graph.Node]*autoKernel
}

// Auto-selection: each node with both implementations runs each, in
// turn, autoWarmup+autoSamples times; the faster by the smallest sample
// (the least disturbed by a noisy machine) wins for good. The choice is
// shared by every runtime of the module.
const (
	autoWarmup  = 2
	autoSamples = 5
	// autoMargin: the backend must be this much faster to replace Go
	// (crossing into C has a fixed cost that timing noise hides).
	autoMargin = 0.97
)

type autoKernel struct {
	node    *graph.Node
	goK, bk Kernel
	backend string
	chosen  atomic.Pointer[Kernel]
	mu      sync.Mutex
	runs    [2]int
	best    [2]time.Duration
}

func (a *autoKernel) run(p *ProcessedNode) error {
	if k := a.chosen.Load(); k != nil {
		// From now on this runtime calls the chosen kernel directly: no
		// wrapper left on the hot path.
		p.Kernel = *k
		return (*k)(p)
	}
	a.mu.Lock()
	which := 0
	if a.runs[1] < a.runs[0] {
		which = 1
	}
	a.runs[which]++
	n := a.runs[which]
	a.mu.Unlock()
	k := a.goK
	if which == 1 {
		k = a.bk
	}
	t0 := time.Now()
	err := k(p)
	d := time.Since(t0)
	if err != nil {
		return err
	}
	if n <= autoWarmup {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.best[which] == 0 || d < a.best[which] {
		a.best[which] = d
	}
	if a.chosen.Load() == nil && a.runs[0] >= autoWarmup+autoSamples && a.runs[1] >= autoWarmup+autoSamples {
		k := a.goK
		if float64(a.best[1]) < autoMargin*float64(a.best[0]) {
			k = a.bk
		}
		a.chosen.Store(&k)
		p.Kernel = k
	}
	return nil
}

// AutoChoice is what BackendAuto decided for one node.
type AutoChoice struct {
	Node *graph.Node
	// Backend is "go", the backend's name, or "" while still measuring.
	Backend string
	// Go and Other are the best times measured.
	Go, Other time.Duration
}

// Choices reports BackendAuto's decisions, in the order of nodes (the
// nodes of a prepared graph); nodes without a choice to make are left out.
func (t *AutoTable) Choices(nodes []*graph.Node) []AutoChoice {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []AutoChoice
	for _, n := range nodes {
		a := t.nodes[n]
		if a == nil {
			continue
		}
		a.mu.Lock()
		c := AutoChoice{Node: n, Go: a.best[0], Other: a.best[1]}
		if k := a.chosen.Load(); k != nil {
			c.Backend = "go"
			if float64(a.best[1]) < autoMargin*float64(a.best[0]) {
				c.Backend = a.backend
			}
		}
		a.mu.Unlock()
		out = append(out, c)
	}
	return out
}
