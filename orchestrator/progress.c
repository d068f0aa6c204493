/* The ETA from the budgets (progress.h). */
#include "orchestrator/progress.h"

static int64_t earliest(int64_t a, int64_t b) {
    if (a < 0) return b;
    if (b < 0) return a;
    return a < b ? a : b;
}

/* A campaign's queue: the running tasks finish, then the rest `concurrency` at a time. */
static int64_t queue_eta(const sg_progress *p) {
    if (p->left + p->running <= 0 || p->concurrency <= 0) return -1;
    int64_t per = p->ended > 0 ? p->ended_task_ns / p->ended : p->task_budget_ns;
    if (per <= 0) return -1;
    /* the running ones: what remains of a mean task; past it, half a mean task more (they
     * are still running, so not 0), never past their own budget */
    int64_t now = per - p->running_elapsed_max;
    if (now <= 0) now = per / 2;
    if (p->task_budget_ns > 0 && p->task_budget_ns - p->running_elapsed_max < now)
        now = p->task_budget_ns > p->running_elapsed_max
                  ? p->task_budget_ns - p->running_elapsed_max
                  : 0;
    int64_t waves = (p->left + p->concurrency - 1) / p->concurrency;
    return (p->running ? now : 0) + waves * per;
}

int64_t sg_progress_eta(const sg_progress *p) {
    int64_t eta = -1;
    if (p->budget_ns > 0) eta = p->budget_ns > p->elapsed_ns ? p->budget_ns - p->elapsed_ns : 0;
    if (p->budget_tokens > 0 && p->tokens > 0 && p->elapsed_ns > 0) {
        uint64_t rest = p->budget_tokens > p->tokens ? p->budget_tokens - p->tokens : 0;
        double ns = (double)rest * (double)p->elapsed_ns / (double)p->tokens;
        eta = earliest(eta, ns > 9e18 ? -1 : (int64_t)ns);
    }
    return earliest(eta, queue_eta(p));
}
