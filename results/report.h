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

/* The sections of the report (report_*.c). */
int sg_report_speedups(sg_results *r, int64_t campaign, FILE *out, sg_err *err);
int sg_report_best_over_time(sg_results *r, int64_t campaign, FILE *out, sg_err *err);
int sg_report_iterations(sg_results *r, int64_t campaign, FILE *out, sg_err *err);
int sg_report_pool(sg_results *r, int64_t campaign, FILE *out, sg_err *err);

#endif
