/* task.json loading: every error names the file, the field and the bad value. */
#include "validator/validator.h"

#include "common/buf.h"
#include "common/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int load_sizes(json_t *obj, sg_val_sizes *s, const char *where, sg_err *err) {
    if (!json_is_object(obj))
        return sg_errf(err, "%s: expected an object of NAME: integer, got %s", where,
                       sg_json_type_name(obj));
    const char *k;
    json_t *v;
    s->n = 0;
    json_object_foreach(obj, k, v) {
        if (s->n >= SG_VAL_MAX_SIZES)
            return sg_errf(err, "%s: more than %d sizes", where, SG_VAL_MAX_SIZES);
        if (strlen(k) >= sizeof s->name[0] || !k[0])
            return sg_errf(err, "%s: size name \"%s\" is empty or too long", where, k);
        if (!json_is_integer(v) || json_integer_value(v) < 0)
            return sg_errf(err, "%s: size \"%s\" must be a non-negative integer, got %s", where, k,
                           sg_json_type_name(v));
        snprintf(s->name[s->n], sizeof s->name[0], "%s", k);
        s->value[s->n++] = json_integer_value(v);
    }
    return 0;
}

/* A check shape may give a subset of the sizes; the rest come from the main shape. */
static int load_check(json_t *obj, const sg_val_sizes *main, sg_val_sizes *s, const char *where,
                      sg_err *err) {
    sg_val_sizes part;
    if (load_sizes(obj, &part, where, err) < 0) return -1;
    *s = *main;
    for (int i = 0; i < part.n; i++) {
        int j = 0;
        while (j < s->n && strcmp(s->name[j], part.name[i])) j++;
        if (j == s->n)
            return sg_errf(err, "%s: size \"%s\" is not one of the task's sizes", where,
                           part.name[i]);
        s->value[j] = part.value[i];
    }
    return 0;
}

/* "uniform(-4,4)", "normal(0,1)", "randint(0,255)", "const(1)" */
static int parse_init(const char *s, sg_val_buffer *b, const char *where, sg_err *err) {
    static const struct {
        const char *name;
        sg_val_init_kind kind;
        int nargs;
    } kinds[] = {{"uniform", SG_VAL_INIT_UNIFORM, 2},
                 {"normal", SG_VAL_INIT_NORMAL, 2},
                 {"randint", SG_VAL_INIT_RANDINT, 2},
                 {"const", SG_VAL_INIT_CONST, 1}};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        size_t n = strlen(kinds[i].name);
        if (strncmp(s, kinds[i].name, n) || s[n] != '(') continue;
        int end = -1;
        int got = kinds[i].nargs == 2 ? sscanf(s + n, "(%lf ,%lf )%n", &b->a, &b->b, &end)
                                      : sscanf(s + n, "(%lf )%n", &b->a, &end);
        if (got != kinds[i].nargs || end < 0 || s[n + (size_t)end]) break;
        b->init = kinds[i].kind;
        if (b->init != SG_VAL_INIT_CONST && b->a > b->b) break;
        return 0;
    }
    return sg_errf(
        err,
        "%s: field \"init\": bad value \"%s\" (expected uniform(lo,hi), normal(mean,sd), "
        "randint(lo,hi) or const(v))",
        where, s);
}

static int load_buffer(json_t *o, sg_val_buffer *b, const char *where, sg_err *err) {
    const char *name = NULL, *type = NULL, *count = NULL, *role = NULL, *init = NULL;
    if (sg_json_get_str(o, "name", 1, &name, where, err) < 0 ||
        sg_json_get_str(o, "type", 1, &type, where, err) < 0 ||
        sg_json_get_str(o, "count", 1, &count, where, err) < 0 ||
        sg_json_get_str(o, "role", 1, &role, where, err) < 0 ||
        sg_json_get_str(o, "init", 0, &init, where, err) < 0)
        return -1;
    b->name = sg_xstrdup(name);
    b->count = sg_xstrdup(count);
    if (sg_val_type_parse(type, &b->type) < 0)
        return sg_errf(err, "%s: field \"type\": unknown type \"%s\" (f32 f64 i32 u32 i64)", where,
                       type);
    if (!strcmp(role, "in"))
        b->role = SG_VAL_IN;
    else if (!strcmp(role, "out"))
        b->role = SG_VAL_OUT;
    else
        return sg_errf(err, "%s: field \"role\": bad value \"%s\" (expected in or out)", where,
                       role);
    int is_float = b->type == SG_VAL_F32 || b->type == SG_VAL_F64;
    b->init = is_float ? SG_VAL_INIT_UNIFORM : SG_VAL_INIT_RANDINT;
    b->a = is_float ? -1 : 0;
    b->b = is_float ? 1 : 100;
    if (init && parse_init(init, b, where, err) < 0) return -1;
    b->atol = is_float ? 1e-5 : 0;
    b->rtol = is_float ? 1e-5 : 0;
    if (sg_json_get_num(o, "atol", 0, &b->atol, where, err) < 0 ||
        sg_json_get_num(o, "rtol", 0, &b->rtol, where, err) < 0)
        return -1;
    if (b->atol < 0 || b->rtol < 0)
        return sg_errf(err, "%s: tolerances must not be negative", where);
    return 0;
}

static int load_scalar(json_t *o, sg_val_scalar *s, const char *where, sg_err *err) {
    const char *name = NULL, *type = NULL;
    if (sg_json_get_str(o, "name", 1, &name, where, err) < 0 ||
        sg_json_get_str(o, "type", 1, &type, where, err) < 0)
        return -1;
    s->name = sg_xstrdup(name);
    if (sg_val_type_parse(type, &s->type) < 0)
        return sg_errf(err, "%s: field \"type\": unknown type \"%s\"", where, type);
    json_t *v = json_object_get(o, "value");
    if (json_is_string(v))
        s->expr = sg_xstrdup(json_string_value(v));
    else if (json_is_number(v))
        s->literal = json_number_value(v);
    else
        return sg_errf(err, "%s: field \"value\" must be a size expression or a number, got %s",
                       where, v ? sg_json_type_name(v) : "nothing");
    return 0;
}

/* "baseline": "baseline.cu" or {"cuda": "baseline.cu", "opencl": "baseline.cl"} */
static int load_sources(const sg_val_task *t, json_t *root, const char *key, char **out,
                        const char *path, sg_err *err) {
    json_t *v = json_object_get(root, key);
    if (!v) return sg_errf(err, "%s: missing required field \"%s\"", path, key);
    const char *files[SG_DEV_NLANG] = {0};
    if (json_is_string(v)) {
        sg_dev_lang l;
        if (sg_dev_lang_of_path(json_string_value(v), &l) < 0)
            return sg_errf(err, "%s: field \"%s\": \"%s\" is not a .cu or .cl file", path, key,
                           json_string_value(v));
        files[l] = json_string_value(v);
    } else if (json_is_object(v)) {
        const char *k;
        json_t *f;
        json_object_foreach(v, k, f) {
            sg_dev_lang l;
            if (sg_dev_lang_parse(k, &l, NULL) < 0 || !json_is_string(f))
                return sg_errf(
                    err, "%s: field \"%s.%s\": expected \"cuda\" or \"opencl\" with a file name",
                    path, key, k);
            files[l] = json_string_value(f);
        }
    } else {
        return sg_errf(err, "%s: field \"%s\": expected a file name or an object, got %s", path,
                       key, sg_json_type_name(v));
    }
    for (int l = 0; l < SG_DEV_NLANG; l++) {
        if (!files[l]) continue;
        if (strchr(files[l], '/') || files[l][0] == '.')
            return sg_errf(err, "%s: field \"%s\": \"%s\" must be a file in the task folder", path,
                           key, files[l]);
        sg_buf p = {0};
        sg_buf_printf(&p, "%s/%s", t->dir, files[l]);
        struct stat st;
        if (stat(p.data, &st) < 0) {
            sg_errf(err, "%s: field \"%s\": file \"%s\" does not exist", path, key, p.data);
            sg_buf_free(&p);
            return -1;
        }
        out[l] = sg_buf_steal(&p);
    }
    return 0;
}

static int known_name(const sg_val_task *t, const char *n) {
    for (int i = 0; i < t->nbuf; i++)
        if (!strcmp(t->buf[i].name, n)) return 1;
    for (int i = 0; i < t->nscalar; i++)
        if (!strcmp(t->scalar[i].name, n)) return 1;
    return 0;
}

static int load(sg_val_task *t, json_t *root, const char *path, sg_err *err) {
    const char *name = NULL, *desc = "";
    json_t *sizes, *checks = NULL, *bufs, *scalars = NULL, *args;
    char where[512];
    if (sg_json_get_str(root, "name", 1, &name, path, err) < 0 ||
        sg_json_get_str(root, "description", 0, &desc, path, err) < 0 ||
        sg_json_get_obj(root, "sizes", 1, &sizes, path, err) < 0 ||
        sg_json_get_arr(root, "check_sizes", 0, &checks, path, err) < 0 ||
        sg_json_get_arr(root, "buffers", 1, &bufs, path, err) < 0 ||
        sg_json_get_arr(root, "scalars", 0, &scalars, path, err) < 0 ||
        sg_json_get_arr(root, "args", 1, &args, path, err) < 0)
        return -1;
    t->name = sg_xstrdup(name);
    t->description = sg_xstrdup(desc);
    t->target_speedup = 1.0;
    if (sg_json_get_num(root, "target_speedup", 0, &t->target_speedup, path, err) < 0) return -1;
    snprintf(where, sizeof where, "%s: field \"sizes\"", path);
    if (load_sizes(sizes, &t->sizes, where, err) < 0) return -1;
    t->ncheck = checks ? (int)json_array_size(checks) : 0;
    t->check = sg_xcalloc((size_t)t->ncheck + 1, sizeof *t->check);
    for (int i = 0; i < t->ncheck; i++) {
        snprintf(where, sizeof where, "%s: field \"check_sizes[%d]\"", path, i);
        if (load_check(json_array_get(checks, (size_t)i), &t->sizes, &t->check[i], where, err) < 0)
            return -1;
    }
    t->nbuf = (int)json_array_size(bufs);
    t->buf = sg_xcalloc((size_t)t->nbuf + 1, sizeof *t->buf);
    for (int i = 0; i < t->nbuf; i++) {
        snprintf(where, sizeof where, "%s: field \"buffers[%d]\"", path, i);
        if (load_buffer(json_array_get(bufs, (size_t)i), &t->buf[i], where, err) < 0) return -1;
        int64_t n;
        sg_err e;
        if (sg_val_expr_eval(t->buf[i].count, &t->sizes, &n, &e) < 0)
            return sg_errf(err, "%s.count: %s", where, e.msg);
    }
    t->nscalar = scalars ? (int)json_array_size(scalars) : 0;
    t->scalar = sg_xcalloc((size_t)t->nscalar + 1, sizeof *t->scalar);
    for (int i = 0; i < t->nscalar; i++) {
        snprintf(where, sizeof where, "%s: field \"scalars[%d]\"", path, i);
        if (load_scalar(json_array_get(scalars, (size_t)i), &t->scalar[i], where, err) < 0)
            return -1;
        int64_t v;
        sg_err e;
        if (t->scalar[i].expr && sg_val_expr_eval(t->scalar[i].expr, &t->sizes, &v, &e) < 0)
            return sg_errf(err, "%s.value: %s", where, e.msg);
    }
    t->narg = (int)json_array_size(args);
    t->args = sg_xcalloc((size_t)t->narg + 1, sizeof *t->args);
    for (int i = 0; i < t->narg; i++) {
        json_t *a = json_array_get(args, (size_t)i);
        if (!json_is_string(a))
            return sg_errf(err, "%s: field \"args[%d]\": expected a buffer or scalar name, got %s",
                           path, i, sg_json_type_name(a));
        t->args[i] = sg_xstrdup(json_string_value(a));
        if (!known_name(t, t->args[i]))
            return sg_errf(err, "%s: field \"args[%d]\": \"%s\" is not a buffer or scalar", path, i,
                           t->args[i]);
    }
    int nout = 0;
    for (int i = 0; i < t->nbuf; i++) nout += t->buf[i].role == SG_VAL_OUT;
    if (!nout) return sg_errf(err, "%s: field \"buffers\": no buffer has role \"out\"", path);
    if (load_sources(t, root, "baseline", t->source, path, err) < 0 ||
        load_sources(t, root, "reference", t->reference, path, err) < 0)
        return -1;
    return 0;
}

int sg_val_task_load(const char *dir, sg_val_task *t, sg_err *err) {
    memset(t, 0, sizeof *t);
    size_t dl = strlen(dir);
    while (dl > 1 && dir[dl - 1] == '/') dl--;
    t->dir = sg_xmalloc(dl + 1);
    memcpy(t->dir, dir, dl);
    t->dir[dl] = 0;
    sg_buf path = {0};
    sg_buf_printf(&path, "%s/task.json", t->dir);
    json_t *root = sg_json_load_file(path.data, err);
    int rc = root ? load(t, root, path.data, err) : -1;
    json_decref(root);
    sg_buf_free(&path);
    if (rc < 0) sg_val_task_free(t);
    return rc;
}

void sg_val_task_free(sg_val_task *t) {
    free(t->dir);
    free(t->name);
    free(t->description);
    for (int l = 0; l < SG_DEV_NLANG; l++) {
        free(t->source[l]);
        free(t->reference[l]);
    }
    free(t->check);
    for (int i = 0; t->buf && i < t->nbuf; i++) {
        free(t->buf[i].name);
        free(t->buf[i].count);
    }
    free(t->buf);
    for (int i = 0; t->scalar && i < t->nscalar; i++) {
        free(t->scalar[i].name);
        free(t->scalar[i].expr);
    }
    free(t->scalar);
    for (int i = 0; t->args && i < t->narg; i++) free(t->args[i]);
    free(t->args);
    memset(t, 0, sizeof *t);
}
