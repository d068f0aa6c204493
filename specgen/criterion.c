#include "specgen/criterion.h"

#include "common/opts.h"

static const char *const names[] = {"continue",    "end_iteration", "target",
                                    "budget_time", "budget_tokens", "budget_iterations"};

const char *sg_crit_name(sg_crit c) {
    return (unsigned)c < sizeof names / sizeof names[0] ? names[c] : "unknown";
}

void sg_criterion_default(sg_criterion *c) {
    c->target_speedup = SG_TARGET_DEFAULT; /* common/opts.h: --target's default */
    c->delta = 0.05;
    c->early_stop = 1;
    c->budget_ns = 30LL * 60 * 1000000000LL;
    c->budget_tokens = 500000;
    c->max_iterations = 10;
}

sg_crit sg_criterion_on_candidate(const sg_criterion *c, double best_at_start, int correct,
                                  double speedup, double noise) {
    if (!correct || !(speedup > 0)) return SG_CRIT_CONTINUE;
    /* The target is met at the measured median; the noise band decides only whether a
     * gain over the best so far is real. */
    if (c->target_speedup > 0 && speedup >= c->target_speedup) return SG_CRIT_TARGET;
    if (!c->early_stop) return SG_CRIT_CONTINUE;
    double need = c->delta > noise ? c->delta : noise;
    if (best_at_start > 0 && speedup >= best_at_start * (1.0 + need)) return SG_CRIT_END_ITERATION;
    return SG_CRIT_CONTINUE;
}

sg_crit sg_criterion_on_budget(const sg_criterion *c, int64_t elapsed_ns, uint64_t tokens,
                               int iterations_done) {
    if (c->budget_ns > 0 && elapsed_ns >= c->budget_ns) return SG_CRIT_BUDGET_TIME;
    if (c->budget_tokens > 0 && tokens >= c->budget_tokens) return SG_CRIT_BUDGET_TOKENS;
    if (c->max_iterations > 0 && iterations_done >= c->max_iterations)
        return SG_CRIT_BUDGET_ITERATIONS;
    return SG_CRIT_CONTINUE;
}
