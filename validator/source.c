/* Source hygiene: size bound, include allow-list, and the normalized hash the compile
 * cache keys on (comments and whitespace folded; //@ plan lines kept, they matter). */
#include "validator/validator.h"

#include "common/buf.h"
#include "common/json.h"
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

/* name, from "name" or <name> (close: '"' or '>'), as a #include or a __has_include
 * probe: an angle header from the allow-list, or a file inside the task folder. A probe
 * of any other path is refused the same way whether the file exists or not (a relative
 * name would otherwise be looked up from the worker's current folder too), so a
 * candidate learns nothing about the machine. */
static int check_name(const char *name, char close, int probe, int line, sg_dev_lang lang,
                      const char *dir, sg_err *err) {
    char shown[300];
    snprintf(shown, sizeof shown, probe ? "__has_include(%c%s%c)" : "#include %c%s%c",
             close == '>' ? '<' : '"', name, close);
    if (close == '>') {
        if (allowed_angle(name, lang)) return 0;
        return sg_errf(err,
                       "line %d: %s is not allowed (allowed: %s, and \"files\" in the task "
                       "folder; docs/task-format.md lists them)",
                       line, shown,
                       lang == SG_DEV_CUDA
                           ? "the CUDA toolkit's device headers (cuda_*.h, cub/, cuda/, "
                             "cooperative_groups/, mma.h, curand_kernel.h) and the standard "
                             "headers <cmath> <cfloat> <climits> <cstdint> <cassert> and "
                             "their .h forms, <type_traits> <limits> <utility> <array> "
                             "<tuple> (libcu++)"
                           : "no <headers> in OpenCL C");
    }
    if (name[0] == '/' || strstr(name, ".."))
        return sg_errf(err,
                       "line %d: %s is not allowed: only files inside the task folder "
                       "may be included",
                       line, shown);
    sg_buf path = {0};
    sg_buf_printf(&path, "%s/%s", dir, name);
    struct stat st;
    int ok = stat(path.data, &st) == 0 && S_ISREG(st.st_mode);
    sg_buf_free(&path);
    if (!ok && lang == SG_DEV_CUDA && sg_nvrtc_serves(name)) return 0; /* "assert.h" */
    if (!ok) return sg_errf(err, "line %d: %s: no such file in the task folder", line, shown);
    return 0;
}

/* The literal file name at p ("file.h" or <header>): copied to name, its closing character
 * returned (0: not a literal); *end: just past it. */
static char literal_name(const char *p, char *name, size_t size, const char **end) {
    char close = *p == '"' ? '"' : *p == '<' ? '>' : 0;
    const char *e = close ? strchr(p + 1, close) : NULL;
    const char *nl = strchr(p, '\n');
    if (!close || !e || (nl && e > nl)) return 0;
    size_t n = (size_t)(e - p - 1);
    if (n == 0 || n >= size) return 0;
    memcpy(name, p + 1, n);
    name[n] = 0;
    *end = e + 1;
    return close;
}

static int check_include(const char *p, int line, sg_dev_lang lang, const char *dir, sg_err *err) {
    while (*p == ' ' || *p == '\t') p++;
    char name[256];
    const char *end;
    char close = literal_name(p, name, sizeof name, &end);
    if (!close)
        return sg_errf(err,
                       "line %d: #include must name a file literally (\"file.h\" or <header>) "
                       "of at most %zu bytes",
                       line, sizeof name - 1);
    return check_name(name, close, 0, line, lang, dir, err);
}

/* __has_include(...) and __has_include_next(...) anywhere outside literals (they may sit
 * in any #if or #elif, or in a macro one expands): the same rules as #include, so that
 * `#if __has_include("/etc/passwd")` is refused, not answered. A bare name is allowed only
 * after `defined` or in #ifdef / #ifndef (the usual feature test). */
static int check_has_include(const char *s, sg_dev_lang lang, const char *dir, sg_err *err) {
    int line = 1;
    const char *bol = s;
    for (const char *p = s; *p; p++) {
        if (*p == '\n') {
            line++;
            bol = p + 1;
            continue;
        }
        if (*p == '"' || *p == '\'') { /* a literal (the #include's own name, too) */
            const char *q = p + 1;
            while (*q && *q != *p && *q != '\n') q += q[0] == '\\' && q[1] ? 2 : 1;
            if (*q != *p) continue;
            p = q;
            continue;
        }
        if (strncmp(p, "__has_include", 13) ||
            (p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '_')))
            continue;
        const char *q = p + 13;
        while (isalnum((unsigned char)*q) || *q == '_') q++;
        const char *a = q;
        while (*a == ' ' || *a == '\t') a++;
        if (*a == '(') {
            a++;
            while (*a == ' ' || *a == '\t') a++;
            char name[256];
            const char *end;
            char close = literal_name(a, name, sizeof name, &end);
            while (close && (*end == ' ' || *end == '\t')) end++;
            if (!close || *end != ')')
                return sg_errf(err,
                               "line %d: __has_include must name a file literally "
                               "(\"file.h\" or <header>)",
                               line);
            if (check_name(name, close, 1, line, lang, dir, err) < 0) return -1;
            p = end;
            continue;
        }
        const char *b = p; /* defined(__has_include), defined __has_include */
        while (b > bol && (b[-1] == ' ' || b[-1] == '\t' || b[-1] == '(')) b--;
        int tested = b - bol >= 7 && !strncmp(b - 7, "defined", 7);
        const char *d = bol;
        while (*d == ' ' || *d == '\t') d++;
        if (*d == '#') {
            d++;
            while (*d == ' ' || *d == '\t') d++;
            tested |= !strncmp(d, "ifdef", 5) || !strncmp(d, "ifndef", 6);
        }
        if (!tested)
            return sg_errf(err,
                           "line %d: __has_include must name a file literally (\"file.h\" or "
                           "<header>)",
                           line);
        p = q - 1;
    }
    return 0;
}

int sg_val_check_text(const char *src, size_t len, sg_err *err) {
    const char *nul = memchr(src, 0, len);
    long bad = nul ? (long)(nul - src) : sg_utf8_bad_at(src, len);
    if (bad < 0) return 0;
    int line = 1;
    for (long i = 0; i < bad; i++) line += src[i] == '\n';
    if (nul)
        return sg_errf(err,
                       "the source holds a NUL byte (line %d, offset %ld): a kernel source is text",
                       line, bad);
    return sg_errf(err,
                   "the source is not valid UTF-8 (byte 0x%02x at line %d, offset %ld): save it "
                   "as UTF-8",
                   (unsigned char)src[bad], line, bad);
}

int sg_val_read_source(const char *path, sg_buf *out, sg_err *err) {
    struct stat st;
    const char *kind = NULL;
    if (stat(path, &st) == 0)
        kind = S_ISFIFO(st.st_mode)   ? "a FIFO (named pipe)"
               : S_ISSOCK(st.st_mode) ? "a socket"
               : S_ISDIR(st.st_mode)  ? "a folder"
                                      : NULL;
    if (kind) return sg_errf(err, "%s: cannot read: it is %s, not a file", path, kind);
    if (sg_buf_read_file_max(out, path, SG_SOURCE_MAX) < 0) {
        char why[sizeof err->msg];
        return sg_errf(err, "%s", sg_read_error(why, sizeof why, path, SG_SOURCE_MAX));
    }
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
    if (rc == 0) rc = check_has_include(s.data, lang, task_dir, err);
    sg_buf_free(&s);
    if (rc == 0 && blank) rc = sg_errf(err, "the source is empty");
    return rc;
}
