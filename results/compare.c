/* Campaigns side by side: `results compare` (a row per campaign) and the figures the
 * report's comparison page groups by configuration (report_compare.c). A configuration is
 * a simulated campaign's `configuration` (its seeds are its campaigns) or a real campaign's
 * kind and policy. */
#include "results/report.h"

#include "common/buf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* One row per campaign of ?1 (a JSON array of ids). Time to target: the mean time, from
 * each task's start, of the tasks that met it; feedback latency: from a candidate's
 * creation to its verdict (jobs dropped or killed when their iteration ended say nothing
 * and are left out); utilisation: the slots' busy share from the campaign's start to its
 * last job's end. */
const char *const sg_compare_sql =
    "SELECT c.id AS campaign, c.kind, CASE WHEN c.kind = 'sim' THEN "
    "coalesce(json_extract(c.config, '$.configuration'), 'sim') ELSE c.kind || ' ' || "
    "coalesce(json_extract(c.config, '$.policy'), (SELECT max(policy) FROM task WHERE "
    "campaign = c.id), '?') END AS configuration, json_extract(c.config, '$.seed') AS seed, "
    "(SELECT count(*) FROM task WHERE campaign = c.id) AS tasks, "
    "(SELECT count(*) FROM task WHERE campaign = c.id AND status = 'target') AS reached, "
    "(SELECT avg(best_speedup) FROM task WHERE campaign = c.id) AS best_speedup_mean, "
    "(SELECT avg(elapsed_s) FROM task WHERE campaign = c.id AND status = 'target') AS "
    "time_to_target_mean_s, (SELECT avg(k.done_ms - k.created_ms) / 1000.0 FROM candidate k "
    "JOIN task t ON t.id = k.task WHERE t.campaign = c.id AND k.done_ms IS NOT NULL AND "
    "k.verdict IS NOT NULL AND k.verdict NOT IN ('dropped', 'killed', 'not_run')) AS "
    "feedback_latency_mean_s, (SELECT sum(tokens) FROM task WHERE campaign = c.id) AS tokens, "
    "(SELECT sum(ended_ms - started_ms) / nullif(count(DISTINCT slot_name) * max(ended_ms), 0) "
    "FROM job WHERE campaign = c.id AND ended_ms IS NOT NULL) AS utilisation "
    "FROM campaign c WHERE c.id IN (SELECT value FROM json_each(?1)) ORDER BY c.id";

/* "3", "3,5", "3-9,12": ids in order, each once. */
static int parse_ids(const char *spec, int64_t **ids, int *n, sg_err *err) {
    int cap = 16;
    *ids = sg_xmalloc((size_t)cap * sizeof **ids);
    *n = 0;
    for (const char *p = spec; *p;) {
        char *end;
        errno = 0;
        long long a = strtoll(p, &end, 10), b = a;
        if (end == p || a < 1 || errno) goto bad;
        if (*end == '-') {
            const char *q = end + 1;
            b = strtoll(q, &end, 10);
            if (end == q || b < a || b - a > 100000) goto bad;
        }
        if (*end && *end != ',') goto bad;
        for (long long v = a; v <= b; v++) {
            int seen = 0;
            for (int i = 0; i < *n; i++) seen |= (*ids)[i] == v;
            if (seen) continue;
            if (*n == cap) *ids = sg_xrealloc(*ids, (size_t)(cap *= 2) * sizeof **ids);
            (*ids)[(*n)++] = v;
        }
        p = *end ? end + 1 : end;
    }
    if (*n > 0) return 0;
bad:
    free(*ids);
    *ids = NULL;
    return sg_errf(err, "--campaign '%s': expected campaign ids such as 3, 3,5 or 3-9", spec);
}

int sg_results_campaign_ids(sg_results *r, const char *spec, int64_t **ids, int *n, sg_err *err) {
    if (spec) {
        if (parse_ids(spec, ids, n, err) < 0) return SG_RESULTS_USAGE;
    } else { /* every campaign */
        *ids = NULL;
        *n = 0;
    }
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(r->db, "SELECT id FROM campaign ORDER BY id", -1, &st, NULL) !=
        SQLITE_OK)
        return sg_results_fail(r, "cannot read campaigns", err);
    int64_t *all = NULL;
    int nall = 0, cap = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (nall == cap) all = sg_xrealloc(all, (size_t)(cap = cap ? 2 * cap : 64) * sizeof *all);
        all[nall++] = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    int rc = 0;
    for (int i = 0; i < *n && rc == 0; i++) {
        int found = 0;
        for (int k = 0; k < nall && !found; k++) found = all[k] == (*ids)[i];
        if (!found)
            rc = sg_errf(err, "no campaign %lld in %s (specgen results campaigns lists them)",
                         (long long)(*ids)[i], r->path);
    }
    if (!spec) {
        *ids = all;
        *n = nall;
        all = NULL;
        if (nall == 0) rc = sg_errf(err, "no campaign in %s yet", r->path);
    }
    free(all);
    if (rc < 0) {
        free(*ids);
        *ids = NULL;
    }
    return rc;
}

char *sg_results_ids_json(const int64_t *ids, int n) {
    sg_buf b = {0};
    sg_buf_append_str(&b, "[");
    for (int i = 0; i < n; i++) sg_buf_printf(&b, "%s%lld", i ? "," : "", (long long)ids[i]);
    sg_buf_append_str(&b, "]");
    return b.data;
}

int sg_results_compare(sg_results *r, const int64_t *ids, int n, sg_results_fmt fmt, FILE *out,
                       sg_err *err) {
    char *json = sg_results_ids_json(ids, n);
    const char *p[] = {json};
    int rc = sg_results_query(r, sg_compare_sql, p, 1, fmt, 40, out, err);
    free(json);
    return rc;
}
