package reference

import (
	"fmt"
	"math"
	"slices"

	"github.com/gosr/gosr/ivalue"
)

// Flatten flattens outputs depth-first as scripts/make_testdata.py does: tensors as they
// are, tuples and lists recursively, int/float/bool as 0-d int64/float64/bool
// tensors. None and other kinds are skipped (the script never emits them).
func Flatten(vs []ivalue.IValue) []*ivalue.Tensor {
	var out []*ivalue.Tensor
	var walk func(v ivalue.IValue)
	walk = func(v ivalue.IValue) {
		switch v.Kind() {
		case ivalue.KindTensor:
			out = append(out, v.Tensor())
		case ivalue.KindList, ivalue.KindTuple:
			for _, it := range v.List().Items {
				walk(it)
			}
		case ivalue.KindDict: // values in insertion order (segmentation models' {"out": ...})
			if d := v.Dict(); d != nil {
				for _, it := range d.Values {
					walk(it)
				}
			}
		case ivalue.KindInt:
			out = append(out, ivalue.I64Tensor([]int64{v.Int()}, []int{}...))
		case ivalue.KindDouble:
			out = append(out, ivalue.F64Tensor([]float64{v.Double()}, []int{}...))
		case ivalue.KindBool:
			out = append(out, ivalue.BoolTensor([]bool{v.Bool()}, []int{}...))
		}
	}
	for _, v := range vs {
		walk(v)
	}
	return out
}

// Compare checks dtype, shape and values: floats within atol + rtol*|want|
// (NaN equals NaN, infinities must match), everything else exactly. The
// error names the first bad index and the largest absolute difference.
func Compare(got, want *ivalue.Tensor, rtol, atol float64) error {
	if got == nil || want == nil {
		return fmt.Errorf("got %v, want %v", got, want)
	}
	if got.DType() != want.DType() {
		return fmt.Errorf("dtype: got %s, want %s", got.DType(), want.DType())
	}
	if !slices.Equal(got.Sizes(), want.Sizes()) {
		return fmt.Errorf("shape: got %v, want %v", got.Sizes(), want.Sizes())
	}
	g, w := got.Float64s(), want.Float64s()
	exact := !want.DType().IsFloat()
	if exact && (want.DType() == ivalue.Int64) {
		// float64 cannot hold every int64: compare the integers themselves.
		gi, wi := int64s(got), int64s(want)
		bad, m := -1, 0.0
		for i := range wi {
			if gi[i] != wi[i] {
				if bad < 0 {
					bad = i
				}
				m = max(m, math.Abs(float64(gi[i]-wi[i])))
			}
		}
		if bad >= 0 {
			return fmt.Errorf("index %v: got %d, want %d (max abs diff %g)", unravel(bad, want.Sizes()), gi[bad], wi[bad], m)
		}
		return nil
	}
	for i := range w {
		if !within(g[i], w[i], rtol, atol, exact) {
			return fmt.Errorf("index %v: got %g, want %g (max abs diff %g, rtol %g, atol %g)", unravel(i, want.Sizes()), g[i], w[i], maxDiff(g, w), rtol, atol)
		}
	}
	return nil
}

func int64s(t *ivalue.Tensor) []int64 {
	out := make([]int64, 0, t.Numel())
	data := t.I64()
	t.ForEachIndex(func(i int) { out = append(out, data[i]) })
	return out
}

// within says whether g is w within atol + rtol*|w| (exactly, for exact).
func within(g, w, rtol, atol float64, exact bool) bool {
	if exact || g == w {
		return g == w
	}
	if math.IsNaN(w) || math.IsNaN(g) {
		return math.IsNaN(w) && math.IsNaN(g)
	}
	if math.IsInf(w, 0) || math.IsInf(g, 0) {
		return false
	}
	return math.Abs(g-w) <= atol+rtol*math.Abs(w)
}

func maxDiff(g, w []float64) float64 {
	m := 0.0
	for i := range w {
		if math.IsNaN(g[i]) && math.IsNaN(w[i]) || g[i] == w[i] {
			continue
		}
		d := math.Abs(g[i] - w[i])
		if math.IsNaN(d) {
			return math.Inf(1)
		}
		m = max(m, d)
	}
	return m
}

// MaxAbsDiff is the largest element difference over pairs of tensors of
// equal shape; a pair that differs in numel counts as +Inf.
func MaxAbsDiff(got, want []*ivalue.Tensor) float64 {
	if len(got) != len(want) {
		return math.Inf(1)
	}
	m := 0.0
	for i := range want {
		if got[i] == nil || want[i] == nil || got[i].Numel() != want[i].Numel() {
			return math.Inf(1)
		}
		m = max(m, maxDiff(got[i].Float64s(), want[i].Float64s()))
	}
	return m
}

func unravel(i int, sizes []int) []int {
	idx := make([]int, len(sizes))
	for d := len(sizes) - 1; d >= 0; d-- {
		if sizes[d] > 0 {
			idx[d] = i % sizes[d]
			i /= sizes[d]
		}
	}
	return idx
}
