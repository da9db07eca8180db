package ops_test

import (
	"testing"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/stretchr/testify/require"
)

func TestConvAgainstTorch(t *testing.T) {
	denseRunFamily(t, "conv")
}

func TestConvErrors(t *testing.T) {
	x := ivalue.F32Tensor(make([]float32, 2*4*5*5), 2, 4, 5, 5)
	w := ivalue.F32Tensor(make([]float32, 6*4*3*3), 6, 4, 3, 3)
	big := ivalue.F32Tensor(make([]float32, 6*4*7*7), 6, 4, 7, 7)
	ints := graph.ListOf(graph.Int)
	types := []*graph.Type{tT, tT, tN, ints, ints, ints, tI}
	cases := []struct {
		name   string
		inputs []ivalue.IValue
		types  []*graph.Type
	}{
		{"channels", []ivalue.IValue{iv(x), iv(w), ivalue.None(), ivInts(1, 1), ivInts(0, 0), ivInts(1, 1), ivI(2)}, types},
		{"kernel too big", []ivalue.IValue{iv(x), iv(big), ivalue.None(), ivInts(1, 1), ivInts(0, 0), ivInts(1, 1), ivI(1)}, types},
		{"zero stride", []ivalue.IValue{iv(x), iv(w), ivalue.None(), ivInts(0, 1), ivInts(0, 0), ivInts(1, 1), ivI(1)}, types},
		{"bad rank", []ivalue.IValue{iv(ivalue.F32Tensor(make([]float32, 4), 4)), iv(w), ivalue.None(), ivInts(1, 1), ivInts(0, 0), ivInts(1, 1), ivI(1)}, types},
		{"same strided", []ivalue.IValue{iv(x), iv(w), ivalue.None(), ivInts(2, 2), ivS("same"), ivInts(1, 1), ivI(1)}, []*graph.Type{tT, tT, tN, ints, tS, ints, tI}},
		{"bad padding string", []ivalue.IValue{iv(x), iv(w), ivalue.None(), ivInts(1, 1), ivS("full"), ivInts(1, 1), ivI(1)}, []*graph.Type{tT, tT, tN, ints, tS, ints, tI}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := runNode(t, "aten::conv2d", c.inputs, c.types, []*graph.Type{tT})
			require.Error(t, err)
		})
	}
}

// TestConvConstWeightAgainstTorch runs the same cases with the weight a
// prim::Constant, as in frozen graphs (then it is packed at preparation).
func TestConvConstWeightAgainstTorch(t *testing.T) {
	denseRunFamilyConst(t, "conv", 1)
}
