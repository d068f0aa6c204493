/* Token ids: what a stream that asked for them (vLLM's return_token_ids) received, where
 * they end in the reasoning, and the endpoint's /tokenize. The chunk decoder (the scanner,
 * or jansson) reads the ids; they are only kept here. */
#include "llm/llm_impl.h"

#include "common/json.h"
#include "llm/llm_chunk.h"
#include "common/redact.h"
#include <stdlib.h>
#include <string.h>

/* v grows geometrically: no allocation per chunk once it holds the stream's ids. */
static void append_ids(const int32_t *ids, size_t k, int32_t **v, size_t *n, size_t *cap) {
    if (!k) return;
    if (*n + k > *cap) {
        size_t c = *cap ? *cap : 256;
        while (c < *n + k) c *= 2;
        *v = sg_xrealloc(*v, c * sizeof **v);
        *cap = c;
    }
    memcpy(*v + *n, ids, k * sizeof *ids);
    *n += k;
}

void sg_llm_ids_feed(sg_llm_stream *s, const sg_llm_chunk *c) {
    sg_llm_ids *d = &s->ids;
    size_t reasoning_len = c->reasoning ? c->reasoning_len : 0;
    int has_content = c->content && c->content_len;
    if (!d->n_prompt)
        append_ids(c->prompt_ids, c->n_prompt_ids, &d->prompt, &d->n_prompt, &d->cap_prompt);
    append_ids(c->gen_ids, c->n_gen_ids, &d->gen, &d->n_gen, &d->cap_gen);
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

static char *tokenize_body(const char *model, const char *text) {
    json_t *req =
        json_pack("{s:s,s:s,s:b}", "model", model, "prompt", text, "add_special_tokens", 0);
    char *payload = sg_json_dump(req);
    json_decref(req);
    return payload;
}

/* The "tokens" of a /tokenize answer; -1 with err naming what came instead. */
static int tokenize_answer(const sg_buf *body, long status, int32_t **ids, size_t *n, sg_err *err) {
    json_t *root =
        status == 200 ? json_loadb(body->data ? body->data : "", body->len, 0, NULL) : NULL;
    json_t *toks = json_object_get(root, "tokens");
    *ids = NULL;
    *n = 0;
    int ret = 0;
    if (json_is_array(toks)) {
        sg_buf b = {0};
        *n = sg_llm_json_ids(toks, &b);
        *ids = (int32_t *)(void *)b.data; /* NULL when there are none */
    } else {
        ret = sg_errf(err, "its /tokenize answered HTTP %ld without a \"tokens\" array: %.200s",
                      status, body->data ? body->data : "");
    }
    json_decref(root);
    return ret;
}

int sg_llm_tokenize(const char *url, const char *model, const char *api_key, const char *text,
                    int32_t **ids, size_t *n, long timeout_ms, sg_err *err) {
    char *payload = tokenize_body(model, text);
    sg_buf body = {0};
    long status;
    int ret = sg_llm_http_root(url, "/tokenize", payload, api_key, timeout_ms, &body, &status, err);
    free(payload);
    *ids = NULL;
    *n = 0;
    if (ret == 0) ret = tokenize_answer(&body, status, ids, n, err);
    sg_buf_free(&body);
    return ret;
}

struct sg_llm_tokenizing {
    sg_curl_loop *cl;
    CURL *easy;
    struct curl_slist *headers;
    char *payload;
    sg_buf body, url;
    int running;
    sg_llm_tokenize_done done;
    void *arg;
};

static void tokenized(sg_curl_loop *cl, CURL *easy, CURLcode rc, void *arg) {
    sg_llm_tokenizing *t = arg;
    t->running = 0;
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    int32_t *ids = NULL;
    size_t n = 0;
    sg_err err;
    char shown[512];
    if (rc != CURLE_OK)
        sg_errf(&err, "%s: %s", sg_redact_url_fit(shown, sizeof shown, t->url.data),
                curl_easy_strerror(rc));
    if (rc == CURLE_OK && tokenize_answer(&t->body, status, &ids, &n, &err) == 0)
        t->done(t->arg, ids, n, NULL);
    else
        t->done(t->arg, NULL, 0, err.msg);
    free(ids);
}

sg_llm_tokenizing *sg_llm_tokenize_start(sg_curl_loop *cl, const char *url, const char *model,
                                         const char *api_key, const char *text, long timeout_ms,
                                         sg_llm_tokenize_done done, void *arg, sg_err *err) {
    sg_llm_tokenizing *t = sg_xcalloc(1, sizeof *t);
    t->cl = cl;
    t->done = done;
    t->arg = arg;
    t->payload = tokenize_body(model, text);
    t->easy = sg_llm_http_easy(url, "/tokenize", t->payload, api_key, timeout_ms, &t->body, &t->url,
                               &t->headers);
    if (sg_curl_loop_add(cl, t->easy, tokenized, t, err) < 0) {
        sg_llm_tokenize_free(t);
        return NULL;
    }
    t->running = 1;
    return t;
}

void sg_llm_tokenize_free(sg_llm_tokenizing *t) {
    if (!t) return;
    if (t->running) sg_curl_loop_remove(t->cl, t->easy);
    curl_easy_cleanup(t->easy);
    curl_slist_free_all(t->headers);
    free(t->payload);
    sg_buf_free(&t->body);
    sg_buf_free(&t->url);
    free(t);
}
