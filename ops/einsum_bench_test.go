package ops_test

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
)

// maxvit_t's attention einsums at 224x224 input: G windows of P = 49
// tokens, H heads of D = 32 per stage.
var maxvitStages = []struct {
	name    string
	g, h, p int
}{
	{"stage1", 64, 2, 49},
	{"stage2", 16, 4, 49},
	{"stage3", 4, 8, 49},
	{"stage4", 1, 16, 49},
}

func einsumRand(n int) []float32 {
	r := rand.New(rand.NewSource(1))
	d := make([]float32, n)
	for i := range d {
		d[i] = r.Float32()*2 - 1
	}
	return d
}

// maxvitQKV returns q, k, v as maxvit makes them: chunks of one [1, G, P,
// 3*H*D] projection, reshaped to [1, G, P, H, D] and permuted to [1, G,
// H, P, D] (strided views).
func maxvitQKV(g, h, p, d int) (q, k, v *ivalue.Tensor) {
	hd := h * d
	qkv := ivalue.F32Tensor(einsumRand(g*p*3*hd), 1, g, p, 3*hd)
	view := func(part int) *ivalue.Tensor {
		t, err := ivalue.FromStorage(ivalue.Float32, qkv.Storage(), part*hd,
			[]int{1, g, h, p, d}, []int{g * p * 3 * hd, p * 3 * hd, d, 3 * hd, 1})
		if err != nil {
			panic(err)
		}
		return t
	}
	return view(0), view(1), view(2)
}

// BenchmarkEinsumMaxvit runs maxvit's two einsums against aten::matmul of
// the same sizes on the same strided views (q @ k^T, attn @ v).
func BenchmarkEinsumMaxvit(b *testing.B) {
	const d = 32
	tl := graph.ListOf(tT)
	for _, s := range maxvitStages {
		q, k, v := maxvitQKV(s.g, s.h, s.p, d)
		attn := ivalue.F32Tensor(einsumRand(s.g*s.h*s.p*s.p), 1, s.g, s.h, s.p, s.p)
		kT, err := ivalue.FromStorage(ivalue.Float32, k.Storage(), k.Offset(),
			[]int{1, s.g, s.h, d, s.p}, []int{k.Strides()[0], k.Strides()[1], k.Strides()[2], 1, k.Strides()[3]})
		require.NoError(b, err)
		run := func(b *testing.B, kind string, in []ivalue.IValue, types []*graph.Type) {
			p, err := buildNode(b, kind, in, types, []*graph.Type{tT}, nil)
			require.NoError(b, err)
			require.NoError(b, p.Run())
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := p.Run(); err != nil {
					b.Fatal(err)
				}
			}
		}
		eqArgs := func(eq string, x, y *ivalue.Tensor) ([]ivalue.IValue, []*graph.Type) {
			return []ivalue.IValue{ivS(eq), ivalue.NewList(iv(x), iv(y)), ivalue.None()},
				[]*graph.Type{tS, tl, graph.OptionalOf(graph.ListOf(tI))}
		}
		b.Run(s.name+"/qk/einsum", func(b *testing.B) {
			in, ty := eqArgs("B G H I D, B G H J D -> B G H I J", q, k)
			run(b, "aten::einsum", in, ty)
		})
		b.Run(s.name+"/qk/matmul", func(b *testing.B) {
			run(b, "aten::matmul", []ivalue.IValue{iv(q), iv(kT)}, []*graph.Type{tT, tT})
		})
		b.Run(s.name+"/av/einsum", func(b *testing.B) {
			in, ty := eqArgs("B G H I J, B G H J D -> B G H I D", attn, v)
			run(b, "aten::einsum", in, ty)
		})
		b.Run(s.name+"/av/matmul", func(b *testing.B) {
			run(b, "aten::matmul", []ivalue.IValue{iv(attn), iv(v)}, []*graph.Type{tT, tT})
		})
	}
}
