// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the symbol loader of a user DSO's file
 * (util/symbol.c dso__load(), util/symbol-elf.c symsrc__init(),
 * dso__load_sym() and the PLT synthesis): what perf report and perf script
 * reach for the DSO of each sample, once a recording's MMAP2 names a file.
 * fuzz/perf-data.c never loads symbols (that would read the host's DSOs).
 *
 * Input: a file.  It is written to a memfd, and a user DSO named by the
 * memfd's /proc/self/fd path is loaded from it as perf does for a user
 * mapping (no build-id known: read from the file; no build-id cache).
 * Every symbol loaded is then looked up by its start and its name read.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/compiler.h>
#include <linux/rbtree.h>
#include <internal/lib.h>
#include <perf/core.h>

#include "util/config.h"
#include "util/debug.h"
#include "util/dso.h"
#include "util/map.h"
#include "util/symbol.h"
#include "util/symbol_conf.h"

static void fail(const char *what, int err)
{
	fprintf(stderr, "elf-symbols: %s failed: %d\n", what, err);
	abort();
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc __maybe_unused, char ***argv __maybe_unused)
{
	verbose = -1;
	libperf_init(NULL);
	/* The input only: never a file of the host's build-id cache. */
	set_buildid_dir("/nonexistent-fuzz-buildid-dir");
	symbol_conf.lazy_load_kernel_maps = true;
	if (symbol__init(NULL) < 0)
		fail("symbol__init", -1);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rb_node *nd;
	char path[64];
	struct dso *dso;
	struct map *map;
	size_t names = 0;
	int fd;

	fd = memfd_create("elf-symbols", 0);
	if (fd < 0)
		fail("memfd_create", -errno);
	if (writen(fd, data, size) != (ssize_t)size)
		fail("write", -errno);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);

	dso = dso__new(path);
	if (!dso)
		fail("dso__new", -ENOMEM);
	map = map__new2(0, dso);
	if (!map)
		fail("map__new2", -ENOMEM);
	dso__load(dso, map);

	for (nd = rb_first_cached(dso__symbols(dso)); nd; nd = rb_next(nd)) {
		struct symbol *sym = rb_entry(nd, struct symbol, rb_node);

		dso__find_symbol(dso, sym->start);
		names += strlen(sym->name);
	}
	/* Keep the walk from being optimized out. */
	if (names == SIZE_MAX)
		fail("names", 0);

	map__put(map);
	dso__put(dso);
	close(fd);
	return 0;
}
