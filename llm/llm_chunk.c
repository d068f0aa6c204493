#include "llm/llm_chunk.h"

#include <string.h>

static const char *str_of(json_t *o, const char *key, size_t *len) {
    json_t *v = json_object_get(o, key);
    if (!json_is_string(v)) return NULL;
    *len = json_string_length(v);
    return json_string_value(v);
}

static int64_t int_of(json_t *o, const char *key) {
    json_t *v = json_object_get(o, key);
    return json_is_integer(v) ? json_integer_value(v) : 0;
}

static void decode_usage(json_t *u, sg_llm_chunk *c) {
    c->has_usage = 1;
    c->features |= SG_LLM_F_USAGE;
    c->usage.prompt_tokens = int_of(u, "prompt_tokens");
    c->usage.completion_tokens = int_of(u, "completion_tokens");
    json_t *d = json_object_get(u, "completion_tokens_details");
    if (json_is_object(d) && json_is_integer(json_object_get(d, "reasoning_tokens")))
        c->usage.reasoning_tokens = int_of(d, "reasoning_tokens");
    else
        c->usage.reasoning_tokens = int_of(u, "reasoning_tokens"); /* SGLang */
    json_t *p = json_object_get(u, "prompt_tokens_details");
    if (json_is_object(p) && json_is_integer(json_object_get(p, "cached_tokens"))) {
        c->usage.cached_tokens = int_of(p, "cached_tokens");
        c->usage.cached_reported = 1;
    }
}

static void decode_fingerprint(json_t *root, sg_llm_chunk *c) {
    size_t n;
    const char *fp = str_of(root, "system_fingerprint", &n);
    if (!fp) return;
    if (!strncmp(fp, "fp_", 3))
        c->features |= SG_LLM_F_FP_DEEPSEEK;
    else if (fp[0] == 'b' && fp[1] >= '0' && fp[1] <= '9')
        c->features |= SG_LLM_F_FP_BUILD;
}

static void decode_choice(json_t *ch, sg_llm_chunk *c) {
    if (json_object_get(ch, "stop_reason")) c->features |= SG_LLM_F_STOP_REASON;
    if (json_object_get(ch, "matched_stop")) c->features |= SG_LLM_F_MATCHED_STOP;
    size_t n;
    const char *fr = str_of(ch, "finish_reason", &n);
    if (fr) c->finish_reason = fr;
    json_t *delta = json_object_get(ch, "delta");
    if (json_is_object(delta)) {
        if ((c->reasoning = str_of(delta, "reasoning", &c->reasoning_len))) {
            c->features |= SG_LLM_F_REASONING;
        } else if ((c->reasoning = str_of(delta, "reasoning_content", &c->reasoning_len))) {
            c->features |= SG_LLM_F_REASONING_CONTENT;
        }
        c->content = str_of(delta, "content", &c->content_len);
    } else {
        c->content = str_of(ch, "text", &c->content_len); /* completions */
    }
}

size_t sg_llm_json_ids(json_t *a, sg_buf *b) {
    size_t i, n = 0;
    json_t *x;
    json_array_foreach(a, i, x) {
        if (!json_is_integer(x)) continue;
        int32_t id = (int32_t)json_integer_value(x);
        sg_buf_append(b, &id, sizeof id);
        n++;
    }
    return n;
}

/* vLLM's token ids: prompt_token_ids at the top (chat) or in the choice (completions). */
static void decode_ids(json_t *root, json_t *ch, sg_llm_chunk *c, sg_buf *scratch) {
    json_t *p = json_object_get(root, "prompt_token_ids");
    if (!json_is_array(p)) p = json_object_get(ch, "prompt_token_ids");
    json_t *g = json_object_get(ch, "token_ids");
    if (!scratch || (!json_is_array(p) && !json_is_array(g))) return;
    sg_buf_clear(scratch);
    c->n_prompt_ids = json_is_array(p) ? sg_llm_json_ids(p, scratch) : 0;
    c->n_gen_ids = json_is_array(g) ? sg_llm_json_ids(g, scratch) : 0;
    sg_buf_reserve(scratch, 1); /* data is set even when both arrays are empty */
    c->prompt_ids = (const int32_t *)(void *)scratch->data;
    c->gen_ids = c->prompt_ids + c->n_prompt_ids;
}

int sg_llm_chunk_decode(json_t *root, sg_llm_chunk *c, sg_buf *scratch, sg_err *err) {
    memset(c, 0, sizeof *c);
    if (!json_is_object(root)) return sg_errf(err, "chunk is not a JSON object");
    json_t *e = json_object_get(root, "error");
    if (e) {
        size_t n;
        c->error = json_is_object(e)   ? str_of(e, "message", &n)
                   : json_is_string(e) ? json_string_value(e)
                                       : NULL;
        if (!c->error) c->error = "server sent an error without a message";
        return 0;
    }
    json_t *u = json_object_get(root, "usage");
    if (json_is_object(u))
        decode_usage(u, c);
    else if (u && json_is_null(u))
        c->features |= SG_LLM_F_USAGE_NULL;
    if (json_object_get(root, "timings")) c->features |= SG_LLM_F_TIMINGS;
    decode_fingerprint(root, c);
    json_t *choices = json_object_get(root, "choices");
    if (choices && !json_is_array(choices))
        return sg_errf(err, "chunk field \"choices\" is a %s, not an array",
                       json_is_object(choices) ? "object" : "scalar");
    json_t *ch = json_array_get(choices, 0);
    if (json_is_object(ch)) decode_choice(ch, c);
    decode_ids(root, json_is_object(ch) ? ch : NULL, c, scratch);
    return 0;
}

/* Which dialect a stream's marks name (common/dialect.h's list), the first rule that
 * matches: any of `any`, or all of `all`; none: openai-compatible. */
static const struct {
    unsigned any, all;
    sg_dialect d;
} RULES[] = {
    {SG_LLM_F_REASONING, 0, SG_DIALECT_VLLM},
    {SG_LLM_F_MATCHED_STOP | SG_LLM_F_USAGE_NULL, 0, SG_DIALECT_SGLANG},
    {SG_LLM_F_TIMINGS | SG_LLM_F_FP_BUILD, 0, SG_DIALECT_LLAMACPP},
    {SG_LLM_F_FP_DEEPSEEK | SG_LLM_F_KEEPALIVE, 0, SG_DIALECT_DEEPSEEK},
    /* reasoning_content with stop_reason: vLLM before 0.11 */
    {0, SG_LLM_F_STOP_REASON | SG_LLM_F_REASONING_CONTENT, SG_DIALECT_VLLM_LEGACY},
    {SG_LLM_F_STOP_REASON, 0, SG_DIALECT_VLLM},
    {SG_LLM_F_PYJSON, 0, SG_DIALECT_LLAMA_CPP_PYTHON},
};

sg_dialect sg_llm_dialect(unsigned f) {
    for (size_t i = 0; i < sizeof RULES / sizeof *RULES; i++)
        if ((f & RULES[i].any) || (RULES[i].all && (f & RULES[i].all) == RULES[i].all))
            return RULES[i].d;
    return SG_DIALECT_OPENAI;
}

const char *sg_llm_dialect_name(unsigned f) { return sg_dialect_name(sg_llm_dialect(f)); }

static int same_str(const char *a, size_t an, const char *b, size_t bn) {
    return (!a && !b) || (a && b && an == bn && !memcmp(a, b, an));
}

const char *sg_llm_chunk_differs(const sg_llm_chunk *a, const sg_llm_chunk *b) {
    if (!same_str(a->reasoning, a->reasoning_len, b->reasoning, b->reasoning_len))
        return "reasoning";
    if (!same_str(a->content, a->content_len, b->content, b->content_len)) return "content";
    if (!same_str(a->finish_reason, a->finish_reason ? strlen(a->finish_reason) : 0,
                  b->finish_reason, b->finish_reason ? strlen(b->finish_reason) : 0))
        return "finish_reason";
    if (!same_str(a->error, a->error ? strlen(a->error) : 0, b->error,
                  b->error ? strlen(b->error) : 0))
        return "error";
    const sg_llm_usage *u = &a->usage, *v = &b->usage;
    if (a->has_usage != b->has_usage || u->prompt_tokens != v->prompt_tokens ||
        u->completion_tokens != v->completion_tokens ||
        u->reasoning_tokens != v->reasoning_tokens || u->cached_tokens != v->cached_tokens ||
        u->cached_reported != v->cached_reported || u->estimated != v->estimated)
        return "usage";
    if (a->features != b->features) return "features";
    if (a->n_prompt_ids != b->n_prompt_ids ||
        (a->n_prompt_ids && memcmp(a->prompt_ids, b->prompt_ids, a->n_prompt_ids * 4)))
        return "prompt_ids";
    if (a->n_gen_ids != b->n_gen_ids ||
        (a->n_gen_ids && memcmp(a->gen_ids, b->gen_ids, a->n_gen_ids * 4)))
        return "gen_ids";
    return NULL;
}
