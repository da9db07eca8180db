// Macros the 6-row micro-kernels share (gemm_amd64.s, wide_amd64.s,
// gemm512_amd64.s) and the FMA peak loop (peak_amd64.s): the 6x16 tile
// is Y0..Y11, two registers a row of 16 floats.

// ARGS6xN loads the arguments the packed 6-row kernels share, (k int,
// a, b, c *float32, ldc int, add int, ...): k in CX, A at SI, B at DI, C
// at DX, its row stride in bytes in R8, add in R12.
#define ARGS6xN \
	MOVQ k+0(FP), CX; \
	MOVQ a+8(FP), SI; \
	MOVQ b+16(FP), DI; \
	MOVQ c+24(FP), DX; \
	MOVQ ldc+32(FP), R8; \
	MOVQ add+40(FP), R12; \
	SHLQ $2, R8

// ARGSWIDE loads the wide kernels' (k int, a, b *float32, offs *int, c
// *float32, ldc int, add int): as ARGS6xN, and offs at BX.
#define ARGSWIDE \
	MOVQ k+0(FP), CX; \
	MOVQ a+8(FP), SI; \
	MOVQ b+16(FP), DI; \
	MOVQ offs+24(FP), BX; \
	MOVQ c+32(FP), DX; \
	MOVQ ldc+40(FP), R8; \
	MOVQ add+48(FP), R12; \
	SHLQ $2, R8

// ZERO12 clears Y0..Y11.
#define ZERO12 \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3; \
	VXORPS Y4, Y4, Y4; \
	VXORPS Y5, Y5, Y5; \
	VXORPS Y6, Y6, Y6; \
	VXORPS Y7, Y7, Y7; \
	VXORPS Y8, Y8, Y8; \
	VXORPS Y9, Y9, Y9; \
	VXORPS Y10, Y10, Y10; \
	VXORPS Y11, Y11, Y11

// FMA6x16 is a k step's arithmetic, B's 16 floats already in Y12 and
// Y13: A's 6 at byte offset A of SI broadcast two at a time (Y14, Y15),
// twelve FMAs into the tile.
#define FMA6x16(A) \
	VBROADCASTSS (A)(SI), Y14; \
	VBROADCASTSS (A+4)(SI), Y15; \
	VFMADD231PS Y12, Y14, Y0; \
	VFMADD231PS Y13, Y14, Y1; \
	VFMADD231PS Y12, Y15, Y2; \
	VFMADD231PS Y13, Y15, Y3; \
	VBROADCASTSS (A+8)(SI), Y14; \
	VBROADCASTSS (A+12)(SI), Y15; \
	VFMADD231PS Y12, Y14, Y4; \
	VFMADD231PS Y13, Y14, Y5; \
	VFMADD231PS Y12, Y15, Y6; \
	VFMADD231PS Y13, Y15, Y7; \
	VBROADCASTSS (A+16)(SI), Y14; \
	VBROADCASTSS (A+20)(SI), Y15; \
	VFMADD231PS Y12, Y14, Y8; \
	VFMADD231PS Y13, Y14, Y9; \
	VFMADD231PS Y12, Y15, Y10; \
	VFMADD231PS Y13, Y15, Y11

// STORE2 writes one row of the tile (two registers) to DX, adding what
// is there when R12 is non-zero.
#define STORE2(Y_A, Y_B) \
	TESTQ R12, R12; \
	JEQ  3(PC); \
	VADDPS (DX), Y_A, Y_A; \
	VADDPS 32(DX), Y_B, Y_B; \
	VMOVUPS Y_A, (DX); \
	VMOVUPS Y_B, 32(DX)

// STORE6x16 writes the tile to C at DX, rows R8 bytes apart, adding to
// C unless R12 is 0 (the first k block of a product whose C holds
// nothing), and returns.
#define STORE6x16 \
	STORE2(Y0, Y1); \
	ADDQ R8, DX; \
	STORE2(Y2, Y3); \
	ADDQ R8, DX; \
	STORE2(Y4, Y5); \
	ADDQ R8, DX; \
	STORE2(Y6, Y7); \
	ADDQ R8, DX; \
	STORE2(Y8, Y9); \
	ADDQ R8, DX; \
	STORE2(Y10, Y11); \
	VZEROUPPER; \
	RET
