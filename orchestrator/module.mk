# orchestrator/module.mk — targets of the orchestrator module (included by the Makefile).

.PHONY: bench-llm
## make bench-llm     256 streams x 100 tokens/s from replay-llm: CPU per SSE event beside a floor reader, latency, trigger->fork
bench-llm: $(SPECGEN_BIN) $(BUILD)/bench/bench_llm
	$(BUILD)/bench/bench_llm $(CURDIR)/$(SPECGEN_BIN)
# bench-llm's floor reader (tests/bench/llm_floor.h) is linked into it
$(BUILD)/bench/bench_llm: tests/bench/llm_floor.c tests/bench/llm_floor.h

.PHONY: docs-options
## make docs-options  regenerate docs/options.md (every command's options) from the option tables
docs-options: $(SPECGEN_BIN)
	$(SPECGEN_BIN) options > docs/options.md

.PHONY: bench-retokenize
## make bench-retokenize  re-tokenising generated text against the ids that made it (SmolLM2's
##                    tokenizer via llama-cpp-python): how often it differs, the prefix lost
bench-retokenize:
	scripts/retokenize.sh
