/* compare.h — comparing one output buffer against the reference (internal). */
#ifndef SG_VAL_COMPARE_H
#define SG_VAL_COMPARE_H

#include "validator/validator.h"

typedef struct sg_val_cmp {
    double max_abs, max_rel;
    int64_t first_bad; /* -1 when all match */
    size_t nbad;
    double got, ref; /* values at first_bad */
} sg_val_cmp;

/* 0 when every element matches within the buffer's tolerance, -1 otherwise. */
int sg_val_compare(const sg_val_buffer *b, const void *got, const void *ref, size_t n,
                   sg_val_cmp *c);
/* The first NaN or inf among n elements of type t, or -1 (always -1 for integers). */
int64_t sg_val_first_nonfinite(sg_val_type t, const void *p, size_t n);
void sg_val_format_value(sg_val_type t, double v, char *out, size_t n);

#endif
