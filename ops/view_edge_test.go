package ops_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// runNodeSafe is runNode that turns a kernel panic into an error, so a
// table of bad inputs reports every case.
func runNodeSafe(t *testing.T, kind string, in []ivalue.IValue, types, outTypes []*graph.Type) (outs []ivalue.IValue, err error) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
			t.Errorf("%s panicked: %v", kind, r)
		}
	}()
	outs, _, err = runNode(t, kind, in, types, outTypes)
	return outs, err
}

// Integer arguments near int64's limits must neither overflow into a
// wrong geometry nor panic. Expected values from PyTorch 1.13.
func TestViewHugeArgs(t *testing.T) {
	x := func() ivalue.IValue { return iv(ivalue.F32Tensor([]float32{0, 1, 2, 3, 4}, 5)) }
	tT, tI := graph.Tensor, graph.Int
	big := int64(math.MaxInt64)
	cases := []struct {
		name, kind string
		in         []ivalue.IValue
		types      []*graph.Type
		list       bool
		want       [][]float64 // parts (one for a tensor result)
		msg        string
	}{
		{"narrow huge length", "aten::narrow", []ivalue.IValue{x(), ivI(0), ivI(1), ivI(big)}, []*graph.Type{tT, tI, tI, tI}, false, nil, "exceeds"},
		{"split sizes overflow", "aten::split", []ivalue.IValue{x(), ivInts(big, big, 2), ivI(0)}, []*graph.Type{tT, shapeTIL, tI}, true, nil, "sum exactly"},
		{"slice step 2^62", "aten::slice", []ivalue.IValue{x(), ivI(0), ivI(0), ivI(5), ivI(1 << 62)}, []*graph.Type{tT, tI, tI, tI, tI}, false, [][]float64{{0}}, ""},
		{"slice step 2^62 start 1", "aten::slice", []ivalue.IValue{x(), ivI(0), ivI(1), ivI(5), ivI(1 << 62)}, []*graph.Type{tT, tI, tI, tI, tI}, false, [][]float64{{1}}, ""},
		{"slice step max-2", "aten::slice", []ivalue.IValue{x(), ivI(0), ivI(0), ivI(5), ivI(big - 2)}, []*graph.Type{tT, tI, tI, tI, tI}, false, [][]float64{{0}}, ""},
		{"chunk 2^62", "aten::chunk", []ivalue.IValue{x(), ivI(1 << 62), ivI(0)}, []*graph.Type{tT, tI, tI}, true, [][]float64{{0}, {1}, {2}, {3}, {4}}, ""},
		// PyTorch's own int64 arithmetic overflows here; the parts are
		// what any chunks >= 5 gives.
		{"chunk max", "aten::chunk", []ivalue.IValue{x(), ivI(big), ivI(0)}, []*graph.Type{tT, tI, tI}, true, [][]float64{{0}, {1}, {2}, {3}, {4}}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := tT
			if c.list {
				out = shapeTTL
			}
			outs, err := runNodeSafe(t, c.kind, c.in, c.types, []*graph.Type{out})
			if c.msg != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.msg)
				return
			}
			require.NoError(t, err)
			var got [][]float64
			if c.list {
				for _, it := range outs[0].List().Items {
					got = append(got, it.Tensor().Float64s())
				}
			} else {
				got = append(got, outs[0].Tensor().Float64s())
			}
			assert.Equal(t, c.want, got)
		})
	}
}
