/* Seeded random inputs: splitmix64; uniform / normal / randint / const / outliers /
 * special per buffer, stored in the buffer's type (validator/elem.h rounds). */
#include "validator/elem.h"
#include "validator/internal.h"

#include <math.h>

uint64_t sg_val_rng_next(sg_val_rng *r) {
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static double unit(sg_val_rng *r) { return (double)(sg_val_rng_next(r) >> 11) * 0x1.0p-53; }

static double normal(sg_val_rng *r, double mean, double sd) {
    double u = unit(r), v = unit(r);
    return mean + sd * sqrt(-2.0 * log(u + 1e-300)) * cos(2.0 * M_PI * v);
}

/* The values "special" mixes in: signed zeros, the subnormal extremes, the smallest normal
 * and the largest finite values of the type (integers: 0, ±1 and the type's extremes). */
static int specials(sg_val_type t, double *v) {
    sg_val_range g;
    sg_val_type_range(t, &g);
    if (sg_val_type_is_float(t)) {
        double s[] = {0.0,          -0.0,          g.min_sub, -g.min_sub, g.min_normal - g.min_sub,
                      g.min_normal, -g.min_normal, g.max,     -g.max,     g.max / 2,
                      -g.max / 2};
        for (int i = 0; i < 11; i++) v[i] = s[i];
        return 11;
    }
    double lo = -0x1p62, hi = 0x1p62; /* i64 */
    if (t == SG_VAL_I32) lo = -0x1p31, hi = 0x1p31 - 1;
    if (t == SG_VAL_U32) lo = 0, hi = 0x1p32 - 1;
    if (t == SG_VAL_U8) lo = 0, hi = 255;
    if (t == SG_VAL_I8) lo = -128, hi = 127;
    double s[] = {0, 1, lo == 0 ? 2 : -1, lo, hi};
    for (int i = 0; i < 5; i++) v[i] = s[i];
    return 5;
}

static double draw(sg_val_rng *r, const sg_val_dist *d, const double *sp, int nsp) {
    switch (d->kind) {
    case SG_VAL_INIT_UNIFORM: return d->a + (d->b - d->a) * unit(r);
    case SG_VAL_INIT_NORMAL: return normal(r, d->a, d->b);
    case SG_VAL_INIT_RANDINT: {
        uint64_t span = (uint64_t)(d->b - d->a) + 1;
        return d->a + (double)(sg_val_rng_next(r) % span);
    }
    case SG_VAL_INIT_CONST: return d->a;
    case SG_VAL_INIT_OUTLIERS: {
        double v = d->a + (d->b - d->a) * unit(r);
        return unit(r) < d->frac ? v * d->scale : v;
    }
    case SG_VAL_INIT_SPECIAL: { /* one value in four is special */
        uint64_t x = sg_val_rng_next(r);
        return x % 4 == 0 ? sp[(x >> 2) % (uint64_t)nsp] : normal(r, 0, 1);
    }
    case SG_VAL_INIT_MODEL: return 0; /* the reference engine draws these (torchref.c) */
    }
    return 0;
}

void sg_val_fill(sg_val_rng *r, const sg_val_buffer *b, int dist, const sg_val_sizes *s, void *dst,
                 size_t count) {
    sg_val_dist at;
    sg_err e;
    const sg_val_dist *d = &b->dist[dist % (b->ndist > 0 ? b->ndist : 1)];
    if (sg_val_dist_at(d, s, &at, &e) == 0) d = &at; /* the loader checked every shape */
    double sp[16];
    int nsp = specials(b->type, sp);
    for (size_t i = 0; i < count; i++) sg_val_elem_set(b->type, dst, i, draw(r, d, sp, nsp));
}
