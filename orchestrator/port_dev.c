#include "orchestrator/port_dev.h"

#include "common/buf.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct job {
    sg_port_dev *pd;
    sg_job_kind kind;
    char *source; /* NULL: the baseline */
    size_t len;
    char name[64];
    int priority;
    uint64_t seq;
    sg_job_done_fn done;
    void *arg;
    sg_job_outcome out;
    struct job *next;
} job;

struct sg_port_dev {
    sg_port_dev_config cfg;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    job *queue; /* sorted: priority desc, then seq */
    uint64_t seq;
    int stopping;
    pthread_t *threads;
    int nthreads;
};

/* The outcome the task sees: verdict, numbers, and the paragraph for the model. */
static void fill_outcome(const sg_feedback_templates *fb, const char *name, const sg_val_result *vr,
                         const sg_prof_result *pr, sg_job_outcome *o) {
    memset(o, 0, sizeof *o);
    o->ok = 1;
    o->correct = vr->verdict == SG_VAL_PASS;
    switch (vr->verdict) { /* verdicts reached only after a successful compile */
    case SG_VAL_PASS:
    case SG_VAL_COMPILED:
    case SG_VAL_LAUNCH_ERROR:
    case SG_VAL_TIMEOUT:
    case SG_VAL_MISMATCH:
    case SG_VAL_OUT_OF_BOUNDS:
    case SG_VAL_INPUT_MODIFIED: o->compiled = 1; break;
    default: break;
    }
    snprintf(o->verdict, sizeof o->verdict, "%s", sg_val_verdict_name(vr->verdict));
    snprintf(o->message, sizeof o->message, "%s", vr->message);
    o->compile_ms = vr->compile_ms;
    o->validate_ms = vr->run_ms;
    if (pr) {
        o->base_ns = pr->baseline.median_ns;
        o->profile_ms = pr->wall_ms;
        o->runs = pr->baseline.runs;
        if (o->correct && pr->candidate.runs > 0) {
            o->cand_ns = pr->candidate.median_ns;
            o->speedup = pr->speedup.speedup;
            o->noise = pr->speedup.band;
            o->runs = pr->candidate.runs;
        }
    }
    sg_buf text = {0};
    sg_prof_feedback(fb, name, vr, pr, &text);
    snprintf(o->feedback, sizeof o->feedback, "%s", text.data ? text.data : "");
    sg_buf_free(&text);
}

static void deliver(sg_loop *loop, void *arg) {
    job *j = arg;
    sg_loop_unref(loop);
    j->done(j->arg, &j->out);
    free(j->source);
    free(j);
}

static void run_job(sg_port_dev *pd, int slot, job *j) {
    sg_val_job vj = {.task_dir = pd->cfg.task_dir,
                     .candidate = j->source,
                     .candidate_len = j->len,
                     .candidate_name = j->name};
    sg_val_result vr;
    sg_prof_result pr;
    sg_err err;
    int timed;
    int rc = sg_prof_check(pd->cfg.pool, slot, &vj, &pd->cfg.prof, &vr, &pr, &timed, &err);
    if (rc < 0) {
        snprintf(j->out.message, sizeof j->out.message, "%s could not be validated: %s", j->name,
                 err.msg);
        return;
    }
    fill_outcome(pd->cfg.fb, j->name, &vr, timed ? &pr : NULL, &j->out);
    if (rc == 1) { /* correct, but no timing: no speedup to act on */
        snprintf(j->out.message, sizeof j->out.message, "%s is correct but could not be timed: %s",
                 j->name, err.msg);
        snprintf(j->out.feedback, sizeof j->out.feedback, "%s is correct; timing failed: %s\n",
                 j->name, err.msg);
    }
}

typedef struct slot_arg {
    sg_port_dev *pd;
    int slot;
} slot_arg;

static void *slot_main(void *arg) {
    slot_arg *sa = arg;
    sg_port_dev *pd = sa->pd;
    for (;;) {
        pthread_mutex_lock(&pd->mu);
        while (!pd->queue && !pd->stopping) pthread_cond_wait(&pd->cv, &pd->mu);
        if (pd->stopping) {
            pthread_mutex_unlock(&pd->mu);
            break;
        }
        job *j = pd->queue;
        pd->queue = j->next;
        pthread_mutex_unlock(&pd->mu);
        run_job(pd, sa->slot, j);
        sg_loop_wake(pd->cfg.loop, deliver, j);
    }
    free(sa);
    return NULL;
}

static int submit(void *impl, const sg_job_request *req, sg_job_done_fn done, void *arg,
                  sg_err *err) {
    sg_port_dev *pd = impl;
    job *j = calloc(1, sizeof *j);
    j->pd = pd;
    j->kind = req->kind;
    if (req->kind == SG_JOB_CANDIDATE) {
        j->source = malloc(req->len + 1);
        memcpy(j->source, req->source, req->len);
        j->source[req->len] = '\0';
        j->len = req->len;
    }
    snprintf(j->name, sizeof j->name, "%s", req->name ? req->name : "candidate");
    j->priority = req->priority;
    j->done = done;
    j->arg = arg;
    sg_loop_ref(pd->cfg.loop);
    pthread_mutex_lock(&pd->mu);
    j->seq = pd->seq++;
    job **p = &pd->queue;
    while (*p && (*p)->priority >= j->priority) p = &(*p)->next;
    j->next = *p;
    *p = j;
    pthread_cond_signal(&pd->cv);
    pthread_mutex_unlock(&pd->mu);
    return 0;
}

sg_port_dev *sg_port_dev_new(const sg_port_dev_config *cfg, sg_dev_port *port, sg_err *err) {
    sg_port_dev *pd = calloc(1, sizeof *pd);
    pd->cfg = *cfg;
    pthread_mutex_init(&pd->mu, NULL);
    pthread_cond_init(&pd->cv, NULL);
    int n = cfg->slots > 0 ? cfg->slots : 1;
    pd->threads = calloc((size_t)n, sizeof *pd->threads);
    for (int i = 0; i < n; i++) {
        slot_arg *sa = malloc(sizeof *sa);
        sa->pd = pd;
        sa->slot = i;
        if (pthread_create(&pd->threads[i], NULL, slot_main, sa) != 0) {
            free(sa);
            sg_errf(err, "cannot start the device threads");
            sg_port_dev_free(pd);
            return NULL;
        }
        pd->nthreads++;
    }
    port->impl = pd;
    port->submit = submit;
    return pd;
}

void sg_port_dev_free(sg_port_dev *pd) {
    if (!pd) return;
    pthread_mutex_lock(&pd->mu);
    pd->stopping = 1;
    job *q = pd->queue;
    pd->queue = NULL;
    pthread_cond_broadcast(&pd->cv);
    pthread_mutex_unlock(&pd->mu);
    for (int i = 0; i < pd->nthreads; i++) pthread_join(pd->threads[i], NULL);
    while (q) {
        job *next = q->next;
        sg_loop_unref(pd->cfg.loop);
        free(q->source);
        free(q);
        q = next;
    }
    pthread_mutex_destroy(&pd->mu);
    pthread_cond_destroy(&pd->cv);
    free(pd->threads);
    free(pd);
}
