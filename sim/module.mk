# sim/ — targets of the simulation (included by the top-level Makefile).

.PHONY: bench-sim
## make bench-sim     writes docs/eval.md (sim/eval.sh: specgen sim --compare on the reference
##                    and the fitted workload, the published figures beside them, SVG plots in
##                    docs/eval/), then the scale check: 1,000 tasks on 64 GPUs over about a
##                    virtual day, with its wall time (goal: under 30 s on one core)
bench-sim: $(SPECGEN_BIN)
	SPECGEN=$(CURDIR)/$(SPECGEN_BIN) sim/eval.sh docs/eval.md
	@echo; echo "== scale: 1000 tasks, 64 GPUs, 3 at a time, target out of reach: 1000 x e2e / 3 virtual seconds, over two virtual days with the defaults"
	@/usr/bin/time -f "wall %e s, CPU %U s user + %S s system on one core, %M KiB (goal: under 30 s; on a shared machine the CPU time is the figure)" ./$(SPECGEN_BIN) sim \
	  --tasks 1000 --gpus 64 --seeds 1 --llm-instances 2 --concurrency 3 --target 10
