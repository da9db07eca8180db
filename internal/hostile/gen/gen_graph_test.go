package gen_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/internal/hostile/gen"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/staticruntime"
)

// constTensors binds ConstChainIR's constants: constant i holds i.
func constTensors(n int) []*ivalue.Tensor {
	ts := make([]*ivalue.Tensor, n)
	for i := range ts {
		ts[i] = ivalue.F32Tensor([]float32{float32(i)}, 1)
	}
	return ts
}

// TestGraphGenerators: each generated graph parses, verifies, prepares
// and computes what it says, at sizes that hit every branch of its
// generator (the view chain's period of four, empty graphs).
func TestGraphGenerators(t *testing.T) {
	x := []float32{-1, 2, 3, -4} // 2x2
	relu := []float32{0, 2, 3, 0}
	reluT := []float32{0, 3, 2, 0}
	scaled := func(v []float32, k float32) []float32 {
		out := make([]float32, len(v))
		for i := range v {
			out[i] = v[i] * k
		}
		return out
	}
	plus := func(v []float32, k float32) []float32 {
		out := make([]float32, len(v))
		for i := range v {
			out[i] = v[i] + k
		}
		return out
	}
	tests := []struct {
		name   string
		ir     func(n int) string
		consts func(n int) []*ivalue.Tensor
		extra  []ivalue.IValue // inputs after x
		want   func(n int) []float32
	}{
		{"relu chain", gen.ReluChainIR, nil, nil, func(n int) []float32 {
			if n == 0 {
				return x
			}
			return relu
		}},
		{"in-place chain", gen.InplaceChainIR, nil, nil, func(int) []float32 { return relu }},
		{"wide", gen.WideIR, nil, nil, func(n int) []float32 {
			if n == 0 {
				return x
			}
			return scaled(relu, float32(n))
		}},
		{"wide dead", gen.WideDeadIR, nil, nil, func(int) []float32 { return relu }},
		{"view chain", gen.ViewChainIR, nil, nil, func(n int) []float32 {
			ts := 0
			for i := 0; i < n; i++ {
				if i%4 == 0 || i%4 == 3 {
					ts++
				}
			}
			if ts%2 == 1 {
				return reluT
			}
			return relu
		}},
		{"list", gen.ListIR, nil, nil, func(n int) []float32 {
			if n == 0 {
				return x
			}
			var out []float32
			for i := 0; i < n; i++ {
				out = append(out, relu...)
			}
			return out
		}},
		{"if chain, true", gen.IfChainIR, nil, []ivalue.IValue{ivalue.FromBool(true)}, func(n int) []float32 {
			if n == 0 {
				return x
			}
			return relu
		}},
		{"if chain, false", gen.IfChainIR, nil, []ivalue.IValue{ivalue.FromBool(false)}, func(n int) []float32 {
			if n%2 == 1 {
				return scaled(x, -1)
			}
			return x
		}},
		{"loop chain", gen.LoopChainIR, nil, []ivalue.IValue{ivalue.FromInt(3)}, func(n int) []float32 {
			return plus(x, float32(3*n))
		}},
		{"constant chain", gen.ConstChainIR, constTensors, nil, func(n int) []float32 {
			return plus(x, float32(n*(n-1)/2))
		}},
	}
	for _, tc := range tests {
		for _, n := range []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 33} {
			t.Run(fmt.Sprintf("%s/%d", tc.name, n), func(t *testing.T) {
				var consts []*ivalue.Tensor
				if tc.consts != nil {
					consts = tc.consts(n)
				}
				g, err := graph.Parse(tc.ir(n), &graph.ParseOptions{Tensors: consts})
				require.NoError(t, err)
				require.NoError(t, g.Verify())
				m, err := staticruntime.NewStaticModule(g, nil)
				require.NoError(t, err)
				in := append([]ivalue.IValue{ivalue.FromTensor(ivalue.F32Tensor(append([]float32(nil), x...), 2, 2))}, tc.extra...)
				outs, err := m.NewRuntime().Run(in...)
				require.NoError(t, err)
				require.Len(t, outs, 1)
				got := outs[0].Tensor()
				require.NotNil(t, got)
				assert.Equal(t, tc.want(n), got.Contiguous().F32Contig())
			})
		}
	}
}
