package gemm

import (
	"fmt"
	"math/rand"
	"testing"
)

// BenchmarkPackB times packing a row-major B into panels, one k block
// after another as blocked does, for the 512x512x512 product and two
// convolution-sized ones (k x n).
func BenchmarkPackB(b *testing.B) {
	r := rand.New(rand.NewSource(5))
	for _, sh := range [][2]int{{512, 512}, {576, 3136}, {1152, 784}} {
		k, n := sh[0], sh[1]
		bm := newMat(r, k, n, rowMajor)
		nc := min(NC, n/NR*NR)
		dst := make([]float32, min(KC, k)*nc)
		b.Run(fmt.Sprintf("%dx%d", k, n), func(b *testing.B) {
			for range b.N {
				for pc := 0; pc < k; pc += KC {
					packB(dst, bm, pc, min(KC, k-pc), 0, nc)
				}
			}
			b.ReportMetric(float64(k*nc*4*b.N)/b.Elapsed().Seconds()/1e9, "GB/s")
		})
	}
}
