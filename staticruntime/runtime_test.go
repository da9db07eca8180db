package staticruntime_test

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorgonia.org/tensor"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/internal/raceflag"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ivalue/dense"
	"github.com/gosr/gosr/memplan"
	"github.com/gosr/gosr/ops"
	"github.com/gosr/gosr/staticruntime"
)

func prepare(t testing.TB, ir string, opts *staticruntime.Options, consts ...*ivalue.Tensor) *staticruntime.StaticModule {
	t.Helper()
	g, err := graph.Parse(ir, &graph.ParseOptions{Tensors: consts})
	require.NoError(t, err)
	m, err := staticruntime.NewStaticModule(g, opts)
	require.NoError(t, err)
	return m
}

func f32(t testing.TB, v ivalue.IValue) []float32 {
	t.Helper()
	require.Equal(t, ivalue.KindTensor, v.Kind(), "want a tensor, got %s", v)
	return append([]float32(nil), v.Tensor().Contiguous().F32Contig()...)
}

// mulReluChain is the per-node overhead graph of the issue: 50 times
// aten::mul then aten::relu on 1-element tensors.
func mulReluChain(pairs int) string {
	var b strings.Builder
	b.WriteString("graph(%x : Tensor, %w : Tensor):\n")
	prev := "%x"
	for i := 0; i < pairs; i++ {
		fmt.Fprintf(&b, "  %%m%d : Tensor = aten::mul(%s, %%w)\n", i, prev)
		fmt.Fprintf(&b, "  %%r%d : Tensor = aten::relu(%%m%d)\n", i, i)
		prev = fmt.Sprintf("%%r%d", i)
	}
	fmt.Fprintf(&b, "  return (%s)\n", prev)
	return b.String()
}

const loopIfIR = `graph(%x.1 : Tensor, %n.1 : int):
  %true : bool = prim::Constant[value=1]()
  %two : float = prim::Constant[value=2.]()
  %zero : int = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
  %y : Tensor = prim::Loop(%n.1, %true, %x.1)
    block0(%i : int, %acc.1 : Tensor):
      %acc.2 : Tensor = aten::mul(%acc.1, %two)
      -> (%true, %acc.2)
  %s : Tensor = aten::sum(%y, %none)
  %pos : Tensor = aten::gt(%s, %zero)
  %c : bool = aten::Bool(%pos)
  %z : Tensor = prim::If(%c)
    block0():
      %z.1 : Tensor = aten::relu(%y)
      -> (%z.1)
    block1():
      %z.2 : Tensor = aten::neg(%y)
      -> (%z.2)
  return (%z)
`

func TestControlFlow(t *testing.T) {
	m := prepare(t, loopIfIR, nil)
	r := m.NewRuntime()
	tests := []struct {
		name string
		x    []float32
		n    int64
		want []float32
	}{
		{"loop 3, positive sum", []float32{1, -0.5, 2}, 3, []float32{8, 0, 16}},
		{"loop 0", []float32{1, -0.5, 2}, 0, []float32{1, 0, 2}},
		{"negative sum takes else", []float32{-1, 0.5, -2}, 2, []float32{4, -2, 8}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for rep := 0; rep < 3; rep++ { // reused runtime state gives the same answer
				outs, err := r.Run(ivalue.FromTensor(ivalue.F32Tensor(tc.x, 3)), ivalue.FromInt(tc.n))
				require.NoError(t, err)
				require.Len(t, outs, 1)
				assert.Equal(t, tc.want, f32(t, outs[0]))
			}
		})
	}
	// A loop carrying a tensor alternates between two buffers: no allocation.
	x := ivalue.FromTensor(ivalue.F32Tensor([]float32{1, 2, 3}, 3))
	if !raceflag.Enabled {
		allocs := testing.AllocsPerRun(50, func() { r.Run(x, ivalue.FromInt(5)) })
		assert.Zero(t, allocs)
	}
}

func TestKwargs(t *testing.T) {
	m := prepare(t, loopIfIR, nil)
	assert.Equal(t, []string{"x", "n"}, m.InputNames())
	r := m.NewRuntime()
	outs, err := r.RunKw(nil, map[string]ivalue.IValue{
		"x": ivalue.FromTensor(ivalue.F32Tensor([]float32{1, 2}, 2)),
		"n": ivalue.FromInt(1),
	})
	require.NoError(t, err)
	assert.Equal(t, []float32{2, 4}, f32(t, outs[0]))
	_, err = r.RunKw([]ivalue.IValue{ivalue.FromTensor(ivalue.F32Tensor([]float32{1}, 1))}, map[string]ivalue.IValue{"m": ivalue.FromInt(1)})
	require.ErrorContains(t, err, `missing input "n"`)
}

func TestBadInputs(t *testing.T) {
	m := prepare(t, loopIfIR, nil)
	r := m.NewRuntime()
	x := ivalue.FromTensor(ivalue.F32Tensor([]float32{1, 2}, 2))
	tests := []struct {
		name string
		args []ivalue.IValue
		want string
	}{
		{"too few", []ivalue.IValue{x}, "expected 2 inputs"},
		{"too many", []ivalue.IValue{x, ivalue.FromInt(1), ivalue.FromInt(1)}, "expected 2 inputs"},
		{"int for tensor", []ivalue.IValue{ivalue.FromInt(1), ivalue.FromInt(1)}, "input 0 (x): expected Tensor, got int"},
		{"tensor for int", []ivalue.IValue{x, x}, "input 1 (n): expected int, got Tensor"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.Run(tc.args...)
			require.ErrorContains(t, err, tc.want)
		})
	}
	// The runtime still works.
	outs, err := r.Run(x, ivalue.FromInt(1))
	require.NoError(t, err)
	assert.Equal(t, []float32{2, 4}, f32(t, outs[0]))
}

func TestRefinedInputTypes(t *testing.T) {
	m := prepare(t, `graph(%x : Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)):
  %y : Tensor = aten::relu(%x)
  return (%y)
`, nil)
	r := m.NewRuntime()
	_, err := r.Run(ivalue.FromTensor(ivalue.F32Tensor(make([]float32, 6), 3, 2)))
	require.ErrorContains(t, err, "sizes [3 2]")
	_, err = r.Run(ivalue.FromTensor(ivalue.I64Tensor(make([]int64, 6), 2, 3)))
	require.ErrorContains(t, err, "int64")
	_, err = r.Run(ivalue.FromTensor(ivalue.F32Tensor(make([]float32, 6), 2, 3)))
	require.NoError(t, err)
}

func TestPreparationErrors(t *testing.T) {
	tests := []struct {
		name, ir, want string
	}{
		{"unknown op", `graph(%x : Tensor):
  %y : Tensor = aten::frobnicate(%x)
  return (%y)
`, "aten::frobnicate(Tensor) -> (Tensor)"},
		{"overload nobody has", `graph(%x : Tensor):
  %s : str = prim::Constant[value="a"]()
  %y : Tensor = aten::relu(%x, %s)
  return (%y)
`, "aten::relu(Tensor, str)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g, err := graph.Parse(tc.ir, nil)
			require.NoError(t, err)
			_, err = staticruntime.NewStaticModule(g, nil)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestKernelErrorNamesNode(t *testing.T) {
	m := prepare(t, `graph(%a : Tensor, %b : Tensor):
  %c : Tensor = aten::mm(%a, %b) # model.py:3:4
  return (%c)
`, nil)
	r := m.NewRuntime()
	a := ivalue.FromTensor(ivalue.F32Tensor(make([]float32, 6), 2, 3))
	_, err := r.Run(a, a)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "%c = aten::mm")
	assert.Contains(t, err.Error(), "model.py:3:4")
	var ne *staticruntime.NodeError
	require.ErrorAs(t, err, &ne)
	assert.Equal(t, "aten::mm", ne.Op)
	// Usable afterwards.
	b := ivalue.FromTensor(ivalue.F32Tensor([]float32{1, 0, 0, 1, 1, 1}, 3, 2))
	outs, err := r.Run(ivalue.FromTensor(ivalue.F32Tensor([]float32{1, 2, 3, 4, 5, 6}, 2, 3)), b)
	require.NoError(t, err)
	assert.Equal(t, []float32{4, 5, 10, 11}, f32(t, outs[0]))
}

func TestNodeKinds(t *testing.T) {
	m := prepare(t, `graph(%x : Tensor):
  %one : int = prim::Constant[value=1]()
  %y : Tensor = aten::relu(%x)
  %z : Tensor = aten::transpose(%y, %one, %one)
  %s : int = aten::dim(%z)
  return (%z, %s)
`, nil)
	kinds := map[string]ops.Kind{}
	for _, n := range m.Nodes() {
		kinds[n.Op] = n.Kind
	}
	assert.Equal(t, ops.OutVariant, kinds["aten::relu"])
	assert.Equal(t, ops.Native, kinds["aten::transpose"])
	assert.Equal(t, ops.Native, kinds["aten::dim"])
	out, native, fb := m.KindCounts()
	assert.Equal(t, []int{1, 2, 0}, []int{out, native, fb})

	o := staticruntime.DefaultOptions()
	o.EnableOutVariant = false
	m2 := prepare(t, mulReluChain(1), &o)
	for _, n := range m2.Nodes() {
		assert.NotEqual(t, ops.OutVariant, n.Kind, n.Node)
	}
}

func TestOutputsFedBack(t *testing.T) {
	m := prepare(t, `graph(%x : Tensor, %w : Tensor):
  %one : int = prim::Constant[value=1]()
  %y : Tensor = aten::mul(%x, %w)
  %z : Tensor = aten::add(%y, %x, %one)
  return (%z)
`, nil)
	r := m.NewRuntime()
	w := ivalue.FromTensor(ivalue.F32Tensor([]float32{2}, 1))
	v := ivalue.FromTensor(ivalue.F32Tensor([]float32{1, 2}, 2))
	want := []float32{1, 2}
	for i := 0; i < 4; i++ {
		outs, err := r.Run(v, w)
		require.NoError(t, err)
		for k := range want {
			want[k] *= 3
		}
		assert.Equal(t, want, f32(t, outs[0]))
		v = outs[0] // the runtime's own output as the next input
	}
}

func TestSteadyStateAllocs(t *testing.T) {
	for _, opts := range []staticruntime.Options{
		staticruntime.DefaultOptions(),
		{EnableOutVariant: true, OptimizeMemory: true, ManageOutputTensors: true},
		{EnableOutVariant: true},
	} {
		m := prepare(t, mulReluChain(50), &opts)
		r := m.NewRuntime()
		x := ivalue.FromTensor(ivalue.F32Tensor([]float32{0.5}, 1))
		w := ivalue.FromTensor(ivalue.F32Tensor([]float32{1.01}, 1))
		outs, err := r.Run(x, w)
		require.NoError(t, err)
		assert.InDelta(t, 0.5*math.Pow(1.01, 50), float64(f32(t, outs[0])[0]), 1e-5)
		if !raceflag.Enabled {
			// With managed outputs, a caller that releases them gets the
			// same memory back: no allocation either.
			assert.Zero(t, testing.AllocsPerRun(100, func() { r.Run(x, w); r.ReleaseOutputs() }), "%+v", opts)
			assert.Zero(t, testing.AllocsPerRun(100, func() { r.RunTensors(x.Tensor(), w.Tensor()); r.ReleaseOutputs() }))
		}
	}
}

func TestMemoryPlanAndGrowth(t *testing.T) {
	// A chain of 7 managed tensors, each read by the next node only: two
	// windows suffice, and none is the baseline.
	cases := []struct {
		planner memplan.Planner
		bytes   int64
	}{
		{memplan.None{}, 7 * 64},
		{memplan.StorageGroups{}, 2 * 64},
		{memplan.GreedyBySize{}, 2 * 64},
	}
	for _, c := range cases {
		t.Run(c.planner.Name(), func(t *testing.T) {
			o := staticruntime.DefaultOptions()
			o.CheckPlan = true
			o.Planner = c.planner
			o.DisablePasses = []string{"UseInplaceActivations"} // keep 7 tensors
			o.DisableOverwrites = true
			m := prepare(t, mulReluChain(4), &o)
			r := m.NewRuntime()
			w := ivalue.FromTensor(ivalue.F32Tensor([]float32{2}, 1))
			for _, n := range []int{1, 1, 8, 8, 3, 8} {
				x := make([]float32, n)
				for i := range x {
					x[i] = float32(i) - 1
				}
				outs, err := r.Run(ivalue.FromTensor(ivalue.F32Tensor(x, n)), w)
				require.NoError(t, err)
				got := f32(t, outs[0])
				for i := range x {
					assert.Equal(t, max(x[i], 0)*16, got[i])
				}
			}
			st := r.MemoryStats()
			assert.Equal(t, c.planner.Name(), st.Planner)
			assert.Equal(t, 7, st.ManagedTensors) // all but the output
			assert.Equal(t, c.bytes, st.ManagedBytes)
			assert.Equal(t, int64(2*64), st.LowerBound)
			assert.Equal(t, int64(7*64), st.TensorBytes)
			assert.Equal(t, int64(7*64)-c.bytes, st.ReusedBytes)
			assert.Equal(t, 2, st.Replans) // the first shape, then the larger one
		})
	}
}

func TestManyGoroutines(t *testing.T) {
	m := prepare(t, loopIfIR, nil)
	want := map[int64][]float32{}
	x := []float32{1, -2, 3, 0.25}
	ref := m.NewRuntime()
	for n := int64(0); n < 4; n++ {
		outs, err := ref.Run(ivalue.FromTensor(ivalue.F32Tensor(x, 4)), ivalue.FromInt(n))
		require.NoError(t, err)
		want[n] = f32(t, outs[0])
	}
	pool := staticruntime.NewPool(m, 4)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			xt := ivalue.FromTensor(ivalue.F32Tensor(x, 4))
			for i := 0; i < 200; i++ {
				n := int64((g + i) % 4)
				err := pool.Do(context.Background(), func(r *staticruntime.StaticRuntime) error {
					outs, err := r.Run(xt, ivalue.FromInt(n))
					if err != nil {
						return err
					}
					got := outs[0].Tensor().F32Contig()
					for k := range got {
						if got[k] != want[n][k] {
							return fmt.Errorf("goroutine %d run %d: got %v want %v", g, i, got, want[n])
						}
					}
					return nil
				})
				if err != nil {
					errs <- err
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	outs, err := pool.Run(context.Background(), ivalue.FromTensor(ivalue.F32Tensor(x, 4)), ivalue.FromInt(2))
	require.NoError(t, err)
	assert.Equal(t, want[2], f32(t, outs[0]))
}

func TestGorgoniaInterop(t *testing.T) {
	m := prepare(t, mulReluChain(1), nil)
	r := m.NewRuntime()
	xd := tensor.New(tensor.WithShape(2, 2), tensor.WithBacking([]float32{-1, 2, -3, 4}))
	wd := tensor.New(tensor.WithShape(1), tensor.WithBacking([]float32{3}))
	xt, err := dense.FromDense(xd)
	require.NoError(t, err)
	wt, err := dense.FromDense(wd)
	require.NoError(t, err)
	xd.Data().([]float32)[0] = 1 // shared memory, not a copy
	outs, err := r.RunTensors(xt, wt)
	require.NoError(t, err)
	yd, err := dense.ToDense(outs[0].Tensor())
	require.NoError(t, err)
	assert.Equal(t, tensor.Shape{2, 2}, yd.Shape())
	assert.Equal(t, []float32{3, 6, 0, 12}, yd.Data().([]float32))
	outs[0].Tensor().F32Contig()[1] = 42
	assert.Equal(t, float32(42), yd.Data().([]float32)[1])
}

func TestBenchmarkIndividualOps(t *testing.T) {
	o := staticruntime.DefaultOptions()
	o.DisablePasses = []string{"UseInplaceActivations"}
	m := prepare(t, mulReluChain(3), &o)
	x := ivalue.FromTensor(ivalue.F32Tensor([]float32{1}, 1))
	met, err := m.NewRuntime().BenchmarkIndividualOps([]ivalue.IValue{x, x}, 2, 10)
	require.NoError(t, err)
	assert.Len(t, met.TimePerNode, 6)
	assert.Equal(t, 3, met.InstancesPerOp["aten::mul"])
	assert.Equal(t, 6, met.OutNodes)
	assert.Contains(t, met.String(), "aten::relu (3 nodes, out variant)")
}

// BenchmarkMulReluChain measures the per-node overhead: 100 tiny nodes.
func BenchmarkMulReluChain(b *testing.B) {
	for _, overwrites := range []bool{true, false} {
		b.Run(fmt.Sprintf("overwrites=%v", overwrites), func(b *testing.B) {
			o := staticruntime.DefaultOptions()
			o.DisableOverwrites = !overwrites
			m := prepare(b, mulReluChain(50), &o)
			r := m.NewRuntime()
			x := ivalue.FromTensor(ivalue.F32Tensor([]float32{0.5}, 1))
			w := ivalue.FromTensor(ivalue.F32Tensor([]float32{1.01}, 1))
			r.Run(x, w)
			r.Run(x, w) // the second run plans the slab
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r.Run(x, w)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/100, "ns/node")
		})
	}
}

// BenchmarkLoopBody measures the per-node overhead inside a loop: 100
// iterations of a four-node body on one-element tensors.
func BenchmarkLoopBody(b *testing.B) {
	m := prepare(b, `graph(%x : Tensor, %w : Tensor, %n : int):
  %true : bool = prim::Constant[value=1]()
  %y : Tensor = prim::Loop(%n, %true, %x)
    block0(%i : int, %a : Tensor):
      %b : Tensor = aten::mul(%a, %w)
      %c : Tensor = aten::relu(%b)
      %d : Tensor = aten::mul(%c, %w)
      %e : Tensor = aten::relu(%d)
      -> (%true, %e)
  return (%y)
`, nil)
	r := m.NewRuntime()
	args := []ivalue.IValue{ivalue.FromTensor(ivalue.F32Tensor([]float32{0.5}, 1)),
		ivalue.FromTensor(ivalue.F32Tensor([]float32{1.01}, 1)), ivalue.FromInt(100)}
	r.Run(args...)
	r.Run(args...)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Run(args...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/400, "ns/node")
}

func TestConstantOutputIsPerRuntime(t *testing.T) {
	c := ivalue.F32Tensor([]float32{1, 2}, 2)
	m := prepare(t, `graph(%x : Tensor):
  %c : Float(2, strides=[1], requires_grad=0, device=cpu) = prim::Constant[value=<Tensor>]()
  return (%c, %x)
`, nil, c)
	r1, r2 := m.NewRuntime(), m.NewRuntime()
	x := ivalue.FromTensor(ivalue.F32Tensor([]float32{0}, 1))
	o1, err := r1.Run(x)
	require.NoError(t, err)
	o1[0].Tensor().F32Contig()[0] = 99
	o2, err := r2.Run(x)
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2}, f32(t, o2[0]))
	assert.Equal(t, []float32{1, 2}, c.F32Contig())
}

func TestConstantReachingOutputThroughIf(t *testing.T) {
	c := ivalue.F32Tensor([]float32{1, 2}, 2)
	m := prepare(t, `graph(%x : Tensor, %b : bool):
  %c : Float(2, strides=[1], requires_grad=0, device=cpu) = prim::Constant[value=<Tensor>]()
  %y : Tensor = prim::If(%b)
    block0():
      -> (%c)
    block1():
      -> (%x)
  return (%y)
`, nil, c)
	r1, r2 := m.NewRuntime(), m.NewRuntime()
	x := ivalue.FromTensor(ivalue.F32Tensor([]float32{0, 0}, 2))
	o1, err := r1.Run(x, ivalue.FromBool(true))
	require.NoError(t, err)
	o1[0].Tensor().F32Contig()[0] = 99
	o2, err := r2.Run(x, ivalue.FromBool(true))
	require.NoError(t, err)
	assert.Equal(t, []float32{1, 2}, f32(t, o2[0]))
	assert.Equal(t, []float32{1, 2}, c.F32Contig())
}

func TestCollidingArgNames(t *testing.T) {
	m := prepare(t, `graph(%x.1 : Tensor, %x.2 : Tensor):
  %one : int = prim::Constant[value=1]()
  %y : Tensor = aten::sub(%x.1, %x.2, %one)
  return (%y)
`, nil)
	assert.Equal(t, []string{"x.1", "x.2"}, m.InputNames())
	outs, err := m.NewRuntime().RunKw(nil, map[string]ivalue.IValue{
		"x.1": ivalue.FromTensor(ivalue.F32Tensor([]float32{5}, 1)),
		"x.2": ivalue.FromTensor(ivalue.F32Tensor([]float32{3}, 1)),
	})
	require.NoError(t, err)
	assert.Equal(t, []float32{2}, f32(t, outs[0]))
}

func TestNestedOutputFedBack(t *testing.T) {
	m := prepare(t, `graph(%x : Tensor):
  %two : int = prim::Constant[value=2]()
  %y : Tensor = aten::mm(%x, %x)
  %l : Tensor[] = prim::ListConstruct(%y)
  %t : (Tensor[], int) = prim::TupleConstruct(%l, %two)
  return (%t)
`, nil)
	r := m.NewRuntime()
	v := ivalue.FromTensor(ivalue.F32Tensor([]float32{1, 1, 0, 1}, 2, 2))
	for i, want := range [][]float32{{1, 2, 0, 1}, {1, 4, 0, 1}, {1, 8, 0, 1}} {
		outs, err := r.Run(v)
		require.NoError(t, err)
		got := outs[0].List().Items[0].List().Items[0]
		assert.Equal(t, want, f32(t, got), "run %d", i)
		v = got // the output, nested in a list in a tuple, is the next input
	}
}

func TestListOutputFedBack(t *testing.T) {
	m := prepare(t, `graph(%l : int[]):
  %neg : int = prim::Constant[value=-1]()
  %none : NoneType = prim::Constant()
  %r : int[] = aten::slice(%l, %none, %none, %neg)
  return (%r)
`, nil)
	r := m.NewRuntime()
	v := ivalue.NewList(ivalue.FromInt(1), ivalue.FromInt(2), ivalue.FromInt(3))
	for i, want := range [][]int64{{3, 2, 1}, {1, 2, 3}, {3, 2, 1}} {
		outs, err := r.Run(v)
		require.NoError(t, err)
		var got []int64
		for _, it := range outs[0].List().Items {
			got = append(got, it.Int())
		}
		assert.Equal(t, want, got, "run %d", i)
		v = outs[0] // the reversed list is the next input
	}
}
