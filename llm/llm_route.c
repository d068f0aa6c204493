/* Endpoint choice (least running streams, capped, skipping ones that just refused a
 * connection) and retry delays (exponential, full jitter in the upper half). */
#include "llm/llm_impl.h"

#include "common/redact.h"

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
    if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) {
        char shown[512];
        sg_errf(err, "LLM URL '%s' must start with http:// or https://",
                sg_redact_url_fit(shown, sizeof shown, url));
        return NULL;
    }
    sg_buf b = {0};
    sg_buf_append_str(&b, url);
    while (b.len && b.data[b.len - 1] == '/') b.data[--b.len] = '\0';
    size_t n = b.len;
    if (!(n >= 3 && !strcmp(b.data + n - 3, "/v1"))) sg_buf_append_str(&b, "/v1");
    return sg_buf_steal(&b);
}
