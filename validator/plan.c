/* Launch-plan lines in kernel sources:
 *   //@launch KERNEL grid=E[,E[,E]] block=E[,E[,E]] [smem=E] [args=a,b,...]
 *   //@scratch NAME TYPE COUNT
 * Tokens split at whitespace outside parentheses, lists at commas outside them. */
#include "validator/validator.h"

#include "common/buf.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TOK 16

static char *trim(char *s) {
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) s[--n] = 0;
    return s;
}

/* Split s (modified in place) at `sep` (or any space when sep == ' ') at depth 0. */
static int split(char *s, char sep, char **out, int max) {
    int n = 0, depth = 0;
    char *start = NULL;
    for (char *p = s;; p++) {
        int at_sep =
            *p == 0 || (depth == 0 && (sep == ' ' ? isspace((unsigned char)*p) : *p == sep));
        if (at_sep) {
            if (start || sep != ' ') {
                if (n == max) return -1;
                out[n++] = start ? start : p;
            }
            start = NULL;
            if (!*p) break;
            *p = 0;
            continue;
        }
        if (*p == '(') depth++;
        if (*p == ')') depth--;
        if (!start) start = p;
    }
    for (int i = 0; i < n; i++) out[i] = trim(out[i]);
    return n;
}

static int is_ident(const char *s) {
    if (!isalpha((unsigned char)*s) && *s != '_') return 0;
    while (*++s)
        if (!isalnum((unsigned char)*s) && *s != '_') return 0;
    return 1;
}

/* A kernel name: an identifier, or for CUDA a template instance `name<float,128>` (no
 * spaces; NVRTC's name expressions resolve it). */
static int is_kernel_name(const char *s) {
    const char *lt = strchr(s, '<');
    if (!lt) return is_ident(s);
    char head[128];
    if ((size_t)(lt - s) >= sizeof head) return 0;
    memcpy(head, s, (size_t)(lt - s));
    head[lt - s] = 0;
    int depth = 0;
    for (const char *p = lt; *p; p++) {
        depth += *p == '<' ? 1 : *p == '>' ? -1 : 0;
        if (depth < 0 || (depth == 0 && p[1])) return 0;
        if (!isalnum((unsigned char)*p) && !strchr("_<>,:.-", *p)) return 0;
    }
    return depth == 0 && is_ident(head);
}

static int check_expr(const char *e, const sg_val_task *t, const char *where, int line,
                      const char *key, sg_err *err) {
    int64_t v;
    sg_err e2;
    if (!*e) return sg_errf(err, "%s:%d: %s= is empty", where, line, key);
    if (sg_val_expr_eval(e, &t->sizes, &v, &e2) < 0)
        return sg_errf(err, "%s:%d: %s=: %s", where, line, key, e2.msg);
    return 0;
}

static int known_arg(const sg_val_task *t, const sg_val_plan *p, const char *n) {
    for (int i = 0; i < t->nbuf; i++)
        if (!strcmp(t->buf[i].name, n)) return 1;
    for (int i = 0; i < t->nscalar; i++)
        if (!strcmp(t->scalar[i].name, n)) return 1;
    for (int i = 0; i < p->nscratch; i++)
        if (!strcmp(p->scratch[i].name, n)) return 1;
    return 0;
}

static int parse_dims(char *v, char **dims, const sg_val_task *t, const char *where, int line,
                      const char *key, sg_err *err) {
    char *parts[4];
    if (v[0] == '(' && v[strlen(v) - 1] == ')') { /* grid=(X,Y) */
        v[strlen(v) - 1] = 0;
        v++;
    }
    int n = split(v, ',', parts, 3);
    if (n < 1) return sg_errf(err, "%s:%d: %s= takes one to three expressions", where, line, key);
    for (int i = 0; i < n; i++) {
        if (check_expr(parts[i], t, where, line, key, err) < 0) return -1;
        dims[i] = sg_xstrdup(parts[i]);
    }
    return 0;
}

static int parse_launch(char *rest, const sg_val_task *t, sg_val_plan *p, const char *where,
                        int line, sg_err *err) {
    char *tok[MAX_TOK];
    int n = split(rest, ' ', tok, MAX_TOK);
    if (n < 1) return sg_errf(err, "%s:%d: //@launch needs a kernel name", where, line);
    if (!is_kernel_name(tok[0]))
        return sg_errf(err,
                       "%s:%d: //@launch: \"%s\" is not a kernel name (a name, or a template "
                       "instance without spaces: name<float,128>)",
                       where, line, tok[0]);
    if (p->nlaunch == SG_VAL_MAX_LAUNCHES) /* the compile names at most this many kernels */
        return sg_errf(err, "%s:%d: more than %d //@launch lines (the limit of a launch plan)",
                       where, line, SG_VAL_MAX_LAUNCHES);
    p->launch = sg_xrealloc(p->launch, (size_t)(p->nlaunch + 1) * sizeof *p->launch);
    sg_val_launch *l = &p->launch[p->nlaunch++];
    memset(l, 0, sizeof *l);
    l->kernel = sg_xstrdup(tok[0]);
    l->line = line;
    for (int i = 1; i < n; i++) {
        char *eq = strchr(tok[i], '=');
        if (!eq)
            return sg_errf(err, "%s:%d: //@launch: expected key=value, got \"%s\"", where, line,
                           tok[i]);
        *eq = 0;
        char *k = tok[i], *v = eq + 1;
        int again = (!strcmp(k, "grid") && l->grid[0]) || (!strcmp(k, "block") && l->block[0]) ||
                    (!strcmp(k, "smem") && l->smem) || (!strcmp(k, "args") && l->args);
        if (again) return sg_errf(err, "%s:%d: //@launch: %s= is given twice", where, line, k);
        if (!strcmp(k, "grid")) {
            if (parse_dims(v, l->grid, t, where, line, k, err) < 0) return -1;
        } else if (!strcmp(k, "block")) {
            if (parse_dims(v, l->block, t, where, line, k, err) < 0) return -1;
        } else if (!strcmp(k, "smem")) {
            if (check_expr(v, t, where, line, k, err) < 0) return -1;
            l->smem = sg_xstrdup(v);
        } else if (!strcmp(k, "args")) {
            char *parts[64];
            int na = split(v, ',', parts, 64);
            if (na < 0) return sg_errf(err, "%s:%d: args=: more than 64 arguments", where, line);
            l->args = sg_xcalloc((size_t)na + 1, sizeof *l->args);
            for (int a = 0; a < na; a++) {
                if (!known_arg(t, p, parts[a]))
                    return sg_errf(err,
                                   "%s:%d: args=: \"%s\" is not a buffer, scalar or scratch name "
                                   "(scratch lines must come before the launch that uses them)",
                                   where, line, parts[a]);
                l->args[l->narg++] = sg_xstrdup(parts[a]);
            }
        } else {
            return sg_errf(err, "%s:%d: //@launch: unknown key \"%s\" (grid, block, smem, args)",
                           where, line, k);
        }
    }
    if (!l->grid[0] || !l->block[0])
        return sg_errf(err, "%s:%d: //@launch %s: grid= and block= are required", where, line,
                       l->kernel);
    return 0;
}

static int parse_scratch(char *rest, const sg_val_task *t, sg_val_plan *p, const char *where,
                         int line, sg_err *err) {
    char *tok[MAX_TOK];
    int n = split(rest, ' ', tok, MAX_TOK);
    if (n != 3) return sg_errf(err, "%s:%d: //@scratch takes NAME TYPE COUNT", where, line);
    sg_val_type ty;
    if (!is_ident(tok[0]))
        return sg_errf(err, "%s:%d: //@scratch: \"%s\" is not a name", where, line, tok[0]);
    if (known_arg(t, p, tok[0]))
        return sg_errf(err, "%s:%d: //@scratch: \"%s\" is already a buffer, scalar or scratch",
                       where, line, tok[0]);
    if (sg_val_type_parse(tok[1], &ty) < 0)
        return sg_errf(err, "%s:%d: //@scratch %s: unknown type \"%s\" (%s)", where, line, tok[0],
                       tok[1], SG_VAL_TYPE_NAMES);
    if (check_expr(tok[2], t, where, line, "count", err) < 0) return -1;
    p->scratch = sg_xrealloc(p->scratch, (size_t)(p->nscratch + 1) * sizeof *p->scratch);
    sg_val_scratch *s = &p->scratch[p->nscratch++];
    s->name = sg_xstrdup(tok[0]);
    s->type = ty;
    s->count = sg_xstrdup(tok[2]);
    return 0;
}

int sg_val_plan_parse(const char *src, const sg_val_task *t, const char *where, sg_val_plan *p,
                      sg_err *err) {
    memset(p, 0, sizeof *p);
    int line = 0, rc = 0;
    for (const char *s = src; *s && rc == 0;) {
        line++;
        const char *nl = strchr(s, '\n');
        size_t len = nl ? (size_t)(nl - s) : strlen(s);
        const char *q = s;
        while (q < s + len && isspace((unsigned char)*q)) q++;
        int is_launch = !strncmp(q, "//@launch", 9), is_scratch = !strncmp(q, "//@scratch", 10);
        if (is_launch || is_scratch) {
            size_t skip = is_launch ? 9 : 10;
            char *copy = sg_xmalloc(len + 1);
            memcpy(copy, q + skip, len - (size_t)(q - s) - skip);
            copy[len - (size_t)(q - s) - skip] = 0;
            rc = is_launch ? parse_launch(copy, t, p, where, line, err)
                           : parse_scratch(copy, t, p, where, line, err);
            free(copy);
        }
        s = nl ? nl + 1 : s + len;
    }
    if (rc < 0) sg_val_plan_free(p);
    return rc;
}

void sg_val_plan_free(sg_val_plan *p) {
    for (int i = 0; i < p->nlaunch; i++) {
        sg_val_launch *l = &p->launch[i];
        free(l->kernel);
        for (int d = 0; d < 3; d++) {
            free(l->grid[d]);
            free(l->block[d]);
        }
        free(l->smem);
        for (int a = 0; a < l->narg; a++) free(l->args[a]);
        free(l->args);
    }
    free(p->launch);
    for (int i = 0; i < p->nscratch; i++) {
        free(p->scratch[i].name);
        free(p->scratch[i].count);
    }
    free(p->scratch);
    memset(p, 0, sizeof *p);
}
