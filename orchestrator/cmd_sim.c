/* `specgen sim`: policies compared in virtual time, on the real policy code (sim_run.h). */
#include "common/buf.h"
#include "common/cli.h"
#include "common/opts.h"
#include "common/paths.h"
#include "common/wfile.h"
#include "orchestrator/commands.h"
#include "orchestrator/sim_run.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char details[] =
    "Runs --tasks tasks (--concurrency at a time, all by default) through the real task loop,\n"
    "trigger policy, early-stop criterion, device port and pool scheduler, with modelled parts\n"
    "behind the same ports: an LLM serving model (--llm-instances, decode rate falling with\n"
    "the batch, prefill, a prefix cache) whose reasoning holds code blocks and cues where a\n"
    "real model writes them, and --devices simulated GPUs whose verdicts and speedups follow the\n"
    "quality of each kernel (better the more reasoning came before it). A workload file sets\n"
    "the parameters, every value with its source or marked as an assumption: `reference` (the\n"
    "default) or `fitted` (GLM-5 and DeepSeek-V4 on H200s, the published setup), both in\n"
    "sim/workloads/; docs/eval.md.\n"
    "\n"
    "Prints, per configuration, the mean over --seeds of: end-to-end time per task (to the\n"
    "target, or to its end when it did not reach it, under --task-budget-time and\n"
    "--task-budget-tokens), time to the first correct kernel, timings fed back (profiling\n"
    "feedback), pool utilisation (all the time, and while work waited), tokens, the best\n"
    "speedup, tasks that met the target. The same seeds give the same output, byte for byte;\n"
    "wall-clock times go to stderr only.\n"
    "\n"
    "--compare runs specgen and three baselines on the same seeds: sequential (one reasoning,\n"
    "its final kernel), parallel:4 (four independent reasoning streams), probe:1000 (a fork\n"
    "every 1000 tokens, no trigger rules, static pools, no priorities); then ablations of\n"
    "specgen: static pools, no priorities, no kvstore (the instances' own prefix caches stay),\n"
    "no early stop, no\n"
    "forks. Then the fair baselines: sequential, parallel:N, workers:N, probe:K and\n"
    "probe-exit:K each at its best setting on a work-conserving pool (elastic, FIFO) beside\n"
    "its paper's setting (the static split), with specgen's ratios and their 95% confidence\n"
    "intervals over the seeds (probe-exit:K, and a specgen row beside it, on the same-kernel\n"
    "model: kernel_step). --db records each configuration and seed as a simulated campaign (kind "
    "sim) that\n"
    "`specgen results` and `specgen report` show; --plots draws the time-to-target CDF and\n"
    "the pool's utilisation over time; --markdown is the form `make bench-sim` puts in\n"
    "docs/eval.md, beside the published figures.\n"
    "\n"
    "Examples:\n"
    "  specgen sim\n"
    "  specgen sim --compare --seeds 1-5\n"
    "  specgen sim --compare --workload fitted --db sim.db --plots plots/\n"
    "  specgen sim --policy probe:1000 --devices 16 --tasks 100\n"
    "  specgen sim --sweep --seeds 1-3 --tasks 20\n"
    "  specgen sim --compare --markdown -o table.md\n";

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

/* "specgen", "sequential", "parallel:N", "probe:K", "workers:N", "probe-exit:K" (probe:K as
 * the run's probe_tokens, as --sweep sets its knobs). */
static int apply_policy(const char *s, sg_sim_config *c, sg_err *err) {
    unsigned long long k;
    int used = 0;
    if (!strncmp(s, "probe:", 6)) {
        if (s[6] < '1' || s[6] > '9' || sscanf(s, "probe:%llu%n", &k, &used) != 1 || s[used] ||
            k > 1000000)
            return sg_errf(err,
                           "'%s': probe:K needs K, the reasoning tokens between forks, from 1 "
                           "to 1000000",
                           s);
        c->run.policy = (sg_policy){SG_POLICY_SPECGEN, 1, 1, 0};
        c->run.probe_tokens = k;
        return 0;
    }
    return sg_policy_parse(s, &c->run.policy, err); /* its own message names the policies */
}

#define BIN_S 2.0 /* the utilisation trace's bins, virtual seconds */

/* The configuration on every seed: means, spread, and (trace) what the plots draw. */
int sg_sim_run_seeds(const sg_sim_config *c, const sg_run_prompts *p, uint64_t from, uint64_t to,
                     int trace, sg_sim_row *r, sg_err *err) {
    memset(r, 0, sizeof *r);
    snprintf(r->name, sizeof r->name, "%s", c->name);
    int n = 0;
    r->e2e_seed = sg_xcalloc((size_t)(to - from + 1), sizeof *r->e2e_seed);
    r->fb_seed = sg_xcalloc((size_t)(to - from + 1), sizeof *r->fb_seed);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0); /* wall time: stderr only */
    if (trace) r->reach = sg_xcalloc((size_t)c->tasks * (size_t)(to - from + 1), sizeof *r->reach);
    for (uint64_t seed = from; seed <= to; seed++, n++) {
        sg_sim_metrics m;
        sg_sim_config one = *c;
        if (seed != from) one.events = NULL;
        sg_sim_trace tr = {.reach_s = r->reach ? r->reach + (size_t)n * (size_t)c->tasks : NULL,
                           .bin_s = BIN_S};
        if (sg_sim_run(&one, p, seed, &m, trace ? &tr : NULL, err) < 0) {
            free(tr.busy);
            return -1;
        }
        if (trace) r->nreach += c->tasks;
        r->e2e_seed[n] = m.e2e_s;
        r->fb_seed[n] = m.feedback;
        r->nseeds = n + 1;
        if (trace && seed == from) { /* the first seed's utilisation, up to its end */
            r->busy = tr.busy;
            r->nbins = (int)ceil(m.virtual_s / BIN_S);
            if (r->nbins > tr.nbins) r->nbins = tr.nbins;
            r->bin_s = BIN_S;
            r->slots = m.slots;
        } else {
            free(tr.busy);
        }
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
        if (m.campaign && !r->mean.campaign) r->mean.campaign = m.campaign;
        if (m.campaign) r->last_campaign = m.campaign;
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
    if (c->db && a->campaign && n == 1)
        fprintf(stderr, "sim: %-22s recorded as simulated campaign %lld\n", c->name,
                (long long)a->campaign);
    else if (c->db && a->campaign)
        fprintf(stderr, "sim: %-22s recorded as simulated campaigns %lld-%lld\n", c->name,
                (long long)a->campaign, (long long)r->last_campaign);
    return 0;
}

static int by_e2e(const void *a, const void *b) {
    const sg_sim_row *x = a, *y = b;
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
    /* the defaults' row: prompts/trigger.json's spacing and cap, no cut on a gain */
    uint64_t base_spacing = p->trigger.min_spacing_tokens;
    int base_flight = p->trigger.max_in_flight;
    sg_sim_row *rows = sg_xcalloc((size_t)n, sizeof *rows);
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++)
            for (int d = 0; d < 4; d++)
                for (int h = 0; h < 3; h++, k++) {
                    sg_sim_config c = *base;
                    c.events = NULL;
                    c.run.spacing_tokens = spacing[a];
                    c.run.in_flight = in_flight[b];
                    c.run.delta = delta[d];
                    c.run.early_stop = delta[d] > 0;
                    c.run.pools.hysteresis = hyst[h];
                    if (delta[d] > 0)
                        snprintf(c.name, sizeof c.name, "s%llu f%d d%.2f h%.1f",
                                 (unsigned long long)spacing[a], in_flight[b], delta[d], hyst[h]);
                    else
                        snprintf(c.name, sizeof c.name, "s%llu f%d no-stop h%.1f",
                                 (unsigned long long)spacing[a], in_flight[b], hyst[h]);
                    if (spacing[a] == base_spacing && in_flight[b] == base_flight &&
                        delta[d] == 0 && hyst[h] == 0.2)
                        def = k;
                    if (sg_sim_run_seeds(&c, p, from, to, 0, &rows[k], err) < 0) {
                        for (int i = 0; i <= k; i++) sg_sim_row_free(&rows[i]);
                        free(rows);
                        return -1;
                    }
                }
    sg_sim_row dflt;
    if (def >= 0) dflt = rows[def];
    qsort(rows, (size_t)n, sizeof *rows, by_e2e);
    int rank = 0;
    for (int i = 0; def >= 0 && i < n; i++)
        if (!strcmp(rows[i].name, dflt.name)) rank = i + 1;
    printf("(s: trigger spacing in tokens, f: forks in flight, d: early-stop margin, h: pool "
           "hysteresis; the other trigger rules as --trigger or prompts/trigger.json)\n");
    for (int i = 0; i < 10 && i < n; i++) sg_sim_print_row(&rows[i], 0);
    printf("...\n");
    if (def >= 0) {
        sg_sim_print_row(&dflt, 0);
        printf("\nthe defaults (%s) rank %d of %d by end-to-end time; the best is %.2fx faster\n",
               dflt.name, rank, n, dflt.mean.e2e_s / rows[0].mean.e2e_s);
    } else {
        printf("\nthe trigger rules' spacing or cap is not in the grid: no rank for them\n");
    }
    for (int i = 0; i < n; i++) sg_sim_row_free(&rows[i]);
    free(rows);
    return 0;
}

/* --workload: a file, or the name of one in specgen's sim/workloads/ ("fitted"). */
int sg_sim_load_workload(const char *w, sg_sim_workload *out, sg_err *err) {
    char path[4200];
    if (!strchr(w, '/') && !strstr(w, ".json")) {
        char dir[4096];
        if (sg_data_dir("sim/workloads", dir, sizeof dir, err) < 0) return -1;
        snprintf(path, sizeof path, "%s/%s.json", dir, w);
        if (access(path, R_OK) != 0)
            return sg_errf(err, "--workload: no workload named '%s' (%s; %s holds them)", w,
                           strerror(errno), dir);
        w = path;
    }
    return sg_sim_workload_load(w, out, err);
}

/* --compare: specgen, three baselines, the ablations; the ratios; plots of the first four. */
static int run_compare(const sg_sim_config *c, const sg_run_prompts *p, uint64_t from, uint64_t to,
                       int md, const char *plots, sg_err *err) {
    enum { N = 9 };
    sg_pool_config stat;
    sg_pool_config_default(&stat);
    stat.mode = SG_POOL_STATIC;
    int nslots = c->run.devices * c->run.slots_per_device;
    stat.static_validate = nslots > 1 ? nslots / 2 : 1;
    stat.static_profile = nslots - stat.static_validate;
    static const struct {
        const char *name;
        int policy, streams, fork;
        uint64_t probe;
        int static_pools, fifo, no_kv, flip_early;
    } v[N] = {
        {"specgen", SG_POLICY_SPECGEN, 1, 1, 0, 0, 0, 0, 0},
        {"sequential", SG_POLICY_SEQUENTIAL, 1, 0, 0, 1, 1, 0, 0},
        {"parallel:4", SG_POLICY_PARALLEL, 4, 0, 0, 1, 1, 0, 0},
        {"probe:1000", SG_POLICY_SPECGEN, 1, 1, 1000, 1, 1, 0, 0},
        {"specgen static pools", SG_POLICY_SPECGEN, 1, 1, 0, 1, 0, 0, 0},
        {"specgen no priorities", SG_POLICY_SPECGEN, 1, 1, 0, 0, 1, 0, 0},
        {"specgen no kvstore", SG_POLICY_SPECGEN, 1, 1, 0, 0, 0, 1, 0},
        {"specgen early stop", SG_POLICY_SPECGEN, 1, 1, 0, 0, 0, 0, 1},
        {"specgen no forks", SG_POLICY_SPECGEN, 1, 0, 0, 0, 0, 0, 0},
    };
    sg_sim_row rows[N];
    memset(rows, 0, sizeof rows);
    int rc = 0;
    for (int i = 0; i < N && rc == 0; i++) {
        sg_sim_config x = *c;
        if (i) x.events = NULL; /* the first configuration's only */
        snprintf(x.name, sizeof x.name, "%s", v[i].name);
        x.run.policy = (sg_policy){(sg_policy_kind)v[i].policy, v[i].streams, v[i].fork, 0};
        x.run.probe_tokens = v[i].probe;
        if (v[i].static_pools && stat.static_profile > 0) x.run.pools = stat;
        x.run.pools.fifo = v[i].fifo;
        if (v[i].no_kv) x.w.kvstore_tokens = 0;
        /* every row the same criterion, but the ablation, which flips the cut on a gain */
        x.run.early_stop = v[i].flip_early ? !c->run.early_stop : c->run.early_stop;
        if (sg_sim_run_seeds(&x, p, from, to, plots && i < 4, &rows[i], err) < 0)
            rc = -1;
        else
            sg_sim_print_row(&rows[i], md);
    }
    if (rc == 0) sg_sim_print_compare(rows, md);
    if (rc == 0 && plots) rc = sg_sim_plots(plots, rows, 4, err);
    if (rc == 0) rc = sg_sim_fair(c, p, from, to, md, rows, err);
    for (int i = 0; i < N; i++) sg_sim_row_free(&rows[i]);
    return rc;
}

/* The options of one `specgen sim`, parsed, then checked together. */
typedef struct sim_args {
    sg_sim_config c;
    int64_t in_flight, devices, slots, instances, tasks, iterations, concurrency, kv_tokens;
    const char *workload, *policy, *seeds, *pools, *events, *db, *plots, *out, *admission;
    const char *by_distance;
    const char *placement;
    int compare, sweep, no_prio, no_kv, no_early, early, no_fork, md, by_value, drop_stale;
    int admit_study, calib, preempt_stale;
    int64_t interval;
    const char *export_traces, *traces;
    sg_replay_traces tr;
    uint64_t from, to;
} sim_args;

/* --traces: replay JSONL files (a file or a folder); each must hold reasoning. */
static int load_traces(sim_args *a, sg_err *err) {
    if (sg_replay_load(a->traces, &a->tr, err) < 0) return sg_err_prefix(err, "--traces"), -1;
    for (size_t i = 0; i < a->tr.n; i++)
        if (a->tr.t[i].reasoning.n < 2)
            return sg_errf(err, "--traces: %s has no reasoning to replay", a->tr.t[i].file);
    a->c.traces = &a->tr;
    fprintf(stderr, "sim: %zu recorded trace%s replace the modelled reasoning (%s)\n", a->tr.n,
            a->tr.n == 1 ? "" : "s", a->traces);
    return 0;
}

/* What the parse cannot check alone (the ranges are the table's); fills a->c. */
static int check_args(sim_args *a, sg_err *err) {
    sg_sim_config *c = &a->c;
    if (parse_seeds(a->seeds, &a->from, &a->to) < 0)
        return sg_errf(err, "--seeds: '%s' is not N or A-B (at most 1000 seeds)", a->seeds);
    if (c->run.target < 0) return sg_errf(err, "--target: must be above 0");
    if (c->run.delta < 0) return sg_errf(err, "--early-stop-margin: must be above 0");
    if (a->calib && (!a->db || a->compare || a->sweep))
        return sg_errf(err, "--calibration-run records into --db FILE (and is not --compare or "
                            "--sweep)");
    if (a->export_traces && !a->calib)
        return sg_errf(err, "--export-traces goes with --calibration-run");
    if (a->sweep && (a->plots || a->md))
        return sg_errf(err, "--sweep prints its ranking only (no --plots, no --markdown)");
    if (a->early && a->no_early)
        return sg_errf(err, "--early-stop and --no-early-stop contradict each other");
    if (a->workload && sg_sim_load_workload(a->workload, &c->w, err) < 0) return -1;
    if (a->traces && load_traces(a, err) < 0) return -1;
    if (apply_policy(a->policy, c, err) < 0) return sg_err_prefix(err, "--policy"), -1;
    if (sg_pool_config_parse(a->pools, &c->run.pools, err) < 0) return -1;
    if (sg_pool_by_distance_parse(a->by_distance, &c->run.pools, err) < 0) return -1;
    c->run.in_flight = (int)a->in_flight;
    if (a->instances) c->w.instances = (int)a->instances;
    if (a->kv_tokens >= 0) c->w.kv_tokens = (double)a->kv_tokens;
    c->run.devices = (int)a->devices;
    c->run.slots_per_device = (int)a->slots;
    c->tasks = (int)a->tasks;
    c->concurrency = (int)a->concurrency;
    if (a->admission && strcmp(a->admission, "off")) {
        char msg[256];
        if (sg_admit_parse(a->admission, &c->admit, msg, sizeof msg) < 0)
            return sg_errf(err, "--admission: %s (or off)", msg);
        if (a->concurrency)
            return sg_errf(err, "--admission and --concurrency both say how many tasks run at "
                                "once: give one");
        c->admission = 1;
    }
    c->run.iterations = (int)a->iterations;
    c->run.pools.fifo = a->no_prio;
    c->run.pools.by_value = a->by_value;
    c->run.drop_stale = a->drop_stale;
    c->run.preempt_stale = a->preempt_stale;
    if (a->no_kv) c->w.kvstore_tokens = 0;
    if (a->placement && sg_sim_placement_parse(a->placement, &c->w.kv_placement, err) < 0)
        return -1;
    c->run.early_stop = a->early || c->run.delta > 0;
    if (a->no_fork) c->run.policy.fork = 0;
    snprintf(c->name, sizeof c->name, "%s", a->policy);
    return 0;
}

/* -o (the printed table goes there), --events, --plots and --db, checked and opened before
 * anything runs; *evf: the events file. SG_WFILE_REFUSED: an output names a device, a
 * FIFO, a link (a usage error). */
static int open_outputs(sim_args *a, FILE **evf, sg_err *err) {
    int orc = 0;
    FILE *out = NULL;
    if ((a->out && (orc = sg_wfile_check(a->out, "-o", err)) < 0) ||
        (a->events && (orc = sg_wfile_check(a->events, "--events", err)) < 0) ||
        (a->plots && (orc = sg_sim_plots_check(a->plots, err)) < 0))
        return orc;
    if (a->out && (orc = sg_wfile_fopen(a->out, 0, &out, err)) < 0) return orc;
    if (out) { /* stdout becomes the file: every row printed goes there */
        fflush(stdout);
        int ok = dup2(fileno(out), STDOUT_FILENO) >= 0;
        fclose(out);
        if (!ok) return sg_errf(err, "cannot write %s: %s", a->out, strerror(errno));
    }
    if (a->db && (orc = sg_results_open(a->db, 0, &a->c.db, err)) < 0) return orc;
    if (a->events && (orc = sg_wfile_fopen(a->events, 0, evf, err)) < 0) {
        if (a->c.db) sg_results_close(a->c.db, NULL);
        a->c.db = NULL;
        return orc;
    }
    return 0;
}

/* The runs the options ask for, printed; 0 or -1 with err. */
static int run_all(sim_args *a, const sg_run_prompts *p, sg_err *err) {
    sg_sim_config *c = &a->c;
    if (a->calib) {
        return sg_sim_calibration_run(c, p, a->from, (uint64_t)a->interval, a->export_traces, err);
    }
    int md = a->md;
    char at_once[32];
    snprintf(at_once, sizeof at_once, "%d at once", c->concurrency ? c->concurrency : c->tasks);
    printf("%sworkload %s: %d tasks (%s), %d device%s x %d slot%s, %d LLM instance%s, "
           "seeds %llu-%llu%s\n",
           md ? "*" : "", c->w.name, c->tasks, a->admit_study ? "admission study" : at_once,
           c->run.devices, c->run.devices == 1 ? "" : "s", c->run.slots_per_device,
           c->run.slots_per_device == 1 ? "" : "s", c->w.instances, c->w.instances == 1 ? "" : "s",
           (unsigned long long)a->from, (unsigned long long)a->to, md ? "*\n" : "");
    if (a->admit_study) return sg_sim_admission_study(c, p, a->from, a->to, md, err);
    sg_sim_print_header(md);
    if (a->sweep) return run_sweep(c, p, a->from, a->to, err);
    if (a->compare) return run_compare(c, p, a->from, a->to, md, a->plots, err);
    sg_sim_row r;
    int rc = sg_sim_run_seeds(c, p, a->from, a->to, a->plots != NULL, &r, err);
    if (rc == 0) sg_sim_print_row(&r, md);
    if (rc == 0 && a->plots) rc = sg_sim_plots(a->plots, &r, 1, err);
    sg_sim_row_free(&r);
    return rc;
}

int sg_cmd_sim(int argc, char **argv) {
    if (argc > 1 && !strcmp(argv[1], "fit")) return sg_cmd_sim_fit(argc - 1, argv + 1);
    sim_args a = {.policy = "specgen",
                  .seeds = "1-3",
                  .pools = "elastic",
                  .by_distance = "off",
                  .interval = 1000,
                  .kv_tokens = -1};
    sg_sim_config *c = &a.c;
    sg_sim_config_default(c);
    a.devices = c->run.devices;
    a.slots = c->run.slots_per_device;
    a.tasks = c->tasks;
    a.iterations = c->run.iterations;
    const sg_opt opts[] = {
        {.name = "workload",
         .kind = SG_OPT_STR,
         .out = &a.workload,
         .metavar = "W",
         .help = "a workload file, or the name of one in sim/workloads/ (reference, fitted)",
         .def = "the reference workload"},
        sg_opt_shared(SG_OD_POLICY, &a.policy),
        {.name = "seeds",
         .kind = SG_OPT_STR,
         .out = &a.seeds,
         .metavar = "A-B",
         .help = "seeds to run (the mean is shown)",
         .def = "1-3"},
        {.name = "devices",
         .kind = SG_OPT_INT,
         .out = &a.devices,
         .metavar = "N",
         .help = "simulated devices in the validation/profiling pool (a count: they are virtual)",
         .def = "8",
         .deprecated = "gpus",
         .min = 1,
         .max = 4096,
         .units = "devices"},
        sg_opt_shared(SG_OD_SLOTS_PER_DEVICE, &a.slots),
        {.name = "llm-instances",
         .kind = SG_OPT_INT,
         .out = &a.instances,
         .metavar = "N",
         .help = "LLM serving instances",
         .def = "the workload's",
         .min = 1,
         .max = 4096},
        {.name = "admission",
         .kind = SG_OPT_STR,
         .out = &a.admission,
         .metavar = "P",
         .help = "campaign admission: auto (active tasks follow the model's cache signals), "
                 "fixed:N (N tasks run iterations at once; the rest wait), or off (all at once, "
                 "or --concurrency)",
         .def = "off"},
        {.name = "kv-tokens",
         .kind = SG_OPT_INT,
         .out = &a.kv_tokens,
         .metavar = "N",
         .help = "KV capacity of each LLM instance in tokens: past it requests wait, the prefix "
                 "cache is squeezed, then requests are preempted and recomputed (0: none)",
         .def = "the workload's (fitted: 140000, reference: none)",
         .min = 0,
         .max = 1000000000,
         .units = "tokens"},
        {.name = "tasks",
         .kind = SG_OPT_INT,
         .out = &a.tasks,
         .metavar = "N",
         .help = "tasks to run",
         .def = "50",
         .min = 1,
         .max = 100000},
        {.name = "concurrency",
         .kind = SG_OPT_INT,
         .out = &a.concurrency,
         .metavar = "N",
         .help = "tasks at once (the next starts when one ends; 0: all)",
         .def = "all",
         .min = 0,
         .max = 100000},
        sg_opt_shared(SG_OD_TARGET, &c->run.target),
        sg_opt_shared(SG_OD_ITERATIONS, &a.iterations),
        sg_opt_shared(SG_OD_TASK_BUDGET_TIME, &c->run.budget_ns),
        sg_opt_shared(SG_OD_TASK_BUDGET_TOKENS, &c->run.budget_tokens),
        sg_opt_shared(SG_OD_POOLS, &a.pools),
        {.name = "no-priorities",
         .kind = SG_OPT_FLAG,
         .out = &a.no_prio,
         .help = "jobs in arrival order"},
        {.name = "drop-stale",
         .kind = SG_OPT_FLAG,
         .out = &a.drop_stale,
         .help = "a fork's correct new best drops its iteration's older forks' validations still "
                 "waiting (measured; docs/eval.md)"},
        {.name = "by-value",
         .kind = SG_OPT_FLAG,
         .out = &a.by_value,
         .help = "forks' jobs by how far their reasoning had got, across tasks (measured: no "
                 "gain; docs/eval.md)"},
        sg_opt_shared(SG_OD_PREEMPT_STALE, &a.preempt_stale),
        sg_opt_shared(SG_OD_BY_DISTANCE, &a.by_distance),
        {.name = "no-kvstore",
         .kind = SG_OPT_FLAG,
         .out = &a.no_kv,
         .help = "no kvstore: forks and preempted requests find their prefix only in their "
                 "instance's own prefix cache, else prefill it"},
        {.name = "kv-placement",
         .kind = SG_OPT_STR,
         .out = &a.placement,
         .metavar = "P",
         .help = "where a fork is served: prefix (on the instance whose prefix cache holds its "
                 "prefix), prefix:N (there unless that instance has more than N requests more "
                 "than the least loaded and 1.5 times as many), or load (the least loaded; the "
                 "prefix fetched from the kvstore or prefilled)",
         .def = "prefix"},
        sg_opt_shared(SG_OD_EARLY_STOP, &a.early),
        sg_opt_shared(SG_OD_NO_EARLY_STOP, &a.no_early),
        sg_opt_shared(SG_OD_NO_FORK, &a.no_fork),
        sg_opt_shared(SG_OD_TRIGGER, &c->run.trigger_file),
        {.name = "early-stop-margin",
         .kind = SG_OPT_DOUBLE,
         .out = &c->run.delta,
         .metavar = "X",
         .help = "end an iteration on a gain of at least X over its start (every "
                 "configuration; implies --early-stop)",
         .def = "0.05 with --early-stop",
         .min = 1e-6,
         .max = 100},
        {.name = "in-flight",
         .kind = SG_OPT_INT,
         .out = &a.in_flight,
         .metavar = "N",
         .help = "forks in flight at most, overriding the trigger rules' (probe:K too)",
         .def = "the rules'",
         .min = 1,
         .max = 1024},
        {.name = "out",
         .kind = SG_OPT_STR,
         .out = &a.out,
         .metavar = "FILE",
         .help = "write the table (what is printed) to FILE",
         .def = "stdout",
         .short_name = 'o'},
        {.name = "events",
         .kind = SG_OPT_STR,
         .out = &a.events,
         .metavar = "FILE",
         .help = "write every task's events (JSON lines, the first configuration's first seed)"},
        {.name = "db",
         .kind = SG_OPT_STR,
         .out = &a.db,
         .metavar = "FILE",
         .help = "record every configuration and seed as a simulated campaign in this results "
                 "database",
         .def = "not recorded"},
        {.name = "plots",
         .kind = SG_OPT_STR,
         .out = &a.plots,
         .metavar = "DIR",
         .help = "write DIR/time_to_target.svg and DIR/utilisation.svg (not with --sweep)"},
        {.name = "markdown",
         .kind = SG_OPT_FLAG,
         .out = &a.md,
         .help = "the table in Markdown, with --compare the published figures beside it "
                 "(docs/eval.md)"},
        {.name = "compare",
         .kind = SG_OPT_FLAG,
         .out = &a.compare,
         .help = "specgen against three baselines and ablations"},
        {.name = "traces",
         .kind = SG_OPT_STR,
         .out = &a.traces,
         .metavar = "FILE|DIR",
         .help = "replay recorded reasoning traces (replay JSONL, as calibrate --export-traces "
                 "writes and replay-llm reads) instead of the modelled reasoning: their real "
                 "code blocks and cues meet the trigger rules (docs/calibration.md)"},
        {.name = "calibration-run",
         .kind = SG_OPT_FLAG,
         .out = &a.calib,
         .help = "record calibration data as `specgen calibrate` does (every trigger point "
                 "forked, the rate ramp) from the workload's models into --db, for `specgen "
                 "sim fit` (the first seed; docs/calibration.md)"},
        {.name = "interval-tokens",
         .kind = SG_OPT_INT,
         .out = &a.interval,
         .metavar = "N",
         .help =
             "with --calibration-run: also fork every N reasoning tokens (the control; 0: none)",
         .def = "1000",
         .min = 0,
         .max = 1000000,
         .units = "tokens"},
        {.name = "export-traces",
         .kind = SG_OPT_STR,
         .out = &a.export_traces,
         .metavar = "DIR",
         .help = "with --calibration-run: the reasoning traces as replay JSONL, DIR/TASK.jsonl "
                 "(what replay-llm and sim --traces read)"},
        {.name = "admission-study",
         .kind = SG_OPT_FLAG,
         .out = &a.admit_study,
         .help = "campaign throughput (tasks to target per hour) of all tasks at once, auto "
                 "admission and fixed:N for N from 8 to 64, on the same seeds"},
        {.name = "sweep",
         .kind = SG_OPT_FLAG,
         .out = &a.sweep,
         .help = "search the policy's knobs: trigger spacing, forks in flight, early-stop "
                 "margin, pool hysteresis"},
        {0},
    };
    const sg_cmd_spec spec = {
        "sim", "", "Compare policies in a virtual-time simulation.", details, opts, 0, 0};
    int rcode = sg_cli_parse(&spec, argc, argv, NULL, NULL);
    if (rcode == SG_CLI_HELP) return 0;
    if (rcode) return 2;
    sg_err err;
    if (check_args(&a, &err) < 0) return sg_cli_fail(&spec, 2, "%s", err.msg);
    sg_run_prompts p;
    memset(&p, 0, sizeof p);
    if (sg_run_prompts_load(&c->run, &p, &err) < 0) return sg_cli_fail(&spec, 1, "%s", err.msg);
    FILE *evf = NULL;
    int orc = open_outputs(&a, &evf, &err);
    if (orc < 0) {
        sg_run_prompts_free(&p);
        return sg_cli_fail(&spec, orc == SG_WFILE_REFUSED ? 2 : 1, "%s", err.msg);
    }
    c->events = evf;
    int rcx = run_all(&a, &p, &err);
    sg_replay_traces_free(&a.tr);
    sg_run_prompts_free(&p);
    if (evf && fclose(evf) != 0 && rcx == 0) {
        sg_errf(&err, "cannot write %s: %s", a.events, strerror(errno));
        rcx = -1;
    }
    if (a.out && fflush(stdout) != 0 && rcx == 0) {
        sg_errf(&err, "cannot write %s: %s", a.out, strerror(errno));
        rcx = -1;
    }
    if (c->db && sg_results_close(c->db, rcx < 0 ? NULL : &err) < 0) rcx = -1;
    if (rcx < 0) return sg_cli_fail(&spec, 1, "%s", err.msg);
    return 0;
}
