package serve

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders"
	"github.com/gosr/gosr/serve/configpb"
	"github.com/gosr/gosr/staticruntime"
)

// tensorSpec is one input or output of a model as the protocol states
// it: name, datatype and shape (with the batch dimension, -1 for any).
type tensorSpec struct {
	Name  string
	DType ivalue.DType // Undefined: not declared (metadata says FP32; any type is taken)
	Shape []int64      // nil: rank not declared
	// alias is the other name the input answers to: INPUT__i for an
	// argument name, the argument's name for INPUT__i.
	alias string
}

func (s tensorSpec) datatype() string {
	if s.DType == ivalue.Undefined {
		return "FP32"
	}
	return Datatype(s.DType)
}

func (s tensorSpec) shape() []int64 {
	if s.Shape == nil {
		return []int64{-1}
	}
	return s.Shape
}

// fits reports whether a tensor of shape fits the spec.
func (s tensorSpec) fits(shape []int64) bool {
	if s.Shape == nil {
		return true
	}
	if len(shape) != len(s.Shape) {
		return false
	}
	for i, d := range s.Shape {
		if d >= 0 && shape[i] != d {
			return false
		}
	}
	return true
}

// learn fills what s does not declare from an example tensor t: its
// datatype, and its shape (dim 0 any size when batched).
func (s *tensorSpec) learn(t *ivalue.Tensor, batched bool) {
	if s.DType == ivalue.Undefined {
		s.DType = t.DType()
	}
	if s.Shape == nil {
		s.Shape = int64Shape(t.Sizes())
		if batched && len(s.Shape) > 0 {
			s.Shape[0] = -1
		}
	}
}

// modelVersion is one version of a model, prepared and ready to run:
// what a request holds while it runs. Its fields do not change once it
// is published; a reload publishes a new one and retires this one.
type modelVersion struct {
	name     string
	version  int64
	platform string
	cfg      *configpb.ModelConfig
	path     string

	inputs, outputs []tensorSpec
	maxBatch        int // 0: no batch dimension (max_batch_size 0)
	instances       int

	model  *loaders.Model
	module *staticruntime.StaticModule
	pool   *staticruntime.Pool
	batch  *batcher // nil: no dynamic batching

	pending  atomic.Int64 // requests queued or running
	maxQueue int64

	// refs counts the requests holding the version; retired is set when
	// a newer version or an unload replaces it, and done is closed when
	// the last request has let go after that.
	refs     atomic.Int64
	retired  atomic.Bool
	done     chan struct{}
	doneOnce sync.Once

	metrics *modelMetrics
}

func (v *modelVersion) versionString() string { return strconv.FormatInt(v.version, 10) }

// acquire takes a reference for one request, or reports that v is
// retired (the caller looks the model up again).
func (v *modelVersion) acquire() bool {
	v.refs.Add(1)
	if v.retired.Load() {
		v.release()
		return false
	}
	return true
}

func (v *modelVersion) release() {
	if v.refs.Add(-1) == 0 && v.retired.Load() {
		v.doneOnce.Do(func() { close(v.done) })
	}
}

// retire stops new requests taking v, waits for those that hold it
// (at most ctx's time), then frees it.
func (v *modelVersion) retire(ctx context.Context) error {
	v.retired.Store(true)
	if v.refs.Load() == 0 {
		v.doneOnce.Do(func() { close(v.done) })
	}
	var err error
	select {
	case <-v.done:
	case <-ctx.Done():
		err = fmt.Errorf("model %s version %d: requests still running when the wait for them ended: %w", v.name, v.version, ctx.Err())
	}
	v.free()
	return err
}

func (v *modelVersion) free() {
	if v.batch != nil {
		v.batch.close()
	}
	if v.module != nil {
		v.module.Close()
	}
	if v.model != nil {
		v.model.Close()
	}
}

// loadOptions is what loading a model needs from the server.
type loadOptions struct {
	defaultInstances int
	maxQueue         int
	runtime          staticruntime.Options
	python           func() (pythonLoader, error)
	loader           *loaders.Options
}

// pythonLoader loads torch.package archives (pyfallback.Manager).
type pythonLoader interface {
	loadPackage(path, pkg, resource string, o *staticruntime.Options) (*staticruntime.StaticModule, *loaders.Model, error)
}

// loadVersion loads, prepares and warms version dir of model name.
func loadVersion(ctx context.Context, name string, version int64, dir string, cfg *configpb.ModelConfig, o loadOptions) (_ *modelVersion, err error) {
	file := cfg.GetDefaultModelFilename()
	if file == "" {
		file = "model.pt"
	}
	path := filepath.Join(dir, file)
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("model %s version %d: %w", name, version, err)
	}
	v := &modelVersion{name: name, version: version, cfg: cfg, path: path, maxBatch: int(cfg.GetMaxBatchSize()), done: make(chan struct{})}
	defer func() {
		if err != nil {
			v.free()
		}
	}()
	ropts := o.runtime
	isPackage := cfg.GetPlatform() == "torch_package" || parameter(cfg, "torch_package", "") == "true"
	if isPackage {
		if o.python == nil {
			return nil, fmt.Errorf("model %s: a torch.package model needs the Python fallback, which this server has off", name)
		}
		py, err := o.python()
		if err != nil {
			return nil, fmt.Errorf("model %s: %w", name, err)
		}
		v.module, v.model, err = py.loadPackage(path, parameter(cfg, "package_name", "model"), parameter(cfg, "package_resource", "model.pkl"), &ropts)
		if err != nil {
			return nil, fmt.Errorf("model %s version %d: %w", name, version, err)
		}
		v.platform = "torch_package"
	} else {
		// Read, not mapped: a model file overwritten in place while it
		// serves (a common way to update a repository) must not pull
		// the weights from under running requests.
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("model %s version %d: %w", name, version, err)
		}
		v.model, err = loaders.LoadBytesOptions(path, data, o.loader)
		if err != nil {
			return nil, fmt.Errorf("model %s version %d: %w", name, version, err)
		}
		v.module, err = staticruntime.NewStaticModuleContext(ctx, v.model.Graph, &ropts)
		if err != nil {
			return nil, fmt.Errorf("model %s version %d (%s): %w", name, version, path, err)
		}
		v.platform = "pytorch_libtorch"
	}
	if err := v.specs(); err != nil {
		return nil, fmt.Errorf("model %s version %d: %w", name, version, err)
	}
	v.instances = o.defaultInstances
	for _, g := range cfg.GetInstanceGroup() {
		if g.GetCount() > 0 {
			v.instances = int(g.GetCount())
		}
	}
	v.pool = staticruntime.NewPool(v.module, v.instances)
	v.maxQueue = int64(o.maxQueue)
	if q := cfg.GetDynamicBatching().GetDefaultQueuePolicy().GetMaxQueueSize(); q > 0 {
		v.maxQueue = int64(q)
	}
	if db := cfg.GetDynamicBatching(); db != nil && v.maxBatch > 0 {
		pref := make([]int, len(db.PreferredBatchSize))
		for i, p := range db.PreferredBatchSize {
			pref[i] = int(p)
		}
		v.batch = newBatcher(batcherOptions{
			MaxBatchSize:        v.maxBatch,
			MaxQueueDelay:       time.Duration(db.MaxQueueDelayMicroseconds) * time.Microsecond,
			PreferredBatchSizes: pref,
			MaxQueueSize:        int(v.maxQueue),
			Workers:             v.instances,
			InputNames:          specNames(v.inputs),
			OutputNames:         specNames(v.outputs),
		}, v.execute)
	}
	if err := v.warmup(ctx, dir); err != nil {
		return nil, fmt.Errorf("model %s version %d: warm-up: %w", name, version, err)
	}
	return v, nil
}

// specs fills inputs and outputs from the config, or else from the
// TorchScript signature: argument names (INPUT__i accepted too) and
// OUTPUT__i for the i-th tensor the model returns.
func (v *modelVersion) specs() error {
	args := v.module.InputNames()
	batchDim := func(dims []int64) []int64 {
		if dims == nil {
			return nil
		}
		if v.maxBatch > 0 {
			return append([]int64{-1}, dims...)
		}
		return append([]int64(nil), dims...)
	}
	if cins := v.cfg.GetInput(); len(cins) > 0 {
		if len(cins) != len(args) {
			return fmt.Errorf("config.pbtxt declares %d inputs; forward takes %d (%s)", len(cins), len(args), strings.Join(args, ", "))
		}
		v.inputs = make([]tensorSpec, len(args))
		placed := make([]bool, len(args))
		for i, ci := range cins {
			// Triton's PyTorch backend: an argument's name, or
			// <anything>__<index>, or else the declaration order.
			at := i
			if j := indexOf(args, ci.Name); j >= 0 {
				at = j
			} else if k := strings.LastIndex(ci.Name, "__"); k >= 0 {
				if n, err := strconv.Atoi(ci.Name[k+2:]); err == nil && n >= 0 && n < len(args) {
					at = n
				}
			}
			if placed[at] {
				return fmt.Errorf("config.pbtxt inputs %q and %q both name forward's argument %d (%s)", v.inputs[at].Name, ci.Name, at, args[at])
			}
			placed[at] = true
			dt, _ := dtypeOfConfig(ci.DataType)
			v.inputs[at] = tensorSpec{Name: ci.Name, DType: dt, Shape: batchDim(ci.Dims), alias: args[at]}
		}
	} else {
		v.inputs = make([]tensorSpec, len(args))
		for i, a := range args {
			v.inputs[i] = tensorSpec{Name: a, alias: fmt.Sprintf("INPUT__%d", i)}
		}
	}
	if couts := v.cfg.GetOutput(); len(couts) > 0 {
		v.outputs = make([]tensorSpec, len(couts))
		for i, co := range couts {
			dt, _ := dtypeOfConfig(co.DataType)
			v.outputs[i] = tensorSpec{Name: co.Name, DType: dt, Shape: batchDim(co.Dims)}
		}
	} else {
		n := returnedTensors(v.module.Graph())
		v.outputs = make([]tensorSpec, n)
		for i := range v.outputs {
			v.outputs[i] = tensorSpec{Name: fmt.Sprintf("OUTPUT__%d", i)}
		}
	}
	return nil
}

func indexOf(xs []string, s string) int {
	for i, x := range xs {
		if x == s {
			return i
		}
	}
	return -1
}

// returnedTensors is how many tensors the graph returns once tuples and
// lists of known length are flattened (1 where it cannot tell).
func returnedTensors(g *graph.Graph) int {
	n := 0
	for _, o := range g.Outputs() {
		if o.Type != nil && o.Type.Kind == graph.TupleType && len(o.Type.Elems) > 0 {
			n += len(o.Type.Elems)
		} else {
			n++
		}
	}
	return n
}

func specNames(specs []tensorSpec) []string {
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	return names
}

// execute runs the model once on inputs (in argument order) and returns
// its tensors, flattened and copied out of the runtime.
func (v *modelVersion) execute(ctx context.Context, inputs []*ivalue.Tensor) ([]*ivalue.Tensor, error) {
	outs, _, err := v.executeTimed(ctx, inputs)
	return outs, err
}

// executeTimed is execute that also says when a runtime took the run
// (the end of the request's queueing). Each run a runtime took counts
// as one execution, of the rows in dim 0 (one batch, for the batcher).
func (v *modelVersion) executeTimed(ctx context.Context, inputs []*ivalue.Tensor) ([]*ivalue.Tensor, time.Time, error) {
	var outs []*ivalue.Tensor
	var started time.Time
	err := v.pool.Do(ctx, func(r *staticruntime.StaticRuntime) error {
		started = time.Now()
		args := make([]ivalue.IValue, len(inputs))
		for i, t := range inputs {
			args[i] = ivalue.FromTensor(t)
		}
		res, err := r.RunContext(ctx, args...)
		if err != nil {
			return err
		}
		outs, err = flattenCopy(res, outs[:0])
		return err
	})
	if mm := v.metrics; mm != nil && !started.IsZero() { // nil in warm-up, which is not counted
		mm.exec.Inc()
		rows := 1
		if v.maxBatch > 0 && len(inputs) > 0 && inputs[0].Dim() > 0 {
			rows = inputs[0].Size(0)
		}
		mm.batchRows.Observe(float64(rows))
	}
	if err != nil {
		return nil, started, err
	}
	if len(outs) != len(v.outputs) {
		return nil, started, &Error{Code: CodeInternal, Msg: fmt.Sprintf("model %s returned %d tensors; its configuration declares %d outputs", v.name, len(outs), len(v.outputs))}
	}
	return outs, started, nil
}

// managedBytes is the planned memory of the pool's runtimes (each has
// run on its planned slab in warm-up).
func (v *modelVersion) managedBytes() int64 {
	var b int64
	_ = v.pool.Do(context.Background(), func(r *staticruntime.StaticRuntime) error {
		b = r.MemoryStats().ManagedBytes
		return nil
	})
	return b * int64(v.instances)
}

// flattenCopy appends copies of the tensors of vals (tensors, and tuples
// and lists of them) to dst.
func flattenCopy(vals []ivalue.IValue, dst []*ivalue.Tensor) ([]*ivalue.Tensor, error) {
	for _, v := range vals {
		switch v.Kind() {
		case ivalue.KindTensor:
			c, err := v.Tensor().CloneErr()
			if err != nil {
				return nil, err
			}
			dst = append(dst, c)
		case ivalue.KindTuple, ivalue.KindList:
			var err error
			if dst, err = flattenCopy(v.List().Items, dst); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("the model returned a %s; gosr serve answers with tensors only", v.Kind())
		}
	}
	return dst, nil
}

// warmup runs the model before it reports ready, so that the first
// request does not pay for first-run work (plans, caches): on the
// version's own sample inputs (inputs.pt beside the model, a tuple
// written by torch.save), else on zeros at the declared shapes (batch 1,
// any-size dimensions 1). A model with neither is not warmed (logged by
// the caller through its state reason).
func (v *modelVersion) warmup(ctx context.Context, dir string) error {
	var inputs []*ivalue.Tensor
	sample := filepath.Join(dir, "inputs.pt")
	if _, err := os.Stat(sample); err == nil {
		val, err := loaders.ReadTorchSave(sample)
		if err != nil {
			return err
		}
		ts, err := flattenCopy([]ivalue.IValue{val}, nil)
		if err != nil {
			return fmt.Errorf("%s: %w", sample, err)
		}
		if len(ts) != len(v.inputs) {
			return fmt.Errorf("%s holds %d tensors; the model takes %d inputs", sample, len(ts), len(v.inputs))
		}
		inputs = ts
		// The samples tell the datatypes and shapes the signature did not.
		for i, t := range ts {
			v.inputs[i].learn(t, v.maxBatch > 0)
		}
	} else {
		for _, s := range v.inputs {
			if s.Shape == nil {
				return nil
			}
			shape := append([]int64(nil), s.Shape...)
			for i := range shape {
				if shape[i] < 0 {
					shape[i] = 1
				}
			}
			dt := s.DType
			if dt == ivalue.Undefined {
				dt = ivalue.Float32
			}
			t, err := newTensor(dt, shape, 1<<30)
			if err != nil {
				return err
			}
			inputs = append(inputs, t)
		}
	}
	// A first run tells the datatypes and shapes of the outputs the
	// config does not declare.
	outs, err := v.execute(ctx, inputs)
	if err != nil {
		return err
	}
	for i, t := range outs {
		v.outputs[i].learn(t, v.maxBatch > 0)
	}
	// Every runtime of the pool runs at least twice, holding its runtime
	// throughout (so that each one is used): the first run of a
	// runtime records its tensors' sizes and the second runs on the
	// planned slab, dropping the first run's separate tensors.
	counts := 2
	for _, w := range v.cfg.GetModelWarmup() {
		counts = max(counts, int(w.GetCount()))
	}
	args := make([]ivalue.IValue, len(inputs))
	for i, t := range inputs {
		args[i] = ivalue.FromTensor(t)
	}
	var wg sync.WaitGroup
	errs := make([]error, v.instances)
	for i := range v.instances {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = v.pool.Do(ctx, func(r *staticruntime.StaticRuntime) error {
				for range counts {
					if _, err := r.RunContext(ctx, args...); err != nil {
						return err
					}
				}
				return nil
			})
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
