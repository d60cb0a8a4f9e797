//go:build amd64 && !purego

#include "textflag.h"

// func encodeRowAVX2(dst *int8, x *float32, n int, inv, s float64) (csum int32, r2, x2 float64)
//
// The int8 coding of encodeRow, four elements a pass: in float64, c =
// clamp(round-to-even(x_j·inv), ±127) (VROUNDPD), dst_j = c, and the sums
// Σc, Σ(x_j − s·c)² and Σx_j² (fused multiply-adds, four lanes each,
// summed at the end: relErr bounds any order). The codes are those of the
// portable loop, bit for bit. n must be a positive multiple of 4.
TEXT ·encodeRowAVX2(SB), NOSPLIT, $0-64
	MOVQ dst+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	VBROADCASTSD inv+24(FP), Y14
	VBROADCASTSD s+32(FP), Y13
	MOVQ $0x405FC00000000000, AX // 127.0
	VMOVQ AX, X12
	VBROADCASTSD X12, Y12
	MOVQ $0xC05FC00000000000, AX // -127.0
	VMOVQ AX, X11
	VBROADCASTSD X11, Y11
	VPXOR X10, X10, X10 // Σc, four int32 lanes
	VXORPD Y8, Y8, Y8   // Σr²
	VXORPD Y9, Y9, Y9   // Σx²

eloop:
	VCVTPS2PD   (SI), Y0
	VMULPD      Y14, Y0, Y1
	VROUNDPD    $8, Y1, Y1 // to nearest, ties to even; no precision exception
	VMINPD      Y12, Y1, Y1
	VMAXPD      Y11, Y1, Y1
	VCVTPD2DQY  Y1, X2
	VPADDD      X2, X10, X10
	VPACKSSDW   X2, X2, X2
	VPACKSSWB   X2, X2, X2
	VMOVD       X2, (DI)
	VMULPD      Y13, Y1, Y3 // s·c, exact
	VSUBPD      Y3, Y0, Y3  // the residual
	VFMADD231PD Y3, Y3, Y8
	VFMADD231PD Y0, Y0, Y9
	ADDQ        $16, SI
	ADDQ        $4, DI
	SUBQ        $4, CX
	JNZ         eloop

	VPSHUFD $0x4E, X10, X4
	VPADDD  X4, X10, X10
	VPSHUFD $0xB1, X10, X4
	VPADDD  X4, X10, X10
	VMOVD   X10, AX
	MOVL    AX, csum+40(FP)
	VEXTRACTF128 $1, Y8, X4
	VADDPD  X4, X8, X8
	VHADDPD X8, X8, X8
	VMOVSD  X8, r2+48(FP)
	VEXTRACTF128 $1, Y9, X4
	VADDPD  X4, X9, X9
	VHADDPD X9, X9, X9
	VMOVSD  X9, x2+56(FP)
	VZEROUPPER
	RET

// func absMaxBitsAVX2(x *float32, n int) uint32
//
// The largest of the bits of |x_j| (sign cleared) for j < n, eight lanes
// at a time (VPMAXUD): for finite floats, the bits of the largest
// magnitude. n must be a positive multiple of 8.
TEXT ·absMaxBitsAVX2(SB), NOSPLIT, $0-20
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	MOVL $0x7FFFFFFF, AX
	VMOVD AX, X7
	VPBROADCASTD X7, Y7
	VPXOR Y0, Y0, Y0

mloop:
	VPAND   (SI), Y7, Y1
	VPMAXUD Y1, Y0, Y0
	ADDQ    $32, SI
	SUBQ    $8, CX
	JNZ     mloop

	VEXTRACTI128 $1, Y0, X1
	VPMAXUD X1, X0, X0
	VPSHUFD $0x4E, X0, X1
	VPMAXUD X1, X0, X0
	VPSHUFD $0xB1, X0, X1
	VPMAXUD X1, X0, X0
	VMOVD   X0, AX
	MOVL    AX, ret+16(FP)
	VZEROUPPER
	RET
