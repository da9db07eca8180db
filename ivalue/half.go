package ivalue

import (
	"math"

	"github.com/x448/float16"
)

// HalfToFloat32 converts an IEEE 754 binary16 bit pattern.
func HalfToFloat32(h uint16) float32 { return float16.Frombits(h).Float32() }

// Float32ToHalf rounds f to the nearest binary16 bit pattern.
func Float32ToHalf(f float32) uint16 { return float16.Fromfloat32(f).Bits() }

// BFloat16ToFloat32 widens a bfloat16 bit pattern.
func BFloat16ToFloat32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// Float32ToBFloat16 rounds f to nearest-even bfloat16, as PyTorch does.
func Float32ToBFloat16(f float32) uint16 {
	b := math.Float32bits(f)
	if f != f {
		return 0x7fc0
	}
	return uint16((b + 0x7fff + (b>>16)&1) >> 16)
}
