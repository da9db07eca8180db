package staticruntime_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/internal/hostile/gen"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/staticruntime"
)

// bigShapes are the big-graph shapes of internal/hostile, each a shape
// that once made some part of preparation grow with the square of n.
var bigShapes = []struct {
	name   string
	ir     func(n int) string
	consts func(n int) []*ivalue.Tensor
}{
	{"chain", gen.ReluChainIR, nil},
	{"wide", gen.WideIR, nil},
	{"widedead", gen.WideDeadIR, nil},
	{"views", gen.ViewChainIR, nil},
	{"inplace", gen.InplaceChainIR, nil},
	{"list", gen.ListIR, nil},
	{"ifs", gen.IfChainIR, nil},
	{"loops", gen.LoopChainIR, nil},
	{"consts", gen.ConstChainIR, constTensors},
}

// constTensors binds gen.ConstChainIR's constants: constant i holds i.
func constTensors(n int) []*ivalue.Tensor {
	ts := make([]*ivalue.Tensor, n)
	for i := range ts {
		ts[i] = ivalue.F32Tensor([]float32{float32(i)}, 1)
	}
	return ts
}

func parseBig(tb testing.TB, ir string, consts []*ivalue.Tensor) *graph.Graph {
	g, err := graph.Parse(ir, &graph.ParseOptions{Tensors: consts})
	require.NoError(tb, err)
	return g
}

// BenchmarkNewStaticModule prepares each big-graph shape at 1k, 10k and
// 100k nodes (graph.Parse not counted): the time per op should stay
// flat as n grows.
func BenchmarkNewStaticModule(b *testing.B) {
	for _, s := range bigShapes {
		for _, n := range []int{1000, 10000, 100000} {
			b.Run(fmt.Sprintf("%s/%dk", s.name, n/1000), func(b *testing.B) {
				ir := s.ir(n)
				var consts []*ivalue.Tensor
				if s.consts != nil {
					consts = s.consts(n)
				}
				b.ReportAllocs()
				for b.Loop() {
					b.StopTimer()
					g := parseBig(b, ir, consts)
					b.StartTimer()
					_, err := staticruntime.NewStaticModule(g, nil)
					require.NoError(b, err)
				}
			})
		}
	}
}
