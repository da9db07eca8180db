package ops

import "math"

// Single-precision exp and erf for the float32 kernels. float64 math
// (math.Exp, math.Erf) costs 15-20 ns an element and dominated models
// with gelu, softmax or sigmoid; these are a few ns and within 2 ulp
// (exp) and 5e-7 absolute (erf), the accuracy PyTorch's vectorised CPU
// kernels have (its float erf is the same Abramowitz-Stegun 7.1.26
// formula). erff is for gelu only: near 0 its relative error is large,
// which gelu's factor x makes negligible.

// expf returns e**x for float32 x: Cephes' range reduction x = n ln2 + r,
// |r| <= ln2/2, a degree-6 polynomial for e**r, and a scale by 2**n,
// including the subnormal range. NaN stays NaN.
func expf(x float32) float32 {
	const (
		log2e = 1.44269504088896341
		ln2hi = 0.693359375
		ln2lo = -2.12194440e-4
		hi    = 88.72283935546875 // above: +Inf
		lo    = -103.97207708     // below: 0
	)
	switch {
	case x != x:
		return x
	case x > hi:
		return float32(math.Inf(1))
	case x < lo:
		return 0
	}
	// Round x*log2e to the nearest integer by adding and subtracting
	// 1.5*2**23 (exact for the |x*log2e| < 150 left here).
	const shift = 12582912
	fn := (x*log2e + shift) - shift
	r := x - fn*ln2hi - fn*ln2lo
	p := float32(1.9875691500e-4)
	p = p*r + 1.3981999507e-3
	p = p*r + 8.3334519073e-3
	p = p*r + 4.1665795894e-2
	p = p*r + 1.6666665459e-1
	p = p*r + 5.0000001201e-1
	y := p*r*r + r + 1
	n := int32(fn)
	if n > 127 { // e**x just below the float32 maximum
		y *= 2
		n--
	}
	if n < -126 { // a subnormal result: scale in two steps
		y *= math.Float32frombits(uint32(-100+127) << 23)
		n += 100
	}
	return y * math.Float32frombits(uint32(n+127)<<23)
}

// erff is erf for float32 by Abramowitz and Stegun 7.1.26 (absolute error
// below 1.5e-7), as PyTorch's vectorised float erf.
func erff(x float32) float32 {
	const (
		p  = 0.3275911
		a1 = 0.254829592
		a2 = -0.284496736
		a3 = 1.421413741
		a4 = -1.453152027
		a5 = 1.061405429
	)
	ax := float32(math.Abs(float64(x)))
	t := 1 / (1 + p*ax)
	y := 1 - ((((a5*t+a4)*t+a3)*t+a2)*t+a1)*t*expf(-ax*ax)
	return float32(math.Copysign(float64(y), float64(x)))
}

func geluf(x float32) float32 { return 0.5 * x * (1 + erff(x*(math.Sqrt2/2))) }

func sigmoidf(x float32) float32 { return 1 / (1 + expf(-x)) }

func siluf(x float32) float32 { return x / (1 + expf(-x)) }
