package ivalue

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDTypeInfo(t *testing.T) {
	cases := []struct {
		dt           DType
		size         int
		name, torch  string
		scalarType   int64
		isFloat, isI bool
	}{
		{Uint8, 1, "uint8", "Byte", 0, false, true},
		{Int8, 1, "int8", "Char", 1, false, true},
		{Int16, 2, "int16", "Short", 2, false, true},
		{Int32, 4, "int32", "Int", 3, false, true},
		{Int64, 8, "int64", "Long", 4, false, true},
		{Float16, 2, "float16", "Half", 5, true, false},
		{Float32, 4, "float32", "Float", 6, true, false},
		{Float64, 8, "float64", "Double", 7, true, false},
		{Bool, 1, "bool", "Bool", 11, false, false},
		{BFloat16, 2, "bfloat16", "BFloat16", 15, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.size, c.dt.Size())
			assert.Equal(t, c.name, c.dt.String())
			assert.Equal(t, c.torch, c.dt.TorchName())
			assert.Equal(t, c.scalarType, c.dt.ScalarType())
			assert.Equal(t, c.isFloat, c.dt.IsFloat())
			assert.Equal(t, c.isI, c.dt.IsInt())

			got, err := DTypeFromScalarType(c.scalarType)
			require.NoError(t, err)
			assert.Equal(t, c.dt, got)

			got, err = DTypeFromTorchName(c.torch)
			require.NoError(t, err)
			assert.Equal(t, c.dt, got)
			got, err = DTypeFromTorchName(c.name)
			require.NoError(t, err)
			assert.Equal(t, c.dt, got)
		})
	}
}

func TestDTypeUndefinedAndOutOfRange(t *testing.T) {
	assert.Equal(t, 0, Undefined.Size())
	assert.Equal(t, "undefined", Undefined.String())
	assert.Equal(t, "Undefined", Undefined.TorchName())
	assert.Equal(t, int64(-1), Undefined.ScalarType())
	assert.False(t, Undefined.IsFloat())
	assert.False(t, Undefined.IsInt())

	bad := DType(200)
	assert.Equal(t, 0, bad.Size())
	assert.Equal(t, "dtype(200)", bad.String())
	assert.Equal(t, "dtype(200)", bad.TorchName())
	assert.Equal(t, int64(-1), bad.ScalarType())
}

func TestDTypeLookupErrors(t *testing.T) {
	// ScalarType numbers gosr does not support: ComplexHalf=8,
	// ComplexFloat=9, ComplexDouble=10, QInt8=12, ...; -1 is Undefined's
	// internal marker and must not map back to it.
	for _, st := range []int64{-1, 8, 9, 10, 12, 13, 14, 16, 100} {
		dt, err := DTypeFromScalarType(st)
		assert.ErrorContains(t, err, "unsupported ScalarType", "st=%d", st)
		assert.Equal(t, Undefined, dt)
	}
	for _, name := range []string{"", "Undefined", "undefined", "float", "double", "long", "int", "ComplexFloat", "FLOAT"} {
		dt, err := DTypeFromTorchName(name)
		assert.ErrorContains(t, err, "unknown dtype", "name=%q", name)
		assert.Equal(t, Undefined, dt)
	}
}

// halfCases come from PyTorch 1.13:
//
//	f = torch.tensor(vals, dtype=torch.float32)
//	f.view(torch.int32), f.half().view(torch.int16), f.bfloat16().view(torch.int16)
//
// with vals as in the comments, and for the bare bit patterns
// torch.tensor(bits, dtype=torch.int32).view(torch.float32).
var halfCases = []struct {
	f32  uint32
	half uint16
	bf16 uint16
	what string
}{
	{0x00000000, 0x0000, 0x0000, "0.0"},
	{0x80000000, 0x8000, 0x8000, "-0.0"},
	{0x3f800000, 0x3c00, 0x3f80, "1.0"},
	{0xc0000000, 0xc000, 0xc000, "-2.0"},
	{0x3f000000, 0x3800, 0x3f00, "0.5"},
	{0x477fe000, 0x7bff, 0x4780, "65504.0 (max half)"},
	{0x477ff000, 0x7c00, 0x4780, "65520.0 (rounds to half inf)"},
	{0x477fef00, 0x7bff, 0x4780, "65519.0"},
	{0x47c35000, 0x7c00, 0x47c3, "100000.0"},
	{0xc7c35000, 0xfc00, 0xc7c3, "-100000.0"},
	{0x7f800000, 0x7c00, 0x7f80, "inf"},
	{0xff800000, 0xfc00, 0xff80, "-inf"},
	{0x33800000, 0x0001, 0x3380, "5.960464477539063e-08 (smallest half subnormal)"},
	{0x33000000, 0x0000, 0x3300, "2.98e-08 (half tie to even: 0)"},
	{0x33000001, 0x0001, 0x3300, "2.98e-08 + 1ulp (rounds up to half subnormal)"},
	{0x322bcc77, 0x0000, 0x322c, "1e-08"},
	{0x387fc000, 0x03ff, 0x3880, "6.097555160522461e-05 (largest half subnormal)"},
	{0x38800000, 0x0400, 0x3880, "6.103515625e-05 (smallest half normal)"},
	{0x3f802000, 0x3c01, 0x3f80, "1.0009765625"},
	{0x3f801000, 0x3c00, 0x3f80, "1.00048828125 (half tie to even: down)"},
	{0x3f803000, 0x3c02, 0x3f80, "1.00146484375 (half tie to even: up)"},
	{0x3f801800, 0x3c01, 0x3f80, "1.000732421875"},
	{0x45001000, 0x6800, 0x4500, "2049.0 (half tie to even: down)"},
	{0x45003000, 0x6802, 0x4500, "2051.0 (half tie to even: up)"},
	{0x40490fdb, 0x4248, 0x4049, "3.14159265"},
	{0xc0490fdb, 0xc248, 0xc049, "-3.14159265"},
	{0x3dcccccd, 0x2e66, 0x3dcd, "0.1"},
	{0x3eaaaaab, 0x3555, 0x3eab, "1/3"},
	{0x3f808000, 0x3c04, 0x3f80, "bf16 tie to even: down"},
	{0x3f818000, 0x3c0c, 0x3f82, "bf16 tie to even: up"},
	{0x3f808001, 0x3c04, 0x3f81, "bf16 just above tie"},
	{0x3f80ffff, 0x3c08, 0x3f81, "bf16 round up"},
	{0x7f7fffff, 0x7c00, 0x7f80, "max float32 (bf16 rounds to inf)"},
	{0x00000001, 0x0000, 0x0000, "smallest float32 subnormal"},
	{0x807fffff, 0x8000, 0x8080, "-largest float32 subnormal (bf16 carries into exponent)"},
	{0x3f7fffff, 0x3c00, 0x3f80, "1-ulp"},
}

func TestFloat32ToHalfAndBFloat16(t *testing.T) {
	for _, c := range halfCases {
		f := math.Float32frombits(c.f32)
		assert.Equal(t, c.half, Float32ToHalf(f), "half(%s) = %#04x, want %#04x", c.what, Float32ToHalf(f), c.half)
		assert.Equal(t, c.bf16, Float32ToBFloat16(f), "bfloat16(%s) = %#04x, want %#04x", c.what, Float32ToBFloat16(f), c.bf16)
	}
}

func TestFloat32ToHalfNaN(t *testing.T) {
	// torch.tensor([nan, -nan, <0x7f800001>, <0xffc00000>]).half().view(torch.int16):
	// half keeps the sign and gives the canonical quiet NaN.
	cases := []struct {
		f32  uint32
		half uint16
	}{
		{0x7fc00000, 0x7e00},
		{0xffc00000, 0xfe00},
		{0x7f800001, 0x7e00}, // signalling NaN becomes quiet
	}
	for _, c := range cases {
		f := math.Float32frombits(c.f32)
		h := Float32ToHalf(f)
		assert.Equal(t, c.half, h, "half(%#08x) = %#04x", c.f32, h)
		assert.True(t, math.IsNaN(float64(HalfToFloat32(h))))
	}
	// bfloat16 of any NaN: c10::BFloat16's scalar conversion
	// (round_to_nearest_even) gives 0x7fc0, as
	// torch.tensor(float('nan'), dtype=torch.bfloat16) shows. (PyTorch's
	// vectorized .bfloat16() path gives 0xffff instead; both are NaN.)
	for _, bits := range []uint32{0x7fc00000, 0xffc00000, 0x7f800001, 0x7fffffff} {
		b := Float32ToBFloat16(math.Float32frombits(bits))
		assert.Equal(t, uint16(0x7fc0), b, "bfloat16(%#08x)", bits)
		assert.True(t, math.IsNaN(float64(BFloat16ToFloat32(b))))
	}
	assert.Equal(t, uint16(0x7fc0), Float32ToBFloat16(float32(math.NaN())))
}

func TestHalfAndBFloat16ToFloat32(t *testing.T) {
	// torch.tensor(bits, dtype=torch.int16).view(torch.float16).float().view(torch.int32)
	// and the same with torch.bfloat16.
	cases := []struct {
		bits       uint16
		half, bf16 uint32
	}{
		{0x0000, 0x00000000, 0x00000000},
		{0x8000, 0x80000000, 0x80000000},
		{0x0001, 0x33800000, 0x00010000},
		{0x03ff, 0x387fc000, 0x03ff0000},
		{0x0400, 0x38800000, 0x04000000},
		{0x3c00, 0x3f800000, 0x3c000000},
		{0xc000, 0xc0000000, 0xc0000000},
		{0x7bff, 0x477fe000, 0x7bff0000},
		{0x7c00, 0x7f800000, 0x7c000000},
		{0xfc00, 0xff800000, 0xfc000000},
		{0x7e00, 0x7fc00000, 0x7e000000},
		{0x3555, 0x3eaaa000, 0x35550000},
		{0x8001, 0xb3800000, 0x80010000},
		{0x7f80, 0x7ff00000, 0x7f800000}, // half NaN with payload, bf16 inf
		{0x7fc0, 0x7ff80000, 0x7fc00000}, // NaN in both
	}
	for _, c := range cases {
		assert.Equal(t, c.half, math.Float32bits(HalfToFloat32(c.bits)), "half %#04x", c.bits)
		assert.Equal(t, c.bf16, math.Float32bits(BFloat16ToFloat32(c.bits)), "bf16 %#04x", c.bits)
	}
}

// TestHalfRoundTrip checks every non-NaN 16-bit pattern survives a trip
// through float32 both ways.
func TestHalfRoundTrip(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		if f := HalfToFloat32(h); !math.IsNaN(float64(f)) {
			if got := Float32ToHalf(f); got != h {
				t.Fatalf("half %#04x -> %v -> %#04x", h, f, got)
			}
		}
		if f := BFloat16ToFloat32(h); !math.IsNaN(float64(f)) {
			if got := Float32ToBFloat16(f); got != h {
				t.Fatalf("bf16 %#04x -> %v -> %#04x", h, f, got)
			}
		}
	}
}
