/* The report's drawing primitives: inline SVG, coordinates mapped from data ranges, axes at
 * round values. Every label goes through the HTML escaper. */
#include "results/report.h"

#include <math.h>

void sg_plot_begin(sg_plot *p, const char *title) {
    fprintf(p->out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "viewBox=\"0 0 %.0f %.0f\" role=\"img\"><title>",
            p->w, p->h, p->w, p->h);
    sg_html_escape(p->out, title, -1);
    fputs("</title>\n", p->out);
    if (!(p->x1 > p->x0)) p->x1 = p->x0 + 1;
    if (!(p->y1 > p->y0)) p->y1 = p->y0 + 1;
}

void sg_plot_end(sg_plot *p) { fputs("</svg>\n", p->out); }

double sg_plot_x(const sg_plot *p, double x) {
    return p->left + (x - p->x0) / (p->x1 - p->x0) * (p->w - p->left - p->right);
}

double sg_plot_y(const sg_plot *p, double y) {
    return p->h - p->bottom - (y - p->y0) / (p->y1 - p->y0) * (p->h - p->top - p->bottom);
}

/* A round step near range/n: 1, 2 or 5 times a power of ten. */
static double nice_step(double range, int n) {
    double raw = range / (n > 0 ? n : 1), mag = pow(10, floor(log10(raw)));
    double f = raw / mag;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * mag;
}

void sg_plot_text(sg_plot *p, double px, double py, const char *anchor, const char *cls,
                  const char *text) {
    fprintf(p->out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" class=\"%s\">", px, py, anchor,
            cls);
    sg_html_escape(p->out, text, -1);
    fputs("</text>\n", p->out);
}

void sg_plot_axes(sg_plot *p, int nx, const char *xfmt, int ny, const char *yfmt) {
    double bx = p->h - p->bottom, lx = p->left;
    fprintf(p->out, "<path class=\"axis\" d=\"M%.1f %.1fV%.1fH%.1f\"/>\n", lx, p->top, bx,
            p->w - p->right);
    char label[64];
    if (nx > 0) {
        double s = nice_step(p->x1 - p->x0, nx);
        for (double v = ceil(p->x0 / s) * s; v <= p->x1 + s * 1e-9; v += s) {
            double x = sg_plot_x(p, v);
            fprintf(p->out, "<path class=\"tick\" d=\"M%.1f %.1fv4\"/>\n", x, bx);
            snprintf(label, sizeof label, xfmt, v);
            sg_plot_text(p, x, bx + 15, "middle", "lbl", label);
        }
    }
    if (ny > 0) {
        double s = nice_step(p->y1 - p->y0, ny);
        for (double v = ceil(p->y0 / s) * s; v <= p->y1 + s * 1e-9; v += s) {
            double y = sg_plot_y(p, v);
            fprintf(p->out, "<path class=\"grid\" d=\"M%.1f %.1fH%.1f\"/>\n", lx, y,
                    p->w - p->right);
            snprintf(label, sizeof label, yfmt, v);
            sg_plot_text(p, lx - 4, y + 4, "end", "lbl", label);
        }
    }
}

void sg_plot_titles(sg_plot *p, const char *xtitle, const char *ytitle) {
    if (xtitle)
        sg_plot_text(p, p->left + (p->w - p->left - p->right) / 2, p->h - 5, "middle", "xtitle",
                     xtitle);
    if (!ytitle) return;
    double cy = p->top + (p->h - p->top - p->bottom) / 2;
    fprintf(p->out,
            "<text x=\"12\" y=\"%.1f\" text-anchor=\"middle\" class=\"ytitle\" "
            "transform=\"rotate(-90 12 %.1f)\">",
            cy, cy);
    sg_html_escape(p->out, ytitle, -1);
    fputs("</text>\n", p->out);
}

void sg_plot_bar(sg_plot *p, double x0, double x1, double py, double ph, const char *color,
                 const char *tip) {
    double a = sg_plot_x(p, x0), b = sg_plot_x(p, x1);
    fprintf(p->out,
            "<rect class=\"data\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
            "fill=\"%s\">",
            a, py, b - a < 1.5 ? 1.5 : b - a, ph, color);
    if (tip) {
        fputs("<title>", p->out);
        sg_html_escape(p->out, tip, -1);
        fputs("</title>", p->out);
    }
    fputs("</rect>\n", p->out);
}

sqlite3_stmt *sg_report_stmt(sg_results *r, const char *sql, int64_t a, int64_t b, sg_err *err) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK) {
        sg_results_fail(r, "cannot query", err);
        return NULL;
    }
    if (sqlite3_bind_parameter_count(st) >= 1) sqlite3_bind_int64(st, 1, a);
    if (sqlite3_bind_parameter_count(st) >= 2) sqlite3_bind_int64(st, 2, b);
    return st;
}

double sg_col_d(sqlite3_stmt *st, int i) {
    return sqlite3_column_type(st, i) == SQLITE_NULL ? NAN : sqlite3_column_double(st, i);
}

const char *sg_col_t(sqlite3_stmt *st, int i) {
    const char *t = (const char *)sqlite3_column_text(st, i);
    return t ? t : "";
}
