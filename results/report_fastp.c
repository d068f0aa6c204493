/* The report's fast_p section: fast_0, fast_1 and fast_2 of the campaign as KernelBench
 * reports them (fastp.c computes them), as a table and a bar chart; a second row and bars
 * with KernelBench's own check where the campaign recorded it. */
#include "results/report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { NP = 3 };
static const double thresholds[NP] = {0, 1, 2};

typedef struct fastp_row {
    int problems, not_run, correct;
    double share[NP];
    char baseline[128], precision[64];
} fastp_row;

/* The campaign's figures (kb: with KernelBench's own check). */
static int read_row(sg_results *r, int64_t campaign, int kb, fastp_row *row, sg_err *err) {
    char *sql = sg_results_fastp_sql(thresholds, NP, kb), ids[32];
    sqlite3_stmt *st;
    int rc = sqlite3_prepare_v2(r->db, sql, -1, &st, NULL);
    free(sql);
    if (rc != SQLITE_OK) return sg_results_fail(r, "cannot query fast_p", err);
    snprintf(ids, sizeof ids, "[%lld]", (long long)campaign);
    sqlite3_bind_text(st, 1, ids, -1, SQLITE_TRANSIENT);
    memset(row, 0, sizeof *row);
    if (sqlite3_step(st) == SQLITE_ROW) {
        row->problems = sqlite3_column_int(st, 3);
        row->not_run = sqlite3_column_int(st, 4);
        row->correct = sqlite3_column_int(st, 5);
        for (int i = 0; i < NP; i++) row->share[i] = sg_col_d(st, 6 + i);
        snprintf(row->baseline, sizeof row->baseline, "%s", sg_col_t(st, 6 + NP));
        snprintf(row->precision, sizeof row->precision, "%s", sg_col_t(st, 7 + NP));
    }
    sqlite3_finalize(st);
    return 0;
}

static void table_row(FILE *out, const char *check, const fastp_row *f) {
    fprintf(out, "<tr><td>%s</td><td>%d</td><td>%d</td><td>%d</td>", check, f->problems, f->not_run,
            f->correct);
    for (int i = 0; i < NP; i++) {
        double s = f->share[i];
        if (isnan(s))
            fputs("<td>-</td>", out);
        else
            fprintf(out, "<td>%.1f%% (%d of %d)</td>", 100 * s, (int)lround(s * f->problems),
                    f->problems);
    }
    fputs("<td>", out);
    sg_html_escape(out, f->baseline, -1);
    fputs("</td><td>", out);
    sg_html_escape(out, f->precision, -1);
    fputs("</td></tr>\n", out);
}

static void chart(FILE *out, const fastp_row *f, const fastp_row *kb) {
    int rows = kb ? 2 : 1;
    sg_plot p = {out, 760, 60 + 24.0 * NP * rows + 8 * NP, 120, 60, 10, 40, 0, 100, 0, 1};
    sg_plot_begin(&p, "fast_p: the share of the problems with a correct kernel more than p times "
                      "faster than the baseline");
    sg_plot_axes(&p, 5, "%g%%", 0, NULL);
    sg_plot_titles(&p, "share of the campaign's problems", "threshold p");
    for (int i = 0; i < NP; i++) {
        for (int k = 0; k < rows; k++) {
            const fastp_row *g = k ? kb : f;
            double y = p.top + (24.0 * rows + 8) * i + 24.0 * k, s = g->share[i];
            char name[32], tip[200], val[64];
            snprintf(name, sizeof name, "fast_%g%s", thresholds[i], k ? " (KB)" : "");
            sg_plot_text(&p, p.left - 6, y + 15, "end", "name", name);
            if (isnan(s)) continue;
            snprintf(tip, sizeof tip, "%s: %d of %d problems%s", name, (int)lround(s * g->problems),
                     g->problems, k ? " (with KernelBench's own check)" : "");
            sg_plot_bar(&p, 0, 100 * s, y + 3, 17, k ? "#f28e2b" : "#4e79a7", tip);
            snprintf(val, sizeof val, "%.1f%%", 100 * s);
            sg_plot_text(&p, sg_plot_x(&p, 100 * s) + 4, y + 15, "start", "lbl", val);
        }
    }
    sg_plot_end(&p);
    if (kb)
        fputs("<p class=\"key\"><span style=\"background:#4e79a7\"></span>our check"
              "<span style=\"background:#f28e2b\"></span>ours and KernelBench's own</p>\n",
              out);
}

int sg_report_fastp(sg_results *r, int64_t campaign, FILE *out, sg_err *err) {
    fastp_row f, kb;
    if (read_row(r, campaign, 0, &f, err) < 0) return -1;
    sqlite3_stmt *st = sg_report_stmt(r,
                                      "SELECT count(*) FROM candidate k JOIN task t ON t.id = "
                                      "k.task WHERE t.campaign = ? AND k.kb_correct IS NOT NULL",
                                      campaign, 0, err);
    if (!st) return -1;
    int with_kb = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0) > 0;
    sqlite3_finalize(st);
    if (with_kb && read_row(r, campaign, 1, &kb, err) < 0) return -1;
    fputs("<h2>fast_p</h2>\n<p class=\"note\">As KernelBench reports it: the share of the "
          "campaign's problems whose best kernel is correct and more than p times faster than "
          "the baseline (fast_0: correct). Every problem counts, also one that did not import or "
          "could not run, and one that never got a correct kernel.</p>\n",
          out);
    fputs("<table><tr><th>check</th><th>problems</th><th>did not run</th><th>correct</th>", out);
    for (int i = 0; i < NP; i++) fprintf(out, "<th>fast_%g</th>", thresholds[i]);
    fputs("<th>baseline</th><th>precision</th></tr>\n", out);
    table_row(out, "ours", &f);
    if (with_kb) table_row(out, "ours and KernelBench's own", &kb);
    fputs("</table>\n", out);
    if (f.problems > 0) chart(out, &f, with_kb ? &kb : NULL);
    return 0;
}
