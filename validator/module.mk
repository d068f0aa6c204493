# validator/module.mk — validator targets (included by the top Makefile).

.PHONY: bench-validate

## make bench-validate  NVRTC vs nvcc compile latency, cache-hit cost, worker round trip, PoCL validation per task
bench-validate: $(SPECGEN_BIN) $(BUILD)/bench/bench_validate
	$(BUILD)/bench/bench_validate $(BENCH_ARCH)

## make bench-task-host  the host's share of validating each builtin task at its GPU sizes
##                    (input generation, output comparison; no device needed)
.PHONY: bench-task-host
bench-task-host: $(BUILD)/bench/bench_task_host
	$(BUILD)/bench/bench_task_host $(patsubst %/task.json,%,$(wildcard suites/builtin/*/task.json))
