# validator/module.mk — validator targets (included by the top Makefile).

.PHONY: bench-validate gpu-check

## make bench-validate  NVRTC vs nvcc compile latency, cache-hit cost, worker round trip, PoCL validation per task
bench-validate: $(SPECGEN_BIN) $(BUILD)/bench/bench_validate
	$(BUILD)/bench/bench_validate $(BENCH_ARCH)

## make gpu-check     on an NVIDIA GPU machine: run every */gpu-check.sh (validator: CUDA suite + hostile set)
gpu-check: $(SPECGEN_BIN)
	@rc=0; for s in $$(ls */gpu-check.sh 2>/dev/null | sort); do \
	  echo "==== $$s"; SPECGEN=$(CURDIR)/$(SPECGEN_BIN) bash $$s || rc=1; \
	done; exit $$rc
