/* sim_calib.c — `specgen sim --calibration-run`: the calibration (calib.h) on the models,
 * recorded as `specgen calibrate` records it, so that a fit can be checked against the
 * workload that made the data (sim_run.h). */
#include "orchestrator/calib.h"
#include "orchestrator/sim_run.h"

#include "common/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct scal {
    sg_loop *loop;
    const sg_sim_config *c;
    const sg_run_prompts *p;
    sg_results *db;
    int64_t campaign, task;
    char name[32];
    sg_err err;
    int failed, next, done;
    sg_sim_llm *llm;
    sg_pool *pool;
    sg_task_config tc;
    sg_port_llm_sim pl;
    sg_llm_port lp;
    sg_port_dev *pd;
    sg_dev_port dp;
    sg_calib_task *ct;
    uint64_t interval;
    const char *traces;
} scal;

static void fail(scal *s, const sg_err *e) {
    if (!s->failed) s->err = *e;
    s->failed = 1;
    sg_loop_stop(s->loop);
}

static void on_pool_event(void *arg, json_t *ev) {
    scal *s = arg;
    sg_err e;
    if (sg_calib_service_event(s->db, s->campaign, ev, &e) < 0) fail(s, &e);
    json_decref(ev);
}

static int start_task(scal *s, sg_err *err);

static void next_task(sg_loop *loop, void *arg) {
    (void)loop;
    scal *s = arg;
    sg_calib_task_free(s->ct);
    s->ct = NULL;
    sg_port_dev_free(s->pd);
    s->pd = NULL;
    sg_err e;
    if (s->next >= s->c->tasks) {
        s->done = 1;
        sg_loop_stop(s->loop);
    } else if (start_task(s, &e) < 0) {
        fail(s, &e);
    }
}

static void on_task_done(void *arg, const sg_calib_out *o) {
    scal *s = arg;
    sg_err e;
    if (s->db) {
        json_object_set_new(o->trace, "task", json_integer((json_int_t)s->task));
        json_object_set_new(o->trace, "campaign", json_integer((json_int_t)s->campaign));
        if (sg_results_calib_row(s->db, "calib_trace", o->trace, &e) < 0 ||
            sg_calib_write_rows(s->db, "calib_point", o->points, "task", s->task, &e) < 0 ||
            sg_calib_write_rows(s->db, "calib_fork", o->forks, "task", s->task, &e) < 0 ||
            sg_results_calib_task_end(s->db, s->task, o->error[0] ? "error" : "done", o->error,
                                      &e) < 0) {
            fail(s, &e);
            return;
        }
    }
    if (s->traces && o->replay && sg_calib_write_trace(s->traces, s->name, o->replay, &e) < 0) {
        fail(s, &e);
        return;
    }
    sg_loop_timer(s->loop, 0, next_task, s); /* not inside the task's own callback */
}

static int start_task(scal *s, sg_err *err) {
    int i = s->next++;
    char *name = s->name;
    snprintf(s->name, sizeof s->name, "sim-%d", i);
    s->pl = (sg_port_llm_sim){.model = s->llm, .loop = s->loop, .task = i};
    sg_port_llm_sim_init(&s->pl, &s->lp);
    sg_port_dev_config dc = {
        .loop = s->loop, .pool = s->pool, .task = i, .task_dir = "sim", .fb = &s->p->fb};
    sg_prof_opts_default(&dc.prof);
    if (!(s->pd = sg_port_dev_new(&dc, &s->dp, err))) return -1;
    if (s->db && (s->task = sg_results_task_begin(s->db, s->campaign, name, "sim", err)) < 0)
        return -1;
    static const sg_task_spec spec = {.name = "sim",
                                      .lang = "opencl",
                                      .description = "a simulated task",
                                      .baseline =
                                          "__kernel void k(__global float *y) { y[0] = 1; }"};
    sg_calib_task_config cc = {.loop = s->loop,
                               .llm = &s->lp,
                               .dev = &s->dp,
                               .tc = &s->tc,
                               .spec = &spec,
                               .interval_tokens = s->interval,
                               .done = on_task_done,
                               .arg = s};
    return (s->ct = sg_calib_task_start(&cc, err)) ? 0 : -1;
}

/* ---- the decode ramp and prefill probes, on one instance of the model ---- */
static void on_ramp_done(void *arg, json_t *rows, const char *error) {
    scal *s = arg;
    sg_err e;
    if (error) {
        sg_errf(&e, "sim: the rate ramp failed: %s", error);
        fail(s, &e);
        return;
    }
    if (s->db && sg_calib_write_rows(s->db, "calib_rate", rows, "campaign", s->campaign, &e) < 0) {
        fail(s, &e);
        return;
    }
    s->done = 1;
    sg_loop_stop(s->loop);
}

static int run_ramp(scal *s, sg_err *err) {
    sg_sim_workload w = s->c->w;
    w.instances = 1; /* one server's concurrency */
    sg_sim_llm *llm = sg_sim_llm_new(s->loop, &w, 0x7a3);
    sg_port_llm_sim pl = {.model = llm, .loop = s->loop, .task = 1 << 20};
    sg_llm_port lp;
    sg_port_llm_sim_init(&pl, &lp);
    static const uint64_t probes[] = {1000, 4000, 16000};
    sg_fork_request fork = {.tmpl = s->tc.tmpl, .system = "", .user = "", .answer_prefix = ""};
    sg_calib_ramp_config rc = {.loop = s->loop,
                               .llm = &lp,
                               .system = "",
                               .user = "",
                               .fork = &fork,
                               .max_streams = 64,
                               .tokens = 512,
                               .probe_tokens = probes,
                               .nprobe = 3,
                               .done = on_ramp_done,
                               .arg = s};
    s->done = 0;
    sg_calib_ramp *r = sg_calib_ramp_start(&rc, err);
    int rc2 = r ? 0 : -1;
    while (rc2 == 0 && !s->done && !s->failed && sg_loop_pending_timers(s->loop))
        if (sg_loop_run(s->loop, err) < 0) rc2 = -1;
    if (rc2 == 0 && s->failed) *err = s->err, rc2 = -1;
    sg_calib_ramp_free(r);
    sg_sim_llm_free(llm);
    return rc2;
}

static int drive(scal *s, sg_err *err) {
    if (start_task(s, err) < 0) return -1;
    while (!s->done && !s->failed) {
        if (sg_loop_run(s->loop, err) < 0) return -1;
        if (!s->done && !s->failed && sg_loop_pending_timers(s->loop) == 0)
            return sg_errf(err, "sim: the calibration run is stuck with nothing left to happen");
    }
    if (s->failed) return *err = s->err, -1;
    return run_ramp(s, err);
}

int sg_sim_calibration_run(const sg_sim_config *c, const sg_run_prompts *p, uint64_t seed,
                           uint64_t interval_tokens, const char *traces, sg_err *err) {
    scal s = {.c = c, .p = p, .db = c->db, .interval = interval_tokens, .traces = traces};
    int rc = -1, nslots = c->run.devices * c->run.slots_per_device;
    sg_sim_slots *slots = NULL;
    sg_pool_slot_desc *desc = sg_xcalloc((size_t)nslots, sizeof *desc);
    if (!(s.loop = sg_loop_new_virtual(0, err))) goto done;
    sg_sim_slot_model sm = c->w.slots;
    sm.seed = seed;
    slots = sg_sim_slots_new(s.loop, &sm, nslots);
    for (int i = 0; i < nslots; i++) snprintf(desc[i].name, sizeof desc[i].name, "sim:%d", i);
    if (sg_pool_new(s.loop, &c->run.pools, desc, nslots, &sg_sim_slot_ops, slots, &s.pool, err) < 0)
        goto done;
    sg_sim_slots_bind(slots, s.pool);
    sg_pool_on_event(s.pool, on_pool_event, &s);
    s.llm = sg_sim_llm_new(s.loop, &c->w, seed);
    if (c->traces) sg_sim_llm_traces(s.llm, c->traces);
    sg_run_task_config(&c->run, p, c->w.target_speedup, &s.tc);
    if (c->db) {
        char suite[160];
        snprintf(suite, sizeof suite, "sim:%s calibration seed %llu", c->w.name,
                 (unsigned long long)seed);
        json_t *cfg =
            json_pack("{s:s,s:I,s:i,s:I}", "workload", c->w.name, "seed", (json_int_t)seed, "tasks",
                      c->tasks, "interval_tokens", (json_int_t)interval_tokens);
        s.campaign = sg_results_campaign_begin(c->db, "sim-calibration", suite, cfg, err);
        json_decref(cfg);
        if (s.campaign < 0) goto done;
    }
    if (drive(&s, err) < 0) goto done;
    rc = 0;
    if (c->db && (sg_results_campaign_end(c->db, s.campaign, "done", err) < 0 ||
                  sg_results_flush(c->db, err) < 0))
        rc = -1;
    if (rc == 0)
        fprintf(stderr, "sim: calibration run of %d tasks recorded as campaign %lld\n", c->tasks,
                (long long)s.campaign);
done:
    if (s.pool) sg_pool_on_event(s.pool, NULL, NULL);
    sg_calib_task_free(s.ct);
    sg_port_dev_free(s.pd);
    sg_pool_free(s.pool);
    sg_sim_slots_free(slots);
    sg_sim_llm_free(s.llm);
    sg_loop_free(s.loop);
    free(desc);
    return rc;
}
