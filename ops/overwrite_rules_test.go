package ops_test

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/internal/raceflag"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops"
	"github.com/gosr/gosr/ops/gemm"
)

// The overwrite rules (ops.OverwriteRule): each case runs its kernel once with
// an output of its own and once with the output's storage beginning at
// the first byte of input 0, as the memory planner lays out an in-place
// chain, and requires the same bits. Pooling and convolution results are
// also checked against direct float64 loops written here.

type ipCase struct {
	name  string
	kind  string
	in    []ivalue.IValue // in[0]: the tensor the output may write over
	types []*graph.Type
	// safe is what the rule's Safe must say; unsafe cases run in place
	// only when exact (the kernel promises the result anyway).
	safe, exact bool
	constW      bool  // input 1 (a conv weight) is a prim::Constant
	selfOther   bool  // input 1 is input 0 itself
	strides     []int // input 0's strides in the shared memory (nil: contiguous)
	allocs      bool  // the kernel allocates on every run (float16 casts)
	backend     bool  // the rule's Backend
	ref         func() []float64
}

// ipRNG fills test tensors; each test seeds its own.
type ipRNG struct{ *rand.Rand }

func (r ipRNG) tensor(dt ivalue.DType, sizes ...int) *ivalue.Tensor {
	t := ivalue.NewTensor(dt, sizes...)
	for i := 0; i < t.Numel(); i++ {
		var v ivalue.IValue
		switch {
		case dt.IsFloat():
			v = ivF(float64(float32(r.Float64()*4 - 2)))
		case dt == ivalue.Bool:
			v = ivB(r.Intn(2) == 1)
		case dt == ivalue.Uint8:
			v = ivI(int64(r.Intn(10)))
		default:
			v = ivI(int64(r.Intn(19) - 9))
		}
		if err := ops.WriteScalar(t, i, v); err != nil {
			panic(err)
		}
	}
	return t
}

// nonzero is tensor with no zero element (integer divisors).
func (r ipRNG) nonzero(dt ivalue.DType, sizes ...int) *ivalue.Tensor {
	t := r.tensor(dt, sizes...)
	for i := 0; i < t.Numel(); i++ {
		if ops.ReadScalar(t, i).AsFloat() == 0 {
			_ = ops.WriteScalar(t, i, ivI(3))
		}
	}
	return t
}

// elemBytes returns a copy of the bytes of contiguous t's elements.
func elemBytes(t *ivalue.Tensor) []byte {
	es := t.DType().Size()
	return append([]byte(nil), t.Storage().Data[t.Offset()*es:(t.Offset()+t.Numel())*es]...)
}

func runInPlaceCase(t *testing.T, c ipCase) {
	x0 := c.in[0].Tensor()
	require.NotNil(t, x0)
	build := func(x ivalue.IValue) *ops.ProcessedNode {
		vals := append([]ivalue.IValue(nil), c.in...)
		vals[0] = x
		if c.selfOther {
			vals[1] = x
		}
		var constant []bool
		if c.constW {
			constant = make([]bool, len(vals))
			for i, v := range vals {
				constant[i] = !holdsTensor(v) || i == 1
			}
		}
		p, err := buildNode(t, c.kind, vals, c.types, []*graph.Type{tT}, constant)
		require.NoError(t, err)
		return p
	}

	// Output memory of its own.
	pd := build(c.in[0])
	require.NoError(t, pd.Run())
	want := pd.Output(0).Tensor()
	require.NotNil(t, want)
	wantBytes := elemBytes(want)
	if c.ref != nil {
		require.InDeltaSlice(t, c.ref(), want.Float64s(), 1e-3, "against the direct loops")
	}

	// The output over the input: one storage, the input at offset 0, the
	// output a window of the same bytes from 0.
	es := x0.DType().Size()
	inBytes := x0.Nbytes()
	if c.strides != nil {
		last := 0
		for i, s := range x0.Sizes() {
			last += (s - 1) * c.strides[i]
		}
		inBytes = (last + 1) * es
	}
	outBytes := want.Nbytes()
	require.NotZero(t, outBytes)
	st := ivalue.NewStorage(max(inBytes, outBytes))
	x, err := ivalue.FromStorage(x0.DType(), st, 0, x0.Sizes(), c.strides)
	require.NoError(t, err)
	src := elemBytes(x0)
	k := 0
	x.ForEachIndex(func(i int) {
		copy(st.Data[i*es:(i+1)*es], src[k*es:(k+1)*es])
		k++
	})
	p := build(iv(x))
	// A runtime's scratch, as the runtime gives its nodes (the pointwise
	// tiles live there).
	p.Scratch = &gemm.Scratch{}
	out := &ivalue.Tensor{}
	out.SetStorage(st.Window(0, outBytes), 0)
	p.Own = []*ivalue.Tensor{out}

	rule, ok := ops.OverwriteRuleOf(p.Node)
	require.True(t, ok, "no overwrite rule")
	assert.Equal(t, 0, rule.Input)
	assert.Equal(t, c.backend, rule.Backend, "Backend")
	safe := rule.Safe == nil || rule.Safe(p)
	require.Equal(t, c.safe, safe, "Safe")
	if !c.safe && !c.exact {
		return
	}
	require.NoError(t, p.Run())
	got := p.Output(0).Tensor()
	require.Same(t, out, got, "the output tensor the runtime gave")
	require.Equal(t, st.Ptr(), got.Storage().Ptr(), "output over the input")
	require.Equal(t, want.DType(), got.DType())
	require.Equal(t, want.Sizes(), got.Sizes())
	if gotBytes := elemBytes(got); string(gotBytes) != string(wantBytes) {
		for i := 0; i < len(wantBytes); i += want.DType().Size() {
			if string(gotBytes[i:i+want.DType().Size()]) != string(wantBytes[i:i+want.DType().Size()]) {
				t.Fatalf("element %d differs in place: got %v, want %v", i/want.DType().Size(),
					got.Float64s()[i/want.DType().Size()], want.Float64s()[i/want.DType().Size()])
			}
		}
	}
	if raceflag.Enabled { // the race detector's instrumentation allocates
		return
	}
	if rule.Safe != nil {
		assert.Zero(t, testing.AllocsPerRun(10, func() { rule.Safe(p) }), "Safe allocates")
	}
	if !c.allocs {
		assert.Zero(t, testing.AllocsPerRun(5, func() { _ = p.Run() }), "steady in-place runs allocate")
	}
}

func runInPlaceCases(t *testing.T, cases []ipCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { runInPlaceCase(t, c) })
	}
}

func TestInPlaceUnary(t *testing.T) {
	r := ipRNG{rand.New(rand.NewSource(1))}
	f32 := func() ivalue.IValue { return iv(r.tensor(ivalue.Float32, 3, 37)) } // vector body and tail
	one := []*graph.Type{tT}
	u := func(name, kind string, x ivalue.IValue, safe bool) ipCase {
		return ipCase{name: name, kind: kind, in: []ivalue.IValue{x}, types: one, safe: safe, backend: true}
	}
	cases := []ipCase{
		u("relu f32", "aten::relu", f32(), true),
		u("relu f64", "aten::relu", iv(r.tensor(ivalue.Float64, 2, 5)), true),
		u("relu i64", "aten::relu", iv(r.tensor(ivalue.Int64, 9)), true),
		u("relu6 i32", "aten::relu6", iv(r.tensor(ivalue.Int32, 4, 3)), true),
		u("relu6 f32", "aten::relu6", f32(), true),
		u("sigmoid f32", "aten::sigmoid", f32(), true),
		u("sigmoid f64", "aten::sigmoid", iv(r.tensor(ivalue.Float64, 11)), true),
		u("tanh f32", "aten::tanh", f32(), true),
		u("silu f32", "aten::silu", f32(), true),
		u("exp f32", "aten::exp", f32(), true),
		u("log f64", "aten::log", iv(r.tensor(ivalue.Float64, 7)), true),
		u("hardswish f32", "aten::hardswish", f32(), true),
		u("neg i32", "aten::neg", iv(r.tensor(ivalue.Int32, 13)), true),
		u("abs i8", "aten::abs", iv(r.tensor(ivalue.Int8, 13)), true),
		u("abs f32", "aten::abs", f32(), true),
		u("square u8", "aten::square", iv(r.tensor(ivalue.Uint8, 6)), true),
		u("round f32", "aten::round", f32(), true),
		u("logical_not bool", "aten::logical_not", iv(r.tensor(ivalue.Bool, 10)), true),
		u("bitwise_not i64", "aten::bitwise_not", iv(r.tensor(ivalue.Int64, 10)), true),
		u("bitwise_not bool", "aten::bitwise_not", iv(r.tensor(ivalue.Bool, 10)), true),
		{name: "sigmoid f16", kind: "aten::sigmoid", in: []ivalue.IValue{iv(r.tensor(ivalue.Float16, 3, 5))}, types: one, safe: true, backend: true, allocs: true},
		{name: "gelu none", kind: "aten::gelu", in: []ivalue.IValue{f32(), ivS("none")}, types: []*graph.Type{tT, tS}, safe: true, backend: true},
		{name: "gelu tanh", kind: "aten::gelu", in: []ivalue.IValue{f32(), ivS("tanh")}, types: []*graph.Type{tT, tS}, safe: true, backend: true},
		{name: "leaky_relu", kind: "aten::leaky_relu", in: []ivalue.IValue{f32(), ivF(0.1)}, types: []*graph.Type{tT, tF}, safe: true, backend: true},
		{name: "softplus f64", kind: "aten::softplus", in: []ivalue.IValue{iv(r.tensor(ivalue.Float64, 9)), ivI(2), ivI(20)}, types: []*graph.Type{tT, tI, tI}, safe: true, backend: true},
		{name: "hardtanh f32", kind: "aten::hardtanh", in: []ivalue.IValue{f32(), ivF(-0.5), ivF(0.5)}, types: []*graph.Type{tT, tF, tF}, safe: true, backend: true},
		{name: "clamp f32", kind: "aten::clamp", in: []ivalue.IValue{f32(), ivF(-1), ivF(1)}, types: []*graph.Type{tT, tF, tF}, safe: true, backend: true},
		{name: "clamp f32 min only", kind: "aten::clamp", in: []ivalue.IValue{f32(), ivF(-1), ivalue.None()}, types: []*graph.Type{tT, tF, tN}, safe: true, backend: true},
		{name: "clamp i64 int bounds", kind: "aten::clamp", in: []ivalue.IValue{iv(r.tensor(ivalue.Int64, 9)), ivI(-2), ivI(3)}, types: []*graph.Type{tT, tI, tI}, safe: true, backend: true},
		{name: "clamp_min f32", kind: "aten::clamp_min", in: []ivalue.IValue{f32(), ivF(0.25)}, types: []*graph.Type{tT, tF}, safe: true, backend: true},
		{name: "clamp_max i64", kind: "aten::clamp_max", in: []ivalue.IValue{iv(r.tensor(ivalue.Int64, 9)), ivI(1)}, types: []*graph.Type{tT, tI}, safe: true, backend: true},
		// The output dtype differs from the input's: not in place.
		u("sigmoid i64", "aten::sigmoid", iv(r.tensor(ivalue.Int64, 9)), false),
		u("exp i32", "aten::exp", iv(r.tensor(ivalue.Int32, 9)), false),
		u("logical_not f32", "aten::logical_not", f32(), false),
		// Self not contiguous (the runtime never asks; Safe says no).
		{name: "relu strided", kind: "aten::relu", in: []ivalue.IValue{f32()}, types: one, backend: true, strides: []int{1, 3}},
		{name: "clamp i64 float bound", kind: "aten::clamp", in: []ivalue.IValue{iv(r.tensor(ivalue.Int64, 9)), ivF(0.5), ivalue.None()}, types: []*graph.Type{tT, tF, tN}, backend: true},
		{name: "clamp_min i32 float", kind: "aten::clamp_min", in: []ivalue.IValue{iv(r.tensor(ivalue.Int32, 9)), ivF(0.5)}, types: []*graph.Type{tT, tF}, backend: true},
	}
	runInPlaceCases(t, cases)
}

func TestInPlaceBinary(t *testing.T) {
	r := ipRNG{rand.New(rand.NewSource(2))}
	ten := func(dt ivalue.DType, sizes ...int) ivalue.IValue { return iv(r.tensor(dt, sizes...)) }
	nz := func(dt ivalue.DType, sizes ...int) ivalue.IValue { return iv(r.nonzero(dt, sizes...)) }
	f32 := ivalue.Float32
	i64 := ivalue.Int64
	tti := []*graph.Type{tT, tT, tI}
	tt := []*graph.Type{tT, tT}
	b := func(name, kind string, in []ivalue.IValue, types []*graph.Type, safe bool) ipCase {
		return ipCase{name: name, kind: kind, in: in, types: types, safe: safe, backend: true}
	}
	cases := []ipCase{
		b("add f32 same shape", "aten::add", []ivalue.IValue{ten(f32, 3, 37), ten(f32, 3, 37), ivI(1)}, tti, true),
		b("add f32 alpha", "aten::add", []ivalue.IValue{ten(f32, 3, 37), ten(f32, 3, 37), ivF(2.5)}, []*graph.Type{tT, tT, tF}, true),
		b("add f32 row broadcast", "aten::add", []ivalue.IValue{ten(f32, 3, 4, 5), ten(f32, 5), ivI(1)}, tti, true),
		b("add f32 column broadcast", "aten::add", []ivalue.IValue{ten(f32, 3, 4, 5), ten(f32, 4, 1), ivI(1)}, tti, true),
		b("add f32 0-d f64 other", "aten::add", []ivalue.IValue{ten(f32, 6), iv(r.tensor(ivalue.Float64)), ivI(1)}, tti, true),
		b("add f32 one element", "aten::add", []ivalue.IValue{ten(f32, 1, 1), ten(f32, 1, 1), ivI(1)}, tti, true),
		{name: "add x x", kind: "aten::add", in: []ivalue.IValue{ten(f32, 4, 9), ivalue.None(), ivI(1)}, types: tti, safe: true, backend: true, selfOther: true},
		b("add i64 scalar", "aten::add", []ivalue.IValue{ten(i64, 10), ivI(3), ivI(2)}, []*graph.Type{tT, tI, tI}, true),
		b("add bool", "aten::add", []ivalue.IValue{ten(ivalue.Bool, 7), ten(ivalue.Bool, 7), ivI(1)}, tti, true),
		b("sub f64", "aten::sub", []ivalue.IValue{ten(ivalue.Float64, 2, 6), ten(ivalue.Float64, 2, 6), ivI(1)}, tti, true),
		b("sub i32 broadcast", "aten::sub", []ivalue.IValue{ten(ivalue.Int32, 2, 6), ten(ivalue.Int32, 1, 6), ivI(2)}, tti, true),
		b("rsub f32 tensor", "aten::rsub", []ivalue.IValue{ten(f32, 3, 8), ten(f32, 8), ivI(2)}, tti, true),
		b("rsub f32 scalar", "aten::rsub", []ivalue.IValue{ten(f32, 3, 8), ivF(1.5), ivI(1)}, []*graph.Type{tT, tF, tI}, true),
		b("mul f32 scalar", "aten::mul", []ivalue.IValue{ten(f32, 3, 37), ivF(0.5)}, []*graph.Type{tT, tF}, true),
		b("mul i64 broadcast", "aten::mul", []ivalue.IValue{ten(i64, 4, 3), ten(i64, 3)}, tt, true),
		b("div f32", "aten::div", []ivalue.IValue{ten(f32, 3, 37), nz(f32, 3, 37)}, tt, true),
		b("div f32 scalar", "aten::div", []ivalue.IValue{ten(f32, 3, 37), ivF(3)}, []*graph.Type{tT, tF}, true),
		b("div i64 floor", "aten::div", []ivalue.IValue{ten(i64, 12), nz(i64, 12), ivS("floor")}, []*graph.Type{tT, tT, tS}, true),
		b("div i64 scalar trunc", "aten::div", []ivalue.IValue{ten(i64, 12), ivI(4), ivS("trunc")}, []*graph.Type{tT, tI, tS}, true),
		b("true_divide f64", "aten::true_divide", []ivalue.IValue{ten(ivalue.Float64, 12), nz(ivalue.Float64, 12)}, tt, true),
		b("floor_divide i64", "aten::floor_divide", []ivalue.IValue{ten(i64, 12), nz(i64, 12)}, tt, true),
		b("pow f32 scalar", "aten::pow", []ivalue.IValue{ten(f32, 3, 37), ivI(2)}, []*graph.Type{tT, tI}, true),
		b("pow f64 tensor", "aten::pow", []ivalue.IValue{ten(ivalue.Float64, 9), ten(ivalue.Float64, 9)}, tt, true),
		b("remainder i64 scalar", "aten::remainder", []ivalue.IValue{ten(i64, 12), ivI(4)}, []*graph.Type{tT, tI}, true),
		b("remainder f32", "aten::remainder", []ivalue.IValue{ten(f32, 12), nz(f32, 12)}, tt, true),
		b("maximum f32", "aten::maximum", []ivalue.IValue{ten(f32, 3, 37), ten(f32, 3, 37)}, tt, true),
		b("minimum i32", "aten::minimum", []ivalue.IValue{ten(ivalue.Int32, 12), ten(ivalue.Int32, 12)}, tt, true),
		b("max other", "aten::max", []ivalue.IValue{ten(f32, 2, 5), ten(f32, 5)}, tt, true),
		b("min other", "aten::min", []ivalue.IValue{ten(f32, 2, 5), ten(f32, 2, 1)}, tt, true),
		b("clamp_min tensor", "aten::clamp_min", []ivalue.IValue{ten(f32, 2, 5), ten(f32, 5)}, tt, true),
		b("clamp_max tensor", "aten::clamp_max", []ivalue.IValue{ten(f32, 2, 5), ten(f32, 2, 5)}, tt, true),
		// Not over self: the result is larger, or of another dtype, or self
		// is strided.
		b("add broadcast grows", "aten::add", []ivalue.IValue{ten(f32, 3, 1), ten(f32, 1, 4), ivI(1)}, tti, false),
		b("add other has more dims", "aten::add", []ivalue.IValue{ten(f32, 4), ten(f32, 2, 4), ivI(1)}, tti, false),
		b("add i64 float scalar", "aten::add", []ivalue.IValue{ten(i64, 4), ivF(0.5), ivI(1)}, []*graph.Type{tT, tF, tI}, false),
		b("add f32 f64", "aten::add", []ivalue.IValue{ten(f32, 4), ten(ivalue.Float64, 4), ivI(1)}, tti, false),
		b("div i64 true", "aten::div", []ivalue.IValue{ten(i64, 4), nz(i64, 4)}, tt, false),
		b("div i64 mode None", "aten::div", []ivalue.IValue{ten(i64, 4), nz(i64, 4), ivalue.None()}, []*graph.Type{tT, tT, tN}, false),
		{name: "mul strided self", kind: "aten::mul", in: []ivalue.IValue{ten(f32, 3, 2), ten(f32, 2)}, types: tt, backend: true, strides: []int{1, 3}},
	}
	runInPlaceCases(t, cases)
}

// poolRef is max/avg/adaptive-avg pooling by PyTorch's definitions, in
// float64. kind: "max", "avg", "adaptive".
type poolRef struct {
	kind             string
	k, s, p, d       int
	ceil, includePad bool
	divisor          int
	oh, ow           int // adaptive output size
}

func poolOut(in, k, p, s, d int, ceil bool) int {
	num := in + 2*p - d*(k-1) - 1
	if ceil {
		num += s - 1
	}
	out := num/s + 1
	if ceil && (out-1)*s >= in+p {
		out--
	}
	return out
}

func (q poolRef) run(x []float64, n, c, h, w int) []float64 {
	oh, ow := q.oh, q.ow
	if q.d == 0 { // avg_pool2d has no dilation
		q.d = 1
	}
	if q.kind != "adaptive" {
		oh, ow = poolOut(h, q.k, q.p, q.s, q.d, q.ceil), poolOut(w, q.k, q.p, q.s, q.d, q.ceil)
	}
	var out []float64
	for pl := 0; pl < n*c; pl++ {
		in := x[pl*h*w : (pl+1)*h*w]
		for i := 0; i < oh; i++ {
			for j := 0; j < ow; j++ {
				switch q.kind {
				case "max":
					m := math.Inf(-1)
					for a := 0; a < q.k; a++ {
						for b := 0; b < q.k; b++ {
							y, z := i*q.s-q.p+a*q.d, j*q.s-q.p+b*q.d
							if y >= 0 && y < h && z >= 0 && z < w {
								m = math.Max(m, in[y*w+z])
							}
						}
					}
					out = append(out, m)
				case "avg":
					hs, ws := i*q.s-q.p, j*q.s-q.p
					he, we := min(hs+q.k, h+q.p), min(ws+q.k, w+q.p)
					size := (he - hs) * (we - ws)
					hs, ws, he, we = max(hs, 0), max(ws, 0), min(he, h), min(we, w)
					s := 0.0
					for y := hs; y < he; y++ {
						for z := ws; z < we; z++ {
							s += in[y*w+z]
						}
					}
					div := q.divisor
					if div == 0 {
						div = (he - hs) * (we - ws)
						if q.includePad {
							div = size
						}
					}
					out = append(out, s/float64(div))
				case "adaptive":
					hs, he := i*h/oh, int(math.Ceil(float64((i+1)*h)/float64(oh)))
					ws, we := j*w/ow, int(math.Ceil(float64((j+1)*w)/float64(ow)))
					s := 0.0
					for y := hs; y < he; y++ {
						for z := ws; z < we; z++ {
							s += in[y*w+z]
						}
					}
					out = append(out, s/float64((he-hs)*(we-ws)))
				}
			}
		}
	}
	return out
}

func TestInPlacePool(t *testing.T) {
	r := ipRNG{rand.New(rand.NewSource(3))}
	ints := graph.ListOf(graph.Int)
	mk := func(name string, q poolRef, n, c, h, w int, batched bool) ipCase {
		sizes := []int{n, c, h, w}
		if !batched {
			sizes = sizes[1:]
		}
		x := r.tensor(ivalue.Float32, sizes...)
		xs := x.Float64s()
		ic := ipCase{name: name, in: []ivalue.IValue{iv(x)}, safe: true, ref: func() []float64 { return q.run(xs, n, c, h, w) }}
		switch q.kind {
		case "max":
			ic.kind = "aten::max_pool2d"
			ic.in = append(ic.in, ivInts(int64(q.k)), ivInts(int64(q.s)), ivInts(int64(q.p)), ivInts(int64(q.d)), ivB(q.ceil))
			ic.types = []*graph.Type{tT, ints, ints, ints, ints, tB}
		case "avg":
			ic.kind = "aten::avg_pool2d"
			div, dt := ivalue.None(), tN
			if q.divisor != 0 {
				div, dt = ivI(int64(q.divisor)), tI
			}
			ic.in = append(ic.in, ivInts(int64(q.k), int64(q.k)), ivInts(int64(q.s), int64(q.s)), ivInts(int64(q.p), int64(q.p)), ivB(q.ceil), ivB(q.includePad), div)
			ic.types = []*graph.Type{tT, ints, ints, ints, tB, tB, dt}
		case "adaptive":
			ic.kind = "aten::adaptive_avg_pool2d"
			ic.in = append(ic.in, ivInts(int64(q.oh), int64(q.ow)))
			ic.types = []*graph.Type{tT, ints}
		}
		return ic
	}
	var cases []ipCase
	for _, n := range []int{1, 3} {
		for _, c := range []struct {
			name       string
			q          poolRef
			c, h, w    int
			unbatched  bool
			channelsLT bool
		}{
			{name: "max 2x2 s2", q: poolRef{kind: "max", k: 2, s: 2, d: 1}, c: 3, h: 8, w: 8},
			{name: "max 3x3 s1 p1 (output as large)", q: poolRef{kind: "max", k: 3, s: 1, p: 1, d: 1}, c: 4, h: 6, w: 7},
			{name: "max 2x2 s1 p1 (output larger)", q: poolRef{kind: "max", k: 2, s: 1, p: 1, d: 1}, c: 3, h: 5, w: 4},
			{name: "max 3x3 s2 p2 d2 ceil", q: poolRef{kind: "max", k: 3, s: 2, p: 2, d: 2, ceil: true}, c: 2, h: 9, w: 7},
			{name: "max 3x3 s2 ceil", q: poolRef{kind: "max", k: 3, s: 2, d: 1, ceil: true}, c: 5, h: 8, w: 10},
			{name: "max unbatched", q: poolRef{kind: "max", k: 3, s: 1, p: 1, d: 1}, c: 3, h: 5, w: 5, unbatched: true},
			{name: "avg 3x3 s1 p1 include pad", q: poolRef{kind: "avg", k: 3, s: 1, p: 1, includePad: true}, c: 3, h: 6, w: 5},
			{name: "avg 3x3 s2 p1 ceil exclude pad", q: poolRef{kind: "avg", k: 3, s: 2, p: 1, ceil: true}, c: 4, h: 7, w: 8},
			{name: "avg 2x2 s1 p1 divisor (output larger)", q: poolRef{kind: "avg", k: 2, s: 1, p: 1, divisor: 3, includePad: true}, c: 2, h: 4, w: 6},
			{name: "avg 2x2 s2", q: poolRef{kind: "avg", k: 2, s: 2, includePad: true}, c: 3, h: 6, w: 6},
			{name: "avg 2x2 s2 rows of 20 (one call, AVX-512)", q: poolRef{kind: "avg", k: 2, s: 2}, c: 5, h: 36, w: 40},
			{name: "avg 2x2 s2 odd sizes (plane by plane)", q: poolRef{kind: "avg", k: 2, s: 2, divisor: 3}, c: 3, h: 9, w: 35},
			{name: "adaptive 3x2", q: poolRef{kind: "adaptive", oh: 3, ow: 2}, c: 3, h: 7, w: 5},
			{name: "adaptive 1x1", q: poolRef{kind: "adaptive", oh: 1, ow: 1}, c: 6, h: 4, w: 4},
			{name: "adaptive up 9x8 (output larger)", q: poolRef{kind: "adaptive", oh: 9, ow: 8}, c: 2, h: 4, w: 3},
			{name: "adaptive same size", q: poolRef{kind: "adaptive", oh: 5, ow: 4}, c: 3, h: 5, w: 4},
			{name: "max channels-last input", q: poolRef{kind: "max", k: 3, s: 1, p: 1, d: 1}, c: 3, h: 4, w: 5, channelsLT: true},
			{name: "avg channels-last input", q: poolRef{kind: "avg", k: 2, s: 1, includePad: true}, c: 4, h: 4, w: 3, channelsLT: true},
		} {
			if c.unbatched && n > 1 {
				continue
			}
			ic := mk(fmt.Sprintf("%s n%d", c.name, n), c.q, n, c.c, c.h, c.w, !c.unbatched)
			if c.channelsLT {
				// Not the contiguous input the planner gives; the kernel
				// still has to be exact (it reads a copy).
				ic.strides = []int{c.h * c.w * c.c, 1, c.w * c.c, c.c}
			}
			cases = append(cases, ic)
		}
	}
	runInPlaceCases(t, cases)

	t.Run("adaptive_max_pool2d has no rule", func(t *testing.T) {
		p, err := buildNode(t, "aten::adaptive_max_pool2d", []ivalue.IValue{iv(r.tensor(ivalue.Float32, 1, 2, 4, 4)), ivInts(2, 2)},
			[]*graph.Type{tT, ints}, []*graph.Type{tT, tT}, nil)
		require.NoError(t, err)
		_, ok := ops.OverwriteRuleOf(p.Node)
		assert.False(t, ok)
	})
}

// convRef is a convolution in float64: x [n, c, h, w], weight [o, c/g,
// kh, kw], bias [o] or nil; oneD: h and kh are 1 and only W is padded.
func convRef(x []float64, n, c, h, w int, wt []float64, o, kh, kw int, bias []float64, s, p, d, g int, oneD bool) []float64 {
	oh := (h+2*p-d*(kh-1)-1)/s + 1
	ow := (w+2*p-d*(kw-1)-1)/s + 1
	ph := p
	if oneD {
		oh, ph = 1, 0
	}
	cg, og := c/g, o/g
	var out []float64
	for nn := 0; nn < n; nn++ {
		for oc := 0; oc < o; oc++ {
			for i := 0; i < oh; i++ {
				for j := 0; j < ow; j++ {
					v := 0.0
					if bias != nil {
						v = bias[oc]
					}
					for ci := 0; ci < cg; ci++ {
						ic := oc/og*cg + ci
						for a := 0; a < kh; a++ {
							for b := 0; b < kw; b++ {
								y, z := i*s-ph+a*d, j*s-p+b*d
								if y < 0 || y >= h || z < 0 || z >= w {
									continue
								}
								v += x[((nn*c+ic)*h+y)*w+z] * wt[((oc*cg+ci)*kh+a)*kw+b]
							}
						}
					}
					out = append(out, v)
				}
			}
		}
	}
	return out
}

type convCfg struct {
	name          string
	op            string // "conv2d" (default), "conv1d", "conv2d.same", "conv2d.valid", "_convolution"
	n, c, o, h, w int
	k, s, p, d, g int
	bias          bool
	unbatched     bool
	constW        bool
	safe          bool
}

func (cf convCfg) build(r ipRNG) ipCase {
	ints := graph.ListOf(graph.Int)
	oneD := cf.op == "conv1d"
	h, kh := cf.h, cf.k
	if oneD {
		h, kh = 1, 1
	}
	xs := []int{cf.n, cf.c, h, cf.w}
	ws := []int{cf.o, cf.c / cf.g, kh, cf.k}
	if oneD {
		xs = []int{cf.n, cf.c, cf.w}
		ws = []int{cf.o, cf.c / cf.g, cf.k}
	}
	if cf.unbatched {
		xs = xs[1:]
	}
	x := r.tensor(ivalue.Float32, xs...)
	wt := r.tensor(ivalue.Float32, ws...)
	bias, bt := ivalue.None(), tN
	var bv []float64
	if cf.bias {
		b := r.tensor(ivalue.Float32, cf.o)
		bias, bt, bv = iv(b), tT, b.Float64s()
	}
	pad := cf.p
	ic := ipCase{name: cf.name, in: []ivalue.IValue{iv(x), iv(wt), bias}, constW: cf.constW, safe: cf.safe, exact: true}
	switch cf.op {
	case "", "conv1d":
		ic.kind = "aten::" + map[bool]string{false: "conv2d", true: "conv1d"}[oneD]
		pair := func(v int) ivalue.IValue {
			if oneD {
				return ivInts(int64(v))
			}
			return ivInts(int64(v), int64(v))
		}
		ic.in = append(ic.in, pair(cf.s), pair(cf.p), pair(cf.d), ivI(int64(cf.g)))
		ic.types = []*graph.Type{tT, tT, bt, ints, ints, ints, tI}
	case "conv2d.same", "conv2d.valid":
		ic.kind = "aten::conv2d"
		mode := cf.op[len("conv2d."):]
		if mode == "same" {
			pad = cf.d * (cf.k - 1) / 2
		} else {
			pad = 0
		}
		ic.in = append(ic.in, ivInts(int64(cf.s), int64(cf.s)), ivS(mode), ivInts(int64(cf.d), int64(cf.d)), ivI(int64(cf.g)))
		ic.types = []*graph.Type{tT, tT, bt, ints, tS, ints, tI}
	case "conv_clamp", "conv_act":
		// gosr's fused convolutions: the clamp (relu6) or the activation
		// (silu) in the epilogue.
		ic.kind = "gosr::" + cf.op
		ic.in = append(ic.in, ivInts(int64(cf.s), int64(cf.s)), ivInts(int64(cf.p), int64(cf.p)), ivInts(int64(cf.d), int64(cf.d)), ivI(int64(cf.g)))
		ic.types = []*graph.Type{tT, tT, bt, ints, ints, ints, tI}
		if cf.op == "conv_clamp" {
			ic.in = append(ic.in, ivF(0), ivF(6))
			ic.types = append(ic.types, tF, tF)
		} else {
			ic.in = append(ic.in, ivS("silu"))
			ic.types = append(ic.types, tS)
		}
	case "_convolution":
		ic.kind = "aten::_convolution"
		ic.in = append(ic.in, ivInts(int64(cf.s), int64(cf.s)), ivInts(int64(cf.p), int64(cf.p)), ivInts(int64(cf.d), int64(cf.d)),
			ivB(false), ivInts(0, 0), ivI(int64(cf.g)), ivB(false), ivB(false), ivB(true), ivB(true))
		ic.types = []*graph.Type{tT, tT, bt, ints, ints, ints, tB, ints, tI, tB, tB, tB, tB}
	}
	xv, wv := x.Float64s(), wt.Float64s()
	ic.ref = func() []float64 {
		out := convRef(xv, max(cf.n, 1), cf.c, h, cf.w, wv, cf.o, kh, cf.k, bv, cf.s, pad, cf.d, cf.g, oneD)
		for i, v := range out {
			switch cf.op {
			case "conv_clamp":
				out[i] = min(max(v, 0), 6)
			case "conv_act":
				out[i] = v / (1 + math.Exp(-v))
			}
		}
		return out
	}
	return ic
}

func TestInPlaceConv(t *testing.T) {
	r := ipRNG{rand.New(rand.NewSource(4))}
	var cases []ipCase
	for _, n := range []int{1, 3} {
		for _, cf := range []convCfg{
			// Depthwise, one output channel per input channel: plane by plane.
			{name: "dw 3x3 s1 p1 bias", c: 4, o: 4, h: 6, w: 6, k: 3, s: 1, p: 1, d: 1, g: 4, bias: true, safe: true},
			{name: "dw 3x3 s2 p1", c: 5, o: 5, h: 7, w: 7, k: 3, s: 2, p: 1, d: 1, g: 5, safe: true},
			{name: "dw 3x3 s1 p2 d2 bias", c: 3, o: 3, h: 7, w: 6, k: 3, s: 1, p: 2, d: 2, g: 3, bias: true, safe: true},
			{name: "dw 1x1 p1 (output larger)", c: 3, o: 3, h: 5, w: 6, k: 1, s: 1, p: 1, d: 1, g: 3, bias: true, safe: true},
			{name: "dw 5x5 s1 p3 (output larger)", c: 2, o: 2, h: 6, w: 5, k: 5, s: 1, p: 3, d: 1, g: 2, safe: true},
			{name: "dw 3x3 valid (output smaller)", c: 4, o: 4, h: 6, w: 7, k: 3, s: 1, d: 1, g: 4, bias: true, safe: true},
			{name: "dw single channel", c: 1, o: 1, h: 5, w: 5, k: 3, s: 1, p: 1, d: 1, g: 1, safe: true},
			{name: "dw same", op: "conv2d.same", c: 3, o: 3, h: 6, w: 6, k: 3, s: 1, d: 1, g: 3, bias: true, safe: true},
			{name: "dw conv1d", op: "conv1d", c: 4, o: 4, w: 11, k: 3, s: 1, p: 1, d: 1, g: 4, bias: true, safe: true},
			{name: "dw conv1d s2", op: "conv1d", c: 4, o: 4, w: 11, k: 3, s: 2, p: 1, d: 1, g: 4, safe: true},
			{name: "dw _convolution", op: "_convolution", c: 3, o: 3, h: 6, w: 5, k: 3, s: 1, p: 1, d: 1, g: 3, bias: true, safe: true},
			{name: "dw const weight", c: 3, o: 3, h: 6, w: 5, k: 3, s: 2, p: 1, d: 1, g: 3, constW: true, safe: true},
			// Pointwise: column tiles.
			{name: "1x1 Cout<Cin bias", c: 8, o: 4, h: 5, w: 5, k: 1, s: 1, d: 1, g: 1, bias: true, safe: true},
			{name: "1x1 Cout>Cin", c: 4, o: 12, h: 6, w: 5, k: 1, s: 1, d: 1, g: 1, safe: true},
			{name: "1x1 Cout>Cin bias const weight", c: 4, o: 12, h: 6, w: 5, k: 1, s: 1, d: 1, g: 1, bias: true, constW: true, safe: true},
			{name: "1x1 Cout=Cin const weight", c: 6, o: 6, h: 4, w: 4, k: 1, s: 1, d: 1, g: 1, constW: true, safe: true},
			{name: "1x1 tiles, 1-column last tile", op: "conv1d", c: 64, o: 32, w: 1025, k: 1, s: 1, d: 1, g: 1, bias: true, safe: true},
			{name: "1x1 tiles, 1-column last tile, const weight", op: "conv1d", c: 64, o: 32, w: 1025, k: 1, s: 1, d: 1, g: 1, constW: true, safe: true},
			{name: "1x1 tiles Cout>Cin", c: 64, o: 96, h: 32, w: 33, k: 1, s: 1, d: 1, g: 1, bias: true, constW: true, safe: true},
			{name: "1x1 tiles Cout=1", c: 64, o: 1, h: 40, w: 30, k: 1, s: 1, d: 1, g: 1, bias: true, safe: true},
			{name: "1x1 tiles Cout=1, 1-column last tile", op: "conv1d", c: 64, o: 1, w: 1025, k: 1, s: 1, d: 1, g: 1, safe: true},
			{name: "1x1 one position", c: 16, o: 24, h: 1, w: 1, k: 1, s: 1, d: 1, g: 1, bias: true, safe: true},
			{name: "1x1 one position Cout<Cin", c: 16, o: 8, h: 1, w: 1, k: 1, s: 1, d: 1, g: 1, constW: true, safe: true},
			{name: "1x1 valid", op: "conv2d.valid", c: 5, o: 7, h: 4, w: 6, k: 1, s: 1, d: 1, g: 1, bias: true, safe: true},
			{name: "1x1 same", op: "conv2d.same", c: 7, o: 5, h: 4, w: 6, k: 1, s: 1, d: 1, g: 1, safe: true},
			{name: "1x1 _convolution", op: "_convolution", c: 6, o: 9, h: 3, w: 5, k: 1, s: 1, d: 1, g: 1, bias: true, safe: true},
			{name: "1x1 conv1d", op: "conv1d", c: 6, o: 3, w: 9, k: 1, s: 1, d: 1, g: 1, bias: true, safe: true},
			{name: "1x1 tiles conv_clamp", op: "conv_clamp", c: 64, o: 16, h: 40, w: 30, k: 1, s: 1, d: 1, g: 1, bias: true, constW: true, safe: true},
			{name: "1x1 tiles conv_act Cout>Cin", op: "conv_act", c: 64, o: 96, h: 32, w: 33, k: 1, s: 1, d: 1, g: 1, bias: true, constW: true, safe: true},
			{name: "1x1 conv_act", op: "conv_act", c: 8, o: 4, h: 5, w: 5, k: 1, s: 1, d: 1, g: 1, bias: true, safe: true},
			// Pointwise over small maps, the direct kernels' out of place
			// (see [Small pointwise maps]): in place the same kernels, one
			// image (batches take the column tiles).
			{name: "1x1 small map Cout>Cin", c: 32, o: 64, h: 7, w: 7, k: 1, s: 1, d: 1, g: 1, bias: true, constW: true, safe: true},
			{name: "1x1 small map Cout<Cin conv_clamp", op: "conv_clamp", c: 64, o: 48, h: 6, w: 8, k: 1, s: 1, d: 1, g: 1, bias: true, constW: true, safe: true},
			{name: "1x1 small map 14x14", c: 96, o: 256, h: 14, w: 14, k: 1, s: 1, d: 1, g: 1, bias: true, constW: true, safe: true},
			// Not safe (the kernel stays exact all the same: it reads a
			// copy of the input).
			{name: "3x3 groups 1", c: 4, o: 6, h: 6, w: 6, k: 3, s: 1, p: 1, d: 1, g: 1, bias: true},
			{name: "dw multiplier 2", c: 3, o: 6, h: 6, w: 6, k: 3, s: 1, p: 1, d: 1, g: 3},
			{name: "single channel multiplier 3", c: 1, o: 3, h: 5, w: 5, k: 3, s: 1, p: 1, d: 1, g: 1},
			{name: "1x1 stride 2", c: 4, o: 4, h: 6, w: 6, k: 1, s: 2, d: 1, g: 1},
			{name: "1x1 padding 1", c: 4, o: 4, h: 6, w: 6, k: 1, s: 1, p: 1, d: 1, g: 1},
			{name: "1x1 groups 2", c: 4, o: 6, h: 5, w: 5, k: 1, s: 1, d: 1, g: 2, bias: true},
			{name: "3x3 groups 2", c: 4, o: 4, h: 5, w: 5, k: 3, s: 1, p: 1, d: 1, g: 2, constW: true},
		} {
			cf.n = n
			cf.name = fmt.Sprintf("%s n%d", cf.name, n)
			cases = append(cases, cf.build(r))
		}
	}
	unb := convCfg{name: "dw unbatched", c: 3, o: 3, h: 5, w: 5, k: 3, s: 1, p: 1, d: 1, g: 3, bias: true, unbatched: true, safe: true}
	cases = append(cases, unb.build(r))
	unb = convCfg{name: "1x1 unbatched Cout>Cin", c: 3, o: 8, h: 5, w: 4, k: 1, s: 1, d: 1, g: 1, unbatched: true, safe: true}
	cases = append(cases, unb.build(r))
	runInPlaceCases(t, cases)
}

// BenchmarkInPlacePool times max_pool2d (small_cnn's: 16x32x32, 2x2 by 2)
// with output memory of its own and written over its input.
func BenchmarkInPlacePool(b *testing.B) {
	r := ipRNG{rand.New(rand.NewSource(5))}
	ints := graph.ListOf(graph.Int)
	x0 := r.tensor(ivalue.Float32, 1, 16, 32, 32)
	types := []*graph.Type{tT, ints, ints, ints, ints, tB}
	args := func(x *ivalue.Tensor) []ivalue.IValue {
		return []ivalue.IValue{iv(x), ivInts(2, 2), ivInts(2, 2), ivInts(0, 0), ivInts(1, 1), ivB(false)}
	}
	for _, inPlace := range []bool{false, true} {
		b.Run(fmt.Sprintf("inplace=%v", inPlace), func(b *testing.B) {
			x := x0
			st := ivalue.NewStorage(x0.Nbytes())
			copy(st.Data, elemBytes(x0))
			if inPlace {
				var err error
				x, err = ivalue.FromStorage(ivalue.Float32, st, 0, x0.Sizes(), nil)
				require.NoError(b, err)
			}
			p, err := buildNode(b, "aten::max_pool2d", args(x), types, []*graph.Type{tT}, nil)
			require.NoError(b, err)
			if inPlace {
				out := &ivalue.Tensor{}
				out.SetStorage(st.Window(0, x0.Nbytes()/4), 0)
				p.Own = []*ivalue.Tensor{out}
			}
			require.NoError(b, p.Run())
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				_ = p.Run()
			}
		})
	}
}

// BenchmarkInPlacePointwise times 1x1 convolutions (with relu6) of
// mobilenet_v3's and squeezenet's shapes with output memory of their own
// and written over their input (column tiles, convPointwiseInPlace).
func BenchmarkInPlacePointwise(b *testing.B) {
	r := rand.New(rand.NewSource(6))
	ints := graph.ListOf(graph.Int)
	for _, s := range []struct{ c, o, hw int }{{112, 672, 14}, {672, 112, 14}, {128, 16, 55}, {40, 240, 28}, {512, 1000, 13}, {256, 1024, 14}, {160, 960, 7}} {
		x0 := randTensor(r, 1, s.c, s.hw, s.hw)
		w, bias := randTensor(r, s.o, s.c, 1, 1), randTensor(r, s.o)
		mk := func(x *ivalue.Tensor) *ops.ProcessedNode {
			p, err := buildNode(b, "gosr::conv_clamp", []ivalue.IValue{iv(x), iv(w), iv(bias), ivInts(1, 1), ivInts(0, 0), ivInts(1, 1), ivI(1), ivF(0), ivF(6)},
				[]*graph.Type{tT, tT, tT, ints, ints, ints, tI, tF, tF}, []*graph.Type{tT}, []bool{false, true, true, true, true, true, true, true, true})
			require.NoError(b, err)
			p.Scratch = &gemm.Scratch{}
			return p
		}
		sep := mk(x0)
		st := ivalue.NewStorage(max(s.c, s.o) * s.hw * s.hw * 4)
		x, err := ivalue.FromStorage(ivalue.Float32, st, 0, x0.Sizes(), nil)
		require.NoError(b, err)
		copy(x.F32(), x0.F32())
		ip := mk(x)
		out := &ivalue.Tensor{}
		out.SetStorage(st.Window(0, s.o*s.hw*s.hw*4), 0)
		ip.Own = []*ivalue.Tensor{out}
		for _, c := range []struct {
			name string
			p    *ops.ProcessedNode
		}{{"separate", sep}, {"inplace", ip}} {
			b.Run(fmt.Sprintf("%d-%d/%dx%d/%s", s.c, s.o, s.hw, s.hw, c.name), func(b *testing.B) {
				for b.Loop() {
					_ = c.p.Run()
				}
			})
		}
	}
}
