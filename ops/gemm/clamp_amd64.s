//go:build amd64 && !purego

#include "textflag.h"

// CLAMPSTORE4 clamps Y2-Y5 to [Y0, Y1] and stores them at DI: each
// value the second source of VMAXPS and the result of VMINPS's, so a
// NaN passes through. CLAMPSTORE1 does Y2 alone.
#define CLAMPSTORE4 \
	VMAXPS Y2, Y0, Y2; \
	VMAXPS Y3, Y0, Y3; \
	VMAXPS Y4, Y0, Y4; \
	VMAXPS Y5, Y0, Y5; \
	VMINPS Y2, Y1, Y2; \
	VMINPS Y3, Y1, Y3; \
	VMINPS Y4, Y1, Y4; \
	VMINPS Y5, Y1, Y5; \
	VMOVUPS Y2, (DI); \
	VMOVUPS Y3, 32(DI); \
	VMOVUPS Y4, 64(DI); \
	VMOVUPS Y5, 96(DI)
#define CLAMPSTORE1 \
	VMAXPS Y2, Y0, Y2; \
	VMINPS Y2, Y1, Y2; \
	VMOVUPS Y2, (DI)

// func clamp32AVX2(o, a *float32, n int, lo, hi float32)
// o[i] = min(max(a[i], lo), hi) for i < n&^7 (the caller does the tail).
// a[i] is the second source of VMAXPS and the result of VMINPS's, so a
// NaN passes through, as PyTorch's clamp and hardtanh.
TEXT ·clamp32AVX2(SB), NOSPLIT, $0-32
	MOVQ o+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSS lo+24(FP), Y0
	VBROADCASTSS hi+28(FP), Y1

loop32:
	CMPQ CX, $32
	JLT  loop8
	VMOVUPS (SI), Y2
	VMOVUPS 32(SI), Y3
	VMOVUPS 64(SI), Y4
	VMOVUPS 96(SI), Y5
	CLAMPSTORE4
	ADDQ $128, SI
	ADDQ $128, DI
	SUBQ $32, CX
	JMP  loop32

loop8:
	CMPQ CX, $8
	JLT  done
	VMOVUPS (SI), Y2
	CLAMPSTORE1
	ADDQ $32, SI
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  loop8

done:
	VZEROUPPER
	RET

// func addClamp32AVX2(o, a, b *float32, n int, lo, hi float32)
// o[i] = min(max(a[i]+b[i], lo), hi) for i < n&^7 (the caller does the
// tail): clamp32AVX2 of the sum, in one pass (a residual added and
// clamped while the output block is in cache).
TEXT ·addClamp32AVX2(SB), NOSPLIT, $0-40
	MOVQ o+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	VBROADCASTSS lo+32(FP), Y0
	VBROADCASTSS hi+36(FP), Y1

addloop32:
	CMPQ CX, $32
	JLT  addloop8
	VMOVUPS (SI), Y2
	VMOVUPS 32(SI), Y3
	VMOVUPS 64(SI), Y4
	VMOVUPS 96(SI), Y5
	VADDPS  (DX), Y2, Y2
	VADDPS  32(DX), Y3, Y3
	VADDPS  64(DX), Y4, Y4
	VADDPS  96(DX), Y5, Y5
	CLAMPSTORE4
	ADDQ $128, SI
	ADDQ $128, DX
	ADDQ $128, DI
	SUBQ $32, CX
	JMP  addloop32

addloop8:
	CMPQ CX, $8
	JLT  adddone
	VMOVUPS (SI), Y2
	VADDPS  (DX), Y2, Y2
	CLAMPSTORE1
	ADDQ $32, SI
	ADDQ $32, DX
	ADDQ $32, DI
	SUBQ $8, CX
	JMP  addloop8

adddone:
	VZEROUPPER
	RET
