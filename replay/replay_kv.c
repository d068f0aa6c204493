/* replay_kv.c — replay-llm --kv-tokens: a modelled KV cache for admission tests. Each running
 * stream holds its prompt tokens (bytes / 4) and every token it has streamed; a stream about
 * to stream a token while the cache is full is preempted, as vLLM preempts a request: its KV
 * is dropped, it waits until its whole context fits again, then pays its recompute (the
 * context at KV_RECOMPUTE_TOK_S tokens/s of the trace's clock) before going on. /metrics then
 * carries vLLM's names for the cache: usage, preemptions, waiting requests. */
#include "replay/replay_impl.h"

#include <time.h>

#define KV_RECOMPUTE_TOK_S 20000.0 /* prefill rate of a recompute, tokens per trace second */
#define KV_POLL_NS 20000000LL      /* how often a preempted stream looks for room */

static int64_t context(const sg_replay_rq *r) { return r->fmt.prompt_tokens + (int64_t)r->tokens; }

int sg_replay_kv_before_token(sg_replay_rq *r) {
    sg_replay_server *s = r->s;
    if (s->cfg.kv_tokens <= 0) return 0;
    pthread_mutex_lock(&s->mu);
    /* full, and not by this stream alone: it gives its KV up (a new one just waits) */
    if (!r->kv_waiting && s->kv_used + 1 > s->cfg.kv_tokens && s->kv_used > r->kv) {
        r->kv_waiting = 1; /* preempted (or never admitted) */
        s->kv_preemptions += r->kv > 0;
        s->kv_waiting++;
        s->kv_used -= r->kv;
        r->kv = 0;
    }
    while (r->kv_waiting) {
        if (s->kv_used + context(r) + 1 <= s->cfg.kv_tokens || s->kv_used == 0) {
            r->kv_waiting = 0;
            s->kv_waiting--;
            r->kv = context(r);
            s->kv_used += r->kv;
            double recompute_ns = (double)r->kv / KV_RECOMPUTE_TOK_S * 1e9 / s->cfg.speed;
            r->stall_ns += (int64_t)recompute_ns;
            break;
        }
        pthread_mutex_unlock(&s->mu);
        struct timespec ts = {0, KV_POLL_NS};
        nanosleep(&ts, NULL);
        r->stall_ns += KV_POLL_NS;
        pthread_mutex_lock(&s->mu);
    }
    r->kv++;
    s->kv_used++;
    pthread_mutex_unlock(&s->mu);
    return 0;
}

/* The stream ended: its KV frees (called with s->mu held). */
void sg_replay_kv_release(sg_replay_rq *r) {
    sg_replay_server *s = r->s;
    if (r->kv_waiting) s->kv_waiting--;
    s->kv_used -= r->kv;
    r->kv = 0;
    r->kv_waiting = 0;
}

/* The cache's lines of /metrics (called with s->mu held). */
void sg_replay_kv_metrics(const sg_replay_server *s, sg_buf *b) {
    if (s->cfg.kv_tokens <= 0) return;
    double usage = (double)s->kv_used / (double)s->cfg.kv_tokens;
    sg_buf_printf(b,
                  "vllm:kv_cache_usage_perc{model_name=\"replay\"} %.4f\n"
                  "vllm:num_preemptions_total{model_name=\"replay\"} %lld\n"
                  "vllm:num_requests_waiting{model_name=\"replay\"} %lld\n",
                  usage > 1 ? 1 : usage, (long long)s->kv_preemptions, (long long)s->kv_waiting);
}
