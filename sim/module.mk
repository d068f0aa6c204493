# sim/ — targets of the simulation (included by the top-level Makefile).

.PHONY: bench-sim
## make bench-sim     specgen sim --compare on the reference workload (seeds 1-5), then the scale
##                    check: 1,000 tasks on 64 GPUs over about a virtual day, with its wall time
bench-sim: $(SPECGEN_BIN)
	./$(SPECGEN_BIN) sim --compare --seeds 1-5 --tasks 50
	@echo; echo "== scale: 1000 tasks, 64 GPUs, 3 at a time, target out of reach (about 26 virtual hours)"
	@/usr/bin/time -f "wall %e s, %M KiB" ./$(SPECGEN_BIN) sim --tasks 1000 --gpus 64 --seeds 1 \
	  --llm-instances 2 --concurrency 3 --target 10
