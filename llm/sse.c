#include "llm/sse.h"

#include "common/assert.h"

#include <string.h>

void sg_sse_init(sg_sse *p, sg_sse_event_fn on_event, sg_sse_comment_fn on_comment, void *arg) {
    memset(p, 0, sizeof *p);
    p->on_event = on_event;
    p->on_comment = on_comment;
    p->arg = arg;
    p->max_event = 16u << 20;
}

void sg_sse_reset(sg_sse *p) {
    sg_buf_clear(&p->line);
    sg_buf_clear(&p->data);
    p->type[0] = '\0';
    p->has_data = 0;
    p->skip_lf = 0;
}

void sg_sse_free(sg_sse *p) {
    sg_buf_free(&p->line);
    sg_buf_free(&p->data);
}

static int dispatch(sg_sse *p) {
    int rc = 0;
    if (p->has_data) {
        p->events++;
        if (!p->data.data) sg_buf_append(&p->data, "", 0); /* "data:" alone: empty string */
        rc = p->on_event(p->arg, p->type, p->data.data, p->data.len);
    }
    sg_buf_clear(&p->data);
    p->type[0] = '\0';
    p->has_data = 0;
    return rc;
}

static int process_line(sg_sse *p, const char *l, size_t n) {
    if (n == 0) return dispatch(p);
    if (l[0] == ':') {
        p->comments++;
        return p->on_comment ? p->on_comment(p->arg, l + 1, n - 1) : 0;
    }
    const char *colon = memchr(l, ':', n);
    size_t flen = colon ? (size_t)(colon - l) : n;
    const char *v = colon ? colon + 1 : l + n;
    size_t vlen = (size_t)(l + n - v);
    if (vlen && *v == ' ') v++, vlen--; /* one space after the colon is not part of the value */
    SG_ASSERT(flen <= n && v >= l && v + vlen == l + n);
    if (flen == 4 && !memcmp(l, "data", 4)) {
        if (p->data.len + vlen + 1 > p->max_event) return SG_SSE_TOO_LARGE;
        if (p->has_data) sg_buf_append(&p->data, "\n", 1);
        sg_buf_append(&p->data, v, vlen);
        SG_ASSERT(p->data.len <= p->max_event); /* an event never outgrows its bound */
        p->has_data = 1;
    } else if (flen == 5 && !memcmp(l, "event", 5)) {
        size_t k = vlen < sizeof p->type - 1 ? vlen : sizeof p->type - 1;
        memcpy(p->type, v, k);
        p->type[k] = '\0';
    }
    return 0; /* id:, retry: and unknown fields mean nothing to an LLM stream */
}

int sg_sse_feed(sg_sse *p, const char *b, size_t n) {
    size_t i = 0;
    if (p->skip_lf && n > 0) {
        p->skip_lf = 0;
        if (b[0] == '\n')
            i = 1, p->crlf_lines++;
        else
            p->lf_lines++; /* a lone CR ended the line */
    }
    while (i < n) {
        const char *s = b + i;
        size_t rem = n - i;
        const char *nl = memchr(s, '\n', rem);
        const char *cr = memchr(s, '\r', nl ? (size_t)(nl - s) : rem);
        const char *end = cr ? cr : nl;
        if (!end) { /* no line end yet: keep the piece for the next feed */
            if (p->line.len + rem + p->data.len > p->max_event) {
                sg_sse_reset(p);
                return SG_SSE_TOO_LARGE;
            }
            sg_buf_append(&p->line, s, rem);
            SG_ASSERT(p->line.len + p->data.len <= p->max_event);
            return 0;
        }
        size_t j = (size_t)(end - s);
        SG_ASSERT(j < rem); /* the line end lies inside this piece */
        int rc;
        if (p->line.len) {
            sg_buf_append(&p->line, s, j);
            rc = process_line(p, p->line.data, p->line.len);
            sg_buf_clear(&p->line);
        } else {
            rc = process_line(p, s, j);
        }
        if (*end == '\r') {
            if (j + 1 < rem) {
                if (s[j + 1] == '\n')
                    i += j + 2, p->crlf_lines++;
                else
                    i += j + 1, p->lf_lines++;
            } else {
                i += j + 1, p->skip_lf = 1;
            }
        } else {
            i += j + 1, p->lf_lines++;
        }
        SG_ASSERT(i <= n);
        if (rc == SG_SSE_TOO_LARGE) sg_sse_reset(p);
        if (rc) return rc;
    }
    return 0;
}
