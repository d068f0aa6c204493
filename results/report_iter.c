/* One timeline per iteration: the reasoning stream with its fork points and early stop, the
 * forks (and the candidate each produced), and the validate / profile jobs on each slot;
 * then the iteration's candidates as a table. Large campaigns draw the first iterations. */
#include "results/report.h"

#include <math.h>
#include <string.h>

#define MAX_ITERATIONS 60
#define MAX_FORKS 40
#define MAX_CANDIDATES 60
#define LANE 20.0

/* green: correct; red: it failed a check; grey: no verdict (none yet, or its job was
 * dropped or killed when its iteration ended: that says nothing about the kernel) */
static const char *verdict_color(const char *v) {
    return !strcmp(v, "pass") ? "#59a14f"
           : !*v || !strcmp(v, "dropped") || !strcmp(v, "killed") || !strcmp(v, "not_run")
               ? "#bab0ac"
               : "#e15759";
}

/* The time span of an iteration: from its start to the last thing that ended in it. */
static double span_end(sg_results *r, int64_t task, int64_t n, double t0, sg_err *err) {
    sqlite3_stmt *st = sg_report_stmt(
        r,
        "SELECT max(coalesce((SELECT max(ended_ms) FROM generation WHERE task = ?1 AND "
        "iteration = ?2), 0), coalesce((SELECT max(coalesce(ended_ms, started_ms)) FROM job "
        "WHERE task = ?1 AND iteration = ?2), 0), coalesce((SELECT early_stop_ms FROM "
        "iteration WHERE task = ?1 AND n = ?2), 0))",
        task, n, err);
    double end = t0 + 1;
    if (st && sqlite3_step(st) == SQLITE_ROW) end = fmax(end, sg_col_d(st, 0));
    sqlite3_finalize(st);
    return end;
}

static int count(sg_results *r, const char *sql, int64_t task, int64_t n, sg_err *err) {
    sqlite3_stmt *st = sg_report_stmt(r, sql, task, n, err);
    if (!st) return -1;
    int c = sqlite3_step(st) == SQLITE_ROW ? sqlite3_column_int(st, 0) : 0;
    sqlite3_finalize(st);
    return c;
}

/* Lanes: reasoning, then one per fork; fork points and the early stop on the reasoning. */
static int draw_generations(sg_results *r, sg_plot *p, int64_t task, int64_t n, double t0,
                            double stop_ms, double stop_tokens, sg_err *err) {
    sqlite3_stmt *st = sg_report_stmt(
        r,
        "SELECT g.kind, g.n, g.rule, g.cue, g.at_tokens, coalesce(g.started_ms, ?3), "
        "coalesce(g.ended_ms, g.started_ms, ?3), g.finish, g.content_tokens, g.reasoning_tokens, "
        "(SELECT verdict FROM candidate c WHERE c.task = g.task AND c.iteration = g.iteration "
        "AND c.fork = g.n AND c.origin = 'fork'), (SELECT speedup FROM candidate c WHERE "
        "c.task = g.task AND c.iteration = g.iteration AND c.fork = g.n AND c.origin = 'fork') "
        "FROM generation g WHERE g.task = ?1 AND g.iteration = ?2 ORDER BY g.kind DESC, g.n "
        "LIMIT " /* reasoning first */ "41",
        task, n, err);
    if (!st) return -1;
    sqlite3_bind_double(st, 3, t0);
    double y = p->top;
    char tip[1400];
    int forks = 0;
    sg_plot_text(p, p->left - 6, y + 14, "end", "name", "reasoning");
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *kind = sg_col_t(st, 0);
        double a = sg_col_d(st, 5), b = sg_col_d(st, 6);
        if (!strcmp(kind, "reasoning")) {
            snprintf(tip, sizeof tip, "reasoning stream %lld: %s, %.0f reasoning tokens",
                     (long long)sqlite3_column_int64(st, 1), sg_col_t(st, 7), sg_col_d(st, 9));
            sg_plot_bar(p, a, b, y + 4, LANE - 8, "#59a14f", tip);
            continue;
        }
        if (++forks > MAX_FORKS) continue;
        double fy = p->top + LANE * forks;
        char name[32];
        snprintf(name, sizeof name, "fork %lld", (long long)sqlite3_column_int64(st, 1));
        sg_plot_text(p, p->left - 6, fy + 14, "end", "name", name);
        snprintf(tip, sizeof tip,
                 "fork %lld at reasoning token %.0f (rule %s, cue \"%s\"): %s, "
                 "%.0f tokens; candidate %s%s",
                 (long long)sqlite3_column_int64(st, 1), sg_col_d(st, 4), sg_col_t(st, 2),
                 sg_col_t(st, 3), sg_col_t(st, 7), sg_col_d(st, 8),
                 *sg_col_t(st, 10) ? sg_col_t(st, 10) : "none", "");
        sg_plot_bar(p, a, b, fy + 4, LANE - 8, "#b07aa1", tip);
        /* the fork point on the reasoning lane, and the candidate's verdict at the fork's end */
        fprintf(p->out, "<path stroke=\"#333\" stroke-width=\"1.5\" d=\"M%.1f %.1fV%.1f\"/>\n",
                sg_plot_x(p, a), y + 2, fy + LANE - 2);
        fprintf(p->out, "<circle class=\"data\" cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"%s\"/>\n",
                sg_plot_x(p, b), fy + LANE / 2, verdict_color(sg_col_t(st, 10)));
    }
    sqlite3_finalize(st);
    if (!isnan(stop_ms)) {
        double x = sg_plot_x(p, stop_ms);
        char label[64];
        snprintf(label, sizeof label, "early stop (%.0f tokens)", stop_tokens);
        fprintf(p->out, "<path class=\"stop\" d=\"M%.1f %.1fV%.1f\"/>\n", x, p->top,
                p->h - p->bottom);
        sg_plot_text(p, x - 3, p->top - 2, "end", "lbl", label);
    }
    return forks > MAX_FORKS ? MAX_FORKS : forks;
}

static int draw_jobs(sg_results *r, sg_plot *p, int64_t task, int64_t n, double y0, sg_err *err) {
    sqlite3_stmt *st = sg_report_stmt(r,
                                      "SELECT slot_name, kind, candidate_n, started_ms, "
                                      "coalesce(ended_ms, started_ms), verdict, end, wait_s "
                                      "FROM job WHERE task = ? AND iteration = ? AND started_ms "
                                      "IS NOT NULL ORDER BY slot_name, started_ms",
                                      task, n, err);
    if (!st) return -1;
    char slot[128] = "", tip[600];
    double y = y0 - LANE;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (strcmp(slot, sg_col_t(st, 0))) {
            snprintf(slot, sizeof slot, "%s", sg_col_t(st, 0));
            y += LANE;
            sg_plot_text(p, p->left - 6, y + 14, "end", "name", slot);
        }
        int64_t c = sqlite3_column_int64(st, 2);
        snprintf(tip, sizeof tip, "%s job of %s%lld on %s: %s (%s), waited %.3gs", sg_col_t(st, 1),
                 c ? "candidate " : "the baseline", (long long)c, slot, sg_col_t(st, 6),
                 sg_col_t(st, 5), sg_col_d(st, 7));
        sg_plot_bar(p, sg_col_d(st, 3), sg_col_d(st, 4), y + 4, LANE - 8,
                    strcmp(sg_col_t(st, 1), "profile") ? "#4e79a7" : "#f28e2b", tip);
    }
    sqlite3_finalize(st);
    return 0;
}

static int candidates_table(sg_results *r, FILE *out, int64_t task, int64_t n, sg_err *err) {
    sqlite3_stmt *st = sg_report_stmt(
        r,
        "SELECT n, origin, coalesce(fork, '-'), status, coalesce(verdict, '-'), speedup, "
        "coalesce(message, reason, '') FROM candidate WHERE task = ? AND iteration = ? ORDER BY "
        "n LIMIT "
        "61",
        task, n, err);
    if (!st) return -1;
    int rows = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (rows++ == 0)
            fputs("<table><tr><th>candidate</th><th>origin</th><th>fork</th><th>status</th>"
                  "<th>verdict</th><th>speedup</th><th>message</th></tr>\n",
                  out);
        if (rows > MAX_CANDIDATES) {
            fputs("<tr><td colspan=\"7\">… more: specgen results candidates</td></tr>\n", out);
            break;
        }
        fputs("<tr>", out);
        for (int i = 0; i < 7; i++) {
            fputs("<td>", out);
            if (i == 5)
                isnan(sg_col_d(st, i)) ? (void)fputs("-", out)
                                       : (void)fprintf(out, "%.2fx", sg_col_d(st, i));
            else
                sg_html_escape(out, sg_col_t(st, i), i == 6 ? 300 : -1);
            fputs("</td>", out);
        }
        fputs("</tr>\n", out);
    }
    if (rows) fputs("</table>\n", out);
    sqlite3_finalize(st);
    return 0;
}

int sg_report_iterations(sg_results *r, int64_t campaign, FILE *out, sg_err *err) {
    sqlite3_stmt *st = sg_report_stmt(r,
                                      "SELECT i.task, i.n, t.name, coalesce(i.started_ms, 0), "
                                      "i.early_stop_ms, i.early_stop_tokens FROM iteration i "
                                      "JOIN task t ON t.id = i.task WHERE t.campaign = ? "
                                      "ORDER BY i.task, i.n",
                                      campaign, 0, err);
    if (!st) return -1;
    fputs("<h2>Iterations</h2>\n<p class=\"key\"><span style=\"background:#59a14f\"></span>"
          "reasoning<span style=\"background:#b07aa1\"></span>fork (dot: its candidate, green "
          "correct, red failed, grey dropped or not judged)<span "
          "style=\"background:#4e79a7\"></span>validate job"
          "<span style=\"background:#f28e2b\"></span>profile job — red line: early stop</p>\n",
          out);
    int drawn = 0, rc = 0;
    while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
        if (++drawn > MAX_ITERATIONS) {
            fprintf(out,
                    "<p class=\"note\">The first %d iterations are drawn; `specgen results "
                    "iterations --task T` lists every one.</p>\n",
                    MAX_ITERATIONS);
            break;
        }
        int64_t task = sqlite3_column_int64(st, 0), n = sqlite3_column_int64(st, 1);
        double t0 = sg_col_d(st, 3), t1 = span_end(r, task, n, t0, err);
        int forks = count(r,
                          "SELECT min(count(*), "
                          "40"
                          ") FROM generation WHERE task = ? AND "
                          "iteration = ? AND kind = 'fork'",
                          task, n, err);
        int slots = count(r,
                          "SELECT count(DISTINCT slot_name) FROM job WHERE task = ? AND "
                          "iteration = ?",
                          task, n, err);
        fputs("<h3>", out);
        sg_html_escape(out, sg_col_t(st, 2), -1);
        fprintf(out, " — iteration %lld</h3>\n", (long long)n);
        /* x in the task's milliseconds (the columns' unit); labels in seconds from t0 */
        sg_plot p = {out, 900, 70 + LANE * (1 + forks + slots), 110, 20, 20, 40, t0, t1, 0, 1};
        sg_plot_begin(&p, "Timeline of the iteration: reasoning, forks, jobs per slot");
        sg_plot_axes(&p, 0, NULL, 0, NULL);
        sg_plot_titles(&p, "seconds since the iteration started", "lane");
        for (int k = 0; k <= 8; k++) { /* ticks in seconds since the iteration started */
            char label[32];
            double ms = t0 + (t1 - t0) * k / 8;
            snprintf(label, sizeof label, "%.1fs", (ms - t0) / 1000);
            sg_plot_text(&p, sg_plot_x(&p, ms), p.h - p.bottom + 15, "middle", "lbl", label);
        }
        if (draw_generations(r, &p, task, n, t0, sg_col_d(st, 4), sg_col_d(st, 5), err) < 0 ||
            draw_jobs(r, &p, task, n, p.top + LANE * (1 + forks), err) < 0)
            rc = -1;
        sg_plot_end(&p);
        if (rc == 0) rc = candidates_table(r, out, task, n, err);
    }
    sqlite3_finalize(st);
    return rc;
}
