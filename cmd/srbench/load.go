package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gosr/gosr/serve"
)

// srbench load drives a server speaking the Open Inference Protocol
// (gosr serve, Triton, KServe's model servers) the way Triton's
// perf_analyzer does: for each concurrency C, C workers in a closed loop
// (send a request, wait for the answer, send the next), measured in
// windows until the last stableWindows windows' throughputs agree within
// -stability, then reported over those windows.

// [Load generator's processors]: at each concurrency srbench load runs
// with as many Go processors as workers (at most the CPUs; -procs sets
// it). perf_analyzer's workers are threads that block in the kernel; a
// Go client's spare processors instead wake one another at every
// hand-off between its goroutines (a worker, and for gRPC the
// connection's reader and writer), and on a small virtual machine each
// such wake-up is an interrupt to another vCPU that the server needs.
// With one processor the hand-offs stay on one thread: on the 2-core VM
// of docs/serving.md a gRPC round trip to gosr serve at concurrency 1
// drops from 220-300 µs to 170-210.

// stableWindows is how many consecutive windows must agree, as in
// perf_analyzer.
const stableWindows = 3

// loadFlags are load's.
type loadFlags struct {
	profileFlags
	addr           string // URL: host:port, or http://host:port
	model, version string
	concurrency    string
	levels         []int
	protocol       string
	binary         bool
	input          string
	shapes         map[string][]int64
	zero           bool
	window         time.Duration
	stability      float64
	maxWindows     int
	timeout        time.Duration
	jsonOut        string
	procs          int
	floor          bool
}

func (f *loadFlags) register(fs *flag.FlagSet) {
	f.profileFlags.register(fs)
	fs.StringVar(&f.model, "model", "", "the model's name on the server")
	fs.StringVar(&f.version, "version", "", "the model's version (default: the server's choice)")
	fs.StringVar(&f.concurrency, "concurrency", "1", "workers sending requests at once, comma separated (1,2,4,8: one row each)")
	fs.StringVar(&f.protocol, "protocol", "http", "http (REST) or grpc")
	fs.BoolVar(&f.binary, "binary", false, "HTTP: the binary tensor extension (Inference-Header-Content-Length) for inputs and outputs, instead of JSON")
	fs.StringVar(&f.input, "input", "", "a JSON inference request whose inputs to send ({\"inputs\": [{\"name\", \"shape\", \"datatype\", \"data\"}]}); default: random data at the shapes the model's metadata declares")
	fs.Func("shape", "NAME:D0,D1,... an input's shape, for the dimensions the metadata leaves open (-1); repeatable", f.addShape)
	fs.BoolVar(&f.zero, "zero-input", false, "send zeros instead of random data (without -input)")
	fs.DurationVar(&f.window, "window", 2*time.Second, "measurement window")
	fs.Float64Var(&f.stability, "stability", 0.10, "the last 3 windows' throughputs must each be within this fraction of their mean")
	fs.IntVar(&f.maxWindows, "max-windows", 10, "windows per concurrency before giving up on stability (the last 3 are reported, marked unstable)")
	fs.DurationVar(&f.timeout, "timeout", 30*time.Second, "per-request timeout")
	fs.StringVar(&f.jsonOut, "json", "", "also write the results as JSON to this file (- for stdout, instead of the table)")
	fs.IntVar(&f.procs, "procs", 0, "the load generator's own Go processors (GOMAXPROCS) at each concurrency (0: the concurrency, at most the CPUs)")
	fs.BoolVar(&f.floor, "floor", false, "send the protocol's empty call (REST GET /v2/health/live, gRPC ServerLive) instead of infer: the server's round-trip floor, for the overhead of an infer above it")
}

// setModel takes the positional argument, the server's URL.
func (f *loadFlags) setModel(spec string) { f.addr = spec }

func (f *loadFlags) addShape(s string) error {
	name, dims, ok := strings.Cut(s, ":")
	if !ok || name == "" {
		return fmt.Errorf("want NAME:D0,D1,... (as INPUT__0:1,64), got %q", s)
	}
	shape := []int64{}
	if dims != "" {
		for _, d := range strings.Split(dims, ",") {
			n, err := strconv.ParseInt(strings.TrimSpace(d), 10, 64)
			if err != nil || n < 0 {
				return fmt.Errorf("%s: dimension %q is not a size (0 or more)", name, d)
			}
			shape = append(shape, n)
		}
	}
	if f.shapes == nil {
		f.shapes = map[string][]int64{}
	}
	if _, dup := f.shapes[name]; dup {
		return fmt.Errorf("%s given twice", name)
	}
	f.shapes[name] = shape
	return nil
}

func (f *loadFlags) validate() error {
	if f.addr == "" {
		return errors.New("load needs the server's URL (host:port, or http://host:port)")
	}
	if f.model == "" {
		return errors.New("load needs -model, the model's name on the server")
	}
	var err error
	if f.levels, err = parseCounts("-concurrency", f.concurrency); err != nil {
		return err
	}
	switch f.protocol {
	case "http":
		if _, err := httpBase(f.addr); err != nil {
			return err
		}
	case "grpc":
		if f.binary {
			return errors.New("-binary is HTTP's binary tensor extension; gRPC always sends raw_input_contents")
		}
		if _, err := grpcTarget(f.addr); err != nil {
			return err
		}
	default:
		return fmt.Errorf("-protocol %q: want http or grpc", f.protocol)
	}
	if f.input != "" && (len(f.shapes) > 0 || f.zero) {
		return errors.New("-input FILE gives the inputs and their shapes: no -shape or -zero-input with it")
	}
	if f.window <= 0 {
		return fmt.Errorf("-window %v: want a positive duration (as 2s)", f.window)
	}
	if f.stability <= 0 || f.stability >= 1 {
		return fmt.Errorf("-stability %v: want a fraction between 0 and 1 (as 0.10)", f.stability)
	}
	if f.maxWindows < stableWindows {
		return fmt.Errorf("-max-windows %d: want at least %d", f.maxWindows, stableWindows)
	}
	if f.timeout <= 0 {
		return fmt.Errorf("-timeout %v: want a positive duration", f.timeout)
	}
	return nil
}

// parseCounts reads a comma-separated list of counts of at least 1.
func parseCounts(flagName, s string) ([]int, error) {
	var ns []int
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s %s: want counts of at least 1, comma separated (as 1,2,4,8)", flagName, s)
		}
		ns = append(ns, n)
	}
	return ns, nil
}

// loadReport is what load prints, and writes with -json.
type loadReport struct {
	URL      string `json:"url"`
	Model    string `json:"model"`
	Version  string `json:"version,omitempty"`
	Protocol string `json:"protocol"` // http, http-binary or grpc
	// Floor: the requests were the protocol's empty call, not infer.
	Floor   bool                   `json:"floor,omitempty"`
	Inputs  []serve.TensorMetadata `json:"inputs"`
	Outputs []serve.TensorMetadata `json:"outputs"`
	WindowS float64                `json:"window_s"`
	// Stability is the fraction each of the last 3 windows' throughputs
	// may be off their mean.
	Stability float64       `json:"stability"`
	Results   []levelResult `json:"results"`
}

// levelResult is one concurrency's figures, over its last (stable)
// windows.
type levelResult struct {
	Concurrency int `json:"concurrency"`
	// Throughput is successful requests per second.
	Throughput float64 `json:"throughput"`
	P50Us      float64 `json:"p50_us"`
	P90Us      float64 `json:"p90_us"`
	P95Us      float64 `json:"p95_us"`
	P99Us      float64 `json:"p99_us"`
	MeanUs     float64 `json:"mean_us"`
	Requests   int     `json:"requests"` // successful ones, in the reported windows
	Errors     int     `json:"errors"`   // failed ones, in the reported windows
	// FirstError is the first failure's message, if any.
	FirstError string `json:"first_error,omitempty"`
	Windows    int    `json:"windows"` // measured in all
	Stable     bool   `json:"stable"`
	// ClientProcs is the load generator's GOMAXPROCS at this level.
	ClientProcs int `json:"client_procs"`
	// WindowThroughputs are every window's, in order.
	WindowThroughputs []float64 `json:"window_throughputs"`
}

// window is one measurement window: the latencies (ns) of the requests
// that completed in it, successful ones only, and the failures.
type window struct {
	lat      []int64
	errors   int
	firstErr error
	elapsed  time.Duration
}

func (w window) throughput() float64 {
	if w.elapsed <= 0 {
		return 0
	}
	return float64(len(w.lat)) / w.elapsed.Seconds()
}

// isStable reports whether the last n of tputs each lie within tol of
// their mean (perf_analyzer's criterion). Windows with no successful
// request at all agree with each other only if all have none.
func isStable(tputs []float64, n int, tol float64) bool {
	if len(tputs) < n {
		return false
	}
	last := tputs[len(tputs)-n:]
	var mean float64
	for _, t := range last {
		mean += t
	}
	mean /= float64(n)
	if mean == 0 {
		return true
	}
	for _, t := range last {
		if t < mean*(1-tol) || t > mean*(1+tol) {
			return false
		}
	}
	return true
}

// measureWindows takes windows from next until the last stableWindows
// agree within tol, or maxWindows have been taken, and summarizes the
// last stableWindows of them.
func measureWindows(next func() (window, error), maxWindows int, tol float64) (levelResult, error) {
	var ws []window
	var tputs []float64
	stable := false
	for len(ws) < maxWindows && !stable {
		w, err := next()
		if err != nil {
			return levelResult{}, err
		}
		ws = append(ws, w)
		tputs = append(tputs, w.throughput())
		stable = isStable(tputs, stableWindows, tol)
	}
	r := summarize(ws[max(len(ws)-stableWindows, 0):])
	r.Windows, r.Stable, r.WindowThroughputs = len(ws), stable, tputs
	return r, nil
}

// summarize merges windows: throughput over their whole time, latency
// percentiles over every successful request.
func summarize(ws []window) levelResult {
	var r levelResult
	var all []int64
	var elapsed time.Duration
	for _, w := range ws {
		all = append(all, w.lat...)
		r.Errors += w.errors
		if w.firstErr != nil && r.FirstError == "" {
			r.FirstError = w.firstErr.Error()
		}
		elapsed += w.elapsed
	}
	r.Requests = len(all)
	if elapsed > 0 {
		r.Throughput = float64(len(all)) / elapsed.Seconds()
	}
	ls := percentiles(all) // sorts all
	r.P50Us, r.P90Us, r.P99Us, r.MeanUs = ls.P50, ls.P90, ls.P99, ls.Mean
	r.P95Us = nearestRank(all, 95)
	return r
}

// recorder collects the workers' requests until the controller takes
// them at a window's end.
type recorder struct {
	mu       sync.Mutex
	lat      []int64
	errors   int
	firstErr error
	start    time.Time // the current window's
}

func (r *recorder) add(d time.Duration, err error) {
	r.mu.Lock()
	if err != nil {
		r.errors++
		if r.firstErr == nil {
			r.firstErr = err
		}
	} else {
		r.lat = append(r.lat, int64(d))
	}
	r.mu.Unlock()
}

// take ends the current window and starts the next; the buffer is
// handed over, so the workers append to a fresh one.
func (r *recorder) take() window {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	w := window{lat: r.lat, errors: r.errors, firstErr: r.firstErr, elapsed: now.Sub(r.start)}
	r.lat, r.errors, r.firstErr, r.start = make([]int64, 0, len(w.lat)+len(w.lat)/4), 0, nil, now
	return w
}

// runLevel drives c workers, each with its own sender, in a closed loop
// and measures them in windows of length win. The workers stop after
// their request in flight when the windows are done (nothing is
// cancelled, so no failure comes from the stopping).
func runLevel(ctx context.Context, client loadClient, c int, win time.Duration, maxWindows int, tol float64) (levelResult, error) {
	senders := make([]sender, 0, c)
	defer func() {
		for _, s := range senders {
			s.close()
		}
	}()
	for range c {
		s, err := client.newSender()
		if err != nil {
			return levelResult{}, err
		}
		senders = append(senders, s)
	}
	rec := &recorder{start: time.Now()}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for _, s := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() && ctx.Err() == nil {
				t0 := time.Now()
				_, err := s.infer(ctx, false)
				rec.add(time.Since(t0), err)
			}
		}()
	}
	defer func() {
		stop.Store(true)
		wg.Wait()
	}()
	rec.take() // the windows start with every worker started
	timer := time.NewTimer(win)
	defer timer.Stop()
	next := func() (window, error) {
		select {
		case <-ctx.Done():
			return window{}, ctx.Err()
		case <-timer.C:
		}
		timer.Reset(win)
		return rec.take(), nil
	}
	r, err := measureWindows(next, maxWindows, tol)
	r.Concurrency = c
	return r, err
}

func (f *loadFlags) run(w io.Writer) error {
	ctx := context.Background()
	var client loadClient
	var err error
	protocol := f.protocol
	switch f.protocol {
	case "grpc":
		client, err = newGRPCClient(f.addr, f.model, f.version, f.floor, f.timeout)
	default:
		client, err = newHTTPClient(f.addr, f.model, f.version, f.binary, f.floor, slices.Max(f.levels), f.timeout)
		if f.binary {
			protocol = "http-binary"
		}
	}
	if err != nil {
		return err
	}
	defer client.close()
	rep := &loadReport{URL: f.addr, Model: f.model, Version: f.version, Protocol: protocol,
		WindowS: f.window.Seconds(), Stability: f.stability, Floor: f.floor}
	var inputs []loadTensor
	if f.input != "" {
		inputs, err = inputsFromFile(f.input)
	} else {
		mctx, cancel := context.WithTimeout(ctx, f.timeout)
		var meta *serve.ModelMetadata
		meta, err = client.metadata(mctx)
		cancel()
		if err == nil {
			inputs, err = inputsFromMeta(meta, f.shapes, f.zero)
		}
	}
	if err != nil {
		return err
	}
	for _, in := range inputs {
		rep.Inputs = append(rep.Inputs, in.TensorMetadata)
	}
	if err := client.prepare(inputs); err != nil {
		return err
	}
	// One request, its answer decoded and checked, before any load: a
	// request the server refuses fails here with its message.
	s, err := client.newSender()
	if err != nil {
		return err
	}
	rep.Outputs, err = s.infer(ctx, true)
	s.close()
	if err != nil {
		return fmt.Errorf("the first request: %w", err)
	}
	table := f.jsonOut != "-"
	if table {
		printLoadHeader(w, rep)
	}
	// See [Load generator's processors].
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, c := range f.levels {
		procs := f.procs
		if procs <= 0 {
			procs = min(c, runtime.NumCPU())
		}
		runtime.GOMAXPROCS(procs)
		r, err := runLevel(ctx, client, c, f.window, f.maxWindows, f.stability)
		if err != nil {
			return err
		}
		r.ClientProcs = procs
		rep.Results = append(rep.Results, r)
		if table {
			printLoadRow(w, r)
		}
	}
	if table {
		for _, r := range rep.Results {
			if r.FirstError != "" {
				fmt.Fprintf(w, "concurrency %d: %d failed requests, the first: %s\n", r.Concurrency, r.Errors, r.FirstError)
			}
		}
	}
	switch f.jsonOut {
	case "":
		return nil
	case "-":
		return json.NewEncoder(w).Encode(rep)
	}
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(f.jsonOut, append(b, '\n'), 0o644)
}

func printLoadHeader(w io.Writer, rep *loadReport) {
	v := ""
	if rep.Version != "" {
		v = " version " + rep.Version
	}
	what := "model " + rep.Model + v
	if rep.Floor {
		what = "the empty call (-floor; model " + rep.Model + v + " not run)"
	}
	fmt.Fprintf(w, "load %s %s over %s: closed loop, windows of %v until %d agree within %.0f%%\n",
		rep.URL, what, rep.Protocol, time.Duration(rep.WindowS*float64(time.Second)), stableWindows, 100*rep.Stability)
	fmt.Fprintf(w, "  inputs  %s\n  outputs %s\n", metaList(rep.Inputs), metaList(rep.Outputs))
	fmt.Fprintf(w, loadColumns, "concurrency", "infer/s", "p50 µs", "p90 µs", "p95 µs", "p99 µs", "errors", "windows", "stable")
}

func metaList(ts []serve.TensorMetadata) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fmt.Sprintf("%s %s %v", t.Name, t.Datatype, t.Shape)
	}
	return strings.Join(parts, ", ")
}

// The table's columns are fixed, so that each row prints as its
// concurrency finishes.
const loadColumns = "%11s %10s %9s %9s %9s %9s %7s %7s %6s\n"

func printLoadRow(w io.Writer, r levelResult) {
	stable := "yes"
	if !r.Stable {
		stable = "no"
	}
	us := func(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }
	fmt.Fprintf(w, loadColumns, strconv.Itoa(r.Concurrency), us(r.Throughput), us(r.P50Us), us(r.P90Us), us(r.P95Us), us(r.P99Us),
		strconv.Itoa(r.Errors), strconv.Itoa(r.Windows), stable)
}
