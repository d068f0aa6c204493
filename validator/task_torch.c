/* task.json's fields for a PyTorch reference (docs/kernelbench.md, docs/task-format.md):
 * "reference": {"torch": "model.py"}, "baseline": {"torch": "eager"|"compile"},
 * "precision", "origin", "constants"; a "model" input distribution needs the torch
 * reference, which draws it. */
#include "validator/internal.h"

#include "common/buf.h"
#include "common/json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static json_t *torch_field(json_t *root, const char *key) {
    json_t *v = json_object_get(root, key);
    return json_is_object(v) ? json_object_get(v, "torch") : NULL;
}

static int load_ref(sg_val_task *t, json_t *v, const char *path, sg_err *err) {
    const char *f = json_string_value(v);
    if (!f || !f[0] || strchr(f, '/') || f[0] == '.')
        return sg_errf(err, "%s: field \"reference.torch\": expected a .py file in the task folder",
                       path);
    sg_buf p = {0};
    sg_buf_printf(&p, "%s/%s", t->dir, f);
    struct stat st;
    int rc = 0;
    if (stat(p.data, &st) < 0 || !S_ISREG(st.st_mode))
        rc =
            sg_errf(err, "%s: field \"reference.torch\": file \"%s\" does not exist", path, p.data);
    else if (sg_val_outside(t->dir, p.data))
        rc = sg_errf(err,
                     "%s: field \"reference.torch\": \"%s\" is a symbolic link that leads out of "
                     "the task folder",
                     path, f);
    if (rc == 0) t->torch_ref = sg_buf_steal(&p);
    sg_buf_free(&p);
    return rc;
}

static int load_baseline(sg_val_task *t, json_t *v, const char *path, sg_err *err) {
    const char *m = json_string_value(v);
    if (m && !strcmp(m, "eager"))
        t->torch_baseline = SG_VAL_TORCH_EAGER;
    else if (m && !strcmp(m, "compile"))
        t->torch_baseline = SG_VAL_TORCH_COMPILE;
    else
        return sg_errf(err, "%s: field \"baseline.torch\": expected \"eager\" or \"compile\"",
                       path);
    if (!t->torch_ref)
        return sg_errf(err,
                       "%s: field \"baseline.torch\": a torch baseline needs a torch reference "
                       "(\"reference\": {\"torch\": \"model.py\"})",
                       path);
    return 0;
}

static int load_meta(sg_val_task *t, json_t *root, const char *path, sg_err *err) {
    const char *prec = NULL;
    json_t *origin = NULL, *consts = NULL;
    if (sg_json_get_str(root, "precision", 0, &prec, path, err) < 0 ||
        sg_json_get_obj(root, "origin", 0, &origin, path, err) < 0 ||
        sg_json_get_obj(root, "constants", 0, &consts, path, err) < 0)
        return -1;
    if (prec && strcmp(prec, "fp32") && strcmp(prec, "fp16") && strcmp(prec, "bf16"))
        return sg_errf(err, "%s: field \"precision\": \"%s\" is not fp32, fp16 or bf16", path,
                       prec);
    t->precision = sg_xstrdup(prec ? prec : "fp32");
    if (consts) t->constants = json_dumps(consts, JSON_COMPACT | JSON_PRESERVE_ORDER);
    const char *k;
    json_t *v;
    if (origin) json_object_foreach(origin, k, v) {
            if (strcmp(k, "format") && strcmp(k, "file") && strcmp(k, "sha256"))
                return sg_errf(err, "%s: field \"origin.%s\": unknown (format, file, sha256)", path,
                               k);
            if (!json_is_string(v))
                return sg_errf(err, "%s: field \"origin.%s\": expected a string", path, k);
            char **to = !strcmp(k, "format") ? &t->origin_format
                        : !strcmp(k, "file") ? &t->origin_file
                                             : &t->origin_sha256;
            free(*to);
            *to = sg_xstrdup(json_string_value(v));
        }
    return 0;
}

int sg_val_load_torch(sg_val_task *t, json_t *root, const char *path, sg_err *err) {
    json_t *ref = torch_field(root, "reference"), *base = torch_field(root, "baseline");
    if (ref && load_ref(t, ref, path, err) < 0) return -1;
    if (base && load_baseline(t, base, path, err) < 0) return -1;
    if (load_meta(t, root, path, err) < 0) return -1;
    for (int i = 0; i < t->nbuf; i++)
        for (int d = 0; d < t->buf[i].ndist; d++)
            if (t->buf[i].dist[d].kind == SG_VAL_INIT_MODEL && !t->torch_ref)
                return sg_errf(err,
                               "%s: field \"buffers[%d]\": init \"model\" is drawn by a torch "
                               "reference, and this task has none",
                               path, i);
    if (!t->torch_ref) return 0;
    for (int l = 0; l < SG_DEV_NLANG; l++)
        if (t->reference[l])
            return sg_errf(err,
                           "%s: field \"reference\": a torch reference is the only reference "
                           "(drop \"%s\")",
                           path, sg_dev_lang_name((sg_dev_lang)l));
    return 0;
}

/* What the prompt shows of a torch task in place of a baseline kernel (docs/kernelbench.md):
 * the PyTorch source, the buffers in argument order with their counts, the sizes, the
 * constructor's constants; as comments, so that the block stays a valid kernel file. */
int sg_val_torch_prompt(const sg_val_task *t, sg_buf *out, sg_err *err) {
    sg_buf src = {0};
    if (sg_buf_read_file_max(&src, t->torch_ref, SG_SOURCE_MAX) < 0) {
        char why[sizeof err->msg];
        sg_errf(err, "%s", sg_read_error(why, sizeof why, t->torch_ref, SG_SOURCE_MAX));
        sg_buf_free(&src);
        return -1;
    }
    sg_buf_append(&src, "", 0);
    sg_buf_printf(
        out,
        "/* The baseline is PyTorch (torch %s, precision %s); no kernel exists yet.\n"
        "   Write kernels that compute forward()'s output from the buffers below,\n"
        "   with //@launch lines (args= names the buffers and sizes each kernel takes).\n\n",
        t->torch_baseline == SG_VAL_TORCH_COMPILE ? "compile" : "eager",
        t->precision ? t->precision : "fp32");
    sg_buf_append_str(out, "   Buffers (in argument order; count = elements):\n");
    for (int i = 0; i < t->nbuf; i++)
        sg_buf_printf(out, "     %-6s %-4s %s  count %s\n",
                      t->buf[i].role == SG_VAL_IN ? "in" : "out", sg_val_type_name(t->buf[i].type),
                      t->buf[i].name, t->buf[i].count);
    char sizes[1024];
    sg_val_sizes_format(&t->sizes, sizes, sizeof sizes);
    sg_buf_printf(out, "   Sizes: %s\n", sizes);
    if (t->constants) sg_buf_printf(out, "   Constructor arguments: %s\n", t->constants);
    sg_buf_append_str(out, "\n   The PyTorch problem (");
    sg_buf_append_str(out,
                      strrchr(t->torch_ref, '/') ? strrchr(t->torch_ref, '/') + 1 : "model.py");
    sg_buf_append_str(out, "):\n");
    for (const char *p = src.data; *p;) { /* no comment end inside the comment */
        const char *q = strstr(p, "*/");
        size_t n = q ? (size_t)(q - p) : strlen(p);
        sg_buf_append(out, p, n);
        if (!q) break;
        sg_buf_append_str(out, "* /");
        p = q + 2;
    }
    sg_buf_append_str(out, "\n*/\n");
    sg_buf_free(&src);
    return 0;
}
