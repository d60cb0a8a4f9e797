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
	VXORPS Y12, Y12, Y12
	VXORPS Y13, Y13, Y13
	VXORPS Y14, Y14, Y14
	VXORPS Y15, Y15, Y15
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
	VFMADD231PS 32(DX)(AX*1), Y1, Y12
	VFMADD231PS 32(R9)(AX*1), Y1, Y13
	VFMADD231PS 32(R10)(AX*1), Y1, Y14
	VFMADD231PS 32(R11)(AX*1), Y1, Y15
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
	VADDPS Y12, Y4, Y4
	VADDPS Y13, Y5, Y5
	VADDPS Y14, Y6, Y6
	VADDPS Y15, Y7, Y7
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
