/* The HTML report of one campaign: the page, the speedup per task, the best speedup over
 * time and the pool's utilisation (the iteration timelines are report_iter.c's). One file,
 * CSS inline, no script, nothing fetched. */
#include "results/report.h"

#include "common/units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const sg_report_palette[10] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                           "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};

const char *const sg_report_css =
    "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;background:#fff}"
    "h1{font-size:22px}h2{font-size:18px;margin-top:32px}h3{font-size:15px}"
    "table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:2px 8px;"
    "text-align:left;vertical-align:top}th{background:#f4f4f4}"
    "pre{background:#f7f7f7;border:1px solid #ddd;padding:8px;overflow:auto;max-height:400px}"
    ".axis{stroke:#333;fill:none}.tick{stroke:#333}.grid{stroke:#eee}"
    ".lbl{font-size:11px;fill:#333}.xtitle,.ytitle{font-size:12px;fill:#222}.name{font-size:12px;"
    "fill:#222}.note{color:#666}"
    ".stop{stroke:#d62728;stroke-width:2}.base{stroke:#999;stroke-dasharray:4 3}"
    ".key span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;"
    "vertical-align:middle}";

int sg_report_speedups(sg_results *r, int64_t campaign, FILE *out, sg_err *err) {
    sqlite3_stmt *st = sg_report_stmt(r,
                                      "SELECT name, best_speedup, target, status FROM task WHERE "
                                      "campaign = ? ORDER BY id",
                                      campaign, 0, err);
    if (!st) return -1;
    int n = 0;
    double top = 1.0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        n++;
        top = fmax(top, fmax(sg_col_d(st, 1), sg_col_d(st, 2)));
    }
    sqlite3_reset(st);
    fputs("<h2>Speedup per task</h2>\n", out);
    sg_plot p = {out, 760, 60 + 24.0 * n, 180, 60, 10, 40, 0, top * 1.1, 0, 1};
    sg_plot_begin(&p, "Best speedup of each task over its baseline");
    sg_plot_axes(&p, 8, "%gx", 0, NULL);
    sg_plot_titles(&p, "best speedup over the baseline", "task");
    fprintf(out, "<path class=\"base\" d=\"M%.1f %.1fV%.1f\"/>\n", sg_plot_x(&p, 1), p.top,
            p.h - p.bottom);
    for (int i = 0; sqlite3_step(st) == SQLITE_ROW; i++) {
        double y = p.top + 24.0 * i, s = sg_col_d(st, 1), target = sg_col_d(st, 2);
        char tip[600], val[64];
        snprintf(tip, sizeof tip, "%s: %s (%s)", sg_col_t(st, 0),
                 isnan(s) ? "no correct kernel" : "best speedup", sg_col_t(st, 3));
        sg_plot_text(&p, p.left - 6, y + 15, "end", "name", sg_col_t(st, 0));
        if (!isnan(s)) {
            sg_plot_bar(&p, 0, s, y + 3, 17, s >= target ? "#59a14f" : "#4e79a7", tip);
            snprintf(val, sizeof val, "%.2fx", s);
        } else {
            snprintf(val, sizeof val, "none (%s)", sg_col_t(st, 3));
        }
        sg_plot_text(&p, sg_plot_x(&p, isnan(s) ? 0 : s) + 4, y + 15, "start", "lbl", val);
        if (!isnan(target))
            fprintf(out,
                    "<path class=\"stop\" d=\"M%.1f %.1fv21\"><title>target %.2fx</title></path>\n",
                    sg_plot_x(&p, target), y + 1, target);
    }
    sg_plot_end(&p);
    fputs("<p class=\"note\">Dashed: the baseline (1x); red tick: the task's target; green: "
          "target met.</p>\n",
          out);
    sqlite3_finalize(st);
    return 0;
}

int sg_report_best_over_time(sg_results *r, int64_t campaign, FILE *out, sg_err *err) {
    /* every time is on the campaign's clock: a task's start, its events */
    sqlite3_stmt *st = sg_report_stmt(
        r,
        "SELECT t.id, t.name, coalesce(t.start_ms, 0) / 1000.0, coalesce(t.elapsed_s, 0), "
        "e.task_t_ms / 1000.0, json_extract(e.data, '$.speedup') "
        "FROM task t LEFT JOIN event e ON e.task = t.id "
        "AND e.ev = 'new_best' WHERE t.campaign = ? ORDER BY t.id, e.t_ms",
        campaign, 0, err);
    if (!st) return -1;
    double tmax = 1, smax = 1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        tmax = fmax(tmax, sg_col_d(st, 2) + sg_col_d(st, 3));
        if (!isnan(sg_col_d(st, 5))) smax = fmax(smax, sg_col_d(st, 5));
    }
    sqlite3_reset(st);
    fputs("<h2>Best speedup over time</h2>\n", out);
    sg_plot p = {out, 760, 300, 50, 20, 10, 40, 0, tmax, 0, smax * 1.1};
    sg_plot_begin(&p, "Best speedup of each task over the campaign's time");
    sg_plot_axes(&p, 8, "%gs", 6, "%gx");
    int64_t cur = 0;
    int k = -1;
    double end = 0, last = 1;
    sg_plot_titles(&p, "seconds since the campaign started", "best speedup");
    char *key = NULL;
    size_t keylen = 0;
    FILE *kf = open_memstream(&key, &keylen); /* the key goes after the svg */
    while (1) {
        int row = sqlite3_step(st) == SQLITE_ROW;
        if (!row || sqlite3_column_int64(st, 0) != cur) {
            if (cur) fprintf(out, " H%.1f\"/>\n", sg_plot_x(&p, end));
            if (!row) break;
            cur = sqlite3_column_int64(st, 0);
            k++;
            double off = sg_col_d(st, 2);
            end = off + sg_col_d(st, 3);
            last = 1;
            fprintf(out,
                    "<path class=\"data\" fill=\"none\" stroke-width=\"2\" stroke=\"%s\" "
                    "d=\"M%.1f %.1f",
                    sg_report_palette[k % 10], sg_plot_x(&p, off), sg_plot_y(&p, 1));
            fprintf(kf, "<span style=\"background:%s\"></span>", sg_report_palette[k % 10]);
            sg_html_escape(kf, sg_col_t(st, 1), -1);
        }
        double s = sg_col_d(st, 5), t = sg_col_d(st, 2) + sg_col_d(st, 4);
        if (!isnan(s) && s > last) {
            fprintf(out, " H%.1f V%.1f", sg_plot_x(&p, t), sg_plot_y(&p, s));
            last = s;
        }
    }
    sg_plot_end(&p);
    fclose(kf);
    fprintf(out, "<p class=\"key\">%s", key ? key : "");
    fputs("</p>\n", out);
    free(key);
    sqlite3_finalize(st);
    return 0;
}

int sg_report_pool(sg_results *r, int64_t campaign, FILE *out, sg_err *err) {
    enum { NB = 60 };
    sqlite3_stmt *st =
        sg_report_stmt(r,
                       "SELECT kind, started_ms, coalesce(ended_ms, started_ms), "
                       "(SELECT count(DISTINCT slot_name) FROM job WHERE campaign = ?1), "
                       "(SELECT min(started_ms) FROM job WHERE campaign = ?1), "
                       "(SELECT max(coalesce(ended_ms, started_ms)) FROM job WHERE campaign = ?1) "
                       "FROM job WHERE campaign = ?1 AND started_ms IS NOT NULL",
                       campaign, 0, err);
    if (!st) return -1;
    double busy[2][NB] = {{0}}, t0 = 0, t1 = 0, bw = 1;
    int slots = 0;
    fputs("<h2>Pool utilisation</h2>\n", out);
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (!slots) {
            slots = sqlite3_column_int(st, 3);
            t0 = 0; /* the campaign's start: every _ms column is on its clock */
            t1 = sg_col_d(st, 5);
            bw = t1 > t0 ? (t1 - t0) / NB : 1;
        }
        int kind = strcmp(sg_col_t(st, 0), "profile") == 0;
        double a = sg_col_d(st, 1), b = sg_col_d(st, 2);
        for (int i = (int)((a - t0) / bw); i < NB && t0 + i * bw < b; i++) {
            double lo = fmax(a, t0 + i * bw), hi = fmin(b, t0 + (i + 1) * bw);
            if (i >= 0 && hi > lo) busy[kind][i] += hi - lo;
        }
    }
    sqlite3_finalize(st);
    if (!slots) {
        fputs("<p class=\"note\">No pool jobs recorded.</p>\n", out);
        return 0;
    }
    sg_plot p = {out, 760, 240, 50, 20, 10, 40, 0, (t1 - t0) / 1000, 0, 100};
    sg_plot_begin(&p, "Share of the pool's slots busy with validate and profile jobs");
    sg_plot_axes(&p, 8, "%gs", 4, "%g%%");
    for (int kind = 1; kind >= 0; kind--) { /* profile stacked on validate: drawn first */
        fprintf(out, "<path class=\"data\" fill=\"%s\" opacity=\"0.85\" d=\"M%.1f %.1f",
                kind ? "#f28e2b" : "#4e79a7", sg_plot_x(&p, 0), sg_plot_y(&p, 0));
        for (int i = 0; i < NB; i++) {
            double u = 100 * (busy[0][i] + (kind ? busy[1][i] : 0)) / (bw * slots);
            fprintf(out, " L%.1f %.1f L%.1f %.1f", sg_plot_x(&p, i * bw / 1000),
                    sg_plot_y(&p, fmin(u, 100)), sg_plot_x(&p, (i + 1) * bw / 1000),
                    sg_plot_y(&p, fmin(u, 100)));
        }
        fprintf(out, " L%.1f %.1fZ\"/>\n", sg_plot_x(&p, NB * bw / 1000), sg_plot_y(&p, 0));
    }
    sg_plot_titles(&p, "seconds since the campaign started", "slots busy");
    sg_plot_end(&p);
    fprintf(out,
            "<p class=\"key\"><span style=\"background:#4e79a7\"></span>validate"
            "<span style=\"background:#f28e2b\"></span>profile — %d slot%s</p>\n",
            slots, slots == 1 ? "" : "s");
    return 0;
}

static int tasks_table(sg_results *r, int64_t campaign, FILE *out, sg_err *err) {
    sqlite3_stmt *st = sg_report_stmt(
        r,
        "SELECT t.name, t.status, t.best_speedup, t.target, t.iterations, t.reasoning_tokens, "
        "t.tokens, t.elapsed_s, c.source, t.best_n FROM task t LEFT JOIN candidate c ON "
        "c.task = t.id AND "
        "c.id = t.best_candidate_id WHERE t.campaign = ? ORDER BY t.id",
        campaign, 0, err);
    if (!st) return -1;
    fputs("<h2>Tasks</h2>\n<table><tr><th>task</th><th>status</th><th>best</th><th>target</th>"
          "<th>iterations</th><th>reasoning tokens</th><th>tokens</th><th>time</th></tr>\n",
          out);
    while (sqlite3_step(st) == SQLITE_ROW) {
        fputs("<tr>", out);
        for (int i = 0; i < 8; i++) {
            fputs("<td>", out);
            char dur[32];
            if (i == 2 || i == 3)
                isnan(sg_col_d(st, i)) ? (void)fputs("-", out)
                                       : (void)fprintf(out, "%.2fx", sg_col_d(st, i));
            else if (i == 7 && !isnan(sg_col_d(st, 7))) /* as the console says it */
                fputs(sg_fmt_duration((int64_t)(sg_col_d(st, 7) * 1e9), dur, sizeof dur), out);
            else
                sg_html_escape(
                    out, sqlite3_column_type(st, i) == SQLITE_NULL ? "-" : sg_col_t(st, i), -1);
            if (i == 2 && sqlite3_column_type(st, 9) != SQLITE_NULL) /* the task's number */
                fprintf(out, " (candidate %lld)", (long long)sqlite3_column_int64(st, 9));
            fputs("</td>", out);
        }
        fputs("</tr>\n", out);
    }
    fputs("</table>\n", out);
    sqlite3_reset(st);
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (sqlite3_column_type(st, 8) == SQLITE_NULL) continue;
        fputs("<h3>Best kernel of ", out);
        sg_html_escape(out, sg_col_t(st, 0), -1);
        fputs("</h3>\n<pre class=\"source\">", out);
        sg_html_escape(out, sg_col_t(st, 8), -1);
        fputs("</pre>\n", out);
    }
    sqlite3_finalize(st);
    return 0;
}

int sg_results_report(sg_results *r, int64_t campaign, FILE *out, sg_err *err) {
    sqlite3_stmt *st = sg_report_stmt(
        r, "SELECT kind, suite, status, started, coalesce(ended, '-') FROM campaign WHERE id = ?",
        campaign, 0, err);
    if (!st) return -1;
    if (sqlite3_step(st) != SQLITE_ROW) {
        sqlite3_finalize(st);
        return sg_errf(err, "no campaign %lld in %s", (long long)campaign, r->path);
    }
    fprintf(out,
            "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
            "<title>specgen report: campaign %lld</title>\n<style>%s</style></head><body>\n",
            (long long)campaign, sg_report_css);
    int simulated = !strcmp(sg_col_t(st, 0), "sim");
    fprintf(out, "<h1>specgen report: campaign %lld%s</h1>\n", (long long)campaign,
            simulated ? " (simulated)" : "");
    if (simulated)
        fputs("<p class=\"note\">A simulated campaign (<code>specgen sim</code>): a modelled LLM "
              "and modelled GPUs in virtual time; times are virtual seconds and kernels are not "
              "real (docs/eval.md).</p>\n",
              out);
    fputs("<p>", out);
    const char *labels[] = {"kind", "suite", "status", "started", "ended"};
    for (int i = 0; i < 5; i++) {
        fprintf(out, "%s%s: <b>", i ? " · " : "", labels[i]);
        sg_html_escape(out, sg_col_t(st, i), -1);
        fputs("</b>", out);
    }
    fprintf(out, " · database: ");
    sg_html_escape(out, r->path, -1);
    fputs("</p>\n", out);
    sqlite3_finalize(st);
    if (sg_report_fastp(r, campaign, out, err) < 0 ||
        sg_report_speedups(r, campaign, out, err) < 0 ||
        sg_report_best_over_time(r, campaign, out, err) < 0 ||
        sg_report_pool(r, campaign, out, err) < 0 || tasks_table(r, campaign, out, err) < 0 ||
        sg_report_iterations(r, campaign, out, err) < 0)
        return -1;
    fputs("</body></html>\n", out);
    return 0;
}
