/* fast_p as KernelBench reports it (`results fastp`, the report's section): per campaign,
 * the share of its problems whose best kernel is correct and more than p times faster than
 * the task's baseline (torch eager for an imported problem). The denominator is every task
 * row of the campaign: a problem that did not import or could not run (status skipped)
 * and one that never got a correct kernel count as not fast. p = 0 counts the correct
 * ones (a correct kernel that was never timed included); p > 0 needs speedup > p. */
#include "results/report.h"

#include "common/buf.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int sg_results_fastp_parse(const char *spec, double *p, int max, int *n, sg_err *err) {
    *n = 0;
    const char *s = spec && *spec ? spec : "0,1,2";
    while (*s) {
        char *end;
        errno = 0;
        double v = strtod(s, &end);
        if (end == s || errno || !isfinite(v) || v < 0 || (*end && *end != ','))
            return sg_errf(
                err, "--p '%s': expected thresholds >= 0 separated by commas, e.g. 0,1,2", spec);
        if (*n == max) return sg_errf(err, "--p '%s': at most %d thresholds", spec, max);
        p[(*n)++] = v;
        s = *end ? end + 1 : end;
    }
    if (*n == 0) return sg_errf(err, "--p '%s': expected at least one threshold", spec);
    return 0;
}

/* One row per campaign of ?1 (a JSON array of ids). best: each task's best correct speedup
 * (0 for a correct kernel that has none; NULL: no correct kernel). With kb, a kernel counts
 * as correct only when KernelBench's own check, recorded with it, passed too; kb_checked
 * says how many problems have any candidate with that check (0: --kb-check has no data). */
char *sg_results_fastp_sql(const double *p, int np, int kb) {
    sg_buf b = {0};
    sg_buf_printf(&b,
                  "WITH best AS (SELECT t.id, t.campaign, t.status, t.baseline_kind, t.precision, "
                  "(SELECT max(coalesce(k.speedup, 0)) FROM candidate k WHERE k.task = t.id AND "
                  "k.correct = 1%s) AS s, EXISTS (SELECT 1 FROM candidate k WHERE k.task = t.id "
                  "AND k.kb_correct IS NOT NULL) AS kb FROM task t WHERE t.campaign IN (SELECT "
                  "value FROM json_each(?1))) "
                  "SELECT c.id AS campaign, c.kind, c.suite, count(b.id) AS problems, "
                  "coalesce(sum(b.status = 'skipped'), 0) AS not_run, "
                  "coalesce(sum(b.s IS NOT NULL), 0) AS correct",
                  kb ? " AND k.kb_correct = 1" : "");
    for (int i = 0; i < np; i++) {
        const char *cond = p[i] > 0 ? "b.s > %.17g" : "b.s IS NOT NULL";
        sg_buf_append_str(&b, ", round(1.0 * coalesce(sum(");
        sg_buf_printf(&b, cond, p[i]);
        sg_buf_printf(&b, "), 0) / nullif(count(b.id), 0), 4) AS \"fast_%g\"", p[i]);
    }
    sg_buf_printf(&b,
                  ", coalesce((SELECT group_concat(k, ',') FROM (SELECT DISTINCT "
                  "coalesce(b2.baseline_kind, 'kernel') AS k FROM best b2 WHERE b2.campaign = "
                  "c.id AND b2.status <> 'skipped' ORDER BY 1)), '-') AS baseline, "
                  "coalesce((SELECT group_concat(k, ',') FROM (SELECT DISTINCT b2.precision AS k "
                  "FROM best b2 WHERE b2.campaign = c.id AND b2.precision IS NOT NULL ORDER BY "
                  "1)), '-') AS precision, '%s' AS \"check\", coalesce(sum(b.kb), 0) AS "
                  "kb_checked "
                  "FROM campaign c LEFT JOIN best b ON b.campaign = c.id WHERE c.id IN (SELECT "
                  "value FROM json_each(?1)) GROUP BY c.id ORDER BY c.id",
                  kb ? "ours+kernelbench" : "ours");
    return sg_buf_steal(&b);
}

int sg_results_fastp(sg_results *r, const int64_t *ids, int n, const double *p, int np, int kb,
                     sg_results_fmt fmt, FILE *out, sg_err *err) {
    char *json = sg_results_ids_json(ids, n), *sql = sg_results_fastp_sql(p, np, kb);
    const char *params[] = {json};
    int rc = sg_results_query(r, sql, params, 1, fmt, 40, out, err);
    free(sql);
    free(json);
    return rc;
}
