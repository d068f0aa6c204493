/* Output comparison in double: |got - ref| <= atol + rtol*|ref|. NaN never matches NaN,
 * and a non-finite value never matches, unless the buffer allows non-finite values: then
 * NaN matches NaN and inf the same inf. Tracks the max abs / rel error and the first
 * mismatching index. */
#include "validator/validator.h"

#include "validator/elem.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int sg_val_compare(const sg_val_buffer *b, const void *got, const void *ref, size_t n,
                   sg_val_cmp *c) {
    memset(c, 0, sizeof *c);
    c->first_bad = -1;
    for (size_t i = 0; i < n; i++) {
        double g = sg_val_elem_get(b->type, got, i), r = sg_val_elem_get(b->type, ref, i);
        int bad;
        double d;
        if (b->type == SG_VAL_I64) { /* exact in 64 bits, not via double */
            int64_t gi = ((const int64_t *)got)[i], ri = ((const int64_t *)ref)[i];
            d = gi == ri ? 0 : fabs(g - r) > 0 ? fabs(g - r) : 1;
            bad = d > b->atol + b->rtol * fabs(r);
        } else if (!isfinite(r) || !isfinite(g)) {
            int same = b->allow_nonfinite && (isnan(r) ? isnan(g) : g == r);
            d = same ? 0 : INFINITY;
            bad = !same;
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

int64_t sg_val_first_nonfinite(sg_val_type t, const void *p, size_t n) {
    if (!sg_val_type_is_float(t)) return -1;
    for (size_t i = 0; i < n; i++)
        if (!isfinite(sg_val_elem_get(t, p, i))) return (int64_t)i;
    return -1;
}

void sg_val_format_value(sg_val_type t, double v, char *out, size_t n) {
    if (sg_val_type_is_float(t))
        snprintf(out, n, "%.9g", v);
    else
        snprintf(out, n, "%.0f", v);
}
