/* llm_impl.h — the LLM client's private structures, shared by llm.c (stream
 * lifecycle), llm_delta.c (curl callbacks, deltas), llm_route.c (endpoints, backoff)
 * and llm_body.c (request bytes). */
#ifndef SG_LLM_IMPL_H
#define SG_LLM_IMPL_H

#include "common/buf.h"
#include "llm/llm.h"
#include "llm/llm_think.h"
#include "llm/sse.h"

typedef struct sg_llm_endpoint {
    char *base;         /* ".../v1", no trailing slash */
    char *shown;        /* base without user:password@: the one messages name */
    int running;        /* streams sent here and not ended */
    int64_t down_until; /* loop time before which a connect failure sidelines it */
    int no_ids;         /* answered 400 naming return_token_ids: leave the field out here */
} sg_llm_endpoint;

/* The token ids a stream received (return_ids; llm_ids.c). */
typedef struct sg_llm_ids {
    int32_t *prompt, *gen;
    size_t n_prompt, cap_prompt, n_gen, cap_gen;
    size_t mark_n;      /* generated ids that the reasoning delivered so far covers */
    int64_t mark_bytes; /* ... which ends at this many reasoning bytes */
    int text_started;   /* reasoning text came (ids-only chunks after it wait for more) */
    int closed;         /* content came: the reasoning is over, the mark stays */
    int in_content;     /* reasoning came inside content (<think> tags): no exact mark */
} sg_llm_ids;

struct sg_llm_stream {
    sg_llm *llm;
    sg_llm_stream *prev, *next; /* the client's list (queued or running) */
    sg_llm_endpoint *ep;        /* NULL while queued or waiting to retry */
    CURL *easy;
    struct curl_slist *headers;
    const char *url_path; /* "/chat/completions" or "/completions" */
    char *body;
    char *body_noids; /* asked return_token_ids: the body without it (for an endpoint that
                         refuses it), else NULL */
    sg_llm_ids ids;
    sg_llm_callbacks cb;
    sg_llm_think_mode think_mode;
    int priority;
    int64_t trigger_ns;
    int queued;
    int attached;         /* the easy handle is in the multi */
    int chunk_r, chunk_c; /* this chunk carried reasoning / content */
    size_t prompt_bytes;
    int64_t attempt_ns;
    int64_t warn_ns;        /* the next "no token yet" warning, while none came */
    char fail_msg[512];     /* set inside a curl callback, reported at on_done */
    uint64_t timer;         /* first-token / idle watchdog, or the retry wait */
    int in_write;           /* inside curl's write callback */
    int dead;               /* aborted or ended: swallow everything */
    long status;            /* HTTP status of the current attempt */
    int64_t retry_after_ns; /* from a Retry-After header */
    int64_t last_byte_ns;
    sg_buf errbody;        /* body of a non-200 answer, or the start of a non-SSE one */
    char content_type[96]; /* the answer's Content-Type ("" when none was sent) */
    sg_sse sse;
    sg_buf scan; /* the chunk scanner's strings (sg_llm_chunk_scan) */
    sg_llm_think think;
    unsigned features;
    int saw_done, saw_usage;
    int live_usage;         /* a usage object arrived with a delta: running counts */
    int64_t live_reasoning; /* reasoning tokens by the running usage */
    int64_t max_tokens;     /* the request's, enforced here too (0: none) */
    int cut;                /* past max_tokens: ended as "length" by the client */
    sg_llm_result res;
};

struct sg_llm {
    sg_curl_loop *cl;
    sg_loop *loop;
    sg_llm_config cfg;
    sg_llm_endpoint *eps;
    size_t n_eps;
    char *auth_header; /* "Authorization: Bearer ..." or NULL; never printed */
    uint64_t rng;
    sg_llm_stream *head; /* every live stream */
    size_t active;
    int n_queued; /* streams with queued set */
    int in_curl;  /* inside a libcurl callback: no add/remove now */
    int pump_pending;
};

/* llm_route.c */
sg_llm_endpoint *sg_llm_route_pick(sg_llm *llm);
int64_t sg_llm_route_backoff(sg_llm *llm, int attempt);
char *sg_llm_route_base(const char *url, sg_err *err);

/* llm_delta.c: the curl callbacks and what they feed */
void sg_llm_fail_later(sg_llm_stream *s, const char *fmt, const char *detail);
void sg_llm_emit(void *arg, int is_reasoning, const char *text, size_t len);
/* The first token came: the watchdog now waits the idle timeout, not the first-token one. */
void sg_llm_watchdog_idle(sg_llm_stream *s);
int sg_llm_on_event(void *arg, const char *type, const char *data, size_t len);
int sg_llm_on_comment(void *arg, const char *text, size_t len);
size_t sg_llm_on_write(char *p, size_t sz, size_t nm, void *arg);
size_t sg_llm_on_header(char *p, size_t sz, size_t nm, void *arg);
/* A Content-Type that can carry the stream: text/event-stream, or none sent. */
int sg_llm_is_sse_type(const char *type);
int sg_llm_on_debug(CURL *e, curl_infotype type, char *p, size_t n, void *arg);

/* llm_http.c: a blocking request to BASE (without /v1) + route: GET, or POST of post_json;
 * the answer's bytes appended to body and its status in *status. -1 (err names the URL,
 * without user:password@) on a transport error. For commands and setup only. */
/* The easy handle of such a request (its URL into url, its headers into *headers: the
 * caller frees both after the transfer). */
CURL *sg_llm_http_easy(const char *base_url, const char *route, const char *post_json,
                       const char *api_key, long timeout_ms, sg_buf *body, sg_buf *url,
                       struct curl_slist **headers);
int sg_llm_http_root(const char *base_url, const char *route, const char *post_json,
                     const char *api_key, long timeout_ms, sg_buf *body, long *status, sg_err *err);

/* llm_body.c; with_ids: ask for return_token_ids when req->return_ids */
char *sg_llm_body(const sg_llm_request *req, int with_ids, sg_err *err);

/* llm_ids.c: before a chunk's deltas are emitted, keep its token ids (when the stream asked
 * for them), as decoded into c (llm_chunk.h), and mark where they end in the reasoning (c's
 * reasoning text and content). A 400 answer naming return_token_ids. */
struct sg_llm_chunk;
void sg_llm_ids_feed(sg_llm_stream *s, const struct sg_llm_chunk *c);
int sg_llm_ids_refused(const sg_llm_stream *s);
void sg_llm_ids_free(sg_llm_ids *ids);

#endif
