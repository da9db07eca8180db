package serve

import (
	"math"
	"strconv"
)

// JSON numbers to floats. Clients send float tensors as JSON numbers:
// Go's encoding/json writes a float32's shortest text (9 digits at most),
// Python clients a float32 tensor's tolist(), which is float64's 17
// digits. Both must land on the float a correctly rounded parse gives
// (strconv.ParseFloat with the tensor's bit size), and the second kind
// goes through strconv's slow path in fastjson, a quarter of a small
// request's cost. parseJSONFloat takes the common cases in a few
// multiplications and leaves the rest to strconv.

// pow10 are the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parseJSONFloat parses s, a JSON number, to the float of bitSize (32 or
// 64) nearest to it, exactly as strconv.ParseFloat(s, bitSize) does. ok
// is false where s is not a JSON number or is out of range; the caller
// then reports the error (or tries a looser parser).
func parseJSONFloat(s []byte, bitSize int) (f float64, ok bool) {
	if f, ok = fastJSONFloat(s, bitSize); ok {
		return f, true
	}
	f, err := strconv.ParseFloat(string(s), bitSize)
	return f, err == nil
}

// fastJSONFloat is parseJSONFloat's fast path (Clinger's): ok false
// means "not decided here", never a wrong answer.
func fastJSONFloat(s []byte, bitSize int) (float64, bool) {
	i, n := 0, len(s)
	neg := false
	if i < n && s[i] == '-' {
		neg = true
		i++
	}
	var mant uint64 // the first 19 significant digits
	digits, exp := 0, 0
	sawDigit, dropped := false, false
	intStart := i
	for ; i < n && s[i] >= '0' && s[i] <= '9'; i++ {
		sawDigit = true
		d := uint64(s[i] - '0')
		switch {
		case digits < 19:
			if mant != 0 || d != 0 {
				mant = mant*10 + d
				digits++
			}
		default:
			exp++
			dropped = dropped || d != 0
		}
	}
	if i-intStart > 1 && s[intStart] == '0' {
		return 0, false // JSON has no leading zeros
	}
	if i < n && s[i] == '.' {
		i++
		fracStart := i
		for ; i < n && s[i] >= '0' && s[i] <= '9'; i++ {
			d := uint64(s[i] - '0')
			if digits < 19 {
				if mant != 0 || d != 0 {
					mant = mant*10 + d
					digits++
				}
				exp--
			} else {
				dropped = dropped || d != 0
			}
		}
		if i == fracStart {
			return 0, false
		}
	}
	if !sawDigit {
		return 0, false
	}
	if i < n && (s[i] == 'e' || s[i] == 'E') {
		i++
		eneg := false
		if i < n && (s[i] == '+' || s[i] == '-') {
			eneg = s[i] == '-'
			i++
		}
		e, start := 0, i
		for ; i < n && s[i] >= '0' && s[i] <= '9'; i++ {
			if e < 10000 {
				e = e*10 + int(s[i]-'0')
			}
		}
		if i == start {
			return 0, false
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if i != n || dropped {
		return 0, false
	}
	sign := 1.0
	if neg {
		sign = -1
	}
	if mant == 0 {
		return sign * 0, true
	}
	if exp < -22 || exp > 22 {
		return 0, false
	}
	f := float64(mant)
	exact := mant <= 1<<53 // then f is mant, and f's one rounding below is the only one
	if exp < 0 {
		f /= pow10[-exp]
	} else {
		f *= pow10[exp]
	}
	if bitSize == 64 {
		if !exact {
			return 0, false
		}
		return sign * f, true
	}
	// float32: f is within 2^-52 of the number (one rounding, or two when
	// mant has more than 53 bits). Rounding f to float32 is then right
	// unless f lies within that error of a point halfway between two
	// float32s, where the number and f may round apart: those few go to
	// strconv. Float32's subnormals and overflow go there too.
	if f < 0x1p-126 || f > math.MaxFloat32 {
		return 0, false
	}
	low := math.Float64bits(f) & (1<<29 - 1) // the bits float32 drops
	const half = 1 << 28
	slack := uint64(0)
	if !exact {
		slack = 4
	}
	if low+slack >= half && low <= half+slack {
		return 0, false
	}
	return sign * float64(float32(f)), true
}
