#include "profiler/stats.h"
#include "common/buf.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SG_RACE_ZONE_MAX 0.10 /* the widest band the "not_better" stop takes half of */

void sg_stability_default(sg_stability *s) {
    s->min_runs = 10;
    s->max_runs = 200;
    s->window = 5;
    s->tol = 0.01;
}

void sg_race_default(sg_race *r) {
    memset(r, 0, sizeof *r);
    r->on = 1;
    r->min_runs = 3;
}

/* Student's t, two-sided 99% (the 0.995 quantile), for df 1..30; 2.576 (normal) beyond. */
static double t995(int df) {
    static const double t[30] = {63.657, 9.925, 5.841, 4.604, 4.032, 3.707, 3.499, 3.355,
                                 3.250,  3.169, 3.106, 3.055, 3.012, 2.977, 2.947, 2.921,
                                 2.898,  2.878, 2.861, 2.845, 2.831, 2.819, 2.807, 2.797,
                                 2.787,  2.779, 2.771, 2.763, 2.756, 2.750};
    if (df < 1) return INFINITY;
    if (df <= 30) return t[df - 1];
    return df <= 60 ? 2.660 : df <= 120 ? 2.617 : 2.576;
}

/* The band sg_speedup_compare would give the two sides' samples so far (the sum of their
 * relative IQR half-widths): the resolution of the profiler's own verdict. Within it a
 * speedup reads "no change", and bench_racing counts two picks within it as a tie. */
static double noise_band(const double *base, const double *cand, int n) {
    sg_timing tb, tc;
    sg_timing_summarize(base, n, &tb);
    sg_timing_summarize(cand, n, &tc);
    return tb.noise + tc.noise;
}

/* Why "not_better" keeps the best kernel (docs/profiler.md "Racing"): after tie_min_runs
 * pairs (the stability rule's own minimum, so a close candidate is never cut short of what
 * full timing would give it at the least), an interval wholly below best * (1 + zone) says,
 * at 99%, that the candidate's true speedup is not above the best by more than the zone.
 * The zone is half the noise band of the samples so far, the band taken at most
 * SG_RACE_ZONE_MAX. Within the band, full timing's verdict reads "no change": a candidate
 * that cannot beat the best by the band, timed until stable, would at most tie with it.
 * But the verdict uses the band at the end of the timing, and a band from 10 pairs is a
 * rough estimate of it: with the whole band as the zone, the rule replayed on full timing's
 * own samples once stopped a kernel that full timing then measured just beyond its final,
 * narrower band (bench_racing, batched_dot b*2); half the band leaves room for that
 * estimate's error. The cap keeps a band blown up by a loaded machine (hundreds of percent)
 * from stopping a candidate whose interval says nothing. Its figure so far is still
 * reported, so a candidate stopped this way can still become the best by its estimate; the
 * stop only spares the runs that would have narrowed an interval that no longer decides
 * anything (an indifference zone, as Bechhofer's ranking and selection procedures and
 * racing's elimination of configurations use). */
sg_race_stop sg_race_check(const double *base, const double *cand, int n, const sg_race *r,
                           double *lo, double *hi) {
    *lo = *hi = 0;
    if (n < 2) return SG_RACE_GO;
    double sum = 0, sq = 0;
    for (int i = 0; i < n; i++) {
        if (!(base[i] > 0) || !(cand[i] > 0)) return SG_RACE_GO; /* no time: no decision */
        double d = log(base[i] / cand[i]);
        sum += d;
        sq += d * d;
    }
    double mean = sum / n, var = (sq - n * mean * mean) / (n - 1);
    double half = t995(n - 1) * sqrt(var > 0 ? var : 0) / sqrt((double)n);
    *lo = exp(mean - half);
    *hi = exp(mean + half);
    if (!r || !r->on || n < r->min_runs) return SG_RACE_GO;
    if (r->best > 0 && *hi < r->best) return SG_RACE_SLOWER;
    if (r->target > 0 && *lo > r->target) return SG_RACE_PAST_TARGET;
    if (r->best > 0 && r->tie_min_runs > 0 && n >= r->tie_min_runs &&
        *hi < r->best * (1 + fmin(noise_band(base, cand, n), SG_RACE_ZONE_MAX) / 2))
        return SG_RACE_NOT_BETTER;
    return SG_RACE_GO;
}

const char *sg_race_stop_name(sg_race_stop s) {
    return s == SG_RACE_SLOWER        ? "slower"
           : s == SG_RACE_PAST_TARGET ? "past_target"
           : s == SG_RACE_NOT_BETTER  ? "not_better"
                                      : "";
}

const char *sg_race_stop_why(const char *n) {
    return !n                          ? ""
           : !strcmp(n, "slower")      ? "clearly below the best so far"
           : !strcmp(n, "past_target") ? "clearly past the target"
           : !strcmp(n, "not_better")
               ? "not above the best so far by more than half the noise band (5% at most)"
               : "";
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Quantile q of sorted values, linear between neighbours. */
static double quantile(const double *v, int n, double q) {
    double pos = q * (n - 1);
    int lo = (int)floor(pos);
    int hi = lo + 1 < n ? lo + 1 : lo;
    return v[lo] + (v[hi] - v[lo]) * (pos - lo);
}

static double median_of(const double *samples, int n, double *scratch) {
    memcpy(scratch, samples, (size_t)n * sizeof *scratch);
    qsort(scratch, (size_t)n, sizeof *scratch, cmp_double);
    return quantile(scratch, n, 0.5);
}

void sg_timing_summarize(const double *samples, int n, sg_timing *t) {
    memset(t, 0, sizeof *t);
    if (n <= 0) return;
    double *v = sg_xmalloc((size_t)n * sizeof *v);
    memcpy(v, samples, (size_t)n * sizeof *v);
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    t->runs = n;
    t->min_ns = v[0];
    t->max_ns = v[n - 1];
    t->median_ns = quantile(v, n, 0.5);
    t->p25_ns = quantile(v, n, 0.25);
    t->p75_ns = quantile(v, n, 0.75);
    t->noise = t->median_ns > 0 ? (t->p75_ns - t->p25_ns) / (2 * t->median_ns) : 0;
    free(v);
}

int sg_timing_stable(const double *samples, int n, const sg_stability *s) {
    if (n >= s->max_runs) return 1;
    if (n < s->min_runs || n <= s->window) return 0;
    double *scratch = sg_xmalloc((size_t)n * sizeof *scratch);
    double all = median_of(samples, n, scratch);
    double before = median_of(samples, n - s->window, scratch);
    free(scratch);
    return all > 0 && fabs(all - before) / all <= s->tol;
}

sg_speedup sg_speedup_compare(const sg_timing *b, const sg_timing *c) {
    sg_speedup r = {0, 0, SG_CMP_SAME};
    if (!(b->median_ns > 0) || !(c->median_ns > 0)) return r;
    r.speedup = b->median_ns / c->median_ns;
    r.band = b->noise + c->noise;
    if (r.speedup > 1 + r.band)
        r.verdict = SG_CMP_FASTER;
    else if (r.speedup * (1 + r.band) < 1) /* symmetric: a band over 100% can still say slower */
        r.verdict = SG_CMP_SLOWER;
    return r;
}

const char *sg_cmp_name(sg_cmp c) {
    return c == SG_CMP_FASTER ? "faster" : c == SG_CMP_SLOWER ? "slower" : "no change";
}

void sg_mean_p95(const double *v, size_t n, double *mean, double *p95) {
    *mean = *p95 = 0;
    if (!n) return;
    double *w = sg_xmalloc(n * sizeof *w), sum = 0;
    memcpy(w, v, n * sizeof *w);
    qsort(w, n, sizeof *w, cmp_double);
    for (size_t i = 0; i < n; i++) sum += w[i];
    *mean = sum / (double)n;
    *p95 = w[(size_t)ceil(0.95 * (double)n) - 1];
    free(w);
}
