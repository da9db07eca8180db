//go:build !amd64 || purego

package ops

// useAVX2 mirrors simd_amd64.go's: no assembly here.
var useAVX2 = false

// dwRowsAVX2 is never called here: useAVX2 is false.
func dwRowsAVX2(out, in *float32, n int, offs *int, w *float32, taps int, bias, lo, hi float32) {}

// max32AVX2 is never called here: useAVX2 is false.
func max32AVX2(dst, src *float32, n int) {}

// maxPoolS2RowsAVX2 is never called here: useAVX2 is false.
func maxPoolS2RowsAVX2(dst *float32, ldd int, src *float32, step, d1, d2, rows, n, full, vin, k3 int) {
}

// hardAVX2 is never called here: useAVX2 is false.
func hardAVX2(o, a *float32, n int, swish int) {}

// hardAVX512 is never called here: useAVX512 is false.
func hardAVX512(o, a *float32, n int, swish int) {}

// bin32AVX2 is never called here: useAVX2 is false.
func bin32AVX2(op int, o, a, b *float32, n int, sb int, alpha float32) {}

// normAffineAVX2 is never called here: useAVX2 is false.
func normAffineAVX2(dst, src, w, b *float32, n int, sc, sh float32, mode int, lo, hi float32) {}

// transpose8x8AVX2 is never called here: useAVX2 is false.
func transpose8x8AVX2(dst *float32, ldd int, src *float32, lds int) {}

// dwcRowS1AVX2 is never called here: useAVX2 is false.
func dwcRowS1AVX2(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32) {
}

// dwcRowS2AVX2 is never called here: useAVX2 is false.
func dwcRowS2AVX2(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32) {
}

// packRows8AVX2 is never called here: useAVX2 is false.
func packRows8AVX2(dst, src *float32, lds, n int) {}

// packRows8ScaledAVX2 is never called here: useAVX2 is false.
func packRows8ScaledAVX2(dst, src *float32, lds, n int, s *float32) {}

// packRows8PhasedAVX2 is never called here: useAVX2 is false.
func packRows8PhasedAVX2(dst0, dst1, src *float32, lds, n int) {}

// unpackRows8AVX2 is never called here: useAVX2 is false.
func unpackRows8AVX2(dst *float32, ldd int, src *float32, n int) {}

// gcRowS1AVX2 is never called here: useAVX2 is false.
func gcRowS1AVX2(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32, nib, bstride int) {
}

// gcRowS2AVX2 is never called here: useAVX2 is false.
func gcRowS2AVX2(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32, nib, bstride int) {
}

// sum32AVX2 is never called here: useAVX2 is false.
func sum32AVX2(x *float32, n int) float32 { return 0 }

// bcRowAVX2 is never called here: useAVX2 is false.
func bcRowAVX2(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32, nib, bstride, acc, half int) {
}

// useAVX512 is false here: no assembly.
var useAVX512 = false

// bcRow2AVX512 is never called here: useAVX512 is false.
func bcRow2AVX512(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32, nib, bstride, acc, half, wpair, opair, bpair int) {
}

// bcRow4AVX512 is never called here: useAVX512 is false.
func bcRow4AVX512(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32, nib, bstride, acc, half, wpair, opair, bpair int) {
}

// bcRow2x7AVX512 is never called here: useAVX512 is false.
func bcRow2x7AVX512(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32, nib, bstride, acc, half, wpair, opair, bpair int) {
}

// bcRow2x16AVX512 is never called here: useAVX512 is false.
func bcRow2x16AVX512(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32, nib, bstride, acc, half, wpair, opair, bpair int) {
}

// bcRow4x16AVX512 is never called here: useAVX512 is false.
func bcRow4x16AVX512(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32, nib, bstride, acc, half, wpair, opair, bpair int) {
}

// bcRow2x7x16AVX512 is never called here: useAVX512 is false.
func bcRow2x7x16AVX512(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32, nib, bstride, acc, half, wpair, opair, bpair int) {
}

// dealBlocks16AVX2 is never called here: useAVX2 is false.
func dealBlocks16AVX2(even, odd, src *float32, n int) {}

// dwcPairsAVX512 is never called here: useAVX512 is false.
func dwcPairsAVX512(out, out2, in, in2 *float32, np int, offs *int, w *float32, taps int, bias *float32, lo, hi float32) {
}

// scaleRowsAVX512 is never called here: useAVX512 is false.
func scaleRowsAVX512(o, a, s *float32, rows, inner int) {}

// meanRowsAVX512 is never called here: useAVX512 is false.
func meanRowsAVX512(dst, src *float32, rows, inner int) {}

// avgPool2x2RowsAVX512 is never called here: useAVX512 is false.
func avgPool2x2RowsAVX512(dst, src *float32, rows, ow, sH int, div float32) {}

// affineRowsAVX512 is never called here: useAVX512 is false.
func affineRowsAVX512(o, a, sc, sh *float32, rows, inner int, lo, hi float32, clamp int) {}
