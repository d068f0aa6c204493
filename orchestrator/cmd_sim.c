/* `specgen sim`: policies compared in virtual time, on the real policy code (sim_run.h). */
#include "common/buf.h"
#include "common/cli.h"
#include "orchestrator/commands.h"
#include "orchestrator/sim_run.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char details[] =
    "Runs --tasks tasks at once through the real task loop, trigger policy, early-stop\n"
    "criterion, device port and pool scheduler, with modelled parts behind the same ports:\n"
    "an LLM serving model (--llm-instances, decode rate falling with the batch, prefill, a\n"
    "prefix cache) whose reasoning holds code blocks and cues where a real model writes them,\n"
    "and --gpus simulated GPUs whose verdicts and speedups follow the quality of each kernel\n"
    "(better the more reasoning came before it). The workload file (sim/workloads/, every\n"
    "value with its source or marked as an assumption; docs/eval.md) sets the parameters.\n"
    "\n"
    "Prints, per configuration, the mean over --seeds of: end-to-end time per task (to the\n"
    "target, or to its end when it did not reach it), time to the first correct kernel,\n"
    "timings fed back (profiling feedback), pool utilisation (all the time, and while work\n"
    "waited), tokens, mean best speedup, tasks that met the target. The same seeds give the\n"
    "same output, byte for byte; wall-clock times go to stderr only.\n"
    "\n"
    "--compare runs specgen and three baselines on the same seeds: sequential (one reasoning,\n"
    "its final kernel), parallel:4 (four independent reasoning streams), probe:K (a fork every\n"
    "K tokens, no trigger rules, static pools, no priorities); then ablations of specgen:\n"
    "static pools, no priorities, no prefix cache (no kvstore), no early stop, no forks.\n"
    "\n"
    "Examples:\n"
    "  specgen sim\n"
    "  specgen sim --compare --seeds 1-5\n"
    "  specgen sim --policy probe:1000 --gpus 16 --tasks 100\n";

/* "3" or "1-20". */
static int parse_seeds(const char *s, uint64_t *from, uint64_t *to) {
    char *end;
    unsigned long long a = strtoull(s, &end, 10), b = a;
    if (end == s) return -1;
    if (*end == '-') {
        char *e2;
        b = strtoull(end + 1, &e2, 10);
        if (e2 == end + 1 || *e2) return -1;
    } else if (*end) {
        return -1;
    }
    if (b < a || b - a > 1000) return -1;
    *from = a;
    *to = b;
    return 0;
}

/* "specgen", "sequential", "parallel:N", "probe:K". */
static int apply_policy(const char *s, sg_sim_config *c, sg_err *err) {
    unsigned long long k;
    int used = 0;
    if (sscanf(s, "probe:%llu%n", &k, &used) == 1 && !s[used] && k > 0) {
        c->policy = (sg_policy){SG_POLICY_SPECGEN, 1, 1};
        c->probe_tokens = k;
        return 0;
    }
    return sg_policy_parse(s, &c->policy, err);
}

typedef struct row {
    char name[64];
    sg_sim_metrics mean;
    double e2e_min, e2e_max, fb_min, fb_max;
} row;

static int run_seeds(const sg_sim_config *c, const sg_run_prompts *p, uint64_t from, uint64_t to,
                     row *r, sg_err *err) {
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", c->name);
    int n = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0); /* wall time: stderr only */
    for (uint64_t seed = from; seed <= to; seed++, n++) {
        sg_sim_metrics m;
        sg_sim_config one = *c;
        if (seed != from) one.events = NULL;
        if (sg_sim_run(&one, p, seed, &m, err) < 0) return -1;
        sg_sim_metrics *a = &r->mean;
        a->tasks += m.tasks;
        a->reached += m.reached;
        a->e2e_s += m.e2e_s;
        a->first_correct_s += m.first_correct_s;
        a->feedback += m.feedback;
        a->util += m.util;
        a->util_queued += m.util_queued;
        a->tokens += m.tokens;
        a->best += m.best;
        a->virtual_s += m.virtual_s;
        a->prefill_saved += m.prefill_saved;
        if (!n || m.e2e_s < r->e2e_min) r->e2e_min = m.e2e_s;
        if (!n || m.e2e_s > r->e2e_max) r->e2e_max = m.e2e_s;
        if (!n || m.feedback < r->fb_min) r->fb_min = m.feedback;
        if (!n || m.feedback > r->fb_max) r->fb_max = m.feedback;
    }
    sg_sim_metrics *a = &r->mean;
    a->e2e_s /= n;
    a->first_correct_s /= n;
    a->feedback /= n;
    a->util /= n;
    a->util_queued /= n;
    a->tokens /= n;
    a->best /= n;
    a->virtual_s /= n;
    a->prefill_saved /= n;
    clock_gettime(CLOCK_MONOTONIC, &t1);
    fprintf(stderr, "sim: %-22s %d seed%s in %.2f s of wall time (%.0f virtual s each)\n", c->name,
            n, n == 1 ? "" : "s",
            (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
            a->virtual_s);
    return 0;
}

static void header(void) {
    printf("%-22s %9s %15s %9s %9s %16s %7s %7s %10s %6s %8s\n", "configuration", "e2e s",
           "(min-max)", "first s", "feedback", "(min-max)", "util", "util/q", "tokens", "best",
           "reached");
}

static void print_row(const row *r) {
    const sg_sim_metrics *m = &r->mean;
    char span[32], fspan[32];
    snprintf(span, sizeof span, "(%.0f-%.0f)", r->e2e_min, r->e2e_max);
    snprintf(fspan, sizeof fspan, "(%.0f-%.0f)", r->fb_min, r->fb_max);
    printf("%-22s %9.1f %15s %9.1f %9.1f %16s %6.1f%% %6.1f%% %10.0f %6.2f %7.1f%%\n", r->name,
           m->e2e_s, span, m->first_correct_s, m->feedback, fspan, 100 * m->util,
           100 * m->util_queued, m->tokens, m->best, m->tasks ? 100.0 * m->reached / m->tasks : 0);
}

static int by_e2e(const void *a, const void *b) {
    const row *x = a, *y = b;
    if (x->mean.e2e_s != y->mean.e2e_s) return x->mean.e2e_s < y->mean.e2e_s ? -1 : 1;
    if (x->mean.feedback != y->mean.feedback) return x->mean.feedback > y->mean.feedback ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Every combination of the knobs on the same seeds; the ten best by end-to-end time, and
 * where the defaults stand. */
static int run_sweep(const sg_sim_config *base, const sg_run_prompts *p, uint64_t from, uint64_t to,
                     sg_err *err) {
    static const uint64_t spacing[] = {75, 150, 300, 600};
    static const int in_flight[] = {1, 2, 4, 8};
    static const double delta[] = {0.05, 0.15, 0.3, 0}; /* 0 here: no early stop */
    static const double hyst[] = {0.1, 0.2, 0.4};
    int n = 4 * 4 * 4 * 3, k = 0, def = -1;
    row *rows = sg_xcalloc((size_t)n, sizeof *rows);
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++)
            for (int d = 0; d < 4; d++)
                for (int h = 0; h < 3; h++, k++) {
                    sg_sim_config c = *base;
                    c.events = NULL;
                    c.spacing_tokens = spacing[a];
                    c.in_flight = in_flight[b];
                    c.delta = delta[d];
                    c.early_stop = delta[d] > 0;
                    c.pools.hysteresis = hyst[h];
                    if (delta[d] > 0)
                        snprintf(c.name, sizeof c.name, "s%llu f%d d%.2f h%.1f",
                                 (unsigned long long)spacing[a], in_flight[b], delta[d], hyst[h]);
                    else
                        snprintf(c.name, sizeof c.name, "s%llu f%d no-stop h%.1f",
                                 (unsigned long long)spacing[a], in_flight[b], hyst[h]);
                    if (spacing[a] == 150 && in_flight[b] == 4 && delta[d] == 0.05 &&
                        hyst[h] == 0.2)
                        def = k;
                    if (run_seeds(&c, p, from, to, &rows[k], err) < 0) {
                        free(rows);
                        return -1;
                    }
                }
    row dflt = rows[def];
    qsort(rows, (size_t)n, sizeof *rows, by_e2e);
    int rank = 0;
    for (int i = 0; i < n; i++)
        if (!strcmp(rows[i].name, dflt.name)) rank = i + 1;
    printf("(s: trigger spacing in tokens, f: forks in flight, d: early-stop margin, h: pool "
           "hysteresis)\n");
    for (int i = 0; i < 10 && i < n; i++) print_row(&rows[i]);
    printf("...\n");
    print_row(&dflt);
    printf("\nthe defaults (%s) rank %d of %d by end-to-end time; the best is %.2fx faster\n",
           dflt.name, rank, n, dflt.mean.e2e_s / rows[0].mean.e2e_s);
    free(rows);
    return 0;
}

int sg_cmd_sim(int argc, char **argv) {
    sg_sim_config c;
    sg_sim_config_default(&c);
    const char *workload = NULL, *policy = "specgen", *seeds = "1-3", *pools = "elastic",
               *events = NULL;
    int64_t gpus = c.gpus, slots = c.slots_per_gpu, instances = 0, tasks = c.tasks,
            iterations = c.iterations, concurrency = 0;
    int compare = 0, sweep = 0, no_prio = 0, no_kv = 0, no_early = 0, no_fork = 0;
    const sg_opt opts[] = {
        {"workload", SG_OPT_STR, &workload, "FILE", "workload file (sim/workloads/)",
         "the reference workload", NULL, 0},
        {"policy", SG_OPT_STR, &policy, "P", "specgen|sequential|parallel:N|probe:K", "specgen",
         NULL, 0},
        {"seeds", SG_OPT_STR, &seeds, "A-B", "seeds to run (the mean is shown)", "1-3", NULL, 0},
        {"gpus", SG_OPT_INT, &gpus, "N", "GPUs in the validation/profiling pool", "8", NULL, 0},
        {"slots-per-gpu", SG_OPT_INT, &slots, "N", "slots on each GPU", "1", NULL, 0},
        {"llm-instances", SG_OPT_INT, &instances, "N", "LLM serving instances", "the workload's",
         NULL, 0},
        {"tasks", SG_OPT_INT, &tasks, "N", "tasks to run", "50", NULL, 0},
        {"concurrency", SG_OPT_INT, &concurrency, "N",
         "tasks at once (the next starts when one ends)", "all", NULL, 0},
        {"target", SG_OPT_DOUBLE, &c.target, "X", "target speedup", "the workload's", NULL, 0},
        {"iterations", SG_OPT_INT, &iterations, "N", "most iterations per task", "5", NULL, 0},
        {"budget-time", SG_OPT_DURATION, &c.budget_ns, "T", "each task's time", "2h", NULL, 0},
        {"budget-tokens", SG_OPT_COUNT, &c.budget_tokens, "N", "each task's tokens", "500k", NULL,
         0},
        {"pools", SG_OPT_STR, &pools, "MODE", "elastic or static:V/P", "elastic", NULL, 0},
        {"no-priorities", SG_OPT_FLAG, &no_prio, NULL, "jobs in arrival order", NULL, NULL, 0},
        {"no-kvstore", SG_OPT_FLAG, &no_kv, NULL, "no prefix cache for forks", NULL, NULL, 0},
        {"no-early-stop", SG_OPT_FLAG, &no_early, NULL, "never cut an iteration short", NULL, NULL,
         0},
        {"no-fork", SG_OPT_FLAG, &no_fork, NULL, "never fork", NULL, NULL, 0},
        {"events", SG_OPT_STR, &events, "FILE",
         "write every task's events (JSON lines, the first configuration's first seed)", NULL, NULL,
         0},
        {"compare", SG_OPT_FLAG, &compare, NULL, "specgen against three baselines and ablations",
         NULL, NULL, 0},
        {"sweep", SG_OPT_FLAG, &sweep, NULL,
         "search the policy's knobs: trigger spacing, forks in flight, early-stop margin, pool "
         "hysteresis",
         NULL, NULL, 0},
        {NULL, 0, NULL, NULL, NULL, NULL, NULL, 0},
    };
    const sg_cmd_spec spec = {
        "sim", "", "Compare policies in a virtual-time simulation.", details, opts, 0, 0};
    char **pos;
    int npos;
    int rcode = sg_cli_parse(&spec, argc, argv, &pos, &npos);
    if (rcode == SG_CLI_HELP) return 0;
    if (rcode) return 2;
    sg_err err;
    uint64_t from, to;
    if (parse_seeds(seeds, &from, &to) < 0)
        return sg_cli_fail(&spec, 2, "--seeds: '%s' is not N or A-B (at most 1000 seeds)", seeds);
    if (gpus < 1 || gpus > 4096)
        return sg_cli_fail(&spec, 2, "--gpus: '%lld' must be 1..4096", (long long)gpus);
    if (slots < 1 || slots > 16)
        return sg_cli_fail(&spec, 2, "--slots-per-gpu: '%lld' must be 1..16", (long long)slots);
    if (tasks < 1 || tasks > 100000)
        return sg_cli_fail(&spec, 2, "--tasks: '%lld' must be 1..100000", (long long)tasks);
    if (concurrency < 0 || concurrency > 100000)
        return sg_cli_fail(&spec, 2, "--concurrency: '%lld' must be 1..100000 (0: all)",
                           (long long)concurrency);
    if (c.target < 0) return sg_cli_fail(&spec, 2, "--target: must be above 0");
    if (iterations < 1 || iterations > 1000)
        return sg_cli_fail(&spec, 2, "--iterations: '%lld' must be 1..1000", (long long)iterations);
    if (instances < 0 || instances > 4096)
        return sg_cli_fail(&spec, 2, "--llm-instances: '%lld' must be 1..4096",
                           (long long)instances);
    if (workload && sg_sim_workload_load(workload, &c.w, &err) < 0)
        return sg_cli_fail(&spec, 2, "%s", err.msg);
    if (apply_policy(policy, &c, &err) < 0) return sg_cli_fail(&spec, 2, "--policy: %s", err.msg);
    if (sg_pool_config_parse(pools, &c.pools, &err) < 0)
        return sg_cli_fail(&spec, 2, "%s", err.msg);
    if (instances) c.w.instances = (int)instances;
    c.gpus = (int)gpus;
    c.slots_per_gpu = (int)slots;
    c.tasks = (int)tasks;
    c.concurrency = (int)concurrency;
    c.iterations = (int)iterations;
    c.pools.fifo = no_prio;
    if (no_kv) c.w.cache_tokens = 0;
    c.early_stop = !no_early;
    if (no_fork) c.policy.fork = 0;
    snprintf(c.name, sizeof c.name, "%s", policy);
    FILE *evf = NULL;
    if (events && !(evf = fopen(events, "w")))
        return sg_cli_fail(&spec, 1, "cannot write %s: %s", events, strerror(errno));
    c.events = evf;

    sg_run_config rc;
    sg_run_config_default(&rc);
    sg_run_prompts p;
    memset(&p, 0, sizeof p);
    if (sg_run_prompts_load(&rc, &p, &err) < 0) return sg_cli_fail(&spec, 1, "%s", err.msg);
    printf("workload %s: %d tasks (%d at once), %d GPU%s x %d slot%s, %d LLM instance%s, seeds "
           "%llu-%llu\n",
           c.w.name, c.tasks, c.concurrency ? c.concurrency : c.tasks, c.gpus,
           c.gpus == 1 ? "" : "s", c.slots_per_gpu, c.slots_per_gpu == 1 ? "" : "s", c.w.instances,
           c.w.instances == 1 ? "" : "s", (unsigned long long)from, (unsigned long long)to);
    header();
    int rcx = 0;
    if (sweep) {
        rcx = run_sweep(&c, &p, from, to, &err);
    } else if (!compare) {
        row r;
        if (run_seeds(&c, &p, from, to, &r, &err) < 0)
            rcx = -1;
        else
            print_row(&r);
    } else {
        enum { N = 9 };
        sg_sim_config cs[N];
        for (int i = 0; i < N; i++) cs[i] = c;
        for (int i = 1; i < N; i++) cs[i].events = NULL; /* the first configuration's only */
        sg_policy spec_p = {SG_POLICY_SPECGEN, 1, 1};
        sg_pool_config stat;
        sg_pool_config_default(&stat);
        stat.mode = SG_POOL_STATIC;
        stat.static_validate = c.gpus * c.slots_per_gpu > 1 ? c.gpus * c.slots_per_gpu / 2 : 1;
        stat.static_profile = c.gpus * c.slots_per_gpu - stat.static_validate;
        struct {
            const char *name;
            sg_policy pol;
            uint64_t probe;
            int static_pools, fifo, no_kv, no_early, no_fork;
        } v[N] = {
            {"specgen", spec_p, 0, 0, 0, 0, 0, 0},
            {"sequential", {SG_POLICY_SEQUENTIAL, 1, 0}, 0, 1, 1, 0, 0, 0},
            {"parallel:4", {SG_POLICY_PARALLEL, 4, 0}, 0, 1, 1, 0, 0, 0},
            {"probe:1000", spec_p, 1000, 1, 1, 0, 0, 0},
            {"specgen static pools", spec_p, 0, 1, 0, 0, 0, 0},
            {"specgen no priorities", spec_p, 0, 0, 1, 0, 0, 0},
            {"specgen no kvstore", spec_p, 0, 0, 0, 1, 0, 0},
            {"specgen no early stop", spec_p, 0, 0, 0, 0, 1, 0},
            {"specgen no forks", spec_p, 0, 0, 0, 0, 0, 1},
        };
        row rows[N];
        for (int i = 0; i < N && rcx == 0; i++) {
            sg_sim_config *x = &cs[i];
            snprintf(x->name, sizeof x->name, "%s", v[i].name);
            x->policy = v[i].pol;
            x->probe_tokens = v[i].probe;
            if (v[i].static_pools && stat.static_profile > 0) x->pools = stat;
            x->pools.fifo = v[i].fifo;
            if (v[i].no_kv) x->w.cache_tokens = 0;
            x->early_stop = !v[i].no_early;
            if (v[i].no_fork) x->policy.fork = 0;
            if (run_seeds(x, &p, from, to, &rows[i], &err) < 0)
                rcx = -1;
            else
                print_row(&rows[i]);
        }
        if (rcx == 0) {
            int best = 1; /* the best baseline by end-to-end time */
            for (int i = 2; i <= 3; i++)
                if (rows[i].mean.e2e_s < rows[best].mean.e2e_s) best = i;
            printf("\nspecgen against each baseline (ratio: the baseline's figure / specgen's; "
                   "feedback: specgen's / the baseline's):\n");
            for (int i = 1; i <= 3; i++)
                printf("  vs %-12s end-to-end %.2fx shorter, feedback %.2fx, first correct "
                       "%.2fx sooner, utilisation %.1f%% vs %.1f%%%s\n",
                       rows[i].name, rows[i].mean.e2e_s / rows[0].mean.e2e_s,
                       rows[i].mean.feedback > 0 ? rows[0].mean.feedback / rows[i].mean.feedback
                                                 : 0,
                       rows[0].mean.first_correct_s > 0
                           ? rows[i].mean.first_correct_s / rows[0].mean.first_correct_s
                           : 0,
                       100 * rows[0].mean.util, 100 * rows[i].mean.util,
                       i == best ? "  (the best baseline)" : "");
        }
    }
    sg_run_prompts_free(&p);
    if (evf && fclose(evf) != 0 && rcx == 0) {
        sg_errf(&err, "cannot write %s: %s", events, strerror(errno));
        rcx = -1;
    }
    if (rcx < 0) return sg_cli_fail(&spec, 1, "%s", err.msg);
    return 0;
}
