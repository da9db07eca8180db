package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/gosr/gosr/builtin"
	"github.com/gosr/gosr/internal/ort"
	"github.com/gosr/gosr/internal/stats"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/memplan"
	"github.com/gosr/gosr/staticruntime"
)

//go:embed pytorch_bench.py
var pytorchBench string

// compareFlags are compare's: gosr's side timed as run times it, PyTorch's
// in a child python3.
type compareFlags struct {
	modelFlags
	benchFlags
	profileFlags
	json bool
	// verbose prints auto's choice per node.
	verbose bool
	// python is -python: python3 with torch ("": found on the machine).
	python string
	// ptTimeout is how long the PyTorch child may go without reporting
	// progress before it is killed (0: the default).
	ptTimeout time.Duration
	// ort is -ort: ONNX Runtime timed beside gosr (auto, on or off).
	ort string
	// ortProfile is -ort-profile: a directory for ONNX Runtime's
	// per-node profiles ("": none).
	ortProfile string
}

func (f *compareFlags) register(fs *flag.FlagSet) {
	f.modelFlags.register(fs)
	f.benchFlags.register(fs)
	f.profileFlags.register(fs)
	fs.BoolVar(&f.json, "json", false, "print the rows as one JSON array")
	fs.BoolVar(&f.verbose, "v", false, "with -backend auto, print each node's choice")
	fs.StringVar(&f.python, "python", "", "python3 with torch (default: found on the machine)")
	fs.StringVar(&f.ort, "ort", ortAuto, "ONNX Runtime beside gosr, on the ONNX file PyTorch's child exports (opset 14): auto (where its library is found: $GOSR_ORT_LIB or the usual places), on (required) or off")
	fs.StringVar(&f.ortProfile, "ort-profile", "", "also run each model's ONNX file "+fmt.Sprint(ortProfileRuns)+" more times in a session of its own with ONNX Runtime's profiler on, and write its per-node times (a Chrome trace, JSON) into this directory, to set beside srbench ops -per-node; the timed runs stay unprofiled")
	fs.DurationVar(&f.ptTimeout, "pt-timeout", defaultPTTimeout, "kill PyTorch's child process for a model once it has gone this long without progress (a timed repeat done), and go on")
}

func (f *compareFlags) validate() error {
	switch f.ort {
	case "", ortAuto, ortOn, ortOff:
	default:
		return fmt.Errorf("-ort %q: want auto, on or off", f.ort)
	}
	if f.ortProfile != "" {
		if st, err := os.Stat(f.ortProfile); err != nil || !st.IsDir() {
			return fmt.Errorf("-ort-profile %q: want an existing directory", f.ortProfile)
		}
		if f.ort == ortOff {
			return fmt.Errorf("-ort-profile needs ONNX Runtime: drop -ort off")
		}
	}
	if f.ptTimeout <= 0 {
		return fmt.Errorf("-pt-timeout %v: want a positive duration (as 120s or 10m)", f.ptTimeout)
	}
	return f.benchFlags.validate("compare")
}

// compareResult is one model through gosr and PyTorch.
type compareResult struct {
	Model string `json:"model"`
	// Backend is gosr's kernels for this row (go, libtorch or auto);
	// IntraOpThreads is -intra-op-threads (gosr's, libtorch's and PyTorch's).
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
	// TorchSRError: why PyTorch's Static Runtime could not build or run
	// the model (TorchSRUs is then 0).
	TorchSRError string `json:"pytorch_static_runtime_error,omitempty"`
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
	// ONNX Runtime on PyTorch's ONNX export of the model (-ort): its time
	// per run, gosr's time over it, the largest difference of its outputs
	// from PyTorch's (nil: none to compare) and whether they agree within
	// 1e-4; ORTNote says why a column is missing.
	ORTUs       float64 `json:"ort_us,omitempty"`
	GosrOverORT float64 `json:"gosr_over_ort,omitempty"`
	// GosrOverORTPaired is the median gosr/ORT of alternating rounds
	// (see [Paired rounds] in ort.go); one goroutine only.
	GosrOverORTPaired float64  `json:"gosr_over_ort_paired,omitempty"`
	ORTDiff           *float64 `json:"ort_vs_pytorch_max_abs_diff,omitempty"`
	ORTAgree          *bool    `json:"ort_outputs_agree,omitempty"`
	ORTVersion        string   `json:"ort_version,omitempty"`
	ORTNote           string   `json:"ort_note,omitempty"`
	// ORTProfile is -ort-profile's file for the model.
	ORTProfile string `json:"ort_profile,omitempty"`
	// FLOPs is one run's floating-point work (ops.FLOPs: convolutions and
	// matrix products, 2 per multiply-add); the GFLOP/s are it over each
	// engine's time per run.
	FLOPs      int64   `json:"flops,omitempty"`
	GosrGFLOPs float64 `json:"gosr_gflops,omitempty"`
	ORTGFLOPs  float64 `json:"ort_gflops,omitempty"`
}

// planMemory prepares m with every planner and runs it twice (the first
// run learns the tensors' sizes, the plan is made at its end): the managed
// bytes of each plan and the lower bound.
func planMemory(m *model, f runtimeFlags, cr *compareResult) error {
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

// run compares each model (one, all built-in ones, or a directory's
// archives) with each backend: gosr's side (compareGosr), then PyTorch's
// once per model, one row per (model, backend).
func (f *compareFlags) run(w io.Writer) error {
	// A backend that cannot load fails before any model is read.
	if err := f.checkBackend(); err != nil {
		return err
	}
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
	if f.ort == "" {
		f.ort = ortAuto
	}
	ortLib, ortInfo, ortMissing, err := f.openORT()
	if err != nil {
		return err
	}
	var results []compareResult
	for _, name := range names {
		m, err := loadModel(name, f.modelFlags)
		if err != nil {
			if !dir {
				return err
			}
			results = append(results, compareResult{Model: strings.TrimSuffix(filepath.Base(name), ".pt"),
				Backend: f.backendName(), Note: "gosr cannot load it: " + err.Error()})
			continue
		}
		// PyTorch runs once per model (exporting it to ONNX when ONNX
		// Runtime is on); every backend's row shares it, and ONNX
		// Runtime's time.
		var ts *torchSide
		var torchErr error
		var onnxDir string
		var ortRes *ortSide
		var ortErr error
		for _, be := range backends {
			fb := *f
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
				// ONNX Runtime runs the ONNX file beside the archive, else
				// PyTorch's export of the module into export.
				onnx, export := "", ""
				if ortLib != "" {
					onnx = m.onnxPath
					if onnx == "" {
						if onnxDir, err = os.MkdirTemp("", "srbench-onnx"); err != nil {
							return err
						}
						export = filepath.Join(onnxDir, "model.onnx")
						onnx = export
					}
				}
				if m.script != nil {
					ts, torchErr = pytorchScript(py, m, fb, res, export)
				} else {
					ts, torchErr = pytorchIR(py, m, fb, res, export)
				}
				switch {
				case onnx == "":
				case export != "" && torchErr != nil:
					ortErr = fmt.Errorf("no ONNX export: PyTorch failed")
				case export != "" && ts.onnxError != "":
					ortErr = fmt.Errorf("torch.onnx.export failed: %s", ts.onnxError)
				default:
					// PyTorch's outputs where it ran; else (a file beside
					// the archive) the expected ones.
					want := m.Expected
					if m.script != nil && torchErr == nil {
						want = ts.srOut
					}
					var round func(int) (float64, error)
					var closeRound func()
					if fb.threads <= 1 {
						if round, closeRound, err = gosrRounds(m, fb); err != nil {
							return err
						}
					}
					ortRes, ortErr = timeORT(ortLib, onnx, m, fb, want, round)
					if closeRound != nil {
						closeRound()
					}
				}
			}
			if ortLib != "" {
				cr.ORTVersion = ortInfo.Version
				switch {
				case py == "":
					cr.applyORT(nil, fmt.Errorf("no ONNX export without PyTorch"))
				default:
					cr.applyORT(ortRes, ortErr)
					if m.onnxPath != "" && cr.ORTUs > 0 {
						cr.ORTNote = strings.TrimSpace(cr.ORTNote + " ONNX Runtime ran " + filepath.Base(m.onnxPath) + ", the ONNX file beside the archive")
					}
				}
			}
			if py != "" {
				if torchErr != nil {
					cr.noteTorchError(torchErr)
				} else {
					ts.apply(&cr)
					if m.script != nil {
						if err := gosrAgainstTorch(m, fb.runtimeFlags, ts, &cr); err != nil {
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
		if onnxDir != "" {
			os.RemoveAll(onnxDir)
		}
	}
	if f.json {
		return json.NewEncoder(w).Encode(results)
	}
	printCompareHeader(w, f.benchFlags, py != "")
	printORTHeader(w, ortLib, ortInfo, ortMissing, f.intraOpThreads())
	mw := modelWidth(results)
	ortCols := ""
	if ortLib != "" {
		ortCols = fmt.Sprintf(" %10s %9s %7s %11s %8s", "ORT us", "gosr/ORT", "paired", "ORT |diff|", "ORT GF/s")
	}
	fmt.Fprintf(w, "%-*s %-8s %10s %8s %14s %9s %14s %9s%s %8s %12s %12s %s\n", mw, "model", "backend", "gosr us", "gosr GF/s", "PyTorch SR us", "speedup", "interp us", "speedup", ortCols, "GFLOP", "gosr |diff|", "load+prep ms", "agree")
	for _, c := range results {
		prep := ""
		if c.TorchPrepareMs > 0 {
			prep = fmt.Sprintf("%.1f/%.1f", c.GosrPrepareMs, c.TorchPrepareMs)
		}
		ag := "-"
		if c.HasAgree {
			ag = strconv.FormatBool(c.Agree)
		}
		note := c.Note
		if ortLib != "" {
			ortCols = fmt.Sprintf(" %10s %9s %7s %11s %8s", "-", "-", "-", "-", "-")
			if c.ORTUs > 0 {
				diff := "-"
				if c.ORTDiff != nil {
					diff = fmt.Sprintf("%.3g", *c.ORTDiff)
				}
				paired := "-"
				if c.GosrOverORTPaired > 0 {
					paired = fmt.Sprintf("%.2fx", c.GosrOverORTPaired)
				}
				ortCols = fmt.Sprintf(" %10.3f %8.2fx %7s %11s %8s", c.ORTUs, c.GosrOverORT, paired, diff, rate(c.ORTGFLOPs))
			}
			note = strings.TrimSpace(note + " " + c.ORTNote)
		}
		fl := "-"
		if c.FLOPs > 0 {
			fl = fmt.Sprintf("%.4g", float64(c.FLOPs)/1e9)
		}
		fmt.Fprintf(w, "%-*s %-8s %10.3f %9s %14s %9s %14s %9s%s %8s %12.3g %12s %s %s\n", mw, c.Model, c.Backend, c.GosrUs, rate(c.GosrGFLOPs), usOrDash(c.TorchSRUs), ratioOrDash(c.Speedup), usOrDash(c.InterpUs), ratioOrDash(c.SpeedupInterp), ortCols, fl, c.GosrDiff, prep, ag, note)
	}
	ortKey := ""
	if ortLib != "" {
		ortKey = "; ORT: ONNX Runtime's time per run on PyTorch's ONNX export of the model, gosr/ORT gosr's time over it (above 1: gosr slower), paired: the median gosr/ORT of alternating rounds of the two (the same minute of the machine on both sides), ORT |diff|: its largest absolute difference from PyTorch's outputs"
	}
	fmt.Fprintf(w, "(gosr timed with planner %s; backend: gosr's kernels; GFLOP: one run's convolutions and matrix products, 2 FLOPs per multiply-add, and GF/s that over each engine's time; |diff|: largest absolute difference from the expected outputs; interp: PyTorch's TorchScript interpreter, in a TorchScript loop for .pt models, a Python loop for IR fixtures%s; load+prep: gosr's Load + NewStaticModule / PyTorch's torch.jit.load + freeze + StaticModule; agree: gosr's outputs match PyTorch's within 1e-4)\n", plannerLabel(results), ortKey)
	for _, c := range results {
		printAuto(w, "", ", "+c.Model, c.Auto, f.verbose)
	}
	for _, c := range results {
		if c.ORTProfile != "" {
			fmt.Fprintf(w, "ONNX Runtime's per-node profile of %s (%d runs): %s\n", c.Model, ortProfileRuns, c.ORTProfile)
		}
	}
	fmt.Fprintln(w)
	printMemoryTable(w, results)
	return nil
}

// usOrDash and ratioOrDash print a time (us) or a ratio, "-" for none.
func usOrDash(us float64) string {
	if us <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", us)
}

func ratioOrDash(r float64) string {
	if r <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", r)
}

// compareGosr times gosr's side of one compare row with f's backend.
func compareGosr(m *model, f compareFlags) (compareResult, *runResult, error) {
	cr := compareResult{Model: m.Name, Backend: f.backendName(), IntraOpThreads: f.intraOpThreads()}
	res, err := measure(m, f.benchFlags, "")
	if err != nil {
		return cr, nil, err
	}
	cr.GosrUs, cr.GosrDiff = res.UsPerIter, res.MaxAbsDiff
	cr.Threads, cr.Interop, cr.GosrThroughput = res.Threads, res.Interop, res.Throughput
	cr.GosrP50Us, cr.GosrP90Us, cr.GosrP99Us = res.P50Us, res.P90Us, res.P99Us
	cr.Planner, cr.ManagedBytes, cr.ManagedTensors = res.Planner, res.ManagedBytes, res.ManagedTensors
	cr.Auto = res.Auto
	if err := planMemory(m, f.runtimeFlags, &cr); err != nil {
		return cr, nil, err
	}
	if err := countFLOPs(m, f.runtimeFlags, &cr); err != nil {
		return cr, nil, err
	}
	return cr, res, nil
}

// countFLOPs runs m once more, counting the floating-point work of its
// convolutions and matrix products (ops.FLOPs), and gives gosr's achieved
// GFLOP/s at its measured time. The same count divided by each engine's
// time gives theirs.
func countFLOPs(m *model, f runtimeFlags, cr *compareResult) error {
	sm, err := prepare(m, f)
	if err != nil {
		return err
	}
	defer sm.Close()
	met, err := sm.NewRuntime().BenchmarkIndividualOps(m.Inputs, 0, 1)
	if err != nil {
		return fmt.Errorf("%s: counting FLOPs: %w", m.Name, err)
	}
	cr.FLOPs = met.FLOPs
	cr.GosrGFLOPs = gflops(cr.FLOPs, cr.GosrUs)
	return nil
}

// rate prints a GFLOP/s column ("-" when unknown).
func rate(g float64) string {
	if g <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", g)
}

// gflops is flops done in us microseconds, in GFLOP/s (0 when unknown).
func gflops(flops int64, us float64) float64 {
	if flops <= 0 || us <= 0 {
		return 0
	}
	return float64(flops) / us / 1e3
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
func printCompareHeader(w io.Writer, f benchFlags, torch bool) {
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

// printORTHeader says how ONNX Runtime ran, or why it did not.
func printORTHeader(w io.Writer, lib string, info ort.Info, missing string, intraOp int) {
	switch {
	case lib != "":
		fmt.Fprintf(w, "ONNX Runtime %s (%s): one caller thread, %s, graph optimization all, on torch.onnx.export (opset %d) of the same module\n", info.Version, lib, plural(intraOp, "intra-op thread"), ortOpset)
	case missing != "":
		fmt.Fprintf(w, "ONNX Runtime: not found (-ort auto; set $%s): %s\n", envORTLib, missing)
	}
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
	// srOut (archives): PyTorch SR's outputs, for gosrAgainstTorch and
	// ONNX Runtime (the interpreter's where the two disagree, or SR
	// failed); nil when the script wrote none.
	srOut []*ivalue.Tensor
	// onnxError: torch.onnx.export of the model failed (asked for).
	onnxError string
	// srError: PyTorch's Static Runtime could not build or run the
	// model (archives); srOut is then the interpreter's outputs.
	srError string
}

// apply fills cr's PyTorch columns and the speedups over cr's gosr time.
func (t *torchSide) apply(cr *compareResult) {
	cr.TorchSRUs, cr.InterpUs, cr.InterpNoPython = t.srUs, t.interpUs, t.interpNoPython
	cr.TorchSRDiff = t.srDiff
	cr.Torch, cr.TorchInterop, cr.TorchIntraOp = t.version, t.interop, t.intraOp
	cr.TorchPrepareMs = t.prepareMs
	cr.TorchSRManagedBytes, cr.TorchSRManagedTensors = t.managedBytes, t.managedTensors
	if t.disagree {
		cr.Note = strings.TrimSpace(cr.Note + " PyTorch's interpreter and Static Runtime disagree; outputs checked against the interpreter")
	}
	if t.srError != "" {
		cr.TorchSRError = t.srError
		cr.Note = strings.TrimSpace(cr.Note + " PyTorch's Static Runtime failed (" + t.srError + "); outputs checked against its interpreter")
	}
	if cr.GosrUs > 0 {
		if cr.TorchSRUs > 0 {
			cr.Speedup = cr.TorchSRUs / cr.GosrUs
		}
		if cr.InterpUs > 0 {
			cr.SpeedupInterp = cr.InterpUs / cr.GosrUs
		}
	}
}

// pytorchIR times an IR fixture with PyTorch's Static Runtime and
// interpreter in a child python3 (pytorch_bench.py), which exports the
// graph to ONNX at onnx unless it is "".
func pytorchIR(py string, m *model, f compareFlags, res *runResult, onnx string) (*torchSide, error) {
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
	args := append([]string{script.Name(), ir, st}, ptArgs(f.timingFlags, res.UsPerIter)...)
	args = append(args, strconv.Itoa(f.interopThreads()), strconv.Itoa(f.intraOpThreads()))
	if onnx != "" {
		args = append(args, onnx)
	}
	out, err := runChild(f.ptTimeout, f.intraOpThreads(), py, args...)
	if err != nil {
		return nil, err
	}
	var tail struct {
		ONNXError      string  `json:"onnx_error"`
		Torch          string  `json:"torch"`
		Interop        int     `json:"interop_threads"`
		IntraOp        int     `json:"intraop_threads"`
		Interp         float64 `json:"interp_us_python_loop"`
		Diff           float64 `json:"sr_max_abs_diff"`
		ManagedBytes   *int64  `json:"sr_managed_bytes"`
		ManagedTensors *int    `json:"sr_managed_tensors"`
	}
	srs, err := readChild(out, &tail)
	if err != nil {
		return nil, err
	}
	return &torchSide{srUs: stats.Median(srs), interpUs: tail.Interp, srDiff: tail.Diff,
		version: tail.Torch, interop: tail.Interop, intraOp: tail.IntraOp,
		managedBytes: tail.ManagedBytes, managedTensors: tail.ManagedTensors, onnxError: tail.ONNXError}, nil
}

// gosrRounds prepares a runtime of its own for m and returns a function
// timing iters runs of it (microseconds a run), for ONNX Runtime's
// paired rounds, and the function that closes it.
func gosrRounds(m *model, f compareFlags) (func(iters int) (float64, error), func(), error) {
	sm, err := prepare(m, f.runtimeFlags)
	if err != nil {
		return nil, nil, err
	}
	// Through a pool of one, as measure times gosr's own row.
	pool := staticruntime.NewPool(sm, 1)
	ctx := context.Background()
	run := func(r *staticruntime.StaticRuntime) error {
		_, err := r.Run(m.Inputs...)
		if f.manageOutputs {
			r.ReleaseOutputs()
		}
		return err
	}
	if err := pool.Do(ctx, func(r *staticruntime.StaticRuntime) error { return warmUp(r, f.warmup, run) }); err != nil {
		sm.Close()
		return nil, nil, fmt.Errorf("%s: %w", m.Name, err)
	}
	round := func(iters int) (float64, error) {
		t0 := time.Now()
		for range iters {
			if err := pool.Do(ctx, run); err != nil {
				return 0, fmt.Errorf("%s: %w", m.Name, err)
			}
		}
		return float64(time.Since(t0).Nanoseconds()) / 1e3 / float64(iters), nil
	}
	return round, func() { sm.Close() }, nil
}
