/* report.h — what the report's files share (internal to results/): the statements the
 * charts read (the chart primitives, sg_plot, are public: results.h). */
#ifndef SG_RESULTS_REPORT_H
#define SG_RESULTS_REPORT_H

#include "results/internal.h"

/* A prepared statement with up to two int64 parameters (NULL after an error in err). */
sqlite3_stmt *sg_report_stmt(sg_results *r, const char *sql, int64_t a, int64_t b, sg_err *err);
/* Column i as a double (NAN when NULL) and as text ("" when NULL). */
double sg_col_d(sqlite3_stmt *st, int i);
const char *sg_col_t(sqlite3_stmt *st, int i);

/* The page's style and the charts' colours (report.c). */
extern const char *const sg_report_css;
extern const char *const sg_report_palette[10];
/* One row per campaign of ?1, a JSON array of ids (compare.c): campaign, kind,
 * configuration, seed, tasks, reached, best_speedup_mean, time_to_target_mean_s,
 * feedback_latency_mean_s, tokens, utilisation. */
extern const char *const sg_compare_sql;
/* ids as a JSON array (a new string). */
char *sg_results_ids_json(const int64_t *ids, int n);

/* fast_p's statement (fastp.c) over ?1, a JSON array of campaign ids: campaign, kind, suite,
 * problems, not_run, correct, one fast_P column per threshold, baseline, precision, check,
 * kb_checked (a new string). */
char *sg_results_fastp_sql(const double *p, int np, int kb);

/* The sections of the report (report_*.c). */
int sg_report_speedups(sg_results *r, int64_t campaign, FILE *out, sg_err *err);
int sg_report_best_over_time(sg_results *r, int64_t campaign, FILE *out, sg_err *err);
int sg_report_iterations(sg_results *r, int64_t campaign, FILE *out, sg_err *err);
int sg_report_pool(sg_results *r, int64_t campaign, FILE *out, sg_err *err);
int sg_report_fastp(sg_results *r, int64_t campaign, FILE *out, sg_err *err);

#endif
