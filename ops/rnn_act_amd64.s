//go:build amd64 && !purego

#include "textflag.h"

// Vectorised sigmoid and tanh for the recurrent gate loops (rnn_act.go):
// expf's algorithm (fastmath.go) eight lanes at a time. R8 points to the
// constant table rnnActTab, one 8-lane row per constant.
#define LN2HI 0(R8)
#define LN2LO 32(R8)
#define P0 64(R8)
#define P1 96(R8)
#define P2 128(R8)
#define P3 160(R8)
#define P4 192(R8)
#define P5 224(R8)
#define BIAS127 256(R8)
#define ABSMASK 288(R8)
#define SIGNMASK 320(R8)
#define T0 352(R8)
#define T1 384(R8)
#define T2 416(R8)
#define T3 448(R8)
#define T4 480(R8)
#define SMALL 512(R8)
#define TINY 544(R8)
#define ERFP 736(R8)
#define ERFA1 768(R8)
#define ERFA2 800(R8)
#define ERFA3 832(R8)
#define ERFA4 864(R8)
#define ERFA5 896(R8)
#define RSQRT2 928(R8)
#define HALF 960(R8)

// Registers kept across the loop: Y11 2, Y12 log2(e), Y13 1, Y14 the
// largest and Y15 the smallest exp argument (outside, e**x would leave
// the normal range).
#define LOADCONSTS \
	VMOVUPS 576(R8), Y11 \
	VMOVUPS 608(R8), Y12 \
	VMOVUPS 640(R8), Y13 \
	VMOVUPS 672(R8), Y14 \
	VMOVUPS 704(R8), Y15

// EXP8: Y0 = e**Y0, using Y1-Y3. x is the second source of VMINPS and
// VMAXPS, so a NaN stays NaN.
#define EXP8 \
	VMINPS Y0, Y14, Y0 \
	VMAXPS Y0, Y15, Y0 \
	VMULPS Y12, Y0, Y1 \
	VROUNDPS $0, Y1, Y1 \
	VFNMADD231PS LN2HI, Y1, Y0 \
	VFNMADD231PS LN2LO, Y1, Y0 \
	VMOVUPS P0, Y2 \
	VFMADD213PS P1, Y0, Y2 \
	VFMADD213PS P2, Y0, Y2 \
	VFMADD213PS P3, Y0, Y2 \
	VFMADD213PS P4, Y0, Y2 \
	VFMADD213PS P5, Y0, Y2 \
	VMULPS Y0, Y0, Y3 \
	VFMADD213PS Y0, Y3, Y2 \
	VADDPS Y13, Y2, Y2 \
	VCVTPS2DQ Y1, Y1 \
	VPADDD BIAS127, Y1, Y1 \
	VPSLLD $23, Y1, Y1 \
	VMULPS Y1, Y2, Y0

// EXP8X2 is EXP8 on two vectors at once, Y0 (temporaries Y1-Y3) and Y4
// (Y5-Y7), their instructions interleaved: the chain of one vector is
// long (a dependent polynomial), and Zen's floating-point scheduler
// holds too few of its waiting instructions to overlap two iterations
// of a loop by itself. Each lane gets exactly what EXP8 gives it.
#define EXP8X2 \
	VMINPS Y0, Y14, Y0 \
	VMINPS Y4, Y14, Y4 \
	VMAXPS Y0, Y15, Y0 \
	VMAXPS Y4, Y15, Y4 \
	VMULPS Y12, Y0, Y1 \
	VMULPS Y12, Y4, Y5 \
	VROUNDPS $0, Y1, Y1 \
	VROUNDPS $0, Y5, Y5 \
	VFNMADD231PS LN2HI, Y1, Y0 \
	VFNMADD231PS LN2HI, Y5, Y4 \
	VFNMADD231PS LN2LO, Y1, Y0 \
	VFNMADD231PS LN2LO, Y5, Y4 \
	VMOVUPS P0, Y2 \
	VMOVUPS P0, Y6 \
	VFMADD213PS P1, Y0, Y2 \
	VFMADD213PS P1, Y4, Y6 \
	VFMADD213PS P2, Y0, Y2 \
	VFMADD213PS P2, Y4, Y6 \
	VFMADD213PS P3, Y0, Y2 \
	VFMADD213PS P3, Y4, Y6 \
	VFMADD213PS P4, Y0, Y2 \
	VFMADD213PS P4, Y4, Y6 \
	VFMADD213PS P5, Y0, Y2 \
	VFMADD213PS P5, Y4, Y6 \
	VMULPS Y0, Y0, Y3 \
	VMULPS Y4, Y4, Y7 \
	VFMADD213PS Y0, Y3, Y2 \
	VFMADD213PS Y4, Y7, Y6 \
	VADDPS Y13, Y2, Y2 \
	VADDPS Y13, Y6, Y6 \
	VCVTPS2DQ Y1, Y1 \
	VCVTPS2DQ Y5, Y5 \
	VPADDD BIAS127, Y1, Y1 \
	VPADDD BIAS127, Y5, Y5 \
	VPSLLD $23, Y1, Y1 \
	VPSLLD $23, Y5, Y5 \
	VMULPS Y1, Y2, Y0 \
	VMULPS Y5, Y6, Y4

// func rnnSigmoidAVX2(o, a *float32, n int, tab *[rnnActRows][8]uint32)
// o[i] = 1/(1 + e**-a[i]) for i < n&^7; o may be a.
TEXT ·rnnSigmoidAVX2(SB), NOSPLIT, $0-32
	MOVQ o+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ tab+24(FP), R8
	LOADCONSTS

sloop16:
	CMPQ CX, $16
	JLT  sloop
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y4
	VXORPS SIGNMASK, Y0, Y0
	VXORPS SIGNMASK, Y4, Y4
	EXP8X2
	VADDPS Y13, Y0, Y0
	VADDPS Y13, Y4, Y4
	VDIVPS Y0, Y13, Y0
	VDIVPS Y4, Y13, Y4
	VMOVUPS Y0, (DI)
	VMOVUPS Y4, 32(DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  sloop16

sloop:
	CMPQ CX, $8
	JLT  sdone
	VMOVUPS (SI), Y0
	VXORPS SIGNMASK, Y0, Y0
	EXP8
	VADDPS Y13, Y0, Y0
	VDIVPS Y0, Y13, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  sloop

sdone:
	VZEROUPPER
	RET

// func rnnTanhAVX2(o, a *float32, n int, tab *[rnnActRows][8]uint32)
// o[i] = tanh(a[i]) for i < n&^7, as tanhf: x below 2**-12, an odd
// polynomial below 0.625, 1 - 2/(e**2|x| + 1) with x's sign above.
TEXT ·rnnTanhAVX2(SB), NOSPLIT, $0-32
	MOVQ o+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ tab+24(FP), R8
	LOADCONSTS

tloop:
	CMPQ CX, $8
	JLT  tdone
	VMOVUPS (SI), Y4
	VANDPS ABSMASK, Y4, Y8
	VADDPS Y8, Y8, Y0
	EXP8
	VADDPS Y13, Y0, Y0
	VDIVPS Y0, Y11, Y0
	VSUBPS Y0, Y13, Y0
	VANDPS SIGNMASK, Y4, Y5
	VORPS Y5, Y0, Y0
	VMULPS Y4, Y4, Y6
	VMOVUPS T0, Y7
	VFMADD213PS T1, Y6, Y7
	VFMADD213PS T2, Y6, Y7
	VFMADD213PS T3, Y6, Y7
	VFMADD213PS T4, Y6, Y7
	VMULPS Y6, Y7, Y7
	VFMADD213PS Y4, Y4, Y7
	VCMPPS $1, SMALL, Y8, Y9
	VBLENDVPS Y9, Y7, Y0, Y0
	VCMPPS $1, TINY, Y8, Y9
	VBLENDVPS Y9, Y4, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  tloop

tdone:
	VZEROUPPER
	RET

// func rnnGeluAVX2(o, a *float32, n int, tab *[rnnActRows][8]uint32)
// o[i] = gelu(a[i]) for i < n&^7, as geluf: 0.5x(1 + erf(x/sqrt 2)) with
// erff's Abramowitz-Stegun 7.1.26 (1 - t(a1 + ... + a5 t**4) e**-z**2,
// t = 1/(1 + p|z|), z's sign); o may be a.
TEXT ·rnnGeluAVX2(SB), NOSPLIT, $0-32
	MOVQ o+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ tab+24(FP), R8
	LOADCONSTS

gloop:
	CMPQ CX, $8
	JLT  gdone
	VMOVUPS (SI), Y4
	VMULPS RSQRT2, Y4, Y5
	VANDPS ABSMASK, Y5, Y8
	VMOVUPS ERFP, Y6
	VFMADD213PS Y13, Y8, Y6
	VDIVPS Y6, Y13, Y6
	VMOVUPS ERFA5, Y7
	VFMADD213PS ERFA4, Y6, Y7
	VFMADD213PS ERFA3, Y6, Y7
	VFMADD213PS ERFA2, Y6, Y7
	VFMADD213PS ERFA1, Y6, Y7
	VMULPS Y6, Y7, Y7
	VMULPS Y8, Y8, Y0
	VXORPS SIGNMASK, Y0, Y0
	EXP8
	VMULPS Y7, Y0, Y0
	VSUBPS Y0, Y13, Y0
	VANDPS SIGNMASK, Y5, Y9
	VORPS Y9, Y0, Y0
	VADDPS Y13, Y0, Y0
	VMULPS HALF, Y4, Y10
	VMULPS Y10, Y0, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  gloop

gdone:
	VZEROUPPER
	RET

// func siluAVX2(o, a *float32, n int, tab *[rnnActRows][8]uint32)
// o[i] = a[i]*sigmoid(a[i]) for i < n&^7, sigmoid as rnnSigmoidAVX2
// computes it; where x < -88 the product is taken with 0 instead
// (x*sigmoid(x) is below float32's normals there, and the vectorised
// sigmoid holds a floor), so -Inf gives NaN and other x -0, as
// x/(1+exp(-x)) does. Sixteen at a time, two chains interleaved
// (EXP8X2). o may be a.
TEXT ·siluAVX2(SB), NOSPLIT, $0-32
	MOVQ o+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ tab+24(FP), R8
	LOADCONSTS
	VXORPS SIGNMASK, Y14, Y10 // -88

silu16:
	CMPQ CX, $16
	JLT  silu8
	VMOVUPS (SI), Y8
	VMOVUPS 32(SI), Y9
	VXORPS SIGNMASK, Y8, Y0
	VXORPS SIGNMASK, Y9, Y4
	EXP8X2
	VADDPS Y13, Y0, Y0
	VADDPS Y13, Y4, Y4
	VDIVPS Y0, Y13, Y0
	VDIVPS Y4, Y13, Y4
	VCMPPS $1, Y10, Y8, Y1 // x < -88
	VCMPPS $1, Y10, Y9, Y5
	VANDNPS Y0, Y1, Y0     // sigmoid where not, else 0
	VANDNPS Y4, Y5, Y4
	VMULPS Y0, Y8, Y0
	VMULPS Y4, Y9, Y4
	VMOVUPS Y0, (DI)
	VMOVUPS Y4, 32(DI)
	ADDQ $64, SI
	ADDQ $64, DI
	SUBQ $16, CX
	JMP  silu16

silu8:
	CMPQ CX, $8
	JLT  silu_done
	VMOVUPS (SI), Y8
	VXORPS SIGNMASK, Y8, Y0
	EXP8
	VADDPS Y13, Y0, Y0
	VDIVPS Y0, Y13, Y0
	VCMPPS $1, Y10, Y8, Y1
	VANDNPS Y0, Y1, Y0
	VMULPS Y0, Y8, Y0
	VMOVUPS Y0, (DI)
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  silu8

silu_done:
	VZEROUPPER
	RET

// func softmaxMaxAVX2(x *float32, n int) (mx float32, nan bool)
// The largest of x[:n] (n a positive multiple of 8) and whether any is a
// NaN (VMAXPS drops a NaN its first source holds, so NaNs are counted
// aside).
TEXT ·softmaxMaxAVX2(SB), NOSPLIT, $0-21
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	VMOVUPS (SI), Y0
	VCMPPS $3, Y0, Y0, Y2
	ADDQ $32, SI
	SUBQ $8, CX

mloop:
	CMPQ CX, $8
	JLT  mdone
	VMOVUPS (SI), Y3
	VMAXPS Y3, Y0, Y0
	VCMPPS $3, Y3, Y3, Y4
	VORPS Y4, Y2, Y2
	ADDQ $32, SI
	SUBQ $8, CX
	JMP  mloop

mdone:
	VEXTRACTF128 $1, Y0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0x4E, X0, X1
	VMAXPS X1, X0, X0
	VPERMILPS $0xB1, X0, X1
	VMAXPS X1, X0, X0
	MOVSS X0, mx+16(FP)
	VMOVMSKPS Y2, AX
	TESTL AX, AX
	SETNE nan+20(FP)
	VZEROUPPER
	RET

// func softmaxExpAVX2(o, x *float32, n int, mx float32, tab *[rnnActRows][8]uint32) float64
// o[i] = e**(x[i]-mx) for i < n&^7, as EXP8 computes it, but 0 where
// x[i]-mx is below -87 (e**-87 is 1.6e-38; EXP8 would hold that floor,
// and a -Inf from a mask must give 0), and returns their sum in float64
// (eight running sums, one a lane, added at the end). o may be x.
TEXT ·softmaxExpAVX2(SB), NOSPLIT, $0-48
	MOVQ o+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS mx+24(FP), Y10
	MOVQ tab+32(FP), R8
	LOADCONSTS
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9

eloop:
	CMPQ CX, $8
	JLT  edone
	VMOVUPS (SI), Y0
	VSUBPS Y10, Y0, Y0
	VCMPPS $1, Y15, Y0, Y4
	EXP8
	VANDNPS Y0, Y4, Y0
	VMOVUPS Y0, (DI)
	VCVTPS2PD X0, Y1
	VEXTRACTF128 $1, Y0, X2
	VCVTPS2PD X2, Y2
	VADDPD Y1, Y8, Y8
	VADDPD Y2, Y9, Y9
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  eloop

edone:
	VADDPD Y9, Y8, Y8
	VEXTRACTF128 $1, Y8, X1
	VADDPD X1, X8, X8
	VPERMILPD $1, X8, X1
	VADDSD X1, X8, X8
	MOVSD X8, ret+40(FP)
	VZEROUPPER
	RET

// func softmaxScaleAVX2(o *float32, n int, inv float64)
// o[i] = float32(float64(o[i]) * inv) for i < n&^7: the scalar loop's
// roundings exactly.
TEXT ·softmaxScaleAVX2(SB), NOSPLIT, $0-24
	MOVQ o+0(FP), DI
	MOVQ n+8(FP), CX
	VBROADCASTSD inv+16(FP), Y3

sloop8:
	CMPQ CX, $8
	JLT  sdone8
	VCVTPS2PD (DI), Y0
	VCVTPS2PD 16(DI), Y1
	VMULPD Y3, Y0, Y0
	VMULPD Y3, Y1, Y1
	VCVTPD2PSY Y0, X0
	VCVTPD2PSY Y1, X1
	VMOVUPS X0, (DI)
	VMOVUPS X1, 16(DI)
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  sloop8

sdone8:
	VZEROUPPER
	RET
