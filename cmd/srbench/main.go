// Command srbench runs models with gosr and compares them with PyTorch.
//
//	srbench run     MODEL [-backend go|libtorch|auto] [-inputs IN.pt] [-expected OUT.pt] [-iters N] [-warmup N] [-threads N] [-interop N] [-intra-op-threads N] [-json] [-v]
//	srbench run     MODEL -intra-op-scaling 1,2 [-repeats R] [-iters N]   the speed-up from intra-op threads, rounds interleaved
//	srbench run     PACKAGE.pt [-interpreters 1,2] [-threads N] [-repeats R] [-round D] [-inputs IN.pt] [-json]
//	srbench ops     MODEL [-backend go|libtorch|auto]   per-op times (benchmark_individual_ops)
//	srbench graph   MODEL [-backend go|libtorch|auto]   the graph gosr runs, after its passes
//	srbench compare MODEL|all|DIR [-backend go|libtorch|auto|all] [-inputs IN.pt] [-python PATH] [-threads N] [-interop N] [-intra-op-threads N] [-pt-timeout D] [-json]
//	srbench check   MODEL [-json]   every op gosr's Go kernels cannot run, with its source lines; exits 1 if any
//	srbench load    URL -model M [-version V] [-concurrency 1,2,4,8] [-protocol http|grpc] [-binary] [-input FILE | -shape NAME:DIMS] [-window 2s] [-stability 0.10] [-max-windows 10] [-json FILE]
//	srbench list             the built-in models
//
// Each subcommand has a file of its own (run.go, ops.go, ...) with its
// flags; the groups several share (the model, gosr's options, timing) are
// in flags.go. srbench CMD -h lists CMD's flags; another's is a usage
// error.
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
// backend). -intra-op-threads N (default 1) is the number of goroutines
// each large op of gosr's Go kernels is split across
// (staticruntime.Options.IntraOpThreads, capped at GOMAXPROCS; with
// -threads T, T x N goroutines may run at once), libtorch's intra-op
// thread count (libtorch.Options.Threads) and, in compare, PyTorch's
// (torch.set_num_threads), so that each side has as many. Outputs, -json included
// ("backend", "intra_op_threads", "auto"), name the backend. run
// -intra-op-scaling 1,2 times the model at each count, one runtime per
// count, the counts interleaved within each of -repeats rounds, and
// prints each count's speed-up over the first as the median of the
// rounds' ratios (see [Intra-op scaling] in scaling.go).
//
// -threads N drives N goroutines through one staticruntime.Pool of N
// runtimes over the shared StaticModule (take, run, give back) and
// reports throughput and per-request latency percentiles (p50, p90, p99).
// -interop N sizes the inter-op pool that runs prim::fork tasks
// (Options.InterOpThreads; 0: GOMAXPROCS), and PyTorch's
// (torch.set_num_interop_threads) in compare.
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
// load drives a server speaking the Open Inference Protocol (gosr serve,
// Triton, KServe's model servers) as Triton's perf_analyzer does: for each
// -concurrency C, C workers in a closed loop (send, wait for the answer,
// send the next), measured in -window windows until the last three
// windows' throughputs are each within -stability of their mean (at most
// -max-windows), then throughput and latency percentiles (p50, p90, p95,
// p99) over those three, and the failed requests. The inputs are random
// data (-zero-input: zeros) at the shapes the model's metadata declares
// (-shape NAME:D0,D1 for its -1 dimensions), or those of -input FILE, a
// JSON inference request. HTTP sends JSON tensors, or with -binary the
// binary tensor extension both ways; gRPC sends raw_input_contents. The
// first request's answer is decoded and checked before any load.
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
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"strings"
)

// A command is one subcommand: a struct of its flags (embedding the
// groups it shares with others, flags.go) that registers them on the
// command's own flag set, checks their values once parsed, and runs.
type command interface {
	register(fs *flag.FlagSet)
	// validate fails on bad values before any model is loaded, naming
	// what is valid.
	validate() error
	run(stdout io.Writer) error
}

// commands are srbench's subcommands, in the order usage lists them.
var commands = []struct {
	name, synopsis string
	new            func() command
}{
	{"run", "MODEL|PACKAGE.pt [flags]   time MODEL (a pool of runtimes), or a torch.package with Python fallbacks", func() command { return new(runFlags) }},
	{"ops", "MODEL [flags]   per-op times (benchmark_individual_ops)", func() command { return new(opsFlags) }},
	{"graph", "MODEL [flags]   the graph gosr runs, after its passes", func() command { return new(graphFlags) }},
	{"compare", "MODEL|all|DIR [flags]   gosr beside PyTorch's Static Runtime and interpreter", func() command { return new(compareFlags) }},
	{"check", "MODEL [flags]   every op gosr's Go kernels cannot run, with its source lines; exits 1 if any", func() command { return new(checkFlags) }},
	{"load", "URL -model M [-concurrency 1,2,4,8] [-protocol http|grpc] [-binary] [flags]   load a server speaking the Open Inference Protocol, as perf_analyzer does", func() command { return new(loadFlags) }},
	{"list", "   the built-in models", func() command { return new(listFlags) }},
}

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	name := os.Args[1]
	c := newCommand(name)
	if c == nil {
		usage()
	}
	err := parse(name, c, os.Args[2:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "srbench:", err)
		os.Exit(2)
	}
	profile := ""
	if p, ok := c.(interface{ profilePath() string }); ok {
		profile = p.profilePath()
	}
	if profile != "" {
		stop, perr := startCPUProfile(profile)
		if perr != nil {
			fmt.Fprintln(os.Stderr, "srbench:", perr)
			os.Exit(2)
		}
		defer stop()
	}
	if err := c.run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "srbench:", err)
		if profile != "" {
			pprof.StopCPUProfile() // os.Exit skips the deferred stop
		}
		os.Exit(1)
	}
}

// newCommand is a fresh command named name, nil for none.
func newCommand(name string) command {
	for _, c := range commands {
		if c.name == name {
			return c.new()
		}
	}
	return nil
}

// parse reads args into c: flags may come before or after MODEL (srbench
// run MODEL.pt -inputs IN.pt). Usage and flag errors go to errOut.
func parse(name string, c command, args []string, errOut io.Writer) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(errOut)
	c.register(fs)
	fs.Usage = func() {
		for _, cc := range commands {
			if cc.name == name {
				fmt.Fprintf(errOut, "usage: srbench %s %s\n", name, cc.synopsis)
			}
		}
		fs.PrintDefaults()
	}
	m, takesModel := c.(interface{ setModel(string) })
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		if !takesModel {
			fs.Usage()
			return fmt.Errorf("%s takes no arguments, got %q", name, fs.Arg(0))
		}
		m.setModel(fs.Arg(0))
		args = fs.Args()[1:]
	}
	return c.validate()
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

func usage() {
	names := make([]string, len(commands))
	for i, c := range commands {
		names[i] = c.name
	}
	fmt.Fprintf(os.Stderr, "usage: srbench %s MODEL [flags]   (MODEL: a built-in name, FILE.pt or FILE.ir; srbench CMD -h for flags)\n", strings.Join(names, "|"))
	for _, c := range commands {
		fmt.Fprintf(os.Stderr, "  srbench %-8s%s\n", c.name, c.synopsis)
	}
	os.Exit(2)
}
