package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gosr/gosr/internal/reference"
	"github.com/gosr/gosr/internal/stats"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders"
	"github.com/gosr/gosr/pyfallback"
	"github.com/gosr/gosr/staticruntime"
)

// isFallbackPackage tells a torch.package archive written by
// scripts/gosr_fallback.py (a scripted model at model/model.pkl, or the
// manifest of its python_call ops) from a torch.jit.save archive.
func isFallbackPackage(path string) bool {
	p, err := loaders.OpenPackage(path)
	if err != nil {
		return false
	}
	defer p.Close()
	return p.Has("model/model.pkl") || p.Has("__gosr__/fallbacks.json")
}

// parseInterpreters reads -interpreters: interpreter counts, comma
// separated ("1,2").
func parseInterpreters(s string) ([]int, error) {
	return parseCounts("-interpreters", s)
}

// fallbackRow is one configuration of a package run: N interpreters
// under T goroutines. Throughput is the median over rounds; latencies are
// over every request of every round.
type fallbackRow struct {
	Interpreters int     `json:"interpreters"`
	Threads      int     `json:"threads"`
	Throughput   float64 `json:"throughput"`
	P50Us        float64 `json:"p50_us"`
	P90Us        float64 `json:"p90_us"`
	P99Us        float64 `json:"p99_us"`
	MeanUs       float64 `json:"mean_us"`
	Requests     int     `json:"requests"`
	// Ratio is Throughput over the first row's (the ratio of medians).
	Ratio float64 `json:"ratio"`
	// PairedRatio is the median over rounds of this row's throughput over
	// the first row's in the same round: rounds are interleaved, so it
	// does not follow the machine's drift from round to round as the
	// ratio of medians can.
	PairedRatio float64   `json:"paired_ratio"`
	RoundTputs  []float64 `json:"round_throughputs"`
	MaxAbsDiff  float64   `json:"max_abs_diff"`
	CasesTested int       `json:"cases_checked"`
	// InterpBusy is the share of the interpreters' time spent running a
	// call (holding the GIL), over every round; CallUs the mean time one
	// call held its interpreter (conversions and Python).
	InterpBusy float64 `json:"interpreter_busy"`
	CallUs     float64 `json:"python_call_us"`
	// HandedOver: calls that ran on their interpreter's own thread, the
	// caller's thread having run another copy (pyfallback's thread rule).
	HandedOver uint64 `json:"python_calls_handed_over"`
	Calls      uint64 `json:"python_calls"`
}

// interpStartup is one interpreter as its manager first started it.
type interpStartup struct {
	Manager   int     `json:"manager_interpreters"`
	ID        int     `json:"id"`
	StartupMs float64 `json:"startup_ms"`
	// Reused: taken from the process's idle interpreters (a manager
	// closed before), so its start-up was paid earlier.
	Reused bool `json:"reused"`
	// PrivateLibrary: the interpreter runs a private copy of libpython
	// (pyfallback.InterpreterInfo).
	PrivateLibrary bool `json:"private_library"`
}

// rssStep is the process's resident memory around one manager's first
// start: before NewManager, after it, and after loading the package and
// warming up (the packaged modules imported in every interpreter).
type rssStep struct {
	Manager         int   `json:"manager_interpreters"`
	NewInterpreters int   `json:"new_interpreters"`
	BeforeKB        int64 `json:"rss_before_kb"`
	StartedKB       int64 `json:"rss_started_kb"`
	LoadedKB        int64 `json:"rss_loaded_kb"`
	// PerInterpreterKB is (started - before) / new interpreters; 0 when
	// none was new.
	PerInterpreterKB int64 `json:"rss_per_interpreter_kb"`
}

// fallbackResult is what `srbench run PACKAGE.pt -json` prints.
type fallbackResult struct {
	Model        string          `json:"model"`
	Backend      string          `json:"backend"`
	Package      string          `json:"package"`
	Inputs       string          `json:"inputs"`
	Cases        int             `json:"cases"`
	PythonNodes  int             `json:"python_call_nodes"`
	Nodes        int             `json:"nodes"`
	Rounds       int             `json:"rounds"`
	RoundMs      float64         `json:"round_ms,omitempty"`
	ItersPerG    int             `json:"iters_per_goroutine,omitempty"`
	MaxInterps   int             `json:"max_interpreters"`
	Rows         []fallbackRow   `json:"rows"`
	Startup      []interpStartup `json:"interpreter_startup"`
	RSS          []rssStep       `json:"rss"`
	ManagersKept bool            `json:"managers_kept"`
	// GOMAXPROCS while the rounds ran, and before gosr added its spare P
	// (pyfallback.SpareProc); the two are equal when none was added.
	GOMAXPROCS       int `json:"gomaxprocs"`
	GOMAXPROCSBefore int `json:"gomaxprocs_before_managers"`
}

// fallbackCases reads the cases (argument lists) and, when known, the
// expected outputs of each: from -inputs (a list of argument lists, or a
// dict with "inputs" and maybe "outputs") or PATH.expected.pt; -expected
// is a list of outputs or such a dict.
func fallbackCases(path string, f modelFlags) (file string, cases [][]ivalue.IValue, expected []ivalue.IValue, err error) {
	file = f.inputs
	if file == "" {
		file = strings.TrimSuffix(path, ".pt") + ".expected.pt"
		if _, err := os.Stat(file); err != nil {
			return "", nil, nil, fmt.Errorf("%s: no inputs: pass -inputs FILE.pt (a torch.save of a list of argument lists), or put them beside it as %s", path, file)
		}
	}
	v, err := loaders.ReadTorchSave(file)
	if err != nil {
		return "", nil, nil, err
	}
	list := v
	if v.Kind() == ivalue.KindDict {
		in, ok := v.Dict().Get(ivalue.FromString("inputs"))
		if !ok {
			return "", nil, nil, fmt.Errorf("%s: a dict without \"inputs\" (want a list of argument lists, or NAME.expected.pt's dict)", file)
		}
		list = in
		if out, ok := v.Dict().Get(ivalue.FromString("outputs")); ok && out.Kind() == ivalue.KindList {
			expected = out.List().Items
		}
	}
	if list.Kind() != ivalue.KindList && list.Kind() != ivalue.KindTuple {
		return "", nil, nil, fmt.Errorf("%s: inputs are a %s, want a list of argument lists", file, list.Kind())
	}
	for i, c := range list.List().Items {
		if c.Kind() != ivalue.KindList && c.Kind() != ivalue.KindTuple {
			return "", nil, nil, fmt.Errorf("%s: case %d is a %s, want the list of the model's arguments", file, i, c.Kind())
		}
		cases = append(cases, c.List().Items)
	}
	if len(cases) == 0 {
		return "", nil, nil, fmt.Errorf("%s: no cases", file)
	}
	if f.expected != "" {
		e, err := loaders.ReadTorchSave(f.expected)
		if err != nil {
			return "", nil, nil, err
		}
		if e.Kind() == ivalue.KindDict {
			e, _ = e.Dict().Get(ivalue.FromString("outputs"))
		}
		if e.Kind() != ivalue.KindList {
			return "", nil, nil, fmt.Errorf("%s: want a list of outputs, one per case (or a dict with \"outputs\")", f.expected)
		}
		expected = e.List().Items
	}
	if expected != nil && len(expected) != len(cases) {
		return "", nil, nil, fmt.Errorf("%s: %d expected outputs for %d cases", file, len(expected), len(cases))
	}
	return file, cases, expected, nil
}

// fbConfig is one row's machinery: a manager of n interpreters, the
// package loaded in it and a pool of runtimes over its StaticModule.
type fbConfig struct {
	n       int
	m       *pyfallback.Manager
	sm      *staticruntime.StaticModule
	pool    *staticruntime.Pool
	lat     []int64
	tputs   []float64
	started bool // opened once: start-up and RSS recorded
	// Interpreter time over the rounds: GIL held, calls, and the
	// interpreters' wall time (round length x n).
	busy, wall    time.Duration
	calls, handed uint64
}

// interpTotals sums the manager's interpreters' busy time, calls and
// calls handed over.
func (c *fbConfig) interpTotals() (time.Duration, uint64, uint64) {
	var b time.Duration
	var n, h uint64
	for _, in := range c.m.Interpreters() {
		b += in.Busy
		n += in.Calls
		h += in.HandedOver
	}
	return b, n, h
}

// open starts the manager, loads the package, checks every case against
// the expected outputs and warms every runtime (the packaged modules are
// then imported in the interpreters the runtimes hold). The first time, it
// records start-up times and resident memory in res.
func (c *fbConfig) open(path string, f runFlags, cases [][]ivalue.IValue, expected []ivalue.IValue, seen map[int]bool, res *fallbackResult, row *fallbackRow) error {
	first := !c.started
	before := readRSSKB()
	po, err := pyfallbackOptions(c.n)
	if err != nil {
		return err
	}
	m, err := pyfallback.NewManager(po)
	if err != nil {
		return fmt.Errorf("%s: %d interpreter(s): %w", path, c.n, err)
	}
	c.m = m
	started := readRSSKB()
	newInterps := 0
	if first {
		for _, in := range m.Interpreters() {
			res.Startup = append(res.Startup, interpStartup{Manager: c.n, ID: in.ID, StartupMs: float64(in.Startup.Microseconds()) / 1e3, Reused: seen[in.ID], PrivateLibrary: in.PrivateLibrary})
			if !seen[in.ID] {
				newInterps++
			}
			seen[in.ID] = true
		}
	}
	opts, err := f.options()
	if err != nil {
		return err
	}
	p, err := m.LoadPackage(path)
	if err != nil {
		return err
	}
	sm, _, err := p.Module("model", "model.pkl", opts)
	if err != nil {
		return err
	}
	c.sm = sm
	if res.Nodes == 0 {
		for _, n := range sm.Nodes() {
			res.Nodes++
			if strings.HasPrefix(n.Op, "gosr::python_call") {
				res.PythonNodes++
			}
		}
	}
	threads := max(f.threads, 1)
	c.pool = staticruntime.NewPool(sm, threads)
	ctx := context.Background()
	// Every runtime the pool may make, at once, so each takes its own
	// interpreter where there are enough (affinity is kept after).
	rts := make([]*staticruntime.StaticRuntime, threads)
	for i := range rts {
		if rts[i], err = c.pool.Get(ctx); err != nil {
			return err
		}
	}
	if first {
		row.MaxAbsDiff = -1
		if expected != nil {
			row.MaxAbsDiff = 0
		}
		for i, args := range cases {
			outs, err := rts[0].Run(args...)
			if err != nil {
				return fmt.Errorf("%s: case %d (%d interpreters): %w", path, i, c.n, err)
			}
			if expected != nil {
				d := reference.MaxAbsDiff(reference.Flatten(outs), reference.Flatten(expected[i:i+1]))
				row.MaxAbsDiff = max(row.MaxAbsDiff, d)
			}
		}
		row.CasesTested = len(cases)
	}
	for k, r := range rts {
		for i := range max(f.warmup, 1) {
			if _, err := r.Run(cases[(k+i)%len(cases)]...); err != nil {
				return fmt.Errorf("%s: warm-up (%d interpreters): %w", path, c.n, err)
			}
		}
	}
	for _, r := range rts {
		if err := c.pool.Put(r); err != nil {
			return err
		}
	}
	if first {
		step := rssStep{Manager: c.n, NewInterpreters: newInterps, BeforeKB: before, StartedKB: started, LoadedKB: readRSSKB()}
		if newInterps > 0 {
			step.PerInterpreterKB = (started - before) / int64(newInterps)
		}
		res.RSS = append(res.RSS, step)
		c.started = true
	}
	return nil
}

func (c *fbConfig) close() {
	if c.m != nil {
		c.m.Close()
	}
	c.m, c.sm, c.pool = nil, nil, nil
}

// round runs threads goroutines through the pool, each for iters
// requests (or until d has passed when iters is 0), cycling through the
// cases; it appends every request's latency and the round's throughput
// (the sum of the goroutines' own rates).
func (c *fbConfig) round(threads, iters int, d time.Duration, cases [][]ivalue.IValue) error {
	ctx := context.Background()
	lats := make([][]int64, threads)
	ends := make([]time.Duration, threads)
	errs := make([]error, threads)
	var wg sync.WaitGroup
	busy0, calls0, handed0 := c.interpTotals()
	t0 := time.Now()
	for t := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := make([]int64, 0, max(iters, 1024))
			prev := time.Duration(0)
			for i := t; ; i++ {
				if iters > 0 && len(l) == iters || iters == 0 && prev >= d {
					break
				}
				args := cases[i%len(cases)]
				err := c.pool.Do(ctx, func(r *staticruntime.StaticRuntime) error {
					_, err := r.Run(args...)
					return err
				})
				if err != nil {
					errs[t] = err
					return
				}
				now := time.Since(t0)
				l = append(l, int64(now-prev))
				prev = now
			}
			lats[t], ends[t] = l, prev
		}()
	}
	wg.Wait()
	wall := time.Since(t0)
	busy1, calls1, handed1 := c.interpTotals()
	c.busy += busy1 - busy0
	c.calls += calls1 - calls0
	c.handed += handed1 - handed0
	c.wall += wall * time.Duration(c.n)
	rate := 0.0
	for t := range threads {
		if errs[t] != nil {
			return fmt.Errorf("%d interpreters, goroutine %d: %w", c.n, t, errs[t])
		}
		if ends[t] > 0 {
			rate += float64(len(lats[t])) / ends[t].Seconds()
		}
		c.lat = append(c.lat, lats[t]...)
	}
	c.tputs = append(c.tputs, rate)
	return nil
}

// measureFallback runs a package with each -interpreters count, rounds
// interleaved (1, 2, 1, 2, ...) so that the machine's drift falls on
// every configuration alike.
func measureFallback(path string, f runFlags) (*fallbackResult, error) {
	ns := f.interpList
	if len(ns) == 0 {
		ns = []int{1}
	}
	file, cases, expected, err := fallbackCases(path, f.modelFlags)
	if err != nil {
		return nil, err
	}
	base := strings.TrimSuffix(path, ".pt")
	res := &fallbackResult{Model: base[strings.LastIndexByte(base, '/')+1:], Backend: f.backendName(), Package: path, Inputs: file, Cases: len(cases),
		Rounds: max(f.repeats, 1), MaxInterps: pyfallback.MaxInterpreters()}
	if f.iters > 0 {
		res.ItersPerG = f.iters
	} else {
		res.RoundMs = float64(f.round.Microseconds()) / 1e3
	}
	// Managers stay open for the whole run when the process can hold all
	// their interpreters at once; otherwise each round opens and closes
	// them (the interpreters are reused, the package is loaded again).
	total := 0
	for _, n := range ns {
		total += n
	}
	res.ManagersKept = total <= res.MaxInterps
	configs := make([]*fbConfig, len(ns))
	res.Rows = make([]fallbackRow, len(ns))
	seen := map[int]bool{}
	defer func() {
		for _, c := range configs {
			if c != nil {
				c.close()
			}
		}
	}()
	for i, n := range ns {
		configs[i] = &fbConfig{n: n}
		res.Rows[i] = fallbackRow{Interpreters: n, Threads: max(f.threads, 1)}
	}
	open := func(i int) error {
		return configs[i].open(path, f, cases, expected, seen, res, &res.Rows[i])
	}
	if res.ManagersKept {
		for i := range configs {
			if err := open(i); err != nil {
				return nil, err
			}
		}
	}
	for r := range res.Rounds {
		// ABBA order: 1,2 then 2,1, so neither always runs first.
		order := make([]int, len(configs))
		for i := range order {
			order[i] = i
			if r%2 == 1 {
				order[i] = len(configs) - 1 - i
			}
		}
		for _, i := range order {
			c := configs[i]
			if !res.ManagersKept {
				if err := open(i); err != nil {
					return nil, err
				}
			}
			res.GOMAXPROCS, res.GOMAXPROCSBefore = runtime.GOMAXPROCS(0), runtime.GOMAXPROCS(0)
			if before, _, ok := pyfallback.SpareProc(); ok {
				res.GOMAXPROCSBefore = before
			}
			if err := c.round(max(f.threads, 1), f.iters, f.round, cases); err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			if !res.ManagersKept {
				c.close()
			}
		}
	}
	for i, c := range configs {
		row := &res.Rows[i]
		row.Throughput, row.RoundTputs = stats.Median(c.tputs), c.tputs
		ls := percentiles(slices.Clone(c.lat))
		row.P50Us, row.P90Us, row.P99Us, row.MeanUs = ls.P50, ls.P90, ls.P99, ls.Mean
		row.Requests = len(c.lat)
		if c.wall > 0 {
			row.InterpBusy = float64(c.busy) / float64(c.wall)
		}
		row.Calls, row.HandedOver = c.calls, c.handed
		if c.calls > 0 {
			row.CallUs = float64(c.busy.Nanoseconds()) / 1e3 / float64(c.calls)
		}
		if res.Rows[0].Throughput > 0 {
			row.Ratio = row.Throughput / res.Rows[0].Throughput
		}
		first := configs[0].tputs
		if len(first) == len(c.tputs) && len(first) > 0 {
			row.PairedRatio = stats.MedianRatio(c.tputs, first)
		}
	}
	return res, nil
}

// readRSSKB is the process's resident set (VmRSS in /proc/self/status),
// in KiB; 0 where it cannot be read.
func readRSSKB() int64 {
	fh, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb
		}
	}
	return 0
}

func cmdRunPackage(f runFlags, w io.Writer) error {
	res, err := measureFallback(f.model, f)
	if err != nil {
		return err
	}
	if f.json {
		return json.NewEncoder(w).Encode(res)
	}
	printFallback(w, res)
	return nil
}

func mib(kb int64) float64 { return float64(kb) / 1024 }

// printFallback writes a package run: one table of the configurations
// side by side, then each interpreter's start-up and the memory.
func printFallback(w io.Writer, res *fallbackResult) {
	fmt.Fprintf(w, "model %s (backend %s; torch.package with Python fallbacks: %d python_call of %d nodes; %d cases from %s)\n", res.Model, res.Backend, res.PythonNodes, res.Nodes, res.Cases, res.Inputs)
	if d := res.Rows[0].MaxAbsDiff; d < 0 {
		fmt.Fprintf(w, "  outputs: n/a (no expected outputs)\n")
	} else {
		fmt.Fprintf(w, "  max abs diff from the expected outputs over %d cases: %.3g\n", res.Rows[0].CasesTested, d)
	}
	fmt.Fprintf(w, "%12s %8s %14s %11s %11s %11s %7s %12s %13s\n", "interpreters", "threads", "runs/s", "p50 us", "p90 us", "p99 us", "ratio", "interp busy", "us/py call")
	for _, r := range res.Rows {
		fmt.Fprintf(w, "%12d %8d %14.1f %11.1f %11.1f %11.1f %6.2fx %11.0f%% %13.1f\n", r.Interpreters, r.Threads, r.Throughput, r.P50Us, r.P90Us, r.P99Us, r.Ratio, 100*r.InterpBusy, r.CallUs)
	}
	per := fmt.Sprintf("%.0f ms", res.RoundMs)
	if res.ItersPerG > 0 {
		per = fmt.Sprintf("%d runs per goroutine", res.ItersPerG)
	}
	kept := "managers open throughout"
	if !res.ManagersKept {
		kept = "managers reopened each round"
	}
	fmt.Fprintf(w, "(runs/s: median over %d interleaved rounds of %s, %s; ratio: to the first row's median; latency percentiles over every request of every round; interp busy: the interpreters' share of the time holding a call, us/py call: the mean time one call held its interpreter)\n", res.Rounds, per, kept)
	for _, r := range res.Rows {
		ts := make([]string, len(r.RoundTputs))
		for i, v := range r.RoundTputs {
			ts[i] = fmt.Sprintf("%.0f", v)
		}
		paired := ""
		if r.Interpreters != res.Rows[0].Interpreters && r.PairedRatio > 0 {
			paired = fmt.Sprintf("; round by round to the first row's: median %.2fx", r.PairedRatio)
		}
		fmt.Fprintf(w, "  rounds, %d interpreter(s): %s runs/s%s\n", r.Interpreters, strings.Join(ts, " "), paired)
	}
	if res.GOMAXPROCS != res.GOMAXPROCSBefore {
		fmt.Fprintf(w, "GOMAXPROCS %d while the managers were open: %d and a spare P, so that calls into Python keep their Ps (%s=0 to leave it)\n", res.GOMAXPROCS, res.GOMAXPROCSBefore, envPythonSpareP)
	} else {
		fmt.Fprintf(w, "GOMAXPROCS %d\n", res.GOMAXPROCS)
	}
	fmt.Fprintf(w, "interpreters (a process holds at most %d)\n", res.MaxInterps)
	for _, s := range res.Startup {
		note := ", the system's libpython"
		if s.PrivateLibrary {
			note = ", a private copy of libpython"
		}
		if s.Reused {
			note += " (reused: started by an earlier manager)"
		}
		fmt.Fprintf(w, "  manager of %d: interpreter %d start-up %.1f ms%s\n", s.Manager, s.ID, s.StartupMs, note)
	}
	for _, s := range res.RSS {
		fmt.Fprintf(w, "  manager of %d: RSS %.1f MiB before, %.1f MiB with its interpreters (%d new, %.1f MiB each), %.1f MiB after loading the package and warm-up\n",
			s.Manager, mib(s.BeforeKB), mib(s.StartedKB), s.NewInterpreters, mib(s.PerInterpreterKB), mib(s.LoadedKB))
	}
}
