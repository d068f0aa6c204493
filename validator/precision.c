/* Telling precision loss from a logic error in a mismatch. A kernel that accumulates in
 * bf16 (or f16) gives outputs that are finite, of the right sign and near the reference,
 * wrong by more than the rounding of one result, in a large share of the elements, with
 * few elements exact (every output carries the accumulated rounding), and more wrong the
 * longer the reduction: exact at a tiny shape, off at a larger one. A logic error (a wrong
 * index, a hard-coded size, a clamp, a missing factor) usually fails at the tiny shape
 * already, or leaves the other elements exact, or lands far from the reference. Only when every
 * one of these holds is the hint given; it says what it saw, so a person can judge it. */
#include "validator/validator.h"
#include "validator/elem.h"
#include "validator/internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The task's narrowest 16-bit float type (bf16 before f16), or -1. */
static int narrow_type(const sg_val_task *t) {
    int best = -1;
    for (int i = 0; i < t->nbuf; i++) {
        sg_val_type ty = t->buf[i].type;
        if (ty == SG_VAL_BF16) return SG_VAL_BF16;
        if (ty == SG_VAL_F16) best = SG_VAL_F16;
    }
    return best;
}

int sg_val_precision_hint(const sg_val_task *t, const sg_val_buffer *b, const void *got,
                          const void *ref, size_t n, int64_t n_passed, const char *passed_shape,
                          double passed_max_rel, char *out, size_t outn) {
    int nt = narrow_type(t);
    out[0] = 0;
    if (nt < 0 || !sg_val_type_is_float(b->type) || n_passed < 0 || (size_t)n_passed >= n || !n)
        return 0;
    size_t considered = 0, same_sign = 0, nbad = 0, exact = 0;
    sg_val_range og;
    sg_val_type_range(b->type, &og);
    double *rel = sg_xmalloc(n * sizeof *rel);
    for (size_t i = 0; i < n; i++) {
        double g = sg_val_elem_get(b->type, got, i), r = sg_val_elem_get(b->type, ref, i);
        if (!isfinite(g)) {
            free(rel);
            return 0; /* inf or NaN: not a rounding problem */
        }
        if (!isfinite(r) || fabs(r) <= b->atol) continue;
        considered++;
        same_sign += (g > 0) == (r > 0);
        double d = fabs(g - r);
        exact += d <= ldexp(fabs(r), -og.mbits); /* within one ulp of the output type */
        if (d > b->atol + b->rtol * fabs(r)) rel[nbad++] = d / fabs(r);
    }
    sg_val_range rg;
    sg_val_type_range((sg_val_type)nt, &rg);
    double ulp = ldexp(1, -rg.mbits); /* relative spacing at 1.0 */
    int fits = considered && nbad;
    double median = 0;
    if (fits) {
        qsort(rel, nbad, sizeof *rel, cmp_double);
        median = rel[nbad / 2];
        fits = same_sign * 100 >= considered * 95 && nbad * 10 >= considered &&
               exact * 4 < considered && median <= 0.5 && median >= 2 * ulp;
    }
    free(rel);
    if (!fits) return 0;
    const char *tn = sg_val_type_name((sg_val_type)nt);
    snprintf(out, outn,
             "This looks like precision loss, not a logic error: the values are finite, of the "
             "right sign and near the reference (median relative error %.2g where they differ, "
             "%.0f%% of the elements; one %s ulp is %.2g), and the error grows with the size "
             "(at %s it passed, max relative error %.2g). That is what accumulating in %s "
             "gives: accumulate in f32 (float) and round to %s once, at the end",
             median, 100.0 * (double)nbad / (double)considered, tn, ulp, passed_shape,
             passed_max_rel, tn, tn);
    return 1;
}
