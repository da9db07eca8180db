//go:build amd64 && !purego

#include "textflag.h"



// BC2CI adds input channel CI's products at one tap to the two output
// blocks' tile: block A's 16 weights (R12 + 64*CI, Z12), block B's R10
// bytes further (Z13), the channel at each of six positions 32 bytes
// apart (R13 + 4*CI + 32*i, broadcast), twelve FMAs.
#define BC2CI(CI) \
	VMOVUPS (CI*64)(R12), Z12; \
	VMOVUPS (CI*64)(R12)(R10*1), Z13; \
	VBROADCASTSS (CI*4)(R13), Z14; \
	VBROADCASTSS (CI*4+32)(R13), Z15; \
	VBROADCASTSS (CI*4+64)(R13), Z16; \
	VBROADCASTSS (CI*4+96)(R13), Z17; \
	VBROADCASTSS (CI*4+128)(R13), Z18; \
	VBROADCASTSS (CI*4+160)(R13), Z19; \
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

// BC2LOAD sets one position's two accumulators (ZA block A, ZB block
// B) from the 8+8 channel halves at OFF of DI / R14 (block A) and of
// R11 / R13 (block B).
#define BC2LOAD(ZA, YA, ZB, YB, OFF) \
	VMOVUPS OFF(DI), YA; \
	VINSERTF64X4 $1, OFF(R14), ZA, ZA; \
	VMOVUPS OFF(R11), YB; \
	VINSERTF64X4 $1, OFF(R13), ZB, ZB

// BC2STORE clamps one position's accumulators to [Z23, Z24] (NaN
// passing through) and stores their halves as BC2LOAD reads them.
#define BC2STORE(ZA, YA, ZB, YB, OFF) \
	VMAXPS ZA, Z23, ZA; \
	VMINPS ZA, Z24, ZA; \
	VMAXPS ZB, Z23, ZB; \
	VMINPS ZB, Z24, ZB; \
	VMOVUPS YA, OFF(DI); \
	VEXTRACTF64X4 $1, ZA, OFF(R14); \
	VMOVUPS YB, OFF(R11); \
	VEXTRACTF64X4 $1, ZB, OFF(R13)

// PF8 and PF8X prefetch the eight cache lines 4 KB past (B) and past
// (B)(X*1): one (input block, tap) step of a weight stream, 4 KB ahead
// (see [Weight prefetch]).
#define PF8(B) \
	PREFETCHT0 4096(B); \
	PREFETCHT0 4160(B); \
	PREFETCHT0 4224(B); \
	PREFETCHT0 4288(B); \
	PREFETCHT0 4352(B); \
	PREFETCHT0 4416(B); \
	PREFETCHT0 4480(B); \
	PREFETCHT0 4544(B)
#define PF8X(B, X) \
	PREFETCHT0 4096(B)(X*1); \
	PREFETCHT0 4160(B)(X*1); \
	PREFETCHT0 4224(B)(X*1); \
	PREFETCHT0 4288(B)(X*1); \
	PREFETCHT0 4352(B)(X*1); \
	PREFETCHT0 4416(B)(X*1); \
	PREFETCHT0 4480(B)(X*1); \
	PREFETCHT0 4544(B)(X*1)
// BCROWPAIR is the body of bcRow2AVX512 and bcRow2x7AVX512 (labels
// from BLOCK to DONE): per block of positions, the two output blocks'
// accumulators set from the biases (Z0, Z1, then INITS) or loaded
// (LOADS), every input block's taps and channels added (CIS), the
// accumulators clamped to [Z23, Z24] and stored (STORES), STEP bytes
// on.
#define BCROWPAIR(BLOCK, ACC, START, IB, TAP, NOPF, DONE, INITS, LOADS, CIS, STORES, STEP) \
	MOVQ out+0(FP), DI; \
	MOVQ in+8(FP), SI; \
	MOVQ nb+16(FP), CX; \
	MOVQ offs+24(FP), R8; \
	MOVQ w+32(FP), R9; \
	MOVQ wpair+96(FP), R10; \
	MOVQ bias+48(FP), AX; \
	MOVQ half+88(FP), R14; \
	ADDQ DI, R14; \
	VBROADCASTSS lo+56(FP), Z23; \
	VBROADCASTSS hi+60(FP), Z24; \
BLOCK: \
	TESTQ CX, CX; \
	JEQ   DONE; \
	MOVQ opair+104(FP), R11; \
	LEAQ (R14)(R11*1), R13; \
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
	PF8(R12); \
	PF8X(R12, R10); \
NOPF: \
	ADDQ $512, R12; \
	INCQ BX; \
	CMPQ BX, taps+40(FP); \
	JLT  TAP; \
	ADDQ bstride+72(FP), R11; \
	DECQ DX; \
	JNZ  IB; \
	MOVQ opair+104(FP), R11; \
	LEAQ (R14)(R11*1), R13; \
	ADDQ DI, R11; \
	STORES; \
	ADDQ $STEP, SI; \
	ADDQ $STEP, DI; \
	ADDQ $STEP, R14; \
	DECQ CX; \
	JMP  BLOCK; \
DONE: \
	VZEROUPPER; \
	RET

// The six- and seven-position blocks' accumulator lists for BCROWPAIR.
#define BC2INITS \
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
#define BC2LOADS \
	BC2LOAD(Z0, Y0, Z1, Y1, 0); \
	BC2LOAD(Z2, Y2, Z3, Y3, 32); \
	BC2LOAD(Z4, Y4, Z5, Y5, 64); \
	BC2LOAD(Z6, Y6, Z7, Y7, 96); \
	BC2LOAD(Z8, Y8, Z9, Y9, 128); \
	BC2LOAD(Z10, Y10, Z11, Y11, 160)
#define BC2CIS \
	BC2CI(0); \
	BC2CI(1); \
	BC2CI(2); \
	BC2CI(3); \
	BC2CI(4); \
	BC2CI(5); \
	BC2CI(6); \
	BC2CI(7)
#define BC2STORES \
	BC2STORE(Z0, Y0, Z1, Y1, 0); \
	BC2STORE(Z2, Y2, Z3, Y3, 32); \
	BC2STORE(Z4, Y4, Z5, Y5, 64); \
	BC2STORE(Z6, Y6, Z7, Y7, 96); \
	BC2STORE(Z8, Y8, Z9, Y9, 128); \
	BC2STORE(Z10, Y10, Z11, Y11, 160)
#define BC7INITS \
	BC2INITS; \
	VMOVAPS Z0, Z12; \
	VMOVAPS Z1, Z13
#define BC7LOADS \
	BC2LOADS; \
	BC2LOAD(Z12, Y12, Z13, Y13, 192)
#define BC7CIS \
	BC7CI(0); \
	BC7CI(1); \
	BC7CI(2); \
	BC7CI(3); \
	BC7CI(4); \
	BC7CI(5); \
	BC7CI(6); \
	BC7CI(7)
#define BC7STORES \
	BC2STORES; \
	BC2STORE(Z12, Y12, Z13, Y13, 192)

// func bcRow2AVX512(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32, nib, bstride, acc, half, wpair, opair, bpair int)
// bcRowAVX2 for two output blocks of 16 channels at once (see
// [Channel-blocked direct convolution]): block A as bcRowAVX2 takes it
// (out, w, bias), block B with its weights wpair bytes after A's, its
// output opair bytes after A's and its bias bpair bytes after A's. Each
// register holds one position's 16 channels of one block, so the six
// positions of both blocks are twelve accumulators; each element's sum
// is the one bcRowAVX2 computes, in the same order, bit for bit.
TEXT ·bcRow2AVX512(SB), NOSPLIT, $0-120
	BCROWPAIR(bz2block, bz2acc, bz2start, bz2ib, bz2tap, bz2nopf, bz2done, BC2INITS, BC2LOADS, BC2CIS, BC2STORES, 192)

// BC4POS broadcasts the channel at OFF(R13) into ZB and adds its
// products with the four blocks' weights (Z24-Z27) to one position's
// accumulators A, B, C, D.
#define BC4POS(OFF, ZB, A, B, C, D) \
	VBROADCASTSS (OFF)(R13), ZB; \
	VFMADD231PS Z24, ZB, A; \
	VFMADD231PS Z25, ZB, B; \
	VFMADD231PS Z26, ZB, C; \
	VFMADD231PS Z27, ZB, D

// BC4CI adds input channel CI's products at one tap to the four output
// blocks' tile: blocks A and B's 16 weights at R12 and R10 bytes
// further, C and D's at AX and R10 bytes further (Z24-Z27), the channel
// at each of six positions 32 bytes apart (R13 + 4*CI + 32*i, broadcast
// into Z28 and Z29 by turns), 24 FMAs; position i's block b sums in
// Z(4i+b).
#define BC4CI(CI) \
	VMOVUPS (CI*64)(R12), Z24; \
	VMOVUPS (CI*64)(R12)(R10*1), Z25; \
	VMOVUPS (CI*64)(AX), Z26; \
	VMOVUPS (CI*64)(AX)(R10*1), Z27; \
	BC4POS(CI*4+0, Z28, Z0, Z1, Z2, Z3); \
	BC4POS(CI*4+32, Z29, Z4, Z5, Z6, Z7); \
	BC4POS(CI*4+64, Z28, Z8, Z9, Z10, Z11); \
	BC4POS(CI*4+96, Z29, Z12, Z13, Z14, Z15); \
	BC4POS(CI*4+128, Z28, Z16, Z17, Z18, Z19); \
	BC4POS(CI*4+160, Z29, Z20, Z21, Z22, Z23)


// BC4LOAD sets position P's four accumulators from the 8+8 channel
// halves at OFF of DI / R14 (block A), R11 bytes on (B), 2*R11 bytes on
// (C) and R13 bytes on (D).
#define BC4LOAD(Z0, Y0, Z1, Y1, Z2, Y2, Z3, Y3, OFF) \
	VMOVUPS OFF(DI), Y0; \
	VINSERTF64X4 $1, OFF(R14), Z0, Z0; \
	VMOVUPS OFF(DI)(R11*1), Y1; \
	VINSERTF64X4 $1, OFF(R14)(R11*1), Z1, Z1; \
	VMOVUPS OFF(DI)(R11*2), Y2; \
	VINSERTF64X4 $1, OFF(R14)(R11*2), Z2, Z2; \
	VMOVUPS OFF(DI)(R13*1), Y3; \
	VINSERTF64X4 $1, OFF(R14)(R13*1), Z3, Z3

// BC4STORE clamps one accumulator to [Z28, Z29] (NaN passing through)
// and stores its halves at OFF of B1 and B2 as BC4LOAD reads them.
#define BC4STORE(Z, Y, B1, B2) \
	VMAXPS Z, Z28, Z; \
	VMINPS Z, Z29, Z; \
	VMOVUPS Y, B1; \
	VEXTRACTF64X4 $1, Z, B2

// func bcRow4AVX512(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32, nib, bstride, acc, half, wpair, opair, bpair int)
// bcRow2AVX512 for four output blocks of 16 channels at once, each
// block where bcRow2AVX512's block B is from block A's: block k's
// weights k*wpair bytes after A's, its output k*opair bytes after A's,
// its bias k*bpair bytes after A's. Six positions of four blocks are 24
// accumulators: four weight vectors and six broadcasts a channel and
// tap for 24 FMAs, where bcRow2AVX512 loads two and six for twelve
// (see [Paired output blocks]). Each element's sum is bcRowAVX2's, in
// the same order, bit for bit.
TEXT ·bcRow4AVX512(SB), NOSPLIT, $0-120
	MOVQ out+0(FP), DI
	MOVQ in+8(FP), SI
	MOVQ nb+16(FP), CX
	MOVQ offs+24(FP), R8
	MOVQ w+32(FP), R9
	MOVQ wpair+96(FP), R10
	MOVQ half+88(FP), R14
	ADDQ DI, R14

b4block:
	TESTQ CX, CX
	JEQ   b4done
	MOVQ opair+104(FP), R11
	LEAQ (R11)(R11*2), R13
	CMPQ acc+80(FP), $0
	JNE  b4acc
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
	JMP  b4start

b4acc:
	BC4LOAD(Z0, Y0, Z1, Y1, Z2, Y2, Z3, Y3, 0)
	BC4LOAD(Z4, Y4, Z5, Y5, Z6, Y6, Z7, Y7, 32)
	BC4LOAD(Z8, Y8, Z9, Y9, Z10, Y10, Z11, Y11, 64)
	BC4LOAD(Z12, Y12, Z13, Y13, Z14, Y14, Z15, Y15, 96)
	BC4LOAD(Z16, Y16, Z17, Y17, Z18, Y18, Z19, Y19, 128)
	BC4LOAD(Z20, Y20, Z21, Y21, Z22, Y22, Z23, Y23, 160)

b4start:
	MOVQ SI, R11
	MOVQ R9, R12
	LEAQ (R9)(R10*2), AX
	MOVQ nib+64(FP), DX

b4ib:
	XORQ BX, BX

b4tap:
	MOVQ (R8)(BX*8), R13
	ADDQ R11, R13
	BC4CI(0)
	BC4CI(1)
	BC4CI(2)
	BC4CI(3)
	BC4CI(4)
	BC4CI(5)
	BC4CI(6)
	BC4CI(7)
	CMPQ CX, nb+16(FP)
	JNE  b4nopf
	PF8(R12)
	PF8X(R12, R10)
	PF8(AX)
	PF8X(AX, R10)

b4nopf:
	ADDQ $512, R12
	ADDQ $512, AX
	INCQ BX
	CMPQ BX, taps+40(FP)
	JLT  b4tap
	ADDQ bstride+72(FP), R11
	DECQ DX
	JNZ  b4ib
	MOVQ opair+104(FP), R11
	LEAQ (R11)(R11*2), R13
	VBROADCASTSS lo+56(FP), Z28
	VBROADCASTSS hi+60(FP), Z29
	BC4STORE(Z0, Y0, 0(DI), 0(R14))
	BC4STORE(Z1, Y1, 0(DI)(R11*1), 0(R14)(R11*1))
	BC4STORE(Z2, Y2, 0(DI)(R11*2), 0(R14)(R11*2))
	BC4STORE(Z3, Y3, 0(DI)(R13*1), 0(R14)(R13*1))
	BC4STORE(Z4, Y4, 32(DI), 32(R14))
	BC4STORE(Z5, Y5, 32(DI)(R11*1), 32(R14)(R11*1))
	BC4STORE(Z6, Y6, 32(DI)(R11*2), 32(R14)(R11*2))
	BC4STORE(Z7, Y7, 32(DI)(R13*1), 32(R14)(R13*1))
	BC4STORE(Z8, Y8, 64(DI), 64(R14))
	BC4STORE(Z9, Y9, 64(DI)(R11*1), 64(R14)(R11*1))
	BC4STORE(Z10, Y10, 64(DI)(R11*2), 64(R14)(R11*2))
	BC4STORE(Z11, Y11, 64(DI)(R13*1), 64(R14)(R13*1))
	BC4STORE(Z12, Y12, 96(DI), 96(R14))
	BC4STORE(Z13, Y13, 96(DI)(R11*1), 96(R14)(R11*1))
	BC4STORE(Z14, Y14, 96(DI)(R11*2), 96(R14)(R11*2))
	BC4STORE(Z15, Y15, 96(DI)(R13*1), 96(R14)(R13*1))
	BC4STORE(Z16, Y16, 128(DI), 128(R14))
	BC4STORE(Z17, Y17, 128(DI)(R11*1), 128(R14)(R11*1))
	BC4STORE(Z18, Y18, 128(DI)(R11*2), 128(R14)(R11*2))
	BC4STORE(Z19, Y19, 128(DI)(R13*1), 128(R14)(R13*1))
	BC4STORE(Z20, Y20, 160(DI), 160(R14))
	BC4STORE(Z21, Y21, 160(DI)(R11*1), 160(R14)(R11*1))
	BC4STORE(Z22, Y22, 160(DI)(R11*2), 160(R14)(R11*2))
	BC4STORE(Z23, Y23, 160(DI)(R13*1), 160(R14)(R13*1))
	ADDQ $192, SI
	ADDQ $192, DI
	ADDQ $192, R14
	DECQ CX
	JMP  b4block

b4done:
	VZEROUPPER
	RET

// BC7CI adds input channel CI's products at one tap to the two output
// blocks' seven-position tile: block A's 16 weights (R12 + 64*CI, Z14),
// block B's R10 bytes further (Z15), the channel at each of seven
// positions 32 bytes apart (R13 + 4*CI + 32*i, broadcast into Z16-Z22),
// fourteen FMAs; position i's block A sums in Z(2i), block B in Z(2i+1).
#define BC7CI(CI) \
	VMOVUPS (CI*64)(R12), Z14; \
	VMOVUPS (CI*64)(R12)(R10*1), Z15; \
	VBROADCASTSS (CI*4+0)(R13), Z16; \
	VBROADCASTSS (CI*4+32)(R13), Z17; \
	VBROADCASTSS (CI*4+64)(R13), Z18; \
	VBROADCASTSS (CI*4+96)(R13), Z19; \
	VBROADCASTSS (CI*4+128)(R13), Z20; \
	VBROADCASTSS (CI*4+160)(R13), Z21; \
	VBROADCASTSS (CI*4+192)(R13), Z22; \
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

// func bcRow2x7AVX512(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32, nib, bstride, acc, half, wpair, opair, bpair int)
// bcRow2AVX512 in blocks of seven positions (224 bytes of input and of
// each output half a block) instead of six: fourteen accumulators, two
// weight vectors and seven broadcasts a channel and tap (see [Seven-
// position blocks] in conv_blocked.go). Each element's sum is
// bcRowAVX2's, in the same order, bit for bit.
TEXT ·bcRow2x7AVX512(SB), NOSPLIT, $0-120
	BCROWPAIR(b7block, b7acc, b7start, b7ib, b7tap, b7nopf, b7done, BC7INITS, BC7LOADS, BC7CIS, BC7STORES, 224)

// func dwcPairsAVX512(out, out2, in, in2 *float32, np int, offs *int, w *float32, taps int, bias *float32, lo, hi float32)
// dwcRowS1AVX2 on np pairs of blocks of eight positions: pair j's first
// block reads at in and goes to out, its second at in2 and to out2, each
// 512*j bytes on (a row's consecutive blocks: in2 = in + 64 floats, out2
// = out + 64; or the odd last blocks of two rows, one pair). Each
// register holds two adjacent positions' eight channels, the tap's eight
// weights and the bias broadcast to both halves: eight accumulators.
// Each element's sum is dwcRowS1AVX2's, in the same order, bit for bit.
TEXT ·dwcPairsAVX512(SB), NOSPLIT, $0-80
	MOVQ out+0(FP), DI
	MOVQ out2+8(FP), BX
	MOVQ in+16(FP), SI
	MOVQ in2+24(FP), DX
	MOVQ np+32(FP), CX
	MOVQ offs+40(FP), R8
	MOVQ taps+56(FP), R10
	MOVQ bias+64(FP), AX
	VBROADCASTF64X4 (AX), Z9
	VBROADCASTSS lo+72(FP), Z13
	VBROADCASTSS hi+76(FP), Z14

dppair:
	TESTQ CX, CX
	JEQ   dpdone
	VMOVAPS Z9, Z0
	VMOVAPS Z9, Z1
	VMOVAPS Z9, Z2
	VMOVAPS Z9, Z3
	VMOVAPS Z9, Z4
	VMOVAPS Z9, Z5
	VMOVAPS Z9, Z6
	VMOVAPS Z9, Z7
	XORQ R11, R11
	MOVQ w+48(FP), R9

dptap:
	MOVQ (R8)(R11*8), R13
	LEAQ (DX)(R13*1), R12
	ADDQ SI, R13
	VBROADCASTF64X4 (R9), Z8
	VFMADD231PS (R13), Z8, Z0
	VFMADD231PS 64(R13), Z8, Z1
	VFMADD231PS 128(R13), Z8, Z2
	VFMADD231PS 192(R13), Z8, Z3
	VFMADD231PS (R12), Z8, Z4
	VFMADD231PS 64(R12), Z8, Z5
	VFMADD231PS 128(R12), Z8, Z6
	VFMADD231PS 192(R12), Z8, Z7
	ADDQ $32, R9
	INCQ R11
	CMPQ R11, R10
	JLT  dptap
	VMAXPS Z0, Z13, Z0
	VMINPS Z0, Z14, Z0
	VMOVUPS Z0, (DI)
	VMAXPS Z1, Z13, Z1
	VMINPS Z1, Z14, Z1
	VMOVUPS Z1, 64(DI)
	VMAXPS Z2, Z13, Z2
	VMINPS Z2, Z14, Z2
	VMOVUPS Z2, 128(DI)
	VMAXPS Z3, Z13, Z3
	VMINPS Z3, Z14, Z3
	VMOVUPS Z3, 192(DI)
	VMAXPS Z4, Z13, Z4
	VMINPS Z4, Z14, Z4
	VMOVUPS Z4, (BX)
	VMAXPS Z5, Z13, Z5
	VMINPS Z5, Z14, Z5
	VMOVUPS Z5, 64(BX)
	VMAXPS Z6, Z13, Z6
	VMINPS Z6, Z14, Z6
	VMOVUPS Z6, 128(BX)
	VMAXPS Z7, Z13, Z7
	VMINPS Z7, Z14, Z7
	VMOVUPS Z7, 192(BX)
	ADDQ $512, SI
	ADDQ $512, DX
	ADDQ $512, DI
	ADDQ $512, BX
	DECQ CX
	JMP  dppair

dpdone:
	VZEROUPPER
	RET
