/* sim_fair.c — `sim --compare`'s fair baselines (sim_run.h, sg_sim_fair): each baseline on a
 * work-conserving pool (elastic, FIFO) at its best setting beside its paper's setting (the
 * static split), workers:N and probe-exit:K too, and specgen's ratios against each with 95%
 * confidence intervals over the seeds. Only virtual-time figures: the same seeds give the
 * same bytes. */
#include "orchestrator/sim_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SETTINGS 8

/* A baseline family: its policy at each setting tried (the first is the paper's). */
typedef struct family {
    const char *name; /* "probe:K" */
    const char *fmt;  /* "probe:%d": a setting's policy */
    int paper_row;    /* rows[] holding its paper's setting (static split, FIFO), or -1 */
    int same_kernel;  /* runs on the same-kernel model (kernel_step; sim.h) */
    int settings[MAX_SETTINGS], nsettings;
} family;

static const family families[] = {
    {"sequential", "sequential", 1, 0, {0}, 1},
    {"parallel:N", "parallel:%d", 2, 0, {4, 2, 3}, 3},
    {"workers:N", "workers:%d", -1, 0, {4, 1, 2, 3}, 4},
    {"probe:K", "probe:%d", 3, 0, {1000, 500, 1500, 2000, 3000, 4000}, 6},
    {"probe-exit:K", "probe-exit:%d", -1, 1, {1000, 250, 500, 2000, 3000}, 5},
};

/* Student's t, two-sided 95%, for df degrees of freedom. */
static double t95(int df) {
    static const double t[] = {0,     12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365,
                               2.306, 2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
                               2.120, 2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069,
                               2.064, 2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
    if (df < 1) return NAN;
    return df <= 30 ? t[df] : 1.96 + 2.4 / df;
}

/* The geometric mean of a[i] / b[i] over the seeds and its 95% interval (Student t on the
 * logs): *lo = *hi = the mean with one seed. */
static double paired_ratio(const double *a, const double *b, int n, double *lo, double *hi) {
    double s = 0, ss = 0;
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (!(a[i] > 0) || !(b[i] > 0)) continue;
        double l = log(a[i] / b[i]);
        s += l, ss += l * l, k++;
    }
    if (!k) return *lo = *hi = 0, 0;
    double mean = s / k, half = 0;
    if (k > 1) {
        double var = (ss - k * mean * mean) / (k - 1);
        half = t95(k - 1) * sqrt(var > 0 ? var : 0) / sqrt(k);
    }
    *lo = exp(mean - half), *hi = exp(mean + half);
    return exp(mean);
}

/* The workload of the same-kernel model: the workload's kernel_step, else q_sd. */
static void same_kernel(sg_sim_config *x) {
    if (!(x->w.kernel_step > 0)) x->w.kernel_step = x->w.q_sd > 0 ? x->w.q_sd : 0.1;
}

/* One setting of a family, FIFO, on an elastic pool (or the paper's static split), into r. */
static int run_setting(const sg_sim_config *c, const sg_run_prompts *p, uint64_t from, uint64_t to,
                       const family *f, int setting, int split, sg_sim_row *r, sg_err *err) {
    sg_sim_config x = *c;
    x.events = NULL;
    x.db = NULL;
    char pol[64];
    snprintf(pol, sizeof pol, f->fmt, setting);
    x.run.probe_tokens = 0;
    if (sg_policy_parse(pol, &x.run.policy, err) < 0) return -1;
    if (x.run.policy.kind == SG_POLICY_SPECGEN && x.run.policy.probe) /* as --policy probe:K */
        x.run.probe_tokens = x.run.policy.probe, x.run.policy.probe = 0;
    if (split) { /* as run_compare's baselines: half the slots validate, half profile */
        int nslots = c->run.devices * c->run.slots_per_device;
        sg_pool_config_default(&x.run.pools);
        x.run.pools.mode = SG_POOL_STATIC;
        x.run.pools.static_validate = nslots > 1 ? nslots / 2 : 1;
        x.run.pools.static_profile = nslots - x.run.pools.static_validate;
        if (x.run.pools.static_profile < 1) x.run.pools = c->run.pools;
    }
    x.run.pools.fifo = 1;
    if (f->same_kernel) same_kernel(&x);
    snprintf(x.name, sizeof x.name, "%s %s", pol, split ? "static" : "elastic");
    return sg_sim_run_seeds(&x, p, from, to, 0, r, err);
}

/* Better: meets the target as often (within half a task a seed), then the shorter mean e2e. */
static int better(const sg_sim_row *a, const sg_sim_row *b) {
    double ra = a->mean.reached, rb = b->mean.reached; /* summed over the seeds */
    if (fabs(ra - rb) >= 0.5 * (a->nseeds ? a->nseeds : 1)) return ra > rb;
    return a->mean.e2e_s < b->mean.e2e_s;
}

static void print_ratio_row(const sg_sim_row *s, const sg_sim_row *b, const char *paper, int md,
                            const char *tried) {
    double elo, ehi, flo, fhi;
    int n = s->nseeds < b->nseeds ? s->nseeds : b->nseeds;
    double e = paired_ratio(b->e2e_seed, s->e2e_seed, n, &elo, &ehi);
    double f = paired_ratio(s->fb_seed, b->fb_seed, n, &flo, &fhi);
    double met = b->mean.tasks ? 100.0 * b->mean.reached / b->mean.tasks : 0;
    if (md)
        printf("| %s | %s | %.1f | %.0f%% | **%.2f×** (%.2f–%.2f) | **%.2f×** (%.2f–%.2f) | %s |\n",
               b->name, paper, b->mean.e2e_s, met, e, elo, ehi, f, flo, fhi, tried);
    else
        printf("  %-24s paper %-16s e2e %6.1f s met %3.0f%%  e2e %.2fx [%.2f-%.2f]  feedback "
               "%.2fx [%.2f-%.2f]  tried: %s\n",
               b->name, paper, b->mean.e2e_s, met, e, elo, ehi, f, flo, fhi, tried);
}

/* A family's settings: the best one kept in *best (the caller frees it). */
static int run_family(const sg_sim_config *c, const sg_run_prompts *p, uint64_t from, uint64_t to,
                      const family *f, sg_sim_row *best, char *tried, size_t ntried, sg_err *err) {
    memset(best, 0, sizeof *best);
    size_t used = 0;
    tried[0] = '\0';
    for (int i = 0; i < f->nsettings; i++) {
        sg_sim_row r;
        if (run_setting(c, p, from, to, f, f->settings[i], 0, &r, err) < 0) {
            sg_sim_row_free(&r);
            sg_sim_row_free(best);
            return -1;
        }
        double met = r.mean.tasks ? 100.0 * r.mean.reached / r.mean.tasks : 0;
        char pol[64];
        snprintf(pol, sizeof pol, f->fmt, f->settings[i]);
        used += (size_t)snprintf(tried + used, used < ntried ? ntried - used : 0, "%s%s %.1f s",
                                 i ? ", " : "", pol, r.mean.e2e_s);
        if (met < 99.95 && used < ntried)
            used += (size_t)snprintf(tried + used, ntried - used, " (met %.0f%%)", met);
        if (!i || better(&r, best)) {
            sg_sim_row_free(best);
            *best = r;
        } else {
            sg_sim_row_free(&r);
        }
    }
    return 0;
}

/* One candidate policy against specgen: its e2e and feedback against specgen's (paired, 95%
 * CI); > 1 e2e: the variant is faster. */
static int run_variant(const sg_sim_config *x, const sg_run_prompts *p, uint64_t from, uint64_t to,
                       int md, const sg_sim_row *spec, sg_err *err) {
    sg_sim_row r;
    if (sg_sim_run_seeds(x, p, from, to, 0, &r, err) < 0) return sg_sim_row_free(&r), -1;
    double elo, ehi, flo, fhi;
    int n = spec->nseeds < r.nseeds ? spec->nseeds : r.nseeds;
    double e = paired_ratio(spec->e2e_seed, r.e2e_seed, n, &elo, &ehi);
    double f = paired_ratio(r.fb_seed, spec->fb_seed, n, &flo, &fhi);
    if (md)
        printf("| %s | %.1f | %.2f× (%.2f–%.2f) | %.2f× (%.2f–%.2f) |\n", r.name, r.mean.e2e_s, e,
               elo, ehi, f, flo, fhi);
    else
        printf("  %-28s e2e %6.1f s  e2e %.2fx [%.2f-%.2f]  feedback %.2fx [%.2f-%.2f]\n", r.name,
               r.mean.e2e_s, e, elo, ehi, f, flo, fhi);
    sg_sim_row_free(&r);
    return 0;
}

/* The candidate policies against the best baseline, as ablations of specgen (their
 * defaults are off: measured, docs/eval.md). */
static int run_variants(const sg_sim_config *c, const sg_run_prompts *p, uint64_t from, uint64_t to,
                        int md, const sg_sim_row *spec, sg_err *err) {
    printf("\ncandidate policies (specgen's e2e / the variant's, the variant's feedback / "
           "specgen's; 95%% CI):\n%s",
           md ? "\n| variant | e2e s | end-to-end | feedback |\n|---|---|---|---|\n" : "");
    static const char *const names[] = {"specgen by-value order",     "specgen 2 forks while idle",
                                        "specgen 4 forks while idle", "specgen drop stale",
                                        "specgen preempt stale",      "specgen far-target first",
                                        "specgen near-target first"};
    for (int v = 0; v < (int)(sizeof names / sizeof *names); v++) {
        sg_sim_config x = *c;
        x.events = NULL;
        x.db = NULL;
        x.run.pools.by_value = v == 0;
        x.run.in_flight_idle = v == 1 ? 2 : v == 2 ? 4 : 0; /* forks while no job waits */
        x.run.drop_stale = v == 3;
        x.run.preempt_stale = v == 4;                           /* running ones yield too */
        x.run.pools.by_distance = v == 5 ? 1 : v == 6 ? -1 : 0; /* far, near first */
        snprintf(x.name, sizeof x.name, "%s", names[v]);
        if (run_variant(&x, p, from, to, md, spec, err) < 0) return -1;
    }
    return 0;
}

/* ---- the KV cache (issue 27): the kvstore tier and where forks are served, as ablations of
 * specgen (its own settings: the kvstore on, --kv-placement's default) ---- */
static int run_kv_variants(const sg_sim_config *c, const sg_run_prompts *p, uint64_t from,
                           uint64_t to, int md, const sg_sim_row *spec, sg_err *err) {
    static const double place[] = {SG_SIM_PLACE_PREFIX, 0, 4, 16};
    char dflt[32];
    sg_sim_placement_name(c->w.kv_placement, dflt, sizeof dflt);
    printf("\nthe KV cache (specgen: kvstore %s, --kv-placement %s; specgen's e2e / the "
           "variant's, the variant's feedback / specgen's; 95%% CI):\n%s",
           c->w.kvstore_tokens > 0 ? "on" : "off", dflt,
           md ? "\n| variant | e2e s | end-to-end | feedback |\n|---|---|---|---|\n" : "");
    /* without the kvstore, without placement (forks on the least loaded instance), neither;
     * then the other placement thresholds */
    for (int v = 0; v < 3 + (int)(sizeof place / sizeof *place); v++) {
        sg_sim_config x = *c;
        x.events = NULL;
        x.db = NULL;
        if (v == 0 || v == 2) x.w.kvstore_tokens = 0;
        if (v == 1 || v == 2) x.w.kv_placement = -1;
        if (v >= 3) {
            if (place[v - 3] == c->w.kv_placement) continue; /* specgen's own */
            x.w.kv_placement = place[v - 3];
        }
        char name[32];
        sg_sim_placement_name(x.w.kv_placement, name, sizeof name);
        snprintf(x.name, sizeof x.name, "specgen %s%s", v == 0 ? "no kvstore" : name,
                 v == 2 ? ", no kvstore" : "");
        if (run_variant(&x, p, from, to, md, spec, err) < 0) return -1;
    }
    return 0;
}

int sg_sim_fair(const sg_sim_config *c, const sg_run_prompts *p, uint64_t from, uint64_t to, int md,
                const sg_sim_row *rows, sg_err *err) {
    enum { NF = sizeof families / sizeof *families };
    sg_sim_row best[NF], paper_run[NF], spec_sk;
    memset(best, 0, sizeof best);
    memset(paper_run, 0, sizeof paper_run);
    char tried[NF][512];
    sg_sim_config sk = *c; /* specgen on the same-kernel model, beside probe-exit */
    sk.events = NULL;
    sk.db = NULL;
    same_kernel(&sk);
    snprintf(sk.name, sizeof sk.name, "specgen same-kernel");
    int rc = sg_sim_run_seeds(&sk, p, from, to, 0, &spec_sk, err);
    for (int i = 0; i < NF && rc == 0; i++)
        rc = run_family(c, p, from, to, &families[i], &best[i], tried[i], sizeof tried[i], err);
    if (rc == 0) {
        printf("\nfair baselines: each on a work-conserving pool (elastic, FIFO) at its best "
               "setting (the shortest mean e2e among those tried that meet the target as often), "
               "%d seeds; ratios: geometric mean over the seeds of the paired ratio "
               "(e2e: the baseline's / specgen's; feedback: specgen's / the baseline's), 95%% "
               "confidence interval in brackets; probe-exit:K against specgen on the same-kernel "
               "model (kernel_step %.3g):\n%s",
               rows[0].nseeds, sk.w.kernel_step, md ? "\n" : "");
        if (md)
            printf("| baseline at its best | its paper's setting (static split), e2e s | e2e s | "
                   "met target | end-to-end, baseline / specgen | feedback, specgen / baseline "
                   "| settings tried (mean e2e) |\n|---|---|---|---|---|---|---|\n");
        int overall = -1;
        const sg_sim_row *use[NF] = {0};
        for (int i = 0; i < NF && rc == 0; i++) {
            const family *f = &families[i];
            const sg_sim_row *pr = &rows[f->paper_row >= 0 ? f->paper_row : 0];
            if (f->paper_row < 0) { /* its first setting on the static split */
                rc = run_setting(c, p, from, to, f, f->settings[0], 1, &paper_run[i], err);
                if (rc < 0) break;
                pr = &paper_run[i];
            }
            char paper[96];
            snprintf(paper, sizeof paper, "%s %.1f", pr->name, pr->mean.e2e_s);
            /* its best: the elastic one, or the paper's setting where that is better */
            use[i] = better(pr, &best[i]) ? pr : &best[i];
            print_ratio_row(f->same_kernel ? &spec_sk : &rows[0], use[i], paper, md, tried[i]);
            if (!f->same_kernel && (overall < 0 || better(use[i], use[overall]))) overall = i;
        }
        printf("%sthe best fair baseline on this workload: %s (%.1f s); specgen %.1f s; "
               "specgen same-kernel %.1f s\n",
               md ? "\n" : "  ", use[overall]->name, use[overall]->mean.e2e_s, rows[0].mean.e2e_s,
               spec_sk.mean.e2e_s);
    }
    if (rc == 0) rc = run_variants(c, p, from, to, md, &rows[0], err);
    if (rc == 0) rc = run_kv_variants(c, p, from, to, md, &rows[0], err);
    for (int i = 0; i < NF; i++) sg_sim_row_free(&best[i]), sg_sim_row_free(&paper_run[i]);
    sg_sim_row_free(&spec_sk);
    return rc;
}
