//go:build amd64 && !purego

#include "textflag.h"

// [Pointwise rows]
//
// PWCHUNK computes one chunk of 32 columns (R11 bytes in) for the
// eight output channels of pw8x32AVX512: Z(2r), Z(2r+1) row r's two
// halves, started from its bias (AX), then for each input channel q
// the input row's 32 floats (SI + q*R9 + R11; K1 and K2 mask each half)
// times the eight weights w[r*k + q] (R12 and BX walk rows 0-3 and 4-7,
// R14 = 4k bytes apart, R15 = 12k), the residual rows (nil: none) added,
// the clamp to [Z18, Z19], the rows stored under the masks.
#define PWCHUNK(QLOOP, NORES, STORE) \
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
	LEAQ (SI)(R11*1), R13; \
	MOVQ w+40(FP), R12; \
	LEAQ (R12)(R14*4), BX; \
	MOVQ k+32(FP), R10; \
QLOOP: \
	VMOVUPS.Z (R13), K1, Z16; \
	VMOVUPS.Z 64(R13), K2, Z17; \
	VBROADCASTSS (R12), Z20; \
	VBROADCASTSS (R12)(R14*1), Z21; \
	VBROADCASTSS (R12)(R14*2), Z22; \
	VBROADCASTSS (R12)(R15*1), Z23; \
	VBROADCASTSS (BX), Z24; \
	VBROADCASTSS (BX)(R14*1), Z25; \
	VBROADCASTSS (BX)(R14*2), Z26; \
	VBROADCASTSS (BX)(R15*1), Z27; \
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
	ADDQ R9, R13; \
	ADDQ $4, R12; \
	ADDQ $4, BX; \
	DECQ R10; \
	JNE  QLOOP; \
	MOVQ res+88(FP), R13; \
	TESTQ R13, R13; \
	JEQ  NORES; \
	ADDQ R11, R13; \
	MOVQ ldr+96(FP), R10; \
	VMOVUPS.Z (R13), K1, Z20; \
	VMOVUPS.Z 64(R13), K2, Z21; \
	VADDPS Z20, Z0, Z0; \
	VADDPS Z21, Z1, Z1; \
	ADDQ R10, R13; \
	VMOVUPS.Z (R13), K1, Z20; \
	VMOVUPS.Z 64(R13), K2, Z21; \
	VADDPS Z20, Z2, Z2; \
	VADDPS Z21, Z3, Z3; \
	ADDQ R10, R13; \
	VMOVUPS.Z (R13), K1, Z20; \
	VMOVUPS.Z 64(R13), K2, Z21; \
	VADDPS Z20, Z4, Z4; \
	VADDPS Z21, Z5, Z5; \
	ADDQ R10, R13; \
	VMOVUPS.Z (R13), K1, Z20; \
	VMOVUPS.Z 64(R13), K2, Z21; \
	VADDPS Z20, Z6, Z6; \
	VADDPS Z21, Z7, Z7; \
	ADDQ R10, R13; \
	VMOVUPS.Z (R13), K1, Z20; \
	VMOVUPS.Z 64(R13), K2, Z21; \
	VADDPS Z20, Z8, Z8; \
	VADDPS Z21, Z9, Z9; \
	ADDQ R10, R13; \
	VMOVUPS.Z (R13), K1, Z20; \
	VMOVUPS.Z 64(R13), K2, Z21; \
	VADDPS Z20, Z10, Z10; \
	VADDPS Z21, Z11, Z11; \
	ADDQ R10, R13; \
	VMOVUPS.Z (R13), K1, Z20; \
	VMOVUPS.Z 64(R13), K2, Z21; \
	VADDPS Z20, Z12, Z12; \
	VADDPS Z21, Z13, Z13; \
	ADDQ R10, R13; \
	VMOVUPS.Z (R13), K1, Z20; \
	VMOVUPS.Z 64(R13), K2, Z21; \
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
	ADDQ R8, DX; \
	VMAXPS Z2, Z18, Z2; \
	VMAXPS Z3, Z18, Z3; \
	VMINPS Z2, Z19, Z2; \
	VMINPS Z3, Z19, Z3; \
	VMOVUPS Z2, K1, (DX); \
	VMOVUPS Z3, K2, 64(DX); \
	ADDQ R8, DX; \
	VMAXPS Z4, Z18, Z4; \
	VMAXPS Z5, Z18, Z5; \
	VMINPS Z4, Z19, Z4; \
	VMINPS Z5, Z19, Z5; \
	VMOVUPS Z4, K1, (DX); \
	VMOVUPS Z5, K2, 64(DX); \
	ADDQ R8, DX; \
	VMAXPS Z6, Z18, Z6; \
	VMAXPS Z7, Z18, Z7; \
	VMINPS Z6, Z19, Z6; \
	VMINPS Z7, Z19, Z7; \
	VMOVUPS Z6, K1, (DX); \
	VMOVUPS Z7, K2, 64(DX); \
	ADDQ R8, DX; \
	VMAXPS Z8, Z18, Z8; \
	VMAXPS Z9, Z18, Z9; \
	VMINPS Z8, Z19, Z8; \
	VMINPS Z9, Z19, Z9; \
	VMOVUPS Z8, K1, (DX); \
	VMOVUPS Z9, K2, 64(DX); \
	ADDQ R8, DX; \
	VMAXPS Z10, Z18, Z10; \
	VMAXPS Z11, Z18, Z11; \
	VMINPS Z10, Z19, Z10; \
	VMINPS Z11, Z19, Z11; \
	VMOVUPS Z10, K1, (DX); \
	VMOVUPS Z11, K2, 64(DX); \
	ADDQ R8, DX; \
	VMAXPS Z12, Z18, Z12; \
	VMAXPS Z13, Z18, Z13; \
	VMINPS Z12, Z19, Z12; \
	VMINPS Z13, Z19, Z13; \
	VMOVUPS Z12, K1, (DX); \
	VMOVUPS Z13, K2, 64(DX); \
	ADDQ R8, DX; \
	VMAXPS Z14, Z18, Z14; \
	VMAXPS Z15, Z18, Z15; \
	VMINPS Z14, Z19, Z14; \
	VMINPS Z15, Z19, Z15; \
	VMOVUPS Z14, K1, (DX); \
	VMOVUPS Z15, K2, 64(DX); \
	ADDQ R8, DX


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

// BC2STORE clamps one position's accumulators to [Z20, Z21] (NaN
// passing through) and stores their halves as BC2LOAD reads them.
#define BC2STORE(ZA, YA, ZB, YB, OFF) \
	VMAXPS ZA, Z20, ZA; \
	VMINPS ZA, Z21, ZA; \
	VMAXPS ZB, Z20, ZB; \
	VMINPS ZB, Z21, ZB; \
	VMOVUPS YA, OFF(DI); \
	VEXTRACTF64X4 $1, ZA, OFF(R14); \
	VMOVUPS YB, OFF(R11); \
	VEXTRACTF64X4 $1, ZB, OFF(R13)

// func bcRow2AVX512(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32, nib, bstride, acc, half, wpair, opair, bpair int)
// bcRowAVX2 for two output blocks of 16 channels at once (see
// [Channel-blocked direct convolution]): block A as bcRowAVX2 takes it
// (out, w, bias), block B with its weights wpair bytes after A's, its
// output opair bytes after A's and its bias bpair bytes after A's. Each
// register holds one position's 16 channels of one block, so the six
// positions of both blocks are twelve accumulators; each element's sum
// is the one bcRowAVX2 computes, in the same order, bit for bit.
TEXT ·bcRow2AVX512(SB), NOSPLIT, $0-120
	MOVQ out+0(FP), DI
	MOVQ in+8(FP), SI
	MOVQ nb+16(FP), CX
	MOVQ offs+24(FP), R8
	MOVQ w+32(FP), R9
	MOVQ wpair+96(FP), R10
	MOVQ bias+48(FP), AX
	MOVQ half+88(FP), R14
	ADDQ DI, R14
	VBROADCASTSS lo+56(FP), Z20
	VBROADCASTSS hi+60(FP), Z21

bz2block:
	TESTQ CX, CX
	JEQ   bz2done
	// Block B's output halves at R11 and R13.
	MOVQ opair+104(FP), R11
	LEAQ (R14)(R11*1), R13
	ADDQ DI, R11
	CMPQ acc+80(FP), $0
	JNE  bz2acc
	MOVQ bpair+112(FP), BX
	VMOVUPS (AX), Z0
	VMOVUPS (AX)(BX*1), Z1
	VMOVAPS Z0, Z2
	VMOVAPS Z1, Z3
	VMOVAPS Z0, Z4
	VMOVAPS Z1, Z5
	VMOVAPS Z0, Z6
	VMOVAPS Z1, Z7
	VMOVAPS Z0, Z8
	VMOVAPS Z1, Z9
	VMOVAPS Z0, Z10
	VMOVAPS Z1, Z11
	JMP  bz2start

bz2acc:
	BC2LOAD(Z0, Y0, Z1, Y1, 0)
	BC2LOAD(Z2, Y2, Z3, Y3, 32)
	BC2LOAD(Z4, Y4, Z5, Y5, 64)
	BC2LOAD(Z6, Y6, Z7, Y7, 96)
	BC2LOAD(Z8, Y8, Z9, Y9, 128)
	BC2LOAD(Z10, Y10, Z11, Y11, 160)

bz2start:
	MOVQ SI, R11
	MOVQ R9, R12
	MOVQ nib+64(FP), DX

bz2ib:
	XORQ BX, BX

bz2tap:
	MOVQ (R8)(BX*8), R13
	ADDQ R11, R13
	BC2CI(0)
	BC2CI(1)
	BC2CI(2)
	BC2CI(3)
	BC2CI(4)
	BC2CI(5)
	BC2CI(6)
	BC2CI(7)
	ADDQ $512, R12
	INCQ BX
	CMPQ BX, taps+40(FP)
	JLT  bz2tap
	ADDQ bstride+72(FP), R11
	DECQ DX
	JNZ  bz2ib
	MOVQ opair+104(FP), R11
	LEAQ (R14)(R11*1), R13
	ADDQ DI, R11
	BC2STORE(Z0, Y0, Z1, Y1, 0)
	BC2STORE(Z2, Y2, Z3, Y3, 32)
	BC2STORE(Z4, Y4, Z5, Y5, 64)
	BC2STORE(Z6, Y6, Z7, Y7, 96)
	BC2STORE(Z8, Y8, Z9, Y9, 128)
	BC2STORE(Z10, Y10, Z11, Y11, 160)
	ADDQ $192, SI
	ADDQ $192, DI
	ADDQ $192, R14
	DECQ CX
	JMP  bz2block

bz2done:
	VZEROUPPER
	RET

// func dwcRowS1AVX512(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32)
// dwcRowS1AVX2 sixteen positions at a time: nb blocks of 16 positions,
// each register two adjacent positions' eight channels (their input is
// contiguous at stride 1), the tap's eight weights and the bias
// broadcast to both halves. Each element's sum is dwcRowS1AVX2's, in
// the same order, bit for bit.
TEXT ·dwcRowS1AVX512(SB), NOSPLIT, $0-64
	MOVQ out+0(FP), DI
	MOVQ in+8(FP), SI
	MOVQ nb+16(FP), CX
	MOVQ offs+24(FP), R8
	MOVQ w+32(FP), R9
	MOVQ taps+40(FP), R10
	MOVQ bias+48(FP), AX
	VBROADCASTF64X4 (AX), Z9
	VBROADCASTSS lo+56(FP), Z13
	VBROADCASTSS hi+60(FP), Z14

dz1block:
	TESTQ CX, CX
	JEQ   dz1done
	VMOVAPS Z9, Z0
	VMOVAPS Z9, Z1
	VMOVAPS Z9, Z2
	VMOVAPS Z9, Z3
	VMOVAPS Z9, Z4
	VMOVAPS Z9, Z5
	VMOVAPS Z9, Z6
	VMOVAPS Z9, Z7
	XORQ R11, R11
	MOVQ R9, R12

dz1tap:
	MOVQ (R8)(R11*8), R13
	ADDQ SI, R13
	VBROADCASTF64X4 (R12), Z8
	VFMADD231PS (R13), Z8, Z0
	VFMADD231PS 64(R13), Z8, Z1
	VFMADD231PS 128(R13), Z8, Z2
	VFMADD231PS 192(R13), Z8, Z3
	VFMADD231PS 256(R13), Z8, Z4
	VFMADD231PS 320(R13), Z8, Z5
	VFMADD231PS 384(R13), Z8, Z6
	VFMADD231PS 448(R13), Z8, Z7
	ADDQ $32, R12
	INCQ R11
	CMPQ R11, R10
	JLT  dz1tap
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
	VMOVUPS Z4, 256(DI)
	VMAXPS Z5, Z13, Z5
	VMINPS Z5, Z14, Z5
	VMOVUPS Z5, 320(DI)
	VMAXPS Z6, Z13, Z6
	VMINPS Z6, Z14, Z6
	VMOVUPS Z6, 384(DI)
	VMAXPS Z7, Z13, Z7
	VMINPS Z7, Z14, Z7
	VMOVUPS Z7, 448(DI)
	ADDQ $512, SI
	ADDQ $512, DI
	DECQ CX
	JMP  dz1block

dz1done:
	VZEROUPPER
	RET

// func pw8x32AVX512(out *float32, ldo int, x *float32, ldx int, k int, w *float32, n32, tail, mask1, mask2 int, bias, res *float32, ldr int, lo, hi float32)
// Eight output channels of a pointwise (1x1) convolution read straight
// from its input rows (see [Pointwise rows]): out[r*ldo + j] =
// clamp(bias[r] + sum over q < k of w[r*k+q]*x[q*ldx+j] (+ res[r*ldr +
// j]), lo, hi) for r < 8 and j < 32*n32, and with tail non-zero a last
// chunk of 32 columns under the masks mask1 and mask2 (each half's
// valid lanes). Strides in floats; k > 0.
TEXT ·pw8x32AVX512(SB), NOSPLIT, $0-112
	MOVQ out+0(FP), DI
	MOVQ ldo+8(FP), R8
	SHLQ $2, R8
	MOVQ x+16(FP), SI
	MOVQ ldx+24(FP), R9
	SHLQ $2, R9
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
	MOVQ n32+48(FP), CX
	XORQ R11, R11

pwchunk:
	TESTQ CX, CX
	JEQ  pwtail
	PWCHUNK(pwq, pwnores, pwstore)
	ADDQ $128, R11
	DECQ CX
	JMP  pwchunk

pwtail:
	CMPQ tail+56(FP), $0
	JEQ  pwdone
	MOVQ mask1+64(FP), DX
	KMOVW DX, K1
	MOVQ mask2+72(FP), DX
	KMOVW DX, K2
	PWCHUNK(pwtq, pwtnores, pwtstore)

pwdone:
	VZEROUPPER
	RET
