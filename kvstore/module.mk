# kvstore targets (included by the top-level Makefile).

## make bench-kv      kvstore vs redis-server side by side (redis-benchmark), with ratios
.PHONY: bench-kv gpu-check-kvstore
bench-kv: $(SPECGEN_BIN)
	kvstore/bench-kv.sh ./$(SPECGEN_BIN)

## make gpu-check-kvstore  the cuda backend on a real GPU (1 GiB bit-exact, copy rates)
gpu-check-kvstore: $(SPECGEN_BIN)
	kvstore/gpu-check.sh ./$(SPECGEN_BIN)
