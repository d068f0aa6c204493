/* Streamed chunks byte for byte as each server writes them (field names, order, nulls):
 * vLLM >= 0.11, SGLang, the DeepSeek API, llama.cpp's server; raw = vLLM without a
 * reasoning parser. See docs/replay-trace.md for samples. */
#include "replay/replay_impl.h"

#include <string.h>

#define STR(out, t, n) sg_buf_append_json_stringn(out, t, n)
#define DEEPSEEK_FP ",\"system_fingerprint\":\"fp_5417b77867_prod0820_fp8_kvcache\""

static void head(sg_buf *o, const sg_replay_fmt *f) {
    sg_buf_printf(o, "{\"id\":\"%s\",\"object\":\"%s\",\"created\":%lld,\"model\":", f->id,
                  f->chat ? "chat.completion.chunk" : "text_completion", f->created);
    sg_buf_append_json_string(o, f->model);
}

/* Cached prompt tokens (--cached-prefix) as each server reports them: vLLM with
 * --enable-prompt-tokens-details leaves prompt_tokens_details out when nothing was cached,
 * SGLang with --enable-cache-report writes null then, DeepSeek always writes the count. */
static void usage_obj(sg_buf *o, const sg_replay_fmt *f) {
    long long cached = f->cached_report ? (long long)f->cached_tokens : 0;
    sg_buf_printf(o, "{\"prompt_tokens\":%lld,\"total_tokens\":%lld,\"completion_tokens\":%lld",
                  (long long)f->prompt_tokens, (long long)(f->prompt_tokens + f->completion_tokens),
                  (long long)f->completion_tokens);
    if ((f->d == SG_DIALECT_VLLM || f->d == SG_DIALECT_RAW) && cached > 0)
        sg_buf_printf(o, ",\"prompt_tokens_details\":{\"cached_tokens\":%lld}", cached);
    if (f->d == SG_DIALECT_SGLANG) {
        if (cached > 0)
            sg_buf_printf(o, ",\"prompt_tokens_details\":{\"cached_tokens\":%lld}", cached);
        else
            sg_buf_append_str(o, ",\"prompt_tokens_details\":null");
        sg_buf_printf(o, ",\"reasoning_tokens\":%lld", (long long)f->reasoning_tokens);
    }
    if (f->d == SG_DIALECT_DEEPSEEK)
        sg_buf_printf(
            o,
            ",\"prompt_tokens_details\":{\"cached_tokens\":%lld},\"completion_tokens_details\":"
            "{\"reasoning_tokens\":%lld},\"prompt_cache_hit_tokens\":%lld,\"prompt_cache_miss_"
            "tokens\":%lld",
            cached, (long long)f->reasoning_tokens, cached, (long long)f->prompt_tokens - cached);
    sg_buf_append_str(o, "}");
}

/* vLLM, SGLang, DeepSeek: a chunk of its own with no choices. */
static void usage_chunk(sg_buf *o, const sg_replay_fmt *f) {
    head(o, f);
    if (f->d == SG_DIALECT_DEEPSEEK) sg_buf_append_str(o, DEEPSEEK_FP);
    sg_buf_append_str(o, ",\"choices\":[],\"usage\":");
    usage_obj(o, f);
    sg_buf_append_str(o, "}");
}

static void finish_val(sg_buf *o, const char *finish) {
    if (finish)
        sg_buf_printf(o, "\"%s\"", finish);
    else
        sg_buf_append_str(o, "null");
}

static void ids_arr(sg_buf *o, const char *key, const int32_t *v, size_t n) {
    sg_buf_printf(o, ",\"%s\":[", key);
    for (size_t i = 0; i < n; i++) sg_buf_printf(o, i ? ",%d" : "%d", v[i]);
    sg_buf_append_str(o, "]");
}

/* vLLM, raw, and (with a fingerprint) DeepSeek share a shape. With return_token_ids, vLLM
 * adds the chunk's token_ids to the choice and the prompt_token_ids to the first chunk
 * (chat: top level; completions: in the choice). */
static void vllm_like(sg_buf *o, const sg_replay_fmt *f, int kind, const char *t, size_t n,
                      const char *finish) {
    int ds = f->d == SG_DIALECT_DEEPSEEK;
    head(o, f);
    if (ds) sg_buf_append_str(o, DEEPSEEK_FP);
    sg_buf_append_str(o, ",\"choices\":[{\"index\":0,");
    if (!f->chat) {
        sg_buf_append_str(o, "\"text\":");
        STR(o, t, n);
    } else if (kind == SG_RF_IDS) { /* a token the reasoning parser hid: ids only */
        sg_buf_append_str(o, "\"delta\":{}");
    } else if (kind == SG_RF_ROLE) {
        sg_buf_append_str(
            o, ds ? "\"delta\":{\"role\":\"assistant\",\"content\":null,\"reasoning_content\":\"\"}"
                  : "\"delta\":{\"role\":\"assistant\",\"content\":\"\"}");
    } else if (kind == SG_RF_REASONING && f->d != SG_DIALECT_RAW) {
        sg_buf_append_str(o, ds ? "\"delta\":{\"content\":null,\"reasoning_content\":"
                                : "\"delta\":{\"reasoning\":");
        STR(o, t, n);
        sg_buf_append_str(o, "}");
    } else {
        sg_buf_append_str(o, "\"delta\":{\"content\":");
        STR(o, t, n);
        sg_buf_append_str(o, ds ? ",\"reasoning_content\":null}" : "}");
    }
    sg_buf_append_str(o, ",\"logprobs\":null,\"finish_reason\":");
    finish_val(o, finish);
    if (!ds) sg_buf_append_str(o, ",\"stop_reason\":null");
    if (!f->chat && f->n_prompt_ids) ids_arr(o, "prompt_token_ids", f->prompt_ids, f->n_prompt_ids);
    if (f->n_tok_ids) ids_arr(o, "token_ids", f->tok_ids, f->n_tok_ids);
    sg_buf_append_str(o, "}]");
    if (f->continuous_usage) /* vLLM: prompt, total and completion tokens so far */
        sg_buf_printf(o,
                      ",\"usage\":{\"prompt_tokens\":%lld,\"total_tokens\":%lld,"
                      "\"completion_tokens\":%lld}",
                      (long long)f->prompt_tokens,
                      (long long)(f->prompt_tokens + f->running_tokens),
                      (long long)f->running_tokens);
    if (f->chat && f->n_prompt_ids) ids_arr(o, "prompt_token_ids", f->prompt_ids, f->n_prompt_ids);
    sg_buf_append_str(o, "}");
}

static void sglang(sg_buf *o, const sg_replay_fmt *f, int kind, const char *t, size_t n,
                   const char *finish) {
    head(o, f);
    sg_buf_append_str(o, ",\"choices\":[{\"index\":0,");
    if (!f->chat) {
        sg_buf_append_str(o, "\"text\":");
        STR(o, t, n);
        sg_buf_append_str(o, ",\"logprobs\":null");
    } else {
        sg_buf_append_str(o, "\"delta\":{\"role\":");
        sg_buf_append_str(o, kind == SG_RF_ROLE ? "\"assistant\"" : "null");
        sg_buf_append_str(o, ",\"content\":");
        if (kind == SG_RF_CONTENT)
            STR(o, t, n);
        else
            sg_buf_append_str(o, kind == SG_RF_ROLE ? "\"\"" : "null");
        sg_buf_append_str(o, ",\"reasoning_content\":");
        if (kind == SG_RF_REASONING)
            STR(o, t, n);
        else
            sg_buf_append_str(o, "null");
        sg_buf_append_str(o, ",\"tool_calls\":null},\"logprobs\":null");
    }
    sg_buf_append_str(o, ",\"finish_reason\":");
    finish_val(o, finish);
    sg_buf_append_str(o, ",\"matched_stop\":");
    sg_buf_append_str(o, finish && !strcmp(finish, "stop") ? "151645" : "null");
    sg_buf_append_str(o, "}],\"usage\":null}");
}

static void llamacpp(sg_buf *o, const sg_replay_fmt *f, int kind, const char *t, size_t n,
                     const char *finish) {
    sg_buf_append_str(o, "{\"choices\":[{\"finish_reason\":");
    finish_val(o, finish);
    sg_buf_append_str(o, ",\"index\":0,");
    if (!f->chat) {
        sg_buf_append_str(o, "\"text\":");
        STR(o, t, n);
        sg_buf_append_str(o, ",\"logprobs\":null");
    } else if (kind == SG_RF_ROLE) {
        sg_buf_append_str(o, "\"delta\":{\"role\":\"assistant\",\"content\":null}");
    } else if (kind == SG_RF_FINISH) {
        sg_buf_append_str(o, "\"delta\":{}");
    } else {
        sg_buf_append_str(o, kind == SG_RF_REASONING ? "\"delta\":{\"reasoning_content\":"
                                                     : "\"delta\":{\"content\":");
        STR(o, t, n);
        sg_buf_append_str(o, "}");
    }
    sg_buf_printf(o, "}],\"created\":%lld,\"id\":\"%s\",\"model\":", f->created, f->id);
    sg_buf_append_json_string(o, f->model);
    sg_buf_printf(o, ",\"system_fingerprint\":\"b6002-replay\",\"object\":\"%s\"",
                  f->chat ? "chat.completion.chunk" : "text_completion");
    if (kind == SG_RF_FINISH) { /* llama.cpp puts usage and timings on the last chunk */
        if (f->include_usage) {
            sg_buf_printf(o,
                          ",\"usage\":{\"completion_tokens\":%lld,\"prompt_tokens\":%lld,\"total_"
                          "tokens\":%lld}",
                          (long long)f->completion_tokens, (long long)f->prompt_tokens,
                          (long long)(f->prompt_tokens + f->completion_tokens));
        }
        sg_buf_printf(o, ",\"timings\":{\"prompt_n\":%lld,\"predicted_n\":%lld}",
                      (long long)f->prompt_tokens, (long long)f->completion_tokens);
    }
    sg_buf_append_str(o, "}");
}

void sg_replay_fmt_chunk(sg_buf *out, const sg_replay_fmt *f, int kind, const char *t, size_t n,
                         const char *finish) {
    if (kind == SG_RF_USAGE && f->d == SG_DIALECT_LLAMACPP) return; /* went out with the finish */
    sg_buf_append_str(out, "data: ");
    if (!t) t = "", n = 0;
    if (kind == SG_RF_USAGE)
        usage_chunk(out, f);
    else
        switch (f->d) {
        case SG_DIALECT_SGLANG: sglang(out, f, kind, t, n, finish); break;
        case SG_DIALECT_LLAMACPP: llamacpp(out, f, kind, t, n, finish); break;
        default: vllm_like(out, f, kind, t, n, finish); break;
        }
    sg_buf_append_str(out, "\n\n");
}
