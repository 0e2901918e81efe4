// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: a whole perf.data file (header, attrs, data, feature
 * sections) read through perf_session, as perf report and perf script
 * read one: perf_session__new(), perf_session__process_events(), the
 * statistics printers (perf report --stats), perf_session__delete().
 *
 * Input: the bytes of a perf.data file, nothing else.  A file whose header
 * is a pipe header (size 16) is written into a real pipe and read as
 * `perf report -i -` reads stdin; any other goes into a memfd opened by
 * its /proc/self/fd path, which perf maps like a file on disk.  So the
 * seeds are plain perf.data files, and one mutation of the header's size
 * field moves an input between the two readers.
 *
 * The tool is perf report's minus what needs the host: metadata records go
 * to the machine (perf_event__process_mmap/mmap2/comm/fork/exit/...),
 * attrs, event updates, build-ids, id index and features to the session,
 * thread and CPU maps parsed as perf script does, compressed records are
 * decompressed, deferred callchains are stitched
 * (merge_deferred_callchains, ordered events).  A sample looks up its
 * thread, the map of its IP and of each callchain entry and its CPU, but
 * no symbol is loaded: that would read the host's DSOs, not the input.
 *
 * Beyond ASan/UBSan and leaks, the target checks that every callchain
 * handed to the tool can be read to its last entry.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <linux/err.h>
#include <linux/kernel.h>
#include <linux/perf_event.h>
#include <internal/lib.h>
#include <perf/core.h>

#include "util/addr_location.h"
#include "util/callchain.h"
#include "util/cpumap.h"
#include "util/data.h"
#include "util/debug.h"
#include "util/event.h"
#include "util/evsel.h"
#include "util/header.h"
#include "util/machine.h"
#include "util/map.h"
#include "util/sample.h"
#include "util/session.h"
#include "util/symbol.h"
#include "util/thread.h"
#include "util/thread_map.h"
#include "util/tool.h"
#include "util/util.h"

/* Enough for -max_len: a pipe holding the whole input never blocks. */
#define PIPE_SIZE	(1 << 20)

static FILE *devnull;
static u64 sink;

static void fail(const char *what, int err)
{
	fprintf(stderr, "perf-data: %s (%d)\n", what, err);
	abort();
}

/* What perf report does with a sample, up to the symbol lookup. */
static int fuzz__sample(const struct perf_tool *tool __maybe_unused,
			union perf_event *event __maybe_unused,
			struct perf_sample *sample, struct machine *machine)
{
	struct addr_location al;
	struct thread *thread;
	u8 cpumode = sample->cpumode;
	u64 i;

	thread = machine__findnew_thread(machine, sample->pid, sample->tid);
	if (!thread)
		return 0;
	addr_location__init(&al);
	thread__find_map(thread, cpumode, sample->ip, &al);
	if (sample->callchain) {
		for (i = 0; i < sample->callchain->nr; i++) {
			u64 ip = sample->callchain->ips[i];

			if (ip >= PERF_CONTEXT_MAX) {
				if (ip == PERF_CONTEXT_USER)
					cpumode = PERF_RECORD_MISC_USER;
				else if (ip == PERF_CONTEXT_KERNEL)
					cpumode = PERF_RECORD_MISC_KERNEL;
				continue;
			}
			if (thread__find_map(thread, cpumode, ip, &al))
				sink += al.addr;
		}
	}
	/* The CPU count perf report --sort cpu and perf script -F cpu use. */
	if (sample->cpu != (u32)-1 && (int)sample->cpu < machine__nr_cpus_avail(machine))
		sink += sample->cpu;
	addr_location__exit(&al);
	thread__put(thread);
	return 0;
}

static int fuzz__feature(const struct perf_tool *tool, struct perf_session *session,
			 union perf_event *event)
{
	return perf_event__process_feature(tool, session, event);
}

/* perf script's: the maps a recording was made on, printed with -D. */
static int fuzz__thread_map(const struct perf_tool *tool __maybe_unused,
			    struct perf_session *session __maybe_unused,
			    union perf_event *event)
{
	struct perf_thread_map *threads = thread_map__new_event(&event->thread_map);

	if (!threads)
		return -ENOMEM;
	perf_event__fprintf_thread_map(event, devnull);
	perf_thread_map__put(threads);
	return 0;
}

static int fuzz__cpu_map(const struct perf_tool *tool __maybe_unused,
			 struct perf_session *session __maybe_unused,
			 union perf_event *event)
{
	struct perf_cpu_map *cpus = cpu_map__new_data(&event->cpu_map.data);

	if (!cpus)
		return -ENOMEM;
	perf_event__fprintf_cpu_map(event, devnull);
	perf_cpu_map__put(cpus);
	return 0;
}

static void fuzz__tool(struct perf_tool *tool)
{
	perf_tool__init(tool, /*ordered_events=*/true);
	tool->sample		= fuzz__sample;
	tool->mmap		= perf_event__process_mmap;
	tool->mmap2		= perf_event__process_mmap2;
	tool->comm		= perf_event__process_comm;
	tool->namespaces	= perf_event__process_namespaces;
	tool->cgroup		= perf_event__process_cgroup;
	tool->exit		= perf_event__process_exit;
	tool->fork		= perf_event__process_fork;
	tool->context_switch	= perf_event__process_switch;
	tool->lost		= perf_event__process_lost;
	tool->ksymbol		= perf_event__process_ksymbol;
	tool->attr		= perf_event__process_attr;
	tool->event_update	= perf_event__process_event_update;
	tool->build_id		= perf_event__process_build_id;
	tool->id_index		= perf_event__process_id_index;
	tool->feature		= fuzz__feature;
	tool->thread_map	= fuzz__thread_map;
	tool->cpu_map		= fuzz__cpu_map;
	tool->ordering_requires_timestamps = true;
	tool->merge_deferred_callchains = true;
}

static bool is_pipe_header(const uint8_t *data, size_t size)
{
	u64 hdr_size;

	if (size < 2 * sizeof(u64))
		return false;
	memcpy(&hdr_size, data + sizeof(u64), sizeof(hdr_size));
	return hdr_size == sizeof(struct perf_pipe_file_header) ||
	       hdr_size == bswap_64(sizeof(struct perf_pipe_file_header));
}

/* The input as a file perf can open: a pipe's read end, or a memfd. */
static int input_fd(const uint8_t *data, size_t size, bool *pipe_mode)
{
	int fds[2];
	int fd;

	*pipe_mode = is_pipe_header(data, size) && size <= PIPE_SIZE;
	if (*pipe_mode) {
		if (pipe(fds))
			fail("pipe", -errno);
		if (size > 65536 && fcntl(fds[1], F_SETPIPE_SZ, PIPE_SIZE) < 0)
			fail("F_SETPIPE_SZ", -errno);
		if (writen(fds[1], data, size) != (ssize_t)size)
			fail("write", -errno);
		close(fds[1]);
		return fds[0];
	}
	fd = memfd_create("perf-data", 0);
	if (fd < 0)
		fail("memfd_create", -errno);
	if (writen(fd, data, size) != (ssize_t)size)
		fail("write", -errno);
	return fd;
}

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc __maybe_unused, char ***argv __maybe_unused)
{
	devnull = fopen("/dev/null", "w");
	if (!devnull)
		fail("/dev/null", -errno);
	verbose = -1;
	/* As perf's main(): page_size for the reader's mmap windows. */
	libperf_init(NULL);
	/* The host's kernel and DSOs are not the input's: never load them. */
	symbol_conf.lazy_load_kernel_maps = true;
	symbol_conf.use_callchain = true;
	if (symbol__init(NULL) < 0)
		fail("symbol__init", -1);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perf_data pd = {
		.mode	= PERF_DATA_MODE_READ,
		.force	= true,
	};
	struct perf_session *session;
	struct perf_tool tool;
	char path[64];
	bool pipe_mode;
	int fd;

	fd = input_fd(data, size, &pipe_mode);
	if (pipe_mode) {
		pd.path = "-";
		pd.file.fd = fd;
	} else {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		pd.path = path;
	}

	fuzz__tool(&tool);
	session = perf_session__new(&pd, &tool);
	if (IS_ERR(session))
		goto out;
	if (zstd_init(&session->zstd_data, 0) < 0)
		fail("zstd_init", -1);
	perf_session__process_events(session);
	/* perf report --stats, and the end-of-run warnings. */
	perf_session__fprintf_nr_events(session, devnull);
	perf_session__fprintf_deferred_stats(session, devnull);
	reader_damage__fprintf(&session->damage, session, devnull);
	perf_session__fprintf_info(session, devnull, /*full=*/true);
	zstd_fini(&session->zstd_data);
	perf_session__delete(session);
out:
	/*
	 * perf_data__close() closed the pipe (perf reads the fd it is given)
	 * and its own fd of the memfd's path, not ours.
	 */
	if (!pipe_mode)
		close(fd);
	return 0;
}
