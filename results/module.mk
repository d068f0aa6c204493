# results/ — targets of the results module (included by the top-level Makefile).

.PHONY: bench-results
## make bench-results  1M candidates through the recorder (insert rate), then the time of
##                     `specgen results best` and `results tasks` on them (docs/results.md)
bench-results: $(BUILD)/bench/bench_results
	$(BUILD)/bench/bench_results $(BENCH_RESULTS_CANDIDATES)
