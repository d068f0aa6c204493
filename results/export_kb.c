/* `results export --kernelbench TASK`: the best correct kernel of a task (or TASK:N, that
 * candidate) handed with its task folder to the ModelNew writer the command table gives
 * (the validator's, which knows tasks and launch plans: results stands on common alone).
 * An OpenCL kernel is refused: KernelBench runs CUDA. */
#include "common/buf.h"
#include "results/internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* candidate id, n, source, speedup, correct, verdict; task id, name, dir, lang, campaign,
 * baseline_kind. ?1: the candidate's id, or NULL for the best of ?2 (a task's name or id)
 * within campaign ?3 (NULL: any). */
static const char *const pick_sql =
    "SELECT c.id, c.n, c.source, c.speedup, c.correct, c.verdict, t.id, t.name, t.dir, t.lang, "
    "t.campaign, t.baseline_kind FROM candidate c JOIN task t ON t.id = c.task WHERE "
    "CASE WHEN ?1 IS NOT NULL THEN c.id = ?1 ELSE c.correct = 1 AND c.source IS NOT NULL AND "
    "(?3 IS NULL OR t.campaign = ?3) AND (t.name = ?2 OR t.id = ?2) END "
    "ORDER BY c.speedup IS NULL, c.speedup DESC, c.id LIMIT 1";

typedef struct kb_pick {
    int64_t id, n, task, campaign;
    int correct;
    double speedup;
    char *source, *name, *dir, *lang, *verdict, *baseline;
} kb_pick;

static char *col(sqlite3_stmt *st, int i) {
    const char *t = (const char *)sqlite3_column_text(st, i);
    return t ? sg_xstrdup(t) : NULL;
}

static void pick_free(kb_pick *p) {
    free(p->source);
    free(p->name);
    free(p->dir);
    free(p->lang);
    free(p->verdict);
    free(p->baseline);
}

/* The candidate: 1 found, 0 none, -1 an error. */
static int pick(sg_results *r, const char *cand, const char *task, int64_t campaign, kb_pick *p,
                sg_err *err) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(r->db, pick_sql, -1, &st, NULL) != SQLITE_OK)
        return sg_results_fail(r, "cannot query", err);
    if (cand) sqlite3_bind_text(st, 1, cand, -1, SQLITE_STATIC);
    sqlite3_bind_text(st, 2, task, -1, SQLITE_STATIC);
    if (campaign > 0) sqlite3_bind_int64(st, 3, campaign);
    int rc = sqlite3_step(st), found = rc == SQLITE_ROW;
    if (found) {
        *p = (kb_pick){sqlite3_column_int64(st, 0),
                       sqlite3_column_int64(st, 1),
                       sqlite3_column_int64(st, 6),
                       sqlite3_column_int64(st, 10),
                       sqlite3_column_int(st, 4),
                       sqlite3_column_double(st, 3),
                       col(st, 2),
                       col(st, 7),
                       col(st, 8),
                       col(st, 9),
                       col(st, 5),
                       col(st, 11)};
        if (sqlite3_column_type(st, 3) == SQLITE_NULL) p->speedup = 0;
    }
    sqlite3_finalize(st);
    if (!found && rc != SQLITE_DONE) return sg_results_fail(r, "cannot query", err);
    return found;
}

/* Why this candidate cannot be exported (0: it can). */
static int refuse(const kb_pick *p, sg_err *err) {
    const char *lang = p->lang;
    if (!lang && p->source) /* a task_start not recorded: the source says */
        lang = strstr(p->source, "__global__") ? "cuda" : "opencl";
    if (!p->correct)
        return sg_errf(err,
                       "candidate %lld of %s is not correct (verdict %s): only a correct kernel "
                       "is exported",
                       (long long)p->n, p->name, p->verdict ? p->verdict : "none");
    if (!p->source)
        return sg_errf(err, "candidate %lld of %s has no source", (long long)p->n, p->name);
    if (lang && strcmp(lang, "cuda"))
        return sg_errf(err,
                       "the kernel of %s (candidate %lld, campaign %lld) is %s, and KernelBench "
                       "runs CUDA: run the problem on a GPU (--device cuda) for a CUDA kernel to "
                       "export",
                       p->name, (long long)p->n, (long long)p->campaign,
                       !strcmp(lang, "opencl") ? "OpenCL" : lang);
    return 0;
}

int sg_results_export_kb(sg_results *r, const char *ref, int64_t campaign,
                         sg_results_kb_writer writer, sg_buf *out, sg_err *err) {
    int64_t id;
    char idtext[32];
    const char *cand = NULL;
    if (strchr(ref, ':')) { /* TASK:N, one candidate */
        if (sg_results_resolve_candidate(r, ref, &id, err) < 0) return -1;
        snprintf(idtext, sizeof idtext, "%lld", (long long)id);
        cand = idtext;
    } else if (sg_results_resolve_task(r, ref, campaign, &id, err) < 0) {
        return -1;
    }
    kb_pick p = {0};
    int rc = pick(r, cand, ref, campaign, &p, err);
    if (rc == 0)
        return sg_errf(err,
                       "task %s has no correct kernel to export (specgen results candidates "
                       "--task %s lists its candidates)",
                       ref, ref);
    if (rc > 0) rc = refuse(&p, err);
    if (rc == 0) {
        sg_buf note = {0};
        sg_buf_printf(&note,
                      "Candidate %lld of task %s (task id %lld, candidate id %lld, campaign %lld): "
                      "%.2fx over %s, from the results database %s.",
                      (long long)p.n, p.name, (long long)p.task, (long long)p.id,
                      (long long)p.campaign, p.speedup,
                      p.baseline ? p.baseline : "the task's baseline", r->path);
        rc = writer(p.dir, p.source, note.data, out, err);
        if (rc < 0) sg_err_prefix(err, "%s (task folder %s)", p.name, p.dir);
        sg_buf_free(&note);
    }
    pick_free(&p);
    return rc < 0 ? -1 : 0;
}
