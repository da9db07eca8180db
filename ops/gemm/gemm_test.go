package gemm

import (
	"fmt"
	"math/rand"
	"testing"
)

func BenchmarkGemm(b *testing.B) {
	r := rand.New(rand.NewSource(3))
	for _, sh := range [][3]int{{64, 3136, 576}, {32, 512, 512}, {1, 512, 512}, {1, 64, 64}, {4, 32, 32}, {4, 512, 512}} {
		m, n, k := sh[0], sh[1], sh[2]
		for _, asm := range []bool{false, true} {
			name := "go"
			if asm {
				name = "asm"
			}
			b.Run(fmt.Sprintf("%s/%dx%dx%d", name, m, n, k), func(b *testing.B) {
				saved := useAsm
				useAsm = asm && saved
				defer func() { useAsm = saved }()
				a := newMat(r, m, k, rowMajor)
				bm := newMat(r, k, n, rowMajor)
				if m == 1 {
					bm = newMat(r, k, n, colMajor) // linear weight layout
				}
				c := make([]float32, m*n)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					Gemm(nil, m, n, k, 1, a, bm, nil, 0, c, 0, n)
				}
				b.ReportMetric(2*float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			})
		}
	}
}
