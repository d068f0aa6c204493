#include "kvstore/resp.h"

#include "common/assert.h"

#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

enum { ST_START = 0, ST_HEADER, ST_BODY, ST_AFTER_EXTERNAL };

/* Parse the integer of a "*N\r\n" or "$N\r\n" line (buf points after the type byte). */
static int parse_ll(const char *s, size_t n, long long *out) {
    long long v = 0;
    int neg = 0;
    size_t i = 0;
    if (n > 0 && s[0] == '-') {
        neg = 1;
        i = 1;
    }
    if (i == n || n - i > 18) return -1;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    *out = neg ? -v : v;
    return 0;
}

/* Find "\r\n" in [from, len); returns the index of '\r' or -1. */
static long find_crlf(const char *buf, size_t from, size_t len) {
    for (size_t i = from; i + 1 < len; i++) {
        const char *r = memchr(buf + i, '\r', len - 1 - i);
        if (!r) return -1;
        i = (size_t)(r - buf);
        if (buf[i + 1] == '\n') return (long)i;
    }
    return -1;
}

static void push_arg(sg_kv_parser *p, size_t off, size_t len, int external) {
    if (p->nargs == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 16;
        p->args = sg_xrealloc(p->args, p->cap * sizeof *p->args);
    }
    p->args[p->nargs++] = (sg_kv_span){off, len, external};
}

static int parse_inline(sg_kv_parser *p, const char *buf, size_t len, sg_err *err) {
    const char *nl = memchr(buf, '\n', len);
    if (!nl) {
        if (len > SG_KV_MAX_INLINE) return sg_errf(err, "Protocol error: too big inline request");
        return SG_KV_PARSE_MORE;
    }
    size_t end = (size_t)(nl - buf);
    SG_ASSERT(end < len);
    size_t stop = end > 0 && buf[end - 1] == '\r' ? end - 1 : end;
    for (size_t i = 0; i < stop;) {
        while (i < stop && (buf[i] == ' ' || buf[i] == '\t')) i++;
        size_t s = i;
        while (i < stop && buf[i] != ' ' && buf[i] != '\t') i++;
        if (i > s) push_arg(p, s, i - s, 0);
    }
    p->pos = end + 1;
    return SG_KV_PARSE_DONE;
}

int sg_kv_parse(sg_kv_parser *p, const char *buf, size_t len, sg_err *err) {
    for (;;) {
        /* Bounds: the parser never stands past what it was given, and never holds more
         * arguments than the request declared. */
        SG_ASSERT(p->pos <= len);
        SG_ASSERT(p->state == ST_START || (long long)p->nargs < p->argc);
        switch (p->state) {
        case ST_START: {
            if (len == 0) return SG_KV_PARSE_MORE;
            if (buf[0] != '*') return parse_inline(p, buf, len, err);
            long cr = find_crlf(buf, 1, len);
            if (cr < 0) {
                if (len > SG_KV_MAX_INLINE) {
                    sg_errf(err, "Protocol error: too big mbulk count string");
                    return SG_KV_PARSE_ERR;
                }
                return SG_KV_PARSE_MORE;
            }
            long long n;
            if (parse_ll(buf + 1, (size_t)cr - 1, &n) != 0 || n > SG_KV_MAX_ARGS) {
                sg_errf(err, "Protocol error: invalid multibulk length");
                return SG_KV_PARSE_ERR;
            }
            if (p->unauth && n > 10) {
                sg_errf(err, "Protocol error: unauthenticated multibulk length");
                return SG_KV_PARSE_ERR;
            }
            p->pos = (size_t)cr + 2;
            if (n <= 0) return SG_KV_PARSE_DONE; /* "*0" / "*-1": nothing to run */
            p->argc = n;
            p->state = ST_HEADER;
            break;
        }
        case ST_HEADER: {
            if (p->pos >= len) return SG_KV_PARSE_MORE;
            if (buf[p->pos] != '$') {
                sg_errf(err, "Protocol error: expected '$', got '%c'",
                        buf[p->pos] >= 32 && buf[p->pos] < 127 ? buf[p->pos] : '?');
                return SG_KV_PARSE_ERR;
            }
            long cr = find_crlf(buf, p->pos + 1, len);
            if (cr < 0) {
                if (len - p->pos > 32) {
                    sg_errf(err, "Protocol error: invalid bulk length");
                    return SG_KV_PARSE_ERR;
                }
                return SG_KV_PARSE_MORE;
            }
            long long n;
            if (parse_ll(buf + p->pos + 1, (size_t)cr - p->pos - 1, &n) != 0 || n < 0 ||
                n > SG_KV_MAX_BULK) {
                sg_errf(err, "Protocol error: invalid bulk length");
                return SG_KV_PARSE_ERR;
            }
            if (p->unauth && n > 16384) {
                sg_errf(err, "Protocol error: unauthenticated bulk length");
                return SG_KV_PARSE_ERR;
            }
            p->bulk_len = n;
            p->pos = (size_t)cr + 2;
            p->declined = 0;
            p->state = ST_BODY;
            break;
        }
        case ST_BODY: {
            size_t n = (size_t)p->bulk_len;
            if (len - p->pos < n + 2) {
                if (p->big_threshold && n >= p->big_threshold && !p->declined)
                    return SG_KV_PARSE_BIG;
                return SG_KV_PARSE_MORE;
            }
            SG_ASSERT(p->pos + n + 2 <= len);
            if (buf[p->pos + n] != '\r' || buf[p->pos + n + 1] != '\n') {
                sg_errf(err, "Protocol error: bulk string not terminated by CRLF");
                return SG_KV_PARSE_ERR;
            }
            push_arg(p, p->pos, n, 0);
            p->pos += n + 2;
            p->state = ST_HEADER;
            if ((long long)p->nargs == p->argc) return SG_KV_PARSE_DONE;
            break;
        }
        case ST_AFTER_EXTERNAL: {
            if (len - p->pos < 2) return SG_KV_PARSE_MORE;
            if (buf[p->pos] != '\r' || buf[p->pos + 1] != '\n') {
                sg_errf(err, "Protocol error: bulk string not terminated by CRLF");
                return SG_KV_PARSE_ERR;
            }
            push_arg(p, p->pos, (size_t)p->bulk_len, 1);
            p->pos += 2;
            p->state = ST_HEADER;
            if ((long long)p->nargs == p->argc) return SG_KV_PARSE_DONE;
            break;
        }
        default: SG_UNREACHABLE("sg_kv_parse: a parser state out of range");
        }
    }
}

size_t sg_kv_parse_want(const sg_kv_parser *p) {
    if (p->state == ST_BODY) return p->pos + (size_t)p->bulk_len + 2;
    return p->pos + 1;
}

void sg_kv_parse_external(sg_kv_parser *p) { p->state = ST_AFTER_EXTERNAL; }
void sg_kv_parse_decline(sg_kv_parser *p) { p->declined = 1; }

void sg_kv_parse_reset(sg_kv_parser *p) {
    p->state = ST_START;
    p->declined = 0;
    p->argc = 0;
    p->nargs = 0;
    p->pos = 0;
    p->bulk_len = 0;
}

void sg_kv_parse_free(sg_kv_parser *p) {
    free(p->args);
    p->args = NULL;
    p->cap = 0;
}

void sg_kv_reply_simple(sg_buf *b, const char *s) {
    sg_buf_append(b, "+", 1);
    sg_buf_append_str(b, s);
    sg_buf_append(b, "\r\n", 2);
}

void sg_kv_reply_error(sg_buf *b, const char *fmt, ...) {
    char msg[1200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    for (char *c = msg; *c; c++)
        if (*c == '\r' || *c == '\n') *c = ' ';
    sg_buf_append(b, "-", 1);
    sg_buf_append_str(b, msg);
    sg_buf_append(b, "\r\n", 2);
}

void sg_kv_reply_int(sg_buf *b, long long v) { sg_buf_printf(b, ":%lld\r\n", v); }

void sg_kv_reply_bulk_header(sg_buf *b, uint64_t n) {
    sg_buf_printf(b, "$%llu\r\n", (unsigned long long)n);
}

void sg_kv_reply_bulk(sg_buf *b, const void *p, size_t n) {
    sg_kv_reply_bulk_header(b, n);
    sg_buf_append(b, p, n);
    sg_buf_append(b, "\r\n", 2);
}

void sg_kv_reply_bulk_str(sg_buf *b, const char *s) { sg_kv_reply_bulk(b, s, strlen(s)); }
void sg_kv_reply_nil(sg_buf *b) { sg_buf_append(b, "$-1\r\n", 5); }
void sg_kv_reply_array(sg_buf *b, long long n) { sg_buf_printf(b, "*%lld\r\n", n); }

void sg_kv_reply_null(sg_buf *b, int resp3) {
    if (resp3)
        sg_buf_append(b, "_\r\n", 3);
    else
        sg_kv_reply_nil(b);
}

void sg_kv_reply_map(sg_buf *b, long long pairs, int resp3) {
    if (resp3)
        sg_buf_printf(b, "%%%lld\r\n", pairs);
    else
        sg_kv_reply_array(b, pairs * 2);
}
