/* Calibration rows (schema 4): written one JSON object a row, read back as plain arrays
 * for a fit (results.h; docs/calibration.md). */
#include "results/internal.h"

#include "common/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A formatted string (owned by the caller). */
static char *fmt_str(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *fmt_str(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = sg_xmalloc((size_t)(n > 0 ? n : 0) + 1);
    va_start(ap, fmt);
    vsnprintf(s, (size_t)(n > 0 ? n : 0) + 1, fmt, ap);
    va_end(ap);
    return s;
}

static const char *const calib_tables[] = {"calib_trace", "calib_point", "calib_fork", "calib_rate",
                                           "calib_service"};

int sg_results_calib_row(sg_results *r, const char *table, const json_t *row, sg_err *err) {
    int known = 0;
    for (size_t i = 0; i < sizeof calib_tables / sizeof *calib_tables; i++)
        known |= !strcmp(calib_tables[i], table);
    if (!known) return sg_errf(err, "results: '%s' is not a calibration table", table);
    if (sg_results_begin_write(r, err) < 0) return -1;
    sg_buf cols = {0}, qs = {0};
    const char *key;
    json_t *v;
    json_object_foreach((json_t *)row, key, v) {
        sg_buf_printf(&cols, "%s\"%s\"", cols.len ? "," : "", key);
        sg_buf_printf(&qs, "%s?", qs.len ? "," : "");
    }
    char *sql = fmt_str("INSERT INTO %s (%s) VALUES (%s)", table, cols.data ? cols.data : "",
                        qs.data ? qs.data : "");
    sg_buf_free(&cols);
    sg_buf_free(&qs);
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(r->db, sql, -1, &st, NULL);
    free(sql);
    if (rc != SQLITE_OK)
        return sg_errf(err, "results %s: %s: %s", r->path, table, sqlite3_errmsg(r->db));
    int k = 1;
    json_object_foreach((json_t *)row, key, v) sg_results_bind_json(st, k++, v);
    rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : sg_results_fail(r, "cannot write", err);
}

int sg_results_calib_task_end(sg_results *r, int64_t task, const char *status, const char *error,
                              sg_err *err) {
    if (sg_results_begin_write(r, err) < 0) return -1;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(r->db, "UPDATE task SET status = ?, ended = ?, error = ? WHERE id = ?",
                           -1, &st, NULL) != SQLITE_OK)
        return sg_results_fail(r, "cannot write", err);
    char now[32];
    sg_results_now(now);
    sqlite3_bind_text(st, 1, status, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, now, -1, SQLITE_TRANSIENT);
    if (error && *error)
        sqlite3_bind_text(st, 3, error, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(st, 3);
    sqlite3_bind_int64(st, 4, task);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : sg_results_fail(r, "cannot write", err);
}

int64_t sg_results_calib_rates(sg_results *r, int64_t campaign, sg_err *err) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(r->db, "SELECT count(*) FROM calib_rate WHERE campaign = ?", -1, &st,
                           NULL) != SQLITE_OK)
        return sg_errf(err, "results %s: %s", r->path, sqlite3_errmsg(r->db));
    sqlite3_bind_int64(st, 1, campaign);
    int64_t n = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int64(st, 0) : -1;
    sqlite3_finalize(st);
    return n < 0 ? sg_errf(err, "results %s: %s", r->path, sqlite3_errmsg(r->db)) : n;
}

int sg_results_calib_reset(sg_results *r, int64_t task, sg_err *err) {
    if (sg_results_begin_write(r, err) < 0) return -1;
    char sql[256];
    snprintf(sql, sizeof sql,
             "DELETE FROM calib_trace WHERE task = %lld; DELETE FROM calib_point WHERE task = "
             "%lld; DELETE FROM calib_fork WHERE task = %lld;",
             (long long)task, (long long)task, (long long)task);
    return sg_results_exec(r, sql, err);
}

/* The campaigns' condition: "campaign IN (1,2)" or every calibration campaign. */
static char *where_campaigns(const int64_t *ids, int n) {
    if (n <= 0)
        return fmt_str("campaign IN (SELECT id FROM campaign WHERE kind IN "
                       "('calibrate', 'sim-calibration'))");
    sg_buf b = {0};
    sg_buf_append_str(&b, "campaign IN (");
    for (int i = 0; i < n; i++) sg_buf_printf(&b, "%s%lld", i ? "," : "", (long long)ids[i]);
    sg_buf_append_str(&b, ")");
    return sg_buf_steal(&b);
}

static double col(sqlite3_stmt *st, int i) {
    return sqlite3_column_type(st, i) == SQLITE_NULL ? -1 : sqlite3_column_double(st, i);
}

/* Every row of sql into a grown array of `size`-byte elements, filled by fill(). */
static int load_rows(sg_results *r, const char *sql, void **arr, int *n, size_t size,
                     void (*fill)(sqlite3_stmt *, void *), sg_err *err) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK)
        return sg_errf(err, "results %s: %s (is it a calibration database, schema 4?)", r->path,
                       sqlite3_errmsg(r->db));
    int cap = 0, rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (*n == cap) {
            cap = cap ? 2 * cap : 64;
            *arr = sg_xrealloc(*arr, (size_t)cap * size);
        }
        memset((char *)*arr + (size_t)*n * size, 0, size);
        fill(st, (char *)*arr + (size_t)(*n)++ * size);
    }
    sqlite3_finalize(st);
    return rc == SQLITE_DONE ? 0 : sg_errf(err, "results %s: %s", r->path, sqlite3_errmsg(r->db));
}

static void fill_obs(sqlite3_stmt *st, void *p) {
    sg_calib_obs *o = p;
    o->task = sqlite3_column_int64(st, 0);
    snprintf(o->kind, sizeof o->kind, "%s", (const char *)sqlite3_column_text(st, 1));
    o->at_tokens = col(st, 2);
    o->fraction = col(st, 3);
    o->kernel = sqlite3_column_int(st, 4);
    o->compiled = sqlite3_column_int(st, 5);
    o->correct = sqlite3_column_int(st, 6);
    o->speedup = col(st, 7);
    o->fork_tokens = col(st, 8);
    o->prompt_tokens = col(st, 9);
    o->cached_tokens = col(st, 10);
    o->first_token_ms = col(st, 11);
}

static void fill_trace(sqlite3_stmt *st, void *p) {
    sg_calib_trace_row *t = p;
    t->task = sqlite3_column_int64(st, 0);
    t->reasoning_tokens = col(st, 1);
    t->answer_tokens = col(st, 2);
    t->prompt_tokens = col(st, 3);
    t->first_token_ms = col(st, 4);
    t->reasoning_ms = col(st, 5);
}

static void fill_point(sqlite3_stmt *st, void *p) {
    sg_calib_point_row *x = p;
    x->task = sqlite3_column_int64(st, 0);
    x->code = sqlite3_column_int(st, 1);
    x->at_tokens = col(st, 2);
}

static void fill_rate(sqlite3_stmt *st, void *p) {
    sg_calib_rate_row *x = p;
    x->decode = sqlite3_column_int(st, 0);
    x->streams = sqlite3_column_int(st, 1);
    x->prompt_tokens = col(st, 2);
    x->cached_tokens = col(st, 3);
    x->tokens = col(st, 4);
    x->seconds = col(st, 5);
    x->tok_s = col(st, 6);
    x->first_token_ms = col(st, 7);
    x->tok_s_sd = col(st, 8);
}

static void fill_double(sqlite3_stmt *st, void *p) { *(double *)p = col(st, 0); }

int sg_results_calib_load(sg_results *r, const int64_t *campaigns, int n, sg_calib_data *d,
                          sg_err *err) {
    memset(d, 0, sizeof *d);
    char *w = where_campaigns(campaigns, n);
    char *q[6];
    q[0] =
        fmt_str("SELECT f.task, f.kind, f.at_tokens, f.fraction, f.status = 'kernel', f.compiled, "
                "f.correct, f.speedup, f.fork_tokens, f.prompt_tokens, f.cached_tokens, "
                "f.first_token_ms FROM calib_fork f JOIN task t ON t.id = f.task WHERE t.%s "
                "AND f.status != 'error' ORDER BY f.id",
                w);
    q[1] = fmt_str("SELECT task, reasoning_tokens, answer_tokens, prompt_tokens, "
                   "first_token_ms, reasoning_ms FROM calib_trace WHERE %s ORDER BY task",
                   w);
    q[2] = fmt_str("SELECT p.task, p.kind = 'code_block', p.at_tokens FROM calib_point p "
                   "JOIN task t ON t.id = p.task WHERE t.%s ORDER BY p.task, p.kind, "
                   "p.at_tokens",
                   w);
    q[3] = fmt_str("SELECT kind = 'decode', streams, prompt_tokens, cached_tokens, tokens, "
                   "seconds, tok_s, first_token_ms, tok_s_sd FROM calib_rate WHERE %s ORDER BY id",
                   w);
    q[4] = fmt_str("SELECT service_s FROM calib_service WHERE %s AND kind = 'validate'", w);
    q[5] = fmt_str("SELECT service_s FROM calib_service WHERE %s AND kind = 'profile'", w);
    free(w);
    int rc = 0;
    if (load_rows(r, q[0], (void **)&d->obs, &d->nobs, sizeof *d->obs, fill_obs, err) < 0 ||
        load_rows(r, q[1], (void **)&d->traces, &d->ntraces, sizeof *d->traces, fill_trace, err) <
            0 ||
        load_rows(r, q[2], (void **)&d->points, &d->npoints, sizeof *d->points, fill_point, err) <
            0 ||
        load_rows(r, q[3], (void **)&d->rates, &d->nrates, sizeof *d->rates, fill_rate, err) < 0 ||
        load_rows(r, q[4], (void **)&d->service[0], &d->nservice[0], sizeof(double), fill_double,
                  err) < 0 ||
        load_rows(r, q[5], (void **)&d->service[1], &d->nservice[1], sizeof(double), fill_double,
                  err) < 0)
        rc = -1;
    for (int i = 0; i < 6; i++) free(q[i]);
    if (rc < 0) sg_calib_data_free(d);
    return rc;
}

void sg_calib_data_free(sg_calib_data *d) {
    free(d->obs);
    free(d->traces);
    free(d->points);
    free(d->rates);
    free(d->service[0]);
    free(d->service[1]);
    memset(d, 0, sizeof *d);
}
