package ops_test

import (
	"math/rand"
	"testing"

	"github.com/gosr/gosr/graph"
	"github.com/gosr/gosr/ivalue"
	"github.com/gosr/gosr/ops"
)

func benchRand(r *rand.Rand, sizes ...int) *ivalue.Tensor {
	t := ivalue.NewTensor(ivalue.Float32, sizes...)
	d := t.F32Contig()
	for i := range d {
		d[i] = float32(r.NormFloat64())
	}
	return t
}

// benchLinearNode builds a linear; with constW the weight and bias are
// prim::Constants, as in frozen graphs (the weight is then prepacked).
func benchLinearNode(b *testing.B, r *rand.Rand, batch, in, out int, constW bool) *ops.ProcessedNode {
	p, err := buildNode(b, "aten::linear",
		[]ivalue.IValue{iv(benchRand(r, batch, in)), iv(benchRand(r, out, in)), iv(benchRand(r, out))},
		[]*graph.Type{tT, tT, tT}, []*graph.Type{tT}, []bool{false, constW, constW})
	if err != nil {
		b.Fatal(err)
	}
	return p
}

func benchRun(b *testing.B, flops float64, ps ...*ops.ProcessedNode) {
	for _, p := range ps {
		if err := p.Run(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, p := range ps {
			_ = p.Run()
		}
	}
	b.ReportMetric(flops*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

func BenchmarkDenseLinear(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	for _, c := range []struct {
		name           string
		batch, in, out int
		constW         bool
	}{{"64x64/batch1", 1, 64, 64, false}, {"512x512/batch1", 1, 512, 512, false}, {"512x512/batch32", 32, 512, 512, false},
		{"512x512/batch32/constW", 32, 512, 512, true},
		// Classifier heads at batch 1 (mobilenet_v3, efficientnet): a
		// matrix-vector product bound by reading the weight.
		{"960x1280/batch1/constW", 1, 960, 1280, true}, {"1280x1000/batch1/constW", 1, 1280, 1000, true}} {
		b.Run(c.name, func(b *testing.B) {
			p := benchLinearNode(b, r, c.batch, c.in, c.out, c.constW)
			benchRun(b, 2*float64(c.batch*c.in*c.out), p)
			b.ReportMetric(4*float64(c.in*c.out)*float64(b.N)/b.Elapsed().Seconds()/1e9, "weight-GB/s")
		})
	}
}

// BenchmarkDenseMLP64 is three 64x64 linears at batch 1 (the ReLUs
// between them are another kernel's business and are left out).
func BenchmarkDenseMLP64(b *testing.B) {
	r := rand.New(rand.NewSource(2))
	ps := []*ops.ProcessedNode{benchLinearNode(b, r, 1, 64, 64, true), benchLinearNode(b, r, 1, 64, 64, true), benchLinearNode(b, r, 1, 64, 64, true)}
	benchRun(b, 3*2*64*64, ps...)
}

func BenchmarkDenseConv2d(b *testing.B) {
	r := rand.New(rand.NewSource(3))
	ints := graph.ListOf(graph.Int)
	for _, c := range []struct {
		name                 string
		cin, cout, hw, k, gr int
		constW               bool
	}{{"3x3/64-64/56x56", 64, 64, 56, 3, 1, false}, {"1x1/64-256/56x56", 64, 256, 56, 1, 1, false}, {"3x3dw/64/56x56", 64, 64, 56, 3, 64, false},
		{"3x3/64-64/56x56/constW", 64, 64, 56, 3, 1, true}, {"1x1/64-256/56x56/constW", 64, 256, 56, 1, 1, true},
		{"3x3/128-128/7x7/batch8", 128, 128, 7, 3, 1, false}, {"3x3/128-128/7x7/batch8/constW", 128, 128, 7, 3, 1, true}} {
		b.Run(c.name, func(b *testing.B) {
			pad := int64(c.k / 2)
			batch := 1
			if c.hw < 16 {
				batch = 8
			}
			// With constW the weight and bias are prim::Constants, as in
			// frozen graphs (the weight is then prepacked).
			p, err := buildNode(b, "aten::conv2d",
				[]ivalue.IValue{iv(benchRand(r, batch, c.cin, c.hw, c.hw)), iv(benchRand(r, c.cout, c.cin/c.gr, c.k, c.k)), iv(benchRand(r, c.cout)),
					ivInts(1, 1), ivInts(pad, pad), ivInts(1, 1), ivI(int64(c.gr))},
				[]*graph.Type{tT, tT, tT, ints, ints, ints, tI}, []*graph.Type{tT}, []bool{false, c.constW, c.constW, true, true, true, true})
			if err != nil {
				b.Fatal(err)
			}
			benchRun(b, 2*float64(batch*c.cout*c.cin/c.gr*c.k*c.k*c.hw*c.hw), p)
		})
	}
}
