//go:build amd64 && !purego

package ops

import "golang.org/x/sys/cpu"

// useAVX2 selects ops' own AVX2/FMA kernels (the RNN activations here
// and in rnn_act_amd64.s; the depthwise rows, max pooling, hardswish and
// the binary ops in simd_amd64.s) over their pure-Go loops. x/sys/cpu checks both the CPU flags and that
// the OS saves the YMM registers. Tests clear it to cover the Go paths.
var useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA

//go:noescape
func dwRowsAVX2(out, in *float32, n int, offs *int, w *float32, taps int, bias, lo, hi float32)

//go:noescape
func max32AVX2(dst, src *float32, n int)

//go:noescape
func maxPoolS2RowsAVX2(dst *float32, ldd int, src *float32, step, d1, d2, rows, n, full, vin, k3 int)

//go:noescape
func hardAVX2(o, a *float32, n int, swish int)

//go:noescape
func bin32AVX2(op int, o, a, b *float32, n int, sb int, alpha float32)

//go:noescape
func normAffineAVX2(dst, src, w, b *float32, n int, sc, sh float32, mode int, lo, hi float32)

//go:noescape
func transpose8x8AVX2(dst *float32, ldd int, src *float32, lds int)

//go:noescape
func dwcRowS1AVX2(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32)

//go:noescape
func dwcRowS2AVX2(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32)

//go:noescape
func packRows8AVX2(dst, src *float32, lds, n int)

//go:noescape
func packRows8ScaledAVX2(dst, src *float32, lds, n int, s *float32)

//go:noescape
func packRows8PhasedAVX2(dst0, dst1, src *float32, lds, n int)

//go:noescape
func dealBlocks16AVX2(even, odd, src *float32, n int)

//go:noescape
func unpackRows8AVX2(dst *float32, ldd int, src *float32, n int)

//go:noescape
func gcRowS1AVX2(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32, nib, bstride int)

//go:noescape
func gcRowS2AVX2(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32, nib, bstride int)

//go:noescape
func sum32AVX2(x *float32, n int) float32

//go:noescape
func bcRowAVX2(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32, nib, bstride, acc, half int)
