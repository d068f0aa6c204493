/* `results show`: one candidate in full, with its lineage back to the fork point that
 * produced it and the jobs that checked and timed it. */
#include "results/internal.h"

#include <math.h>
#include <string.h>

static const char *const candidate_sql =
    "SELECT c.id, t.name AS task, c.task AS task_id, t.campaign, c.n, c.iteration, "
    "i.rowid AS iteration_id, c.origin, c.fork, c.rule, c.at_tokens, c.status, c.verdict, "
    "c.correct, c.kb_correct, c.kb_check, c.speedup, c.noise, "
    "coalesce(c.time_ns, CASE WHEN c.speedup > 0 THEN t.baseline_ns / c.speedup END) AS time_ns, "
    "coalesce(c.baseline_ns, t.baseline_ns) AS baseline_ns, c.compile_ms, c.created_ms, c.done_ms, "
    "c.hash, c.reason, c.message, "
    "c.feedback, c.source FROM candidate c JOIN task t ON t.id = c.task "
    "LEFT JOIN iteration i ON i.task = c.task AND i.n = c.iteration WHERE c.id = ?";

/* The generation that wrote the candidate: its fork, or (final answers) the reasoning. */
static const char *const lineage_sql =
    "SELECT g.kind, g.n AS fork, g.iteration, g.rule, g.cue, g.at_tokens, g.at_bytes, "
    "g.started_ms, g.ended_ms, g.finish, g.content_tokens, g.reasoning_tokens, "
    "i.early_stop_ms, i.early_stop_tokens FROM candidate c "
    "JOIN generation g ON g.task = c.task AND g.iteration = c.iteration AND "
    "((c.origin = 'fork' AND g.kind = 'fork' AND g.n = c.fork) OR "
    " (c.origin <> 'fork' AND g.kind = 'reasoning')) "
    "LEFT JOIN iteration i ON i.task = c.task AND i.n = c.iteration WHERE c.id = ? LIMIT 1";

static const char *const jobs_sql =
    "SELECT j.kind, j.slot_name AS slot, j.role, j.lent, j.started_ms, j.wait_s, j.service_s, "
    "j.end, j.verdict FROM job j WHERE j.candidate_id = ? ORDER BY j.started_ms";

static json_t *column_json(sqlite3_stmt *st, int i) {
    switch (sqlite3_column_type(st, i)) {
    case SQLITE_INTEGER: return json_integer(sqlite3_column_int64(st, i));
    case SQLITE_FLOAT: return json_real(sqlite3_column_double(st, i));
    case SQLITE_NULL: return json_null();
    default: return json_string((const char *)sqlite3_column_text(st, i));
    }
}

/* Rows of sql (one int64 parameter) as JSON objects: an array, or the first row when one. */
static int rows_json(sg_results *r, const char *sql, int64_t id, int first, json_t **out,
                     sg_err *err) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK)
        return sg_results_fail(r, "cannot query", err);
    sqlite3_bind_int64(st, 1, id);
    json_t *arr = json_array();
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *o = json_object();
        for (int i = 0; i < sqlite3_column_count(st); i++)
            json_object_set_new(o, sqlite3_column_name(st, i), column_json(st, i));
        json_array_append_new(arr, o);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        json_decref(arr);
        return sg_results_fail(r, "cannot read", err);
    }
    if (first) {
        *out = json_incref(json_array_get(arr, 0)); /* NULL when none */
        json_decref(arr);
    } else {
        *out = arr;
    }
    return 0;
}

static void print_value(FILE *out, const json_t *v) {
    if (json_is_string(v))
        fputs(json_string_value(v), out);
    else if (json_is_integer(v))
        fprintf(out, "%lld", (long long)json_integer_value(v));
    else if (json_is_real(v))
        fprintf(out, fabs(json_real_value(v)) >= 1000 ? "%.1f" : "%.6g", json_real_value(v));
    else
        fputs("-", out);
}

static void print_fields(FILE *out, const json_t *o, const char *indent, const char *skip) {
    const char *k;
    json_t *v;
    json_object_foreach((json_t *)o, k, v) {
        if (skip && !strcmp(k, skip)) continue;
        if (json_is_null(v) || json_is_object(v) || json_is_array(v)) continue;
        fprintf(out, "%s%-18s ", indent, k);
        print_value(out, v);
        fputc('\n', out);
    }
}

int sg_results_show_candidate(sg_results *r, int64_t candidate, sg_results_fmt fmt, FILE *out,
                              sg_err *err) {
    json_t *c = NULL, *lineage = NULL, *jobs = NULL;
    if (rows_json(r, candidate_sql, candidate, 1, &c, err) < 0) return -1;
    if (!c) return sg_errf(err, "no candidate with id %lld in %s", (long long)candidate, r->path);
    if (rows_json(r, lineage_sql, candidate, 1, &lineage, err) < 0 ||
        rows_json(r, jobs_sql, candidate, 0, &jobs, err) < 0) {
        json_decref(c);
        json_decref(lineage);
        return -1;
    }
    json_object_set_new(c, "lineage", lineage ? lineage : json_null());
    json_object_set_new(c, "jobs", jobs);
    if (fmt != SG_RESULTS_TEXT) {
        json_dumpf(c, out, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
        fputc('\n', out);
        json_decref(c);
        return 0;
    }
    fprintf(out, "candidate %lld: %s candidate %lld\n",
            (long long)json_integer_value(json_object_get(c, "id")),
            json_string_value(json_object_get(c, "task")),
            (long long)json_integer_value(json_object_get(c, "n")));
    json_t *source = json_object_get(c, "source");
    print_fields(out, c, "  ", "source");
    fprintf(out, "lineage:\n");
    if (lineage)
        print_fields(out, lineage, "  ", NULL);
    else
        fprintf(out, "  (no generation recorded)\n");
    fprintf(out, "jobs:\n");
    size_t i;
    json_t *j;
    json_array_foreach(jobs, i, j) {
        fprintf(out, "  %-8s on %s: ", json_string_value(json_object_get(j, "kind")),
                json_string_value(json_object_get(j, "slot")));
        fprintf(out, "waited %.3gs, ran %.3gs, %s", json_number_value(json_object_get(j, "wait_s")),
                json_number_value(json_object_get(j, "service_s")),
                json_string_value(json_object_get(j, "end")) ?: "running");
        if (json_string_value(json_object_get(j, "verdict")))
            fprintf(out, " (%s)", json_string_value(json_object_get(j, "verdict")));
        fputc('\n', out);
    }
    if (!json_array_size(jobs)) fprintf(out, "  (none)\n");
    fprintf(out, "source:\n%s\n", json_is_string(source) ? json_string_value(source) : "(none)");
    json_decref(c);
    return 0;
}
