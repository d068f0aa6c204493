/* report.h — what the report's files share (internal to results/): a plot area that maps
 * data to SVG coordinates, and the statements the charts read. */
#ifndef SG_RESULTS_REPORT_H
#define SG_RESULTS_REPORT_H

#include "results/internal.h"

/* A chart: width and height in px, the data ranges, and the margins around the plot. */
typedef struct sg_plot {
    FILE *out;
    double w, h, left, right, top, bottom;
    double x0, x1, y0, y1;
} sg_plot;

/* <svg> with a title (escaped) read by screen readers; close with sg_plot_end. */
void sg_plot_begin(sg_plot *p, const char *title);
void sg_plot_end(sg_plot *p);
double sg_plot_x(const sg_plot *p, double x);
double sg_plot_y(const sg_plot *p, double y);
/* Axes with about n ticks at round values; labels formatted with fmt (e.g. "%gs"). */
void sg_plot_axes(sg_plot *p, int nx, const char *xfmt, int ny, const char *yfmt);
/* A text label (escaped). anchor: start | middle | end. */
void sg_plot_text(sg_plot *p, double px, double py, const char *anchor, const char *cls,
                  const char *text);
/* A rectangle in data x and pixel y, with a tooltip (escaped; may be NULL). */
void sg_plot_bar(sg_plot *p, double x0, double x1, double py, double ph, const char *color,
                 const char *tip);

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
