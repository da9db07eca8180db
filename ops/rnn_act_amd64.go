//go:build amd64 && !purego

package ops

import "math"

//go:noescape
func rnnSigmoidAVX2(o, a *float32, n int, tab *[rnnActRows][8]uint32)

//go:noescape
func rnnTanhAVX2(o, a *float32, n int, tab *[rnnActRows][8]uint32)

//go:noescape
func rnnGeluAVX2(o, a *float32, n int, tab *[rnnActRows][8]uint32)

//go:noescape
func siluAVX2(o, a *float32, n int, tab *[rnnActRows][8]uint32)

// The vectorised activations give every element what the eight-lane
// kernel gives, the last len%8 too (through vecTail), and the
// sixteen-lane ones (AVX-512) give each lane the same bits: the result
// of an element does not depend on the length of the slice it is in,
// so an activation fused into a convolution's epilogue, applied row
// segment by row segment (gemm.Activation), equals the unfused op over
// the whole tensor bit for bit.
const (
	vecGelu = iota
	vecSilu
	vecSigmoid
	vecTanh
)

// act8 applies activation kind to n elements (a multiple of 8) eight
// lanes at a time.
func act8(kind int, o, a *float32, n int) {
	switch kind {
	case vecGelu:
		rnnGeluAVX2(o, a, n, &rnnActTab)
	case vecSilu:
		siluAVX2(o, a, n, &rnnActTab)
	case vecSigmoid:
		rnnSigmoidAVX2(o, a, n, &rnnActTab)
	case vecTanh:
		rnnTanhAVX2(o, a, n, &rnnActTab)
	}
}

// actVec applies activation kind to a into o (o may be a): gelu and
// silu sixteen lanes at a time where AVX-512 runs, the rest eight at a
// time, the last len%8 through vecTail.
func actVec(kind int, o, a []float32) {
	n16 := 0
	if useAVX512 && (kind == vecGelu || kind == vecSilu) {
		if n16 = len(a) &^ 15; n16 > 0 {
			if kind == vecGelu {
				geluAVX512(&o[0], &a[0], n16, &rnnActTab)
			} else {
				siluAVX512(&o[0], &a[0], n16, &rnnActTab)
			}
		}
	}
	n8 := len(a) &^ 7
	if n8 > n16 {
		act8(kind, &o[n16], &a[n16], n8-n16)
	}
	if n8 < len(a) {
		vecTail(kind, o, a, n8)
	}
}

// vecTail applies activation kind to a[n8:] into o[n8:] (fewer than 8
// elements) through a vector of 8 on the stack.
func vecTail(kind int, o, a []float32, n8 int) {
	var t [8]float32
	n := copy(t[:], a[n8:])
	act8(kind, &t[0], &t[0], 8)
	copy(o[n8:], t[:n])
}

// geluVec sets o[i] = geluf(a[i]); o may be a.
func geluVec(o, a []float32) {
	o = o[:len(a)]
	if !useAVX2 {
		for i, x := range a {
			o[i] = geluf(x)
		}
		return
	}
	actVec(vecGelu, o, a)
}

// siluVec sets o[i] = a[i]*sigmoid(a[i]) (silu, swish); o may be a.
// The sigmoid is the vectorised one (within 3 ulp), multiplied by x in
// the same pass (below -88, by 0: see siluAVX2): about ten times faster
// than siluf's scalar exp, which made silu half of efficientnet's time.
func siluVec(o, a []float32) {
	o = o[:len(a)]
	if !useAVX2 {
		for i, x := range a {
			o[i] = siluf(x)
		}
		return
	}
	actVec(vecSilu, o, a)
}

// rnnSigmoidVec sets o[i] = sigmoid(a[i]); o may be a.
func rnnSigmoidVec(o, a []float32) {
	o = o[:len(a)]
	if !useAVX2 {
		for i, x := range a {
			o[i] = sigmoidf(x)
		}
		return
	}
	actVec(vecSigmoid, o, a)
}

// rnnTanhVec sets o[i] = tanh(a[i]); o may be a.
func rnnTanhVec(o, a []float32) {
	o = o[:len(a)]
	if !useAVX2 {
		for i, x := range a {
			o[i] = tanhf(x)
		}
		return
	}
	actVec(vecTanh, o, a)
}

//go:noescape
func softmaxMaxAVX2(x *float32, n int) (mx float32, nan bool)

//go:noescape
func softmaxExpAVX2(o, x *float32, n int, mx float32, tab *[rnnActRows][8]uint32) float64

//go:noescape
func softmaxScaleAVX2(o *float32, n int, inv float64)

// softmaxRowVec is attnSoftmaxRow32 eight lanes at a time, for rows of
// at least 8: the max, e**(x-max) with its sum in float64, and the scale
// by the sum's inverse (in float64, as the scalar loop rounds). It
// reports false, doing nothing, without AVX2 or for a shorter row.
func softmaxRowVec(o, x []float32) bool {
	n8 := len(x) &^ 7
	if !useAVX2 || n8 == 0 {
		return false
	}
	o = o[:len(x)]
	mx, nan := softmaxMaxAVX2(&x[0], n8)
	for _, v := range x[n8:] {
		mx = max(mx, v)
	}
	if nan {
		mx = float32(math.NaN())
	}
	sum := softmaxExpAVX2(&o[0], &x[0], n8, mx, &rnnActTab)
	for i := n8; i < len(x); i++ {
		e := float32(0)
		if d := x[i] - mx; !(d < expLo) {
			e = expf(d)
		}
		o[i] = e
		sum += float64(e)
	}
	inv := 1 / sum
	softmaxScaleAVX2(&o[0], n8, inv)
	for i := n8; i < len(o); i++ {
		o[i] = float32(float64(o[i]) * inv)
	}
	return true
}
