//go:build amd64 && !purego

#include "textflag.h"

// ROWSSTART, ROWSWEIGHTS and ROWSNEXT are the walk ROWSCHUNK and
// ROWSHALF share: R9 to the first input channel's offset, CX to the
// chunk's columns, R12 and BX to weight rows 0 and 4, R10 counting the
// k channels; the eight weights of channel q broadcast into Z20-Z27;
// the next channel, and after the last, R13 to the chunk's residual
// rows (R10 their stride) or a jump to NORES without one.
#define ROWSSTART \
	MOVQ offs+24(FP), R9; \
	LEAQ (SI)(R11*1), CX; \
	MOVQ w+40(FP), R12; \
	LEAQ (R12)(R14*4), BX; \
	MOVQ k+32(FP), R10
#define ROWSWEIGHTS \
	VBROADCASTSS (R12), Z20; \
	VBROADCASTSS (R12)(R14*1), Z21; \
	VBROADCASTSS (R12)(R14*2), Z22; \
	VBROADCASTSS (R12)(R15*1), Z23; \
	VBROADCASTSS (BX), Z24; \
	VBROADCASTSS (BX)(R14*1), Z25; \
	VBROADCASTSS (BX)(R14*2), Z26; \
	VBROADCASTSS (BX)(R15*1), Z27
#define ROWSNEXT(QLOOP, NORES) \
	ADDQ $8, R9; \
	ADDQ $4, R12; \
	ADDQ $4, BX; \
	DECQ R10; \
	JNE  QLOOP; \
	MOVQ res+88(FP), R13; \
	TESTQ R13, R13; \
	JEQ  NORES; \
	ADDQ R11, R13; \
	MOVQ ldr+96(FP), R10

// ROWSCHUNK computes one chunk of 32 columns (R11 bytes in) for the
// eight output channels of rows8x32AVX512: Z(2r), Z(2r+1) row r's two
// halves, started from its bias (AX), then for each input channel q
// the 32 floats of its row at SI + R11 + 4*offs[q] (CX holds SI + R11,
// R9 walks offs; K1 and K2 mask each half) times the eight weights w[r*k + q] (R12 and
// BX walk rows 0-3 and 4-7, R14 = 4k bytes apart, R15 = 12k), the
// residual rows (nil: none) added, the clamp to [Z18, Z19], the rows
// stored under the masks. PF follows each input row's load, RPF each
// residual row's, OPF each output row's store (the prefetches of
// [Prefetched rows] in rows.go, or NOPREFETCH).
#define ROWSCHUNK(QLOOP, NORES, PF, RPF, OPF) \
	VBROADCASTSS 0(AX), Z0; \
	VBROADCASTSS 4(AX), Z2; \
	VBROADCASTSS 8(AX), Z4; \
	VBROADCASTSS 12(AX), Z6; \
	VBROADCASTSS 16(AX), Z8; \
	VBROADCASTSS 20(AX), Z10; \
	VBROADCASTSS 24(AX), Z12; \
	VBROADCASTSS 28(AX), Z14; \
	VMOVAPS Z0, Z1; \
	VMOVAPS Z2, Z3; \
	VMOVAPS Z4, Z5; \
	VMOVAPS Z6, Z7; \
	VMOVAPS Z8, Z9; \
	VMOVAPS Z10, Z11; \
	VMOVAPS Z12, Z13; \
	VMOVAPS Z14, Z15; \
	ROWSSTART; \
QLOOP: \
	MOVQ (R9), DX; \
	VMOVUPS.Z (CX)(DX*4), K1, Z16; \
	VMOVUPS.Z 64(CX)(DX*4), K2, Z17; \
	PF; \
	ROWSWEIGHTS; \
	VFMADD231PS Z20, Z16, Z0; \
	VFMADD231PS Z20, Z17, Z1; \
	VFMADD231PS Z21, Z16, Z2; \
	VFMADD231PS Z21, Z17, Z3; \
	VFMADD231PS Z22, Z16, Z4; \
	VFMADD231PS Z22, Z17, Z5; \
	VFMADD231PS Z23, Z16, Z6; \
	VFMADD231PS Z23, Z17, Z7; \
	VFMADD231PS Z24, Z16, Z8; \
	VFMADD231PS Z24, Z17, Z9; \
	VFMADD231PS Z25, Z16, Z10; \
	VFMADD231PS Z25, Z17, Z11; \
	VFMADD231PS Z26, Z16, Z12; \
	VFMADD231PS Z26, Z17, Z13; \
	VFMADD231PS Z27, Z16, Z14; \
	VFMADD231PS Z27, Z17, Z15; \
	ROWSNEXT(QLOOP, NORES); \
	VMOVUPS.Z (R13), K1, Z20; \
	VMOVUPS.Z 64(R13), K2, Z21; \
	RPF; \
	VADDPS Z20, Z0, Z0; \
	VADDPS Z21, Z1, Z1; \
	ADDQ R10, R13; \
	VMOVUPS.Z (R13), K1, Z20; \
	VMOVUPS.Z 64(R13), K2, Z21; \
	RPF; \
	VADDPS Z20, Z2, Z2; \
	VADDPS Z21, Z3, Z3; \
	ADDQ R10, R13; \
	VMOVUPS.Z (R13), K1, Z20; \
	VMOVUPS.Z 64(R13), K2, Z21; \
	RPF; \
	VADDPS Z20, Z4, Z4; \
	VADDPS Z21, Z5, Z5; \
	ADDQ R10, R13; \
	VMOVUPS.Z (R13), K1, Z20; \
	VMOVUPS.Z 64(R13), K2, Z21; \
	RPF; \
	VADDPS Z20, Z6, Z6; \
	VADDPS Z21, Z7, Z7; \
	ADDQ R10, R13; \
	VMOVUPS.Z (R13), K1, Z20; \
	VMOVUPS.Z 64(R13), K2, Z21; \
	RPF; \
	VADDPS Z20, Z8, Z8; \
	VADDPS Z21, Z9, Z9; \
	ADDQ R10, R13; \
	VMOVUPS.Z (R13), K1, Z20; \
	VMOVUPS.Z 64(R13), K2, Z21; \
	RPF; \
	VADDPS Z20, Z10, Z10; \
	VADDPS Z21, Z11, Z11; \
	ADDQ R10, R13; \
	VMOVUPS.Z (R13), K1, Z20; \
	VMOVUPS.Z 64(R13), K2, Z21; \
	RPF; \
	VADDPS Z20, Z12, Z12; \
	VADDPS Z21, Z13, Z13; \
	ADDQ R10, R13; \
	VMOVUPS.Z (R13), K1, Z20; \
	VMOVUPS.Z 64(R13), K2, Z21; \
	RPF; \
	VADDPS Z20, Z14, Z14; \
	VADDPS Z21, Z15, Z15; \
	ADDQ R10, R13; \
NORES: \
	LEAQ (DI)(R11*1), DX; \
	VMAXPS Z0, Z18, Z0; \
	VMAXPS Z1, Z18, Z1; \
	VMINPS Z0, Z19, Z0; \
	VMINPS Z1, Z19, Z1; \
	VMOVUPS Z0, K1, (DX); \
	VMOVUPS Z1, K2, 64(DX); \
	OPF; \
	ADDQ R8, DX; \
	VMAXPS Z2, Z18, Z2; \
	VMAXPS Z3, Z18, Z3; \
	VMINPS Z2, Z19, Z2; \
	VMINPS Z3, Z19, Z3; \
	VMOVUPS Z2, K1, (DX); \
	VMOVUPS Z3, K2, 64(DX); \
	OPF; \
	ADDQ R8, DX; \
	VMAXPS Z4, Z18, Z4; \
	VMAXPS Z5, Z18, Z5; \
	VMINPS Z4, Z19, Z4; \
	VMINPS Z5, Z19, Z5; \
	VMOVUPS Z4, K1, (DX); \
	VMOVUPS Z5, K2, 64(DX); \
	OPF; \
	ADDQ R8, DX; \
	VMAXPS Z6, Z18, Z6; \
	VMAXPS Z7, Z18, Z7; \
	VMINPS Z6, Z19, Z6; \
	VMINPS Z7, Z19, Z7; \
	VMOVUPS Z6, K1, (DX); \
	VMOVUPS Z7, K2, 64(DX); \
	OPF; \
	ADDQ R8, DX; \
	VMAXPS Z8, Z18, Z8; \
	VMAXPS Z9, Z18, Z9; \
	VMINPS Z8, Z19, Z8; \
	VMINPS Z9, Z19, Z9; \
	VMOVUPS Z8, K1, (DX); \
	VMOVUPS Z9, K2, 64(DX); \
	OPF; \
	ADDQ R8, DX; \
	VMAXPS Z10, Z18, Z10; \
	VMAXPS Z11, Z18, Z11; \
	VMINPS Z10, Z19, Z10; \
	VMINPS Z11, Z19, Z11; \
	VMOVUPS Z10, K1, (DX); \
	VMOVUPS Z11, K2, 64(DX); \
	OPF; \
	ADDQ R8, DX; \
	VMAXPS Z12, Z18, Z12; \
	VMAXPS Z13, Z18, Z13; \
	VMINPS Z12, Z19, Z12; \
	VMINPS Z13, Z19, Z13; \
	VMOVUPS Z12, K1, (DX); \
	VMOVUPS Z13, K2, 64(DX); \
	OPF; \
	ADDQ R8, DX; \
	VMAXPS Z14, Z18, Z14; \
	VMAXPS Z15, Z18, Z15; \
	VMINPS Z14, Z19, Z14; \
	VMINPS Z15, Z19, Z15; \
	VMOVUPS Z14, K1, (DX); \
	VMOVUPS Z15, K2, 64(DX); \
	OPF; \
	ADDQ R8, DX

// ROWSHALF is ROWSCHUNK for a last chunk of at most 16 columns: one
// register a row (Z(2r), under K1), eight FMAs an input channel where
// ROWSCHUNK's sixteen would multiply a half of zeros.
#define ROWSHALF(QLOOP, NORES) \
	VBROADCASTSS 0(AX), Z0; \
	VBROADCASTSS 4(AX), Z2; \
	VBROADCASTSS 8(AX), Z4; \
	VBROADCASTSS 12(AX), Z6; \
	VBROADCASTSS 16(AX), Z8; \
	VBROADCASTSS 20(AX), Z10; \
	VBROADCASTSS 24(AX), Z12; \
	VBROADCASTSS 28(AX), Z14; \
	ROWSSTART; \
QLOOP:; \
	MOVQ (R9), DX; \
	VMOVUPS.Z (CX)(DX*4), K1, Z16; \
	ROWSWEIGHTS; \
	VFMADD231PS Z20, Z16, Z0; \
	VFMADD231PS Z21, Z16, Z2; \
	VFMADD231PS Z22, Z16, Z4; \
	VFMADD231PS Z23, Z16, Z6; \
	VFMADD231PS Z24, Z16, Z8; \
	VFMADD231PS Z25, Z16, Z10; \
	VFMADD231PS Z26, Z16, Z12; \
	VFMADD231PS Z27, Z16, Z14; \
	ROWSNEXT(QLOOP, NORES); \
	VMOVUPS.Z (R13), K1, Z20; \
	VADDPS Z20, Z0, Z0; \
	ADDQ R10, R13; \
	VMOVUPS.Z (R13), K1, Z20; \
	VADDPS Z20, Z2, Z2; \
	ADDQ R10, R13; \
	VMOVUPS.Z (R13), K1, Z20; \
	VADDPS Z20, Z4, Z4; \
	ADDQ R10, R13; \
	VMOVUPS.Z (R13), K1, Z20; \
	VADDPS Z20, Z6, Z6; \
	ADDQ R10, R13; \
	VMOVUPS.Z (R13), K1, Z20; \
	VADDPS Z20, Z8, Z8; \
	ADDQ R10, R13; \
	VMOVUPS.Z (R13), K1, Z20; \
	VADDPS Z20, Z10, Z10; \
	ADDQ R10, R13; \
	VMOVUPS.Z (R13), K1, Z20; \
	VADDPS Z20, Z12, Z12; \
	ADDQ R10, R13; \
	VMOVUPS.Z (R13), K1, Z20; \
	VADDPS Z20, Z14, Z14; \
	ADDQ R10, R13; \
NORES:; \
	LEAQ (DI)(R11*1), DX; \
	VMAXPS Z0, Z18, Z0; \
	VMINPS Z0, Z19, Z0; \
	VMOVUPS Z0, K1, (DX); \
	ADDQ R8, DX; \
	VMAXPS Z2, Z18, Z2; \
	VMINPS Z2, Z19, Z2; \
	VMOVUPS Z2, K1, (DX); \
	ADDQ R8, DX; \
	VMAXPS Z4, Z18, Z4; \
	VMINPS Z4, Z19, Z4; \
	VMOVUPS Z4, K1, (DX); \
	ADDQ R8, DX; \
	VMAXPS Z6, Z18, Z6; \
	VMINPS Z6, Z19, Z6; \
	VMOVUPS Z6, K1, (DX); \
	ADDQ R8, DX; \
	VMAXPS Z8, Z18, Z8; \
	VMINPS Z8, Z19, Z8; \
	VMOVUPS Z8, K1, (DX); \
	ADDQ R8, DX; \
	VMAXPS Z10, Z18, Z10; \
	VMINPS Z10, Z19, Z10; \
	VMOVUPS Z10, K1, (DX); \
	ADDQ R8, DX; \
	VMAXPS Z12, Z18, Z12; \
	VMINPS Z12, Z19, Z12; \
	VMOVUPS Z12, K1, (DX); \
	ADDQ R8, DX; \
	VMAXPS Z14, Z18, Z14; \
	VMINPS Z14, Z19, Z14; \
	VMOVUPS Z14, K1, (DX); \
	ADDQ R8, DX

// PREFETCHNEXT asks for the current input row's next chunk (its two
// lines 128 bytes on), PREFETCHRES for the residual row's, PREFETCHOUT
// for the output row's (see [Prefetched rows] in rows.go); NOPREFETCH
// for none.
#define PREFETCHNEXT PREFETCHT0 128(CX)(DX*4); PREFETCHT0 192(CX)(DX*4)
#define NOPREFETCH
#define PREFETCHRES PREFETCHT0 128(R13); PREFETCHT0 192(R13)
#define PREFETCHOUT PREFETCHT0 128(DX); PREFETCHT0 192(DX)

// func rows8x32AVX512(out *float32, ldo int, x *float32, offs *int, k int, w *float32, n32, tail, mask1, mask2 int, bias, res *float32, ldr int, lo, hi float32, pf int)
// Eight output channels straight from input rows (see [Wide rows]):
// out[r*ldo + j] = clamp(bias[r] + sum over q < k of w[r*k+q] *
// x[offs[q] + j] (+ res[r*ldr + j]), lo, hi) for r < 8 and j <
// 32*n32, and with tail non-zero a last chunk of 32 columns under the
// masks mask1 and mask2 (each half's valid lanes; mask2 zero: one
// half, ROWSHALF). Strides and offsets
// in floats; k > 0. With pf non-zero the full chunks prefetch the
// input rows' next chunk (see [Prefetched rows] in rows.go).
TEXT ·rows8x32AVX512(SB), NOSPLIT, $0-120
	MOVQ out+0(FP), DI
	MOVQ ldo+8(FP), R8
	SHLQ $2, R8
	MOVQ x+16(FP), SI
	MOVQ k+32(FP), R14
	SHLQ $2, R14
	LEAQ (R14)(R14*2), R15
	MOVQ bias+80(FP), AX
	MOVQ ldr+96(FP), DX
	SHLQ $2, DX
	MOVQ DX, ldr+96(FP)
	VBROADCASTSS lo+104(FP), Z18
	VBROADCASTSS hi+108(FP), Z19
	MOVQ $0xffff, DX
	KMOVW DX, K1
	KMOVW DX, K2
	XORQ R11, R11

	CMPQ pf+112(FP), $0
	JEQ  rochunk

ropfchunk:
	CMPQ n32+48(FP), $0
	JEQ  rotail
	ROWSCHUNK(ropfq, ropfnores, PREFETCHNEXT, PREFETCHRES, PREFETCHOUT)
	ADDQ $128, R11
	DECQ n32+48(FP)
	JMP  ropfchunk

rochunk:
	CMPQ n32+48(FP), $0
	JEQ  rotail
	ROWSCHUNK(roq, ronores, NOPREFETCH, PREFETCHRES, PREFETCHOUT)
	ADDQ $128, R11
	DECQ n32+48(FP)
	JMP  rochunk

rotail:
	CMPQ tail+56(FP), $0
	JEQ  rodone
	MOVQ mask1+64(FP), DX
	KMOVW DX, K1
	MOVQ mask2+72(FP), DX
	KMOVW DX, K2
	TESTQ DX, DX
	JEQ  rohalf
	ROWSCHUNK(rotq, rotnores, NOPREFETCH, NOPREFETCH, NOPREFETCH)
	JMP  rodone

rohalf:
	ROWSHALF(rohq, rohnores)

rodone:
	VZEROUPPER
	RET
