package ops_test

import (
	"github.com/gosr/gosr/internal/fixture"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops"
)

// Expected values below were printed by PyTorch 1.13 for the same
// expressions (x = arange(24.).reshape(2,3,4), xt = x.transpose(0,2),
// xs = x[:, 1:, ::2], y = arange(6.).reshape(2,3), z = arange(10.).reshape(5,2)).

func viewArange(n int) []float32 {
	d := make([]float32, n)
	for i := range d {
		d[i] = float32(i)
	}
	return d
}

func viewMust(t *ivalue.Tensor, err error) *ivalue.Tensor {
	if err != nil {
		panic(err)
	}
	return t
}

type viewInputs struct {
	x, xt, xs, y, y5, z *ivalue.Tensor
}

func viewMakeInputs() viewInputs {
	x := ivalue.F32Tensor(viewArange(24), 2, 3, 4)
	y := ivalue.F32Tensor(viewArange(6), 2, 3)
	return viewInputs{
		x:  x,
		xt: viewMust(ivalue.FromStorage(ivalue.Float32, x.Storage(), 0, []int{4, 3, 2}, []int{1, 4, 12})),
		xs: viewMust(ivalue.FromStorage(ivalue.Float32, x.Storage(), 4, []int{2, 2, 2}, []int{12, 4, 2})),
		y:  y,
		y5: ivalue.F32Tensor(viewArange(24), 2, 1, 3, 1, 4),
		z:  ivalue.F32Tensor(viewArange(10), 5, 2),
	}
}

var (
	shapeTIL  = graph.ListOf(graph.Int)
	shapeTTL  = graph.ListOf(graph.Tensor)
	shapeTOTL = graph.ListOf(graph.OptionalOf(graph.Tensor))
)

type viewCase struct {
	name   string // key into viewExpected
	kind   string
	inputs func(v viewInputs) []ivalue.IValue
	types  []*graph.Type
	view   bool // the output must share input 0's storage
}

func viewCases() []viewCase {
	tT, tI, tB, tN := graph.Tensor, graph.Int, graph.Bool, graph.None
	return []viewCase{
		{"view", "aten::view", func(v viewInputs) []ivalue.IValue { return []ivalue.IValue{iv(v.x), ivInts(4, -1)} }, []*graph.Type{tT, shapeTIL}, true},
		{"view_1d", "aten::view", func(v viewInputs) []ivalue.IValue { return []ivalue.IValue{iv(v.x), ivInts(-1)} }, []*graph.Type{tT, shapeTIL}, true},
		{"reshape_view", "aten::reshape", func(v viewInputs) []ivalue.IValue { return []ivalue.IValue{iv(v.x), ivInts(6, 4)} }, []*graph.Type{tT, shapeTIL}, true},
		{"reshape_copy_path", "aten::reshape", func(v viewInputs) []ivalue.IValue { return []ivalue.IValue{iv(v.xt), ivInts(-1)} }, []*graph.Type{tT, shapeTIL}, false},
		{"reshape_t_view", "aten::reshape", func(v viewInputs) []ivalue.IValue { return []ivalue.IValue{iv(v.xt), ivInts(4, 3, 2, 1)} }, []*graph.Type{tT, shapeTIL}, true},
		{"flatten", "aten::flatten", func(v viewInputs) []ivalue.IValue { return []ivalue.IValue{iv(v.x), ivI(1), ivI(-1)} }, []*graph.Type{tT, tI, tI}, true},
		{"flatten_t", "aten::flatten", func(v viewInputs) []ivalue.IValue { return []ivalue.IValue{iv(v.xt), ivI(0), ivI(1)} }, []*graph.Type{tT, tI, tI}, false},
		{"flatten_all", "aten::flatten", func(v viewInputs) []ivalue.IValue { return []ivalue.IValue{iv(v.x), ivI(0), ivI(-1)} }, []*graph.Type{tT, tI, tI}, true},
		{"permute", "aten::permute", func(v viewInputs) []ivalue.IValue { return []ivalue.IValue{iv(v.x), ivInts(2, 0, 1)} }, []*graph.Type{tT, shapeTIL}, true},
		{"permute_neg", "aten::permute", func(v viewInputs) []ivalue.IValue { return []ivalue.IValue{iv(v.xs), ivInts(-1, 0, 1)} }, []*graph.Type{tT, shapeTIL}, true},
		{"transpose", "aten::transpose", func(v viewInputs) []ivalue.IValue { return []ivalue.IValue{iv(v.x), ivI(1), ivI(-1)} }, []*graph.Type{tT, tI, tI}, true},
		{"t", "aten::t", func(v viewInputs) []ivalue.IValue { return []ivalue.IValue{iv(v.y)} }, []*graph.Type{tT}, true},
		{"numpy_T", "aten::numpy_T", func(v viewInputs) []ivalue.IValue { return []ivalue.IValue{iv(v.x)} }, []*graph.Type{tT}, true},
		{"squeeze", "aten::squeeze", func(v viewInputs) []ivalue.IValue { return []ivalue.IValue{iv(v.y5)} }, []*graph.Type{tT}, true},
		{"squeeze_dim_noop", "aten::squeeze", func(v viewInputs) []ivalue.IValue { return []ivalue.IValue{iv(v.x), ivI(0)} }, []*graph.Type{tT, tI}, true},
		{"unsqueeze", "aten::unsqueeze", func(v viewInputs) []ivalue.IValue { return []ivalue.IValue{iv(v.xs), ivI(1)} }, []*graph.Type{tT, tI}, true},
		{"unsqueeze_end", "aten::unsqueeze", func(v viewInputs) []ivalue.IValue { return []ivalue.IValue{iv(v.xs), ivI(-1)} }, []*graph.Type{tT, tI}, true},
		{"select", "aten::select", func(v viewInputs) []ivalue.IValue { return []ivalue.IValue{iv(v.x), ivI(1), ivI(-1)} }, []*graph.Type{tT, tI, tI}, true},
		{"select_s", "aten::select", func(v viewInputs) []ivalue.IValue { return []ivalue.IValue{iv(v.xs), ivI(2), ivI(1)} }, []*graph.Type{tT, tI, tI}, true},
		{"slice", "aten::slice", func(v viewInputs) []ivalue.IValue {
			return []ivalue.IValue{iv(v.x), ivI(2), ivI(1), ivI(4), ivI(2)}
		}, []*graph.Type{tT, tI, tI, tI, tI}, true},
		{"slice_none", "aten::slice", func(v viewInputs) []ivalue.IValue {
			return []ivalue.IValue{iv(v.x), ivI(1), ivI(-2), ivalue.None(), ivI(1)}
		}, []*graph.Type{tT, tI, tI, tN, tI}, true},
		{"slice_big", "aten::slice", func(v viewInputs) []ivalue.IValue {
			return []ivalue.IValue{iv(v.x), ivI(1), ivI(1), ivI(100), ivI(1)}
		}, []*graph.Type{tT, tI, tI, tI, tI}, true},
		{"narrow", "aten::narrow", func(v viewInputs) []ivalue.IValue { return []ivalue.IValue{iv(v.x), ivI(2), ivI(1), ivI(2)} }, []*graph.Type{tT, tI, tI, tI}, true},
		{"narrow_neg", "aten::narrow", func(v viewInputs) []ivalue.IValue { return []ivalue.IValue{iv(v.xs), ivI(0), ivI(-1), ivI(1)} }, []*graph.Type{tT, tI, tI, tI}, true},
		{"expand", "aten::expand", func(v viewInputs) []ivalue.IValue {
			col := viewMust(ivalue.FromStorage(ivalue.Float32, v.y.Storage(), 0, []int{2, 1}, []int{3, 1}))
			return []ivalue.IValue{iv(col), ivInts(4, 2, 3), ivB(false)}
		}, []*graph.Type{tT, shapeTIL, tB}, true},
		{"expand_keep", "aten::expand", func(v viewInputs) []ivalue.IValue {
			u := viewMust(ivalue.FromStorage(ivalue.Float32, v.y.Storage(), 0, []int{2, 1, 3}, []int{3, 3, 1}))
			return []ivalue.IValue{iv(u), ivInts(-1, 3, -1), ivB(false)}
		}, []*graph.Type{tT, shapeTIL, tB}, true},
		{"alias", "aten::alias", func(v viewInputs) []ivalue.IValue { return []ivalue.IValue{iv(v.xs)} }, []*graph.Type{tT}, true},
		// copy variants: the same results, always fresh storage
		{"reshape_copy_path", "static_runtime::reshape_copy", func(v viewInputs) []ivalue.IValue { return []ivalue.IValue{iv(v.xt), ivInts(-1)} }, []*graph.Type{tT, shapeTIL}, false},
		{"view", "static_runtime::reshape_copy", func(v viewInputs) []ivalue.IValue { return []ivalue.IValue{iv(v.x), ivInts(4, -1)} }, []*graph.Type{tT, shapeTIL}, false},
		{"flatten_t", "static_runtime::flatten_copy", func(v viewInputs) []ivalue.IValue { return []ivalue.IValue{iv(v.xt), ivI(0), ivI(1)} }, []*graph.Type{tT, tI, tI}, false},
		{"permute_neg", "static_runtime::permute_copy", func(v viewInputs) []ivalue.IValue { return []ivalue.IValue{iv(v.xs), ivInts(-1, 0, 1)} }, []*graph.Type{tT, shapeTIL}, false},
		{"narrow", "aten::narrow_copy", func(v viewInputs) []ivalue.IValue { return []ivalue.IValue{iv(v.x), ivI(2), ivI(1), ivI(2)} }, []*graph.Type{tT, tI, tI, tI}, false},
	}
}

func TestViewOps(t *testing.T) {
	for _, c := range viewCases() {
		t.Run(c.kind+"/"+c.name, func(t *testing.T) {
			want, ok := viewExpected[c.name]
			require.True(t, ok, "no expected value for %s", c.name)
			in := c.inputs(viewMakeInputs())
			outs, kind, err := runNode(t, c.kind, in, c.types, []*graph.Type{graph.Tensor})
			require.NoError(t, err)
			out := outs[0].Tensor()
			require.NotNil(t, out)
			assert.Equal(t, want.sizes, out.Sizes())
			assert.Equal(t, want.vals, out.Float64s())
			assert.Equal(t, c.view, out.SharesStorage(in[0].Tensor()), "shares input storage")
			if c.view {
				assert.Equal(t, ops.Native, kind)
			} else if c.kind != "aten::reshape" && c.kind != "aten::flatten" {
				assert.Equal(t, ops.OutVariant, kind)
				assert.True(t, out.IsContiguous())
			}
			// same result with every argument a runtime value
			outs2, _, err := runNodeDyn(t, c.kind, c.inputs(viewMakeInputs()), c.types, []*graph.Type{graph.Tensor})
			require.NoError(t, err)
			assert.Equal(t, want.vals, outs2[0].Tensor().Float64s())
		})
	}
}

func TestViewListOps(t *testing.T) {
	tT, tI := graph.Tensor, graph.Int
	cases := []struct {
		name, kind string
		inputs     []ivalue.IValue
		types      []*graph.Type
	}{
		{"split2", "aten::split", []ivalue.IValue{ivI(2), ivI(0)}, []*graph.Type{tI, tI}},
		{"split_sizes", "aten::split", []ivalue.IValue{ivInts(1, 4), ivI(0)}, []*graph.Type{shapeTIL, tI}},
		{"split_sizes", "aten::split_with_sizes", []ivalue.IValue{ivInts(1, 4), ivI(0)}, []*graph.Type{shapeTIL, tI}},
		{"chunk3", "aten::chunk", []ivalue.IValue{ivI(3), ivI(0)}, []*graph.Type{tI, tI}},
		{"chunk_dim1", "aten::chunk", []ivalue.IValue{ivI(2), ivI(1)}, []*graph.Type{tI, tI}},
		{"unbind", "aten::unbind", []ivalue.IValue{ivI(1)}, []*graph.Type{tI}},
	}
	for _, c := range cases {
		t.Run(c.kind+"/"+c.name, func(t *testing.T) {
			z := viewMakeInputs().z
			in := append([]ivalue.IValue{iv(z)}, c.inputs...)
			types := append([]*graph.Type{tT}, c.types...)
			p, err := buildNode(t, c.kind, in, types, []*graph.Type{shapeTTL}, nil)
			require.NoError(t, err)
			for run := 0; run < 2; run++ { // the second run reuses list and tensors
				require.NoError(t, p.Run())
				l := p.Output(0).List()
				require.NotNil(t, l)
				want := viewListExpected[c.name]
				require.Len(t, l.Items, len(want))
				for i, w := range want {
					o := l.Items[i].Tensor()
					assert.Equal(t, w.sizes, o.Sizes(), "part %d", i)
					assert.Equal(t, w.vals, o.Float64s(), "part %d", i)
					assert.True(t, o.SharesStorage(z))
				}
			}
			assert.Zero(t, testing.AllocsPerRun(20, func() { _ = p.Run() }))
		})
	}
}

func TestViewErrors(t *testing.T) {
	tT, tI := graph.Tensor, graph.Int
	v := viewMakeInputs()
	cases := []struct {
		name, kind string
		inputs     []ivalue.IValue
		types      []*graph.Type
		msg        string
	}{
		{"view strides", "aten::view", []ivalue.IValue{iv(v.xt), ivInts(-1)}, []*graph.Type{tT, shapeTIL}, "reshape"},
		{"view numel", "aten::view", []ivalue.IValue{iv(v.x), ivInts(5, -1)}, []*graph.Type{tT, shapeTIL}, "invalid for input of size 24"},
		{"view two -1", "aten::view", []ivalue.IValue{iv(v.x), ivInts(-1, -1)}, []*graph.Type{tT, shapeTIL}, "only one dimension"},
		{"permute count", "aten::permute", []ivalue.IValue{iv(v.x), ivInts(0, 1)}, []*graph.Type{tT, shapeTIL}, "number of dims"},
		{"permute repeat", "aten::permute", []ivalue.IValue{iv(v.x), ivInts(0, 1, 1)}, []*graph.Type{tT, shapeTIL}, "repeated"},
		{"transpose range", "aten::transpose", []ivalue.IValue{iv(v.x), ivI(0), ivI(3)}, []*graph.Type{tT, tI, tI}, "out of range"},
		{"t 3d", "aten::t", []ivalue.IValue{iv(v.x)}, []*graph.Type{tT}, "<= 2 dimensions"},
		{"select range", "aten::select", []ivalue.IValue{iv(v.x), ivI(0), ivI(2)}, []*graph.Type{tT, tI, tI}, "out of range"},
		{"select 0d", "aten::select", []ivalue.IValue{iv(ivalue.ScalarTensor(1)), ivI(0), ivI(0)}, []*graph.Type{tT, tI, tI}, "0-dim"},
		{"slice step", "aten::slice", []ivalue.IValue{iv(v.x), ivI(0), ivI(0), ivI(1), ivI(0)}, []*graph.Type{tT, tI, tI, tI, tI}, "step must be positive"},
		{"narrow length", "aten::narrow", []ivalue.IValue{iv(v.x), ivI(2), ivI(3), ivI(2)}, []*graph.Type{tT, tI, tI, tI}, "exceeds"},
		{"expand mismatch", "aten::expand", []ivalue.IValue{iv(v.x), ivInts(2, 5, 4), ivB(false)}, []*graph.Type{tT, shapeTIL, graph.Bool}, "must match"},
		{"expand fewer", "aten::expand", []ivalue.IValue{iv(v.x), ivInts(3, 4), ivB(false)}, []*graph.Type{tT, shapeTIL, graph.Bool}, "greater or equal"},
		{"flatten order", "aten::flatten", []ivalue.IValue{iv(v.x), ivI(2), ivI(1)}, []*graph.Type{tT, tI, tI}, "cannot come after"},
		{"split sum", "aten::split", []ivalue.IValue{iv(v.z), ivInts(1, 2), ivI(0)}, []*graph.Type{tT, shapeTIL, tI}, "sum exactly"},
		{"chunk zero", "aten::chunk", []ivalue.IValue{iv(v.z), ivI(0), ivI(0)}, []*graph.Type{tT, tI, tI}, "greater than 0"},
		{"reshape_copy numel", "static_runtime::reshape_copy", []ivalue.IValue{iv(v.x), ivInts(7)}, []*graph.Type{tT, shapeTIL}, "invalid"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			outTypes := []*graph.Type{tT}
			if c.kind == "aten::split" || c.kind == "aten::chunk" {
				outTypes = []*graph.Type{shapeTTL}
			}
			_, _, err := runNode(t, c.kind, c.inputs, c.types, outTypes)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.msg)
		})
	}
}

// A steady run of a view op rewrites its output tensor in place.
func TestViewNoAllocs(t *testing.T) {
	tT, tI := graph.Tensor, graph.Int
	v := viewMakeInputs()
	cases := []struct {
		kind   string
		inputs []ivalue.IValue
		types  []*graph.Type
	}{
		{"aten::view", []ivalue.IValue{iv(v.x), ivInts(4, -1)}, []*graph.Type{tT, shapeTIL}},
		{"aten::reshape", []ivalue.IValue{iv(v.xt), ivInts(-1)}, []*graph.Type{tT, shapeTIL}}, // copy path
		{"aten::permute", []ivalue.IValue{iv(v.x), ivInts(2, 0, 1)}, []*graph.Type{tT, shapeTIL}},
		{"aten::select", []ivalue.IValue{iv(v.x), ivI(1), ivI(-1)}, []*graph.Type{tT, tI, tI}},
		{"aten::unsqueeze", []ivalue.IValue{iv(v.x), ivI(1)}, []*graph.Type{tT, tI}},
		{"aten::expand", []ivalue.IValue{iv(v.x), ivInts(3, 2, 3, 4), ivB(false)}, []*graph.Type{tT, shapeTIL, graph.Bool}},
		{"static_runtime::permute_copy", []ivalue.IValue{iv(v.x), ivInts(2, 0, 1)}, []*graph.Type{tT, shapeTIL}},
	}
	for _, c := range cases {
		t.Run(c.kind, func(t *testing.T) {
			for _, dyn := range []bool{false, true} {
				var constant []bool
				if dyn {
					constant = make([]bool, len(c.inputs))
				}
				p, err := buildNode(t, c.kind, c.inputs, c.types, []*graph.Type{tT}, constant)
				require.NoError(t, err)
				require.NoError(t, p.Run())
				first := p.Output(0).Tensor()
				assert.Zero(t, testing.AllocsPerRun(50, func() { _ = p.Run() }))
				assert.Same(t, first, p.Output(0).Tensor(), "output tensor reused")
			}
		})
	}
}

// reshape switches between view and copy as the input's strides change;
// a copy must never write into the storage an earlier view pointed at.
func TestViewReshapeViewThenCopy(t *testing.T) {
	v := viewMakeInputs()
	p, err := buildNode(t, "aten::reshape", []ivalue.IValue{iv(v.x), ivInts(-1)}, []*graph.Type{graph.Tensor, shapeTIL}, []*graph.Type{graph.Tensor}, nil)
	require.NoError(t, err)
	require.NoError(t, p.Run())
	assert.True(t, p.Output(0).Tensor().SharesStorage(v.x))
	before := v.x.Float64s()
	p.Values[p.In[0]] = iv(v.xt)
	require.NoError(t, p.Run())
	out := p.Output(0).Tensor()
	assert.False(t, out.SharesStorage(v.x))
	assert.Equal(t, viewExpected["reshape_copy_path"].vals, out.Float64s())
	assert.Equal(t, before, v.x.Float64s(), "input untouched")
}

func TestViewAllDTypes(t *testing.T) {
	// a transposed view copied by reshape_copy goes through the typed
	// strided loop of each element size
	for _, dt := range []ivalue.DType{ivalue.Float64, ivalue.Int64, ivalue.Int32, ivalue.Float16, ivalue.BFloat16, ivalue.Int16, ivalue.Int8, ivalue.Uint8, ivalue.Bool} {
		t.Run(dt.String(), func(t *testing.T) {
			vals := []float64{0, 1, 2, 3, 4, 5}
			if dt == ivalue.Bool {
				vals = []float64{0, 1, 0, 1, 1, 0}
			}
			src := viewTensorOf(dt, vals, 2, 3)
			tr := viewMust(ivalue.FromStorage(dt, src.Storage(), 0, []int{3, 2}, []int{1, 3}))
			outs, _, err := runNode(t, "static_runtime::reshape_copy", []ivalue.IValue{iv(tr), ivInts(6)}, []*graph.Type{graph.Tensor, shapeTIL}, []*graph.Type{graph.Tensor})
			require.NoError(t, err)
			out := outs[0].Tensor()
			assert.Equal(t, dt, out.DType())
			want := []float64{vals[0], vals[3], vals[1], vals[4], vals[2], vals[5]}
			assert.Equal(t, want, out.Float64s())
		})
	}
}

// viewTensorOf makes a contiguous tensor of dtype dt holding vals.
func viewTensorOf(dt ivalue.DType, vals []float64, sizes ...int) *ivalue.Tensor {
	t := ivalue.NewTensor(dt, sizes...)
	for i, v := range vals {
		fixture.SetElem(t, i, v)
	}
	return t
}

var viewExpected = map[string]struct {
	sizes []int
	vals  []float64
}{
	"view":              {[]int{4, 6}, []float64{0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0}},
	"view_1d":           {[]int{24}, []float64{0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0}},
	"reshape_view":      {[]int{6, 4}, []float64{0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0}},
	"reshape_copy_path": {[]int{24}, []float64{0.0, 12.0, 4.0, 16.0, 8.0, 20.0, 1.0, 13.0, 5.0, 17.0, 9.0, 21.0, 2.0, 14.0, 6.0, 18.0, 10.0, 22.0, 3.0, 15.0, 7.0, 19.0, 11.0, 23.0}},
	"reshape_t_view":    {[]int{4, 3, 2, 1}, []float64{0.0, 12.0, 4.0, 16.0, 8.0, 20.0, 1.0, 13.0, 5.0, 17.0, 9.0, 21.0, 2.0, 14.0, 6.0, 18.0, 10.0, 22.0, 3.0, 15.0, 7.0, 19.0, 11.0, 23.0}},
	"flatten":           {[]int{2, 12}, []float64{0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0}},
	"flatten_t":         {[]int{12, 2}, []float64{0.0, 12.0, 4.0, 16.0, 8.0, 20.0, 1.0, 13.0, 5.0, 17.0, 9.0, 21.0, 2.0, 14.0, 6.0, 18.0, 10.0, 22.0, 3.0, 15.0, 7.0, 19.0, 11.0, 23.0}},
	"flatten_all":       {[]int{24}, []float64{0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0}},
	"permute":           {[]int{4, 2, 3}, []float64{0.0, 4.0, 8.0, 12.0, 16.0, 20.0, 1.0, 5.0, 9.0, 13.0, 17.0, 21.0, 2.0, 6.0, 10.0, 14.0, 18.0, 22.0, 3.0, 7.0, 11.0, 15.0, 19.0, 23.0}},
	"permute_neg":       {[]int{2, 2, 2}, []float64{4.0, 8.0, 16.0, 20.0, 6.0, 10.0, 18.0, 22.0}},
	"transpose":         {[]int{2, 4, 3}, []float64{0.0, 4.0, 8.0, 1.0, 5.0, 9.0, 2.0, 6.0, 10.0, 3.0, 7.0, 11.0, 12.0, 16.0, 20.0, 13.0, 17.0, 21.0, 14.0, 18.0, 22.0, 15.0, 19.0, 23.0}},
	"t":                 {[]int{3, 2}, []float64{0.0, 3.0, 1.0, 4.0, 2.0, 5.0}},
	"numpy_T":           {[]int{4, 3, 2}, []float64{0.0, 12.0, 4.0, 16.0, 8.0, 20.0, 1.0, 13.0, 5.0, 17.0, 9.0, 21.0, 2.0, 14.0, 6.0, 18.0, 10.0, 22.0, 3.0, 15.0, 7.0, 19.0, 11.0, 23.0}},
	"squeeze":           {[]int{2, 3, 4}, []float64{0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0}},
	"squeeze_dim":       {[]int{2, 12}, []float64{0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0}},
	"squeeze_dim_noop":  {[]int{2, 3, 4}, []float64{0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0}},
	"unsqueeze":         {[]int{2, 1, 2, 2}, []float64{4.0, 6.0, 8.0, 10.0, 16.0, 18.0, 20.0, 22.0}},
	"unsqueeze_end":     {[]int{2, 2, 2, 1}, []float64{4.0, 6.0, 8.0, 10.0, 16.0, 18.0, 20.0, 22.0}},
	"select":            {[]int{2, 4}, []float64{8.0, 9.0, 10.0, 11.0, 20.0, 21.0, 22.0, 23.0}},
	"select_s":          {[]int{2, 2}, []float64{6.0, 10.0, 18.0, 22.0}},
	"slice":             {[]int{2, 3, 2}, []float64{1.0, 3.0, 5.0, 7.0, 9.0, 11.0, 13.0, 15.0, 17.0, 19.0, 21.0, 23.0}},
	"slice_none":        {[]int{2, 2, 4}, []float64{4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0}},
	"slice_big":         {[]int{2, 2, 4}, []float64{4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0}},
	"narrow":            {[]int{2, 3, 2}, []float64{1.0, 2.0, 5.0, 6.0, 9.0, 10.0, 13.0, 14.0, 17.0, 18.0, 21.0, 22.0}},
	"narrow_neg":        {[]int{1, 2, 2}, []float64{16.0, 18.0, 20.0, 22.0}},
	"expand":            {[]int{4, 2, 3}, []float64{0.0, 0.0, 0.0, 3.0, 3.0, 3.0, 0.0, 0.0, 0.0, 3.0, 3.0, 3.0, 0.0, 0.0, 0.0, 3.0, 3.0, 3.0, 0.0, 0.0, 0.0, 3.0, 3.0, 3.0}},
	"expand_keep":       {[]int{2, 3, 3}, []float64{0.0, 1.0, 2.0, 0.0, 1.0, 2.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 3.0, 4.0, 5.0, 3.0, 4.0, 5.0}},
	"alias":             {[]int{2, 2, 2}, []float64{4.0, 6.0, 8.0, 10.0, 16.0, 18.0, 20.0, 22.0}},
}
var viewListExpected = map[string][]struct {
	sizes []int
	vals  []float64
}{
	"split2":      {{[]int{2, 2}, []float64{0.0, 1.0, 2.0, 3.0}}, {[]int{2, 2}, []float64{4.0, 5.0, 6.0, 7.0}}, {[]int{1, 2}, []float64{8.0, 9.0}}},
	"split_sizes": {{[]int{1, 2}, []float64{0.0, 1.0}}, {[]int{4, 2}, []float64{2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0}}},
	"chunk3":      {{[]int{2, 2}, []float64{0.0, 1.0, 2.0, 3.0}}, {[]int{2, 2}, []float64{4.0, 5.0, 6.0, 7.0}}, {[]int{1, 2}, []float64{8.0, 9.0}}},
	"chunk_dim1":  {{[]int{5, 1}, []float64{0.0, 2.0, 4.0, 6.0, 8.0}}, {[]int{5, 1}, []float64{1.0, 3.0, 5.0, 7.0, 9.0}}},
	"unbind":      {{[]int{5}, []float64{0.0, 2.0, 4.0, 6.0, 8.0}}, {[]int{5}, []float64{1.0, 3.0, 5.0, 7.0, 9.0}}},
	"unbind0":     {{[]int{2}, []float64{0.0, 1.0}}, {[]int{2}, []float64{2.0, 3.0}}},
}

// Creation ops; expected dtypes and values as PyTorch 1.13 gives them
// (torch.full((2,), 1) is int64, arange(0, 1, 0.1) float32, ...).
func TestShapeCreation(t *testing.T) {
	tI, tN, tT := graph.Int, graph.None, graph.Tensor
	none := ivalue.None()
	dtI64 := ivI(ivalue.Int64.ScalarType())
	dtF64 := ivI(ivalue.Float64.ScalarType())
	dtI32 := ivI(ivalue.Int32.ScalarType())
	x := ivalue.I32Tensor([]int32{1, 2, 3, 4, 5, 6}, 2, 3)
	cases := []struct {
		name, kind string
		inputs     []ivalue.IValue
		types      []*graph.Type
		sizes      []int
		dtype      ivalue.DType
		vals       []float64
	}{
		{"zeros", "aten::zeros", []ivalue.IValue{ivInts(2, 3), none, none, none, none}, []*graph.Type{shapeTIL, tN, tN, tN, tN}, []int{2, 3}, ivalue.Float32, []float64{0, 0, 0, 0, 0, 0}},
		{"ones int64", "aten::ones", []ivalue.IValue{ivInts(3), dtI64, none, none, none}, []*graph.Type{shapeTIL, tI, tN, tN, tN}, []int{3}, ivalue.Int64, []float64{1, 1, 1}},
		{"empty", "aten::empty", []ivalue.IValue{ivInts(2, 0), none, none, none, none, none}, []*graph.Type{shapeTIL, tN, tN, tN, tN, tN}, []int{2, 0}, ivalue.Float32, []float64{}},
		{"full int", "aten::full", []ivalue.IValue{ivInts(2), ivI(1), none, none, none, none}, []*graph.Type{shapeTIL, tI, tN, tN, tN, tN}, []int{2}, ivalue.Int64, []float64{1, 1}},
		{"full float", "aten::full", []ivalue.IValue{ivInts(1, 2), ivF(2.5), none, none, none, none}, []*graph.Type{shapeTIL, graph.Float, tN, tN, tN, tN}, []int{1, 2}, ivalue.Float32, []float64{2.5, 2.5}},
		{"full bool", "aten::full", []ivalue.IValue{ivInts(2), ivB(true), none, none, none, none}, []*graph.Type{shapeTIL, graph.Bool, tN, tN, tN, tN}, []int{2}, ivalue.Bool, []float64{1, 1}},
		{"full dtype", "aten::full", []ivalue.IValue{ivInts(2), ivF(2.5), dtI64, none, none, none}, []*graph.Type{shapeTIL, graph.Float, tI, tN, tN, tN}, []int{2}, ivalue.Int64, []float64{2, 2}},
		{"zeros_like", "aten::zeros_like", []ivalue.IValue{iv(x), none, none, none, none, none}, []*graph.Type{tT, tN, tN, tN, tN, tN}, []int{2, 3}, ivalue.Int32, []float64{0, 0, 0, 0, 0, 0}},
		{"ones_like f64", "aten::ones_like", []ivalue.IValue{iv(x), dtF64, none, none, none, none}, []*graph.Type{tT, tI, tN, tN, tN, tN}, []int{2, 3}, ivalue.Float64, []float64{1, 1, 1, 1, 1, 1}},
		{"full_like", "aten::full_like", []ivalue.IValue{iv(x), ivI(7), none, none, none, none, none}, []*graph.Type{tT, tI, tN, tN, tN, tN, tN}, []int{2, 3}, ivalue.Int32, []float64{7, 7, 7, 7, 7, 7}},
		{"arange end", "aten::arange", []ivalue.IValue{ivI(5), none, none, none, none}, []*graph.Type{tI, tN, tN, tN, tN}, []int{5}, ivalue.Int64, []float64{0, 1, 2, 3, 4}},
		{"arange start float", "aten::arange", []ivalue.IValue{ivF(0.5), ivI(3), none, none, none, none}, []*graph.Type{graph.Float, tI, tN, tN, tN, tN}, []int{3}, ivalue.Float32, []float64{0.5, 1.5, 2.5}},
		{"arange step", "aten::arange", []ivalue.IValue{ivI(1), ivI(10), ivI(3), none, none, none, none}, []*graph.Type{tI, tI, tI, tN, tN, tN, tN}, []int{3}, ivalue.Int64, []float64{1, 4, 7}},
		{"arange down", "aten::arange", []ivalue.IValue{ivI(10), ivI(0), ivI(-3), none, none, none, none}, []*graph.Type{tI, tI, tI, tN, tN, tN, tN}, []int{4}, ivalue.Int64, []float64{10, 7, 4, 1}},
		{"arange float step", "aten::arange", []ivalue.IValue{ivF(-1.3), ivF(2.2), ivF(0.7), none, none, none, none}, []*graph.Type{graph.Float, graph.Float, graph.Float, tN, tN, tN, tN}, []int{5},
			ivalue.Float32, []float64{-1.2999999523162842, -0.6000000238418579, 0.10000000149011612, 0.800000011920929, 1.5}},
		{"arange tenth", "aten::arange", []ivalue.IValue{ivI(0), ivI(1), ivF(0.1), none, none, none, none}, []*graph.Type{tI, tI, graph.Float, tN, tN, tN, tN}, []int{10},
			ivalue.Float32, []float64{0.0, 0.10000000149011612, 0.20000000298023224, 0.30000001192092896, 0.4000000059604645, 0.5, 0.6000000238418579, 0.699999988079071, 0.800000011920929, 0.8999999761581421}},
		// integral dtype with float bounds: int64 truncates start, end and
		// step before sizing; other int dtypes size in double but still
		// step by the truncated values (PyTorch 1.13)
		{"arange i64 float end", "aten::arange", []ivalue.IValue{ivF(0.5), ivF(4.9), ivF(1), dtI64, none, none, none}, []*graph.Type{graph.Float, graph.Float, graph.Float, tI, tN, tN, tN}, []int{4}, ivalue.Int64, []float64{0, 1, 2, 3}},
		{"arange i64 float step", "aten::arange", []ivalue.IValue{ivF(0.5), ivI(5), ivF(1.5), dtI64, none, none, none}, []*graph.Type{graph.Float, tI, graph.Float, tI, tN, tN, tN}, []int{5}, ivalue.Int64, []float64{0, 1, 2, 3, 4}},
		{"arange i64 neg start", "aten::arange", []ivalue.IValue{ivF(-2.5), ivF(2.5), dtI64, none, none, none}, []*graph.Type{graph.Float, graph.Float, tI, tN, tN, tN}, []int{4}, ivalue.Int64, []float64{-2, -1, 0, 1}},
		{"arange i32 float step", "aten::arange", []ivalue.IValue{ivF(0.5), ivI(5), ivF(1.5), dtI32, none, none, none}, []*graph.Type{graph.Float, tI, graph.Float, tI, tN, tN, tN}, []int{3}, ivalue.Int32, []float64{0, 1, 2}},
		{"arange i32 float end", "aten::arange", []ivalue.IValue{ivI(0), ivF(5.5), dtI32, none, none, none}, []*graph.Type{tI, graph.Float, tI, tN, tN, tN}, []int{6}, ivalue.Int32, []float64{0, 1, 2, 3, 4, 5}},
		{"expand_dims_copy", "static_runtime::expand_dims_copy", []ivalue.IValue{iv(x), ivInts(0, 2)}, []*graph.Type{tT, shapeTIL}, []int{1, 2, 1, 3}, ivalue.Int32, []float64{1, 2, 3, 4, 5, 6}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := buildNode(t, c.kind, c.inputs, c.types, []*graph.Type{tT}, nil)
			require.NoError(t, err)
			assert.Equal(t, ops.OutVariant, p.Kind)
			require.NoError(t, p.Run())
			out := p.Output(0).Tensor()
			// dirty the output: the next run must refill it
			for i := range out.Storage().Data {
				out.Storage().Data[i] = 0xff
			}
			require.NoError(t, p.Run())
			out = p.Output(0).Tensor()
			assert.Equal(t, c.sizes, out.Sizes())
			assert.Equal(t, c.dtype, out.DType())
			if c.kind != "aten::empty" {
				assert.Equal(t, c.vals, out.Float64s())
			}
			assert.Zero(t, testing.AllocsPerRun(20, func() { _ = p.Run() }))
		})
	}
}

func BenchmarkViewOps(b *testing.B) {
	v := viewMakeInputs()
	for _, c := range []struct {
		kind   string
		inputs []ivalue.IValue
		types  []*graph.Type
	}{
		{"aten::view", []ivalue.IValue{iv(v.x), ivInts(4, -1)}, []*graph.Type{graph.Tensor, shapeTIL}},
		{"aten::permute", []ivalue.IValue{iv(v.x), ivInts(2, 0, 1)}, []*graph.Type{graph.Tensor, shapeTIL}},
		{"aten::select", []ivalue.IValue{iv(v.x), ivI(1), ivI(-1)}, []*graph.Type{graph.Tensor, graph.Int, graph.Int}},
		{"aten::transpose", []ivalue.IValue{iv(v.x), ivI(0), ivI(1)}, []*graph.Type{graph.Tensor, graph.Int, graph.Int}},
	} {
		b.Run(c.kind, func(b *testing.B) {
			p, err := buildNode(b, c.kind, c.inputs, c.types, []*graph.Type{graph.Tensor}, nil)
			require.NoError(b, err)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				_ = p.Run()
			}
		})
	}
}
