package main

import (
	"flag"
	"fmt"
	"runtime"
	"strings"

	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/memplan"
	"github.com/gosr/gosr/staticruntime"
)

// The flag groups several subcommands share. Each registers its flags on
// a command's flag set and checks their values; a command's flags struct
// embeds the groups it takes, so that each flag is declared once.

// modelFlags name the model and its data: run, ops, graph, compare and
// check.
type modelFlags struct {
	model string
	// inputs and expected are torch.save files for a .pt model (or a
	// package's cases); "" looks for them beside the model.
	inputs, expected string
}

func (f *modelFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.model, "model", "mlp", "built-in model name, FILE.ir, or all (compare)")
	fs.StringVar(&f.inputs, "inputs", "", "torch.save file with the inputs (a tuple of positional inputs, or one tensor) for a .pt model")
	fs.StringVar(&f.expected, "expected", "", "torch.save file with the expected outputs for a .pt model")
}

// setModel takes MODEL given as an argument instead of -model.
func (f *modelFlags) setModel(spec string) { f.model = spec }

// runtimeFlags are how gosr prepares and runs the model
// (staticruntime.Options): run, ops, graph and compare.
type runtimeFlags struct {
	// backend is -backend: go, libtorch, auto, or (compare) all; "" is go.
	backend string
	// intraOp is the intra-op threads of gosr's Go kernels
	// (Options.IntraOpThreads), of libtorch's and, in compare, of
	// PyTorch's; 0 means 1 (intraOpThreads).
	intraOp int
	// calibration is Options.IntraOpCalibrationRuns (-intra-op-calibration).
	calibration int
	// disablePasses is -disable-passes: Options.DisablePasses, comma
	// separated.
	disablePasses string
	// device places gosr's module (-device: cpu, libtorch-cpu, cuda[:N]).
	device string
	// planner is a memplan.ByName name; "" is the default (greedy).
	planner       string
	manageOutputs bool
	noOutVariant  bool
	noOptimize    bool
	noOverwrites  bool
	// interop is Options.InterOpThreads and PyTorch's inter-op threads;
	// 0 means GOMAXPROCS (interopThreads resolves it).
	interop int
}

func (f *runtimeFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.backend, "backend", backendGo, "kernels: go (gosr's pure-Go kernels), libtorch (PyTorch's ATen kernels through the shim `make libtorch` builds), auto (per node, the faster of the two, timed on the first runs); compare also takes all (go, libtorch and auto one after the other, one row each)")
	fs.IntVar(&f.intraOp, "intra-op-threads", 1, "intra-op threads: goroutines each op of gosr's Go kernels is split across (Options.IntraOpThreads, capped at GOMAXPROCS; with -threads N, N x this many in all), libtorch's kernels' threads (-backend libtorch|auto) and, in compare, PyTorch's (torch.set_num_threads)")
	fs.IntVar(&f.calibration, "intra-op-calibration", 0, "with -intra-op-threads above 1, the runs each way over which each runtime times every node split and alone before it keeps, of the per-node mix, every node split and every node alone, the fastest whole run (Options.IntraOpCalibrationRuns; 0: 4; negative: no calibration, every node splits where the kernels allow); the timed runs begin after it")
	fs.StringVar(&f.disablePasses, "disable-passes", "", "passes of the pipeline to skip, comma separated (Options.DisablePasses; a name not in the pipeline is an error that lists them), to time a model without a fusion")
	fs.StringVar(&f.device, "device", "cpu", "where gosr's module lives: cpu (gosr's memory), cuda[:N] (a GPU, through libtorch), or libtorch-cpu (the device path on libtorch's CPU allocator: weights copied once, slab from libtorch, inputs in, outputs out); off cpu it needs -backend libtorch")
	fs.StringVar(&f.planner, "planner", memplan.GreedyBySize{}.Name(), "memory planner: "+plannerNames()+
		" (none: one slab, no tensor shares memory; storage-groups: PyTorch Static Runtime's; greedy: greedy-by-size offsets)")
	fs.BoolVar(&f.manageOutputs, "manage-outputs", false, "place output tensors in an arena of their own (manage_output_tensors); "+
		"the timing loops call ReleaseOutputs after each run, so the arena is reused")
	fs.BoolVar(&f.noOutVariant, "no-out-variant", false, "disable out variants")
	fs.BoolVar(&f.noOptimize, "no-optimize-memory", false, "no memory planning")
	fs.BoolVar(&f.noOverwrites, "no-overwrites", false, "no planned overwrites: the planner never writes an output over the dead input it reads (a pooling over its activation), nor the parts of a cat straight into its output")
	fs.IntVar(&f.interop, "interop", 1, "inter-op threads that run prim::fork tasks, gosr's (Options.InterOpThreads) and PyTorch's (set_num_interop_threads); 0: GOMAXPROCS")
}

// validate checks the values for cmd (only compare takes -backend all).
func (f *runtimeFlags) validate(cmd string) error {
	if _, err := f.plannerOpt(); err != nil {
		return fmt.Errorf("-planner: %w", err)
	}
	if f.interop < 0 {
		return fmt.Errorf("-interop %d: want at least 1 inter-op thread, or 0 for GOMAXPROCS", f.interop)
	}
	if err := checkBackendFlag(cmd, f.backend); err != nil {
		return err
	}
	if f.intraOp < 1 {
		return fmt.Errorf("-intra-op-threads %d: want at least 1", f.intraOp)
	}
	if d, err := ivalue.ParseDevice(f.device); err != nil {
		return fmt.Errorf("-device: %w", err)
	} else if !d.IsHost() && f.backend != backendLibtorch {
		return fmt.Errorf("-device %s: gosr's Go kernels read host memory only; use -backend libtorch", d)
	}
	return nil
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
func (f runtimeFlags) plannerOpt() (memplan.Planner, error) {
	if f.planner == "" {
		return nil, nil
	}
	return memplan.ByName(f.planner)
}

func (f runtimeFlags) options() (*staticruntime.Options, error) {
	o := staticruntime.DefaultOptions()
	o.EnableOutVariant = !f.noOutVariant
	o.OptimizeMemory = !f.noOptimize
	o.DisableOverwrites = f.noOverwrites
	o.ManageOutputTensors = f.manageOutputs
	o.InterOpThreads = f.interopThreads()
	o.IntraOpThreads = f.intraOpThreads()
	o.IntraOpCalibrationRuns = f.calibration
	if f.disablePasses != "" {
		o.DisablePasses = strings.Split(f.disablePasses, ",")
	}
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
func (f runtimeFlags) interopThreads() int {
	if f.interop <= 0 {
		return runtime.GOMAXPROCS(0)
	}
	return f.interop
}

// timingFlags are how the model is timed: run and compare.
type timingFlags struct {
	iters, warmup int
	// threads goroutines send requests through one pool of as many
	// runtimes.
	threads int
	repeats int
}

func (f *timingFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&f.iters, "iters", 0, "timed runs per repeat (0: about 0.2 s worth)")
	fs.IntVar(&f.warmup, "warmup", 100, "untimed runs first")
	fs.IntVar(&f.threads, "threads", 1, "goroutines sending requests at once, through one pool of as many runtimes")
	fs.IntVar(&f.repeats, "repeats", 7, "timed repeats; the median is reported")
}

func (f *timingFlags) validate() error {
	if f.threads < 1 {
		return fmt.Errorf("-threads %d: want at least 1 goroutine", f.threads)
	}
	return nil
}

// benchFlags are what measure reads: how gosr runs the model and how it
// is timed (run and compare).
type benchFlags struct {
	runtimeFlags
	timingFlags
}

func (f *benchFlags) register(fs *flag.FlagSet) {
	f.runtimeFlags.register(fs)
	f.timingFlags.register(fs)
}

func (f *benchFlags) validate(cmd string) error {
	if err := f.timingFlags.validate(); err != nil {
		return err
	}
	return f.runtimeFlags.validate(cmd)
}

// profileFlags are -cpuprofile (run, ops and compare): main profiles the
// whole command.
type profileFlags struct {
	cpuProfile string
}

func (f *profileFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole command here (go tool pprof)")
}

func (f *profileFlags) profilePath() string { return f.cpuProfile }
