/* Endpoint choice (least running streams, capped, skipping ones that just refused a
 * connection) and retry delays (exponential, full jitter in the upper half). */
#include "llm/llm_impl.h"

#include "common/redact.h"

#include <stdlib.h>
#include <string.h>

sg_llm_endpoint *sg_llm_route_pick(sg_llm *llm) {
    int64_t now = sg_loop_now(llm->loop);
    sg_llm_endpoint *best = NULL, *best_down = NULL;
    int cap = llm->cfg.max_per_endpoint;
    for (size_t i = 0; i < llm->n_eps; i++) {
        sg_llm_endpoint *e = &llm->eps[i];
        if (cap > 0 && e->running >= cap) continue;
        if (e->down_until > now) {
            if (!best_down || e->running < best_down->running) best_down = e;
        } else if (!best || e->running < best->running) {
            best = e;
        }
    }
    return best ? best : best_down; /* all sidelined: still try one */
}

static uint64_t next_rand(sg_llm *llm) { /* xorshift64*: jitter needs no quality */
    llm->rng ^= llm->rng >> 12;
    llm->rng ^= llm->rng << 25;
    llm->rng ^= llm->rng >> 27;
    return llm->rng * 2685821657736338717ull;
}

int64_t sg_llm_route_backoff(sg_llm *llm, int attempt) {
    int64_t d = llm->cfg.backoff_ns;
    for (int i = 1; i < attempt && d < llm->cfg.backoff_max_ns; i++) d *= 2;
    if (d > llm->cfg.backoff_max_ns) d = llm->cfg.backoff_max_ns;
    /* Uniform in [d/2, d]: spreads clients that failed together. */
    return d / 2 + (int64_t)(next_rand(llm) % (uint64_t)(d / 2 + 1));
}

char *sg_llm_route_base(const char *url, sg_err *err) {
    if (sg_llm_url_check(url, err) < 0) return NULL;
    sg_buf b = {0};
    sg_buf_append_str(&b, url);
    while (b.len && b.data[b.len - 1] == '/') b.data[--b.len] = '\0';
    size_t n = b.len;
    if (!(n >= 3 && !strcmp(b.data + n - 3, "/v1"))) sg_buf_append_str(&b, "/v1");
    return sg_buf_steal(&b);
}

/* The authority's host and port: "[v6]:port" or "host:port"; port NULL when none. */
static const char *split_port(const char *host, size_t n, size_t *hlen) {
    const char *end = host + n, *colon;
    if (n && host[0] == '[') {
        const char *close = memchr(host, ']', n);
        colon = close && close + 1 < end && close[1] == ':' ? close + 1 : NULL;
        *hlen = close ? (size_t)(close - host + 1) : n;
    } else {
        colon = memchr(host, ':', n);
        *hlen = colon ? (size_t)(colon - host) : n;
    }
    return colon ? colon + 1 : NULL;
}

static const char *url_problem(const char *url) {
    for (const char *p = url; *p; p++)
        if ((unsigned char)*p <= ' ' || *p == 0x7f) return "holds a space or a control character";
    const char *auth = !strncmp(url, "http://", 7)    ? url + 7
                       : !strncmp(url, "https://", 8) ? url + 8
                                                      : NULL;
    if (!auth) return "must start with http:// or https://";
    size_t n = strcspn(auth, "/?#"), hlen;
    const char *host = auth;
    for (size_t i = 0; i < n; i++)
        if (auth[i] == '@') host = auth + i + 1; /* after the user info */
    n -= (size_t)(host - auth);
    const char *port = split_port(host, n, &hlen);
    if (!hlen || (host[0] == '[' && (hlen < 3 || host[hlen - 1] != ']')))
        return "has no host (http://HOST:PORT)";
    if (port) {
        size_t plen = (size_t)(host + n - port);
        long v = 0;
        for (size_t i = 0; i < plen && v <= 65535; i++)
            v = port[i] >= '0' && port[i] <= '9' ? v * 10 + (port[i] - '0') : 70000;
        if (!plen || v < 1 || v > 65535) return "has a port that is not a number from 1 to 65535";
    }
    return NULL;
}

int sg_llm_url_check(const char *url, sg_err *err) {
    const char *why = url_problem(url);
    if (!why) return 0;
    char *shown = sg_redact_url(url);
    sg_errf(err, "LLM URL '%s' %s", shown, why);
    free(shown);
    return -1;
}
