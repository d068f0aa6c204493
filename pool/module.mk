# pool/ — targets of the pool module (included by the top-level Makefile).

.PHONY: bench-pool gpu-check-pool
## make bench-pool    the elastic split against every static one on bursty simulated load
##                    (virtual time), then the same shape on real PoCL slots (docs/pools.md)
bench-pool: $(BUILD)/bench/bench_pool
	$(BUILD)/bench/bench_pool $(CURDIR)

## make gpu-check-pool  two slots on one GPU: the profile job alone on it while it times
gpu-check-pool: $(SPECGEN_BIN)
	SPECGEN=$(CURDIR)/$(SPECGEN_BIN) BUILD=$(CURDIR)/$(BUILD) pool/gpu-check.sh

.PHONY: bench-agent
## make bench-agent   what a remote slot (a `specgen pool` agent on loopback) adds to a job
##                    over a local slot, and the CPU each costs (docs/agent.md)
bench-agent: $(SPECGEN_BIN) $(BUILD)/bench/bench_agent
	$(BUILD)/bench/bench_agent $(CURDIR) $(CURDIR)/$(SPECGEN_BIN)
