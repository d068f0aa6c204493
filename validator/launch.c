/* Evaluating a launch-plan line at one shape, within the device's limits, and binding
 * argument names to device buffers and scalar values. */
#include "validator/validator.h"

#include "validator/elem.h"

#include <math.h>
#include <string.h>

#define MAX_THREADS (1ULL << 32) /* more work-items than this in one launch is absurd */

static int dim(const char *e, const sg_val_sizes *s, uint64_t *out, const char *where, int line,
               const char *key, int d, sg_err *err) {
    int64_t v = 1;
    sg_err e2;
    if (e && sg_val_expr_eval(e, s, &v, &e2) < 0)
        return sg_errf(err, "%s:%d: %s: %s", where, line, key, e2.msg);
    if (v < 1)
        return sg_errf(err, "%s:%d: %s[%d] = %lld at %s: must be at least 1", where, line, key, d,
                       (long long)v, "this shape");
    *out = (uint64_t)v;
    return 0;
}

int sg_val_launch_dims(const sg_val_launch *l, const sg_val_sizes *s, const sg_be_limits *lim,
                       const char *where, sg_val_dims *out, sg_err *err) {
    char shape[128];
    sg_val_sizes_format(s, shape, sizeof shape);
    uint64_t threads = 1, blk = 1;
    for (int d = 0; d < 3; d++) {
        if (dim(l->grid[d], s, &out->grid[d], where, l->line, "grid", d, err) < 0 ||
            dim(l->block[d], s, &out->block[d], where, l->line, "block", d, err) < 0)
            return sg_err_prefix(err, "launch plan (shape %s)", shape);
        if (out->grid[d] > lim->max_grid[d])
            return sg_errf(err,
                           "%s:%d: launch plan: grid dimension %d is %llu blocks at shape %s, over "
                           "the device limit of %llu",
                           where, l->line, d, (unsigned long long)out->grid[d], shape,
                           (unsigned long long)lim->max_grid[d]);
        blk *= out->block[d];
        if (blk > lim->max_block)
            return sg_errf(err,
                           "%s:%d: launch plan: a block of %llu threads at shape %s is over the "
                           "device limit of %llu",
                           where, l->line, (unsigned long long)blk, shape,
                           (unsigned long long)lim->max_block);
        if (__builtin_mul_overflow(threads, out->grid[d] * out->block[d], &threads) ||
            threads > MAX_THREADS)
            return sg_errf(err,
                           "%s:%d: launch plan: the grid at shape %s has more than %llu threads in "
                           "all (absurd)",
                           where, l->line, shape, MAX_THREADS);
    }
    int64_t sm = 0;
    sg_err e2;
    if (l->smem && sg_val_expr_eval(l->smem, s, &sm, &e2) < 0)
        return sg_errf(err, "%s:%d: smem: %s", where, l->line, e2.msg);
    if (sm < 0 || (uint64_t)sm > lim->max_smem)
        return sg_errf(err,
                       "%s:%d: launch plan: smem=%lld bytes at shape %s, the device allows 0..%llu",
                       where, l->line, (long long)sm, shape, (unsigned long long)lim->max_smem);
    out->smem = (uint64_t)sm;
    return 0;
}

int sg_val_scalar_arg(const sg_val_scalar *sc, const sg_val_sizes *s, sg_be_arg *a, sg_err *err) {
    double v = sc->literal;
    int64_t iv = (int64_t)v;
    sg_err e2;
    if (sc->expr) {
        if (sg_val_expr_eval(sc->expr, s, &iv, &e2) < 0)
            return sg_errf(err, "scalar %s: %s", sc->name, e2.msg);
        v = (double)iv;
    }
    memset(a, 0, sizeof *a);
    a->bytes = sg_val_type_size(sc->type);
    switch (sc->type) {
    case SG_VAL_F32: {
        float f = (float)v;
        memcpy(a->scalar, &f, 4);
        break;
    }
    case SG_VAL_F64: memcpy(a->scalar, &v, 8); break;
    case SG_VAL_I32:
    case SG_VAL_U32: {
        if (iv < INT32_MIN || iv > (int64_t)UINT32_MAX)
            return sg_errf(err, "scalar %s = %lld does not fit in 32 bits", sc->name,
                           (long long)iv);
        int32_t x = (int32_t)iv;
        memcpy(a->scalar, &x, 4);
        break;
    }
    case SG_VAL_I64: memcpy(a->scalar, &iv, 8); break;
    case SG_VAL_U8:
    case SG_VAL_I8: {
        if (iv < -128 || iv > 255)
            return sg_errf(err, "scalar %s = %lld does not fit in 8 bits", sc->name, (long long)iv);
        a->scalar[0] = (unsigned char)(iv & 0xff); /* -1 and 255: the same byte */
        break;
    }
    case SG_VAL_F16:
    case SG_VAL_BF16:
    case SG_VAL_FP8_E4M3:
    case SG_VAL_FP8_E5M2: sg_val_elem_set(sc->type, a->scalar, 0, v); break;
    }
    return 0;
}
