#include "common/srcnorm.h"

#include <stdio.h>
#include <string.h>

uint64_t sg_hash64(const void *data, size_t len) {
    const unsigned char *p = data;
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

/* Whitespace survives only where it separates two tokens that would otherwise fuse:
 * two word characters (`int x`) or two operator characters (`a - -b`). Newlines survive
 * only at the end of preprocessor directives and launch lines. */
typedef struct emitter {
    sg_buf *out;
    int pending_space;
    int line_has_text;
    int directive; /* the current line is a preprocessor directive */
    char prev;     /* last character written */
} emitter;

static int is_word(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           (unsigned char)c >= 0x80;
}

static int is_op(char c) { return c && strchr("+-*/%<>=&|!^~.?:#", c) != NULL; }

static void emit_char(emitter *e, char c) {
    if (!e->line_has_text && c == '#') e->directive = 1;
    /* In directives all spacing is kept: `#define A (x)` and `#define A(x)` differ. */
    if (e->pending_space && e->line_has_text &&
        (e->directive || (is_word(e->prev) && is_word(c)) || (is_op(e->prev) && is_op(c))))
        sg_buf_append(e->out, " ", 1);
    e->pending_space = 0;
    sg_buf_append(e->out, &c, 1);
    e->line_has_text = 1;
    e->prev = c;
}

static void end_line(emitter *e) {
    if (e->line_has_text) sg_buf_append(e->out, "\n", 1);
    e->pending_space = 0;
    e->line_has_text = 0;
    e->directive = 0;
    e->prev = 0;
}

void sg_srcnorm(const char *s, size_t n, sg_buf *out) {
    emitter e = {.out = out};
    size_t i = 0;
    while (i < n) {
        char c = s[i];
        if (c == '/' && i + 2 < n && s[i + 1] == '/' && s[i + 2] == '@') {
            /* Launch-plan line: keep it (trimmed) on a line of its own. */
            end_line(&e);
            size_t j = i;
            while (j < n && s[j] != '\n') j++;
            size_t k = j;
            while (k > i && (s[k - 1] == ' ' || s[k - 1] == '\t' || s[k - 1] == '\r')) k--;
            sg_buf_append(out, s + i, k - i);
            sg_buf_append(out, "\n", 1);
            i = j;
        } else if (c == '/' && i + 1 < n && s[i + 1] == '/') {
            while (i < n && s[i] != '\n') i++;
        } else if (c == '/' && i + 1 < n && s[i + 1] == '*') {
            i += 2;
            while (i + 1 < n && !(s[i] == '*' && s[i + 1] == '/')) i++;
            i = i + 2 <= n ? i + 2 : n;
            e.pending_space = 1;
        } else if (c == '"' || c == '\'') {
            char q = c;
            emit_char(&e, c);
            i++;
            while (i < n && s[i] != q && s[i] != '\n') {
                if (s[i] == '\\' && i + 1 < n) emit_char(&e, s[i++]);
                emit_char(&e, s[i++]);
            }
            if (i < n && s[i] == q) emit_char(&e, s[i++]);
        } else if (c == '\\' && i + 1 < n &&
                   (s[i + 1] == '\n' || (s[i + 1] == '\r' && i + 2 < n && s[i + 2] == '\n'))) {
            /* Line splice: removed before anything else, as the C preprocessor does. */
            i += s[i + 1] == '\n' ? 2 : 3;
            e.pending_space = 1;
        } else if (c == '\n') {
            if (e.directive)
                end_line(&e);
            else
                e.pending_space = 1;
            i++;
        } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
            e.pending_space = 1;
            i++;
        } else {
            emit_char(&e, c);
            i++;
        }
    }
    end_line(&e);
    if (!out->data) sg_buf_append(out, "", 0);
}

uint64_t sg_srcnorm_hash(const char *src, size_t len) {
    sg_buf b = {0};
    sg_srcnorm(src, len, &b);
    uint64_t h = sg_hash64(b.data, b.len);
    sg_buf_free(&b);
    return h;
}

void sg_srcnorm_hex(uint64_t h, char out[17]) {
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

static void fnv(uint64_t *h, const void *p, size_t n) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        *h ^= b[i];
        *h *= 0x100000001b3ULL;
    }
}

void sg_srcnorm_key(const char *src, size_t len, const char *opts, char out[33]) {
    /* The same normal form as candidate dedupe (common/srcnorm.h): comments and
     * insignificant blanks folded, launch lines kept; two 64-bit hashes of it + opts. */
    sg_buf norm = {0};
    sg_srcnorm(src, len, &norm);
    uint64_t h1 = 0xcbf29ce484222325ULL, h2 = 0x84222325cbf29ce4ULL;
    fnv(&h1, norm.data, norm.len);
    fnv(&h1, "\0", 1);
    fnv(&h1, opts ? opts : "", opts ? strlen(opts) : 0);
    for (size_t i = norm.len; i-- > 0;) fnv(&h2, &norm.data[i], 1);
    fnv(&h2, opts ? opts : "", opts ? strlen(opts) : 0);
    snprintf(out, 33, "%016llx%016llx", (unsigned long long)h1, (unsigned long long)h2);
    sg_buf_free(&norm);
}
