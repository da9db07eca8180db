//go:build amd64 && !purego

package ops

import "golang.org/x/sys/cpu"

//go:noescape
func bcRow2AVX512(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32, nib, bstride, acc, half, wpair, opair, bpair int)

//go:noescape
func bcRow4AVX512(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32, nib, bstride, acc, half, wpair, opair, bpair int)

//go:noescape
func bcRow2x7AVX512(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32, nib, bstride, acc, half, wpair, opair, bpair int)

// The direct kernels over NCHW16c (see [Blocked layout]).
//
//go:noescape
func bcRow2x16AVX512(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32, nib, bstride, acc, half, wpair, opair, bpair int)

//go:noescape
func bcRow4x16AVX512(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32, nib, bstride, acc, half, wpair, opair, bpair int)

//go:noescape
func bcRow2x7x16AVX512(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32, nib, bstride, acc, half, wpair, opair, bpair int)

//go:noescape
func dwcPairsAVX512(out, out2, in, in2 *float32, np int, offs *int, w *float32, taps int, bias *float32, lo, hi float32)

//go:noescape
func siluAVX512(o, a *float32, n int, tab *[rnnActRows][8]uint32)

//go:noescape
func hardAVX512(o, a *float32, n int, swish int)

//go:noescape
func geluAVX512(o, a *float32, n int, tab *[rnnActRows][8]uint32)

// useAVX512 selects ops' AVX-512 kernels where the CPU has AVX-512
// Foundation and the OS saves the ZMM registers: bcRow2AVX512 (two
// output blocks of a channel-blocked direct convolution at once),
// dwcPairsAVX512 (depthwise positions sixteen at a time), silu, gelu
// and hardswish sixteen lanes at a time. Tests clear it to compare with the
// AVX2 path.
var useAVX512 = useAVX2 && cpu.X86.HasAVX512F

//go:noescape
func scaleRowsAVX512(o, a, s *float32, rows, inner int)

//go:noescape
func meanRowsAVX512(dst, src *float32, rows, inner int)

//go:noescape
func avgPool2x2RowsAVX512(dst, src *float32, rows, ow, sH int, div float32)

//go:noescape
func affineRowsAVX512(o, a, sc, sh *float32, rows, inner int, lo, hi float32, clamp int)
