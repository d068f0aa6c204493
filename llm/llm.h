/* llm.h — streaming client for OpenAI-compatible LLM servers (vLLM, SGLang, DeepSeek,
 * llama.cpp, llama-cpp-python, specgen replay-llm), driven by the event loop.
 *
 * Contract
 * - sg_llm_start POSTs to /v1/chat/completions or /v1/completions with stream: true and
 *   stream_options.include_usage, and returns at once; the request is written right
 *   away (from inside a delta callback: right after that callback returns).
 *   Deltas arrive through the callbacks on the loop thread as they are parsed:
 *   `reasoning` gets the server's `reasoning` / `reasoning_content` deltas and, with
 *   think mode AUTO or OPEN, the text inside <think>…</think> split out of `content`;
 *   `content` gets the rest. Texts are not NUL-terminated and live for the call only.
 * - Exactly one of `finish` or `error` ends a stream that the caller did not abort; the
 *   handle is freed when that callback returns. sg_llm_abort (allowed from any
 *   callback of any stream, including this one's deltas) closes the connection at once —
 *   vLLM and SGLang then abort the request — fills *out with what was received, frees
 *   the handle, and no callback of that stream runs afterwards.
 * - Usage comes from the server's usage chunk; when there is none (aborted, or a server
 *   that does not send it), counts are estimated from the text (sg_llm_estimate_tokens)
 *   and marked estimated. The prefix-cache hits (usage.prompt_tokens_details.
 *   cached_tokens) are kept from whichever usage chunk carried them. The request asks for vLLM's
 * continuous_usage_stats, so a server that streams the running usage in every chunk gives exact
 * live counts (sg_llm_live_tokens); without it the live counts are the same estimate.
 * - max_tokens is enforced here too, for servers that ignore it: a stream whose completion
 *   tokens pass it (the server's running count; with the estimate, past 5/4 of it + 16, the
 *   estimate's margin) is cut and ends with finish "length" (the finish callback).
 * - Retries with exponential backoff and jitter on connect errors, 429 (Retry-After
 *   honoured) and 5xx, only before the first token; after it, a broken stream is an error
 *   naming how many tokens had arrived. Timeouts: connect, first token, idle.
 * - A first token that is late is said (sg_warn, module "llm"): after 10 s (half the
 *   first-token timeout when that is shorter), then every 30 s, naming the endpoint and the
 *   timeout; the error at the timeout names its value and first_token_option. URLs in
 *   every message, warning and result are shown without their user:password@.
 * - Several endpoint URLs: each request goes to the endpoint with the fewest running
 *   streams (one that refused a connection is skipped for a while); with
 *   max_per_endpoint set, requests beyond it wait in a queue (higher priority first,
 *   then FIFO).
 * - The API key (config, else $SPECGEN_API_KEY, else $OPENAI_API_KEY) is sent as a bearer
 *   token and never logged or put in an error message.
 * - Token ids (docs/llm-servers.md, "Forks as token ids"): with return_ids the request asks
 *   for vLLM's return_token_ids; the prompt's ids (prompt_token_ids, first chunk) and the
 *   generated ids (choices[0].token_ids, every chunk) are kept with the stream
 *   (sg_llm_stream_ids). An endpoint that answers 400 naming return_token_ids (SGLang on a
 *   streamed chat, a strict OpenAI-compatible API) is marked and the request goes again at
 *   once without the field; later requests there leave it out. A completions request may
 *   carry its prompt as ids (prompt_ids), sent as a JSON array.
 * - Use the real loop (libcurl's timeouts are wall-clock). Single-threaded. */
#ifndef SG_LLM_H
#define SG_LLM_H

#include "common/err.h"
#include "common/curl_loop.h"
#include "common/loop.h"

#include <stddef.h>
#include <stdint.h>

typedef struct sg_llm sg_llm;
typedef struct sg_llm_stream sg_llm_stream;

typedef enum { SG_LLM_CHAT = 0, SG_LLM_COMPLETIONS = 1 } sg_llm_api;

/* How <think> tags inside content are treated. AUTO: split when the text starts with
 * <think>. OPEN: the prompt already opened <think>, so text is reasoning until </think>.
 * OFF: content is content. */
typedef enum { SG_LLM_THINK_AUTO = 0, SG_LLM_THINK_OPEN, SG_LLM_THINK_OFF } sg_llm_think_mode;

typedef struct sg_llm_config {
    const char *const *urls; /* base URLs: http://host:8000 or http://host:8000/v1 */
    size_t n_urls;
    int max_per_endpoint;           /* running streams per endpoint; 0: no cap */
    const char *api_key;            /* NULL: from the environment (or none) */
    int64_t connect_timeout_ns;     /* 0: 10 s */
    int64_t first_token_timeout_ns; /* 0: 300 s (a long prompt's prefill) */
    /* The option that sets first_token_timeout_ns, named in the warning and the error
     * ("--first-token-timeout"); NULL: none is named. */
    const char *first_token_option;
    int64_t idle_timeout_ns; /* 0: 120 s without a byte */
    int max_retries;         /* < 0: none; 0: default 4 */
    int64_t backoff_ns;      /* first retry delay; 0: 250 ms (doubles, jittered) */
    int64_t backoff_max_ns;  /* 0: 20 s */
    uint64_t seed;           /* jitter; 0: fixed default */
} sg_llm_config;

typedef struct sg_llm_request {
    sg_llm_api api;
    const char *model;
    const char *system, *user; /* chat: the two messages (system may be NULL) */
    const char *assistant;     /* chat: a final assistant message the server continues
                                  (sent with continue_final_message, no generation prompt) */
    const char *prompt;        /* completions: the raw prompt (a fork's prefix) */
    const int32_t *prompt_ids; /* completions: the prompt as token ids (n_prompt_ids of them),
                                  sent instead of `prompt` when set */
    size_t n_prompt_ids;
    int return_ids;          /* ask for the token ids (vLLM's return_token_ids) */
    int64_t max_tokens;      /* 0: server default */
    double temperature;      /* < 0: server default */
    double top_p;            /* <= 0: server default */
    const char *extra_json;  /* JSON object merged into the body, or NULL */
    const char *const *stop; /* stop strings sent as "stop" (nstop of them; 0: none) */
    size_t nstop;
    sg_llm_think_mode think;
    int priority;       /* when queued at the cap: higher starts first (forks) */
    int64_t trigger_ns; /* > 0: sent as X-Specgen-Trigger-Ns (CLOCK_MONOTONIC) and t_sent_ns
                           measured, for benchmarks */
} sg_llm_request;

typedef struct sg_llm_usage {
    int64_t prompt_tokens, completion_tokens, reasoning_tokens;
    int estimated; /* 1: counted from delta chunks, not reported by the server */
    /* Prompt tokens the server took from its prefix cache (prompt_tokens_details.
     * cached_tokens), when it says so: vLLM with --enable-prompt-tokens-details, SGLang with
     * --enable-cache-report. Both leave the field out when nothing was cached. */
    int64_t cached_tokens;
    int cached_reported; /* 1: some usage chunk of this stream carried cached_tokens */
} sg_llm_usage;

typedef struct sg_llm_result {
    char finish_reason[32]; /* "stop", "length", "abort" (server), "client-abort", or "" */
    sg_llm_usage usage;
    int64_t reasoning_chunks, content_chunks;
    int64_t reasoning_bytes, content_bytes;
    int64_t t_start_ns, t_first_ns, t_end_ns; /* loop times; t_first_ns 0: no token */
    int64_t t_sent_ns; /* when the request's last bytes went to the socket; only measured
                          for requests with trigger_ns > 0 (it costs a debug callback) */
    int64_t events;    /* SSE events read, over all attempts ("[DONE]" included) */
    int attempts;
    int first_token_timeout;     /* 1: ended because no token came within the first-token timeout */
    int http_status;             /* the last attempt's HTTP status (0: none came) */
    const char *endpoint;        /* borrowed from the client; without user:password@ */
    const char *dialect;         /* detected from the stream (static string) */
    int64_t prompt_ids, gen_ids; /* token ids the server returned (return_ids): the prompt's,
                                    and the generated ones */
    int ids_refused;             /* the endpoint refused return_token_ids (sent again without) */
} sg_llm_result;

typedef struct sg_llm_callbacks {
    void (*reasoning)(void *arg, const char *text, size_t len);
    void (*content)(void *arg, const char *text, size_t len);
    void (*usage)(void *arg, const sg_llm_usage *u);
    void (*finish)(void *arg, const sg_llm_result *r);
    void (*error)(void *arg, const char *msg, const sg_llm_result *r);
    void *arg;
} sg_llm_callbacks;

sg_llm *sg_llm_new(sg_curl_loop *cl, const sg_llm_config *cfg, sg_err *err);
/* Aborts every stream still running (no callbacks), then frees. Not from inside a
 * callback of this client's streams (call it after sg_loop_run returned). */
void sg_llm_free(sg_llm *llm);

sg_llm_stream *sg_llm_start(sg_llm *llm, const sg_llm_request *req, const sg_llm_callbacks *cb,
                            sg_err *err);
/* A fork: a short completions request on a prompt that ends inside the answer. */
sg_llm_stream *sg_llm_fork(sg_llm *llm, const char *model, const char *prompt, int64_t max_tokens,
                           const sg_llm_callbacks *cb, sg_err *err);
void sg_llm_abort(sg_llm_stream *s, sg_llm_result *out);

/* The token ids a stream that asked for them (return_ids) has received so far, borrowed
 * until the stream ends or gets more chunks: the prompt's, and the generated ids that
 * the reasoning delivered so far covers exactly — *n_gen ids that end where the
 * *reasoning_bytes delivered through the reasoning callback end (ids of chunks without
 * text before the reasoning, such as <think>, included; ids after the reasoning's last
 * text, such as </think>, not). Returns 0 when both prompt and generated ids are there
 * and the reasoning came in the reasoning field (not <think> tags in content), else -1
 * with *why saying what is missing (a static string). */
int sg_llm_stream_ids(const sg_llm_stream *s, const int32_t **prompt, size_t *n_prompt,
                      const int32_t **gen, size_t *n_gen, int64_t *reasoning_bytes,
                      const char **why);
/* Blocking, for setup (not from the loop): text's token ids from the endpoint's /tokenize
 * (vLLM and SGLang: POST {base}/tokenize {model, prompt, add_special_tokens: false} ->
 * {"tokens": [...]}), within timeout_ms. *ids is malloc'd. -1 (err names the URL and the
 * answer) when the server has no such route or answers something else. */
int sg_llm_tokenize(const char *url, const char *model, const char *api_key, const char *text,
                    int32_t **ids, size_t *n, long timeout_ms, sg_err *err);
/* The same on the loop: returns at once; done runs once on the loop thread with the ids
 * (borrowed for the call) or err set (ids NULL). Owned by the caller: sg_llm_tokenize_free
 * (after done, or to cancel it: then done never runs). NULL with err if it cannot start. */
typedef struct sg_llm_tokenizing sg_llm_tokenizing;
typedef void (*sg_llm_tokenize_done)(void *arg, const int32_t *ids, size_t n, const char *err);
sg_llm_tokenizing *sg_llm_tokenize_start(sg_curl_loop *cl, const char *url, const char *model,
                                         const char *api_key, const char *text, long timeout_ms,
                                         sg_llm_tokenize_done done, void *arg, sg_err *err);
void sg_llm_tokenize_free(sg_llm_tokenizing *t);

/* The documented estimate where a server gives no count: about 4 bytes of text a token
 * (the usual rule for English and code), and never fewer than the delta chunks (a chunk
 * carries at least one token): max(chunks, ceil(bytes / 4)). */
int64_t sg_llm_estimate_tokens(int64_t bytes, int64_t chunks);
/* Live counts of a running stream, for its callbacks: the server's running usage when it
 * streams one (reasoning: its reasoning_tokens, else its completion tokens while no
 * content arrived yet), else the estimate; *estimated says which. */
int64_t sg_llm_live_tokens(const sg_llm_stream *s, int reasoning, int *estimated);

/* Streams alive (running, queued or waiting to retry) over all endpoints. */
size_t sg_llm_active(const sg_llm *llm);
/* Streams running on endpoint i (in config order), for monitoring and tests. */
int sg_llm_endpoint_running(const sg_llm *llm, size_t i);

/* -1 (err names the URL, without user:password@, and what is wrong) unless url is
 * http:// or https://, has a host, a port (when given) from 1 to 65535, and no space or
 * control character: for option parsing, before anything is started. */
int sg_llm_url_check(const char *url, sg_err *err);

/* `specgen llm-check` (cmd_llm_check.c): probe an endpoint. */
int sg_cmd_llm_check(int argc, char **argv);

#endif
