/* SPDX-License-Identifier: GPL-2.0 */
/* Hand-written frame with CFI: asm_call(cb, n) calls cb(n) with an FP frame. */
	.text
	.globl	asm_call
	.type	asm_call, @function
asm_call:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	pushq	%rbx
	.cfi_offset %rbx, -24
	subq	$8, %rsp
	movq	%rdi, %rax
	movl	%esi, %edi
	call	*%rax
	addl	$1, %eax
	movq	-8(%rbp), %rbx
	leave
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size	asm_call, .-asm_call
	.section	.note.GNU-stack,"",@progbits
