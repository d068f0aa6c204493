/* Rows of a statement printed three ways: an aligned table for people, JSON and CSV for
 * scripts. The table needs every row before its widths are known, so rows are held. */
#include "results/internal.h"

#include "common/buf.h"

#include <stdlib.h>
#include <string.h>

typedef struct cells {
    char **v; /* rows * cols strings; NULL for SQL NULL */
    size_t n, cap;
} cells;

static void push(cells *c, char *s) {
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 64;
        c->v = sg_xrealloc(c->v, c->cap * sizeof *c->v);
    }
    c->v[c->n++] = s;
}

/* A cell as text: reals short (4 significant digits, or one decimal past 1000). */
static char *cell_text(sqlite3_stmt *st, int i, int max_cell) {
    int type = sqlite3_column_type(st, i);
    if (type == SQLITE_NULL) return NULL;
    char num[64];
    if (type == SQLITE_FLOAT) {
        double v = sqlite3_column_double(st, i);
        snprintf(num, sizeof num, v >= 1000 || v <= -1000 ? "%.1f" : "%.4g", v);
        return sg_xstrdup(num);
    }
    const char *t = (const char *)sqlite3_column_text(st, i);
    size_t len = strlen(t ? t : "");
    if (max_cell > 0 && len > (size_t)max_cell) len = (size_t)max_cell;
    char *s = sg_xmalloc(len + 4);
    memcpy(s, t ? t : "", len);
    s[len] = '\0';
    for (char *p = s; *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t') *p = ' ';
    if (max_cell > 0 && len == (size_t)max_cell) strcpy(s + len, "...");
    return s;
}

/* UTF-8 aware width: count code points, not bytes. */
static size_t width(const char *s) {
    size_t w = 0;
    for (; s && *s; s++)
        if (((unsigned char)*s & 0xc0) != 0x80) w++;
    return w;
}

static void print_table(sqlite3_stmt *st, cells *c, int cols, FILE *out) {
    size_t *w = sg_xcalloc((size_t)cols, sizeof *w);
    for (int i = 0; i < cols; i++) w[i] = width(sqlite3_column_name(st, i));
    for (size_t k = 0; k < c->n; k++) {
        size_t cw = c->v[k] ? width(c->v[k]) : 1;
        if (cw > w[k % cols]) w[k % cols] = cw;
    }
    for (int i = 0; i < cols; i++)
        fprintf(out, "%s%-*s", i ? "  " : "", i == cols - 1 ? 0 : (int)w[i],
                sqlite3_column_name(st, i));
    fputc('\n', out);
    for (size_t k = 0; k < c->n; k++) {
        int i = (int)(k % cols);
        const char *s = c->v[k] ? c->v[k] : "-";
        int pad = i == cols - 1 ? 0 : (int)(w[i] - width(s));
        fprintf(out, "%s%s%*s", i ? "  " : "", s, pad, "");
        if (i == cols - 1) fputc('\n', out);
    }
    free(w);
}

static void csv_field(const char *s, FILE *out) {
    if (!s) return;
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"') fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

static void json_value(sqlite3_stmt *st, int i, sg_buf *b) {
    switch (sqlite3_column_type(st, i)) {
    case SQLITE_NULL: sg_buf_append_str(b, "null"); break;
    case SQLITE_INTEGER: sg_buf_printf(b, "%lld", (long long)sqlite3_column_int64(st, i)); break;
    case SQLITE_FLOAT: sg_buf_printf(b, "%.17g", sqlite3_column_double(st, i)); break;
    default: {
        const char *t = (const char *)sqlite3_column_text(st, i);
        /* a column named data holds JSON (the event table's): embed it, not a string of it */
        if (!strcmp(sqlite3_column_name(st, i), "data") && t[0] == '{')
            sg_buf_append_str(b, t);
        else
            sg_buf_append_json_string(b, t);
    }
    }
}

int sg_results_print_rows(sg_results *r, sqlite3_stmt *st, sg_results_fmt fmt, int max_cell,
                          FILE *out, sg_err *err) {
    int cols = sqlite3_column_count(st), rows = 0, rc;
    cells c = {0};
    sg_buf b = {0};
    if (fmt == SG_RESULTS_JSON) sg_buf_append_str(&b, "[");
    if (fmt == SG_RESULTS_CSV) {
        for (int i = 0; i < cols; i++) {
            if (i) fputc(',', out);
            csv_field(sqlite3_column_name(st, i), out);
        }
        fputc('\n', out);
    }
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (fmt == SG_RESULTS_JSON) {
            sg_buf_append_str(&b, rows ? ",\n {" : "\n {");
            for (int i = 0; i < cols; i++) {
                if (i) sg_buf_append_str(&b, ", ");
                sg_buf_append_json_string(&b, sqlite3_column_name(st, i));
                sg_buf_append_str(&b, ": ");
                json_value(st, i, &b);
            }
            sg_buf_append_str(&b, "}");
            fwrite(b.data, 1, b.len, out);
            sg_buf_clear(&b);
        } else if (fmt == SG_RESULTS_CSV) {
            for (int i = 0; i < cols; i++) {
                if (i) fputc(',', out);
                if (sqlite3_column_type(st, i) == SQLITE_FLOAT) {
                    fprintf(out, "%.17g", sqlite3_column_double(st, i));
                } else {
                    csv_field((const char *)sqlite3_column_text(st, i), out);
                }
            }
            fputc('\n', out);
        } else {
            for (int i = 0; i < cols; i++) push(&c, cell_text(st, i, max_cell));
        }
        rows++;
    }
    if (fmt == SG_RESULTS_JSON) fputs(rows ? "\n]\n" : "[]\n", out); /* no row: "[" unwritten */
    if (fmt == SG_RESULTS_TEXT && rc == SQLITE_DONE) print_table(st, &c, cols, out);
    for (size_t k = 0; k < c.n; k++) free(c.v[k]);
    free(c.v);
    sg_buf_free(&b);
    if (rc != SQLITE_DONE) return sg_results_fail(r, "cannot read", err);
    return rows;
}

int sg_results_query(sg_results *r, const char *sql, const char *const *params, int nparams,
                     sg_results_fmt fmt, int max_cell, FILE *out, sg_err *err) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(r->db, sql, -1, &st, NULL) != SQLITE_OK)
        return sg_results_fail(r, "cannot query", err);
    for (int i = 0; i < nparams; i++)
        if (params[i]) sqlite3_bind_text(st, i + 1, params[i], -1, SQLITE_STATIC);
    int rows = sg_results_print_rows(r, st, fmt, max_cell, out, err);
    sqlite3_finalize(st);
    return rows;
}

int sg_results_query_user(sg_results *r, const char *sql, sg_results_fmt fmt, FILE *out,
                          sg_err *err) {
    sqlite3_stmt *st;
    const char *tail = NULL;
    if (sqlite3_prepare_v2(r->db, sql, -1, &st, &tail) != SQLITE_OK)
        return sg_errf(err, "query: %s (in: %s)", sqlite3_errmsg(r->db), sql);
    if (!st) return sg_errf(err, "query: no SQL statement in '%s'", sql);
    while (tail && (*tail == ' ' || *tail == '\n' || *tail == '\t' || *tail == ';')) tail++;
    if (tail && *tail) {
        sqlite3_finalize(st);
        return sg_errf(err, "query: one statement at a time (this one goes on with '%.40s')", tail);
    }
    if (!sqlite3_stmt_readonly(st)) {
        sqlite3_finalize(st);
        return sg_errf(err,
                       "query: '%.80s' would change the database; `specgen results query` only "
                       "reads (SELECT, WITH, EXPLAIN): the results database %s is opened "
                       "read-only",
                       sql, r->path);
    }
    int rows = sg_results_print_rows(r, st, fmt, 0, out, err);
    sqlite3_finalize(st);
    return rows;
}
