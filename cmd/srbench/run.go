package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/gosr/gosr/memplan"
	"github.com/gosr/gosr/staticruntime"
)

// runFlags are run's: a model timed through a pool of runtimes, or a
// torch.package with Python fallbacks timed with each -interpreters count.
type runFlags struct {
	modelFlags
	benchFlags
	profileFlags
	json bool
	// verbose prints the memory plan in full and auto's choice per node.
	verbose bool
	// save is -save-outputs: gosr's outputs, written with torch.save's
	// format.
	save string
	// interps is -interpreters as given; interpList its counts (validate
	// reads them): for a package with Python fallbacks, one row per
	// count, each a manager of that many interpreters.
	interps    string
	interpList []int
	// round is how long each configuration runs per round of a package
	// run (when -iters is 0).
	round time.Duration
	// scaling is -intra-op-scaling as given; scalingList its counts
	// (nil: off). See [Intra-op scaling].
	scaling     string
	scalingList []int
}

func (f *runFlags) register(fs *flag.FlagSet) {
	f.modelFlags.register(fs)
	f.benchFlags.register(fs)
	f.profileFlags.register(fs)
	fs.BoolVar(&f.json, "json", false, "print one JSON object")
	fs.BoolVar(&f.verbose, "v", false, "print the memory plan in full (storage groups, or each tensor's offset, size and lifetime) and, with -backend auto, each node's choice")
	fs.StringVar(&f.save, "save-outputs", "", "write gosr's outputs here with torch.save's format")
	fs.StringVar(&f.interps, "interpreters", "1", "torch.package with Python fallbacks: private interpreters per configuration, comma separated (1,2: one row each, rounds interleaved)")
	fs.StringVar(&f.scaling, "intra-op-scaling", "", "intra-op thread counts to compare, comma separated (as 1,2): the model on one runtime per count, -repeats rounds of -iters runs each with the counts interleaved in every round; prints each count's median and its speed-up over the first (the median of the rounds' ratios); gosr's Go kernels, one goroutine")
	fs.DurationVar(&f.round, "round", time.Second, "torch.package with Python fallbacks: how long each configuration runs per round (-repeats rounds; -iters N: N runs per goroutine instead)")
}

func (f *runFlags) validate() error {
	if err := f.benchFlags.validate("run"); err != nil {
		return err
	}
	var err error
	if f.interpList, err = parseInterpreters(f.interps); err != nil {
		return err
	}
	if f.scaling != "" {
		if f.scalingList, err = parseScaling(f.scaling); err != nil {
			return err
		}
		if f.threads > 1 {
			return fmt.Errorf("-intra-op-scaling times one runtime per count: -threads %d is not for it", f.threads)
		}
	}
	if f.round <= 0 {
		return fmt.Errorf("-round %v: want a positive duration (as 1s)", f.round)
	}
	return nil
}

// run times the model (measure), or a package with Python fallbacks
// (measureFallback), and prints the result.
func (f *runFlags) run(w io.Writer) error {
	// A backend that cannot load fails before any model is read.
	if err := f.checkBackend(); err != nil {
		return err
	}
	if strings.HasSuffix(f.model, ".pt") && isFallbackPackage(f.model) {
		return cmdRunPackage(*f, w)
	}
	m, err := loadModel(f.model, f.modelFlags)
	if err != nil {
		return err
	}
	if f.scalingList != nil {
		sr, err := measureScaling(m, f.benchFlags, f.scalingList)
		if err != nil {
			return err
		}
		return sr.print(w, f.json)
	}
	res, err := measure(m, f.benchFlags, f.save)
	if err != nil {
		return err
	}
	if f.json {
		return json.NewEncoder(w).Encode(res)
	}
	fmt.Fprintf(w, "model %s (backend %s; threads %d through one pool of %d runtimes, interop %d)\n", res.Model, f.backendLabel(), res.Threads, res.Threads, res.Interop)
	fmt.Fprintf(w, "  median time per run: %.3f us (wall time of a repeat / runs per goroutine)\n", res.UsPerIter)
	fmt.Fprintf(w, "  throughput: %.0f runs/s (median of %d repeats)\n", res.Throughput, max(f.repeats, 1))
	fmt.Fprintf(w, "  latency: p50 %.3f us, p90 %.3f us, p99 %.3f us, mean %.3f us (%d requests)\n", res.P50Us, res.P90Us, res.P99Us, res.MeanUs, res.Requests)
	if res.MaxAbsDiff < 0 {
		fmt.Fprintf(w, "  max abs diff from PyTorch's outputs: n/a (no expected outputs given)\n")
	} else {
		fmt.Fprintf(w, "  max abs diff from PyTorch's outputs: %.3g\n", res.MaxAbsDiff)
	}
	fmt.Fprintf(w, "  nodes: %d (out variant %d, native %d, fallback %d)\n", res.Nodes, res.OutVariantNodes, res.NativeNodes, res.FallbackNodes)
	fmt.Fprintf(w, "  allocations per run: %.1f\n", res.AllocsPerRun)
	printMemory(w, res, f.verbose)
	if f.noOptimize || f.noOutVariant {
		fmt.Fprintln(w, "  (nothing managed: -no-optimize-memory or -no-out-variant)")
	}
	printAuto(w, "", "", res.Auto, f.verbose)
	if sp := res.Split; sp != nil {
		if sp.Choice == "" {
			fmt.Fprintf(w, "  intra-op split: every node splits where the kernels allow (no calibration)\n")
		} else {
			fmt.Fprintf(w, "  intra-op split: %s kept by the calibration, %d of %d nodes alone\n", sp.Choice, sp.Alone, sp.Nodes)
		}
	}
	return nil
}

// splitSummary is a runtime's intra-op split choice
// (staticruntime.IntraOpSplit).
type splitSummary struct {
	// Choice is per-node, all-split or all-alone; "" without calibration.
	Choice string `json:"choice"`
	Alone  int    `json:"alone_nodes"`
	Nodes  int    `json:"nodes"`
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
	fmt.Fprintf(w, "  planned overwrites (tensors written over their input): %d\n", res.Overwrites)
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
		if ow := t.Overwrites; ow.OK && i < len(ms.Offsets) && ms.Offsets[ow.Index] == off {
			over = fmt.Sprintf(", overwrites tensor %d", ow.Index)
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

// runResult is what `srbench run -json` prints.
type runResult struct {
	Model string `json:"model"`
	// Backend is the kernels (-backend: go, libtorch or auto);
	// IntraOpThreads is -intra-op-threads (libtorch and auto, or above 1).
	Backend        string `json:"backend"`
	IntraOpThreads int    `json:"intra_op_threads,omitempty"`
	// Auto is what -backend auto chose, after the timed runs.
	Auto *autoSummary `json:"auto,omitempty"`
	// Split is what the intra-op split calibration chose (-intra-op-
	// threads above 1), before the timed runs.
	Split *splitSummary `json:"intra_op_split,omitempty"`

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
	// Overwrites counts tensors written over their input (planned
	// overwrites).
	Overwrites    int  `json:"overwrites"`
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
	res.Replans, res.Overwrites = ms.Replans, ms.Overwrites
	res.ManageOutputs, res.OutputTensors, res.OutputBytes = manageOutputs, ms.OutputTensors, ms.OutputBytes
}
