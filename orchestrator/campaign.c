/* The campaign runner: a queue of tasks, `concurrency` of them running on one loop over
 * the shared LLM and pools, budgets, resume from the database, progress on stderr. */
#include "orchestrator/campaign.h"

#include "common/buf.h"
#include "common/paths.h"
#include "common/proc.h"
#include "common/redact.h"
#include "common/units.h"
#include "orchestrator/admit_gate.h"
#include "orchestrator/admit_signals.h"
#include "orchestrator/campaign_import.h"
#include "orchestrator/optimize_ui.h"
#include "orchestrator/progress.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct ctask {
    char name[256], dir[4096], out[4096];
    int entry; /* its place in suite.json's tasks (-1 in a suite folder) */
    int index; /* in the suite: the pool's task index */
    int state; /* 0 queued, 1 running, 2 ended, 3 skipped, 4 importing (a problem file) */
    int64_t db_task;
    sg_run_config cfg; /* base with this task's path and folder (exec borrows it) */
    sg_run_task t;
    sg_port_dev *pd;
    sg_dev_port port;
    sg_run_exec *exec;
    sg_llm_port aport; /* the LLM port through admission */
    sg_admit_member *member;
    sg_camp_import *imp; /* state 4: its importer, a child process watched on the loop */
    sg_task_stats final;
    int64_t started_at;  /* loop time of its start */
    double target;       /* its target speedup (known once it started) */
    const char *skipped; /* state 3: "could not run" or "ended before" (a resume) */
} ctask;

typedef struct campaign {
    const sg_campaign_config *cc;
    const sg_run_config *base;
    sg_loop *loop;
    sg_run_prompts p;
    sg_run_llm *llm;
    sg_run_pool pool;
    sg_results *db;
    int64_t id;
    ctask *t;
    int n, running;
    int stopping, budget_hit;
    uint64_t tokens_done; /* of tasks that ended */
    int64_t t0;
    int64_t clock0;    /* the database's clock zero on the loop: t0, earlier on a resume */
    double resumed_ms; /* --resume: how long ago the campaign started */
    uint64_t tick;
    int tty;
    int64_t last_plain; /* off a terminal: when the last progress line went out */
    sg_metrics *mx;     /* --metrics-listen */
    sg_campaign_result *res;
    sg_err db_err;
    char out_dir[4096]; /* specgen-out/campaign-ID when none was given */
    sg_admit_gate *gate;
    sg_admit_scrape *scrape; /* the endpoints' /metrics, for the gate */
} campaign;

void sg_campaign_config_default(sg_campaign_config *c) {
    memset(c, 0, sizeof *c);
    c->concurrency = 2;
    c->budget_ns = 2 * 3600 * SG_SEC;
    c->budget_tokens = 5000000;
    sg_admit_config_default(&c->admit);
}

static int by_name(const void *a, const void *b) {
    return strcmp(((const ctask *)a)->name, ((const ctask *)b)->name);
}

static int is_task(const char *dir) {
    char p[4200];
    struct stat st;
    snprintf(p, sizeof p, "%s/task.json", dir);
    return stat(p, &st) == 0;
}

/* A KernelBench-format problem file (docs/kernelbench.md): NAME.py, imported when its task
 * starts (into OUT/NAME/task) by a child process that the loop watches, so that the running
 * tasks go on meanwhile; one that does not import is recorded as not run, with the
 * importer's reason. */
static int is_problem(const char *path) {
    struct stat st;
    size_t n = strlen(path);
    const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
    return n > 3 && !strcmp(path + n - 3, ".py") && base[0] != '_' && stat(path, &st) == 0 &&
           S_ISREG(st.st_mode);
}

static void add_task(campaign *c, const char *dir, int entry, int *cap) {
    if (c->n == *cap) {
        *cap = *cap ? 2 * *cap : 16;
        c->t = sg_xrealloc(c->t, (size_t)*cap * sizeof *c->t);
    }
    ctask *t = &c->t[c->n++];
    memset(t, 0, sizeof *t);
    snprintf(t->dir, sizeof t->dir, "%s", dir);
    t->entry = entry;
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", dir);
    size_t len = strlen(tmp);
    while (len > 1 && tmp[len - 1] == '/') tmp[--len] = '\0';
    snprintf(t->name, sizeof t->name, "%s", basename(tmp));
    size_t nl = strlen(t->name);
    if (nl > 3 && !strcmp(t->name + nl - 3, ".py")) t->name[nl - 3] = '\0';
}

/* The suite's tasks, sorted by name, filtered by the glob. */
static int list_suite(campaign *c, sg_err *err) {
    const char *suite = c->cc->suite;
    struct stat st;
    int cap = 0;
    if (stat(suite, &st) < 0) return sg_errf(err, "suite %s: %s", suite, strerror(errno));
    if (S_ISDIR(st.st_mode)) {
        DIR *d = opendir(suite);
        if (!d) return sg_errf(err, "suite %s: %s", suite, strerror(errno));
        struct dirent *e;
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.') continue;
            char dir[4200];
            snprintf(dir, sizeof dir, "%s/%s", suite, e->d_name);
            if (is_task(dir) || is_problem(dir)) add_task(c, dir, -1, &cap);
        }
        closedir(d);
    } else {
        json_error_t je;
        json_t *j = json_load_file(suite, 0, &je);
        json_t *list = json_object_get(j, "tasks");
        if (!j || !json_is_array(list)) {
            json_decref(j);
            return sg_errf(err, "suite %s: %s", suite,
                           j ? "expected {\"tasks\": [\"folder\", ...]}" : je.text);
        }
        char base[4096];
        snprintf(base, sizeof base, "%s", suite);
        const char *bdir = dirname(base);
        size_t i;
        json_t *v;
        json_array_foreach(list, i, v) {
            const char *rel = json_string_value(v);
            char dir[8300];
            if (!rel) {
                json_decref(j);
                return sg_errf(err, "suite %s: tasks[%zu] is not a string", suite, i);
            }
            snprintf(dir, sizeof dir, "%s%s%s", rel[0] == '/' ? "" : bdir, rel[0] == '/' ? "" : "/",
                     rel);
            if (!is_task(dir)) { /* the message first: rel belongs to j */
                sg_errf(err, "suite %s: tasks[%zu] '%s' has no task.json", suite, i, rel);
                json_decref(j);
                return -1;
            }
            add_task(c, dir, (int)i, &cap);
        }
        json_decref(j);
    }
    if (c->n > 1) qsort(c->t, (size_t)c->n, sizeof *c->t, by_name); /* c->t is NULL when empty */
    for (int i = 1; i < c->n; i++) /* one output folder and one results row per name */
        if (!strcmp(c->t[i - 1].name, c->t[i].name)) {
            const ctask *a = c->t[i - 1].entry < c->t[i].entry ? &c->t[i - 1] : &c->t[i];
            const ctask *b = a == &c->t[i] ? &c->t[i - 1] : &c->t[i];
            return sg_errf(err,
                           "suite %s lists the task %s twice: tasks[%d] (%s) and tasks[%d] (%s); a "
                           "campaign runs each task once, in OUT/%s: remove one of them",
                           suite, a->name, a->entry, a->dir, b->entry, b->dir, a->name);
        }
    int kept = 0;
    for (int i = 0; i < c->n; i++)
        if (!c->cc->glob || fnmatch(c->cc->glob, c->t[i].name, 0) == 0) c->t[kept++] = c->t[i];
    c->n = kept;
    for (int i = 0; i < c->n; i++) c->t[i].index = i;
    if (c->n == 0)
        return sg_errf(err, "suite %s has no task%s%s%s", suite, c->cc->glob ? " matching '" : "",
                       c->cc->glob ? c->cc->glob : "", c->cc->glob ? "'" : "");
    return 0;
}

/* ---- progress ---- */
/* The best speedup so far over the tasks that ran or run, and which task has it. */
static double best_so_far(const campaign *c, const char **who) {
    double best = 0;
    *who = NULL;
    for (int i = 0; i < c->n; i++) {
        const ctask *t = &c->t[i];
        double b = t->state == 2              ? t->final.best_speedup
                   : t->state == 1 && t->exec ? sg_run_exec_stats(t->exec)->best_speedup
                                              : 0;
        if (b > best) {
            best = b;
            *who = t->name;
        }
    }
    return best;
}

/* "tasks 1 done, 2 running, 3 left; best 1.52x (softmax); 1234 tokens; pools 40% busy;
 * ETA 5m" — the status line on a terminal, a plain progress line elsewhere. */
static void progress_text(const campaign *c, char *buf, size_t n) {
    int64_t now = sg_loop_now(c->loop);
    sg_progress p = {.elapsed_ns = now - c->t0,
                     .budget_ns = c->cc->budget_ns,
                     .budget_tokens = c->cc->budget_tokens,
                     .running = c->running,
                     .concurrency = c->cc->concurrency,
                     .task_budget_ns = c->base->budget_ns,
                     .tokens = c->tokens_done};
    int done = 0;
    for (int i = 0; i < c->n; i++) {
        const ctask *t = &c->t[i];
        done += t->state == 2 || t->state == 3;
        p.left += t->state == 0;
        if (t->state == 2 && t->final.ended_ns > 0) {
            p.ended++;
            p.ended_task_ns += t->final.ended_ns;
        }
        if (t->state == 1 && t->exec) {
            p.tokens += sg_run_exec_tokens(t->exec);
            if (now - t->started_at > p.running_elapsed_max)
                p.running_elapsed_max = now - t->started_at;
        }
    }
    sg_pool_stats st;
    sg_pool_stats_get(c->pool.sched, &st);
    const char *who;
    double best = best_so_far(c, &who);
    char bests[300] = "best -", eta[48];
    if (who) snprintf(bests, sizeof bests, "best %.2fx (%.200s)", best, who);
    snprintf(buf, n, "tasks %d done, %d running, %d left; %s; %llu tokens; pools %.0f%% busy; %s",
             done, c->running, p.left, bests, (unsigned long long)p.tokens, 100 * st.utilisation,
             sg_ui_eta(c->stopping ? 0 : sg_progress_eta(&p), eta, sizeof eta));
}

static void status_line(campaign *c) {
    if (!c->tty) return;
    char line[600], el[32], shown[1200];
    progress_text(c, line, sizeof line);
    sg_fmt_duration(sg_loop_now(c->loop) - c->t0, el, sizeof el);
    fprintf(stderr, "\r\033[K[%s] %s", el, sg_redact_ctrl(shown, sizeof shown, line));
    fflush(stderr);
}

/* Off a terminal: the same as a plain line every --progress-interval (0: never). */
static void plain_progress(campaign *c) {
    int64_t now = sg_loop_now(c->loop), every = c->base->progress_interval_ns;
    if (c->tty || every <= 0 || now - c->last_plain < every) return;
    c->last_plain = now;
    char line[600], shown[1200];
    progress_text(c, line, sizeof line);
    fprintf(stderr, "[%7.1fs] progress: %s\n", (double)(now - c->t0) / SG_SEC,
            sg_redact_ctrl(shown, sizeof shown, line));
    fflush(stderr);
}

static void say(campaign *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* One line: a task's name (a folder's) or a message that quotes a path cannot start a line
 * of its own (control characters are escaped). */
static void say(campaign *c, const char *fmt, ...) {
    char line[2048], shown[4096];
    va_list ap;
    va_start(ap, fmt);
    sg_vfmt_fit(line, sizeof line, fmt, ap);
    va_end(ap);
    if (c->tty) fprintf(stderr, "\r\033[K");
    fprintf(stderr, "[%7.1fs] %s\n", (double)(sg_loop_now(c->loop) - c->t0) / SG_SEC,
            sg_redact_ctrl(shown, sizeof shown, line));
    status_line(c);
}

/* ---- the pool's events go to the task they belong to ---- */
static void on_pool_event(void *arg, json_t *ev) {
    campaign *c = arg;
    const json_t *task = json_object_get(ev, "task"); /* none: the pool's own (pool_split) */
    int idx = json_is_integer(task) ? (int)json_integer_value(task) : -1;
    if (idx >= 0 && idx < c->n && c->t[idx].exec) {
        sg_run_exec_pool_event(c->t[idx].exec, ev); /* takes it */
        return;
    }
    json_object_del(ev, "t_s"); /* the pool's clock: the database keeps the campaign's */
    json_object_set_new(ev, "t_ms", json_real((double)(sg_loop_now(c->loop) - c->clock0) / 1e6));
    sg_port_dev_event_iteration(ev);
    sg_err err;
    if (c->db && !c->db_err.msg[0] && sg_results_record(c->db, c->id, 0, ev, &err) < 0)
        c->db_err = err;
    json_decref(ev);
}

/* ---- starting and ending tasks ---- */
static void stop_all(campaign *c, const char *why) {
    if (!c->stopping)
        say(c, "%s: cancelling %d running task%s", why, c->running, c->running == 1 ? "" : "s");
    c->stopping = 1;
    for (int i = 0; i < c->n; i++) {
        ctask *t = &c->t[i];
        if (t->state == 1) sg_run_exec_cancel(t->exec);
        if (t->state != 4) continue;
        sg_camp_import_free(t->imp); /* an import stopped: the task never started */
        t->imp = NULL;
        sg_admit_member_free(t->member);
        t->member = NULL;
        t->state = 0;
        c->running--;
        sg_loop_stop(c->loop); /* no task may be left to end and stop it */
    }
}

/* The task's row: found (a killed run left it unfinished, or it could not run before:
 * it starts again, cleanly) or new. */
static int task_row(campaign *c, ctask *t, sg_err *err) {
    if (!c->db || t->db_task) return 0;
    char status[32] = "";
    int64_t found = sg_results_task_find(c->db, c->id, t->name, status, sizeof status, err);
    if (found < 0) return -1;
    if (found > 0) {
        if (sg_results_task_reset(c->db, found, err) < 0) return -1;
        t->db_task = found;
    } else if ((t->db_task = sg_results_task_begin(c->db, c->id, t->name, t->dir, err)) < 0) {
        return -1;
    }
    return 0;
}

/* This task cannot run (it does not load; its output folder cannot be written or is in use):
 * say why, record it as skipped with the reason, go on with the others. */
static int cannot_run(campaign *c, ctask *t, const char *why, sg_err *err) {
    say(c, "%s: could not run: %s", t->name, why);
    sg_admit_member_free(t->member); /* its place frees */
    t->member = NULL;
    t->state = 3;
    t->skipped = "could not run";
    c->res->not_run++;
    sg_port_dev_free(t->pd);
    t->pd = NULL;
    sg_run_task_free(&t->t);
    if (!c->db) return 0;
    if (task_row(c, t, err) < 0 || sg_results_task_skip(c->db, t->db_task, why, err) < 0) return -1;
    /* a problem file that did not import: where it came from (its hash is the importer's) */
    return is_problem(t->dir)
               ? sg_results_task_origin(c->db, t->db_task, "kernelbench", t->dir, NULL, err)
               : 0;
}

static int start_task(campaign *c, ctask *t, sg_err *err) {
    t->cfg = *c->base;
    t->cfg.task = t->dir;
    t->cfg.out_dir = t->out;
    t->cfg.quiet = 1;
    sg_err e;
    if (sg_run_task_load(&t->cfg, &t->t, &e) < 0) return cannot_run(c, t, e.msg, err);
    if (task_row(c, t, err) < 0) return -1;
    t->pd = sg_run_dev_port_new(c->loop, &c->pool, t->index, &c->p, &t->t, !t->cfg.no_race,
                                t->cfg.target, &t->port, err);
    if (!t->pd) return -1;
    t->exec = sg_run_exec_start(
        c->loop, &t->cfg, &c->p, &t->t, &t->aport, &t->port,
        &(sg_run_links){c->db, c->id, t->db_task, c->pool.sched, t->pd, c->mx, t->index, c->clock0},
        &e);
    if (!t->exec) return cannot_run(c, t, e.msg, err);
    t->state = 1;
    t->started_at = sg_loop_now(c->loop);
    t->target = sg_run_exec_target(t->exec);
    c->running++;
    say(c, "%s: started (%s)", t->name, sg_dev_lang_name(t->t.lang));
    return 0;
}

/* ---- a problem file's import, off the loop ---- */
static void import_done(void *arg) {
    campaign *c = arg;
    sg_loop_stop(c->loop); /* back to the start loop, which starts the task */
}

/* Start the task, or first its problem file's import (state 4 until it ends). */
static int launch(campaign *c, ctask *t, sg_err *err) {
    snprintf(t->out, sizeof t->out, "%s/%s", c->base->out_dir, t->name);
    t->member = sg_admit_gate_join(c->gate, sg_run_llm_port(c->llm), &t->aport);
    char task_dir[4200];
    snprintf(task_dir, sizeof task_dir, "%s/task", t->out);
    int need = is_problem(t->dir) ? sg_run_import_state(c->base->init, task_dir) : 0;
    if (!need) return start_task(c, t, err);
    sg_val_init_opts o = {0};
    if (c->base->init) o = *c->base->init;
    o.force = need == 2;
    sg_err e;
    if (sg_mkdir_p(t->out, &e) < 0) return cannot_run(c, t, e.msg, err);
    if (!(t->imp = sg_camp_import_start(c->loop, t->dir, task_dir, &o, import_done, c, &e)))
        return cannot_run(c, t, e.msg, err);
    t->state = 4;
    t->started_at = sg_loop_now(c->loop);
    c->running++;
    say(c, "%s: importing %s%s", t->name, t->dir,
        need == 2 ? " again (the import in its output folder has another --precision or "
                    "--baseline)"
                  : "");
    return 0;
}

/* Its import ended: the task starts, or cannot run with the importer's reason. */
static int import_ended(campaign *c, ctask *t, sg_err *err) {
    sg_buf report = {0};
    sg_err e;
    int rc = sg_camp_import_result(t->imp, &report, &e);
    sg_camp_import_free(t->imp);
    t->imp = NULL;
    t->state = 0;
    c->running--;
    if (rc == 0) {
        say(c, "%s: imported in %.1f s into %s/task", t->name,
            (double)(sg_loop_now(c->loop) - t->started_at) / SG_SEC, t->out);
        for (char *l = report.data, *nl; l && *l; l = nl ? nl + 1 : l + strlen(l)) {
            nl = strchr(l, '\n');
            say(c, "%s:   %.*s", t->name, (int)(nl ? nl - l : (long)strlen(l)), l);
        }
    }
    sg_buf_free(&report);
    return rc < 0 ? cannot_run(c, t, e.msg, err) : start_task(c, t, err);
}

static int end_task(campaign *c, ctask *t, sg_err *err) {
    sg_err werr; /* an output file that cannot be written fails the task, not the campaign */
    if (sg_run_exec_write(t->exec, 0, &werr) < 0) say(c, "%s: %s", t->name, werr.msg);
    sg_run_exec_finished(t->exec, &t->final);
    const char *dberr = sg_run_exec_db_error(t->exec);
    if (dberr) sg_errf(err, "%s", dberr);
    if (!dberr && c->db &&
        (sg_results_task_totals(c->db, t->db_task, (int64_t)t->final.reasoning_tokens,
                                (int64_t)t->final.tokens_total, err) < 0 ||
         sg_results_task_prefix(c->db, t->db_task, (int64_t)t->final.fork_prompt_tokens,
                                (int64_t)t->final.fork_cached_tokens,
                                t->final.forks_cache_reported > 0, err) < 0))
        dberr = err->msg;
    const char *how = t->final.error[0]    ? "error"
                      : t->final.cancelled ? "cancelled"
                                           : sg_crit_name(t->final.end_reason);
    char el[32];
    sg_fmt_duration(t->final.ended_ns, el, sizeof el);
    char reuse[64] = "";
    double share = sg_task_prefix_reuse(&t->final);
    if (share >= 0) snprintf(reuse, sizeof reuse, "; prefix reuse %.0f%%", 100 * share);
    if (t->final.best_candidate)
        say(c, "%s: %s after %s, best %.2fx (candidate %d)%s", t->name, how, el,
            t->final.best_speedup, t->final.best_candidate, reuse);
    else
        say(c, "%s: %s after %s, %s%s%s%s", t->name, how, el,
            t->final.baseline_ns_median > 0 ? "nothing beat the baseline"
                                            : "the baseline never ran",
            t->final.error[0] ? ": " : "", t->final.error, reuse);
    if (t->final.error[0])
        c->res->failed++;
    else if (!t->final.cancelled)
        c->res->done++;
    c->res->best_sum += t->final.best_speedup;
    c->res->fork_prompt_tokens += t->final.fork_prompt_tokens;
    c->res->fork_cached_tokens += t->final.fork_cached_tokens;
    c->res->forks_cache_reported += t->final.forks_cache_reported;
    c->res->forks_done += t->final.forks_done;
    c->res->first_token_timeouts += t->final.first_token_timeouts;
    sg_run_exec_free(t->exec);
    t->exec = NULL;
    sg_admit_member_free(t->member); /* after its task, whose generations went through it */
    t->member = NULL;
    sg_port_dev_free(t->pd);
    t->pd = NULL;
    sg_run_task_free(&t->t);
    /* its tokens move from the running ones to the ended ones here, not before the lines
     * above (their status line would count them twice) */
    c->tokens_done += t->final.tokens_total;
    t->state = 2;
    c->running--;
    return dberr ? -1 : 0;
}

/* ---- budgets and signals ---- */
static void on_tick(sg_loop *loop, void *arg) {
    campaign *c = arg;
    uint64_t tokens = c->tokens_done;
    for (int i = 0; i < c->n; i++)
        if (c->t[i].state == 1) tokens += sg_run_exec_tokens(c->t[i].exec);
    if (c->cc->budget_tokens && tokens >= c->cc->budget_tokens && !c->stopping) {
        c->budget_hit = 1;
        stop_all(c, "token budget spent");
    }
    if (c->cc->budget_ns && sg_loop_now(loop) - c->t0 >= c->cc->budget_ns && !c->stopping) {
        c->budget_hit = 1;
        stop_all(c, "time budget spent");
    }
    if (c->db && !c->db_err.msg[0]) sg_results_flush(c->db, &c->db_err);
    status_line(c);
    plain_progress(c);
    c->tick = sg_loop_timer(loop, SG_SEC, on_tick, c);
}

static void on_signal(sg_loop *loop, int fd, unsigned ev, void *arg) {
    (void)loop, (void)ev;
    campaign *c = arg;
    struct signalfd_siginfo si;
    if (read(fd, &si, sizeof si) != sizeof si) return;
    if (c->res->stopped) /* the second signal */
        sg_run_force_exit("specgen campaign", (int)si.ssi_signo);
    c->res->stopped = 1;
    stop_all(c, strsignal((int)si.ssi_signo));
}

/* The result: one row per task of the suite (sg_ui_row's fields), in suite order. */
static json_t *result_rows(const campaign *c) {
    json_t *rows = json_array();
    for (int i = 0; i < c->n; i++) {
        const ctask *t = &c->t[i];
        const sg_task_stats *f = &t->final;
        sg_ui_row r = {.task = t->name, .target = t->target, .end = "not started"};
        if (t->state == 2) {
            r.best = f->best_candidate ? f->best_speedup : 0;
            r.met = f->best_candidate && t->target > 0 && f->best_speedup >= t->target;
            r.time_ns = f->ended_ns;
            r.tokens = f->tokens_total;
            r.end = f->error[0]    ? "error"
                    : f->cancelled ? "cancelled"
                                   : sg_crit_name(f->end_reason);
        } else if (t->state == 3) {
            r.end = t->skipped ? t->skipped : "skipped";
        }
        json_array_append_new(rows, sg_ui_row_json(&r));
    }
    return rows;
}

/* ---- the database ---- */
static int open_db(campaign *c, sg_err *err) {
    const char *path = c->base->db;
    if (!path || !*path || !strcmp(path, "none")) {
        if (c->cc->resume) return sg_errf(err, "--resume needs the results database (--db)");
        return 0;
    }
    struct stat st;
    if (c->cc->resume && stat(path, &st) < 0) /* opening it would create an empty one */
        return sg_errf(
            err, "--resume %lld: the results database %s: %s (give the --db of that campaign)",
            (long long)c->cc->resume, path, strerror(errno));
    if (sg_results_open(path, 0, &c->db, err) < 0) return -1;
    if (c->cc->resume) {
        char suite[4096];
        json_t *cfg = NULL;
        if (sg_results_campaign_get(c->db, c->cc->resume, suite, sizeof suite, &cfg, err) < 0)
            return -1;
        json_decref(cfg);
        if (strcmp(suite, c->cc->suite))
            return sg_errf(err, "campaign %lld ran the suite %s, not %s", (long long)c->cc->resume,
                           suite, c->cc->suite);
        c->id = c->cc->resume;
        c->resumed_ms = sg_results_campaign_age_ms(c->db, c->id, err);
        return c->resumed_ms < 0 ? -1 : 0;
    }
    json_t *cfg = sg_run_config_json(c->base);
    json_object_set_new(cfg, "concurrency", json_integer(c->cc->concurrency));
    json_object_set_new(cfg, "campaign_budget_s", json_real((double)c->cc->budget_ns / 1e9));
    json_object_set_new(cfg, "campaign_budget_tokens",
                        json_integer((json_int_t)c->cc->budget_tokens));
    if (c->cc->glob) json_object_set_new(cfg, "tasks", json_string(c->cc->glob));
    c->id = sg_results_campaign_begin(c->db, "campaign", c->cc->suite, cfg, err);
    json_decref(cfg);
    return c->id < 0 ? -1 : 0;
}

/* ---- admission (admit_gate.h) ---- */
static int queued(const campaign *c, int next) {
    int n = 0;
    for (int i = next; i < c->n; i++) n += c->t[i].state == 0;
    return n;
}

/* The gate has room for another task: back to the start loop. */
static void admission_room(void *arg) {
    campaign *c = arg;
    sg_loop_stop(c->loop);
}

static void admission_sample(void *arg, sg_admit_signals *s) {
    campaign *c = arg;
    sg_admit_scrape_get(c->scrape, s);
}

/* Each decision: said when the limit moves, recorded as a campaign event, and counted on
 * /metrics. */
static void admission_record(void *arg, json_t *ev) {
    campaign *c = arg;
    int limit = (int)json_integer_value(json_object_get(ev, "limit"));
    int prev = (int)json_integer_value(json_object_get(ev, "previous"));
    if (limit != prev)
        say(c, "admission: %d -> %d tasks (%s)", prev, limit,
            json_string_value(json_object_get(ev, "reason")));
    sg_metrics_event(c->mx, 0, ev);
    json_object_set_new(ev, "t_ms", json_real((double)(sg_loop_now(c->loop) - c->clock0) / 1e6));
    sg_err err;
    if (c->db && !c->db_err.msg[0] && sg_results_record(c->db, c->id, 0, ev, &err) < 0)
        c->db_err = err;
}

static int admission_start(campaign *c, sg_err *err) {
    if (!(c->scrape = sg_admit_scrape_new(c->base->llm_urls, c->cc->admit.interval_ns, err)))
        return -1;
    sg_admit_gate_hooks h = {admission_sample, admission_record, admission_room, c};
    c->gate = sg_admit_gate_new(c->loop, &c->cc->admit, &h);
    return 0;
}

static void admission_stop(campaign *c) {
    for (int i = 0; i < c->n; i++) sg_admit_member_free(c->t[i].member);
    sg_admit_gate_free(c->gate);
    sg_admit_scrape_free(c->scrape);
}

/* On resume: tasks that ended before are skipped (their rows stay as they are). */
static int skip_finished(campaign *c, sg_err *err) {
    if (!c->db || !c->cc->resume) return 0;
    for (int i = 0; i < c->n; i++) {
        char status[32] = "";
        int64_t id = sg_results_task_find(c->db, c->id, c->t[i].name, status, sizeof status, err);
        if (id < 0) return -1;
        if (id > 0 && strcmp(status, "running") && strcmp(status, "cancelled") &&
            strcmp(status, "skipped")) {
            c->t[i].state = 3;
            c->t[i].skipped = "ended before";
            c->res->skipped++;
        }
    }
    say(c, "resuming campaign %lld: %d of %d tasks already ended", (long long)c->id,
        c->res->skipped, c->n);
    return 0;
}

/* After a run of the loop: the tasks that finished end; the imports that ended start their
 * task (or record why it cannot run). */
static int settle(campaign *c, sg_err *err) {
    for (int i = 0; i < c->n; i++) {
        ctask *t = &c->t[i];
        if (t->state == 1 && sg_run_exec_finished(t->exec, NULL) && end_task(c, t, err) < 0)
            return -1;
        if (t->state == 4 && sg_camp_import_ended(t->imp) && import_ended(c, t, err) < 0) return -1;
    }
    return 0;
}

int sg_campaign_run(const sg_campaign_config *cc, const sg_run_config *base,
                    sg_campaign_result *res, sg_err *err) {
    campaign c = {.cc = cc, .base = base, .res = res, .tty = isatty(2)};
    memset(res, 0, sizeof *res);
    int rc = -1, sfd = -1;
    sigset_t sigs;
    sg_run_config shared = *base;
    c.base = &shared;
    if (list_suite(&c, err) < 0 || open_db(&c, err) < 0) goto done;
    res->id = c.id;
    res->tasks = c.n;
    sg_dev_lang lang = base->device == SG_RUN_DEVICE_AUTO
                           ? (sg_run_cuda_usable() ? SG_DEV_CUDA : SG_DEV_OPENCL)
                           : (sg_dev_lang)base->device;
    shared.device = (int)lang; /* one pool, one language: every task uses it */
    if (!shared.out_dir) {
        snprintf(c.out_dir, sizeof c.out_dir, "specgen-out/campaign-%lld", (long long)c.id);
        shared.out_dir = c.out_dir;
    }
    if (sg_run_prompts_load(&shared, &c.p, err) < 0) goto done;
    sg_proc_block_stop_signals(&sigs);
    if (!(c.loop = sg_loop_new_real(err)) || /* the pool (it forks to count) before threads */
        sg_run_pool_new(c.loop, &shared, lang, &c.pool, err) < 0 ||
        !(c.llm = sg_run_llm_new(c.loop, &shared, &c.p, err)) ||
        sg_run_metrics_start(c.loop, &shared, "campaign", c.pool.sched, c.n, &c.mx, err) < 0)
        goto done;
    sg_pool_on_event(c.pool.sched, on_pool_event, &c);
    c.t0 = c.last_plain = sg_loop_now(c.loop);
    c.clock0 = c.t0 - (int64_t)(c.resumed_ms * 1e6); /* a resumed campaign's clock goes on */
    char suite[4096], db[4096];
    fprintf(
        stderr,
        "specgen campaign %lld: %d task%s of %s, %d at a time, %s on %d slot%s, results in %s\n",
        (long long)c.id, c.n, c.n == 1 ? "" : "s", sg_redact_ctrl(suite, sizeof suite, cc->suite),
        cc->concurrency, sg_dev_lang_name(lang), c.pool.slots, c.pool.slots == 1 ? "" : "s",
        sg_redact_ctrl(db, sizeof db, c.db ? sg_results_path(c.db) : "(no database)"));
    if (skip_finished(&c, err) < 0) goto done;
    sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
    if (sfd >= 0) sg_loop_fd_watch(c.loop, sfd, SG_EV_READ, on_signal, &c, NULL);
    c.tick = sg_loop_timer(c.loop, SG_SEC, on_tick, &c);
    if (admission_start(&c, err) < 0) goto done;
    for (int next = 0;;) {
        while (next < c.n && c.t[next].state != 0) next++;
        sg_admit_gate_set_unstarted(c.gate, queued(&c, next));
        while (!c.stopping && c.running < cc->concurrency && next < c.n &&
               sg_admit_gate_try_start(c.gate)) {
            ctask *t = &c.t[next++];
            if (launch(&c, t, err) < 0) goto done;
            while (next < c.n && c.t[next].state != 0) next++;
            sg_admit_gate_set_unstarted(c.gate, queued(&c, next));
        }
        if (c.running == 0 && (c.stopping || next >= c.n)) break;
        if (sg_loop_run(c.loop, err) < 0 || settle(&c, err) < 0) goto done;
        if (c.db_err.msg[0]) {
            *err = c.db_err;
            goto done;
        }
    }
    res->budget = c.budget_hit;
    rc = 0;
done:
    if (c.running) stop_all(&c, "stopping on an error");
    while (c.running && c.loop) { /* let cancelled tasks end, so that they are recorded */
        sg_err e2;
        if (sg_loop_run(c.loop, &e2) < 0) break;
        for (int i = 0; i < c.n; i++)
            if (c.t[i].state == 1 && sg_run_exec_finished(c.t[i].exec, NULL))
                end_task(&c, &c.t[i], &e2);
    }
    if (c.tick) sg_loop_timer_cancel(c.loop, c.tick);
    admission_stop(&c);
    if (sfd >= 0) {
        sg_loop_fd_unwatch(c.loop, sfd);
        close(sfd);
    }
    if (c.tty) fprintf(stderr, "\r\033[K");
    if (c.pool.sched) sg_pool_on_event(c.pool.sched, NULL, NULL); /* the db closes first */
    res->rows = result_rows(&c);
    sg_metrics_free(c.mx); /* before the pool it reads */
    if (c.db) {
        int none_ran = res->not_run && res->not_run == res->tasks - res->skipped;
        const char *status = rc < 0 || none_ran ? "error"
                             : res->stopped     ? "stopped"
                             : res->budget      ? "budget"
                                                : "done";
        sg_err e2;
        if (sg_results_campaign_end(c.db, c.id, status, rc < 0 ? &e2 : err) < 0 && rc == 0) rc = -1;
        if (sg_results_close(c.db, rc < 0 ? &e2 : err) < 0 && rc == 0) rc = -1;
    }
    sg_run_pool_free(&c.pool);
    sg_run_llm_free(c.llm);
    sg_loop_free(c.loop);
    sg_run_prompts_free(&c.p);
    free(c.t);
    return rc;
}
