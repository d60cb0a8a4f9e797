//go:build amd64 && !purego

#include "textflag.h"

// Horizontal sum of the eight lanes of Y<acc> into the float32 at off(DI),
// using X3 as scratch.
#define HSUM_STORE(acc, xacc, off) \
	VEXTRACTF128 $1, acc, X3 \
	VADDPS       X3, xacc, xacc \
	VHADDPS      xacc, xacc, xacc \
	VHADDPS      xacc, xacc, xacc \
	VMOVSS       xacc, off(DI)

// func dotRowsAVX2(out *float32, q *float32, rows *float32, n int, d int)
//
// out[i] = Σ_j q[j]·rows[i*d+j] for i < n. d must be a positive multiple of
// 8. Four rows are scored per pass so that each 8-float chunk of q is loaded
// once for four fused multiply-adds into independent accumulators.
//
// Every kernel in this file computes a (query, row) score in the same order —
// one 8-lane accumulator, fused multiply-adds over the 8-float chunks in
// increasing order, then HSUM_STORE — so a row's score is bit-for-bit the
// same whichever kernel, batch position or tail computed it. The codes path
// relies on this to rescore single rows exactly as the plain scan would.
TEXT ·dotRowsAVX2(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), DI
	MOVQ q+8(FP), SI
	MOVQ rows+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ d+32(FP), R8
	SHLQ $2, R8 // row stride in bytes

loop4:
	CMPQ CX, $4
	JLT  tail
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	LEAQ   (DX)(R8*1), R9
	LEAQ   (R9)(R8*1), R10
	LEAQ   (R10)(R8*1), R11
	LEAQ   (R11)(R8*1), R12 // the next group of four rows, to prefetch
	LEAQ   (R12)(R8*1), R13
	LEAQ   (R13)(R8*1), R14
	LEAQ   (R14)(R8*1), R15
	XORQ   AX, AX
	MOVQ   R8, BX
	SUBQ   $64, BX // last offset where a 64-byte step fits

inner4x16:
	CMPQ        AX, BX
	JGT         inner4x8
	// Prefetch the next group: one cache line per row per step. Past the
	// last row this touches memory beyond the slice, which PREFETCH allows
	// (it never faults).
	PREFETCHT0  (R12)(AX*1)
	PREFETCHT0  (R13)(AX*1)
	PREFETCHT0  (R14)(AX*1)
	PREFETCHT0  (R15)(AX*1)
	VMOVUPS     (SI)(AX*1), Y0
	VMOVUPS     32(SI)(AX*1), Y1
	VFMADD231PS (DX)(AX*1), Y0, Y4
	VFMADD231PS (R9)(AX*1), Y0, Y5
	VFMADD231PS (R10)(AX*1), Y0, Y6
	VFMADD231PS (R11)(AX*1), Y0, Y7
	VFMADD231PS 32(DX)(AX*1), Y1, Y4
	VFMADD231PS 32(R9)(AX*1), Y1, Y5
	VFMADD231PS 32(R10)(AX*1), Y1, Y6
	VFMADD231PS 32(R11)(AX*1), Y1, Y7
	ADDQ        $64, AX
	JMP         inner4x16

inner4x8:
	CMPQ        AX, R8
	JGE         sum4
	VMOVUPS     (SI)(AX*1), Y0
	VFMADD231PS (DX)(AX*1), Y0, Y4
	VFMADD231PS (R9)(AX*1), Y0, Y5
	VFMADD231PS (R10)(AX*1), Y0, Y6
	VFMADD231PS (R11)(AX*1), Y0, Y7
	ADDQ        $32, AX

sum4:
	HSUM_STORE(Y4, X4, 0)
	HSUM_STORE(Y5, X5, 4)
	HSUM_STORE(Y6, X6, 8)
	HSUM_STORE(Y7, X7, 12)
	ADDQ $16, DI
	MOVQ R12, DX
	SUBQ $4, CX
	JMP  loop4

tail:
	CMPQ CX, $0
	JEQ  done
	VXORPS Y4, Y4, Y4
	XORQ   AX, AX

inner1:
	VMOVUPS     (SI)(AX*1), Y0
	VFMADD231PS (DX)(AX*1), Y0, Y4
	ADDQ        $32, AX
	CMPQ        AX, R8
	JLT         inner1

	HSUM_STORE(Y4, X4, 0)
	ADDQ $4, DI
	ADDQ R8, DX
	DECQ CX
	JMP  tail

done:
	VZEROUPPER
	RET

// func dotRows2AVX2(out0, out1 *float32, q0, q1 *float32, rows *float32, n int, d int)
//
// out0[i] = q0·row i and out1[i] = q1·row i for i < n: two queries share every
// load of a row, which halves the traffic from cache when a batch of queries
// runs over a block. d must be a positive multiple of 8.
TEXT ·dotRows2AVX2(SB), NOSPLIT, $0-56
	MOVQ out0+0(FP), DI
	MOVQ out1+8(FP), BX
	MOVQ q0+16(FP), SI
	MOVQ q1+24(FP), R12
	MOVQ rows+32(FP), DX
	MOVQ n+40(FP), CX
	MOVQ d+48(FP), R8
	SHLQ $2, R8

loop4q2:
	CMPQ CX, $4
	JLT  tailq2
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	LEAQ   (DX)(R8*1), R9
	LEAQ   (R9)(R8*1), R10
	LEAQ   (R10)(R8*1), R11
	XORQ   AX, AX

inner4q2:
	VMOVUPS     (SI)(AX*1), Y0
	VMOVUPS     (R12)(AX*1), Y1
	VMOVUPS     (DX)(AX*1), Y2
	VMOVUPS     (R9)(AX*1), Y3
	VFMADD231PS Y2, Y0, Y4
	VFMADD231PS Y2, Y1, Y5
	VFMADD231PS Y3, Y0, Y6
	VFMADD231PS Y3, Y1, Y7
	VMOVUPS     (R10)(AX*1), Y2
	VMOVUPS     (R11)(AX*1), Y3
	VFMADD231PS Y2, Y0, Y8
	VFMADD231PS Y2, Y1, Y9
	VFMADD231PS Y3, Y0, Y10
	VFMADD231PS Y3, Y1, Y11
	ADDQ        $32, AX
	CMPQ        AX, R8
	JLT         inner4q2

	HSUM_STORE(Y4, X4, 0)
	HSUM_STORE(Y6, X6, 4)
	HSUM_STORE(Y8, X8, 8)
	HSUM_STORE(Y10, X10, 12)
	XCHGQ DI, BX
	HSUM_STORE(Y5, X5, 0)
	HSUM_STORE(Y7, X7, 4)
	HSUM_STORE(Y9, X9, 8)
	HSUM_STORE(Y11, X11, 12)
	XCHGQ DI, BX
	ADDQ  $16, DI
	ADDQ  $16, BX
	LEAQ  (R11)(R8*1), DX
	SUBQ  $4, CX
	JMP   loop4q2

tailq2:
	CMPQ CX, $0
	JEQ  doneq2
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	XORQ   AX, AX

inner1q2:
	VMOVUPS     (DX)(AX*1), Y2
	VFMADD231PS (SI)(AX*1), Y2, Y4
	VFMADD231PS (R12)(AX*1), Y2, Y5
	ADDQ        $32, AX
	CMPQ        AX, R8
	JLT         inner1q2

	HSUM_STORE(Y4, X4, 0)
	XCHGQ DI, BX
	HSUM_STORE(Y5, X5, 0)
	XCHGQ DI, BX
	ADDQ  $4, DI
	ADDQ  $4, BX
	ADDQ  R8, DX
	DECQ  CX
	JMP   tailq2

doneq2:
	VZEROUPPER
	RET

// Horizontal sum of the eight int32 lanes of Y<acc> into the int32 at
// off(DI), using X3 as scratch.
#define HSUMI_STORE(acc, xacc, off) \
	VEXTRACTI128 $1, acc, X3 \
	VPADDD       X3, xacc, xacc \
	VPHADDD      xacc, xacc, xacc \
	VPHADDD      xacc, xacc, xacc \
	VMOVD        xacc, off(DI)

// func dotCodesAVX2(out *int32, q *int16, codes *int8, n int, d int)
//
// out[i] = Σ_j q[j]·codes[i*d+j] for i < n, exactly in int32 (the caller
// bounds |q[j]| so that no partial sum overflows). d must be a positive
// multiple of 16. Each step sign-extends 16 codes to int16 (VPMOVSXBW) and
// multiplies them with 16 query values, adding adjacent pairs into eight
// int32 lanes (VPMADDWD). Four rows per pass.
TEXT ·dotCodesAVX2(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), DI
	MOVQ q+8(FP), SI
	MOVQ codes+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ d+32(FP), R8

cloop4:
	CMPQ CX, $4
	JLT  ctail
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	LEAQ  (DX)(R8*1), R9
	LEAQ  (R9)(R8*1), R10
	LEAQ  (R10)(R8*1), R11
	LEAQ  (R11)(R8*1), R12 // next group, to prefetch
	LEAQ  (R12)(R8*1), R13
	LEAQ  (R13)(R8*1), R14
	LEAQ  (R14)(R8*1), R15
	XORQ  AX, AX

cinner4:
	// One cache line per row every four 16-byte steps would do; the
	// prefetch of a line already requested is cheap.
	PREFETCHT0 (R12)(AX*1)
	PREFETCHT0 (R13)(AX*1)
	PREFETCHT0 (R14)(AX*1)
	PREFETCHT0 (R15)(AX*1)
	VMOVDQU    (SI)(AX*2), Y0
	VPMOVSXBW  (DX)(AX*1), Y8
	VPMOVSXBW  (R9)(AX*1), Y9
	VPMOVSXBW  (R10)(AX*1), Y10
	VPMOVSXBW  (R11)(AX*1), Y11
	VPMADDWD   Y0, Y8, Y8
	VPMADDWD   Y0, Y9, Y9
	VPMADDWD   Y0, Y10, Y10
	VPMADDWD   Y0, Y11, Y11
	VPADDD     Y8, Y4, Y4
	VPADDD     Y9, Y5, Y5
	VPADDD     Y10, Y6, Y6
	VPADDD     Y11, Y7, Y7
	ADDQ       $16, AX
	CMPQ       AX, R8
	JLT        cinner4

	HSUMI_STORE(Y4, X4, 0)
	HSUMI_STORE(Y5, X5, 4)
	HSUMI_STORE(Y6, X6, 8)
	HSUMI_STORE(Y7, X7, 12)
	ADDQ $16, DI
	MOVQ R12, DX
	SUBQ $4, CX
	JMP  cloop4

ctail:
	CMPQ CX, $0
	JEQ  cdone
	VPXOR Y4, Y4, Y4
	XORQ  AX, AX

cinner1:
	VPMOVSXBW (DX)(AX*1), Y8
	VPMADDWD  (SI)(AX*2), Y8, Y8
	VPADDD    Y8, Y4, Y4
	ADDQ      $16, AX
	CMPQ      AX, R8
	JLT       cinner1

	HSUMI_STORE(Y4, X4, 0)
	ADDQ $4, DI
	ADDQ R8, DX
	DECQ CX
	JMP  ctail

cdone:
	VZEROUPPER
	RET

// func dotCodes2AVX2(out0, out1 *int32, q0, q1 *int16, codes *int8, n int, d int)
//
// dotCodesAVX2 for two queries at once: a register tile of four rows by two
// queries (eight int32 accumulators), so each row's codes are loaded and
// widened once for both queries. d must be a positive multiple of 16.
TEXT ·dotCodes2AVX2(SB), NOSPLIT, $0-56
	MOVQ out0+0(FP), DI
	MOVQ out1+8(FP), BX
	MOVQ q0+16(FP), SI
	MOVQ q1+24(FP), R12
	MOVQ codes+32(FP), DX
	MOVQ n+40(FP), CX
	MOVQ d+48(FP), R8

c2loop4:
	CMPQ CX, $4
	JLT  c2tail
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	VPXOR Y6, Y6, Y6
	VPXOR Y7, Y7, Y7
	VPXOR Y8, Y8, Y8
	VPXOR Y9, Y9, Y9
	VPXOR Y10, Y10, Y10
	VPXOR Y11, Y11, Y11
	LEAQ  (DX)(R8*1), R9
	LEAQ  (R9)(R8*1), R10
	LEAQ  (R10)(R8*1), R11
	XORQ  AX, AX

c2inner4:
	VPMOVSXBW (DX)(AX*1), Y0
	VPMOVSXBW (R9)(AX*1), Y1
	VPMOVSXBW (R10)(AX*1), Y2
	VPMOVSXBW (R11)(AX*1), Y3
	VPMADDWD  (SI)(AX*2), Y0, Y12
	VPMADDWD  (R12)(AX*2), Y0, Y13
	VPMADDWD  (SI)(AX*2), Y1, Y14
	VPMADDWD  (R12)(AX*2), Y1, Y15
	VPADDD    Y12, Y4, Y4
	VPADDD    Y13, Y5, Y5
	VPADDD    Y14, Y6, Y6
	VPADDD    Y15, Y7, Y7
	VPMADDWD  (SI)(AX*2), Y2, Y12
	VPMADDWD  (R12)(AX*2), Y2, Y13
	VPMADDWD  (SI)(AX*2), Y3, Y14
	VPMADDWD  (R12)(AX*2), Y3, Y15
	VPADDD    Y12, Y8, Y8
	VPADDD    Y13, Y9, Y9
	VPADDD    Y14, Y10, Y10
	VPADDD    Y15, Y11, Y11
	ADDQ      $16, AX
	CMPQ      AX, R8
	JLT       c2inner4

	HSUMI_STORE(Y4, X4, 0)
	HSUMI_STORE(Y6, X6, 4)
	HSUMI_STORE(Y8, X8, 8)
	HSUMI_STORE(Y10, X10, 12)
	XCHGQ DI, BX
	HSUMI_STORE(Y5, X5, 0)
	HSUMI_STORE(Y7, X7, 4)
	HSUMI_STORE(Y9, X9, 8)
	HSUMI_STORE(Y11, X11, 12)
	XCHGQ DI, BX
	ADDQ  $16, DI
	ADDQ  $16, BX
	LEAQ  (R11)(R8*1), DX
	SUBQ  $4, CX
	JMP   c2loop4

c2tail:
	CMPQ CX, $0
	JEQ  c2done
	VPXOR Y4, Y4, Y4
	VPXOR Y5, Y5, Y5
	XORQ  AX, AX

c2inner1:
	VPMOVSXBW (DX)(AX*1), Y0
	VPMADDWD  (SI)(AX*2), Y0, Y12
	VPMADDWD  (R12)(AX*2), Y0, Y13
	VPADDD    Y12, Y4, Y4
	VPADDD    Y13, Y5, Y5
	ADDQ      $16, AX
	CMPQ      AX, R8
	JLT       c2inner1

	HSUMI_STORE(Y4, X4, 0)
	XCHGQ DI, BX
	HSUMI_STORE(Y5, X5, 0)
	XCHGQ DI, BX
	ADDQ  $4, DI
	ADDQ  $4, BX
	ADDQ  R8, DX
	DECQ  CX
	JMP   c2tail

c2done:
	VZEROUPPER
	RET

// Sum the eight int32 lanes of each of the four accumulators a0..a3 (any
// registers) and store the four sums at 0..15(out)(R15*1); Y4-Y7 are
// scratch. Unpack-and-add rather than VPHADDD, which has no EVEX form for
// the accumulators above Y15.
#define HSUM4I_STORE(a0, a1, a2, a3, out) \
	VPUNPCKLDQ   a1, a0, Y4 \
	VPUNPCKHDQ   a1, a0, Y5 \
	VPADDD       Y5, Y4, Y4 \
	VPUNPCKLDQ   a3, a2, Y5 \
	VPUNPCKHDQ   a3, a2, Y6 \
	VPADDD       Y6, Y5, Y5 \
	VPUNPCKLQDQ  Y5, Y4, Y6 \
	VPUNPCKHQDQ  Y5, Y4, Y7 \
	VPADDD       Y7, Y6, Y6 \
	VEXTRACTI128 $1, Y6, X7 \
	VPADDD       X7, X6, X6 \
	MOVQ         out, R13 \
	VMOVDQU      X6, (R13)(R15*1)

// func dotCodes6VNNI(outs *[6]*int32, qs *[6]*int16, codes *int8, n int, d int)
//
// The batch kernel: a register tile of four rows by six queries, 24 int32
// accumulators in Y8-Y31 (AVX-512VL registers), fed by AVX-512 VNNI
// VPDPWSSD, which multiplies 16 int16 pairs and adds them into eight lanes
// in one instruction. Each step widens 16 codes of each of the four rows
// once (VPMOVSXBW) and uses them for all six queries. n must be a multiple
// of 4 and d of 16; the sums are exact (the caller bounds the query codes).
TEXT ·dotCodes6VNNI(SB), NOSPLIT, $0-40
	MOVQ qs+8(FP), R13
	MOVQ 0(R13), SI
	MOVQ 8(R13), DI
	MOVQ 16(R13), BX
	MOVQ 24(R13), R10
	MOVQ 32(R13), R11
	MOVQ 40(R13), R12
	MOVQ codes+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ d+32(FP), R8
	LEAQ (R8)(R8*2), R9 // 3d
	XORQ R15, R15       // byte offset of the current row group in outs

g6loop:
	CMPQ CX, $4
	JLT  g6done
	VPXORD Y8, Y8, Y8
	VPXORD Y9, Y9, Y9
	VPXORD Y10, Y10, Y10
	VPXORD Y11, Y11, Y11
	VPXORD Y12, Y12, Y12
	VPXORD Y13, Y13, Y13
	VPXORD Y14, Y14, Y14
	VPXORD Y15, Y15, Y15
	VPXORD Y16, Y16, Y16
	VPXORD Y17, Y17, Y17
	VPXORD Y18, Y18, Y18
	VPXORD Y19, Y19, Y19
	VPXORD Y20, Y20, Y20
	VPXORD Y21, Y21, Y21
	VPXORD Y22, Y22, Y22
	VPXORD Y23, Y23, Y23
	VPXORD Y24, Y24, Y24
	VPXORD Y25, Y25, Y25
	VPXORD Y26, Y26, Y26
	VPXORD Y27, Y27, Y27
	VPXORD Y28, Y28, Y28
	VPXORD Y29, Y29, Y29
	VPXORD Y30, Y30, Y30
	VPXORD Y31, Y31, Y31
	XORQ AX, AX

g6inner:
	VPMOVSXBW (DX), Y0
	VPMOVSXBW (DX)(R8*1), Y1
	VPMOVSXBW (DX)(R8*2), Y2
	VPMOVSXBW (DX)(R9*1), Y3
	VPDPWSSD (SI)(AX*2), Y0, Y8
	VPDPWSSD (SI)(AX*2), Y1, Y9
	VPDPWSSD (SI)(AX*2), Y2, Y10
	VPDPWSSD (SI)(AX*2), Y3, Y11
	VPDPWSSD (DI)(AX*2), Y0, Y12
	VPDPWSSD (DI)(AX*2), Y1, Y13
	VPDPWSSD (DI)(AX*2), Y2, Y14
	VPDPWSSD (DI)(AX*2), Y3, Y15
	VPDPWSSD (BX)(AX*2), Y0, Y16
	VPDPWSSD (BX)(AX*2), Y1, Y17
	VPDPWSSD (BX)(AX*2), Y2, Y18
	VPDPWSSD (BX)(AX*2), Y3, Y19
	VPDPWSSD (R10)(AX*2), Y0, Y20
	VPDPWSSD (R10)(AX*2), Y1, Y21
	VPDPWSSD (R10)(AX*2), Y2, Y22
	VPDPWSSD (R10)(AX*2), Y3, Y23
	VPDPWSSD (R11)(AX*2), Y0, Y24
	VPDPWSSD (R11)(AX*2), Y1, Y25
	VPDPWSSD (R11)(AX*2), Y2, Y26
	VPDPWSSD (R11)(AX*2), Y3, Y27
	VPDPWSSD (R12)(AX*2), Y0, Y28
	VPDPWSSD (R12)(AX*2), Y1, Y29
	VPDPWSSD (R12)(AX*2), Y2, Y30
	VPDPWSSD (R12)(AX*2), Y3, Y31
	ADDQ $16, DX
	ADDQ $16, AX
	CMPQ AX, R8
	JLT  g6inner

	MOVQ outs+0(FP), R14
	HSUM4I_STORE(Y8, Y9, Y10, Y11, 0(R14))
	HSUM4I_STORE(Y12, Y13, Y14, Y15, 8(R14))
	HSUM4I_STORE(Y16, Y17, Y18, Y19, 16(R14))
	HSUM4I_STORE(Y20, Y21, Y22, Y23, 24(R14))
	HSUM4I_STORE(Y24, Y25, Y26, Y27, 32(R14))
	HSUM4I_STORE(Y28, Y29, Y30, Y31, 40(R14))
	ADDQ R9, DX // DX had moved one row; skip the other three
	ADDQ $16, R15
	SUBQ $4, CX
	JMP  g6loop

g6done:
	VZEROUPPER
	RET

// func dotCodes6VNNI8(outs *[6]*int32, qs *[6]*uint8, codes *int8, n int, d int)
//
// The byte variant of dotCodes6VNNI: queries are unsigned bytes (the int8
// code plus 128), held in Y0-Y5, and VPDPBUSD multiplies 32 of them by 32
// signed codes read straight from memory, adding groups of four into eight
// int32 lanes: twice the multiply-adds per instruction of VPDPWSSD, and no
// widening. outs receive Σ (a_j+128)·c_j, modulo 2³²; the caller subtracts
// 128·Σ c_j. n must be a multiple of 4 and d of 32.
TEXT ·dotCodes6VNNI8(SB), NOSPLIT, $0-40
	MOVQ qs+8(FP), R13
	MOVQ 0(R13), SI
	MOVQ 8(R13), DI
	MOVQ 16(R13), BX
	MOVQ 24(R13), R10
	MOVQ 32(R13), R11
	MOVQ 40(R13), R12
	MOVQ codes+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ d+32(FP), R8
	LEAQ (R8)(R8*2), R9 // 3d
	XORQ R15, R15

b6loop:
	CMPQ CX, $4
	JLT  b6done
	VPXORD Y8, Y8, Y8
	VPXORD Y9, Y9, Y9
	VPXORD Y10, Y10, Y10
	VPXORD Y11, Y11, Y11
	VPXORD Y12, Y12, Y12
	VPXORD Y13, Y13, Y13
	VPXORD Y14, Y14, Y14
	VPXORD Y15, Y15, Y15
	VPXORD Y16, Y16, Y16
	VPXORD Y17, Y17, Y17
	VPXORD Y18, Y18, Y18
	VPXORD Y19, Y19, Y19
	VPXORD Y20, Y20, Y20
	VPXORD Y21, Y21, Y21
	VPXORD Y22, Y22, Y22
	VPXORD Y23, Y23, Y23
	VPXORD Y24, Y24, Y24
	VPXORD Y25, Y25, Y25
	VPXORD Y26, Y26, Y26
	VPXORD Y27, Y27, Y27
	VPXORD Y28, Y28, Y28
	VPXORD Y29, Y29, Y29
	VPXORD Y30, Y30, Y30
	VPXORD Y31, Y31, Y31
	XORQ AX, AX

b6inner:
	VMOVDQU (SI)(AX*1), Y0
	VMOVDQU (DI)(AX*1), Y1
	VMOVDQU (BX)(AX*1), Y2
	VMOVDQU (R10)(AX*1), Y3
	VMOVDQU (R11)(AX*1), Y4
	VMOVDQU (R12)(AX*1), Y5
	VPDPBUSD (DX), Y0, Y8
	VPDPBUSD (DX), Y1, Y12
	VPDPBUSD (DX), Y2, Y16
	VPDPBUSD (DX), Y3, Y20
	VPDPBUSD (DX), Y4, Y24
	VPDPBUSD (DX), Y5, Y28
	VPDPBUSD (DX)(R8*1), Y0, Y9
	VPDPBUSD (DX)(R8*1), Y1, Y13
	VPDPBUSD (DX)(R8*1), Y2, Y17
	VPDPBUSD (DX)(R8*1), Y3, Y21
	VPDPBUSD (DX)(R8*1), Y4, Y25
	VPDPBUSD (DX)(R8*1), Y5, Y29
	VPDPBUSD (DX)(R8*2), Y0, Y10
	VPDPBUSD (DX)(R8*2), Y1, Y14
	VPDPBUSD (DX)(R8*2), Y2, Y18
	VPDPBUSD (DX)(R8*2), Y3, Y22
	VPDPBUSD (DX)(R8*2), Y4, Y26
	VPDPBUSD (DX)(R8*2), Y5, Y30
	VPDPBUSD (DX)(R9*1), Y0, Y11
	VPDPBUSD (DX)(R9*1), Y1, Y15
	VPDPBUSD (DX)(R9*1), Y2, Y19
	VPDPBUSD (DX)(R9*1), Y3, Y23
	VPDPBUSD (DX)(R9*1), Y4, Y27
	VPDPBUSD (DX)(R9*1), Y5, Y31
	ADDQ $32, DX
	ADDQ $32, AX
	CMPQ AX, R8
	JLT  b6inner

	MOVQ outs+0(FP), R14
	HSUM4I_STORE(Y8, Y9, Y10, Y11, 0(R14))
	HSUM4I_STORE(Y12, Y13, Y14, Y15, 8(R14))
	HSUM4I_STORE(Y16, Y17, Y18, Y19, 16(R14))
	HSUM4I_STORE(Y20, Y21, Y22, Y23, 24(R14))
	HSUM4I_STORE(Y24, Y25, Y26, Y27, 32(R14))
	HSUM4I_STORE(Y28, Y29, Y30, Y31, 40(R14))
	ADDQ R9, DX
	ADDQ $16, R15
	SUBQ $4, CX
	JMP  b6loop

b6done:
	VZEROUPPER
	RET

// Sum the sixteen int32 lanes of each of the four accumulators Z8..Z11 into
// their low eight lanes and store the four sums as HSUM4I_STORE does.
#define HSUM4Z_STORE(out) \
	VEXTRACTI64X4 $1, Z8, Y4 \
	VPADDD        Y4, Y8, Y8 \
	VEXTRACTI64X4 $1, Z9, Y4 \
	VPADDD        Y4, Y9, Y9 \
	VEXTRACTI64X4 $1, Z10, Y4 \
	VPADDD        Y4, Y10, Y10 \
	VEXTRACTI64X4 $1, Z11, Y4 \
	VPADDD        Y4, Y11, Y11 \
	HSUM4I_STORE(Y8, Y9, Y10, Y11, out)

// func dotBytes1VNNI(out *int32, q *uint8, codes *int8, n int, d int)
//
// The single-query byte kernel: out[i] = Σ_j q[j]·codes[i*d+j] modulo 2³²
// for i < n, q unsigned bytes (the int8 code plus 128; the caller
// subtracts 128·Σ c_j). Four rows per pass, each with a 16-lane
// accumulator (Z8-Z11) that AVX-512 VNNI VPDPBUSD feeds with 64 products
// per instruction, the 64 query bytes loaded once for the four rows: a
// quarter of the instructions of the int16 AVX2 kernel per code. n must be
// a multiple of 4 and d of 64.
TEXT ·dotBytes1VNNI(SB), NOSPLIT, $0-40
	MOVQ out+0(FP), R14
	MOVQ q+8(FP), SI
	MOVQ codes+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ d+32(FP), R8
	LEAQ (R8)(R8*2), R9 // 3d
	XORQ R15, R15       // byte offset of the current row group in out

b1loop:
	CMPQ CX, $4
	JLT  b1done
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	XORQ   AX, AX

b1inner:
	VMOVDQU64 (SI)(AX*1), Z0
	VPDPBUSD  (DX), Z0, Z8
	VPDPBUSD  (DX)(R8*1), Z0, Z9
	VPDPBUSD  (DX)(R8*2), Z0, Z10
	VPDPBUSD  (DX)(R9*1), Z0, Z11
	ADDQ      $64, DX
	ADDQ      $64, AX
	CMPQ      AX, R8
	JLT       b1inner

	HSUM4Z_STORE(R14)
	ADDQ R9, DX // DX had moved one row; skip the other three
	ADDQ $16, R15
	SUBQ $4, CX
	JMP  b1loop

b1done:
	VZEROUPPER
	RET

// The float32 batch kernels below compute every (query, row) score in the
// order described at dotRowsAVX2 — one 8-lane accumulator, fused
// multiply-adds over the 8-float chunks in increasing order, then the
// horizontal sum ((l0+l4)+(l1+l5)) + ((l2+l6)+(l3+l7)) — so their scores
// are bit-for-bit those of dotRowsAVX2 and dotRows2AVX2.

// func dotRows3AVX2(out *float32, ostride int, q *float32, rows *float32, n int, d int)
//
// The AVX2 batch tile: four rows by three queries, twelve accumulators
// (Y4-Y15), each row chunk loaded once for the three queries. The queries
// are consecutive (q, q+d, q+2d); query i's score of row r goes to
// out + i*ostride + 4r (ostride in bytes). n must be a multiple of 4 and d a
// positive multiple of 8.
TEXT ·dotRows3AVX2(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), R14
	MOVQ ostride+8(FP), R11
	MOVQ q+16(FP), SI
	MOVQ rows+24(FP), DX
	MOVQ n+32(FP), CX
	MOVQ d+40(FP), R8
	SHLQ $2, R8            // row stride in bytes
	LEAQ (R8)(R8*2), R9    // three rows
	LEAQ (SI)(R8*1), R12   // second query
	LEAQ (R12)(R8*1), R13  // third query
	XORQ R15, R15          // byte offset of the current rows in out

q3loop:
	CMPQ CX, $4
	JLT  q3done
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	VXORPS Y14, Y14, Y14
	VXORPS Y15, Y15, Y15
	XORQ   AX, AX

q3inner:
	VMOVUPS     (SI)(AX*1), Y0
	VMOVUPS     (R12)(AX*1), Y1
	VMOVUPS     (R13)(AX*1), Y2
	VMOVUPS     (DX), Y3
	VFMADD231PS Y3, Y0, Y4
	VFMADD231PS Y3, Y1, Y5
	VFMADD231PS Y3, Y2, Y6
	VMOVUPS     (DX)(R8*1), Y3
	VFMADD231PS Y3, Y0, Y7
	VFMADD231PS Y3, Y1, Y8
	VFMADD231PS Y3, Y2, Y9
	VMOVUPS     (DX)(R8*2), Y3
	VFMADD231PS Y3, Y0, Y10
	VFMADD231PS Y3, Y1, Y11
	VFMADD231PS Y3, Y2, Y12
	VMOVUPS     (DX)(R9*1), Y3
	VFMADD231PS Y3, Y0, Y13
	VFMADD231PS Y3, Y1, Y14
	VFMADD231PS Y3, Y2, Y15
	ADDQ        $32, DX
	ADDQ        $32, AX
	CMPQ        AX, R8
	JLT         q3inner

	LEAQ  (R14)(R15*1), DI
	HSUM_STORE(Y4, X4, 0)
	HSUM_STORE(Y7, X7, 4)
	HSUM_STORE(Y10, X10, 8)
	HSUM_STORE(Y13, X13, 12)
	ADDQ  R11, DI
	HSUM_STORE(Y5, X5, 0)
	HSUM_STORE(Y8, X8, 4)
	HSUM_STORE(Y11, X11, 8)
	HSUM_STORE(Y14, X14, 12)
	ADDQ  R11, DI
	HSUM_STORE(Y6, X6, 0)
	HSUM_STORE(Y9, X9, 4)
	HSUM_STORE(Y12, X12, 8)
	HSUM_STORE(Y15, X15, 12)
	ADDQ  R9, DX // DX had moved one row; skip the other three
	ADDQ  $16, R15
	SUBQ  $4, CX
	JMP   q3loop

q3done:
	VZEROUPPER
	RET

// tile12Perm reorders the sixteen sums TILESUM computes (see there) into
// four rows for each of four queries.
DATA tile12Perm<>+0(SB)/4, $0
DATA tile12Perm<>+4(SB)/4, $8
DATA tile12Perm<>+8(SB)/4, $1
DATA tile12Perm<>+12(SB)/4, $9
DATA tile12Perm<>+16(SB)/4, $4
DATA tile12Perm<>+20(SB)/4, $12
DATA tile12Perm<>+24(SB)/4, $5
DATA tile12Perm<>+28(SB)/4, $13
DATA tile12Perm<>+32(SB)/4, $2
DATA tile12Perm<>+36(SB)/4, $10
DATA tile12Perm<>+40(SB)/4, $3
DATA tile12Perm<>+44(SB)/4, $11
DATA tile12Perm<>+48(SB)/4, $6
DATA tile12Perm<>+52(SB)/4, $14
DATA tile12Perm<>+56(SB)/4, $7
DATA tile12Perm<>+60(SB)/4, $15
GLOBL tile12Perm<>(SB), RODATA|NOPTR, $64

// PAIRSUM folds the two 256-bit halves of a and b (each half an 8-lane
// accumulator) to four lanes each: a = [a.lo128+a.hi128 of the low half,
// the same of the high half, then b's two], the first step of HSUM_STORE.
// Z0 and Z1 are scratch.
#define PAIRSUM(a, b) \
	VSHUFF32X4 $0x88, b, a, Z0 \
	VSHUFF32X4 $0xDD, b, a, Z1 \
	VADDPS     Z1, Z0, a

// TILESUM finishes eight accumulators of dotRows12AVX512 — the two query
// pairs 2g and 2g+1 by the four rows: a..h = Z(2g,0..3), Z(2g+1,0..3) —
// into sixteen sums, each ((l0+l4)+(l1+l5)) + ((l2+l6)+(l3+l7)) as in
// HSUM_STORE, then permutes them (Z7 holds tile12Perm) into four rows for
// each of the queries 4g..4g+3 and stores them at R12, R12+R11, R12+2·R11
// and R12+3·R11, leaving R12 at the next query. Z0 and Z1 are scratch.
#define TILESUM(a, b, c, dd, e, f, g, h) \
	PAIRSUM(a, b) \
	PAIRSUM(c, dd) \
	PAIRSUM(e, f) \
	PAIRSUM(g, h) \
	VSHUFPS       $0x88, c, a, Z0 \
	VSHUFPS       $0xDD, c, a, Z1 \
	VADDPS        Z1, Z0, a \
	VSHUFPS       $0x88, g, e, Z0 \
	VSHUFPS       $0xDD, g, e, Z1 \
	VADDPS        Z1, Z0, e \
	VSHUFPS       $0x88, e, a, Z0 \
	VSHUFPS       $0xDD, e, a, Z1 \
	VADDPS        Z1, Z0, Z0 \
	VPERMPS       Z0, Z7, Z0 \
	VMOVUPS       X0, (R12) \
	ADDQ          R11, R12 \
	VEXTRACTF32X4 $1, Z0, (R12) \
	ADDQ          R11, R12 \
	VEXTRACTF32X4 $2, Z0, (R12) \
	ADDQ          R11, R12 \
	VEXTRACTF32X4 $3, Z0, (R12) \
	ADDQ          R11, R12

// ZERO24 zeroes the twelve-query tiles' 24 accumulators, Z8-Z31.
#define ZERO24 \
	VPXORD Z8, Z8, Z8 \
	VPXORD Z9, Z9, Z9 \
	VPXORD Z10, Z10, Z10 \
	VPXORD Z11, Z11, Z11 \
	VPXORD Z12, Z12, Z12 \
	VPXORD Z13, Z13, Z13 \
	VPXORD Z14, Z14, Z14 \
	VPXORD Z15, Z15, Z15 \
	VPXORD Z16, Z16, Z16 \
	VPXORD Z17, Z17, Z17 \
	VPXORD Z18, Z18, Z18 \
	VPXORD Z19, Z19, Z19 \
	VPXORD Z20, Z20, Z20 \
	VPXORD Z21, Z21, Z21 \
	VPXORD Z22, Z22, Z22 \
	VPXORD Z23, Z23, Z23 \
	VPXORD Z24, Z24, Z24 \
	VPXORD Z25, Z25, Z25 \
	VPXORD Z26, Z26, Z26 \
	VPXORD Z27, Z27, Z27 \
	VPXORD Z28, Z28, Z28 \
	VPXORD Z29, Z29, Z29 \
	VPXORD Z30, Z30, Z30 \
	VPXORD Z31, Z31, Z31

// func dotRows12AVX512(out *float32, ostride int, qp *float32, rows *float32, n int, d int)
//
// The AVX-512 batch tile: four rows by twelve queries. The queries come
// packed in pairs (packQueries): for each 8-float chunk c, six 16-float
// vectors, the chunk c of queries 2p and 2p+1 side by side. Each 8-float row
// chunk is broadcast to both halves of a register (VBROADCASTF64X4) and
// multiplied into the six pairs, so each 512-bit accumulator holds two
// independent 8-lane accumulators: 24 of them (Z8-Z31) for 48 scores, the
// row chunk loaded once for twelve queries. Query i's score of row r goes to
// out + i*ostride + 4r (ostride in bytes). n must be a multiple of 4 and d
// a positive multiple of 8. Accumulator Z(8+6r+p) holds rows r by pair p.
TEXT ·dotRows12AVX512(SB), NOSPLIT, $0-48
	MOVQ    out+0(FP), R14
	MOVQ    ostride+8(FP), R11
	MOVQ    qp+16(FP), SI
	MOVQ    rows+24(FP), DX
	MOVQ    n+32(FP), CX
	MOVQ    d+40(FP), R8
	SHLQ    $2, R8           // row stride in bytes
	LEAQ    (R8)(R8*2), R9   // three rows
	XORQ    R15, R15         // byte offset of the current rows in out

t12loop:
	CMPQ   CX, $4
	JLT    t12done
	ZERO24
	MOVQ   SI, R10
	XORQ   AX, AX
	LEAQ   (DX)(R8*4), R13 // the next four rows, to prefetch

t12inner:
	// Prefetch the next four rows, 32 bytes a step: the first tile over
	// a block reads its rows from memory. Past the last row this touches
	// memory beyond the slice, which PREFETCH allows (it never faults).
	PREFETCHT0      (R13)
	PREFETCHT0      (R13)(R8*1)
	PREFETCHT0      (R13)(R8*2)
	PREFETCHT0      (R13)(R9*1)
	VMOVUPS         0(R10), Z0
	VMOVUPS         64(R10), Z1
	VMOVUPS         128(R10), Z2
	VMOVUPS         192(R10), Z3
	VMOVUPS         256(R10), Z4
	VMOVUPS         320(R10), Z5
	VBROADCASTF64X4 (DX), Z6
	VFMADD231PS     Z6, Z0, Z8
	VFMADD231PS     Z6, Z1, Z9
	VFMADD231PS     Z6, Z2, Z10
	VFMADD231PS     Z6, Z3, Z11
	VFMADD231PS     Z6, Z4, Z12
	VFMADD231PS     Z6, Z5, Z13
	VBROADCASTF64X4 (DX)(R8*1), Z7
	VFMADD231PS     Z7, Z0, Z14
	VFMADD231PS     Z7, Z1, Z15
	VFMADD231PS     Z7, Z2, Z16
	VFMADD231PS     Z7, Z3, Z17
	VFMADD231PS     Z7, Z4, Z18
	VFMADD231PS     Z7, Z5, Z19
	VBROADCASTF64X4 (DX)(R8*2), Z6
	VFMADD231PS     Z6, Z0, Z20
	VFMADD231PS     Z6, Z1, Z21
	VFMADD231PS     Z6, Z2, Z22
	VFMADD231PS     Z6, Z3, Z23
	VFMADD231PS     Z6, Z4, Z24
	VFMADD231PS     Z6, Z5, Z25
	VBROADCASTF64X4 (DX)(R9*1), Z7
	VFMADD231PS     Z7, Z0, Z26
	VFMADD231PS     Z7, Z1, Z27
	VFMADD231PS     Z7, Z2, Z28
	VFMADD231PS     Z7, Z3, Z29
	VFMADD231PS     Z7, Z4, Z30
	VFMADD231PS     Z7, Z5, Z31
	ADDQ            $384, R10
	ADDQ            $32, R13
	ADDQ            $32, DX
	ADDQ            $32, AX
	CMPQ            AX, R8
	JLT             t12inner

	VMOVUPS tile12Perm<>(SB), Z7
	LEAQ    (R14)(R15*1), R12
	TILESUM(Z8, Z14, Z20, Z26, Z9, Z15, Z21, Z27)
	TILESUM(Z10, Z16, Z22, Z28, Z11, Z17, Z23, Z29)
	TILESUM(Z12, Z18, Z24, Z30, Z13, Z19, Z25, Z31)
	ADDQ    R9, DX // DX had moved one row; skip the other three
	ADDQ    $16, R15
	SUBQ    $4, CX
	JMP     t12loop

t12done:
	VZEROUPPER
	RET

// func fmaPeakAVX512(n int)
//
// n rounds of 24 independent 512-bit fused multiply-adds (768 float32
// flops) and nothing else: the machine's float32 peak, which the batch
// kernels' benchmark reports beside theirs.
TEXT ·fmaPeakAVX512(SB), NOSPLIT, $0-8
	MOVQ   n+0(FP), CX
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	ZERO24

peakloop:
	VFMADD231PS Z0, Z1, Z8
	VFMADD231PS Z0, Z1, Z9
	VFMADD231PS Z0, Z1, Z10
	VFMADD231PS Z0, Z1, Z11
	VFMADD231PS Z0, Z1, Z12
	VFMADD231PS Z0, Z1, Z13
	VFMADD231PS Z0, Z1, Z14
	VFMADD231PS Z0, Z1, Z15
	VFMADD231PS Z0, Z1, Z16
	VFMADD231PS Z0, Z1, Z17
	VFMADD231PS Z0, Z1, Z18
	VFMADD231PS Z0, Z1, Z19
	VFMADD231PS Z0, Z1, Z20
	VFMADD231PS Z0, Z1, Z21
	VFMADD231PS Z0, Z1, Z22
	VFMADD231PS Z0, Z1, Z23
	VFMADD231PS Z0, Z1, Z24
	VFMADD231PS Z0, Z1, Z25
	VFMADD231PS Z0, Z1, Z26
	VFMADD231PS Z0, Z1, Z27
	VFMADD231PS Z0, Z1, Z28
	VFMADD231PS Z0, Z1, Z29
	VFMADD231PS Z0, Z1, Z30
	VFMADD231PS Z0, Z1, Z31
	DECQ        CX
	JNZ         peakloop
	VZEROUPPER
	RET

// func skipBelowAVX512(s *float32, n int, floor float32) int
//
// The index of the first s[i], i < n, that is not below floor (!(s[i] <
// floor), so NaN counts as not below), or n. n must be a multiple of 16.
TEXT ·skipBelowAVX512(SB), NOSPLIT, $0-32
	MOVQ         s+0(FP), SI
	MOVQ         n+8(FP), CX
	VBROADCASTSS floor+16(FP), Z0
	XORQ         AX, AX

sbloop:
	CMPQ      AX, CX
	JGE       sbnone
	VCMPPS    $10, (SI)(AX*4), Z0, K1 // NGT_US: !(floor > s[i])
	KORTESTW  K1, K1
	JNZ       sbfound
	ADDQ      $16, AX
	JMP       sbloop

sbfound:
	KMOVW    K1, DX
	BSFL     DX, DX
	ADDQ     DX, AX

sbnone:
	MOVQ       AX, ret+24(FP)
	VZEROUPPER
	RET

// func dotRows12BF16(out *float32, ostride int, qp *uint16, rows *uint16, n int, d int)
//
// dotRows12AVX512 over bfloat16: four rows by twelve queries, the queries
// packed in pairs (packQueriesBF16: for each 16-element chunk c, six
// 32-element vectors, chunk c of queries 2p and 2p+1 side by side), each
// 16-element row chunk broadcast to both halves of a register and
// multiplied into the six pairs with VDPBF16PS, which adds two products a
// lane: twice the float32 tile's multiply-adds per instruction. The sums
// are approximate (see bf16Slack); the caller rescores in float32. n must
// be a multiple of 4 and d a positive multiple of 16. Go's assembler does
// not know VDPBF16PS and VCVTNEPS2BF16: they are written as their EVEX
// bytes, each with the instruction in Go's operand order beside it (the
// encodings were checked against GNU as's; the tests compare the kernel
// with the portable code).
TEXT ·dotRows12BF16(SB), NOSPLIT, $0-48
	MOVQ    out+0(FP), R14
	MOVQ    ostride+8(FP), R11
	MOVQ    qp+16(FP), SI
	MOVQ    rows+24(FP), DX
	MOVQ    n+32(FP), CX
	MOVQ    d+40(FP), R8
	SHLQ    $1, R8           // row stride in bytes
	LEAQ    (R8)(R8*2), R9   // three rows
	XORQ    R15, R15         // byte offset of the current rows in out

b12loop:
	CMPQ   CX, $4
	JLT    b12done
	ZERO24
	MOVQ   SI, R10
	XORQ   AX, AX

b12inner:
	VMOVUPS         0(R10), Z0
	VMOVUPS         64(R10), Z1
	VMOVUPS         128(R10), Z2
	VMOVUPS         192(R10), Z3
	VMOVUPS         256(R10), Z4
	VMOVUPS         320(R10), Z5
	VBROADCASTF64X4 (DX), Z6
	BYTE $0x62; BYTE $0x72; BYTE $0x7E; BYTE $0x48; BYTE $0x52; BYTE $0xC6 // VDPBF16PS Z6, Z0, Z8
	BYTE $0x62; BYTE $0x72; BYTE $0x76; BYTE $0x48; BYTE $0x52; BYTE $0xCE // VDPBF16PS Z6, Z1, Z9
	BYTE $0x62; BYTE $0x72; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xD6 // VDPBF16PS Z6, Z2, Z10
	BYTE $0x62; BYTE $0x72; BYTE $0x66; BYTE $0x48; BYTE $0x52; BYTE $0xDE // VDPBF16PS Z6, Z3, Z11
	BYTE $0x62; BYTE $0x72; BYTE $0x5E; BYTE $0x48; BYTE $0x52; BYTE $0xE6 // VDPBF16PS Z6, Z4, Z12
	BYTE $0x62; BYTE $0x72; BYTE $0x56; BYTE $0x48; BYTE $0x52; BYTE $0xEE // VDPBF16PS Z6, Z5, Z13
	VBROADCASTF64X4 (DX)(R8*1), Z7
	BYTE $0x62; BYTE $0x72; BYTE $0x7E; BYTE $0x48; BYTE $0x52; BYTE $0xF7 // VDPBF16PS Z7, Z0, Z14
	BYTE $0x62; BYTE $0x72; BYTE $0x76; BYTE $0x48; BYTE $0x52; BYTE $0xFF // VDPBF16PS Z7, Z1, Z15
	BYTE $0x62; BYTE $0xE2; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xC7 // VDPBF16PS Z7, Z2, Z16
	BYTE $0x62; BYTE $0xE2; BYTE $0x66; BYTE $0x48; BYTE $0x52; BYTE $0xCF // VDPBF16PS Z7, Z3, Z17
	BYTE $0x62; BYTE $0xE2; BYTE $0x5E; BYTE $0x48; BYTE $0x52; BYTE $0xD7 // VDPBF16PS Z7, Z4, Z18
	BYTE $0x62; BYTE $0xE2; BYTE $0x56; BYTE $0x48; BYTE $0x52; BYTE $0xDF // VDPBF16PS Z7, Z5, Z19
	VBROADCASTF64X4 (DX)(R8*2), Z6
	BYTE $0x62; BYTE $0xE2; BYTE $0x7E; BYTE $0x48; BYTE $0x52; BYTE $0xE6 // VDPBF16PS Z6, Z0, Z20
	BYTE $0x62; BYTE $0xE2; BYTE $0x76; BYTE $0x48; BYTE $0x52; BYTE $0xEE // VDPBF16PS Z6, Z1, Z21
	BYTE $0x62; BYTE $0xE2; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xF6 // VDPBF16PS Z6, Z2, Z22
	BYTE $0x62; BYTE $0xE2; BYTE $0x66; BYTE $0x48; BYTE $0x52; BYTE $0xFE // VDPBF16PS Z6, Z3, Z23
	BYTE $0x62; BYTE $0x62; BYTE $0x5E; BYTE $0x48; BYTE $0x52; BYTE $0xC6 // VDPBF16PS Z6, Z4, Z24
	BYTE $0x62; BYTE $0x62; BYTE $0x56; BYTE $0x48; BYTE $0x52; BYTE $0xCE // VDPBF16PS Z6, Z5, Z25
	VBROADCASTF64X4 (DX)(R9*1), Z7
	BYTE $0x62; BYTE $0x62; BYTE $0x7E; BYTE $0x48; BYTE $0x52; BYTE $0xD7 // VDPBF16PS Z7, Z0, Z26
	BYTE $0x62; BYTE $0x62; BYTE $0x76; BYTE $0x48; BYTE $0x52; BYTE $0xDF // VDPBF16PS Z7, Z1, Z27
	BYTE $0x62; BYTE $0x62; BYTE $0x6E; BYTE $0x48; BYTE $0x52; BYTE $0xE7 // VDPBF16PS Z7, Z2, Z28
	BYTE $0x62; BYTE $0x62; BYTE $0x66; BYTE $0x48; BYTE $0x52; BYTE $0xEF // VDPBF16PS Z7, Z3, Z29
	BYTE $0x62; BYTE $0x62; BYTE $0x5E; BYTE $0x48; BYTE $0x52; BYTE $0xF7 // VDPBF16PS Z7, Z4, Z30
	BYTE $0x62; BYTE $0x62; BYTE $0x56; BYTE $0x48; BYTE $0x52; BYTE $0xFF // VDPBF16PS Z7, Z5, Z31
	ADDQ            $384, R10
	ADDQ            $32, DX
	ADDQ            $32, AX
	CMPQ            AX, R8
	JLT             b12inner

	VMOVUPS tile12Perm<>(SB), Z7
	LEAQ    (R14)(R15*1), R12
	TILESUM(Z8, Z14, Z20, Z26, Z9, Z15, Z21, Z27)
	TILESUM(Z10, Z16, Z22, Z28, Z11, Z17, Z23, Z29)
	TILESUM(Z12, Z18, Z24, Z30, Z13, Z19, Z25, Z31)
	ADDQ    R9, DX // DX had moved one row; skip the other three
	ADDQ    $16, R15
	SUBQ    $4, CX
	JMP     b12loop

b12done:
	VZEROUPPER
	RET

// func toBF16AVX512(dst *uint16, src *float32, n int)
//
// dst[i] = src[i] rounded to bfloat16, to nearest, ties to even
// (VCVTNEPS2BF16, which reads a subnormal as zero), for i < n, n a
// positive multiple of 16.
TEXT ·toBF16AVX512(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX

cvtloop:
	VMOVUPS (SI), Z0
	BYTE $0x62; BYTE $0xF2; BYTE $0x7E; BYTE $0x48; BYTE $0x72; BYTE $0xC8 // VCVTNEPS2BF16 Z0, Y1
	VMOVDQU Y1, (DI)
	ADDQ    $64, SI
	ADDQ    $32, DI
	SUBQ    $16, CX
	JNZ     cvtloop
	VZEROUPPER
	RET
