# SPDX-License-Identifier: GPL-2.0
#
# Build perf 7.2.13 with this project's overlay, and pristine upstream perf
# beside it for side-by-side comparisons.
#
#   make setup     install build dependencies, then make all, then make demo
#   make           build/bin/perf (ours) and build/upstream/bin/perf (pristine)
#   make install   ours into PREFIX (/usr/local), DESTDIR for packagers
#   make check     every test: tests/run-all.py, one area per tests/<area>
#   make demo      record a workload with --call-graph fp,defer, show the report
#   make patches   write edits made in build/ours back to the overlay
#   make SAN=1     ours with ASan+UBSan, in build/out-ours-san
#   make fuzz      libFuzzer targets (clang 14): see fuzz/README.md
#   make deb       a Debian package of ours, in build/deb (lintian-checked)
#   make series    the overlay as a patch series for upstream, in build/series
#   make series-check  each commit of the series built (WERROR=1) and tested
#
# LINUX_SRC=<linux 7.2 tree> uses that tree instead of Debian's
# linux-source-7.2 package.

B		?= build
PRISTINE	:= $(B)/pristine
TREE		:= $(B)/ours
JOBS		?= $(shell nproc)
SAN		?=
PREFIX		?= /usr/local
DESTDIR		?=
# Each perf of the build tree is installed by perf's own install target
# under a prefix of its own and runs from there, so that its exec path
# (scripts, perf-archive, the shell tests), man pages, tips and flame
# graph template are its own. perf puts the directory it was run from
# first in PATH for its sub-commands: two perfs never share a directory.
ROOT		:= $(abspath $(B)/root)
ROOT_UP		:= $(abspath $(B)/upstream)
TEMPLATE	:= $(B)/d3-flame-graph/dist/templates/d3-flamegraph-base.html
TEMPLATE_DIR	:= share/d3-flame-graph

PERF_FLAGS	:= PYTHON=/usr/bin/python3 NO_RUST=1
# Debian's asciidoc is "python3 -m asciidoc": the first python3 in PATH
# must be Debian's, whose modules it is (not a pyenv's, say).
PERF_MAKE	:= PATH=/usr/bin:$$PATH $(MAKE)
ifeq ($(SAN),1)
# No -Werror: with the sanitizers gcc 12 warns falsely (maybe-uninitialized
# in util/time-utils.c); the plain build keeps WERROR=1.
OUT		:= $(B)/out-ours-san
PERF_FLAGS	+= WERROR=0 EXTRA_CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
		   LDFLAGS="-fsanitize=address,undefined" NO_LIBPYTHON=1 NO_LIBPERL=1
PERF_BIN	:= $(B)/bin/perf-san
else
PERF_FLAGS	+= WERROR=1
OUT		:= $(B)/out-ours
PERF_BIN	:= $(B)/bin/perf
endif
OUT_UP		:= $(B)/out-upstream

.PHONY: all setup deps sources tree perf perf-upstream install check demo patches \
	patches-status refresh-patches reset clean distclean checkpatch fuzz fuzz-run deb series series-check

all: perf perf-upstream

setup: deps
	$(MAKE) all
	$(MAKE) demo

deps:
	scripts/install-deps.sh

sources: $(PRISTINE)/.stamp

$(PRISTINE)/.stamp:
	scripts/get-sources.sh $(PRISTINE)
	echo '#define PERF_VERSION "7.2.13"' > $(PRISTINE)/PERF-VERSION-FILE
	touch $@

tree: $(PRISTINE)/.stamp
	scripts/overlay.py apply $(PRISTINE) $(TREE) .
	echo '#define PERF_VERSION "7.2.13+overlay"' > $(TREE)/PERF-VERSION-FILE.new
	cmp -s $(TREE)/PERF-VERSION-FILE.new $(TREE)/PERF-VERSION-FILE || \
		cp $(TREE)/PERF-VERSION-FILE.new $(TREE)/PERF-VERSION-FILE
	rm -f $(TREE)/PERF-VERSION-FILE.new

ifeq ($(SAN),1)
perf: tree
	mkdir -p $(OUT) $(B)/bin
	$(MAKE) -C $(TREE)/tools/perf O=$(abspath $(OUT)) $(PERF_FLAGS) -j$(JOBS) >$(OUT).log 2>&1 || \
		{ tail -n 40 $(OUT).log; echo "build of our perf failed: $(OUT).log"; exit 1; }
	ln -sfn $(abspath $(OUT))/perf $(PERF_BIN)
	@echo "built $(PERF_BIN)"
else
perf: tree $(TEMPLATE)
	mkdir -p $(OUT) $(B)/bin
	$(PERF_MAKE) -C $(TREE)/tools/perf O=$(abspath $(OUT)) $(PERF_FLAGS) -j$(JOBS) \
		prefix=$(ROOT) install >$(OUT).log 2>&1 || \
		{ tail -n 40 $(OUT).log; echo "build of our perf failed: $(OUT).log"; exit 1; }
	install -D -m 644 $(TEMPLATE) $(ROOT)/$(TEMPLATE_DIR)/d3-flamegraph-base.html
	ln -sfn $(ROOT)/bin/perf $(PERF_BIN)
	@echo "built $(PERF_BIN) (installed in $(ROOT))"
endif

perf-upstream: $(PRISTINE)/.stamp $(TEMPLATE)
	mkdir -p $(OUT_UP)
	$(MAKE) -C $(PRISTINE)/tools/perf O=$(abspath $(OUT_UP)) $(PERF_FLAGS) -j$(JOBS) \
		prefix=$(ROOT_UP) install-bin >$(OUT_UP).log 2>&1 || \
		{ tail -n 40 $(OUT_UP).log; echo "build of upstream perf failed: $(OUT_UP).log"; exit 1; }
	install -D -m 644 $(TEMPLATE) $(ROOT_UP)/$(TEMPLATE_DIR)/d3-flamegraph-base.html
	rm -f $(B)/bin/perf-upstream
	@echo "built $(ROOT_UP)/bin/perf"

# The flame graph template (npm package d3-flame-graph, checksum checked).
$(TEMPLATE):
	scripts/setup-flamegraph.sh $(B)/d3-flame-graph >/dev/null

# Ours, as perf installs itself: binary, exec path, man pages (asciidoc),
# tips, plus the flame graph template where flamegraph.py looks first.
# The objects that bake the prefix in are rebuilt (a few seconds).
install: tree $(TEMPLATE)
	$(PERF_MAKE) -C $(TREE)/tools/perf O=$(abspath $(OUT)) $(PERF_FLAGS) -j$(JOBS) \
		prefix=$(PREFIX) DESTDIR=$(DESTDIR) install >$(OUT)-install.log 2>&1 || \
		{ tail -n 40 $(OUT)-install.log; echo "make install failed: $(OUT)-install.log"; exit 1; }
	install -D -m 644 $(TEMPLATE) $(DESTDIR)$(PREFIX)/$(TEMPLATE_DIR)/d3-flamegraph-base.html
	@echo "installed $(DESTDIR)$(PREFIX)/bin/perf"

# libFuzzer targets: perf's libraries built with clang, coverage and
# ASan+UBSan in build/out-fuzz (only what the targets link), then each
# fuzz/<target>.c linked against them with libFuzzer's main.
FUZZ_CC		?= clang-14
FUZZ_OUT	:= $(B)/out-fuzz
FUZZ_SAN	:= -fsanitize=address,undefined
FUZZ_CFLAGS	:= -g -O1 -fno-omit-frame-pointer
FUZZ_PERF_FLAGS	:= CC=$(FUZZ_CC) CXX=clang++-14 NO_RUST=1 NO_LIBPYTHON=1 NO_LIBPERL=1 NO_LIBBPF=1 \
		   BUILD_BPF_SKEL=0 NO_LIBLLVM=1 NO_CAPSTONE=1 NO_JVMTI=1 NO_JEVENTS=1 \
		   NO_LIBTRACEEVENT=1 NO_LIBDW=1 NO_LIBUNWIND=1 NO_LIBNUMA=1 NO_LIBCAP=1 \
		   NO_LIBCRYPTO=1 NO_SLANG=1 NO_GTK2=1 NO_LIBAIO=1 NO_LIBDEBUGINFOD=1 \
		   WERROR=0 EXTRA_CFLAGS="$(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link,address,undefined" \
		   LDFLAGS="$(FUZZ_SAN)"
FUZZ_LIBS	:= libperf-util.a libperf-ui.a libpmu-events.a libperf/libperf.a libapi/libapi.a \
		   libsubcmd/libsubcmd.a libsymbol/libsymbol.a
FUZZ_EXTLIBS	:= -lpfm -lelf -lz -llzma -lzstd -lpthread -lrt -lm -ldl
FUZZ_INC	:= -I$(TREE)/tools/perf -I$(TREE)/tools/perf/util -I$(TREE)/tools \
		   -I$(TREE)/tools/include -I$(TREE)/tools/arch/x86/include \
		   -I$(TREE)/tools/include/uapi -I$(abspath $(FUZZ_OUT))/libperf/include \
		   -I$(TREE)/tools/lib/perf/include -I$(TREE)/tools/lib -D_GNU_SOURCE
# The targets see perf's headers with the same HAVE_* as the libraries.
FUZZ_HAVE	= $$(grep -o -- '-DHAVE_[A-Z0-9_]*' $(FUZZ_OUT)/util/.evsel.o.cmd | sort -u)
FUZZ_TARGETS	:= deferred-stream sframe-decode perf-data elf-symbols
# perf test's SFrame writer, which sframe-decode compiles in (it is not
# in libperf-util: perf test is its only other user).
FUZZ_SFRAME_BUILD := $(TREE)/tools/perf/tests/sframe-build.c

fuzz: tree
	mkdir -p $(FUZZ_OUT) $(B)/bin
	$(MAKE) -C $(TREE)/tools/perf -f Makefile.perf O=$(abspath $(FUZZ_OUT)) \
		$(FUZZ_PERF_FLAGS) -j$(JOBS) $(addprefix $(abspath $(FUZZ_OUT))/,$(FUZZ_LIBS)) \
		>$(FUZZ_OUT).log 2>&1 || \
		{ tail -n 40 $(FUZZ_OUT).log; echo "fuzz build failed: $(FUZZ_OUT).log"; exit 1; }
	for t in $(FUZZ_TARGETS); do \
		case $$t in sframe-decode) srcs=$(FUZZ_SFRAME_BUILD);; *) srcs=;; esac; \
		$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer,address,undefined $(FUZZ_INC) $(FUZZ_HAVE) fuzz/$$t.c \
			$$srcs -o $(B)/bin/fuzz-$$t -Wl,--start-group \
			$(addprefix $(FUZZ_OUT)/,$(FUZZ_LIBS)) -Wl,--end-group \
			$(FUZZ_EXTLIBS) || exit 1; \
		echo "built $(B)/bin/fuzz-$$t"; \
	done

# One target for FUZZ_TIME seconds on its corpus (a copy: the committed
# seeds stay small); crashes land in $(B)/fuzz/<target>/.
FUZZ_TARGET	?= deferred-stream
FUZZ_TIME	?= 60
fuzz-run: fuzz
	mkdir -p $(B)/fuzz/$(FUZZ_TARGET)/corpus
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:suppressions=$(CURDIR)/fuzz/ubsan.supp \
	ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1 \
	$(B)/bin/fuzz-$(FUZZ_TARGET) -max_total_time=$(FUZZ_TIME) -max_len=16384 \
		-artifact_prefix=$(B)/fuzz/$(FUZZ_TARGET)/ \
		$(B)/fuzz/$(FUZZ_TARGET)/corpus fuzz/corpus/$(FUZZ_TARGET)

# A Debian package of ours (packaging/debian), built from the same tree:
# perf-deferred, in place of Debian's linux-perf.
deb: tree $(TEMPLATE)
	scripts/make-deb.sh $(TREE) $(TEMPLATE) $(B)/deb

# The overlay as commits against pristine 7.2.13 (series/manifest says
# which commit carries each overlay item), written by git format-patch
# with a cover letter; checked to apply with git am and to end at exactly
# $(TREE), and run through checkpatch --strict (build/series/checkpatch.log).
series: tree
	scripts/series.py build $(PRISTINE) $(TREE) . $(B)/series

# Each commit of the series built on its own (WERROR=1, incremental, in
# build/series-obj) and its perf test suites run: build/series/builds.log.
series-check: series
	rm -f $(B)/series/builds.log
	scripts/series.py builds $(PRISTINE) $(B)/series

patches:
	scripts/overlay.py patches $(PRISTINE) $(TREE) .

patches-status:
	scripts/overlay.py status $(PRISTINE) $(TREE) .

refresh-patches: $(PRISTINE)/.stamp
	scripts/overlay.py refresh $(PRISTINE) $(TREE) .

reset:
	rm -f $(TREE)/.overlay-state
	$(MAKE) tree

checkpatch: $(PRISTINE)/.stamp
	tests/run-all.py style

check: all
	tests/run-all.py

demo: all
	scripts/demo.sh

clean:
	rm -rf $(OUT) $(OUT_UP) $(B)/out-ours-san $(B)/bin $(ROOT) $(ROOT_UP)

distclean:
	rm -rf $(B)
