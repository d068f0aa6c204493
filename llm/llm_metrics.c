#include "llm/llm_metrics.h"

#include "common/buf.h"
#include "common/dialect.h"
#include "llm/llm_impl.h"

#include <stdlib.h>
#include <string.h>

/* 1 when a dialect before i already has i's metric names (vllm-legacy and raw are vLLM's). */
static int seen_before(int i) {
    for (int j = 0; j < i; j++)
        if (sg_dialects[j].running && !strcmp(sg_dialects[j].running, sg_dialects[i].running))
            return 1;
    return 0;
}

/* Value of a sample line "name{labels} value" or "name value" if it names `name`. */
static int sample(const char *line, const char *name, double *v) {
    size_t n = strlen(name);
    if (strncmp(line, name, n) || (line[n] != ' ' && line[n] != '{')) return 0;
    const char *sp = strrchr(line, ' ');
    if (!sp) return 0;
    *v = strtod(sp + 1, NULL);
    return 1;
}

/* The cache-pressure samples of one line (sg_llm_metrics' comment names them). */
static void cache_sample(const char *line, sg_llm_metrics *m) {
    static const char *const usage[] = {"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc",
                                        "sglang:token_usage", "llamacpp:kv_cache_usage_ratio"};
    static const char *const preempt[] = {"vllm:num_preemptions_total", "vllm:num_preemptions",
                                          "sglang:num_retracted_reqs_total"};
    static const char *const waiting[] = {"vllm:num_requests_waiting", "sglang:num_queue_reqs",
                                          "llamacpp:requests_deferred"};
    double v;
    for (size_t i = 0; i < sizeof usage / sizeof *usage; i++)
        if (sample(line, usage[i], &v) && v > m->kv_usage) m->kv_usage = v;
    for (size_t i = 0; i < sizeof preempt / sizeof *preempt; i++)
        if (sample(line, preempt[i], &v))
            m->preemptions = (m->preemptions < 0 ? 0 : m->preemptions) + v;
    for (size_t i = 0; i < sizeof waiting / sizeof *waiting; i++)
        if (sample(line, waiting[i], &v)) m->waiting = (m->waiting < 0 ? 0 : m->waiting) + v;
    if (sample(line, "vllm:prefix_cache_hits_total", &v))
        m->prefix_hits = (m->prefix_hits < 0 ? 0 : m->prefix_hits) + v;
    if (sample(line, "vllm:prefix_cache_queries_total", &v))
        m->prefix_queries = (m->prefix_queries < 0 ? 0 : m->prefix_queries) + v;
}

int sg_llm_metrics_parse(const char *text, sg_llm_metrics *m) {
    memset(m, 0, sizeof *m);
    m->kv_usage = m->preemptions = m->waiting = m->prefix_hits = m->prefix_queries = -1;
    int found = 0;
    for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
        if (*l == '#') continue;
        char line[512];
        size_t k = strcspn(l, "\n");
        if (k >= sizeof line) continue;
        memcpy(line, l, k);
        line[k] = '\0';
        double v;
        cache_sample(line, m);
        for (int i = 0; i < SG_DIALECT_N; i++) { /* each name once: its first dialect's */
            const sg_dialect_info *d = &sg_dialects[i];
            if (!d->running || seen_before(i)) continue;
            if (sample(line, d->running, &v))
                m->running += v, m->running_name = d->running, found = 1;
            if (sample(line, d->generated, &v)) m->generated += v;
        }
    }
    return found ? 0 : 1;
}

int sg_llm_metrics_fetch(const char *base_url, long timeout_ms, sg_llm_metrics *m, sg_err *err) {
    sg_buf body = {0};
    long status;
    int out = sg_llm_http_root(base_url, "/metrics", NULL, NULL, timeout_ms, &body, &status, err);
    if (out == 0) out = status != 200 ? 1 : sg_llm_metrics_parse(body.data ? body.data : "", m);
    sg_buf_free(&body);
    return out;
}
