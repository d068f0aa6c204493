#include "common/err.h"

#include "common/buf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int utf8_cont(char c) { return ((unsigned char)c & 0xc0) == 0x80; }

/* Copy the beginning and the end of full[len] into out[n] around "...". */
static void elide(const char *full, size_t len, char *out, size_t n) {
    static const char mark[] = "...";
    size_t room = n - 1;
    if (room < 4 * (sizeof mark - 1)) { /* too small to elide: cut the end */
        size_t k = room;
        while (k && utf8_cont(full[k])) k--;
        memcpy(out, full, k);
        out[k] = 0;
        return;
    }
    room -= sizeof mark - 1;
    size_t head = room / 4, tail_at = len - (room - head);
    while (head && utf8_cont(full[head])) head--;
    while (tail_at < len && utf8_cont(full[tail_at])) tail_at++;
    memcpy(out, full, head);
    memcpy(out + head, mark, sizeof mark - 1);
    memcpy(out + head + sizeof mark - 1, full + tail_at, len - tail_at);
    out[head + sizeof mark - 1 + len - tail_at] = 0;
}

void sg_vfmt_fit(char *out, size_t n, const char *fmt, va_list ap) {
    va_list again;
    va_copy(again, ap);
    int len = vsnprintf(out, n, fmt, ap);
    if (len >= 0 && (size_t)len >= n) {
        char *full = sg_xmalloc((size_t)len + 1);
        vsnprintf(full, (size_t)len + 1, fmt, again);
        elide(full, (size_t)len, out, n);
        free(full);
    }
    va_end(again);
}

void sg_fmt_fit(char *out, size_t n, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    sg_vfmt_fit(out, n, fmt, ap);
    va_end(ap);
}

int sg_errf(sg_err *err, const char *fmt, ...) {
    if (!err) return -1;
    va_list ap;
    va_start(ap, fmt);
    sg_vfmt_fit(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return -1;
}

int sg_err_prefix(sg_err *err, const char *fmt, ...) {
    if (!err) return -1;
    char prefix[sizeof err->msg], old[sizeof err->msg];
    va_list ap;
    va_start(ap, fmt);
    sg_vfmt_fit(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->msg, sizeof old);
    sg_fmt_fit(err->msg, sizeof err->msg, "%s: %s", prefix, old);
    return -1;
}
