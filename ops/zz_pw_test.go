package ops

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/gosr/gosr/ops/gemm"
	"github.com/gosr/gosr/ops/parallel"
)

func BenchmarkZZPointwiseThreads(b *testing.B) {
	r := rand.New(rand.NewSource(1))
	other := make([]float32, 64<<20/4)
	for _, sh := range []struct {
		c, o, n int
		res     bool
	}{{256, 1024, 196, true}, {1024, 256, 196, false}, {512, 128, 784, false}, {128, 512, 784, true}, {2048, 512, 49, false}} {
		g := pointwiseGeom(1, sh.c, sh.o, sh.n, sh.n)
		x, w, out, bias := normals(r, sh.c*sh.n), normals(r, sh.o*sh.c), make([]float32, sh.o*sh.n), normals(r, sh.o)
		var res []float32
		if sh.res {
			res = normals(r, sh.o*sh.n)
		}
		ep := gemm.Clamp{On: true, Lo: 0, Hi: 6}
		for _, th := range []int{1, 2} {
			var sc *gemm.Scratch
			if th > 1 {
				sc = gemm.NewScratch(parallel.New(th))
			}
			for _, mb := range []int{0, 32} {
				b.Run(fmt.Sprintf("%dto%d@%d/t%d/after%dMB", sh.c, sh.o, sh.n, th, mb), func(b *testing.B) {
					benchEvicted(b, other[:mb<<20/4], func() {
						convPointwiseRows(sc, &g, x, 0, w, 0, bias, 0, 1, res, 0, out, ep, nil)
					})
				})
			}
		}
	}
}
