//go:build amd64 && !purego

#include "textflag.h"

// Row kernels for the squeeze-and-excitation blocks of the vision
// models (see [Channel rows]): each row is one channel's plane, and the
// last inner%16 floats of a row go through the mask in K1, so a row of
// 49 (a 7x7 map) is three vectors and a masked one, with no scalar
// tail and no call per row.

// ROWMASK sets K1 to the low inner%16 lanes (inner in R9), R10 to the
// full vectors of a row and R11 to the masked floats' bytes.
#define ROWMASK \
	MOVQ R9, CX; \
	ANDQ $15, CX; \
	MOVL $1, AX; \
	SHLL CX, AX; \
	DECL AX; \
	KMOVW AX, K1; \
	MOVQ R9, R10; \
	SHRQ $4, R10; \
	LEAQ (CX*4), R11

// func scaleRowsAVX512(o, a, s *float32, rows, inner int)
// o[r*inner+i] = a[r*inner+i] * s[r] for r < rows, i < inner.
TEXT ·scaleRowsAVX512(SB), NOSPLIT, $0-40
	MOVQ o+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ s+16(FP), DX
	MOVQ rows+24(FP), R8
	MOVQ inner+32(FP), R9
	ROWMASK

srrow:
	TESTQ R8, R8
	JEQ   srdone
	VBROADCASTSS (DX), Z1
	MOVQ  R10, CX
	TESTQ CX, CX
	JEQ   srtail

srvec:
	VMULPS  (SI), Z1, Z0
	VMOVUPS Z0, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	DECQ    CX
	JNE     srvec

srtail:
	VMOVUPS.Z (SI), K1, Z0
	VMULPS    Z1, Z0, Z0
	VMOVUPS   Z0, K1, (DI)
	ADDQ      R11, SI
	ADDQ      R11, DI
	ADDQ      $4, DX
	DECQ      R8
	JMP       srrow

srdone:
	VZEROUPPER
	RET

// func meanRowsAVX512(dst, src *float32, rows, inner int)
// dst[r] = (the sum of src[r*inner : (r+1)*inner]) / float32(inner),
// the sum over four vectors of partial sums (64 floats a step), then
// one (16), then the masked tail, added pairwise and across lanes.
TEXT ·meanRowsAVX512(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ rows+16(FP), R8
	MOVQ inner+24(FP), R9
	ROWMASK
	VCVTSI2SSQ R9, X7, X7 // the divisor

mrrow:
	TESTQ  R8, R8
	JEQ    mrdone
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	MOVQ   R10, CX

mr4:
	CMPQ   CX, $4
	JLT    mr1
	VADDPS (SI), Z0, Z0
	VADDPS 64(SI), Z1, Z1
	VADDPS 128(SI), Z2, Z2
	VADDPS 192(SI), Z3, Z3
	ADDQ   $256, SI
	SUBQ   $4, CX
	JMP    mr4

mr1:
	TESTQ  CX, CX
	JEQ    mrtail
	VADDPS (SI), Z0, Z0
	ADDQ   $64, SI
	DECQ   CX
	JMP    mr1

mrtail:
	VMOVUPS.Z     (SI), K1, Z4
	VADDPS        Z4, Z1, Z1
	ADDQ          R11, SI
	VADDPS        Z1, Z0, Z0
	VADDPS        Z3, Z2, Z2
	VADDPS        Z2, Z0, Z0
	VEXTRACTF64X4 $1, Z0, Y1
	VADDPS        Y1, Y0, Y0
	VEXTRACTF128  $1, Y0, X1
	VADDPS        X1, X0, X0
	VPERMILPS     $0x4E, X0, X1
	VADDPS        X1, X0, X0
	VPERMILPS     $0xB1, X0, X1
	VADDSS        X1, X0, X0
	VDIVSS        X7, X0, X0
	VMOVSS        X0, (DI)
	ADDQ          $4, DI
	DECQ          R8
	JMP           mrrow

mrdone:
	VZEROUPPER
	RET

// AFFINE16(x) is x = clamp(x*Z1 + Z2) with the clamp to [Z6, Z7] as
// normAffineAVX2's (NaN passing) when R12 is not zero.
#define AFFINE16(X) \
	VMULPS Z1, X, X; \
	VADDPS Z2, X, X; \
	TESTQ  R12, R12; \
	JEQ    3(PC); \
	VMAXPS X, Z6, X; \
	VMINPS X, Z7, X

// func affineRowsAVX512(o, a, sc, sh *float32, rows, inner int, lo, hi float32, clamp int)
// o[r*inner+i] = a[r*inner+i]*sc[r] + sh[r] (a multiply, then an add,
// as scaleShift rounds), clamped to [lo, hi] as scaleShiftClamp clamps
// when clamp is not zero: a batch norm's rows (see [Channel rows]).
TEXT ·affineRowsAVX512(SB), NOSPLIT, $0-64
	MOVQ o+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ sc+16(FP), DX
	MOVQ sh+24(FP), BX
	MOVQ rows+32(FP), R8
	MOVQ inner+40(FP), R9
	VBROADCASTSS lo+48(FP), Z6
	VBROADCASTSS hi+52(FP), Z7
	MOVQ clamp+56(FP), R12
	ROWMASK

afrow:
	TESTQ R8, R8
	JEQ   afdone
	VBROADCASTSS (DX), Z1
	VBROADCASTSS (BX), Z2
	MOVQ  R10, CX
	TESTQ CX, CX
	JEQ   aftail

afvec:
	VMOVUPS (SI), Z0
	AFFINE16(Z0)
	VMOVUPS Z0, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	DECQ    CX
	JNE     afvec

aftail:
	VMOVUPS.Z (SI), K1, Z0
	AFFINE16(Z0)
	VMOVUPS   Z0, K1, (DI)
	ADDQ      R11, SI
	ADDQ      R11, DI
	ADDQ      $4, DX
	ADDQ      $4, BX
	DECQ      R8
	JMP       afrow

afdone:
	VZEROUPPER
	RET
