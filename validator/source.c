/* Source hygiene: size bound, include allow-list, and the normalized hash the compile
 * cache keys on (comments and whitespace folded; //@ plan lines kept, they matter). */
#include "validator/validator.h"

#include "common/buf.h"
#include "common/srcnorm.h"
#include "device/device.h"
#include "validator/internal.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Copy src into out with comments removed (//@ lines kept), backslash-newlines joined,
 * `%:` and the trigraph `??=` read as `#`, `??/` as a backslash, and a lone carriage
 * return read as a newline (compilers take all of these). Newlines are kept so line
 * numbers stay close. */
void sg_val_strip_comments(const char *s, size_t n, sg_buf *out) {
    for (size_t i = 0; i < n;) {
        char c = s[i];
        size_t bs = c == '\\'                                                       ? 1
                    : (c == '?' && i + 2 < n && s[i + 1] == '?' && s[i + 2] == '/') ? 3
                                                                                    : 0;
        if (bs && i + bs < n && s[i + bs] == '\r' && i + bs + 1 < n && s[i + bs + 1] == '\n') bs++;
        if (bs && i + bs < n && (s[i + bs] == '\n' || s[i + bs] == '\r')) {
            i += bs + 1;
        } else if (c == '\r') {
            if (!(i + 1 < n && s[i + 1] == '\n')) sg_buf_append(out, "\n", 1);
            i++;
        } else if (c == '?' && i + 2 < n && s[i + 1] == '?' && s[i + 2] == '=') {
            sg_buf_append(out, "#", 1);
            i += 3;
        } else if (c == '/' && i + 1 < n && s[i + 1] == '/' && !(i + 2 < n && s[i + 2] == '@')) {
            while (i < n && s[i] != '\n') i++;
        } else if (c == '/' && i + 1 < n && s[i + 1] == '*') {
            i += 2;
            while (i + 1 < n && !(s[i] == '*' && s[i + 1] == '/')) {
                if (s[i] == '\n') sg_buf_append(out, "\n", 1);
                i++;
            }
            i += 2;
            sg_buf_append(out, " ", 1);
        } else if (c == '"' || c == '\'') {
            size_t j = i + 1;
            while (j < n && s[j] != c && s[j] != '\n') j += s[j] == '\\' ? 2 : 1;
            if (j > n) j = n;
            sg_buf_append(out, s + i, (j < n ? j + 1 : n) - i);
            i = j + 1;
        } else if (c == '%' && i + 1 < n && s[i + 1] == ':') {
            sg_buf_append(out, "#", 1);
            i += 2;
        } else {
            sg_buf_append(out, &c, 1);
            i++;
        }
    }
    if (!out->data) sg_buf_append(out, "", 0);
}

/* CUDA: the toolkit's device headers (by name, or by folder: cub/, cuda/, nv/,
 * cooperative_groups/), and the standard headers specgen serves to NVRTC itself
 * (device/nvrtc_std.c: <float.h>, <cmath>, <climits>, <cstdint>, <assert.h>, ...). */
static const char *const cuda_headers[] = {"cuda_runtime.h",
                                           "cuda_fp16.h",
                                           "cuda_bf16.h",
                                           "cuda_fp8.h",
                                           "cuda_fp6.h",
                                           "cuda_fp4.h",
                                           "mma.h",
                                           "cuda_pipeline.h",
                                           "cuda_awbarrier.h",
                                           "cooperative_groups.h",
                                           "math_constants.h",
                                           "curand_kernel.h",
                                           "curand.h",
                                           "vector_types.h",
                                           "vector_functions.h",
                                           "cuda_runtime_api.h",
                                           "device_launch_parameters.h",
                                           "cuda_fp16.hpp",
                                           "cuda_bf16.hpp",
                                           "sm_60_atomic_functions.h",
                                           "sm_61_intrinsics.h",
                                           NULL};
static const char *const cuda_folders[] = {"cub/", "cuda/", "nv/", "cooperative_groups/", NULL};

static int allowed_angle(const char *h, sg_dev_lang lang) {
    if (lang != SG_DEV_CUDA || strstr(h, "..")) return 0;
    if (sg_nvrtc_serves(h)) return 1;
    for (int i = 0; cuda_folders[i]; i++)
        if (!strncmp(h, cuda_folders[i], strlen(cuda_folders[i]))) return 1;
    for (int i = 0; cuda_headers[i]; i++)
        if (!strcmp(h, cuda_headers[i])) return 1;
    return 0;
}

static int check_include(const char *p, int line, sg_dev_lang lang, const char *dir, sg_err *err) {
    while (*p == ' ' || *p == '\t') p++;
    char close = *p == '"' ? '"' : *p == '<' ? '>' : 0;
    const char *end = close ? strchr(p + 1, close) : NULL;
    const char *nl = strchr(p, '\n');
    if (!close || !end || (nl && end > nl))
        return sg_errf(err, "line %d: #include must name a file literally (\"file.h\" or <header>)",
                       line);
    char name[256];
    size_t n = (size_t)(end - p - 1);
    if (n == 0 || n >= sizeof name) return sg_errf(err, "line %d: bad #include file name", line);
    memcpy(name, p + 1, n);
    name[n] = 0;
    if (close == '>') {
        if (allowed_angle(name, lang)) return 0;
        return sg_errf(
            err,
            "line %d: #include <%s> is not allowed (allowed: %s, and \"files\" in the task "
            "folder; docs/task-format.md lists them)",
            line, name,
            lang == SG_DEV_CUDA ? "the CUDA toolkit's device headers (cuda_*.h, cub/, cuda/, "
                                  "cooperative_groups/, mma.h, curand_kernel.h) and the standard "
                                  "headers <cmath> <cfloat> <climits> <cstdint> <cassert> and "
                                  "their .h forms, <type_traits> <limits> <utility> <array> "
                                  "<tuple> (libcu++)"
                                : "no <headers> in OpenCL C");
    }
    if (name[0] == '/' || strstr(name, ".."))
        return sg_errf(err,
                       "line %d: #include \"%s\" is not allowed: only files inside the task folder "
                       "may be included",
                       line, name);
    sg_buf path = {0};
    sg_buf_printf(&path, "%s/%s", dir, name);
    struct stat st;
    int ok = stat(path.data, &st) == 0 && S_ISREG(st.st_mode);
    sg_buf_free(&path);
    if (!ok && lang == SG_DEV_CUDA && sg_nvrtc_serves(name)) return 0; /* "assert.h" */
    if (!ok)
        return sg_errf(err, "line %d: #include \"%s\": no such file in the task folder", line,
                       name);
    return 0;
}

int sg_val_check_source(const char *src, size_t len, sg_dev_lang lang, const char *task_dir,
                        sg_err *err) {
    if (len > SG_VAL_MAX_SOURCE)
        return sg_errf(err, "source is %zu bytes, over the limit of %d", len, SG_VAL_MAX_SOURCE);
    if (memchr(src, 0, len)) return sg_errf(err, "source contains a NUL byte");
    sg_buf s = {0};
    sg_val_strip_comments(src, len, &s);
    int line = 1, rc = 0, blank = 1;
    for (const char *p = s.data; *p && rc == 0; p++) {
        if (*p == '\n') {
            line++;
            continue;
        }
        if (p != s.data && p[-1] != '\n') continue; /* only at line starts */
        const char *q = p;
        while (*q == ' ' || *q == '\t' || *q == '\f' || *q == '\v') q++;
        if (*q && *q != '\n') blank = 0;
        if (*q != '#') continue;
        q++;
        while (*q == ' ' || *q == '\t' || *q == '\f' || *q == '\v') q++;
        if (!strncmp(q, "include_next", 12) || !strncmp(q, "import", 6) || !strncmp(q, "embed", 5))
            rc = sg_errf(err, "line %d: this kind of #include is not allowed", line);
        else if (!strncmp(q, "include", 7))
            rc = check_include(q + 7, line, lang, task_dir, err);
    }
    sg_buf_free(&s);
    if (rc == 0 && blank) rc = sg_errf(err, "the source is empty");
    return rc;
}
