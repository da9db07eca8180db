//go:build amd64 && !purego

#include "textflag.h"



// BCCI2 adds input channel CI's products at one tap to the two output
// blocks' tile: block A's 16 weights (R12 + 64*CI, Z12), block B's R10
// bytes further (Z13), the channel at each of six positions PS bytes
// apart (R13 + 4*CI + PS*i, broadcast), twelve FMAs. BC2CI reads
// positions 32 bytes apart (eight channels a position).
#define BCCI2(CI, PS) \
	VMOVUPS (CI*64)(R12), Z12; \
	VMOVUPS (CI*64)(R12)(R10*1), Z13; \
	VBROADCASTSS (CI*4)(R13), Z14; \
	VBROADCASTSS (CI*4+PS)(R13), Z15; \
	VBROADCASTSS (CI*4+2*PS)(R13), Z16; \
	VBROADCASTSS (CI*4+3*PS)(R13), Z17; \
	VBROADCASTSS (CI*4+4*PS)(R13), Z18; \
	VBROADCASTSS (CI*4+5*PS)(R13), Z19; \
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
#define BC2CI(CI) BCCI2(CI, 32)

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
// NEXTBLOCK steps R11 to the next input block, bstride bytes on.
#define NEXTBLOCK ADDQ bstride+72(FP), R11

// NEXTHALF steps R11 from an eight-channel half of a NCHW16c input
// block to the next: the block's second half 32 bytes on, or (after
// the second, DX odd) the next block's first.
#define NEXTHALF(SKIP) \
	ADDQ $32, R11; \
	TESTQ $1, DX; \
	JEQ  SKIP; \
	ADDQ bstride+72(FP), R11; \
	SUBQ $64, R11; \
SKIP:

// BCROWPAIR is the body of bcRow2AVX512 and bcRow2x7AVX512 and their
// NCHW16c variants (labels from BLOCK to DONE): per block of positions,
// the two output blocks' accumulators set from the biases (Z0, Z1, then
// INITS) or loaded (LOADS), every input block's taps and channels added
// (CIS; NEXTIB steps R11 to the next input block), the accumulators
// clamped to [Z23, Z24] and stored (STORES), STEP bytes on. R11 is
// block B's output (DI + opair) and R13 its second half's (R14 +
// opair) around the loads and stores.
#define BCROWPAIR(BLOCK, ACC, START, IB, TAP, NOPF, DONE, INITS, LOADS, CIS, STORES, NEXTIB, STEP) \
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
	NEXTIB; \
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

// EACHCI is M for each of an input block's eight channels.
#define EACHCI(M) \
	M(0); \
	M(1); \
	M(2); \
	M(3); \
	M(4); \
	M(5); \
	M(6); \
	M(7)

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
#define BC2CIS EACHCI(BC2CI)
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
#define BC7CIS EACHCI(BC7CI)
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
	BCROWPAIR(bz2block, bz2acc, bz2start, bz2ib, bz2tap, bz2nopf, bz2done, BC2INITS, BC2LOADS, BC2CIS, BC2STORES, NEXTBLOCK, 192)

// BC4POS broadcasts the channel at OFF(R13) into ZB and adds its
// products with the four blocks' weights (Z24-Z27) to one position's
// accumulators A, B, C, D.
#define BC4POS(OFF, ZB, A, B, C, D) \
	VBROADCASTSS (OFF)(R13), ZB; \
	VFMADD231PS Z24, ZB, A; \
	VFMADD231PS Z25, ZB, B; \
	VFMADD231PS Z26, ZB, C; \
	VFMADD231PS Z27, ZB, D

// BCCI4 adds input channel CI's products at one tap to the four output
// blocks' tile: blocks A and B's 16 weights at R12 and R10 bytes
// further, C and D's at AX and R10 bytes further (Z24-Z27), the channel
// at each of six positions PS bytes apart (R13 + 4*CI + PS*i, broadcast
// into Z28 and Z29 by turns), 24 FMAs; position i's block b sums in
// Z(4i+b).
#define BCCI4(CI, PS) \
	VMOVUPS (CI*64)(R12), Z24; \
	VMOVUPS (CI*64)(R12)(R10*1), Z25; \
	VMOVUPS (CI*64)(AX), Z26; \
	VMOVUPS (CI*64)(AX)(R10*1), Z27; \
	BC4POS(CI*4+0, Z28, Z0, Z1, Z2, Z3); \
	BC4POS(CI*4+PS, Z29, Z4, Z5, Z6, Z7); \
	BC4POS(CI*4+2*PS, Z28, Z8, Z9, Z10, Z11); \
	BC4POS(CI*4+3*PS, Z29, Z12, Z13, Z14, Z15); \
	BC4POS(CI*4+4*PS, Z28, Z16, Z17, Z18, Z19); \
	BC4POS(CI*4+5*PS, Z29, Z20, Z21, Z22, Z23)
#define BC4CI(CI) BCCI4(CI, 32) // eight channels a position


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

// BCROW4 is the body of bcRow4AVX512 and bcRow4x16AVX512 (labels
// from BLOCK to DONE): BCROWPAIR's steps for four output blocks, the
// accumulators loaded by LOADS, the channels added by CIS, the stored
// by STORES; R11 is opair and R13 3*opair around the loads and stores.
#define BCROW4(BLOCK, ACC, START, IB, TAP, NOPF, DONE, LOADS, CIS, STORES, NEXTIB, STEP) \
	MOVQ out+0(FP), DI \
	MOVQ in+8(FP), SI \
	MOVQ nb+16(FP), CX \
	MOVQ offs+24(FP), R8 \
	MOVQ w+32(FP), R9 \
	MOVQ wpair+96(FP), R10 \
	MOVQ half+88(FP), R14 \
	ADDQ DI, R14 \
BLOCK: \
	TESTQ CX, CX \
	JEQ   DONE \
	MOVQ opair+104(FP), R11 \
	LEAQ (R11)(R11*2), R13 \
	CMPQ acc+80(FP), $0 \
	JNE  ACC \
	MOVQ bias+48(FP), AX \
	MOVQ bpair+112(FP), BX \
	VMOVUPS (AX), Z0 \
	VMOVUPS (AX)(BX*1), Z1 \
	VMOVUPS (AX)(BX*2), Z2 \
	LEAQ (BX)(BX*2), BX \
	VMOVUPS (AX)(BX*1), Z3 \
	VMOVAPS Z0, Z4 \
	VMOVAPS Z1, Z5 \
	VMOVAPS Z2, Z6 \
	VMOVAPS Z3, Z7 \
	VMOVAPS Z0, Z8 \
	VMOVAPS Z1, Z9 \
	VMOVAPS Z2, Z10 \
	VMOVAPS Z3, Z11 \
	VMOVAPS Z0, Z12 \
	VMOVAPS Z1, Z13 \
	VMOVAPS Z2, Z14 \
	VMOVAPS Z3, Z15 \
	VMOVAPS Z0, Z16 \
	VMOVAPS Z1, Z17 \
	VMOVAPS Z2, Z18 \
	VMOVAPS Z3, Z19 \
	VMOVAPS Z0, Z20 \
	VMOVAPS Z1, Z21 \
	VMOVAPS Z2, Z22 \
	VMOVAPS Z3, Z23 \
	JMP  START \
ACC: \
	LOADS \
START: \
	MOVQ SI, R11 \
	MOVQ R9, R12 \
	LEAQ (R9)(R10*2), AX \
	MOVQ nib+64(FP), DX \
IB: \
	XORQ BX, BX \
TAP: \
	MOVQ (R8)(BX*8), R13 \
	ADDQ R11, R13 \
	CIS \
	CMPQ CX, nb+16(FP) \
	JNE  NOPF \
	PF8(R12) \
	PF8X(R12, R10) \
	PF8(AX) \
	PF8X(AX, R10) \
NOPF: \
	ADDQ $512, R12 \
	ADDQ $512, AX \
	INCQ BX \
	CMPQ BX, taps+40(FP) \
	JLT  TAP \
	NEXTIB \
	DECQ DX \
	JNZ  IB \
	MOVQ opair+104(FP), R11 \
	LEAQ (R11)(R11*2), R13 \
	VBROADCASTSS lo+56(FP), Z28 \
	VBROADCASTSS hi+60(FP), Z29 \
	STORES \
	ADDQ $STEP, SI \
	ADDQ $STEP, DI \
	ADDQ $STEP, R14 \
	DECQ CX \
	JMP  BLOCK \
DONE: \
	VZEROUPPER \
	RET

// The eight-channel lists for BCROW4.
#define BC4LOADS \
	BC4LOAD(Z0, Y0, Z1, Y1, Z2, Y2, Z3, Y3, 0) \
	BC4LOAD(Z4, Y4, Z5, Y5, Z6, Y6, Z7, Y7, 32) \
	BC4LOAD(Z8, Y8, Z9, Y9, Z10, Y10, Z11, Y11, 64) \
	BC4LOAD(Z12, Y12, Z13, Y13, Z14, Y14, Z15, Y15, 96) \
	BC4LOAD(Z16, Y16, Z17, Y17, Z18, Y18, Z19, Y19, 128) \
	BC4LOAD(Z20, Y20, Z21, Y21, Z22, Y22, Z23, Y23, 160)
#define BC4CIS EACHCI(BC4CI)
#define BC4STORES \
	BC4STORE(Z0, Y0, 0(DI), 0(R14)) \
	BC4STORE(Z1, Y1, 0(DI)(R11*1), 0(R14)(R11*1)) \
	BC4STORE(Z2, Y2, 0(DI)(R11*2), 0(R14)(R11*2)) \
	BC4STORE(Z3, Y3, 0(DI)(R13*1), 0(R14)(R13*1)) \
	BC4STORE(Z4, Y4, 32(DI), 32(R14)) \
	BC4STORE(Z5, Y5, 32(DI)(R11*1), 32(R14)(R11*1)) \
	BC4STORE(Z6, Y6, 32(DI)(R11*2), 32(R14)(R11*2)) \
	BC4STORE(Z7, Y7, 32(DI)(R13*1), 32(R14)(R13*1)) \
	BC4STORE(Z8, Y8, 64(DI), 64(R14)) \
	BC4STORE(Z9, Y9, 64(DI)(R11*1), 64(R14)(R11*1)) \
	BC4STORE(Z10, Y10, 64(DI)(R11*2), 64(R14)(R11*2)) \
	BC4STORE(Z11, Y11, 64(DI)(R13*1), 64(R14)(R13*1)) \
	BC4STORE(Z12, Y12, 96(DI), 96(R14)) \
	BC4STORE(Z13, Y13, 96(DI)(R11*1), 96(R14)(R11*1)) \
	BC4STORE(Z14, Y14, 96(DI)(R11*2), 96(R14)(R11*2)) \
	BC4STORE(Z15, Y15, 96(DI)(R13*1), 96(R14)(R13*1)) \
	BC4STORE(Z16, Y16, 128(DI), 128(R14)) \
	BC4STORE(Z17, Y17, 128(DI)(R11*1), 128(R14)(R11*1)) \
	BC4STORE(Z18, Y18, 128(DI)(R11*2), 128(R14)(R11*2)) \
	BC4STORE(Z19, Y19, 128(DI)(R13*1), 128(R14)(R13*1)) \
	BC4STORE(Z20, Y20, 160(DI), 160(R14)) \
	BC4STORE(Z21, Y21, 160(DI)(R11*1), 160(R14)(R11*1)) \
	BC4STORE(Z22, Y22, 160(DI)(R11*2), 160(R14)(R11*2)) \
	BC4STORE(Z23, Y23, 160(DI)(R13*1), 160(R14)(R13*1))

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
	BCROW4(b4block, b4acc, b4start, b4ib, b4tap, b4nopf, b4done, BC4LOADS, BC4CIS, BC4STORES, NEXTBLOCK, 192)

// BCCI7 adds input channel CI's products at one tap to the two output
// blocks' seven-position tile: block A's 16 weights (R12 + 64*CI, Z14),
// block B's R10 bytes further (Z15), the channel at each of seven
// positions PS bytes apart (R13 + 4*CI + PS*i, broadcast into Z16-Z22),
// fourteen FMAs; position i's block A sums in Z(2i), block B in Z(2i+1).
#define BCCI7(CI, PS) \
	VMOVUPS (CI*64)(R12), Z14; \
	VMOVUPS (CI*64)(R12)(R10*1), Z15; \
	VBROADCASTSS (CI*4)(R13), Z16; \
	VBROADCASTSS (CI*4+PS)(R13), Z17; \
	VBROADCASTSS (CI*4+2*PS)(R13), Z18; \
	VBROADCASTSS (CI*4+3*PS)(R13), Z19; \
	VBROADCASTSS (CI*4+4*PS)(R13), Z20; \
	VBROADCASTSS (CI*4+5*PS)(R13), Z21; \
	VBROADCASTSS (CI*4+6*PS)(R13), Z22; \
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
#define BC7CI(CI) BCCI7(CI, 32) // eight channels a position

// func bcRow2x7AVX512(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32, nib, bstride, acc, half, wpair, opair, bpair int)
// bcRow2AVX512 in blocks of seven positions (224 bytes of input and of
// each output half a block) instead of six: fourteen accumulators, two
// weight vectors and seven broadcasts a channel and tap (see [Seven-
// position blocks] in conv_blocked.go). Each element's sum is
// bcRowAVX2's, in the same order, bit for bit.
TEXT ·bcRow2x7AVX512(SB), NOSPLIT, $0-120
	BCROWPAIR(b7block, b7acc, b7start, b7ib, b7tap, b7nopf, b7done, BC7INITS, BC7LOADS, BC7CIS, BC7STORES, NEXTBLOCK, 224)

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

// [Blocked layout]'s kernels: bcRow2AVX512, bcRow4AVX512 and
// bcRow2x7AVX512 over NCHW16c, input and output positions 64 bytes
// apart (sixteen channels each). The input is still read eight channels
// at a time, in the order the eight-channel kernels read it: a
// sixteen-channel input block is two eight-channel halves 32 bytes
// apart, each with its taps (NEXTHALF), so each element's sum is the
// one bcRowAVX2 computes, bit for bit, and the weight is the same
// [ob][c/8][tap][8][16] packing. A position's sixteen output channels
// are one 64-byte store; half is unused. nib counts eight-channel
// halves (even); bstride is the bytes from one sixteen-channel input
// block to the next.




// The channels' products with positions 64 bytes apart.
#define B16CI(CI) BCCI2(CI, 64)
#define B16CI7(CI) BCCI7(CI, 64)
#define B16CI4(CI) BCCI4(CI, 64)

// B16LOAD sets one position's two accumulators from block A's
// sixteen channels at OFF(DI) and block B's at OFF(R11).
#define B16LOAD(ZA, ZB, OFF) \
	VMOVUPS OFF(DI), ZA; \
	VMOVUPS OFF(R11), ZB

// B16STORE clamps them to [Z23, Z24] (NaN passing through) and stores
// them where B16LOAD reads them.
#define B16STORE(ZA, ZB, OFF) \
	VMAXPS ZA, Z23, ZA; \
	VMINPS ZA, Z24, ZA; \
	VMAXPS ZB, Z23, ZB; \
	VMINPS ZB, Z24, ZB; \
	VMOVUPS ZA, OFF(DI); \
	VMOVUPS ZB, OFF(R11)

// B16LOAD4 sets position OFF's four accumulators: block A's at
// OFF(DI), B's R11 bytes on, C's 2*R11 and D's R13.
#define B16LOAD4(Z0, Z1, Z2, Z3, OFF) \
	VMOVUPS OFF(DI), Z0; \
	VMOVUPS OFF(DI)(R11*1), Z1; \
	VMOVUPS OFF(DI)(R11*2), Z2; \
	VMOVUPS OFF(DI)(R13*1), Z3

// B16STORE4 clamps position OFF's four accumulators to [Z28, Z29]
// (NaN passing through) and stores them where B16LOAD4 reads them.
#define B16STORE4(Z0, Z1, Z2, Z3, OFF) \
	VMAXPS Z0, Z28, Z0; \
	VMINPS Z0, Z29, Z0; \
	VMAXPS Z1, Z28, Z1; \
	VMINPS Z1, Z29, Z1; \
	VMAXPS Z2, Z28, Z2; \
	VMINPS Z2, Z29, Z2; \
	VMAXPS Z3, Z28, Z3; \
	VMINPS Z3, Z29, Z3; \
	VMOVUPS Z0, OFF(DI); \
	VMOVUPS Z1, OFF(DI)(R11*1); \
	VMOVUPS Z2, OFF(DI)(R11*2); \
	VMOVUPS Z3, OFF(DI)(R13*1)

#define B16LOADS \
	B16LOAD(Z0, Z1, 0); \
	B16LOAD(Z2, Z3, 64); \
	B16LOAD(Z4, Z5, 128); \
	B16LOAD(Z6, Z7, 192); \
	B16LOAD(Z8, Z9, 256); \
	B16LOAD(Z10, Z11, 320)
#define B16LOADS7 \
	B16LOADS; \
	B16LOAD(Z12, Z13, 384)
#define B16STORES \
	B16STORE(Z0, Z1, 0); \
	B16STORE(Z2, Z3, 64); \
	B16STORE(Z4, Z5, 128); \
	B16STORE(Z6, Z7, 192); \
	B16STORE(Z8, Z9, 256); \
	B16STORE(Z10, Z11, 320)
#define B16STORES7 \
	B16STORES; \
	B16STORE(Z12, Z13, 384)
#define B16LOADS4 \
	B16LOAD4(Z0, Z1, Z2, Z3, 0); \
	B16LOAD4(Z4, Z5, Z6, Z7, 64); \
	B16LOAD4(Z8, Z9, Z10, Z11, 128); \
	B16LOAD4(Z12, Z13, Z14, Z15, 192); \
	B16LOAD4(Z16, Z17, Z18, Z19, 256); \
	B16LOAD4(Z20, Z21, Z22, Z23, 320)
#define B16STORES4 \
	B16STORE4(Z0, Z1, Z2, Z3, 0); \
	B16STORE4(Z4, Z5, Z6, Z7, 64); \
	B16STORE4(Z8, Z9, Z10, Z11, 128); \
	B16STORE4(Z12, Z13, Z14, Z15, 192); \
	B16STORE4(Z16, Z17, Z18, Z19, 256); \
	B16STORE4(Z20, Z21, Z22, Z23, 320)

// func bcRow2x16AVX512(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32, nib, bstride, acc, half, wpair, opair, bpair int)
// bcRow2AVX512 over NCHW16c (above).
TEXT ·bcRow2x16AVX512(SB), NOSPLIT, $0-120
	BCROWPAIR(c2block, c2acc, c2start, c2ib, c2tap, c2nopf, c2done, BC2INITS, B16LOADS, EACHCI(B16CI), B16STORES, NEXTHALF(c2skip), 384)

// func bcRow2x7x16AVX512(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32, nib, bstride, acc, half, wpair, opair, bpair int)
// bcRow2x7AVX512 over NCHW16c (above).
TEXT ·bcRow2x7x16AVX512(SB), NOSPLIT, $0-120
	BCROWPAIR(c7block, c7acc, c7start, c7ib, c7tap, c7nopf, c7done, BC7INITS, B16LOADS7, EACHCI(B16CI7), B16STORES7, NEXTHALF(c7skip), 448)

// func bcRow4x16AVX512(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32, nib, bstride, acc, half, wpair, opair, bpair int)
// bcRow4AVX512 over NCHW16c (above).
TEXT ·bcRow4x16AVX512(SB), NOSPLIT, $0-120
	BCROW4(c4block, c4acc, c4start, c4ib, c4tap, c4nopf, c4done, B16LOADS4, EACHCI(B16CI4), B16STORES4, NEXTHALF(c4skip), 384)
