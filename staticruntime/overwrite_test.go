package staticruntime_test

import (
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/internal/raceflag"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/staticruntime"
)

// A pooling written over the activation it reads, then an elementwise op
// over the pooled tensor: with planned overwrites the plan needs the
// largest activation only.
const overwriteIR = `graph(%x : Tensor, %w : Tensor):
  %k : int[] = prim::Constant[value=[2, 2]]()
  %e : int[] = prim::Constant[value=annotate(List[int], [])]()
  %z : int[] = prim::Constant[value=[0, 0]]()
  %d : int[] = prim::Constant[value=[1, 1]]()
  %f : bool = prim::Constant[value=0]()
  %a : Tensor = aten::sigmoid(%x)
  %p : Tensor = aten::max_pool2d(%a, %k, %e, %z, %d, %f)
  %m : Tensor = aten::mul(%p, %w)
  %y : Tensor = aten::tanh(%m)
  return (%y)`

// overwriteWant computes the graph in plain Go. The weights broadcast over
// leading dimensions only, so element i of the product reads element
// i mod len of each operand.
func overwriteWant(x []float32, n, c, h, w int, wv []float32) []float32 {
	oh, ow := h/2, w/2
	p := make([]float32, n*c*oh*ow)
	for i := range p {
		plane, q := i/(oh*ow), i%(oh*ow)
		r, s := q/ow, q%ow
		for dy := 0; dy < 2; dy++ {
			for dx := 0; dx < 2; dx++ {
				v := x[plane*h*w+(2*r+dy)*w+2*s+dx]
				sg := float32(1 / (1 + math.Exp(-float64(v))))
				if dy+dx == 0 || sg > p[i] {
					p[i] = sg
				}
			}
		}
	}
	out := make([]float32, max(len(p), len(wv)))
	for i := range out {
		out[i] = float32(math.Tanh(float64(p[i%len(p)] * wv[i%len(wv)])))
	}
	return out
}

func TestOverwriteLinks(t *testing.T) {
	ramp := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(i%13)/4 - 1.5
		}
		return x
	}
	run := func(t *testing.T, r *staticruntime.StaticRuntime, n, c, h, w int, wshape []int) {
		t.Helper()
		x := ramp(n * c * h * w)
		wn := 1
		for _, s := range wshape {
			wn *= s
		}
		wv := ramp(wn + 3)[3:]
		outs, err := r.Run(ivalue.FromTensor(ivalue.F32Tensor(x, n, c, h, w)), ivalue.FromTensor(ivalue.F32Tensor(wv, wshape...)))
		require.NoError(t, err)
		got := f32(t, outs[0])
		want := overwriteWant(x, n, c, h, w, wv)
		require.Len(t, got, len(want))
		for i := range want {
			require.InDelta(t, want[i], got[i], 1e-5, "element %d", i)
		}
	}
	o := staticruntime.DefaultOptions()
	o.CheckPlan = true // checks every step, overwrite pairs included
	r := prepare(t, overwriteIR, &o).NewRuntime()
	run(t, r, 2, 3, 16, 16, []int{2, 3, 8, 8})
	run(t, r, 2, 3, 16, 16, []int{2, 3, 8, 8})
	st := r.MemoryStats()
	// sigmoid's result (6144 bytes) holds the pooled tensor, and the
	// pooled tensor the product: one tensor's memory for all three.
	assert.Equal(t, 2, st.Overwrites)
	assert.Equal(t, int64(6144), st.ManagedBytes)
	assert.Equal(t, int64(6144), st.LowerBound)

	o.DisableOverwrites = true
	r0 := prepare(t, overwriteIR, &o).NewRuntime()
	run(t, r0, 2, 3, 16, 16, []int{2, 3, 8, 8})
	run(t, r0, 2, 3, 16, 16, []int{2, 3, 8, 8})
	assert.Zero(t, r0.MemoryStats().Overwrites)
	assert.Equal(t, int64(6144+1536), r0.MemoryStats().ManagedBytes)

	// With intra-op threads the pooling, which would run on one
	// goroutine in place, gets memory of its own (see [Serial
	// overwrites]); the plan is then the unlinked one (the multiply
	// over the pooled tensor would not lower the peak at the pooling).
	if runtime.GOMAXPROCS(0) >= 2 {
		o.DisableOverwrites = false
		o.IntraOpThreads = 2
		r2 := prepare(t, overwriteIR, &o).NewRuntime()
		run(t, r2, 2, 3, 16, 16, []int{2, 3, 8, 8})
		run(t, r2, 2, 3, 16, 16, []int{2, 3, 8, 8})
		assert.Zero(t, r2.MemoryStats().Overwrites)
		assert.Equal(t, int64(6144+1536), r2.MemoryStats().ManagedBytes)
		o.IntraOpThreads = 1
	}

	// The product broadcasts the pooled tensor to a larger shape: the
	// multiply may not write over it. That run gives the product memory
	// of its own, the next plan keeps the two apart, and runs after it
	// allocate nothing (checked without CheckPlan, which allocates).
	o.DisableOverwrites = false
	for _, check := range []bool{true, false} {
		o.CheckPlan = check
		r := prepare(t, overwriteIR, &o).NewRuntime()
		run(t, r, 2, 3, 16, 16, []int{2, 3, 8, 8})
		run(t, r, 2, 3, 16, 16, []int{2, 3, 8, 8})
		run(t, r, 1, 3, 16, 16, []int{2, 3, 8, 8})
		run(t, r, 1, 3, 16, 16, []int{2, 3, 8, 8})
		st = r.MemoryStats()
		assert.Equal(t, 1, st.Overwrites, "the pooling still writes over its input")
		assert.Equal(t, int64(6144), st.ManagedBytes)
		if !check && !raceflag.Enabled {
			x := ivalue.FromTensor(ivalue.F32Tensor(ramp(3*256), 1, 3, 16, 16))
			w := ivalue.FromTensor(ivalue.F32Tensor(ramp(384), 2, 3, 8, 8))
			assertRunsAllocNothing(t, r, x, w)
		}
		// Back to shapes where the multiply could write over its input:
		// correct, with the link left out for good.
		run(t, r, 2, 3, 16, 16, []int{2, 3, 8, 8})
		run(t, r, 2, 3, 16, 16, []int{8, 8})
		assert.Equal(t, 1, r.MemoryStats().Overwrites)
	}

	// Tensors under a kilobyte are not linked: the check before each
	// linked node would cost more than the bytes saved.
	o = staticruntime.DefaultOptions()
	r1 := prepare(t, mulReluChain(4), &o).NewRuntime()
	x := ivalue.FromTensor(ivalue.F32Tensor([]float32{1, -2, 3}, 3))
	w := ivalue.FromTensor(ivalue.F32Tensor([]float32{2}, 1))
	for i := 0; i < 2; i++ {
		_, err := r1.Run(x, w)
		require.NoError(t, err)
	}
	assert.Zero(t, r1.MemoryStats().Overwrites)
}

// The parts of a cat that makes a graph output are written straight into
// the output: none of them takes memory of its own, and a run whose
// shapes moved the parts (same total, other split) is still right.
const catPartsIR = `graph(%x : Tensor, %y : Tensor):
  %d : int = prim::Constant[value=0]()
  %a : Tensor = aten::sigmoid(%x)
  %b : Tensor = aten::tanh(%x)
  %c : Tensor = aten::relu(%y)
  %l : Tensor[] = prim::ListConstruct(%a, %b, %c)
  %o : Tensor = aten::cat(%l, %d)
  return (%o)`

func TestCatPartsInPlace(t *testing.T) {
	run := func(t *testing.T, r *staticruntime.StaticRuntime, n, m int) ivalue.IValue {
		t.Helper()
		x, y := catRamp(n*4), catRamp(m*4 + 5)[5:]
		outs, err := r.Run(ivalue.FromTensor(ivalue.F32Tensor(x, n, 4)), ivalue.FromTensor(ivalue.F32Tensor(y, m, 4)))
		require.NoError(t, err)
		var want []float32
		for _, v := range x {
			want = append(want, float32(1/(1+math.Exp(-float64(v)))))
		}
		for _, v := range x {
			want = append(want, float32(math.Tanh(float64(v))))
		}
		for _, v := range y {
			want = append(want, max(v, 0))
		}
		requireCatOut(t, outs[0], []int{2*n + m, 4}, want, n, m)
		return outs[0]
	}
	for _, check := range []bool{true, false} {
		o := staticruntime.DefaultOptions()
		o.CheckPlan = check
		r := prepare(t, catPartsIR, &o).NewRuntime()
		run(t, r, 2, 3)
		run(t, r, 2, 3)
		st := r.MemoryStats()
		assert.Zero(t, st.ManagedTensors, "the parts are not intermediates of their own")
		assert.Zero(t, st.UnmanagedBytes)
		assert.Zero(t, st.ManagedBytes)
		// Same total, another split: the parts sit where the last run put
		// them, not where this run's cat wants them.
		run(t, r, 3, 1)
		run(t, r, 3, 1)
		run(t, r, 1, 5)
		run(t, r, 4, 2) // larger
		run(t, r, 2, 3)
		if !check && !raceflag.Enabled {
			x := ivalue.FromTensor(ivalue.F32Tensor(catRamp(8), 2, 4))
			y := ivalue.FromTensor(ivalue.F32Tensor(catRamp(12), 3, 4))
			assertRunsAllocNothing(t, r, x, y)
		}
	}
	// Without it, the parts are managed tensors in the slab.
	o := staticruntime.DefaultOptions()
	o.DisableOverwrites = true
	r := prepare(t, catPartsIR, &o).NewRuntime()
	run(t, r, 2, 3)
	run(t, r, 2, 3)
	assert.Equal(t, 3, r.MemoryStats().ManagedTensors)
}

// The parts of a cat whose output is an intermediate are written into
// the output's window in the slab, which is alive from the first part's
// node on: the product s, read by the second part after the first is
// written, must not share its memory (it would, planned from the cat's
// step). Results match the run without cat parts in place, CheckPlan
// finds no two live tensors sharing a byte, and steady runs allocate
// nothing.
const catPartsMidIR = `graph(%x : Tensor, %y : Tensor):
  %d : int = prim::Constant[value=0]()
  %s : Tensor = aten::mul(%x, %x)
  %a : Tensor = aten::sigmoid(%s)
  %b : Tensor = aten::tanh(%s)
  %c : Tensor = aten::relu(%y)
  %l : Tensor[] = prim::ListConstruct(%a, %b, %c)
  %o : Tensor = aten::cat(%l, %d)
  %z : Tensor = aten::neg(%o)
  return (%z)`

func TestCatPartsInPlaceIntermediate(t *testing.T) {
	run := func(t *testing.T, r *staticruntime.StaticRuntime, n, m int) {
		t.Helper()
		x, y := catRamp(n*64), catRamp(m*64 + 5)[5:]
		outs, err := r.Run(ivalue.FromTensor(ivalue.F32Tensor(x, n, 64)), ivalue.FromTensor(ivalue.F32Tensor(y, m, 64)))
		require.NoError(t, err)
		var want []float32
		for _, v := range x {
			want = append(want, -float32(1/(1+math.Exp(-float64(v*v)))))
		}
		for _, v := range x {
			want = append(want, -float32(math.Tanh(float64(v*v))))
		}
		for _, v := range y {
			want = append(want, -max(v, 0))
		}
		requireCatOut(t, outs[0], []int{2*n + m, 64}, want, n, m)
	}
	for _, check := range []bool{true, false} {
		o := staticruntime.DefaultOptions()
		o.CheckPlan = check
		r := prepare(t, catPartsMidIR, &o).NewRuntime()
		run(t, r, 2, 3)
		run(t, r, 2, 3)
		st := r.MemoryStats()
		// s, the cat's output and neg's (over it): the parts are windows
		// of the cat's output, not tensors of their own.
		assert.Equal(t, 2, st.ManagedTensors)
		assert.Zero(t, st.UnmanagedBytes)
		run(t, r, 3, 1) // another split, same total
		run(t, r, 3, 1)
		run(t, r, 4, 2) // larger: a new plan
		run(t, r, 4, 2)
		if !check && !raceflag.Enabled {
			x := ivalue.FromTensor(ivalue.F32Tensor(catRamp(4*64), 4, 64))
			y := ivalue.FromTensor(ivalue.F32Tensor(catRamp(2*64), 2, 64))
			assertRunsAllocNothing(t, r, x, y)
		}
	}
	o := staticruntime.DefaultOptions()
	o.DisableOverwrites = true
	r := prepare(t, catPartsMidIR, &o).NewRuntime()
	run(t, r, 2, 3)
	run(t, r, 2, 3)
	assert.Equal(t, 5, r.MemoryStats().ManagedTensors, "s, the three parts and the cat's output")
}

// A cat some of whose parts are not made for it alone (a graph input, a
// view: shufflenet's chunked half) still has the others written in
// place; the cat copies the rest. Results match, the part made for it
// takes no memory of its own, steady runs allocate nothing.
const catPartsMixedIR = `graph(%x : Tensor, %y : Tensor):
  %d : int = prim::Constant[value=0]()
  %c : Tensor = aten::relu(%y)
  %l : Tensor[] = prim::ListConstruct(%x, %c)
  %o : Tensor = aten::cat(%l, %d)
  %z : Tensor = aten::neg(%o)
  return (%z)`

func TestCatPartsInPlaceMixed(t *testing.T) {
	run := func(t *testing.T, r *staticruntime.StaticRuntime, n, m int) {
		t.Helper()
		x, y := catRamp(n*64), catRamp(m*64 + 3)[3:]
		outs, err := r.Run(ivalue.FromTensor(ivalue.F32Tensor(x, n, 64)), ivalue.FromTensor(ivalue.F32Tensor(y, m, 64)))
		require.NoError(t, err)
		var want []float32
		for _, v := range x {
			want = append(want, -v)
		}
		for _, v := range y {
			want = append(want, -max(v, 0))
		}
		requireCatOut(t, outs[0], []int{n + m, 64}, want, n, m)
	}
	for _, check := range []bool{true, false} {
		o := staticruntime.DefaultOptions()
		o.CheckPlan = check
		r := prepare(t, catPartsMixedIR, &o).NewRuntime()
		run(t, r, 2, 3)
		run(t, r, 2, 3)
		st := r.MemoryStats()
		assert.Equal(t, 1, st.ManagedTensors, "the cat's output only: relu writes into it")
		assert.Zero(t, st.UnmanagedBytes)
		run(t, r, 3, 1) // another split
		run(t, r, 3, 1)
		if !check && !raceflag.Enabled {
			x := ivalue.FromTensor(ivalue.F32Tensor(catRamp(3*64), 3, 64))
			y := ivalue.FromTensor(ivalue.F32Tensor(catRamp(64), 1, 64))
			assertRunsAllocNothing(t, r, x, y)
		}
	}
}

// requireCatOut requires a cat test's output to have sizes and to be
// want within 1e-6 (n and m name the run's split).
func requireCatOut(t *testing.T, out ivalue.IValue, sizes []int, want []float32, n, m int) {
	t.Helper()
	require.Equal(t, sizes, out.Tensor().Sizes())
	got := f32(t, out)
	for i := range want {
		require.InDelta(t, want[i], got[i], 1e-6, "element %d (n=%d, m=%d)", i, n, m)
	}
}

// assertRunsAllocNothing asserts that a steady run of r on args
// allocates nothing.
func assertRunsAllocNothing(t *testing.T, r *staticruntime.StaticRuntime, args ...ivalue.IValue) {
	t.Helper()
	assert.Zero(t, testing.AllocsPerRun(20, func() {
		_, err := r.Run(args...)
		require.NoError(t, err)
	}))
}

// catRamp is n floats in a short ramp (-1.5 to 1.5 by halves), the cat
// tests' inputs.
func catRamp(n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i%7)/2 - 1.5
	}
	return x
}
