# specgen — build, deps, tests, demo, benchmarks.
# `make` builds bin/specgen. See README.md and `make help`.

CC       ?= cc
CUDA_HOME ?= /usr/local/cuda
PREFIX   ?= /usr/local
BUILD    ?= build

WARN     := -Wall -Wextra -Werror -Wno-unused-parameter -Wno-unknown-warning-option -Wno-format-truncation
CSTD     := -std=c11 -D_GNU_SOURCE
CFLAGS   ?= -O2 -g
CPPFLAGS += -I. -MMD -MP
# CUDA headers only (types and prototypes); the libraries are dlopen'ed at run time.
ifneq ($(wildcard $(CUDA_HOME)/include/cuda.h),)
CPPFLAGS += -DSG_HAVE_CUDA_H=1 -isystem $(CUDA_HOME)/include
endif
LDLIBS   := -lcurl -ljansson -lsqlite3 -lmicrohttpd -lgnutls -lOpenCL -lpthread -ldl -lm

SAN      :=
ALL_CFLAGS = $(CSTD) $(WARN) $(CFLAGS) $(SAN)

# Every module folder contributes its .c files to libspecgen.a; main.c is the only
# file that is not in the library. Tests and benchmarks link the same library.
MODULES  := common llm replay specgen device validator profiler kvstore results pool sim orchestrator
LIB_SRC  := $(filter-out orchestrator/main.c,$(wildcard $(addsuffix /*.c,$(MODULES))))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/%.o)
LIB      := $(BUILD)/libspecgen.a

UNIT_SRC := $(wildcard tests/unit/test_*.c)
UNIT_BIN := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
# cmocka tests that start servers or worker processes are integration tests: their sources
# live in tests/integration/c/, tests/run.sh reports them as integration/test_NAME.
ITEST_SRC := $(wildcard tests/integration/c/test_*.c)
ITEST_BIN := $(ITEST_SRC:tests/integration/c/%.c=$(BUILD)/tests/integration/%)
BENCH_SRC := $(wildcard tests/bench/bench_*.c)
BENCH_BIN := $(BENCH_SRC:tests/bench/%.c=$(BUILD)/bench/%)
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)
FUZZ_BIN := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz/%)
FUZZ_REPLAY_BIN := $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz-replay/%)

.PHONY: all deps test test-asan unit demo bench format format-check install clean help fuzz fuzz-build fuzz-bins fuzz-run

# The binary: bin/specgen for the normal build, build-asan/bin/specgen for test-asan. (Not
# ./specgen: that is the folder of the speculation policy.)
SPECGEN_BIN ?= bin/specgen
all: $(SPECGEN_BIN)

$(SPECGEN_BIN): $(BUILD)/orchestrator/main.o $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  LINK    $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The commit the binary is built from (specgen_build_info, --version): only common/version.o
# sees it, rebuilt when it changes (the stamp file is rewritten only then).
SG_COMMIT := $(shell git rev-parse --short=12 HEAD 2>/dev/null)$(shell git diff --quiet HEAD 2>/dev/null || echo -dirty)
ifeq ($(SG_COMMIT),-dirty)
SG_COMMIT :=
endif
$(BUILD)/commit.stamp: FORCE
	@mkdir -p $(dir $@)
	@echo '$(SG_COMMIT)' | cmp -s - $@ || echo '$(SG_COMMIT)' > $@
$(BUILD)/common/version.o: CPPFLAGS += -DSG_COMMIT='"$(SG_COMMIT)"'
$(BUILD)/common/version.o: $(BUILD)/commit.stamp
.PHONY: FORCE
FORCE:

$(LIB): $(LIB_OBJ)
	@rm -f $@
	$(Q)ar rcs $@ $^

# V=1 shows the full compiler lines.
Q := $(if $(V),,@)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) $(CPPFLAGS) -c -o $@ $<

$(BUILD)/tests/%: tests/unit/%.c $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  TEST    $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(CPPFLAGS) -o $@ $< $(LIB) -lcmocka $(LDLIBS)

$(BUILD)/tests/integration/%: tests/integration/c/%.c $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  TEST    $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(CPPFLAGS) -o $@ $< $(LIB) -lcmocka $(LDLIBS)

$(BUILD)/bench/%: tests/bench/%.c $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  BENCH   $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(CPPFLAGS) -o $@ $(filter %.c,$^) $(LIB) $(LDLIBS)

help:
	@sed -n 's/^## //p' Makefile

## make               build bin/specgen
## make deps          install what the project needs (Debian packages, PyPI packages)
deps:
	scripts/deps.sh

## make test          build and run unit + integration tests; ends with "N passed, N failed"
##                    (TEST_JOBS files at a time, default 3; the slowest ten files after it)
##                    (the build part runs on every CPU: TEST_BUILD_JOBS, default nproc)
TEST_BUILD_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
test:
	$(MAKE) -j$(TEST_BUILD_JOBS) test-bins
	SPECGEN=$(CURDIR)/$(SPECGEN_BIN) BUILD=$(CURDIR)/$(BUILD) tests/run.sh
# what the tests run (module.mk files add theirs)
.PHONY: test-bins
test-bins: $(SPECGEN_BIN) $(UNIT_BIN) $(ITEST_BIN) $(FUZZ_REPLAY_BIN)

unit: $(UNIT_BIN)

## make test-asan     the same tests built with AddressSanitizer + UBSan (in build-asan/)
test-asan:
	ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 SPECGEN_ASAN=1 \
	$(MAKE) BUILD=build-asan SPECGEN_BIN=build-asan/bin/specgen \
	  CFLAGS="-O1 -g -fno-omit-frame-pointer" \
	  SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined" test

## make demo          run specgen optimize on the demo task (replay LLM, OpenCL on the CPU)
demo: $(SPECGEN_BIN)
	./$(SPECGEN_BIN) optimize suites/demo/vector_scale --out $(BUILD)/demo-out

## make bench         build and run every benchmark (bench-*) and print the measured ratios
##                    (`make test` builds none of them: figures belong here, not in tests)
bench: $(SPECGEN_BIN) $(BENCH_BIN)
	@for b in $(BENCH_BIN); do echo "== $$b"; $$b || exit 1; done

## make check-layers  every #include and symbol use points down the floors of docs/architecture.md
.PHONY: check-layers
check-layers: $(LIB)
	scripts/check-layers.sh $(CURDIR) $(BUILD)

## make check-fn-length  no C function over 100 lines (option tables exempt), no function-local
##                    static holding state (scripts/check-fn-length.sh; -a lists every length)
.PHONY: check-fn-length
check-fn-length:
	scripts/check-fn-length.sh $(CURDIR)

## make format        reformat sources with clang-format (.clang-format)
FMT_SRC = $(shell git ls-files '*.c' '*.h' 2>/dev/null)
format:
	clang-format -i $(FMT_SRC)

## make format-check  fail if any source is not clang-format clean
format-check:
	@clang-format --dry-run --Werror $(FMT_SRC) && echo "format-check: clean"

## make install       install specgen, prompts, suites, docs and torchref under PREFIX
install: $(SPECGEN_BIN)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/specgen
	install -m 755 $(SPECGEN_BIN) $(DESTDIR)$(PREFIX)/bin/specgen
	cp -r prompts suites docs torchref $(DESTDIR)$(PREFIX)/share/specgen/

## make fuzz         build every libFuzzer target (tests/fuzz/fuzz_*.c: RESP, SSE, kernel extraction,
##                    task.json + launch plans + size expressions, validator source checks, replay
##                    traces, the pool agent's requests) with clang + ASan/UBSan into build-fuzz/, then run each for FUZZ_SECONDS
##                    (default 20) from its seeds (tests/fuzz/corpus/NAME/); stops at the first finding
## make fuzz-build    only build them
## make fuzz-replay   (part of make test) the same targets built with $(CC) and a plain main
##                    (tests/fuzz/replay_main.c) into build/fuzz-replay/: each replays every seed and
##                    regression of its corpus once (tests/integration/fuzz.sh), in seconds
FUZZ_SECONDS ?= 20
.PHONY: fuzz-replay
fuzz-replay: $(FUZZ_REPLAY_BIN)
$(BUILD)/fuzz-replay/%: tests/fuzz/%.c tests/fuzz/replay_main.c $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  FUZZ    $@ (replay)")
	$(Q)$(CC) $(ALL_CFLAGS) $(CPPFLAGS) -o $@ $< tests/fuzz/replay_main.c $(LIB) $(LDLIBS)
fuzz-build:
	$(MAKE) BUILD=build-fuzz CC=clang CFLAGS="-O1 -g" \
	  SAN="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined" fuzz-bins
fuzz-bins: $(FUZZ_BIN)
$(BUILD)/fuzz/%: tests/fuzz/%.c $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  FUZZ    $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(CPPFLAGS) -fsanitize=fuzzer -o $@ $< $(LIB) $(LDLIBS)
fuzz fuzz-run: fuzz-build
	@for f in $(FUZZ_SRC:tests/fuzz/%.c=build-fuzz/fuzz/%); do \
	  n=$$(basename $$f); mkdir -p build-fuzz/corpus/$$n; \
	  seeds=; [ -d tests/fuzz/corpus/$$n ] && seeds=tests/fuzz/corpus/$$n; \
	  echo "== $$n ($(FUZZ_SECONDS)s)"; \
	  $$f -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 -artifact_prefix=build-fuzz/$$n- \
	    build-fuzz/corpus/$$n $$seeds >build-fuzz/$$n.log 2>&1; rc=$$?; tail -n 3 build-fuzz/$$n.log; \
	  [ $$rc -eq 0 ] || { grep -m1 -A8 'ERROR\|runtime error' build-fuzz/$$n.log; echo "$$n failed (log: build-fuzz/$$n.log)"; exit 1; }; \
	done

## make gpu-check     on a machine with an NVIDIA GPU: every */gpu-check.sh (validator: CUDA suite +
##                    hostile set; profiler: CUPTI timing, second stream, metrics; kvstore: cuda
##                    backend; torchref: KernelBench problems with torch on CUDA, CUDA
##                    candidates, the ModelNew export run by torch), then one line per script:
##                    pass, FAIL or skip (77 = no GPU, or no torch with CUDA);
##                    "nothing was checked" and exit 2 when none passed (scripts/run-gpu-checks.sh)
.PHONY: gpu-check gpu-bundle
gpu-check: $(SPECGEN_BIN)
	SPECGEN=$(CURDIR)/$(SPECGEN_BIN) BUILD=$(CURDIR)/$(BUILD) scripts/run-gpu-checks.sh

## make gpu-bundle    for the lent device machine (offline, bare: no -dev libs, no make): build
##                    specgen and the GPU fixtures into build/gpu-bundle with a run path into
##                    .gpu/lib, and stage them with every non-glibc library they need, and
##                    redis-server/redis-benchmark, into .gpu/ (ignored). Carry ".gpu" and run
##                    `bash scripts/gpu-check-device.sh` there (docs/gpu-checks.md)
# DT_RPATH (not RUNPATH) so that the libraries' own needs resolve into .gpu/lib too;
# .gpu/specgen uses $ORIGIN/lib, .gpu/build/gpu/prof_streams $ORIGIN/../../lib.
GPU_RPATH := -Wl,--disable-new-dtags,-rpath,'$$ORIGIN/lib:$$ORIGIN/../../lib'
gpu-bundle:
	$(MAKE) BUILD=$(BUILD)/gpu-bundle SPECGEN_BIN=$(BUILD)/gpu-bundle/bin/specgen \
	  LDFLAGS='$$(GPU_RPATH)' $(BUILD)/gpu-bundle/bin/specgen $(BUILD)/gpu-bundle/gpu/prof_streams
	scripts/gpu-bundle.sh $(BUILD)/gpu-bundle .gpu

## make clean         remove build outputs (and the .gpu/ bundle)
clean:
	rm -rf build build-asan build-fuzz bin .gpu

# Module-specific targets (bench-kv, gpu-check, fuzz, ...) live beside their code.
-include $(wildcard */module.mk)
-include $(LIB_OBJ:.o=.d) $(BUILD)/orchestrator/main.d

## make bench-loop    100k timers on the virtual and the real loop
.PHONY: bench-loop
bench-loop: $(BUILD)/bench/bench_loop
	$(BUILD)/bench/bench_loop
