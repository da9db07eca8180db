package ops_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/internal/raceflag"
	"github.com/gosr/gosr/ivalue"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Cases made by scripts/make_dense_testdata.py with PyTorch 1.13.

type denseTensor struct {
	DType string    `json:"dtype"`
	Shape []int     `json:"shape"`
	Data  []float64 `json:"data"`
	Perm  []int     `json:"perm"`
}

type denseInput struct {
	T     *denseTensor `json:"t"`
	Int   *int64       `json:"int"`
	Ints  []int64      `json:"ints"`
	Float *float64     `json:"float"`
	Bool  *bool        `json:"bool"`
	Str   *string      `json:"str"`
	None  bool         `json:"none"`
}

type denseCase struct {
	Name    string        `json:"name"`
	Op      string        `json:"op"`
	Inputs  []denseInput  `json:"inputs"`
	Outputs []denseTensor `json:"outputs"`
}

func denseLoad(t *testing.T, family string) []denseCase {
	b, err := os.ReadFile(filepath.Join("testdata", "dense", family+".json"))
	require.NoError(t, err)
	var cs []denseCase
	require.NoError(t, json.Unmarshal(b, &cs))
	require.NotEmpty(t, cs)
	return cs
}

// denseMakeTensor builds the tensor, as the permuted view of its
// contiguous base when Perm is set.
func denseMakeTensor(t *testing.T, d *denseTensor) *ivalue.Tensor {
	var base *ivalue.Tensor
	switch d.DType {
	case "float32":
		v := make([]float32, len(d.Data))
		for i, x := range d.Data {
			v[i] = float32(x)
		}
		base = ivalue.F32Tensor(v, d.Shape...)
	case "int64":
		v := make([]int64, len(d.Data))
		for i, x := range d.Data {
			v[i] = int64(x)
		}
		base = ivalue.I64Tensor(v, d.Shape...)
	default:
		t.Fatalf("dtype %s", d.DType)
	}
	if len(d.Shape) == 0 {
		base = ivalue.NewTensor(base.DType())
		ivalue.CopyInto(base, denseScalar(d))
	}
	if d.Perm == nil {
		return base
	}
	sizes := make([]int, len(d.Perm))
	strides := make([]int, len(d.Perm))
	for i, p := range d.Perm {
		sizes[i] = base.Sizes()[p]
		strides[i] = base.Strides()[p]
	}
	v, err := ivalue.FromStorage(base.DType(), base.Storage(), 0, sizes, strides)
	require.NoError(t, err)
	return v
}

func denseScalar(d *denseTensor) *ivalue.Tensor {
	if d.DType == "int64" {
		return ivalue.I64Tensor([]int64{int64(d.Data[0])}, 1)
	}
	return ivalue.F32Tensor([]float32{float32(d.Data[0])}, 1)
}

func denseInputs(t *testing.T, c denseCase) ([]ivalue.IValue, []*graph.Type) {
	var vals []ivalue.IValue
	var types []*graph.Type
	for _, in := range c.Inputs {
		switch {
		case in.T != nil:
			vals, types = append(vals, iv(denseMakeTensor(t, in.T))), append(types, tT)
		case in.Int != nil:
			vals, types = append(vals, ivI(*in.Int)), append(types, tI)
		case in.Ints != nil:
			vals, types = append(vals, ivInts(in.Ints...)), append(types, graph.ListOf(graph.Int))
		case in.Float != nil:
			vals, types = append(vals, ivF(*in.Float)), append(types, tF)
		case in.Bool != nil:
			vals, types = append(vals, ivB(*in.Bool)), append(types, tB)
		case in.Str != nil:
			vals, types = append(vals, ivS(*in.Str)), append(types, tS)
		case in.None:
			vals, types = append(vals, ivalue.None()), append(types, tN)
		default: // an empty int list encodes as "ints": []
			vals, types = append(vals, ivInts()), append(types, graph.ListOf(graph.Int))
		}
	}
	return vals, types
}

// denseRunFamily runs every case of a family (optionally only ops in
// ops) and compares with PyTorch; it also checks that a second run of
// the same node allocates nothing.
func denseRunFamily(t *testing.T, family string, ops ...string) {
	denseRunFamilyConst(t, family, -1, ops...)
}

// denseRunFamilyConst is denseRunFamily with input constIn (if >= 0) a
// prim::Constant, as weights are in frozen graphs.
func denseRunFamilyConst(t *testing.T, family string, constIn int, ops ...string) {
	for _, c := range denseLoad(t, family) {
		if len(ops) > 0 && !denseContains(ops, c.Op) {
			continue
		}
		t.Run(c.Name, func(t *testing.T) {
			vals, types := denseInputs(t, c)
			outTypes := make([]*graph.Type, len(c.Outputs))
			for i := range outTypes {
				outTypes[i] = tT
			}
			kind := c.Op
			if i := len("aten::"); len(kind) > i {
				if dot := indexByte(kind[i:], '.'); dot >= 0 {
					kind = kind[:i+dot]
				}
			}
			var constant []bool
			if constIn >= 0 {
				constant = make([]bool, len(vals))
				for i, v := range vals {
					constant[i] = !v.IsTensor() || i == constIn
				}
			}
			p, err := buildNode(t, kind, vals, types, outTypes, constant)
			require.NoError(t, err)
			for run := 0; run < 2; run++ {
				require.NoError(t, p.Run())
				for i, want := range c.Outputs {
					got := p.Output(i).Tensor()
					require.NotNil(t, got, "output %d", i)
					denseCompare(t, &want, got, i)
				}
			}
			if !raceflag.Enabled { // sync.Pool drops items at random under -race
				allocs := testing.AllocsPerRun(5, func() { _ = p.Run() })
				assert.Zero(t, allocs, "steady-state allocations")
			}
		})
	}
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

func denseContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func denseCompare(t *testing.T, want *denseTensor, got *ivalue.Tensor, i int) {
	t.Helper()
	wantSizes := want.Shape
	if wantSizes == nil {
		wantSizes = []int{}
	}
	require.Equal(t, wantSizes, append([]int{}, got.Sizes()...), "output %d sizes", i)
	require.Equal(t, want.DType, got.DType().String(), "output %d dtype", i)
	vals := got.Float64s()
	for k, w := range want.Data {
		g := vals[k]
		if math.IsNaN(w) {
			require.True(t, math.IsNaN(g), "output %d element %d: want NaN, got %v", i, k, g)
			continue
		}
		tol := 2e-5 + 2e-5*math.Abs(w)
		if want.DType != "float32" {
			tol = 0
		}
		require.InDelta(t, w, g, tol, "output %d element %d", i, k)
	}
}

func TestLinearMatmulAgainstTorch(t *testing.T) {
	denseRunFamily(t, "linear")
}

func TestLinearConstantWeight(t *testing.T) {
	// Constant weights are packed at preparation.
	denseRunFamilyConst(t, "linear", 1, "aten::linear")
}

func TestLinearAddmmConstantMat2(t *testing.T) {
	// A constant mat2 is packed at preparation too.
	denseRunFamilyConst(t, "linear", 2, "aten::addmm")
}

func TestLinearErrors(t *testing.T) {
	w := ivalue.F32Tensor(make([]float32, 15), 5, 3)
	cases := []struct {
		name   string
		kind   string
		inputs []ivalue.IValue
		types  []*graph.Type
	}{
		{"linear k mismatch", "aten::linear", []ivalue.IValue{iv(ivalue.F32Tensor(make([]float32, 8), 2, 4)), iv(w), ivalue.None()}, []*graph.Type{tT, tT, tN}},
		{"linear int input", "aten::linear", []ivalue.IValue{iv(ivalue.I64Tensor(make([]int64, 6), 2, 3)), iv(w), ivalue.None()}, []*graph.Type{tT, tT, tN}},
		{"linear 1d weight", "aten::linear", []ivalue.IValue{iv(ivalue.F32Tensor(make([]float32, 3), 3)), iv(ivalue.F32Tensor(make([]float32, 3), 3)), ivalue.None()}, []*graph.Type{tT, tT, tN}},
		{"linear bad bias", "aten::linear", []ivalue.IValue{iv(ivalue.F32Tensor(make([]float32, 3), 1, 3)), iv(w), iv(ivalue.F32Tensor(make([]float32, 4), 4))}, []*graph.Type{tT, tT, tT}},
		{"mm 3d", "aten::mm", []ivalue.IValue{iv(ivalue.F32Tensor(make([]float32, 8), 2, 2, 2)), iv(w)}, []*graph.Type{tT, tT}},
		{"bmm batch", "aten::bmm", []ivalue.IValue{iv(ivalue.F32Tensor(make([]float32, 8), 2, 2, 2)), iv(ivalue.F32Tensor(make([]float32, 12), 3, 2, 2))}, []*graph.Type{tT, tT}},
		{"matmul 0d", "aten::matmul", []ivalue.IValue{iv(ivalue.ScalarTensor(1)), iv(w)}, []*graph.Type{tT, tT}},
		{"matmul batch broadcast", "aten::matmul", []ivalue.IValue{iv(ivalue.F32Tensor(make([]float32, 8), 2, 2, 2)), iv(ivalue.F32Tensor(make([]float32, 12), 3, 2, 2))}, []*graph.Type{tT, tT}},
		{"addmm self", "aten::addmm", []ivalue.IValue{iv(ivalue.F32Tensor(make([]float32, 4), 4)), iv(ivalue.F32Tensor(make([]float32, 10), 2, 5)), iv(w.Contiguous()), ivI(1), ivI(1)}, []*graph.Type{tT, tT, tT, tI, tI}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := runNode(t, c.kind, c.inputs, c.types, []*graph.Type{tT})
			require.Error(t, err)
		})
	}
}

func TestLinearMatmulEmpty(t *testing.T) {
	f := func(sizes ...int) ivalue.IValue {
		n := 1
		for _, s := range sizes {
			n *= s
		}
		d := make([]float32, n)
		for i := range d {
			d[i] = 1
		}
		return iv(ivalue.F32Tensor(d, sizes...))
	}
	cases := []struct {
		name   string
		kind   string
		inputs []ivalue.IValue
		types  []*graph.Type
		sizes  []int
		want   []float64
	}{
		{"linear no rows", "aten::linear", []ivalue.IValue{f(0, 3), f(2, 3), f(2)}, []*graph.Type{tT, tT, tT}, []int{0, 2}, nil},
		{"linear k=0 is bias", "aten::linear", []ivalue.IValue{f(2, 0), f(2, 0), f(2)}, []*graph.Type{tT, tT, tT}, []int{2, 2}, []float64{1, 1, 1, 1}},
		{"mm k=0 is zeros", "aten::mm", []ivalue.IValue{f(2, 0), f(0, 3)}, []*graph.Type{tT, tT}, []int{2, 3}, []float64{0, 0, 0, 0, 0, 0}},
		{"matmul empty batch", "aten::matmul", []ivalue.IValue{f(0, 2, 3), f(3, 4)}, []*graph.Type{tT, tT}, []int{0, 2, 4}, nil},
		{"bmm empty batch", "aten::bmm", []ivalue.IValue{f(0, 2, 3), f(0, 3, 4)}, []*graph.Type{tT, tT}, []int{0, 2, 4}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			outs, _, err := runNode(t, c.kind, c.inputs, c.types, []*graph.Type{tT})
			require.NoError(t, err)
			got := outs[0].Tensor()
			require.Equal(t, c.sizes, append([]int{}, got.Sizes()...))
			if c.want != nil {
				require.Equal(t, c.want, got.Float64s())
			}
		})
	}
}
