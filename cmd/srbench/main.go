// Command srbench runs models with gosr and compares them with PyTorch.
//
//	srbench run     MODEL [-backend go|libtorch|auto] [-inputs IN.pt] [-expected OUT.pt] [-iters N] [-warmup N] [-threads N] [-interop N] [-intra-op-threads N] [-json] [-v]
//	srbench run     PACKAGE.pt [-interpreters 1,2] [-threads N] [-repeats R] [-round D] [-inputs IN.pt] [-json]
//	srbench ops     MODEL [-backend go|libtorch|auto]   per-op times (benchmark_individual_ops)
//	srbench graph   MODEL [-backend go|libtorch|auto]   the graph gosr runs, after its passes
//	srbench compare MODEL|all|DIR [-backend go|libtorch|auto|all] [-inputs IN.pt] [-python PATH] [-threads N] [-interop N] [-intra-op-threads N] [-pt-timeout D] [-json]
//	srbench check   MODEL [-json]   every op gosr's Go kernels cannot run, with its source lines; exits 1 if any
//	srbench list             the built-in models
//
// -backend chooses gosr's kernels (staticruntime.Options.Backend and
// BackendMode): go, gosr's pure-Go kernels (the default); libtorch,
// PyTorch's ATen kernels through the shim `make libtorch` builds
// (build/libgosrtorch.so, or GOSR_LIBTORCH_SHIM), for every op libtorch
// has; auto, per node the faster of the two, timed on the first runs.
// Without the shim, libtorch and auto fail before any model is loaded,
// saying what to install and where the shim was looked for. With auto the
// warm-up goes on (at least 16 runs) until every node that runs has
// chosen, so the timed runs never include auto's measuring; run and
// compare then print how many nodes chose libtorch and how many go (with
// -v, each node: its kind, its choice, and the best go and libtorch
// times). compare -backend all runs go, libtorch and auto one after the
// other for each model (PyTorch once per model): one row per (model,
// backend). -intra-op-threads N (default 1) is libtorch's intra-op thread
// count (libtorch.Options.Threads) and, in compare, PyTorch's
// (torch.set_num_threads), so that each side has one by default; gosr's
// Go kernels run on the calling goroutine. Outputs, -json included
// ("backend", "intra_op_threads", "auto"), name the backend.
//
// -threads N drives N goroutines through one staticruntime.Pool of N
// runtimes over the shared StaticModule (take, run, give back) and
// reports throughput and per-request latency percentiles (p50, p90, p99).
// -interop N sizes the inter-op pool that runs prim::fork tasks
// (Options.InterOpThreads; 0: GOMAXPROCS), and PyTorch's
// (torch.set_num_interop_threads) in compare; intra-op threads stay 1.
// compare gives up on a PyTorch child that reports no progress for
// -pt-timeout, notes "PyTorch timed out" for that model and goes on.
//
// -device cuda[:N] places gosr's module on a GPU through libtorch
// (-backend libtorch; staticruntime.Options.Device): weights copied once,
// the slab from libtorch's allocator, inputs copied in and outputs out,
// all inside the timed runs. -device libtorch-cpu runs that same path on
// libtorch's CPU allocator, where no GPU is present. PyTorch's side of
// compare stays on the CPU.
//
// -planner none|storage-groups|greedy (default greedy) chooses the memory
// planner for run, ops and compare; -manage-outputs places output tensors
// in an arena of their own. run prints the memory plan after the timing
// (with -v its storage groups or offsets); compare adds a table of managed
// bytes with every planner beside PyTorch Static Runtime's.
//
// MODEL (or -model MODEL) is a built-in name (srbench list), a TorchScript
// archive FILE.pt from torch.jit.save (inputs and expected outputs from
// torch.save files: -inputs/-expected, by default NAME.inputs.pt and
// NAME.expected.pt beside NAME[.variant].pt), or an IR file FILE.ir with
// its tensors (constants c*, inputs in*, expected outputs out*) in
// FILE.safetensors beside it, as scripts/make_testdata.py writes them.
//
// run also takes a torch.package archive with Python fallbacks, as
// scripts/gosr_fallback.py writes them (gosr::python_call nodes run in
// private CPython interpreters, see pyfallback). Its cases come from
// -inputs (a list of argument lists, or a dict with "inputs") or
// PACKAGE.expected.pt, and are cycled through. -interpreters 1,2 measures
// each count (a manager of that many interpreters, -threads goroutines
// through a pool of runtimes) in -repeats rounds of -round each,
// interleaved, and prints one table: median throughput, latency
// percentiles and the ratio to the first row; then each interpreter's
// start-up time and the process's resident memory around starting them.
package main

import (
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/gosr/gosr/builtin"
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/internal/fixture"
	"github.com/gosr/gosr/internal/stats"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders"
	"github.com/gosr/gosr/memplan"
	"github.com/gosr/gosr/staticruntime"
)

//go:embed pytorch_bench.py
var pytorchBench string

type flags struct {
	model   string
	iters   int
	warmup  int
	threads int
	// interop is Options.InterOpThreads and PyTorch's inter-op threads;
	// 0 means GOMAXPROCS (interopThreads resolves it).
	interop int
	// ptTimeout is how long compare's PyTorch child may go without
	// reporting progress before it is killed (0: the default).
	ptTimeout    time.Duration
	repeats      int
	json         bool
	python       string
	noOutVariant bool
	noOptimize   bool
	noInPlace    bool
	inputs       string
	expected     string
	save         string
	// planner is a memplan.ByName name; "" is the default (greedy).
	planner       string
	manageOutputs bool
	verbose       bool
	cpuProfile    string
	// interpList is -interpreters: for a package with Python fallbacks,
	// one row per count, each a manager of that many interpreters.
	interpList []int
	// round is how long each configuration runs per round of a package
	// run (when -iters is 0).
	round time.Duration
	// backend is -backend: go, libtorch, auto, or (compare) all; "" is go.
	backend string
	// intraOp is libtorch's intra-op threads and, in compare, PyTorch's;
	// 0 means 1 (intraOpThreads).
	intraOp int
	// device places gosr's module (-device: cpu, libtorch-cpu, cuda[:N]).
	device string
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	cmd := os.Args[1]
	f, err := parseFlags(cmd, os.Args[2:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "srbench:", err)
		os.Exit(2)
	}
	if f.cpuProfile != "" {
		stop, perr := startCPUProfile(f.cpuProfile)
		if perr != nil {
			fmt.Fprintln(os.Stderr, "srbench:", perr)
			os.Exit(2)
		}
		defer stop()
	}
	switch cmd {
	case "run", "ops", "graph", "compare":
		// A backend that cannot load fails before any model is read.
		err = f.checkBackend()
	}
	switch {
	case err != nil:
	case cmd == "run":
		err = cmdRun(f)
	case cmd == "ops":
		err = cmdOps(f)
	case cmd == "graph":
		err = cmdGraph(f)
	case cmd == "compare":
		err = cmdCompare(f)
	case cmd == "check":
		err = cmdCheck(f, os.Stdout)
	case cmd == "list":
		fmt.Println(strings.Join(builtin.Names(), "\n"))
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "srbench:", err)
		if f.cpuProfile != "" {
			pprof.StopCPUProfile() // os.Exit skips the deferred stop
		}
		os.Exit(1)
	}
}

// startCPUProfile profiles the process into path until stop.
func startCPUProfile(path string) (stop func(), err error) {
	fh, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(fh); err != nil {
		fh.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); fh.Close() }, nil
}

// parseFlags reads cmd's flags and model from args; usage and flag
// errors go to errOut.
func parseFlags(cmd string, args []string, errOut io.Writer) (flags, error) {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(errOut)
	var f flags
	fs.StringVar(&f.model, "model", "mlp", "built-in model name, FILE.ir, or all (compare)")
	fs.IntVar(&f.iters, "iters", 0, "timed runs per repeat (0: about 0.2 s worth)")
	fs.IntVar(&f.warmup, "warmup", 100, "untimed runs first")
	fs.IntVar(&f.threads, "threads", 1, "goroutines sending requests at once, through one pool of as many runtimes")
	fs.IntVar(&f.interop, "interop", 1, "inter-op threads that run prim::fork tasks, gosr's (Options.InterOpThreads) and PyTorch's (set_num_interop_threads); 0: GOMAXPROCS")
	fs.DurationVar(&f.ptTimeout, "pt-timeout", defaultPTTimeout, "compare: kill PyTorch's child process for a model once it has gone this long without progress (a timed repeat done), and go on")
	fs.IntVar(&f.repeats, "repeats", 7, "timed repeats; the median is reported")
	fs.BoolVar(&f.json, "json", false, "print one JSON object")
	fs.StringVar(&f.python, "python", "", "python3 with torch (default: found on the machine)")
	fs.BoolVar(&f.noOutVariant, "no-out-variant", false, "disable out variants")
	fs.BoolVar(&f.noOptimize, "no-optimize-memory", false, "no memory planning")
	fs.BoolVar(&f.noInPlace, "no-inplace", false, "the planner never writes an output over the dead input it reads (a pooling over its activation), nor the parts of a cat straight into its output")
	fs.StringVar(&f.inputs, "inputs", "", "torch.save file with the inputs (a tuple of positional inputs, or one tensor) for a .pt model")
	fs.StringVar(&f.expected, "expected", "", "torch.save file with the expected outputs for a .pt model")
	fs.StringVar(&f.save, "save-outputs", "", "write gosr's outputs here with torch.save's format")
	fs.StringVar(&f.planner, "planner", memplan.GreedyBySize{}.Name(), "memory planner: "+plannerNames()+
		" (none: one slab, no tensor shares memory; storage-groups: PyTorch Static Runtime's; greedy: greedy-by-size offsets)")
	fs.BoolVar(&f.manageOutputs, "manage-outputs", false, "place output tensors in an arena of their own (manage_output_tensors); "+
		"the timing loops call ReleaseOutputs after each run, so the arena is reused")
	fs.BoolVar(&f.verbose, "v", false, "run: print the memory plan in full (storage groups, or each tensor's offset, size and lifetime)")
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "run: write a CPU profile of the whole command here (go tool pprof)")
	interps := fs.String("interpreters", "1", "run, torch.package with Python fallbacks: private interpreters per configuration, comma separated (1,2: one row each, rounds interleaved)")
	fs.StringVar(&f.backend, "backend", backendGo, "kernels: go (gosr's pure-Go kernels), libtorch (PyTorch's ATen kernels through the shim `make libtorch` builds), auto (per node, the faster of the two, timed on the first runs); compare also takes all (go, libtorch and auto one after the other, one row each)")
	fs.StringVar(&f.device, "device", "cpu", "where gosr's module lives: cpu (gosr's memory), cuda[:N] (a GPU, through libtorch), or libtorch-cpu (the device path on libtorch's CPU allocator: weights copied once, slab from libtorch, inputs in, outputs out); off cpu it needs -backend libtorch")
	fs.IntVar(&f.intraOp, "intra-op-threads", 1, "intra-op threads of libtorch's kernels (-backend libtorch|auto) and, in compare, of PyTorch (torch.set_num_threads); gosr's Go kernels run on the calling goroutine")
	fs.DurationVar(&f.round, "round", time.Second, "run, torch.package with Python fallbacks: how long each configuration runs per round (-repeats rounds; -iters N: N runs per goroutine instead)")
	// Flags may come before or after the model: srbench run MODEL.pt -inputs IN.pt
	for {
		if err := fs.Parse(args); err != nil {
			return f, err
		}
		if fs.NArg() == 0 {
			break
		}
		f.model = fs.Arg(0)
		args = fs.Args()[1:]
	}
	// Bad values fail before any model is loaded, naming what is valid.
	var err error
	if _, err = f.plannerOpt(); err != nil {
		return f, fmt.Errorf("-planner: %w", err)
	}
	if f.threads < 1 {
		return f, fmt.Errorf("-threads %d: want at least 1 goroutine", f.threads)
	}
	if f.interop < 0 {
		return f, fmt.Errorf("-interop %d: want at least 1 inter-op thread, or 0 for GOMAXPROCS", f.interop)
	}
	if f.interpList, err = parseInterpreters(*interps); err != nil {
		return f, err
	}
	if f.round <= 0 {
		return f, fmt.Errorf("-round %v: want a positive duration (as 1s)", f.round)
	}
	if f.ptTimeout <= 0 {
		return f, fmt.Errorf("-pt-timeout %v: want a positive duration (as 120s or 10m)", f.ptTimeout)
	}
	if err := checkBackendFlag(cmd, f.backend); err != nil {
		return f, err
	}
	if f.intraOp < 1 {
		return f, fmt.Errorf("-intra-op-threads %d: want at least 1", f.intraOp)
	}
	if d, err := ivalue.ParseDevice(f.device); err != nil {
		return f, fmt.Errorf("-device: %w", err)
	} else if !d.IsHost() && f.backend != backendLibtorch {
		return f, fmt.Errorf("-device %s: gosr's Go kernels read host memory only; use -backend libtorch", d)
	}
	return f, nil
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: srbench run|ops|graph|compare|check|list MODEL [flags]   (MODEL: a built-in name, FILE.pt or FILE.ir; srbench CMD -h for flags)")
	os.Exit(2)
}

// model is a loaded model with the paths PyTorch can read: an IR fixture
// (builtin or FILE.ir) or a TorchScript archive (FILE.pt).
type model struct {
	*fixture.Case
	irPath, stPath string
	// TorchScript archives
	ptPath, inputsPath string
	script             *loaders.Model
}

func loadModel(spec string, f flags) (*model, error) {
	if strings.HasSuffix(spec, ".pt") && isFallbackPackage(spec) {
		return nil, fmt.Errorf("%s: a torch.package archive with Python fallbacks: srbench run takes it (with -interpreters), not ops, graph or compare", spec)
	}
	if strings.HasSuffix(spec, ".pt") {
		return loadScriptModel(spec, f)
	}
	if strings.HasSuffix(spec, ".ir") {
		c, err := fixture.Load(spec)
		if err != nil {
			return nil, err
		}
		return &model{Case: c, irPath: spec, stPath: strings.TrimSuffix(spec, ".ir") + ".safetensors"}, nil
	}
	c, err := builtin.Load(spec)
	if err != nil {
		return nil, err
	}
	return &model{Case: c}, nil
}

// graph returns a fresh copy of the model's graph (preparation rewrites it).
func (m *model) graph() (*graph.Graph, error) {
	if m.script != nil {
		return m.scriptGraph()
	}
	g, err := graph.Parse(m.IR, &graph.ParseOptions{Tensors: m.Consts})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.Name, err)
	}
	return g, nil
}

// files writes a built-in model's files to a temporary directory for PyTorch.
func (m *model) files() (ir, st string, cleanup func(), err error) {
	if m.irPath != "" {
		return m.irPath, m.stPath, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "srbench")
	if err != nil {
		return "", "", nil, err
	}
	irData, stData, err := builtin.Files(m.Name)
	if err != nil {
		return "", "", nil, err
	}
	ir, st = filepath.Join(dir, "model.ir"), filepath.Join(dir, "model.safetensors")
	if err := os.WriteFile(ir, irData, 0o644); err != nil {
		return "", "", nil, err
	}
	if err := os.WriteFile(st, stData, 0o644); err != nil {
		return "", "", nil, err
	}
	return ir, st, func() { os.RemoveAll(dir) }, nil
}

func plannerNames() string {
	var names []string
	for _, p := range memplan.Planners {
		names = append(names, p.Name())
	}
	return strings.Join(names, "|")
}

// plannerOpt is the planner -planner names; nil (the runtime's default,
// greedy) for "".
func (f flags) plannerOpt() (memplan.Planner, error) {
	if f.planner == "" {
		return nil, nil
	}
	return memplan.ByName(f.planner)
}

func (f flags) options() (*staticruntime.Options, error) {
	o := staticruntime.DefaultOptions()
	o.EnableOutVariant = !f.noOutVariant
	o.OptimizeMemory = !f.noOptimize
	o.DisableInPlace = f.noInPlace
	o.ManageOutputTensors = f.manageOutputs
	o.InterOpThreads = f.interopThreads()
	if err := f.setBackend(&o); err != nil {
		return nil, err
	}
	if f.device != "cpu" {
		o.Device = f.device
	}
	pl, err := f.plannerOpt()
	if err != nil {
		return nil, err
	}
	o.Planner = pl
	return &o, nil
}

// interopThreads is -interop with 0 resolved to GOMAXPROCS, so that gosr
// and PyTorch get the same number and reports show it.
func (f flags) interopThreads() int {
	if f.interop <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return f.interop
}

func prepare(m *model, f flags) (*staticruntime.StaticModule, error) {
	opts, err := f.options()
	if err != nil {
		return nil, err
	}
	g, err := m.graph()
	if err != nil {
		return nil, err
	}
	sm, err := staticruntime.NewStaticModule(g, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.Name, err)
	}
	return sm, nil
}

// runResult is what `srbench run -json` prints.
type runResult struct {
	Model string `json:"model"`
	// Backend is the kernels (-backend: go, libtorch or auto);
	// IntraOpThreads libtorch's intra-op threads (libtorch and auto).
	Backend        string `json:"backend"`
	IntraOpThreads int    `json:"intra_op_threads,omitempty"`
	// Auto is what -backend auto chose, after the timed runs.
	Auto *autoSummary `json:"auto,omitempty"`

	UsPerIter       float64 `json:"us_per_iter"`
	Throughput      float64 `json:"throughput"`
	MaxAbsDiff      float64 `json:"max_abs_diff"`
	Nodes           int     `json:"nodes"`
	OutVariantNodes int     `json:"out_variant_nodes"`
	NativeNodes     int     `json:"native_nodes"`
	FallbackNodes   int     `json:"fallback_nodes"`
	AllocsPerRun    float64 `json:"allocs_per_run"`
	Threads         int     `json:"threads"`
	Interop         int     `json:"interop"`
	// Per-request latency over every timed request of every goroutine
	// and repeat (Requests of them), in microseconds.
	P50Us    float64 `json:"p50_us"`
	P90Us    float64 `json:"p90_us"`
	P99Us    float64 `json:"p99_us"`
	MeanUs   float64 `json:"mean_us"`
	Requests int     `json:"requests"`
	// The memory plan after the timed runs (MemoryStats).
	Planner         string `json:"planner"`
	ManagedTensors  int    `json:"managed_tensors"`
	ManagedBytes    int64  `json:"managed_bytes"`
	LowerBoundBytes int64  `json:"lower_bound_bytes"`
	TensorBytes     int64  `json:"tensor_bytes"`
	ReusedBytes     int64  `json:"reused_bytes"`
	Replans         int    `json:"replans"`
	// InPlace counts tensors written over the input they follow.
	InPlace       int  `json:"in_place"`
	ManageOutputs bool `json:"manage_outputs"`
	// Device is where the module's tensors and slab live (-device).
	Device        string `json:"device"`
	OutputTensors int    `json:"output_tensors"`
	OutputBytes   int64  `json:"output_bytes"`
	// Mem is the whole plan, for -v.
	Mem staticruntime.MemoryStats `json:"-"`
}

func (res *runResult) setMemory(ms staticruntime.MemoryStats, manageOutputs bool) {
	res.Mem = ms
	res.Planner, res.ManagedTensors, res.ManagedBytes = ms.Planner, ms.ManagedTensors, ms.ManagedBytes
	res.Device = ms.Device
	res.LowerBoundBytes, res.TensorBytes, res.ReusedBytes = ms.LowerBound, ms.TensorBytes, ms.ReusedBytes
	res.Replans, res.InPlace = ms.Replans, ms.InPlace
	res.ManageOutputs, res.OutputTensors, res.OutputBytes = manageOutputs, ms.OutputTensors, ms.OutputBytes
}

func cmdRun(f flags) error {
	if strings.HasSuffix(f.model, ".pt") && isFallbackPackage(f.model) {
		return cmdRunPackage(f)
	}
	m, err := loadModel(f.model, f)
	if err != nil {
		return err
	}
	res, err := measure(m, f)
	if err != nil {
		return err
	}
	if f.json {
		return json.NewEncoder(os.Stdout).Encode(res)
	}
	fmt.Printf("model %s (backend %s; threads %d through one pool of %d runtimes, interop %d)\n", res.Model, f.backendLabel(), res.Threads, res.Threads, res.Interop)
	fmt.Printf("  median time per run: %.3f us (wall time of a repeat / runs per goroutine)\n", res.UsPerIter)
	fmt.Printf("  throughput: %.0f runs/s (median of %d repeats)\n", res.Throughput, max(f.repeats, 1))
	fmt.Printf("  latency: p50 %.3f us, p90 %.3f us, p99 %.3f us, mean %.3f us (%d requests)\n", res.P50Us, res.P90Us, res.P99Us, res.MeanUs, res.Requests)
	if res.MaxAbsDiff < 0 {
		fmt.Printf("  max abs diff from PyTorch's outputs: n/a (no expected outputs given)\n")
	} else {
		fmt.Printf("  max abs diff from PyTorch's outputs: %.3g\n", res.MaxAbsDiff)
	}
	fmt.Printf("  nodes: %d (out variant %d, native %d, fallback %d)\n", res.Nodes, res.OutVariantNodes, res.NativeNodes, res.FallbackNodes)
	fmt.Printf("  allocations per run: %.1f\n", res.AllocsPerRun)
	printMemory(os.Stdout, res, f.verbose)
	if f.noOptimize || f.noOutVariant {
		fmt.Println("  (nothing managed: -no-optimize-memory or -no-out-variant)")
	}
	printAuto(os.Stdout, "", "", res.Auto, f.verbose)
	return nil
}

// printMemory writes run's memory block: the plan's totals, and with
// verbose its storage groups (planners that group) and every managed
// tensor's place and lifetime (steps are top-level node indices).
func printMemory(w io.Writer, res *runResult, verbose bool) {
	ms := res.Mem
	if res.Device != "" && res.Device != "cpu" {
		fmt.Fprintf(w, "memory (planner %s, on %s)\n", res.Planner, res.Device)
	} else {
		fmt.Fprintf(w, "memory (planner %s)\n", res.Planner)
	}
	fmt.Fprintf(w, "  managed tensors: %d\n", res.ManagedTensors)
	fmt.Fprintf(w, "  managed bytes: %d\n", res.ManagedBytes)
	fmt.Fprintf(w, "  lower bound: %d bytes (managed/lower bound: %s)\n", res.LowerBoundBytes, ratio(res.ManagedBytes, res.LowerBoundBytes))
	fmt.Fprintf(w, "  tensor bytes: %d (each tensor its own memory)\n", res.TensorBytes)
	pct := 0.0
	if res.TensorBytes > 0 {
		pct = 100 * float64(res.ReusedBytes) / float64(res.TensorBytes)
	}
	fmt.Fprintf(w, "  bytes reused: %d (%.1f%% of tensor bytes)\n", res.ReusedBytes, pct)
	fmt.Fprintf(w, "  re-plans: %d\n", res.Replans)
	fmt.Fprintf(w, "  written in place over their input: %d\n", res.InPlace)
	if res.ManageOutputs {
		fmt.Fprintf(w, "  output arena: %d tensors, %d bytes, %d re-plans, %d abandoned arenas\n", ms.OutputTensors, ms.OutputBytes, ms.OutputReplans, ms.AbandonedArenas)
	}
	if !verbose {
		return
	}
	for i, g := range ms.Groups {
		var size int64
		idx := make([]string, len(g))
		for k, t := range g {
			size = max(size, memplan.Align(ms.Tensors[t].Size))
			idx[k] = strconv.Itoa(t)
		}
		fmt.Fprintf(w, "  group %d: %d bytes, tensors %s\n", i, size, strings.Join(idx, " "))
	}
	for i, t := range ms.Tensors {
		off := int64(-1)
		if i < len(ms.Offsets) {
			off = ms.Offsets[i]
		}
		over := ""
		if t.Follows > 0 && i < len(ms.Offsets) && ms.Offsets[t.Follows-1] == off {
			over = fmt.Sprintf(", in place over tensor %d", t.Follows-1)
		}
		fmt.Fprintf(w, "  tensor %d: offset %d, size %d, steps %d-%d%s\n", i, off, t.Size, t.Start, t.End, over)
	}
}

// ratio is a/b to three places, or "-" when b is 0.
func ratio(a, b int64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", float64(a)/float64(b))
}

func cmdOps(f flags) error {
	m, err := loadModel(f.model, f)
	if err != nil {
		return err
	}
	sm, err := prepare(m, f)
	if err != nil {
		return err
	}
	iters := f.iters
	if iters <= 0 {
		iters = 1000
	}
	r := sm.NewRuntime()
	if f.backendName() == backendAuto {
		// auto's choices are made before anything is timed.
		run := func(r *staticruntime.StaticRuntime) error { _, err := r.Run(m.Inputs...); return err }
		if err := settleAuto(sm, []*staticruntime.StaticRuntime{r}, 0, run); err != nil {
			return fmt.Errorf("%s: %w", m.Name, err)
		}
	}
	met, err := r.BenchmarkIndividualOps(m.Inputs, f.warmup, iters)
	if err != nil {
		return err
	}
	fmt.Printf("model %s, backend %s\n", m.Name, f.backendLabel())
	fmt.Print(met)
	if f.backendName() == backendAuto {
		printAuto(os.Stdout, "", "", summarizeAuto(sm.AutoChoices()), f.verbose)
	}
	return nil
}

func cmdGraph(f flags) error {
	m, err := loadModel(f.model, f)
	if err != nil {
		return err
	}
	sm, err := prepare(m, f)
	if err != nil {
		return err
	}
	fmt.Print(sm.Graph().String())
	fmt.Printf("# backend %s\n", f.backendLabel())
	for _, n := range sm.Nodes() {
		fmt.Printf("# %-12s %s\n", n.Kind, n.Node)
	}
	return nil
}

// compareResult is one model through gosr and PyTorch.
type compareResult struct {
	Model string `json:"model"`
	// Backend is gosr's kernels for this row (go, libtorch or auto);
	// IntraOpThreads is -intra-op-threads (libtorch's and PyTorch's).
	Backend        string `json:"backend"`
	IntraOpThreads int    `json:"intra_op_threads"`
	// Auto is what -backend auto chose, after gosr's timed runs.
	Auto   *autoSummary `json:"auto,omitempty"`
	GosrUs float64      `json:"gosr_us"`
	// gosr's side with -threads: goroutines through one pool, their
	// throughput and latency percentiles (PyTorch is timed on one thread).
	Threads        int     `json:"threads"`
	Interop        int     `json:"interop"`
	GosrThroughput float64 `json:"gosr_throughput"`
	GosrP50Us      float64 `json:"gosr_p50_us"`
	GosrP90Us      float64 `json:"gosr_p90_us"`
	GosrP99Us      float64 `json:"gosr_p99_us"`
	// TorchTimedOut: the PyTorch child made no progress for -pt-timeout.
	TorchTimedOut bool    `json:"pytorch_timed_out,omitempty"`
	TorchSRUs     float64 `json:"pytorch_static_runtime_us,omitempty"`
	// InterpUs is the TorchScript interpreter: timed inside a TorchScript
	// loop for .pt models (InterpNoPython), in a Python loop for IR models.
	InterpUs       float64 `json:"pytorch_interpreter_us,omitempty"`
	InterpNoPython bool    `json:"interpreter_timed_without_python,omitempty"`
	Speedup        float64 `json:"speedup_vs_static_runtime,omitempty"`
	SpeedupInterp  float64 `json:"speedup_vs_interpreter,omitempty"`
	GosrDiff       float64 `json:"gosr_max_abs_diff"`
	TorchSRDiff    float64 `json:"pytorch_static_runtime_max_abs_diff,omitempty"`
	// .pt models: gosr against PyTorch's Static Runtime on the same inputs.
	GosrVsTorch float64 `json:"gosr_vs_pytorch_max_abs_diff,omitempty"`
	Agree       bool    `json:"outputs_agree"`
	HasAgree    bool    `json:"-"`
	// Load and prepare: gosr's loaders.Load + NewStaticModule against
	// torch.jit.load + freeze + PyTorch's StaticModule.
	GosrPrepareMs  float64 `json:"gosr_load_prepare_ms,omitempty"`
	TorchPrepareMs float64 `json:"pytorch_load_prepare_ms,omitempty"`
	Torch          string  `json:"torch,omitempty"`
	// TorchInterop and TorchIntraOp are the thread counts PyTorch's
	// child reported (torch.get_num_interop_threads, get_num_threads).
	TorchInterop int    `json:"pytorch_interop,omitempty"`
	TorchIntraOp int    `json:"pytorch_intra_op_threads,omitempty"`
	Note         string `json:"note,omitempty"`
	// Memory: Planner timed gosr (its managed bytes and tensors);
	// PlannerBytes are gosr's managed bytes with every planner, each
	// prepared and run once; the lower bound is the planners'.
	Planner         string           `json:"planner"`
	ManagedBytes    int64            `json:"managed_bytes"`
	ManagedTensors  int              `json:"managed_tensors"`
	PlannerBytes    map[string]int64 `json:"managed_bytes_by_planner"`
	LowerBoundBytes int64            `json:"lower_bound_bytes"`
	// PyTorch Static Runtime's "Total memory managed" and "Total number
	// of managed tensors" from its benchmark report; nil when not known.
	TorchSRManagedBytes   *int64 `json:"pytorch_static_runtime_managed_bytes,omitempty"`
	TorchSRManagedTensors *int   `json:"pytorch_static_runtime_managed_tensors,omitempty"`
}

// planMemory prepares m with every planner and runs it twice (the first
// run learns the tensors' sizes, the plan is made at its end): the managed
// bytes of each plan and the lower bound.
func planMemory(m *model, f flags, cr *compareResult) error {
	cr.PlannerBytes = map[string]int64{}
	for _, p := range memplan.Planners {
		fp := f
		fp.planner = p.Name()
		sm, err := prepare(m, fp)
		if err != nil {
			return err
		}
		r := sm.NewRuntime()
		for range 2 {
			if _, err := r.Run(m.Inputs...); err != nil {
				return fmt.Errorf("%s (planner %s): %w", m.Name, p.Name(), err)
			}
			r.ReleaseOutputs()
		}
		ms := r.MemoryStats()
		cr.PlannerBytes[p.Name()] = ms.ManagedBytes
		cr.LowerBoundBytes = max(cr.LowerBoundBytes, ms.LowerBound)
	}
	return nil
}

var srLine = regexp.MustCompile(`Static runtime ms per iter: ([0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)`)

func findPython(explicit string) string {
	cands := []string{explicit}
	if explicit == "" {
		cands = []string{"/usr/bin/python3", "python3"}
	}
	for _, c := range cands {
		if c == "" {
			continue
		}
		if err := exec.Command(c, "-c", "import torch").Run(); err == nil {
			return c
		}
	}
	return ""
}

func cmdCompare(f flags) error {
	names := []string{f.model}
	dir := false // a directory: a model gosr cannot run is a row, not the end
	if f.model == "all" {
		names = builtin.Names()
	} else if st, err := os.Stat(f.model); err == nil && st.IsDir() {
		// A directory of archives (as testdata/pt): every model in it.
		dir = true
		all, _ := filepath.Glob(filepath.Join(f.model, "*.pt"))
		names = names[:0]
		for _, p := range all {
			if !isDataFile(p) {
				names = append(names, p)
			}
		}
		if len(names) == 0 {
			return fmt.Errorf("%s: no TorchScript archives (*.pt)", f.model)
		}
	}
	backends := []string{f.backendName()}
	if f.backend == backendAll {
		backends = allBackends
	}
	py := findPython(f.python)
	var results []compareResult
	for _, name := range names {
		m, err := loadModel(name, f)
		if err != nil {
			if !dir {
				return err
			}
			results = append(results, compareResult{Model: strings.TrimSuffix(filepath.Base(name), ".pt"),
				Backend: f.backendName(), Note: "gosr cannot load it: " + err.Error()})
			continue
		}
		// PyTorch runs once per model; every backend's row shares it.
		var ts *torchSide
		var torchErr error
		for _, be := range backends {
			fb := f
			fb.backend = be
			cr, res, err := compareGosr(m, fb)
			if err != nil {
				if len(backends) == 1 && !dir {
					return err
				}
				// -backend all: the other backends' rows go on.
				cr.Note = fmt.Sprintf("gosr failed (backend %s): %v", be, err)
				results = append(results, cr)
				continue
			}
			switch {
			case py == "":
				cr.Note = "PyTorch not found (no python3 that imports torch): gosr alone"
			case ts == nil && torchErr == nil:
				if m.script != nil {
					ts, torchErr = pytorchScript(py, m, fb, res)
				} else {
					ts, torchErr = pytorchIR(py, m, fb, res)
				}
			}
			if py != "" {
				if torchErr != nil {
					cr.noteTorchError(torchErr)
				} else {
					ts.apply(&cr)
					if m.script != nil {
						if err := gosrAgainstTorch(m, fb, ts, &cr); err != nil {
							cr.noteTorchError(err)
						}
					} else {
						// IR fixtures: both match the expected outputs PyTorch wrote.
						cr.Agree, cr.HasAgree = cr.TorchSRDiff <= 1e-4 && cr.GosrDiff <= 1e-4, true
					}
				}
			}
			results = append(results, cr)
		}
	}
	if f.json {
		return json.NewEncoder(os.Stdout).Encode(results)
	}
	printCompareHeader(os.Stdout, f, py != "")
	mw := modelWidth(results)
	fmt.Printf("%-*s %-8s %10s %14s %9s %14s %9s %12s %12s %s\n", mw, "model", "backend", "gosr us", "PyTorch SR us", "speedup", "interp us", "speedup", "gosr |diff|", "load+prep ms", "agree")
	for _, c := range results {
		prep := ""
		if c.TorchPrepareMs > 0 {
			prep = fmt.Sprintf("%.1f/%.1f", c.GosrPrepareMs, c.TorchPrepareMs)
		}
		ag := "-"
		if c.HasAgree {
			ag = strconv.FormatBool(c.Agree)
		}
		fmt.Printf("%-*s %-8s %10.3f %14.3f %8.2fx %14.3f %8.2fx %12.3g %12s %s %s\n", mw, c.Model, c.Backend, c.GosrUs, c.TorchSRUs, c.Speedup, c.InterpUs, c.SpeedupInterp, c.GosrDiff, prep, ag, c.Note)
	}
	fmt.Printf("(gosr timed with planner %s; backend: gosr's kernels; |diff|: largest absolute difference from the expected outputs; interp: PyTorch's TorchScript interpreter, in a TorchScript loop for .pt models, a Python loop for IR fixtures; load+prep: gosr's Load + NewStaticModule / PyTorch's torch.jit.load + freeze + StaticModule; agree: gosr's outputs match PyTorch's within 1e-4)\n", plannerLabel(results))
	for _, c := range results {
		printAuto(os.Stdout, "", ", "+c.Model, c.Auto, f.verbose)
	}
	fmt.Println()
	printMemoryTable(os.Stdout, results)
	return nil
}

// compareGosr times gosr's side of one compare row with f's backend.
func compareGosr(m *model, f flags) (compareResult, *runResult, error) {
	cr := compareResult{Model: m.Name, Backend: f.backendName(), IntraOpThreads: f.intraOpThreads()}
	res, err := measure(m, f)
	if err != nil {
		return cr, nil, err
	}
	cr.GosrUs, cr.GosrDiff = res.UsPerIter, res.MaxAbsDiff
	cr.Threads, cr.Interop, cr.GosrThroughput = res.Threads, res.Interop, res.Throughput
	cr.GosrP50Us, cr.GosrP90Us, cr.GosrP99Us = res.P50Us, res.P90Us, res.P99Us
	cr.Planner, cr.ManagedBytes, cr.ManagedTensors = res.Planner, res.ManagedBytes, res.ManagedTensors
	cr.Auto = res.Auto
	if err := planMemory(m, f, &cr); err != nil {
		return cr, nil, err
	}
	return cr, res, nil
}

// noteTorchError records why PyTorch's side of a model is missing; the
// comparison goes on with the next model.
func (cr *compareResult) noteTorchError(err error) {
	if errors.Is(err, errPTTimeout) {
		cr.TorchTimedOut = true
		cr.Note = err.Error()
		return
	}
	cr.Note = "PyTorch failed: " + err.Error()
}

// printCompareHeader says how each side was run: gosr's goroutines, pool
// and inter-op threads, PyTorch's threads.
func printCompareHeader(w io.Writer, f flags, torch bool) {
	threads, interop := max(f.threads, 1), f.interopThreads()
	fmt.Fprintf(w, "gosr: %d goroutine(s) through one pool of %d runtime(s), %d inter-op thread(s); backend %s\n", threads, threads, interop, f.backendLabel())
	if !torch {
		return
	}
	fmt.Fprintf(w, "PyTorch: one caller thread, %s, %d inter-op thread(s)", plural(f.intraOpThreads(), "intra-op thread"), interop)
	if threads > 1 {
		fmt.Fprintf(w, " (single-threaded: gosr's us below are per run on each of its %d goroutines, not comparable one to one; see -json gosr_throughput)", threads)
	}
	fmt.Fprintln(w)
}

// modelWidth is the width of the tables' model column: the longest name.
func modelWidth(results []compareResult) int {
	w := len("managed bytes")
	for _, c := range results {
		w = max(w, len(c.Model))
	}
	return w
}

func plannerLabel(results []compareResult) string {
	if len(results) == 0 {
		return "-"
	}
	return results[0].Planner
}

// printMemoryTable writes compare's memory table: gosr's managed bytes with
// each planner and the lower bound, beside PyTorch Static Runtime's.
func printMemoryTable(w io.Writer, results []compareResult) {
	mw := modelWidth(results)
	fmt.Fprintf(w, "%-*s", mw, "managed bytes")
	for _, p := range memplan.Planners {
		fmt.Fprintf(w, " %14s", p.Name())
	}
	fmt.Fprintf(w, " %12s %9s %14s %14s %14s %s\n", "lower bound", "greedy/lb", "PyTorch SR", "greedy/PyTorch", "tensors gosr/PT", "backend")
	greedy := memplan.GreedyBySize{}.Name()
	for _, c := range results {
		fmt.Fprintf(w, "%-*s", mw, c.Model)
		for _, p := range memplan.Planners {
			fmt.Fprintf(w, " %14d", c.PlannerBytes[p.Name()])
		}
		g := c.PlannerBytes[greedy]
		pt, vsPT, tensors := "-", "-", strconv.Itoa(c.ManagedTensors)+"/-"
		if c.TorchSRManagedBytes != nil {
			pt, vsPT = strconv.FormatInt(*c.TorchSRManagedBytes, 10), ratio(g, *c.TorchSRManagedBytes)
		}
		if c.TorchSRManagedTensors != nil {
			tensors = fmt.Sprintf("%d/%d", c.ManagedTensors, *c.TorchSRManagedTensors)
		}
		fmt.Fprintf(w, " %12d %9s %14s %14s %14s %s\n", c.LowerBoundBytes, ratio(g, c.LowerBoundBytes), pt, vsPT, tensors, c.Backend)
	}
	fmt.Fprintln(w, "(bytes of the slab each planner plans for gosr's managed intermediate tensors; lower bound: the largest total of managed tensors alive at one node; PyTorch SR: its StaticModule.benchmark report's \"Total memory managed\"; tensors: managed tensors, gosr with the timed planner / PyTorch SR)")
}

// isDataFile tells the torch.save files beside archives in a directory
// (NAME.inputs.pt, NAME.expected.pt, NAME.shapes.pt) from the archives.
func isDataFile(p string) bool {
	for _, suf := range []string{".inputs.pt", ".expected.pt", ".shapes.pt"} {
		if strings.HasSuffix(p, suf) {
			return true
		}
	}
	return false
}

// torchSide is PyTorch's side of one model in compare: run once, shared
// by the rows of every backend (-backend all).
type torchSide struct {
	srUs, interpUs float64
	interpNoPython bool
	// srDiff (IR fixtures): PyTorch SR against the expected outputs.
	srDiff           float64
	version          string
	interop, intraOp int
	prepareMs        float64
	managedBytes     *int64
	managedTensors   *int
	// disagree (archives): PyTorch's interpreter and SR disagree.
	disagree bool
	// srOut (archives): PyTorch SR's outputs, for gosrAgainstTorch; nil
	// when the script wrote none.
	srOut []*ivalue.Tensor
}

// apply fills cr's PyTorch columns and the speedups over cr's gosr time.
func (t *torchSide) apply(cr *compareResult) {
	cr.TorchSRUs, cr.InterpUs, cr.InterpNoPython = t.srUs, t.interpUs, t.interpNoPython
	cr.TorchSRDiff = t.srDiff
	cr.Torch, cr.TorchInterop, cr.TorchIntraOp = t.version, t.interop, t.intraOp
	cr.TorchPrepareMs = t.prepareMs
	cr.TorchSRManagedBytes, cr.TorchSRManagedTensors = t.managedBytes, t.managedTensors
	if t.disagree {
		cr.Note = strings.TrimSpace(cr.Note + " PyTorch's interpreter and Static Runtime disagree")
	}
	if cr.GosrUs > 0 {
		cr.Speedup = cr.TorchSRUs / cr.GosrUs
		if cr.InterpUs > 0 {
			cr.SpeedupInterp = cr.InterpUs / cr.GosrUs
		}
	}
}

// runPyTorch times an IR fixture with PyTorch (pytorchIR) and fills cr.
func runPyTorch(py string, m *model, f flags, res *runResult, cr *compareResult) error {
	ts, err := pytorchIR(py, m, f, res)
	if err != nil {
		return err
	}
	ts.apply(cr)
	return nil
}

// pytorchIR times an IR fixture with PyTorch's Static Runtime and
// interpreter in a child python3 (pytorch_bench.py).
func pytorchIR(py string, m *model, f flags, res *runResult) (*torchSide, error) {
	ir, st, cleanup, err := m.files()
	if err != nil {
		return nil, err
	}
	defer cleanup()
	script, err := os.CreateTemp("", "pytorch_bench*.py")
	if err != nil {
		return nil, err
	}
	defer os.Remove(script.Name())
	script.WriteString(pytorchBench)
	script.Close()
	args := append([]string{script.Name(), ir, st}, ptArgs(f, res.UsPerIter)...)
	out, err := runChild(f.ptTimeout, f.intraOpThreads(), py, append(args, strconv.Itoa(f.interopThreads()), strconv.Itoa(f.intraOpThreads()))...)
	if err != nil {
		return nil, err
	}
	var srs []float64
	for _, mm := range srLine.FindAllStringSubmatch(out, -1) {
		v, _ := strconv.ParseFloat(mm[1], 64)
		srs = append(srs, v*1000)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var tail struct {
		Torch          string  `json:"torch"`
		Interop        int     `json:"interop_threads"`
		IntraOp        int     `json:"intraop_threads"`
		Interp         float64 `json:"interp_us_python_loop"`
		Diff           float64 `json:"sr_max_abs_diff"`
		ManagedBytes   *int64  `json:"sr_managed_bytes"`
		ManagedTensors *int    `json:"sr_managed_tensors"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &tail); err != nil {
		return nil, fmt.Errorf("reading PyTorch's results: %v: %s", err, lastLines(out, 5))
	}
	return &torchSide{srUs: stats.Median(srs), interpUs: tail.Interp, srDiff: tail.Diff,
		version: tail.Torch, interop: tail.Interop, intraOp: tail.IntraOp,
		managedBytes: tail.ManagedBytes, managedTensors: tail.ManagedTensors}, nil
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}
