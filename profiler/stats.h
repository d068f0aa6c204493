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
 *     change" (the same factor either way, so a 12x slowdown with a 150% band is slower). */
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

void sg_stability_default(sg_stability *s);
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
