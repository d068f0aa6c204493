/* Opening the database (WAL, migrations), batched writes, and the campaign and task rows. */
#include "results/internal.h"

#include "common/buf.h"
#include "common/paths.h"
#include "common/wfile.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BATCH_MS 1000

static int64_t mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void sg_results_now(char out[32]) {
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

int sg_results_fail(sg_results *r, const char *what, sg_err *err) {
    int code = sqlite3_extended_errcode(r->db), sys = sqlite3_system_errno(r->db);
    const char *hint = "";
    if ((code & 0xff) == SQLITE_FULL) hint = " (the disk is full)";
    if ((code & 0xff) == SQLITE_READONLY) hint = " (the file or its folder is read-only)";
    if ((code & 0xff) == SQLITE_BUSY) hint = " (another process holds it locked)";
    if ((code & 0xff) == SQLITE_IOERR) hint = " (a write failed: the disk may be full)";
    char why[sizeof r->failed_why];
    if ((code & 0xff) == SQLITE_IOERR && sys) /* "disk I/O error" alone hides ENOSPC */
        snprintf(why, sizeof why, "%s: %s: %s", what, sqlite3_errmsg(r->db), strerror(sys));
    else
        snprintf(why, sizeof why, "%s: %s%s", what, sqlite3_errmsg(r->db), hint);
    if (!r->readonly && !r->failed) snprintf(r->failed_why, sizeof r->failed_why, "%s", why);
    if (!r->readonly) r->failed = 1;
    return sg_errf(err, "results database %s: %s", r->path, why);
}

int sg_results_exec(sg_results *r, const char *sql, sg_err *err) {
    char *msg = NULL;
    if (sqlite3_exec(r->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        sqlite3_free(msg);
        return sg_results_fail(r, "cannot write", err);
    }
    return 0;
}

int sg_results_flush(sg_results *r, sg_err *err) {
    if (!r->in_tx) return 0;
    r->in_tx = 0;
    if (sqlite3_exec(r->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        sg_results_fail(r, "cannot commit", err);
        sqlite3_exec(r->db, "ROLLBACK", NULL, NULL, NULL);
        return -1;
    }
    return 0;
}

int sg_results_begin_write(sg_results *r, sg_err *err) {
    if (r->readonly) return sg_errf(err, "results database %s: opened read-only", r->path);
    if (r->failed) /* the first failure's reason: the last message printed may be this one */
        return sg_errf(err, "results database %s: an earlier write failed: %s", r->path,
                       r->failed_why[0] ? r->failed_why : "no reason kept");
    if (r->in_tx && mono_ms() - r->tx_started >= BATCH_MS && sg_results_flush(r, err) < 0)
        return -1;
    if (r->in_tx) return 0;
    if (sqlite3_exec(r->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return sg_results_fail(r, "cannot start a transaction", err);
    r->in_tx = 1;
    r->tx_started = mono_ms();
    return 0;
}

static int migrate(sg_results *r, sg_err *err) {
    sqlite3_stmt *st;
    int version = 0;
    if (sqlite3_prepare_v2(r->db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
        return sg_results_fail(r, "cannot read its version", err);
    int rc = sqlite3_step(st);
    if (rc == SQLITE_ROW) version = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW) return sg_results_fail(r, "cannot read its version", err);
    int want = sg_results_schema_version();
    if (version > want)
        return sg_errf(err,
                       "results database %s has schema version %d; this specgen knows up to %d "
                       "(a newer specgen wrote it)",
                       r->path, version, want);
    if (version == want) return 0;
    if (r->readonly && version == 0)
        return sg_errf(err,
                       "%s is not a specgen results database (it has no schema: empty, or "
                       "written by something else)",
                       r->path);
    if (r->readonly)
        return sg_errf(err,
                       "results database %s has schema version %d, older than %d: open it once "
                       "for writing (any specgen command with --db) to migrate it",
                       r->path, version, want);
    for (int v = version; v < want; v++) {
        char bump[64];
        snprintf(bump, sizeof bump, "PRAGMA user_version = %d", v + 1);
        if (sg_results_exec(r, "BEGIN IMMEDIATE", err) < 0) return -1;
        if (sg_results_exec(r, sg_results_migration(v), err) < 0 ||
            sg_results_exec(r, bump, err) < 0 || sg_results_exec(r, "COMMIT", err) < 0) {
            sqlite3_exec(r->db, "ROLLBACK", NULL, NULL, NULL);
            return sg_err_prefix(err, "migrating to schema version %d", v + 1);
        }
    }
    return 0;
}

int sg_results_open(const char *path, int readonly, sg_results **out, sg_err *err) {
    *out = NULL;
    sg_results *r = sg_xcalloc(1, sizeof *r);
    snprintf(r->path, sizeof r->path, "%s", path);
    r->readonly = readonly;
    struct stat sb;
    int there = stat(path, &sb) == 0, e = errno;
    if (there && !S_ISREG(sb.st_mode)) { /* a device or a FIFO: neither read nor written */
        sg_errf(err, "results database %s: is %s, not a regular file; refusing to open it", path,
                sg_wfile_kind(sb.st_mode));
        free(r);
        return SG_WFILE_REFUSED;
    }
    if (!readonly) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", path);
        if (sg_mkdir_p(dirname(dir), err) < 0) {
            free(r);
            return sg_err_prefix(err, "results database %s", path);
        }
    } else if (!there) {
        sg_errf(err, "results database %s: %s", path, strerror(e));
        free(r);
        return -1;
    }
    int flags = readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    if (sqlite3_open_v2(path, &r->db, flags, NULL) != SQLITE_OK) {
        char dir[4096];
        snprintf(dir, sizeof dir, "%s", path);
        const char *d = dirname(dir);
        sg_errf(err, "results database %s: cannot open: %s%s%s%s", path,
                r->db ? sqlite3_errmsg(r->db) : "out of memory",
                access(d, W_OK) < 0 ? " (its folder " : "", access(d, W_OK) < 0 ? d : "",
                access(d, W_OK) < 0 ? " is not writable)" : "");
        sqlite3_close(r->db);
        free(r);
        return -1;
    }
    sqlite3_busy_timeout(r->db, 5000);
    /* WAL: readers (specgen results) never block the writer; NORMAL: a commit is durable
     * across a crash of the process (not of the machine: that costs an fsync per batch). */
    if ((!readonly && (sg_results_exec(r, "PRAGMA journal_mode = WAL", err) < 0 ||
                       sg_results_exec(r, "PRAGMA synchronous = NORMAL", err) < 0)) ||
        sg_results_exec(r, "PRAGMA foreign_keys = ON", err) < 0 || migrate(r, err) < 0) {
        sqlite3_close(r->db);
        free(r);
        return -1;
    }
    r->failed = 0;
    sg_wfile_protect(r->path); /* no output of this process may replace it */
    *out = r;
    return 0;
}

int sg_results_close(sg_results *r, sg_err *err) {
    if (!r) return 0;
    int rc = sg_results_flush(r, err);
    sg_results_finalize_all(r);
    sqlite3_close(r->db);
    sg_wfile_unprotect(r->path);
    free(r);
    return rc;
}

const char *sg_results_path(const sg_results *r) { return r->path; }
void *sg_results_db(sg_results *r) { return r->db; }

int64_t sg_results_campaign_begin(sg_results *r, const char *kind, const char *suite,
                                  const json_t *config, sg_err *err) {
    if (sg_results_begin_write(r, err) < 0) return -1;
    char now[32];
    sg_results_now(now);
    char *cfg = json_dumps(config, JSON_COMPACT | JSON_SORT_KEYS);
    sqlite3_stmt *st;
    int64_t id = -1;
    if (sqlite3_prepare_v2(r->db,
                           "INSERT INTO campaign (kind, suite, config, started, status) "
                           "VALUES (?, ?, ?, ?, 'running')",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, kind, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, suite, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, cfg ? cfg : "{}", -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, now, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_DONE) id = sqlite3_last_insert_rowid(r->db);
        sqlite3_finalize(st);
    }
    free(cfg);
    if (id < 0) return sg_results_fail(r, "cannot record the campaign", err);
    /* A campaign row is worth committing at once: --resume needs its id. */
    return sg_results_flush(r, err) < 0 ? -1 : id;
}

int sg_results_campaign_end(sg_results *r, int64_t campaign, const char *status, sg_err *err) {
    if (sg_results_begin_write(r, err) < 0) return -1;
    char now[32];
    sg_results_now(now);
    sqlite3_stmt *st;
    int ok = 0;
    if (sqlite3_prepare_v2(r->db, "UPDATE campaign SET ended = ?, status = ? WHERE id = ?", -1, &st,
                           NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, now, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, status, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, campaign);
        ok = sqlite3_step(st) == SQLITE_DONE;
        sqlite3_finalize(st);
    }
    if (!ok) return sg_results_fail(r, "cannot end the campaign", err);
    return sg_results_flush(r, err);
}

int sg_results_campaign_get(sg_results *r, int64_t campaign, char *suite, size_t n, json_t **config,
                            sg_err *err) {
    sqlite3_stmt *st;
    int found = 0;
    *config = NULL;
    if (sqlite3_prepare_v2(r->db, "SELECT suite, config FROM campaign WHERE id = ?", -1, &st,
                           NULL) != SQLITE_OK)
        return sg_results_fail(r, "cannot read campaigns", err);
    sqlite3_bind_int64(st, 1, campaign);
    if (sqlite3_step(st) == SQLITE_ROW) {
        found = 1;
        snprintf(suite, n, "%s", (const char *)sqlite3_column_text(st, 0));
        *config = json_loads((const char *)sqlite3_column_text(st, 1), 0, NULL);
    }
    sqlite3_finalize(st);
    if (!found)
        return sg_errf(err,
                       "results database %s has no campaign %lld (specgen results campaigns "
                       "lists them)",
                       r->path, (long long)campaign);
    return 0;
}

double sg_results_campaign_age_ms(sg_results *r, int64_t campaign, sg_err *err) {
    sqlite3_stmt *st;
    double ms = -1;
    if (sqlite3_prepare_v2(r->db,
                           "SELECT (julianday('now') - julianday(started)) * 86400000.0 FROM "
                           "campaign WHERE id = ?",
                           -1, &st, NULL) != SQLITE_OK)
        return sg_results_fail(r, "cannot read campaigns", err);
    sqlite3_bind_int64(st, 1, campaign);
    if (sqlite3_step(st) == SQLITE_ROW) ms = sqlite3_column_double(st, 0);
    sqlite3_finalize(st);
    if (ms < 0)
        return sg_errf(err, "results database %s: campaign %lld has no start time", r->path,
                       (long long)campaign);
    return ms;
}

int64_t sg_results_task_begin(sg_results *r, int64_t campaign, const char *name, const char *dir,
                              sg_err *err) {
    if (sg_results_begin_write(r, err) < 0) return -1;
    char now[32];
    sg_results_now(now);
    sqlite3_stmt *st;
    int64_t id = -1;
    if (sqlite3_prepare_v2(r->db,
                           "INSERT INTO task (campaign, name, dir, started, status) "
                           "VALUES (?, ?, ?, ?, 'running')",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, campaign);
        sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 3, dir, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 4, now, -1, SQLITE_STATIC);
        if (sqlite3_step(st) == SQLITE_DONE) id = sqlite3_last_insert_rowid(r->db);
        sqlite3_finalize(st);
    }
    if (id < 0) return sg_results_fail(r, "cannot record the task", err);
    return id;
}

int64_t sg_results_task_find(sg_results *r, int64_t campaign, const char *name, char *status,
                             size_t n, sg_err *err) {
    sqlite3_stmt *st;
    int64_t id = 0;
    if (sqlite3_prepare_v2(r->db, "SELECT id, status FROM task WHERE campaign = ? AND name = ?", -1,
                           &st, NULL) != SQLITE_OK)
        return sg_results_fail(r, "cannot read tasks", err);
    sqlite3_bind_int64(st, 1, campaign);
    sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
    if (sqlite3_step(st) == SQLITE_ROW) {
        id = sqlite3_column_int64(st, 0);
        snprintf(status, n, "%s", (const char *)sqlite3_column_text(st, 1));
    }
    sqlite3_finalize(st);
    return id;
}

int sg_results_task_reset(sg_results *r, int64_t task, sg_err *err) {
    static const char *const tables[] = {"event", "job", "candidate", "generation", "iteration"};
    if (sg_results_begin_write(r, err) < 0) return -1;
    for (size_t i = 0; i < sizeof tables / sizeof *tables; i++) {
        char sql[128];
        snprintf(sql, sizeof sql, "DELETE FROM %s WHERE task = %lld", tables[i], (long long)task);
        if (sg_results_exec(r, sql, err) < 0) return -1;
    }
    char sql[200];
    snprintf(sql, sizeof sql,
             "UPDATE task SET status = 'running', ended = NULL, best_speedup = NULL, "
             "best_n = NULL, best_candidate_id = NULL, error = NULL WHERE id = %lld",
             (long long)task);
    return sg_results_exec(r, sql, err);
}

int sg_results_task_skip(sg_results *r, int64_t task, const char *why, sg_err *err) {
    if (sg_results_begin_write(r, err) < 0) return -1;
    char now[32];
    sg_results_now(now);
    sqlite3_stmt *st;
    int ok = 0;
    if (sqlite3_prepare_v2(r->db,
                           "UPDATE task SET status = 'skipped', ended = ?, error = ? WHERE id = ?",
                           -1, &st, NULL) == SQLITE_OK) {
        sqlite3_bind_text(st, 1, now, -1, SQLITE_STATIC);
        sqlite3_bind_text(st, 2, why, -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 3, task);
        ok = sqlite3_step(st) == SQLITE_DONE;
        sqlite3_finalize(st);
    }
    return ok ? 0 : sg_results_fail(r, "cannot record the task", err);
}

int sg_results_task_prefix(sg_results *r, int64_t task, int64_t fork_prompt_tokens,
                           int64_t fork_cached_tokens, int reported, sg_err *err) {
    if (sg_results_begin_write(r, err) < 0) return -1;
    char sql[200], cached[32] = "NULL";
    if (reported) snprintf(cached, sizeof cached, "%lld", (long long)fork_cached_tokens);
    snprintf(sql, sizeof sql,
             "UPDATE task SET fork_prompt_tokens = %lld, fork_cached_tokens = %s WHERE id = %lld",
             (long long)fork_prompt_tokens, cached, (long long)task);
    return sg_results_exec(r, sql, err);
}

int sg_results_task_totals(sg_results *r, int64_t task, int64_t reasoning_tokens, int64_t tokens,
                           sg_err *err) {
    if (sg_results_begin_write(r, err) < 0) return -1;
    char sql[160];
    snprintf(sql, sizeof sql,
             "UPDATE task SET reasoning_tokens = %lld, tokens = %lld WHERE id = %lld",
             (long long)reasoning_tokens, (long long)tokens, (long long)task);
    return sg_results_exec(r, sql, err);
}
