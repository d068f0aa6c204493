/* llm_metrics.h — reads a server's Prometheus /metrics to see whether it is still
 * generating (vLLM, SGLang, llama.cpp with --metrics, replay-llm). Used by llm-check
 * to tell whether an aborted stream really stopped the server.
 *
 * Contract: sg_llm_metrics_fetch GETs BASE/metrics (BASE without /v1), blocking up to
 * timeout_ms (a command's helper, not for the event loop). It returns 0 and fills
 * running / generated (summed over label sets) when a known metric is present, 1 when
 * the server has no /metrics or none of the known names, -1 on a transport error. */
#ifndef SG_LLM_METRICS_H
#define SG_LLM_METRICS_H

#include "common/err.h"

#include <stdint.h>

typedef struct sg_llm_metrics {
    double running, generated;
    const char *running_name; /* static: which metric was found */
    /* cache pressure (campaign admission), -1 when the server does not report it: KV cache
     * usage 0..1 (vllm:kv_cache_usage_perc, vllm:gpu_cache_usage_perc, sglang:token_usage,
     * llamacpp:kv_cache_usage_ratio; the largest label set's), preemptions since its start
     * (vllm:num_preemptions_total, vllm:num_preemptions, sglang:num_retracted_reqs_total),
     * requests waiting (vllm:num_requests_waiting, sglang:num_queue_reqs,
     * llamacpp:requests_deferred), prefix-cache hits and queries in tokens
     * (vllm:prefix_cache_hits_total, vllm:prefix_cache_queries_total). Sums over label sets. */
    double kv_usage, preemptions, waiting, prefix_hits, prefix_queries;
} sg_llm_metrics;

int sg_llm_metrics_fetch(const char *base_url, long timeout_ms, sg_llm_metrics *m, sg_err *err);
/* Parse metrics text (exposed for tests). Returns 0 when a known metric was found. */
int sg_llm_metrics_parse(const char *text, sg_llm_metrics *m);

#endif
