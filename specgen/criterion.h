/* criterion.h — when an iteration ends early and when a task is done.
 *
 * Contract: pure functions of numbers the caller passes in (no clock, no I/O).
 *   - An iteration stops early when a correct candidate reaches the task target, or
 *     beats the best speedup known at the iteration's start by at least
 *     max(delta, noise) — a gain inside the measurement's noise band is "no change".
 *   - A task is done at its target, or when a budget (wall time, tokens, iterations) is
 *     spent; the decision names which. A budget of 0 means "no limit". */
#ifndef SG_CRITERION_H
#define SG_CRITERION_H

#include <stdint.h>

typedef struct sg_criterion {
    double target_speedup; /* e.g. 2.0 */
    double delta;          /* minimum relative gain to end an iteration (0.05) */
    int early_stop;        /* 0: never end an iteration early (ablation) */
    int64_t budget_ns;
    uint64_t budget_tokens;
    int max_iterations;
} sg_criterion;

typedef enum {
    SG_CRIT_CONTINUE = 0,
    SG_CRIT_END_ITERATION, /* good enough for this iteration: stop the reasoning */
    SG_CRIT_TARGET,        /* the task's target is met */
    SG_CRIT_BUDGET_TIME,
    SG_CRIT_BUDGET_TOKENS,
    SG_CRIT_BUDGET_ITERATIONS,
} sg_crit;

const char *sg_crit_name(sg_crit c);

void sg_criterion_default(sg_criterion *c);

/* A validated and profiled candidate: correct, its speedup over the baseline, and the
 * relative half-width of its noise band (0.03 = ±3%). best_at_start: the best speedup
 * known when the iteration began (1.0 = the baseline). */
sg_crit sg_criterion_on_candidate(const sg_criterion *c, double best_at_start, int correct,
                                  double speedup, double noise);

/* Budgets, checked whenever time or tokens advance and between iterations. */
sg_crit sg_criterion_on_budget(const sg_criterion *c, int64_t elapsed_ns, uint64_t tokens,
                               int iterations_done);

#endif
