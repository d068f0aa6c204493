/* `task init`: kernel signatures, with typedefs, templates, vector types and
 * __launch_bounds__ (infer.h). */
#include "validator/infer.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int idch(char c) { return isalnum((unsigned char)c) || c == '_'; }

/* The word at s of length n is a whole word inside src. */
static int whole(const char *src, const char *s, size_t n) {
    return (s == src || !idch(s[-1])) && !idch(s[n]);
}

/* Past the group opened at *p ('(' '[' '{' '<'), or NULL when it never closes. */
static const char *skip_group(const char *p) {
    char open = *p, close = open == '(' ? ')' : open == '[' ? ']' : open == '{' ? '}' : '>';
    int depth = 0;
    for (; *p; p++) {
        if (*p == '"' || *p == '\'') { /* literals: skip them whole */
            char q = *p++;
            while (*p && *p != q) p += *p == '\\' && p[1] ? 2 : 1;
            if (!*p) return NULL;
            continue;
        }
        if (*p == open) depth++;
        if (*p == close && --depth == 0) return p + 1;
    }
    return NULL;
}

static void copy_trim(char *dst, size_t n, const char *s, size_t len) {
    while (len && isspace((unsigned char)*s)) s++, len--;
    while (len && isspace((unsigned char)s[len - 1])) len--;
    if (len >= n) len = n - 1;
    memcpy(dst, s, len);
    dst[len] = 0;
    for (char *c = dst; *c; c++)
        if (isspace((unsigned char)*c)) *c = ' ';
}

/* The template parameter list right before the kernel's declaration, if any. */
static void template_of(const char *src, const char *kw, char *out, size_t n) {
    out[0] = 0;
    const char *s = kw;
    while (s > src && s[-1] != ';' && s[-1] != '}' && s[-1] != '{') s--;
    const char *t = s;
    while ((t = strstr(t, "template")) && t < kw) {
        if (whole(src, t, 8)) {
            const char *lt = strchr(t, '<');
            const char *gt = lt && lt < kw ? skip_group(lt) : NULL;
            if (gt && gt <= kw) copy_trim(out, n, lt + 1, (size_t)(gt - lt - 2));
            return;
        }
        t += 8;
    }
}

static int split_params(sg_infer_kernel *k, const char *open, const char *close, const char *path,
                        sg_err *err) {
    k->np = 0;
    const char *a = open + 1;
    int depth = 0;
    for (const char *p = a; p <= close - 1 + 1; p++) {
        if (p < close && (*p == '(' || *p == '<' || *p == '[')) depth++;
        if (p < close && (*p == ')' || *p == '>' || *p == ']')) depth--;
        if (p == close || (*p == ',' && depth == 0)) {
            char decl[160];
            copy_trim(decl, sizeof decl, a, (size_t)(p - a));
            a = p + 1;
            if (!decl[0] || !strcmp(decl, "void")) continue;
            if (k->np == SG_INFER_MAX_PARAMS)
                return sg_errf(err, "%s: kernel %s has more than %d parameters", path, k->name,
                               SG_INFER_MAX_PARAMS);
            sg_infer_param *q = &k->p[k->np++];
            memset(q, 0, sizeof *q);
            snprintf(q->decl, sizeof q->decl, "%s", decl);
            char *eq = strchr(decl, '='); /* a default argument */
            if (eq) *eq = 0;
            size_t e = strlen(decl);
            while (e && (isspace((unsigned char)decl[e - 1]) || decl[e - 1] == ']')) {
                if (decl[e - 1] == ']') { /* float x[] */
                    char *lb = strrchr(decl, '[');
                    if (!lb) break;
                    *lb = 0;
                    e = (size_t)(lb - decl);
                    q->pointer = 1;
                    continue;
                }
                e--;
            }
            size_t b = e;
            while (b && idch(decl[b - 1])) b--;
            if (b == e || e - b >= sizeof q->name)
                return sg_errf(err, "%s: kernel %s: cannot find the parameter name in \"%s\"", path,
                               k->name, q->decl);
            memcpy(q->name, decl + b, e - b);
            q->name[e - b] = 0;
            decl[b] = 0;
            char *star = strchr(decl, '*');
            q->pointer |= star != NULL;
            const char *c = decl;
            q->is_const = 0;
            while ((c = strstr(c, "const"))) {
                if (whole(decl, c, 5) && (!star || c < star)) q->is_const = 1;
                c += 5;
            }
            char *amp = strchr(decl, '&');
            if (amp) q->pointer = -1; /* a reference: not a kernel parameter init can fill */
            snprintf(q->decl, sizeof q->decl, "%s", decl); /* the type alone */
        }
    }
    return 0;
}

int sg_infer_kernels(const char *src, int cuda, sg_infer_kernel *ks, int *nk, const char *path,
                     sg_err *err) {
    const char *kw = cuda ? "__global__" : "kernel";
    size_t kwn = strlen(kw);
    *nk = 0;
    for (const char *k = strstr(src, kw); k; k = strstr(k + 1, kw)) {
        int ok = whole(src, k, kwn); /* OpenCL: kernel or __kernel */
        if (!cuda && !ok && k - src >= 2 && k[-1] == '_' && k[-2] == '_' &&
            (k - src == 2 || !idch(k[-3])) && !idch(k[kwn]))
            ok = 1;
        if (!ok) continue;
        sg_infer_kernel kk;
        memset(&kk, 0, sizeof kk);
        const char *p = k + kwn, *open = NULL;
        while (*p && *p != ';' && *p != '{') {
            if (idch(*p)) {
                const char *w = p;
                while (idch(*p)) p++;
                size_t n = (size_t)(p - w);
                const char *q = p;
                while (isspace((unsigned char)*q)) q++;
                if (n == 17 && !strncmp(w, "__launch_bounds__", 17) && *q == '(') {
                    kk.launch_bounds = atoi(q + 1);
                    if (!(p = skip_group(q))) break;
                    continue;
                }
                if (*q == '(' && n < sizeof kk.name) {
                    memcpy(kk.name, w, n);
                    kk.name[n] = 0;
                    open = q;
                    break;
                }
            } else {
                p++;
            }
        }
        if (!open) continue;
        const char *close = skip_group(open);
        if (!close)
            return sg_errf(err, "%s: kernel %s: its parameter list never closes", path, kk.name);
        const char *body = close;
        while (*body && *body != '{' && *body != ';') body++;
        if (*body != '{') continue; /* a declaration: the definition comes later */
        const char *end = skip_group(body);
        kk.body = body;
        kk.body_len = end ? (size_t)(end - body) : strlen(body);
        if (cuda) template_of(src, k, kk.tparams, sizeof kk.tparams);
        sg_err e2;
        if (split_params(&kk, open, close - 1, path, &e2) < 0) /* fails only if picked */
            snprintf(kk.bad, sizeof kk.bad, "%s", e2.msg);
        if (*nk == SG_INFER_MAX_KERNELS) break;
        ks[(*nk)++] = kk;
    }
    if (*nk == 0)
        return sg_errf(err, "%s: no %s function with a body found", path,
                       cuda ? "__global__" : "__kernel");
    return 0;
}

/* ---- element types ---- */

static const struct {
    const char *word, *type;
    int vec;
} base[] = {
    {"float", "f32", 1},
    {"double", "f64", 1},
    {"half", "f16", 1},
    {"__half", "f16", 1},
    {"__nv_bfloat16", "bf16", 1},
    {"nv_bfloat16", "bf16", 1},
    {"__nv_fp8_e4m3", "fp8_e4m3", 1},
    {"__nv_fp8_e5m2", "fp8_e5m2", 1},
    {"half2", "f16", 2},
    {"__half2", "f16", 2},
    {"__nv_bfloat162", "bf16", 2},
    {"nv_bfloat162", "bf16", 2},
    {"float2", "f32", 2},
    {"float3", "f32", 3},
    {"float4", "f32", 4},
    {"double2", "f64", 2},
    {"int", "i32", 1},
    {"int2", "i32", 2},
    {"int4", "i32", 4},
    {"uint", "u32", 1},
    {"uint2", "u32", 2},
    {"uint4", "u32", 4},
    {"int32_t", "i32", 1},
    {"uint32_t", "u32", 1},
    {"int64_t", "i64", 1},
    {"long", "i64", 1},
    {"size_t", "i64", 1},
    {"ptrdiff_t", "i64", 1},
    {"uint64_t", "i64", 1},
    {"char", "i8", 1},
    {"int8_t", "i8", 1},
    {"uint8_t", "u8", 1},
    {"uchar", "u8", 1},
    {"char4", "i8", 4},
    {"uchar4", "u8", 4},
    {"bool", "u8", 1},
    {"char2", "i8", 2},
    {"uchar2", "u8", 2},
};

static int skip_word(const char *w, size_t n) {
    static const char *const q[] = {
        "const",  "volatile",          "__restrict__", "__restrict", "restrict",
        "struct", "__grid_constant__", "register",     "signed",     "__global",
        "global", "__constant",        "constant",     "typename",   NULL};
    for (int i = 0; q[i]; i++)
        if (strlen(q[i]) == n && !strncmp(w, q[i], n)) return 1;
    return 0;
}

/* The definition of a typedef / using alias of `name` in src, or NULL. */
static int typedef_of(const char *src, const char *name, char *out, size_t n) {
    size_t nl = strlen(name);
    for (const char *t = strstr(src, "typedef"); t; t = strstr(t + 1, "typedef")) {
        if (!whole(src, t, 7)) continue;
        const char *semi = strchr(t, ';');
        if (!semi || memchr(t, '{', (size_t)(semi - t))) continue;
        const char *e = semi;
        while (e > t && isspace((unsigned char)e[-1])) e--;
        if ((size_t)(e - t) > nl && !strncmp(e - nl, name, nl) && whole(src, e - nl, nl)) {
            copy_trim(out, n, t + 7, (size_t)(e - nl - t - 7));
            return 1;
        }
    }
    for (const char *u = strstr(src, "using"); u; u = strstr(u + 1, "using")) {
        if (!whole(src, u, 5)) continue;
        const char *q = u + 5;
        while (isspace((unsigned char)*q)) q++;
        if (strncmp(q, name, nl) || idch(q[nl])) continue;
        q += nl;
        while (isspace((unsigned char)*q)) q++;
        const char *semi = strchr(q, ';');
        if (*q == '=' && semi) {
            copy_trim(out, n, q + 1, (size_t)(semi - q - 1));
            return 1;
        }
    }
    return 0;
}

/* The template argument for the parameter `name`, or NULL. */
static int targ_of(const sg_infer_kernel *k, const char *targs, const char *name, char *out,
                   size_t n) {
    char tp[160], ta[160];
    snprintf(tp, sizeof tp, "%s", k->tparams);
    snprintf(ta, sizeof ta, "%s", targs ? targs : "");
    char *s1 = NULL, *s2 = NULL;
    char *p = strtok_r(tp, ",", &s1), *a = strtok_r(ta, ",", &s2);
    for (; p; p = strtok_r(NULL, ",", &s1), a = a ? strtok_r(NULL, ",", &s2) : NULL) {
        size_t e = strlen(p);
        char *eq = strchr(p, '=');
        if (eq) e = (size_t)(eq - p);
        while (e && isspace((unsigned char)p[e - 1])) e--;
        size_t b = e;
        while (b && idch(p[b - 1])) b--;
        if (e - b == strlen(name) && !strncmp(p + b, name, e - b)) {
            if (a)
                copy_trim(out, n, a, strlen(a));
            else if (eq)
                copy_trim(out, n, eq + 1, strlen(eq + 1));
            else
                return 0;
            return 1;
        }
    }
    return 0;
}

static void resolve(const char *src, const sg_infer_kernel *k, const char *targs, const char *decl,
                    sg_infer_param *q, int depth) {
    int uns = 0, longs = 0, chr = 0, shrt = 0;
    char first[64] = "";
    for (const char *p = decl; *p;) {
        if (!idch(*p)) {
            p++;
            continue;
        }
        const char *w = p;
        while (idch(*p)) p++;
        size_t n = (size_t)(p - w);
        if (skip_word(w, n)) continue;
        if (n == 8 && !strncmp(w, "unsigned", 8))
            uns = 1;
        else if (n == 4 && !strncmp(w, "long", 4))
            longs++;
        else if (n == 4 && !strncmp(w, "char", 4))
            chr = 1;
        else if (n == 5 && !strncmp(w, "short", 5))
            shrt = 1;
        else if (!first[0] && n < sizeof first && strncmp(w, "std", n) && strncmp(w, "cuda", n)) {
            memcpy(first, w, n);
            first[n] = 0;
        }
    }
    q->vec = 1;
    if (shrt) return; /* 16-bit integers: no task type */
    if (chr) {
        q->type = uns ? "u8" : "i8";
        return;
    }
    if (longs) {
        q->type = "i64";
        return;
    }
    if (uns && (!first[0] || !strcmp(first, "int"))) {
        q->type = "u32";
        return;
    }
    for (size_t i = 0; i < sizeof base / sizeof base[0]; i++)
        if (!strcmp(first, base[i].word)) {
            q->type = base[i].type;
            q->vec = base[i].vec;
            q->boolean = !strcmp(first, "bool");
            return;
        }
    char def[160];
    if (depth < 8 &&
        (targ_of(k, targs, first, def, sizeof def) || typedef_of(src, first, def, sizeof def)))
        resolve(src, k, targs, def, q, depth + 1);
}

int sg_infer_types(const char *src, sg_infer_kernel *k, const char *targs, sg_buf *report,
                   const char *path, sg_err *err) {
    for (int i = 0; i < k->np; i++) {
        sg_infer_param *q = &k->p[i];
        if (q->pointer < 0)
            return sg_errf(err,
                           "%s: kernel %s: parameter \"%s\" is a reference (%s&); a kernel "
                           "parameter init can fill is a pointer or a number",
                           path, k->name, q->name, q->decl);
        resolve(src, k, targs, q->decl, q, 0);
        if (!q->type)
            return sg_errf(err,
                           "%s: kernel %s: parameter \"%s\" has a type task init cannot map "
                           "(\"%s\"; known: float, double, half, __nv_bfloat16, __nv_fp8_e4m3, "
                           "int, unsigned, long, int8_t/uint8_t/char/bool, their vector types "
                           "such as float4, and typedefs of these). Write the buffer into "
                           "task.json by hand (docs/task-format.md)",
                           path, k->name, q->name, q->decl);
        q->is_float = !q->pointer && (!strcmp(q->type, "f32") || !strcmp(q->type, "f64"));
        if (!q->pointer && (q->vec > 1 || !strcmp(q->type, "f16") || !strcmp(q->type, "bf16") ||
                            !strncmp(q->type, "fp8", 3)))
            return sg_errf(err,
                           "%s: kernel %s: by-value parameter \"%s\" (%s) has no task scalar "
                           "type init can fill (f32 f64 i32 u32 i64 u8 i8): change the kernel to "
                           "take one of those, or write task.json by hand",
                           path, k->name, q->name, q->decl);
        int td = 1; /* say when a typedef or template argument was followed */
        for (size_t b = 0; b < sizeof base / sizeof base[0]; b++)
            if (strstr(q->decl, base[b].word)) td = 0;
        if (td && report)
            sg_buf_printf(report, "type of %s: \"%s\" resolves to %s%s\n", q->name, q->decl,
                          q->type, q->vec > 1 ? " (a vector: counted in elements)" : "");
        if (q->boolean && report)
            sg_buf_printf(report,
                          "type of %s: bool is stored as u8 (one byte; inputs are 0 or 1, "
                          "outputs compared exactly)\n",
                          q->name);
    }
    return 0;
}
