# SPDX-License-Identifier: GPL-2.0
# SFrame corpus, s390x: frame shapes for perf's decoder against libsframe
# and readelf --sframe.  Assembled with --gsframe, linked with -shared.
# The CFA is %r15 + 160 on entry; FREs encode CFA offsets as (off + 160) / 8.
	.text

# Leaf: nothing saved, the RA stays in %r14.
	.globl	leaf
	.type	leaf, @function
leaf:
	.cfi_startproc
	la	%r2, 1(%r2)
	br	%r14
	.cfi_endproc
	.size	leaf, .-leaf

# The usual prologue: save %r11-%r15, make a frame, CFA from %r11.
	.globl	fp_based
	.type	fp_based, @function
fp_based:
	.cfi_startproc
	stmg	%r11, %r15, 88(%r15)
	.cfi_offset 11, -72
	.cfi_offset 14, -48
	.cfi_offset 15, -40
	lay	%r15, -160(%r15)
	.cfi_def_cfa_offset 320
	lgr	%r11, %r15
	.cfi_def_cfa_register 11
	brasl	%r14, ext_func@PLT
	brasl	%r14, leaf
	lmg	%r11, %r15, 248(%r11)
	.cfi_restore 15
	.cfi_restore 14
	.cfi_restore 11
	.cfi_def_cfa 15, 160
	br	%r14
	.cfi_endproc
	.size	fp_based, .-fp_based

# SP only, a 4 KiB frame: 2-byte words.
	.globl	sp_2byte
	.type	sp_2byte, @function
sp_2byte:
	.cfi_startproc
	stmg	%r14, %r15, 112(%r15)
	.cfi_offset 14, -48
	.cfi_offset 15, -40
	lay	%r15, -4096(%r15)
	.cfi_def_cfa_offset 4256
	brasl	%r14, leaf
	lmg	%r14, %r15, 4208(%r15)
	.cfi_restore 15
	.cfi_restore 14
	.cfi_def_cfa_offset 160
	br	%r14
	.cfi_endproc
	.size	sp_2byte, .-sp_2byte

# SP only, a 1 MiB frame: 4-byte words.
	.globl	sp_4byte
	.type	sp_4byte, @function
sp_4byte:
	.cfi_startproc
	stmg	%r11, %r15, 88(%r15)
	.cfi_offset 11, -72
	.cfi_offset 14, -48
	.cfi_offset 15, -40
	agfi	%r15, -1048576
	.cfi_def_cfa_offset 1048736
	brasl	%r14, leaf
	agfi	%r15, 1048576
	.cfi_def_cfa_offset 160
	lmg	%r11, %r15, 88(%r15)
	.cfi_restore 15
	.cfi_restore 14
	.cfi_restore 11
	br	%r14
	.cfi_endproc
	.size	sp_4byte, .-sp_4byte

# FP saved, RA not: the RA word is padding.
	.globl	fp_only
	.type	fp_only, @function
fp_only:
	.cfi_startproc
	stg	%r11, 88(%r15)
	.cfi_offset 11, -72
	lgr	%r11, %r15
	la	%r2, 1(%r2)
	lg	%r11, 88(%r15)
	.cfi_restore 11
	br	%r14
	.cfi_endproc
	.size	fp_only, .-fp_only

# Leaf that keeps the RA and FP in floating-point registers.
	.globl	in_fprs
	.type	in_fprs, @function
in_fprs:
	.cfi_startproc
	ldgr	%f0, %r14
	.cfi_register 14, 16
	ldgr	%f2, %r11
	.cfi_register 11, 17
	la	%r2, 1(%r2)
	lgdr	%r11, %f2
	.cfi_restore 11
	lgdr	%r14, %f0
	.cfi_restore 14
	br	%r14
	.cfi_endproc
	.size	in_fprs, .-in_fprs

# Rows past 255 and past 65535 bytes: 2- and 4-byte FRE start addresses.
	.globl	long_body
	.type	long_body, @function
long_body:
	.cfi_startproc
	stmg	%r14, %r15, 112(%r15)
	.cfi_offset 14, -48
	.cfi_offset 15, -40
	.rept	150
	nopr
	.endr
	lay	%r15, -160(%r15)
	.cfi_def_cfa_offset 320
	.rept	34000
	nopr
	.endr
	lay	%r15, 160(%r15)
	.cfi_def_cfa_offset 160
	lmg	%r14, %r15, 112(%r15)
	.cfi_restore 15
	.cfi_restore 14
	br	%r14
	.cfi_endproc
	.size	long_body, .-long_body

# Outermost frame: the RA is undefined.
	.globl	outermost
	.type	outermost, @function
outermost:
	.cfi_startproc
	.cfi_undefined 14
	lghi	%r11, 0
	brasl	%r14, leaf
	j	.
	.cfi_endproc
	.size	outermost, .-outermost
