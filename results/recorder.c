/* The recorder: each event kept whole (event table), and the events docs/results.md names
 * filling the tables. One event is one group of statements inside the current batch. */
#include "results/internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The prepared statement for sql (a string literal: cached by its address). *once: the
 * cache is full, the caller finalizes it after use. */
static sqlite3_stmt *prepared(sg_results *r, const char *sql, int *once) {
    *once = 0;
    for (int i = 0; i < r->ncached; i++)
        if (r->cached[i].sql == sql) return r->cached[i].st;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK) return NULL;
    if (r->ncached < SG_RESULTS_CACHED)
        r->cached[r->ncached++] = (sg_results_stmt){sql, st};
    else
        *once = 1;
    return st;
}

void sg_results_finalize_all(sg_results *r) {
    for (int i = 0; i < r->ncached; i++) sqlite3_finalize(r->cached[i].st);
    r->ncached = 0;
}

/* A statement with parameters taken from a small format: i = int64, n = int64 or NULL when
 * <= 0, d = double, s = text (NULL binds NULL), j = a JSON field of ev (number, text, bool
 * or null). */
static int run(sg_results *r, const char *sql, const char *fmt, const json_t *ev, ...) {
    int once;
    sqlite3_stmt *st = prepared(r, sql, &once);
    if (!st) return -1;
    va_list ap;
    va_start(ap, ev);
    for (int i = 0; fmt[i]; i++) {
        int k = i + 1;
        if (fmt[i] == 'i') {
            sqlite3_bind_int64(st, k, va_arg(ap, int64_t));
        } else if (fmt[i] == 'n') {
            int64_t v = va_arg(ap, int64_t);
            if (v > 0)
                sqlite3_bind_int64(st, k, v);
            else
                sqlite3_bind_null(st, k);
        } else if (fmt[i] == 'd') {
            sqlite3_bind_double(st, k, va_arg(ap, double));
        } else if (fmt[i] == 's') {
            const char *s = va_arg(ap, const char *);
            if (s)
                sqlite3_bind_text(st, k, s, -1, SQLITE_TRANSIENT);
            else
                sqlite3_bind_null(st, k);
        } else { /* 'j' */
            sg_results_bind_json(st, k, json_object_get(ev, va_arg(ap, const char *)));
        }
    }
    va_end(ap);
    int rc = sqlite3_step(st);
    if (once) {
        sqlite3_finalize(st);
    } else {
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
    }
    return rc == SQLITE_DONE ? 0 : -1;
}

static int is(const char *name, const char *want) { return !strcmp(name, want); }

/* "Candidate 12" -> 12; "baseline" -> 0 (stored as NULL). */
static int64_t candidate_of_name(const char *name) {
    int n = 0;
    return name && sscanf(name, "Candidate %d", &n) == 1 ? n : 0;
}

/* An integer field of ev (0 when absent). */
static int64_t int_of(const json_t *ev, const char *key) {
    return json_integer_value(json_object_get(ev, key));
}

/* The candidate's rows: its event, its verdict and timing, a new best, the task's end.
 * t: the campaign's clock (ms); task_t: the task's. */
static int candidate_event(sg_results *r, int64_t task, const char *ev_name, const json_t *ev,
                           int64_t it, double t, double task_t) {
    if (is(ev_name, "candidate")) /* an upsert: a row's id never changes (jobs point to it) */
        return run(
            r,
            "INSERT INTO candidate (task, n, iteration, origin, fork, rule, at_tokens, "
            "status, hash, source, reason, created_ms) VALUES "
            "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (task, n) DO UPDATE SET "
            "iteration = excluded.iteration, origin = excluded.origin, fork = excluded.fork, "
            "rule = excluded.rule, at_tokens = excluded.at_tokens, status = excluded.status, "
            "hash = excluded.hash, source = excluded.source, reason = excluded.reason, "
            "created_ms = excluded.created_ms",
            "ijijjjjjjjjd", ev, task, "candidate", it, "origin", "fork", "rule", "at_tokens",
            "status", "hash", "source", "reason", t);
    if (is(ev_name, "job_done")) {
        /* KernelBench's own check beside ours (a torch task's): kb_correct and its JSON */
        const json_t *kb = json_object_get(ev, "kb_check");
        char *kb_json = json_is_object(kb) ? json_dumps(kb, JSON_COMPACT) : NULL;
        const json_t *kb_ok = json_object_get(kb, "correct");
        int rc = run(r,
                     "UPDATE candidate SET verdict = ?, correct = ?, speedup = ?, noise = ?, "
                     "compile_ms = ?, message = ?, feedback = ?, done_ms = ?, time_ns = ?, "
                     "baseline_ns = ?, kb_correct = ?, kb_check = ? WHERE task = ? AND n = ?",
                     "jjjjjjjdjjssij", ev, "verdict", "correct", "speedup", "noise", "compile_ms",
                     "message", "feedback", t, "time_ns", "baseline_ns",
                     json_is_boolean(kb_ok) ? (json_is_true(kb_ok) ? "1" : "0") : NULL, kb_json,
                     task, "candidate");
        free(kb_json);
        return rc;
    }
    if (is(ev_name, "new_best"))
        return run(r,
                   "UPDATE task SET best_speedup = ?1, best_n = ?2, best_candidate_id = (SELECT id "
                   "FROM candidate WHERE task = ?3 AND n = ?2) WHERE id = ?3",
                   "jni", ev, "speedup", int_of(ev, "candidate"), task);
    if (is(ev_name, "task_end")) {
        char now[32];
        sg_results_now(now);
        const json_t *el = json_object_get(ev, "elapsed_s"); /* the summary's figure */
        return run(r,
                   "UPDATE task SET status = ?1, ended = ?2, best_speedup = ?3, best_n = ?4, "
                   "best_candidate_id = (SELECT id FROM candidate WHERE task = ?8 AND n = ?4), "
                   "error = ?5, iterations = ?6, elapsed_s = ?7 WHERE id = ?8",
                   "jsjnjidi", ev, "reason", now, "best_speedup", int_of(ev, "best_candidate"),
                   "error", it, json_is_number(el) ? json_number_value(el) : task_t / 1000, task);
    }
    return 1; /* not one of these */
}

static int task_event(sg_results *r, int64_t task, const char *ev_name, const json_t *ev, double t,
                      double task_t) {
    int64_t it = int_of(ev, "iteration");
    int rc = candidate_event(r, task, ev_name, ev, it, t, task_t);
    if (rc <= 0) return rc;
    if (is(ev_name, "task_start")) { /* a problem from another suite: where from, over what */
        const json_t *o = json_object_get(ev, "origin");
        return run(r,
                   "UPDATE task SET lang = ?, policy = ?, target = ?, baseline_kind = ?, "
                   "precision = ?, origin_format = coalesce(?, origin_format), origin_file = "
                   "coalesce(?, origin_file), origin_sha256 = coalesce(?, origin_sha256) "
                   "WHERE id = ?",
                   "jjjjjsssi", ev, "lang", "policy", "target", "baseline_kind", "precision",
                   json_string_value(json_object_get(o, "format")),
                   json_string_value(json_object_get(o, "file")),
                   json_string_value(json_object_get(o, "sha256")), task);
    }
    if (is(ev_name, "baseline"))
        return run(r, "UPDATE task SET baseline_ns = ? WHERE id = ?", "ji", ev, "median_ns", task);
    if (is(ev_name, "iteration_start"))
        return run(r, "INSERT OR REPLACE INTO iteration (task, n, started_ms) VALUES (?, ?, ?)",
                   "iid", ev, task, it, t);
    if (is(ev_name, "fork"))
        return run(r,
                   "INSERT OR REPLACE INTO generation (task, iteration, kind, n, rule, cue, "
                   "at_tokens, at_bytes, started_ms) VALUES (?, ?, 'fork', ?, ?, ?, ?, ?, ?)",
                   "iijjjjjd", ev, task, it, "fork", "rule", "cue", "at_tokens", "at_bytes", t);
    if (is(ev_name, "generation_done") || is(ev_name, "generation_aborted")) {
        const char *kind = json_string_value(json_object_get(ev, "kind"));
        int64_t n = int_of(ev, "index");
        int aborted = is(ev_name, "generation_aborted");
        /* a reasoning stream has no start event of its own: its row appears at its end */
        if (run(r,
                "INSERT OR IGNORE INTO generation (task, iteration, kind, n) VALUES (?, ?, ?, ?)",
                "iisi", ev, task, it, kind ? kind : "?", n) < 0)
            return -1;
        return run(r,
                   "UPDATE generation SET ended_ms = ?, finish = ?, reasoning_tokens = ?, "
                   "content_tokens = ?, prompt_tokens = ?, cached_tokens = ?, estimated = ?, "
                   "error = ? WHERE task = ? AND kind = ? AND n = ? AND iteration = ?",
                   "dsjjjjjjisii", ev, t,
                   aborted ? "aborted" : json_string_value(json_object_get(ev, "finish")),
                   "reasoning_tokens", "content_tokens", "prompt_tokens", "cached_tokens",
                   "estimated", "error", task, kind ? kind : "?", n, it);
    }
    if (is(ev_name, "early_stop"))
        return run(r,
                   "UPDATE iteration SET early_stop_ms = ?, early_stop_tokens = ? "
                   "WHERE task = ? AND n = ?",
                   "djii", ev, t, "reasoning_tokens", task, it);
    return 0;
}

static int pool_event(sg_results *r, int64_t campaign, int64_t task, const char *ev_name,
                      const json_t *ev, double t) {
    if (is(ev_name, "job_start")) /* the candidate: its number and its row (NULL: baseline) */
        return run(r,
                   "INSERT OR REPLACE INTO job (campaign, task, pool_job, candidate_n, "
                   "candidate_id, kind, slot, slot_name, role, lent, iteration, origin, "
                   "started_ms, wait_s) VALUES (?1, ?2, ?3, ?4, (SELECT id FROM candidate WHERE "
                   "task = ?2 AND n = ?4), ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
                   "injn"
                   "jjjjj"
                   "ijdj",
                   ev, campaign, task, "job",
                   candidate_of_name(json_string_value(json_object_get(ev, "name"))), "kind",
                   "slot", "slot_name", "role", "lent", int_of(ev, "iteration") & 0xffffffff,
                   "origin", t, "wait_s");
    if (is(ev_name, "job_end"))
        return run(r,
                   "UPDATE job SET ended_ms = ?, service_s = ?, end = ?, verdict = ? "
                   "WHERE campaign = ? AND task IS ? AND pool_job = ?",
                   "djjjinj", ev, t, "service_s", "end", "verdict", campaign, task, "job");
    if (is(ev_name, "pool_split")) {
        char *detail = json_dumps(ev, JSON_COMPACT);
        int rc = run(r,
                     "INSERT INTO pool_split (campaign, t_ms, validate, profile, reason, detail) "
                     "VALUES (?, ?, ?, ?, ?, ?)",
                     "idjjjs", ev, campaign, t, "validate", "profile", "reason", detail);
        free(detail);
        return rc;
    }
    return 0;
}

/* The task's start on the campaign's clock (0 when none was recorded). */
static double task_start_ms(sg_results *r, int64_t task) {
    int k = (int)(task % SG_RESULTS_CLOCKS);
    if (r->clock[k].task == task) return r->clock[k].start_ms;
    int once;
    static const char sql[] = "SELECT start_ms FROM task WHERE id = ?";
    sqlite3_stmt *st = prepared(r, sql, &once);
    double ms = 0;
    if (st) {
        sqlite3_bind_int64(st, 1, task);
        if (sqlite3_step(st) == SQLITE_ROW) ms = sqlite3_column_double(st, 0);
        if (once)
            sqlite3_finalize(st);
        else
            sqlite3_reset(st);
    }
    r->clock[k].task = task;
    r->clock[k].start_ms = ms;
    return ms;
}

int sg_results_task_clock(sg_results *r, int64_t task, double start_ms, sg_err *err) {
    if (sg_results_begin_write(r, err) < 0) return -1;
    if (run(r, "UPDATE task SET start_ms = ? WHERE id = ?", "di", NULL, start_ms, task) < 0)
        return sg_results_fail(r, "cannot record the task's start", err);
    int k = (int)(task % SG_RESULTS_CLOCKS);
    r->clock[k].task = task;
    r->clock[k].start_ms = start_ms;
    return 0;
}

int sg_results_task_origin(sg_results *r, int64_t task, const char *format, const char *file,
                           const char *sha256, sg_err *err) {
    if (sg_results_begin_write(r, err) < 0) return -1;
    if (run(r, "UPDATE task SET origin_format = ?, origin_file = ?, origin_sha256 = ? WHERE id = ?",
            "sssi", NULL, format, file, sha256, task) < 0)
        return sg_results_fail(r, "cannot record the task's origin", err);
    return 0;
}

int sg_results_record(sg_results *r, int64_t campaign, int64_t task, const json_t *ev,
                      sg_err *err) {
    if (sg_results_begin_write(r, err) < 0) return -1;
    const char *name = json_string_value(json_object_get(ev, "ev"));
    if (!name) return 0;
    /* a task's events count from its start; the campaign's own from the campaign's */
    double task_t = json_number_value(json_object_get(ev, "t_ms"));
    double t = task > 0 ? task_start_ms(r, task) + task_t : task_t;
    char *data = json_dumps(ev, JSON_COMPACT);
    /* the pool numbers iterations (task << 32 | iteration): keep the task's own */
    int64_t it = int_of(ev, "iteration") & 0xffffffff;
    static const char sql[] = "INSERT INTO event (campaign, task, t_ms, task_t_ms, ev, "
                              "iteration, data) VALUES (?, ?, ?, ?, ?, ?, ?)";
    int rc = task > 0 ? run(r, sql, "inddsis", ev, campaign, task, t, task_t, name, it, data)
                      : run(r, sql, "indssis", ev, campaign, task, t, (const char *)NULL, name, it,
                            data);
    free(data);
    if (rc == 0 && task > 0) rc = task_event(r, task, name, ev, t, task_t);
    if (rc == 0) rc = pool_event(r, campaign, task, name, ev, t);
    if (rc < 0) return sg_results_fail(r, "cannot record an event", err);
    return 0;
}

void sg_results_bind_json(sqlite3_stmt *st, int k, const json_t *v) {
    if (json_is_integer(v))
        sqlite3_bind_int64(st, k, json_integer_value(v));
    else if (json_is_number(v))
        sqlite3_bind_double(st, k, json_number_value(v));
    else if (json_is_string(v))
        sqlite3_bind_text(st, k, json_string_value(v), (int)json_string_length(v),
                          SQLITE_TRANSIENT);
    else if (json_is_boolean(v))
        sqlite3_bind_int(st, k, json_is_true(v));
    else
        sqlite3_bind_null(st, k);
}
