/* prom.h — the pieces of the Prometheus text format (0.0.4) every /metrics of specgen
 * writes with: a metric's HELP and TYPE lines, an escaped label value, a histogram with
 * fixed buckets, and specgen_build_info.
 *
 * Contract: names are the caller's (they must match [a-zA-Z_:][a-zA-Z0-9_:]*, and ours
 * use no ':'); label values are escaped here (backslash, quote, newline). A histogram's
 * bucket bounds are given once and must increase; observations are counted in every
 * bucket whose bound they do not exceed (the format's cumulative counts). */
#ifndef SG_PROM_H
#define SG_PROM_H

#include "common/buf.h"

#include <stdint.h>

/* # HELP name help / # TYPE name type */
void sg_prom_head(sg_buf *b, const char *name, const char *type, const char *help);
/* A label value, escaped (without the quotes around it). */
void sg_prom_label(sg_buf *b, const char *s);
/* specgen_build_info{version="...",commit="...",component="..."} 1 (commit left out when
 * unknown), with its HELP and TYPE. */
void sg_prom_build_info(sg_buf *b, const char *component);

enum { SG_PROM_MAX_BUCKETS = 16 };
typedef struct sg_prom_hist {
    int n;                               /* bounds given */
    double le[SG_PROM_MAX_BUCKETS];      /* upper bounds, increasing (+Inf is implicit) */
    uint64_t count[SG_PROM_MAX_BUCKETS]; /* cumulative: observations <= le[i] */
    uint64_t total;
    double sum;
} sg_prom_hist;

void sg_prom_hist_init(sg_prom_hist *h, const double *le, int n);
void sg_prom_hist_observe(sg_prom_hist *h, double v);
/* The histogram's lines (no HELP/TYPE): name_bucket{labels,le="..."} ... name_sum, name_count.
 * labels: "" or `role="validate"` (already escaped), put before le. */
void sg_prom_hist_write(sg_buf *b, const char *name, const char *labels, const sg_prom_hist *h);

#endif
