/* task.json loading: every error names the file, the field and the bad value. */
#include "validator/elem.h"
#include "validator/internal.h"

#include "common/buf.h"
#include "common/json.h"

#include <limits.h>
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

/* Whether file (a path in dir) resolves, through symbolic links, to a place outside dir. */
int sg_val_outside(const char *dir, const char *file) {
    char rd[PATH_MAX], rf[PATH_MAX];
    if (!realpath(dir, rd) || !realpath(file, rf)) return 1;
    size_t n = strlen(rd);
    return strncmp(rf, rd, n) || (rf[n] != '/' && strcmp(rd, "/"));
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
            if (!strcmp(k, "torch")) continue; /* task_torch.c */
            if (sg_dev_lang_parse(k, &l, NULL) < 0 || !json_is_string(f))
                return sg_errf(err,
                               "%s: field \"%s.%s\": expected \"cuda\", \"opencl\" or \"torch\" "
                               "with a file name",
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
        if (sg_val_outside(t->dir, p.data)) {
            sg_errf(err,
                    "%s: field \"%s\": \"%s\" is a symbolic link that leads out of the task "
                    "folder; sources must live in the task folder",
                    path, key, files[l]);
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

/* "bytes" / "flops": a size expression, a number, or (bytes only) "auto". */
static int load_amount(sg_val_task *t, json_t *root, const char *key, char **expr, double *value,
                       const char *path, sg_err *err) {
    json_t *v = json_object_get(root, key);
    *value = -1;
    if (!v) return 0;
    if (json_is_number(v) && json_number_value(v) >= 0) {
        *value = json_number_value(v);
        return 0;
    }
    if (!json_is_string(v))
        return sg_errf(err, "%s: field \"%s\": expected a size expression%s or a number, got %s",
                       path, key, expr == &t->bytes ? ", \"auto\"" : "", sg_json_type_name(v));
    if (expr == &t->bytes && !strcmp(json_string_value(v), "auto")) {
        t->bytes_auto = 1;
        return 0;
    }
    *expr = sg_xstrdup(json_string_value(v));
    double b, f;
    if (sg_val_task_roofline(t, &t->sizes, &b, &f, err) < 0 ||
        sg_val_task_roofline(t, &t->cpu_sizes, &b, &f, err) < 0)
        return sg_err_prefix(err, "%s", path);
    return 0;
}

static const char *const compute_names[] = {"auto",        "fp32",       "fp64",
                                            "tensor_tf32", "tensor_f16", "tensor_bf16",
                                            "tensor_fp8",  "tensor_int8"};

const char *sg_val_compute_name(sg_val_compute c) {
    return (unsigned)c < sizeof compute_names / sizeof *compute_names ? compute_names[c] : "?";
}

/* "compute": which peak the roofline measures the task against (docs/task-format.md). */
static int load_compute(sg_val_task *t, json_t *root, const char *path, sg_err *err) {
    const char *v = NULL;
    t->compute = SG_VAL_COMPUTE_AUTO;
    if (sg_json_get_str(root, "compute", 0, &v, path, err) < 0) return -1;
    if (!v) return 0;
    for (size_t i = 1; i < sizeof compute_names / sizeof *compute_names; i++)
        if (!strcmp(v, compute_names[i])) {
            t->compute = (sg_val_compute)i;
            return 0;
        }
    return sg_errf(err, "%s: field \"compute\": unknown kind of arithmetic \"%s\" (%s)", path, v,
                   SG_VAL_COMPUTE_NAMES);
}

static int known_field(json_t *root, const char *path, sg_err *err) {
    static const char *const keys[] = {
        "name",           "description", "baseline",  "reference", "sizes",
        "check_sizes",    "cpu_sizes",   "buffers",   "scalars",   "args",
        "target_speedup", "bytes",       "flops",     "compute",   "guesses",
        "origin",         "precision",   "constants", NULL};
    return sg_json_check_keys(root, keys, path, err);
}

/* Every buffer count at every shape the task names, so a bad expression fails at load. */
static int check_counts(sg_val_task *t, const char *path, sg_err *err) {
    const sg_val_sizes *shapes[2] = {&t->sizes, &t->cpu_sizes};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < t->nbuf; i++) {
            int64_t n;
            sg_err e;
            if (sg_val_expr_eval(t->buf[i].count, shapes[k], &n, &e) < 0)
                return sg_errf(err, "%s: field \"buffers[%d]\".count: %s", path, i, e.msg);
        }
    return 0;
}

/* randint's size expressions at every shape (main, cpu, each check), where the buffer has
 * elements: they evaluate and lo <= hi, so a bad one fails at load, not in a worker. */
static int check_inits(sg_val_task *t, const char *path, sg_err *err) {
    for (int k = -2; k < t->ncheck; k++) {
        const sg_val_sizes *s = k == -2 ? &t->sizes : k == -1 ? &t->cpu_sizes : &t->check[k];
        char shape[40] = "\"sizes\"";
        if (k == -1) snprintf(shape, sizeof shape, "\"cpu_sizes\"");
        if (k >= 0) snprintf(shape, sizeof shape, "\"check_sizes[%d]\"", k);
        for (int i = 0; i < t->nbuf; i++)
            for (int d = 0; d < t->buf[i].ndist; d++) {
                int64_t n;
                sg_val_dist at;
                sg_err e;
                if (!t->buf[i].dist[d].lo[0] || t->buf[i].role == SG_VAL_OUT ||
                    sg_val_expr_eval(t->buf[i].count, s, &n, &e) < 0 || n == 0)
                    continue;
                if (sg_val_dist_at(&t->buf[i].dist[d], s, &at, &e) < 0)
                    return sg_errf(err, "%s: field \"buffers[%d]\": at shape %s: %s", path, i,
                                   shape, e.msg);
            }
    }
    return 0;
}

static int load(sg_val_task *t, json_t *root, const char *path, sg_err *err) {
    const char *name = NULL, *desc = "";
    json_t *sizes, *checks = NULL, *cpu = NULL, *bufs, *scalars = NULL, *args;
    char where[512];
    if (!json_is_object(root))
        return sg_errf(err, "%s: expected an object, got %s", path, sg_json_type_name(root));
    if (known_field(root, path, err) < 0 ||
        sg_json_get_str(root, "name", 1, &name, path, err) < 0 ||
        sg_json_get_str(root, "description", 0, &desc, path, err) < 0 ||
        sg_json_get_obj(root, "sizes", 1, &sizes, path, err) < 0 ||
        sg_json_get_arr(root, "check_sizes", 0, &checks, path, err) < 0 ||
        sg_json_get_obj(root, "cpu_sizes", 0, &cpu, path, err) < 0 ||
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
    t->cpu_sizes = t->sizes;
    snprintf(where, sizeof where, "%s: field \"cpu_sizes\"", path);
    if (cpu && load_check(cpu, &t->sizes, &t->cpu_sizes, where, err) < 0) return -1;
    t->has_cpu_sizes = cpu != NULL;
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
        if (sg_val_load_buffer(json_array_get(bufs, (size_t)i), &t->buf[i], where, err) < 0)
            return -1;
        for (int j = 0; j < i; j++)
            if (!strcmp(t->buf[j].name, t->buf[i].name))
                return sg_errf(err, "%s: name \"%s\" is already buffers[%d]", where, t->buf[i].name,
                               j);
    }
    if (check_counts(t, path, err) < 0 || check_inits(t, path, err) < 0) return -1;
    t->nscalar = scalars ? (int)json_array_size(scalars) : 0;
    t->scalar = sg_xcalloc((size_t)t->nscalar + 1, sizeof *t->scalar);
    for (int i = 0; i < t->nscalar; i++) {
        snprintf(where, sizeof where, "%s: field \"scalars[%d]\"", path, i);
        if (sg_val_load_scalar(json_array_get(scalars, (size_t)i), &t->scalar[i], where, err) < 0)
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
    json_t *gs = NULL;
    if (sg_json_get_arr(root, "guesses", 0, &gs, path, err) < 0) return -1;
    t->nguess = gs ? (int)json_array_size(gs) : 0;
    t->guesses = sg_xcalloc((size_t)t->nguess + 1, sizeof *t->guesses);
    for (int i = 0; i < t->nguess; i++) {
        json_t *g = json_array_get(gs, (size_t)i);
        if (!json_is_string(g))
            return sg_errf(err, "%s: field \"guesses[%d]\": expected a string, got %s", path, i,
                           sg_json_type_name(g));
        t->guesses[i] = sg_xstrdup(json_string_value(g));
    }
    int nout = 0;
    for (int i = 0; i < t->nbuf; i++) nout += t->buf[i].role != SG_VAL_IN;
    if (!nout)
        return sg_errf(err, "%s: field \"buffers\": no buffer has role \"out\" or \"inout\"", path);
    if (load_amount(t, root, "bytes", &t->bytes, &t->bytes_value, path, err) < 0 ||
        load_amount(t, root, "flops", &t->flops, &t->flops_value, path, err) < 0 ||
        load_compute(t, root, path, err) < 0)
        return -1;
    if (load_sources(t, root, "baseline", t->source, path, err) < 0 ||
        load_sources(t, root, "reference", t->reference, path, err) < 0 ||
        sg_val_load_torch(t, root, path, err) < 0)
        return -1;
    for (int i = 0; i < t->nbuf; i++)
        if ((t->buf[i].type == SG_VAL_FP8_E4M3 || t->buf[i].type == SG_VAL_FP8_E5M2) &&
            (t->source[SG_DEV_OPENCL] || t->reference[SG_DEV_OPENCL]))
            return sg_errf(err,
                           "%s: buffer %s is %s, which OpenCL has no type for: an fp8 task gives "
                           "only CUDA sources (\"baseline\": {\"cuda\": ...})",
                           path, t->buf[i].name, sg_val_type_name(t->buf[i].type));
    return 0;
}

const sg_val_sizes *sg_val_main_sizes(const sg_val_task *t, int cpu_device) {
    return cpu_device && t->has_cpu_sizes ? &t->cpu_sizes : &t->sizes;
}

int sg_val_task_ndist(const sg_val_task *t) {
    int n = 1;
    for (int i = 0; i < t->nbuf; i++)
        if (t->buf[i].role != SG_VAL_OUT && t->buf[i].ndist > n) n = t->buf[i].ndist;
    return n;
}

static int amount(const char *key, const char *expr, double value, const sg_val_sizes *s,
                  double *out, sg_err *err) {
    int64_t n;
    sg_err e;
    *out = value;
    if (!expr) return 0;
    if (sg_val_expr_eval(expr, s, &n, &e) < 0) return sg_errf(err, "field \"%s\": %s", key, e.msg);
    *out = (double)n;
    return 0;
}

int sg_val_task_roofline(const sg_val_task *t, const sg_val_sizes *s, double *bytes, double *flops,
                         sg_err *err) {
    if (amount("bytes", t->bytes, t->bytes_value, s, bytes, err) < 0 ||
        amount("flops", t->flops, t->flops_value, s, flops, err) < 0)
        return -1;
    if (!t->bytes_auto) return 0;
    *bytes = 0;
    for (int i = 0; i < t->nbuf; i++) {
        int64_t n;
        sg_err e;
        if (sg_val_expr_eval(t->buf[i].count, s, &n, &e) < 0)
            return sg_errf(err, "buffer %s: %s", t->buf[i].name, e.msg);
        *bytes += (double)n * (double)sg_val_type_size(t->buf[i].type) *
                  (t->buf[i].role == SG_VAL_INOUT ? 2 : 1);
    }
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
    /* Messages name the file, then the field and the reason, in 1 KiB: a long path keeps
     * its last 240 bytes ("…/deep/task.json"), so that neither is cut off. */
    const char *shown = path.data;
    char tail[256];
    if (path.len > 240) {
        const char *p = path.data + path.len - 240;
        while ((*p & 0xC0) == 0x80) p++; /* not in the middle of a UTF-8 character */
        snprintf(tail, sizeof tail, "…%s", p);
        shown = tail;
    }
    int rc = root ? load(t, root, shown, err) : -1;
    json_decref(root);
    sg_buf_free(&path);
    if (rc < 0) sg_val_task_free(t);
    return rc;
}

int sg_val_task_load_cli(const char *dir, sg_val_task *t, sg_err *err) {
    if (sg_val_task_load(dir, t, err) < 0) return sg_err_prefix(err, "invalid task");
    return 0;
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
    free(t->bytes);
    free(t->flops);
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
    for (int i = 0; t->guesses && i < t->nguess; i++) free(t->guesses[i]);
    free(t->guesses);
    free(t->torch_ref);
    free(t->precision);
    free(t->constants);
    free(t->origin_format);
    free(t->origin_file);
    free(t->origin_sha256);
    memset(t, 0, sizeof *t);
}
