//go:build amd64 && !purego

#include "textflag.h"

// TRANSPOSE8 transposes the 8x8 block in rows Y0..Y7 into rows
// Y8..Y15 (unpack, shuffle, lane swap).
#define TRANSPOSE8 \
	VUNPCKLPS Y1, Y0, Y8; \
	VUNPCKHPS Y1, Y0, Y9; \
	VUNPCKLPS Y3, Y2, Y10; \
	VUNPCKHPS Y3, Y2, Y11; \
	VUNPCKLPS Y5, Y4, Y12; \
	VUNPCKHPS Y5, Y4, Y13; \
	VUNPCKLPS Y7, Y6, Y14; \
	VUNPCKHPS Y7, Y6, Y15; \
	VSHUFPS $0x44, Y10, Y8, Y0; \
	VSHUFPS $0xEE, Y10, Y8, Y1; \
	VSHUFPS $0x44, Y11, Y9, Y2; \
	VSHUFPS $0xEE, Y11, Y9, Y3; \
	VSHUFPS $0x44, Y14, Y12, Y4; \
	VSHUFPS $0xEE, Y14, Y12, Y5; \
	VSHUFPS $0x44, Y15, Y13, Y6; \
	VSHUFPS $0xEE, Y15, Y13, Y7; \
	VPERM2F128 $0x20, Y4, Y0, Y8; \
	VPERM2F128 $0x20, Y5, Y1, Y9; \
	VPERM2F128 $0x20, Y6, Y2, Y10; \
	VPERM2F128 $0x20, Y7, Y3, Y11; \
	VPERM2F128 $0x31, Y4, Y0, Y12; \
	VPERM2F128 $0x31, Y5, Y1, Y13; \
	VPERM2F128 $0x31, Y6, Y2, Y14; \
	VPERM2F128 $0x31, Y7, Y3, Y15


// DWCTAPS accumulates every tap into Y0..Y7, eight output positions of
// a channel-blocked row (eight channels a position, 32 bytes), the
// positions D1..D7 bytes after the first in the input: for tap q, the
// eight channels' weights (R9 + 32q, Y8) times the input at SI +
// offs[q] (bytes) plus the position's displacement. R8 is offs, R10
// the tap count; R11-R13 are scratch.
#define DWCTAPS(LABEL, D1, D2, D3, D4, D5, D6, D7) \
	XORQ R11, R11; \
	MOVQ R9, R12; \
LABEL: \
	MOVQ (R8)(R11*8), R13; \
	ADDQ SI, R13; \
	VMOVUPS (R12), Y8; \
	VFMADD231PS (R13), Y8, Y0; \
	VFMADD231PS D1(R13), Y8, Y1; \
	VFMADD231PS D2(R13), Y8, Y2; \
	VFMADD231PS D3(R13), Y8, Y3; \
	VFMADD231PS D4(R13), Y8, Y4; \
	VFMADD231PS D5(R13), Y8, Y5; \
	VFMADD231PS D6(R13), Y8, Y6; \
	VFMADD231PS D7(R13), Y8, Y7; \
	ADDQ $32, R12; \
	INCQ R11; \
	CMPQ R11, R10; \
	JLT  LABEL

#define DWCSETUP \
	MOVQ out+0(FP), DI; \
	MOVQ in+8(FP), SI; \
	MOVQ nb+16(FP), CX; \
	MOVQ offs+24(FP), R8; \
	MOVQ w+32(FP), R9; \
	MOVQ taps+40(FP), R10; \
	MOVQ bias+48(FP), AX; \
	VMOVUPS (AX), Y9; \
	VBROADCASTSS lo+56(FP), Y13; \
	VBROADCASTSS hi+60(FP), Y14

#define DWCINIT \
	VMOVAPS Y9, Y0; \
	VMOVAPS Y9, Y1; \
	VMOVAPS Y9, Y2; \
	VMOVAPS Y9, Y3; \
	VMOVAPS Y9, Y4; \
	VMOVAPS Y9, Y5; \
	VMOVAPS Y9, Y6; \
	VMOVAPS Y9, Y7

#define DWCSTORE \
	CLAMPSTORE(Y0, 0); \
	CLAMPSTORE(Y1, 32); \
	CLAMPSTORE(Y2, 64); \
	CLAMPSTORE(Y3, 96); \
	CLAMPSTORE(Y4, 128); \
	CLAMPSTORE(Y5, 160); \
	CLAMPSTORE(Y6, 192); \
	CLAMPSTORE(Y7, 224)


// DWTAPS accumulates every tap into the N registers listed by FMA:
// for tap q, w[q] broadcast (Y15) times the input at in + 4*offs[q] +
// the chunk's byte offset. SI is the chunk's input, R8 offs, R9 w,
// R10 the tap count; R11-R13 are scratch.
#define DWTAPS(LABEL, FMA) \
	XORQ R11, R11; \
LABEL: \
	MOVQ (R8)(R11*8), R12; \
	VBROADCASTSS (R9)(R11*4), Y15; \
	LEAQ (SI)(R12*4), R13; \
	FMA; \
	INCQ R11; \
	CMPQ R11, R10; \
	JLT  LABEL

#define FMA8 \
	VFMADD231PS (R13), Y15, Y0; \
	VFMADD231PS 32(R13), Y15, Y1; \
	VFMADD231PS 64(R13), Y15, Y2; \
	VFMADD231PS 96(R13), Y15, Y3; \
	VFMADD231PS 128(R13), Y15, Y4; \
	VFMADD231PS 160(R13), Y15, Y5; \
	VFMADD231PS 192(R13), Y15, Y6; \
	VFMADD231PS 224(R13), Y15, Y7

#define FMA1 VFMADD231PS (R13), Y15, Y0

#define FMAS VFMADD231SS (R13), X15, X0

// CLAMPSTOREAT clamps Y to [Y13, Y14] (a NaN passes: it is the second
// source) and stores it at byte offset OFF of register R.
#define CLAMPSTOREAT(Y, OFF, R) \
	VMAXPS Y, Y13, Y; \
	VMINPS Y, Y14, Y; \
	VMOVUPS Y, OFF(R)

// CLAMPSTORE is CLAMPSTOREAT to DI.
#define CLAMPSTORE(Y, OFF) CLAMPSTOREAT(Y, OFF, DI)

// GCCI adds input channel CI's products at one tap: its eight output
// channels' weights (R12 + 32*CI, Y8) times the channel's value at
// each of eight positions D bytes apart (R13 + 4*CI + i*D, broadcast).
#define GCCI(CI, D) \
	VMOVUPS (CI*32)(R12), Y8; \
	VBROADCASTSS (CI*4)(R13), Y9; \
	VFMADD231PS Y8, Y9, Y0; \
	VBROADCASTSS (CI*4+1*D)(R13), Y10; \
	VFMADD231PS Y8, Y10, Y1; \
	VBROADCASTSS (CI*4+2*D)(R13), Y9; \
	VFMADD231PS Y8, Y9, Y2; \
	VBROADCASTSS (CI*4+3*D)(R13), Y10; \
	VFMADD231PS Y8, Y10, Y3; \
	VBROADCASTSS (CI*4+4*D)(R13), Y9; \
	VFMADD231PS Y8, Y9, Y4; \
	VBROADCASTSS (CI*4+5*D)(R13), Y10; \
	VFMADD231PS Y8, Y10, Y5; \
	VBROADCASTSS (CI*4+6*D)(R13), Y9; \
	VFMADD231PS Y8, Y9, Y6; \
	VBROADCASTSS (CI*4+7*D)(R13), Y10; \
	VFMADD231PS Y8, Y10, Y7

// GCROW is the body of gcRowS1AVX2 (D 32, ADV 256) and gcRowS2AVX2 (D
// 64, ADV 512), its labels prefixed by the caller's.
#define GCROW(BLOCK, IB, TAP, DONE, D, ADV) \
	MOVQ out+0(FP), DI; \
	MOVQ in+8(FP), SI; \
	MOVQ nb+16(FP), CX; \
	MOVQ offs+24(FP), R8; \
	MOVQ w+32(FP), R9; \
	MOVQ taps+40(FP), R10; \
	MOVQ bias+48(FP), AX; \
	VMOVUPS (AX), Y11; \
	VBROADCASTSS lo+56(FP), Y13; \
	VBROADCASTSS hi+60(FP), Y14; \
BLOCK: \
	TESTQ CX, CX; \
	JEQ   DONE; \
	VMOVAPS Y11, Y0; \
	VMOVAPS Y11, Y1; \
	VMOVAPS Y11, Y2; \
	VMOVAPS Y11, Y3; \
	VMOVAPS Y11, Y4; \
	VMOVAPS Y11, Y5; \
	VMOVAPS Y11, Y6; \
	VMOVAPS Y11, Y7; \
	MOVQ SI, R11; \
	MOVQ R9, R12; \
	MOVQ nib+64(FP), DX; \
IB: \
	XORQ BX, BX; \
TAP: \
	MOVQ (R8)(BX*8), R13; \
	ADDQ R11, R13; \
	GCCI(0, D); \
	GCCI(1, D); \
	GCCI(2, D); \
	GCCI(3, D); \
	GCCI(4, D); \
	GCCI(5, D); \
	GCCI(6, D); \
	GCCI(7, D); \
	ADDQ $256, R12; \
	INCQ BX; \
	CMPQ BX, R10; \
	JLT  TAP; \
	ADDQ bstride+72(FP), R11; \
	DECQ DX; \
	JNZ  IB; \
	DWCSTORE; \
	ADDQ $ADV, SI; \
	ADDQ $256, DI; \
	DECQ CX; \
	JMP  BLOCK; \
DONE: \
	VZEROUPPER; \
	RET

// LOADROWS8 loads eight rows, R9 bytes apart from R11 (R10 = 3*R9), into
// Y0..Y7 (MASK: masked by Y15); R11 moves on four rows.
#define LOADROWS8(OP) \
	OP (R11), Y0; \
	OP (R11)(R9*1), Y1; \
	OP (R11)(R9*2), Y2; \
	OP (R11)(R10*1), Y3; \
	LEAQ (R11)(R9*4), R11; \
	OP (R11), Y4; \
	OP (R11)(R9*1), Y5; \
	OP (R11)(R9*2), Y6; \
	OP (R11)(R10*1), Y7

// STOREROWS8 stores Y8..Y15 as eight rows, R8 bytes apart from BASE
// (R10 = 3*R8); BASE moves on four rows.
#define STOREROWS8(BASE) \
	VMOVUPS Y8, (BASE); \
	VMOVUPS Y9, (BASE)(R8*1); \
	VMOVUPS Y10, (BASE)(R8*2); \
	VMOVUPS Y11, (BASE)(R10*1); \
	LEAQ (BASE)(R8*4), BASE; \
	VMOVUPS Y12, (BASE); \
	VMOVUPS Y13, (BASE)(R8*1); \
	VMOVUPS Y14, (BASE)(R8*2); \
	VMOVUPS Y15, (BASE)(R10*1)

// MASKSTOREROWS8 is STOREROWS8 of the lanes Y0 masks.
#define MASKSTOREROWS8(BASE) \
	VMASKMOVPS Y8, Y0, (BASE); \
	VMASKMOVPS Y9, Y0, (BASE)(R8*1); \
	VMASKMOVPS Y10, Y0, (BASE)(R8*2); \
	VMASKMOVPS Y11, Y0, (BASE)(R10*1); \
	LEAQ (BASE)(R8*4), BASE; \
	VMASKMOVPS Y12, Y0, (BASE); \
	VMASKMOVPS Y13, Y0, (BASE)(R8*1); \
	VMASKMOVPS Y14, Y0, (BASE)(R8*2); \
	VMASKMOVPS Y15, Y0, (BASE)(R10*1)

// MASKLOADROWS8 is LOADROWS8 of the lanes Y15 masks (the rest zero).
#define MASKLOADROWS8 \
	VMASKMOVPS (R11), Y15, Y0; \
	VMASKMOVPS (R11)(R9*1), Y15, Y1; \
	VMASKMOVPS (R11)(R9*2), Y15, Y2; \
	VMASKMOVPS (R11)(R10*1), Y15, Y3; \
	LEAQ (R11)(R9*4), R11; \
	VMASKMOVPS (R11), Y15, Y4; \
	VMASKMOVPS (R11)(R9*1), Y15, Y5; \
	VMASKMOVPS (R11)(R9*2), Y15, Y6; \
	VMASKMOVPS (R11)(R10*1), Y15, Y7

// NMAX sets A = max(A, X), a NaN in either winning (max32AVX2's
// three steps); T1 and T2 are scratch.
#define NMAX(X, A, T1, T2) \
	VMAXPS X, A, T1; \
	VCMPPS $3, A, A, T2; \
	VBLENDVPS T2, A, T1, A

// VMAX3 sets A to the max (NMAX) of the three rows SI, DX, R8 at OFF
// bytes.
#define VMAX3(OFF, A) \
	VMOVUPS OFF(SI), A; \
	VMOVUPS OFF(DX), Y14; \
	NMAX(Y14, A, Y12, Y13); \
	VMOVUPS OFF(R8), Y14; \
	NMAX(Y14, A, Y12, Y13)

// VMAX3M is VMAX3 of the lanes MASK selects (the rest zero).
#define VMAX3M(OFF, MASK, A) \
	VMASKMOVPS OFF(SI), MASK, A; \
	VMASKMOVPS OFF(DX), MASK, Y14; \
	NMAX(Y14, A, Y12, Y13); \
	VMASKMOVPS OFF(R8), MASK, Y14; \
	NMAX(Y14, A, Y12, Y13)

// MPSTEP computes eight outputs of maxPoolS2RowsAVX2 into Y2 from the
// rows' maxima over columns 0-7 (LOAD0 into Y0), 8-15 (LOAD1, Y1) and,
// for 3-wide windows (R9 != 0), 2-9 (LOAD2, Y4) and 10-17 (LOAD3, Y5);
// Y0-Y6 and Y12-Y14 are scratch.
#define MPSTEP(LOAD0, LOAD1, LOAD2, LOAD3, SKIP) \
	LOAD0; \
	LOAD1; \
	VSHUFPS $0x88, Y1, Y0, Y2; \
	VSHUFPS $0xDD, Y1, Y0, Y3; \
	NMAX(Y3, Y2, Y12, Y13); \
	TESTQ R9, R9; \
	JEQ   SKIP; \
	LOAD2; \
	LOAD3; \
	VSHUFPS $0x88, Y5, Y4, Y6; \
	NMAX(Y6, Y2, Y12, Y13); \
SKIP: \
	VPERMPD $0xD8, Y2, Y2

// func dwRowsAVX2(out, in *float32, n int, offs *int, w *float32, taps int, bias, lo, hi float32)
// out[t] = min(max(bias + sum over q of w[q]*in[offs[q]+t], lo), hi)
// for t < n, taps summed in order, each a fused multiply-add (as an
// axpy per tap computes them). Eight accumulators over 64 outputs keep
// both FMA ports busy through the taps' dependency chains.
TEXT ·dwRowsAVX2(SB), NOSPLIT, $0-60
	MOVQ out+0(FP), DI
	MOVQ in+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ offs+24(FP), R8
	MOVQ w+32(FP), R9
	MOVQ taps+40(FP), R10
	VBROADCASTSS bias+48(FP), Y12
	VBROADCASTSS lo+52(FP), Y13
	VBROADCASTSS hi+56(FP), Y14

dw64:
	CMPQ CX, $64
	JLT  dw8
	VMOVAPS Y12, Y0
	VMOVAPS Y12, Y1
	VMOVAPS Y12, Y2
	VMOVAPS Y12, Y3
	VMOVAPS Y12, Y4
	VMOVAPS Y12, Y5
	VMOVAPS Y12, Y6
	VMOVAPS Y12, Y7
	DWTAPS(dwtap64, FMA8)
	CLAMPSTORE(Y0, 0)
	CLAMPSTORE(Y1, 32)
	CLAMPSTORE(Y2, 64)
	CLAMPSTORE(Y3, 96)
	CLAMPSTORE(Y4, 128)
	CLAMPSTORE(Y5, 160)
	CLAMPSTORE(Y6, 192)
	CLAMPSTORE(Y7, 224)
	ADDQ $256, SI
	ADDQ $256, DI
	SUBQ $64, CX
	JMP  dw64

dw8:
	CMPQ CX, $8
	JLT  dw1
	VMOVAPS Y12, Y0
	DWTAPS(dwtap8, FMA1)
	CLAMPSTORE(Y0, 0)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  dw8

dw1:
	TESTQ CX, CX
	JEQ  dwdone
	VMOVAPS X12, X0
	DWTAPS(dwtap1, FMAS)
	VMAXSS X0, X13, X0
	VMINSS X0, X14, X0
	VMOVSS X0, (DI)
	ADDQ $4, SI
	ADDQ $4, DI
	DECQ CX
	JMP  dw1

dwdone:
	VZEROUPPER
	RET

// func max32AVX2(dst, src *float32, n int)
// dst[i] = max(dst[i], src[i]) for i < n&^7 (the caller does the
// rest), a NaN in either winning, as PyTorch's max pooling: VMAXPS
// gives src where either is NaN, then dst's NaNs are blended back.
TEXT ·max32AVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JEQ  mxdone

mxloop:
	VMOVUPS (DI), Y0
	VMOVUPS (SI), Y1
	VMAXPS Y1, Y0, Y2
	VCMPPS $3, Y0, Y0, Y3
	VBLENDVPS Y3, Y0, Y2, Y2
	VMOVUPS Y2, (DI)
	ADDQ $32, DI
	ADDQ $32, SI
	DECQ CX
	JNE  mxloop

mxdone:
	VZEROUPPER
	RET

// func maxPoolS2RowsAVX2(dst *float32, ldd int, src *float32, step, d1, d2, rows, n, full, vin, k3 int)
// Max pooling at column stride 2 over windows of up to 3 rows and 2 or
// 3 (k3 != 0) columns, a NaN winning, for rows output rows of n
// outputs: output row r (dst + r*ldd bytes) from the input rows at
// src + r*step, +d1 and +d1+d2 bytes (a zero d repeats a row), output j
// from columns 2j to 2j+1+k3. Per eight outputs, the rows' maxima over
// 16 columns (and 16 from column 2) are dealt into even and odd columns
// by VSHUFPS, whose lane order one VPERMPD restores after the max. The
// first full steps of a row load whole vectors; the rest load and store
// masked, the input to vin floats a row, so nothing past a row's
// columns or the output's n is touched.
TEXT ·maxPoolS2RowsAVX2(SB), NOSPLIT, $0-88
	MOVQ dst+0(FP), R10
	MOVQ src+16(FP), R12
	MOVQ rows+48(FP), R14
	MOVQ n+56(FP), BX
	MOVQ full+64(FP), AX
	MOVQ k3+80(FP), R9
	TESTQ R14, R14
	JEQ   mpdone

mprow:
	MOVQ R10, DI
	MOVQ R12, SI
	MOVQ SI, DX
	ADDQ d1+32(FP), DX
	MOVQ DX, R8
	ADDQ d2+40(FP), R8
	MOVQ AX, CX
	TESTQ CX, CX
	JEQ   mptail

mpfull:
	MPSTEP(VMAX3(0, Y0), VMAX3(32, Y1), VMAX3(8, Y4), VMAX3(40, Y5), mpfskip)
	VMOVUPS Y2, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DX
	ADDQ    $64, R8
	ADDQ    $32, DI
	DECQ    CX
	JNE     mpfull

mptail:
	// CX: outputs left, R11: input floats left from SI.
	MOVQ AX, R13
	SHLQ $3, R13
	MOVQ BX, CX
	SUBQ R13, CX
	MOVQ vin+72(FP), R11
	SHLQ $1, R13
	SUBQ R13, R11

mpmask:
	// VMOVQ, not MOVQ: a legacy SSE instruction with the upper halves
	// dirty costs a state transition, which took most of the time.
	CMPQ CX, $0
	JLE  mpnext
	VMOVQ        R11, X15
	VPBROADCASTD X15, Y15
	VPCMPGTD     mpIdx<>+0(SB), Y15, Y7
	VPCMPGTD     mpIdx<>+32(SB), Y15, Y8
	VPCMPGTD     mpIdx<>+64(SB), Y15, Y9
	VPCMPGTD     mpIdx<>+96(SB), Y15, Y10
	VMOVQ        CX, X15
	VPBROADCASTD X15, Y15
	VPCMPGTD     mpIdx<>+0(SB), Y15, Y11
	MPSTEP(VMAX3M(0, Y7, Y0), VMAX3M(32, Y8, Y1), VMAX3M(8, Y9, Y4), VMAX3M(40, Y10, Y5), mpmskip)
	VMASKMOVPS Y2, Y11, (DI)
	ADDQ       $64, SI
	ADDQ       $64, DX
	ADDQ       $64, R8
	ADDQ       $32, DI
	SUBQ       $8, CX
	SUBQ       $16, R11
	JMP        mpmask

mpnext:
	ADDQ ldd+8(FP), R10
	ADDQ step+24(FP), R12
	DECQ R14
	JNE  mprow

mpdone:
	VZEROUPPER
	RET

// mpIdx holds the lane indices 0-7, 8-15, 2-9 and 10-17 (int32) that
// maxPoolS2RowsAVX2 compares with its counts to make its masks.
DATA mpIdx<>+0(SB)/4, $0
DATA mpIdx<>+4(SB)/4, $1
DATA mpIdx<>+8(SB)/4, $2
DATA mpIdx<>+12(SB)/4, $3
DATA mpIdx<>+16(SB)/4, $4
DATA mpIdx<>+20(SB)/4, $5
DATA mpIdx<>+24(SB)/4, $6
DATA mpIdx<>+28(SB)/4, $7
DATA mpIdx<>+32(SB)/4, $8
DATA mpIdx<>+36(SB)/4, $9
DATA mpIdx<>+40(SB)/4, $10
DATA mpIdx<>+44(SB)/4, $11
DATA mpIdx<>+48(SB)/4, $12
DATA mpIdx<>+52(SB)/4, $13
DATA mpIdx<>+56(SB)/4, $14
DATA mpIdx<>+60(SB)/4, $15
DATA mpIdx<>+64(SB)/4, $2
DATA mpIdx<>+68(SB)/4, $3
DATA mpIdx<>+72(SB)/4, $4
DATA mpIdx<>+76(SB)/4, $5
DATA mpIdx<>+80(SB)/4, $6
DATA mpIdx<>+84(SB)/4, $7
DATA mpIdx<>+88(SB)/4, $8
DATA mpIdx<>+92(SB)/4, $9
DATA mpIdx<>+96(SB)/4, $10
DATA mpIdx<>+100(SB)/4, $11
DATA mpIdx<>+104(SB)/4, $12
DATA mpIdx<>+108(SB)/4, $13
DATA mpIdx<>+112(SB)/4, $14
DATA mpIdx<>+116(SB)/4, $15
DATA mpIdx<>+120(SB)/4, $16
DATA mpIdx<>+124(SB)/4, $17
GLOBL mpIdx<>(SB), RODATA|NOPTR, $128

// func hardAVX2(o, a *float32, n int, swish int)
// For i < n&^7 (the caller does the rest): c = min(max(a[i]+3, 0), 6)/6,
// o[i] = a[i]*c (swish != 0, hardswish) or c (hardsigmoid): the scalar
// form's operations in its order, so the same bits; a+3 is the second
// source of VMAXPS and VMINPS, so a NaN passes, as through Clamp32.
TEXT ·hardAVX2(SB), NOSPLIT, $0-32
	MOVQ o+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ swish+24(FP), R8
	SHRQ $3, CX
	JEQ  hddone
	MOVL $0x40400000, AX // 3
	MOVL AX, X4
	VBROADCASTSS X4, Y4
	MOVL $0x40c00000, AX // 6
	MOVL AX, X5
	VBROADCASTSS X5, Y5
	VXORPS Y6, Y6, Y6

hdloop:
	VMOVUPS (SI), Y0
	VADDPS Y4, Y0, Y1
	VMAXPS Y1, Y6, Y1
	VMINPS Y1, Y5, Y1
	VDIVPS Y5, Y1, Y1
	TESTQ R8, R8
	JEQ  2(PC)
	VMULPS Y1, Y0, Y1
	VMOVUPS Y1, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNE  hdloop

hddone:
	VZEROUPPER
	RET

// BINLOOP is bin32AVX2's loop for one operation OPS on Y0 (a's eight)
// and Y1 (b's eight, or the scalar b in Y6 when R8 is 0).
#define BINLOOP(LABEL, OPS) \
LABEL: \
	VMOVUPS (SI), Y0; \
	VMOVAPS Y6, Y1; \
	TESTQ R8, R8; \
	JEQ  2(PC); \
	VMOVUPS (DX), Y1; \
	OPS; \
	VMOVUPS Y0, (DI); \
	ADDQ $32, SI; \
	ADDQ $32, DI; \
	ADDQ R9, DX; \
	DECQ CX; \
	JNE  LABEL; \
	JMP  bindone

#define BOPADD VADDPS Y1, Y0, Y0
#define BOPSUB VSUBPS Y1, Y0, Y0
#define BOPMUL VMULPS Y1, Y0, Y0
#define BOPDIV VDIVPS Y1, Y0, Y0
#define BOPADDA VMULPS Y7, Y1, Y1; VADDPS Y1, Y0, Y0
#define BOPSUBA VMULPS Y7, Y1, Y1; VSUBPS Y1, Y0, Y0

// func bin32AVX2(op int, o, a, b *float32, n int, sb int, alpha float32)
// o[i] = a[i] op b[i*sb] for i < n (a multiple of 8; sb 1, or 0 for one
// b broadcast), op 0 add, 1 sub, 2 mul, 3 div, 4 a + alpha*b, 5
// a - alpha*b: the Go loops' operations, one rounding each (alpha*b is
// rounded before the add, not fused), so the same bits.
TEXT ·bin32AVX2(SB), NOSPLIT, $0-52
	MOVQ op+0(FP), AX
	MOVQ o+8(FP), DI
	MOVQ a+16(FP), SI
	MOVQ b+24(FP), DX
	MOVQ n+32(FP), CX
	MOVQ sb+40(FP), R8
	VBROADCASTSS alpha+48(FP), Y7
	SHRQ $3, CX
	JEQ  bindone
	VBROADCASTSS (DX), Y6
	XORQ R9, R9
	TESTQ R8, R8
	JEQ  2(PC)
	MOVQ $32, R9
	CMPQ AX, $1
	JEQ  binsub
	CMPQ AX, $2
	JEQ  binmul
	CMPQ AX, $3
	JEQ  bindiv
	CMPQ AX, $4
	JEQ  binadda
	CMPQ AX, $5
	JEQ  binsuba
	BINLOOP(binadd, BOPADD)
	BINLOOP(binsub, BOPSUB)
	BINLOOP(binmul, BOPMUL)
	BINLOOP(bindiv, BOPDIV)
	BINLOOP(binadda, BOPADDA)
	BINLOOP(binsuba, BOPSUBA)

bindone:
	VZEROUPPER
	RET

// func normAffineAVX2(dst, src, w, b *float32, n int, sc, sh float32, mode int, lo, hi float32)
// For i < n&^7 (the caller does the rest): dst[i] = (src[i]*sc + sh),
// times w[i] when mode&1, plus b[i] when mode&2: the scalar form's
// operations in its order, none fused, so the same bits; then, when
// mode&4, clamped to [lo, hi] as clamp32AVX2 clamps (NaN passing).
TEXT ·normAffineAVX2(SB), NOSPLIT, $0-64
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ w+16(FP), R9
	MOVQ b+24(FP), R10
	MOVQ n+32(FP), CX
	VBROADCASTSS sc+40(FP), Y4
	VBROADCASTSS sh+44(FP), Y5
	MOVQ mode+48(FP), R8
	VBROADCASTSS lo+56(FP), Y6
	VBROADCASTSS hi+60(FP), Y7
	SHRQ $3, CX
	JEQ  nadone

naloop:
	VMOVUPS (SI), Y0
	VMULPS Y4, Y0, Y0
	VADDPS Y5, Y0, Y0
	TESTQ $1, R8
	JEQ  3(PC)
	VMULPS (R9), Y0, Y0
	ADDQ $32, R9
	TESTQ $2, R8
	JEQ  3(PC)
	VADDPS (R10), Y0, Y0
	ADDQ $32, R10
	TESTQ $4, R8
	JEQ  3(PC)
	VMAXPS Y0, Y6, Y0
	VMINPS Y0, Y7, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	DECQ CX
	JNE  naloop

nadone:
	VZEROUPPER
	RET

// func transpose8x8AVX2(dst *float32, ldd int, src *float32, lds int)
// dst[r*ldd + c] = src[c*lds + r] for r, c < 8 (strides in floats): the
// eight source rows loaded, transposed in registers (unpack, shuffle,
// lane swap), stored as eight rows.
TEXT ·transpose8x8AVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), R8
	MOVQ src+16(FP), SI
	MOVQ lds+24(FP), R9
	SHLQ $2, R8
	SHLQ $2, R9
	LEAQ (R9)(R9*2), R10 // 3 rows
	MOVQ SI, R11
	LOADROWS8(VMOVUPS)
	TRANSPOSE8
	LEAQ (R8)(R8*2), R10
	STOREROWS8(DI)
	VZEROUPPER
	RET

// func dwcRowS1AVX2(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32)
// A row of a depthwise convolution in the channel-blocked layout (see
// [Channel-blocked depthwise]), stride 1: for nb blocks of 8 positions
// p, out[8p+j] = clamp(bias[j] + sum over q of w[8q+j]*in[8p+j +
// offs[q]/4]) to [lo, hi], NaN passing through, taps in order, each a
// fused multiply-add.
TEXT ·dwcRowS1AVX2(SB), NOSPLIT, $0-64
	DWCSETUP

dwc1block:
	TESTQ CX, CX
	JEQ   dwc1done
	DWCINIT
	DWCTAPS(dwc1tap, 32, 64, 96, 128, 160, 192, 224)
	DWCSTORE
	ADDQ $256, SI
	ADDQ $256, DI
	DECQ CX
	JMP  dwc1block

dwc1done:
	VZEROUPPER
	RET

// func dwcRowS2AVX2(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32)
// dwcRowS1AVX2 at stride 2: position p reads in[16p+j + offs[q]/4].
TEXT ·dwcRowS2AVX2(SB), NOSPLIT, $0-64
	DWCSETUP

dwc2block:
	TESTQ CX, CX
	JEQ   dwc2done
	DWCINIT
	DWCTAPS(dwc2tap, 64, 128, 192, 256, 320, 384, 448)
	DWCSTORE
	ADDQ $512, SI
	ADDQ $256, DI
	DECQ CX
	JMP  dwc2block

dwc2done:
	VZEROUPPER
	RET

// dwcMask: eight all-ones lanes, then eight zero ones; the 8 floats at
// byte offset 4*(8-r) mask the first r lanes.
DATA dwcMask<>+0(SB)/4, $0xffffffff
DATA dwcMask<>+4(SB)/4, $0xffffffff
DATA dwcMask<>+8(SB)/4, $0xffffffff
DATA dwcMask<>+12(SB)/4, $0xffffffff
DATA dwcMask<>+16(SB)/4, $0xffffffff
DATA dwcMask<>+20(SB)/4, $0xffffffff
DATA dwcMask<>+24(SB)/4, $0xffffffff
DATA dwcMask<>+28(SB)/4, $0xffffffff
DATA dwcMask<>+32(SB)/4, $0
DATA dwcMask<>+36(SB)/4, $0
DATA dwcMask<>+40(SB)/4, $0
DATA dwcMask<>+44(SB)/4, $0
DATA dwcMask<>+48(SB)/4, $0
DATA dwcMask<>+52(SB)/4, $0
DATA dwcMask<>+56(SB)/4, $0
DATA dwcMask<>+60(SB)/4, $0
GLOBL dwcMask<>(SB), RODATA|NOPTR, $64

// PACKROWS8 is the loop of packRows8AVX2 and packRows8PhasedAVX2: eight
// rows of CX floats at SI (R9 bytes apart, R10 = 3*R9) transposed eight
// columns at a time, the last columns (CX%8) loaded masked, each block's
// eight columns (Y8-Y15) stored by STORES, which also advances the
// destination.
#define PACKROWS8(LOOP, TAIL, STORE, DONE, STORES) \
LOOP: \
	CMPQ CX, $8; \
	JLT  TAIL; \
	MOVQ SI, R11; \
	LOADROWS8(VMOVUPS); \
	JMP  STORE; \
TAIL: \
	TESTQ CX, CX; \
	JEQ   DONE; \
	LEAQ  dwcMask<>(SB), R11; \
	MOVQ  $8, R12; \
	SUBQ  CX, R12; \
	VMOVUPS (R11)(R12*4), Y15; \
	MOVQ  SI, R11; \
	MASKLOADROWS8; \
	MOVQ $8, CX; \
STORE: \
	TRANSPOSE8; \
	STORES; \
	ADDQ $32, SI; \
	SUBQ $8, CX; \
	JMP  LOOP; \
DONE: \
	VZEROUPPER; \
	RET

// STORECOLS8 stores the eight columns one after the other at DI.
#define STORECOLS8 \
	VMOVUPS Y8, (DI); \
	VMOVUPS Y9, 32(DI); \
	VMOVUPS Y10, 64(DI); \
	VMOVUPS Y11, 96(DI); \
	VMOVUPS Y12, 128(DI); \
	VMOVUPS Y13, 160(DI); \
	VMOVUPS Y14, 192(DI); \
	VMOVUPS Y15, 224(DI); \
	ADDQ $256, DI

// STOREPHASES8 stores the even columns one after the other at DI, the
// odd ones at DX.
#define STOREPHASES8 \
	VMOVUPS Y8, (DI); \
	VMOVUPS Y9, (DX); \
	VMOVUPS Y10, 32(DI); \
	VMOVUPS Y11, 32(DX); \
	VMOVUPS Y12, 64(DI); \
	VMOVUPS Y13, 64(DX); \
	VMOVUPS Y14, 96(DI); \
	VMOVUPS Y15, 96(DX); \
	ADDQ $128, DI; \
	ADDQ $128, DX

// func packRows8AVX2(dst, src *float32, lds, n int)
// dst[8i+j] = src[j*lds+i] for i < n, j < 8: eight rows of n floats
// (lds apart) into n rows of 8, eight columns at a time; the last
// columns (n%8) are loaded masked, so their block's rows past n come
// out zero, and all eight rows of it are stored: dst holds
// 8*ceil(n/8) rows.
TEXT ·packRows8AVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ lds+16(FP), R9
	MOVQ n+24(FP), CX
	SHLQ $2, R9
	LEAQ (R9)(R9*2), R10
	PACKROWS8(pr8, prtail, prstore, prdone, STORECOLS8)

// STORECOLS8S is STORECOLS8 with each column's eight channels scaled
// by the eight floats at BX.
#define STORECOLS8S \
	VMULPS (BX), Y8, Y8; \
	VMULPS (BX), Y9, Y9; \
	VMULPS (BX), Y10, Y10; \
	VMULPS (BX), Y11, Y11; \
	VMULPS (BX), Y12, Y12; \
	VMULPS (BX), Y13, Y13; \
	VMULPS (BX), Y14, Y14; \
	VMULPS (BX), Y15, Y15; \
	STORECOLS8

// func packRows8ScaledAVX2(dst, src *float32, lds, n int, s *float32)
// packRows8AVX2 with row j (a channel) multiplied by s[j]: dst[8i+j] =
// src[j*lds+i] * s[j] (see [Scaled convolution input]). The last
// block's columns past n come out as 0 * s[j], which is not 0 for an
// infinite or NaN s[j]: the caller clears them.
TEXT ·packRows8ScaledAVX2(SB), NOSPLIT, $0-40
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ lds+16(FP), R9
	MOVQ n+24(FP), CX
	MOVQ s+32(FP), BX
	SHLQ $2, R9
	LEAQ (R9)(R9*2), R10
	PACKROWS8(ps8, pstail, psstore, psdone, STORECOLS8S)

// func packRows8PhasedAVX2(dst0, dst1, src *float32, lds, n int)
// packRows8AVX2 with the columns dealt by parity: column i's eight
// floats go to dst0 + 8*(i/2) for even i, dst1 + 8*(i/2) for odd i (the
// two phases of [Phased stride-2 depthwise]). As packRows8AVX2, the
// last block's columns past n come out zero and are stored: each phase
// holds 4*ceil(n/8) columns.
TEXT ·packRows8PhasedAVX2(SB), NOSPLIT, $0-40
	MOVQ dst0+0(FP), DI
	MOVQ dst1+8(FP), DX
	MOVQ src+16(FP), SI
	MOVQ lds+24(FP), R9
	MOVQ n+32(FP), CX
	SHLQ $2, R9
	LEAQ (R9)(R9*2), R10
	PACKROWS8(pp8, pptail, ppstore, ppdone, STOREPHASES8)

// func unpackRows8AVX2(dst *float32, ldd int, src *float32, n int)
// dst[j*ldd+i] = src[8i+j] for j < 8, i < n: n rows of 8 into eight
// rows (ldd apart), eight columns at a time; the last columns (n%8)
// are stored masked. src holds 8*ceil(n/8) rows (all are read).
TEXT ·unpackRows8AVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ ldd+8(FP), R8
	MOVQ src+16(FP), SI
	MOVQ n+24(FP), CX
	SHLQ $2, R8
	LEAQ (R8)(R8*2), R10

ur8:
	TESTQ CX, CX
	JEQ   urdone
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VMOVUPS 128(SI), Y4
	VMOVUPS 160(SI), Y5
	VMOVUPS 192(SI), Y6
	VMOVUPS 224(SI), Y7
	TRANSPOSE8
	MOVQ DI, R11
	CMPQ CX, $8
	JLT  urtail
	STOREROWS8(R11)
	ADDQ $256, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  ur8

urtail:
	LEAQ  dwcMask<>(SB), R12
	MOVQ  $8, R13
	SUBQ  CX, R13
	VMOVUPS (R12)(R13*4), Y0
	MASKSTOREROWS8(R11)

urdone:
	VZEROUPPER
	RET

// func gcRowS1AVX2(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32, nib, bstride int)
// A row of a grouped convolution in the channel-blocked layout (see
// [Channel-blocked grouped convolution]), stride 1: for nb blocks of 8
// positions p, out[8p+j] = clamp(bias[j] + the sum over input blocks b,
// taps q and channels ci of w[((b*taps+q)*8+ci)*8+j] * in[b*bstride/4 +
// offs[q]/4 + 8p+ci]) to [lo, hi], NaN passing through, in that order,
// each a fused multiply-add.
TEXT ·gcRowS1AVX2(SB), NOSPLIT, $0-80
	GCROW(gc1block, gc1ib, gc1tap, gc1done, 32, 256)

// func gcRowS2AVX2(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32, nib, bstride int)
// gcRowS1AVX2 at stride 2: position p reads in[... + 16p+ci].
TEXT ·gcRowS2AVX2(SB), NOSPLIT, $0-80
	GCROW(gc2block, gc2ib, gc2tap, gc2done, 64, 512)

// func sum32AVX2(x *float32, n int) float32
// The sum of x[:n] for n a multiple of 32: four vectors of partial sums
// (x[i+j] into lane j of accumulator i/8%4), added pairwise at the end.
TEXT ·sum32AVX2(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

sum32loop:
	CMPQ CX, $32
	JLT  sum32red
	VADDPS (SI), Y0, Y0
	VADDPS 32(SI), Y1, Y1
	VADDPS 64(SI), Y2, Y2
	VADDPS 96(SI), Y3, Y3
	ADDQ $128, SI
	SUBQ $32, CX
	JMP  sum32loop

sum32red:
	VADDPS Y1, Y0, Y0
	VADDPS Y3, Y2, Y2
	VADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VMOVHLPS X0, X0, X1
	VADDPS X1, X0, X0
	VMOVSHDUP X0, X1
	VADDSS X1, X0, X0
	VMOVSS X0, ret+16(FP)
	VZEROUPPER
	RET

// func bcRowAVX2(out, in *float32, nb int, offs *int, w *float32, taps int, bias *float32, lo, hi float32, nib, bstride, acc, half int)
// A row of a stride-1 convolution in the channel-blocked layout (see
// [Channel-blocked direct convolution]), 16 output channels: for nb
// blocks of 6 positions p, out[6p+i][j] (j < 8) and out[half/4 +
// (6p+i)*8 + j-8] (j >= 8) = clamp(bias[j] + the sum over input blocks
// b, taps q and channels ci of w[((b*taps+q)*8+ci)*16+j] *
// in[b*bstride/4 + offs[q]/4 + 8(6p+i)+ci]) to [lo, hi], NaN passing
// through, each a fused multiply-add. Two weight vectors and six
// broadcasts a channel feed twelve FMAs, the gemm kernel's ratio.
// With acc non-zero the sums start from what out holds instead of the
// bias: a later chunk of input blocks adds to an earlier one's. R14
// walks the second half of out.
TEXT ·bcRowAVX2(SB), NOSPLIT, $0-96
	MOVQ out+0(FP), DI
	MOVQ in+8(FP), SI
	MOVQ nb+16(FP), CX
	MOVQ offs+24(FP), R8
	MOVQ w+32(FP), R9
	MOVQ taps+40(FP), R10
	MOVQ bias+48(FP), AX
	MOVQ half+88(FP), R14
	ADDQ DI, R14

bcblock:
	TESTQ CX, CX
	JEQ   bcdone
	CMPQ  acc+80(FP), $0
	JNE   bcacc
	VMOVUPS (AX), Y0
	VMOVUPS 32(AX), Y1
	VMOVUPS (AX), Y2
	VMOVUPS 32(AX), Y3
	VMOVUPS (AX), Y4
	VMOVUPS 32(AX), Y5
	VMOVUPS (AX), Y6
	VMOVUPS 32(AX), Y7
	VMOVUPS (AX), Y8
	VMOVUPS 32(AX), Y9
	VMOVUPS (AX), Y10
	VMOVUPS 32(AX), Y11
	JMP     bcstart

bcacc:
	VMOVUPS (DI), Y0
	VMOVUPS 0(R14), Y1
	VMOVUPS 32(DI), Y2
	VMOVUPS 32(R14), Y3
	VMOVUPS 64(DI), Y4
	VMOVUPS 64(R14), Y5
	VMOVUPS 96(DI), Y6
	VMOVUPS 96(R14), Y7
	VMOVUPS 128(DI), Y8
	VMOVUPS 128(R14), Y9
	VMOVUPS 160(DI), Y10
	VMOVUPS 160(R14), Y11

bcstart:
	MOVQ SI, R11
	MOVQ R9, R12
	MOVQ nib+64(FP), DX

bcib:
	XORQ BX, BX

bctap:
	MOVQ (R8)(BX*8), R13
	ADDQ R11, R13
	VMOVUPS 0(R12), Y12
	VMOVUPS 32(R12), Y13
	VBROADCASTSS 0(R13), Y14
	VFMADD231PS Y12, Y14, Y0
	VFMADD231PS Y13, Y14, Y1
	VBROADCASTSS 32(R13), Y14
	VFMADD231PS Y12, Y14, Y2
	VFMADD231PS Y13, Y14, Y3
	VBROADCASTSS 64(R13), Y14
	VFMADD231PS Y12, Y14, Y4
	VFMADD231PS Y13, Y14, Y5
	VBROADCASTSS 96(R13), Y14
	VFMADD231PS Y12, Y14, Y6
	VFMADD231PS Y13, Y14, Y7
	VBROADCASTSS 128(R13), Y14
	VFMADD231PS Y12, Y14, Y8
	VFMADD231PS Y13, Y14, Y9
	VBROADCASTSS 160(R13), Y14
	VFMADD231PS Y12, Y14, Y10
	VFMADD231PS Y13, Y14, Y11
	VMOVUPS 64(R12), Y12
	VMOVUPS 96(R12), Y13
	VBROADCASTSS 4(R13), Y14
	VFMADD231PS Y12, Y14, Y0
	VFMADD231PS Y13, Y14, Y1
	VBROADCASTSS 36(R13), Y14
	VFMADD231PS Y12, Y14, Y2
	VFMADD231PS Y13, Y14, Y3
	VBROADCASTSS 68(R13), Y14
	VFMADD231PS Y12, Y14, Y4
	VFMADD231PS Y13, Y14, Y5
	VBROADCASTSS 100(R13), Y14
	VFMADD231PS Y12, Y14, Y6
	VFMADD231PS Y13, Y14, Y7
	VBROADCASTSS 132(R13), Y14
	VFMADD231PS Y12, Y14, Y8
	VFMADD231PS Y13, Y14, Y9
	VBROADCASTSS 164(R13), Y14
	VFMADD231PS Y12, Y14, Y10
	VFMADD231PS Y13, Y14, Y11
	VMOVUPS 128(R12), Y12
	VMOVUPS 160(R12), Y13
	VBROADCASTSS 8(R13), Y14
	VFMADD231PS Y12, Y14, Y0
	VFMADD231PS Y13, Y14, Y1
	VBROADCASTSS 40(R13), Y14
	VFMADD231PS Y12, Y14, Y2
	VFMADD231PS Y13, Y14, Y3
	VBROADCASTSS 72(R13), Y14
	VFMADD231PS Y12, Y14, Y4
	VFMADD231PS Y13, Y14, Y5
	VBROADCASTSS 104(R13), Y14
	VFMADD231PS Y12, Y14, Y6
	VFMADD231PS Y13, Y14, Y7
	VBROADCASTSS 136(R13), Y14
	VFMADD231PS Y12, Y14, Y8
	VFMADD231PS Y13, Y14, Y9
	VBROADCASTSS 168(R13), Y14
	VFMADD231PS Y12, Y14, Y10
	VFMADD231PS Y13, Y14, Y11
	VMOVUPS 192(R12), Y12
	VMOVUPS 224(R12), Y13
	VBROADCASTSS 12(R13), Y14
	VFMADD231PS Y12, Y14, Y0
	VFMADD231PS Y13, Y14, Y1
	VBROADCASTSS 44(R13), Y14
	VFMADD231PS Y12, Y14, Y2
	VFMADD231PS Y13, Y14, Y3
	VBROADCASTSS 76(R13), Y14
	VFMADD231PS Y12, Y14, Y4
	VFMADD231PS Y13, Y14, Y5
	VBROADCASTSS 108(R13), Y14
	VFMADD231PS Y12, Y14, Y6
	VFMADD231PS Y13, Y14, Y7
	VBROADCASTSS 140(R13), Y14
	VFMADD231PS Y12, Y14, Y8
	VFMADD231PS Y13, Y14, Y9
	VBROADCASTSS 172(R13), Y14
	VFMADD231PS Y12, Y14, Y10
	VFMADD231PS Y13, Y14, Y11
	VMOVUPS 256(R12), Y12
	VMOVUPS 288(R12), Y13
	VBROADCASTSS 16(R13), Y14
	VFMADD231PS Y12, Y14, Y0
	VFMADD231PS Y13, Y14, Y1
	VBROADCASTSS 48(R13), Y14
	VFMADD231PS Y12, Y14, Y2
	VFMADD231PS Y13, Y14, Y3
	VBROADCASTSS 80(R13), Y14
	VFMADD231PS Y12, Y14, Y4
	VFMADD231PS Y13, Y14, Y5
	VBROADCASTSS 112(R13), Y14
	VFMADD231PS Y12, Y14, Y6
	VFMADD231PS Y13, Y14, Y7
	VBROADCASTSS 144(R13), Y14
	VFMADD231PS Y12, Y14, Y8
	VFMADD231PS Y13, Y14, Y9
	VBROADCASTSS 176(R13), Y14
	VFMADD231PS Y12, Y14, Y10
	VFMADD231PS Y13, Y14, Y11
	VMOVUPS 320(R12), Y12
	VMOVUPS 352(R12), Y13
	VBROADCASTSS 20(R13), Y14
	VFMADD231PS Y12, Y14, Y0
	VFMADD231PS Y13, Y14, Y1
	VBROADCASTSS 52(R13), Y14
	VFMADD231PS Y12, Y14, Y2
	VFMADD231PS Y13, Y14, Y3
	VBROADCASTSS 84(R13), Y14
	VFMADD231PS Y12, Y14, Y4
	VFMADD231PS Y13, Y14, Y5
	VBROADCASTSS 116(R13), Y14
	VFMADD231PS Y12, Y14, Y6
	VFMADD231PS Y13, Y14, Y7
	VBROADCASTSS 148(R13), Y14
	VFMADD231PS Y12, Y14, Y8
	VFMADD231PS Y13, Y14, Y9
	VBROADCASTSS 180(R13), Y14
	VFMADD231PS Y12, Y14, Y10
	VFMADD231PS Y13, Y14, Y11
	VMOVUPS 384(R12), Y12
	VMOVUPS 416(R12), Y13
	VBROADCASTSS 24(R13), Y14
	VFMADD231PS Y12, Y14, Y0
	VFMADD231PS Y13, Y14, Y1
	VBROADCASTSS 56(R13), Y14
	VFMADD231PS Y12, Y14, Y2
	VFMADD231PS Y13, Y14, Y3
	VBROADCASTSS 88(R13), Y14
	VFMADD231PS Y12, Y14, Y4
	VFMADD231PS Y13, Y14, Y5
	VBROADCASTSS 120(R13), Y14
	VFMADD231PS Y12, Y14, Y6
	VFMADD231PS Y13, Y14, Y7
	VBROADCASTSS 152(R13), Y14
	VFMADD231PS Y12, Y14, Y8
	VFMADD231PS Y13, Y14, Y9
	VBROADCASTSS 184(R13), Y14
	VFMADD231PS Y12, Y14, Y10
	VFMADD231PS Y13, Y14, Y11
	VMOVUPS 448(R12), Y12
	VMOVUPS 480(R12), Y13
	VBROADCASTSS 28(R13), Y14
	VFMADD231PS Y12, Y14, Y0
	VFMADD231PS Y13, Y14, Y1
	VBROADCASTSS 60(R13), Y14
	VFMADD231PS Y12, Y14, Y2
	VFMADD231PS Y13, Y14, Y3
	VBROADCASTSS 92(R13), Y14
	VFMADD231PS Y12, Y14, Y4
	VFMADD231PS Y13, Y14, Y5
	VBROADCASTSS 124(R13), Y14
	VFMADD231PS Y12, Y14, Y6
	VFMADD231PS Y13, Y14, Y7
	VBROADCASTSS 156(R13), Y14
	VFMADD231PS Y12, Y14, Y8
	VFMADD231PS Y13, Y14, Y9
	VBROADCASTSS 188(R13), Y14
	VFMADD231PS Y12, Y14, Y10
	VFMADD231PS Y13, Y14, Y11
	ADDQ $512, R12
	INCQ BX
	CMPQ BX, R10
	JLT  bctap
	ADDQ bstride+72(FP), R11
	DECQ DX
	JNZ  bcib
	VBROADCASTSS lo+56(FP), Y13
	VBROADCASTSS hi+60(FP), Y14
	CLAMPSTORE(Y0, 0)
	CLAMPSTOREAT(Y1, 0, R14)
	CLAMPSTORE(Y2, 32)
	CLAMPSTOREAT(Y3, 32, R14)
	CLAMPSTORE(Y4, 64)
	CLAMPSTOREAT(Y5, 64, R14)
	CLAMPSTORE(Y6, 96)
	CLAMPSTOREAT(Y7, 96, R14)
	CLAMPSTORE(Y8, 128)
	CLAMPSTOREAT(Y9, 128, R14)
	CLAMPSTORE(Y10, 160)
	CLAMPSTOREAT(Y11, 160, R14)
	ADDQ $192, SI
	ADDQ $192, DI
	ADDQ $192, R14
	DECQ CX
	JMP  bcblock

bcdone:
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
