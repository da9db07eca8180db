//go:build amd64 && !purego

#include "textflag.h"
#include "tile6x16_amd64.h"

// The AVX-512 kernels: a 6x32 tile of C, two adjacent 16-column B
// panels against one 6-row A panel (see [AVX-512 tiles] in
// gemm512_amd64.go). The tile is Z0..Z11, two registers a row: Z(2r)
// the first panel's 16 columns, Z(2r+1) the second's. B's rows are in
// Z12 and Z13, A's six values broadcast into Z14..Z19.

// ZERO12Z clears Z0..Z11 (VPXORD: VXORPS on Z registers needs DQ).
#define ZERO12Z \
	VPXORD Z0, Z0, Z0; \
	VPXORD Z1, Z1, Z1; \
	VPXORD Z2, Z2, Z2; \
	VPXORD Z3, Z3, Z3; \
	VPXORD Z4, Z4, Z4; \
	VPXORD Z5, Z5, Z5; \
	VPXORD Z6, Z6, Z6; \
	VPXORD Z7, Z7, Z7; \
	VPXORD Z8, Z8, Z8; \
	VPXORD Z9, Z9, Z9; \
	VPXORD Z10, Z10, Z10; \
	VPXORD Z11, Z11, Z11

// FMA6x32 is a k step's arithmetic, B's 32 floats already in Z12 and
// Z13: A's 6 at byte offset A of SI broadcast, twelve FMAs into the
// tile, each element's sum in the same order as kernel6x16AVX2's.
#define FMA6x32(A) \
	VBROADCASTSS (A)(SI), Z14; \
	VBROADCASTSS (A+4)(SI), Z15; \
	VBROADCASTSS (A+8)(SI), Z16; \
	VBROADCASTSS (A+12)(SI), Z17; \
	VBROADCASTSS (A+16)(SI), Z18; \
	VBROADCASTSS (A+20)(SI), Z19; \
	VFMADD231PS Z12, Z14, Z0; \
	VFMADD231PS Z13, Z14, Z1; \
	VFMADD231PS Z12, Z15, Z2; \
	VFMADD231PS Z13, Z15, Z3; \
	VFMADD231PS Z12, Z16, Z4; \
	VFMADD231PS Z13, Z16, Z5; \
	VFMADD231PS Z12, Z17, Z6; \
	VFMADD231PS Z13, Z17, Z7; \
	VFMADD231PS Z12, Z18, Z8; \
	VFMADD231PS Z13, Z18, Z9; \
	VFMADD231PS Z12, Z19, Z10; \
	VFMADD231PS Z13, Z19, Z11

// KSTEP6x32 is one k step of the packed kernels: the first panel's 16
// floats at byte offset B of DI, the second's R11 bytes further.
#define KSTEP6x32(B, A) \
	VMOVUPS (B)(DI), Z12; \
	VMOVUPS (B)(DI)(R11*1), Z13; \
	FMA6x32(A)

// PREFETCH_ROW32 fetches the lines of the 128-byte C row at R9.
#define PREFETCH_ROW32 \
	PREFETCHT0 (R9); \
	PREFETCHT0 64(R9); \
	PREFETCHT0 127(R9)

// PRODUCT6x32 is a packed 6x32 kernel's product, as PRODUCT6x16: C's
// rows fetched, the tile cleared, CX k steps four at a time then one at
// a time, the second panel k*64 bytes after the first (R11).
#define PRODUCT6x32(LOOP, TAIL, ONE, DONE) \
	MOVQ DX, R9; \
	PREFETCH_ROW32; \
	ADDQ R8, R9; \
	PREFETCH_ROW32; \
	ADDQ R8, R9; \
	PREFETCH_ROW32; \
	ADDQ R8, R9; \
	PREFETCH_ROW32; \
	ADDQ R8, R9; \
	PREFETCH_ROW32; \
	ADDQ R8, R9; \
	PREFETCH_ROW32; \
	ZERO12Z; \
	MOVQ CX, R11; \
	SHLQ $6, R11; \
	MOVQ CX, R10; \
	SHRQ $2, R10; \
	ANDQ $3, CX; \
	TESTQ R10, R10; \
	JEQ  TAIL; \
LOOP: \
	KSTEP6x32(0, 0); \
	KSTEP6x32(64, 24); \
	KSTEP6x32(128, 48); \
	KSTEP6x32(192, 72); \
	ADDQ $96, SI; \
	ADDQ $256, DI; \
	DECQ R10; \
	JNE  LOOP; \
TAIL: \
	TESTQ CX, CX; \
	JEQ  DONE; \
ONE: \
	KSTEP6x32(0, 0); \
	ADDQ $24, SI; \
	ADDQ $64, DI; \
	DECQ CX; \
	JNE  ONE

// STORE2Z writes one 32-float row of the tile to DX, adding what is
// there when R12 is non-zero.
#define STORE2Z(Z_A, Z_B) \
	TESTQ R12, R12; \
	JEQ  3(PC); \
	VADDPS (DX), Z_A, Z_A; \
	VADDPS 64(DX), Z_B, Z_B; \
	VMOVUPS Z_A, (DX); \
	VMOVUPS Z_B, 64(DX)

// STORE6x32ROWS writes the tile to C at DX, rows R8 bytes apart,
// leaving DX at its last row.
#define STORE6x32ROWS \
	STORE2Z(Z0, Z1); \
	ADDQ R8, DX; \
	STORE2Z(Z2, Z3); \
	ADDQ R8, DX; \
	STORE2Z(Z4, Z5); \
	ADDQ R8, DX; \
	STORE2Z(Z6, Z7); \
	ADDQ R8, DX; \
	STORE2Z(Z8, Z9); \
	ADDQ R8, DX; \
	STORE2Z(Z10, Z11)

// STORE6x32 writes the tile to C at DX, rows R8 bytes apart, and
// returns.
#define STORE6x32 \
	STORE6x32ROWS; \
	VZEROUPPER; \
	RET

// func kernel6x32AVX512(k int, a, b, c *float32, ldc int, add int)
// C[6x32] += A[6xk] * B[kx32] (add == 0: =); A packed k-major in
// groups of 6, B two packed 16-column panels one after the other.
TEXT ·kernel6x32AVX512(SB), NOSPLIT, $0-48
	ARGS6xN
	PRODUCT6x32(zloop, ztail, zone, zstore)

zstore:
	STORE6x32

// func kernel6x32LoopAVX512(k int, a, b, c *float32, ldc int, add int, n int)
// kernel6x32AVX512 over n tiles down one pair of B panels: tile t's A
// panel k*24 bytes after tile t-1's (where the product leaves SI), its
// C six rows further down.
TEXT ·kernel6x32LoopAVX512(SB), NOSPLIT, $0-56
	ARGS6xN
	MOVQ n+48(FP), R13
	MOVQ CX, AX
	MOVQ DI, BX

lztile:
	MOVQ AX, CX
	MOVQ BX, DI
	PRODUCT6x32(lzloop, lztail, lzone, lzstore)

lzstore:
	STORE6x32ROWS
	ADDQ R8, DX
	DECQ R13
	JNE  lztile
	VZEROUPPER
	RET

// EPIROWZ finishes one row of the tile for kernel6x32EpiAVX512, as
// EPIROW does for kernel6x16EpiAVX2: C added when R12 is non-zero, the
// row's bias (byte R of BX, when BX is not nil), the residual row at
// R13 (when not nil), the clamp to [Z20, Z21].
#define EPIROWZ(Z_A, Z_B, R) \
	TESTQ R12, R12; \
	JEQ  3(PC); \
	VADDPS (DX), Z_A, Z_A; \
	VADDPS 64(DX), Z_B, Z_B; \
	TESTQ BX, BX; \
	JEQ  4(PC); \
	VBROADCASTSS R(BX), Z22; \
	VADDPS Z22, Z_A, Z_A; \
	VADDPS Z22, Z_B, Z_B; \
	TESTQ R13, R13; \
	JEQ  3(PC); \
	VADDPS (R13), Z_A, Z_A; \
	VADDPS 64(R13), Z_B, Z_B; \
	VMAXPS Z_A, Z20, Z_A; \
	VMAXPS Z_B, Z20, Z_B; \
	VMINPS Z_A, Z21, Z_A; \
	VMINPS Z_B, Z21, Z_B; \
	VMOVUPS Z_A, (DX); \
	VMOVUPS Z_B, 64(DX); \
	ADDQ R8, DX; \
	ADDQ R14, R13

// func kernel6x32EpiAVX512(k int, a, b, c *float32, ldc int, add int, bias, res *float32, ldr int, lo, hi float32)
// kernel6x32AVX512 with the epilogue of kernel6x16EpiAVX2.
TEXT ·kernel6x32EpiAVX512(SB), NOSPLIT, $0-80
	ARGS6xN
	PRODUCT6x32(ezloop, eztail, ezone, ezstore)

ezstore:
	MOVQ bias+48(FP), BX
	MOVQ res+56(FP), R13
	MOVQ ldr+64(FP), R14
	SHLQ $2, R14
	TESTQ R13, R13
	JNE  2(PC)
	XORQ R14, R14
	VBROADCASTSS lo+72(FP), Z20
	VBROADCASTSS hi+76(FP), Z21
	EPIROWZ(Z0, Z1, 0)
	EPIROWZ(Z2, Z3, 4)
	EPIROWZ(Z4, Z5, 8)
	EPIROWZ(Z6, Z7, 12)
	EPIROWZ(Z8, Z9, 16)
	EPIROWZ(Z10, Z11, 20)
	VZEROUPPER
	RET

// KSTEP6x32W is one k step of kernel6x32WideAVX512: B's row is the 32
// floats at DI + 4*offs[step] (the offset at byte O of BX); the line
// after them (the next tile's) is fetched meanwhile.
#define KSTEP6x32W(O, A) \
	MOVQ O(BX), R11; \
	VMOVUPS (DI)(R11*4), Z12; \
	VMOVUPS 64(DI)(R11*4), Z13; \
	PREFETCHT0 128(DI)(R11*4); \
	FMA6x32(A)

// func kernel6x32WideAVX512(k int, a, b *float32, offs *int, c *float32, ldc int, add int)
// kernel6x16WideAVX2 over 32 columns: C[6x32] = A[6xk] * B (add != 0:
// C +=), B's row q the 32 floats at b + offs[q].
TEXT ·kernel6x32WideAVX512(SB), NOSPLIT, $0-56
	ARGSWIDE
	ZERO12Z

	MOVQ CX, R10
	SHRQ $2, R10
	ANDQ $3, CX
	TESTQ R10, R10
	JEQ  wztail

wzloop:
	KSTEP6x32W(0, 0)
	KSTEP6x32W(8, 24)
	KSTEP6x32W(16, 48)
	KSTEP6x32W(24, 72)
	ADDQ $96, SI
	ADDQ $32, BX
	DECQ R10
	JNE  wzloop

wztail:
	TESTQ CX, CX
	JEQ  wzstore

wzone:
	KSTEP6x32W(0, 0)
	ADDQ $24, SI
	ADDQ $8, BX
	DECQ CX
	JNE  wzone

wzstore:
	STORE6x32

// func fmaPeak512(n int)
// n rounds of 12 independent 16-wide FMAs (Z0..Z11): the core's
// AVX-512 FMA throughput. 384 flops a round.
TEXT ·fmaPeak512(SB), NOSPLIT, $0-8
	MOVQ n+0(FP), CX
	ZERO12Z
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
peakloop:
	VFMADD231PS Z12, Z13, Z0
	VFMADD231PS Z12, Z13, Z1
	VFMADD231PS Z12, Z13, Z2
	VFMADD231PS Z12, Z13, Z3
	VFMADD231PS Z12, Z13, Z4
	VFMADD231PS Z12, Z13, Z5
	VFMADD231PS Z12, Z13, Z6
	VFMADD231PS Z12, Z13, Z7
	VFMADD231PS Z12, Z13, Z8
	VFMADD231PS Z12, Z13, Z9
	VFMADD231PS Z12, Z13, Z10
	VFMADD231PS Z12, Z13, Z11
	DECQ CX
	JNZ peakloop
	VZEROUPPER
	RET

// func gemv4AVX512(a *float32, lda int, x *float32, k int, y *float32, m int, alpha float32)
// gemv4AVX2 sixteen lanes wide: y[i] += alpha * dot(a[i*lda :
// i*lda+k], x[:k]) for i < m; m is a multiple of 4 and k of 16. A
// batch-1 linear layer streams its whole weight through here.
TEXT ·gemv4AVX512(SB), NOSPLIT, $0-52
	MOVQ a+0(FP), SI
	MOVQ lda+8(FP), R8
	SHLQ $2, R8
	MOVQ x+16(FP), DI
	MOVQ k+24(FP), R12
	MOVQ y+32(FP), DX
	MOVQ m+40(FP), R13
	VBROADCASTSS alpha+48(FP), X15
	LEAQ (R8)(R8*2), R14

gzrows:
	TESTQ R13, R13
	JEQ   gzdone
	MOVQ  SI, AX
	LEAQ  (SI)(R8*1), R9
	LEAQ  (SI)(R8*2), R10
	LEAQ  (SI)(R14*1), R11
	MOVQ  DI, BX
	MOVQ  R12, CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7

gzk32:
	CMPQ CX, $32
	JLT  gzk16
	VMOVUPS (BX), Z8
	VMOVUPS 64(BX), Z9
	VFMADD231PS (AX), Z8, Z0
	VFMADD231PS 64(AX), Z9, Z4
	VFMADD231PS (R9), Z8, Z1
	VFMADD231PS 64(R9), Z9, Z5
	VFMADD231PS (R10), Z8, Z2
	VFMADD231PS 64(R10), Z9, Z6
	VFMADD231PS (R11), Z8, Z3
	VFMADD231PS 64(R11), Z9, Z7
	ADDQ $128, AX
	ADDQ $128, R9
	ADDQ $128, R10
	ADDQ $128, R11
	ADDQ $128, BX
	SUBQ $32, CX
	JMP  gzk32

gzk16:
	CMPQ CX, $16
	JLT  gzred
	VMOVUPS (BX), Z8
	VFMADD231PS (AX), Z8, Z0
	VFMADD231PS (R9), Z8, Z1
	VFMADD231PS (R10), Z8, Z2
	VFMADD231PS (R11), Z8, Z3

gzred:
	VADDPS Z4, Z0, Z0
	VADDPS Z5, Z1, Z1
	VADDPS Z6, Z2, Z2
	VADDPS Z7, Z3, Z3
	VEXTRACTF64X4 $1, Z0, Y4
	VEXTRACTF64X4 $1, Z1, Y5
	VEXTRACTF64X4 $1, Z2, Y6
	VEXTRACTF64X4 $1, Z3, Y7
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
	JMP  gzrows

gzdone:
	VZEROUPPER
	RET
