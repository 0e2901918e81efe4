# SPDX-License-Identifier: GPL-2.0
"""The numbers of the perf.data format the tests need: event types, sample
format and attr flag bits, callchain context markers, header features, as
include/uapi/linux/perf_event.h and tools/perf/util/header.h define them.
Only constants: the writer, the reader and the generators share them."""

# enum perf_event_type
MMAP, LOST, COMM, EXIT, THROTTLE, UNTHROTTLE, FORK, READ, SAMPLE, MMAP2 = range(1, 11)
CGROUP = 19
CALLCHAIN_DEFERRED = 22
HEADER_ATTR = 64
FINISHED_ROUND = 68
ID_INDEX = 69
HEADER_FEATURE = 80

# enum perf_event_sample_format
S_IP, S_TID, S_TIME, S_ADDR, S_READ, S_CALLCHAIN, S_ID, S_CPU, S_PERIOD, \
    S_STREAM_ID, S_RAW, S_BRANCH_STACK, S_REGS_USER, S_STACK_USER = \
    [1 << i for i in range(14)]
S_IDENTIFIER = 1 << 16
S_CGROUP = 1 << 21

# perf_event_attr flag bits
F_DISABLED, F_INHERIT = 1 << 0, 1 << 1
F_MMAP, F_COMM, F_ENABLE_ON_EXEC, F_TASK = 1 << 8, 1 << 9, 1 << 12, 1 << 13
F_SAMPLE_ID_ALL = 1 << 18
F_MMAP2, F_COMM_EXEC = 1 << 23, 1 << 24
F_DEFER_CALLCHAIN, F_DEFER_OUTPUT = 1 << 38, 1 << 39

MISC_KERNEL, MISC_USER, MISC_GUEST_KERNEL = 1, 2, 4
COMM_EXEC = 1 << 13

CONTEXT_KERNEL = (1 << 64) - 128
CONTEXT_USER = (1 << 64) - 512
CONTEXT_USER_DEFERRED = (1 << 64) - 640

PERF_TYPE_SOFTWARE = 1
SW_CPU_CLOCK, SW_DUMMY, SW_BPF_OUTPUT = 0, 9, 10

# x86_64 perf_regs: AX BX CX DX SI DI BP SP IP ... (IP = 8, SP = 7, BP = 6)
X86_REG_BP, X86_REG_SP, X86_REG_IP = 6, 7, 8
PERF_SAMPLE_REGS_ABI_64 = 2

# feature bits (enum HEADER_*)
HEADER_TRACING_DATA, HEADER_BUILD_ID = 1, 2
HEADER_HOSTNAME, HEADER_OSRELEASE, HEADER_VERSION, HEADER_ARCH, HEADER_NRCPUS = 3, 4, 5, 6, 7
HEADER_CMDLINE = 11
HEADER_CPU_TOPOLOGY = 13
HEADER_BRANCH_STACK, HEADER_PMU_MAPPINGS, HEADER_GROUP_DESC = 15, 16, 17
HEADER_DIR_FORMAT = 24
HEADER_COMPRESSED = 27

ATTR_SIZE = 144         # PERF_ATTR_SIZE_VER9
MAGIC = b'PERFILE2'
