/* Compiler logs go back to the model: a diagnostic located in any file other than the
 * candidate itself must not carry that file's text (the message quotes its tokens, the
 * snippet lines quote its lines). Such a diagnostic keeps its place and kind; its text
 * and snippet are replaced. The sandbox keeps secret files from being opened at all;
 * this is the second wall. */
#include "device/device.h"

#include <ctype.h>
#include <string.h>

/* The candidate's own names: NVRTC's "candidate.cu" and its name map, PoCL's temporary
 * copy (…/kcache/tempfile_XXXXXX.cl), clang's pseudo-files. */
static int is_candidate(const char *path, size_t n) {
    const char *base = path;
    for (size_t i = 0; i < n; i++)
        if (path[i] == '/') base = path + i + 1;
    size_t bn = n - (size_t)(base - path);
    static const char *const names[] = {
        "candidate.cu",   "__nv_name_map",   "<source>", "<built-in>",
        "<command line>", "<scratch space>", NULL};
    for (int i = 0; names[i]; i++)
        if (bn == strlen(names[i]) && !memcmp(base, names[i], bn)) return 1;
    return bn > 9 && !memcmp(base, "tempfile_", 9) && !memchr(base, ' ', bn);
}

/* A located diagnostic: [error: |warning: |note: ]PATH:N[:N]: or PATH(N): . Sets the
 * path's span and where the message starts; 0 when the line is not one. */
static int located(const char *l, size_t n, const char **path, size_t *plen, size_t *msg) {
    static const char *const kinds[] = {"error: ", "warning: ", "note: ", "fatal error: ", NULL};
    size_t s = 0;
    for (int i = 0; kinds[i]; i++)
        if (n >= strlen(kinds[i]) && !memcmp(l, kinds[i], strlen(kinds[i]))) s = strlen(kinds[i]);
    for (size_t i = s; i + 1 < n; i++) {
        if ((l[i] == ':' || l[i] == '(') && isdigit((unsigned char)l[i + 1]) && i > s) {
            size_t j = i + 1;
            while (j < n && (isdigit((unsigned char)l[j]) || l[j] == ':' || l[j] == ')')) j++;
            if (j < n && l[j] == ' ' && (l[j - 1] == ':' || l[j - 1] == ')')) {
                *path = l + s;
                *plen = i - s;
                *msg = j + 1;
                return 1;
            }
        }
        if (l[i] == ' ' && !(s == 0 && i < 2)) return 0; /* paths with spaces: not parsed */
    }
    return 0;
}

void sg_dev_log_scrub(sg_buf *log, size_t from) {
    if (!log->data || log->len <= from) return;
    sg_buf out = {0};
    sg_buf_append(&out, log->data, from);
    int hiding = 0;
    for (size_t i = from; i < log->len;) {
        const char *l = log->data + i;
        const char *nl = memchr(l, '\n', log->len - i);
        size_t n = nl ? (size_t)(nl - l) : log->len - i;
        i += n + (nl ? 1 : 0);
        const char *path;
        size_t plen, msg;
        if (located(l, n, &path, &plen, &msg)) {
            hiding = !is_candidate(path, plen);
            if (hiding) {
                sg_buf_append(&out, l, msg);
                sg_buf_append_str(&out, "(a diagnostic in another file; its text is not shown)\n");
                continue;
            }
        } else if (hiding && (n == 0 || l[0] == ' ' || l[0] == '\t')) {
            continue; /* the hidden diagnostic's snippet and caret lines */
        } else {
            hiding = 0;
        }
        sg_buf_append(&out, l, n);
        if (nl) sg_buf_append(&out, "\n", 1);
    }
    sg_buf_free(log);
    *log = out;
    if (!log->data) sg_buf_append(log, "", 0);
}
