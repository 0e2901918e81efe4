#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# What the callchain tests (deferred callchains, SFrame unwinding) share:
# removing the test's $tmpdir however it ends, skipping, and a sample's
# frames on one line, so that two ways of getting the stacks compare
# with cmp and grep.  A test sets tmpdir, then
# "trap trap_cleanup EXIT TERM INT".

cleanup()
{
	trap - EXIT TERM INT
	rm -rf "$tmpdir"
}

trap_cleanup()
{
	echo "Unexpected signal in ${FUNCNAME[1]}"
	cleanup
	exit 1
}

# skip WHY: the test cannot run here (perf test's exit code 2).
skip()
{
	echo "Skip: $*"
	cleanup
	exit 2
}

# chains PERF-SCRIPT-ARGS: one line per sample, its symbols innermost
# first, each after a space (" noploop main __libc_start_call_main").
chains()
{
	perf script -F ip,sym "$@" 2> /dev/null |
		awk 'BEGIN { RS = ""; FS = "\n" }
		     { s = ""
		       for (i = 1; i <= NF; i++) { split($i, f, " "); s = s " " f[2] }
		       print s }'
}
