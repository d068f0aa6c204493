/* Token ids: what a stream that asked for them (vLLM's return_token_ids) received, where
 * they end in the reasoning, and the endpoint's /tokenize. Separate from the chunk decoder:
 * only chunks that name token_ids are parsed here. */
#include "llm/llm_impl.h"

#include "common/json.h"
#include <stdlib.h>
#include <string.h>

static void append_ids(json_t *a, int32_t **v, size_t *n, size_t *cap) {
    size_t i;
    json_t *x;
    json_array_foreach(a, i, x) {
        if (!json_is_integer(x)) continue;
        if (*n == *cap) {
            *cap = *cap ? 2 * *cap : 256;
            *v = sg_xrealloc(*v, *cap * sizeof **v);
        }
        (*v)[(*n)++] = (int32_t)json_integer_value(x);
    }
}

void sg_llm_ids_feed(sg_llm_stream *s, const char *data, size_t len, size_t reasoning_len,
                     int has_content) {
    sg_llm_ids *d = &s->ids;
    json_t *root = memmem(data, len, "token_ids", 9) ? json_loadb(data, len, 0, NULL) : NULL;
    json_t *ch = json_array_get(json_object_get(root, "choices"), 0);
    json_t *p = json_object_get(root, "prompt_token_ids");              /* vLLM chat: top level */
    if (!json_is_array(p)) p = json_object_get(ch, "prompt_token_ids"); /* completions */
    if (json_is_array(p) && !d->n_prompt) append_ids(p, &d->prompt, &d->n_prompt, &d->cap_prompt);
    json_t *g = json_object_get(ch, "token_ids");
    if (json_is_array(g)) append_ids(g, &d->gen, &d->n_gen, &d->cap_gen);
    json_decref(root);
    if (d->closed) return;
    if (has_content) { /* the answer began (or the reasoning is inside <think> tags) */
        d->closed = 1;
        return;
    }
    if (reasoning_len) { /* these ids end where this chunk's reasoning text ends */
        d->text_started = 1;
        d->mark_n = d->n_gen;
        d->mark_bytes = s->res.reasoning_bytes + (int64_t)reasoning_len;
    } else if (!d->text_started) { /* before the text: <think> and the like */
        d->mark_n = d->n_gen;
    } /* ids without text after it: held until more reasoning text comes (</think> never) */
}

int sg_llm_ids_refused(const sg_llm_stream *s) {
    return s->body_noids && s->status == 400 && s->errbody.data &&
           strstr(s->errbody.data, "return_token_ids") && s->ep && !s->ep->no_ids;
}

void sg_llm_ids_free(sg_llm_ids *d) {
    free(d->prompt);
    free(d->gen);
    memset(d, 0, sizeof *d);
}

int sg_llm_stream_ids(const sg_llm_stream *s, const int32_t **prompt, size_t *n_prompt,
                      const int32_t **gen, size_t *n_gen, int64_t *reasoning_bytes,
                      const char **why) {
    const sg_llm_ids *d = &s->ids;
    *why = !s->body_noids ? "the reasoning request did not ask for token ids"
           : s->res.ids_refused || (s->ep && s->ep->no_ids)
               ? "the server refused return_token_ids on the reasoning stream"
           : !d->n_prompt ? "the server returned no prompt token ids (return_token_ids ignored)"
           : !d->mark_n   ? "no generated token ids came with the reasoning yet"
           : d->mark_bytes != s->res.reasoning_bytes
               ? "the token ids do not cover the reasoning as delivered (reasoning inside "
                 "<think> tags in content, or chunks without token ids)"
               : NULL;
    if (*why) return -1;
    *prompt = d->prompt;
    *n_prompt = d->n_prompt;
    *gen = d->gen;
    *n_gen = d->mark_n;
    *reasoning_bytes = d->mark_bytes;
    return 0;
}

int sg_llm_tokenize(const char *url, const char *model, const char *api_key, const char *text,
                    int32_t **ids, size_t *n, long timeout_ms, sg_err *err) {
    json_t *req =
        json_pack("{s:s,s:s,s:b}", "model", model, "prompt", text, "add_special_tokens", 0);
    char *payload = sg_json_dump(req);
    json_decref(req);
    sg_buf body = {0};
    long status;
    int ret = sg_llm_http_root(url, "/tokenize", payload, api_key, timeout_ms, &body, &status, err);
    free(payload);
    json_t *root = ret == 0 && status == 200
                       ? json_loadb(body.data ? body.data : "", body.len, 0, NULL)
                       : NULL;
    json_t *toks = json_object_get(root, "tokens");
    *ids = NULL;
    *n = 0;
    if (json_is_array(toks)) {
        size_t cap = 0;
        append_ids(toks, ids, n, &cap);
    } else if (ret == 0) {
        ret = sg_errf(err, "its /tokenize answered HTTP %ld without a \"tokens\" array: %.200s",
                      status, body.data ? body.data : "");
    }
    json_decref(root);
    sg_buf_free(&body);
    return ret;
}
