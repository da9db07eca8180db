package hostile

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/internal/fixture"
	"github.com/gosr/gosr/internal/ptfixture"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders"
	"github.com/gosr/gosr/staticruntime"
)

// fixtureModels are the committed PyTorch fixtures (testdata/pt) whose
// scripted archives the run-input cases feed; TestCasesWellFormed checks
// each is in the manifest.
var fixtureModels = []string{
	"mlp", "deep_and_wide", "dlrm_like", "transformer_block", "control_flow", "small_cnn",
	"text_classifier", "fork_ensemble", "fork_cnn", "fork_nested", "fork_loop",
}

// fixtureRun is a loaded fixture: its runtime, inputs and expected outputs.
type fixtureRun struct {
	c      ptfixture.Case
	m      *loaders.Model
	r      *staticruntime.StaticRuntime
	inputs []ivalue.IValue
	want   []*ivalue.Tensor
}

func loadFixture(model string) (*fixtureRun, error) {
	cases, err := ptfixture.Manifest(ptfixture.Committed())
	if err != nil {
		return nil, err
	}
	for _, c := range cases {
		if c.Model != model || c.Variant != "scripted" {
			continue
		}
		in, err := loaders.ReadTorchSave(c.Inputs)
		if err != nil {
			return nil, err
		}
		inputs := []ivalue.IValue{in}
		if in.Kind() == ivalue.KindTuple || in.Kind() == ivalue.KindList {
			inputs = in.List().Items
		}
		want, err := loaders.ReadTorchSave(c.Expected)
		if err != nil {
			return nil, err
		}
		m, err := loaders.Load(c.Path)
		if err != nil {
			return nil, err
		}
		sm, err := staticruntime.NewStaticModule(m.Graph, nil)
		if err != nil {
			return nil, err
		}
		return &fixtureRun{c: c, m: m, r: sm.NewRuntime(), inputs: inputs, want: fixture.Flatten([]ivalue.IValue{want})}, nil
	}
	return nil, fmt.Errorf("no scripted fixture %s in %s", model, ptfixture.Committed())
}

// check compares outputs with the fixture's expected ones.
func (f *fixtureRun) check(outs []ivalue.IValue) error {
	got := fixture.Flatten(outs)
	if len(got) != len(f.want) {
		return Wrongf("%d output tensors, want %d", len(got), len(f.want))
	}
	for i := range got {
		if err := fixture.Compare(got[i], f.want[i], f.c.RTol, f.c.ATol); err != nil {
			return Wrongf("output %d: %v", i, err)
		}
	}
	return nil
}

// first is the index of the first tensor input.
func (f *fixtureRun) first() int {
	for i, v := range f.inputs {
		if v.IsTensor() {
			return i
		}
	}
	return -1
}

// with is the inputs with the first tensor replaced.
func (f *fixtureRun) with(t *ivalue.Tensor) []ivalue.IValue {
	in := slices.Clone(f.inputs)
	in[f.first()] = ivalue.FromTensor(t)
	return in
}

// expanded is t's first row repeated along dim 0 by a stride of 0.
func expanded(t *ivalue.Tensor) (*ivalue.Tensor, error) {
	c := t.Contiguous()
	strides := slices.Clone(c.Strides())
	strides[0] = 0
	return ivalue.FromStorage(c.DType(), c.Storage(), c.Offset(), c.Sizes(), strides)
}

// atOffset is a copy of t five elements into a larger storage.
func atOffset(t *ivalue.Tensor) (*ivalue.Tensor, error) {
	c := t.Contiguous()
	es := c.DType().Size()
	s := ivalue.NewStorage((c.Numel() + 8) * es)
	copy(s.Data[5*es:], c.Storage().Data[c.Offset()*es:(c.Offset()+c.Numel())*es])
	return ivalue.FromStorage(c.DType(), s, 5, c.Sizes(), nil)
}

// Inputs that are wrong, strided or enormous, fed to the fixture models:
// an error or the right answer, never a crash. Strided inputs with the
// same values must give the same outputs.
func runInputCases() []Case {
	var cs []Case
	for _, model := range fixtureModels {
		c := func(name string, run func(f *fixtureRun) error) Case {
			return Case{Name: ClassRunInput + "/" + model + "/" + name, Class: ClassRunInput, Run: func() error {
				f, err := loadFixture(model)
				if err != nil {
					return fmt.Errorf("fixture: %w (not a hostile input: the case cannot start)", err)
				}
				defer f.m.Close()
				return run(f)
			}}
		}
		valid := func(outs []ivalue.IValue, err error, f *fixtureRun) error {
			if err != nil {
				return Wrongf("failed on a valid input: %v", err)
			}
			return f.check(outs)
		}
		cs = append(cs,
			c("baseline", func(f *fixtureRun) error {
				outs, err := f.r.Run(f.inputs...)
				return valid(outs, err, f)
			}),
			c("noncontiguous", func(f *fixtureRun) error {
				outs, err := f.r.Run(f.with(fixture.NonContiguous(f.inputs[f.first()].Tensor()))...)
				return valid(outs, err, f)
			}),
			c("storage-offset", func(f *fixtureRun) error {
				t, err := atOffset(f.inputs[f.first()].Tensor())
				if err != nil {
					return err
				}
				outs, err := f.r.Run(f.with(t)...)
				return valid(outs, err, f)
			}),
			c("expanded-rows", func(f *fixtureRun) error {
				// The reference is the same values, contiguous.
				t, err := expanded(f.inputs[f.first()].Tensor())
				if err != nil {
					return err
				}
				ref, err := f.r.Run(f.with(t.Contiguous())...)
				if err != nil {
					return err
				}
				f.want = fixture.Flatten(cloneAll(ref))
				outs, err := f.r.Run(f.with(t)...)
				return valid(outs, err, f)
			}),
			c("bad-variants", func(f *fixtureRun) error {
				// Each wrong input is an error or runs; then the runtime
				// still gives the right answer.
				bad := fixture.BadVariants(f.inputs[f.first()].Tensor())
				var errs []string
				for _, k := range slices.Sorted(maps.Keys(bad)) {
					if _, err := f.r.Run(f.with(bad[k])...); err != nil {
						errs = append(errs, k+": "+err.Error())
					}
				}
				outs, err := f.r.Run(f.inputs...)
				if err := valid(outs, err, f); err != nil {
					return Wrongf("after the bad inputs (%s): %v", strings.Join(errs, "; "), err)
				}
				return nil
			}),
			c("batch-2^40-expanded", func(f *fixtureRun) error {
				// A legal view, 2^40 rows over one: an error, not 2^40 rows
				// of output (terabytes).
				t := f.inputs[f.first()].Tensor().Contiguous()
				sizes, strides := slices.Clone(t.Sizes()), slices.Clone(t.Strides())
				if len(sizes) == 0 {
					return errors.New("0-d input")
				}
				sizes[0], strides[0] = 1<<40, 0
				big, err := ivalue.FromStorage(t.DType(), t.Storage(), t.Offset(), sizes, strides)
				if err != nil {
					return err
				}
				outs, err := f.r.Run(f.with(big)...)
				if err != nil {
					return err
				}
				return Wrongf("ran %v rows: outputs %v", sizes, sizesOf(outs))
			}),
			c("numel-overflow", func(f *fixtureRun) error {
				t := f.inputs[f.first()].Tensor()
				sizes := append([]int{1 << 32, 1 << 32}, t.Sizes()...)
				strides := append([]int{0, 0}, t.Strides()...)
				big, err := ivalue.FromStorage(t.DType(), t.Storage(), t.Offset(), sizes, strides)
				if err != nil {
					return err
				}
				outs, err := f.r.Run(f.with(big)...)
				return rejected(err, "input of sizes %v: outputs %v", sizes, sizesOf(outs))
			}),
			c("arity-and-kinds", func(f *fixtureRun) error {
				var errs []string
				for name, in := range map[string][]ivalue.IValue{
					"no inputs":    nil,
					"one too many": append(slices.Clone(f.inputs), f.inputs[0]),
					"none":         f.with(nil),
					"int":          append(append([]ivalue.IValue{}, f.inputs[:f.first()]...), append([]ivalue.IValue{ivalue.FromInt(3)}, f.inputs[f.first()+1:]...)...),
					"string":       append(append([]ivalue.IValue{}, f.inputs[:f.first()]...), append([]ivalue.IValue{ivalue.FromString("x")}, f.inputs[f.first()+1:]...)...),
				} {
					_, err := f.r.Run(in...)
					if err == nil {
						return Wrongf("%s: accepted", name)
					}
					errs = append(errs, name+": "+err.Error())
				}
				outs, err := f.r.Run(f.inputs...)
				if err := valid(outs, err, f); err != nil {
					return err
				}
				slices.Sort(errs)
				return errors.New(strings.Join(errs, "; "))
			}),
		)
	}
	return cs
}

func cloneAll(vs []ivalue.IValue) []ivalue.IValue {
	out := make([]ivalue.IValue, len(vs))
	for i, v := range vs {
		out[i] = v.Clone()
	}
	return out
}

func sizesOf(vs []ivalue.IValue) [][]int {
	var out [][]int
	for _, t := range fixture.Flatten(vs) {
		out = append(out, t.Sizes())
	}
	return out
}

// irChain is a graph of n relus in a chain on %x.
func irChain(n int, op string) string {
	var b strings.Builder
	b.WriteString("graph(%x : Tensor):\n  %one : int = prim::Constant[value=1]()\n")
	prev := "%x"
	for i := range n {
		switch op {
		case "relu":
			fmt.Fprintf(&b, "  %%v%d : Tensor = aten::relu(%s)\n", i, prev)
		case "add":
			fmt.Fprintf(&b, "  %%v%d : Tensor = aten::add(%s, %%x, %%one)\n", i, prev)
		}
		prev = fmt.Sprintf("%%v%d", i)
	}
	fmt.Fprintf(&b, "  return (%s)\n", prev)
	return b.String()
}

// prepareIR parses, prepares and runs a graph on inputs.
func prepareIR(ir string, inputs ...ivalue.IValue) ([]ivalue.IValue, error) {
	g, err := graph.Parse(ir, nil)
	if err != nil {
		return nil, err
	}
	sm, err := staticruntime.NewStaticModule(g, nil)
	if err != nil {
		return nil, err
	}
	return sm.NewRuntime().Run(inputs...)
}

func graphCase(name string, e expect, ir func() string, want *ivalue.Tensor) Case {
	return Case{Name: ClassBigGraph + "/" + name, Class: ClassBigGraph, Run: func() error {
		outs, err := prepareIR(ir(), ivalue.FromTensor(x4()))
		return judge(e, outs, err, func(outs []ivalue.IValue) error { return expectTensor(outs, want) }, "%s", name)
	}}
}

// Big graphs: preparation must grow about linearly (PyTorch's takes 0.18 s
// for 10,000 nodes); here each must merely finish within the timeout.
func bigGraphCases() []Case {
	relu := ivalue.F32Tensor([]float32{1, 0, 3, 0}, 1, 4)
	times := func(k float32) *ivalue.Tensor { return ivalue.F32Tensor([]float32{k, -2 * k, 3 * k, -4 * k}, 1, 4) }
	nestedIf := func(depth int) string {
		var b strings.Builder
		b.WriteString("graph(%x : Tensor):\n  %c : bool = prim::Constant[value=1]()\n")
		var open func(d int, ind string, in string)
		open = func(d int, ind string, in string) {
			if d == 0 {
				fmt.Fprintf(&b, "%s%%r%d : Tensor = aten::relu(%s)\n", ind, depth, in)
				return
			}
			fmt.Fprintf(&b, "%s%%r%d : Tensor = prim::If(%%c)\n%s  block0():\n", ind, d, ind)
			open(d-1, ind+"    ", in)
			fmt.Fprintf(&b, "%s    -> (%%r%d)\n%s  block1():\n%s    -> (%s)\n", ind, d-1, ind, ind, in)
		}
		// Written iteratively would be longer; depth is small or the
		// parser must refuse it early.
		open(depth, "  ", "%x")
		b.WriteString("  return (%r" + fmt.Sprint(depth) + ")\n")
		return strings.Replace(b.String(), fmt.Sprintf("%%r%d : Tensor = aten::relu", depth), "%r0 : Tensor = aten::relu", 1)
	}
	return []Case{
		graphCase("relu-chain-1k", mustRun, func() string { return irChain(1_000, "relu") }, relu),
		graphCase("relu-chain-10k", mustRun, func() string { return irChain(10_000, "relu") }, relu),
		graphCase("relu-chain-100k", mustRun, func() string { return irChain(100_000, "relu") }, relu),
		graphCase("add-chain-100k", mustRun, func() string { return irChain(100_000, "add") }, times(100_001)),
		graphCase("wide-50k-relus-summed", mustRun, func() string {
			var b strings.Builder
			b.WriteString("graph(%x : Tensor):\n  %one : int = prim::Constant[value=1]()\n")
			for i := range 50_000 {
				fmt.Fprintf(&b, "  %%r%d : Tensor = aten::relu(%%x)\n", i)
			}
			prev := "%x"
			for i := range 50_000 {
				fmt.Fprintf(&b, "  %%s%d : Tensor = aten::add(%s, %%r%d, %%one)\n", i, prev, i)
				prev = fmt.Sprintf("%%s%d", i)
			}
			return b.String() + "  return (" + prev + ")\n"
		}, ivalue.F32Tensor([]float32{50_001, -2, 150_003, -4}, 1, 4)),
		graphCase("tuple-100k-inputs", either, func() string {
			return "graph(%x : Tensor):\n  %t : (Tensor) = prim::TupleConstruct(" + codeJoin("%x", ", ", 100_000) + ")\n  %y : Tensor = aten::relu(%x)\n  return (%y)\n"
		}, relu),
		graphCase("constants-100k", either, func() string {
			var b strings.Builder
			b.WriteString("graph(%x : Tensor):\n")
			for i := range 100_000 {
				fmt.Fprintf(&b, "  %%c%d : int = prim::Constant[value=%d]()\n", i, i)
			}
			return b.String() + "  %y : Tensor = aten::relu(%x)\n  return (%y)\n"
		}, relu),
		graphCase("nested-if-150", mustRun, func() string { return nestedIf(150) }, relu),
		graphCase("nested-if-2k", mustReject, func() string { return nestedIf(2_000) }, nil),
		// Through the loader, whose options may cap a graph's nodes.
		{Name: ClassBigGraph + "/tscode-relu-chain-100k", Class: ClassBigGraph, Run: func() error {
			outs, err := loadAndRun(scriptArchive(strings.Repeat("    x = torch.relu(x)\n", 100_000)+"    return x\n"), ivalue.FromTensor(x4()))
			return judge(either, outs, err, func(outs []ivalue.IValue) error { return expectTensor(outs, relu) }, "")
		}},
	}
}

const loopIR = `graph(%x : Tensor, %n : int):
  %true : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %y : Tensor = prim::Loop(%n, %true, %x)
    block0(%i : int, %acc : Tensor):
      %a : Tensor = aten::add(%acc, %x, %one)
      -> (%true, %a)
  return (%y)
`

// mlpModule loads the committed mlp fixture (mapped from its file) and
// prepares it.
func mlpModule() (*loaders.Model, *staticruntime.StaticModule, []ivalue.IValue, error) {
	f, err := loadFixture("mlp")
	if err != nil {
		return nil, nil, nil, err
	}
	return f.m, f.r.Module(), f.inputs, nil
}

// Misuse of the API a server could commit: use after Close, a runtime
// shared by goroutines, cancelled contexts, views read as contiguous.
func misuseCases() []Case {
	c := func(name string, run func() error) Case {
		return Case{Name: ClassMisuse + "/" + name, Class: ClassMisuse, Run: run}
	}
	return []Case{
		c("run-after-close", func() error {
			// The module keeps the mapping it views (StaticModule.Close
			// releases it): a run after Model.Close gives PyTorch's
			// outputs, or an error; never a fault.
			f, err := loadFixture("mlp")
			if err != nil {
				return err
			}
			if err := f.m.Close(); err != nil {
				return err
			}
			outs, err := f.r.Run(f.inputs...)
			if err != nil {
				return err
			}
			return f.check(outs)
		}),
		c("prepare-after-close", func() error {
			m, err := loaders.Load(filepath.Join(ptfixture.Committed(), "mlp.scripted.pt"))
			if err != nil {
				return err
			}
			m.Close()
			sm, err := staticruntime.NewStaticModule(m.Graph, nil)
			if err != nil {
				return err
			}
			_, err = sm.NewRuntime().Run(ivalue.FromTensor(ivalue.NewTensor(ivalue.Float32, 1, 64)))
			return rejected(err, "NewStaticModule and Run after Model.Close")
		}),
		c("close-twice", func() error {
			m, err := loaders.Load(filepath.Join(ptfixture.Committed(), "mlp.scripted.pt"))
			if err != nil {
				return err
			}
			if err := m.Close(); err != nil {
				return err
			}
			return m.Close()
		}),
		c("file-truncated-while-mapped", func() error {
			// The file a model was loaded from is rewritten in place.
			src, err := os.ReadFile(filepath.Join(ptfixture.Committed(), "mlp.scripted.pt"))
			if err != nil {
				return err
			}
			dir, err := os.MkdirTemp("", "hostile")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			path := filepath.Join(dir, "m.pt")
			if err := os.WriteFile(path, src, 0o644); err != nil {
				return err
			}
			m, err := loaders.Load(path)
			if err != nil {
				return err
			}
			defer m.Close()
			sm, err := staticruntime.NewStaticModule(m.Graph, nil)
			if err != nil {
				return err
			}
			if err := os.Truncate(path, 0); err != nil {
				return err
			}
			outs, err := sm.NewRuntime().Run(ivalue.FromTensor(ivalue.NewTensor(ivalue.Float32, 1, 64)))
			if err != nil {
				return err
			}
			return Wrongf("ran on weights whose file is gone: %v", sizesOf(outs))
		}),
		c("runtime-on-two-goroutines", func() error { return sharedRuntime(1) }),
		c("runtime-on-two-goroutines-batch-64", func() error { return sharedRuntime(64) }),
		c("module-on-eight-runtimes", func() error {
			// Legal: one module, a runtime per goroutine; all right.
			f, err := loadFixture("mlp")
			if err != nil {
				return err
			}
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for range 8 {
				wg.Go(func() {
					r := f.r.Module().NewRuntime()
					for range 500 {
						outs, err := r.Run(f.inputs...)
						if err == nil {
							err = f.check(outs)
						}
						if err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			return <-errs
		}),
		c("pool-do-cancelled", func() error {
			_, sm, _, err := mlpModule()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			ran := false
			err = staticruntime.NewPool(sm, 2).Do(ctx, func(*staticruntime.StaticRuntime) error { ran = true; return nil })
			if ran {
				return Wrongf("Pool.Do ran f with a cancelled context (returned %v)", err)
			}
			return rejected(err, "Pool.Do with a cancelled context")
		}),
		c("pool-run-cancelled", func() error {
			_, sm, in, err := mlpModule()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, err = staticruntime.NewPool(sm, 2).Run(ctx, in...)
			return rejected(err, "Pool.Run with a cancelled context")
		}),
		c("runcontext-cancelled", func() error {
			_, sm, in, err := mlpModule()
			if err != nil {
				return err
			}
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			_, err = sm.NewRuntime().RunContext(ctx, in...)
			return rejected(err, "RunContext with a cancelled context")
		}),
		c("loop-2^40-iterations-deadline", func() error {
			// A caller's trip count: a deadline must stop the run.
			g, err := graph.Parse(loopIR, nil)
			if err != nil {
				return err
			}
			sm, err := staticruntime.NewStaticModule(g, nil)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			defer cancel()
			t0 := time.Now()
			_, err = sm.NewRuntime().RunContext(ctx, ivalue.FromTensor(x4()), ivalue.FromInt(1<<40))
			if err == nil {
				return Wrongf("2^40 iterations finished")
			}
			if d := time.Since(t0); d > 5*time.Second {
				return Wrongf("stopped %s after a 200ms deadline: %v", d, err)
			}
			return err
		}),
		c("f32contig-of-transposed-view", func() error {
			return catchPanic(func() error {
				s := ivalue.F32Tensor([]float32{1, 2, 3, 4, 5, 6}, 2, 3)
				t, err := ivalue.FromStorage(ivalue.Float32, s.Storage(), 0, []int{3, 2}, []int{1, 3})
				if err != nil {
					return err
				}
				got := t.F32Contig()
				if !slices.Equal(got, []float32{1, 4, 2, 5, 3, 6}) {
					return Wrongf("F32Contig of the transposed view gave %v, want [1 4 2 5 3 6]", got)
				}
				return nil
			})
		}),
		c("run-nil-tensor-and-empty-args", func() error {
			_, sm, _, err := mlpModule()
			if err != nil {
				return err
			}
			r := sm.NewRuntime()
			for _, args := range [][]ivalue.IValue{nil, {ivalue.None()}, {ivalue.FromTensor(nil)}, {{}}} {
				if _, err := r.Run(args...); err == nil {
					return Wrongf("Run(%v) accepted", args)
				}
			}
			return errors.New("all refused")
		}),
		c("prepare-nil-and-empty-graph", func() error {
			if _, err := staticruntime.NewStaticModule(nil, nil); err == nil {
				return Wrongf("NewStaticModule(nil) accepted")
			}
			_, err := staticruntime.NewStaticModule(graph.New(), nil)
			return err
		}),
	}
}

// sharedRuntime runs one runtime from two goroutines at once, which the
// docs forbid, both on the same input of the given batch: gosr must refuse
// a run that overlaps another (an error), or every result must still be
// right. With one input, a run that follows another legally rewrites the
// same values into the outputs, so a wrong value can only come from runs
// that overlapped.
func sharedRuntime(batch int) error {
	f, err := loadFixture("mlp")
	if err != nil {
		return err
	}
	x := f.inputs[f.first()].Tensor().Contiguous()
	row := x.Nbytes() / x.Size(0)
	in := ivalue.NewTensor(x.DType(), append([]int{batch}, x.Sizes()[1:]...)...)
	for i := range batch {
		copy(in.Storage().Data[i*row:(i+1)*row], x.Storage().Data[x.Offset()*x.DType().Size():][:row])
	}
	outs, err := f.r.Module().NewRuntime().Run(ivalue.FromTensor(in))
	if err != nil {
		return err
	}
	ref := fixture.Flatten(cloneAll(outs))
	runs := 20_000 / batch
	var refused, wrong atomic.Int64
	var firstWrong, firstErr atomic.Value
	// calls counts Run calls begun. The outputs a run returns are the
	// runtime's until its next run: once the other goroutine has begun
	// a call after this one returned, that call may rightly be writing
	// them, and a mismatch read then is this misuse's own race, not a
	// wrong result. Only a mismatch with no call begun since counts.
	var calls atomic.Int64
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for range runs {
				calls.Add(1)
				outs, err := f.r.Run(ivalue.FromTensor(in))
				if err != nil {
					refused.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				seen := calls.Load()
				got := fixture.Flatten(outs)
				for j := range got {
					if err := fixture.Compare(got[j], ref[j], 1e-5, 1e-6); err != nil {
						if calls.Load() != seen {
							break // overwritten by a later run
						}
						wrong.Add(1)
						firstWrong.CompareAndSwap(nil, err.Error())
						break
					}
				}
			}
		})
	}
	wg.Wait()
	if n := wrong.Load(); n > 0 {
		return Wrongf("%d of %d results wrong without an error (%d runs refused); first: %v", n, 2*runs, refused.Load(), firstWrong.Load())
	}
	if n := refused.Load(); n > 0 {
		return fmt.Errorf("%d of %d runs refused: %v", n, 2*runs, firstErr.Load())
	}
	return nil
}
