package ops_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// Expected values are in catExpected (cat_test.go), printed by PyTorch
// for x = arange(24.).reshape(2,3,4), a = arange(6.).reshape(2,3).

func idxI64(vals []int64, sizes ...int) *ivalue.Tensor { return ivalue.I64Tensor(vals, sizes...) }

func idxOptList(items ...*ivalue.Tensor) ivalue.IValue {
	l := make([]ivalue.IValue, len(items))
	for i, t := range items {
		l[i] = ivalue.FromTensor(t) // nil -> None
	}
	return ivalue.NewList(l...)
}

func TestIndexOps(t *testing.T) {
	tT, tI := graph.Tensor, graph.Int
	x := ivalue.F32Tensor(viewArange(24), 2, 3, 4)
	xt := viewMust(ivalue.FromStorage(ivalue.Float32, x.Storage(), 0, []int{4, 3, 2}, []int{1, 4, 12}))
	a := ivalue.F32Tensor(viewArange(6), 2, 3)
	mask23 := ivalue.BoolTensor([]bool{false, true, true, true, true, true}, 2, 3)
	maskAll := make([]bool, 24)
	for i := 16; i < 24; i++ {
		maskAll[i] = true
	}
	cases := []struct {
		name, kind string
		inputs     []ivalue.IValue
		types      []*graph.Type
	}{
		{"isel0", "aten::index_select", []ivalue.IValue{iv(x), ivI(0), iv(idxI64([]int64{1, 0, 1}))}, []*graph.Type{tT, tI, tT}},
		{"isel1", "aten::index_select", []ivalue.IValue{iv(x), ivI(1), iv(idxI64([]int64{2, 0}))}, []*graph.Type{tT, tI, tT}},
		{"isel2", "aten::index_select", []ivalue.IValue{iv(x), ivI(-1), iv(ivalue.I32Tensor([]int32{3, 3, 0}))}, []*graph.Type{tT, tI, tT}},
		{"isel_nc", "aten::index_select", []ivalue.IValue{iv(xt), ivI(1), iv(idxI64([]int64{2, 1}))}, []*graph.Type{tT, tI, tT}},
		{"gather0", "aten::gather", []ivalue.IValue{iv(a), ivI(0), iv(idxI64([]int64{1, 0, 1, 0, 0, 1}, 2, 3)), ivB(false)}, []*graph.Type{tT, tI, tT, graph.Bool}},
		{"gather1", "aten::gather", []ivalue.IValue{iv(x), ivI(2), iv(idxI64([]int64{3, 0, 1, 1}, 2, 1, 2)), ivB(false)}, []*graph.Type{tT, tI, tT, graph.Bool}},
		{"idx_rows", "aten::index", []ivalue.IValue{iv(x), idxOptList(idxI64([]int64{1, 0, 1}))}, []*graph.Type{tT, shapeTOTL}},
		{"idx_neg", "aten::index", []ivalue.IValue{iv(x), idxOptList(nil, idxI64([]int64{-1, 0}))}, []*graph.Type{tT, shapeTOTL}},
		{"idx_two_adj", "aten::index", []ivalue.IValue{iv(x), idxOptList(nil, idxI64([]int64{0, 2}), idxI64([]int64{1, 3}))}, []*graph.Type{tT, shapeTOTL}},
		{"idx_bcast", "aten::index", []ivalue.IValue{iv(x), idxOptList(idxI64([]int64{0, 1}, 2, 1), idxI64([]int64{0, 2, 1}))}, []*graph.Type{tT, shapeTOTL}},
		{"idx_nonadj", "aten::index", []ivalue.IValue{iv(x), idxOptList(idxI64([]int64{0, 1}), nil, idxI64([]int64{3, 0}))}, []*graph.Type{tT, shapeTOTL}},
		{"idx_mask", "aten::index", []ivalue.IValue{iv(x), idxOptList(mask23)}, []*graph.Type{tT, shapeTOTL}},
		{"idx_mask_last", "aten::index", []ivalue.IValue{iv(x), idxOptList(nil, nil, ivalue.BoolTensor([]bool{true, false, true, false}))}, []*graph.Type{tT, shapeTOTL}},
		{"idx_mask_all", "aten::index", []ivalue.IValue{iv(x), idxOptList(ivalue.BoolTensor(maskAll, 2, 3, 4))}, []*graph.Type{tT, shapeTOTL}},
		{"mselect", "aten::masked_select", []ivalue.IValue{iv(x), iv(ivalue.BoolTensor([]bool{true, false, false, true}))}, []*graph.Type{tT, tT}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := catExpected[c.name]
			p, err := buildNode(t, c.kind, c.inputs, c.types, []*graph.Type{tT}, nil)
			require.NoError(t, err)
			require.NoError(t, p.Run())
			out := p.Output(0).Tensor()
			assert.Equal(t, want.sizes, out.Sizes())
			assert.Equal(t, want.vals, out.Float64s())
			assert.Zero(t, testing.AllocsPerRun(20, func() { _ = p.Run() }))
			assert.Equal(t, want.vals, p.Output(0).Tensor().Float64s())
		})
	}
}

func TestIndexAllDTypes(t *testing.T) {
	for _, dt := range []ivalue.DType{ivalue.Float64, ivalue.Int64, ivalue.Int32, ivalue.Float16, ivalue.Int16, ivalue.Int8, ivalue.Uint8, ivalue.Bool} {
		t.Run(dt.String(), func(t *testing.T) {
			src := viewTensorOf(dt, []float64{0, 1, 1, 0, 1, 1}, 2, 3)
			outs, _, err := runNode(t, "aten::index_select", []ivalue.IValue{iv(src), ivI(1), iv(idxI64([]int64{2, 0}))}, []*graph.Type{graph.Tensor, graph.Int, graph.Tensor}, []*graph.Type{graph.Tensor})
			require.NoError(t, err)
			assert.Equal(t, []float64{1, 0, 1, 0}, outs[0].Tensor().Float64s())
			outs, _, err = runNode(t, "aten::index", []ivalue.IValue{iv(src), idxOptList(nil, idxI64([]int64{1}))}, []*graph.Type{graph.Tensor, shapeTOTL}, []*graph.Type{graph.Tensor})
			require.NoError(t, err)
			assert.Equal(t, []float64{1, 1}, outs[0].Tensor().Float64s())
			assert.Equal(t, dt, outs[0].Tensor().DType())
		})
	}
}

func TestIndexErrors(t *testing.T) {
	tT, tI := graph.Tensor, graph.Int
	x := ivalue.F32Tensor(viewArange(24), 2, 3, 4)
	cases := []struct {
		name, kind string
		inputs     []ivalue.IValue
		types      []*graph.Type
		msg        string
	}{
		{"isel range", "aten::index_select", []ivalue.IValue{iv(x), ivI(0), iv(idxI64([]int64{2}))}, []*graph.Type{tT, tI, tT}, "out of range"},
		{"isel negative", "aten::index_select", []ivalue.IValue{iv(x), ivI(0), iv(idxI64([]int64{-1}))}, []*graph.Type{tT, tI, tT}, "out of range"},
		{"isel float index", "aten::index_select", []ivalue.IValue{iv(x), ivI(0), iv(ivalue.F32Tensor([]float32{0}))}, []*graph.Type{tT, tI, tT}, "int32 or int64"},
		{"isel 2d index", "aten::index_select", []ivalue.IValue{iv(x), ivI(0), iv(idxI64([]int64{0, 0}, 1, 2))}, []*graph.Type{tT, tI, tT}, "vector"},
		{"gather range", "aten::gather", []ivalue.IValue{iv(x), ivI(2), iv(idxI64([]int64{4}, 1, 1, 1)), ivB(false)}, []*graph.Type{tT, tI, tT, graph.Bool}, "out of bounds"},
		{"gather rank", "aten::gather", []ivalue.IValue{iv(x), ivI(0), iv(idxI64([]int64{0})), ivB(false)}, []*graph.Type{tT, tI, tT, graph.Bool}, "same number of dimensions"},
		{"gather size", "aten::gather", []ivalue.IValue{iv(x), ivI(0), iv(idxI64(make([]int64, 8), 1, 1, 8)), ivB(false)}, []*graph.Type{tT, tI, tT, graph.Bool}, "must not exceed"},
		{"index range", "aten::index", []ivalue.IValue{iv(x), idxOptList(idxI64([]int64{2}))}, []*graph.Type{tT, shapeTOTL}, "out of bounds"},
		{"index too many", "aten::index", []ivalue.IValue{iv(x), idxOptList(nil, nil, nil, idxI64([]int64{0}))}, []*graph.Type{tT, shapeTOTL}, "too many indices"},
		{"index bcast", "aten::index", []ivalue.IValue{iv(x), idxOptList(idxI64([]int64{0, 1}), idxI64([]int64{0, 1, 2}))}, []*graph.Type{tT, shapeTOTL}, "broadcast"},
		{"index mask shape", "aten::index", []ivalue.IValue{iv(x), idxOptList(ivalue.BoolTensor([]bool{true, false, true}))}, []*graph.Type{tT, shapeTOTL}, "does not match"},
		{"index float", "aten::index", []ivalue.IValue{iv(x), idxOptList(ivalue.F32Tensor([]float32{0}))}, []*graph.Type{tT, shapeTOTL}, "long, byte or bool"},
		{"masked_select dtype", "aten::masked_select", []ivalue.IValue{iv(x), iv(idxI64([]int64{1}))}, []*graph.Type{tT, tT}, "bool mask"},
		{"masked_select shape", "aten::masked_select", []ivalue.IValue{iv(x), iv(ivalue.BoolTensor([]bool{true, false, true}))}, []*graph.Type{tT, tT}, "broadcast"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := runNode(t, c.kind, c.inputs, c.types, []*graph.Type{tT})
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.msg)
		})
	}
}
