package ops_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// Edge cases of the scalar ops; expected values from TorchScript 1.13
// (torch.jit.CompilationUnit run with /usr/bin/python3).
func TestScalarEdgeCases(t *testing.T) {
	nan := math.NaN()
	fl := graph.ListOf(tF)
	cases := []struct {
		name    string
		kind    string
		in      []ivalue.IValue
		types   []*graph.Type
		out     *graph.Type
		want    ivalue.IValue
		wantErr string
	}{
		// str(float): integral doubles print as "<int>." up to int64 range.
		{"str 1e10", "aten::str", []ivalue.IValue{ivF(1e10)}, []*graph.Type{tF}, tS, ivS("10000000000."), ""},
		{"str -1e10", "aten::str", []ivalue.IValue{ivF(-1e10)}, []*graph.Type{tF}, tS, ivS("-10000000000."), ""},
		{"str 1e18", "aten::str", []ivalue.IValue{ivF(1e18)}, []*graph.Type{tF}, tS, ivS("1000000000000000000."), ""},
		{"str -2^63", "aten::str", []ivalue.IValue{ivF(-9.223372036854775808e18)}, []*graph.Type{tF}, tS, ivS("-9223372036854775808."), ""},
		{"str 2^63", "aten::str", []ivalue.IValue{ivF(9.223372036854775808e18)}, []*graph.Type{tF}, tS, ivS("9.2233720368547758e+18"), ""},
		{"str -0.0", "aten::str", []ivalue.IValue{ivF(math.Copysign(0, -1))}, []*graph.Type{tF}, tS, ivS("0."), ""},
		{"str 1/3", "aten::str", []ivalue.IValue{ivF(1.0 / 3)}, []*graph.Type{tF}, tS, ivS("0.33333333333333331"), ""},
		{"format 1e10", "aten::format", []ivalue.IValue{ivS("{}"), ivF(1e10)}, []*graph.Type{tS, tF}, tS, ivS("10000000000."), ""},
		// strings inside containers print without quotes
		{"str list of str", "aten::str", []ivalue.IValue{ivalue.NewList(ivS("x"), ivS("y"))}, []*graph.Type{graph.ListOf(tS)}, tS, ivS("[x, y]"), ""},
		{"str tuple str int", "aten::str", []ivalue.IValue{ivalue.NewTuple(ivS("x"), ivI(1))}, []*graph.Type{graph.TupleOf(tS, tI)}, tS, ivS("(x, 1)"), ""},
		{"format list of str", "aten::format", []ivalue.IValue{ivS("{}"), ivalue.NewList(ivS("x"))}, []*graph.Type{tS, graph.ListOf(tS)}, tS, ivS("[x]"), ""},
		// min/max of two floats are a < b ? a : b and a > b ? a : b
		{"min nan 1", "prim::min", []ivalue.IValue{ivF(nan), ivF(1)}, []*graph.Type{tF, tF}, tF, ivF(1), ""},
		{"min 1 nan", "prim::min", []ivalue.IValue{ivF(1), ivF(nan)}, []*graph.Type{tF, tF}, tF, ivF(nan), ""},
		{"max nan 1", "prim::max", []ivalue.IValue{ivF(nan), ivF(1)}, []*graph.Type{tF, tF}, tF, ivF(1), ""},
		{"max 1 nan", "prim::max", []ivalue.IValue{ivF(1), ivF(nan)}, []*graph.Type{tF, tF}, tF, ivF(nan), ""},
		// min/max of a list keep the running value unless elem < / > it
		{"min list nan first", "prim::min", []ivalue.IValue{ivalue.NewList(ivF(nan), ivF(1))}, []*graph.Type{fl}, tF, ivF(nan), ""},
		{"min list nan last", "prim::min", []ivalue.IValue{ivalue.NewList(ivF(1), ivF(nan))}, []*graph.Type{fl}, tF, ivF(1), ""},
		{"max list nan mid", "prim::max", []ivalue.IValue{ivalue.NewList(ivF(3), ivF(nan), ivF(2))}, []*graph.Type{fl}, tF, ivF(3), ""},
		// 0 to a negative power is an error, not inf
		{"pow 0.0 -1.0", "aten::pow", []ivalue.IValue{ivF(0), ivF(-1)}, []*graph.Type{tF, tF}, tF, ivalue.None(), "0.0 cannot be raised to a negative power"},
		{"pow.int 0 -1", "aten::pow", []ivalue.IValue{ivI(0), ivI(-1)}, []*graph.Type{tI, tI}, tF, ivalue.None(), "0.0 cannot be raised to a negative power"},
		{"pow 0 -1.0", "aten::pow", []ivalue.IValue{ivI(0), ivF(-1)}, []*graph.Type{tI, tF}, tF, ivalue.None(), "0.0 cannot be raised to a negative power"},
		{"pow.int 2 -1", "aten::pow", []ivalue.IValue{ivI(2), ivI(-1)}, []*graph.Type{tI, tI}, tF, ivF(0.5), ""},
		{"remainder.float negative", "aten::remainder", []ivalue.IValue{ivF(-7.5), ivF(2)}, []*graph.Type{tF, tF}, tF, ivF(0.5), ""},
		{"floordiv.float -0.0", "aten::floordiv", []ivalue.IValue{ivF(0), ivF(-2)}, []*graph.Type{tF, tF}, tF, ivF(math.Copysign(0, -1)), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			outs, _, err := runNodeDyn(t, c.kind, c.in, c.types, []*graph.Type{c.out})
			if c.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), c.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.want.Kind(), outs[0].Kind(), "got %v", outs[0])
			if c.want.Kind() == ivalue.KindDouble {
				w, g := c.want.Double(), outs[0].Double()
				if math.IsNaN(w) {
					assert.True(t, math.IsNaN(g), "want nan got %v", g)
					return
				}
				assert.Equal(t, math.Float64bits(w), math.Float64bits(g), "want %v got %v", w, g)
				return
			}
			assert.True(t, c.want.Equal(outs[0]), "want %v got %v", c.want, outs[0])
		})
	}
}
