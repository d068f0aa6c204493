/* run_exec.c — one task running on a loop through the ports it is given, and its outputs:
 * events.jsonl (each event as it comes), best.EXT (at the start and at every new best,
 * atomically: a killed run keeps its best kernel) and summary.json (at the end). Every
 * write is checked: a failed one (a full disk) is reported once, naming the file, and
 * the run ends with an error instead of reporting success over empty files. */
#include "orchestrator/optimize_ui.h"
#include "common/buf.h"
#include "orchestrator/run.h"

#include "common/wfile.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>
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
    sg_wfile events;
    int warned;     /* the first output failure was reported */
    sg_err out_err; /* the first output failure */
    int out_failed;
    char best_path[4200];
    int lock_fd; /* OUT, locked for this run: a second run into it is refused */
    char policy[32];
    int finished;
    sg_task_stats final;
    int64_t t0;
    const sg_pool *pool;
    const sg_port_dev *pd;
    sg_results *db;
    int64_t campaign, db_task;
    uint64_t flush_timer, cancel_timer;
    sg_err db_err; /* the first failed write; db_err.msg[0] == 0: none */
    uint64_t tokens;
    sg_task_stats live; /* the last progress */
    sg_metrics *metrics;
    int task_index;
};

uint64_t sg_run_exec_tokens(const sg_run_exec *e) {
    return e->finished ? e->final.tokens_total : e->tokens;
}

const sg_task_stats *sg_run_exec_stats(const sg_run_exec *e) {
    return e->finished ? &e->final : &e->live;
}

double sg_run_exec_target(const sg_run_exec *e) { return e->cfg.crit.target_speedup; }

static void cancel_now(sg_loop *loop, void *arg) {
    (void)loop;
    sg_run_exec *e = arg;
    e->cancel_timer = 0;
    if (e->task && !e->finished) sg_task_cancel(e->task);
}

/* The first failed write stops the task, from the loop: the failure is seen inside the
 * record hook, where the task (or the pool) is in the middle of a change. */
static void db_failed(sg_run_exec *e, const sg_err *err) {
    if (e->db_err.msg[0]) return;
    e->db_err = *err;
    fprintf(stderr, "%s: %s — stopping\n", e->c->log_name, err->msg);
    e->cancel_timer = sg_loop_timer(e->loop, 0, cancel_now, e);
}

static void db_record(sg_run_exec *e, const json_t *ev) {
    sg_err err;
    if (e->db && !e->db_err.msg[0] &&
        sg_results_record(e->db, e->campaign, e->db_task, ev, &err) < 0)
        db_failed(e, &err);
}

static void on_flush(sg_loop *loop, void *arg) {
    sg_run_exec *e = arg;
    sg_err err;
    e->flush_timer = 0;
    if (!e->db || e->finished) return;
    if (!e->db_err.msg[0] && sg_results_flush(e->db, &err) < 0) db_failed(e, &err);
    e->flush_timer = sg_loop_timer(loop, SG_SEC, on_flush, e);
}

static void set_results(sg_run_exec *e, sg_results *db, int64_t campaign, int64_t task) {
    e->db = db;
    e->campaign = campaign;
    e->db_task = task;
    if (db && !e->flush_timer) e->flush_timer = sg_loop_timer(e->loop, SG_SEC, on_flush, e);
}

const char *sg_run_exec_db_error(const sg_run_exec *e) {
    return e->db_err.msg[0] ? e->db_err.msg : NULL;
}

static void set_pool(sg_run_exec *e, const sg_pool *pool, const sg_port_dev *pd) {
    e->pool = pool;
    e->pd = pd;
}

/* The first output failure is kept for the end of the run and said at once. */
static void out_fail(sg_run_exec *e, const sg_err *err) {
    if (e->out_failed) return;
    e->out_failed = 1;
    e->out_err = *err;
    fprintf(stderr, "%s: error: %s (the run goes on; it will end with an error)\n", e->c->log_name,
            err->msg);
}

/* Every event on disk as it comes: a killed run keeps its trace. */
static void write_event(sg_run_exec *e, const json_t *ev) {
    char *line = json_dumps(ev, JSON_COMPACT);
    if (line && sg_wfile_line(&e->events, line) < 0) out_fail(e, &e->events.err);
    free(line);
}

static void write_best(sg_run_exec *e) {
    const char *k = e->task ? sg_task_best_kernel(e->task) : NULL;
    sg_err err;
    if (k && sg_wfile_atomic(e->best_path, k, strlen(k), &err) < 0) out_fail(e, &err);
}

static void on_record(void *arg, json_t *ev) {
    sg_run_exec *e = arg;
    /* best.EXT first: whoever sees new_best in events.jsonl (or the database) and kills
     * the run finds that kernel in best.EXT */
    const char *kind = json_string_value(json_object_get(ev, "ev"));
    if (kind && !strcmp(kind, "new_best")) write_best(e);
    db_record(e, ev);
    write_event(e, ev);
    sg_metrics_event(e->metrics, e->task_index, ev);
    if (!e->c->quiet) sg_ui_event(&e->ui, ev);
}

void sg_run_exec_pool_event(void *arg, json_t *ev) {
    sg_run_exec *e = arg;
    json_object_del(ev, "t_s");      /* the pool's own clock: the task's is the one in the file */
    sg_port_dev_event_iteration(ev); /* the task's iteration, not the pool's key */
    json_object_set_new(ev, "t_ms", json_real((double)(sg_loop_now(e->loop) - e->t0) / 1e6));
    db_record(e, ev);
    write_event(e, ev);
    sg_metrics_event(e->metrics, e->task_index, ev);
    if (!e->c->quiet) sg_ui_event(&e->ui, ev);
    json_decref(ev);
}

static void on_progress(void *arg, const sg_task_stats *s) {
    sg_run_exec *e = arg;
    e->tokens = s->tokens_total;
    e->live = *s;
    if (!e->c->quiet) sg_ui_progress(&e->ui, s, sg_loop_now(e->loop));
}

static void on_finished(void *arg, const sg_task_stats *s) {
    sg_run_exec *e = arg;
    e->final = *s;
    e->finished = 1;
    sg_loop_stop(e->loop);
}

sg_run_exec *sg_run_exec_start(sg_loop *loop, const sg_run_config *c, const sg_run_prompts *p,
                               const sg_run_task *t, const sg_llm_port *llm, const sg_dev_port *dev,
                               const sg_run_links *links, sg_err *err) {
    sg_run_exec *e = sg_xcalloc(1, sizeof *e);
    e->lock_fd = -1;
    e->loop = loop;
    e->t0 = sg_loop_now(loop);
    e->c = c;
    e->t = t;
    sg_run_task_config(c, p, t->spec.target_speedup, &e->cfg);
    sg_policy_name(&c->policy, e->policy, sizeof e->policy);
    char path[4200];
    e->lock_fd = open(t->out_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (e->lock_fd < 0) {
        sg_errf(err, "cannot open the output folder %s: %s", t->out_dir, strerror(errno));
        goto fail;
    }
    if (flock(e->lock_fd, LOCK_EX | LOCK_NB) != 0) {
        sg_errf(err,
                "the output folder %s is in use by another specgen run (it would mix both "
                "runs' events); wait for it or choose another --out",
                t->out_dir);
        goto fail;
    }
    snprintf(path, sizeof path, "%s/events.jsonl", t->out_dir);
    if (sg_wfile_open(&e->events, path, err) < 0) goto fail;
    snprintf(e->best_path, sizeof e->best_path, "%s/best.%s", t->out_dir,
             t->lang == SG_DEV_CUDA ? "cu" : "cl");
    sg_ui_init(&e->ui, stderr);
    e->ui.interval_ns = c->progress_interval_ns;
    e->ui.budget_ns = c->budget_ns;
    e->ui.budget_tokens = c->budget_tokens;
    sg_task_spec ts;
    sg_run_task_spec(t, &ts);
    sg_task_hooks hooks = {on_record, on_progress, on_finished, e};
    e->task = sg_task_new(loop, &e->cfg, &ts, llm, dev, &hooks, err);
    if (!e->task) goto fail;
    if (links) { /* before the task starts: its first event is recorded too */
        set_pool(e, links->pool, links->pd);
        e->metrics = links->metrics;
        e->task_index = links->task_index;
        if (links->db) set_results(e, links->db, links->campaign, links->task);
        /* the task's start on the campaign's clock: every time the database keeps is on it */
        if (links->db &&
            sg_results_task_clock(links->db, links->task,
                                  links->t0 ? (double)(e->t0 - links->t0) / 1e6 : 0, err) < 0)
            goto fail;
    }
    write_best(e); /* the baseline, until something beats it */
    if (!c->quiet)
        fprintf(stderr, "%s: task %s (%s), policy %s, target %.2fx, model %s, template %s\n",
                c->log_name, t->spec.name, ts.lang, e->policy, e->cfg.crit.target_speedup, c->model,
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

static json_t *summary_json(const sg_run_exec *e, const char *best_path) {
    const sg_task_stats *f = &e->final;
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
    /* the task's number of its best candidate (the console's, results' best_n); null: none */
    json_object_set_new(sum, "best_candidate",
                        f->best_candidate ? json_integer(f->best_candidate) : json_null());
    json_object_set_new(sum, "forks_failed", json_integer(f->forks_failed));
    json_object_set_new(sum, "first_token_timeouts", json_integer(f->first_token_timeouts));
    json_object_set_new(sum, "first_token_timeout_s",
                        json_real((double)e->c->first_token_timeout_ns / SG_SEC));
    if (f->forks_refused) json_object_set_new(sum, "forks_stopped", json_string(f->fork_error));
    double reuse = sg_task_prefix_reuse(f); /* null: the server did not say */
    json_object_set_new(sum, "prefix_reuse",
                        json_pack("{s:I,s:I,s:i,s:o}", "fork_prompt_tokens",
                                  (json_int_t)f->fork_prompt_tokens, "fork_cached_tokens",
                                  (json_int_t)f->fork_cached_tokens, "forks_reported",
                                  f->forks_cache_reported, "cached_share",
                                  reuse >= 0 ? json_real(reuse) : json_null()));
    if (e->pool) json_object_set_new(sum, "pools", pool_json(e));
    return sum;
}

static void write_summary(sg_run_exec *e, const json_t *sum) {
    char path[4200];
    snprintf(path, sizeof path, "%s/summary.json", e->t->out_dir);
    char *text = json_dumps(sum, JSON_INDENT(2));
    sg_err err;
    if (!text) sg_errf(&err, "cannot write %s: out of memory", path);
    if (!text || sg_wfile_atomic(path, text, strlen(text), &err) < 0) out_fail(e, &err);
    free(text);
}

/* The result on stdout (stderr has the log): summary.json's object with --json, else the
 * one-row table a campaign prints for each of its tasks. */
static void print_result(const sg_run_exec *e, const json_t *sum) {
    const sg_task_stats *f = &e->final;
    if (e->c->json) {
        json_dumpf(sum, stdout, JSON_INDENT(2));
        fputc('\n', stdout);
        fflush(stdout);
        return;
    }
    sg_ui_row row = {.task = e->t->spec.name,
                     .best = f->best_candidate ? f->best_speedup : 0,
                     .target = e->cfg.crit.target_speedup,
                     .met = f->best_candidate && f->best_speedup >= e->cfg.crit.target_speedup,
                     .time_ns = f->ended_ns,
                     .tokens = f->tokens_total,
                     .end = json_string_value(json_object_get(sum, "end"))};
    fputc('\n', stdout);
    sg_ui_table(stdout, &row, 1);
}

int sg_run_exec_write(sg_run_exec *e, uint64_t full_reasoning_tokens, sg_err *err) {
    const char *path = e->best_path;
    write_best(e);
    sg_err cerr;
    if (sg_wfile_close(&e->events, &cerr) < 0) out_fail(e, &cerr);
    if (e->out_failed) /* before the summary, which would otherwise claim the files */
        snprintf(e->final.error, sizeof e->final.error, "%s", e->out_err.msg);
    if (!e->c->quiet) sg_ui_summary(&e->ui, &e->final, path, e->policy, full_reasoning_tokens);
    if (e->pool && !e->c->quiet) {
        sg_pool_stats st;
        sg_pool_stats_get(e->pool, &st);
        sg_port_dev_stats ds = {0};
        if (e->pd) sg_port_dev_stats_get(e->pd, &ds);
        sg_ui_pools(&e->ui, &st, &ds);
    }
    json_t *sum = summary_json(e, path);
    write_summary(e, sum);
    if (!e->c->quiet) print_result(e, sum);
    json_decref(sum);
    if (e->out_failed) return sg_errf(err, "%s", e->out_err.msg);
    return 0;
}

void sg_run_exec_free(sg_run_exec *e) {
    if (!e) return;
    if (e->flush_timer) sg_loop_timer_cancel(e->loop, e->flush_timer);
    if (e->cancel_timer) sg_loop_timer_cancel(e->loop, e->cancel_timer);
    sg_task_free(e->task);
    sg_wfile_close(&e->events, NULL);
    if (e->lock_fd >= 0) close(e->lock_fd); /* releases the lock */
    free(e);
}
