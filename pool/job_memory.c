/* How much device memory a job takes, from the task's buffers at its shapes (pool.h).
 * It mirrors what the workers allocate: validator/run.c (a reference set and a candidate
 * set of buffers, each with guards, plus each plan's scratch) and profiler/prof_worker.c
 * (inputs per input set, both sides' outputs and scratch, the cache-flush buffer). */
#include "pool/pool.h"

#include <stdio.h>

#define GUARD_BYTES (2 * 4096) /* guard bytes on both sides of every device buffer */

static int count_bytes(const char *what, const char *expr, sg_val_type ty, const sg_val_sizes *s,
                       uint64_t *out, sg_err *err) {
    int64_t n;
    sg_err e2;
    if (sg_val_expr_eval(expr, s, &n, &e2) < 0) return sg_errf(err, "%s: %s", what, e2.msg);
    if (n < 0) return sg_errf(err, "%s: count %lld is negative", what, (long long)n);
    uint64_t size = sg_val_type_size(ty);
    if ((uint64_t)n > (UINT64_MAX / 2 - GUARD_BYTES) / size)
        return sg_errf(err, "%s: count %lld is too large", what, (long long)n);
    *out = (uint64_t)n * size + GUARD_BYTES;
    return 0;
}

/* Bytes of the task's inputs and outputs, and of a plan's scratch, at shape s. */
static int shape_bytes(const sg_val_task *t, const sg_val_plan *plan, const sg_val_sizes *s,
                       uint64_t *in, uint64_t *outb, uint64_t *scratch, sg_err *err) {
    *in = *outb = *scratch = 0;
    char what[160];
    for (int i = 0; i < t->nbuf; i++) {
        uint64_t b;
        snprintf(what, sizeof what, "buffer %s", t->buf[i].name);
        if (count_bytes(what, t->buf[i].count, t->buf[i].type, s, &b, err) < 0) return -1;
        *(t->buf[i].role == SG_VAL_IN ? in : outb) += b;
    }
    for (int i = 0; plan && i < plan->nscratch; i++) {
        uint64_t b;
        snprintf(what, sizeof what, "//@scratch %s", plan->scratch[i].name);
        if (count_bytes(what, plan->scratch[i].count, plan->scratch[i].type, s, &b, err) < 0)
            return -1;
        *scratch += b;
    }
    return 0;
}

int sg_pool_job_memory(const sg_val_task *t, sg_pool_role kind, const sg_val_plan *candidate,
                       const sg_val_plan *other, int input_sets, uint64_t flush_bytes,
                       uint64_t *out, sg_err *err) {
    uint64_t in, outb, sc_cand, sc_other, best = 0;
    if (input_sets < 1) input_sets = 1;
    if (kind == SG_POOL_PROFILE) {
        if (shape_bytes(t, candidate, &t->sizes, &in, &outb, &sc_cand, err) < 0 ||
            shape_bytes(t, other, &t->sizes, &in, &outb, &sc_other, err) < 0)
            return -1;
        *out = (uint64_t)input_sets * in + 2 * outb + sc_cand + sc_other + flush_bytes;
        return 0;
    }
    for (int k = -1; k < t->ncheck; k++) { /* the main shape, then the check shapes */
        const sg_val_sizes *s = k < 0 ? &t->sizes : &t->check[k];
        if (shape_bytes(t, candidate, s, &in, &outb, &sc_cand, err) < 0 ||
            shape_bytes(t, other, s, &in, &outb, &sc_other, err) < 0)
            return -1;
        uint64_t b = 2 * (in + outb) + sc_cand + sc_other;
        if (b > best) best = b;
    }
    *out = best;
    return 0;
}
