# profiler/: benchmarks and GPU checks beside the code.

## make bench-profile the profiler's own overhead per candidate and the runs it needed
##                    to reach a stable median, per builtin OpenCL task (PoCL here)
.PHONY: bench-profile gpu-check-profiler
bench-profile: $(BUILD)/bench/bench_profile
	$(BUILD)/bench/bench_profile suites/builtin

## make bench-racing  racing against full timing per builtin OpenCL task, each candidate
##                    timed both ways in 2 repetitions: device time saved (median, per
##                    repetition), runs, and whether both pick the same best kernel (issue 27)
.PHONY: bench-racing
bench-racing: $(BUILD)/bench/bench_racing
	$(BUILD)/bench/bench_racing suites/builtin

## make gpu-check-profiler  the profiler's GPU checks alone (profiler/gpu-check.sh)
gpu-check-profiler: $(SPECGEN_BIN) $(BUILD)/gpu/prof_streams
	SPECGEN=$(CURDIR)/$(SPECGEN_BIN) BUILD=$(CURDIR)/$(BUILD) profiler/gpu-check.sh

# `make gpu-check` (Makefile, scripts/run-gpu-checks.sh) runs profiler/gpu-check.sh too; it needs:
gpu-check: $(BUILD)/gpu/prof_streams
# and tests/integration/gpu_checks.sh runs that loop (every script skips without a GPU):
test-bins: $(BUILD)/gpu/prof_streams

# The second-stream fixture: CUPTI must count work a kernel's launcher put on another stream.
$(BUILD)/gpu/prof_streams: tests/gpu/prof_streams.c $(LIB)
	@mkdir -p $(dir $@)
	@$(if $(V),,echo "  GPU     $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(CPPFLAGS) $(LDFLAGS) -o $@ $< $(LIB) $(LDLIBS)
