/* Deltas: from libcurl's write callback through the SSE parser and the chunk decoder
 * to the stream's callbacks. Runs inside libcurl callbacks, so nothing here adds or
 * removes a transfer: failures are recorded (sg_llm_fail_later) and reported when the
 * transfer ends. */
#include "llm/llm_impl.h"

#include "llm/llm_chunk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void sg_llm_fail_later(sg_llm_stream *s, const char *fmt, const char *detail) {
    if (s->fail_msg[0]) return;
    snprintf(s->fail_msg, sizeof s->fail_msg, fmt, detail,
             (long long)(s->res.reasoning_chunks + s->res.content_chunks));
}

/* ---- deltas ---- */

void sg_llm_emit(void *arg, int is_reasoning, const char *t, size_t n) {
    sg_llm_stream *s = arg;
    if (s->dead || s->cut || n == 0) return;
    if (!s->res.t_first_ns) {
        s->res.t_first_ns = sg_loop_now(s->llm->loop);
        sg_llm_watchdog_idle(s);
    }
    if (is_reasoning) {
        s->res.reasoning_chunks += !s->chunk_r; /* counted now: a callback may abort */
        s->chunk_r = 1;
        s->res.reasoning_bytes += (int64_t)n;
        if (s->cb.reasoning) s->cb.reasoning(s->cb.arg, t, n);
    } else {
        s->res.content_chunks += !s->chunk_c;
        s->chunk_c = 1;
        s->res.content_bytes += (int64_t)n;
        if (s->cb.content) s->cb.content(s->cb.arg, t, n);
    }
}

/* The request's max_tokens, enforced by the client for servers that ignore it: past it by
 * the server's running count, or past 5/4 of it + 16 by the estimate (its margin). Then
 * the stream is cut (no more deltas) and ends with finish "length". */
static int past_max_tokens(sg_llm_stream *s) {
    if (s->max_tokens <= 0 || s->res.finish_reason[0]) return 0;
    int est;
    int64_t n = sg_llm_live_tokens(s, 0, &est);
    if (n <= (est ? s->max_tokens + s->max_tokens / 4 + 16 : s->max_tokens)) return 0;
    s->cut = 1;
    return 1;
}

int sg_llm_on_event(void *arg, const char *type, const char *data, size_t len) {
    sg_llm_stream *s = arg;
    if (len == 6 && !memcmp(data, "[DONE]", 6)) {
        s->saw_done = 1;
        return 0;
    }
    sg_llm_chunk c;
    json_t *root = NULL; /* jansson's tree, only where the scanner declined */
    if (!sg_llm_chunk_scan(data, len, &c, &s->scan)) {
        json_error_t je;
        sg_err err;
        root = json_loadb(data, len, 0, &je);
        if (!root || sg_llm_chunk_decode(root, &c, &s->scan, &err) < 0) {
            sg_llm_fail_later(s, "malformed stream chunk (%s) after %lld tokens",
                              root ? err.msg : je.text);
            json_decref(root);
            return -1;
        }
    }
    if (c.error) {
        sg_llm_fail_later(s, "server error in the stream: %s (after %lld tokens)", c.error);
        json_decref(root);
        return -1;
    }
    s->features |= c.features;
    if (len > 8 && !memcmp(data, "{\"id\": \"", 8)) s->features |= SG_LLM_F_PYJSON;
    s->chunk_r = s->chunk_c = 0;
    /* Usage first: a running count (vLLM's continuous usage) then covers this chunk's
     * deltas when their callbacks ask for it. */
    if (c.has_usage && !s->dead) {
        s->saw_usage = 1;
        sg_llm_usage prev = s->res.usage;
        s->res.usage = c.usage;
        if (!c.usage.cached_reported && prev.cached_reported) { /* vLLM: the final chunk only */
            s->res.usage.cached_tokens = prev.cached_tokens;
            s->res.usage.cached_reported = 1;
        }
        if (c.reasoning || c.content) {
            s->live_usage = 1;
            if (c.usage.reasoning_tokens > 0)
                s->live_reasoning = c.usage.reasoning_tokens;
            else if (!s->res.content_chunks && !c.content)
                s->live_reasoning = c.usage.completion_tokens; /* all reasoning so far */
        }
        if (s->cb.usage) s->cb.usage(s->cb.arg, &c.usage);
    }
    if (!s->dead && past_max_tokens(s)) { /* the server's count: nothing past it is shown */
        json_decref(root);
        return 1;
    }
    if (s->body_noids) /* asked for token ids */
        sg_llm_ids_feed(s, &c);
    if (c.reasoning && !s->dead) sg_llm_emit(s, 1, c.reasoning, c.reasoning_len);
    if (c.content && !s->dead) {
        sg_llm_think_feed(&s->think, c.content, c.content_len, sg_llm_emit, s);
        if (s->think.saw_tag) s->features |= SG_LLM_F_THINK_TAGS;
    }
    if (c.finish_reason)
        snprintf(s->res.finish_reason, sizeof s->res.finish_reason, "%s", c.finish_reason);
    json_decref(root);
    if (!s->dead && past_max_tokens(s)) return 1;
    return s->dead ? 1 : 0;
}

int sg_llm_on_comment(void *arg, const char *text, size_t len) {
    sg_llm_stream *s = arg;
    if (len >= 10 && memmem(text, len, "keep-alive", 10)) s->features |= SG_LLM_F_KEEPALIVE;
    return 0;
}

/* ---- curl callbacks (no transfer may be added or removed in here) ---- */

size_t sg_llm_on_write(char *p, size_t sz, size_t nm, void *arg) {
    sg_llm_stream *s = arg;
    size_t n = sz * nm;
    if (s->dead || s->cut || s->fail_msg[0]) return 0;
    s->last_byte_ns = sg_loop_time(s->llm->loop); /* the idle watchdog's: no clock read */
    if (s->status != 200) {
        if (s->errbody.len < 4096) sg_buf_append(&s->errbody, p, n);
        return n;
    }
    /* The start of an answer that is no stream, to be shown if it fails: one line of ASCII
     * (a cut never splits a UTF-8 sequence; the message goes into JSON events too). */
    if (!sg_llm_is_sse_type(s->content_type))
        for (size_t i = 0; i < n && s->errbody.len < 200; i++) {
            unsigned char c = (unsigned char)p[i];
            sg_buf_append(&s->errbody, c < ' ' ? " " : c >= 0x7f ? "?" : p + i, 1);
        }
    s->llm->in_curl++;
    int rc = sg_sse_feed(&s->sse, p, n);
    s->llm->in_curl--;
    if (s->sse.crlf_lines > s->sse.lf_lines) s->features |= SG_LLM_F_CRLF;
    if (rc == SG_SSE_TOO_LARGE)
        sg_llm_fail_later(s, "%s after %lld tokens", "stream event larger than 16 MiB");
    return rc && rc != 1 ? 0 : (s->dead || s->cut ? 0 : n);
}

int sg_llm_is_sse_type(const char *type) {
    return !type[0] || !strncasecmp(type, "text/event-stream", 17); /* none sent: assume SSE */
}

size_t sg_llm_on_header(char *p, size_t sz, size_t nm, void *arg) {
    sg_llm_stream *s = arg;
    size_t n = sz * nm;
    if (n > 5 && !strncmp(p, "HTTP/", 5)) {
        const char *sp = memchr(p, ' ', n);
        s->status = sp ? strtol(sp + 1, NULL, 10) : 0;
        s->retry_after_ns = 0;
        s->content_type[0] = 0;
    } else if (n > 13 && !strncasecmp(p, "content-type:", 13)) {
        const char *v = p + 13, *end = p + n;
        while (v < end && (*v == ' ' || *v == '\t')) v++;
        while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ')) end--;
        size_t k = 0;
        for (; v < end && k < sizeof s->content_type - 1; v++) /* printable only: it is shown */
            s->content_type[k++] = *v >= ' ' && *v < 0x7f ? *v : '?';
        s->content_type[k] = 0;
    } else if (n > 12 && !strncasecmp(p, "retry-after:", 12)) {
        char tmp[32];
        size_t k = n - 12 < sizeof tmp - 1 ? n - 12 : sizeof tmp - 1;
        memcpy(tmp, p + 12, k);
        tmp[k] = '\0';
        char *end;
        double secs = strtod(tmp, &end);
        if (end != tmp && secs >= 0 && secs < 3600) s->retry_after_ns = (int64_t)(secs * SG_SEC);
    }
    return n;
}

/* Only for measured requests: curl reports each piece it wrote to the socket. */
int sg_llm_on_debug(CURL *e, curl_infotype type, char *p, size_t n, void *arg) {
    sg_llm_stream *s = arg;
    if (type == CURLINFO_HEADER_OUT || type == CURLINFO_DATA_OUT)
        s->res.t_sent_ns = sg_loop_now(s->llm->loop);
    return 0;
}
