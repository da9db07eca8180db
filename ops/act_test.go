package ops_test

import (
	"math/rand"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/internal/fixture"
	"github.com/gosr/gosr/ivalue"
)

// The overwrite rules of this area's kernels (activation.go, prelu,
// instance_norm): the same bits with the output over the input as with
// an output of its own. (The values are checked against PyTorch by the
// act_/norm_ fixtures.)
func TestActInPlaceRules(t *testing.T) {
	r := ipRNG{rand.New(rand.NewSource(7))}
	f32 := func() ivalue.IValue { return iv(r.tensor(ivalue.Float32, 3, 37)) }
	one := []*graph.Type{tT}
	u := func(name, kind string, x ivalue.IValue, safe bool) ipCase {
		return ipCase{name: name, kind: kind, in: []ivalue.IValue{x}, types: one, safe: safe}
	}
	cases := []ipCase{
		u("selu f32", "aten::selu", f32(), true),
		u("log_sigmoid f32", "aten::log_sigmoid", f32(), true),
		u("mish f32", "aten::mish", f32(), true),
		u("mish f64", "aten::mish", iv(r.tensor(ivalue.Float64, 2, 9)), true),
		{name: "selu f16", kind: "aten::selu", in: []ivalue.IValue{iv(r.tensor(ivalue.Float16, 3, 5))}, types: one, safe: true, allocs: true},
		{name: "elu f32", kind: "aten::elu", in: []ivalue.IValue{f32(), ivF(0.5), ivF(2), ivF(1.5)}, types: []*graph.Type{tT, tF, tF, tF}, safe: true},
		{name: "celu f64", kind: "aten::celu", in: []ivalue.IValue{iv(r.tensor(ivalue.Float64, 7)), ivF(1.5)}, types: []*graph.Type{tT, tF}, safe: true},
		{name: "hardshrink f32", kind: "aten::hardshrink", in: []ivalue.IValue{f32(), ivF(0.5)}, types: []*graph.Type{tT, tF}, safe: true},
		{name: "softshrink f32", kind: "aten::softshrink", in: []ivalue.IValue{f32(), ivF(0.5)}, types: []*graph.Type{tT, tF}, safe: true},
		{name: "threshold f32", kind: "aten::threshold", in: []ivalue.IValue{f32(), ivF(0.1), ivF(20)}, types: []*graph.Type{tT, tF, tF}, safe: true},
		{name: "threshold i64", kind: "aten::threshold", in: []ivalue.IValue{iv(r.tensor(ivalue.Int64, 9)), ivI(1), ivI(-5)}, types: []*graph.Type{tT, tI, tI}, safe: true},
		{name: "rrelu f32", kind: "aten::rrelu", in: []ivalue.IValue{f32(), ivF(0.1), ivF(0.3), ivB(false), ivalue.None()}, types: []*graph.Type{tT, tF, tF, tB, tN}, safe: true},
		{name: "prelu channels", kind: "aten::prelu", in: []ivalue.IValue{iv(r.tensor(ivalue.Float32, 2, 3, 5)), iv(r.tensor(ivalue.Float32, 3))}, types: []*graph.Type{tT, tT}, safe: true},
		{name: "instance_norm", kind: "aten::instance_norm", in: []ivalue.IValue{iv(r.tensor(ivalue.Float32, 2, 3, 9)), ivalue.None(), ivalue.None(), ivalue.None(), ivalue.None(), ivB(true), ivF(0.1), ivF(1e-5), ivB(false)},
			types: []*graph.Type{tT, tN, tN, tN, tN, tB, tF, tF, tB}, safe: true},
		// Strided self: Safe says no.
		{name: "mish strided", kind: "aten::mish", in: []ivalue.IValue{f32()}, types: one, strides: []int{1, 3}},
	}
	runInPlaceCases(t, cases)
}

// TestActErrors: bad arguments are errors naming what was wrong, as
// PyTorch's checks (never panics).
func TestActErrors(t *testing.T) {
	f := func(s ...int) ivalue.IValue { return iv(ivalue.NewTensor(ivalue.Float32, s...)) }
	i64 := func(s ...int) ivalue.IValue { return iv(ivalue.NewTensor(ivalue.Int64, s...)) }
	tl := graph.ListOf(tT)
	eins := func(eq string, ts ...ivalue.IValue) ([]ivalue.IValue, []*graph.Type) {
		return []ivalue.IValue{ivS(eq), ivalue.NewList(ts...), ivalue.None()}, []*graph.Type{tS, tl, graph.OptionalOf(graph.ListOf(tI))}
	}
	type c struct {
		name, kind string
		in         []ivalue.IValue
		types      []*graph.Type
		want       string
	}
	cases := []c{
		{"glu odd", "aten::glu", []ivalue.IValue{f(2, 3), ivI(1)}, []*graph.Type{tT, tI}, "Halving dimension must be even"},
		{"glu scalar", "aten::glu", []ivalue.IValue{f(), ivI(0)}, []*graph.Type{tT, tI}, "does not support scalars"},
		{"glu dim", "aten::glu", []ivalue.IValue{f(2, 4), ivI(2)}, []*graph.Type{tT, tI}, "dimension out of range"},
		{"celu alpha 0", "aten::celu", []ivalue.IValue{f(3), ivF(0)}, []*graph.Type{tT, tF}, "alpha cannot be 0"},
		{"softshrink negative", "aten::softshrink", []ivalue.IValue{f(3), ivF(-1)}, []*graph.Type{tT, tF}, "lambda must be greater or equal to 0"},
		{"elu int", "aten::elu", []ivalue.IValue{i64(3), ivF(1), ivF(1), ivF(1)}, []*graph.Type{tT, tF, tF, tF}, "floating point"},
		{"prelu channels", "aten::prelu", []ivalue.IValue{f(2, 3, 4), f(4)}, []*graph.Type{tT, tT}, "channel size 3"},
		{"prelu dtype", "aten::prelu", []ivalue.IValue{f(2, 3), i64(3)}, []*graph.Type{tT, tT}, "does not match"},
		{"pixel_shuffle dims", "aten::pixel_shuffle", []ivalue.IValue{f(4, 2), ivI(2)}, []*graph.Type{tT, tI}, "at least 3 dimensions"},
		{"pixel_shuffle channels", "aten::pixel_shuffle", []ivalue.IValue{f(1, 6, 2, 2), ivI(2)}, []*graph.Type{tT, tI}, "divisible by the square"},
		{"pixel_shuffle factor", "aten::pixel_shuffle", []ivalue.IValue{f(1, 4, 2, 2), ivI(0)}, []*graph.Type{tT, tI}, "positive upscale_factor"},
		{"pixel_unshuffle width", "aten::pixel_unshuffle", []ivalue.IValue{f(1, 1, 4, 3), ivI(2)}, []*graph.Type{tT, tI}, "width to be divisible"},
		{"instance_norm no stats", "aten::instance_norm", []ivalue.IValue{f(2, 3, 4), ivalue.None(), ivalue.None(), ivalue.None(), ivalue.None(), ivB(false), ivF(0.1), ivF(1e-5), ivB(false)},
			[]*graph.Type{tT, tN, tN, tN, tN, tB, tF, tF, tB}, "running_mean and running_var to be defined"},
		{"instance_norm training stats", "aten::instance_norm", []ivalue.IValue{f(2, 3, 4), ivalue.None(), ivalue.None(), f(3), f(3), ivB(true), ivF(0.1), ivF(1e-5), ivB(false)},
			[]*graph.Type{tT, tN, tN, tT, tT, tB, tF, tF, tB}, "not supported"},
		{"instance_norm weight", "aten::instance_norm", []ivalue.IValue{f(2, 3, 4), f(4), ivalue.None(), ivalue.None(), ivalue.None(), ivB(true), ivF(0.1), ivF(1e-5), ivB(false)},
			[]*graph.Type{tT, tT, tN, tN, tN, tB, tF, tF, tB}, "expected sizes [3]"},
		{"roll align", "aten::roll", []ivalue.IValue{f(2, 3), ivInts(1, 2), ivInts(0)}, []*graph.Type{tT, graph.ListOf(tI), graph.ListOf(tI)}, "shifts and dimensions must align"},
		{"roll flat align", "aten::roll", []ivalue.IValue{f(2, 3), ivInts(1, 2), ivInts()}, []*graph.Type{tT, graph.ListOf(tI), graph.ListOf(tI)}, "shifts and dimensions must align"},
		{"roll dim", "aten::roll", []ivalue.IValue{f(2, 3), ivInts(1), ivInts(2)}, []*graph.Type{tT, graph.ListOf(tI), graph.ListOf(tI)}, "dimension out of range"},
		{"tril 1-d", "aten::tril", []ivalue.IValue{f(3), ivI(0)}, []*graph.Type{tT, tI}, "at least 2 dimensions"},
		{"tril_indices row", "aten::tril_indices", []ivalue.IValue{ivI(-1), ivI(3), ivI(0), ivalue.None(), ivalue.None(), ivalue.None(), ivalue.None()},
			[]*graph.Type{tI, tI, tI, tN, tN, tN, tN}, "row must be non-negative"},
		{"repeat_interleave negative", "aten::repeat_interleave", []ivalue.IValue{f(3), ivI(-1), ivalue.None(), ivalue.None()}, []*graph.Type{tT, tI, tN, tN}, "can not be negative"},
		{"repeat_interleave sizes", "aten::repeat_interleave", []ivalue.IValue{f(3, 2), iv(ivalue.I64Tensor([]int64{1, 2}, 2)), ivI(0), ivalue.None()}, []*graph.Type{tT, tT, tI, tN}, "same size as input along dim"},
		{"norm inf empty", "aten::norm", []ivalue.IValue{f(0, 3), ivF(-1.0 / zero), ivInts(0), ivB(false)}, []*graph.Type{tT, tF, graph.ListOf(tI), tB}, "does not have an identity"},
		{"norm int", "aten::norm", []ivalue.IValue{i64(3), ivF(2)}, []*graph.Type{tT, tF}, "floating point"},
		{"new_zeros negative", "aten::new_zeros", []ivalue.IValue{f(2), ivInts(-1), ivalue.None(), ivalue.None(), ivalue.None(), ivalue.None()},
			[]*graph.Type{tT, graph.ListOf(tI), tN, tN, tN, tN}, "negative dimension"},
	}
	for _, e := range []struct{ name, eq, want string }{
		{"einsum arrow dots", "i.j->ij", "not part of any ellipsis"},
		{"einsum bad char", "i1,j->ij", "invalid subscript"},
		{"einsum repeated out", "ij,jk->ii", "appears more than once in the output"},
		{"einsum unknown out", "ij,jk->iz", "does not appear in the equation"},
		{"einsum operands", "ij->ij", "more operands were provided"},
		{"einsum rank", "ijk,jk->ik", "does not match the number of dimensions (2) for operand 0"},
		{"einsum sizes", "ij,ij->ij", "does not broadcast with previously seen size 2"},
		{"einsum diag sizes", "ii,ij->ij", "repeated for operand 0 but the sizes don't match"},
	} {
		in, ty := eins(e.eq, f(2, 3), f(3, 3))
		cases = append(cases, c{e.name, "aten::einsum", in, ty, e.want})
	}
	in, ty := eins("ij,jk->ik", f(2, 3), i64(3, 2))
	cases = append(cases, c{"einsum dtype", "aten::einsum", in, ty, "expected a float32 tensor"})
	for _, cc := range cases {
		t.Run(cc.name, func(t *testing.T) {
			_, _, err := runNode(t, cc.kind, cc.in, cc.types, []*graph.Type{tT})
			require.Error(t, err)
			assert.Contains(t, err.Error(), cc.want)
		})
	}
}

var zero = 0.0

// TestActTrainingErrors: dropout and rrelu with a non-constant train flag
// run as the identity / leaky relu while it is false and refuse true.
func TestActTrainingErrors(t *testing.T) {
	x := iv(ivalue.F32Tensor([]float32{-1, 2}, 2))
	for _, c := range []struct {
		kind  string
		in    []ivalue.IValue
		types []*graph.Type
		train int
	}{
		{"aten::dropout_", []ivalue.IValue{x, ivF(0.5), ivB(false)}, []*graph.Type{tT, tF, tB}, 2},
		{"aten::feature_alpha_dropout", []ivalue.IValue{x, ivF(0.5), ivB(false)}, []*graph.Type{tT, tF, tB}, 2},
		{"aten::rrelu", []ivalue.IValue{x, ivF(0.1), ivF(0.3), ivB(false), ivalue.None()}, []*graph.Type{tT, tF, tF, tB, tN}, 3},
	} {
		t.Run(c.kind, func(t *testing.T) {
			constant := make([]bool, len(c.in))
			for i := range constant {
				constant[i] = i != 0 && i != c.train
			}
			p, err := buildNode(t, c.kind, c.in, c.types, []*graph.Type{tT}, constant)
			require.NoError(t, err)
			require.NoError(t, p.Run())
			p.Values[p.In[c.train]] = ivB(true)
			err = p.Run()
			require.Error(t, err)
			assert.Contains(t, err.Error(), "train")
		})
	}
}

// TestEinsumDynamicEquation runs fixtures' equations given as a runtime
// value (parsed per run, the plan kept while the equation and shapes
// stay) against PyTorch's outputs.
func TestEinsumDynamicEquation(t *testing.T) {
	for _, c := range []struct{ name, eq string }{
		{"einsum_bmm", "bij,bjk->bik"},
		{"einsum_out_interleaved", "bij,bjk->ibk"},
		{"einsum_diag_pair", "ii,ij->j"},
	} {
		t.Run(c.name, func(t *testing.T) {
			fx, err := fixture.Load(filepath.Join("..", "testdata", "ops", c.name+".ir"))
			require.NoError(t, err)
			in := []ivalue.IValue{ivS(c.eq), ivalue.NewList(fx.Inputs...), ivalue.None()}
			ty := []*graph.Type{tS, graph.ListOf(tT), graph.OptionalOf(graph.ListOf(tI))}
			p, err := buildNode(t, "aten::einsum", in, ty, []*graph.Type{tT}, []bool{false, false, true})
			require.NoError(t, err)
			for run := 0; run < 2; run++ {
				require.NoError(t, p.Run())
				got := p.Output(0).Tensor()
				require.Equal(t, fx.Expected[0].Sizes(), got.Sizes())
				assert.InDeltaSlice(t, fx.Expected[0].Float64s(), got.Float64s(), 1e-5)
			}
			assert.Zero(t, testing.AllocsPerRun(5, func() { _ = p.Run() }))
		})
	}
}
