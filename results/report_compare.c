/* The report's comparison page: campaigns side by side, grouped by configuration (a sim
 * configuration's seeds; a real campaign's kind and policy), each figure with its spread
 * over the group (min-max whiskers): a table, time-to-target CDFs, feedback latency and
 * best speedup with error bars, tokens over the campaign's time (steps that hold their
 * value) and the pool's utilisation over the campaign's time. */
#include "results/report.h"

#include "common/buf.h"
#include "common/units.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DRAWN 10 /* configurations drawn (and in a legend); the rest are listed */

enum { F_REACHED, F_BEST, F_TTT, F_FB, F_TOKENS, F_UTIL, NF };
static const char *const field_name[NF] = {"tasks that met the target", "mean best speedup",
                                           "mean time to target",       "mean feedback latency",
                                           "tokens per campaign",       "pool utilisation"};

typedef struct crow {
    int64_t id;
    int group;
    double v[NF];
} crow;

typedef struct cgroup {
    char name[128];
    int n;
    double mean[NF], lo[NF], hi[NF];
} cgroup;

typedef struct cmp {
    sg_results *r;
    FILE *out;
    crow *row;
    int nrow;
    cgroup *g;
    int ng;
    char *ids_json;
} cmp;

/* A statement over the campaigns (?1: their ids as a JSON array); NULL after an error. */
static sqlite3_stmt *ids_stmt(cmp *c, const char *sql, sg_err *err) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(c->r->db, sql, -1, &st, NULL) != SQLITE_OK) {
        sg_results_fail(c->r, "cannot query", err);
        return NULL;
    }
    sqlite3_bind_text(st, 1, c->ids_json, -1, SQLITE_STATIC);
    return st;
}

static int load(cmp *c, sg_err *err) {
    sqlite3_stmt *st = ids_stmt(c, sg_compare_sql, err);
    if (!st) return -1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        c->row = sg_xrealloc(c->row, (size_t)(c->nrow + 1) * sizeof *c->row);
        crow *w = &c->row[c->nrow++];
        w->id = sqlite3_column_int64(st, 0);
        double tasks = sg_col_d(st, 4);
        w->v[F_REACHED] = tasks > 0 ? 100 * sg_col_d(st, 5) / tasks : NAN;
        w->v[F_BEST] = sg_col_d(st, 6);
        w->v[F_TTT] = sg_col_d(st, 7);
        w->v[F_FB] = sg_col_d(st, 8);
        w->v[F_TOKENS] = sg_col_d(st, 9);
        w->v[F_UTIL] = 100 * sg_col_d(st, 10);
        const char *name = sg_col_t(st, 2);
        w->group = -1;
        for (int k = 0; k < c->ng && w->group < 0; k++)
            if (!strcmp(c->g[k].name, name)) w->group = k;
        if (w->group < 0) {
            c->g = sg_xrealloc(c->g, (size_t)(c->ng + 1) * sizeof *c->g);
            memset(&c->g[c->ng], 0, sizeof *c->g);
            snprintf(c->g[c->ng].name, sizeof c->g->name, "%s", name);
            w->group = c->ng++;
        }
    }
    sqlite3_finalize(st);
    for (int k = 0; k < c->ng; k++) { /* each figure's mean and spread over the group */
        cgroup *g = &c->g[k];
        for (int f = 0; f < NF; f++) {
            double sum = 0;
            int n = 0;
            g->lo[f] = INFINITY, g->hi[f] = -INFINITY;
            for (int i = 0; i < c->nrow; i++) {
                double v = c->row[i].v[f];
                if (c->row[i].group != k || isnan(v)) continue;
                sum += v, n++;
                g->lo[f] = fmin(g->lo[f], v), g->hi[f] = fmax(g->hi[f], v);
            }
            g->mean[f] = n ? sum / n : NAN;
        }
        for (int i = 0; i < c->nrow; i++) g->n += c->row[i].group == k;
    }
    return 0;
}

/* A figure as people read it: seconds as durations, shares in %, speedups with x. */
static void fmt_value(int f, double v, char *s, size_t n) {
    if (isnan(v) || isinf(v))
        snprintf(s, n, "-");
    else if (f == F_TTT || f == F_FB)
        sg_fmt_duration((int64_t)(v * 1e9), s, n);
    else if (f == F_BEST)
        snprintf(s, n, "%.2fx", v);
    else if (f == F_TOKENS)
        snprintf(s, n, "%.0f", v);
    else
        snprintf(s, n, "%.1f%%", v);
}

static void table(cmp *c) {
    FILE *out = c->out;
    fputs("<h2>Configurations</h2>\n<table><tr><th>configuration</th><th>campaigns</th>", out);
    for (int f = 0; f < NF; f++) fprintf(out, "<th>%s</th>", field_name[f]);
    fputs("</tr>\n", out);
    for (int k = 0; k < c->ng; k++) {
        cgroup *g = &c->g[k];
        fputs("<tr><td>", out);
        sg_html_escape(out, g->name, -1);
        fputs("</td><td>", out);
        for (int i = 0, first = 1; i < c->nrow; i++)
            if (c->row[i].group == k)
                fprintf(out, "%s%lld", first ? "" : ", ", (long long)c->row[i].id), first = 0;
        fputs("</td>", out);
        for (int f = 0; f < NF; f++) {
            char m[32], lo[32], hi[32];
            fmt_value(f, g->mean[f], m, sizeof m);
            fmt_value(f, g->lo[f], lo, sizeof lo);
            fmt_value(f, g->hi[f], hi, sizeof hi);
            if (g->n > 1 && !isnan(g->mean[f]) && strcmp(lo, hi))
                fprintf(out, "<td>%s <span class=\"note\">(%s–%s)</span></td>", m, lo, hi);
            else
                fprintf(out, "<td>%s</td>", m);
        }
        fputs("</tr>\n", out);
    }
    fputs("</table>\n<p class=\"note\">A figure is the mean over the configuration's campaigns "
          "(a simulation's seeds), its spread (min–max) in brackets.</p>\n",
          out);
}

/* The legend: the configurations drawn, in their colours; the others named in a note. */
static void legend(cmp *c) {
    fputs("<p class=\"key\">", c->out);
    for (int k = 0; k < c->ng && k < MAX_DRAWN; k++) {
        fprintf(c->out, "<span style=\"background:%s\"></span>", sg_report_palette[k]);
        sg_html_escape(c->out, c->g[k].name, -1);
    }
    if (c->ng > MAX_DRAWN)
        fprintf(c->out, " — %d more configurations in the table, not drawn", c->ng - MAX_DRAWN);
    fputs("</p>\n", c->out);
}

/* A bar per configuration with its min-max whisker. */
static void bars(cmp *c, int f, const char *title, const char *xtitle, double scale,
                 const char *xfmt) {
    int n = c->ng < MAX_DRAWN ? c->ng : MAX_DRAWN;
    double top = 0;
    for (int k = 0; k < n; k++)
        if (!isnan(c->g[k].hi[f]) && !isinf(c->g[k].hi[f])) top = fmax(top, c->g[k].hi[f] * scale);
    fprintf(c->out, "<h2>%s</h2>\n", title);
    sg_plot p = {c->out, 760, 60 + 26.0 * n, 180, 40, 10, 40, 0, top > 0 ? top * 1.1 : 1, 0, 1};
    sg_plot_begin(&p, title);
    sg_plot_axes(&p, 8, xfmt, 0, NULL);
    sg_plot_titles(&p, xtitle, "configuration");
    for (int k = 0; k < n; k++) {
        cgroup *g = &c->g[k];
        double y = p.top + 26.0 * k;
        char tip[256], m[32], lo[32], hi[32];
        sg_plot_text(&p, p.left - 6, y + 16, "end", "name", g->name);
        if (isnan(g->mean[f])) continue;
        fmt_value(f, g->mean[f], m, sizeof m);
        fmt_value(f, g->lo[f], lo, sizeof lo);
        fmt_value(f, g->hi[f], hi, sizeof hi);
        snprintf(tip, sizeof tip, "%s: %s (min %s, max %s, %d campaign%s)", g->name, m, lo, hi,
                 g->n, g->n == 1 ? "" : "s");
        sg_plot_bar(&p, 0, g->mean[f] * scale, y + 4, 18, sg_report_palette[k], tip);
        if (g->n > 1) /* the error bar: min to max over the group */
            fprintf(c->out,
                    "<path class=\"errbar\" stroke=\"#222\" d=\"M%.1f %.1fH%.1fM%.1f %.1fv8M%.1f "
                    "%.1fv8\"/>\n",
                    sg_plot_x(&p, g->lo[f] * scale), y + 13, sg_plot_x(&p, g->hi[f] * scale),
                    sg_plot_x(&p, g->lo[f] * scale), y + 9, sg_plot_x(&p, g->hi[f] * scale), y + 9);
        sg_plot_text(&p, sg_plot_x(&p, fmax(g->mean[f], g->hi[f]) * scale) + 4, y + 16, "start",
                     "lbl", m);
    }
    sg_plot_end(&p);
}

/* Time to target: per configuration, the share of its tasks (over all its campaigns) that
 * met their target within t of their start; steps that hold to the chart's end. */
static int ttt_cdf(cmp *c, sg_err *err) {
    sqlite3_stmt *st =
        ids_stmt(c,
                 "SELECT campaign, elapsed_s, status = 'target' FROM task WHERE campaign "
                 "IN (SELECT value FROM json_each(?1)) ORDER BY elapsed_s",
                 err);
    if (!st) return -1;
    int n = c->ng < MAX_DRAWN ? c->ng : MAX_DRAWN, *total = sg_xcalloc((size_t)n, sizeof *total);
    double tmax = 1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        int k = -1;
        for (int i = 0; i < c->nrow; i++)
            if (c->row[i].id == sqlite3_column_int64(st, 0)) k = c->row[i].group;
        if (k >= 0 && k < n) total[k]++;
        if (sqlite3_column_int(st, 2)) tmax = fmax(tmax, sg_col_d(st, 1));
    }
    fputs("<h2>Time to target</h2>\n", c->out);
    sg_plot p = {c->out, 760, 320, 60, 20, 10, 45, 0, tmax * 1.05, 0, 100};
    sg_plot_begin(&p, "Time to target: share of the tasks that met their target within t");
    sg_plot_axes(&p, 8, "%gs", 5, "%g%%");
    sg_plot_titles(&p, "seconds since the task started", "tasks that met the target");
    for (int k = 0; k < n; k++) {
        int got = 0;
        double y = 0;
        sqlite3_reset(st);
        fprintf(c->out,
                "<path class=\"data\" fill=\"none\" stroke-width=\"2\" stroke=\"%s\" d=\"M%.1f "
                "%.1f",
                sg_report_palette[k], sg_plot_x(&p, 0), sg_plot_y(&p, 0));
        while (sqlite3_step(st) == SQLITE_ROW) {
            int g = -1;
            for (int i = 0; i < c->nrow; i++)
                if (c->row[i].id == sqlite3_column_int64(st, 0)) g = c->row[i].group;
            if (g != k || !sqlite3_column_int(st, 2)) continue;
            y = 100.0 * ++got / total[k];
            fprintf(c->out, " H%.1f V%.1f", sg_plot_x(&p, sg_col_d(st, 1)), sg_plot_y(&p, y));
        }
        fprintf(c->out, " H%.1f\"/>\n", sg_plot_x(&p, tmax * 1.05)); /* it holds */
    }
    sg_plot_end(&p);
    sqlite3_finalize(st);
    free(total);
    legend(c);
    return 0;
}

/* The group of campaign id (-1: not drawn). */
static int group_of(const cmp *c, int64_t id) {
    for (int i = 0; i < c->nrow; i++)
        if (c->row[i].id == id) return c->row[i].group < MAX_DRAWN ? c->row[i].group : -1;
    return -1;
}

/* Tokens over the campaign's time: a step line per campaign (its configuration's colour),
 * each generation's tokens added when it ended; the line holds its last value. */
static int tokens_over_time(cmp *c, sg_err *err) {
    sqlite3_stmt *st =
        ids_stmt(c,
                 "SELECT t.campaign, g.ended_ms / 1000.0, coalesce(g.reasoning_tokens, 0) "
                 "+ coalesce(g.content_tokens, 0) FROM generation g JOIN task t ON "
                 "t.id = g.task WHERE t.campaign IN (SELECT value FROM json_each(?1)) "
                 "AND g.ended_ms IS NOT NULL ORDER BY t.campaign, g.ended_ms",
                 err);
    if (!st) return -1;
    double tmax = 1, ymax = 1, sum = 0;
    int64_t cur = -1;
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (sqlite3_column_int64(st, 0) != cur) cur = sqlite3_column_int64(st, 0), sum = 0;
        sum += sg_col_d(st, 2);
        tmax = fmax(tmax, sg_col_d(st, 1));
        ymax = fmax(ymax, sum);
    }
    fputs("<h2>Tokens over time</h2>\n", c->out);
    sg_plot p = {c->out, 760, 300, 70, 20, 10, 45, 0, tmax * 1.02, 0, ymax * 1.05};
    sg_plot_begin(&p, "Tokens generated over the campaign's time, one line per campaign");
    sg_plot_axes(&p, 8, "%gs", 5, "%g");
    sg_plot_titles(&p, "seconds since the campaign started", "tokens (cumulative)");
    sqlite3_reset(st);
    cur = -1;
    int open = 0;
    while (1) {
        int row = sqlite3_step(st) == SQLITE_ROW;
        if (!row || sqlite3_column_int64(st, 0) != cur) {
            if (open) fprintf(c->out, " H%.1f\"/>\n", sg_plot_x(&p, tmax * 1.02));
            open = 0;
            if (!row) break;
            cur = sqlite3_column_int64(st, 0), sum = 0;
            int k = group_of(c, cur);
            if (k < 0) continue;
            open = 1;
            fprintf(c->out,
                    "<path class=\"data\" fill=\"none\" stroke-width=\"1.5\" stroke=\"%s\" "
                    "d=\"M%.1f %.1f",
                    sg_report_palette[k], sg_plot_x(&p, 0), sg_plot_y(&p, 0));
        }
        if (!open) continue;
        sum += sg_col_d(st, 2);
        fprintf(c->out, " H%.1f V%.1f", sg_plot_x(&p, sg_col_d(st, 1)), sg_plot_y(&p, sum));
    }
    sg_plot_end(&p);
    sqlite3_finalize(st);
    legend(c);
    return 0;
}

/* Utilisation over the campaign's time: per configuration, the share of the slots busy in
 * each of NB slices (the mean over its campaigns), from the campaign's start. */
static int utilisation(cmp *c, sg_err *err) {
    enum { NB = 40 };
    sqlite3_stmt *st =
        ids_stmt(c,
                 "SELECT campaign, started_ms / 1000.0, ended_ms / 1000.0, (SELECT "
                 "count(DISTINCT slot_name) FROM job k WHERE k.campaign = j.campaign) "
                 "FROM job j WHERE campaign IN (SELECT value FROM json_each(?1)) AND "
                 "ended_ms IS NOT NULL",
                 err);
    if (!st) return -1;
    double tmax = 0;
    while (sqlite3_step(st) == SQLITE_ROW) tmax = fmax(tmax, sg_col_d(st, 2));
    int n = c->ng < MAX_DRAWN ? c->ng : MAX_DRAWN;
    double *busy = sg_xcalloc((size_t)n * NB, sizeof *busy), bw = tmax > 0 ? tmax / NB : 1;
    sqlite3_reset(st);
    while (sqlite3_step(st) == SQLITE_ROW) { /* busy slot-seconds over the slots, per slice */
        int k = group_of(c, sqlite3_column_int64(st, 0));
        double a = sg_col_d(st, 1), b = sg_col_d(st, 2), slots = sg_col_d(st, 3);
        if (k < 0 || !(slots > 0)) continue;
        for (int i = (int)(a / bw); i < NB && i * bw < b; i++) {
            double lo = fmax(a, i * bw), hi = fmin(b, (i + 1) * bw);
            if (i >= 0 && hi > lo) busy[k * NB + i] += (hi - lo) / (bw * slots) / c->g[k].n;
        }
    }
    sqlite3_finalize(st);
    fputs("<h2>Pool utilisation over time</h2>\n", c->out);
    sg_plot p = {c->out, 760, 280, 60, 20, 10, 45, 0, tmax > 0 ? tmax : 1, 0, 100};
    sg_plot_begin(&p, "Share of the pool's slots busy over the campaign's time");
    sg_plot_axes(&p, 8, "%gs", 4, "%g%%");
    sg_plot_titles(&p, "seconds since the campaign started", "slots busy");
    for (int k = 0; k < n; k++) {
        fprintf(c->out,
                "<path class=\"data\" fill=\"none\" stroke-width=\"2\" stroke=\"%s\" d=\"M%.1f "
                "%.1f",
                sg_report_palette[k], sg_plot_x(&p, 0),
                sg_plot_y(&p, fmin(100, 100 * busy[k * NB])));
        for (int i = 0; i < NB; i++)
            fprintf(c->out, " H%.1f V%.1f", sg_plot_x(&p, i * bw),
                    sg_plot_y(&p, fmin(100, 100 * busy[k * NB + i])));
        fprintf(c->out, " H%.1f\"/>\n", sg_plot_x(&p, NB * bw));
    }
    sg_plot_end(&p);
    free(busy);
    legend(c);
    return 0;
}

int sg_results_report_compare(sg_results *r, const int64_t *ids, int n, FILE *out, sg_err *err) {
    cmp c = {.r = r, .out = out, .ids_json = sg_results_ids_json(ids, n)};
    int rc = load(&c, err);
    if (rc == 0) {
        fprintf(out,
                "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
                "<title>specgen report: %d campaigns side by side</title>\n<style>%s</style>"
                "</head><body>\n<h1>specgen report: %d campaigns side by side</h1>\n<p>database: ",
                c.nrow, sg_report_css, c.nrow);
        sg_html_escape(out, r->path, -1);
        fprintf(out, " · %d configuration%s</p>\n", c.ng, c.ng == 1 ? "" : "s");
        table(&c);
        rc = ttt_cdf(&c, err);
        if (rc == 0) {
            bars(&c, F_FB, "Feedback latency", "seconds from a candidate to its verdict", 1, "%gs");
            bars(&c, F_BEST, "Best speedup", "mean best speedup over the baseline", 1, "%gx");
            rc = tokens_over_time(&c, err);
        }
        if (rc == 0) rc = utilisation(&c, err);
        fputs("</body></html>\n", out);
    }
    free(c.row);
    free(c.g);
    free(c.ids_json);
    return rc;
}
