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

// ROWSRES2 adds the residual row at R13 (both halves, under K1 and K2;
// RPF after the loads) to ZA and ZB, and moves R13 on a row (R10);
// ROWSRES1 is its one-register form (ROWSHALF).
#define ROWSRES2(ZA, ZB, RPF) \
	VMOVUPS.Z (R13), K1, Z20; \
	VMOVUPS.Z 64(R13), K2, Z21; \
	RPF; \
	VADDPS Z20, ZA, ZA; \
	VADDPS Z21, ZB, ZB; \
	ADDQ R10, R13
#define ROWSRES1(ZA) \
	VMOVUPS.Z (R13), K1, Z20; \
	VADDPS Z20, ZA, ZA; \
	ADDQ R10, R13

// ROWSSTORE2 clamps ZA and ZB to [Z18, Z19], stores them at DX under K1
// and K2 (OPF after the stores) and moves DX on an output row (R8);
// ROWSSTORE1 is its one-register form (ROWSHALF).
#define ROWSSTORE2(ZA, ZB, OPF) \
	VMAXPS ZA, Z18, ZA; \
	VMAXPS ZB, Z18, ZB; \
	VMINPS ZA, Z19, ZA; \
	VMINPS ZB, Z19, ZB; \
	VMOVUPS ZA, K1, (DX); \
	VMOVUPS ZB, K2, 64(DX); \
	OPF; \
	ADDQ R8, DX
#define ROWSSTORE1(ZA) \
	VMAXPS ZA, Z18, ZA; \
	VMINPS ZA, Z19, ZA; \
	VMOVUPS ZA, K1, (DX); \
	ADDQ R8, DX

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
	ROWSRES2(Z0, Z1, RPF); \
	ROWSRES2(Z2, Z3, RPF); \
	ROWSRES2(Z4, Z5, RPF); \
	ROWSRES2(Z6, Z7, RPF); \
	ROWSRES2(Z8, Z9, RPF); \
	ROWSRES2(Z10, Z11, RPF); \
	ROWSRES2(Z12, Z13, RPF); \
	ROWSRES2(Z14, Z15, RPF); \
NORES: \
	LEAQ (DI)(R11*1), DX; \
	ROWSSTORE2(Z0, Z1, OPF); \
	ROWSSTORE2(Z2, Z3, OPF); \
	ROWSSTORE2(Z4, Z5, OPF); \
	ROWSSTORE2(Z6, Z7, OPF); \
	ROWSSTORE2(Z8, Z9, OPF); \
	ROWSSTORE2(Z10, Z11, OPF); \
	ROWSSTORE2(Z12, Z13, OPF); \
	ROWSSTORE2(Z14, Z15, OPF)

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
	ROWSRES1(Z0); \
	ROWSRES1(Z2); \
	ROWSRES1(Z4); \
	ROWSRES1(Z6); \
	ROWSRES1(Z8); \
	ROWSRES1(Z10); \
	ROWSRES1(Z12); \
	ROWSRES1(Z14); \
NORES:; \
	LEAQ (DI)(R11*1), DX; \
	ROWSSTORE1(Z0); \
	ROWSSTORE1(Z2); \
	ROWSSTORE1(Z4); \
	ROWSSTORE1(Z6); \
	ROWSSTORE1(Z8); \
	ROWSSTORE1(Z10); \
	ROWSSTORE1(Z12); \
	ROWSSTORE1(Z14)

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
