/* Credentials out of URLs, control characters out of names (redact.h). */
#include "common/redact.h"

#include "common/err.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Where a URL ends inside a text: at a space, a quote, a list's comma or an angle bracket. */
static int url_char(char c) {
    return c && !isspace((unsigned char)c) && !strchr("\"'<>,`", c) && (unsigned char)c >= 0x20;
}

static int secret_name(const char *p, size_t n) {
    static const char *const words[] = {"key", "token",      "secret",    "pass",
                                        "pwd", "credential", "signature", "auth"};
    for (size_t i = 0; i < n; i++)
        for (size_t w = 0; w < sizeof words / sizeof *words; w++) {
            size_t len = strlen(words[w]);
            if (i + len <= n && !strncasecmp(p + i, words[w], len)) return 1;
        }
    return 0;
}

/* The query (from just after '?' to the URL's end or its '#'): secret values become ***. */
static const char *append_query(sg_buf *b, const char *p) {
    while (url_char(*p) && *p != '#') {
        size_t n = 0;
        while (url_char(p[n]) && !strchr("&;#=", p[n])) n++;
        sg_buf_append(b, p, n);
        int secret = secret_name(p, n);
        p += n;
        if (*p == '=') {
            sg_buf_append(b, "=", 1);
            p++;
            size_t v = 0;
            while (url_char(p[v]) && !strchr("&;#", p[v])) v++;
            if (secret && v)
                sg_buf_append_str(b, "***");
            else
                sg_buf_append(b, p, v);
            p += v;
        }
        if (*p == '&' || *p == ';') sg_buf_append(b, p++, 1);
    }
    return p;
}

void sg_redact_append_url(sg_buf *b, const char *s) {
    if (!s) return;
    const char *p = s;
    while (*p) {
        const char *sep = strstr(p, "://");
        if (!sep) break;
        const char *scheme = sep;
        while (scheme > p && (isalnum((unsigned char)scheme[-1]) || strchr("+.-", scheme[-1])))
            scheme--;
        const char *auth = sep + 3;
        sg_buf_append(b, p, (size_t)(auth - p));
        if (scheme == sep) { /* "://" with no scheme before it: not a URL */
            p = auth;
            continue;
        }
        const char *end = auth, *at = NULL;
        while (url_char(*end) && !strchr("/?#", *end)) {
            if (*end == '@') at = end;
            end++;
        }
        if (at) {
            sg_buf_append_str(b, "***");
            auth = at;
        }
        sg_buf_append(b, auth, (size_t)(end - auth));
        p = end;
        while (url_char(*p) && *p != '?' && *p != '#') p++;
        sg_buf_append(b, end, (size_t)(p - end));
        if (*p == '?') {
            sg_buf_append(b, p++, 1);
            p = append_query(b, p);
        }
        const char *frag = p;
        while (url_char(*p)) p++;
        sg_buf_append(b, frag, (size_t)(p - frag));
    }
    sg_buf_append_str(b, p);
}

char *sg_redact_url(const char *s) {
    if (!s) return NULL;
    sg_buf b = {0};
    sg_redact_append_url(&b, s);
    return sg_buf_steal(&b);
}

static const char *fit(char *out, size_t n, sg_buf *b) {
    sg_fmt_fit(out, n, "%s", b->data ? b->data : "");
    sg_buf_free(b);
    return out;
}

const char *sg_redact_url_fit(char *out, size_t n, const char *s) {
    sg_buf b = {0};
    sg_redact_append_url(&b, s);
    return fit(out, n, &b);
}

static int is_ctrl(const unsigned char *p) {
    return *p < 0x20 || *p == 0x7f || (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f);
}

/* Escapes of control characters for s, n bytes; shell: also \\ and \' (inside $'...'). */
static void append_ctrl(sg_buf *b, const char *s, size_t n, int shell) {
    for (const unsigned char *p = (const unsigned char *)s, *e = p + n; p < e; p++) {
        switch (*p) {
        case '\n': sg_buf_append_str(b, "\\n"); break;
        case '\r': sg_buf_append_str(b, "\\r"); break;
        case '\t': sg_buf_append_str(b, "\\t"); break;
        default:
            if (shell && (*p == '\\' || *p == '\''))
                sg_buf_printf(b, "\\%c", *p);
            else if (!is_ctrl(p))
                sg_buf_append(b, p, 1);
            else if (*p == 0xc2) /* C1: U+0080..U+009F */
                sg_buf_printf(b, "\\u%04x", *++p);
            else
                sg_buf_printf(b, "\\x%02x", *p);
        }
    }
}

void sg_redact_append_ctrl(sg_buf *b, const char *s) {
    if (s) append_ctrl(b, s, strlen(s), 0);
}

const char *sg_redact_ctrl(char *out, size_t n, const char *s) {
    sg_buf b = {0};
    sg_redact_append_ctrl(&b, s);
    return fit(out, n, &b);
}

void sg_redact_append_shell_word(sg_buf *b, const char *s) {
    int plain = *s != '\0', ctrl = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        plain &= isalnum(*p) || strchr("_./:=,@+%-", *p) != NULL;
        ctrl |= is_ctrl(p);
    }
    if (plain) {
        sg_buf_append_str(b, s);
    } else if (ctrl) {
        sg_buf_append_str(b, "$'");
        append_ctrl(b, s, strlen(s), 1);
        sg_buf_append_str(b, "'");
    } else {
        sg_buf_append_str(b, "'");
        for (const char *p = s; *p; p++)
            if (*p == '\'')
                sg_buf_append_str(b, "'\\''");
            else
                sg_buf_append(b, p, 1);
        sg_buf_append_str(b, "'");
    }
}
