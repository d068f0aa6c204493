/* The checks of one candidate, run inside a worker: for every shape (check_sizes, then
 * the main sizes) fresh seeded inputs; the reference runs on its own buffers; the
 * candidate runs on buffers whose outputs and scratch are poisoned and which carry
 * random guard bytes on both sides; afterwards guards, inputs and outputs are checked. */
#include "validator/compare.h"
#include "validator/internal.h"
#include "validator/launch.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define GUARD 4096
#define POISON 0xFF /* NaN for floats, -1 for integers */
#define MAX_BYTES (4ULL << 30)

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
    sg_val_dev *d;
    const sg_val_task *t;
    const sg_val_sizes *s;
    sg_be_limits lim;
    unsigned char guard[GUARD];
    unsigned char **inputs; /* per task buffer: input data (NULL for outputs) */
} run_ctx;

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void dset_free(run_ctx *c, dset *ds) {
    for (int i = 0; i < ds->n; i++) {
        c->d->ops->free_mem(c->d->be, ds->b[i].mem);
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

/* Allocate and fill every task buffer and the plan's scratch. */
static int dset_make(run_ctx *c, const sg_val_plan *plan, dset *ds, sg_err *err) {
    const sg_val_task *t = c->t;
    ds->n = t->nbuf + plan->nscratch;
    ds->b = sg_xcalloc((size_t)ds->n + 1, sizeof *ds->b);
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
        size_t total = GUARD + b->bytes + GUARD;
        int rc = c->d->ops->alloc(c->d->be, total, &b->mem, err);
        if (rc < 0) return rc;
        unsigned char *img = sg_xmalloc(total);
        memcpy(img, c->guard, GUARD);
        if (b->tb && b->tb->role == SG_VAL_IN)
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

static void set_shape(sg_val_result *r, const sg_val_sizes *s) {
    sg_val_sizes_format(s, r->shape, sizeof r->shape);
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
        if (b->tb->role != SG_VAL_OUT) continue;
        sg_val_cmp cmp;
        int bad =
            sg_val_compare(b->tb, b->region + GUARD, ref->b[i].region + GUARD, b->count, &cmp);
        if (cmp.max_abs > r->max_abs) r->max_abs = cmp.max_abs;
        if (cmp.max_rel > r->max_rel) r->max_rel = cmp.max_rel;
        if (!bad) continue;
        char g[48], e[48];
        sg_val_format_value(b->type, cmp.got, g, sizeof g);
        sg_val_format_value(b->type, cmp.ref, e, sizeof e);
        r->first_bad = cmp.first_bad;
        r->max_abs = cmp.max_abs;
        r->max_rel = cmp.max_rel;
        snprintf(r->output, sizeof r->output, "%s", b->name);
        sg_val_result_set(
            r, SG_VAL_MISMATCH,
            "wrong result in output %s at shape %s: %zu of %zu elements differ; first at "
            "index %lld: got %s, expected %s (atol %g, rtol %g); max abs error %g, max "
            "rel error %g",
            b->name, r->shape, cmp.nbad, b->count, (long long)cmp.first_bad, g, e, b->tb->atol,
            b->tb->rtol, cmp.max_abs, cmp.max_rel);
        return -1;
    }
    return 0;
}

typedef sg_val_prepared prepared;

static char *read_text(const char *path, sg_err *err) {
    sg_buf b = {0};
    if (sg_buf_read_file(&b, path) < 0) {
        sg_errf(err, "cannot read %s", path);
        return NULL;
    }
    sg_buf_append(&b, "", 0);
    return sg_buf_steal(&b);
}

/* A kernel named in a launch line must appear in the source followed by '('. */
static int has_entry(const char *src, const char *name) {
    size_t n = strlen(name);
    for (const char *p = strstr(src, name); p; p = strstr(p + 1, name)) {
        int left_ok = p == src || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
        const char *q = p + n;
        while (*q == ' ' || *q == '\t' || *q == '\n') q++;
        if (left_ok && *q == '(') return 1;
    }
    return 0;
}

/* The //@ lines of a source, for a candidate that keeps the baseline's launch plan. */
static void plan_lines(const char *src, sg_buf *out) {
    for (const char *p = src; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p + 1) : strlen(p);
        const char *q = p;
        while (*q == ' ' || *q == '\t') q++;
        if (!strncmp(q, "//@", 3)) sg_buf_append(out, p, len);
        if (len && p[len - 1] != '\n' && !strncmp(q, "//@", 3)) sg_buf_append(out, "\n", 1);
        p += len;
    }
}

/* Source checks, plan, entry points, plan limits at every shape; fills r on failure. */
static int prepare(sg_val_dev *d, const sg_val_task *t, prepared *p, sg_val_result *r) {
    sg_err e;
    if (sg_val_check_source(p->src, strlen(p->src), d->lang, t->dir, &e) < 0) {
        sg_val_result_set(r, SG_VAL_REJECTED, "%s: %s", p->where, e.msg);
        return -1;
    }
    if (sg_val_plan_parse(p->src, t, p->where, &p->plan, &e) < 0) {
        sg_val_result_set(r, SG_VAL_REJECTED, "bad launch plan: %s", e.msg);
        return -1;
    }
    if (p->plan.nlaunch == 0) {
        sg_val_result_set(r, SG_VAL_REJECTED, "%s has no //@launch line (see docs/task-format.md)",
                          p->where);
        return -1;
    }
    for (int i = 0; i < p->plan.nlaunch; i++)
        if (!has_entry(p->src, p->plan.launch[i].kernel)) {
            sg_val_result_set(
                r, SG_VAL_COMPILE_ERROR,
                "missing entry point: %s:%d launches \"%s\" but the source defines no "
                "kernel of that name",
                p->where, p->plan.launch[i].line, p->plan.launch[i].kernel);
            return -1;
        }
    sg_be_limits lim;
    d->ops->limits(d->be, &lim);
    for (int k = 0; k <= t->ncheck; k++)
        for (int i = 0; i < p->plan.nlaunch; i++) {
            sg_val_dims dm;
            if (sg_val_launch_dims(&p->plan.launch[i], k < t->ncheck ? &t->check[k] : &t->sizes,
                                   &lim, p->where, &dm, &e) < 0) {
                sg_val_result_set(r, SG_VAL_REJECTED, "%s", e.msg);
                return -1;
            }
        }
    return 0;
}

static int compile(sg_val_dev *d, const sg_val_task *t, prepared *p, int *hit, char hash[33],
                   sg_val_result *r) {
    const char *names[64];
    int nk = p->plan.nlaunch < 64 ? p->plan.nlaunch : 64;
    for (int i = 0; i < nk; i++) names[i] = p->plan.launch[i].kernel;
    sg_buf log = {0};
    sg_err e;
    char opts[64];
    snprintf(opts, sizeof opts, "%s %s", sg_val_lang_name(d->lang), d->arch);
    int rc =
        sg_val_cache_get(d->cache, p->src, t->dir, names, nk, opts, &p->prog, hit, hash, &log, &e);
    if (rc < 0) {
        int launch = strstr(e.msg, "local memory") != NULL;
        sg_val_result_set(r, launch ? SG_VAL_LAUNCH_ERROR : SG_VAL_COMPILE_ERROR, "%s: %s",
                          p->where, e.msg);
        snprintf(r->detail, sizeof r->detail, "%s", log.data ? log.data : "");
    }
    sg_buf_free(&log);
    return rc;
}

/* Reference then candidate at one shape. 0: matched; -1: r filled; sticky passes through. */
static int check_shape(sg_val_dev *d, const sg_val_task *t, const sg_val_sizes *s, uint64_t seed,
                       prepared *cand, prepared *ref, sg_val_result *r) {
    run_ctx c = {.d = d, .t = t, .s = s};
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
    set_shape(r, s);
    for (int i = 0; i < t->nbuf && rc == 0; i++) {
        size_t n, bytes;
        if (t->buf[i].role != SG_VAL_IN) continue;
        if ((rc = count_of(t->buf[i].count, s, t->buf[i].type, t->buf[i].name, &n, &bytes, &e)) < 0)
            break;
        c.inputs[i] = sg_xmalloc(bytes + 1);
        sg_val_fill(&rng, &t->buf[i], c.inputs[i], n);
    }
    if (rc == 0) rc = dset_make(&c, &ref->plan, &rs, &e);
    if (rc == 0) rc = run_plan(&c, &ref->plan, ref->prog, &rs, ref->where, &e);
    if (rc == 0) rc = read_back(&c, &rs, &e);
    if (rc < 0) {
        sg_val_result_set(r, SG_VAL_LAUNCH_ERROR, "the reference failed at shape %s: %s", r->shape,
                          e.msg);
        goto out;
    }
    if ((rc = dset_make(&c, &cand->plan, &cs, &e)) == 0 &&
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

int sg_val_prepare_job(sg_val_dev *d, const sg_val_task *t, const sg_val_job *job, prepared *cand,
                       prepared *ref, sg_val_result *r) {
    sg_err e;
    const char *base = t->source[d->lang], *refp = t->reference[d->lang];
    if (!refp || !base) {
        sg_val_result_set(r, SG_VAL_REJECTED, "task %s has no %s %s", t->name,
                          sg_val_lang_name(d->lang), refp ? "baseline" : "reference");
        return -1;
    }
    if (!(ref->src = read_text(refp, &e))) {
        sg_val_result_set(r, SG_VAL_REJECTED, "%s", e.msg);
        return -1;
    }
    ref->where = refp;
    if (job->candidate) {
        cand->src = sg_xmalloc(job->candidate_len + 1);
        memcpy(cand->src, job->candidate, job->candidate_len);
        cand->src[job->candidate_len] = 0;
        if (job->candidate_len && !strstr(cand->src, "//@launch")) { /* keep the baseline's plan */
            char *bsrc = read_text(base, &e);
            sg_buf b = {0};
            if (bsrc) plan_lines(bsrc, &b);
            sg_buf_append_str(&b, cand->src);
            free(bsrc);
            free(cand->src);
            cand->src = sg_buf_steal(&b);
        }
        cand->where = job->candidate_name ? job->candidate_name : "candidate";
    } else {
        if (!(cand->src = read_text(base, &e))) {
            sg_val_result_set(r, SG_VAL_REJECTED, "%s", e.msg);
            return -1;
        }
        cand->where = base;
    }
    if (prepare(d, t, cand, r) < 0) return -1;
    if (prepare(d, t, ref, r) < 0) return -1;
    double t0 = now_ms();
    int hit = 0, rhit;
    char rhash[33];
    int rc = compile(d, t, cand, &hit, r->hash, r);
    r->cache_hit = hit;
    r->compile_ms = now_ms() - t0;
    if (rc < 0) return rc;
    return compile(d, t, ref, &rhit, rhash, r);
}

void sg_val_prepared_free(prepared *p) {
    free(p->src);
    sg_val_plan_free(&p->plan);
    memset(p, 0, sizeof *p);
}

static int do_check(sg_val_dev *d, const sg_val_task *t, const sg_val_job *job, prepared *cand,
                    prepared *ref, sg_val_result *r) {
    int rc = sg_val_prepare_job(d, t, job, cand, ref, r);
    if (rc < 0) return rc;
    if (d->opts.compile_only) {
        sg_val_result_set(r, SG_VAL_COMPILED,
                          "compiled for %s%s%s; nothing was run (--compile-only)",
                          sg_val_lang_name(d->lang), d->arch[0] ? " " : "", d->arch);
        return 0;
    }
    if (d->phase) d->phase(d->phase_arg, "run");
    double t0 = now_ms();
    for (int k = 0; k <= t->ncheck; k++) {
        const sg_val_sizes *s = k < t->ncheck ? &t->check[k] : &t->sizes;
        rc = check_shape(d, t, s, r->seed + (uint64_t)k * 0x9e3779b97f4a7c15ULL, cand, ref, r);
        r->checks_run = k + (rc == 0);
        if (rc < 0) return rc;
    }
    r->run_ms = now_ms() - t0;
    sg_val_result_set(r, SG_VAL_PASS,
                      "all %d checks passed (shapes: %d); max abs error %g, max rel error %g",
                      r->checks_run, t->ncheck + 1, r->max_abs, r->max_rel);
    return 0;
}

int sg_val_check(sg_val_dev *d, const sg_val_job *job, sg_val_result *r) {
    memset(r, 0, sizeof *r);
    r->first_bad = -1;
    r->seed = job->seed;
    sg_val_task t;
    sg_err e;
    if (sg_val_task_load(job->task_dir, &t, &e) < 0) {
        sg_val_result_set(r, SG_VAL_REJECTED, "%s", e.msg);
        return 0;
    }
    prepared cand = {0}, ref = {0};
    int rc = do_check(d, &t, job, &cand, &ref, r);
    free(cand.src);
    free(ref.src);
    sg_val_plan_free(&cand.plan);
    sg_val_plan_free(&ref.plan);
    sg_val_task_free(&t);
    return rc == SG_BE_STICKY ? SG_BE_STICKY : 0;
}
