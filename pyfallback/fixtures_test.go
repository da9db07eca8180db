package pyfallback

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/internal/raceflag"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/loaders"
	"github.com/gosr/gosr/staticruntime"
)

const fixtures = "../testdata/pyfallback"

// shared is one manager for the package's tests: a process holds few
// interpreters (see MaxInterpreters).
var shared *Manager

func manager(t testing.TB) *Manager {
	t.Helper()
	if shared == nil {
		m, err := NewManager(Options{Interpreters: 2})
		if errors.Is(err, ErrNoLibPython) {
			t.Skip(err)
		}
		require.NoError(t, err)
		shared = m
	}
	return shared
}

func expected(t testing.TB, name string) *ivalue.Dict {
	v, err := loaders.ReadTorchSave(filepath.Join(fixtures, name+".expected.pt"))
	require.NoError(t, err)
	return v.Dict()
}

func get(d *ivalue.Dict, k string) ivalue.IValue {
	v, _ := d.Get(ivalue.FromString(k))
	return v
}

// sameValue compares a gosr result with PyTorch's, floats to 1e-5.
func sameValue(want, got ivalue.IValue) error {
	if want.Kind() != got.Kind() {
		return fmt.Errorf("kind %s, want %s", got.Kind(), want.Kind())
	}
	switch want.Kind() {
	case ivalue.KindTensor:
		w, g := want.Tensor(), got.Tensor()
		if w.DType() != g.DType() || fmt.Sprint(w.Sizes()) != fmt.Sprint(g.Sizes()) {
			return fmt.Errorf("tensor %s%v, want %s%v", g.DType(), g.Sizes(), w.DType(), w.Sizes())
		}
		wf, gf := w.Float64s(), g.Float64s()
		for i := range wf {
			if math.Abs(wf[i]-gf[i]) > 1e-5*(1+math.Abs(wf[i])) {
				return fmt.Errorf("element %d: %v, want %v", i, gf[i], wf[i])
			}
		}
		return nil
	case ivalue.KindList, ivalue.KindTuple:
		w, g := want.List().Items, got.List().Items
		if len(w) != len(g) {
			return fmt.Errorf("%d items, want %d", len(g), len(w))
		}
		for i := range w {
			if err := sameValue(w[i], g[i]); err != nil {
				return fmt.Errorf("item %d: %w", i, err)
			}
		}
		return nil
	case ivalue.KindDouble:
		if math.Abs(want.Double()-got.Double()) > 1e-9 {
			return fmt.Errorf("%v, want %v", got.Double(), want.Double())
		}
		return nil
	}
	if want.String() != got.String() {
		return fmt.Errorf("%s, want %s", got, want)
	}
	return nil
}

// TestFixturesAgainstPyTorch runs every archive's model in gosr, graph
// nodes in Go and python_call nodes in the interpreters, and compares
// with what PyTorch got running the same archive.
func TestFixturesAgainstPyTorch(t *testing.T) {
	m := manager(t)
	for _, name := range []string{"tokenizer", "numpy_feat", "clash_a", "clash_b", "objects", "errors"} {
		t.Run(name, func(t *testing.T) {
			p, err := m.LoadPackage(filepath.Join(fixtures, name+".pt"))
			require.NoError(t, err)
			sm, _, err := p.Module("model", "model.pkl", nil)
			require.NoError(t, err)
			exp := expected(t, name)
			ins, outs := get(exp, "inputs").List().Items, get(exp, "outputs").List().Items
			// Two runtimes: each has its own interpreter affinity.
			for k := 0; k < 2; k++ {
				rt := sm.NewRuntime()
				for i := range ins {
					got, err := rt.Run(ins[i].List().Items...)
					require.NoError(t, err, "case %d", i)
					want := outs[i]
					var g ivalue.IValue
					if len(got) == 1 {
						g = got[0]
					} else {
						g = ivalue.NewTuple(got...)
					}
					require.NoError(t, sameValue(want, g), "case %d", i)
				}
			}
			for i, e := range get(exp, "errors").List().Items {
				d := e.Dict()
				rt := sm.NewRuntime()
				_, err := rt.Run(get(d, "inputs").List().Items...)
				require.Error(t, err, "error case %d", i)
				assert.Contains(t, err.Error(), get(d, "message").Str())
				assert.Contains(t, err.Error(), "python_call", "the error names the node")
				assert.Contains(t, err.Error(), "errpkg/bad.py", "the traceback shows the packaged file")
			}
		})
	}
}

// TestInterruptFallback stops a fallback that runs too long with a
// context deadline; its interpreter stays usable.
func TestInterruptFallback(t *testing.T) {
	m := manager(t)
	p, err := m.LoadPackage(filepath.Join(fixtures, "errors.pt"))
	require.NoError(t, err)
	sm, _, err := p.Module("model", "model.pkl", nil)
	require.NoError(t, err)
	rt := sm.NewRuntime()
	x := ivalue.FromTensor(ivalue.F32Tensor([]float32{1, 2, 3, 4, 5, 6}, 2, 3))
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, err = rt.RunContext(ctx, x, ivalue.FromInt(1))
	require.Error(t, err)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(t0), 5*time.Second)
	out, err := rt.Run(x, ivalue.FromInt(0))
	require.NoError(t, err)
	assert.Equal(t, []float32{4, 6, 8, 10, 12, 14}, out[0].Tensor().F32())
}

var _ = staticruntime.DefaultOptions

// TestFallbackRunAllocatesNothing: a steady run of the tokenizer model,
// Python call included, allocates nothing in Go: C calls go through the
// interpreter's argument block, and the tensors the call returns are
// copied into the node's own tensors, reused from run to run.
func TestFallbackRunAllocatesNothing(t *testing.T) {
	if raceflag.Enabled {
		t.Skip("allocation counts differ under -race")
	}
	m := manager(t)
	p, err := m.LoadPackage(filepath.Join(fixtures, "tokenizer.pt"))
	require.NoError(t, err)
	sm, _, err := p.Module("model", "model.pkl", nil)
	require.NoError(t, err)
	exp := expected(t, "tokenizer")
	ins, outs := get(exp, "inputs").List().Items, get(exp, "outputs").List().Items
	rt := sm.NewRuntime()
	in := ins[2].List().Items // four sentences, srbench's batch
	for range 20 {
		_, err := rt.Run(in...)
		require.NoError(t, err)
	}
	assert.Zero(t, testing.AllocsPerRun(200, func() { _, _ = rt.Run(in...) }))
	got, err := rt.Run(in...)
	require.NoError(t, err)
	require.NoError(t, sameValue(outs[2], got[0]))
}

// TestFallbackOutputsKept: a python_call's tensor that is a graph output
// (objects.pt returns l2_normalize's result) stays the caller's under
// ManageOutputTensors when the caller runs again without releasing it,
// and each run still matches PyTorch; after ReleaseOutputs the node's
// tensor is reused.
func TestFallbackOutputsKept(t *testing.T) {
	m := manager(t)
	p, err := m.LoadPackage(filepath.Join(fixtures, "objects.pt"))
	require.NoError(t, err)
	o := staticruntime.DefaultOptions()
	o.ManageOutputTensors = true
	sm, _, err := p.Module("model", "model.pkl", &o)
	require.NoError(t, err)
	exp := expected(t, "objects")
	ins, outs := get(exp, "inputs").List().Items, get(exp, "outputs").List().Items
	require.GreaterOrEqual(t, len(ins), 2)
	rt := sm.NewRuntime()
	run := func(i int) *ivalue.Tensor {
		got, err := rt.Run(ins[i].List().Items...)
		require.NoError(t, err)
		require.NoError(t, sameValue(outs[i], got[0]), "case %d", i)
		return got[0].Tensor() // the slice is the runtime's
	}
	first := run(0)
	kept := first.Float64s()
	second := run(1) // first not released
	assert.NotSame(t, first, second)
	assert.Equal(t, kept, first.Float64s(), "the kept output was written by the next run")
	rt.ReleaseOutputs()
	third := run(0)
	assert.Same(t, second, third, "after ReleaseOutputs the node's tensor is reused")
}

// pyLoopIR calls clash_a's models.resnet:head (2x+1) in a loop: the
// result is carried to the next iteration, stored in a list, and used
// once inside the iteration only (%d, its 0-d sum). A python_call's
// tensor is reused from run to run, never where an earlier one must
// survive.
const pyLoopIR = `graph(%x : Tensor, %n : int):
  %fn : str = prim::Constant[value="models.resnet:head"]()
  %true : bool = prim::Constant[value=1]()
  %none : NoneType = prim::Constant()
  %l : Tensor[] = prim::ListConstruct()
  %y : Tensor = prim::Loop(%n, %true, %x)
    block0(%i : int, %acc : Tensor):
      %h : Tensor = gosr::python_call(%fn, %acc)
      %t : Tensor = gosr::python_call(%fn, %h)
      %d : Tensor = aten::sum(%t, %none)
      %_ : Tensor[] = aten::append(%l, %h)
      -> (%true, %h)
  return (%y, %l)
`

func TestPythonCallInLoop(t *testing.T) {
	m := manager(t)
	p, err := m.LoadPackage(filepath.Join(fixtures, "clash_a.pt"))
	require.NoError(t, err)
	g, err := graph.Parse(pyLoopIR, nil)
	require.NoError(t, err)
	o := staticruntime.DefaultOptions()
	o.Python = p
	sm, err := staticruntime.NewStaticModule(g, &o)
	require.NoError(t, err)
	rt := sm.NewRuntime()
	x := ivalue.NewTensor(ivalue.Float32, 2, 3)
	for i, v := range []float32{1, 2, 3, -1, 0, 0.5} {
		x.F32()[i] = v
	}
	for run := range 3 {
		n := 3 + run
		out, err := rt.Run(ivalue.FromTensor(x), ivalue.FromInt(int64(n)))
		require.NoError(t, err)
		items := out[1].List().Items
		require.Len(t, items, n)
		want := append([]float32(nil), x.F32()...)
		for k := range n {
			for i := range want {
				want[i] = 2*want[i] + 1
			}
			assert.Equal(t, want, items[k].Tensor().F32(), "run %d, iteration %d", run, k)
		}
		assert.Equal(t, want, out[0].Tensor().F32(), "run %d, loop result", run)
	}
}
