/* Element types on the host: the narrow float formats encoded and decoded by one generic
 * routine over (exponent bits, mantissa bits), rounding to nearest even. */
#include "validator/elem.h"

#include <float.h>
#include <math.h>
#include <string.h>

typedef struct fmt {
    int ebits, mbits, bias;
    int ieee;      /* the all-ones exponent means inf / NaN (all but e4m3) */
    double max;    /* largest finite value */
    unsigned nan;  /* the NaN we write (sign bit clear) */
    unsigned maxb; /* max's bits (sign bit clear) */
} fmt;

static const fmt F16 = {5, 10, 15, 1, 65504.0, 0x7e00, 0x7bff};
static const fmt BF16 = {8, 7, 127, 1, 0x1.fep127, 0x7fc0, 0x7f7f};
/* OCP FP8: E4M3 uses the all-ones exponent for normals; only S.1111.111 is NaN. */
static const fmt E4M3 = {4, 3, 7, 0, 448.0, 0x7f, 0x7e};
static const fmt E5M2 = {5, 2, 15, 1, 57344.0, 0x7e, 0x7b};

static unsigned encode(const fmt *f, double v) {
    unsigned sign = signbit(v) ? 1u << (f->ebits + f->mbits) : 0;
    unsigned inf = ((1u << f->ebits) - 1) << f->mbits;
    if (isnan(v)) return f->nan;
    double a = fabs(v);
    if (isinf(a)) return sign | (f->ieee ? inf : f->maxb);
    if (a == 0) return sign;
    int emin = 1 - f->bias, e;
    if (a < ldexp(1, emin)) {
        e = emin;
    } else {
        frexp(a, &e);
        e -= 1;
    }
    double q = ldexp(1, e - f->mbits); /* the spacing of representable values near a */
    double r = nearbyint(a / q) * q;   /* round to nearest, ties to even */
    if (r > f->max) return sign | (f->ieee ? inf : f->maxb);
    if (r < ldexp(1, emin))
        return sign | (unsigned)(r / ldexp(1, emin - f->mbits)); /* subnormal (or zero) */
    frexp(r, &e);
    e -= 1;
    unsigned m = (unsigned)((r / ldexp(1, e) - 1) * ldexp(1, f->mbits));
    return sign | ((unsigned)(e + f->bias) << f->mbits) | m;
}

static double decode(const fmt *f, unsigned b) {
    unsigned mmask = (1u << f->mbits) - 1, emask = (1u << f->ebits) - 1;
    unsigned m = b & mmask, e = (b >> f->mbits) & emask;
    double s = (b >> (f->ebits + f->mbits)) & 1 ? -1 : 1;
    if (f->ieee && e == emask) return m ? NAN : s * INFINITY;
    if (!f->ieee && e == emask && m == mmask) return NAN;
    if (e == 0) return s * ldexp((double)m, 1 - f->bias - f->mbits);
    return s * ldexp(1 + (double)m / (mmask + 1), (int)e - f->bias);
}

uint16_t sg_val_f16_bits(double v) { return (uint16_t)encode(&F16, v); }
uint16_t sg_val_bf16_bits(double v) { return (uint16_t)encode(&BF16, v); }
uint8_t sg_val_e4m3_bits(double v) { return (uint8_t)encode(&E4M3, v); }
uint8_t sg_val_e5m2_bits(double v) { return (uint8_t)encode(&E5M2, v); }
double sg_val_f16_value(uint16_t b) { return decode(&F16, b); }
double sg_val_bf16_value(uint16_t b) { return decode(&BF16, b); }
double sg_val_e4m3_value(uint8_t b) { return decode(&E4M3, b); }
double sg_val_e5m2_value(uint8_t b) { return decode(&E5M2, b); }

int sg_val_type_is_float(sg_val_type t) {
    return t == SG_VAL_F32 || t == SG_VAL_F64 || t == SG_VAL_F16 || t == SG_VAL_BF16 ||
           t == SG_VAL_FP8_E4M3 || t == SG_VAL_FP8_E5M2;
}

static const fmt *narrow(sg_val_type t) {
    switch (t) {
    case SG_VAL_F16: return &F16;
    case SG_VAL_BF16: return &BF16;
    case SG_VAL_FP8_E4M3: return &E4M3;
    case SG_VAL_FP8_E5M2: return &E5M2;
    default: return NULL;
    }
}

void sg_val_type_range(sg_val_type t, sg_val_range *r) {
    memset(r, 0, sizeof *r);
    const fmt *f = narrow(t);
    if (f) {
        r->mbits = f->mbits;
        r->max = f->max;
        r->min_normal = ldexp(1, 1 - f->bias);
        r->min_sub = ldexp(1, 1 - f->bias - f->mbits);
        r->has_inf = f->ieee;
    } else if (t == SG_VAL_F32) {
        *r = (sg_val_range){23, FLT_MAX, FLT_MIN, 0x1p-149, 1};
    } else if (t == SG_VAL_F64) {
        *r = (sg_val_range){52, DBL_MAX, DBL_MIN, 0x1p-1074, 1};
    }
}

double sg_val_elem_get(sg_val_type t, const void *p, size_t i) {
    switch (t) {
    case SG_VAL_F32: return ((const float *)p)[i];
    case SG_VAL_F64: return ((const double *)p)[i];
    case SG_VAL_I32: return ((const int32_t *)p)[i];
    case SG_VAL_U32: return ((const uint32_t *)p)[i];
    case SG_VAL_I64: return (double)((const int64_t *)p)[i];
    case SG_VAL_F16:
    case SG_VAL_BF16: return decode(narrow(t), ((const uint16_t *)p)[i]);
    case SG_VAL_FP8_E4M3:
    case SG_VAL_FP8_E5M2: return decode(narrow(t), ((const uint8_t *)p)[i]);
    case SG_VAL_U8: return ((const uint8_t *)p)[i];
    case SG_VAL_I8: return ((const int8_t *)p)[i];
    }
    return 0;
}

/* 8-bit integers: toward zero, saturated to the type's range (so that an input
 * distribution wider than the type gives its extremes, not wrapped values). */
static double sat(double v, double lo, double hi) {
    v = trunc(v);
    return v != v ? 0 : v < lo ? lo : v > hi ? hi : v;
}

void sg_val_elem_set(sg_val_type t, void *p, size_t i, double v) {
    switch (t) {
    case SG_VAL_F32: ((float *)p)[i] = (float)v; break;
    case SG_VAL_F64: ((double *)p)[i] = v; break;
    case SG_VAL_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    case SG_VAL_U32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    case SG_VAL_I64: ((int64_t *)p)[i] = (int64_t)v; break;
    case SG_VAL_F16:
    case SG_VAL_BF16: ((uint16_t *)p)[i] = (uint16_t)encode(narrow(t), v); break;
    case SG_VAL_FP8_E4M3:
    case SG_VAL_FP8_E5M2: ((uint8_t *)p)[i] = (uint8_t)encode(narrow(t), v); break;
    case SG_VAL_U8: ((uint8_t *)p)[i] = (uint8_t)sat(v, 0, 255); break;
    case SG_VAL_I8: ((int8_t *)p)[i] = (int8_t)sat(v, -128, 127); break;
    }
}
