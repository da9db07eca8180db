//go:build amd64 && !purego

#include "textflag.h"
#include "tile6x16_amd64.h"

// KSTEP6x16W is one k step of kernel6x16WideAVX2: B's row is the 16
// floats at DI + 4*offs[step] (the offset at byte O of BX), A's 6 at
// byte offset A of SI broadcast two at a time, twelve FMAs into the
// tile Y0..Y11. The next tile's line of the same B row is fetched while
// this one computes: the 16 columns to the right are the next tile.
#define KSTEP6x16W(O, A) \
	MOVQ O(BX), R11; \
	VMOVUPS (DI)(R11*4), Y12; \
	VMOVUPS 32(DI)(R11*4), Y13; \
	PREFETCHT0 64(DI)(R11*4); \
	FMA6x16(A)

// func kernel6x16WideAVX2(k int, a, b *float32, offs *int, c *float32, ldc int, add int)
// C[6x16] = A[6xk] * B (add != 0: C +=), A packed k-major in groups of
// 6, B's row q the 16 floats at b + offs[q] (read in place, not packed).
TEXT ·kernel6x16WideAVX2(SB), NOSPLIT, $0-56
	ARGSWIDE
	ZERO12

	MOVQ CX, R10
	SHRQ $2, R10
	ANDQ $3, CX
	TESTQ R10, R10
	JEQ  wtail

wloop:
	KSTEP6x16W(0, 0)
	KSTEP6x16W(8, 24)
	KSTEP6x16W(16, 48)
	KSTEP6x16W(24, 72)
	ADDQ $96, SI
	ADDQ $32, BX
	DECQ R10
	JNE  wloop

wtail:
	TESTQ CX, CX
	JEQ  wstore

wone:
	KSTEP6x16W(0, 0)
	ADDQ $24, SI
	ADDQ $8, BX
	DECQ CX
	JNE  wone

wstore:
	STORE6x16

// func wideRowsAVX2(dst, src *float32, rows, n, ws int, b, lo, hi float32, bias int)
// For r < rows, i < n: dst[r*n+i] = min(max(src[r*ws+i] (+ b when
// bias != 0), lo), hi). The source is the second operand of VMAXPS and
// VMINPS, so a NaN passes through (as Clamp32).
TEXT ·wideRowsAVX2(SB), NOSPLIT, $0-64
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ rows+16(FP), R8
	MOVQ n+24(FP), R9
	MOVQ ws+32(FP), R10
	SHLQ $2, R10
	VBROADCASTSS b+40(FP), Y2
	VBROADCASTSS lo+44(FP), Y0
	VBROADCASTSS hi+48(FP), Y1
	MOVQ bias+56(FP), R12
	TESTQ R8, R8
	JEQ  wrdone

wrrow:
	MOVQ SI, R11
	MOVQ R9, CX

wr8:
	CMPQ CX, $8
	JLT  wr1
	VMOVUPS (R11), Y3
	TESTQ R12, R12
	JEQ  2(PC)
	VADDPS Y3, Y2, Y3
	VMAXPS Y3, Y0, Y3
	VMINPS Y3, Y1, Y3
	VMOVUPS Y3, (DI)
	ADDQ $32, R11
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  wr8

wr1:
	TESTQ CX, CX
	JEQ  wrnext
	VMOVSS (R11), X3
	TESTQ R12, R12
	JEQ  2(PC)
	VADDSS X3, X2, X3
	VMAXSS X3, X0, X3
	VMINSS X3, X1, X3
	VMOVSS X3, (DI)
	ADDQ $4, R11
	ADDQ $4, DI
	DECQ CX
	JMP  wr1

wrnext:
	ADDQ R10, SI
	DECQ R8
	JNE  wrrow

wrdone:
	VZEROUPPER
	RET

// func deal2AVX2(even, odd, src *float32, n int)
// even[i] = src[2i], odd[i] = src[2i+1] for i < n&^7 (the caller does
// the rest).
TEXT ·deal2AVX2(SB), NOSPLIT, $0-32
	MOVQ even+0(FP), DI
	MOVQ odd+8(FP), DX
	MOVQ src+16(FP), SI
	MOVQ n+24(FP), CX
	SHRQ $3, CX
	JEQ  d2done

d2loop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	// Per 128-bit lane: the even (odd) elements of Y0's half, then of
	// Y1's; then the 64-bit pairs put in order.
	VSHUFPS $0x88, Y1, Y0, Y2
	VSHUFPS $0xDD, Y1, Y0, Y3
	VPERMPD $0xD8, Y2, Y2
	VPERMPD $0xD8, Y3, Y3
	VMOVUPS Y2, (DI)
	VMOVUPS Y3, (DX)
	ADDQ $64, SI
	ADDQ $32, DI
	ADDQ $32, DX
	DECQ CX
	JNE  d2loop

d2done:
	VZEROUPPER
	RET
