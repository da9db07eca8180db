package staticruntime_test

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/internal/fixture"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/staticruntime"
)

// FuzzRunInputs runs the built-in models (builtin/models, with PyTorch's
// recorded inputs and outputs) on inputs derived from the recorded ones:
// other shapes (zero-size, other ranks, sizes that do not broadcast),
// other dtypes, and layouts that hold the same values non-contiguously
// (permuted storage, gaps and an offset, odd strides on size-1 dims,
// stride-0 expansion). It asserts that
//
//   - no panic escapes Run and no run ends in an internal error;
//   - an error names the node or the input it is about;
//   - inputs equal to the recorded ones up to layout give PyTorch's
//     recorded outputs;
//   - where the graph is made of ops a few lines of Go compute (the MLP:
//     linear and relu; the mul-relu chain: mul with broadcasting and
//     relu), float32 inputs of any valid shape give that reference, and
//     invalid ones give an error;
//   - afterwards the same runtime still gives PyTorch's outputs on the
//     recorded inputs (a failed or odd run leaves nothing broken).
//
// The input is a model index and a program of four bytes per tensor
// input: shape or dtype change and its parameter, layout and its
// parameter (see mutateInput).
func FuzzRunInputs(f *testing.F) {
	cases := fuzzCases(f)
	for i := range cases {
		n := uint8(i)
		f.Add(n, []byte{})
		for _, prog := range [][]byte{
			{0, 0, 1, 1}, {0, 0, 2, 3}, {0, 0, 3, 0}, {0, 0, 1, 5, 0, 0, 2, 1}, // same values, other layouts
			{7, 4, 0, 0}, {7, 0, 1, 0}, {1, 9, 4, 2}, {2, 1, 2, 0}, // other shapes
			{3, 0, 0, 0}, {4, 1, 0, 0}, {4, 3, 1, 0}, {5, 0, 0, 0}, {6, 1, 0, 0}, // rank, dtype, scalar, size
		} {
			f.Add(n, prog)
		}
	}
	f.Fuzz(func(t *testing.T, which uint8, prog []byte) {
		env := fuzzEnvFor(t, cases[int(which)%len(cases)])
		env.check(t, prog)
	})
}

func fuzzCases(tb testing.TB) []*fixture.Case {
	cases, err := fixture.LoadDir(filepath.Join("..", "builtin", "models"))
	if err != nil {
		tb.Fatal(err)
	}
	return cases
}

// fuzzEnv is a prepared model, made once per fuzzing process.
type fuzzEnv struct {
	c   *fixture.Case
	m   *staticruntime.StaticModule
	ref *refGraph // nil: no reference beyond the recorded outputs
}

var (
	fuzzEnvsMu sync.Mutex
	fuzzEnvs   = map[string]*fuzzEnv{}
)

func fuzzEnvFor(t *testing.T, c *fixture.Case) *fuzzEnv {
	fuzzEnvsMu.Lock()
	defer fuzzEnvsMu.Unlock()
	if e := fuzzEnvs[c.Name]; e != nil {
		return e
	}
	parse := func() *graph.Graph {
		g, err := graph.Parse(c.IR, &graph.ParseOptions{Tensors: c.Consts})
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		return g
	}
	m, err := staticruntime.NewStaticModule(parse(), nil)
	if err != nil {
		t.Fatalf("%s: %v", c.Name, err)
	}
	e := &fuzzEnv{c: c, m: m, ref: newRefGraph(parse())}
	fuzzEnvs[c.Name] = e
	return e
}

func (e *fuzzEnv) check(t *testing.T, prog []byte) {
	c := e.c
	args := make([]ivalue.IValue, len(c.Inputs))
	recorded := true // every input has the recorded values and dtype
	refIn := make([]*refTensor, len(c.Inputs))
	for i, in := range c.Inputs {
		var step [4]byte
		if len(prog) > 4*i {
			copy(step[:], prog[4*i:])
		}
		if !in.IsTensor() {
			args[i] = in
			recorded = recorded && step[0] == 0
			continue
		}
		mi := mutateInput(in.Tensor(), step)
		args[i] = ivalue.FromTensor(mi.t)
		refIn[i] = mi.ref
		recorded = recorded && mi.recorded
	}
	// A fresh runtime, warmed on the recorded inputs, so that a failure
	// depends on this input alone and the odd run meets a planned one.
	r := e.m.NewRuntime()
	e.wantRecorded(t, r, "before")
	outs, err := runGuarded(r, args)
	switch {
	case err != nil && strings.Contains(err.Error(), "internal error"):
		t.Fatalf("%s: %s: %v", c.Name, describeArgs(args), err)
	case err != nil:
		var ne *staticruntime.NodeError
		if !errors.As(err, &ne) && !strings.Contains(err.Error(), "input") {
			t.Errorf("%s: %s: the error names neither a node nor an input: %v", c.Name, describeArgs(args), err)
		}
	}
	switch {
	case recorded:
		if err != nil {
			t.Fatalf("%s: the recorded values in other layouts (%s): %v", c.Name, describeArgs(args), err)
		}
		if msg := e.compareRecorded(outs); msg != "" {
			t.Fatalf("%s: the recorded values in other layouts (%s): %s", c.Name, describeArgs(args), msg)
		}
	case e.ref != nil:
		want, valid, known := e.ref.eval(refIn)
		switch {
		case !known:
		case !valid && err == nil:
			t.Fatalf("%s: %s: ran, but the inputs do not fit the graph", c.Name, describeArgs(args))
		case !valid:
		case err != nil:
			t.Fatalf("%s: %s: valid inputs, but: %v", c.Name, describeArgs(args), err)
		default:
			if msg := compareRef(outs, want); msg != "" {
				t.Fatalf("%s: %s: against the reference: %s", c.Name, describeArgs(args), msg)
			}
		}
	}
	e.wantRecorded(t, r, "after")
}

// runGuarded is Run with a recover: Run recovers its kernels' panics
// itself, so one reaching here is a bug in that.
func runGuarded(r *staticruntime.StaticRuntime, args []ivalue.IValue) (outs []ivalue.IValue, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("internal error: a panic escaped Run: %v", p)
		}
	}()
	return r.Run(args...)
}

func (e *fuzzEnv) wantRecorded(t *testing.T, r *staticruntime.StaticRuntime, when string) {
	outs, err := runGuarded(r, e.c.Inputs)
	if err != nil {
		t.Fatalf("%s: recorded inputs %s the fuzzed run: %v", e.c.Name, when, err)
	}
	if msg := e.compareRecorded(outs); msg != "" {
		t.Fatalf("%s: recorded inputs %s the fuzzed run: %s", e.c.Name, when, msg)
	}
}

func (e *fuzzEnv) compareRecorded(outs []ivalue.IValue) string {
	got := fixture.Flatten(outs)
	if len(got) != len(e.c.Expected) {
		return fmt.Sprintf("%d output tensors, want %d", len(got), len(e.c.Expected))
	}
	for i := range got {
		if err := fixture.Compare(got[i], e.c.Expected[i], e.c.RTol, e.c.ATol); err != nil {
			return fmt.Sprintf("output %d: %v", i, err)
		}
	}
	return ""
}

func describeArgs(args []ivalue.IValue) string {
	parts := make([]string, len(args))
	for i, a := range args {
		if t := a.Tensor(); t != nil {
			parts[i] = fmt.Sprintf("%s%v strides %v offset %d", t.DType(), t.Sizes(), t.Strides(), t.Offset())
		} else {
			parts[i] = a.Kind().String()
		}
	}
	return strings.Join(parts, "; ")
}

// mutated is one fuzzed input: the tensor, whether it holds the recorded
// values and dtype (in whatever layout), and its values for the
// reference (nil unless float32).
type mutated struct {
	t        *ivalue.Tensor
	recorded bool
	ref      *refTensor
}

var fuzzDTypes = []ivalue.DType{ivalue.Float64, ivalue.Int64, ivalue.Int32, ivalue.Bool, ivalue.Uint8, ivalue.Float16, ivalue.Int8}

// mutateInput applies one program step to a recorded input. step[0]%8
// picks the shape or dtype change, step[1] its parameter: 0 none, 1 one
// dim resized (0..4), 2 a leading dim added, 3 the first dim dropped, 4
// another dtype, 5 a 0-d tensor, 6 the last dim grown, 7 the first dim
// resized (0..5). New shapes get made-up values. step[2]%5 picks the
// layout, step[3] its parameter (layoutOf).
func mutateInput(in *ivalue.Tensor, step [4]byte) mutated {
	sizes := append([]int(nil), in.Sizes()...)
	dt := in.DType()
	var vals []float64 // logical values; nil: the recorded ones
	p := int(step[1])
	switch step[0] % 8 {
	case 1:
		if len(sizes) > 0 {
			sizes[p%len(sizes)] = (p / 8) % 5
		}
	case 2:
		sizes = append([]int{1 + p%3}, sizes...)
	case 3:
		if len(sizes) > 0 {
			sizes = sizes[1:]
		}
	case 4:
		dt = fuzzDTypes[p%len(fuzzDTypes)]
	case 5:
		sizes = nil
	case 6:
		if len(sizes) > 0 {
			sizes[len(sizes)-1] += 1 + p%3
		} else {
			sizes = []int{2}
		}
	case 7:
		if len(sizes) > 0 {
			sizes[0] = p % 6
		}
	}
	changed := step[0]%8 != 0 && step[0]%8 != 4
	layout, lp := int(step[2]%5), int(step[3])
	var expandDim = -1
	if layout == 4 && changed && len(sizes) > 0 {
		expandDim = lp % len(sizes)
	}
	if changed {
		vals = madeUpValues(sizes, in.DType(), int(step[1])+int(step[3]), expandDim)
	} else {
		vals = in.Float64s()
	}
	out := layoutOf(dt, sizes, vals, layout, lp, expandDim)
	m := mutated{t: out, recorded: step[0]%8 == 0}
	if dt == ivalue.Float32 {
		m.ref = &refTensor{sizes: sizes, data: vals}
	}
	return m
}

// madeUpValues fills a new shape: small floats (nonzero magnitudes in
// [0.25, 1.5], and zeros) or small integers (0..3, valid as indices of
// the models' embeddings), constant along expandDim if set.
func madeUpValues(sizes []int, dt ivalue.DType, seed, expandDim int) []float64 {
	n := numel(sizes)
	out := make([]float64, n)
	idx := make([]int, len(sizes))
	for k := range n {
		// k's index in sizes, with expandDim read as 0.
		rem, flat := k, 0
		for d := len(sizes) - 1; d >= 0; d-- {
			idx[d] = rem % sizes[d]
			rem /= sizes[d]
		}
		for d := range sizes {
			v := idx[d]
			if d == expandDim {
				v = 0
			}
			flat = flat*max(sizes[d], 1) + v
		}
		h := (flat*7 + seed*13) % 17
		if dt.IsFloat() {
			out[k] = float64(h-8) / 5.3
			if h == 8 {
				out[k] = 0
			} else if math.Abs(out[k]) < 0.25 {
				out[k] = math.Copysign(0.25, out[k])
			}
		} else {
			out[k] = float64(h % 4)
		}
	}
	return out
}

func numel(sizes []int) int {
	n := 1
	for _, s := range sizes {
		n *= s
	}
	return n
}

// layoutOf makes a tensor of dt and sizes holding vals (logical order) in
// one of five layouts: 0 contiguous; 1 the storage in a permuted dim
// order (a transposed view); 2 gaps of 0..2 elements after every dim's
// run and a storage offset; 3 contiguous but with arbitrary strides on
// size-1 dims, as PyTorch allows; 4 expandDim (if any) with stride 0,
// else as 2.
func layoutOf(dt ivalue.DType, sizes []int, vals []float64, layout, p, expandDim int) *ivalue.Tensor {
	nd := len(sizes)
	strides := make([]int, nd)
	offset := 0
	contiguous := func() {
		st := 1
		for d := nd - 1; d >= 0; d-- {
			strides[d] = st
			st *= max(sizes[d], 1)
		}
	}
	switch {
	case layout == 1 && nd > 1:
		perm := make([]int, nd) // a rotation by p and, for odd p, the last two swapped
		for k := range perm {
			perm[k] = (k + p) % nd
		}
		if p%2 == 1 {
			perm[nd-1], perm[nd-2] = perm[nd-2], perm[nd-1]
		}
		st := 1
		for k := nd - 1; k >= 0; k-- {
			strides[perm[k]] = st
			st *= max(sizes[perm[k]], 1)
		}
	case layout == 2 || layout == 4 && expandDim < 0:
		offset = 1 + p%3
		st := 1
		for d := nd - 1; d >= 0; d-- {
			strides[d] = st
			st *= max(sizes[d], 1) + (p>>d)%3
		}
	case layout == 3:
		contiguous()
		for d := range sizes {
			if sizes[d] == 1 {
				strides[d] = []int{0, 7, 1 << 20}[(p+d)%3]
			}
		}
	case layout == 4:
		contiguous()
		// Recompute the others without expandDim's extent.
		st := 1
		for d := nd - 1; d >= 0; d-- {
			if d == expandDim {
				strides[d] = 0
				continue
			}
			strides[d] = st
			st *= max(sizes[d], 1)
		}
	default:
		contiguous()
	}
	es := dt.Size()
	extent := offset + 1
	for d := range sizes {
		if sizes[d] == 0 {
			extent = offset
			break
		}
		extent += (sizes[d] - 1) * strides[d]
	}
	s := ivalue.NewStorage(max(extent, 0) * es)
	t, err := ivalue.FromStorage(dt, s, offset, sizes, strides)
	if err != nil {
		panic(fmt.Sprintf("fuzz layout %v strides %v offset %d: %v", sizes, strides, offset, err)) // our geometry
	}
	k := 0
	t.ForEachIndex(func(i int) {
		fixture.SetElem(t, i, vals[k])
		k++
	})
	return t
}
