//go:build amd64 && !purego

#include "textflag.h"

// The direct kernels over NCHW16c (see [Blocked layout] in
// conv_nchwc.go): bcRow2AVX512, bcRow4AVX512 and bcRow2x7AVX512 with
// input and output positions 64 bytes apart (sixteen channels each).
// The input is still read eight channels at a time, in the order the
// NCHW8c kernels read it: an input block of sixteen channels is two
// eight-channel halves 32 bytes apart, each with its taps, so each
// element's sum is the one bcRowAVX2 computes, bit for bit, and the
// weight is the same [ob][c/8][tap][8][16] packing. A position's
// sixteen output channels are one 64-byte store; half is unused.
// nib counts eight-channel halves (even); bstride is the bytes from
// one sixteen-channel input block to the next.

// The prefetches of conv512_amd64.s (see [Weight prefetch]).
#define PF8S(B) \
	PREFETCHT0 4096(B); \
	PREFETCHT0 4160(B); \
	PREFETCHT0 4224(B); \
	PREFETCHT0 4288(B); \
	PREFETCHT0 4352(B); \
	PREFETCHT0 4416(B); \
	PREFETCHT0 4480(B); \
	PREFETCHT0 4544(B)
#define PF8SX(B, X) \
	PREFETCHT0 4096(B)(X*1); \
	PREFETCHT0 4160(B)(X*1); \
	PREFETCHT0 4224(B)(X*1); \
	PREFETCHT0 4288(B)(X*1); \
	PREFETCHT0 4352(B)(X*1); \
	PREFETCHT0 4416(B)(X*1); \
	PREFETCHT0 4480(B)(X*1); \
	PREFETCHT0 4544(B)(X*1)

// NEXTHALF steps R11 from an eight-channel half of the input to the
// next: the second half of the same block 32 bytes on, or (after the
// second, DX odd) the next block's first.
#define NEXTHALF(SKIP) \
	ADDQ $32, R11; \
	TESTQ $1, DX; \
	JEQ  SKIP; \
	ADDQ bstride+72(FP), R11; \
	SUBQ $64, R11; \
SKIP:

// B16CI is BC2CI with positions 64 bytes apart.
#define B16CI(CI) \
	VMOVUPS (CI*64)(R12), Z12; \
	VMOVUPS (CI*64)(R12)(R10*1), Z13; \
	VBROADCASTSS (CI*4)(R13), Z14; \
	VBROADCASTSS (CI*4+64)(R13), Z15; \
	VBROADCASTSS (CI*4+128)(R13), Z16; \
	VBROADCASTSS (CI*4+192)(R13), Z17; \
	VBROADCASTSS (CI*4+256)(R13), Z18; \
	VBROADCASTSS (CI*4+320)(R13), Z19; \
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

// B16CI7 is BC7CI with positions 64 bytes apart.
#define B16CI7(CI) \
	VMOVUPS (CI*64)(R12), Z14; \
	VMOVUPS (CI*64)(R12)(R10*1), Z15; \
	VBROADCASTSS (CI*4)(R13), Z16; \
	VBROADCASTSS (CI*4+64)(R13), Z17; \
	VBROADCASTSS (CI*4+128)(R13), Z18; \
	VBROADCASTSS (CI*4+192)(R13), Z19; \
	VBROADCASTSS (CI*4+256)(R13), Z20; \
	VBROADCASTSS (CI*4+320)(R13), Z21; \
	VBROADCASTSS (CI*4+384)(R13), Z22; \
	VFMADD231PS Z14, Z16, Z0; \
	VFMADD231PS Z15, Z16, Z1; \
	VFMADD231PS Z14, Z17, Z2; \
	VFMADD231PS Z15, Z17, Z3; \
	VFMADD231PS Z14, Z18, Z4; \
	VFMADD231PS Z15, Z18, Z5; \
	VFMADD231PS Z14, Z19, Z6; \
	VFMADD231PS Z15, Z19, Z7; \
	VFMADD231PS Z14, Z20, Z8; \
	VFMADD231PS Z15, Z20, Z9; \
	VFMADD231PS Z14, Z21, Z10; \
	VFMADD231PS Z15, Z21, Z11; \
	VFMADD231PS Z14, Z22, Z12; \
	VFMADD231PS Z15, Z22, Z13

// B16LOAD sets one position's two accumulators from block A's
// sixteen channels at OFF(DI) and block B's at OFF(R11).
#define B16LOAD(ZA, ZB, OFF) \
	VMOVUPS OFF(DI), ZA; \
	VMOVUPS OFF(R11), ZB

// B16STORE clamps them to [Z23, Z24] (NaN passing through) and
// stores them where B16LOAD reads them.
#define B16STORE(ZA, ZB, OFF) \
	VMAXPS ZA, Z23, ZA; \
	VMINPS ZA, Z24, ZA; \
	VMAXPS ZB, Z23, ZB; \
	VMINPS ZB, Z24, ZB; \
	VMOVUPS ZA, OFF(DI); \
	VMOVUPS ZB, OFF(R11)

#define B16CIS(M) \
	M(0); \
	M(1); \
	M(2); \
	M(3); \
	M(4); \
	M(5); \
	M(6); \
	M(7)

#define B16INITS6 \
	VMOVAPS Z0, Z2; \
	VMOVAPS Z1, Z3; \
	VMOVAPS Z0, Z4; \
	VMOVAPS Z1, Z5; \
	VMOVAPS Z0, Z6; \
	VMOVAPS Z1, Z7; \
	VMOVAPS Z0, Z8; \
	VMOVAPS Z1, Z9; \
	VMOVAPS Z0, Z10; \
	VMOVAPS Z1, Z11
#define B16INITS7 \
	B16INITS6; \
	VMOVAPS Z0, Z12; \
	VMOVAPS Z1, Z13
#define B16LOADS6 \
	B16LOAD(Z0, Z1, 0); \
	B16LOAD(Z2, Z3, 64); \
	B16LOAD(Z4, Z5, 128); \
	B16LOAD(Z6, Z7, 192); \
	B16LOAD(Z8, Z9, 256); \
	B16LOAD(Z10, Z11, 320)
#define B16LOADS7 \
	B16LOADS6; \
	B16LOAD(Z12, Z13, 384)
#define B16STORES6 \
	B16STORE(Z0, Z1, 0); \
	B16STORE(Z2, Z3, 64); \
	B16STORE(Z4, Z5, 128); \
	B16STORE(Z6, Z7, 192); \
	B16STORE(Z8, Z9, 256); \
	B16STORE(Z10, Z11, 320)
#define B16STORES7 \
	B16STORES6; \
	B16STORE(Z12, Z13, 384)
#define B16CIS6 B16CIS(B16CI)
#define B16CIS7 B16CIS(B16CI7)

// B16ROWPAIR is BCROWPAIR over NCHW16c: R11 is block B's output (DI
// + opair) around the loads and stores, the input's halves stepped by
// NEXTHALF, STEP bytes (64 a position) a block of positions.
#define B16ROWPAIR(BLOCK, ACC, START, IB, TAP, NOPF, SKIP, DONE, INITS, LOADS, CIS, STORES, STEP) \
	MOVQ out+0(FP), DI; \
	MOVQ in+8(FP), SI; \
	MOVQ nb+16(FP), CX; \
	MOVQ offs+24(FP), R8; \
	MOVQ w+32(FP), R9; \
	MOVQ wpair+96(FP), R10; \
	MOVQ bias+48(FP), AX; \
	VBROADCASTSS lo+56(FP), Z23; \
	VBROADCASTSS hi+60(FP), Z24; \
BLOCK: \
	TESTQ CX, CX; \
	JEQ   DONE; \
	MOVQ opair+104(FP), R11; \
	ADDQ DI, R11; \
	CMPQ acc+80(FP), $0; \
	JNE  ACC; \
	MOVQ bpair+112(FP), BX; \
	VMOVUPS (AX), Z0; \
	VMOVUPS (AX)(BX*1), Z1; \
	INITS; \
	JMP  START; \
ACC: \
	LOADS; \
START: \
	MOVQ SI, R11; \
	MOVQ R9, R12; \
	MOVQ nib+64(FP), DX; \
IB: \
	XORQ BX, BX; \
TAP: \
	MOVQ (R8)(BX*8), R13; \
	ADDQ R11, R13; \
	CIS; \
	CMPQ CX, nb+16(FP); \
	JNE  NOPF; \
	PF8S(R12); \
	PF8SX(R12, R10); \
NOPF: \
	ADDQ $512, R12; \
	INCQ BX; \
	CMPQ BX, taps+40(FP); \
	JLT  TAP; \
	NEXTHALF(SKIP); \
	DECQ DX; \
	JNZ  IB; \
	MOVQ opair+104(FP), R11; \
	ADDQ DI, R11; \
	STORES; \
	ADDQ $STEP, SI; \
	ADDQ $STEP, DI; \
	DECQ CX; \
	JMP  BLOCK; \
DONE: \
	VZEROUPPER; \
	RET

// func bcRow2x16AVX512(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32, nib, bstride, acc, half, wpair, opair, bpair int)
// bcRow2AVX512 over NCHW16c (above).
TEXT ·bcRow2x16AVX512(SB), NOSPLIT, $0-120
	B16ROWPAIR(c2block, c2acc, c2start, c2ib, c2tap, c2nopf, c2skip, c2done, B16INITS6, B16LOADS6, B16CIS6, B16STORES6, 384)

// func bcRow2x7x16AVX512(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32, nib, bstride, acc, half, wpair, opair, bpair int)
// bcRow2x7AVX512 over NCHW16c (above).
TEXT ·bcRow2x7x16AVX512(SB), NOSPLIT, $0-120
	B16ROWPAIR(c7block, c7acc, c7start, c7ib, c7tap, c7nopf, c7skip, c7done, B16INITS7, B16LOADS7, B16CIS7, B16STORES7, 448)

// B16POS is BC4POS.
#define B16POS(OFF, ZB, A, B, C, D) \
	VBROADCASTSS (OFF)(R13), ZB; \
	VFMADD231PS Z24, ZB, A; \
	VFMADD231PS Z25, ZB, B; \
	VFMADD231PS Z26, ZB, C; \
	VFMADD231PS Z27, ZB, D

// B16CI4 is BC4CI with positions 64 bytes apart.
#define B16CI4(CI) \
	VMOVUPS (CI*64)(R12), Z24; \
	VMOVUPS (CI*64)(R12)(R10*1), Z25; \
	VMOVUPS (CI*64)(AX), Z26; \
	VMOVUPS (CI*64)(AX)(R10*1), Z27; \
	B16POS(CI*4+0, Z28, Z0, Z1, Z2, Z3); \
	B16POS(CI*4+64, Z29, Z4, Z5, Z6, Z7); \
	B16POS(CI*4+128, Z28, Z8, Z9, Z10, Z11); \
	B16POS(CI*4+192, Z29, Z12, Z13, Z14, Z15); \
	B16POS(CI*4+256, Z28, Z16, Z17, Z18, Z19); \
	B16POS(CI*4+320, Z29, Z20, Z21, Z22, Z23)

// B16LOAD4 sets position OFF's four accumulators: block A's at
// OFF(DI), B's R11 bytes on, C's 2*R11 and D's R13.
#define B16LOAD4(Z0, Z1, Z2, Z3, OFF) \
	VMOVUPS OFF(DI), Z0; \
	VMOVUPS OFF(DI)(R11*1), Z1; \
	VMOVUPS OFF(DI)(R11*2), Z2; \
	VMOVUPS OFF(DI)(R13*1), Z3

// B16STORE4 clamps Z to [Z28, Z29] (NaN passing through) and stores
// it at B.
#define B16STORE4(Z, B) \
	VMAXPS Z, Z28, Z; \
	VMINPS Z, Z29, Z; \
	VMOVUPS Z, B

// B16STORES4 stores position OFF's four accumulators.
#define B16STORES4(Z0, Z1, Z2, Z3, OFF) \
	B16STORE4(Z0, OFF(DI)); \
	B16STORE4(Z1, OFF(DI)(R11*1)); \
	B16STORE4(Z2, OFF(DI)(R11*2)); \
	B16STORE4(Z3, OFF(DI)(R13*1))

// func bcRow4x16AVX512(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32, nib, bstride, acc, half, wpair, opair, bpair int)
// bcRow4AVX512 over NCHW16c (above).
TEXT ·bcRow4x16AVX512(SB), NOSPLIT, $0-120
	MOVQ out+0(FP), DI
	MOVQ in+8(FP), SI
	MOVQ nb+16(FP), CX
	MOVQ offs+24(FP), R8
	MOVQ w+32(FP), R9
	MOVQ wpair+96(FP), R10

c4block:
	TESTQ CX, CX
	JEQ   c4done
	MOVQ opair+104(FP), R11
	LEAQ (R11)(R11*2), R13
	CMPQ acc+80(FP), $0
	JNE  c4acc
	MOVQ bias+48(FP), AX
	MOVQ bpair+112(FP), BX
	VMOVUPS (AX), Z0
	VMOVUPS (AX)(BX*1), Z1
	VMOVUPS (AX)(BX*2), Z2
	LEAQ (BX)(BX*2), BX
	VMOVUPS (AX)(BX*1), Z3
	VMOVAPS Z0, Z4
	VMOVAPS Z1, Z5
	VMOVAPS Z2, Z6
	VMOVAPS Z3, Z7
	VMOVAPS Z0, Z8
	VMOVAPS Z1, Z9
	VMOVAPS Z2, Z10
	VMOVAPS Z3, Z11
	VMOVAPS Z0, Z12
	VMOVAPS Z1, Z13
	VMOVAPS Z2, Z14
	VMOVAPS Z3, Z15
	VMOVAPS Z0, Z16
	VMOVAPS Z1, Z17
	VMOVAPS Z2, Z18
	VMOVAPS Z3, Z19
	VMOVAPS Z0, Z20
	VMOVAPS Z1, Z21
	VMOVAPS Z2, Z22
	VMOVAPS Z3, Z23
	JMP  c4start

c4acc:
	B16LOAD4(Z0, Z1, Z2, Z3, 0)
	B16LOAD4(Z4, Z5, Z6, Z7, 64)
	B16LOAD4(Z8, Z9, Z10, Z11, 128)
	B16LOAD4(Z12, Z13, Z14, Z15, 192)
	B16LOAD4(Z16, Z17, Z18, Z19, 256)
	B16LOAD4(Z20, Z21, Z22, Z23, 320)

c4start:
	MOVQ SI, R11
	MOVQ R9, R12
	LEAQ (R9)(R10*2), AX
	MOVQ nib+64(FP), DX

c4ib:
	XORQ BX, BX

c4tap:
	MOVQ (R8)(BX*8), R13
	ADDQ R11, R13
	B16CIS(B16CI4)
	CMPQ CX, nb+16(FP)
	JNE  c4nopf
	PF8S(R12)
	PF8SX(R12, R10)
	PF8S(AX)
	PF8SX(AX, R10)

c4nopf:
	ADDQ $512, R12
	ADDQ $512, AX
	INCQ BX
	CMPQ BX, taps+40(FP)
	JLT  c4tap
	NEXTHALF(c4skip)
	DECQ DX
	JNZ  c4ib
	MOVQ opair+104(FP), R11
	LEAQ (R11)(R11*2), R13
	VBROADCASTSS lo+56(FP), Z28
	VBROADCASTSS hi+60(FP), Z29
	B16STORES4(Z0, Z1, Z2, Z3, 0)
	B16STORES4(Z4, Z5, Z6, Z7, 64)
	B16STORES4(Z8, Z9, Z10, Z11, 128)
	B16STORES4(Z12, Z13, Z14, Z15, 192)
	B16STORES4(Z16, Z17, Z18, Z19, 256)
	B16STORES4(Z20, Z21, Z22, Z23, 320)
	ADDQ $384, SI
	ADDQ $384, DI
	DECQ CX
	JMP  c4block

c4done:
	VZEROUPPER
	RET

// func dealBlocks16AVX2(even, odd, src *float32, n int)
// Deals n blocks of sixteen floats from src alternately to even
// (blocks 0, 2, ...) and odd (1, 3, ...), each packed: a NCHW16c row's
// columns dealt by parity (see packRowPhasedBlocked).
TEXT ·dealBlocks16AVX2(SB), NOSPLIT, $0-32
	MOVQ even+0(FP), DI
	MOVQ odd+8(FP), DX
	MOVQ src+16(FP), SI
	MOVQ n+24(FP), CX

d16two:
	CMPQ    CX, $2
	JLT     d16one
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, (DX)
	VMOVUPS Y3, 32(DX)
	ADDQ    $128, SI
	ADDQ    $64, DI
	ADDQ    $64, DX
	SUBQ    $2, CX
	JMP     d16two

d16one:
	TESTQ   CX, CX
	JEQ     d16done
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)

d16done:
	VZEROUPPER
	RET
