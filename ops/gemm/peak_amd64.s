#include "textflag.h"
#include "tile6x16_amd64.h"

// func fmaPeak(n int)
// n rounds of 12 independent 8-wide FMAs (VFMADD231PS on Y0..Y11): enough
// chains to cover the FMA latency on both FMA pipes, so the loop runs at
// the core's FMA throughput. 192 flops a round.
TEXT ·fmaPeak(SB), NOSPLIT, $0-8
	MOVQ n+0(FP), CX
	ZERO12
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
loop:
	VFMADD231PS Y12, Y13, Y0
	VFMADD231PS Y12, Y13, Y1
	VFMADD231PS Y12, Y13, Y2
	VFMADD231PS Y12, Y13, Y3
	VFMADD231PS Y12, Y13, Y4
	VFMADD231PS Y12, Y13, Y5
	VFMADD231PS Y12, Y13, Y6
	VFMADD231PS Y12, Y13, Y7
	VFMADD231PS Y12, Y13, Y8
	VFMADD231PS Y12, Y13, Y9
	VFMADD231PS Y12, Y13, Y10
	VFMADD231PS Y12, Y13, Y11
	DECQ CX
	JNZ loop
	VZEROUPPER
	RET
