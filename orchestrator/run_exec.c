/* run_exec.c — one task running on a loop through the ports it is given, and its outputs:
 * events.jsonl (each event as it comes), best.EXT and summary.json (at the end). */
#include "orchestrator/optimize_ui.h"
#include "common/buf.h"
#include "orchestrator/run.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sg_run_exec {
    sg_loop *loop;
    const sg_run_config *c;
    const sg_run_task *t;
    sg_task_config cfg;
    sg_task *task;
    sg_ui ui;
    FILE *events;
    char policy[32];
    int finished;
    sg_task_stats final;
    int64_t t0;
    const sg_pool *pool;
    const sg_port_dev *pd;
};

void sg_run_exec_set_pool(sg_run_exec *e, const sg_pool *pool, const sg_port_dev *pd) {
    e->pool = pool;
    e->pd = pd;
}

static void on_record(void *arg, json_t *ev) {
    sg_run_exec *e = arg;
    if (e->events) {
        json_dumpf(ev, e->events, JSON_COMPACT);
        fputc('\n', e->events);
        fflush(e->events); /* every event on disk: a killed run keeps its trace */
    }
    sg_ui_event(&e->ui, ev);
}

void sg_run_exec_pool_event(void *arg, json_t *ev) {
    sg_run_exec *e = arg;
    json_object_del(ev, "t_s"); /* the pool's own clock: the task's is the one in the file */
    json_object_set_new(ev, "t_ms", json_real((double)(sg_loop_now(e->loop) - e->t0) / 1e6));
    if (e->events) {
        json_dumpf(ev, e->events, JSON_COMPACT);
        fputc('\n', e->events);
        fflush(e->events);
    }
    sg_ui_event(&e->ui, ev);
    json_decref(ev);
}

static void on_progress(void *arg, const sg_task_stats *s) {
    sg_run_exec *e = arg;
    sg_ui_progress(&e->ui, s, sg_loop_now(e->loop));
}

static void on_finished(void *arg, const sg_task_stats *s) {
    sg_run_exec *e = arg;
    e->final = *s;
    e->finished = 1;
    sg_loop_stop(e->loop);
}

static void task_config(const sg_run_config *c, const sg_run_prompts *p, const sg_run_task *t,
                        sg_task_config *cfg) {
    *cfg = (sg_task_config){.policy = c->policy, .feedback_last = 4};
    sg_criterion_default(&cfg->crit);
    double task_target = t->spec.target_speedup > 0 ? t->spec.target_speedup : 2.0;
    cfg->crit.target_speedup = c->target > 0 ? c->target : task_target;
    cfg->crit.budget_ns = c->budget_ns;
    cfg->crit.budget_tokens = c->budget_tokens;
    cfg->crit.max_iterations = c->iterations;
    cfg->crit.early_stop = c->early_stop;
    cfg->trigger = p->trigger;
    cfg->tmpl = &p->tmpl;
    cfg->prompts = &p->task;
}

sg_run_exec *sg_run_exec_start(sg_loop *loop, const sg_run_config *c, const sg_run_prompts *p,
                               const sg_run_task *t, const sg_llm_port *llm, const sg_dev_port *dev,
                               sg_err *err) {
    sg_run_exec *e = sg_xcalloc(1, sizeof *e);
    e->loop = loop;
    e->t0 = sg_loop_now(loop);
    e->c = c;
    e->t = t;
    task_config(c, p, t, &e->cfg);
    sg_policy_name(&c->policy, e->policy, sizeof e->policy);
    char path[4200];
    snprintf(path, sizeof path, "%s/events.jsonl", t->out_dir);
    e->events = fopen(path, "w");
    if (!e->events) {
        sg_errf(err, "cannot write %s: %s", path, strerror(errno));
        goto fail;
    }
    sg_ui_init(&e->ui, stderr);
    const char *lang = sg_dev_lang_name(t->lang);
    sg_task_spec ts = {t->spec.name, lang, t->spec.description ? t->spec.description : "",
                       t->baseline.data};
    sg_task_hooks hooks = {on_record, on_progress, on_finished, e};
    e->task = sg_task_new(loop, &e->cfg, &ts, llm, dev, &hooks, err);
    if (!e->task) goto fail;
    fprintf(stderr, "%s: task %s (%s), policy %s, target %.2fx, model %s, template %s\n",
            c->log_name, t->spec.name, lang, e->policy, e->cfg.crit.target_speedup, c->model,
            p->tmpl.name);
    if (sg_task_start(e->task, err) < 0) goto fail;
    return e;
fail:
    sg_run_exec_free(e);
    return NULL;
}

int sg_run_exec_finished(const sg_run_exec *e, sg_task_stats *final) {
    if (e->finished && final) *final = e->final;
    return e->finished;
}

void sg_run_exec_cancel(sg_run_exec *e) {
    if (e->task) sg_task_cancel(e->task);
}

static json_t *role_json(const sg_pool_role_stats *r) {
    return json_pack("{s:i,s:I,s:I,s:I,s:f,s:f,s:f,s:f,s:f}", "slots", r->slots, "jobs",
                     (json_int_t)r->jobs, "dropped", (json_int_t)r->dropped, "killed",
                     (json_int_t)r->killed, "busy_s", r->busy_s, "available_s", r->available_s,
                     "utilisation", r->utilisation, "wait_mean_s", r->wait_mean_s, "wait_p95_s",
                     r->wait_p95_s);
}

/* summary.json's "pools": the split, each role's use and waits, and the feedback. */
static json_t *pool_json(const sg_run_exec *e) {
    sg_pool_stats st;
    sg_pool_stats_get(e->pool, &st);
    sg_port_dev_stats ds = {0};
    if (e->pd) sg_port_dev_stats_get(e->pd, &ds);
    char mode[32];
    if (e->c->pools.mode == SG_POOL_STATIC)
        snprintf(mode, sizeof mode, "static:%d/%d", e->c->pools.static_validate,
                 e->c->pools.static_profile);
    else
        snprintf(mode, sizeof mode, "elastic");
    return json_pack("{s:s,s:i,s:i,s:f,s:o,s:o,s:i,s:f,s:f}", "mode", mode, "slots",
                     st.role[0].slots + st.role[1].slots, "splits", st.splits, "utilisation",
                     st.utilisation, "validate", role_json(&st.role[SG_POOL_VALIDATE]), "profile",
                     role_json(&st.role[SG_POOL_PROFILE]), "feedback", ds.feedback,
                     "feedback_latency_mean_s", ds.latency_mean_s, "feedback_latency_p95_s",
                     ds.latency_p95_s);
}

static void write_summary(const sg_run_exec *e, const char *best_path) {
    const sg_task_stats *f = &e->final;
    char path[4200];
    snprintf(path, sizeof path, "%s/summary.json", e->t->out_dir);
    json_t *sum = json_pack(
        "{s:s,s:s,s:s,s:s,s:f,s:f,s:i,s:s,s:i,s:i,s:i,s:i,s:I,s:I,s:f,s:f,s:s}", "task",
        e->t->spec.name, "lang", sg_dev_lang_name(e->t->lang), "policy", e->policy, "model",
        e->c->model, "target", e->cfg.crit.target_speedup, "best_speedup", f->best_speedup,
        "iterations", f->iteration, "end",
        f->error[0]    ? "error"
        : f->cancelled ? "cancelled"
                       : sg_crit_name(f->end_reason),
        "candidates", f->candidates, "correct", f->correct, "forks", f->forks_started,
        "early_stops", f->early_stops, "reasoning_tokens", (json_int_t)f->reasoning_tokens,
        "tokens_total", (json_int_t)f->tokens_total, "elapsed_s", f->ended_ns / 1e9,
        "first_candidate_s", f->first_candidate_ns / 1e9, "best_kernel", best_path);
    if (e->pool) json_object_set_new(sum, "pools", pool_json(e));
    json_dump_file(sum, path, JSON_INDENT(2));
    json_decref(sum);
}

void sg_run_exec_write(sg_run_exec *e, uint64_t full_reasoning_tokens) {
    char path[4200];
    snprintf(path, sizeof path, "%s/best.%s", e->t->out_dir,
             e->t->lang == SG_DEV_CUDA ? "cu" : "cl");
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(sg_task_best_kernel(e->task), f);
        fclose(f);
    }
    sg_ui_summary(&e->ui, &e->final, path, e->policy, full_reasoning_tokens);
    if (e->pool) {
        sg_pool_stats st;
        sg_pool_stats_get(e->pool, &st);
        sg_port_dev_stats ds = {0};
        if (e->pd) sg_port_dev_stats_get(e->pd, &ds);
        sg_ui_pools(&e->ui, &st, &ds);
    }
    write_summary(e, path);
}

void sg_run_exec_free(sg_run_exec *e) {
    if (!e) return;
    sg_task_free(e->task);
    if (e->events) fclose(e->events);
    free(e);
}
