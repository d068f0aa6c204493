/* The profiler's job kind ("profile", device.h's job kinds), run inside a worker beside
 * validation: baseline and candidate compiled as validation does, then
 * timed interleaved over several input sets with the last-level cache flushed before
 * every run, until both medians are stable; then the candidate's outputs for every
 * input set are checked against the reference, so a kernel that remembers results
 * across launches is caught. Every buffer carries random guard bytes on both sides, as in
 * validation, and after the timing (and again after those checks) the guards and the
 * inputs are compared with what was written: a kernel that writes out of bounds or into
 * an input only when launched again, or only on other inputs, fails here. The reply
 * carries the raw samples; the parent summarizes. */
#include "profiler/peaks.h"
#include "profiler/stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POISON 0xFF               /* NaN for floats, -1 for integers */
#define GUARD 4096                /* bytes on each side of every buffer (validation's too) */
#define DEFAULT_LLC (32ULL << 20) /* when the device does not say */
#define MAX_FLUSH (1ULL << 30)    /* twice the largest last-level cache we expect */
#define GOLDEN 0x9e3779b97f4a7c15ULL

typedef struct prof_opts {
    int warmup, input_sets, flush;
    sg_stability stab;
    sg_race race;
    uint64_t seed;
} prof_opts;

/* One program's device buffers: outputs and scratch are shared by every input set (so a
 * kernel that keeps results in them sees them change under it); inputs come from the set. */
typedef struct side {
    sg_val_source p;
    int n; /* task buffers, then the plan's scratch */
    const char **name;
    sg_be_mem **mem; /* NULL for task inputs */
    size_t *bytes;
    double *samples;
    int nsamples;
} side;

typedef struct prof {
    sg_dev *d;
    const sg_val_task *t;
    const sg_val_sizes *s; /* the timing shape: the task's sizes, or cpu_sizes on a CPU */
    sg_be_limits lim;
    prof_opts o;
    int nsets;
    sg_be_mem ***in;          /* [set][task buffer]: inputs on the device (NULL for outputs) */
    unsigned char ***in_host; /* [set][task buffer]: what was written there (inout: what is
                                 written into the side's buffer before every run) */
    size_t *in_bytes;         /* [task buffer]: input payload bytes */
    unsigned char guard[GUARD];
    sg_be_mem *flush;
    size_t flush_bytes;
    sg_race_stop raced; /* why racing stopped the timing (SG_RACE_GO: it did not) */
    double race_lo, race_hi;
    unsigned char ***ref_out; /* torch task: [set][task buffer] the engine's outputs */
} prof;

static int buf_size(const char *expr, const sg_val_sizes *s, sg_val_type ty, const char *name,
                    size_t *count, size_t *bytes, sg_err *err) {
    int64_t n;
    sg_err e2;
    if (sg_val_expr_eval(expr, s, &n, &e2) < 0) return sg_errf(err, "buffer %s: %s", name, e2.msg);
    if (n < 0) return sg_errf(err, "buffer %s: negative count %lld", name, (long long)n);
    *count = (size_t)n;
    *bytes = (size_t)n * sg_val_type_size(ty);
    return 0;
}

/* A torch task's set k: the engine draws the "model" inputs (into in_host) and computes
 * the reference outputs (ref_out) from the set's inputs. */
static int torch_set(prof *p, int k, sg_err *err) {
    const sg_val_task *t = p->t;
    unsigned char **data = sg_xcalloc((size_t)t->nbuf + 1, sizeof *data);
    size_t *bytes = sg_xcalloc((size_t)t->nbuf + 1, sizeof *bytes);
    if (!p->ref_out) p->ref_out = sg_xcalloc((size_t)p->nsets, sizeof *p->ref_out);
    p->ref_out[k] = sg_xcalloc((size_t)t->nbuf + 1, sizeof **p->ref_out);
    for (int i = 0; i < t->nbuf; i++) {
        size_t n;
        if (buf_size(t->buf[i].count, p->s, t->buf[i].type, t->buf[i].name, &n, &bytes[i], err) < 0)
            break;
        if (t->buf[i].role == SG_VAL_IN)
            data[i] = p->in_host[k][i];
        else
            data[i] = p->ref_out[k][i] = sg_xmalloc(bytes[i] + 1);
    }
    int rc = sg_val_torch_run_set(p->d, t, p->s, k, p->o.seed + (uint64_t)k * GOLDEN,
                                  SG_VAL_TORCH_REF, data, bytes, err);
    free(data);
    free(bytes);
    return rc;
}

/* Fresh inputs for every set, from seed + k * golden. */
static int make_sets(prof *p, sg_err *err) {
    const sg_val_task *t = p->t;
    p->in = sg_xcalloc((size_t)p->nsets, sizeof *p->in);
    p->in_host = sg_xcalloc((size_t)p->nsets, sizeof *p->in_host);
    p->in_bytes = sg_xcalloc((size_t)t->nbuf + 1, sizeof *p->in_bytes);
    for (int k = 0; k < p->nsets; k++) {
        p->in[k] = sg_xcalloc((size_t)t->nbuf + 1, sizeof **p->in);
        p->in_host[k] = sg_xcalloc((size_t)t->nbuf + 1, sizeof **p->in_host);
        sg_val_rng rng = {p->o.seed + (uint64_t)k * GOLDEN};
        for (int i = 0; i < t->nbuf; i++) {
            if (t->buf[i].role == SG_VAL_OUT) continue;
            size_t n, bytes;
            if (buf_size(t->buf[i].count, p->s, t->buf[i].type, t->buf[i].name, &n, &bytes, err) <
                0)
                return -1;
            p->in_bytes[i] = bytes;
            p->in_host[k][i] = sg_xmalloc(bytes + 1);
            sg_val_fill(&rng, &t->buf[i], k, p->s, p->in_host[k][i], n); /* set k: distribution k */
        }
        if (t->torch_ref) {
            int rc = torch_set(p, k, err);
            if (rc < 0) return rc;
        }
        for (int i = 0; i < t->nbuf; i++) {
            if (t->buf[i].role != SG_VAL_IN) continue; /* inout lives in each side */
            size_t bytes = p->in_bytes[i];
            unsigned char *img = sg_xmalloc(GUARD + bytes + GUARD);
            memcpy(img, p->guard, GUARD);
            memcpy(img + GUARD, p->in_host[k][i], bytes);
            memcpy(img + GUARD + bytes, p->guard, GUARD);
            int rc = p->d->ops->alloc(p->d->be, GUARD + bytes + GUARD, &p->in[k][i], err);
            if (rc == 0)
                rc = p->d->ops->write(p->d->be, p->in[k][i], 0, img, GUARD + bytes + GUARD, err);
            free(img);
            if (rc < 0) return rc;
        }
    }
    return 0;
}

static int side_open(prof *p, side *s, sg_err *err) {
    const sg_val_task *t = p->t;
    s->n = t->nbuf + s->p.plan.nscratch;
    s->name = sg_xcalloc((size_t)s->n + 1, sizeof *s->name);
    s->mem = sg_xcalloc((size_t)s->n + 1, sizeof *s->mem);
    s->bytes = sg_xcalloc((size_t)s->n + 1, sizeof *s->bytes);
    s->samples = sg_xcalloc((size_t)p->o.stab.max_runs + 1, sizeof *s->samples);
    for (int i = 0; i < s->n; i++) {
        const char *cnt;
        sg_val_type ty;
        if (i < t->nbuf) {
            s->name[i] = t->buf[i].name;
            if (t->buf[i].role == SG_VAL_IN) continue;
            cnt = t->buf[i].count;
            ty = t->buf[i].type;
        } else {
            const sg_val_scratch *sc = &s->p.plan.scratch[i - t->nbuf];
            s->name[i] = sc->name;
            cnt = sc->count;
            ty = sc->type;
        }
        size_t n;
        if (buf_size(cnt, p->s, ty, s->name[i], &n, &s->bytes[i], err) < 0) return -1;
        size_t total = GUARD + s->bytes[i] + GUARD;
        int rc = p->d->ops->alloc(p->d->be, total, &s->mem[i], err);
        if (rc < 0) return rc;
        unsigned char *img = sg_xmalloc(total);
        memcpy(img, p->guard, GUARD);
        memset(img + GUARD, POISON, s->bytes[i]);
        memcpy(img + GUARD + s->bytes[i], p->guard, GUARD);
        rc = p->d->ops->write(p->d->be, s->mem[i], 0, img, total, err);
        free(img);
        if (rc < 0) return rc;
    }
    return 0;
}

static void side_close(prof *p, side *s) {
    for (int i = 0; i < s->n; i++) p->d->ops->free_mem(p->d->be, s->mem[i]);
    free(s->name);
    free(s->mem);
    free(s->bytes);
    free(s->samples);
    sg_val_source_free(&s->p);
}

static int bind(prof *p, side *s, int set, const char *name, sg_be_arg *a, sg_err *err) {
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->name[i], name)) {
            memset(a, 0, sizeof *a);
            a->mem = s->mem[i] ? s->mem[i] : p->in[set][i];
            a->offset = GUARD;
            a->bytes = s->mem[i] ? s->bytes[i] : p->in_bytes[i];
            return 0;
        }
    for (int i = 0; i < p->t->nscalar; i++)
        if (!strcmp(p->t->scalar[i].name, name))
            return sg_val_scalar_arg(&p->t->scalar[i], p->s, a, err);
    return sg_errf(err, "argument \"%s\" is not a buffer, scalar or scratch", name);
}

/* Enqueue every launch line of the side's plan on input set `set` (no wait). */
static int launch_all(prof *p, side *s, int set, sg_err *err) {
    const sg_val_plan *plan = &s->p.plan;
    for (int li = 0; li < plan->nlaunch; li++) {
        const sg_val_launch *l = &plan->launch[li];
        sg_val_dims dm;
        if (sg_val_launch_dims(l, p->s, &p->lim, s->p.where, &dm, err) < 0) return -1;
        int na = l->args ? l->narg : p->t->narg;
        char *const *names = l->args ? l->args : p->t->args;
        sg_be_arg args[64];
        if (na > 64) return sg_errf(err, "more than 64 arguments");
        for (int a = 0; a < na; a++)
            if (bind(p, s, set, names[a], &args[a], err) < 0) return -1;
        int rc =
            p->d->ops->launch(p->d->be, s->p.prog, li, args, na, dm.grid, dm.block, dm.smem, err);
        if (rc < 0)
            return sg_err_prefix(err, "%s:%d: launch of %s", s->p.where, l->line, l->kernel), rc;
    }
    return 0;
}

/* Inout buffers start every run from the input set's data (untimed). */
static int reset_inout(prof *p, side *s, int set, sg_err *err) {
    for (int i = 0; i < p->t->nbuf; i++) {
        if (p->t->buf[i].role != SG_VAL_INOUT) continue;
        int rc = p->d->ops->write(p->d->be, s->mem[i], GUARD, p->in_host[set][i], s->bytes[i], err);
        if (rc < 0) return rc;
    }
    return 0;
}

static int run_untimed(prof *p, side *s, int set, sg_err *err) {
    int rc = reset_inout(p, s, set, err);
    if (rc == 0) rc = launch_all(p, s, set, err);
    return rc < 0 ? rc : p->d->ops->finish(p->d->be, err);
}

/* Flush the last-level cache, then one timed run. */
static int run_timed(prof *p, side *s, int set, sg_err *err) {
    const sg_be_ops *ops = p->d->ops;
    int rc = reset_inout(p, s, set, err);
    if (rc == 0 && p->flush) rc = ops->fill(p->d->be, p->flush, p->flush_bytes, err);
    if (rc == 0) rc = ops->time_begin(p->d->be, err);
    if (rc == 0) rc = launch_all(p, s, set, err);
    double ns = 0;
    int rc2 = ops->time_end(p->d->be, &ns, rc < 0 ? NULL : err);
    if (rc == 0) rc = rc2;
    if (rc == 0) s->samples[s->nsamples++] = ns;
    return rc;
}

/* One step: each side once on input set `set`, in the given order; with the backend's
 * batched regions, one wait for the whole step instead of one per run. */
static int run_step(prof *p, side **sides, int nsides, int i, sg_err *err) {
    const sg_be_ops *ops = p->d->ops;
    int set = i % p->nsets;
    if (!ops->time_cut || !ops->time_end_runs || nsides > 16) {
        int rc = 0;
        for (int j = 0; j < nsides && rc == 0; j++)
            rc = run_timed(p, sides[(i + j) % nsides], set, err);
        return rc;
    }
    int rc = ops->time_begin(p->d->be, err);
    for (int j = 0; j < nsides && rc == 0; j++) {
        side *s = sides[(i + j) % nsides];
        rc = reset_inout(p, s, set, err);
        if (rc == 0 && p->flush) rc = ops->fill(p->d->be, p->flush, p->flush_bytes, err);
        if (rc == 0) rc = launch_all(p, s, set, err);
        if (rc == 0) rc = ops->time_cut(p->d->be, err);
    }
    double ns[16];
    int rc2 = ops->time_end_runs(p->d->be, ns, nsides, rc < 0 ? NULL : err);
    if (rc == 0) rc = rc2;
    for (int j = 0; j < nsides && rc == 0; j++) {
        side *s = sides[(i + j) % nsides];
        s->samples[s->nsamples++] = ns[j];
    }
    return rc;
}

/* The torch baseline's samples, from the engine (docs/kernelbench.md "Baseline"). */
static int time_torch(prof *p, side *s, sg_err *err) {
    int n = p->o.stab.max_runs < 30 ? p->o.stab.max_runs : 30;
    if (n < p->o.stab.min_runs) n = p->o.stab.min_runs;
    return sg_val_torch_time(p->d, p->t, p->s, s->p.torch, p->o.seed, p->o.warmup, n,
                             p->flush_bytes, s->samples, &s->nsamples, err);
}

/* Interleaved timing: each step times both sides on the same input set, the order of the
 * two alternating; the sets rotate. Stops when every side's median is stable. A torch
 * baseline is timed by the engine first, then the candidate alone. */
static int time_all(prof *p, side **sides, int nsides, sg_err *err) {
    int rc = 0;
    if (sides[0]->p.torch) {
        if ((rc = time_torch(p, sides[0], err)) < 0 || nsides < 2) return rc;
        sides++, nsides--;
    }
    for (int w = 0; w < p->o.warmup && rc == 0; w++)
        for (int j = 0; j < nsides && rc == 0; j++)
            rc = run_untimed(p, sides[j], w % p->nsets, err);
    for (int i = 0; rc == 0; i++) {
        int set = i % p->nsets;
        if ((rc = run_step(p, sides, nsides, i, err)) < 0) break;
        if (nsides == 2 &&
            (p->raced = sg_race_check(sides[0]->samples, sides[1]->samples, sides[1]->nsamples,
                                      &p->o.race, &p->race_lo, &p->race_hi)) != SG_RACE_GO)
            break;
        int stable = 1;
        for (int j = 0; j < nsides; j++)
            stable &= sg_timing_stable(sides[j]->samples, sides[j]->nsamples, &p->o.stab);
        if (stable) break;
        if (set == p->nsets - 1 && p->d->phase) p->d->phase(p->d->phase_arg, "run"); /* a batch */
    }
    return rc;
}

static int read_outputs(prof *p, side *s, unsigned char **out, sg_err *err) {
    for (int i = 0; i < p->t->nbuf; i++) {
        if (p->t->buf[i].role == SG_VAL_IN) continue;
        out[i] = sg_xmalloc(s->bytes[i] + 1);
        int rc = p->d->ops->read(p->d->be, s->mem[i], GUARD, out[i], s->bytes[i], err);
        if (rc < 0) return rc;
    }
    return 0;
}

/* One buffer's whole region: 1 when a guard was overwritten (front says which side). */
static int guards_broken(prof *p, sg_be_mem *m, size_t bytes, unsigned char *img, int *front,
                         sg_err *err) {
    int rc = p->d->ops->read(p->d->be, m, 0, img, GUARD + bytes + GUARD, err);
    if (rc < 0) return rc;
    *front = memcmp(img, p->guard, GUARD) != 0;
    return *front || memcmp(img + GUARD + bytes, p->guard, GUARD) != 0;
}

/* As validation checks after a run: the guards around the candidate's outputs and
 * scratch and around every input set, then the inputs' contents. 0: intact; 1: r filled
 * (out_of_bounds or input_modified); when says at which point of the job. */
static int check_memory(prof *p, side *s, const char *when, sg_val_result *r, sg_err *err) {
    const sg_val_task *t = p->t;
    char shape[96];
    sg_val_sizes_format(p->s, shape, sizeof shape);
    snprintf(r->shape, sizeof r->shape, "%s", shape);
    int rc = 0, front = 0;
    for (int k = -1; k < p->nsets && rc == 0; k++) /* k = -1: the side's own buffers */
        for (int i = 0; i < (k < 0 ? s->n : t->nbuf) && rc == 0; i++) {
            sg_be_mem *m = k < 0 ? s->mem[i] : p->in[k][i];
            size_t bytes = k < 0 ? s->bytes[i] : p->in_bytes[i];
            if (!m) continue;
            unsigned char *img = sg_xmalloc(GUARD + bytes + GUARD);
            rc = guards_broken(p, m, bytes, img, &front, err);
            if (rc == 1) {
                snprintf(r->output, sizeof r->output, "%s", k < 0 ? s->name[i] : t->buf[i].name);
                sg_val_result_set(r, SG_VAL_OUT_OF_BOUNDS,
                                  "out-of-bounds write %s: the guard bytes %s buffer %s were "
                                  "overwritten at shape %s",
                                  when, front ? "before" : "after", r->output, shape);
            } else if (rc == 0 && k >= 0 && memcmp(img + GUARD, p->in_host[k][i], bytes)) {
                size_t e = 0, es = sg_val_type_size(t->buf[i].type);
                while (!memcmp(img + GUARD + e * es, p->in_host[k][i] + e * es, es)) e++;
                snprintf(r->output, sizeof r->output, "%s", t->buf[i].name);
                r->first_bad = (int64_t)e;
                sg_val_result_set(r, SG_VAL_INPUT_MODIFIED,
                                  "the kernel wrote to input buffer %s (input set %d, first "
                                  "changed element %zu) at shape %s %s; inputs must stay unchanged",
                                  t->buf[i].name, k + 1, e, shape, when);
                rc = 1;
            }
            free(img);
        }
    return rc;
}

/* After timing: the candidate on every input set, its buffers as the timing left them,
 * against the reference on the same set. 0: all matched; 1: r filled with a mismatch. */
static int verify_sets(prof *p, side *cand, side *ref, sg_val_result *r, sg_err *err) {
    const sg_val_task *t = p->t;
    int rc = 0, bad = 0;
    for (int k = 0; k < p->nsets && rc == 0 && !bad; k++) {
        unsigned char **got = sg_xcalloc((size_t)t->nbuf + 1, sizeof *got);
        unsigned char **want = sg_xcalloc((size_t)t->nbuf + 1, sizeof *want);
        if (p->ref_out) {
            for (int i = 0; i < t->nbuf; i++)
                if (p->ref_out[k][i]) want[i] = p->ref_out[k][i], p->ref_out[k][i] = NULL;
        } else if ((rc = run_untimed(p, ref, k, err)) == 0) {
            rc = read_outputs(p, ref, want, err);
        }
        if (rc == 0 && (rc = run_untimed(p, cand, k, err)) == 0)
            rc = read_outputs(p, cand, got, err);
        for (int i = 0; rc == 0 && !bad && i < t->nbuf; i++) {
            if (t->buf[i].role == SG_VAL_IN) continue;
            sg_val_cmp c;
            size_t n = cand->bytes[i] / sg_val_type_size(t->buf[i].type);
            if (sg_val_compare(&t->buf[i], got[i], want[i], n, &c) == 0) continue;
            bad = 1;
            char g[48], e[48], shape[96];
            sg_val_format_value(t->buf[i].type, c.got, g, sizeof g);
            sg_val_format_value(t->buf[i].type, c.ref, e, sizeof e);
            sg_val_sizes_format(p->s, shape, sizeof shape);
            snprintf(r->output, sizeof r->output, "%s", t->buf[i].name);
            snprintf(r->shape, sizeof r->shape, "%s", shape);
            r->first_bad = c.first_bad;
            r->max_abs = c.max_abs;
            r->max_rel = c.max_rel;
            sg_val_result_set(
                r, SG_VAL_MISMATCH,
                "wrong result after timing: on input set %d of %d, output %s at shape %s has %zu "
                "of %zu elements wrong; first at index %lld: got %s, expected %s. It passed "
                "validation, so it depends on what earlier launches left behind (a kernel that "
                "reuses remembered results gives stale answers when the inputs change)",
                k + 1, p->nsets, t->buf[i].name, shape, c.nbad, n, (long long)c.first_bad, g, e);
        }
        for (int i = 0; i < t->nbuf; i++) {
            free(got[i]);
            free(want[i]);
        }
        free(got);
        free(want);
    }
    return rc < 0 ? rc : bad;
}

static json_t *facts_json(prof *p, side *s) {
    json_t *arr = json_array();
    if (!p->d->ops->facts) return arr;
    for (int li = 0; li < s->p.plan.nlaunch; li++) {
        const sg_val_launch *l = &s->p.plan.launch[li];
        sg_val_dims dm;
        sg_be_facts f;
        sg_err e;
        if (sg_val_launch_dims(l, p->s, &p->lim, s->p.where, &dm, &e) < 0 ||
            p->d->ops->facts(p->d->be, s->p.prog, li, dm.block, dm.smem, &f, &e) < 0)
            continue;
        json_array_append_new(
            arr, json_pack("{s:s, s:I, s:I, s:I, s:I, s:i, s:f, s:s, s:I}", "kernel", l->kernel,
                           "wg_limit", (json_int_t)f.wg_limit, "private_bytes",
                           (json_int_t)f.private_bytes, "local_bytes", (json_int_t)f.local_bytes,
                           "shared_bytes", (json_int_t)f.shared_bytes, "registers", f.registers,
                           "occupancy", f.occupancy, "limiter", f.limiter ? f.limiter : "", "block",
                           (json_int_t)(dm.block[0] * dm.block[1] * dm.block[2])));
    }
    return arr;
}

/* One run of the candidate under the backend's metrics collector, when it has one.
 * Returns SG_BE_STICKY when the context was lost meanwhile (the worker must go, or the
 * next job would be blamed for it), else 0: metrics failing is not the candidate's fault. */
static int metrics_line(prof *p, side *s, char *out, size_t n) {
    const sg_be_ops *ops = p->d->ops;
    sg_err e;
    if (!ops->metrics_begin) {
        snprintf(out, n, "metrics unavailable: the %s backend has no hardware counter access",
                 ops->name);
        return 0;
    }
    int rc = ops->metrics_begin(p->d->be, &e);
    if (rc < 0) {
        snprintf(out, n, "%s", e.msg);
        return rc == SG_BE_STICKY ? rc : 0;
    }
    rc = launch_all(p, s, 0, &e);
    int rc2 = ops->metrics_end(p->d->be, out, n, rc < 0 ? NULL : &e);
    if (rc2 < 0 || rc < 0) snprintf(out, n, "metrics unavailable: %s", e.msg);
    return rc == SG_BE_STICKY || rc2 == SG_BE_STICKY ? SG_BE_STICKY : 0;
}

/* The roofline inputs when the task declares bytes and flops (at the timing shape) and
 * the device's peaks are known; NULL otherwise. The arithmetic peak is the one for the
 * task's kind of arithmetic on this device (profiler/peaks.h), named in "peak". */
static int roofline(prof *p, json_t **out, sg_err *err) {
    *out = NULL;
    double bytes = -1, flops = -1;
    if (sg_val_task_roofline(p->t, p->s, &bytes, &flops, err) < 0)
        return sg_err_prefix(err, "%s/task.json", p->t->dir);
    if (bytes < 0 || flops < 0 || !p->d->ops->peaks) return 0;
    sg_err e2;
    sg_be_peaks dev;
    if (p->d->ops->peaks(p->d->be, &dev, &e2) < 0) return 0; /* no peaks: no roofline */
    sg_peak_choice c;
    sg_peaks_choose(&dev, p->t, bytes, flops, &c);
    *out = json_pack("{s:f, s:f, s:f, s:f, s:s, s:s, s:s}", "bytes", bytes, "flops", flops,
                     "peak_gbs", c.gbs, "peak_gflops", c.gflops, "peak", c.label, "bw_source",
                     c.bw_source, "compute", sg_val_compute_name(c.compute));
    return 0;
}

static json_t *samples_json(const side *s) {
    json_t *a = json_array();
    for (int i = 0; s && i < s->nsamples; i++) json_array_append_new(a, json_real(s->samples[i]));
    return a;
}

static void opts_from(const json_t *req, prof_opts *o) {
    json_t *v;
    o->warmup = (v = json_object_get(req, "warmup")) ? (int)json_integer_value(v) : 2;
    o->input_sets = (v = json_object_get(req, "input_sets")) ? (int)json_integer_value(v) : 3;
    o->flush = (v = json_object_get(req, "flush")) ? json_is_true(v) : 1;
    sg_stability_default(&o->stab);
    if ((v = json_object_get(req, "min_runs"))) o->stab.min_runs = (int)json_integer_value(v);
    if ((v = json_object_get(req, "max_runs"))) o->stab.max_runs = (int)json_integer_value(v);
    if ((v = json_object_get(req, "window"))) o->stab.window = (int)json_integer_value(v);
    if ((v = json_object_get(req, "tol"))) o->stab.tol = json_number_value(v);
    sg_race_default(&o->race);
    o->race.on = 0; /* a request without "race" times until stable */
    json_t *r = json_object_get(req, "race");
    if (json_is_object(r)) {
        o->race.on = 1;
        if ((v = json_object_get(r, "min_runs"))) o->race.min_runs = (int)json_integer_value(v);
        if ((v = json_object_get(r, "best"))) o->race.best = json_number_value(v);
        if ((v = json_object_get(r, "target"))) o->race.target = json_number_value(v);
        /* absent (an older parent): from the stability minimum, as sg_prof_opts_default */
        o->race.tie_min_runs = (v = json_object_get(r, "tie_min_runs")) ? (int)json_integer_value(v)
                                                                        : o->stab.min_runs;
    }
    if (o->race.min_runs < 2) o->race.min_runs = 2;
    if (o->input_sets < 1) o->input_sets = 1;
    if (o->warmup < 0) o->warmup = 0;
    if (o->stab.max_runs < 1) o->stab.max_runs = 1;
}

static json_t *fail_reply(const sg_val_result *r) {
    return json_pack("{s:s, s:s, s:s}", "error", r->message, "verdict",
                     sg_val_verdict_name(r->verdict), "detail", r->detail);
}

/* The flush writes the last-level cache's size on a CPU device (one pass over as many
 * lines as the cache holds replaces them all under LRU; every byte more is paid per timed
 * run as a memset, PoCL's fill being one thread's loop) and twice the L2 on a GPU (a device
 * memset there is well under a millisecond either way, and twice is safe against a
 * non-LRU policy). */
static size_t flush_size(uint64_t llc, int cpu) {
    uint64_t n = (cpu ? 1 : 2) * (llc ? llc : DEFAULT_LLC);
    return (size_t)(n > MAX_FLUSH ? MAX_FLUSH : n);
}

/* Why racing stopped the timing, for the reply: the interval, the bar it cleared and the
 * runs per side the stability rule's minimum would still have asked for (a lower bound). */
static json_t *race_json(const prof *p, const side *base) {
    int saved = p->o.stab.min_runs > base->nsamples ? p->o.stab.min_runs - base->nsamples : 0;
    return json_pack("{s:s, s:f, s:f, s:f, s:i}", "stop", sg_race_stop_name(p->raced), "lo",
                     p->race_lo, "hi", p->race_hi, "bar",
                     p->raced == SG_RACE_PAST_TARGET ? p->o.race.target : p->o.race.best,
                     "saved_runs", saved);
}

/* The input sets (device and host copies) and a torch task's reference outputs. */
static void free_sets(prof *p) {
    sg_dev *d = p->d;
    if (p->in)
        for (int k = 0; k < p->nsets; k++) {
            for (int i = 0; p->in[k] && i < p->t->nbuf; i++) {
                d->ops->free_mem(d->be, p->in[k][i]);
                if (p->in_host[k]) free(p->in_host[k][i]);
            }
            free(p->in[k]);
            free(p->in_host[k]);
        }
    for (int k = 0; p->ref_out && k < p->nsets; k++) {
        for (int i = 0; p->ref_out[k] && i < p->t->nbuf; i++) free(p->ref_out[k][i]);
        free(p->ref_out[k]);
    }
    free(p->ref_out);
    p->ref_out = NULL;
    free(p->in);
    free(p->in_host);
    free(p->in_bytes);
    p->in = NULL;
    p->in_host = NULL;
    p->in_bytes = NULL;
}

/* Compile, time, verify. Returns 0 or SG_BE_STICKY; *reply always set. */
static int profile(prof *p, const sg_val_job *job, json_t **reply) {
    sg_dev *d = p->d;
    sg_val_result r;
    memset(&r, 0, sizeof r);
    sg_err e = {0};
    side base = {0}, cand = {0}, ref = {0}, ref2 = {0};
    sg_val_job bj = *job;
    bj.candidate = NULL;
    int have_cand = job->candidate != NULL, rc;
    if ((rc = sg_val_prepare_job(d, p->t, &bj, &base.p, &ref.p, &r)) < 0 ||
        (have_cand && (rc = sg_val_prepare_job(d, p->t, job, &cand.p, &ref2.p, &r)) < 0)) {
        *reply = fail_reply(&r);
        goto out;
    }
    if (!d->ops->time_begin || !d->ops->time_end) {
        *reply = json_pack("{s:s}", "error", "this backend cannot time kernels");
        goto out;
    }
    if (d->phase) d->phase(d->phase_arg, "run");
    d->ops->limits(d->be, &p->lim);
    p->s = sg_val_main_sizes(p->t, p->lim.cpu);
    if (p->o.flush && d->ops->fill) {
        uint64_t llc = d->ops->llc_bytes ? d->ops->llc_bytes(d->be) : 0;
        p->flush_bytes = flush_size(llc, p->lim.cpu);
        if ((rc = d->ops->alloc(d->be, p->flush_bytes, &p->flush, &e)) < 0) goto fail;
    }
    sg_val_rng grng = {p->o.seed ^ 0x6775617264ULL}; /* "guard" */
    for (size_t i = 0; i < GUARD; i += 8) {
        uint64_t v = sg_val_rng_next(&grng);
        memcpy(p->guard + i, &v, 8);
    }
    side *sides[2] = {&base, &cand};
    int nsides = have_cand ? 2 : 1;
    if ((rc = make_sets(p, &e)) < 0 || (rc = side_open(p, &base, &e)) < 0 ||
        (have_cand && (rc = side_open(p, &cand, &e)) < 0) || (rc = side_open(p, &ref, &e)) < 0)
        goto fail;
    json_t *roof = NULL; /* first: a bad bytes/flops field should not wait for the timing */
    if ((rc = roofline(p, &roof, &e)) < 0 || (rc = time_all(p, sides, nsides, &e)) < 0) {
        json_decref(roof);
        goto fail;
    }
    int bad = 0;
    if (d->phase) d->phase(d->phase_arg, "run"); /* the checks after timing: a new batch */
    if (have_cand &&
        ((bad = check_memory(p, &cand, "while being timed", &r, &e)) != 0 ||
         (bad = verify_sets(p, &cand, &ref, &r, &e)) != 0 ||
         (bad = check_memory(p, &cand, "in the checks after timing", &r, &e)) != 0) &&
        bad < 0) {
        rc = bad;
        json_decref(roof);
        goto fail;
    }
    char metrics[512] = "metrics unavailable: the baseline is PyTorch";
    if (have_cand || !base.p.torch)
        rc = metrics_line(p, have_cand ? &cand : &base, metrics, sizeof metrics);
    *reply =
        json_pack("{s:o, s:o, s:s, s:s, s:o, s:s, s:I, s:i}", "base", samples_json(&base), "cand",
                  samples_json(have_cand ? &cand : NULL), "verdict",
                  bad ? sg_val_verdict_name(r.verdict) : "pass", "message", bad ? r.message : "",
                  "facts", facts_json(p, have_cand ? &cand : &base), "metrics", metrics,
                  "flush_bytes", (json_int_t)p->flush_bytes, "input_sets", p->nsets);
    if (roof) json_object_set_new(*reply, "roof", roof);
    if (p->raced != SG_RACE_GO) json_object_set_new(*reply, "race", race_json(p, &base));
    goto out;
fail:
    *reply = json_pack("{s:s, s:s}", "error", e.msg, "verdict",
                       rc == SG_BE_STICKY ? "crash" : "launch_error");
out:
    free_sets(p);
    if (p->flush) d->ops->free_mem(d->be, p->flush);
    side_close(p, &base);
    side_close(p, &cand);
    side_close(p, &ref);
    side_close(p, &ref2);
    return rc == SG_BE_STICKY ? SG_BE_STICKY : 0;
}

static int run_profile(sg_dev *d, const json_t *req, json_t **reply) {
    if (d->open_rc < 0) {
        *reply =
            json_pack("{s:s, s:b}", "error", d->open_err.msg, "nodev", d->open_rc == SG_BE_NODEV);
        return 0;
    }
    sg_val_job job;
    sg_val_job_from_json(req, &job);
    if (!job.task_dir) {
        *reply = json_pack("{s:s}", "error", "profile job without task_dir");
        return 0;
    }
    sg_val_task t;
    sg_err e;
    if (sg_val_task_load(job.task_dir, &t, &e) < 0) {
        *reply = json_pack("{s:s, s:s}", "error", e.msg, "verdict", "rejected");
        return 0;
    }
    prof p = {.d = d, .t = &t};
    opts_from(req, &p.o);
    p.o.seed = job.seed;
    p.nsets = p.o.input_sets;
    int rc = profile(&p, &job, reply);
    sg_val_task_free(&t);
    return rc;
}

const sg_dev_kind sg_prof_kind = {"profile", run_profile, sg_val_before_sandbox};
const sg_dev_kind *const sg_prof_kinds[2] = {&sg_val_kind, &sg_prof_kind};
