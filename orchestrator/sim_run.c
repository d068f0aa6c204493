/* sim_run.c — one simulated run: the workload's tasks through the real task loop, the
 * model LLM, the device port over the pool scheduler and simulated slots, on the virtual
 * clock; recorded into the results database when asked (sim_run.h). */
#include "orchestrator/sim_run.h"

#include "common/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct simtask {
    struct simrun *run;
    int index;
    char name[32];
    sg_task *task;
    sg_port_llm_sim pl;
    sg_llm_port lp;
    sg_llm_port alp; /* lp through admission (c->admission) */
    sg_admit_member *member;
    sg_port_dev *pd;
    sg_dev_port dp;
    int64_t started_ns;
    int64_t db_task;
    int finished;
    sg_task_stats st;
} simtask;

typedef struct simrun {
    sg_loop *loop;
    FILE *events;
    simtask *t;
    int n, finished, started;
    const sg_sim_config *c;
    const sg_run_prompts *p;
    sg_task_config tc;
    sg_pool *pool;
    sg_sim_llm *llm;
    sg_err err;
    int failed;
    sg_results *db;
    int64_t campaign;
    sg_err db_err; /* the first failed write: the run stops with it */
    sg_sim_trace *trace;
    sg_admit_gate *gate; /* c->admission */
} simrun;

static void db_record(simrun *run, int64_t task, const json_t *ev) {
    sg_err e;
    if (run->db && !run->db_err.msg[0] &&
        sg_results_record(run->db, run->campaign, task, ev, &e) < 0) {
        run->db_err = e;
        sg_loop_stop(run->loop);
    }
}

/* Busy slot-seconds of the interval [a, b] into the trace's bins. */
static void add_busy(sg_sim_trace *tr, double a, double b) {
    int last = (int)(b / tr->bin_s);
    if (last >= tr->nbins) {
        int n = last + 64;
        tr->busy = sg_xrealloc(tr->busy, (size_t)n * sizeof *tr->busy);
        memset(tr->busy + tr->nbins, 0, (size_t)(n - tr->nbins) * sizeof *tr->busy);
        tr->nbins = n;
    }
    for (int i = (int)(a / tr->bin_s); i <= last; i++) {
        double lo = a > i * tr->bin_s ? a : i * tr->bin_s;
        double hi = b < (i + 1) * tr->bin_s ? b : (i + 1) * tr->bin_s;
        if (hi > lo) tr->busy[i] += hi - lo;
    }
}

/* The pool's events: to the database under the task they belong to (times since that
 * task's start, as a real campaign records them), and job ends into the utilisation trace. */
static void on_pool_event(void *arg, json_t *ev) {
    simrun *run = arg;
    double now = (double)sg_loop_now(run->loop) / SG_SEC;
    const char *name = json_string_value(json_object_get(ev, "ev"));
    if (run->trace && name && !strcmp(name, "job_end")) {
        double served = json_number_value(json_object_get(ev, "service_s"));
        add_busy(run->trace, now - served > 0 ? now - served : 0, now);
    }
    if (run->db) {
        const json_t *task = json_object_get(ev, "task"); /* none: the pool's own */
        int idx = json_is_integer(task) ? (int)json_integer_value(task) : -1;
        simtask *t = idx >= 0 && idx < run->started ? &run->t[idx] : NULL;
        sg_port_dev_event_iteration(ev);
        json_object_del(ev, "t_s");
        json_object_set_new(
            ev, "t_ms",
            json_real((double)(sg_loop_now(run->loop) - (t ? t->started_ns : 0)) / 1e6));
        db_record(run, t ? t->db_task : 0, ev);
    }
    json_decref(ev);
}

static int start_task(simrun *run, simtask *t, sg_err *err);

/* The next task starts from the loop, not inside the last one's finished hook. */
static void start_next(sg_loop *loop, void *arg) {
    (void)loop;
    simrun *run = arg;
    if (run->started < run->n && start_task(run, &run->t[run->started], &run->err) < 0) {
        run->failed = 1;
        sg_loop_stop(run->loop);
    }
}

/* Admission: new tasks while the gate has room (its room hook, and the first ones). */
static void admit_more(void *arg) {
    simrun *run = arg;
    while (!run->failed && run->started < run->n && sg_admit_gate_try_start(run->gate)) {
        sg_admit_gate_set_unstarted(run->gate, run->n - run->started - 1);
        if (start_task(run, &run->t[run->started], &run->err) < 0) {
            run->failed = 1;
            sg_loop_stop(run->loop);
        }
    }
}

/* What the model's servers would report on /metrics. */
static void admit_sample(void *arg, sg_admit_signals *s) {
    simrun *run = arg;
    sg_sim_llm_signals ls;
    sg_sim_llm_signals_get(run->llm, &ls);
    s->kv_usage = run->c->w.kv_tokens > 0 ? ls.kv_usage : -1;
    s->preemptions = (double)ls.preemptions;
    s->waiting = ls.waiting;
}

static void admit_record(void *arg, json_t *ev) {
    simrun *run = arg;
    if (run->events) {
        json_object_set_new(ev, "t_s", json_real((double)sg_loop_now(run->loop) / SG_SEC));
        json_dumpf(ev, run->events, JSON_COMPACT);
        fputc('\n', run->events);
    }
    if (run->db) {
        json_object_set_new(ev, "t_ms", json_real((double)sg_loop_now(run->loop) / 1e6));
        db_record(run, 0, ev);
    }
}

void sg_sim_config_default(sg_sim_config *c) {
    memset(c, 0, sizeof *c);
    sg_sim_workload_default(&c->w);
    snprintf(c->name, sizeof c->name, "specgen");
    sg_run_config_default(&c->run); /* optimize's policy, pools, tokens, iterations, stops */
    c->run.log_name = "specgen sim";
    c->run.db = NULL; /* sim records into c->db, when given */
    c->run.devices = 8;
    c->run.budget_ns = 2 * 3600 * SG_SEC; /* virtual */
    c->tasks = 50;
    sg_admit_config_default(&c->admit);
}

static void on_record(void *arg, json_t *ev) {
    simtask *t = arg;
    if (t->run->events) {
        json_object_set_new(ev, "task", json_integer(t->index));
        json_dumpf(ev, t->run->events, JSON_COMPACT);
        fputc('\n', t->run->events);
    }
    db_record(t->run, t->db_task, ev);
}

static void on_finished(void *arg, const sg_task_stats *s) {
    simtask *t = arg;
    t->st = *s;
    t->finished = 1;
    sg_err e;
    simrun *run = t->run;
    if (run->db && !run->db_err.msg[0] &&
        sg_results_task_totals(run->db, t->db_task, (int64_t)s->reasoning_tokens,
                               (int64_t)s->tokens_total, &e) < 0) {
        run->db_err = e;
        sg_loop_stop(run->loop);
        return;
    }
    sg_admit_member_free(t->member); /* its place frees: the gate starts the next */
    t->member = NULL;
    if (++t->run->finished == t->run->n)
        sg_loop_stop(t->run->loop);
    else if (!run->gate)
        sg_loop_timer(t->run->loop, 0, start_next, t->run);
}

static int start_task(simrun *run, simtask *t, sg_err *err) {
    int i = (int)(t - run->t);
    run->started++;
    t->run = run;
    t->index = i;
    snprintf(t->name, sizeof t->name, "sim-%d", i);
    t->pl = (sg_port_llm_sim){.model = run->llm,
                              .loop = run->loop,
                              .task = i,
                              .by_round = run->c->run.policy.kind == SG_POLICY_WORKERS};
    sg_port_llm_sim_init(&t->pl, &t->lp);
    sg_port_dev_config dc = {
        .loop = run->loop, .pool = run->pool, .task = i, .task_dir = "sim", .fb = &run->p->fb};
    sg_prof_opts_default(&dc.prof);
    dc.target_speedup = run->tc.crit.target_speedup; /* the pool's by-distance order */
    if (!(t->pd = sg_port_dev_new(&dc, &t->dp, err))) return -1;
    sg_task_spec spec = {.name = t->name,
                         .lang = "opencl",
                         .description = "a simulated task",
                         .baseline = "__kernel void k(__global float *y) { y[0] = 1; }"};
    if (run->db &&
        (t->db_task = sg_results_task_begin(run->db, run->campaign, t->name, "sim", err)) < 0)
        return -1;
    /* its start on the campaign's (virtual) clock, before its first event */
    if (run->db &&
        sg_results_task_clock(run->db, t->db_task, (double)sg_loop_now(run->loop) / 1e6, err) < 0)
        return -1;
    /* events are built only for someone who keeps them (most of a run's cost otherwise) */
    sg_task_hooks hooks = {run->events || run->db ? on_record : NULL, NULL, on_finished, t};
    const sg_llm_port *lp = &t->lp;
    if (run->gate) {
        t->member = sg_admit_gate_join(run->gate, &t->lp, &t->alp);
        lp = &t->alp;
    }
    if (!(t->task = sg_task_new(run->loop, &run->tc, &spec, lp, &t->dp, &hooks, err))) return -1;
    t->started_ns = sg_loop_now(run->loop);
    return sg_task_start(t->task, err);
}

/* The campaign row's config: what the run was, so that its rows can be told apart. */
static json_t *campaign_config(const sg_sim_config *sc, const sg_task_config *tc, uint64_t seed) {
    const sg_run_config *c = &sc->run;
    char pol[64];
    sg_policy_name(&c->policy, pol, sizeof pol);
    json_t *j = json_pack(
        "{s:s,s:b,s:I,s:s,s:s,s:I,s:i,s:i,s:i,s:i,s:i,s:f,s:f,s:I,s:i,s:b,s:b,s:s,s:b,"
        "s:f,s:f,s:f,s:f,s:I,s:I,s:i,s:f}",
        "configuration", sc->name, "simulated", 1, "seed", (json_int_t)seed, "workload", sc->w.name,
        "policy", pol, "probe_tokens", (json_int_t)c->probe_tokens, "gpus", c->devices,
        "slots_per_gpu", c->slots_per_device, "llm_instances", sc->w.instances, "tasks", sc->tasks,
        "concurrency", sc->concurrency, "target", tc->crit.target_speedup, "budget_s",
        (double)c->budget_ns / SG_SEC, "budget_tokens", (json_int_t)c->budget_tokens, "iterations",
        c->iterations, "early_stop", c->early_stop, "priorities", !c->pools.fifo, "pools",
        c->pools.mode == SG_POOL_STATIC ? "static" : "elastic", "kvstore", sc->w.kvstore_tokens > 0,
        "cache_tokens", sc->w.cache_tokens, "kvstore_tokens", sc->w.kvstore_tokens, "kv_placement",
        sc->w.kv_placement >= SG_SIM_PLACE_PREFIX ? -2.0 : sc->w.kv_placement, "delta",
        tc->crit.delta, "spacing_tokens", (json_int_t)tc->trigger.min_spacing_tokens,
        "interval_tokens", (json_int_t)tc->trigger.interval_tokens, "in_flight",
        tc->trigger.max_in_flight, "hysteresis", c->pools.hysteresis);
    if (c->preempt_stale) json_object_set_new(j, "preempt_stale", json_true()); /* given only */
    if (c->pools.by_distance)
        json_object_set_new(j, "by_distance",
                            json_string(c->pools.by_distance > 0 ? "far" : "near"));
    return j;
}

/* Runs the loop until every task has finished: 0, or -1 with err (the loop's, the
 * database's, a task's, or a stuck run's). */
static int drive(simrun *r, sg_err *err) {
    while (r->finished < r->n) {
        if (sg_loop_run(r->loop, err) < 0) return -1;
        if (r->db_err.msg[0]) {
            *err = r->db_err;
            return -1;
        }
        if (r->failed) {
            *err = r->err;
            return -1;
        }
        if (r->finished < r->n && sg_loop_pending_timers(r->loop) == 0) {
            sg_errf(err, "sim: %d of %d tasks are stuck with nothing left to happen",
                    r->n - r->finished, r->n);
            return -1;
        }
    }
    return 0;
}

/* The run's figures, summed over its tasks (e2e and first-correct times are means). */
static void sum_metrics(simrun *r, sg_sim_metrics *m, sg_sim_trace *trace) {
    m->tasks = r->n;
    for (int i = 0; i < r->n; i++) {
        simtask *t = &r->t[i];
        sg_port_dev_stats ds;
        sg_port_dev_stats_get(t->pd, &ds);
        m->feedback += ds.feedback;
        m->reached += t->st.end_reason == SG_CRIT_TARGET;
        m->e2e_s += (double)t->st.ended_ns / SG_SEC; /* since its own start */
        m->tokens += (double)t->st.tokens_total;
        m->best += t->st.best_speedup;
        if (trace && trace->reach_s)
            trace->reach_s[i] =
                t->st.end_reason == SG_CRIT_TARGET ? (double)t->st.ended_ns / SG_SEC : -1;
        if (t->st.first_correct_ns) {
            m->first_correct_s += (double)t->st.first_correct_ns / SG_SEC;
            m->first_correct_n++;
        }
    }
    m->e2e_s /= r->n;
    m->best /= r->n;
    if (m->first_correct_n) m->first_correct_s /= m->first_correct_n;
    sg_pool_stats st;
    sg_pool_stats_get(r->pool, &st);
    m->util = st.utilisation;
    m->util_queued = st.utilisation_queued;
    m->virtual_s = (double)sg_loop_now(r->loop) / SG_SEC;
    uint64_t dec, fill, saved;
    sg_sim_llm_counts(r->llm, &dec, &fill, &saved);
    m->prefill_saved = fill + saved ? (double)saved / (double)(fill + saved) : 0;
}

static void admit_metrics(simrun *r, sg_sim_metrics *m) {
    sg_sim_llm_signals ls;
    sg_sim_llm_signals_get(r->llm, &ls);
    m->preemptions = (double)ls.preemptions;
    if (!r->gate) return;
    sg_admit_stats st;
    sg_admit_gate_stats(r->gate, &st);
    m->admit_mean = m->virtual_s > 0 ? st.limit_time / m->virtual_s : 0;
    m->admit_max = st.max_limit;
    m->admit_changes = st.grows + st.backoffs;
    m->admit_pauses = st.pauses;
}

int sg_sim_run(const sg_sim_config *c, const sg_run_prompts *p, uint64_t seed, sg_sim_metrics *m,
               sg_sim_trace *trace, sg_err *err) {
    memset(m, 0, sizeof *m);
    simrun run = {.events = c->events, .db = c->db, .trace = trace};
    int rc = -1, nslots = c->run.devices * c->run.slots_per_device;
    sg_sim_llm *llm = NULL;
    sg_sim_slots *slots = NULL;
    sg_pool *pool = NULL;
    sg_pool_slot_desc *desc = sg_xcalloc((size_t)nslots, sizeof *desc);
    if (!(run.loop = sg_loop_new_virtual(0, err))) goto done;
    sg_sim_slot_model sm = c->w.slots;
    sm.seed = seed;
    slots = sg_sim_slots_new(run.loop, &sm, nslots);
    for (int i = 0; i < nslots; i++) {
        desc[i].device = i / c->run.slots_per_device;
        snprintf(desc[i].name, sizeof desc[i].name, "sim:%d/%d", desc[i].device,
                 i % c->run.slots_per_device);
    }
    if (sg_pool_new(run.loop, &c->run.pools, desc, nslots, &sg_sim_slot_ops, slots, &pool, err) < 0)
        goto done;
    sg_sim_slots_bind(slots, pool);
    llm = sg_sim_llm_new(run.loop, &c->w, seed);
    if (c->traces) sg_sim_llm_traces(llm, c->traces);
    sg_task_config tc; /* as optimize's and campaign's, with the workload's target */
    sg_run_task_config(&c->run, p, c->w.target_speedup, &tc);
    run.n = c->tasks;
    run.c = c;
    run.p = p;
    run.tc = tc;
    run.pool = pool;
    run.llm = llm;
    run.t = sg_xcalloc((size_t)run.n, sizeof *run.t);
    if (c->db || trace) sg_pool_on_event(pool, on_pool_event, &run);
    if (c->db) {
        char suite[160]; /* what `results campaigns` shows: workload, configuration, seed */
        snprintf(suite, sizeof suite, "sim:%s %s seed %llu", c->w.name, c->name,
                 (unsigned long long)seed);
        json_t *cfg = campaign_config(c, &tc, seed);
        run.campaign = sg_results_campaign_begin(c->db, "sim", suite, cfg, err);
        json_decref(cfg);
        if (run.campaign < 0) goto done;
        m->campaign = run.campaign;
    }
    if (c->admission) {
        sg_admit_gate_hooks gh = {admit_sample, c->events || c->db ? admit_record : NULL,
                                  admit_more, &run};
        run.gate = sg_admit_gate_new(run.loop, &c->admit, &gh);
        sg_admit_gate_set_unstarted(run.gate, run.n);
        admit_more(&run);
        if (run.failed) {
            *err = run.err;
            goto done;
        }
    } else {
        int first = c->concurrency > 0 && c->concurrency < run.n ? c->concurrency : run.n;
        for (int i = 0; i < first; i++)
            if (start_task(&run, &run.t[i], err) < 0) goto done;
    }
    if (drive(&run, err) < 0) goto done;
    sum_metrics(&run, m, trace);
    admit_metrics(&run, m);
    m->slots = nslots;
    rc = 0;
    if (c->db && (sg_results_campaign_end(c->db, run.campaign, "done", err) < 0 ||
                  sg_results_flush(c->db, err) < 0))
        rc = -1;
done:
    if (rc < 0 && run.campaign > 0) { /* say it ended badly; the first error is the one told */
        sg_err ignored;
        sg_results_campaign_end(c->db, run.campaign, "error", &ignored);
    }
    if (pool) sg_pool_on_event(pool, NULL, NULL);
    for (int i = 0; run.t && i < run.n; i++) sg_task_free(run.t[i].task);
    for (int i = 0; run.t && i < run.n; i++) sg_admit_member_free(run.t[i].member);
    sg_admit_gate_free(run.gate);
    for (int i = 0; run.t && i < run.n; i++) sg_port_dev_free(run.t[i].pd);
    for (int i = 0; run.t && i < run.n; i++) sg_port_llm_sim_fini(&run.t[i].pl);
    sg_pool_free(pool);
    sg_sim_slots_free(slots);
    sg_sim_llm_free(llm);
    sg_loop_free(run.loop);
    free(run.t);
    free(desc);
    return rc;
}
