# validator/module.mk — validator targets (included by the top Makefile).

.PHONY: bench-validate

## make bench-validate  NVRTC vs nvcc compile latency, cache-hit cost, worker round trip, PoCL validation per task
bench-validate: $(SPECGEN_BIN) $(BUILD)/bench/bench_validate
	$(BUILD)/bench/bench_validate $(BENCH_ARCH)
