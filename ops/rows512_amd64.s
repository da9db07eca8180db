//go:build amd64 && !purego

#include "textflag.h"

// Row kernels for the squeeze-and-excitation blocks of the vision
// models (see [Channel rows]): each row is one channel's plane, and the
// last inner%16 floats of a row go through the mask in K1, so a row of
// 49 (a 7x7 map) is three vectors and a masked one, with no scalar
// tail and no call per row.

// LOWMASK sets mask register K to the low CX lanes (CX at most 16;
// AX clobbered).
#define LOWMASK(K) \
	MOVL  $1, AX; \
	SHLL  CX, AX; \
	DECL  AX; \
	KMOVW AX, K

// ROWMASK sets K1 to the low inner%16 lanes (inner in R9), R10 to the
// full vectors of a row and R11 to the masked floats' bytes.
#define ROWMASK \
	MOVQ R9, CX; \
	ANDQ $15, CX; \
	LOWMASK(K1); \
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

// avgEven and avgOdd pick a pair of vectors' even and odd lanes
// (VPERMT2PS indices: 16 and up are the second vector's).
DATA avgEven<>+0(SB)/4, $0
DATA avgEven<>+4(SB)/4, $2
DATA avgEven<>+8(SB)/4, $4
DATA avgEven<>+12(SB)/4, $6
DATA avgEven<>+16(SB)/4, $8
DATA avgEven<>+20(SB)/4, $10
DATA avgEven<>+24(SB)/4, $12
DATA avgEven<>+28(SB)/4, $14
DATA avgEven<>+32(SB)/4, $16
DATA avgEven<>+36(SB)/4, $18
DATA avgEven<>+40(SB)/4, $20
DATA avgEven<>+44(SB)/4, $22
DATA avgEven<>+48(SB)/4, $24
DATA avgEven<>+52(SB)/4, $26
DATA avgEven<>+56(SB)/4, $28
DATA avgEven<>+60(SB)/4, $30
GLOBL avgEven<>(SB), RODATA|NOPTR, $64
DATA avgOdd<>+0(SB)/4, $1
DATA avgOdd<>+4(SB)/4, $3
DATA avgOdd<>+8(SB)/4, $5
DATA avgOdd<>+12(SB)/4, $7
DATA avgOdd<>+16(SB)/4, $9
DATA avgOdd<>+20(SB)/4, $11
DATA avgOdd<>+24(SB)/4, $13
DATA avgOdd<>+28(SB)/4, $15
DATA avgOdd<>+32(SB)/4, $17
DATA avgOdd<>+36(SB)/4, $19
DATA avgOdd<>+40(SB)/4, $21
DATA avgOdd<>+44(SB)/4, $23
DATA avgOdd<>+48(SB)/4, $25
DATA avgOdd<>+52(SB)/4, $27
DATA avgOdd<>+56(SB)/4, $29
DATA avgOdd<>+60(SB)/4, $31
GLOBL avgOdd<>(SB), RODATA|NOPTR, $64

// AVGPAIRS sets Z0 to the averages of sixteen 2x2 windows from the two
// vectors of each input row at AX (Z0, Z1) and BX (Z3, Z4), loaded by
// the caller: ((a + b) + c) + d, then divided by Z7.
#define AVGPAIRS \
	VMOVAPS   Z0, Z2; \
	VPERMT2PS Z1, Z5, Z0; \
	VPERMT2PS Z1, Z6, Z2; \
	VADDPS    Z2, Z0, Z0; \
	VMOVAPS   Z3, Z2; \
	VPERMT2PS Z4, Z5, Z3; \
	VPERMT2PS Z4, Z6, Z2; \
	VADDPS    Z3, Z0, Z0; \
	VADDPS    Z2, Z0, Z0; \
	VDIVPS    Z7, Z0, Z0

// func avgPool2x2RowsAVX512(dst, src *float32, rows, ow, sH int, div float32)
// dst[r*ow+j] = (((x[2j] + x[2j+1]) + y[2j]) + y[2j+1]) / div for
// r < rows, j < ow, x the input row at src + 2*r*sH, y the next one
// (sH floats on): a 2x2 average pooling at stride 2, sixteen outputs a
// step, the row's last ow%16 under masks.
TEXT ·avgPool2x2RowsAVX512(SB), NOSPLIT, $0-44
	MOVQ         dst+0(FP), DI
	MOVQ         src+8(FP), SI
	MOVQ         rows+16(FP), R8
	MOVQ         ow+24(FP), R9
	MOVQ         sH+32(FP), R12
	SHLQ         $2, R12
	VBROADCASTSS div+40(FP), Z7
	VMOVUPS      avgEven<>(SB), Z5
	VMOVUPS      avgOdd<>(SB), Z6

	// K1: the tail's outputs (rem = ow%16 lanes); K2 and K3: its
	// 2*rem inputs in each input vector.
	MOVQ R9, R11
	ANDQ $15, R11
	MOVQ R11, CX
	LOWMASK(K1)
	MOVQ R11, DX
	SHLQ $1, DX
	MOVQ DX, CX
	CMPQ CX, $16
	JLE  apk2
	MOVQ $16, CX

apk2:
	LOWMASK(K2)
	SUBQ $16, DX
	JGE  apk3
	XORQ DX, DX

apk3:
	MOVQ DX, CX
	LOWMASK(K3)
	MOVQ R9, R10
	SHRQ  $4, R10

aprow:
	TESTQ R8, R8
	JEQ   apdone
	MOVQ  SI, AX
	LEAQ  (SI)(R12*1), BX
	MOVQ  DI, DX
	MOVQ  R10, CX
	TESTQ CX, CX
	JEQ   aptail

apvec:
	VMOVUPS (AX), Z0
	VMOVUPS 64(AX), Z1
	VMOVUPS (BX), Z3
	VMOVUPS 64(BX), Z4
	AVGPAIRS
	VMOVUPS Z0, (DX)
	ADDQ    $128, AX
	ADDQ    $128, BX
	ADDQ    $64, DX
	DECQ    CX
	JNE     apvec

aptail:
	TESTQ     R11, R11
	JEQ       apnext
	VMOVUPS.Z (AX), K2, Z0
	VMOVUPS.Z 64(AX), K3, Z1
	VMOVUPS.Z (BX), K2, Z3
	VMOVUPS.Z 64(BX), K3, Z4
	AVGPAIRS
	VMOVUPS   Z0, K1, (DX)

apnext:
	LEAQ (SI)(R12*2), SI
	LEAQ (DI)(R9*4), DI
	DECQ R8
	JMP  aprow

apdone:
	VZEROUPPER
	RET
