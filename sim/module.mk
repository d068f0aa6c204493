# sim/ — targets of the simulation (included by the top-level Makefile).

.PHONY: bench-sim
## make bench-sim     writes docs/eval.md (sim/eval.sh: specgen sim --compare on the reference
##                    and the fitted workload, the published figures beside them, SVG plots in
##                    docs/eval/), then the scale checks (sim/eval.sh --scale), pinned to one
##                    core: 1,000 tasks on 64 GPUs over 24 virtual hours (goal 3 s), and
##                    10,000 tasks on 512 GPUs over 24 virtual hours (goal 60 s); each prints
##                    the virtual span, the pool's utilisation, wall and CPU seconds, peak RSS
##                    and a verdict line against its goal (OK or OVER)
bench-sim: $(SPECGEN_BIN)
	SPECGEN=$(CURDIR)/$(SPECGEN_BIN) sim/eval.sh docs/eval.md
	@echo
	@SPECGEN=$(CURDIR)/$(SPECGEN_BIN) sim/eval.sh --scale
