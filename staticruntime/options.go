// Package staticruntime prepares a graph once as a StaticModule and runs
// it with StaticRuntimes, one per goroutine, as PyTorch's Static Runtime
// does (PyTorch's torch/csrc/jit/runtime/static/impl.h and the README.md
// beside it: StaticModule, StaticRuntime, BlockRunner, ProcessedNode,
// MemoryPlanner).
//
// A StaticModule is immutable after NewStaticModule and may be shared by
// any number of goroutines. A StaticRuntime holds the values of one run
// and must be used by one goroutine at a time; take one per goroutine
// with NewRuntime or Clone, or borrow them from a Pool.
//
// Outputs are owned by the runtime: the tensors Run returns are rewritten
// by the next Run on the same runtime (that is what lets a steady-state
// Run allocate nothing). Clone an output (IValue.Clone) to keep it.
package staticruntime

import (
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/memplan"
	"github.com/gosr/gosr/ops"
)

// Options mirror PyTorch's StaticModuleOptions.
type Options struct {
	// EnableOutVariant selects out-variant kernels where registered
	// (enable_out_variant). Without them no tensor is managed.
	EnableOutVariant bool
	// OptimizeMemory places managed intermediate tensors in one slab
	// planned by Planner (optimize_memory).
	OptimizeMemory bool
	// ManageOutputTensors places graph output tensors in the slab too
	// (manage_output_tensors). Outputs are always reused across runs;
	// this only decides where their memory lives.
	ManageOutputTensors bool
	// Planner places managed tensors; nil means memplan.GreedyBySize.
	Planner memplan.Planner
	// DisableOverwrites stops the planner from writing an output over the
	// memory of an input that dies at its node (ops.OverwriteRule, such as a
	// pooling over its activation) and the parts of a cat from being
	// written straight into its output, to measure what that saves.
	DisableOverwrites bool
	// SkipPasses prepares the graph as given, without gosr's passes.
	SkipPasses bool
	// DisablePasses names passes of the pipeline (passes.Names) to skip
	// (for example UseInplaceActivations, to measure what it saves).
	DisablePasses []string
	// VerifyPasses checks the graph after every pass (slower preparation).
	VerifyPasses bool
	// InterOpThreads sizes the inter-op pool that runs the tasks of
	// prim::fork when a run names no launcher (at::launch's pool in
	// PyTorch); 0 means GOMAXPROCS. Modules of the same size share a pool.
	InterOpThreads int
	// IntraOpThreads splits one op of a run across that many goroutines
	// in all (the run's own and helpers): large matrix products and
	// convolutions (ops/gemm) by rows or columns, bit for bit as one
	// goroutine computes them. 0 or 1 (the default) runs each op on the
	// run's goroutine alone, as serving through a Pool of runtimes wants
	// (the pool's runtimes are the parallelism). Each runtime starts its
	// helpers once, with NewRuntime, and stops them when the module is
	// closed or the runtime collected; between ops they wait (a 50 us spin, then parked). The
	// goroutines multiply: a Pool of P runtimes may run P x
	// IntraOpThreads goroutines at once, so size the two together
	// (P x IntraOpThreads at most the cores). It is capped at GOMAXPROCS.
	// Forked subgraphs (prim::fork) run each op on one goroutine: their
	// parallelism is the inter-op pool's.
	IntraOpThreads int
	// IntraOpCalibrationRuns is, with IntraOpThreads above 1, the runs
	// each way over which a runtime times every node of its top block
	// split across the team and alone, after its first run, and then
	// times whole runs of that per-node choice, of every node split and
	// of every node alone, as many turns of two runs of each; from then
	// on the fastest of the three holds (see [Split per node] in
	// split.go). 0 means 4; negative, no calibration: every node splits
	// where the kernels' thresholds allow.
	IntraOpCalibrationRuns int
	// CheckPlan verifies after each run that no two managed tensors alive
	// at the same node overlap in memory (a debug mode for tests).
	CheckPlan bool
	// Python runs the graph's gosr::python_call nodes (calls of packaged
	// Python functions); pyfallback.Package is one. Nil: such nodes fail
	// with an error saying so.
	Python ops.PythonBackend
	// Backend offers kernels other than the pure-Go ones (a
	// libtorch.Backend), used as BackendMode says: ops.BackendOnly runs
	// every op it has on it, ops.BackendAuto times both kernels of each
	// node on its first runs and keeps the faster. Nil or ops.BackendGo:
	// pure Go.
	Backend     ops.KernelBackend
	BackendMode ops.BackendMode
	// Device places the module: "" or "cpu" (gosr's memory, the
	// default), "cuda[:N]", or "libtorch-cpu" (the device path on
	// libtorch's CPU allocator, to check a model before it meets a GPU).
	// Off the host the module needs a Backend that places tensors there
	// (see DeviceBackend) and BackendMode other than go: its tensor
	// constants (the weights) are copied to the device once, the slab is
	// allocated there through the backend's allocator, every tensor op
	// runs on the backend, tensor inputs on the host are copied in and
	// tensor outputs copied back out into host tensors the runtime owns
	// (valid until its next Run, as on the host).
	Device string
}

// DeviceBackend is a KernelBackend that places modules on devices.
type DeviceBackend interface {
	ops.KernelBackend
	// PlaceDevice readies d for modules (registering the backend's
	// allocator with ivalue) or says why it cannot.
	PlaceDevice(d ivalue.Device) error
}

// DefaultOptions are PyTorch's defaults: out variants on, memory
// optimized, outputs not managed.
func DefaultOptions() Options {
	return Options{EnableOutVariant: true, OptimizeMemory: true}
}
