package serve

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// parseJSONFloat must agree with strconv.ParseFloat bit for bit.
func checkJSONFloat(t testing.TB, s string) {
	for _, bits := range []int{32, 64} {
		want, werr := strconv.ParseFloat(s, bits)
		got, ok := parseJSONFloat([]byte(s), bits)
		if werr != nil {
			// strconv's range errors still give ±Inf; the server refuses them.
			require.False(t, ok && !math.IsInf(want, 0), "%q (%d bits): strconv says %v, got %v", s, bits, werr, got)
			continue
		}
		require.True(t, ok, "%q (%d bits): not parsed", s, bits)
		require.Equal(t, math.Float64bits(want), math.Float64bits(got), "%q (%d bits): got %v want %v", s, bits, got, want)
	}
}

func TestParseJSONFloat(t *testing.T) {
	for _, s := range []string{
		"0", "-0", "1", "-1", "0.5", "1e10", "1E-5", "1.5e+3", "123456789", "0.1", "0.30000001192092896",
		"3.4028234663852886e38", "3.4028235677973366e38", "1.1754943508222875e-38", "1e-45", "1.401298464324817e-45",
		"9007199254740993", "18446744073709551615", "12345678901234567890123", "0.000000000000000000000000001",
		"1e22", "1e23", "1e-22", "1e-23", "4.5e15", "123.456e-7",
		// float32 halfway points: 1 + 2^-24 and just beside it.
		"1.000000059604644775390625", "1.0000000596046447753906251", "1.0000000596046447753906249",
		"1.00000005960464477", "1.00000005960464478",
		// not JSON numbers: strconv may take some, parseJSONFloat need not
		"", "-", ".5", "5.", "01", "1e", "1e+", "--1", "0x10", "inf", "NaN", "1_0",
	} {
		checkJSONFloat(t, s)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 200000 {
		var s string
		switch r.IntN(4) {
		case 0: // a float32's value in float64's 17 digits (Python's tolist)
			s = strconv.FormatFloat(float64(math.Float32frombits(r.Uint32())), 'g', 17, 64)
		case 1: // a float32's shortest text (Go's encoding/json)
			s = strconv.FormatFloat(float64(math.Float32frombits(r.Uint32())), 'g', -1, 32)
		case 2: // a float64's shortest text
			s = strconv.FormatFloat(math.Float64frombits(r.Uint64()), 'g', -1, 64)
		default: // a float32 halfway point, nudged
			f := float64(math.Float32frombits(r.Uint32()&0x3fffffff | 0x30000000))
			mid := math.Float64frombits(math.Float64bits(f) + 1<<28)
			mid = math.Float64frombits(math.Float64bits(mid) + uint64(r.IntN(9)) - 4)
			s = strconv.FormatFloat(mid, 'g', 17+r.IntN(3), 64)
		}
		if s == "NaN" || s == "+Inf" || s == "-Inf" {
			continue
		}
		checkJSONFloat(t, s)
	}
}

func FuzzParseJSONFloat(f *testing.F) {
	for _, s := range []string{"0.30000001192092896", "1.000000059604644775390625", "1e-45", "-12.5e3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkJSONFloat(t, s) })
}
