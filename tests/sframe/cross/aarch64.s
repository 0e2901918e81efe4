// SPDX-License-Identifier: GPL-2.0
// SFrame corpus, AArch64: frame shapes for perf's decoder against libsframe
// and readelf --sframe.  Assembled with --gsframe (also with -EB), linked
// with -shared.  PAuth instructions are written as hints so that every
// assembler takes them: hint 25 paciasp, 29 autiasp, 27 pacibsp, 31 autibsp.
	.text

// A frame record of \size bytes pushed, and popped again with the CFA
// from SP (frame_pop) or, set from FP meanwhile, back to SP (frame_pop_fp).
	.macro	frame_push size=16
	stp	x29, x30, [sp, -\size]!
	.cfi_def_cfa_offset \size
	.cfi_offset 29, -\size
	.cfi_offset 30, 8-\size
	.endm
	.macro	frame_pop size=16
	ldp	x29, x30, [sp], \size
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa_offset 0
	.endm
	.macro	frame_pop_fp size
	ldp	x29, x30, [sp], \size
	.cfi_restore 30
	.cfi_restore 29
	.cfi_def_cfa 31, 0
	.endm

// Leaf: the RA stays in LR, CFA = SP.
	.globl	leaf
	.type	leaf, %function
leaf:
	.cfi_startproc
	add	x0, x0, 1
	ret
	.cfi_endproc
	.size	leaf, .-leaf

// Frame record, then CFA from FP; calls through the PLT.
	.globl	fp_based
	.type	fp_based, %function
fp_based:
	.cfi_startproc
	frame_push 32
	mov	x29, sp
	.cfi_def_cfa_register 29
	bl	ext_func
	bl	leaf
	frame_pop_fp 32
	ret
	.cfi_endproc
	.size	fp_based, .-fp_based

// SP only, a 4 KiB frame: CFA offsets need 2 bytes.
	.globl	sp_2byte
	.type	sp_2byte, %function
sp_2byte:
	.cfi_startproc
	sub	sp, sp, #4096
	.cfi_def_cfa_offset 4096
	stp	x29, x30, [sp, 496]
	.cfi_offset 29, -3600
	.cfi_offset 30, -3592
	bl	leaf
	ldp	x29, x30, [sp, 496]
	.cfi_restore 29
	.cfi_restore 30
	add	sp, sp, #4096
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	sp_2byte, .-sp_2byte

// SP only, a 1 MiB frame below the frame record: 4-byte offsets.
	.globl	sp_4byte
	.type	sp_4byte, %function
sp_4byte:
	.cfi_startproc
	frame_push
	sub	sp, sp, #0x100000
	.cfi_def_cfa_offset 0x100010
	bl	leaf
	add	sp, sp, #0x100000
	.cfi_def_cfa_offset 16
	frame_pop
	ret
	.cfi_endproc
	.size	sp_4byte, .-sp_4byte

// RA saved, FP not.
	.globl	ra_only
	.type	ra_only, %function
ra_only:
	.cfi_startproc
	str	x30, [sp, -16]!
	.cfi_def_cfa_offset 16
	.cfi_offset 30, -16
	bl	leaf
	ldr	x30, [sp], 16
	.cfi_restore 30
	.cfi_def_cfa_offset 0
	ret
	.cfi_endproc
	.size	ra_only, .-ra_only

// PAuth, A key: the RA is signed between paciasp and autiasp.
	.globl	pauth_a
	.type	pauth_a, %function
pauth_a:
	.cfi_startproc
	hint	25
	.cfi_negate_ra_state
	frame_push
	mov	x29, sp
	bl	leaf
	frame_pop
	hint	29
	.cfi_negate_ra_state
	ret
	.cfi_endproc
	.size	pauth_a, .-pauth_a

// PAuth, B key.
	.globl	pauth_b
	.type	pauth_b, %function
pauth_b:
	.cfi_startproc
	.cfi_b_key_frame
	hint	27
	.cfi_negate_ra_state
	frame_push 32
	mov	x29, sp
	.cfi_def_cfa_register 29
	bl	leaf
	frame_pop_fp 32
	hint	31
	.cfi_negate_ra_state
	ret
	.cfi_endproc
	.size	pauth_b, .-pauth_b

// Rows past 255 and past 65535 bytes: 2- and 4-byte FRE start addresses.
	.globl	long_body
	.type	long_body, %function
long_body:
	.cfi_startproc
	frame_push
	.rept	100
	nop
	.endr
	sub	sp, sp, #64
	.cfi_def_cfa_offset 80
	.rept	17000
	nop
	.endr
	add	sp, sp, #64
	.cfi_def_cfa_offset 16
	frame_pop
	ret
	.cfi_endproc
	.size	long_body, .-long_body

// Outermost frame: the RA is undefined.
	.globl	outermost
	.type	outermost, %function
outermost:
	.cfi_startproc
	.cfi_undefined 30
	mov	x29, 0
	bl	leaf
	brk	0
	.cfi_endproc
	.size	outermost, .-outermost

// A signal frame (v3 marks its FDE).
	.globl	sigframe
	.type	sigframe, %function
sigframe:
	.cfi_startproc
	.cfi_signal_frame
	frame_push
	bl	leaf
	frame_pop
	ret
	.cfi_endproc
	.size	sigframe, .-sigframe
