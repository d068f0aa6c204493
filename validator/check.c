/* The checks of one candidate, inside a worker: source hygiene, launch plans, compiling
 * (through the cache), then every shape (check_sizes, then the main sizes) in run.c. */
#include "validator/internal.h"
#include "validator/validator.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static char *read_text(const char *path, sg_err *err) {
    sg_buf b = {0};
    if (sg_buf_read_file_max(&b, path, SG_SOURCE_MAX) < 0) {
        char why[sizeof err->msg];
        sg_errf(err, "%s", sg_read_error(why, sizeof why, path, SG_SOURCE_MAX));
        sg_buf_free(&b);
        return NULL;
    }
    sg_buf_append(&b, "", 0);
    return sg_buf_steal(&b);
}

/* A kernel named in a launch line must appear in the source followed by '('. */
static int has_entry(const char *src, const char *name) {
    char head[128]; /* a template instance name<float>: its template's name */
    snprintf(head, sizeof head, "%.*s", (int)strcspn(name, "<"), name);
    size_t n = strlen(head);
    for (const char *p = strstr(src, head); p; p = strstr(p + 1, head)) {
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
static int prepare(sg_dev *d, const sg_val_task *t, sg_val_source *p, sg_val_result *r) {
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
            const sg_val_sizes *s = k < t->ncheck ? &t->check[k] : sg_val_main_sizes(t, lim.cpu);
            if (sg_val_launch_dims(&p->plan.launch[i], s, &lim, p->where, &dm, &e) < 0) {
                sg_val_result_set(r, SG_VAL_REJECTED, "%s", e.msg);
                return -1;
            }
        }
    return 0;
}

/* NVRTC calls every source "candidate.cu": a baseline's or reference's log names its file. */
static void name_log(sg_buf *log, const char *where) {
    const char *base = strrchr(where, '/') ? strrchr(where, '/') + 1 : where;
    if (!log->data || !strcmp(where, "candidate") || !strcmp(base, "candidate.cu")) return;
    sg_buf out = {0};
    const char *p = log->data, *m;
    while ((m = strstr(p, "candidate.cu"))) {
        sg_buf_append(&out, p, (size_t)(m - p));
        sg_buf_append_str(&out, base);
        p = m + strlen("candidate.cu");
    }
    sg_buf_append_str(&out, p);
    sg_buf_free(log);
    *log = out;
}

static int compile(sg_dev *d, const sg_val_task *t, sg_val_source *p, int *hit, char hash[33],
                   sg_val_result *r) {
    const char *names[SG_VAL_MAX_LAUNCHES]; /* the plan parser refuses more */
    int nk = p->plan.nlaunch;
    for (int i = 0; i < nk; i++) names[i] = p->plan.launch[i].kernel;
    sg_buf log = {0};
    sg_err e;
    char opts[64];
    snprintf(opts, sizeof opts, "%s %s", sg_dev_lang_name(d->lang), d->arch);
    int rc =
        sg_dev_cache_get(d->cache, p->src, t->dir, names, nk, opts, &p->prog, hit, hash, &log, &e);
    if (rc < 0) {
        int launch = strstr(e.msg, "local memory") != NULL;
        sg_val_result_set(r, launch ? SG_VAL_LAUNCH_ERROR : SG_VAL_COMPILE_ERROR, "%s: %s",
                          p->where, e.msg);
        name_log(&log, p->where);
        snprintf(r->detail, sizeof r->detail, "%s", log.data ? log.data : "");
    }
    sg_buf_free(&log);
    return rc;
}

/* The candidate's source: the task's baseline when the job has none; a candidate without
 * //@launch lines gets the baseline's plan. */
static int load_candidate(const sg_val_job *job, const char *base, sg_val_source *cand,
                          sg_val_result *r) {
    sg_err e;
    if (job->candidate) {
        cand->src = sg_xmalloc(job->candidate_len + 1);
        memcpy(cand->src, job->candidate, job->candidate_len);
        cand->src[job->candidate_len] = 0;
        if (job->candidate_len && !strstr(cand->src, "//@launch") && base) {
            /* Keep the baseline's plan, after the candidate's last line so that the
             * candidate's line numbers (in our messages and the compiler's) stay its own. */
            char *bsrc = read_text(base, &e);
            sg_buf b = {0};
            sg_buf_append_str(&b, cand->src);
            if (cand->src[job->candidate_len - 1] != '\n') sg_buf_append(&b, "\n", 1);
            if (bsrc) plan_lines(bsrc, &b);
            cand->baseline_plan = bsrc != NULL;
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
    return 0;
}

static int compile_candidate(sg_dev *d, const sg_val_task *t, sg_val_source *cand,
                             sg_val_result *r) {
    double t0 = now_ms();
    int hit = 0;
    int rc = compile(d, t, cand, &hit, r->hash, r);
    r->cache_hit = hit;
    r->compile_ms = now_ms() - t0;
    return rc;
}

/* A torch task: the reference engine is the reference; the baseline (no candidate) is the
 * torch forward when the task says so; a candidate needs its own launch plan unless the
 * task also has a kernel baseline. 1: the candidate is a kernel to prepare; 0: nothing to
 * compile; -1: r says why. */
static int prepare_torch(sg_dev *d, const sg_val_task *t, const sg_val_job *job,
                         sg_val_source *cand, sg_val_source *ref, sg_val_result *r) {
    ref->torch = SG_VAL_TORCH_REF;
    ref->where = t->torch_ref;
    if (!job->candidate && t->torch_baseline) {
        cand->torch = t->torch_baseline;
        cand->where = t->torch_baseline == SG_VAL_TORCH_EAGER ? "torch eager" : "torch.compile";
        return 0;
    }
    if (!job->candidate && !t->source[d->lang]) {
        sg_val_result_set(r, SG_VAL_REJECTED, "task %s has no %s baseline", t->name,
                          sg_dev_lang_name(d->lang));
        return -1;
    }
    if (job->candidate && !t->source[d->lang] && !strstr(job->candidate, "//@launch")) {
        sg_val_result_set(r, SG_VAL_REJECTED,
                          "%s has no //@launch line, and this task's baseline is PyTorch, which "
                          "has no launch plan to lend it (see docs/task-format.md)",
                          job->candidate_name ? job->candidate_name : "candidate");
        return -1;
    }
    return 1;
}

int sg_val_prepare_job(sg_dev *d, const sg_val_task *t, const sg_val_job *job, sg_val_source *cand,
                       sg_val_source *ref, sg_val_result *r) {
    sg_err e;
    const char *base = t->source[d->lang], *refp = t->reference[d->lang];
    if (t->torch_ref) {
        int rc = prepare_torch(d, t, job, cand, ref, r);
        if (rc <= 0) return rc;
        if (load_candidate(job, base, cand, r) < 0 || prepare(d, t, cand, r) < 0) return -1;
        return compile_candidate(d, t, cand, r);
    }
    if (!refp || !base) {
        int fp8 = 0;
        for (int i = 0; i < t->nbuf; i++)
            fp8 |= t->buf[i].type == SG_VAL_FP8_E4M3 || t->buf[i].type == SG_VAL_FP8_E5M2;
        sg_val_result_set(r, SG_VAL_REJECTED, "task %s has no %s %s%s", t->name,
                          sg_dev_lang_name(d->lang), refp ? "baseline" : "reference",
                          fp8 && d->lang == SG_DEV_OPENCL
                              ? " (its fp8 buffers need CUDA: OpenCL has no fp8 type)"
                              : "");
        return -1;
    }
    if (!(ref->src = read_text(refp, &e))) {
        sg_val_result_set(r, SG_VAL_REJECTED, "%s", e.msg);
        return -1;
    }
    ref->where = refp;
    if (load_candidate(job, base, cand, r) < 0 || prepare(d, t, cand, r) < 0 ||
        prepare(d, t, ref, r) < 0)
        return -1;
    int rc = compile_candidate(d, t, cand, r);
    if (rc < 0) return rc;
    int rhit;
    char rhash[33];
    return compile(d, t, ref, &rhit, rhash, r);
}

void sg_val_source_free(sg_val_source *p) {
    free(p->src);
    sg_val_plan_free(&p->plan);
    memset(p, 0, sizeof *p);
}

/* KernelBench's own check (its eval.py: 5 trials, fresh get_inputs() per trial, the same
 * weights draw, torch.allclose with atol = rtol = 1e-4 for fp32 and 1e-2 for fp16/bf16) at
 * the main shape, beside ours: counted in r->kb_trials / kb_pass, never the verdict. */
#define KB_TRIALS 5
static int kb_check(sg_dev *d, const sg_val_task *t, const sg_val_sizes *s,
                    const sg_val_source *cand, const sg_val_source *ref, sg_val_result *r) {
    double tol = t->precision && strcmp(t->precision, "fp32") ? 1e-2 : 1e-4;
    sg_val_task kt = *t;
    kt.buf = sg_xcalloc((size_t)t->nbuf + 1, sizeof *kt.buf);
    for (int i = 0; i < t->nbuf; i++) {
        kt.buf[i] = t->buf[i];
        kt.buf[i].ndist = 1; /* the problem's own distribution ("model", the first) */
        if (sg_val_type_is_float(t->buf[i].type)) kt.buf[i].atol = kt.buf[i].rtol = tol;
    }
    int rc = 0;
    for (int k = 0; k < KB_TRIALS && rc != SG_BE_STICKY; k++) {
        sg_val_result tr;
        memset(&tr, 0, sizeof tr);
        tr.first_bad = -1;
        rc = sg_val_check_shape(d, &kt, s, 0, r->seed + 0x4b42ULL * (uint64_t)(k + 1), cand, ref,
                                NULL, &tr);
        r->kb_trials++;
        r->kb_pass += rc == 0;
    }
    free(kt.buf);
    return rc == SG_BE_STICKY ? rc : 0;
}

static int do_check(sg_dev *d, const sg_val_task *t, const sg_val_job *job, sg_val_source *cand,
                    sg_val_source *ref, sg_val_result *r) {
    int rc = sg_val_prepare_job(d, t, job, cand, ref, r);
    if (rc < 0) return rc;
    /* documented (docs/validator.md), and said: the plan that ran is not the candidate's */
    const char *plan = cand->baseline_plan ? " (no //@launch lines: ran with the baseline's "
                                             "launch plan)"
                                           : "";
    if (d->opts.compile_only) {
        sg_val_result_set(r, SG_VAL_COMPILED,
                          "compiled for %s%s%s; nothing was run (--compile-only)%s",
                          sg_dev_lang_name(d->lang), d->arch[0] ? " " : "", d->arch,
                          cand->baseline_plan ? " (no //@launch lines: compiled with the "
                                                "baseline's launch plan)"
                                              : "");
        return 0;
    }
    if (d->phase) d->phase(d->phase_arg, "run");
    double t0 = now_ms();
    sg_be_limits lim;
    d->ops->limits(d->be, &lim);
    int ndist = sg_val_task_ndist(t);
    const sg_val_sizes *passed = NULL;
    for (int k = 0; k <= t->ncheck; k++) {
        const sg_val_sizes *s = k < t->ncheck ? &t->check[k] : sg_val_main_sizes(t, lim.cpu);
        for (int dist = 0; dist < ndist; dist++) {
            /* Distribution 0 keeps the seed a task with one distribution always had. */
            uint64_t seed = r->seed + (uint64_t)k * 0x9e3779b97f4a7c15ULL +
                            (uint64_t)dist * 0xd1b54a32d192ed03ULL;
            rc = sg_val_check_shape(d, t, s, dist, seed, cand, ref, passed, r);
            if (rc < 0) return rc;
            r->checks_run++;
        }
        passed = s;
    }
    if (t->torch_ref && !cand->torch && (rc = kb_check(d, t, passed, cand, ref, r)) < 0) return rc;
    r->run_ms = now_ms() - t0;
    char kb[96] = "";
    if (r->kb_trials)
        snprintf(kb, sizeof kb, "; KernelBench's own check: %d of %d trials pass", r->kb_pass,
                 r->kb_trials);
    if (ndist > 1)
        sg_val_result_set(r, SG_VAL_PASS,
                          "all %d checks passed (shapes: %d, input distributions: %d); max abs "
                          "error %g, max rel error %g%s%s",
                          r->checks_run, t->ncheck + 1, ndist, r->max_abs, r->max_rel, plan, kb);
    else
        sg_val_result_set(
            r, SG_VAL_PASS,
            "all %d checks passed (shapes: %d); max abs error %g, max rel error %g%s%s",
            r->checks_run, t->ncheck + 1, r->max_abs, r->max_rel, plan, kb);
    return 0;
}

int sg_val_check(sg_dev *d, const sg_val_job *job, sg_val_result *r) {
    memset(r, 0, sizeof *r);
    r->first_bad = -1;
    r->seed = job->seed;
    sg_val_task t;
    sg_err e;
    if (sg_val_task_load_cli(job->task_dir, &t, &e) < 0) {
        sg_val_result_set(r, SG_VAL_REJECTED, "%s", e.msg);
        return 0;
    }
    sg_val_source cand = {0}, ref = {0};
    int rc = do_check(d, &t, job, &cand, &ref, r);
    free(cand.src);
    free(ref.src);
    sg_val_plan_free(&cand.plan);
    sg_val_plan_free(&ref.plan);
    sg_val_task_free(&t);
    return rc == SG_BE_STICKY ? SG_BE_STICKY : 0;
}
