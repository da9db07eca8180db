package ops_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops"
)

// Expected values printed by PyTorch 1.13 (see each case's expression);
// a = arange(6.).reshape(2,3), b = arange(10.,14.).reshape(2,2),
// c = arange(20.,26.).reshape(2,3), at = arange(6.).reshape(3,2).t(),
// ai = a as int32, e = zeros(0), x = arange(24.).reshape(2,3,4).

type catInputs struct{ a, b, c, at, ai, e, x *ivalue.Tensor }

func catMakeInputs() catInputs {
	raw := ivalue.F32Tensor(viewArange(6), 3, 2)
	return catInputs{
		a:  ivalue.F32Tensor(viewArange(6), 2, 3),
		b:  ivalue.F32Tensor([]float32{10, 11, 12, 13}, 2, 2),
		c:  ivalue.F32Tensor([]float32{20, 21, 22, 23, 24, 25}, 2, 3),
		at: viewMust(ivalue.FromStorage(ivalue.Float32, raw.Storage(), 0, []int{2, 3}, []int{1, 2})),
		ai: ivalue.I32Tensor([]int32{0, 1, 2, 3, 4, 5}, 2, 3),
		e:  ivalue.F32Tensor([]float32{}, 0),
		x:  ivalue.F32Tensor(viewArange(24), 2, 3, 4),
	}
}

func catList(ts ...*ivalue.Tensor) ivalue.IValue {
	items := make([]ivalue.IValue, len(ts))
	for i, t := range ts {
		items[i] = iv(t)
	}
	return ivalue.NewList(items...)
}

func TestCatStack(t *testing.T) {
	cases := []struct {
		name    string
		stack   bool
		tensors func(c catInputs) []*ivalue.Tensor
		dim     int64
	}{
		{"cat0", false, func(c catInputs) []*ivalue.Tensor { return []*ivalue.Tensor{c.a, c.c} }, 0},
		{"cat1", false, func(c catInputs) []*ivalue.Tensor { return []*ivalue.Tensor{c.a, c.b, c.c} }, 1},
		{"cat_neg", false, func(c catInputs) []*ivalue.Tensor { return []*ivalue.Tensor{c.a, c.b} }, -1},
		{"cat_nc", false, func(c catInputs) []*ivalue.Tensor { return []*ivalue.Tensor{c.at, c.a} }, 1},
		{"cat_empty", false, func(c catInputs) []*ivalue.Tensor { return []*ivalue.Tensor{c.a, c.e, c.c} }, 0},
		{"cat_promote", false, func(c catInputs) []*ivalue.Tensor { return []*ivalue.Tensor{c.ai, c.a} }, 0},
		{"stack0", true, func(c catInputs) []*ivalue.Tensor { return []*ivalue.Tensor{c.a, c.c} }, 0},
		{"stack1", true, func(c catInputs) []*ivalue.Tensor { return []*ivalue.Tensor{c.a, c.c} }, 1},
		{"stack_end", true, func(c catInputs) []*ivalue.Tensor { return []*ivalue.Tensor{c.a, c.at} }, -1},
	}
	for _, c := range cases {
		want := catExpected[c.name]
		check := func(t *testing.T, p *ops.ProcessedNode) {
			require.NoError(t, p.Run())
			out := p.Output(0).Tensor()
			assert.Equal(t, want.sizes, out.Sizes())
			assert.Equal(t, want.vals, out.Float64s())
			assert.Equal(t, want.dtype, out.DType().String())
			assert.Zero(t, testing.AllocsPerRun(20, func() { _ = p.Run() }))
			assert.Equal(t, want.vals, out.Float64s())
		}
		t.Run(c.name+"/list", func(t *testing.T) {
			kind := "aten::cat"
			if c.stack {
				kind = "aten::stack"
			}
			ts := c.tensors(catMakeInputs())
			p, err := buildNode(t, kind, []ivalue.IValue{catList(ts...), ivI(c.dim)}, []*graph.Type{shapeTTL, graph.Int}, []*graph.Type{graph.Tensor}, nil)
			require.NoError(t, err)
			assert.Equal(t, ops.OutVariant, p.Kind)
			check(t, p)
		})
		t.Run(c.name+"/variadic", func(t *testing.T) {
			kind := "prim::VarConcat"
			if c.stack {
				kind = "prim::VarStack"
			}
			ts := c.tensors(catMakeInputs())
			var in []ivalue.IValue
			var types []*graph.Type
			for _, x := range ts {
				in = append(in, iv(x))
				types = append(types, graph.Tensor)
			}
			in = append(in, ivI(c.dim))
			types = append(types, graph.Int)
			p, err := buildNode(t, kind, in, types, []*graph.Type{graph.Tensor}, nil)
			require.NoError(t, err)
			check(t, p)
		})
	}
}

func TestCatAllDTypes(t *testing.T) {
	for _, dt := range []ivalue.DType{ivalue.Float64, ivalue.Int64, ivalue.Int32, ivalue.Float16, ivalue.Int16, ivalue.Int8, ivalue.Uint8, ivalue.Bool} {
		t.Run(dt.String(), func(t *testing.T) {
			a := viewTensorOf(dt, []float64{0, 1, 1, 0}, 2, 2)
			b := viewTensorOf(dt, []float64{1, 1}, 2, 1)
			outs, _, err := runNode(t, "aten::cat", []ivalue.IValue{catList(a, b), ivI(1)}, []*graph.Type{shapeTTL, graph.Int}, []*graph.Type{graph.Tensor})
			require.NoError(t, err)
			out := outs[0].Tensor()
			assert.Equal(t, dt, out.DType())
			assert.Equal(t, []int{2, 3}, out.Sizes())
			assert.Equal(t, []float64{0, 1, 1, 1, 0, 1}, out.Float64s())
		})
	}
}

// Mixed dtypes promote as torch.cat does: int32+float16 -> float16,
// uint8+int8 -> int16, bool+int64 -> int64 (checked with PyTorch).
func TestCatPromotion(t *testing.T) {
	cases := []struct {
		a, b ivalue.DType
		want ivalue.DType
	}{
		{ivalue.Int32, ivalue.Float16, ivalue.Float16},
		{ivalue.Uint8, ivalue.Int8, ivalue.Int16},
		{ivalue.Bool, ivalue.Int64, ivalue.Int64},
		{ivalue.Float32, ivalue.Float64, ivalue.Float64},
	}
	for _, c := range cases {
		a := viewTensorOf(c.a, []float64{1, 0}, 2)
		b := viewTensorOf(c.b, []float64{1, 2}, 2)
		outs, _, err := runNode(t, "aten::cat", []ivalue.IValue{catList(a, b), ivI(0)}, []*graph.Type{shapeTTL, graph.Int}, []*graph.Type{graph.Tensor})
		require.NoError(t, err)
		out := outs[0].Tensor()
		assert.Equal(t, c.want, out.DType(), "%s + %s", c.a, c.b)
		want := []float64{1, 0, 1, 2}
		if c.a == ivalue.Bool {
			want = []float64{1, 0, 1, 2}
		}
		assert.Equal(t, want, out.Float64s())
	}
}

func TestCatErrors(t *testing.T) {
	c := catMakeInputs()
	cases := []struct {
		name, kind string
		list       ivalue.IValue
		dim        int64
		msg        string
	}{
		{"empty list", "aten::cat", catList(), 0, "non-empty"},
		{"size mismatch", "aten::cat", catList(c.a, c.b), 0, "must match"},
		{"rank mismatch", "aten::cat", catList(c.a, c.x), 0, "same number of dimensions"},
		{"dim range", "aten::cat", catList(c.a, c.c), 2, "out of range"},
		{"0-d", "aten::cat", catList(ivalue.ScalarTensor(1), ivalue.ScalarTensor(2)), 0, "zero-dimensional"},
		{"stack sizes", "aten::stack", catList(c.a, c.b), 0, "equal size"},
		{"stack dim", "aten::stack", catList(c.a, c.c), 3, "out of range"},
		{"none item", "aten::cat", ivalue.NewList(iv(c.a), ivalue.None()), 0, "expected a Tensor"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runNode(t, tc.kind, []ivalue.IValue{tc.list, ivI(tc.dim)}, []*graph.Type{shapeTTL, graph.Int}, []*graph.Type{graph.Tensor})
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}

func TestCatOnlyEmpty(t *testing.T) {
	e := ivalue.F32Tensor([]float32{}, 0)
	outs, _, err := runNode(t, "aten::cat", []ivalue.IValue{catList(e, e), ivI(0)}, []*graph.Type{shapeTTL, graph.Int}, []*graph.Type{graph.Tensor})
	require.NoError(t, err)
	assert.Equal(t, []int{0}, outs[0].Tensor().Sizes())
}

func BenchmarkCatDim1(b *testing.B) {
	x := ivalue.F32Tensor(make([]float32, 64*256), 64, 256)
	y := ivalue.F32Tensor(make([]float32, 64*128), 64, 128)
	p, err := buildNode(b, "aten::cat", []ivalue.IValue{catList(x, y, x), ivI(1)}, []*graph.Type{shapeTTL, graph.Int}, []*graph.Type{graph.Tensor}, nil)
	require.NoError(b, err)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = p.Run()
	}
}

var catExpected = map[string]struct {
	sizes []int
	vals  []float64
	dtype string
}{
	"cat0":          {[]int{4, 3}, []float64{0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0}, "float32"},
	"cat1":          {[]int{2, 8}, []float64{0.0, 1.0, 2.0, 10.0, 11.0, 20.0, 21.0, 22.0, 3.0, 4.0, 5.0, 12.0, 13.0, 23.0, 24.0, 25.0}, "float32"},
	"cat_neg":       {[]int{2, 5}, []float64{0.0, 1.0, 2.0, 10.0, 11.0, 3.0, 4.0, 5.0, 12.0, 13.0}, "float32"},
	"cat_nc":        {[]int{2, 6}, []float64{0.0, 2.0, 4.0, 0.0, 1.0, 2.0, 1.0, 3.0, 5.0, 3.0, 4.0, 5.0}, "float32"},
	"cat_empty":     {[]int{4, 3}, []float64{0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0}, "float32"},
	"cat_promote":   {[]int{4, 3}, []float64{0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0}, "float32"},
	"stack0":        {[]int{2, 2, 3}, []float64{0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0}, "float32"},
	"stack1":        {[]int{2, 2, 3}, []float64{0.0, 1.0, 2.0, 20.0, 21.0, 22.0, 3.0, 4.0, 5.0, 23.0, 24.0, 25.0}, "float32"},
	"stack_end":     {[]int{2, 3, 2}, []float64{0.0, 0.0, 1.0, 2.0, 2.0, 4.0, 3.0, 1.0, 4.0, 3.0, 5.0, 5.0}, "float32"},
	"isel0":         {[]int{3, 3, 4}, []float64{12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0}, "float32"},
	"isel1":         {[]int{2, 2, 4}, []float64{8.0, 9.0, 10.0, 11.0, 0.0, 1.0, 2.0, 3.0, 20.0, 21.0, 22.0, 23.0, 12.0, 13.0, 14.0, 15.0}, "float32"},
	"isel2":         {[]int{2, 3, 3}, []float64{3.0, 3.0, 0.0, 7.0, 7.0, 4.0, 11.0, 11.0, 8.0, 15.0, 15.0, 12.0, 19.0, 19.0, 16.0, 23.0, 23.0, 20.0}, "float32"},
	"isel_nc":       {[]int{4, 2, 2}, []float64{8.0, 20.0, 4.0, 16.0, 9.0, 21.0, 5.0, 17.0, 10.0, 22.0, 6.0, 18.0, 11.0, 23.0, 7.0, 19.0}, "float32"},
	"gather0":       {[]int{2, 3}, []float64{3.0, 1.0, 5.0, 0.0, 1.0, 5.0}, "float32"},
	"gather1":       {[]int{2, 1, 2}, []float64{3.0, 0.0, 13.0, 13.0}, "float32"},
	"idx_rows":      {[]int{3, 3, 4}, []float64{12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0}, "float32"},
	"idx_neg":       {[]int{2, 2, 4}, []float64{8.0, 9.0, 10.0, 11.0, 0.0, 1.0, 2.0, 3.0, 20.0, 21.0, 22.0, 23.0, 12.0, 13.0, 14.0, 15.0}, "float32"},
	"idx_two_adj":   {[]int{2, 2}, []float64{1.0, 11.0, 13.0, 23.0}, "float32"},
	"idx_bcast":     {[]int{2, 3, 4}, []float64{0.0, 1.0, 2.0, 3.0, 8.0, 9.0, 10.0, 11.0, 4.0, 5.0, 6.0, 7.0, 12.0, 13.0, 14.0, 15.0, 20.0, 21.0, 22.0, 23.0, 16.0, 17.0, 18.0, 19.0}, "float32"},
	"idx_nonadj":    {[]int{2, 3}, []float64{3.0, 7.0, 11.0, 12.0, 16.0, 20.0}, "float32"},
	"idx_mask":      {[]int{5, 4}, []float64{4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0}, "float32"},
	"idx_mask_last": {[]int{2, 3, 2}, []float64{0.0, 2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0, 18.0, 20.0, 22.0}, "float32"},
	"idx_mask_all":  {[]int{8}, []float64{16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0}, "float32"},
	"mselect":       {[]int{12}, []float64{0.0, 3.0, 4.0, 7.0, 8.0, 11.0, 12.0, 15.0, 16.0, 19.0, 20.0, 23.0}, "float32"},
}
