//go:build amd64 && !purego

#include "textflag.h"
#include "tile6x16_amd64.h"

// KSTEP6x16 is one k step of kernel6x16AVX2: B's 16 floats at byte
// offset B of DI (Y12, Y13), then FMA6x16 with A's at byte offset A.
#define KSTEP6x16(B, A) \
	VMOVUPS (B)(DI), Y12; \
	VMOVUPS (B+32)(DI), Y13; \
	FMA6x16(A)

// PREFETCH_ROW fetches the two lines of the C row at R9.
#define PREFETCH_ROW \
	PREFETCHT0 (R9); \
	PREFETCHT0 63(R9)

// PRODUCT6x16 is a 6x16 kernel's product: the C tile's rows (ldc
// apart, R8 bytes, from DX) fetched while the k loop runs, so the final
// loads of C do not wait on L2 or L3; the tile cleared; then CX k steps
// of A at SI and B at DI, four per iteration with one branch at the
// bottom, then the k%4 left one at a time, jumping to DONE. LOOP, TAIL
// and ONE name the labels it defines.
#define PRODUCT6x16(LOOP, TAIL, ONE, DONE) \
	MOVQ DX, R9; \
	PREFETCH_ROW; \
	ADDQ R8, R9; \
	PREFETCH_ROW; \
	ADDQ R8, R9; \
	PREFETCH_ROW; \
	ADDQ R8, R9; \
	PREFETCH_ROW; \
	ADDQ R8, R9; \
	PREFETCH_ROW; \
	ADDQ R8, R9; \
	PREFETCH_ROW; \
	ZERO12; \
	MOVQ CX, R10; \
	SHRQ $2, R10; \
	ANDQ $3, CX; \
	TESTQ R10, R10; \
	JEQ  TAIL; \
LOOP: \
	KSTEP6x16(0, 0); \
	KSTEP6x16(64, 24); \
	KSTEP6x16(128, 48); \
	KSTEP6x16(192, 72); \
	ADDQ $96, SI; \
	ADDQ $256, DI; \
	DECQ R10; \
	JNE  LOOP; \
TAIL: \
	TESTQ CX, CX; \
	JEQ  DONE; \
ONE: \
	KSTEP6x16(0, 0); \
	ADDQ $24, SI; \
	ADDQ $64, DI; \
	DECQ CX; \
	JNE  ONE

// func kernel6x16AVX2(k int, a, b, c *float32, ldc int, add int)
// C[6x16] += A[6xk] * B[kx16] (add == 0: =); A packed k-major in
// groups of 6, B in groups of 16. Y0..Y11 hold the tile.
TEXT ·kernel6x16AVX2(SB), NOSPLIT, $0-48
	ARGS6xN
	PRODUCT6x16(kloop, ktail, kone, kstore)

kstore:
	STORE6x16

// func dotAVX2(x, y *float32, n int) float32
TEXT ·dotAVX2(SB), NOSPLIT, $0-28
	MOVQ x+0(FP), SI
	MOVQ y+8(FP), DI
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

dot32:
	CMPQ CX, $32
	JLT  dot8
	VMOVUPS (SI), Y4
	VMOVUPS 32(SI), Y5
	VMOVUPS 64(SI), Y6
	VMOVUPS 96(SI), Y7
	VFMADD231PS (DI), Y4, Y0
	VFMADD231PS 32(DI), Y5, Y1
	VFMADD231PS 64(DI), Y6, Y2
	VFMADD231PS 96(DI), Y7, Y3
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JMP  dot32

dot8:
	CMPQ CX, $8
	JLT  dotreduce
	VMOVUPS (SI), Y4
	VFMADD231PS (DI), Y4, Y0
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  dot8

dotreduce:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VHADDPS X0, X0, X0
	VHADDPS X0, X0, X0

dot1:
	TESTQ CX, CX
	JEQ   dotdone
	VMOVSS (SI), X1
	VFMADD231SS (DI), X1, X0
	ADDQ $4, SI
	ADDQ $4, DI
	DECQ CX
	JMP  dot1

dotdone:
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func axpyAVX2(alpha float32, x, y *float32, n int)
TEXT ·axpyAVX2(SB), NOSPLIT, $0-32
	VBROADCASTSS alpha+0(FP), Y0
	MOVQ x+8(FP), SI
	MOVQ y+16(FP), DI
	MOVQ n+24(FP), CX

axpy32:
	CMPQ CX, $32
	JLT  axpy8
	VMOVUPS (DI), Y1
	VMOVUPS 32(DI), Y2
	VMOVUPS 64(DI), Y3
	VMOVUPS 96(DI), Y4
	VFMADD231PS (SI), Y0, Y1
	VFMADD231PS 32(SI), Y0, Y2
	VFMADD231PS 64(SI), Y0, Y3
	VFMADD231PS 96(SI), Y0, Y4
	VMOVUPS Y1, (DI)
	VMOVUPS Y2, 32(DI)
	VMOVUPS Y3, 64(DI)
	VMOVUPS Y4, 96(DI)
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JMP  axpy32

axpy8:
	CMPQ CX, $8
	JLT  axpy1
	VMOVUPS (DI), Y1
	VFMADD231PS (SI), Y0, Y1
	VMOVUPS Y1, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  axpy8

axpy1:
	TESTQ CX, CX
	JEQ   axpydone
	VMOVSS (DI), X1
	VFMADD231SS (SI), X0, X1
	VMOVSS X1, (DI)
	ADDQ $4, SI
	ADDQ $4, DI
	DECQ CX
	JMP  axpy1

axpydone:
	VZEROUPPER
	RET

// func dot4AVX2(a *float32, lda int, x *float32, n int, out *float32)
// out[r] = dot(a[r*lda : r*lda+n], x[:n]) for r < 4; n is a multiple of 8.
TEXT ·dot4AVX2(SB), NOSPLIT, $0-40
	MOVQ a+0(FP), SI
	MOVQ lda+8(FP), R8
	SHLQ $2, R8
	MOVQ x+16(FP), DI
	MOVQ n+24(FP), CX
	MOVQ out+32(FP), DX
	LEAQ (SI)(R8*1), R9
	LEAQ (R9)(R8*1), R10
	LEAQ (R10)(R8*1), R11
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7

d4x16:
	CMPQ CX, $16
	JLT  d4x8
	VMOVUPS (DI), Y8
	VMOVUPS 32(DI), Y9
	VFMADD231PS (SI), Y8, Y0
	VFMADD231PS 32(SI), Y9, Y4
	VFMADD231PS (R9), Y8, Y1
	VFMADD231PS 32(R9), Y9, Y5
	VFMADD231PS (R10), Y8, Y2
	VFMADD231PS 32(R10), Y9, Y6
	VFMADD231PS (R11), Y8, Y3
	VFMADD231PS 32(R11), Y9, Y7
	ADDQ $64, SI
	ADDQ $64, R9
	ADDQ $64, R10
	ADDQ $64, R11
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  d4x16

d4x8:
	CMPQ CX, $8
	JLT  d4red
	VMOVUPS (DI), Y8
	VFMADD231PS (SI), Y8, Y0
	VFMADD231PS (R9), Y8, Y1
	VFMADD231PS (R10), Y8, Y2
	VFMADD231PS (R11), Y8, Y3

d4red:
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3
	VHADDPS Y1, Y0, Y0
	VHADDPS Y3, Y2, Y2
	VHADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VMOVUPS X0, (DX)
	VZEROUPPER
	RET

// func gemv4AVX2(a *float32, lda int, x *float32, k int, y *float32, m int, alpha float32)
// y[i] += alpha * dot(a[i*lda : i*lda+k], x[:k]) for i < m; m is a
// multiple of 4 and k of 8. Four rows at a time share the loads of x.
TEXT ·gemv4AVX2(SB), NOSPLIT, $0-52
	MOVQ a+0(FP), SI
	MOVQ lda+8(FP), R8
	SHLQ $2, R8
	MOVQ x+16(FP), DI
	MOVQ k+24(FP), R12
	MOVQ y+32(FP), DX
	MOVQ m+40(FP), R13
	VBROADCASTSS alpha+48(FP), X15
	LEAQ (R8)(R8*2), R14

gvrows:
	TESTQ R13, R13
	JEQ   gvdone
	MOVQ  SI, AX
	LEAQ  (SI)(R8*1), R9
	LEAQ  (SI)(R8*2), R10
	LEAQ  (SI)(R14*1), R11
	MOVQ  DI, BX
	MOVQ  R12, CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7

gvk16:
	CMPQ CX, $16
	JLT  gvk8
	VMOVUPS (BX), Y8
	VMOVUPS 32(BX), Y9
	VFMADD231PS (AX), Y8, Y0
	VFMADD231PS 32(AX), Y9, Y4
	VFMADD231PS (R9), Y8, Y1
	VFMADD231PS 32(R9), Y9, Y5
	VFMADD231PS (R10), Y8, Y2
	VFMADD231PS 32(R10), Y9, Y6
	VFMADD231PS (R11), Y8, Y3
	VFMADD231PS 32(R11), Y9, Y7
	ADDQ $64, AX
	ADDQ $64, R9
	ADDQ $64, R10
	ADDQ $64, R11
	ADDQ $64, BX
	SUBQ $16, CX
	JMP  gvk16

gvk8:
	CMPQ CX, $8
	JLT  gvred
	VMOVUPS (BX), Y8
	VFMADD231PS (AX), Y8, Y0
	VFMADD231PS (R9), Y8, Y1
	VFMADD231PS (R10), Y8, Y2
	VFMADD231PS (R11), Y8, Y3

gvred:
	VADDPS Y4, Y0, Y0
	VADDPS Y5, Y1, Y1
	VADDPS Y6, Y2, Y2
	VADDPS Y7, Y3, Y3
	VHADDPS Y1, Y0, Y0
	VHADDPS Y3, Y2, Y2
	VHADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VMULPS X15, X0, X0
	VADDPS (DX), X0, X0
	VMOVUPS X0, (DX)
	ADDQ $16, DX
	LEAQ (SI)(R8*4), SI
	SUBQ $4, R13
	JMP  gvrows

gvdone:
	VZEROUPPER
	RET

// func dealAVX2(dst, src *float32, n, stride int)
// dst[i*stride : i*stride+16] = src[i*16 : i*16+16] for i < n: one row
// of B dealt to n packed panels.
TEXT ·dealAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ stride+24(FP), R8
	SHLQ $2, R8
	TESTQ CX, CX
	JEQ   dealdone

dealloop:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	ADDQ $64, SI
	ADDQ R8, DI
	DECQ CX
	JNZ  dealloop

dealdone:
	VZEROUPPER
	RET

// func kernel4x16DirectAVX2(k int, a *float32, lda int, b, c *float32, ldc int)
// C[4x16] += A[4xk] * B[kx16]; A read in place (4 rows of stride lda,
// unit column stride), B packed in groups of 16. Y0..Y7 hold the tile:
// eight independent FMA chains, enough to keep both FMA ports busy.
TEXT ·kernel4x16DirectAVX2(SB), NOSPLIT, $0-48
	MOVQ k+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R9
	SHLQ $2, R9
	MOVQ b+24(FP), DI
	MOVQ c+32(FP), DX
	MOVQ ldc+40(FP), R8
	SHLQ $2, R8
	LEAQ (SI)(R9*2), R10
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7

dloop:
	CMPQ CX, $2
	JLT  dtail
	VMOVUPS (DI), Y12
	VMOVUPS 32(DI), Y13
	VBROADCASTSS (SI), Y14
	VBROADCASTSS (SI)(R9*1), Y15
	VFMADD231PS Y12, Y14, Y0
	VFMADD231PS Y13, Y14, Y1
	VFMADD231PS Y12, Y15, Y2
	VFMADD231PS Y13, Y15, Y3
	VBROADCASTSS (R10), Y14
	VBROADCASTSS (R10)(R9*1), Y15
	VFMADD231PS Y12, Y14, Y4
	VFMADD231PS Y13, Y14, Y5
	VFMADD231PS Y12, Y15, Y6
	VFMADD231PS Y13, Y15, Y7
	VMOVUPS 64(DI), Y12
	VMOVUPS 96(DI), Y13
	VBROADCASTSS 4(SI), Y14
	VBROADCASTSS 4(SI)(R9*1), Y15
	VFMADD231PS Y12, Y14, Y0
	VFMADD231PS Y13, Y14, Y1
	VFMADD231PS Y12, Y15, Y2
	VFMADD231PS Y13, Y15, Y3
	VBROADCASTSS 4(R10), Y14
	VBROADCASTSS 4(R10)(R9*1), Y15
	VFMADD231PS Y12, Y14, Y4
	VFMADD231PS Y13, Y14, Y5
	VFMADD231PS Y12, Y15, Y6
	VFMADD231PS Y13, Y15, Y7
	ADDQ $8, SI
	ADDQ $8, R10
	ADDQ $128, DI
	SUBQ $2, CX
	JMP  dloop

dtail:
	TESTQ CX, CX
	JEQ  dstore
	VMOVUPS (DI), Y12
	VMOVUPS 32(DI), Y13
	VBROADCASTSS (SI), Y14
	VBROADCASTSS (SI)(R9*1), Y15
	VFMADD231PS Y12, Y14, Y0
	VFMADD231PS Y13, Y14, Y1
	VFMADD231PS Y12, Y15, Y2
	VFMADD231PS Y13, Y15, Y3
	VBROADCASTSS (R10), Y14
	VBROADCASTSS (R10)(R9*1), Y15
	VFMADD231PS Y12, Y14, Y4
	VFMADD231PS Y13, Y14, Y5
	VFMADD231PS Y12, Y15, Y6
	VFMADD231PS Y13, Y15, Y7

dstore:
	VADDPS (DX), Y0, Y0
	VADDPS 32(DX), Y1, Y1
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	ADDQ R8, DX
	VADDPS (DX), Y2, Y2
	VADDPS 32(DX), Y3, Y3
	VMOVUPS Y2, (DX)
	VMOVUPS Y3, 32(DX)
	ADDQ R8, DX
	VADDPS (DX), Y4, Y4
	VADDPS 32(DX), Y5, Y5
	VMOVUPS Y4, (DX)
	VMOVUPS Y5, 32(DX)
	ADDQ R8, DX
	VADDPS (DX), Y6, Y6
	VADDPS 32(DX), Y7, Y7
	VMOVUPS Y6, (DX)
	VMOVUPS Y7, 32(DX)
	VZEROUPPER
	RET

// KSTEP6x8 is one k step of kernel6x8AVX2: the first 8 of B's 16 floats
// at byte offset B of DI (Y12), A's 6 at byte offset A of SI broadcast,
// six FMAs into Y0, Y2, ..., Y10.
#define KSTEP6x8(B, A) \
	VMOVUPS (B)(DI), Y12; \
	VBROADCASTSS (A)(SI), Y14; \
	VBROADCASTSS (A+4)(SI), Y15; \
	VFMADD231PS Y12, Y14, Y0; \
	VFMADD231PS Y12, Y15, Y2; \
	VBROADCASTSS (A+8)(SI), Y14; \
	VBROADCASTSS (A+12)(SI), Y15; \
	VFMADD231PS Y12, Y14, Y4; \
	VFMADD231PS Y12, Y15, Y6; \
	VBROADCASTSS (A+16)(SI), Y14; \
	VBROADCASTSS (A+20)(SI), Y15; \
	VFMADD231PS Y12, Y14, Y8; \
	VFMADD231PS Y12, Y15, Y10

// STORE1 writes one row of an 8-wide tile (Y_A) to DX, adding what is
// there when R12 is non-zero.
#define STORE1(Y_A) \
	TESTQ R12, R12; \
	JEQ  2(PC); \
	VADDPS (DX), Y_A, Y_A; \
	VMOVUPS Y_A, (DX)

// func kernel6x8AVX2(k int, a, b, c *float32, ldc int, add int)
// kernel6x16AVX2 for the first 8 columns of a B panel (still 16 floats
// a k step): C[6x8] += A[6xk] * B[kx8] (add == 0: =). The last panel of
// a product whose width leaves 8 or fewer columns in it takes this,
// half the multiply-adds of the full tile.
TEXT ·kernel6x8AVX2(SB), NOSPLIT, $0-48
	ARGS6xN
	VXORPS Y0, Y0, Y0
	VXORPS Y2, Y2, Y2
	VXORPS Y4, Y4, Y4
	VXORPS Y6, Y6, Y6
	VXORPS Y8, Y8, Y8
	VXORPS Y10, Y10, Y10
	MOVQ CX, R10
	SHRQ $2, R10
	ANDQ $3, CX
	TESTQ R10, R10
	JEQ  k8tail

k8loop:
	KSTEP6x8(0, 0)
	KSTEP6x8(64, 24)
	KSTEP6x8(128, 48)
	KSTEP6x8(192, 72)
	ADDQ $96, SI
	ADDQ $256, DI
	DECQ R10
	JNE  k8loop

k8tail:
	TESTQ CX, CX
	JEQ  k8store

k8one:
	KSTEP6x8(0, 0)
	ADDQ $24, SI
	ADDQ $64, DI
	DECQ CX
	JNE  k8one

k8store:
	STORE1(Y0)
	ADDQ R8, DX
	STORE1(Y2)
	ADDQ R8, DX
	STORE1(Y4)
	ADDQ R8, DX
	STORE1(Y6)
	ADDQ R8, DX
	STORE1(Y8)
	ADDQ R8, DX
	STORE1(Y10)
	VZEROUPPER
	RET

// func packA6AVX2(p, a *float32, rs, groups int, alpha float32)
// packs 8*groups columns of six rows (the first at a, the next rs
// floats further) k-major into p: p[q*6+i] = alpha*row_i[q]. Each group
// of 8 columns is an 8x8 transpose with two rows missing; a column's 6
// floats go out as one 8-float store whose last two the next column's
// store overwrites, so the caller leaves at least one more column of p
// after the last group (see packA6).
TEXT ·packA6AVX2(SB), NOSPLIT, $0-36
	MOVQ p+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ rs+16(FP), R8
	MOVQ groups+24(FP), CX
	VBROADCASTSS alpha+32(FP), Y15
	SHLQ $2, R8
	LEAQ (SI)(R8*2), R9
	ADDQ R8, R9 // row 3

pa6loop:
	VMULPS (SI), Y15, Y0
	VMULPS (SI)(R8*1), Y15, Y1
	VMULPS (SI)(R8*2), Y15, Y2
	VMULPS (R9), Y15, Y3
	VMULPS (R9)(R8*1), Y15, Y4
	VMULPS (R9)(R8*2), Y15, Y5
	// t0..t5: pairs of rows interleaved.
	VUNPCKLPS Y1, Y0, Y6  // r0[0] r1[0] r0[1] r1[1] | r0[4] r1[4] r0[5] r1[5]
	VUNPCKHPS Y1, Y0, Y7  // columns 2,3 | 6,7
	VUNPCKLPS Y3, Y2, Y8
	VUNPCKHPS Y3, Y2, Y9
	VUNPCKLPS Y5, Y4, Y10 // rows 4,5: columns 0,1 | 4,5
	VUNPCKHPS Y5, Y4, Y11 // columns 2,3 | 6,7
	// Rows 0-3 of one column per 128-bit lane.
	VSHUFPS $0x44, Y8, Y6, Y0 // column 0 | 4
	VSHUFPS $0xEE, Y8, Y6, Y1 // column 1 | 5
	VSHUFPS $0x44, Y9, Y7, Y2 // column 2 | 6
	VSHUFPS $0xEE, Y9, Y7, Y3 // column 3 | 7
	// Rows 4-5 of the odd columns in the low two floats of each lane.
	VSHUFPS $0xEE, Y10, Y10, Y12 // column 1 | 5
	VSHUFPS $0xEE, Y11, Y11, Y13 // column 3 | 7
	// Column j: rows 0-3 then rows 4-5, stored in order.
	VPERM2F128 $0x20, Y10, Y0, Y4
	VMOVUPS Y4, (DI)
	VPERM2F128 $0x20, Y12, Y1, Y4
	VMOVUPS Y4, 24(DI)
	VPERM2F128 $0x20, Y11, Y2, Y4
	VMOVUPS Y4, 48(DI)
	VPERM2F128 $0x20, Y13, Y3, Y4
	VMOVUPS Y4, 72(DI)
	VPERM2F128 $0x31, Y10, Y0, Y4
	VMOVUPS Y4, 96(DI)
	VPERM2F128 $0x31, Y12, Y1, Y4
	VMOVUPS Y4, 120(DI)
	VPERM2F128 $0x31, Y11, Y2, Y4
	VMOVUPS Y4, 144(DI)
	VPERM2F128 $0x31, Y13, Y3, Y4
	VMOVUPS Y4, 168(DI)
	ADDQ $32, SI
	ADDQ $32, R9
	ADDQ $192, DI
	DECQ CX
	JNE  pa6loop
	VZEROUPPER
	RET

// EPIROW finishes one row of the tile (Y_A, Y_B) for kernel6x16EpiAVX2
// and stores it at DX: C added when R12 is non-zero, then the row's bias
// (at byte R of BX, when BX is not nil), then the residual row at R13
// (when not nil), then the clamp to [Y13, Y14]: the order and the
// roundings of Epilogue.affine.
#define EPIROW(Y_A, Y_B, R) \
	TESTQ R12, R12; \
	JEQ  3(PC); \
	VADDPS (DX), Y_A, Y_A; \
	VADDPS 32(DX), Y_B, Y_B; \
	TESTQ BX, BX; \
	JEQ  4(PC); \
	VBROADCASTSS R(BX), Y15; \
	VADDPS Y15, Y_A, Y_A; \
	VADDPS Y15, Y_B, Y_B; \
	TESTQ R13, R13; \
	JEQ  3(PC); \
	VADDPS (R13), Y_A, Y_A; \
	VADDPS 32(R13), Y_B, Y_B; \
	VMAXPS Y_A, Y13, Y_A; \
	VMAXPS Y_B, Y13, Y_B; \
	VMINPS Y_A, Y14, Y_A; \
	VMINPS Y_B, Y14, Y_B; \
	VMOVUPS Y_A, (DX); \
	VMOVUPS Y_B, 32(DX); \
	ADDQ R8, DX; \
	ADDQ R14, R13

// func kernel6x16EpiAVX2(k int, a, b, c *float32, ldc int, add int, bias, res *float32, ldr int, lo, hi float32)
// kernel6x16AVX2 with the product's epilogue applied as the tile is
// stored: C[6x16] = clamp((C if add) + A*B + bias[i] + res[i*ldr+j], lo,
// hi), bias (6 floats, one a row) and res each skipped when nil. A NaN
// passes the clamp.
TEXT ·kernel6x16EpiAVX2(SB), NOSPLIT, $0-80
	ARGS6xN
	PRODUCT6x16(ekloop, ektail, ekone, ekstore)

ekstore:
	MOVQ bias+48(FP), BX
	MOVQ res+56(FP), R13
	MOVQ ldr+64(FP), R14
	SHLQ $2, R14
	TESTQ R13, R13
	JNE  2(PC)
	XORQ R14, R14
	VBROADCASTSS lo+72(FP), Y13
	VBROADCASTSS hi+76(FP), Y14
	EPIROW(Y0, Y1, 0)
	EPIROW(Y2, Y3, 4)
	EPIROW(Y4, Y5, 8)
	EPIROW(Y6, Y7, 12)
	EPIROW(Y8, Y9, 16)
	EPIROW(Y10, Y11, 20)
	VZEROUPPER
	RET
