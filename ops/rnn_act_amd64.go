//go:build amd64 && !purego

package ops

//go:noescape
func rnnSigmoidAVX2(o, a *float32, n int, tab *[rnnActRows][8]uint32)

//go:noescape
func rnnTanhAVX2(o, a *float32, n int, tab *[rnnActRows][8]uint32)

//go:noescape
func rnnGeluAVX2(o, a *float32, n int, tab *[rnnActRows][8]uint32)

//go:noescape
func siluMulAVX2(o, x, s *float32, n int)

// geluVec sets o[i] = geluf(a[i]); o may be a.
func geluVec(o, a []float32) {
	o = o[:len(a)]
	n8 := len(a) &^ 7
	if useAVX2 && n8 > 0 {
		rnnGeluAVX2(&o[0], &a[0], n8, &rnnActTab)
	} else {
		n8 = 0
	}
	for i := n8; i < len(a); i++ {
		o[i] = geluf(a[i])
	}
}

// siluVec sets o[i] = a[i]*sigmoid(a[i]) (silu, swish); o may be a.
// The sigmoid is the vectorised one (within 3 ulp), taken 256 elements
// at a time into a buffer on the stack, then multiplied by x (below -88,
// by 0: see siluMulAVX2): about ten times faster than siluf's scalar
// exp, which made silu half of efficientnet's time.
func siluVec(o, a []float32) {
	o = o[:len(a)]
	n8 := len(a) &^ 7
	if !useAVX2 || n8 == 0 {
		for i, x := range a {
			o[i] = siluf(x)
		}
		return
	}
	var sig [256]float32
	for i := 0; i < n8; i += len(sig) {
		n := min(len(sig), n8-i)
		rnnSigmoidAVX2(&sig[0], &a[i], n, &rnnActTab)
		siluMulAVX2(&o[i], &a[i], &sig[0], n)
	}
	for i := n8; i < len(a); i++ {
		o[i] = siluf(a[i])
	}
}

// rnnSigmoidVec sets o[i] = sigmoid(a[i]); o may be a.
func rnnSigmoidVec(o, a []float32) {
	o = o[:len(a)]
	n8 := len(a) &^ 7
	if useAVX2 && n8 > 0 {
		rnnSigmoidAVX2(&o[0], &a[0], n8, &rnnActTab)
	} else {
		n8 = 0
	}
	for i := n8; i < len(a); i++ {
		o[i] = sigmoidf(a[i])
	}
}

// rnnTanhVec sets o[i] = tanh(a[i]); o may be a.
func rnnTanhVec(o, a []float32) {
	o = o[:len(a)]
	n8 := len(a) &^ 7
	if useAVX2 && n8 > 0 {
		rnnTanhAVX2(&o[0], &a[0], n8, &rnnActTab)
	} else {
		n8 = 0
	}
	for i := n8; i < len(a); i++ {
		o[i] = tanhf(a[i])
	}
}
