//go:build amd64 && !purego

#include "textflag.h"

// func dotColsAVX512(out *int32, blk *int8, offs *int64, as *int32, nz int)
//
// The column kernel over one block of blockRows (128) rows: out[i] =
// Σ_k as[k]·blk[offs[k]+i] for i < 128, modulo 2³² (exact for the codes'
// range). Eight 16-lane accumulators (Z0-Z7) hold the 128 rows; for each
// term the code is broadcast (Z8) and its column's 128 bytes are widened
// to int32 sixteen at a time (VPMOVSXBD), multiplied and added. nz ≥ 1.
TEXT ·dotColsAVX512(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), DI
	MOVQ blk+8(FP), SI
	MOVQ offs+16(FP), R8
	MOVQ as+24(FP), R9
	MOVQ nz+32(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7

c512loop:
	MOVQ         (R8), AX
	ADDQ         SI, AX
	VPBROADCASTD (R9), Z8
	VPMOVSXBD    0(AX), Z9
	VPMOVSXBD    16(AX), Z10
	VPMOVSXBD    32(AX), Z11
	VPMOVSXBD    48(AX), Z12
	VPMULLD      Z8, Z9, Z9
	VPMULLD      Z8, Z10, Z10
	VPMULLD      Z8, Z11, Z11
	VPMULLD      Z8, Z12, Z12
	VPADDD       Z9, Z0, Z0
	VPADDD       Z10, Z1, Z1
	VPADDD       Z11, Z2, Z2
	VPADDD       Z12, Z3, Z3
	VPMOVSXBD    64(AX), Z9
	VPMOVSXBD    80(AX), Z10
	VPMOVSXBD    96(AX), Z11
	VPMOVSXBD    112(AX), Z12
	VPMULLD      Z8, Z9, Z9
	VPMULLD      Z8, Z10, Z10
	VPMULLD      Z8, Z11, Z11
	VPMULLD      Z8, Z12, Z12
	VPADDD       Z9, Z4, Z4
	VPADDD       Z10, Z5, Z5
	VPADDD       Z11, Z6, Z6
	VPADDD       Z12, Z7, Z7
	ADDQ         $8, R8
	ADDQ         $4, R9
	DECQ         CX
	JNZ          c512loop

	VMOVDQU32 Z0, 0(DI)
	VMOVDQU32 Z1, 64(DI)
	VMOVDQU32 Z2, 128(DI)
	VMOVDQU32 Z3, 192(DI)
	VMOVDQU32 Z4, 256(DI)
	VMOVDQU32 Z5, 320(DI)
	VMOVDQU32 Z6, 384(DI)
	VMOVDQU32 Z7, 448(DI)
	VZEROUPPER
	RET

// func dotColsAVX2(out *int32, blk *int8, offs *int64, as *int32, nz int)
//
// dotColsAVX512 for 64 rows with AVX2: eight 8-lane accumulators (Y0-Y7),
// the code broadcast in Y8, the column's 64 bytes widened eight at a time.
// The caller runs it twice for a block (rows 0-63, then blk+64 and
// out+64 for rows 64-127). nz ≥ 1.
TEXT ·dotColsAVX2(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), DI
	MOVQ blk+8(FP), SI
	MOVQ offs+16(FP), R8
	MOVQ as+24(FP), R9
	MOVQ nz+32(FP), CX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7

c256loop:
	MOVQ         (R8), AX
	ADDQ         SI, AX
	VPBROADCASTD (R9), Y8
	VPMOVSXBD    0(AX), Y9
	VPMOVSXBD    8(AX), Y10
	VPMOVSXBD    16(AX), Y11
	VPMOVSXBD    24(AX), Y12
	VPMULLD      Y8, Y9, Y9
	VPMULLD      Y8, Y10, Y10
	VPMULLD      Y8, Y11, Y11
	VPMULLD      Y8, Y12, Y12
	VPADDD       Y9, Y0, Y0
	VPADDD       Y10, Y1, Y1
	VPADDD       Y11, Y2, Y2
	VPADDD       Y12, Y3, Y3
	VPMOVSXBD    32(AX), Y9
	VPMOVSXBD    40(AX), Y10
	VPMOVSXBD    48(AX), Y11
	VPMOVSXBD    56(AX), Y12
	VPMULLD      Y8, Y9, Y9
	VPMULLD      Y8, Y10, Y10
	VPMULLD      Y8, Y11, Y11
	VPMULLD      Y8, Y12, Y12
	VPADDD       Y9, Y4, Y4
	VPADDD       Y10, Y5, Y5
	VPADDD       Y11, Y6, Y6
	VPADDD       Y12, Y7, Y7
	ADDQ         $8, R8
	ADDQ         $4, R9
	DECQ         CX
	JNZ          c256loop

	VMOVDQU Y0, 0(DI)
	VMOVDQU Y1, 32(DI)
	VMOVDQU Y2, 64(DI)
	VMOVDQU Y3, 96(DI)
	VMOVDQU Y4, 128(DI)
	VMOVDQU Y5, 160(DI)
	VMOVDQU Y6, 192(DI)
	VMOVDQU Y7, 224(DI)
	VZEROUPPER
	RET
