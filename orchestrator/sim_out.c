/* sim_out.c — what `specgen sim` prints and draws: rows of means over seeds as an aligned
 * table or Markdown, specgen against the baselines and the published figures, and two SVG
 * plots (time-to-target CDF, pool utilisation over time) drawn with the results module's
 * chart primitives. Only virtual-time figures: the same seeds give the same bytes. */
#include "orchestrator/sim_run.h"

#include "common/paths.h"
#include "common/wfile.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The published claims (../shared/sim-facts.md §0: the SpecGen paper, GLM-5 and
 * DeepSeek-V4 on H200): against three baselines. */
static const double pub_e2e[2] = {1.68, 1.82}, pub_fb[2] = {1.58, 1.98};
static const double pub_util_base[2] = {4.2, 17.6}, pub_util_spec[2] = {88.2, 96.1};

void sg_sim_row_free(sg_sim_row *r) {
    free(r->reach);
    free(r->busy);
    free(r->e2e_seed);
    free(r->fb_seed);
    r->reach = r->busy = r->e2e_seed = r->fb_seed = NULL;
}

void sg_sim_print_header(int md) {
    if (md) {
        printf("| configuration | e2e s (min–max) | first correct s | feedback (min–max) | "
               "utilisation | while work waited | tokens | best speedup | met target |\n"
               "|---|---|---|---|---|---|---|---|---|\n");
        return;
    }
    printf("%-22s %9s %15s %9s %9s %16s %7s %7s %10s %6s %8s\n", "configuration", "e2e s",
           "(min-max)", "first s", "feedback", "(min-max)", "util", "util/q", "tokens", "best",
           "reached");
}

void sg_sim_print_row(const sg_sim_row *r, int md) {
    const sg_sim_metrics *m = &r->mean;
    double reached = m->tasks ? 100.0 * m->reached / m->tasks : 0;
    if (md) {
        int bold = !strcmp(r->name, "specgen");
        const char *b = bold ? "**" : "";
        printf("| %s%s%s | %s%.1f%s (%.0f–%.0f) | %.1f | %s%.1f%s (%.0f–%.0f) | %.1f%% | %.1f%% | "
               "%.0fk | %.2f× | %.0f%% |\n",
               b, r->name, b, b, m->e2e_s, b, r->e2e_min, r->e2e_max, m->first_correct_s, b,
               m->feedback, b, r->fb_min, r->fb_max, 100 * m->util, 100 * m->util_queued,
               m->tokens / 1000, m->best, reached);
        return;
    }
    char span[32], fspan[32];
    snprintf(span, sizeof span, "(%.0f-%.0f)", r->e2e_min, r->e2e_max);
    snprintf(fspan, sizeof fspan, "(%.0f-%.0f)", r->fb_min, r->fb_max);
    printf("%-22s %9.1f %15s %9.1f %9.1f %16s %6.1f%% %6.1f%% %10.0f %6.2f %7.1f%%\n", r->name,
           m->e2e_s, span, m->first_correct_s, m->feedback, fspan, 100 * m->util,
           100 * m->util_queued, m->tokens, m->best, reached);
}

static double ratio(double a, double b) { return b > 0 ? a / b : 0; }

void sg_sim_print_compare(const sg_sim_row *rows, int md) {
    const sg_sim_row *s = &rows[0];
    int best = 1; /* the best baseline by end-to-end time */
    for (int i = 2; i <= 3; i++)
        if (rows[i].mean.e2e_s < rows[best].mean.e2e_s) best = i;
    double e2e[2] = {INFINITY, 0}, fb[2] = {INFINITY, 0}, ub[2] = {INFINITY, 0};
    printf("\nspecgen against each baseline (ratio: the baseline's figure / specgen's; "
           "feedback: specgen's / the baseline's):\n%s",
           md ? "\n" : "");
    for (int i = 1; i <= 3; i++) {
        const sg_sim_row *b = &rows[i];
        double e = ratio(b->mean.e2e_s, s->mean.e2e_s),
               f = ratio(s->mean.feedback, b->mean.feedback);
        e2e[0] = fmin(e2e[0], e), e2e[1] = fmax(e2e[1], e);
        fb[0] = fmin(fb[0], f), fb[1] = fmax(fb[1], f);
        ub[0] = fmin(ub[0], 100 * b->mean.util), ub[1] = fmax(ub[1], 100 * b->mean.util);
        printf("%svs %-12s end-to-end %.2fx shorter, feedback %.2fx, first correct %.2fx sooner, "
               "utilisation %.1f%% vs %.1f%%%s\n",
               md ? "- " : "  ", b->name, e, f,
               ratio(b->mean.first_correct_s, s->mean.first_correct_s), 100 * s->mean.util,
               100 * b->mean.util, i == best ? "  (the best baseline)" : "");
    }
    if (!md) return;
    printf("\n| figure | published (GLM-5 and DeepSeek-V4, H200) | this simulation |\n"
           "|---|---|---|\n"
           "| end-to-end time, baseline / specgen | %.2f–%.2f× | %.2f–%.2f× |\n"
           "| profiling feedback, specgen / baseline | %.2f–%.2f× | %.2f–%.2f× |\n"
           "| validation/profiling pool utilisation, baselines → specgen | %.1f–%.1f%% → "
           "%.1f–%.1f%% | %.1f–%.1f%% → %.1f%% |\n",
           pub_e2e[0], pub_e2e[1], e2e[0], e2e[1], pub_fb[0], pub_fb[1], fb[0], fb[1],
           pub_util_base[0], pub_util_base[1], pub_util_spec[0], pub_util_spec[1], ub[0], ub[1],
           100 * s->mean.util);
    /* what each ablation changes, and the part of the model its effect rests on */
    static const char *const rests_on[][2] = {
        {"specgen static pools",
         "how the load moves between validation and profiling: the candidate rate, validate_s "
         "and profile_s (ASSUMPTION-based)"},
        {"specgen no priorities",
         "contention for the GPUs: how many candidates wait (the utilisation while work waited), "
         "so --devices and the candidate rate"},
        {"specgen no kvstore",
         "the kvstore tier: what the instances' own prefix caches lose (cache_tokens, kv_tokens), "
         "prefill_tok_s against the fetch time (kv_bytes_per_token, kvstore_gb_s: ASSUMPTION) "
         "and the reasoning length"},
        {"specgen early stop",
         "what a restart loses against what the next iteration gains: the quality curve q0, q1, "
         "q_gamma, q_iter and q_carry (ASSUMPTIONS)"},
        {"specgen no forks",
         "what a fork's kernel is worth before the reasoning ends: the quality curve and "
         "code_every_tokens / cue_every_tokens (ASSUMPTIONS)"},
    };
    printf("\n| ablation | end-to-end vs specgen | feedback vs specgen | its effect rests on |\n"
           "|---|---|---|---|\n");
    for (int i = 4; i < 9; i++) {
        const char *what = "";
        for (size_t k = 0; k < sizeof rests_on / sizeof *rests_on; k++)
            if (!strcmp(rests_on[k][0], rows[i].name)) what = rests_on[k][1];
        printf("| %s | %+.1f%% | %+.1f%% | %s |\n", rows[i].name + strlen("specgen "),
               100 * (ratio(rows[i].mean.e2e_s, s->mean.e2e_s) - 1),
               100 * (ratio(rows[i].mean.feedback, s->mean.feedback) - 1), what);
    }
}

/* ---- plots ---- */

static const char *const colour[] = {"#4e79a7", "#e15759", "#f28e2b", "#59a14f",
                                     "#b07aa1", "#76b7b2", "#edc948", "#9c755f"};

/* The classes sg_plot uses, for a standalone file (the HTML report has them in its page). */
static const char *const svg_style =
    "<style>.axis{stroke:#333;fill:none}.tick{stroke:#333}.grid{stroke:#eee}"
    ".lbl{font:11px sans-serif;fill:#333}.name{font:12px sans-serif;fill:#222}</style>\n"
    "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n";

static void legend(sg_plot *p, const sg_sim_row *rows, int n) {
    for (int i = 0; i < n; i++) {
        double x = p->left + 10 + 150.0 * i, y = 16;
        fprintf(p->out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"4\" fill=\"%s\"/>\n", x,
                y - 5, colour[i % 8]);
        sg_plot_text(p, x + 16, y, "start", "name", rows[i].name);
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static const char *const plot_names[] = {"time_to_target.svg", "utilisation.svg"};

static FILE *open_plot(const char *dir, const char *name, char *path, size_t n, sg_err *err) {
    snprintf(path, n, "%s/%s", dir, name);
    FILE *f;
    return sg_wfile_fopen(path, 0, &f, err) < 0 ? NULL : f;
}

int sg_sim_plots_check(const char *dir, sg_err *err) {
    char path[4200];
    for (size_t i = 0; i < sizeof plot_names / sizeof *plot_names; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, plot_names[i]);
        int rc = sg_wfile_check(path, "--plots", err);
        if (rc < 0) return rc;
    }
    return 0;
}

static int close_plot(FILE *f, const char *path, sg_err *err) {
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) return sg_errf(err, "cannot write %s: %s", path, strerror(errno));
    return 0;
}

/* Share of all tasks (over all seeds) that met the target within t: a step line each. */
static int plot_cdf(const char *dir, const sg_sim_row *rows, int n, sg_err *err) {
    char path[4200];
    FILE *f = open_plot(dir, plot_names[0], path, sizeof path, err);
    if (!f) return -1;
    double tmax = 1;
    for (int i = 0; i < n; i++)
        for (int k = 0; k < rows[i].nreach; k++) tmax = fmax(tmax, rows[i].reach[k]);
    sg_plot p = {f, 760, 320, 55, 20, 30, 45, 0, tmax * 1.02, 0, 100};
    sg_plot_begin(&p, "Time to target: share of tasks that met their target within t");
    fputs(svg_style, f);
    sg_plot_axes(&p, 8, "%gs", 5, "%g%%");
    for (int i = 0; i < n; i++) {
        const sg_sim_row *r = &rows[i];
        double *t = sg_xcalloc((size_t)r->nreach + 1, sizeof *t);
        int m = 0;
        for (int k = 0; k < r->nreach; k++)
            if (r->reach[k] >= 0) t[m++] = r->reach[k];
        qsort(t, (size_t)m, sizeof *t, cmp_double);
        fprintf(f, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"2\" d=\"M%.1f %.1f",
                colour[i % 8], sg_plot_x(&p, 0), sg_plot_y(&p, 0));
        for (int k = 0; k < m; k++) {
            double y0 = 100.0 * k / r->nreach, y1 = 100.0 * (k + 1) / r->nreach;
            fprintf(f, " L%.1f %.1f L%.1f %.1f", sg_plot_x(&p, t[k]), sg_plot_y(&p, y0),
                    sg_plot_x(&p, t[k]), sg_plot_y(&p, y1));
        }
        fprintf(f, " L%.1f %.1f\"/>\n", sg_plot_x(&p, tmax * 1.02),
                sg_plot_y(&p, 100.0 * m / (r->nreach ? r->nreach : 1)));
        free(t);
    }
    legend(&p, rows, n);
    sg_plot_text(&p, p.w / 2, p.h - 6, "middle", "lbl",
                 "virtual seconds since the task started (all tasks of all seeds)");
    sg_plot_end(&p);
    return close_plot(f, path, err);
}

/* Busy share of the pool's slots over time, first seed, in bins of about 1/80 of the run. */
static int plot_util(const char *dir, const sg_sim_row *rows, int n, sg_err *err) {
    char path[4200];
    FILE *f = open_plot(dir, plot_names[1], path, sizeof path, err);
    if (!f) return -1;
    double tmax = 1;
    for (int i = 0; i < n; i++) tmax = fmax(tmax, rows[i].nbins * rows[i].bin_s);
    int merge = (int)ceil(tmax / rows[0].bin_s / 80);
    if (merge < 1) merge = 1;
    sg_plot p = {f, 760, 320, 55, 20, 30, 45, 0, tmax, 0, 100};
    sg_plot_begin(&p, "Validation/profiling pool utilisation over time (first seed)");
    fputs(svg_style, f);
    sg_plot_axes(&p, 8, "%gs", 5, "%g%%");
    for (int i = 0; i < n; i++) {
        const sg_sim_row *r = &rows[i];
        double w = r->bin_s * merge;
        fprintf(f, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\" d=\"M%.1f %.1f",
                colour[i % 8], sg_plot_x(&p, 0), sg_plot_y(&p, 0));
        for (int b = 0; b * merge < r->nbins; b++) {
            double busy = 0;
            for (int k = b * merge; k < (b + 1) * merge && k < r->nbins; k++) busy += r->busy[k];
            double u = fmin(100, 100 * busy / (w * (r->slots ? r->slots : 1)));
            fprintf(f, " L%.1f %.1f L%.1f %.1f", sg_plot_x(&p, b * w), sg_plot_y(&p, u),
                    sg_plot_x(&p, (b + 1) * w), sg_plot_y(&p, u));
        }
        fputs("\"/>\n", f);
    }
    legend(&p, rows, n);
    sg_plot_text(&p, p.w / 2, p.h - 6, "middle", "lbl", "virtual seconds since the run started");
    sg_plot_end(&p);
    return close_plot(f, path, err);
}

int sg_sim_plots(const char *dir, const sg_sim_row *rows, int n, sg_err *err) {
    if (sg_mkdir_p(dir, err) < 0) return -1;
    if (plot_cdf(dir, rows, n, err) < 0 || plot_util(dir, rows, n, err) < 0) return -1;
    return 0;
}
