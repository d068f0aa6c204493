/* sim_admit.c — `specgen sim --admission-study`: campaign throughput (tasks meeting their
 * target per hour) of starting every task at once, of auto admission, and of a sweep of fixed
 * admission limits, on the same seeds (sim_run.h). */
#include "orchestrator/sim_run.h"

#include "common/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SEEDS 64

typedef struct study_row {
    char name[32];
    double tph[MAX_SEEDS]; /* per seed */
    double mean, min, max;
    double limit, preemptions, e2e, span;
    int limit_max;
} study_row;

/* One configuration on every seed. */
static int study_run(const sg_sim_config *c, const sg_run_prompts *p, uint64_t from, uint64_t to,
                     study_row *r, sg_err *err) {
    int n = 0;
    for (uint64_t seed = from; seed <= to; seed++, n++) {
        sg_sim_metrics m;
        if (sg_sim_run(c, p, seed, &m, NULL, err) < 0) return -1;
        double tph = m.virtual_s > 0 ? m.reached / m.virtual_s * 3600 : 0;
        r->tph[n] = tph;
        r->mean += tph;
        if (!n || tph < r->min) r->min = tph;
        if (!n || tph > r->max) r->max = tph;
        r->limit += c->admission ? m.admit_mean : m.tasks;
        if (m.admit_max > r->limit_max) r->limit_max = m.admit_max;
        r->preemptions += m.preemptions;
        r->e2e += m.e2e_s;
        r->span += m.virtual_s;
    }
    r->mean /= n;
    r->limit /= n;
    r->preemptions /= n;
    r->e2e /= n;
    r->span /= n;
    return 0;
}

static void print_row(const study_row *r, int md) {
    if (md)
        printf("| %s | %.1f (%.1f–%.1f) | %.1f | %.0f | %.0f | %.0f |\n", r->name, r->mean, r->min,
               r->max, r->limit, r->preemptions, r->span, r->e2e);
    else
        printf("%-14s %8.1f (%6.1f-%6.1f) %8.1f %10.0f %9.0f %8.1f\n", r->name, r->mean, r->min,
               r->max, r->limit, r->preemptions, r->span, r->e2e);
}

int sg_sim_admission_study(const sg_sim_config *base, const sg_run_prompts *p, uint64_t from,
                           uint64_t to, int md, sg_err *err) {
    static const int fixed[] = {8, 12, 16, 20, 24, 28, 32, 36, 40, 48, 64};
    enum { NF = sizeof fixed / sizeof *fixed };
    if (to - from + 1 > MAX_SEEDS)
        return sg_errf(err, "--admission-study: at most %d seeds", MAX_SEEDS);
    study_row *rows = sg_xcalloc(NF + 2, sizeof *rows);
    int rc = 0;
    if (md)
        printf("| admission | tasks to target per hour (min–max over seeds) | mean limit | "
               "preemptions | campaign s | e2e s per task |\n|---|---|---|---|---|---|\n");
    else
        printf("%-14s %8s %15s %8s %10s %9s %8s\n", "admission", "tasks/h", "(min-max)", "limit",
               "preempted", "span s", "e2e s");
    for (int i = 0; i < NF + 2 && rc == 0; i++) {
        sg_sim_config c = *base;
        c.events = NULL;
        c.db = NULL;
        c.concurrency = 0;
        c.admission = i > 0;
        if (i == 0) snprintf(rows[i].name, sizeof rows[i].name, "all at once");
        if (i == 1) {
            c.admit.fixed = 0;
            snprintf(rows[i].name, sizeof rows[i].name, "auto");
        }
        if (i >= 2) {
            c.admit.fixed = fixed[i - 2];
            snprintf(rows[i].name, sizeof rows[i].name, "fixed:%d", fixed[i - 2]);
        }
        rc = study_run(&c, p, from, to, &rows[i], err);
        if (rc == 0) print_row(&rows[i], md);
    }
    if (rc == 0) {
        int best = 2;
        for (int i = 3; i < NF + 2; i++)
            if (rows[i].mean > rows[best].mean) best = i;
        double vs_all = rows[1].mean / rows[0].mean, vs_best = rows[1].mean / rows[best].mean;
        printf("%s\nauto: %.2fx the throughput of all at once (goal >= 1.30x), %.3fx the best "
               "fixed limit, %s (goal >= 0.95x): %s\n",
               md ? "" : "", vs_all, vs_best, rows[best].name,
               vs_all >= 1.3 && vs_best >= 0.95 ? "goal met" : "goal NOT met");
    }
    free(rows);
    return rc;
}
