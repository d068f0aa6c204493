/* `task init`: what a kernel's body says about its buffers and its launch (infer.h).
 * The body is cut into statements; local integer definitions and the guards on them
 * (`if (i < N)`, `for (...; i < C; ...)`, `if (row >= N) return;`) tell which size
 * parameters an index reaches; an assignment's target (or an atomic / store call's first
 * argument) tells which buffers are written. */
#include "validator/infer.h"

#include "common/buf.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_VARS 128

typedef struct var {
    char name[48];
    char def[200], bound[160];
    int alias; /* the buffer parameter this pointer walks, -1 when not a pointer alias */
} var;

typedef struct ctx {
    const sg_infer_kernel *k;
    sg_infer_body *b;
    var v[MAX_VARS];
    int nv;
    int touched[SG_INFER_MAX_PARAMS];
} ctx;

static int idch(char c) { return isalnum((unsigned char)c) || c == '_'; }

static int param_of(const ctx *c, const char *w, size_t n) {
    for (int i = 0; i < c->k->np; i++)
        if (strlen(c->k->p[i].name) == n && !strncmp(c->k->p[i].name, w, n)) return i;
    return -1;
}

static var *var_of(ctx *c, const char *w, size_t n) {
    for (int i = c->nv - 1; i >= 0; i--)
        if (strlen(c->v[i].name) == n && !strncmp(c->v[i].name, w, n)) return &c->v[i];
    return NULL;
}

/* The buffer a name stands for: a pointer parameter or an alias of one; -1 otherwise. */
static int buffer_of(ctx *c, const char *w, size_t n) {
    int p = param_of(c, w, n);
    if (p >= 0) return c->k->p[p].pointer ? p : -1;
    var *v = var_of(c, w, n);
    return v ? v->alias : -1;
}

static void trim_copy(char *dst, size_t n, const char *s, size_t len) {
    while (len && isspace((unsigned char)*s)) s++, len--;
    while (len && isspace((unsigned char)s[len - 1])) len--;
    if (len >= n) len = n - 1;
    memcpy(dst, s, len);
    dst[len] = 0;
}

/* An index expression's extent as powers of the size parameters: x[idx*T + t] with
 * idx < n*T and t < T reaches n*T*T. Sums and other operators take the larger power of
 * each size (row*C + col: N*C), products add them, a / b keeps a, a % b is below b. */
typedef struct ext {
    ctx *c;
    const char *p;
    int depth, *data, *rows;
    unsigned long *src; /* the buffers whose loaded values an index holds */
    int last_buf;       /* the buffer the last name stood for (-1: none) */
} ext;

static void pw_max(unsigned char *a, const unsigned char *b) {
    for (int i = 0; i < SG_INFER_MAX_PARAMS; i++)
        if (b[i] > a[i]) a[i] = b[i];
}

static void skip_ws(ext *x) {
    while (isspace((unsigned char)*x->p)) x->p++;
}

static void ext_expr(ext *x, unsigned char *out, int stop_comma);
static void extent(ctx *c, const char *e, int depth, int *data, int *rows, unsigned long *src,
                   unsigned char *out);

static int type_word(const char *w, size_t n);

/* A name: a size parameter, a local (its bound, else its definition), a call. */
static void ext_name(ext *x, unsigned char *out) {
    const char *w = x->p;
    while (idch(*x->p)) x->p++;
    size_t n = (size_t)(x->p - w);
    x->last_buf = buffer_of(x->c, w, n);
    skip_ws(x);
    if (*x->p == '(') { /* a call: the largest of its arguments */
        x->p++;
        for (;;) {
            unsigned char a[SG_INFER_MAX_PARAMS] = {0};
            ext_expr(x, a, 1);
            pw_max(out, a);
            if (*x->p == ',') {
                x->p++;
                continue;
            }
            if (*x->p == ')') x->p++;
            break;
        }
        return;
    }
    if (n == 8 && !strncmp(w, "blockIdx", 8) && !strncmp(x->p, ".x", 2)) *x->rows = 1;
    int pi = param_of(x->c, w, n);
    if (pi >= 0) {
        if (!x->c->k->p[pi].pointer && !x->c->k->p[pi].is_float) out[pi] = 1;
        return;
    }
    var *v = x->depth < 12 ? var_of(x->c, w, n) : NULL;
    if (!v || v->alias >= 0) return;
    if (v->bound[0]) {
        int d2 = 0, r2 = 0;
        unsigned long s2 = 0;
        extent(x->c, v->bound, x->depth + 1, &d2, &r2, &s2, out);
    } else {
        extent(x->c, v->def, x->depth + 1, x->data, x->rows, x->src, out);
    }
}

/* A cast's parentheses: "(int)", "(size_t)", "(const float*)". */
static int is_cast(const char *p) {
    const char *q = p + 1;
    int words = 0;
    for (;;) {
        while (isspace((unsigned char)*q) || *q == '*') q++;
        if (*q == ')') return words > 0;
        const char *w = q;
        while (idch(*q)) q++;
        if (q == w || !type_word(w, (size_t)(q - w))) return 0;
        words++;
    }
}

static void ext_unary(ext *x, unsigned char *out) {
    x->last_buf = -1;
    skip_ws(x);
    while (*x->p && strchr("-+!~&*", *x->p)) {
        x->p++;
        skip_ws(x);
    }
    if (*x->p == '(' && is_cast(x->p)) {
        x->p = strchr(x->p, ')') + 1;
        ext_unary(x, out);
        return;
    }
    if (*x->p == '(') {
        x->p++;
        ext_expr(x, out, 0);
        if (*x->p == ')') x->p++;
    } else if (isalpha((unsigned char)*x->p) || *x->p == '_') {
        ext_name(x, out);
    } else if (isdigit((unsigned char)*x->p) || *x->p == '.') {
        while (idch(*x->p) || *x->p == '.') x->p++;
    } else if (*x->p && !strchr("),]:;?", *x->p)) {
        x->p++; /* something else: no extent */
    }
    for (;;) { /* .x, ->y, [i] (a value loaded from memory: its index is not this range) */
        skip_ws(x);
        if (*x->p == '.' || (*x->p == '-' && x->p[1] == '>')) {
            x->p += *x->p == '.' ? 1 : 2;
            while (idch(*x->p)) x->p++;
        } else if (*x->p == '[') {
            *x->data = 1;
            if (x->last_buf >= 0) *x->src |= 1UL << x->last_buf;
            int d = 0;
            for (; *x->p; x->p++) {
                d += *x->p == '[' ? 1 : *x->p == ']' ? -1 : 0;
                if (d == 0) break;
            }
            if (*x->p) x->p++;
        } else {
            return;
        }
    }
}

static void ext_term(ext *x, unsigned char *out) {
    ext_unary(x, out);
    for (;;) {
        skip_ws(x);
        char op = *x->p;
        if ((op != '*' && op != '/' && op != '%') || x->p[1] == '=') return;
        x->p++;
        unsigned char r[SG_INFER_MAX_PARAMS] = {0};
        ext_unary(x, r);
        if (op == '%') memcpy(out, r, sizeof r);
        int divides = op == '/'; /* (i*C + c) / C: i's range, when C is a factor of it */
        for (int i = 0; i < SG_INFER_MAX_PARAMS; i++) divides &= r[i] <= out[i];
        for (int i = 0; divides && i < SG_INFER_MAX_PARAMS; i++)
            out[i] = (unsigned char)(out[i] - r[i]);
        if (op == '*')
            for (int i = 0; i < SG_INFER_MAX_PARAMS; i++) out[i] = (unsigned char)(out[i] + r[i]);
    }
}

/* Terms joined by + - and every other operator: the larger power of each size. */
static void ext_expr(ext *x, unsigned char *out, int stop_comma) {
    for (;;) {
        unsigned char t[SG_INFER_MAX_PARAMS] = {0};
        const char *at = x->p;
        ext_term(x, t);
        pw_max(out, t);
        skip_ws(x);
        if (!*x->p || *x->p == ')' || *x->p == ']' || *x->p == ';' || (stop_comma && *x->p == ','))
            return;
        while (*x->p && strchr("+-<>=!&|^?:,", *x->p)) x->p++; /* the operator */
        if (x->p == at) x->p++;                                /* no progress: skip */
    }
}

static void extent(ctx *c, const char *e, int depth, int *data, int *rows, unsigned long *src,
                   unsigned char *out) {
    ext x = {c, e, depth, data, rows, src, -1};
    while (*x.p) {
        ext_expr(&x, out, 0);
        if (*x.p) x.p++; /* an unmatched ) or ]: go on after it */
    }
}

/* The size parameters (bits over parameter positions) an expression reaches. */
static unsigned long reach(ctx *c, const char *e, int depth, int *data, int *rows) {
    unsigned char pw[SG_INFER_MAX_PARAMS] = {0};
    unsigned long src = 0;
    extent(c, e, depth, data, rows, &src, pw);
    unsigned long r = 0;
    for (int i = 0; i < SG_INFER_MAX_PARAMS; i++)
        if (pw[i]) r |= 1UL << i;
    return r;
}

static int int_type_word(const char *w, size_t n);

static int type_word(const char *w, size_t n) {
    static const char *const t[] = {"float", "double", "char", "signed", "half", NULL};
    for (int i = 0; t[i]; i++)
        if (strlen(t[i]) == n && !strncmp(t[i], w, n)) return 1;
    return int_type_word(w, n);
}

static int int_type_word(const char *w, size_t n) {
    static const char *const t[] = {"int",   "unsigned",  "size_t",   "long",    "auto",
                                    "uint",  "int64_t",   "uint64_t", "int32_t", "uint32_t",
                                    "const", "ptrdiff_t", "short",    NULL};
    for (int i = 0; t[i]; i++)
        if (strlen(t[i]) == n && !strncmp(t[i], w, n)) return 1;
    return 0;
}

/* `TYPE name = expr` (an integer local or a pointer into a buffer). 1: a pointer alias
 * was defined (its `=` is no store). */
static int definition(ctx *c, const char *s) {
    const char *eq = s;
    while ((eq = strchr(eq, '=')) && (eq[1] == '=' || strchr("!<>+-*/%&|^", eq[-1]))) eq += 2;
    if (!eq || c->nv == MAX_VARS) return 0;
    const char *e = eq;
    while (e > s && isspace((unsigned char)e[-1])) e--;
    const char *b = e;
    while (b > s && idch(b[-1])) b--;
    if (b == e || (size_t)(e - b) >= sizeof c->v[0].name) return 0;
    const char *t = b; /* the words before the name: a type, so this is a definition */
    int pointer = 0, typed = 0;
    while (t > s && (isspace((unsigned char)t[-1]) || t[-1] == '*' || idch(t[-1]) || t[-1] == ':' ||
                     t[-1] == '<' || t[-1] == '>')) {
        if (t[-1] == '*') pointer = 1;
        t--;
    }
    int words = 0; /* `*p = v` is a store, `T* p = v` a definition */
    for (const char *w = t; w < b;) {
        if (!idch(*w)) {
            w++;
            continue;
        }
        const char *w0 = w;
        while (idch(*w)) w++;
        words++;
        typed |= int_type_word(w0, (size_t)(w - w0)) || pointer;
    }
    if (!words || !typed) return 0;
    var *v = &c->v[c->nv];
    memset(v, 0, sizeof *v);
    memcpy(v->name, b, (size_t)(e - b));
    const char *next = eq + 1; /* `int i = g / w, c = g % w`: i's definition ends at the comma */
    for (int d = 0; *next && !(d == 0 && *next == ','); next++)
        d += *next == '(' || *next == '[' ? 1 : *next == ')' || *next == ']' ? -1 : 0;
    trim_copy(v->def, sizeof v->def, eq + 1, (size_t)(next - eq - 1));
    v->alias = -1;
    if (*next == ',' && !pointer) { /* the next declarator, with the same type */
        char more[2048];
        snprintf(more, sizeof more, "%.*s %s", (int)(b - t), t, next + 1);
        c->nv++;
        definition(c, more);
        return 0;
    }
    if (pointer) {
        for (const char *p = v->def; *p;) {
            if (!idch(*p) || (p > v->def && idch(p[-1]))) {
                p++;
                continue;
            }
            const char *w = p;
            while (idch(*p)) p++;
            int bi = buffer_of(c, w, (size_t)(p - w));
            if (bi >= 0) v->alias = bi;
        }
        if (v->alias < 0) return 0; /* a pointer into shared memory or a local array */
    }
    c->nv++;
    return pointer;
}

/* `name < expr`, `name >= expr` (and `expr > name`): the first bound of each local. */
static void guards(ctx *c, const char *s) {
    for (const char *p = s; *p; p++) {
        int lt = *p == '<' && p[1] != '<' && (p == s || p[-1] != '<');
        int ge = *p == '>' && p[1] == '=' && (p == s || p[-1] != '>');
        if (!lt && !ge) continue;
        const char *e = p;
        while (e > s && isspace((unsigned char)e[-1])) e--;
        const char *b = e;
        while (b > s && idch(b[-1])) b--;
        if (b == e || (b > s && (b[-1] == '.' || b[-1] == '>'))) continue;
        var *v = var_of(c, b, (size_t)(e - b));
        if (!v || v->bound[0]) continue;
        const char *x = p + 1 + (p[1] == '=');
        const char *y = x;
        int d = 0;
        for (; *y; y++) {
            if (*y == '(') d++;
            if (*y == ')' && --d < 0) break;
            if (d == 0 && (*y == '&' || *y == '|' || *y == '?' || *y == ';' || *y == ',')) break;
        }
        trim_copy(v->bound, sizeof v->bound, x, (size_t)(y - x));
    }
}

/* The target of the statement's assignment: [*tb, *te), and whether it is compound
 * (x[i] += v reads x too). 0 without an assignment. */
static int assignment(const char *s, const char **tb, const char **te, int *compound) {
    for (const char *p = s; *p; p++) {
        if (*p != '=' || p[1] == '=') continue;
        int shift = p - s >= 2 && (p[-1] == '<' || p[-1] == '>') && p[-2] == p[-1];
        if (p > s && strchr("=!<>", p[-1]) && !shift) continue;
        const char *e = p; /* the operator's first character */
        *compound = p > s && strchr("+-*/%&|^<>", p[-1]);
        if (*compound) e = p - 1 - shift;
        while (e > s && isspace((unsigned char)e[-1])) e--;
        const char *b = e; /* back over the lvalue: names, [..], (..), ., ->, *, <..> */
        while (b > s) {
            char ch = b[-1];
            if (ch == ']' || ch == ')') {
                char open = ch == ']' ? '[' : '(';
                int d = 0;
                while (b > s) {
                    b--;
                    d += *b == ch ? 1 : *b == open ? -1 : 0;
                    if (d == 0) break;
                }
            } else if (idch(ch) || ch == '.' || ch == '*' || ch == '<' || ch == '>' || ch == ':' ||
                       (ch == '-' && b[0] == '>')) {
                b--;
            } else {
                break;
            }
        }
        *tb = b;
        *te = e;
        return 1;
    }
    return 0;
}

/* The arguments of the call whose '(' is at open: up to max spans [b[i], e[i]).
 * Returns how many there are. */
static int call_args(const char *open, const char **b, const char **e, int max) {
    int n = 0, d = 0;
    const char *a = open + 1;
    for (const char *q = a; *q; q++) {
        if (*q == '(' || *q == '[') d++;
        int end = (*q == ')' || *q == ']') && --d < 0;
        if (end || (*q == ',' && d == 0)) {
            if (n < max) b[n] = a, e[n] = q;
            n++;
            a = q + 1;
        }
        if (end) break;
    }
    return n < max ? n : max;
}

/* OpenCL's vloadN(offset, p), vload_half[N](offset, p), vstoreN(v, offset, p),
 * vstore_half[N][_rte](v, offset, p) and their vloada_ / vstorea_ forms: the elements
 * of p each offset step covers (N; 1 for vload_half; 4 for the aligned 3-vectors), 0
 * for any other name. *store: the call writes p. */
static int vector_call(const char *w, size_t n, int *store) {
    *store = n >= 6 && !strncmp(w, "vstore", 6);
    if (!*store && (n < 5 || strncmp(w, "vload", 5))) return 0;
    const char *p = w + (*store ? 6 : 5), *end = w + n;
    int aligned = p < end && *p == 'a';
    p += aligned;
    int half = end - p >= 5 && !strncmp(p, "_half", 5);
    p += half ? 5 : 0;
    if (aligned && !half) return 0;
    int lanes = 0;
    while (p < end && isdigit((unsigned char)*p)) lanes = lanes * 10 + (*p++ - '0');
    if (!lanes && !half) return 0;                           /* vloadN needs its N */
    if (*store && half && end - p == 4 && *p == '_') p += 4; /* _rte, _rtz, _rtp, _rtn */
    if (p != end || lanes > 16) return 0;
    return !lanes ? 1 : aligned && lanes == 3 ? 4 : lanes;
}

/* atomicAdd(&x[i], v), store128(x + i, v), __stcs(x + i, v): the first argument is
 * written (and read, for an atomic); OpenCL's vstore*(v, offset, p): the last. Returns
 * its span in *ab, *ae. */
static int store_call(const char *s, const char **ab, const char **ae, int *atomic) {
    for (const char *p = s; *p; p++) {
        if (!idch(*p) || (p > s && idch(p[-1]))) continue;
        const char *w = p;
        while (idch(*p)) p++;
        size_t n = (size_t)(p - w);
        *atomic = n > 6 && !strncmp(w, "atomic", 6);
        int store = (n > 4 && !strncmp(w, "__st", 4)), vstore;
        for (size_t i = 0; i + 5 <= n; i++) store |= !strncmp(w + i, "store", 5);
        if ((!*atomic && !store) || *p != '(') continue;
        const char *b[3], *e[3];
        int na = call_args(p, b, e, 3);
        if (!na) continue;
        int last = vector_call(w, n, &vstore) && vstore && na == 3 ? 2 : 0;
        *ab = b[last];
        *ae = e[last];
        return 1;
    }
    return 0;
}

/* Which buffers the statement touches, reading or writing; the first statement that
 * touches a buffer decides whether it is read before it is written (inout). */
static void accesses(ctx *c, const char *s, int alias_def) {
    const char *tb = NULL, *te = NULL, *ab = NULL, *ae = NULL;
    int compound = 0, atomic = 0;
    /* the last assignment's target: `for (...; i += 1) y[i] = v` stores to y */
    for (const char *from = s, *b2, *e2; !alias_def && assignment(from, &b2, &e2, &compound);) {
        tb = b2, te = e2;
        from = strchr(e2, '=');
        if (!from++) break;
    }
    store_call(s, &ab, &ae, &atomic);
    int w[SG_INFER_MAX_PARAMS] = {0}, r[SG_INFER_MAX_PARAMS] = {0};
    for (const char *p = s; *p; p++) {
        if (!idch(*p) || (p > s && (idch(p[-1]) || p[-1] == '.'))) continue;
        const char *q = p;
        while (idch(*q)) q++;
        int bi = buffer_of(c, p, (size_t)(q - p));
        const char *z = q; /* `buf != nullptr` tests the pointer, touches no element */
        while (*z == ' ') z++;
        if ((z[0] == '!' || z[0] == '=') && z[1] == '=') {
            z += 2;
            while (*z == ' ') z++;
            if (!strncmp(z, "nullptr", 7) || !strncmp(z, "NULL", 4) || (z[0] == '0' && !idch(z[1])))
                bi = -1;
        }
        if (bi >= 0 && !(alias_def && p == s)) {
            int in_t = tb && p >= tb && p < te, in_a = ab && p >= ab && p < ae;
            if (in_t || in_a) {
                w[bi] = 1;
                r[bi] |= (in_t && compound) || (in_a && atomic);
            } else if (!alias_def) {
                r[bi] = 1;
            }
        }
        p = q - 1;
    }
    for (int i = 0; i < c->k->np; i++) {
        if (!w[i] && !r[i]) continue;
        if (!c->touched[i]) c->b->read[i] = r[i]; /* read before (or while) first written */
        c->touched[i] = 1;
        c->b->written[i] |= w[i];
    }
}

/* Buffer bi (through alias v, if any) is indexed by idx: the sizes it reaches. */
static void note_index(ctx *c, int bi, const var *v, const char *idx) {
    int data = 0, rows = 0;
    unsigned char pw[SG_INFER_MAX_PARAMS] = {0};
    unsigned long src = 0;
    extent(c, idx, 0, &data, &rows, &src, pw);
    if (v) extent(c, v->def, 0, &data, &rows, &src, pw); /* base + offset: the larger powers */
    c->b->data_src[bi] |= src;
    unsigned long r = 0;
    for (int i = 0; i < SG_INFER_MAX_PARAMS; i++)
        if (pw[i]) r |= 1UL << i;
    pw_max(c->b->power[bi], pw);
    c->b->reach[bi] |= r;
    c->b->in_index |= r;
    c->b->data_indexed[bi] |= data;
    c->b->rows_unbounded[bi] |= rows;
}

/* Every `buf[expr]` and `buf + expr` of statement s: the sizes its index reaches. */
static void indices(ctx *c, const char *s) {
    for (const char *p = s; *p; p++) {
        if (!idch(*p) || (p > s && (idch(p[-1]) || p[-1] == '.'))) continue;
        const char *w = p;
        while (idch(*p)) p++;
        int bi = buffer_of(c, w, (size_t)(p - w));
        if (bi < 0) {
            p--;
            continue;
        }
        var *v = param_of(c, w, (size_t)(p - w)) < 0 ? var_of(c, w, (size_t)(p - w)) : NULL;
        const char *q = p;
        while (isspace((unsigned char)*q)) q++;
        char idx[200] = "";
        if (*q == '[') {
            const char *r = q;
            int d = 0;
            for (; *r; r++) {
                d += *r == '[' ? 1 : *r == ']' ? -1 : 0;
                if (d == 0) break;
            }
            trim_copy(idx, sizeof idx, q + 1, (size_t)(r - q - (*r ? 1 : 0)));
        } else if (*q == '+' && q[1] != '+' && q[1] != '=') {
            const char *r = q + 1;
            int d = 0;
            for (; *r; r++) {
                if (*r == '(' || *r == '[') d++;
                if ((*r == ')' || *r == ']') && --d < 0) break;
                if (d == 0 && (*r == ',' || *r == ';')) break;
            }
            trim_copy(idx, sizeof idx, q + 1, (size_t)(r - q - 1));
        } else if (!v) {
            p--;
            continue;
        }
        note_index(c, bi, v, idx);
        p--;
    }
}

/* OpenCL's vload / vstore calls: the offset argument indexes the pointer argument, each
 * step covering the call's lanes. */
static void vector_indices(ctx *c, const char *s) {
    for (const char *p = s; *p; p++) {
        if (!idch(*p) || (p > s && idch(p[-1]))) continue;
        const char *w = p;
        while (idch(*p)) p++;
        int store, lanes = vector_call(w, (size_t)(p - w), &store);
        const char *q = p;
        while (isspace((unsigned char)*q)) q++;
        p--;
        const char *b[3], *e[3];
        int na = lanes && *q == '(' ? call_args(q, b, e, 3) : 0;
        if (na != (store ? 3 : 2)) continue;
        const char *ptr = b[na - 1]; /* its first name: `y` of `y` or `y + base` */
        while (ptr < e[na - 1] && !idch(*ptr)) ptr++;
        const char *pe = ptr;
        while (pe < e[na - 1] && idch(*pe)) pe++;
        int bi = buffer_of(c, ptr, (size_t)(pe - ptr));
        if (bi < 0) continue;
        var *v =
            param_of(c, ptr, (size_t)(pe - ptr)) < 0 ? var_of(c, ptr, (size_t)(pe - ptr)) : NULL;
        char idx[200];
        trim_copy(idx, sizeof idx, b[na - 2], (size_t)(e[na - 2] - b[na - 2]));
        note_index(c, bi, v, idx);
        if (lanes > c->b->lanes[bi]) c->b->lanes[bi] = lanes;
    }
}

/* Whether expression e mentions `what`, directly or through the locals it names. */
static int mentions(ctx *c, const char *e, const char *what, int depth) {
    if (strstr(e, what)) return 1;
    for (const char *p = e; *p && depth < 8;) {
        if (!idch(*p) || (p > e && (idch(p[-1]) || p[-1] == '.'))) {
            p++;
            continue;
        }
        const char *w = p;
        while (idch(*p)) p++;
        var *v = var_of(c, w, (size_t)(p - w));
        if (v && v->alias < 0 && mentions(c, v->def, what, depth + 1)) return 1;
    }
    return 0;
}

/* The block size a definition names: `blockIdx.x * TILE + tx` gives "TILE" ("": blockDim,
 * or none). */
static void tile_of(const char *def, const char *axis, char *out, size_t n) {
    out[0] = 0;
    char pat[32];
    snprintf(pat, sizeof pat, "blockIdx.%s", axis);
    const char *b = strstr(def, pat);
    if (!b) { /* OpenCL */
        snprintf(pat, sizeof pat, "get_group_id(%d)", axis[0] == 'x' ? 0 : 1);
        b = strstr(def, pat);
    }
    if (!b) return;
    const char *q = b + strlen(pat);
    while (*q == ' ') q++;
    if (*q == '*') { /* blockIdx.x * T */
        q++;
        while (*q == ' ') q++;
        const char *w = q;
        while (idch(*q)) q++;
        if (q > w && strncmp(w, "blockDim", 8)) trim_copy(out, n, w, (size_t)(q - w));
        return;
    }
    const char *e = b; /* T * blockIdx.x */
    while (e > def && e[-1] == ' ') e--;
    if (e == def || e[-1] != '*') return;
    e--;
    while (e > def && e[-1] == ' ') e--;
    const char *w = e;
    while (w > def && idch(w[-1])) w--;
    if (e > w && strncmp(w, "blockDim", 8)) trim_copy(out, n, w, (size_t)(e - w));
}

static void launch_shape(ctx *c) {
    sg_infer_body *b = c->b;
    for (int i = 0; i < c->nv && !b->bound_y[0]; i++) { /* a 2-D grid: the y index's bound */
        var *v = &c->v[i];
        if (v->bound[0] && v->alias < 0 &&
            (strstr(v->def, "blockIdx.y") || strstr(v->def, "get_global_id(1)") ||
             strstr(v->def, "get_group_id(1)"))) {
            snprintf(b->bound_y, sizeof b->bound_y, "%s", v->bound);
            tile_of(v->def, "y", b->tile_y, sizeof b->tile_y);
            int data = 0, rows = 0;
            b->in_index |= reach(c, v->bound, 0, &data, &rows);
        }
    }
    for (int i = 0; i < c->nv; i++) {
        var *v = &c->v[i];
        int cl = strstr(v->def, "get_global_id(0)") != NULL; /* OpenCL */
        int group = strstr(v->def, "blockIdx.x") || strstr(v->def, "get_group_id(0)");
        if (!v->bound[0] || v->alias >= 0 || (!group && !cl)) continue;
        int thread = mentions(c, v->def, "threadIdx.x", 0) ||
                     mentions(c, v->def, "get_local_id(0)", 0) || cl;
        int warp = strstr(v->def, "/ 32") || strstr(v->def, "/32") || strstr(v->def, ">> 5") ||
                   strstr(v->def, "warp") || strstr(v->def, "meta_group");
        b->shape = warp ? SG_SHAPE_WARP : thread ? SG_SHAPE_THREAD : SG_SHAPE_BLOCK;
        snprintf(b->bound, sizeof b->bound, "%s", v->bound);
        tile_of(v->def, "x", b->tile_x, sizeof b->tile_x);
        int data = 0, rows = 0;
        b->in_index |= reach(c, v->bound, 0, &data, &rows);
        return;
    }
}

int sg_infer_body_has(const sg_infer_kernel *k, const char *text) {
    size_t n = strlen(text);
    for (size_t i = 0; i + n <= k->body_len; i++)
        if (!memcmp(k->body + i, text, n)) return 1;
    return 0;
}

void sg_infer_read_body(const sg_infer_kernel *k, sg_infer_body *b) {
    ctx *c = sg_xcalloc(1, sizeof *c); /* MAX_VARS definitions: too large for a small stack */
    memset(b, 0, sizeof *b);
    c->k = k;
    c->b = b;
    char st[2048];
    const char *s = k->body + 1, *end = k->body + k->body_len;
    while (s < end) {
        const char *e = s;
        int paren = 0;
        while (e < end && !((*e == ';' || *e == '{' || *e == '}') && paren <= 0)) {
            paren += *e == '(' ? 1 : *e == ')' ? -1 : 0;
            if (*e == ';' && paren > 0) break; /* a for header's parts */
            e++;
        }
        trim_copy(st, sizeof st, s, (size_t)(e - s));
        char *body = st;
        if (!strncmp(body, "for", 3) && !idch(body[3])) { /* for (int i = a */
            char *lp = strchr(body, '(');
            if (lp) body = lp + 1;
        }
        int alias = definition(c, body);
        guards(c, body);
        accesses(c, body, alias);
        indices(c, body);
        vector_indices(c, body);
        s = e + 1;
    }
    launch_shape(c);
    int rows = 0;
    for (int i = 0; i < k->np; i++) rows |= k->p[i].pointer && b->rows_unbounded[i];
    for (int i = 0; rows && b->shape == SG_SHAPE_UNKNOWN && i < k->np; i++) {
        const sg_infer_param *p = &k->p[i];
        if (p->pointer || p->is_float || (b->in_index & (1UL << i)) || strstr(p->name, "block") ||
            strstr(p->name, "Block"))
            continue;
        char w[80];
        snprintf(w, sizeof w, "%s", p->name);
        size_t n = strlen(w);
        int used = 0;
        for (size_t j = 0; j + n <= k->body_len && !used; j++)
            used = !memcmp(k->body + j, w, n) && !idch(k->body[j + n]) &&
                   (j == 0 || !idch(k->body[j - 1]));
        if (!used) b->rows |= 1UL << i, b->in_index |= 1UL << i;
    }
    b->uses_y = sg_infer_body_has(k, "blockIdx.y") || sg_infer_body_has(k, "threadIdx.y") ||
                sg_infer_body_has(k, "get_group_id(1)") ||
                sg_infer_body_has(k, "get_local_id(1)") || sg_infer_body_has(k, "get_global_id(1)");
    const char *x = strstr(k->body, "extern");
    if (x && x < end && sg_infer_body_has(k, "extern")) {
        const char *sh = strstr(x, "__shared__");
        if (sh && sh < end) {
            const char *t = sh + 10;
            while (*t == ' ') t++;
            const char *te = t;
            while (idch(*te) || *te == ' ') te++;
            while (te > t && (te[-1] == ' ' || idch(te[-1]))) { /* drop the array's name */
                const char *w = te;
                while (w > t && idch(w[-1])) w--;
                te = w;
                while (te > t && te[-1] == ' ') te--;
                break;
            }
            trim_copy(b->smem_type, sizeof b->smem_type, t, (size_t)(te - t));
            if (strncmp(b->smem_type, "__align__", 9) == 0 || !b->smem_type[0])
                snprintf(b->smem_type, sizeof b->smem_type, "float");
        }
    }
    free(c);
}
