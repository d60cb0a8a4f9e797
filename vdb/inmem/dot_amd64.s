//go:build amd64 && !purego

#include "textflag.h"

// Horizontal sum of the eight lanes of Y<acc> into the float32 at off(DI),
// using X8 as scratch.
#define HSUM_STORE(acc, xacc, off) \
	VEXTRACTF128 $1, acc, X8 \
	VADDPS       X8, xacc, xacc \
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
