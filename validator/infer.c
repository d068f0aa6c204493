/* `task init`: a task folder inferred from a bare kernel's signature. */
#include "common/paths.h"
#include "validator/internal.h"

#include "common/buf.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_PARAMS 32

typedef struct param {
    char name[64];
    int pointer, is_const;
    sg_val_type type;
} param;

/* Map the words of a parameter declaration to an element type. */
static int type_of(const char *decl, sg_val_type *t) {
    static const struct {
        const char *word;
        sg_val_type t;
    } words[] = {{"double", SG_VAL_F64},   {"float", SG_VAL_F32}, {"size_t", SG_VAL_I64},
                 {"int64_t", SG_VAL_I64},  {"long", SG_VAL_I64},  {"uint32_t", SG_VAL_U32},
                 {"unsigned", SG_VAL_U32}, {"uint", SG_VAL_U32},  {"int32_t", SG_VAL_I32},
                 {"int", SG_VAL_I32}};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        const char *p = decl;
        size_t n = strlen(words[i].word);
        while ((p = strstr(p, words[i].word))) {
            int left = p == decl || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
            int right = !(isalnum((unsigned char)p[n]) || p[n] == '_');
            if (left && right) {
                *t = words[i].t;
                return 0;
            }
            p += n;
        }
    }
    return -1;
}

static int parse_param(char *decl, param *p, const char *path, sg_err *err) {
    while (isspace((unsigned char)*decl)) decl++;
    size_t n = strlen(decl);
    while (n && isspace((unsigned char)decl[n - 1])) decl[--n] = 0;
    size_t e = n;
    while (e && (isalnum((unsigned char)decl[e - 1]) || decl[e - 1] == '_')) e--;
    if (e == n || n - e >= sizeof p->name)
        return sg_errf(err, "%s: cannot find the parameter name in \"%s\"", path, decl);
    memcpy(p->name, decl + e, n - e);
    p->name[n - e] = 0;
    char *star = strchr(decl, '*');
    p->pointer = star != NULL;
    const char *c = strstr(decl, "const");
    p->is_const = c && (!star || c < star);
    if (type_of(decl, &p->type) < 0)
        return sg_errf(err,
                       "%s: parameter \"%s\" has a type task init does not know (\"%s\"; "
                       "use float, double, int, unsigned, long)",
                       path, p->name, decl);
    return 0;
}

/* Find the first kernel: its name and parameters. */
static int signature(const char *src, sg_dev_lang lang, const char *path, char *name, size_t nn,
                     param *ps, int *np, sg_err *err) {
    const char *kw = lang == SG_DEV_CUDA ? "__global__" : "kernel";
    const char *k = src;
    while ((k = strstr(k, kw))) {
        int left = k == src || !(isalnum((unsigned char)k[-1]));
        if (left && !(isalnum((unsigned char)k[strlen(kw)]) || k[strlen(kw)] == '_')) break;
        k += strlen(kw);
    }
    if (!k)
        return sg_errf(err, "%s: no %s function found", path,
                       lang == SG_DEV_CUDA ? "__global__" : "__kernel");
    const char *open = strchr(k, '('), *close = open ? strchr(open, ')') : NULL;
    if (!open || !close) return sg_errf(err, "%s: cannot read the kernel's parameter list", path);
    const char *e = open;
    while (e > k && isspace((unsigned char)e[-1])) e--;
    const char *b = e;
    while (b > k && (isalnum((unsigned char)b[-1]) || b[-1] == '_')) b--;
    if (b == e || (size_t)(e - b) >= nn)
        return sg_errf(err, "%s: cannot read the kernel's name", path);
    memcpy(name, b, (size_t)(e - b));
    name[e - b] = 0;
    sg_buf lb = {0};
    sg_buf_append(&lb, open + 1, (size_t)(close - open - 1));
    char *list = sg_buf_steal(&lb);
    int rc = 0;
    *np = 0;
    for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok && rc == 0;
         tok = strtok_r(NULL, ",", &save)) {
        if (*np == MAX_PARAMS)
            rc = sg_errf(err, "%s: more than %d parameters", path, MAX_PARAMS);
        else
            rc = parse_param(tok, &ps[(*np)++], path, err);
    }
    free(list);
    return rc;
}

static int write_file(const char *dir, const char *name, const char *text, sg_err *err) {
    sg_buf p = {0};
    sg_buf_printf(&p, "%s/%s", dir, name);
    FILE *f = fopen(p.data, "wx");
    int rc = 0;
    if (!f || fputs(text, f) < 0) rc = sg_errf(err, "cannot write %s: %s", p.data, strerror(errno));
    if (f && fclose(f) != 0 && rc == 0)
        rc = sg_errf(err, "cannot write %s: %s", p.data, strerror(errno));
    sg_buf_free(&p);
    return rc;
}

static int64_t default_size(int nsizes) { return nsizes == 1 ? 1 << 20 : nsizes == 2 ? 1024 : 256; }

int sg_val_task_init(const char *path, const char *out_dir, const sg_val_sizes *given,
                     sg_buf *report, sg_err *err) {
    sg_dev_lang lang;
    if (sg_dev_lang_of_path(path, &lang) < 0)
        return sg_errf(err, "%s: expected a .cu or .cl file", path);
    sg_buf src = {0}, clean = {0}, prod = {0}, body = {0};
    if (sg_buf_read_file_max(&src, path, SG_SOURCE_MAX) < 0) {
        char why[sizeof err->msg];
        return sg_errf(err, "%s", sg_read_error(why, sizeof why, path, SG_SOURCE_MAX));
    }
    sg_buf_append(&src, "", 0);
    sg_val_strip_comments(src.data, src.len, &clean);
    char name[64];
    param ps[MAX_PARAMS];
    int np = 0, rc = signature(clean.data, lang, path, name, sizeof name, ps, &np, err);
    json_t *root = NULL;
    if (rc < 0) goto out;
    for (int g = 0; given && g < given->n; g++) {
        int i = 0;
        while (i < np && (ps[i].pointer || ps[i].type == SG_VAL_F32 || ps[i].type == SG_VAL_F64 ||
                          strcmp(ps[i].name, given->name[g])))
            i++;
        if (i == np) {
            rc = sg_errf(err, "--size %s: kernel %s has no integer parameter of that name",
                         given->name[g], name);
            goto out;
        }
        int64_t most = ps[i].type == SG_VAL_I32   ? INT32_MAX
                       : ps[i].type == SG_VAL_U32 ? UINT32_MAX
                                                  : INT64_MAX;
        if (given->value[g] > most) { /* the kernel would get a wrapped value */
            rc = sg_errf(
                err, "--size %s=%lld: parameter %s of kernel %s is %s; the most it holds is %lld",
                given->name[g], (long long)given->value[g], given->name[g], name,
                sg_val_type_name(ps[i].type), (long long)most);
            goto out;
        }
    }
    json_t *sizes = json_object(), *checks = json_array(), *c1 = json_object(), *c2 = json_object();
    json_t *bufs = json_array(), *scalars = json_array(), *args = json_array();
    int nsizes = 0;
    for (int i = 0; i < np; i++)
        nsizes += !ps[i].pointer && ps[i].type != SG_VAL_F32 && ps[i].type != SG_VAL_F64;
    static const int odd[] = {1001, 33, 17, 9, 5, 3};
    int si = 0;
    for (int i = 0; i < np; i++) {
        param *p = &ps[i];
        json_array_append_new(args, json_string(p->name));
        if (p->pointer) continue;
        if (p->type == SG_VAL_F32 || p->type == SG_VAL_F64) {
            json_array_append_new(scalars, json_pack("{s:s, s:s, s:f}", "name", p->name, "type",
                                                     sg_val_type_name(p->type), "value", 1.0));
            sg_buf_printf(report, "scalar %s: %s, value 1.0 (a guess)\n", p->name,
                          sg_val_type_name(p->type));
            continue;
        }
        int64_t v = default_size(nsizes);
        if (given) sg_val_sizes_get(given, p->name, &v);
        json_object_set_new(sizes, p->name, json_integer(v));
        json_object_set_new(c1, p->name, json_integer(1));
        json_object_set_new(c2, p->name, json_integer(odd[si < 6 ? si : 5]));
        si++;
        json_array_append_new(scalars, json_pack("{s:s, s:s, s:s}", "name", p->name, "type",
                                                 sg_val_type_name(p->type), "value", p->name));
        sg_buf_printf(&prod, "%s%s", prod.len ? "*" : "", p->name);
        sg_buf_printf(report, "size %s = %lld (check shapes use 1 and %d)\n", p->name, (long long)v,
                      odd[si - 1 < 6 ? si - 1 : 5]);
    }
    if (!prod.len) sg_buf_append_str(&prod, "1");
    int nout = 0;
    for (int i = 0; i < np; i++) {
        param *p = &ps[i];
        if (!p->pointer) continue;
        nout += !p->is_const;
        json_array_append_new(bufs, json_pack("{s:s, s:s, s:s, s:s}", "name", p->name, "type",
                                              sg_val_type_name(p->type), "count", prod.data, "role",
                                              p->is_const ? "in" : "out"));
        sg_buf_printf(
            report, "buffer %s: %s %s, %s elements (a guess: edit \"count\" in task.json)\n",
            p->name, p->is_const ? "input" : "output", sg_val_type_name(p->type), prod.data);
    }
    json_array_append_new(checks, c1);
    json_array_append_new(checks, c2);
    const char *ext = lang == SG_DEV_CUDA ? "cu" : "cl";
    char base[16], ref[16];
    snprintf(base, sizeof base, "baseline.%s", ext);
    snprintf(ref, sizeof ref, "reference.%s", ext);
    root =
        json_pack("{s:s, s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:o, s:f}", "name", name, "description",
                  "Made by specgen task init from a kernel file; check the guesses.", "baseline",
                  base, "reference", ref, "sizes", sizes, "check_sizes", checks, "buffers", bufs,
                  "scalars", scalars, "args", args, "target_speedup", 2.0);
    if (!nout) {
        rc = sg_errf(err, "%s: kernel %s has no non-const pointer parameter, so no output", path,
                     name);
        goto out;
    }
    if (!strstr(src.data, "//@launch")) {
        sg_buf_printf(&body, "//@launch %s grid=ceil_div(%s,256) block=256\n", name, prod.data);
        sg_buf_printf(
            report,
            "launch: %s grid=ceil_div(%s,256) block=256 (a guess: edit the //@launch line)\n", name,
            prod.data);
    }
    sg_buf_append_str(&body, src.data);
    if ((rc = sg_mkdir_p(out_dir, err)) < 0) goto out;
    char *text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    rc = write_file(out_dir, "task.json", text, err);
    free(text);
    if (rc == 0) rc = write_file(out_dir, base, body.data, err);
    if (rc == 0) rc = write_file(out_dir, ref, body.data, err);
out:
    json_decref(root);
    sg_buf_free(&src);
    sg_buf_free(&clean);
    sg_buf_free(&prod);
    sg_buf_free(&body);
    return rc;
}
