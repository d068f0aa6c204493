/* The KernelBench export (`specgen results export --kernelbench`, docs/kernelbench.md):
 * a task imported from a KernelBench problem and a CUDA kernel for it become one Python
 * file that KernelBench's harness takes as its custom model — the problem file, then a
 * ModelNew(Model) whose forward runs the kernel's launch plan through a C++ launcher that
 * torch's load_inline compiles with the kernel source. The launch plan is evaluated here,
 * at the task's main sizes (the problem's own), with the validator's own expression
 * evaluator; scalars are passed as their bytes in the task's types, as the CUDA backend
 * passes them (cuLaunchKernel's parameter array: cudaLaunchKernel here). */
#include "common/buf.h"
#include "common/json.h"
#include "common/srcnorm.h"
#include "validator/elem.h"
#include "validator/kb_export.h"
#include "validator/validator.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* torch's dtype name for a buffer type (NULL: none KernelBench's harness uses). */
static const char *torch_dtype(sg_val_type t) {
    switch (t) {
    case SG_VAL_F32: return "float32";
    case SG_VAL_F64: return "float64";
    case SG_VAL_F16: return "float16";
    case SG_VAL_BF16: return "bfloat16";
    case SG_VAL_I32: return "int32";
    case SG_VAL_I64: return "int64";
    case SG_VAL_U8: return "uint8";
    case SG_VAL_I8: return "int8";
    default: return NULL;
    }
}

/* expr at the sizes (NULL: 1 for a grid or block dimension, 0 for smem). */
static int eval(const char *expr, const sg_val_sizes *s, const char *what, int64_t *v,
                sg_err *err) {
    if (!expr) {
        *v = strcmp(what, "smem") != 0;
        return 0;
    }
    if (sg_val_expr_eval(expr, s, v, err) < 0) return sg_err_prefix(err, "%s", what);
    return 0;
}

/* "&b[3]" for a buffer or scratch (their device pointers), "s2" for a scalar's bytes. */
static int arg_ref(const sg_val_task *t, const sg_val_plan *p, const char *name, char *out,
                   size_t n, sg_err *err) {
    for (int i = 0; i < t->nbuf; i++)
        if (!strcmp(t->buf[i].name, name)) return snprintf(out, n, "&b[%d]", i), 0;
    for (int i = 0; i < p->nscratch; i++)
        if (!strcmp(p->scratch[i].name, name)) return snprintf(out, n, "&b[%d]", t->nbuf + i), 0;
    for (int i = 0; i < t->nscalar; i++)
        if (!strcmp(t->scalar[i].name, name)) return snprintf(out, n, "s%d", i), 0;
    return sg_errf(err, "launch argument \"%s\" is no buffer, scratch or scalar of the task", name);
}

/* Each scalar's bytes in its type, at the main sizes. */
static int scalars(const sg_val_task *t, const sg_val_sizes *s, sg_buf *b, sg_err *err) {
    for (int i = 0; i < t->nscalar; i++) {
        const sg_val_scalar *sc = &t->scalar[i];
        int64_t iv = 0;
        if (sc->expr && eval(sc->expr, s, "scalar", &iv, err) < 0) return -1;
        double v = sc->expr ? (double)iv : sc->literal;
        unsigned char bytes[8] = {0};
        sg_val_elem_set(sc->type, bytes, 0, v);
        sg_buf_printf(b, "    alignas(8) static unsigned char s%d[8] = {", i);
        for (int k = 0; k < 8; k++) sg_buf_printf(b, "%s0x%02x", k ? ", " : "", bytes[k]);
        sg_buf_printf(b, "}; /* %s = %.17g (%s) */\n", sc->name, v, sg_val_type_name(sc->type));
    }
    return 0;
}

/* One launch: its arguments, grid, block and shared memory at the main sizes. */
static int launch(const sg_val_task *t, const sg_val_plan *p, const sg_val_launch *l,
                  const sg_val_sizes *s, sg_buf *b, sg_err *err) {
    int64_t g[3], bl[3], smem;
    for (int d = 0; d < 3; d++)
        if (eval(l->grid[d], s, "grid", &g[d], err) < 0 ||
            eval(l->block[d], s, "block", &bl[d], err) < 0)
            return -1;
    if (eval(l->smem, s, "smem", &smem, err) < 0) return -1;
    for (int d = 0; d < 3; d++)
        if (g[d] < 1 || bl[d] < 1 || g[d] > 0xffffffffLL || bl[d] > 1024)
            return sg_errf(err, "grid %lld or block %lld (dimension %d) cannot be launched",
                           (long long)g[d], (long long)bl[d], d);
    sg_buf_printf(b, "    { /* //@launch %s (line %d) */\n        void *a[] = {", l->kernel,
                  l->line);
    int na = l->narg ? l->narg : t->narg;
    char **names = l->narg ? l->args : t->args;
    for (int i = 0; i < na; i++) {
        char ref[32];
        if (arg_ref(t, p, names[i], ref, sizeof ref, err) < 0) return -1;
        sg_buf_printf(b, "%s, ", ref);
    }
    sg_buf_printf(b,
                  "nullptr};\n        sg_go((const void *)&%s, dim3(%lld, %lld, %lld), "
                  "dim3(%lld, %lld, %lld), %lld, a, stream, \"%s\");\n    }\n",
                  l->kernel, (long long)g[0], (long long)g[1], (long long)g[2], (long long)bl[0],
                  (long long)bl[1], (long long)bl[2], (long long)smem, l->kernel);
    return 0;
}

static const char launcher_head[] =
    "\n// ---- specgen: the launch plan at the problem's own sizes ----\n"
    "#include <ATen/cuda/CUDAContext.h>\n"
    "#include <stdexcept>\n"
    "#include <string>\n"
    "#include <vector>\n"
    "\n"
    "static void sg_go(const void *k, dim3 grid, dim3 block, size_t smem, void **args,\n"
    "                  cudaStream_t stream, const char *name) {\n"
    "    cudaError_t e = cudaSuccess;\n"
    "    if (smem > 0) /* above 48 KiB (or with static shared memory) the cap must be raised */\n"
    "        e = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, "
    "(int)smem);\n"
    "    if (e == cudaSuccess) e = cudaLaunchKernel(k, grid, block, args, smem, stream);\n"
    "    if (e != cudaSuccess)\n"
    "        throw std::runtime_error(std::string(\"specgen kernel \") + name + \": \" +\n"
    "                                 cudaGetErrorString(e));\n"
    "}\n"
    "\n";

/* The C++ launcher appended to the kernel source. */
static int launcher(const sg_val_task *t, const sg_val_plan *p, const sg_val_sizes *s, sg_buf *b,
                    sg_err *err) {
    int n = t->nbuf + p->nscratch;
    sg_buf_append_str(b, launcher_head);
    sg_buf_printf(b,
                  "void sg_launch(std::vector<torch::Tensor> bufs) {\n"
                  "    if (bufs.size() != %d) throw std::runtime_error(\"specgen launcher: %d "
                  "buffers expected\");\n"
                  "    void *b[%d];\n"
                  "    for (size_t i = 0; i < bufs.size(); i++) b[i] = bufs[i].data_ptr();\n"
                  "    cudaStream_t stream = at::cuda::getCurrentCUDAStream();\n",
                  n, n, n);
    if (scalars(t, s, b, err) < 0) return -1;
    for (int i = 0; i < p->nlaunch; i++)
        if (launch(t, p, &p->launch[i], s, b, err) < 0)
            return sg_err_prefix(err, "//@launch %s (line %d)", p->launch[i].kernel,
                                 p->launch[i].line);
    sg_buf_append_str(b, "}\n");
    return 0;
}

/* text as a Python string literal: raw and triple-quoted where it can be (readable), else
 * a JSON string literal (which Python reads the same). */
static void py_string(sg_buf *b, const char *text) {
    size_t n = strlen(text);
    if (!strstr(text, "'''") && (n == 0 || text[n - 1] != '\\')) {
        sg_buf_append_str(b, "r'''");
        sg_buf_append_str(b, text);
        sg_buf_append_str(b, "'''");
    } else {
        sg_buf_append_json_string(b, text);
    }
}

/* The buffers' and scratch's Python tables. */
static int tables(const sg_val_task *t, const sg_val_plan *p, const sg_val_sizes *s, sg_buf *bufs,
                  sg_buf *scratch, sg_err *err) {
    int outs = 0;
    for (int i = 0; i < t->nbuf; i++) {
        const sg_val_buffer *bf = &t->buf[i];
        const char *dt = torch_dtype(bf->type);
        int64_t count;
        if (!dt)
            return sg_errf(err, "buffer %s: type %s has no KernelBench counterpart", bf->name,
                           sg_val_type_name(bf->type));
        if (bf->role == SG_VAL_INOUT)
            return sg_errf(err, "buffer %s is inout: a KernelBench forward returns its output",
                           bf->name);
        outs += bf->role == SG_VAL_OUT;
        if (eval(bf->count, s, "count", &count, err) < 0) return -1;
        sg_buf_printf(bufs, "    (\"%s\", \"%s\", \"%s\", %lld),\n", bf->name,
                      bf->role == SG_VAL_OUT ? "out" : "in", dt, (long long)count);
    }
    if (outs != 1)
        return sg_errf(err, "the task has %d outputs; a KernelBench forward returns one tensor",
                       outs);
    for (int i = 0; i < p->nscratch; i++) {
        int64_t count;
        if (eval(p->scratch[i].count, s, "scratch", &count, err) < 0) return -1;
        sg_buf_printf(scratch, "    (\"%s\", %lld),\n", p->scratch[i].name,
                      (long long)(count * (int64_t)sg_val_type_size(p->scratch[i].type)));
    }
    return 0;
}

/* A source that includes a file of the task folder cannot travel alone. */
static int local_include(const char *src, sg_err *err) {
    for (const char *l = src; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        const char *p = l + strspn(l, " \t");
        if (*p != '#') continue;
        p += 1 + strspn(p + 1, " \t");
        if (strncmp(p, "include", 7)) continue;
        p += 7 + strspn(p + 7, " \t");
        if (*p == '"')
            return sg_errf(err,
                           "the kernel includes %.*s from the task folder; the export carries one "
                           "source: paste the header into the kernel",
                           (int)strcspn(p, "\n"), p);
    }
    return 0;
}

/* The Python file from the pieces (tables, cuda text), filled into the template. */
static void fill(const sg_val_task *t, const char *model_src, const char *note, const char *cuda,
                 const sg_val_sizes *s, sg_buf *bufs, sg_buf *scratch, sg_buf *out) {
    sg_buf cuda_lit = {0}, cpp_lit = {0}, ext = {0}, nt = {0};
    py_string(&cuda_lit, cuda);
    py_string(&cpp_lit, "#include <torch/extension.h>\n#include <vector>\n"
                        "void sg_launch(std::vector<torch::Tensor> bufs);\n");
    char sizes[512];
    sg_val_sizes_format(s, sizes, sizeof sizes);
    sg_buf_printf(&ext, "specgen_%s_%08x", t->name,
                  (unsigned)(sg_hash64(cuda, strlen(cuda)) & 0xffffffffu));
    for (char *c = ext.data; *c; c++)
        if (!(*c == '_' || (*c >= '0' && *c <= '9') || ((*c | 32) >= 'a' && (*c | 32) <= 'z')))
            *c = '_';
    for (const char *c = note ? note : ""; *c; c++) /* the docstring stays a docstring */
        sg_buf_append_str(&nt, *c == '"' ? "'" : *c == '\\' ? "/" : (char[2]){*c, 0});
    const char *keys[] = {"name", "note",    "sizes",   "model", "cuda",
                          "cpp",  "buffers", "scratch", "ext"};
    const char *vals[] = {t->name,
                          nt.data ? nt.data : "",
                          sizes,
                          model_src,
                          cuda_lit.data,
                          cpp_lit.data,
                          bufs->data ? bufs->data : "",
                          scratch->data ? scratch->data : "",
                          ext.data};
    sg_buf_fill(out, sg_val_kb_model_new_py, keys, vals, 9);
    sg_buf_free(&cuda_lit);
    sg_buf_free(&cpp_lit);
    sg_buf_free(&ext);
    sg_buf_free(&nt);
}

int sg_val_kb_export_task(const sg_val_task *t, const char *model_src, const char *source,
                          const char *note, sg_buf *out, sg_err *err) {
    sg_val_plan p = {0};
    sg_buf bufs = {0}, scratch = {0}, cuda = {0};
    const sg_val_sizes *s = &t->sizes; /* the problem's own: what KernelBench runs */
    int rc = local_include(source, err);
    if (rc == 0) rc = sg_val_plan_parse(source, t, "the kernel", &p, err);
    if (rc == 0 && p.nlaunch == 0)
        rc = sg_errf(err, "the kernel has no //@launch line: the export needs its launch plan");
    if (rc == 0) rc = tables(t, &p, s, &bufs, &scratch, err);
    if (rc == 0) {
        sg_buf_append_str(&cuda, source);
        rc = launcher(t, &p, s, &cuda, err);
    }
    if (rc == 0) fill(t, model_src, note, cuda.data, s, &bufs, &scratch, out);
    sg_val_plan_free(&p);
    sg_buf_free(&bufs);
    sg_buf_free(&scratch);
    sg_buf_free(&cuda);
    return rc;
}

/* The task's torch reference ("reference": {"torch": FILE}): its text, or an error that
 * says the task did not come from a KernelBench problem. */
static int torch_reference(const char *dir, sg_buf *model, sg_err *err) {
    sg_buf path = {0};
    sg_buf_printf(&path, "%s/task.json", dir);
    json_t *root = sg_json_load_file(path.data, err);
    const char *f = json_string_value(json_object_get(json_object_get(root, "reference"), "torch"));
    int rc = root ? 0 : -1;
    if (rc == 0 && !f)
        rc = sg_errf(err,
                     "%s has no torch reference (\"reference\": {\"torch\": \"model.py\"}): only a "
                     "task imported from a KernelBench problem (specgen task init PROBLEM.py) "
                     "can be exported as a ModelNew",
                     path.data);
    else if (rc == 0 && (strchr(f, '/') || f[0] == '.' || !f[0]))
        rc = sg_errf(err, "%s: reference.torch \"%s\" is not a file of the task folder", path.data,
                     f);
    if (rc == 0) {
        sg_buf_clear(&path);
        sg_buf_printf(&path, "%s/%s", dir, f);
        if (sg_buf_read_file(model, path.data) < 0)
            rc = sg_errf(err, "cannot read the problem file %s: %s", path.data, strerror(errno));
    }
    json_decref(root);
    sg_buf_free(&path);
    return rc;
}

int sg_val_kb_export(const char *task_dir, const char *source, const char *note, sg_buf *out,
                     sg_err *err) {
    sg_buf model = {0};
    sg_val_task t;
    int rc = torch_reference(task_dir, &model, err);
    if (rc == 0 && (rc = sg_val_task_load(task_dir, &t, err)) == 0) {
        rc = sg_val_kb_export_task(&t, model.data, source, note, out, err);
        sg_val_task_free(&t);
    }
    sg_buf_free(&model);
    return rc;
}
