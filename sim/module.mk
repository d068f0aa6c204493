# sim/ — targets of the simulation (included by the top-level Makefile).

.PHONY: bench-sim
## make bench-sim     writes docs/eval.md (sim/eval.sh: specgen sim --compare on the reference
##                    and the fitted workload, the published figures beside them, SVG plots in
##                    docs/eval/), then the scale check (sim/eval.sh --scale): 1,000 tasks on
##                    64 GPUs over 24 virtual hours with the pool busy, pinned to one core; it
##                    prints the virtual span, the pool's utilisation, wall and CPU seconds and
##                    OK or OVER against the goal (under 30 s)
bench-sim: $(SPECGEN_BIN)
	SPECGEN=$(CURDIR)/$(SPECGEN_BIN) sim/eval.sh docs/eval.md
	@echo
	@SPECGEN=$(CURDIR)/$(SPECGEN_BIN) sim/eval.sh --scale
