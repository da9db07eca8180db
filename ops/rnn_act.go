package ops

import "math"

// rnnActTab holds the constants of the vectorised sigmoid, tanh and gelu
// (rnn_act_amd64.s), one 8-lane row each, in the order the assembly
// addresses them: expf's (fastmath.go), tanhf's (rnn_cell.go), geluf's.
const rnnActRows = 31

// expLo is the smallest argument the vectorised exp takes (rnnActTab's
// row 22): e**x stays normal above it. The vector softmax gives 0 below.
const expLo = -87

var rnnActTab = func() (t [rnnActRows][8]uint32) {
	f := math.Float32bits
	for i, v := range [rnnActRows]uint32{
		f(0.693359375), f(-2.12194440e-4), // ln2 hi, lo
		f(1.9875691500e-4), f(1.3981999507e-3), f(8.3334519073e-3),
		f(4.1665795894e-2), f(1.6666665459e-1), f(5.0000001201e-1),
		127, 0x7fffffff, 0x80000000,
		f(-5.70498872745e-3), f(2.06390887954e-2), f(-5.37397155531e-2),
		f(1.33314422036e-1), f(-3.33332819422e-1),
		f(0.625), f(1.0 / 4096),
		f(2), f(1.44269504088896341), f(1),
		// e**x stays normal on [-87, 88]; beyond, sigmoid and tanh are
		// within 2e-38 of their limits.
		f(88), f(expLo),
		// erff's (fastmath.go) p and a1-a5, then gelu's 1/sqrt(2) and 0.5.
		f(0.3275911), f(0.254829592), f(-0.284496736), f(1.421413741), f(-1.453152027), f(1.061405429),
		f(math.Sqrt2 / 2), f(0.5),
	} {
		for j := range t[i] {
			t[i][j] = v
		}
	}
	return
}()
