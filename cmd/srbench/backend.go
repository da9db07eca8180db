package main

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/gosr/gosr/libtorch"
	"github.com/gosr/gosr/ops"
	"github.com/gosr/gosr/staticruntime"
)

// Kernel backends -backend names. "all" is compare's: go, libtorch and
// auto one after the other for each model.
const (
	backendGo       = "go"
	backendLibtorch = "libtorch"
	backendAuto     = "auto"
	backendAll      = "all"
)

// allBackends are what -backend all runs, in order.
var allBackends = []string{backendGo, backendLibtorch, backendAuto}

// checkBackendFlag says whether -backend value is valid for cmd.
func checkBackendFlag(cmd, value string) error {
	switch value {
	case backendGo, backendLibtorch, backendAuto:
		return nil
	case backendAll:
		if cmd == "compare" {
			return nil
		}
		return fmt.Errorf("-backend all: only compare runs every backend; want go, libtorch or auto")
	}
	want := "go, libtorch or auto"
	if cmd == "compare" {
		want = "go, libtorch, auto or all"
	}
	return fmt.Errorf("-backend %q: want %s", value, want)
}

// backendName is -backend with "" (zero flags in tests) as go.
func (f runtimeFlags) backendName() string {
	if f.backend == "" {
		return backendGo
	}
	return f.backend
}

// intraOpThreads is -intra-op-threads, at least 1.
func (f runtimeFlags) intraOpThreads() int { return max(f.intraOp, 1) }

// usesLibtorch says whether f's backend (or one of them, for all) needs
// the libtorch shim.
func (f runtimeFlags) usesLibtorch() bool {
	return f.backendName() != backendGo
}

// libtorchBackends caches libtorch.Open per intra-op thread count: the
// shim loads once per process, and one Backend serves every module.
var libtorchBackends struct {
	sync.Mutex
	m map[int]*libtorch.Backend
}

// openLibtorch opens (once) the libtorch backend with threads intra-op
// threads. Without the shim the error wraps libtorch.ErrNoShim and says
// what to install and where the shim was looked for.
func openLibtorch(threads int) (*libtorch.Backend, error) {
	libtorchBackends.Lock()
	defer libtorchBackends.Unlock()
	if b := libtorchBackends.m[threads]; b != nil {
		return b, nil
	}
	b, err := libtorch.Open(libtorchOptions(threads))
	if err != nil {
		return nil, err
	}
	if libtorchBackends.m == nil {
		libtorchBackends.m = map[int]*libtorch.Backend{}
	}
	libtorchBackends.m[threads] = b
	return b, nil
}

// checkBackend fails, before any model is loaded, when -backend needs
// libtorch and it cannot be loaded.
func (f runtimeFlags) checkBackend() error {
	if !f.usesLibtorch() {
		return nil
	}
	if _, err := openLibtorch(f.intraOpThreads()); err != nil {
		return fmt.Errorf("-backend %s: %w", f.backendName(), err)
	}
	return nil
}

// setBackend puts f's kernel backend into o.
func (f runtimeFlags) setBackend(o *staticruntime.Options) error {
	switch f.backendName() {
	case backendGo:
		o.Backend, o.BackendMode = nil, ops.BackendGo
		return nil
	case backendLibtorch, backendAuto:
		b, err := openLibtorch(f.intraOpThreads())
		if err != nil {
			return fmt.Errorf("-backend %s: %w", f.backendName(), err)
		}
		o.Backend, o.BackendMode = b, ops.BackendOnly
		if f.backendName() == backendAuto {
			o.BackendMode = ops.BackendAuto
		}
		return nil
	}
	// -backend all is resolved by compare, one backend per row.
	return fmt.Errorf("-backend %q: no single backend (want go, libtorch or auto)", f.backend)
}

// backendLabel describes the kernels for headers: "go", "go (2 intra-op
// threads)", or "libtorch (1 intra-op thread)".
func (f runtimeFlags) backendLabel() string {
	threads := plural(f.intraOpThreads(), "intra-op thread")
	switch f.backendName() {
	case backendGo:
		if f.intraOpThreads() > 1 {
			return fmt.Sprintf("go (%s)", threads)
		}
		return backendGo
	case backendAll:
		return fmt.Sprintf("all (go, libtorch and auto, one row each; libtorch with %s)", threads)
	}
	if f.backendName() == backendLibtorch {
		return fmt.Sprintf("libtorch (%s)", threads)
	}
	return fmt.Sprintf("%s (libtorch with %s)", f.backendName(), threads)
}

func plural(n int, what string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, what)
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// autoNode is BackendAuto's choice for one node.
type autoNode struct {
	// Node is the node's kind (aten::linear), Output its first output.
	Node   string `json:"node"`
	Output string `json:"output,omitempty"`
	// Choice is "go", "libtorch", or "measuring" (the node has not run
	// often enough to choose: it did not run, or ran in a branch rarely
	// taken).
	Choice     string  `json:"choice"`
	GoUs       float64 `json:"go_us"`
	LibtorchUs float64 `json:"libtorch_us"`
}

// autoSummary is what -backend auto chose, after the timed runs.
type autoSummary struct {
	Libtorch  int        `json:"libtorch"`
	Go        int        `json:"go"`
	Measuring int        `json:"measuring"`
	Nodes     []autoNode `json:"nodes"`
}

func summarizeAuto(choices []ops.AutoChoice) *autoSummary {
	s := &autoSummary{Nodes: []autoNode{}}
	for _, c := range choices {
		n := autoNode{Node: c.Node.Kind, Choice: c.Backend, GoUs: us(c.Go), LibtorchUs: us(c.Other)}
		if len(c.Node.Outputs) > 0 {
			n.Output = "%" + c.Node.Outputs[0].DebugName()
		}
		switch c.Backend {
		case "":
			n.Choice = "measuring"
			s.Measuring++
		case backendGo:
			s.Go++
		default:
			s.Libtorch++
		}
		s.Nodes = append(s.Nodes, n)
	}
	return s
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// undecided counts the nodes BackendAuto is still measuring.
func undecided(sm *staticruntime.StaticModule) int {
	n := 0
	for _, c := range sm.AutoChoices() {
		if c.Backend == "" {
			n++
		}
	}
	return n
}

// autoMinRuns is the fewest runs before timing with -backend auto: each
// node runs each kernel 2 warm-up and 5 sampled times (14 runs) before
// choosing.
const autoMinRuns = 16

// settleAuto runs rts (each done runs already) until BackendAuto has
// chosen for every node that runs: at least autoMinRuns runs each, then
// batches of autoMinRuns while the count of undecided nodes falls. Nodes
// still undecided after a whole batch did not run in it (an untaken
// branch) and cannot be settled by running more.
func settleAuto(sm *staticruntime.StaticModule, rts []*staticruntime.StaticRuntime, done int, run func(*staticruntime.StaticRuntime) error) error {
	batch := func(n int) error {
		for range n {
			for _, r := range rts {
				if err := run(r); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := batch(autoMinRuns - min(done, autoMinRuns)); err != nil {
		return err
	}
	for prev := undecided(sm); prev > 0; {
		if err := batch(autoMinRuns); err != nil {
			return err
		}
		u := undecided(sm)
		if u >= prev {
			break
		}
		prev = u
	}
	return nil
}

// printAuto writes -backend auto's one-line summary and, with verbose,
// one line per node.
func printAuto(w io.Writer, indent, what string, s *autoSummary, verbose bool) {
	if s == nil {
		return
	}
	line := fmt.Sprintf("%sauto%s: %d of %d nodes chose libtorch, %d chose go", indent, what, s.Libtorch, len(s.Nodes), s.Go)
	if s.Measuring > 0 {
		line += fmt.Sprintf(", %d never settled (did not run often enough)", s.Measuring)
	}
	fmt.Fprintln(w, line)
	if !verbose {
		return
	}
	kw, ow := len("node"), 0
	for _, n := range s.Nodes {
		kw, ow = max(kw, len(n.Node)), max(ow, len(n.Output))
	}
	for _, n := range s.Nodes {
		if n.Choice == "measuring" {
			fmt.Fprintf(w, "%s  %-*s %-*s  not settled (ran too few times to choose)\n", indent, kw, n.Node, ow, n.Output)
			continue
		}
		fmt.Fprintf(w, "%s  %-*s %-*s  chose %-9s (best go %.3f us, libtorch %.3f us)\n", indent, kw, n.Node, ow, n.Output, n.Choice, n.GoUs, n.LibtorchUs)
	}
}
