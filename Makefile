# SPDX-License-Identifier: GPL-2.0
#
# Build perf 7.2.13 with this project's overlay, and pristine upstream perf
# beside it for side-by-side comparisons.
#
#   make setup     install build dependencies, then make all
#   make           build/bin/perf (ours) and build/bin/perf-upstream
#   make check     every test: see tests/README.md
#   make demo      record a workload with --call-graph fp,defer, show the report
#   make patches   write edits made in build/ours back to the overlay
#   make SAN=1     ours with ASan+UBSan, in build/out-ours-san
#
# LINUX_SRC=<linux 7.2 tree> uses that tree instead of Debian's
# linux-source-7.2 package.

B		?= build
PRISTINE	:= $(B)/pristine
TREE		:= $(B)/ours
JOBS		?= $(shell nproc)
SAN		?=

PERF_FLAGS	:= PYTHON=/usr/bin/python3 NO_RUST=1 WERROR=1
ifeq ($(SAN),1)
OUT		:= $(B)/out-ours-san
PERF_FLAGS	+= EXTRA_CFLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined" \
		   LDFLAGS="-fsanitize=address,undefined" NO_LIBPYTHON=1 NO_LIBPERL=1
PERF_BIN	:= $(B)/bin/perf-san
else
OUT		:= $(B)/out-ours
PERF_BIN	:= $(B)/bin/perf
endif
OUT_UP		:= $(B)/out-upstream

OVERLAY_FILES	:= $(shell find tools -type f 2>/dev/null)

.PHONY: all setup deps sources tree perf perf-upstream check demo patches \
	patches-status refresh-patches reset clean distclean checkpatch

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

perf: tree
	mkdir -p $(OUT) $(B)/bin
	$(MAKE) -C $(TREE)/tools/perf O=$(abspath $(OUT)) $(PERF_FLAGS) -j$(JOBS) >$(OUT).log 2>&1 || \
		{ tail -n 40 $(OUT).log; echo "build of our perf failed: $(OUT).log"; exit 1; }
	ln -sfn $(abspath $(OUT))/perf $(PERF_BIN)
	@echo "built $(PERF_BIN)"

perf-upstream: $(PRISTINE)/.stamp
	mkdir -p $(OUT_UP) $(B)/bin
	$(MAKE) -C $(PRISTINE)/tools/perf O=$(abspath $(OUT_UP)) $(PERF_FLAGS) -j$(JOBS) >$(OUT_UP).log 2>&1 || \
		{ tail -n 40 $(OUT_UP).log; echo "build of upstream perf failed: $(OUT_UP).log"; exit 1; }
	ln -sfn $(abspath $(OUT_UP))/perf $(B)/bin/perf-upstream
	@echo "built $(B)/bin/perf-upstream"

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
	rm -rf $(OUT) $(OUT_UP) $(B)/out-ours-san $(B)/bin

distclean:
	rm -rf $(B)
