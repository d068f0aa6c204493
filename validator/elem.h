/* elem.h — element types on the host (internal).
 *
 * Contract:
 *  - sg_val_elem_set stores a double as type t's bits: floats round to nearest even;
 *    f16 / bf16 / fp8_e5m2 overflow to ±inf (IEEE 754 style), fp8_e4m3 saturates to ±448
 *    (the OCP FP8 spec's "saturating" conversion: e4m3 has no inf); NaN stays NaN.
 *    Integers are truncated as C's casts do.
 *  - sg_val_elem_get reads element i back as a double (exact for every type but i64
 *    beyond 2^53).
 *  - sg_val_type_range gives a float type's limits (0s for integers).
 * sg_val_type_is_float is validator.h's. */
#ifndef SG_VAL_ELEM_H
#define SG_VAL_ELEM_H

#include "validator/validator.h"

#include <stddef.h>
#include <stdint.h>

typedef struct sg_val_range {
    int mbits;         /* explicit mantissa bits (f32: 23, bf16: 7, fp8_e4m3: 3) */
    double max;        /* largest finite value */
    double min_normal; /* smallest positive normal */
    double min_sub;    /* smallest positive subnormal */
    int has_inf;       /* 0 for fp8_e4m3 */
} sg_val_range;
void sg_val_type_range(sg_val_type t, sg_val_range *r);

double sg_val_elem_get(sg_val_type t, const void *p, size_t i);
void sg_val_elem_set(sg_val_type t, void *p, size_t i, double v);

/* The narrow float formats as bits, one value at a time (for tests and scalars). */
uint16_t sg_val_f16_bits(double v);
uint16_t sg_val_bf16_bits(double v);
uint8_t sg_val_e4m3_bits(double v);
uint8_t sg_val_e5m2_bits(double v);
double sg_val_f16_value(uint16_t b);
double sg_val_bf16_value(uint16_t b);
double sg_val_e4m3_value(uint8_t b);
double sg_val_e5m2_value(uint8_t b);

#endif
