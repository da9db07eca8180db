// Command srbench runs models with gosr and compares them with PyTorch.
//
//	srbench run     -model NAME|FILE.ir [-iters N] [-warmup N] [-threads N] [-json]
//	srbench ops     -model NAME|FILE.ir    per-op times (benchmark_individual_ops)
//	srbench graph   -model NAME|FILE.ir    the graph gosr runs, after its passes
//	srbench compare -model NAME|FILE.ir|all [-python PATH] [-json]
//	srbench list                           the built-in models
//
// A model is a built-in name (srbench list) or an IR file FILE.ir with its
// tensors (constants c*, inputs in*, expected outputs out*) in
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
	if err := fs.Parse(os.Args[2:]); err != nil {
		os.Exit(2)
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
	fmt.Fprintln(os.Stderr, "usage: srbench run|ops|graph|compare|list -model NAME|FILE.ir [flags]; srbench CMD -h for flags")
	os.Exit(2)
}

// model is a loaded fixture with the paths PyTorch can read.
type model struct {
	*fixture.Case
	irPath, stPath string
}

func loadModel(spec string) (*model, error) {
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
	g, err := graph.Parse(m.IR, &graph.ParseOptions{Tensors: m.Consts})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", m.Name, err)
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
	res.MaxAbsDiff = fixture.MaxAbsDiff(fixture.Flatten(outs), m.Expected)
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
	m, err := loadModel(f.model)
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
	fmt.Printf("  max abs diff from PyTorch's outputs: %.3g\n", res.MaxAbsDiff)
	fmt.Printf("  nodes: %d (out variant %d, native %d, fallback %d)\n", res.Nodes, res.OutVariantNodes, res.NativeNodes, res.FallbackNodes)
	fmt.Printf("  managed: %d tensors, %d bytes (planner %s)\n", res.ManagedTensors, res.ManagedBytes, res.Planner)
	fmt.Printf("  allocations per run: %.1f\n", res.AllocsPerRun)
	return nil
}

func cmdOps(f flags) error {
	m, err := loadModel(f.model)
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
	m, err := loadModel(f.model)
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
	Model       string  `json:"model"`
	GosrUs      float64 `json:"gosr_us"`
	TorchSRUs   float64 `json:"pytorch_static_runtime_us,omitempty"`
	InterpUs    float64 `json:"pytorch_interpreter_python_loop_us,omitempty"`
	Speedup     float64 `json:"speedup_vs_static_runtime,omitempty"`
	GosrDiff    float64 `json:"gosr_max_abs_diff"`
	TorchSRDiff float64 `json:"pytorch_static_runtime_max_abs_diff"`
	Torch       string  `json:"torch,omitempty"`
	Note        string  `json:"note,omitempty"`
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
	}
	py := findPython(f.python)
	var results []compareResult
	for _, name := range names {
		m, err := loadModel(name)
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
		} else if err := runPyTorch(py, m, f, res, &cr); err != nil {
			cr.Note = "PyTorch failed: " + err.Error()
		}
		results = append(results, cr)
	}
	if f.json {
		return json.NewEncoder(os.Stdout).Encode(results)
	}
	fmt.Printf("%-18s %10s %14s %9s %14s %14s %14s\n", "model", "gosr us", "PyTorch SR us", "speedup", "interp(py) us", "gosr |diff|", "PyTorch |diff|")
	for _, c := range results {
		fmt.Printf("%-18s %10.3f %14.3f %8.2fx %14.3f %14.3g %14.3g %s\n", c.Model, c.GosrUs, c.TorchSRUs, c.Speedup, c.InterpUs, c.GosrDiff, c.TorchSRDiff, c.Note)
	}
	fmt.Println("(|diff|: largest absolute difference from the outputs PyTorch recorded in the fixture; interp(py): TorchScript interpreter timed in a Python loop)")
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
