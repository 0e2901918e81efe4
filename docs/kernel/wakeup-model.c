// SPDX-License-Identifier: GPL-2.0
/*
 * A model of __perf_output_begin()'s wakeup stamp: task-context outputs
 * that an IRQ output can interrupt between the reservation of rb->head and
 * the watermark test, or between the test and its local_add().  Counts the
 * wakeups (outputs that see rb->wakeup move) with the unsigned test of 7.2
 * and the signed one of the patch, over the same random interleavings.
 */
/* Build with cc -O2 and run: no arguments, prints two lines. */
#include <stdio.h>
#include <stdlib.h>

struct rb { unsigned long head, wakeup; long watermark; };

static int test(struct rb *rb, unsigned long head, int sign)
{
	if (sign)
		return (long)(head - rb->wakeup) > rb->watermark;
	return head - rb->wakeup > (unsigned long)rb->watermark;
}

/* One output of @size; @irq: 0 none, 1 before the test, 2 between test and add. */
static int output(struct rb *rb, unsigned long size, int irq, int sign)
{
	unsigned long stamp = rb->wakeup, head;
	int woke = 0, hit;

	rb->head += size;
	head = rb->head;
	if (irq == 1)
		woke += output(rb, 152, 0, sign);
	hit = test(rb, head, sign);
	if (irq == 2)
		woke += output(rb, 152, 0, sign);
	if (hit)
		rb->wakeup += rb->watermark;
	return woke + (stamp != rb->wakeup);
}

int main(void)
{
	for (int sign = 0; sign <= 1; sign++) {
		struct rb rb = { 0, 0, 262144 };
		long woke = 0, n = 0, ahead = 0;

		srand(1);
		for (int i = 0; i < 200000; i++) {
			int r = rand() % 1000;
			int irq = r < 5 ? 1 : r < 10 ? 2 : 0;

			woke += output(&rb, 152 + 8 * (rand() % 60), irq, sign);
			n += 1 + !!irq;
			if ((long)(rb.wakeup - rb.head) > ahead)
				ahead = rb.wakeup - rb.head;
		}
		printf("%s: %ld outputs, %lu bytes, %ld wakeups (%lu expected), ",
		       sign ? "signed  " : "unsigned", n, rb.head, woke,
		       rb.head / rb.watermark);
		printf("wakeup at most %ld ahead of head\n", ahead);
	}
	return 0;
}
