// Command srbench runs models with gosr and compares them with PyTorch.
//
//	srbench run     MODEL [-inputs IN.pt] [-expected OUT.pt] [-iters N] [-warmup N] [-threads N] [-json]
//	srbench ops     MODEL    per-op times (benchmark_individual_ops)
//	srbench graph   MODEL    the graph gosr runs, after its passes
//	srbench compare MODEL|all|DIR [-inputs IN.pt] [-python PATH] [-json]
//	srbench list             the built-in models
//
// MODEL (or -model MODEL) is a built-in name (srbench list), a TorchScript
// archive FILE.pt from torch.jit.save (inputs and expected outputs from
// torch.save files: -inputs/-expected, by default NAME.inputs.pt and
// NAME.expected.pt beside NAME[.variant].pt), or an IR file FILE.ir with
// its tensors (constants c*, inputs in*, expected outputs out*) in
// FILE.safetensors beside it, as scripts/make_testdata.py writes them.
package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gosr/gosr/builtin"
	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/internal/fixture"
	"github.com/gosr/gosr/loaders"
	"github.com/gosr/gosr/staticruntime"
)

//go:embed pytorch_bench.py
var pytorchBench string

type flags struct {
	model        string
	iters        int
	warmup       int
	threads      int
	repeats      int
	json         bool
	python       string
	noOutVariant bool
	noOptimize   bool
	inputs       string
	expected     string
	save         string
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	cmd := os.Args[1]
	fs := flag.NewFlagSet(cmd, flag.ExitOnError)
	var f flags
	fs.StringVar(&f.model, "model", "mlp", "built-in model name, FILE.ir, or all (compare)")
	fs.IntVar(&f.iters, "iters", 0, "timed runs per repeat (0: about 0.2 s worth)")
	fs.IntVar(&f.warmup, "warmup", 100, "untimed runs first")
	fs.IntVar(&f.threads, "threads", 1, "goroutines running at once, each with its own runtime")
	fs.IntVar(&f.repeats, "repeats", 7, "timed repeats; the median is reported")
	fs.BoolVar(&f.json, "json", false, "print one JSON object")
	fs.StringVar(&f.python, "python", "", "python3 with torch (default: found on the machine)")
	fs.BoolVar(&f.noOutVariant, "no-out-variant", false, "disable out variants")
	fs.BoolVar(&f.noOptimize, "no-optimize-memory", false, "no memory planning")
	fs.StringVar(&f.inputs, "inputs", "", "torch.save file with the inputs (a tuple of positional inputs, or one tensor) for a .pt model")
	fs.StringVar(&f.expected, "expected", "", "torch.save file with the expected outputs for a .pt model")
	fs.StringVar(&f.save, "save-outputs", "", "write gosr's outputs here with torch.save's format")
	// Flags may come before or after the model: srbench run MODEL.pt -inputs IN.pt
	args := os.Args[2:]
	for {
		if err := fs.Parse(args); err != nil {
			os.Exit(2)
		}
		if fs.NArg() == 0 {
			break
		}
		f.model = fs.Arg(0)
		args = fs.Args()[1:]
	}
	var err error
	switch cmd {
	case "run":
		err = cmdRun(f)
	case "ops":
		err = cmdOps(f)
	case "graph":
		err = cmdGraph(f)
	case "compare":
		err = cmdCompare(f)
	case "list":
		fmt.Println(strings.Join(builtin.Names(), "\n"))
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "srbench:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: srbench run|ops|graph|compare|list MODEL [flags]   (MODEL: a built-in name, FILE.pt or FILE.ir; srbench CMD -h for flags)")
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

func (f flags) options() *staticruntime.Options {
	o := staticruntime.DefaultOptions()
	o.EnableOutVariant = !f.noOutVariant
	o.OptimizeMemory = !f.noOptimize
	return &o
}

func prepare(m *model, f flags) (*staticruntime.StaticModule, error) {
	g, err := m.graph()
	if err != nil {
		return nil, err
	}
	sm, err := staticruntime.NewStaticModule(g, f.options())
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.Name, err)
	}
	return sm, nil
}

// runResult is what `srbench run -json` prints.
type runResult struct {
	Model           string  `json:"model"`
	UsPerIter       float64 `json:"us_per_iter"`
	Throughput      float64 `json:"throughput"`
	MaxAbsDiff      float64 `json:"max_abs_diff"`
	Nodes           int     `json:"nodes"`
	OutVariantNodes int     `json:"out_variant_nodes"`
	NativeNodes     int     `json:"native_nodes"`
	FallbackNodes   int     `json:"fallback_nodes"`
	ManagedBytes    int64   `json:"managed_bytes"`
	ManagedTensors  int     `json:"managed_tensors"`
	AllocsPerRun    float64 `json:"allocs_per_run"`
	Threads         int     `json:"threads"`
	Planner         string  `json:"planner"`
}

func measure(m *model, f flags) (*runResult, error) {
	sm, err := prepare(m, f)
	if err != nil {
		return nil, err
	}
	r := sm.NewRuntime()
	outs, err := r.Run(m.Inputs...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.Name, err)
	}
	res := &runResult{Model: m.Name, Threads: f.threads}
	res.MaxAbsDiff = -1 // no expected outputs
	if len(m.Expected) > 0 {
		res.MaxAbsDiff = fixture.MaxAbsDiff(fixture.Flatten(outs), m.Expected)
	}
	if f.save != "" {
		if err := saveOutputs(f.save, outs); err != nil {
			return nil, err
		}
	}
	res.OutVariantNodes, res.NativeNodes, res.FallbackNodes = sm.KindCounts()
	res.Nodes = res.OutVariantNodes + res.NativeNodes + res.FallbackNodes
	for i := 0; i < f.warmup; i++ {
		if _, err := r.Run(m.Inputs...); err != nil {
			return nil, err
		}
	}
	ms := r.MemoryStats()
	res.ManagedBytes, res.ManagedTensors, res.Planner = ms.ManagedBytes, ms.ManagedTensors, ms.Planner
	res.AllocsPerRun = testing.AllocsPerRun(200, func() { r.Run(m.Inputs...) })

	iters := f.iters
	if iters <= 0 { // calibrate to about 0.2 s per repeat
		t0 := time.Now()
		n := 0
		for time.Since(t0) < 20*time.Millisecond {
			r.Run(m.Inputs...)
			n++
		}
		iters = max(10, n*10)
	}
	runtimes := make([]*staticruntime.StaticRuntime, f.threads)
	runtimes[0] = r
	for i := 1; i < f.threads; i++ {
		runtimes[i] = r.Clone()
		runtimes[i].Run(m.Inputs...)
	}
	var per []float64
	var tput []float64
	for rep := 0; rep < f.repeats; rep++ {
		var wg sync.WaitGroup
		errs := make([]error, f.threads)
		t0 := time.Now()
		for t := 0; t < f.threads; t++ {
			wg.Add(1)
			go func(t int) {
				defer wg.Done()
				rt := runtimes[t]
				for i := 0; i < iters; i++ {
					if _, err := rt.Run(m.Inputs...); err != nil {
						errs[t] = err
						return
					}
				}
			}(t)
		}
		wg.Wait()
		el := time.Since(t0)
		for _, e := range errs {
			if e != nil {
				return nil, e
			}
		}
		per = append(per, float64(el.Nanoseconds())/1e3/float64(iters))
		tput = append(tput, float64(iters*f.threads)/el.Seconds())
	}
	res.UsPerIter = median(per)
	res.Throughput = median(tput)
	return res, nil
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

func cmdRun(f flags) error {
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
	fmt.Printf("model %s (%d threads)\n", res.Model, res.Threads)
	fmt.Printf("  median time per run: %.3f us\n", res.UsPerIter)
	fmt.Printf("  throughput: %.0f runs/s\n", res.Throughput)
	if res.MaxAbsDiff < 0 {
		fmt.Printf("  max abs diff from PyTorch's outputs: n/a (no expected outputs given)\n")
	} else {
		fmt.Printf("  max abs diff from PyTorch's outputs: %.3g\n", res.MaxAbsDiff)
	}
	fmt.Printf("  nodes: %d (out variant %d, native %d, fallback %d)\n", res.Nodes, res.OutVariantNodes, res.NativeNodes, res.FallbackNodes)
	fmt.Printf("  managed: %d tensors, %d bytes (planner %s)\n", res.ManagedTensors, res.ManagedBytes, res.Planner)
	fmt.Printf("  allocations per run: %.1f\n", res.AllocsPerRun)
	return nil
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
	met, err := sm.NewRuntime().BenchmarkIndividualOps(m.Inputs, f.warmup, iters)
	if err != nil {
		return err
	}
	fmt.Print(met)
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
	for _, n := range sm.Nodes() {
		fmt.Printf("# %-12s %s\n", n.Kind, n.Node)
	}
	return nil
}

// compareResult is one model through gosr and PyTorch.
type compareResult struct {
	Model     string  `json:"model"`
	GosrUs    float64 `json:"gosr_us"`
	TorchSRUs float64 `json:"pytorch_static_runtime_us,omitempty"`
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
	Note           string  `json:"note,omitempty"`
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
	if f.model == "all" {
		names = builtin.Names()
	} else if st, err := os.Stat(f.model); err == nil && st.IsDir() {
		// A directory of archives (as testdata/pt): every model in it.
		all, _ := filepath.Glob(filepath.Join(f.model, "*.pt"))
		names = names[:0]
		for _, p := range all {
			if !strings.HasSuffix(p, ".inputs.pt") && !strings.HasSuffix(p, ".expected.pt") {
				names = append(names, p)
			}
		}
		if len(names) == 0 {
			return fmt.Errorf("%s: no TorchScript archives (*.pt)", f.model)
		}
	}
	py := findPython(f.python)
	var results []compareResult
	for _, name := range names {
		m, err := loadModel(name, f)
		if err != nil {
			return err
		}
		res, err := measure(m, f)
		if err != nil {
			return err
		}
		cr := compareResult{Model: m.Name, GosrUs: res.UsPerIter, GosrDiff: res.MaxAbsDiff}
		if py == "" {
			cr.Note = "PyTorch not found (no python3 that imports torch): gosr alone"
		} else if m.script != nil {
			if err := runPyTorchScript(py, m, f, res, &cr); err != nil {
				cr.Note = "PyTorch failed: " + err.Error()
			}
		} else if err := runPyTorch(py, m, f, res, &cr); err != nil {
			cr.Note = "PyTorch failed: " + err.Error()
		}
		results = append(results, cr)
	}
	if f.json {
		return json.NewEncoder(os.Stdout).Encode(results)
	}
	fmt.Printf("%-22s %10s %14s %9s %14s %9s %12s %12s %s\n", "model", "gosr us", "PyTorch SR us", "speedup", "interp us", "speedup", "gosr |diff|", "load+prep ms", "agree")
	for _, c := range results {
		prep := ""
		if c.TorchPrepareMs > 0 {
			prep = fmt.Sprintf("%.1f/%.1f", c.GosrPrepareMs, c.TorchPrepareMs)
		}
		ag := "-"
		if c.HasAgree {
			ag = strconv.FormatBool(c.Agree)
		} else if c.TorchSRUs > 0 {
			ag = strconv.FormatBool(c.TorchSRDiff <= 1e-4 && c.GosrDiff <= 1e-4)
		}
		fmt.Printf("%-22s %10.3f %14.3f %8.2fx %14.3f %8.2fx %12.3g %12s %s %s\n", c.Model, c.GosrUs, c.TorchSRUs, c.Speedup, c.InterpUs, c.SpeedupInterp, c.GosrDiff, prep, ag, c.Note)
	}
	fmt.Println("(|diff|: largest absolute difference from the expected outputs; interp: PyTorch's TorchScript interpreter, in a TorchScript loop for .pt models, a Python loop for IR fixtures; load+prep: gosr's Load + NewStaticModule / PyTorch's torch.jit.load + freeze + StaticModule; agree: gosr's outputs match PyTorch's within 1e-4)")
	return nil
}

func runPyTorch(py string, m *model, f flags, res *runResult, cr *compareResult) error {
	ir, st, cleanup, err := m.files()
	if err != nil {
		return err
	}
	defer cleanup()
	script, err := os.CreateTemp("", "pytorch_bench*.py")
	if err != nil {
		return err
	}
	defer os.Remove(script.Name())
	script.WriteString(pytorchBench)
	script.Close()
	// As many iterations as gosr ran in about the same time budget.
	iters := max(100, int(200000/max(res.UsPerIter, 1)/4))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, script.Name(), ir, st, strconv.Itoa(f.warmup), strconv.Itoa(iters), strconv.Itoa(f.repeats))
	cmd.Env = append(os.Environ(), "OMP_NUM_THREADS=1", "MKL_NUM_THREADS=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%v: %s", err, lastLines(string(out), 5))
	}
	var srs []float64
	for _, mm := range srLine.FindAllStringSubmatch(string(out), -1) {
		v, _ := strconv.ParseFloat(mm[1], 64)
		srs = append(srs, v*1000)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var tail struct {
		Torch  string  `json:"torch"`
		Interp float64 `json:"interp_us_python_loop"`
		Diff   float64 `json:"sr_max_abs_diff"`
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &tail); err != nil {
		return fmt.Errorf("reading PyTorch's results: %v: %s", err, lastLines(string(out), 5))
	}
	cr.TorchSRUs = median(srs)
	cr.InterpUs = tail.Interp
	if cr.GosrUs > 0 && cr.InterpUs > 0 {
		cr.SpeedupInterp = cr.InterpUs / cr.GosrUs
	}
	cr.TorchSRDiff = tail.Diff
	cr.Torch = tail.Torch
	if cr.GosrUs > 0 {
		cr.Speedup = cr.TorchSRUs / cr.GosrUs
	}
	return nil
}

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}
