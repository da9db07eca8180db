//go:build amd64 && !purego

#include "textflag.h"

// The vectorised silu and gelu sixteen lanes at a time: the AVX2 loops
// of rnn_act_amd64.s with the same instructions in the same order, so
// each lane's result is the same bits. The constants of rnnActTab (rows
// 32 bytes apart) are broadcast into registers once.

// LOADCONSTS16: Z16 ln2 hi, Z17 ln2 lo, Z18-Z23 the exp polynomial,
// Z24 the exponent bias, Z25 the absolute-value mask, Z26 the sign
// bit, Z11 2, Z12 log2(e), Z13 1, Z14 and Z15 exp's largest and
// smallest argument.
#define LOADCONSTS16 \
	VBROADCASTSS 0(R8), Z16; \
	VBROADCASTSS 32(R8), Z17; \
	VBROADCASTSS 64(R8), Z18; \
	VBROADCASTSS 96(R8), Z19; \
	VBROADCASTSS 128(R8), Z20; \
	VBROADCASTSS 160(R8), Z21; \
	VBROADCASTSS 192(R8), Z22; \
	VBROADCASTSS 224(R8), Z23; \
	VPBROADCASTD 256(R8), Z24; \
	VPBROADCASTD 288(R8), Z25; \
	VPBROADCASTD 320(R8), Z26; \
	VBROADCASTSS 576(R8), Z11; \
	VBROADCASTSS 608(R8), Z12; \
	VBROADCASTSS 640(R8), Z13; \
	VBROADCASTSS 672(R8), Z14; \
	VBROADCASTSS 704(R8), Z15

// EXP16: Z0 = e**Z0, using Z1-Z3 (EXP8's steps).
#define EXP16 \
	VMINPS Z0, Z14, Z0; \
	VMAXPS Z0, Z15, Z0; \
	VMULPS Z12, Z0, Z1; \
	VRNDSCALEPS $0, Z1, Z1; \
	VFNMADD231PS Z16, Z1, Z0; \
	VFNMADD231PS Z17, Z1, Z0; \
	VMOVAPS Z18, Z2; \
	VFMADD213PS Z19, Z0, Z2; \
	VFMADD213PS Z20, Z0, Z2; \
	VFMADD213PS Z21, Z0, Z2; \
	VFMADD213PS Z22, Z0, Z2; \
	VFMADD213PS Z23, Z0, Z2; \
	VMULPS Z0, Z0, Z3; \
	VFMADD213PS Z0, Z3, Z2; \
	VADDPS Z13, Z2, Z2; \
	VCVTPS2DQ Z1, Z1; \
	VPADDD Z24, Z1, Z1; \
	VPSLLD $23, Z1, Z1; \
	VMULPS Z1, Z2, Z0

// EXP16X2 is EXP16 on Z0 (Z1-Z3) and Z4 (Z5-Z7), interleaved (see
// EXP8X2).
#define EXP16X2 \
	VMINPS Z0, Z14, Z0; \
	VMINPS Z4, Z14, Z4; \
	VMAXPS Z0, Z15, Z0; \
	VMAXPS Z4, Z15, Z4; \
	VMULPS Z12, Z0, Z1; \
	VMULPS Z12, Z4, Z5; \
	VRNDSCALEPS $0, Z1, Z1; \
	VRNDSCALEPS $0, Z5, Z5; \
	VFNMADD231PS Z16, Z1, Z0; \
	VFNMADD231PS Z16, Z5, Z4; \
	VFNMADD231PS Z17, Z1, Z0; \
	VFNMADD231PS Z17, Z5, Z4; \
	VMOVAPS Z18, Z2; \
	VMOVAPS Z18, Z6; \
	VFMADD213PS Z19, Z0, Z2; \
	VFMADD213PS Z19, Z4, Z6; \
	VFMADD213PS Z20, Z0, Z2; \
	VFMADD213PS Z20, Z4, Z6; \
	VFMADD213PS Z21, Z0, Z2; \
	VFMADD213PS Z21, Z4, Z6; \
	VFMADD213PS Z22, Z0, Z2; \
	VFMADD213PS Z22, Z4, Z6; \
	VFMADD213PS Z23, Z0, Z2; \
	VFMADD213PS Z23, Z4, Z6; \
	VMULPS Z0, Z0, Z3; \
	VMULPS Z4, Z4, Z7; \
	VFMADD213PS Z0, Z3, Z2; \
	VFMADD213PS Z4, Z7, Z6; \
	VADDPS Z13, Z2, Z2; \
	VADDPS Z13, Z6, Z6; \
	VCVTPS2DQ Z1, Z1; \
	VCVTPS2DQ Z5, Z5; \
	VPADDD Z24, Z1, Z1; \
	VPADDD Z24, Z5, Z5; \
	VPSLLD $23, Z1, Z1; \
	VPSLLD $23, Z5, Z5; \
	VMULPS Z1, Z2, Z0; \
	VMULPS Z5, Z6, Z4

// func siluAVX512(o, a *float32, n int, tab *[rnnActRows][8]uint32)
// siluAVX2 for n a multiple of 16: x*sigmoid(x), the sigmoid 0 below
// -88 (zeroed before the product, as siluAVX2 does, so a signed zero
// comes out the same). o may be a.
TEXT ·siluAVX512(SB), NOSPLIT, $0-32
	MOVQ o+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ tab+24(FP), R8
	LOADCONSTS16
	VPXORD Z26, Z14, Z10 // -88

sz32:
	CMPQ CX, $32
	JLT  sz16
	VMOVUPS (SI), Z8
	VMOVUPS 64(SI), Z9
	VPXORD Z26, Z8, Z0
	VPXORD Z26, Z9, Z4
	EXP16X2
	VADDPS Z13, Z0, Z0
	VADDPS Z13, Z4, Z4
	VDIVPS Z0, Z13, Z0
	VDIVPS Z4, Z13, Z4
	VCMPPS $5, Z10, Z8, K1 // not x < -88
	VCMPPS $5, Z10, Z9, K2
	VMOVAPS.Z Z0, K1, Z0
	VMOVAPS.Z Z4, K2, Z4
	VMULPS Z0, Z8, Z0
	VMULPS Z4, Z9, Z4
	VMOVUPS Z0, (DI)
	VMOVUPS Z4, 64(DI)
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JMP  sz32

sz16:
	CMPQ CX, $16
	JLT  szdone
	VMOVUPS (SI), Z8
	VPXORD Z26, Z8, Z0
	EXP16
	VADDPS Z13, Z0, Z0
	VDIVPS Z0, Z13, Z0
	VCMPPS $5, Z10, Z8, K1
	VMOVAPS.Z Z0, K1, Z0
	VMULPS Z0, Z8, Z0
	VMOVUPS Z0, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  sz16

szdone:
	VZEROUPPER
	RET

// func geluAVX512(o, a *float32, n int, tab *[rnnActRows][8]uint32)
// rnnGeluAVX2 for n a multiple of 16; o may be a. The erf constants
// (rows 23-30) are read as embedded broadcasts.
TEXT ·geluAVX512(SB), NOSPLIT, $0-32
	MOVQ o+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ tab+24(FP), R8
	LOADCONSTS16
	VBROADCASTSS 736(R8), Z27 // erf's p
	VBROADCASTSS 928(R8), Z28 // 1/sqrt(2)
	VBROADCASTSS 960(R8), Z29 // 0.5
	VBROADCASTSS 896(R8), Z30 // a5

gz16:
	CMPQ CX, $16
	JLT  gzdone
	VMOVUPS (SI), Z4
	VMULPS Z28, Z4, Z5
	VPANDD Z25, Z5, Z8
	VMOVAPS Z27, Z6
	VFMADD213PS Z13, Z8, Z6
	VDIVPS Z6, Z13, Z6
	VMOVAPS Z30, Z7
	VFMADD213PS.BCST 864(R8), Z6, Z7
	VFMADD213PS.BCST 832(R8), Z6, Z7
	VFMADD213PS.BCST 800(R8), Z6, Z7
	VFMADD213PS.BCST 768(R8), Z6, Z7
	VMULPS Z6, Z7, Z7
	VMULPS Z8, Z8, Z0
	VPXORD Z26, Z0, Z0
	EXP16
	VMULPS Z7, Z0, Z0
	VSUBPS Z0, Z13, Z0
	VPANDD Z26, Z5, Z9
	VPORD Z9, Z0, Z0
	VADDPS Z13, Z0, Z0
	VMULPS Z29, Z4, Z10
	VMULPS Z10, Z0, Z0
	VMOVUPS Z0, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  gz16

gzdone:
	VZEROUPPER
	RET

// func hardAVX512(o, a *float32, n int, swish int)
// hardAVX2 for n a multiple of 16, without its division: c = x+3
// clamped to [0, 6], q = c*r with r = 1/6 rounded, then q corrected by
// the fused remainder e = c - 6q (exact) as q + e*r, which is c/6
// correctly rounded for every c (TestHardAVX512Exhaustive), so the
// bits are hardAVX2's. A 16-lane division issues once every few cycles
// here; this is three multiply-adds. o may be a.
TEXT ·hardAVX512(SB), NOSPLIT, $0-32
	MOVQ o+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ swish+24(FP), R8
	SHRQ $4, CX
	JEQ  h5done
	MOVL $0x40400000, AX // 3
	VPBROADCASTD AX, Z4
	MOVL $0x40c00000, AX // 6
	VPBROADCASTD AX, Z5
	MOVL $0x3e2aaaab, AX // 1/6 rounded to nearest
	VPBROADCASTD AX, Z7
	VPXORD Z6, Z6, Z6

h5loop:
	VMOVUPS (SI), Z0
	VADDPS Z4, Z0, Z1
	VMAXPS Z1, Z6, Z1 // NaN passing, as hardAVX2
	VMINPS Z1, Z5, Z1
	VMULPS Z7, Z1, Z2
	VMOVAPS Z1, Z3
	VFNMADD231PS Z5, Z2, Z3 // e = c - 6q
	VFMADD231PS Z7, Z3, Z2  // q + e*r
	TESTQ R8, R8
	JEQ  2(PC)
	VMULPS Z2, Z0, Z2
	VMOVUPS Z2, (DI)
	ADDQ $64, SI
	ADDQ $64, DI
	DECQ CX
	JNE  h5loop

h5done:
	VZEROUPPER
	RET
