/* What users type to name a campaign, task, candidate or iteration, turned into row ids. A
 * reference that matches nothing is an error naming it and the command that lists them. */
#include "results/internal.h"

#include <stdlib.h>
#include <string.h>

/* "12" -> 12; anything else -> 0. */
static int64_t as_id(const char *s) {
    char *end;
    if (!s || !*s) return 0;
    long long v = strtoll(s, &end, 10);
    return *end == '\0' && v > 0 ? v : 0;
}

/* One int64 from sql with one int64 and one text parameter (either may be unused). */
static int one(sg_results *r, const char *sql, int64_t a, const char *b, int64_t *out,
               sg_err *err) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK)
        return sg_results_fail(r, "cannot query", err);
    int na = sqlite3_bind_parameter_index(st, ":a"), nb = sqlite3_bind_parameter_index(st, ":b");
    if (na) sqlite3_bind_int64(st, na, a);
    if (nb) sqlite3_bind_text(st, nb, b, -1, SQLITE_STATIC);
    int rc = sqlite3_step(st),
        found = rc == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL;
    if (found) *out = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return sg_results_fail(r, "cannot query", err);
    return found;
}

int sg_results_resolve_campaign(sg_results *r, int64_t want, int64_t *campaign, sg_err *err) {
    int f = want > 0 ? one(r, "SELECT id FROM campaign WHERE id = :a", want, NULL, campaign, err)
                     : one(r, "SELECT max(id) FROM campaign", 0, NULL, campaign, err);
    if (f < 0) return -1;
    if (f) return 0;
    if (want > 0)
        return sg_errf(err, "no campaign %lld in %s (specgen results campaigns lists them)",
                       (long long)want, r->path);
    return sg_errf(err, "%s holds no campaign yet (specgen optimize ... --db %s records one)",
                   r->path, r->path);
}

int sg_results_resolve_task(sg_results *r, const char *ref, int64_t campaign, int64_t *task,
                            sg_err *err) {
    int64_t id = as_id(ref);
    int f = id             ? one(r, "SELECT id FROM task WHERE id = :a", id, NULL, task, err)
            : campaign > 0 ? one(r, "SELECT max(id) FROM task WHERE campaign = :a AND name = :b",
                                 campaign, ref, task, err)
                           : one(r, "SELECT max(id) FROM task WHERE name = :b", 0, ref, task, err);
    if (f < 0) return -1;
    if (f) return 0;
    if (campaign > 0 && !id)
        return sg_errf(err,
                       "no task '%s' in campaign %lld of %s (specgen results tasks --campaign "
                       "%lld lists them)",
                       ref, (long long)campaign, r->path, (long long)campaign);
    return sg_errf(err, "no task '%s' in %s (a task id or name; specgen results tasks lists them)",
                   ref, r->path);
}

/* "TASK:N" -> the task and N; 0 when ref has no colon. */
static int split_ref(sg_results *r, const char *ref, const char *what, int64_t *task, int64_t *n,
                     sg_err *err) {
    const char *colon = strrchr(ref, ':');
    if (!colon) return 0;
    char name[512];
    snprintf(name, sizeof name, "%.*s", (int)(colon - ref), ref);
    char *end;
    long long v = strtoll(colon + 1, &end, 10);
    if (!colon[1] || *end || v < 0)
        return sg_errf(err, "%s '%s': expected TASK:N with N a number (e.g. vector_scale:2)", what,
                       ref);
    if (sg_results_resolve_task(r, name, 0, task, err) < 0)
        return sg_err_prefix(err, "%s '%s'", what, ref);
    *n = v;
    return 1;
}

int sg_results_resolve_candidate(sg_results *r, const char *ref, int64_t *candidate, sg_err *err) {
    int64_t task, n;
    int s = split_ref(r, ref, "candidate", &task, &n, err);
    if (s < 0) return -1;
    int f;
    if (s) {
        char key[32];
        snprintf(key, sizeof key, "%lld", (long long)n);
        f = one(r, "SELECT id FROM candidate WHERE task = :a AND n = :b", task, key, candidate,
                err);
        if (f == 0)
            return sg_errf(err,
                           "no candidate %lld in task %lld ('%s') of %s (specgen results "
                           "candidates --task %lld lists them)",
                           (long long)n, (long long)task, ref, r->path, (long long)task);
    } else {
        int64_t id = as_id(ref);
        if (!id)
            return sg_errf(err,
                           "candidate '%s': expected a candidate id (e.g. 42) or TASK:N (e.g. "
                           "vector_scale:2)",
                           ref);
        f = one(r, "SELECT id FROM candidate WHERE id = :a", id, NULL, candidate, err);
        if (f == 0)
            return sg_errf(err,
                           "no candidate with id %lld in %s (specgen results candidates --task T "
                           "lists them)",
                           (long long)id, r->path);
    }
    return f < 0 ? -1 : 0;
}

int sg_results_resolve_iteration(sg_results *r, const char *ref, int64_t *task, int64_t *n,
                                 sg_err *err) {
    int s = split_ref(r, ref, "iteration", task, n, err);
    if (s < 0) return -1;
    int64_t found;
    if (s) {
        char key[32];
        snprintf(key, sizeof key, "%lld", (long long)*n);
        /* iteration 0 is the baseline's: it has events but no iteration row */
        int f = *n == 0 ? 1
                        : one(r, "SELECT rowid FROM iteration WHERE task = :a AND n = :b", *task,
                              key, &found, err);
        if (f < 0) return -1;
        if (!f)
            return sg_errf(err,
                           "no iteration %lld in task %lld ('%s') of %s (specgen results "
                           "iterations --task %lld lists them)",
                           (long long)*n, (long long)*task, ref, r->path, (long long)*task);
        return 0;
    }
    int64_t id = as_id(ref);
    if (!id)
        return sg_errf(err,
                       "iteration '%s': expected TASK:N (e.g. vector_scale:1) or an iteration "
                       "id (specgen results iterations --task T lists them)",
                       ref);
    int f = one(r, "SELECT task FROM iteration WHERE rowid = :a", id, NULL, task, err);
    if (f < 0) return -1;
    if (!f)
        return sg_errf(err,
                       "no iteration with id %lld in %s (specgen results iterations --task T "
                       "lists them)",
                       (long long)id, r->path);
    return one(r, "SELECT n FROM iteration WHERE rowid = :a", id, NULL, n, err) < 0 ? -1 : 0;
}
