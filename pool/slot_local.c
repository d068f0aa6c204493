/* Local slots: one sandboxed worker process per slot, `per_device` of them on each device
 * (CUDA device i or OpenCL device i: one validator pool per device, started with the
 * validate and profile job kinds). A running job's worker socket is watched on the loop
 * and its deadline is a loop timer, so nothing blocks and no thread is needed. */
#include "pool/pool.h"

#include "common/buf.h"
#include "common/opts.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct lslot {
    sg_pool_local *owner;
    int index, device, worker;
    sg_pool_role kind; /* of the running job */
    uint64_t timer;
    int watching;       /* the watched fd + 1, or 0 */
    int report_pending; /* an answer without a worker, reported from the loop */
    double t0_ms;
    sg_val_result vr;
    sg_prof_result pr;
    sg_prof_opts prof;
    sg_pool_result r;
} lslot;

struct sg_pool_local {
    sg_loop *loop;
    sg_pool *pool;
    int ndev, per_device, n;
    sg_val_pool **dev; /* per device */
    lslot *s;
    sg_pool_slot_desc *desc;
    void (*done)(void *arg, int slot, sg_pool_result *r); /* instead of the scheduler */
    void *done_arg;
};

static int64_t now_ms(const sg_pool_local *l) { return sg_loop_now(l->loop) / SG_MS; }

int sg_pool_local_new(sg_loop *loop, const sg_dev_opts *base, const int *ids, int ndevices,
                      int per_device, sg_pool_local **out, sg_err *err) {
    if (ndevices < 1 || per_device < 1 || per_device > SG_SLOTS_PER_DEVICE_MAX)
        return sg_errf(err, "local slots: %d device(s) x %d slot(s) per device", ndevices,
                       per_device);
    sg_pool_local *l = sg_xcalloc(1, sizeof *l);
    l->loop = loop;
    l->ndev = ndevices;
    l->per_device = per_device;
    l->n = ndevices * per_device;
    l->dev = sg_xcalloc((size_t)ndevices, sizeof *l->dev);
    l->s = sg_xcalloc((size_t)l->n, sizeof *l->s);
    l->desc = sg_xcalloc((size_t)l->n, sizeof *l->desc);
    for (int d = 0; d < ndevices; d++) {
        sg_dev_opts o = *base;
        o.slots = per_device;
        o.kinds = sg_prof_kinds; /* validate and profile */
        o.nkinds = 2;
        if (base->device == SG_DEV_CUDA)
            o.cuda_device = ids ? ids[d] : base->cuda_device + d;
        else
            o.opencl_device = ids ? ids[d] : base->opencl_device + d;
        if (sg_val_pool_new(&o, &l->dev[d], err) < 0) {
            sg_pool_local_free(l);
            return -1;
        }
        for (int w = 0; w < per_device; w++) {
            int i = d * per_device + w;
            l->s[i] = (lslot){.owner = l, .index = i, .device = d, .worker = w};
            l->desc[i].device = d;
            snprintf(l->desc[i].name, sizeof l->desc[i].name, "%s:%d/%d",
                     sg_dev_lang_name(base->device),
                     base->device == SG_DEV_CUDA ? o.cuda_device : o.opencl_device, w);
        }
    }
    *out = l;
    return 0;
}

const sg_pool_slot_desc *sg_pool_local_slots(const sg_pool_local *l, int *n) {
    *n = l->n;
    return l->desc;
}

void sg_pool_local_bind(sg_pool_local *l, sg_pool *p) { l->pool = p; }

void sg_pool_local_on_done(sg_pool_local *l, void (*fn)(void *arg, int slot, sg_pool_result *r),
                           void *arg) {
    l->done = fn;
    l->done_arg = arg;
}

static void stop_waiting(lslot *s) {
    sg_pool_local *l = s->owner;
    if (s->timer) sg_loop_timer_cancel(l->loop, s->timer);
    s->timer = 0;
    if (s->watching) sg_loop_fd_unwatch(l->loop, s->watching - 1);
    s->watching = 0;
}

void sg_pool_local_free(sg_pool_local *l) {
    if (!l) return;
    for (int i = 0; i < l->n; i++) stop_waiting(&l->s[i]);
    for (int d = 0; d < l->ndev; d++) sg_val_pool_free(l->dev[d]);
    free(l->dev);
    free(l->s);
    free(l->desc);
    free(l);
}

/* The job is over: fill r from what the worker said and hand it to the scheduler. */
static void report(lslot *s, json_t *reply) {
    sg_pool_result *r = &s->r;
    memset(r, 0, sizeof *r);
    if (s->kind == SG_POOL_VALIDATE) {
        r->pass = s->vr.verdict == SG_VAL_PASS;
        snprintf(r->verdict, sizeof r->verdict, "%s", sg_val_verdict_name(s->vr.verdict));
        snprintf(r->message, sizeof r->message, "%s", s->vr.message);
        r->compile_ms = s->vr.compile_ms;
        r->run_ms = s->vr.run_ms;
        r->val = &s->vr;
    } else {
        sg_err e;
        if (!reply) { /* killed at a deadline or died: vr says how */
            snprintf(r->verdict, sizeof r->verdict, "%s", sg_val_verdict_name(s->vr.verdict));
            snprintf(r->message, sizeof r->message, "timing: %s", s->vr.message);
        } else if (sg_prof_from_reply(reply, &s->pr, &e) < 0) {
            snprintf(r->verdict, sizeof r->verdict, "error");
            snprintf(r->message, sizeof r->message, "timing: %s", e.msg);
        } else {
            s->pr.wall_ms = (double)now_ms(s->owner) - s->t0_ms;
            r->pass = s->pr.verdict == SG_VAL_PASS && s->pr.baseline.runs > 0;
            snprintf(r->verdict, sizeof r->verdict, "%s", sg_val_verdict_name(s->pr.verdict));
            snprintf(r->message, sizeof r->message, "%s", s->pr.message);
            r->base_ns = s->pr.baseline.median_ns;
            r->cand_ns = s->pr.candidate.median_ns;
            r->speedup = s->pr.speedup.speedup;
            r->noise = s->pr.speedup.band;
            r->runs = s->pr.candidate.runs ? s->pr.candidate.runs : s->pr.baseline.runs;
            r->prof = &s->pr;
        }
        r->val = NULL;
    }
    json_decref(reply);
    if (s->owner->done)
        s->owner->done(s->owner->done_arg, s->index, r);
    else
        sg_pool_slot_done(s->owner->pool, s->index, r);
}

static void arm(lslot *s);

/* The worker spoke or the deadline passed: step the job. */
static void step(lslot *s) {
    sg_pool_local *l = s->owner;
    sg_val_pool *vp = l->dev[s->device];
    json_t *reply = NULL;
    int rc = s->kind == SG_POOL_VALIDATE
                 ? sg_val_pool_step(vp, s->worker, now_ms(l), &s->vr)
                 : sg_val_pool_step_reply(vp, s->worker, now_ms(l), &reply, &s->vr);
    if (rc == 1) { /* still running: the deadline may have moved (a "phase" message) */
        arm(s);
        return;
    }
    stop_waiting(s);
    report(s, reply);
}

static void on_readable(sg_loop *loop, int fd, unsigned ev, void *arg) {
    (void)loop, (void)fd, (void)ev;
    step(arg);
}

static void on_deadline(sg_loop *loop, void *arg) {
    (void)loop;
    lslot *s = arg;
    s->timer = 0;
    step(s);
}

static void arm(lslot *s) {
    sg_pool_local *l = s->owner;
    sg_val_pool *vp = l->dev[s->device];
    if (s->timer) sg_loop_timer_cancel(l->loop, s->timer);
    int64_t deadline = sg_val_pool_deadline(vp, s->worker);
    s->timer = deadline == INT64_MAX
                   ? 0
                   : sg_loop_timer_at(l->loop, deadline * SG_MS + SG_MS, on_deadline, s);
}

/* A job answered without reaching a worker (a source over the size limit): reported from
 * the loop, never from inside start(). */
static void report_later(sg_loop *loop, void *arg) {
    (void)loop;
    lslot *s = arg;
    if (!s->report_pending) return; /* killed meanwhile */
    s->report_pending = 0;
    report(s, NULL);
}

static int local_start(void *impl, int slot, const sg_pool_job *job, sg_err *err) {
    sg_pool_local *l = impl;
    if (slot < 0 || slot >= l->n) return sg_errf(err, "local slots: no slot %d", slot);
    lslot *s = &l->s[slot];
    sg_val_pool *vp = l->dev[s->device];
    sg_val_job vj = {.task_dir = job->work.task_dir,
                     .candidate = job->work.candidate,
                     .candidate_len = job->work.candidate_len,
                     .candidate_name = job->work.name};
    s->kind = job->work.kind;
    s->t0_ms = (double)now_ms(l);
    memset(&s->vr, 0, sizeof s->vr);
    memset(&s->pr, 0, sizeof s->pr);
    if (s->kind == SG_POOL_VALIDATE) {
        int rc = sg_val_pool_submit(vp, s->worker, &vj, now_ms(l), &s->vr, err);
        if (rc < 0) return -1;
        if (rc == 1) {
            s->report_pending = 1;
            sg_loop_defer(l->loop, report_later, s);
            return 0;
        }
    } else {
        if (job->work.prof)
            s->prof = *job->work.prof;
        else
            sg_prof_opts_default(&s->prof);
        json_t *req = sg_prof_request(&vj, &s->prof, err);
        if (!req) return -1;
        int rc = sg_val_pool_submit_request(vp, s->worker, req, &vj, now_ms(l), err);
        json_decref(req);
        if (rc < 0) return -1;
    }
    int fd = sg_val_pool_fd(vp, s->worker);
    if (sg_loop_fd_watch(l->loop, fd, SG_EV_READ, on_readable, s, err) < 0) {
        sg_val_pool_kill(vp, s->worker);
        return -1;
    }
    s->watching = fd + 1;
    arm(s);
    return 0;
}

static void local_kill(void *impl, int slot) {
    sg_pool_local *l = impl;
    if (slot < 0 || slot >= l->n) return;
    lslot *s = &l->s[slot];
    s->report_pending = 0;
    stop_waiting(s);
    sg_val_pool_kill(l->dev[s->device], s->worker);
}

const sg_pool_slot_ops sg_pool_local_ops = {local_start, local_kill, NULL};
