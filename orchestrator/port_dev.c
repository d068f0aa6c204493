/* The device port over the pool scheduler: validate, then (when correct) profile as a new
 * job; the two results become one outcome for the task. No threads: the pool's slots
 * report on the loop. */
#include "orchestrator/port_dev.h"

#include "common/buf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct job {
    sg_port_dev *pd;
    char *source; /* NULL: the baseline */
    size_t len;
    char name[64];
    int iteration, fork;
    int profiling;             /* its profile job was submitted (past validation) */
    uint64_t reasoning_tokens; /* the request's: the pool's by-value order */
    uint64_t pool_job;         /* the running or queued pool job */
    uint64_t deliver_timer;    /* a cancelled job's outcome, due on the loop */
    int stale;                 /* drop_stale asked it to yield: what its cancel means */
    int64_t submitted_ns;
    sg_val_result vr;  /* the validation, kept for the profile job's outcome */
    sg_prof_opts prof; /* its profile job's options: racing against the best so far */
    sg_job_done_fn done;
    void *arg;
    sg_job_outcome out;
    struct job *prev, *next; /* jobs not yet delivered */
} job;

struct sg_port_dev {
    sg_port_dev_config cfg;
    int closing; /* sg_port_dev_free is cancelling: nothing is delivered */
    job *jobs;
    double best; /* the best speedup timed so far (the baseline: 1): the distance order */
    double bar;  /* racing's bar: what the best timed so far surely reaches (its 99% lower
                    bound, profiler.h speedup_lo, else its speedup; the baseline: 1) */
    double *latency;
    size_t nlat, caplat;
};

static uint64_t pool_iteration(const sg_port_dev *pd, int iteration) {
    return ((uint64_t)(unsigned)pd->cfg.task << 32) | (unsigned)iteration;
}

int sg_port_dev_iteration_of(uint64_t pool_iteration) {
    return (int)(pool_iteration & 0xffffffffu);
}

void sg_port_dev_event_iteration(json_t *ev) {
    json_t *it = json_object_get(ev, "iteration");
    if (json_is_integer(it))
        json_object_set_new(
            ev, "iteration",
            json_integer(sg_port_dev_iteration_of((uint64_t)json_integer_value(it))));
}

static void unlink_job(sg_port_dev *pd, job *j) {
    if (j->prev) j->prev->next = j->next;
    if (j->next) j->next->prev = j->prev;
    if (pd->jobs == j) pd->jobs = j->next;
    j->prev = j->next = NULL;
}

static void deliver(job *j) {
    sg_port_dev *pd = j->pd;
    unlink_job(pd, j);
    j->done(j->arg, &j->out);
    free(j->source);
    free(j);
}

static void deliver_later(sg_loop *loop, void *arg) {
    (void)loop;
    job *j = arg;
    j->deliver_timer = 0;
    deliver(j);
}

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
    o->kb_trials = vr->kb_trials; /* KernelBench's own check, beside ours (torch tasks) */
    o->kb_pass = vr->kb_pass;
    if (pr) {
        o->base_ns = pr->baseline.median_ns;
        o->profile_ms = pr->wall_ms;
        o->runs = pr->baseline.runs;
        if (o->correct && pr->candidate.runs > 0) {
            o->cand_ns = pr->candidate.median_ns;
            o->speedup = pr->speedup.speedup;
            o->noise = pr->speedup.band;
            o->runs = pr->candidate.runs;
            snprintf(o->race_stop, sizeof o->race_stop, "%s", pr->race_stop);
            o->race_saved_runs = pr->race_saved_runs;
            o->race_saved_ms = pr->race_saved_ms;
        }
    }
    sg_buf text = {0};
    sg_prof_feedback(fb, name, vr, pr, &text);
    snprintf(o->feedback, sizeof o->feedback, "%s", text.data ? text.data : "");
    sg_buf_free(&text);
}

/* The candidate's validate or profile job, in its iteration's priority class. */
static void submit_kind(job *j, sg_pool_role kind, sg_pool_done_fn done) {
    sg_port_dev *pd = j->pd;
    j->prof = pd->cfg.prof;
    j->prof.race.best = pd->bar;
    j->prof.race.target = pd->cfg.target_speedup;
    sg_pool_work w = {.kind = kind,
                      .task_dir = pd->cfg.task_dir,
                      .candidate = j->source,
                      .candidate_len = j->len,
                      .name = j->name,
                      .prof = kind == SG_POOL_PROFILE ? &j->prof : NULL,
                      .value = (double)j->reasoning_tokens,
                      .distance = pd->cfg.target_speedup > 0 && pd->best > 0
                                      ? pd->cfg.target_speedup / pd->best
                                      : 0};
    j->pool_job = sg_pool_submit(pd->cfg.pool, pd->cfg.task, pool_iteration(pd, j->iteration),
                                 j->fork ? SG_POOL_FORK : SG_POOL_FINAL, &w, done, j);
}

static void cancelled(job *j, const sg_pool_result *r) {
    if (j->pd->closing) return;
    memset(&j->out, 0, sizeof j->out);
    j->out.cancelled = 1;
    snprintf(j->out.verdict, sizeof j->out.verdict, "%s", sg_pool_end_name(r->end));
    snprintf(j->out.message, sizeof j->out.message, "%s (%s)", r->message,
             j->stale ? "stale: a newer fork's kernel is the best" : "its iteration ended");
    /* never inside end_iteration; a timer, so that sg_port_dev_free can take it back */
    j->deliver_timer = sg_loop_timer(j->pd->cfg.loop, 0, deliver_later, j);
}

static void on_profiled(void *arg, const sg_pool_job *pj, const sg_pool_result *r) {
    (void)pj;
    job *j = arg;
    sg_port_dev *pd = j->pd;
    if (r->end == SG_POOL_DROPPED || r->end == SG_POOL_KILLED) {
        cancelled(j, r);
        return;
    }
    if (!r->prof) { /* correct, but no timing: no speedup to act on */
        fill_outcome(pd->cfg.fb, j->name, &j->vr, NULL, &j->out);
        snprintf(j->out.message, sizeof j->out.message, "%s is correct but could not be timed: %s",
                 j->name, r->message);
        snprintf(j->out.feedback, sizeof j->out.feedback, "%s is correct; timing failed: %s\n",
                 j->name, r->message);
        deliver(j);
        return;
    }
    sg_val_result vr = j->vr;
    if (r->prof->verdict != SG_VAL_PASS) { /* wrong once the inputs rotate: not correct */
        vr.verdict = r->prof->verdict;
        snprintf(vr.message, sizeof vr.message, "%s", r->prof->message);
    }
    fill_outcome(pd->cfg.fb, j->name, &vr, vr.verdict == SG_VAL_PASS ? r->prof : NULL, &j->out);
    if (vr.verdict == SG_VAL_PASS) {
        /* a result without the bound (the simulated pool's) bars at its speedup */
        double lo = r->prof->speedup_lo > 0 ? r->prof->speedup_lo : j->out.speedup;
        if (lo > pd->bar) pd->bar = lo;
        if (j->out.speedup > pd->best) pd->best = j->out.speedup;
    }
    if (vr.verdict == SG_VAL_PASS) {
        if (pd->nlat == pd->caplat) {
            pd->caplat = pd->caplat ? 2 * pd->caplat : 32;
            pd->latency = sg_xrealloc(pd->latency, pd->caplat * sizeof *pd->latency);
        }
        pd->latency[pd->nlat++] =
            (double)(sg_loop_now(pd->cfg.loop) - j->submitted_ns) / (double)SG_SEC;
    }
    deliver(j);
}

static void on_validated(void *arg, const sg_pool_job *pj, const sg_pool_result *r) {
    (void)pj;
    job *j = arg;
    sg_port_dev *pd = j->pd;
    if (r->end == SG_POOL_DROPPED || r->end == SG_POOL_KILLED) {
        cancelled(j, r);
        return;
    }
    if (!r->val) { /* the slot could not run it */
        memset(&j->out, 0, sizeof j->out);
        snprintf(j->out.verdict, sizeof j->out.verdict, "%s", r->verdict);
        snprintf(j->out.message, sizeof j->out.message, "%s could not be validated: %s", j->name,
                 r->message);
        deliver(j);
        return;
    }
    j->vr = *r->val;
    if (j->vr.verdict != SG_VAL_PASS) {
        fill_outcome(pd->cfg.fb, j->name, &j->vr, NULL, &j->out);
        deliver(j);
        return;
    }
    j->profiling = 1;
    submit_kind(j, SG_POOL_PROFILE, on_profiled);
}

static int submit(void *impl, const sg_job_request *req, sg_job_done_fn done, void *arg,
                  sg_err *err) {
    (void)err;
    sg_port_dev *pd = impl;
    job *j = sg_xcalloc(1, sizeof *j);
    j->pd = pd;
    if (req->kind == SG_JOB_CANDIDATE) {
        j->source = sg_xmalloc(req->len + 1);
        memcpy(j->source, req->source, req->len);
        j->source[req->len] = '\0';
        j->len = req->len;
    }
    snprintf(j->name, sizeof j->name, "%s", req->name ? req->name : "candidate");
    j->iteration = req->iteration;
    j->fork = req->fork;
    j->reasoning_tokens = req->reasoning_tokens;
    j->done = done;
    j->arg = arg;
    j->submitted_ns = sg_loop_now(pd->cfg.loop);
    j->next = pd->jobs;
    if (pd->jobs) pd->jobs->prev = j;
    pd->jobs = j;
    submit_kind(j, SG_POOL_VALIDATE, on_validated);
    return 0;
}

static void end_iteration(void *impl, int iteration) {
    sg_port_dev *pd = impl;
    sg_pool_end_iteration(pd->cfg.pool, pool_iteration(pd, iteration));
}

static void drop_stale(void *impl, int iteration, uint64_t tokens, int running) {
    sg_port_dev *pd = impl;
    for (job *j = pd->jobs, *next; j; j = next) {
        next = j->next; /* a dropped job stays listed until its outcome is delivered */
        if (j->iteration != iteration || !j->fork || j->profiling || j->deliver_timer ||
            j->reasoning_tokens >= tokens)
            continue;
        j->stale = 1; /* before the call: a dropped job's callback may run inside it */
        if (running)
            sg_pool_preempt(pd->cfg.pool, j->pool_job); /* queued: dropped; running: yields */
        else if (!sg_pool_drop_queued(pd->cfg.pool, j->pool_job))
            j->stale = 0; /* running: it runs on */
    }
}

static void load(void *impl, int *queued, int *slots) {
    sg_port_dev *pd = impl;
    sg_pool_load(pd->cfg.pool, queued, slots);
}

sg_port_dev *sg_port_dev_new(const sg_port_dev_config *cfg, sg_dev_port *port, sg_err *err) {
    (void)err;
    sg_port_dev *pd = sg_xcalloc(1, sizeof *pd);
    pd->cfg = *cfg;
    pd->best = pd->bar = 1; /* the baseline */
    port->impl = pd;
    port->submit = submit;
    port->end_iteration = end_iteration;
    port->load = load;
    port->drop_stale = drop_stale;
    return pd;
}

void sg_port_dev_stats_get(const sg_port_dev *pd, sg_port_dev_stats *s) {
    memset(s, 0, sizeof *s);
    s->feedback = (int)pd->nlat;
    sg_mean_p95(pd->latency, pd->nlat, &s->latency_mean_s, &s->latency_p95_s);
}

/* Jobs still with the pool are cancelled there without reaching the task (closing stops
 * their callbacks), and outcomes not yet delivered are taken back. */
void sg_port_dev_free(sg_port_dev *pd) {
    if (!pd) return;
    pd->closing = 1;
    while (pd->jobs) {
        job *j = pd->jobs;
        unlink_job(pd, j);
        if (j->deliver_timer)
            sg_loop_timer_cancel(pd->cfg.loop, j->deliver_timer);
        else
            sg_pool_cancel(pd->cfg.pool, j->pool_job);
        free(j->source);
        free(j);
    }
    free(pd->latency);
    free(pd);
}
