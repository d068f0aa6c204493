#include "common/buf.h"
#include "common/json.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void oom(void) {
    static const char msg[] = "specgen: out of memory\n";
    ssize_t n = write(2, msg, sizeof msg - 1);
    (void)n;
    abort();
}

/* jansson allocates by the same policy: a json_object(), json_pack() or json_dumps() can
 * then not come back NULL for want of memory (it aborts as sg_xmalloc does), so its 45-odd
 * unchecked constructor calls are not NULL dereferences waiting for an OOM. A constructor
 * rather than a call in each main: every binary that links the library and allocates
 * through it (bin/specgen and its worker processes, tests, benchmarks, fuzzers) gets it
 * before main, with nothing to forget; jansson's own objects are all made after it. */
__attribute__((constructor)) static void json_allocates_through_sg_x(void) {
    json_set_alloc_funcs(sg_xmalloc, free);
}

void *sg_xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) oom();
    return p;
}

void *sg_xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p) oom();
    return p;
}

void *sg_xrealloc(void *p, size_t n) {
    p = realloc(p, n ? n : 1);
    if (!p) oom();
    return p;
}

char *sg_xstrdup(const char *s) {
    char *d = strdup(s ? s : "");
    if (!d) oom();
    return d;
}

void sg_buf_reserve(sg_buf *b, size_t extra) {
    size_t need = b->len + extra + 1; /* +1 keeps room for the terminating NUL */
    if (need <= b->cap) return;
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need) cap *= 2;
    b->data = sg_xrealloc(b->data, cap);
    b->cap = cap;
}

void sg_buf_append(sg_buf *b, const void *p, size_t n) {
    sg_buf_reserve(b, n);
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void sg_buf_append_str(sg_buf *b, const char *s) { sg_buf_append(b, s, strlen(s)); }

void sg_buf_printf(sg_buf *b, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    sg_buf_reserve(b, (size_t)n);
    va_start(ap, fmt);
    vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    b->len += (size_t)n;
}

void sg_buf_append_json_string(sg_buf *b, const char *s) {
    sg_buf_append_json_stringn(b, s, strlen(s));
}

void sg_buf_append_json_stringn(sg_buf *b, const char *s, size_t n) {
    sg_buf_append(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s, *e = p + n; p < e; p++) {
        switch (*p) {
        case '"': sg_buf_append(b, "\\\"", 2); break;
        case '\\': sg_buf_append(b, "\\\\", 2); break;
        case '\n': sg_buf_append(b, "\\n", 2); break;
        case '\r': sg_buf_append(b, "\\r", 2); break;
        case '\t': sg_buf_append(b, "\\t", 2); break;
        default:
            if (*p < 0x20) {
                sg_buf_printf(b, "\\u%04x", *p);
            } else if (*p < 0x80) {
                sg_buf_append(b, p, 1);
            } else { /* a whole UTF-8 sequence, else U+FFFD: the literal stays valid JSON */
                size_t len = *p >> 5 == 6 ? 2 : *p >> 4 == 14 ? 3 : *p >> 3 == 30 ? 4 : 1;
                if (len > (size_t)(e - p) || sg_utf8_bad_at((const char *)p, len) >= 0) {
                    sg_buf_append(b, "\\ufffd", 6);
                } else {
                    sg_buf_append(b, p, len);
                    p += len - 1;
                }
            }
        }
    }
    sg_buf_append(b, "\"", 1);
}

void sg_buf_fill(sg_buf *b, const char *tmpl, const char *const *keys, const char *const *values,
                 size_t n) {
    const char *p = tmpl;
    while (*p) {
        const char *open = strchr(p, '{');
        if (!open) break;
        const char *close = strchr(open + 1, '}');
        if (!close) break;
        size_t kl = (size_t)(close - open - 1);
        size_t i = 0;
        while (i < n && !(strlen(keys[i]) == kl && strncmp(keys[i], open + 1, kl) == 0)) i++;
        if (i == n) { /* not a placeholder: keep the brace, look further */
            sg_buf_append(b, p, (size_t)(open - p) + 1);
            p = open + 1;
            continue;
        }
        sg_buf_append(b, p, (size_t)(open - p));
        sg_buf_append_str(b, values[i] ? values[i] : "");
        p = close + 1;
    }
    sg_buf_append_str(b, p);
}

void sg_buf_consume(sg_buf *b, size_t n) {
    if (n >= b->len) {
        sg_buf_clear(b);
        return;
    }
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
    b->data[b->len] = '\0';
}

void sg_buf_clear(sg_buf *b) {
    b->len = 0;
    if (b->data) b->data[0] = '\0';
}

char *sg_buf_steal(sg_buf *b) {
    char *d = b->data ? b->data : sg_xstrdup("");
    b->data = NULL;
    b->len = b->cap = 0;
    return d;
}

void sg_buf_free(sg_buf *b) {
    free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

int sg_buf_read_file(sg_buf *b, const char *path) {
    return sg_buf_read_file_max(b, path, SIZE_MAX - 1);
}

int sg_buf_read_file_max(sg_buf *b, const char *path, size_t max) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    size_t start = b->len;
    for (;;) {
        sg_buf_reserve(b, 65536);
        size_t room = b->cap - b->len - 1, left = max + 1 - (b->len - start);
        ssize_t n = read(fd, b->data + b->len, room < left ? room : left);
        if (n < 0) {
            if (errno == EINTR) continue;
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        if (n == 0) break;
        b->len += (size_t)n;
        b->data[b->len] = '\0';
        if (b->len - start > max) {
            close(fd);
            b->len = start;
            b->data[b->len] = '\0';
            errno = EFBIG;
            return -1;
        }
    }
    close(fd);
    return 0;
}

int sg_buf_read_small(sg_buf *b, const char *opt, const char *path, sg_err *err) {
    if (sg_buf_read_file_max(b, path, SG_SMALL_FILE_MAX) == 0) return 0;
    char why[512];
    sg_buf_free(b);
    return sg_errf(err, "%s %s", opt, sg_read_error(why, sizeof why, path, SG_SMALL_FILE_MAX));
}

char *sg_read_secret_line(const char *opt, const char *path, const char *what, int *others,
                          sg_err *err) {
    sg_buf b = {0};
    *others = 0;
    if (sg_buf_read_small(&b, opt, path, err) < 0) return NULL;
    char *nl = b.data ? memchr(b.data, '\n', b.len) : NULL;
    if (nl) b.len = (size_t)(nl - b.data);
    if (b.len && b.data[b.len - 1] == '\r') b.len--;
    if (b.data) b.data[b.len] = 0;
    if (b.len == 0 || strlen(b.data) != b.len) {
        sg_buf_free(&b);
        sg_errf(err, "%s '%s': its first line holds no %s (or a NUL byte)", opt, path, what);
        return NULL;
    }
    struct stat st;
    *others = stat(path, &st) == 0 && (st.st_mode & 077);
    return sg_buf_steal(&b);
}

const char *sg_read_error(char *out, size_t n, const char *path, size_t max) {
    if (errno == EFBIG)
        snprintf(out, n, "%s: cannot read: larger than the limit of %zu bytes", path, max);
    else
        snprintf(out, n, "%s: cannot read: %s", path, strerror(errno));
    return out;
}
