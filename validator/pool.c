/* The validator's pool: device.h's process pool with the validation job kind (and any
 * others its creator hands in), a fresh seed per job, and the mapping from what happened
 * to a worker process to a verdict. */
#include "validator/internal.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct sg_val_pool {
    sg_dev_pool *dev;
    int n;
    uint64_t *seed; /* per slot: the running job's */
    uint64_t jobs, seed_base;
};

int sg_val_pool_new(const sg_dev_opts *o, sg_val_pool **out, sg_err *err) {
    sg_dev_opts d = *o;
    if (!d.kinds) {
        d.kinds = sg_val_kinds;
        d.nkinds = 1;
    }
    sg_val_pool *p = sg_xcalloc(1, sizeof *p);
    if (sg_dev_pool_new(&d, &p->dev, err) < 0) {
        free(p);
        return -1;
    }
    p->n = o->slots;
    p->seed = sg_xcalloc((size_t)p->n, sizeof *p->seed);
    if (getrandom(&p->seed_base, sizeof p->seed_base, 0) != sizeof p->seed_base)
        p->seed_base = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
    *out = p;
    return 0;
}

void sg_val_pool_free(sg_val_pool *p) {
    if (!p) return;
    sg_dev_pool_free(p->dev);
    free(p->seed);
    free(p);
}

int sg_val_pool_spawns(const sg_val_pool *p, int slot) { return sg_dev_pool_spawns(p->dev, slot); }
int sg_val_pool_fd(const sg_val_pool *p, int slot) { return sg_dev_pool_fd(p->dev, slot); }
int64_t sg_val_pool_deadline(const sg_val_pool *p, int slot) {
    return sg_dev_pool_deadline(p->dev, slot);
}

/* What happened to the worker, as a verdict (a reply is read by the caller). */
static void outcome_verdict(const sg_dev_outcome *o, sg_val_result *r) {
    int st = o->status;
    switch (o->kind) {
    case SG_DEV_REPLY: break;
    case SG_DEV_COMPILE_DEADLINE:
        sg_val_result_set(r, SG_VAL_COMPILE_TIMEOUT,
                          "compiling did not finish within %lld ms; the worker was killed",
                          (long long)o->limit_ms);
        break;
    case SG_DEV_RUN_DEADLINE:
        sg_val_result_set(r, SG_VAL_TIMEOUT,
                          "the kernels did not finish within %lld ms (a hang or an endless "
                          "loop); the worker was killed",
                          (long long)o->limit_ms);
        break;
    case SG_DEV_DIED:
        sg_val_result_set(r, SG_VAL_CRASH,
                          "the worker process died while %s the candidate (%s)%s; it will be "
                          "restarted",
                          o->compiling ? "compiling" : "running", o->how,
                          WIFSIGNALED(st) && (WTERMSIG(st) == SIGSEGV || WTERMSIG(st) == SIGBUS)
                              ? " - most likely an out-of-bounds memory access"
                          : WIFSIGNALED(st) && WTERMSIG(st) == SIGXCPU ? " - CPU time limit"
                                                                       : "");
        break;
    }
}

static void result_reset(sg_val_result *r, uint64_t seed) {
    memset(r, 0, sizeof *r);
    r->first_bad = -1;
    r->seed = seed;
}

int sg_val_pool_step(sg_val_pool *p, int si, int64_t now, sg_val_result *r) {
    result_reset(r, si >= 0 && si < p->n ? p->seed[si] : 0);
    if (sg_dev_pool_fd(p->dev, si) < 0) {
        sg_val_result_set(r, SG_VAL_CRASH, "pool: slot %d has no job", si);
        return 0;
    }
    sg_dev_outcome o;
    if (sg_dev_pool_step(p->dev, si, now, &o) == 1) return 1;
    outcome_verdict(&o, r);
    if (o.reply) sg_val_result_from_json(o.reply, r);
    r->seed = p->seed[si];
    json_decref(o.reply);
    return 0;
}

int sg_val_pool_submit_request(sg_val_pool *p, int si, json_t *req, const sg_val_job *job,
                               int64_t now_ms, sg_err *err) {
    p->jobs++;
    int rc = sg_dev_pool_submit(p->dev, si, req, job ? job->compile_timeout_ms : 0,
                                job ? job->run_timeout_ms : 0, now_ms, err);
    if (rc == 0) p->seed[si] = 0;
    return rc;
}

int sg_val_pool_step_reply(sg_val_pool *p, int si, int64_t now, json_t **reply, sg_val_result *r) {
    result_reset(r, 0);
    *reply = NULL;
    if (sg_dev_pool_fd(p->dev, si) < 0) {
        sg_val_result_set(r, SG_VAL_CRASH, "pool: slot %d has no job", si);
        return 0;
    }
    sg_dev_outcome o;
    if (sg_dev_pool_step(p->dev, si, now, &o) == 1) return 1;
    outcome_verdict(&o, r);
    *reply = o.reply;
    return 0;
}

void sg_val_pool_kill(sg_val_pool *p, int si) { sg_dev_pool_kill(p->dev, si); }

/* The job as a request, its seed in r->seed (r is reset); NULL (r filled) when the
 * candidate cannot be sent. */
static json_t *job_request(sg_val_pool *p, const sg_val_job *job, sg_val_result *r) {
    result_reset(r, job->seed ? job->seed : p->seed_base + p->jobs++ * 0x9e3779b97f4a7c15ULL);
    if (job->candidate && job->candidate_len > SG_VAL_MAX_SOURCE) {
        sg_val_result_set(r, SG_VAL_REJECTED, "source is %zu bytes, over the limit of %d",
                          job->candidate_len, SG_VAL_MAX_SOURCE);
        return NULL;
    }
    /* jansson would send a NUL as \u0000, which the worker cannot read back: a verdict here */
    sg_err te;
    if (job->candidate && sg_val_check_text(job->candidate, job->candidate_len, &te) < 0) {
        sg_val_result_set(r, SG_VAL_REJECTED, "%s", te.msg);
        return NULL;
    }
    json_t *cand = job->candidate ? json_stringn(job->candidate, job->candidate_len) : json_null();
    char seeds[24];
    snprintf(seeds, sizeof seeds, "%llu", (unsigned long long)r->seed);
    json_t *req = json_pack("{s:s, s:s, s:o, s:s, s:s}", "type", "validate", "task_dir",
                            job->task_dir, "candidate", cand, "candidate_name",
                            job->candidate_name ? job->candidate_name : "candidate", "seed", seeds);
    if (!req) /* a verdict, never the reset one (which reads as pass) */
        sg_val_result_set(r, SG_VAL_REJECTED,
                          "the job cannot be sent to a worker: the task folder or the candidate's "
                          "name is not valid UTF-8 text");
    return req;
}

int sg_val_pool_submit(sg_val_pool *p, int si, const sg_val_job *job, int64_t now_ms,
                       sg_val_result *r, sg_err *err) {
    json_t *req = job_request(p, job, r);
    if (!req) return 1;
    int rc = sg_dev_pool_submit(p->dev, si, req, job->compile_timeout_ms, job->run_timeout_ms,
                                now_ms, err);
    json_decref(req);
    if (rc == 0) p->seed[si] = r->seed;
    return rc;
}

/* The synchronous path: the outcome as a verdict, the reply (when there is one) kept for
 * the caller or read as a validation result. */
static int call(sg_val_pool *p, int si, const sg_val_job *job, json_t *req, json_t **keep,
                sg_val_result *r, sg_err *err) {
    sg_dev_outcome o;
    int64_t cms = job ? job->compile_timeout_ms : 0, rms = job ? job->run_timeout_ms : 0;
    if (sg_dev_pool_call(p->dev, si, req, cms, rms, &o, err) < 0) return -1;
    outcome_verdict(&o, r);
    if (keep)
        *keep = o.reply;
    else {
        if (o.reply && job) sg_val_result_from_json(o.reply, r);
        json_decref(o.reply);
    }
    return 0;
}

int sg_val_pool_validate(sg_val_pool *p, int si, const sg_val_job *job, sg_val_result *r,
                         sg_err *err) {
    json_t *req = job_request(p, job, r);
    if (!req) return 0;
    uint64_t seed = r->seed;
    int rc = call(p, si, job, req, NULL, r, err);
    r->seed = seed;
    json_decref(req);
    return rc;
}

int sg_val_pool_ping(sg_val_pool *p, int si, sg_err *err) {
    json_t *req = json_pack("{s:s}", "type", "ping");
    sg_val_result r;
    result_reset(&r, 0);
    p->jobs++;
    int rc = call(p, si, NULL, req, NULL, &r, err);
    json_decref(req);
    if (rc == 0 && r.verdict != SG_VAL_PASS) return sg_errf(err, "ping: %s", r.message);
    return rc;
}

/* ---- the profiler's job kind goes through the same slot, deadlines and respawn ---- */
int sg_val_pool_call(sg_val_pool *p, int si, const sg_val_job *job, json_t *req, json_t **reply,
                     sg_val_result *r, sg_err *err) {
    result_reset(r, 0);
    *reply = NULL;
    if (si < 0 || si >= p->n) return sg_errf(err, "pool: no slot %d", si);
    p->jobs++;
    int rc = call(p, si, job, req, reply, r, err);
    return rc < 0 ? -1 : *reply ? 0 : 1; /* 1: killed or died, r says how */
}
