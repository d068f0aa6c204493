/* Seeded random inputs: splitmix64, uniform / normal / randint / const per buffer. */
#include "validator/internal.h"

#include <math.h>

uint64_t sg_val_rng_next(sg_val_rng *r) {
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double unit(sg_val_rng *r) { return (double)(sg_val_rng_next(r) >> 11) * 0x1.0p-53; }

static double draw(sg_val_rng *r, const sg_val_buffer *b) {
    switch (b->init) {
    case SG_VAL_INIT_UNIFORM: return b->a + (b->b - b->a) * unit(r);
    case SG_VAL_INIT_NORMAL: {
        double u = unit(r), v = unit(r);
        return b->a + b->b * sqrt(-2.0 * log(u + 1e-300)) * cos(2.0 * M_PI * v);
    }
    case SG_VAL_INIT_RANDINT: {
        uint64_t span = (uint64_t)(b->b - b->a) + 1;
        return b->a + (double)(sg_val_rng_next(r) % span);
    }
    case SG_VAL_INIT_CONST: return b->a;
    }
    return 0;
}

void sg_val_fill(sg_val_rng *r, const sg_val_buffer *b, void *dst, size_t count) {
    for (size_t i = 0; i < count; i++) {
        double v = draw(r, b);
        switch (b->type) {
        case SG_VAL_F32: ((float *)dst)[i] = (float)v; break;
        case SG_VAL_F64: ((double *)dst)[i] = v; break;
        case SG_VAL_I32: ((int32_t *)dst)[i] = (int32_t)v; break;
        case SG_VAL_U32: ((uint32_t *)dst)[i] = (uint32_t)v; break;
        case SG_VAL_I64: ((int64_t *)dst)[i] = (int64_t)v; break;
        }
    }
}
