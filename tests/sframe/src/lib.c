// SPDX-License-Identifier: GPL-2.0
/* The shared library (or, when linked statically, object) of the corpus. */
__attribute__((noinline)) int lib_call(int (*cb)(int), int n)
{
	volatile int r = cb(n);

	return r + 1;
}
