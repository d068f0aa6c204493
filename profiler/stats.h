/* stats.h — turning repeated kernel timings into a trustworthy number.
 *
 * Contract: pure arithmetic on samples (nanoseconds) the caller measured.
 *   - sg_timing_summarize: median, quartiles, min/max, and the noise band: the relative
 *     half-width of the interquartile range, (p75 - p25) / (2 * median).
 *   - sg_timing_stable: the stopping rule. After min_runs, the median of all samples
 *     and the median of all but the last `window` samples agree within tol; a run stops
 *     there, or at max_runs.
 *   - sg_speedup_compare: speedup = baseline median / candidate median; its band is the
 *     sum of the two relative bands; a speedup within [1 / (1 + band), 1 + band] is "no
 *     change" (the same factor either way, so a 12x slowdown with a 150% band is slower).
 *   - sg_race_check: racing (as F-Race / irace race configurations): the paired speedups
 *     base[i] / cand[i] of the runs so far (the two sides run back to back on the same input
 *     set) give a 99% t-interval for the speedup (on their logarithms); from race.min_runs
 *     pairs on, timing may stop once that interval lies wholly below the best speedup so
 *     far (clearly slower: it cannot become the best) or wholly above the target (clearly
 *     past it). Few pairs need a wide separation (t with 2 degrees of freedom is 9.9), so a
 *     close candidate is never stopped early. From race.tie_min_runs pairs on (<= 0: never;
 *     the profiler's default is the stability rule's min_runs), timing may also stop once
 *     the interval lies wholly below best * (1 + zone), zone being half the noise band
 *     that sg_speedup_compare would use on the samples so far (the band taken at most
 *     10%): the candidate cannot beat the best by more than the profiler can resolve, so
 *     timing it until stable could at most make it a tie (an indifference zone, as in
 *     ranking and selection; half, for the error of a band estimated from few runs). */
#ifndef SG_STATS_H
#define SG_STATS_H

#include <stddef.h>

typedef struct sg_timing {
    double median_ns, p25_ns, p75_ns, min_ns, max_ns;
    double noise; /* relative half-width of the IQR */
    int runs;
} sg_timing;

typedef struct sg_stability {
    int min_runs, max_runs, window;
    double tol; /* relative, e.g. 0.01 */
} sg_stability;

typedef enum { SG_CMP_SLOWER = -1, SG_CMP_SAME = 0, SG_CMP_FASTER = 1 } sg_cmp;

typedef struct sg_speedup {
    double speedup;
    double band; /* relative half-width */
    sg_cmp verdict;
} sg_speedup;

/* Racing: stop a candidate early once its speedup is clearly below the best so far or
 * clearly past the target (sg_race_check). */
typedef struct sg_race {
    int on;           /* 0: time until stable, as without racing */
    int min_runs;     /* paired runs before racing may stop (default 3) */
    int tie_min_runs; /* paired runs before the "not_better" stop (<= 0, the default: never) */
    double best;      /* speedup of the best kernel so far (0: none) */
    double target;    /* speedup that meets the task's target (0: none) */
} sg_race;

typedef enum {
    SG_RACE_GO = 0,
    SG_RACE_SLOWER,
    SG_RACE_PAST_TARGET,
    SG_RACE_NOT_BETTER
} sg_race_stop;

void sg_stability_default(sg_stability *s);
void sg_race_default(sg_race *r); /* on, min_runs 3, no best, no target, no tie stop */
/* The racing decision after n paired runs; *lo and *hi get the speedup's 99% interval
 * (0 and 0 below 2 pairs). base and cand are not modified. */
sg_race_stop sg_race_check(const double *base, const double *cand, int n, const sg_race *r,
                           double *lo, double *hi);
/* "", "slower", "past_target", "not_better". */
const char *sg_race_stop_name(sg_race_stop s);
/* Why a stop named n (sg_race_stop_name) ended the timing, in words ("clearly below the
 * best so far", ...) for the feedback and specgen profile; "" for any other name. */
const char *sg_race_stop_why(const char *n);
/* samples is not modified. n >= 1. */
void sg_timing_summarize(const double *samples, int n, sg_timing *out);
/* 1: stop measuring now (stable, or max_runs reached). */
int sg_timing_stable(const double *samples, int n, const sg_stability *s);
sg_speedup sg_speedup_compare(const sg_timing *baseline, const sg_timing *candidate);
/* Mean and 95th percentile (nearest rank) of n values (not modified); 0 and 0 when n is 0.
 * The pools' waits and the feedback latencies are summarised with it. */
void sg_mean_p95(const double *v, size_t n, double *mean, double *p95);
const char *sg_cmp_name(sg_cmp c);

#endif
