//go:build !amd64 || purego

package ops

// rnnSigmoidVec sets o[i] = sigmoid(a[i]); o may be a.
func rnnSigmoidVec(o, a []float32) {
	o = o[:len(a)]
	for i, x := range a {
		o[i] = sigmoidf(x)
	}
}

// rnnTanhVec sets o[i] = tanh(a[i]); o may be a.
func rnnTanhVec(o, a []float32) {
	o = o[:len(a)]
	for i, x := range a {
		o[i] = tanhf(x)
	}
}

// geluVec sets o[i] = geluf(a[i]); o may be a.
func geluVec(o, a []float32) {
	o = o[:len(a)]
	for i, x := range a {
		o[i] = geluf(x)
	}
}

// siluVec sets o[i] = silu(a[i]); o may be a.
func siluVec(o, a []float32) {
	o = o[:len(a)]
	for i, x := range a {
		o[i] = siluf(x)
	}
}

// softmaxRowVec: no vector softmax here (attnSoftmaxRow32's loop runs).
func softmaxRowVec(o, x []float32) bool { return false }
