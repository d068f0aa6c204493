/* Integer size expressions: + - * / % ( ) ceil_div min max over size names. */
#include "validator/validator.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    const char *s, *p, *expr;
    const sg_val_sizes *sizes;
    sg_err *err;
    int depth;
} parser;

static int fail(parser *ps, const char *what) {
    return sg_errf(ps->err, "size expression \"%s\": %s at offset %d", ps->expr, what,
                   (int)(ps->p - ps->s));
}

static void skip_ws(parser *ps) {
    while (isspace((unsigned char)*ps->p)) ps->p++;
}

static int expr(parser *ps, int64_t *out);

static int call(parser *ps, const char *fn, int64_t *out) {
    int64_t a, b;
    skip_ws(ps);
    if (*ps->p != '(') return fail(ps, "expected '(' after function name");
    ps->p++;
    if (expr(ps, &a) < 0) return -1;
    skip_ws(ps);
    if (*ps->p != ',') return fail(ps, "expected ',' between function arguments");
    ps->p++;
    if (expr(ps, &b) < 0) return -1;
    skip_ws(ps);
    if (*ps->p != ')') return fail(ps, "expected ')'");
    ps->p++;
    if (!strcmp(fn, "min"))
        *out = a < b ? a : b;
    else if (!strcmp(fn, "max"))
        *out = a > b ? a : b;
    else {
        if (b <= 0) return fail(ps, "ceil_div by a non-positive value");
        if (a > INT64_MAX - b) return fail(ps, "integer overflow");
        *out = (a + b - 1) / b;
    }
    return 0;
}

static int primary(parser *ps, int64_t *out) {
    skip_ws(ps);
    if (++ps->depth > 64) return fail(ps, "nested too deeply");
    const char *p = ps->p;
    int rc = 0;
    if (*p == '(') {
        ps->p++;
        if (expr(ps, out) < 0) return -1;
        skip_ws(ps);
        if (*ps->p != ')') return fail(ps, "expected ')'");
        ps->p++;
    } else if (*p == '-') {
        ps->p++;
        if (primary(ps, out) < 0) return -1;
        if (*out == INT64_MIN) return fail(ps, "integer overflow");
        *out = -*out;
    } else if (isdigit((unsigned char)*p)) {
        int64_t v = 0;
        while (isdigit((unsigned char)*ps->p)) {
            int d = *ps->p++ - '0';
            if (v > (INT64_MAX - d) / 10) return fail(ps, "number too large");
            v = v * 10 + d;
        }
        *out = v;
    } else if (isalpha((unsigned char)*p) || *p == '_') {
        char name[32];
        size_t n = 0;
        while (isalnum((unsigned char)*ps->p) || *ps->p == '_') {
            if (n + 1 >= sizeof name) return fail(ps, "name too long");
            name[n++] = *ps->p++;
        }
        name[n] = 0;
        if (!strcmp(name, "ceil_div") || !strcmp(name, "min") || !strcmp(name, "max"))
            rc = call(ps, name, out);
        else if (sg_val_sizes_get(ps->sizes, name, out) < 0) {
            ps->p = p;
            char m[96];
            snprintf(m, sizeof m, "unknown size name '%s'", name);
            return fail(ps, m);
        }
    } else {
        return fail(ps, *p ? "unexpected character" : "unexpected end");
    }
    ps->depth--;
    return rc;
}

static int mul_ok(int64_t a, int64_t b, int64_t *out) { return !__builtin_mul_overflow(a, b, out); }

static int term(parser *ps, int64_t *out) {
    if (primary(ps, out) < 0) return -1;
    for (;;) {
        skip_ws(ps);
        char op = *ps->p;
        if (op != '*' && op != '/' && op != '%') return 0;
        ps->p++;
        int64_t r;
        if (primary(ps, &r) < 0) return -1;
        if (op == '*') {
            if (!mul_ok(*out, r, out)) return fail(ps, "integer overflow");
        } else {
            if (r == 0) return fail(ps, "division by zero");
            if (r == -1 && *out == INT64_MIN) return fail(ps, "integer overflow");
            *out = op == '/' ? *out / r : *out % r;
        }
    }
}

static int expr(parser *ps, int64_t *out) {
    if (term(ps, out) < 0) return -1;
    for (;;) {
        skip_ws(ps);
        char op = *ps->p;
        if (op != '+' && op != '-') return 0;
        ps->p++;
        int64_t r;
        if (term(ps, &r) < 0) return -1;
        if (op == '+' ? __builtin_add_overflow(*out, r, out) : __builtin_sub_overflow(*out, r, out))
            return fail(ps, "integer overflow");
    }
}

int sg_val_expr_eval(const char *e, const sg_val_sizes *s, int64_t *out, sg_err *err) {
    parser ps = {e, e, e, s, err, 0};
    if (expr(&ps, out) < 0) return -1;
    skip_ws(&ps);
    if (*ps.p) return fail(&ps, "unexpected text");
    return 0;
}

int sg_val_sizes_get(const sg_val_sizes *s, const char *name, int64_t *out) {
    for (int i = 0; s && i < s->n; i++)
        if (!strcmp(s->name[i], name)) {
            *out = s->value[i];
            return 0;
        }
    return -1;
}

void sg_val_sizes_format(const sg_val_sizes *s, char *out, size_t n) {
    size_t used = 0;
    out[0] = 0;
    for (int i = 0; i < s->n && used < n; i++)
        used += (size_t)snprintf(out + used, n - used, "%s%s=%lld", i ? " " : "", s->name[i],
                                 (long long)s->value[i]);
}
