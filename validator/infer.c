/* `task init`: a task folder inferred from a kernel file: its signature (infer_sig.c),
 * its body (infer_body.c) and the user's hints; every guess is reported. */
#include "common/paths.h"
#include "validator/infer.h"
#include "validator/internal.h"

#include "common/assert.h"
#include "common/buf.h"
#include "common/opts.h"
#include "common/wfile.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int write_file(const char *dir, const char *name, const char *text, int force, sg_err *err) {
    sg_buf p = {0};
    sg_buf_printf(&p, "%s/%s", dir, name);
    FILE *f; /* --force replaces a regular file only (not a link, a device, a FIFO) */
    int rc = sg_wfile_fopen(p.data, !force, &f, err);
    if (rc == -1 && errno == EEXIST)
        rc =
            sg_errf(err, "%s already exists: pass --force to overwrite it, or --out another folder",
                    p.data);
    else if (rc == 0 && fputs(text, f) < 0)
        rc = sg_errf(err, "cannot write %s: %s", p.data, strerror(errno));
    if (f && fclose(f) != 0 && rc == 0)
        rc = sg_errf(err, "cannot write %s: %s", p.data, strerror(errno));
    sg_buf_free(&p);
    return rc;
}

int sg_val_init_add_size(sg_val_init_opts *o, const char *value, sg_err *err) {
    sg_val_sizes *s = &o->sizes;
    const char *eq = strchr(value, '=');
    char *end = NULL;
    if (!eq || eq == value || (size_t)(eq - value) >= sizeof s->name[0])
        return sg_errf(err, "'%s' is not NAME=VALUE", value);
    errno = 0;
    long long v = strtoll(eq + 1, &end, 10);
    if (!eq[1] || *end || v < 1)
        return sg_errf(err, "'%s': the value must be a positive integer", value);
    if (errno == ERANGE) /* strtoll saturates: say so rather than use the limit */
        return sg_errf(err, "'%s': the value is too large (the most is %lld)", value, LLONG_MAX);
    if (s->n == SG_VAL_MAX_SIZES) return sg_errf(err, "too many sizes");
    snprintf(s->name[s->n], sizeof s->name[0], "%.*s", (int)(eq - value), value);
    s->value[s->n++] = v;
    return 0;
}

int sg_val_init_add_count(sg_val_init_opts *o, const char *value, sg_err *err) {
    const char *eq = strchr(value, '=');
    if (!eq || eq == value || (size_t)(eq - value) >= sizeof o->count_buf[0] || !eq[1] ||
        strlen(eq + 1) >= sizeof o->count_expr[0])
        return sg_errf(err, "'%s' is not BUFFER=EXPRESSION (e.g. wte=V*C)", value);
    if (o->ncount == SG_VAL_MAX_HINTS) return sg_errf(err, "too many --count hints");
    snprintf(o->count_buf[o->ncount], sizeof o->count_buf[0], "%.*s", (int)(eq - value), value);
    snprintf(o->count_expr[o->ncount++], sizeof o->count_expr[0], "%s", eq + 1);
    return 0;
}

/* A guess the body does not prove: listed at the end of the report and in task.json's
 * "guesses" (validate shows them when the baseline fails its own reference). */
static void guess(json_t *list, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void guess(json_t *list, const char *fmt, ...) {
    char b[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    json_array_append_new(list, json_string(b));
}

/* ---- sizes: the kernel's indexing integers, plus names the hints bring ---- */
typedef struct names {
    int n;
    char name[SG_VAL_MAX_SIZES][32];
} names;

static int has_name(const names *s, const char *n) {
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->name[i], n)) return 1;
    return 0;
}

static void add_name(names *s, const char *n, size_t len) {
    char b[32];
    if (len >= sizeof b || s->n == SG_VAL_MAX_SIZES) return;
    memcpy(b, n, len);
    b[len] = 0;
    if (!has_name(s, b)) snprintf(s->name[s->n++], sizeof s->name[0], "%s", b);
}

/* The identifiers of an expression that are not functions of size expressions. */
static void expr_names(const char *e, names *out) {
    for (const char *p = e; *p;) {
        if (!(isalpha((unsigned char)*p) || *p == '_')) {
            p++;
            continue;
        }
        const char *w = p;
        while (isalnum((unsigned char)*p) || *p == '_') p++;
        const char *q = p;
        while (*q == ' ') q++;
        if (*q != '(' && *q != '=') add_name(out, w, (size_t)(p - w)); /* grid= is a key */
    }
}

/* An expression is usable when it evaluates with every size set (it has no casts, locals
 * or calls that size expressions lack). */
static int usable(const char *e, const names *sizes) {
    sg_val_sizes s = {0};
    for (int i = 0; i < sizes->n; i++) {
        snprintf(s.name[s.n], sizeof s.name[0], "%s", sizes->name[i]);
        s.value[s.n++] = 64;
    }
    int64_t v;
    sg_err e2;
    return e[0] && sg_val_expr_eval(e, &s, &v, &e2) == 0;
}

/* The product of the sizes in bits, each to its power (NULL: once). */
static void product_pow(const sg_infer_kernel *k, unsigned long bits, const unsigned char *pw,
                        sg_buf *out) {
    for (int i = 0; i < k->np; i++)
        for (int n = 0; (bits & (1UL << i)) && n < (pw && pw[i] > 1 ? pw[i] : 1); n++)
            sg_buf_printf(out, "%s%s", out->len ? "*" : "", k->p[i].name);
}

static void product(const sg_infer_kernel *k, unsigned long bits, sg_buf *out) {
    product_pow(k, bits, NULL, out);
}

static int64_t default_size(int nsizes) { return nsizes == 1 ? 1 << 20 : nsizes == 2 ? 1024 : 256; }

/* A float scalar's starting value: what the name usually holds, else 1.0. */
static double scalar_guess(const char *n) {
    static const struct {
        const char *name;
        double v;
    } t[] = {{"eps", 1e-5},    {"epsilon", 1e-5}, {"lr", 1e-3},          {"learning_rate", 1e-3},
             {"beta1", 0.9},   {"beta2", 0.999},  {"weight_decay", 0.0}, {"scale", 0.125},
             {"dropout", 0.0}, {"alpha", 1.0},    {"beta", 0.0}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (!strcmp(n, t[i].name)) return t[i].v;
    return 1.0;
}

static int blockish(const char *n) {
    return strstr(n, "block") || strstr(n, "Block") || strstr(n, "threads") || strstr(n, "BLOCK") ||
           strstr(n, "warp");
}

static int elem_bytes(const char *t) {
    return !strcmp(t, "double")                                           ? 8
           : (strstr(t, "half") || strstr(t, "bfloat16"))                 ? 2
           : (strstr(t, "char") || strstr(t, "int8") || strstr(t, "fp8")) ? 1
           : strstr(t, "float4")                                          ? 16
           : strstr(t, "float2")                                          ? 8
                                                                          : 4;
}

/* Template arguments: the user's, an existing //@launch line's, or float for each
 * typename (a guess); a non-type parameter without a default cannot be guessed. */
static int template_args(const sg_infer_kernel *k, const char *given, const char *src, char *out,
                         size_t n, sg_buf *report, const char *path, sg_err *err) {
    out[0] = 0;
    if (!k->tparams[0]) return 0;
    if (given) {
        snprintf(out, n, "%s", given);
        return 0;
    }
    char pat[80];
    snprintf(pat, sizeof pat, "//@launch %s<", k->name);
    const char *l = strstr(src, pat);
    if (l) {
        const char *a = l + strlen(pat), *e = strchr(a, ' ');
        if (e && e > a && e[-1] == '>') {
            snprintf(out, n, "%.*s", (int)(e - a - 1), a);
            return 0;
        }
    }
    char tp[160];
    snprintf(tp, sizeof tp, "%s", k->tparams);
    sg_buf b = {0};
    for (char *s = NULL, *p = strtok_r(tp, ",", &s); p; p = strtok_r(NULL, ",", &s)) {
        while (*p == ' ') p++;
        char *eq = strchr(p, '=');
        if (!strncmp(p, "typename", 8) || !strncmp(p, "class", 5)) {
            sg_buf_printf(&b, "%sfloat", b.len ? "," : "");
        } else if (eq) {
            sg_buf_printf(&b, "%s%s", b.len ? "," : "", eq + 1 + (eq[1] == ' '));
        } else {
            sg_buf_free(&b);
            char ex[160] = ""; /* an example instance: float for types, 256 for ints */
            snprintf(tp, sizeof tp, "%s", k->tparams);
            for (char *s2 = NULL, *q = strtok_r(tp, ",", &s2); q; q = strtok_r(NULL, ",", &s2)) {
                while (*q == ' ') q++;
                const char *v = !strncmp(q, "typename", 8) || !strncmp(q, "class", 5) ? "float"
                                : !strncmp(q, "int", 3) || !strncmp(q, "unsigned", 8) ||
                                        !strncmp(q, "size_t", 6)
                                    ? "256"
                                    : "VALUE";
                size_t l = strlen(ex);
                snprintf(ex + l, sizeof ex - l, "%s%s", l ? "," : "", v);
            }
            return sg_errf(err,
                           "%s: kernel %s is a template with the parameter \"%s\", which task "
                           "init cannot guess: name an instance, e.g. --kernel '%s<%s>' "
                           "(its arguments in the template's order: %s)",
                           path, k->name, p, k->name, ex, k->tparams);
        }
    }
    snprintf(out, n, "%s", b.data ? b.data : "");
    sg_buf_printf(report, "template %s<%s>: the arguments are a guess (give --kernel '%s<...>')\n",
                  k->name, out, k->name);
    sg_buf_free(&b);
    return 0;
}

static int pick_kernel(sg_infer_kernel *ks, int nk, const char *want, sg_buf *report,
                       const char *path, int *pick, char *targs, size_t tn, sg_err *err) {
    targs[0] = 0;
    *pick = 0;
    if (want) {
        size_t n = strcspn(want, "<");
        int i = 0;
        while (i < nk && (strlen(ks[i].name) != n || strncmp(ks[i].name, want, n))) i++;
        if (i == nk) {
            sg_buf all = {0};
            for (int j = 0; j < nk; j++) sg_buf_printf(&all, "%s%s", j ? ", " : "", ks[j].name);
            int rc = sg_errf(err, "--kernel %s: %s has no kernel of that name (it has: %s)", want,
                             path, all.data);
            sg_buf_free(&all);
            return rc;
        }
        *pick = i;
        if (want[n] == '<') {
            size_t l = strlen(want);
            if (want[l - 1] != '>')
                return sg_errf(err, "--kernel %s: expected NAME<ARGS> (e.g. %.*s<float>)", want,
                               (int)n, want);
            snprintf(targs, tn, "%.*s", (int)(l - n - 2), want + n + 1);
        }
    } else if (nk > 1) {
        sg_buf_printf(report, "the file has %d kernels (", nk);
        for (int j = 0; j < nk; j++) sg_buf_printf(report, "%s%s", j ? ", " : "", ks[j].name);
        sg_buf_printf(report, "); took %s: pick another with --kernel NAME\n", ks[0].name);
    }
    return 0;
}

typedef struct plan {
    names sizes;
    char count[SG_INFER_MAX_PARAMS][200];
    char launch[400];
    char grid[200]; /* the launch's grid expression (for buffers indexed by blockIdx.x) */
    int unknown[SG_INFER_MAX_PARAMS]; /* the count is a fallback, not read from an index */
    int two_d;                        /* the launch is a 2-D grid read from both guards */
} plan;

/* body has NAME[INDEX] */
static int indexed_by(const sg_infer_kernel *k, const char *name, const char *index) {
    char t[200];
    snprintf(t, sizeof t, "%s[%s]", name, index);
    return sg_infer_body_has(k, t);
}

static void infer_counts(const sg_infer_kernel *k, const sg_infer_body *b,
                         const sg_val_init_opts *o, plan *pl, int free_rows, json_t *g,
                         sg_buf *report) {
    unsigned long all = 0, reached = 0, rows = 0;
    for (int i = 0; i < k->np; i++)
        if (!k->p[i].pointer && !k->p[i].is_float && (b->in_index & (1UL << i))) all |= 1UL << i;
    for (int i = 0; i < k->np; i++)
        if (k->p[i].pointer) {
            reached |= b->reach[i];
            if (b->rows_unbounded[i]) rows |= 1;
        }
    for (int i = 0; i < k->np; i++) {
        const sg_infer_param *p = &k->p[i];
        if (!p->pointer) continue;
        sg_buf c = {0};
        const char *why = "";
        int hinted = 0;
        for (int h = 0; h < o->ncount; h++)
            if (!strcmp(o->count_buf[h], p->name)) {
                sg_buf_append_str(&c, o->count_expr[h]);
                hinted = 1;
            }
        if (!hinted) {
            unsigned long bits = b->reach[i] & all;
            int rows_guess = 0, free_guess = 0;
            if (b->rows_unbounded[i] && b->shape == SG_SHAPE_UNKNOWN) {
                bits |= b->rows ? b->rows : all & ~b->reach[i]; /* blockIdx.x picks a row */
                rows_guess = 1;
            }
            if (free_rows >= 0 && b->data_indexed[i] && b->data_src[i]) {
                bits |= 1UL << free_rows; /* table[tok*C + c]: tok < vocab, unused otherwise */
                free_guess = 1;
            }
            if (!bits && !b->data_indexed[i] && pl->grid[0] &&
                (indexed_by(k, p->name, "blockIdx.x") ||
                 indexed_by(k, p->name, "get_group_id(0)"))) {
                sg_buf_append_str(&c, pl->grid);
                why = " (one element per block: the grid)";
            } else if (!bits && !b->data_indexed[i] && indexed_by(k, p->name, "0")) {
                why = " (only element 0 is indexed)";
            } else if (!bits) {
                bits = all;
                why = b->data_indexed[i] ? " (indexed by values read from memory: unknown)"
                                         : " (no index seen: unknown)";
                pl->unknown[i] = 1;
            } else if (free_guess) {
                why = " (its rows: the integer the body does not otherwise use, as the range of "
                      "the values read from memory that index it: a guess)";
            } else if (b->data_indexed[i]) {
                why = " (part of its index is a value read from memory: check it)";
            }
            if (rows_guess && !why[0]) why = " (blockIdx.x picks a row, with no bound: a guess)";
            if (!c.len) product_pow(k, bits, pl->unknown[i] ? NULL : b->power[i], &c);
            if (!c.len) sg_buf_append_str(&c, "1");
            int lanes = p->vec * (b->lanes[i] > 1 ? b->lanes[i] : 1);
            if (b->lanes[i] > 1 && !why[0]) why = " (vloadN / vstoreN: N elements per offset)";
            if (lanes > 1) {
                sg_buf v = {0};
                sg_buf_printf(&v, "%d*%s", lanes, c.data);
                sg_buf_free(&c);
                c = v;
            }
        }
        snprintf(pl->count[i], sizeof pl->count[i], "%s", c.data);
        sg_buf_free(&c);
        if (!hinted && why[0] && strcmp(why, " (only element 0 is indexed)") &&
            strcmp(why, " (one element per block: the grid)") && !strstr(why, "vloadN"))
            guess(g, "count of %s: %s%s", p->name, pl->count[i], why);
        if (hinted)
            sg_buf_printf(report, "count of %s: %s elements (given)\n", p->name, pl->count[i]);
        else
            sg_buf_printf(report, "count of %s: %s elements%s%s; if wrong: --count %s=EXPR\n",
                          p->name, pl->count[i],
                          p->vec > 1 ? " (vector elements x their lanes)" : "", why, p->name);
    }
    (void)rows;
    (void)reached;
}

/* The value of a constant the file defines: `#define TILE 16`, `const int TILE = 16;`
 * (constexpr, static too). 0 when there is none. */
static long const_value(const char *src, const char *name) {
    size_t n = strlen(name);
    for (const char *p = strstr(src, name); p && n; p = strstr(p + 1, name)) {
        if ((p > src && (isalnum((unsigned char)p[-1]) || p[-1] == '_')) ||
            isalnum((unsigned char)p[n]) || p[n] == '_')
            continue;
        const char *l = p; /* the line's start */
        while (l > src && l[-1] != '\n') l--;
        while (*l == ' ' || *l == '\t') l++;
        const char *q = p + n;
        while (*q == ' ' || *q == '\t') q++;
        int define = !strncmp(l, "#define", 7) || !strncmp(l, "# define", 8);
        if (!define && (*q != '=' || !strstr(l, "int") || !strstr(l, "const"))) continue;
        if (*q == '=') q++;
        while (*q == ' ' || *q == '(') q++;
        char *end;
        long v = strtol(q, &end, 10);
        if (end > q && v > 0 && v <= 1024) return v;
    }
    return 0;
}

static void infer_launch(const sg_infer_kernel *k, const sg_infer_body *b, const char *kname,
                         const char *src, const sg_val_init_opts *o, plan *pl, json_t *gl,
                         sg_buf *report) {
    char block[64] = "256";
    const char *from = "";
    if (k->launch_bounds > 0) {
        snprintf(block, sizeof block, "%d", k->launch_bounds);
        from = " (from __launch_bounds__)";
    }
    if (o->launch) {
        const char *t = o->launch;
        size_t n = strlen(kname);
        if (!strncmp(t, kname, n) && t[n] == ' ') t += n + 1;
        snprintf(pl->launch, sizeof pl->launch, "//@launch %s %s\n", kname, t);
        const char *g = strstr(t, "grid=");
        if (g) snprintf(pl->grid, sizeof pl->grid, "%.*s", (int)strcspn(g + 5, " "), g + 5);
        return;
    }
    sg_buf g = {0};
    const char *shape = "";
    char bound[200];
    snprintf(bound, sizeof bound, "%s", b->bound);
    if (b->shape != SG_SHAPE_UNKNOWN && !usable(bound, &pl->sizes)) bound[0] = 0;
    unsigned long all = 0;
    for (int i = 0; i < k->np; i++)
        if (!k->p[i].pointer && !k->p[i].is_float && (b->in_index & (1UL << i))) all |= 1UL << i;
    char by[200], bx[16], byv[16];
    snprintf(by, sizeof by, "%s", b->bound_y);
    if (by[0] && !usable(by, &pl->sizes)) by[0] = 0;
    long tx = b->tile_x[0] ? const_value(src, b->tile_x) : 0;
    long ty = b->tile_y[0] ? const_value(src, b->tile_y) : 0;
    if (b->shape == SG_SHAPE_THREAD && bound[0] && by[0] && !k->launch_bounds &&
        (!b->tile_x[0] || tx) && (!b->tile_y[0] || ty)) { /* x and y guarded: a 2-D grid */
        snprintf(bx, sizeof bx, "%ld", tx ? tx : 16);
        snprintf(byv, sizeof byv, "%ld", ty ? ty : 16);
        sg_buf_printf(&g, "ceil_div(%s,%s),ceil_div(%s,%s)", bound, bx, by, byv);
        snprintf(block, sizeof block, "%s,%s", bx, byv);
        shape = tx && ty ? "one thread per element of a 2-D grid (x and y guarded; the block "
                           "from the tile the indices use)"
                         : "one thread per element of a 2-D grid (x and y guarded; the block "
                           "16x16 is a choice)";
        pl->two_d = 1;
    } else if (b->shape == SG_SHAPE_THREAD && bound[0]) {
        sg_buf_printf(&g, "ceil_div(%s,%s)", bound, block);
        shape = "one thread per element";
    } else if (b->shape == SG_SHAPE_WARP && bound[0]) {
        sg_buf_printf(&g, "ceil_div((%s)*32,%s)", bound, block);
        shape = "one warp per row";
    } else if (b->shape == SG_SHAPE_BLOCK && bound[0]) {
        sg_buf_printf(&g, "%s", bound);
        shape = "one block per row";
    } else if (sg_infer_body_has(k, "blockIdx.x") &&
               !sg_infer_body_has(k, "blockDim.x * blockIdx.x") &&
               !sg_infer_body_has(k, "blockIdx.x * blockDim.x") &&
               !sg_infer_body_has(k, "blockIdx.x*blockDim.x")) {
        unsigned long rows = 0;
        for (int i = 0; i < k->np; i++)
            if (k->p[i].pointer && b->rows_unbounded[i])
                rows |= b->rows ? b->rows : all & ~b->reach[i];
        product(k, rows, &g);
        if (!g.len) product(k, all, &g);
        shape = "one block per row (blockIdx.x without a bound)";
    } else if (!sg_infer_body_has(k, "blockIdx")) {
        sg_buf_append_str(&g, "1");
        shape = "a single block (no blockIdx)";
    } else {
        sg_buf p = {0};
        product(k, all, &p);
        sg_buf_printf(&g, "ceil_div(%s,%s)", p.len ? p.data : "1", block);
        sg_buf_free(&p);
        shape = "one thread per element (no guard seen: the product of the sizes)";
    }
    sg_buf smem = {0};
    if (b->smem_type[0]) sg_buf_printf(&smem, " smem=%s*%d", block, elem_bytes(b->smem_type));
    snprintf(pl->launch, sizeof pl->launch, "//@launch %s grid=%s block=%s%s\n", kname, g.data,
             block, smem.len ? smem.data : "");
    snprintf(pl->grid, sizeof pl->grid, "%s", g.data);
    int proved = (b->shape != SG_SHAPE_UNKNOWN && bound[0] && (!b->uses_y || pl->two_d)) ||
                 (!strcmp(shape, "a single block (no blockIdx)") &&
                  !sg_infer_body_has(k, "get_global_id") && !sg_infer_body_has(k, "get_group_id"));
    if (!proved || (pl->two_d && strstr(shape, "a choice")))
        guess(gl, "launch: grid=%s block=%s%s: %s%s", g.data, block, smem.len ? smem.data : "",
              shape,
              b->uses_y && !pl->two_d ? "; the kernel uses blockIdx.y / threadIdx.y: a 2-D launch"
                                      : "");
    sg_buf_printf(report,
                  "launch: %s grid=%s block=%s%s: %s%s%s%s; if wrong: --launch \"grid=... "
                  "block=... smem=...\"\n",
                  kname, g.data, block, smem.len ? smem.data : "", shape, from,
                  smem.len ? ", extern __shared__ of one element per thread" : "",
                  b->uses_y && !pl->two_d
                      ? ", and the kernel uses blockIdx.y / threadIdx.y: give the 2-D launch"
                      : "");
    sg_buf_free(&g);
    sg_buf_free(&smem);
}

/* The integer a table's rows are counted by when its index holds values read from an
 * integer buffer (table[ids[i]*C + c]) and the body uses that integer nowhere else
 * (vocab): its position, or -1 when there is not exactly one. */
static int free_row_param(const sg_infer_kernel *k, const sg_infer_body *b) {
    int want = 0;
    for (int i = 0; i < k->np; i++)
        for (int x = 0; x < k->np; x++)
            want |= b->data_indexed[i] && (b->data_src[i] & (1UL << x)) && k->p[x].type &&
                    (!strcmp(k->p[x].type, "i32") || !strcmp(k->p[x].type, "u32") ||
                     !strcmp(k->p[x].type, "i64"));
    int found = -1, n = 0;
    for (int i = 0; want && i < k->np; i++) {
        const sg_infer_param *p = &k->p[i];
        if (p->pointer || p->is_float || (b->in_index & (1UL << i)) || blockish(p->name)) continue;
        size_t l = strlen(p->name);
        int used = 0;
        for (size_t j = 0; j + l <= k->body_len && !used; j++)
            used = !memcmp(k->body + j, p->name, l) && !isalnum((unsigned char)k->body[j + l]) &&
                   k->body[j + l] != '_' &&
                   (j == 0 || !(isalnum((unsigned char)k->body[j - 1]) || k->body[j - 1] == '_'));
        if (!used) found = i, n++;
    }
    return n == 1 ? found : -1;
}

/* The range of the values integer buffer x holds, when they index buffer y: y's count
 * over the other sizes y's index reaches (vocab*width over width: vocab), "(COUNT)/(REST)"
 * when the count is no plain product; "" when there is no such y or its count is unknown. */
static void index_range(const sg_infer_kernel *k, const sg_infer_body *b, const plan *pl, int x,
                        char *out, size_t n, int *y_out) {
    out[0] = 0;
    for (int y = 0; y < k->np; y++) {
        if (!(b->data_src[y] & (1UL << x)) || pl->unknown[y] || !k->p[y].pointer) continue;
        char f[SG_INFER_MAX_PARAMS * 2][64]; /* the count's factors */
        int nf = 0, plain = 1;
        char cnt[200];
        snprintf(cnt, sizeof cnt, "%s", pl->count[y]);
        for (char *sv = NULL, *w = strtok_r(cnt, "*", &sv); w; w = strtok_r(NULL, "*", &sv)) {
            while (*w == ' ') w++;
            size_t l = strcspn(w, " ");
            for (size_t j = 0; j < l; j++) plain &= isalnum((unsigned char)w[j]) || w[j] == '_';
            if (nf < (int)(sizeof f / sizeof f[0]) && l < sizeof f[0])
                snprintf(f[nf++], sizeof f[0], "%.*s", (int)l, w);
            else
                plain = 0;
        }
        unsigned long rest = b->reach[y];
        sg_buf r = {0}, q = {0};
        product_pow(k, rest, b->power[y], &r);
        for (int i = 0; plain && i < k->np; i++) /* take each rest factor out, to its power */
            for (int m = 0; (rest & (1UL << i)) && m < (b->power[y][i] > 1 ? b->power[y][i] : 1);
                 m++) {
                int j = 0;
                while (j < nf && strcmp(f[j], k->p[i].name)) j++;
                if (j == nf)
                    plain = 0;
                else
                    f[j][0] = 0;
            }
        for (int j = 0; plain && j < nf; j++)
            if (f[j][0]) sg_buf_printf(&q, "%s%s", q.len ? "*" : "", f[j]);
        if (plain)
            snprintf(out, n, "%s", q.len ? q.data : "1"); /* y's count is the rest alone */
        else if (!r.len)
            snprintf(out, n, "%s", pl->count[y]);
        else
            snprintf(out, n, "(%s)/(%s)", pl->count[y], r.data);
        sg_buf_free(&r);
        sg_buf_free(&q);
        *y_out = y;
        return;
    }
}

/* ---- the task: one kernel, or the kernels of a chain (infer_chain.c) ---- */
typedef struct task_kernels {
    sg_infer_kernel *ks;
    sg_infer_body *bs;
    int first, n; /* ks[first .. first+n-1] are launched, in order */
    sg_infer_chain ch;
    plan *pl; /* one per launched kernel */
} task_kernels;

/* The position of parameter `name` in launched kernel j, or -1. */
static int param_at(const task_kernels *t, int j, const char *name) {
    const sg_infer_kernel *k = &t->ks[t->first + j];
    for (int i = 0; i < k->np; i++)
        if (!strcmp(k->p[i].name, name)) return i;
    return -1;
}

/* The first launched kernel with a parameter `name` (its parameter in *pi), or -1. */
static int kernel_with(const task_kernels *t, const char *name, int *pi) {
    for (int j = 0; j < t->n; j++)
        if ((*pi = param_at(t, j, name)) >= 0) return j;
    return -1;
}

/* A later kernel's integer parameter that bounds its reads of scratch the writer sized by
 * its own launch (finish(partial, out, nblocks)): it must equal the scratch's count, so
 * it is a scalar with that value, not a free size. The scratch's index, or -1. */
static int derived_from_scratch(const task_kernels *t, int j, int i) {
    const sg_infer_kernel *k = &t->ks[t->first + j];
    for (int s = 0; s < t->ch.nscratch; s++) {
        int q = param_at(t, j, t->ch.name[s]);
        int w = t->ch.writer[s] - t->first;
        if (w < j && q >= 0 && (t->bs[t->first + j].reach[q] & (1UL << i)) &&
            param_at(t, w, k->p[i].name) < 0)
            return s;
    }
    return -1;
}

/* The chain, when the user named no kernel and every kernel's parameters can be read. */
static void find_chain(const char *clean, sg_infer_kernel *ks, int nk, sg_infer_body *bs,
                       const char *path, sg_infer_chain *ch) {
    memset(ch, 0, sizeof *ch);
    for (int i = 0; i < nk; i++) {
        sg_err e2;
        if (ks[i].tparams[0] || ks[i].bad[0] ||
            sg_infer_types(clean, &ks[i], NULL, NULL, path, &e2))
            return;
        sg_infer_read_body(&ks[i], &bs[i]);
    }
    sg_infer_find_chain(ks, bs, nk, ch);
}

/* A buffer's role over the launched kernels: "in" when none writes it; "inout" when the
 * first that touches it reads it first (or only reads it, and a later one writes it). */
static const char *role_of(const task_kernels *t, const char *name, int *never_written) {
    int written = 0, read_first = -1;
    for (int j = 0; j < t->n; j++) {
        int q = param_at(t, j, name);
        if (q < 0) continue;
        const sg_infer_body *b = &t->bs[t->first + j];
        int w = b->written[q] && !t->ks[t->first + j].p[q].is_const;
        if (read_first < 0) read_first = !w || b->read[q];
        written |= w;
    }
    *never_written = !written;
    return !written ? "in" : read_first ? "inout" : "out";
}

/* The chain's plan lines: //@scratch for each scratch, //@launch per kernel with args=. */
static int chain_plan(const task_kernels *t, sg_buf *out, sg_buf *report, const char *path,
                      sg_err *err) {
    for (int s = 0; s < t->ch.nscratch; s++) {
        int w = t->ch.writer[s] - t->first, q = t->ch.writer_param[s];
        const sg_infer_param *p = &t->ks[t->ch.writer[s]].p[q];
        if (t->pl[w].unknown[q]) {
            sg_buf_printf(out, "//@scratch %s %s COUNT", p->name, p->type);
            for (int j = 0; j < t->n; j++) {
                const sg_infer_kernel *k = &t->ks[t->first + j];
                sg_buf_printf(out, "; %.*s args=", (int)strcspn(t->pl[j].launch, "\n"),
                              t->pl[j].launch);
                for (int i = 0; i < k->np; i++)
                    sg_buf_printf(out, "%s%s", i ? "," : "", k->p[i].name);
            }
            int rc = sg_errf(err,
                             "%s: its %d kernels look launched in order (%s is written by %s and "
                             "read after it), but the size of %s cannot be read from %s: give the "
                             "plan, e.g. --launch '%s' with COUNT (and each launch) filled in, "
                             "or --kernel NAME for one kernel",
                             path, t->n, p->name, t->ks[t->ch.writer[s]].name, p->name,
                             t->ks[t->ch.writer[s]].name, out->data);
            return rc;
        }
        sg_buf_printf(out, "//@scratch %s %s %s\n", p->name, p->type, t->pl[w].count[q]);
    }
    for (int j = 0; j < t->n; j++) {
        const sg_infer_kernel *k = &t->ks[t->first + j];
        sg_buf_printf(out, "%.*s args=", (int)strcspn(t->pl[j].launch, "\n"), t->pl[j].launch);
        for (int i = 0; i < k->np; i++) sg_buf_printf(out, "%s%s", i ? "," : "", k->p[i].name);
        sg_buf_append_str(out, "\n");
    }
    sg_buf_printf(report, "the file's %d kernels are launched in order (", t->n);
    for (int j = 0; j < t->n; j++)
        sg_buf_printf(report, "%s%s", j ? ", " : "", t->ks[t->first + j].name);
    sg_buf_printf(report, "): scratch between them:");
    for (int s = 0; s < t->ch.nscratch; s++)
        sg_buf_printf(report, " %s (written by %s, read after it)", t->ch.name[s],
                      t->ks[t->ch.writer[s]].name);
    sg_buf_printf(report, "; if wrong: --kernel NAME for one kernel, or --launch '//@scratch "
                          "...; //@launch ...' for the plan\n");
    return 0;
}

/* The source with its //@launch (and, when the given plan has them, //@scratch) lines
 * taken out: --launch replaces them. */
static void drop_plan_lines(const char *src, int scratch_too, sg_buf *out, int *dropped) {
    *dropped = 0;
    for (const char *l = src; *l;) {
        const char *e = strchr(l, '\n');
        size_t n = e ? (size_t)(e - l + 1) : strlen(l);
        const char *t = l;
        while (*t == ' ' || *t == '\t') t++;
        if (!strncmp(t, "//@launch", 9) || (scratch_too && !strncmp(t, "//@scratch", 10)))
            ++*dropped;
        else
            sg_buf_append(out, l, n);
        l += n;
    }
    sg_buf_append(out, "", 0);
}

/* The COUNT of "//@scratch NAME TYPE COUNT" in plan lines; 0 when there is none. */
static int scratch_count(const char *lines, const char *name, char *out, size_t n) {
    char pat[100];
    snprintf(pat, sizeof pat, "//@scratch %s ", name);
    const char *l = strstr(lines, pat);
    if (!l) return 0;
    l += strlen(pat);
    l += strcspn(l, " \n"); /* the type */
    while (*l == ' ') l++;
    snprintf(out, n, "%.*s", (int)strcspn(l, "\n"), l);
    return out[0] != 0;
}

/* --launch as plan lines: "//@scratch ...; //@launch ..." (one per ';'). */
static void given_plan(const char *launch, sg_buf *out) {
    for (const char *p = launch; *p;) {
        while (*p == ' ' || *p == ';') p++;
        size_t n = strcspn(p, ";");
        while (n && p[n - 1] == ' ') n--;
        if (n) sg_buf_printf(out, "%.*s\n", (int)n, p);
        p += n;
    }
}

/* ---- sg_val_task_init: one call's state, and its steps in order ---- */
typedef struct init_ctx {
    const char *path;
    const sg_val_init_opts *o;
    sg_dev_lang lang;
    sg_buf *report;
    sg_err *err;
    sg_buf src, clean, body, lines, kept;
    task_kernels t;     /* t.ks, t.bs: SG_INFER_MAX_KERNELS each, allocated per call */
    sg_infer_kernel *k; /* the first launched kernel */
    names sizes;
    int nk, pick, plan_given, free_rows, nout;
    char targs[160], kname[240];
    json_t *root, *guesses;
} init_ctx;

/* The kernels of the file, which of them are launched, their types and bodies. */
static int read_kernels(init_ctx *c) {
    const sg_val_init_opts *o = c->o;
    task_kernels *t = &c->t;
    sg_infer_kernel *ks = t->ks;
    int rc;
    if ((rc = sg_infer_kernels(c->clean.data, c->lang == SG_DEV_CUDA, ks, &c->nk, c->path,
                               c->err)) < 0)
        return rc;
    if (!o->kernel && c->nk > 1) find_chain(c->clean.data, ks, c->nk, t->bs, c->path, &t->ch);
    if (t->ch.n) {
        t->n = t->ch.n;
        c->targs[0] = 0;
        if (o->launch && !c->plan_given)
            return sg_errf(c->err,
                           "--launch \"%s\" is one launch, and %s's kernels are launched in "
                           "order: give the plan as --launch '//@launch %s grid=... block=... "
                           "args=...; //@launch %s ...' (with //@scratch lines first), or "
                           "--kernel NAME",
                           o->launch, c->path, ks[0].name, ks[1].name);
    } else if ((rc = pick_kernel(ks, c->nk, o->kernel, c->report, c->path, &c->pick, c->targs,
                                 sizeof c->targs, c->err)) < 0) {
        return rc;
    }
    t->first = t->ch.n ? 0 : c->pick;
    sg_infer_kernel *k = c->k = &ks[t->first];
    if (k->bad[0])
        return sg_errf(c->err, "%s (write the task.json for it by hand: docs/task-format.md)",
                       k->bad);
    size_t before = c->report->len;
    if (!t->ch.n && !c->targs[0] &&
        (rc = template_args(k, NULL, c->src.data, c->targs, sizeof c->targs, c->report, c->path,
                            c->err)) < 0)
        return rc;
    if (c->report->len > before && strstr(c->report->data + before, "are a guess"))
        guess(c->guesses, "template arguments %s<%s> (give --kernel '%s<...>')", k->name, c->targs,
              k->name);
    if (c->targs[0] && !k->tparams[0])
        return sg_errf(c->err, "--kernel %s<%s>: %s is not a template", k->name, c->targs, k->name);
    for (int j = 0; j < t->n; j++) {
        if ((rc = sg_infer_types(c->clean.data, &ks[t->first + j], c->targs, c->report, c->path,
                                 c->err)) < 0)
            return rc;
        sg_infer_read_body(&ks[t->first + j], &t->bs[t->first + j]);
    }
    return 0;
}

/* A --size value the kernel's parameter cannot hold (it would get a wrapped value). */
static int size_fits(init_ctx *c) {
    const sg_val_init_opts *o = c->o;
    const sg_infer_kernel *k = c->k;
    for (int g = 0; g < o->sizes.n; g++)
        for (int i = 0; i < k->np; i++) {
            if (strcmp(k->p[i].name, o->sizes.name[g]) || k->p[i].pointer || k->p[i].is_float)
                continue;
            const char *ty = k->p[i].type ? k->p[i].type : "i32";
            int64_t most = strstr(ty, "64")     ? INT64_MAX
                           : !strcmp(ty, "u32") ? UINT32_MAX
                                                : INT32_MAX;
            if (o->sizes.value[g] > most)
                return sg_errf(c->err,
                               "--size %s=%lld: parameter %s of kernel %s is %s; the most it "
                               "holds is %lld",
                               o->sizes.name[g], (long long)o->sizes.value[g], o->sizes.name[g],
                               k->name, ty, (long long)most);
        }
    return 0;
}

/* sizes: integers that index or bound something; the hints' extra names. */
static int collect_sizes(init_ctx *c) {
    const sg_val_init_opts *o = c->o;
    task_kernels *t = &c->t;
    sg_infer_kernel *ks = t->ks, *k = c->k;
    names *sizes = &c->sizes;
    for (int j = 0; j < t->n; j++) {
        const sg_infer_kernel *kj = &ks[t->first + j];
        for (int i = 0; i < kj->np; i++)
            if (!kj->p[i].pointer && !kj->p[i].is_float &&
                (t->bs[t->first + j].in_index & (1UL << i)) && derived_from_scratch(t, j, i) < 0)
                add_name(sizes, kj->p[i].name, strlen(kj->p[i].name));
    }
    c->free_rows = t->n == 1 ? free_row_param(k, &t->bs[t->first]) : -1;
    if (c->free_rows >= 0)
        add_name(sizes, k->p[c->free_rows].name, strlen(k->p[c->free_rows].name));
    for (int h = 0; h < o->ncount; h++) expr_names(o->count_expr[h], sizes);
    if (o->launch && !c->plan_given) expr_names(o->launch, sizes);
    for (int g = 0; g < o->sizes.n; g++)
        if (!has_name(sizes, o->sizes.name[g])) {
            int pi, j = kernel_with(t, o->sizes.name[g], &pi);
            if (j < 0 || ks[t->first + j].p[pi].pointer || ks[t->first + j].p[pi].is_float)
                return sg_errf(c->err,
                               "--size %s: kernel %s has no integer parameter of that name, and "
                               "no --count or --launch uses it",
                               o->sizes.name[g], k->name);
            add_name(sizes, o->sizes.name[g], strlen(o->sizes.name[g]));
        }
    if (size_fits(c) < 0) return -1;
    for (int h = 0; h < o->ncount; h++) {
        int pi, j = kernel_with(t, o->count_buf[h], &pi);
        if (j < 0 || !ks[t->first + j].p[pi].pointer)
            return sg_errf(c->err, "--count %s=%s: kernel %s has no pointer parameter \"%s\"",
                           o->count_buf[h], o->count_expr[h], k->name, o->count_buf[h]);
    }
    /* names in the hints that are no parameter become sizes too (wte: --count wte=V*C) */
    for (int s = 0; s < sizes->n; s++) {
        int pi, j = kernel_with(t, sizes->name[s], &pi);
        if (j >= 0 && (ks[t->first + j].p[pi].pointer || ks[t->first + j].p[pi].is_float))
            return sg_errf(c->err, "a hint uses \"%s\" as a size, but it is a %s parameter",
                           sizes->name[s], ks[t->first + j].p[pi].pointer ? "pointer" : "float");
    }
    return 0;
}

/* Each launched kernel's launch and buffer counts, then the //@launch lines. */
static int plan_launches(init_ctx *c) {
    const sg_val_init_opts *o = c->o;
    task_kernels *t = &c->t;
    sg_infer_kernel *k = c->k;
    t->pl = sg_xcalloc((size_t)t->n, sizeof *t->pl);
    for (int j = 0; j < t->n; j++) {
        sg_infer_kernel *kj = &t->ks[t->first + j];
        sg_val_init_opts oj = *o;
        if (t->ch.n) oj.launch = NULL; /* the chain's plan is given whole or inferred */
        t->pl[j].sizes = c->sizes;
        char kn[240];
        snprintf(kn, sizeof kn, "%s", t->ch.n ? kj->name : c->kname);
        if (!t->ch.n) snprintf(kn, sizeof kn, c->targs[0] ? "%s<%s>" : "%s", k->name, c->targs);
        sg_buf lr = {0}; /* the launch is read first (counts use its grid), said after */
        infer_launch(kj, &t->bs[t->first + j], kn, c->clean.data, &oj, &t->pl[j], c->guesses, &lr);
        infer_counts(kj, &t->bs[t->first + j], o, &t->pl[j], t->n == 1 ? c->free_rows : -1,
                     c->guesses, c->report);
        if (lr.len) sg_buf_append(c->report, lr.data, lr.len);
        sg_buf_free(&lr);
    }
    snprintf(c->kname, sizeof c->kname, c->targs[0] ? "%s<%s>" : "%s", k->name, c->targs);
    if (c->plan_given)
        given_plan(o->launch, &c->lines);
    else if (t->ch.n)
        return chain_plan(t, &c->lines, c->report, c->path, c->err);
    else
        sg_buf_append_str(&c->lines, t->pl[0].launch);
    return 0;
}

/* task.json's "sizes" and its two check shapes (1s, then small odd numbers). */
static void sizes_json(init_ctx *c, json_t *sj, json_t *checks) {
    static const int odd[] = {1001, 33, 17, 9, 5, 3};
    json_t *c1 = json_object(), *c2 = json_object();
    for (int s = 0; s < c->sizes.n; s++) {
        int64_t v = default_size(c->sizes.n);
        int given = sg_val_sizes_get(&c->o->sizes, c->sizes.name[s], &v) == 0;
        json_object_set_new(sj, c->sizes.name[s], json_integer(v));
        json_object_set_new(c1, c->sizes.name[s], json_integer(1));
        json_object_set_new(c2, c->sizes.name[s], json_integer(odd[s < 6 ? s : 5]));
        sg_buf_printf(c->report, "size %s = %lld%s (check shapes use 1 and %d)\n", c->sizes.name[s],
                      (long long)v, given ? "" : " (a default: --size to change)",
                      odd[s < 6 ? s : 5]);
    }
    json_array_append_new(checks, c1);
    json_array_append_new(checks, c2);
}

/* Pointer parameter i of launched kernel j: its buffer entry. */
static void buffer_json(init_ctx *c, int j, int i, json_t *bufs) {
    const sg_infer_kernel *kj = &c->t.ks[c->t.first + j];
    const sg_infer_param *p = &kj->p[i];
    int never_written;
    const char *role = role_of(&c->t, p->name, &never_written);
    c->nout += strcmp(role, "in") != 0;
    json_t *bj = json_pack("{s:s, s:s, s:s, s:s}", "name", p->name, "type", p->type, "count",
                           c->t.pl[j].count[i], "role", role);
    char range[220];
    int y = -1;
    index_range(kj, &c->t.bs[c->t.first + j], &c->t.pl[j], i, range, sizeof range, &y);
    if (p->boolean && strcmp(role, "out")) { /* a bool holds 0 or 1 */
        json_object_set_new(bj, "init", json_string("randint(0,1)"));
    } else if (range[0] && !strcmp(role, "in") &&
               (!strcmp(p->type, "i32") || !strcmp(p->type, "u32") || !strcmp(p->type, "i64"))) {
        sg_buf in = {0}; /* its values index y: in range at every shape */
        sg_buf_printf(&in, "randint(0,%s-1)", range);
        json_object_set_new(bj, "init", json_string(in.data));
        sg_buf_printf(c->report,
                      "init of %s: %s: its values index %s, whose rows are %s at every shape\n",
                      p->name, in.data, kj->p[y].name, range);
        sg_buf_free(&in);
    }
    json_array_append_new(bufs, bj);
    sg_buf_printf(c->report, "buffer %s: %s %s%s\n", p->name, role, p->type,
                  !p->is_const && never_written ? " (not const, but the body never writes it)"
                  : !strcmp(role, "inout")      ? " (the body reads and writes it: in place)"
                                                : "");
}

/* Scalar parameter i of launched kernel j: its value (a guess unless a size). */
static void scalar_json(init_ctx *c, int j, int i, json_t *scalars) {
    const sg_infer_param *p = &c->t.ks[c->t.first + j].p[i];
    const sg_infer_chain *ch = &c->t.ch;
    int d = p->is_float ? -1 : derived_from_scratch(&c->t, j, i);
    if (p->is_float) {
        double v = scalar_guess(p->name);
        json_array_append_new(
            scalars, json_pack("{s:s, s:s, s:f}", "name", p->name, "type", p->type, "value", v));
        sg_buf_printf(c->report, "scalar %s: %s, value %g (a guess: edit task.json)\n", p->name,
                      p->type, v);
        guess(c->guesses, "scalar %s = %g", p->name, v);
    } else if (d >= 0) {
        int w = ch->writer[d] - c->t.first;
        char given_count[200];
        const char *cnt = c->plan_given && scratch_count(c->lines.data, ch->name[d], given_count,
                                                         sizeof given_count)
                              ? given_count
                              : c->t.pl[w].count[ch->writer_param[d]];
        json_array_append_new(
            scalars, json_pack("{s:s, s:s, s:s}", "name", p->name, "type", p->type, "value", cnt));
        sg_buf_printf(c->report,
                      "scalar %s: %s = %s, the count of scratch %s it bounds (written by %s)\n",
                      p->name, p->type, cnt, ch->name[d], c->t.ks[ch->writer[d]].name);
    } else if (has_name(&c->sizes, p->name)) {
        json_array_append_new(scalars, json_pack("{s:s, s:s, s:s}", "name", p->name, "type",
                                                 p->type, "value", p->name));
    } else {
        int v = blockish(p->name) ? 256 : 1;
        json_array_append_new(
            scalars, json_pack("{s:s, s:s, s:i}", "name", p->name, "type", p->type, "value", v));
        sg_buf_printf(c->report,
                      "scalar %s: %s, value %d (indexes nothing, so not a size; a guess)\n",
                      p->name, p->type, v);
        guess(c->guesses, "scalar %s = %d (indexes nothing, so not a size)", p->name, v);
    }
}

/* task.json: sizes, check shapes, buffers, scalars, args, and the guesses. */
static int task_json(init_ctx *c, const char *basef, const char *reff) {
    json_t *sj = json_object(), *checks = json_array();
    json_t *bufs = json_array(), *scalars = json_array(), *args = json_array();
    sizes_json(c, sj, checks);
    names seen = {0};
    for (int j = 0; j < c->t.n; j++) {
        const sg_infer_kernel *kj = &c->t.ks[c->t.first + j];
        for (int i = 0; i < kj->np; i++) {
            const sg_infer_param *p = &kj->p[i];
            if (has_name(&seen, p->name) || sg_infer_chain_scratch(&c->t.ch, p->name) >= 0)
                continue;
            add_name(&seen, p->name, strlen(p->name));
            json_array_append_new(args, json_string(p->name));
            if (p->pointer)
                buffer_json(c, j, i, bufs);
            else
                scalar_json(c, j, i, scalars);
        }
    }
    c->root = json_pack(
        "{s:s, s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:f}", "name", c->k->name, "description",
        "Made by specgen task init from a kernel file; check the guesses.", "baseline", basef,
        "reference", reff, "sizes", sj, "check_sizes", checks, "buffers", bufs, "scalars", scalars,
        "args", args, "target_speedup", SG_TARGET_DEFAULT);
    SG_ASSERT(c->root != NULL); /* names and types are UTF-8: sg_val_check_text passed */
    if (json_array_size(c->guesses)) {
        json_object_set(c->root, "guesses", c->guesses);
        sg_buf_printf(c->report, "guesses the body does not prove (kept in task.json "
                                 "\"guesses\"; check each):\n");
        size_t gi;
        json_t *gv;
        json_array_foreach(c->guesses, gi, gv)
            sg_buf_printf(c->report, "  - %s\n", json_string_value(gv));
    }
    if (!c->nout)
        return sg_errf(c->err,
                       "%s: kernel %s writes none of its pointer parameters as far as task init "
                       "can see: write the buffers' roles (\"out\" or \"inout\") into task.json "
                       "by hand (docs/task-format.md)",
                       c->path, c->k->name);
    return 0;
}

/* The folder: task.json, and the kernel file (with its //@launch plan) as both
 * baseline.EXT and reference.EXT. */
static int write_task(init_ctx *c, const char *out_dir, const char *basef, const char *reff) {
    const sg_val_init_opts *o = c->o;
    const char *text_src = c->src.data;
    int rc;
    if (o->launch) { /* the given plan replaces the file's */
        int dropped;
        drop_plan_lines(c->src.data, c->plan_given && strstr(o->launch, "//@scratch"), &c->kept,
                        &dropped);
        if (dropped)
            sg_buf_printf(c->report, "note: --launch replaces the file's %d //@launch line%s\n",
                          dropped, dropped == 1 ? "" : "s");
        text_src = c->kept.data;
    }
    if (!strstr(text_src, "//@launch")) sg_buf_append_str(&c->body, c->lines.data);
    sg_buf_append_str(&c->body, text_src);
    if ((rc = sg_mkdir_p(out_dir, c->err)) < 0) return rc;
    char *text = json_dumps(c->root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    SG_ASSERT(text != NULL); /* an object always dumps; out of memory aborted already */
    rc = write_file(out_dir, "task.json", text, o->force, c->err);
    free(text);
    if (rc == 0) rc = write_file(out_dir, basef, c->body.data, o->force, c->err);
    if (rc == 0) rc = write_file(out_dir, reff, c->body.data, o->force, c->err);
    return rc;
}

int sg_val_task_init(const char *path, const char *out_dir, const sg_val_init_opts *opts,
                     sg_buf *report, sg_err *err) {
    static const sg_val_init_opts none;
    init_ctx *c = sg_xcalloc(1, sizeof *c); /* large (the kernels): not on the stack */
    c->path = path;
    c->o = opts ? opts : &none;
    c->report = report;
    c->err = err;
    int rc = -1;
    size_t pl = strlen(path);
    if (pl > 3 && !strcmp(path + pl - 3, ".py")) {
        free(c);
        return sg_val_task_init_torch(path, out_dir, opts, report, err);
    }
    if (sg_dev_lang_of_path(path, &c->lang) < 0) {
        rc = sg_errf(err, "%s: expected a .cu or .cl kernel, or a KernelBench-format .py problem",
                     path);
        goto out;
    }
    if (sg_val_read_source(path, &c->src, err) < 0) goto out;
    if (sg_val_check_text(c->src.data ? c->src.data : "", c->src.len, err) < 0) {
        rc = sg_err_prefix(err, "%s", path); /* before any write */
        goto out;
    }
    sg_buf_append(&c->src, "", 0);
    sg_val_strip_comments(c->src.data, c->src.len, &c->clean);
    c->t = (task_kernels){.ks = sg_xcalloc(SG_INFER_MAX_KERNELS, sizeof *c->t.ks),
                          .bs = sg_xcalloc(SG_INFER_MAX_KERNELS, sizeof *c->t.bs),
                          .n = 1};
    c->guesses = json_array();
    c->plan_given = c->o->launch && strstr(c->o->launch, "//@") != NULL;
    const char *ext = c->lang == SG_DEV_CUDA ? "cu" : "cl";
    char basef[16], reff[16];
    snprintf(basef, sizeof basef, "baseline.%s", ext);
    snprintf(reff, sizeof reff, "reference.%s", ext);
    if ((rc = read_kernels(c)) == 0 && (rc = collect_sizes(c)) == 0 &&
        (rc = plan_launches(c)) == 0 && (rc = task_json(c, basef, reff)) == 0)
        rc = write_task(c, out_dir, basef, reff);
out:
    json_decref(c->root);
    json_decref(c->guesses);
    free(c->t.pl);
    free(c->t.ks);
    free(c->t.bs);
    sg_buf_free(&c->src);
    sg_buf_free(&c->clean);
    sg_buf_free(&c->body);
    sg_buf_free(&c->lines);
    sg_buf_free(&c->kept);
    free(c);
    return rc;
}
