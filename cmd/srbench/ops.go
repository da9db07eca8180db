package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/gosr/gosr/staticruntime"
)

// opsFlags are ops': per-op times on one runtime.
type opsFlags struct {
	modelFlags
	runtimeFlags
	profileFlags
	iters, warmup int
	// verbose prints auto's choice per node.
	verbose bool
	// perNode prints every node's time after the per-op table.
	perNode bool
}

func (f *opsFlags) register(fs *flag.FlagSet) {
	f.modelFlags.register(fs)
	f.runtimeFlags.register(fs)
	f.profileFlags.register(fs)
	fs.IntVar(&f.iters, "iters", 0, "timed runs (0: 1000)")
	fs.IntVar(&f.warmup, "warmup", 100, "untimed runs first")
	fs.BoolVar(&f.verbose, "v", false, "with -backend auto, print each node's choice")
	fs.BoolVar(&f.perNode, "per-node", false, "also print every node's time, share, GFLOP/s and output sizes, in order (PyTorch's print_per_node_time)")
}

func (f *opsFlags) validate() error { return f.runtimeFlags.validate("ops") }

// run prints the time of each node over the timed runs
// (StaticRuntime.BenchmarkIndividualOps).
func (f *opsFlags) run(w io.Writer) error {
	m, sm, err := loadPrepared(f.modelFlags, f.runtimeFlags)
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
	fmt.Fprintf(w, "model %s, backend %s\n", m.Name, f.backendLabel())
	fmt.Fprint(w, met)
	if f.perNode {
		fmt.Fprint(w, met.PerNode())
	}
	if f.backendName() == backendAuto {
		printAuto(w, "", "", summarizeAuto(sm.AutoChoices()), f.verbose)
	}
	return nil
}
