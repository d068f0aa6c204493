/* Output comparison: |got - ref| <= atol + rtol*|ref|; NaN or Inf never matches a finite
 * reference. Tracks the max abs / rel error and the first mismatching index. */
#include "validator/compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static double at(sg_val_type t, const void *p, size_t i) {
    switch (t) {
    case SG_VAL_F32: return ((const float *)p)[i];
    case SG_VAL_F64: return ((const double *)p)[i];
    case SG_VAL_I32: return ((const int32_t *)p)[i];
    case SG_VAL_U32: return ((const uint32_t *)p)[i];
    case SG_VAL_I64: return (double)((const int64_t *)p)[i];
    }
    return 0;
}

int sg_val_compare(const sg_val_buffer *b, const void *got, const void *ref, size_t n,
                   sg_val_cmp *c) {
    memset(c, 0, sizeof *c);
    c->first_bad = -1;
    int is_int = b->type != SG_VAL_F32 && b->type != SG_VAL_F64;
    for (size_t i = 0; i < n; i++) {
        double g = at(b->type, got, i), r = at(b->type, ref, i);
        int bad;
        double d;
        if (is_int && b->type == SG_VAL_I64) { /* exact in 64 bits, not via double */
            int64_t gi = ((const int64_t *)got)[i], ri = ((const int64_t *)ref)[i];
            d = gi == ri ? 0 : fabs(g - r) > 0 ? fabs(g - r) : 1;
            bad = d > b->atol + b->rtol * fabs(r);
        } else if (!isfinite(r)) {
            d = (isnan(r) ? isnan(g) : g == r) ? 0 : INFINITY;
            bad = d != 0;
        } else if (!isfinite(g)) {
            d = INFINITY;
            bad = 1;
        } else {
            d = fabs(g - r);
            bad = d > b->atol + b->rtol * fabs(r);
        }
        double rel = d == 0 ? 0 : d / (fabs(r) > 1e-30 ? fabs(r) : 1e-30);
        if (d > c->max_abs || isnan(d)) c->max_abs = d;
        if (rel > c->max_rel) c->max_rel = rel;
        if (bad) {
            c->nbad++;
            if (c->first_bad < 0) {
                c->first_bad = (int64_t)i;
                c->got = g;
                c->ref = r;
            }
        }
    }
    return c->nbad ? -1 : 0;
}

void sg_val_format_value(sg_val_type t, double v, char *out, size_t n) {
    if (t == SG_VAL_F32 || t == SG_VAL_F64)
        snprintf(out, n, "%.9g", v);
    else
        snprintf(out, n, "%.0f", v);
}
