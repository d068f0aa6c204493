/* One check at one shape and one input distribution, inside a worker: fresh seeded
 * inputs (in and inout buffers); the reference runs on its own buffers, and a reference
 * that leaves NaN or inf where the task allows none makes the task invalid; the candidate
 * runs on buffers whose outputs and scratch are poisoned and which carry random guard
 * bytes on both sides; then guards, inputs and outputs (out and inout) are checked, in
 * that order. */
#include "validator/validator.h"
#include "validator/elem.h"
#include "validator/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GUARD 4096
#define POISON 0xFF /* NaN for floats, -1 for integers */
#define MAX_BYTES (4ULL << 30)
/* All scratch of one plan: past this a plan (many //@scratch lines) exhausts the device or,
 * on PoCL, the host, and the runtime aborts the worker instead of giving a verdict. */
#define MAX_SCRATCH (2ULL << 30)

typedef struct dbuf {
    const char *name;
    const sg_val_buffer *tb; /* NULL for scratch */
    sg_val_type type;
    size_t count, bytes;
    sg_be_mem *mem;
    unsigned char *region; /* host copy of the whole region after the run */
} dbuf;

typedef struct dset {
    int n;
    dbuf *b;
} dset;

typedef struct run_ctx {
    sg_dev *d;
    const sg_val_task *t;
    const sg_val_sizes *s;
    sg_be_limits lim;
    unsigned char guard[GUARD];
    unsigned char **inputs;     /* per task buffer: input data (NULL for outputs) */
    int dist;                   /* the input distribution's number */
    const sg_val_sizes *passed; /* the last shape that passed, or NULL */
    double passed_max_rel;      /* the max relative error over the checks that passed */
} run_ctx;

static void dset_free(run_ctx *c, dset *ds) {
    for (int i = 0; i < ds->n; i++) {
        if (ds->b[i].mem) c->d->ops->free_mem(c->d->be, ds->b[i].mem);
        free(ds->b[i].region);
    }
    free(ds->b);
    memset(ds, 0, sizeof *ds);
}

static int count_of(const char *expr, const sg_val_sizes *s, sg_val_type ty, const char *name,
                    size_t *count, size_t *bytes, sg_err *err) {
    int64_t n;
    sg_err e2;
    if (sg_val_expr_eval(expr, s, &n, &e2) < 0) return sg_errf(err, "buffer %s: %s", name, e2.msg);
    if (n < 0 || (uint64_t)n > MAX_BYTES / sg_val_type_size(ty))
        return sg_errf(err, "buffer %s: count %lld is negative or over %llu bytes", name,
                       (long long)n, MAX_BYTES);
    *count = (size_t)n;
    *bytes = (size_t)n * sg_val_type_size(ty);
    return 0;
}

/* Allocate and fill every task buffer and the plan's scratch. Every size is known and
 * the scratch limit checked before anything is allocated (filling 2 GiB took seconds). */
static int dset_make(run_ctx *c, const sg_val_plan *plan, dset *ds, sg_err *err) {
    const sg_val_task *t = c->t;
    ds->n = t->nbuf + plan->nscratch;
    ds->b = sg_xcalloc((size_t)ds->n + 1, sizeof *ds->b);
    uint64_t scratch = 0;
    for (int i = 0; i < ds->n; i++) {
        dbuf *b = &ds->b[i];
        const char *cnt;
        if (i < t->nbuf) {
            b->tb = &t->buf[i];
            b->name = b->tb->name;
            b->type = b->tb->type;
            cnt = b->tb->count;
        } else {
            const sg_val_scratch *sc = &plan->scratch[i - t->nbuf];
            b->name = sc->name;
            b->type = sc->type;
            cnt = sc->count;
        }
        if (count_of(cnt, c->s, b->type, b->name, &b->count, &b->bytes, err) < 0) return -1;
        if (!b->tb && (scratch += b->bytes) > MAX_SCRATCH)
            return sg_errf(
                err,
                "//@scratch %s: the plan's scratch buffers take %llu bytes at this shape, "
                "over the limit of %llu bytes (2 GiB) for all of them",
                b->name, (unsigned long long)scratch, MAX_SCRATCH);
    }
    for (int i = 0; i < ds->n; i++) {
        dbuf *b = &ds->b[i];
        size_t total = GUARD + b->bytes + GUARD;
        int rc = c->d->ops->alloc(c->d->be, total, &b->mem, err);
        if (rc < 0) return rc;
        unsigned char *img = sg_xmalloc(total);
        memcpy(img, c->guard, GUARD);
        if (b->tb && b->tb->role != SG_VAL_OUT)
            memcpy(img + GUARD, c->inputs[i], b->bytes);
        else
            memset(img + GUARD, POISON, b->bytes);
        memcpy(img + GUARD + b->bytes, c->guard, GUARD);
        rc = c->d->ops->write(c->d->be, b->mem, 0, img, total, err);
        free(img);
        if (rc < 0) return rc;
    }
    return 0;
}

static int bind(run_ctx *c, dset *ds, const char *name, sg_be_arg *a, sg_err *err) {
    for (int i = 0; i < ds->n; i++)
        if (!strcmp(ds->b[i].name, name)) {
            memset(a, 0, sizeof *a);
            a->mem = ds->b[i].mem;
            a->offset = GUARD;
            a->bytes = ds->b[i].bytes;
            return 0;
        }
    for (int i = 0; i < c->t->nscalar; i++)
        if (!strcmp(c->t->scalar[i].name, name))
            return sg_val_scalar_arg(&c->t->scalar[i], c->s, a, err);
    return sg_errf(err, "argument \"%s\" is not a buffer, scalar or scratch", name);
}

/* Launch every line of the plan, then wait. Returns 0, -1 (launch error), or sticky. */
static int run_plan(run_ctx *c, const sg_val_plan *plan, sg_be_prog *prog, dset *ds,
                    const char *where, sg_err *err) {
    for (int li = 0; li < plan->nlaunch; li++) {
        const sg_val_launch *l = &plan->launch[li];
        sg_val_dims dm;
        if (sg_val_launch_dims(l, c->s, &c->lim, where, &dm, err) < 0) return -1;
        int na = l->args ? l->narg : c->t->narg;
        char *const *names = l->args ? l->args : c->t->args;
        sg_be_arg args[64];
        if (na > 64) return sg_errf(err, "more than 64 arguments");
        for (int a = 0; a < na; a++)
            if (bind(c, ds, names[a], &args[a], err) < 0) return -1;
        int rc = c->d->ops->launch(c->d->be, prog, li, args, na, dm.grid, dm.block, dm.smem, err);
        if (rc < 0) return sg_err_prefix(err, "%s:%d: launch of %s", where, l->line, l->kernel), rc;
    }
    return c->d->ops->finish(c->d->be, err);
}

static int read_back(run_ctx *c, dset *ds, sg_err *err) {
    for (int i = 0; i < ds->n; i++) {
        dbuf *b = &ds->b[i];
        size_t total = GUARD + b->bytes + GUARD;
        b->region = sg_xmalloc(total);
        int rc = c->d->ops->read(c->d->be, b->mem, 0, b->region, total, err);
        if (rc < 0) return rc;
    }
    return 0;
}

/* "B=3 N=1001", with the inputs' distributions when the task runs several. */
static void set_shape(sg_val_result *r, const sg_val_task *t, const sg_val_sizes *s, int dist) {
    sg_val_sizes_format(s, r->shape, sizeof r->shape);
    if (sg_val_task_ndist(t) < 2) return;
    size_t n = strlen(r->shape);
    const char *sep = " with inputs ";
    for (int i = 0; i < t->nbuf; i++) {
        const sg_val_buffer *b = &t->buf[i];
        if (b->role == SG_VAL_OUT) continue;
        n += (size_t)snprintf(r->shape + n, n < sizeof r->shape ? sizeof r->shape - n : 0,
                              "%s%s=%s", sep, b->name, b->dist[dist % b->ndist].text);
        sep = ", ";
        if (n >= sizeof r->shape) break;
    }
}

/* A torch run (the reference engine, or the torch baseline) at this shape: inputs drawn by
 * the problem where their distribution is "model" (into c->inputs; only for the reference),
 * the others given; its outputs become a host-side set laid out as a device run's (guards
 * intact, inputs as given), so that verify() treats both alike. */
static int torch_run(run_ctx *c, uint64_t seed, sg_val_torch_mode mode, dset *ds, sg_err *err) {
    const sg_val_task *t = c->t;
    ds->n = t->nbuf;
    ds->b = sg_xcalloc((size_t)t->nbuf + 1, sizeof *ds->b);
    unsigned char **data = sg_xcalloc((size_t)t->nbuf + 1, sizeof *data);
    size_t *bytes = sg_xcalloc((size_t)t->nbuf + 1, sizeof *bytes);
    for (int i = 0; i < t->nbuf; i++) {
        dbuf *b = &ds->b[i];
        b->tb = &t->buf[i], b->name = b->tb->name, b->type = b->tb->type;
        count_of(b->tb->count, c->s, b->type, b->name, &b->count, &b->bytes, err);
        b->region = sg_xmalloc(GUARD + b->bytes + GUARD);
        memcpy(b->region, c->guard, GUARD);
        memcpy(b->region + GUARD + b->bytes, c->guard, GUARD);
        data[i] = b->tb->role == SG_VAL_IN ? c->inputs[i] : b->region + GUARD;
        bytes[i] = b->bytes;
    }
    int rc = sg_val_torch_run_set(c->d, t, c->s, c->dist, seed, mode, data, bytes, err);
    for (int i = 0; rc == 0 && i < t->nbuf; i++)
        if (t->buf[i].role == SG_VAL_IN) memcpy(ds->b[i].region + GUARD, c->inputs[i], bytes[i]);
    free(data);
    free(bytes);
    return rc;
}

/* The reference's outputs hold NaN or inf where the task allows none: the task is wrong
 * (a role, an input range), not the candidate. 0: all finite. */
static int reference_nonfinite(run_ctx *c, dset *ref, sg_val_result *r) {
    for (int i = 0; i < c->t->nbuf; i++) {
        dbuf *b = &ref->b[i];
        if (b->tb->role == SG_VAL_IN || b->tb->allow_nonfinite) continue;
        int64_t at = sg_val_first_nonfinite(b->type, b->region + GUARD, b->count);
        if (at < 0) continue;
        char v[48];
        sg_val_format_value(b->type, sg_val_elem_get(b->type, b->region + GUARD, (size_t)at), v,
                            sizeof v);
        snprintf(r->output, sizeof r->output, "%s", b->name);
        r->first_bad = at;
        const char *why =
            b->tb->role == SG_VAL_OUT
                ? "Outputs start poisoned (NaN): if the reference reads %s before writing it (an "
                  "accumulation such as y += ...), its role should be \"inout\"; if it leaves "
                  "elements unwritten, its count is too large; if non-finite values are "
                  "intended, set \"allow_nonfinite\": true on %s"
                : "The reference overflows or divides by zero on these inputs: narrow the "
                  "inputs' \"init\", or set \"allow_nonfinite\": true on %s if non-finite values "
                  "are intended%.0s";
        char hint[512];
        snprintf(hint, sizeof hint, why, b->name, b->name);
        sg_val_result_set(r, SG_VAL_REJECTED,
                          "the task is invalid: its reference wrote %s to %s %s at index %lld "
                          "(shape %s), and the task allows no NaN or inf there. %s",
                          v, b->tb->role == SG_VAL_OUT ? "output" : "inout buffer", b->name,
                          (long long)at, r->shape, hint);
        return -1;
    }
    return 0;
}

/* Guards, then inputs, then outputs against the reference's. 0: all good. */
static int verify(run_ctx *c, dset *cand, dset *ref, sg_val_result *r) {
    for (int i = 0; i < cand->n; i++) {
        dbuf *b = &cand->b[i];
        int front = memcmp(b->region, c->guard, GUARD) != 0;
        int back = memcmp(b->region + GUARD + b->bytes, c->guard, GUARD) != 0;
        if (front || back) {
            snprintf(r->output, sizeof r->output, "%s", b->name);
            sg_val_result_set(
                r, SG_VAL_OUT_OF_BOUNDS,
                "out-of-bounds write: the guard bytes %s buffer %s (%zu elements) were "
                "overwritten at shape %s",
                front ? "before" : "after", b->name, b->count, r->shape);
            return -1;
        }
    }
    for (int i = 0; i < c->t->nbuf; i++) {
        dbuf *b = &cand->b[i];
        if (b->tb->role != SG_VAL_IN || !memcmp(b->region + GUARD, c->inputs[i], b->bytes))
            continue;
        size_t k = 0, es = sg_val_type_size(b->type);
        while (k < b->count && !memcmp(b->region + GUARD + k * es, c->inputs[i] + k * es, es)) k++;
        r->first_bad = (int64_t)k;
        snprintf(r->output, sizeof r->output, "%s", b->name);
        sg_val_result_set(
            r, SG_VAL_INPUT_MODIFIED,
            "the kernel wrote to input buffer %s (first changed element %zu) at shape %s; "
            "inputs must stay unchanged",
            b->name, k, r->shape);
        return -1;
    }
    for (int i = 0; i < c->t->nbuf; i++) {
        dbuf *b = &cand->b[i];
        if (b->tb->role == SG_VAL_IN) continue;
        sg_val_cmp cmp;
        int bad =
            sg_val_compare(b->tb, b->region + GUARD, ref->b[i].region + GUARD, b->count, &cmp);
        if (cmp.max_abs > r->max_abs) r->max_abs = cmp.max_abs;
        if (cmp.max_rel > r->max_rel) r->max_rel = cmp.max_rel;
        if (!bad) continue;
        char *g = r->got, *e = r->expected;
        sg_val_format_value(b->type, cmp.got, g, sizeof r->got);
        sg_val_format_value(b->type, cmp.ref, e, sizeof r->expected);
        r->first_bad = cmp.first_bad;
        r->max_abs = cmp.max_abs;
        r->max_rel = cmp.max_rel;
        snprintf(r->output, sizeof r->output, "%s", b->name);
        int64_t n_passed = -1;
        char passed[128] = "";
        sg_err e2;
        if (c->passed && sg_val_expr_eval(b->tb->count, c->passed, &n_passed, &e2) < 0)
            n_passed = -1;
        if (c->passed) sg_val_sizes_format(c->passed, passed, sizeof passed);
        sg_val_precision_hint(c->t, b->tb, b->region + GUARD, ref->b[i].region + GUARD, b->count,
                              n_passed, passed, c->passed_max_rel, r->detail, sizeof r->detail);
        sg_val_result_set(
            r, SG_VAL_MISMATCH,
            "wrong result in output %s at shape %s: %zu of %zu elements differ; first at "
            "index %lld: got %s, expected %s (atol %g, rtol %g); max abs error %g, max "
            "rel error %g%s%s",
            b->name, r->shape, cmp.nbad, b->count, (long long)cmp.first_bad, g, e, b->tb->atol,
            b->tb->rtol, cmp.max_abs, cmp.max_rel, r->detail[0] ? ". " : "", r->detail);
        return -1;
    }
    return 0;
}

/* Reference then candidate at one shape. 0: matched; -1: r filled; sticky passes through. */
int sg_val_check_shape(sg_dev *d, const sg_val_task *t, const sg_val_sizes *s, int dist,
                       uint64_t seed, const sg_val_source *cand, const sg_val_source *ref,
                       const sg_val_sizes *passed, sg_val_result *r) {
    run_ctx c = {.d = d, .t = t, .s = s, .dist = dist, .passed = passed};
    c.passed_max_rel = r->max_rel;
    d->ops->limits(d->be, &c.lim);
    sg_val_rng rng = {seed};
    for (size_t i = 0; i < GUARD; i += 8) {
        uint64_t v = sg_val_rng_next(&rng);
        memcpy(c.guard + i, &v, 8);
    }
    c.inputs = sg_xcalloc((size_t)t->nbuf + 1, sizeof *c.inputs);
    dset rs = {0}, cs = {0};
    sg_err e;
    int rc = 0;
    set_shape(r, t, s, dist);
    for (int i = 0; i < t->nbuf && rc == 0; i++) {
        size_t n, bytes;
        if (t->buf[i].role == SG_VAL_OUT) continue;
        if ((rc = count_of(t->buf[i].count, s, t->buf[i].type, t->buf[i].name, &n, &bytes, &e)) < 0)
            break;
        c.inputs[i] = sg_xmalloc(bytes + 1);
        sg_val_fill(&rng, &t->buf[i], dist, s, c.inputs[i], n);
    }
    if (rc == 0 && ref->torch) {
        rc = torch_run(&c, seed, SG_VAL_TORCH_REF, &rs, &e);
    } else {
        if (rc == 0) rc = dset_make(&c, &ref->plan, &rs, &e);
        if (rc == 0) rc = run_plan(&c, &ref->plan, ref->prog, &rs, ref->where, &e);
        if (rc == 0) rc = read_back(&c, &rs, &e);
    }
    if (rc < 0) {
        sg_val_result_set(r, ref->torch ? SG_VAL_REJECTED : SG_VAL_LAUNCH_ERROR,
                          "the reference failed at shape %s: %s", r->shape, e.msg);
        goto out;
    }
    if ((rc = reference_nonfinite(&c, &rs, r)) < 0) goto out;
    if (cand->torch)
        rc = torch_run(&c, seed, cand->torch, &cs, &e);
    else if ((rc = dset_make(&c, &cand->plan, &cs, &e)) == 0 &&
             (rc = run_plan(&c, &cand->plan, cand->prog, &cs, cand->where, &e)) == 0)
        rc = read_back(&c, &cs, &e);
    if (rc < 0) {
        sg_val_result_set(r, rc == SG_BE_STICKY ? SG_VAL_CRASH : SG_VAL_LAUNCH_ERROR, "%s", e.msg);
        goto out;
    }
    rc = verify(&c, &cs, &rs, r);
out:
    dset_free(&c, &rs);
    dset_free(&c, &cs);
    for (int i = 0; i < t->nbuf; i++) free(c.inputs[i]);
    free(c.inputs);
    return rc;
}
