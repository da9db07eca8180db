//go:build amd64 && !purego

package ops

//go:noescape
func rnnSigmoidAVX2(o, a *float32, n int, tab *[rnnActRows][8]uint32)

//go:noescape
func rnnTanhAVX2(o, a *float32, n int, tab *[rnnActRows][8]uint32)

//go:noescape
func rnnGeluAVX2(o, a *float32, n int, tab *[rnnActRows][8]uint32)

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
