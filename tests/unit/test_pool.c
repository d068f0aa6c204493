/* The pool scheduler on the virtual clock with simulated slots (sim/slot_sim.c): priority
 * classes, turns across tasks, cancel of an iteration, role changes only between jobs, a
 * profile job alone on its device, no flapping under constant load, elastic ahead of a
 * fixed split on a burst, and the split arithmetic. */
#include "common/buf.h"
#include "pool/pool.h"
#include "sim/sim.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

/* ---- a harness: a virtual loop, n simulated slots on given devices, a log ---- */
typedef struct rec {
    uint64_t id;
    int tag; /* the test's name for the job */
    sg_pool_end end;
    int64_t start_ns, end_ns;
    int slot;
} rec;

typedef struct harness {
    sg_loop *loop;
    sg_sim_slots *sim;
    sg_pool *pool;
    rec log[4096];
    int nlog;
    int order[4096]; /* tags in start order */
    int norder;
    int splits, late_splits; /* late: after the first virtual minute */
    int requeues, offline, online, preempts;
    int start_slot[64]; /* by job id: the slot of its last start */
    int lost_slot;
    /* per device: running jobs and whether one is a profile job, checked at every start */
    int running[8], profiling[8];
    int overlap_violations;
    int role_changed_while_busy;
    int slot_dev[64];
    char start_role[64][16]; /* each slot's role when its running job started */
    sg_sim_job jobs[4096];   /* a job's tag is its index here */
} harness;

static void on_event(void *arg, json_t *ev) {
    harness *h = arg;
    const char *name = json_string_value(json_object_get(ev, "ev"));
    if (!strcmp(name, "pool_split")) {
        h->splits++;
        if (json_real_value(json_object_get(ev, "t_s")) > 60) h->late_splits++;
        if (getenv("TEST_POOL_VERBOSE")) {
            char *t = json_dumps(ev, JSON_COMPACT);
            print_message("# %s\n", t);
            free(t);
        }
    }
    if (!strcmp(name, "job_requeue")) h->requeues++;
    if (!strcmp(name, "job_preempt")) h->preempts++;
    if (!strcmp(name, "slot_offline")) h->offline++;
    if (!strcmp(name, "slot_online")) h->online++;
    if (!strcmp(name, "job_start")) {
        int slot = (int)json_integer_value(json_object_get(ev, "slot"));
        int dev = h->slot_dev[slot];
        int prof = !strcmp(json_string_value(json_object_get(ev, "kind")), "profile");
        if (h->profiling[dev] || (prof && h->running[dev] > 0)) h->overlap_violations++;
        h->running[dev]++;
        if (prof) h->profiling[dev] = 1;
        /* a job runs on a slot of its kind's role, unless the slot was lent */
        if (strcmp(json_string_value(json_object_get(ev, "role")),
                   json_string_value(json_object_get(ev, "kind"))) &&
            !json_is_true(json_object_get(ev, "lent")))
            h->role_changed_while_busy++;
        json_int_t id = json_integer_value(json_object_get(ev, "job"));
        if (id >= 0 && id < 64) h->start_slot[id] = slot;
        snprintf(h->start_role[slot], sizeof h->start_role[slot], "%s",
                 json_string_value(json_object_get(ev, "role")));
    }
    if (!strcmp(name, "job_end")) {
        int slot = (int)json_integer_value(json_object_get(ev, "slot"));
        int dev = h->slot_dev[slot];
        h->running[dev]--;
        if (!strcmp(json_string_value(json_object_get(ev, "kind")), "profile"))
            h->profiling[dev] = 0;
        if (strcmp(json_string_value(json_object_get(ev, "role")), h->start_role[slot]))
            h->role_changed_while_busy++; /* its slot changed role while it ran */
    }
    json_decref(ev);
}

static void on_done(void *arg, const sg_pool_job *job, const sg_pool_result *r) {
    harness *h = arg;
    rec *x = &h->log[h->nlog++];
    x->id = job->id;
    x->tag = (int)((const sg_sim_job *)job->work.model - h->jobs); /* submit(): jobs[tag] */
    x->end = r->end;
    x->start_ns = job->started_ns;
    x->end_ns = job->ended_ns;
    x->slot = job->slot;
    if (r->end != SG_POOL_DROPPED) h->order[h->norder++] = x->tag;
}

static int next_by_value;    /* the next harness_new's sg_pool_config.by_value (then reset) */
static int next_by_distance; /* and its by_distance */

static harness *harness_new(int nslots, const int *dev, const char *pools) {
    harness *h = sg_xcalloc(1, sizeof *h);
    sg_err err;
    h->loop = sg_loop_new_virtual(0, &err);
    sg_sim_slot_model m = {.service_s = {1, 3}, .pass_rate = 1, .speedup_mean = 2, .seed = 7};
    h->sim = sg_sim_slots_new(h->loop, &m, nslots);
    sg_pool_slot_desc d[64];
    for (int i = 0; i < nslots; i++) {
        d[i].device = dev ? dev[i] : 0;
        h->slot_dev[i] = d[i].device;
        snprintf(d[i].name, sizeof d[i].name, "sim:%d/%d", d[i].device, i);
    }
    sg_pool_config cfg;
    sg_pool_config_default(&cfg);
    assert_int_equal(sg_pool_config_parse(pools, &cfg, &err), 0);
    cfg.by_value = next_by_value;
    next_by_value = 0;
    cfg.by_distance = next_by_distance;
    next_by_distance = 0;
    assert_int_equal(
        sg_pool_new(h->loop, &cfg, d, nslots, &sg_sim_slot_ops, h->sim, &h->pool, &err), 0);
    sg_sim_slots_bind(h->sim, h->pool);
    sg_pool_on_event(h->pool, on_event, h);
    return h;
}

static void harness_free(harness *h) {
    sg_pool_free(h->pool);
    sg_sim_slots_free(h->sim);
    sg_loop_free(h->loop);
    free(h);
}

/* Submit a job whose tag is `tag` and whose service time is given. */
static uint64_t submit(harness *h, int tag, int task, uint64_t iter, sg_pool_origin o,
                       sg_pool_role kind, double service_s) {
    int k = tag;
    h->jobs[k] = (sg_sim_job){.service_s = service_s, .pass = 1, .speedup = 2};
    sg_pool_work w = {.kind = kind, .model = &h->jobs[k], .name = "job"};
    return sg_pool_submit(h->pool, task, iter, o, &w, on_done, h);
}

static void run(harness *h) {
    sg_err err;
    assert_int_equal(sg_loop_run(h->loop, &err), 0);
}

/* End an iteration from a timer, in the middle of a run. */
typedef struct midway {
    harness *h;
    uint64_t iteration;
} midway;

static void end_iteration_now(sg_loop *loop, void *arg) {
    (void)loop;
    midway *m = arg;
    sg_pool_end_iteration(m->h->pool, m->iteration);
}

/* ---- tests ---- */

static void submit_queue(sg_loop *loop, void *arg) {
    (void)loop;
    submit(arg, 2, 0, 2, SG_POOL_FORK, SG_POOL_VALIDATE, 1);  /* older fork of 2 */
    submit(arg, 3, 0, 2, SG_POOL_FORK, SG_POOL_VALIDATE, 1);  /* older fork of 2 */
    submit(arg, 4, 0, 2, SG_POOL_FINAL, SG_POOL_VALIDATE, 1); /* final of 2 */
    submit(arg, 5, 0, 2, SG_POOL_FORK, SG_POOL_VALIDATE, 1);  /* newest fork of 2 */
    submit(arg, 6, 0, 1, SG_POOL_FORK, SG_POOL_VALIDATE, 1);  /* iteration 1 */
}

/* One validate slot (beside an idle profile slot: a static split never lends it) busy
 * with job 1; then, queued: an older fork, the newest fork and the
 * final answer of a live iteration, and a fork of an iteration that already ended (with
 * keep_ended off it is dropped). Order: final, newest fork, older forks newest first. */
static void test_priority_order(void **state) {
    (void)state;
    harness *h = harness_new(2, (int[]){0, 1}, "static:1/1");
    submit(h, 1, 0, 1, SG_POOL_FORK, SG_POOL_VALIDATE, 1); /* runs at once */
    sg_loop_timer(h->loop, SG_SEC / 10, submit_queue, h);  /* 2-6 queue behind it */
    midway m = {h, 1}; /* iteration 1 ends at 0.5 s: 6 dropped, 1 killed */
    sg_loop_timer(h->loop, SG_SEC / 2, end_iteration_now, &m);
    run(h);
    int want[] = {1, 4, 5, 3, 2};
    assert_int_equal(h->norder, 5);
    for (int i = 0; i < 5; i++) assert_int_equal(h->order[i], want[i]);
    int dropped = 0, killed = 0;
    for (int i = 0; i < h->nlog; i++) {
        dropped += h->log[i].end == SG_POOL_DROPPED && h->log[i].tag == 6;
        killed += h->log[i].end == SG_POOL_KILLED && h->log[i].tag == 1;
    }
    assert_int_equal(dropped, 1);
    assert_int_equal(killed, 1);
    harness_free(h);
}

/* A validate job of 1 s with a value (by_value: how far its fork's reasoning had got) and a
 * distance to its task's target (by_distance). */
static uint64_t submit_valued(harness *h, int tag, int task, uint64_t iter, sg_pool_origin o,
                              double value, double distance) {
    h->jobs[tag] = (sg_sim_job){.service_s = 1, .pass = 1, .speedup = 2};
    sg_pool_work w = {.kind = SG_POOL_VALIDATE,
                      .model = &h->jobs[tag],
                      .name = "job",
                      .value = value,
                      .distance = distance};
    return sg_pool_submit(h->pool, task, iter, o, &w, on_done, h);
}

static uint64_t submit_value(harness *h, int tag, int task, uint64_t iter, sg_pool_origin o,
                             double value) {
    return submit_valued(h, tag, task, iter, o, value, 0);
}

/* by_value: the final answers first, then every live fork across tasks by
 * value, largest first (not each iteration's newest with tasks taking turns). A job still
 * queued can be dropped alone (sg_pool_drop_queued); a running one is not. */
static void test_by_value_order_and_drop_queued(void **state) {
    (void)state;
    next_by_value = 1;
    harness *h = harness_new(2, (int[]){0, 1}, "static:1/1");
    uint64_t first = submit_value(h, 1, 0, 1, SG_POOL_FINAL, 0); /* all queue before a dispatch */
    submit_value(h, 2, 0, 1, SG_POOL_FORK, 100);
    submit_value(h, 3, 0, 1, SG_POOL_FORK, 900);
    submit_value(h, 4, 1, 2, SG_POOL_FORK, 500);
    uint64_t gone = submit_value(h, 5, 1, 2, SG_POOL_FORK, 300);
    submit_value(h, 6, 1, 2, SG_POOL_FINAL, 50);
    assert_int_equal(sg_pool_drop_queued(h->pool, gone), 1);
    run(h);
    int want[] = {6, 1, 3, 4,
                  2}; /* the finals (tasks take turns: task 1's first), then 900, 500, 100 */
    assert_int_equal(h->norder, 5);
    for (int i = 0; i < 5; i++) assert_int_equal(h->order[i], want[i]);
    assert_int_equal(sg_pool_drop_queued(h->pool, first), 0); /* long gone */
    harness_free(h);
}

/* A job with a distance to its task's target (by_distance). */
static uint64_t submit_distance(harness *h, int tag, int task, uint64_t iter, sg_pool_origin o,
                                double distance) {
    return submit_valued(h, tag, task, iter, o, 0, distance);
}

/* by_distance, by hand: one validate slot; queued at once (before any dispatch) the finals
 * of tasks 0-2 at distances 1.8, 1.2, 3.0 and, in the fork class, task 3's newest fork at
 * 9.0. Far first: 3.0, 1.8, 1.2 (tasks 2, 0, 1), then the fork (the class still goes
 * first); near first: 1.2, 1.8, 3.0 (tasks 1, 0, 2), then the fork; off: the tasks' turns
 * (task 1's first, then 2, 0). */
static void test_by_distance_order(void **state) {
    (void)state;
    static const int want[3][4] = {{2, 1, 3, 4}, {3, 1, 2, 4}, {2, 3, 1, 4}}; /* near, far, off */
    for (int mode = -1; mode <= 1; mode++) {
        next_by_distance = mode;
        harness *h = harness_new(2, (int[]){0, 1}, "static:1/1");
        submit_distance(h, 1, 0, 1, SG_POOL_FINAL, 1.8);
        submit_distance(h, 2, 1, 2, SG_POOL_FINAL, 1.2);
        submit_distance(h, 3, 2, 3, SG_POOL_FINAL, 3.0);
        submit_distance(h, 4, 3, 4, SG_POOL_FORK, 9.0);
        run(h);
        const int *w = want[mode < 0 ? 0 : mode > 0 ? 1 : 2];
        if (getenv("TEST_POOL_VERBOSE"))
            print_message("# mode %d: %d %d %d %d\n", mode, h->order[0], h->order[1], h->order[2],
                          h->order[3]);
        assert_int_equal(h->norder, 4);
        for (int i = 0; i < 4; i++) assert_int_equal(h->order[i], w[i]);
        harness_free(h);
    }
    sg_pool_config c;
    sg_err err;
    sg_pool_config_default(&c);
    assert_int_equal(sg_pool_by_distance_parse("near", &c, &err), 0);
    assert_int_equal(c.by_distance, -1);
    assert_int_equal(sg_pool_by_distance_parse("far", &c, &err), 0);
    assert_int_equal(c.by_distance, 1);
    assert_int_equal(sg_pool_by_distance_parse("closest", &c, &err), -1);
    assert_non_null(strstr(err.msg, "--by-distance 'closest'"));
}

/* Preemption, by hand (sg_pool_preempt), one validate slot:
 *  - job 1 (5 s) runs; marked stale at 0.5 s it runs on while nothing waits; job 2 arrives at
 *    1 s: job 1 is killed then (KILLED, a job_preempt event) and job 2 starts at 1 s on its
 *    slot, done at 2 s;
 *  - job 3 (1 s) is queued behind job 2: marked stale at 1.5 s it is dropped at once (1);
 *  - job 4 (1 s) runs from 2 s; marked stale at 2.5 s with nothing waiting it finishes (DONE
 *    at 3 s); job 5 (2 s), submitted at 4 s, runs; job 6 queues behind it at 4.5 s, when
 *    job 5 is marked stale at once too: killed at 4.5 s, job 6 runs 4.5-5.5 s. */
typedef struct preempt_plan {
    harness *h;
    uint64_t id[8];
    int step, rc[8];
} preempt_plan;

static void preempt_step(sg_loop *loop, void *arg) {
    (void)loop;
    preempt_plan *pp = arg;
    harness *h = pp->h;
    switch (pp->step++) {
    case 0: pp->rc[1] = sg_pool_preempt(h->pool, pp->id[1]); break;        /* 0.5 s */
    case 1:                                                                /* 1 s */
        pp->id[3] = submit(h, 3, 1, 2, SG_POOL_FORK, SG_POOL_VALIDATE, 1); /* older: waits */
        pp->id[2] = submit(h, 2, 1, 2, SG_POOL_FORK, SG_POOL_VALIDATE, 1);
        break;
    case 2: pp->rc[3] = sg_pool_preempt(h->pool, pp->id[3]); break; /* 1.5 s: queued */
    case 3: pp->id[4] = submit(h, 4, 2, 3, SG_POOL_FORK, SG_POOL_VALIDATE, 1); break; /* 2 s */
    case 4: pp->rc[4] = sg_pool_preempt(h->pool, pp->id[4]); break; /* 2.5 s: alone */
    case 5: pp->id[5] = submit(h, 5, 3, 4, SG_POOL_FORK, SG_POOL_VALIDATE, 2); break; /* 4 s */
    case 6: /* 4.5 s: a job waits, then job 5 turns stale */
        pp->id[6] = submit(h, 6, 4, 5, SG_POOL_FORK, SG_POOL_VALIDATE, 1);
        pp->rc[5] = sg_pool_preempt(h->pool, pp->id[5]);
        break;
    }
}

static const rec *rec_of(const harness *h, int tag) {
    for (int i = 0; i < h->nlog; i++)
        if (h->log[i].tag == tag) return &h->log[i];
    fail_msg("job %d never ended", tag);
    return NULL;
}

static void test_preempt_running_yields_when_work_waits(void **state) {
    (void)state;
    harness *h = harness_new(2, (int[]){0, 1}, "static:1/1");
    preempt_plan pp = {.h = h};
    pp.id[1] = submit(h, 1, 0, 1, SG_POOL_FORK, SG_POOL_VALIDATE, 5);
    static const double at[] = {0.5, 1, 1.5, 2, 2.5, 4, 4.5};
    for (int i = 0; i < 7; i++)
        sg_loop_timer(h->loop, (int64_t)(at[i] * SG_SEC), preempt_step, &pp);
    run(h);
    assert_int_equal(pp.rc[1], 2);
    assert_int_equal(pp.rc[3], 1);
    assert_int_equal(pp.rc[4], 2);
    assert_int_equal(pp.rc[5], 2);
    static const struct {
        int tag;
        sg_pool_end end;
        double start_s, end_s; /* start: -1 never ran */
    } want[] = {{1, SG_POOL_KILLED, 0, 1},     {2, SG_POOL_DONE, 1, 2},
                {3, SG_POOL_DROPPED, -1, 1.5}, {4, SG_POOL_DONE, 2, 3},
                {5, SG_POOL_KILLED, 4, 4.5},   {6, SG_POOL_DONE, 4.5, 5.5}};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        const rec *r = rec_of(h, want[i].tag);
        assert_int_equal(r->end, want[i].end);
        if (want[i].start_s >= 0)
            assert_true(fabs((double)r->start_ns / SG_SEC - want[i].start_s) < 1e-9);
        assert_true(fabs((double)r->end_ns / SG_SEC - want[i].end_s) < 1e-9);
    }
    assert_int_equal(h->preempts, 2);
    sg_pool_stats st;
    sg_pool_stats_get(h->pool, &st);
    assert_int_equal(st.role[SG_POOL_VALIDATE].preempted, 2);
    assert_int_equal(st.role[SG_POOL_VALIDATE].killed, 2);
    assert_int_equal(st.role[SG_POOL_VALIDATE].dropped, 1);
    assert_int_equal(sg_pool_preempt(h->pool, pp.id[6]), 0); /* gone */
    harness_free(h);
}

/* On a static split a stale validation yields only to a validate job: a profile job
 * waiting behind a busy profile slot cannot use its slot. Job 1 (validate, 3 s) is stale at
 * once; job 2 (profile, 2 s) runs, job 3 (profile) waits from 0.5 s: job 1 runs to its end
 * (DONE at 3 s); on an elastic pool the same wait preempts it (KILLED at 0.5 s). */
typedef struct stale_then_wait {
    harness *h;
    uint64_t stale;
    int rc;
} stale_then_wait;

static void mark_stale_now(sg_loop *loop, void *arg) {
    (void)loop;
    stale_then_wait *x = arg;
    x->rc = sg_pool_preempt(x->h->pool, x->stale);
}

static void submit_profile_now(sg_loop *loop, void *arg) {
    (void)loop;
    stale_then_wait *x = arg;
    submit(x->h, 3, 1, 2, SG_POOL_FINAL, SG_POOL_PROFILE, 1);
}

static void test_preempt_static_yields_to_its_role_only(void **state) {
    (void)state;
    for (int elastic = 0; elastic <= 1; elastic++) {
        harness *h = harness_new(2, (int[]){0, 1}, elastic ? "elastic" : "static:1/1");
        stale_then_wait x = {.h = h};
        x.stale = submit(h, 1, 0, 1, SG_POOL_FORK, SG_POOL_VALIDATE, 3);
        submit(h, 2, 1, 2, SG_POOL_FINAL, SG_POOL_PROFILE, 2);
        sg_loop_timer(h->loop, SG_SEC / 4, mark_stale_now, &x); /* both run by then */
        sg_loop_timer(h->loop, SG_SEC / 2, submit_profile_now, &x);
        run(h);
        assert_int_equal(x.rc, 2);
        const rec *r = rec_of(h, 1);
        assert_int_equal(r->end, elastic ? SG_POOL_KILLED : SG_POOL_DONE);
        assert_true(fabs((double)r->end_ns / SG_SEC - (elastic ? 0.5 : 3)) < 1e-9);
        assert_int_equal(h->preempts, elastic);
        harness_free(h);
    }
}

/* Two tasks, each with three older forks queued behind a busy slot: they take turns. */
static void test_tasks_take_turns(void **state) {
    (void)state;
    harness *h = harness_new(2, (int[]){0, 1}, "static:1/1");
    submit(h, 1, 0, 1, SG_POOL_FINAL, SG_POOL_VALIDATE, 1);
    for (int i = 0; i < 3; i++) submit(h, 10 + i, 0, 1, SG_POOL_FORK, SG_POOL_VALIDATE, 1);
    for (int i = 0; i < 3; i++) submit(h, 20 + i, 1, 2, SG_POOL_FORK, SG_POOL_VALIDATE, 1);
    run(h);
    assert_int_equal(h->norder, 7);
    for (int i = 2; i < 7; i++) /* after the first fork, tasks alternate */
        assert_int_not_equal(h->order[i] / 10, h->order[i - 1] / 10);
    harness_free(h);
}

static uint64_t submit(harness *h, int tag, int task, uint64_t iter, sg_pool_origin o,
                       sg_pool_role kind, double service_s);
static void submit_later(sg_loop *loop, void *arg) {
    (void)loop;
    submit(arg, 4, 0, 1, SG_POOL_FORK, SG_POOL_VALIDATE, 1);
    submit(arg, 5, 0, 1, SG_POOL_FINAL, SG_POOL_PROFILE, 1);
}

/* An iteration ends early: its queued jobs are dropped, its running validate job is
 * killed at once, and its running profile job runs to its end. Other iterations go on.
 * Jobs 4 and 5 come after 1-3 have started. */
static void test_cancel_iteration_midway(void **state) {
    (void)state;
    int dev[] = {0, 1, 2};
    harness *h = harness_new(3, dev, "static:2/1");
    submit(h, 1, 0, 1, SG_POOL_FORK, SG_POOL_VALIDATE, 5); /* running: killed */
    submit(h, 2, 0, 7, SG_POOL_FORK, SG_POOL_VALIDATE, 5); /* other iteration */
    submit(h, 3, 0, 1, SG_POOL_FORK, SG_POOL_PROFILE, 5);  /* running: finishes */
    sg_loop_timer(h->loop, SG_SEC, submit_later, h);       /* 4, 5: queued, dropped */
    midway m = {h, 1};
    sg_loop_timer(h->loop, 2 * SG_SEC, end_iteration_now, &m);
    run(h);
    sg_pool_end want[6] = {
        0, SG_POOL_KILLED, SG_POOL_DONE, SG_POOL_DONE, SG_POOL_DROPPED, SG_POOL_DROPPED};
    assert_int_equal(h->nlog, 5);
    for (int i = 0; i < h->nlog; i++) assert_int_equal(h->log[i].end, want[h->log[i].tag]);
    for (int i = 0; i < h->nlog; i++)
        if (h->log[i].tag == 1) assert_int_equal(h->log[i].end_ns, 2 * SG_SEC); /* at once */
    harness_free(h);
}

/* Two slots on one device, one per role: validate jobs keep coming while profile jobs
 * arrive; a profile job never runs beside anything on its device, and the device drains
 * for it (the profile jobs do not starve). */
static void test_profile_alone_on_device(void **state) {
    (void)state;
    int dev[] = {0, 0};
    harness *h = harness_new(2, dev, "static:1/1");
    int tag = 1;
    for (int i = 0; i < 40; i++) submit(h, tag++, 0, 1, SG_POOL_FORK, SG_POOL_VALIDATE, 0.5);
    for (int i = 0; i < 5; i++) submit(h, tag++, 0, 1, SG_POOL_FORK, SG_POOL_PROFILE, 1);
    run(h);
    assert_int_equal(h->overlap_violations, 0);
    assert_int_equal(h->norder, 45);
    int last_profile = 0; /* the profile jobs were not all left to the end */
    for (int i = 0; i < h->norder; i++)
        if (h->order[i] > 40) last_profile = i;
    assert_true(last_profile < 44 || h->order[40] > 40);
    int first_profile = 45;
    for (int i = 0; i < h->norder; i++)
        if (h->order[i] > 40 && i < first_profile) first_profile = i;
    assert_true(first_profile < 10);
    harness_free(h);
}

/* Constant load for ten virtual minutes on 6 slots starting at 3/3: a validate job of 1 s
 * every 0.3 s (3.3 slots' worth) and a profile job of 3 s every 4 s (0.75 of a slot). The
 * split moves towards validate within the first minute (4/2 and 5/1 are close: it may try
 * both) and then stays put; no job ever ran on a slot whose role changed under it. */
typedef struct feeder {
    harness *h;
    int tag, left;
    double every_s, service_s;
    sg_pool_role kind;
} feeder;

static void feed(sg_loop *loop, void *arg) {
    feeder *f = arg;
    submit(f->h, f->tag++ % 4096, 0, 1, SG_POOL_FORK, f->kind, f->service_s);
    if (--f->left > 0) sg_loop_timer(loop, (int64_t)(f->every_s * SG_SEC), feed, f);
}

static void test_no_flapping(void **state) {
    (void)state;
    harness *h = harness_new(6, (int[]){0, 1, 2, 3, 4, 5}, "elastic");
    feeder v = {h, 0, 2000, 0.3, 1.0, SG_POOL_VALIDATE};
    feeder p = {h, 2048, 150, 4.0, 3.0, SG_POOL_PROFILE};
    sg_loop_timer(h->loop, 0, feed, &v);
    sg_loop_timer(h->loop, 0, feed, &p);
    run(h);
    assert_true(h->splits >= 1);
    assert_true(h->late_splits <= 1);
    assert_int_equal(h->role_changed_while_busy, 0);
    sg_pool_stats st;
    sg_pool_stats_get(h->pool, &st);
    assert_true(st.role[SG_POOL_VALIDATE].slots >= 4);
    assert_true(st.role[SG_POOL_PROFILE].slots >= 1);
    harness_free(h);
}

/* A burst: 30 validate jobs at once, then (as candidates pass) 10 profile jobs, on 4
 * slots. Elastic finishes the burst sooner and with a lower p95 wait than a fixed
 * even split. */
static double burst(const char *pools, double *p95, double *util) {
    harness *h = harness_new(4, (int[]){0, 1, 2, 3}, pools);
    for (int i = 0; i < 30; i++) submit(h, i, i % 2, 1, SG_POOL_FORK, SG_POOL_VALIDATE, 1);
    for (int i = 0; i < 10; i++) submit(h, 100 + i, i % 2, 1, SG_POOL_FORK, SG_POOL_PROFILE, 1);
    run(h);
    sg_pool_stats st;
    sg_pool_stats_get(h->pool, &st);
    *p95 = fmax(st.role[0].wait_p95_s, st.role[1].wait_p95_s);
    *util = st.utilisation;
    double end = (double)sg_loop_now(h->loop) / SG_SEC;
    harness_free(h);
    return end;
}

static void test_elastic_beats_static_on_burst(void **state) {
    (void)state;
    double pe, ps, ue, us;
    double te = burst("elastic", &pe, &ue), ts = burst("static:2/2", &ps, &us);
    print_message(
        "# burst: elastic %.1fs p95 %.1fs util %.2f; static:2/2 %.1fs p95 %.1fs util %.2f\n", te,
        pe, ue, ts, ps, us);
    assert_true(te < ts);
    assert_true(pe < ps);
    assert_true(ue > us);
}

static void test_split_arithmetic(void **state) {
    (void)state;
    /* M/M/1 with rho 0.5: W = rho/(mu - lambda) = 0.5/(1-0.5) = 1 s for s = 1. */
    assert_true(fabs(sg_pool_mmc_wait(0.5, 1, 1) - 1.0) < 1e-9);
    assert_true(isinf(sg_pool_mmc_wait(2, 1, 2)));
    assert_true(sg_pool_mmc_wait(0, 1, 1) == 0);
    /* all load on profile: most slots profile, but one stays validate while it has work */
    double lam[2] = {0.01, 2}, svc[2] = {1, 3};
    int need[2] = {1, 1};
    assert_int_equal(sg_pool_best_split(8, lam, svc, need, NULL), 1);
    int need_p[2] = {0, 1};
    double lam0[2] = {0, 2};
    assert_int_equal(sg_pool_best_split(8, lam0, svc, need_p, NULL), 0);
    /* one slot: the role with the load */
    double lam1[2] = {3, 0.01};
    assert_int_equal(sg_pool_best_split(1, lam1, svc, need, NULL), 1);
    sg_pool_config c;
    sg_err err;
    sg_pool_config_default(&c);
    assert_int_equal(sg_pool_config_parse("static:3/1", &c, &err), 0);
    assert_int_equal(c.static_validate, 3);
    assert_int_equal(sg_pool_config_parse("static:3", &c, &err), -1);
    assert_non_null(strstr(err.msg, "static:V/P"));
}

/* A slot lost mid-job (a remote agent died): its job goes back to the queue ahead of
 * later arrivals and runs again elsewhere; its done callback runs once, DONE; the lost run
 * is neither a finished job nor a second wait sample; the slot takes nothing while offline
 * and takes work again once back. */
static void lose_slot(sg_loop *loop, void *arg) {
    (void)loop;
    harness *h = arg;
    int slot = h->start_slot[1];        /* the slot running job 1 (tag 0) */
    sg_sim_slot_ops.kill(h->sim, slot); /* the implementation reports it no more */
    sg_pool_slot_offline(h->pool, slot, "agent stopped answering");
    sg_pool_slot_offline(h->pool, slot, "again"); /* a second call changes nothing */
    assert_false(sg_pool_slot_is_online(h->pool, slot));
    h->lost_slot = slot;
}

static void back_online(sg_loop *loop, void *arg) {
    (void)loop;
    harness *h = arg;
    sg_pool_slot_online(h->pool, h->lost_slot);
}

static void test_lost_slot_requeues(void **state) {
    (void)state;
    int dev[] = {0, 1};
    harness *h = harness_new(2, dev, "elastic");
    for (int tag = 0; tag < 3; tag++) submit(h, tag, 0, 1, SG_POOL_FINAL, SG_POOL_VALIDATE, 5);
    sg_loop_timer(h->loop, 1 * SG_SEC, lose_slot, h);
    sg_loop_timer(h->loop, 3 * SG_SEC, back_online, h);
    run(h);
    assert_int_equal(h->nlog, 3); /* every job ended once */
    int seen[3] = {0};
    for (int i = 0; i < h->nlog; i++) {
        assert_int_equal(h->log[i].end, SG_POOL_DONE);
        seen[h->log[i].tag]++;
        if (h->log[i].tag == 0) { /* again from the start, on the slot that came back */
            assert_int_equal(h->log[i].start_ns, 3 * SG_SEC);
            assert_int_equal(h->log[i].end_ns, 8 * SG_SEC);
            assert_int_equal(h->log[i].slot, h->lost_slot);
        }
        if (h->log[i].tag == 2) assert_int_equal(h->log[i].start_ns, 5 * SG_SEC);
    }
    for (int t = 0; t < 3; t++) assert_int_equal(seen[t], 1);
    assert_int_equal(h->requeues, 1);
    assert_int_equal(h->offline, 1);
    assert_int_equal(h->online, 1);
    sg_pool_stats st;
    sg_pool_stats_get(h->pool, &st);
    assert_int_equal(st.role[SG_POOL_VALIDATE].jobs + st.role[SG_POOL_PROFILE].jobs, 3);
    assert_int_equal(st.role[SG_POOL_VALIDATE].killed, 0);
    /* waits: 0 (tag 1), 3 (tag 0: one sample, its whole wait), 5 (tag 2) */
    double mean = st.role[SG_POOL_VALIDATE].wait_mean_s;
    assert_true(fabs(mean - 8.0 / 3) < 1e-6);
    harness_free(h);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_priority_order),
        cmocka_unit_test(test_tasks_take_turns),
        cmocka_unit_test(test_by_value_order_and_drop_queued),
        cmocka_unit_test(test_by_distance_order),
        cmocka_unit_test(test_preempt_running_yields_when_work_waits),
        cmocka_unit_test(test_preempt_static_yields_to_its_role_only),
        cmocka_unit_test(test_cancel_iteration_midway),
        cmocka_unit_test(test_profile_alone_on_device),
        cmocka_unit_test(test_no_flapping),
        cmocka_unit_test(test_elastic_beats_static_on_burst),
        cmocka_unit_test(test_split_arithmetic),
        cmocka_unit_test(test_lost_slot_requeues),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
