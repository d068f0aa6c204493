/* replay_impl.h — replay-llm's private pieces: the server and request state
 * (replay_server.c: HTTP), the stream plan and reader (replay_stream.c), the
 * dialect chunk writer (replay_format.c) and the prompts seen for --cached-prefix
 * (replay_prefix.c). */
#ifndef SG_REPLAY_IMPL_H
#define SG_REPLAY_IMPL_H

#include "common/buf.h"
#include "replay/replay.h"

#include <jansson.h>

#include <microhttpd.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/types.h>

/* SG_RF_IDS: a chunk with no text, only token ids (as vLLM sends the <think> and </think>
 * tokens its reasoning parser swallows when return_token_ids is asked for). */
enum { SG_RF_ROLE, SG_RF_REASONING, SG_RF_CONTENT, SG_RF_FINISH, SG_RF_USAGE, SG_RF_IDS };

/* A growing list of token ids. */
typedef struct sg_replay_ids {
    int32_t *v;
    size_t n, cap;
} sg_replay_ids;

typedef struct sg_replay_fmt {
    sg_replay_dialect d;
    int chat;
    int include_usage;
    int continuous_usage;   /* vLLM's continuous_usage_stats: usage in every chunk */
    int64_t running_tokens; /* tokens streamed with this chunk included */
    char id[64];
    long long created;
    const char *model;
    int64_t prompt_tokens, completion_tokens, reasoning_tokens;
    int cached_report;     /* --cached-prefix: usage reports cached_tokens (dialect's way) */
    int64_t cached_tokens; /* of prompt_tokens, shared with an earlier prompt */
    int return_ids;        /* vLLM's return_token_ids: ids with every chunk */
    const int32_t *prompt_ids, *tok_ids; /* this chunk's (prompt ids: the first chunk only) */
    size_t n_prompt_ids, n_tok_ids;
} sg_replay_fmt;

/* The prompts served, for --cached-prefix: the most recent SG_REPLAY_PREFIX_KEEP. */
enum { SG_REPLAY_PREFIX_KEEP = 1024 };
typedef struct sg_replay_prefixes {
    char *text[SG_REPLAY_PREFIX_KEEP];
    size_t len[SG_REPLAY_PREFIX_KEEP];
    size_t n, next; /* next: the oldest, replaced once all are used */
} sg_replay_prefixes;

/* Token ids (replay_ids.c): every distinct token text (the trace's cut) gets an id when
 * first seen; prompts given as ids are read back through it. */
typedef struct sg_replay_vocab {
    char **str;
    uint32_t *len;
    size_t n, cap;
    int32_t *slot; /* open addressing: id + 1, 0 empty */
    size_t nslot;
} sg_replay_vocab;

/* The id sequences served (prompt, then the ids streamed so far), for --cached-prefix by ids. */
typedef struct sg_replay_idcache {
    sg_replay_ids seq[SG_REPLAY_PREFIX_KEEP];
    uint64_t serial[SG_REPLAY_PREFIX_KEEP];
    size_t n, next;
    uint64_t next_serial;
} sg_replay_idcache;

struct sg_replay_server { /* replay_server.c */
    struct MHD_Daemon *d;
    const sg_replay_traces *ts;
    sg_replay_config cfg;
    int port, listen_fd;
    FILE *log;          /* cfg.log_requests, or NULL */
    pthread_mutex_t mu; /* guards everything below */
    int64_t running, requests, forks, tokens, disconnects, faulted;
    int64_t prompt_tokens, cached_tokens; /* summed over the streams served */
    sg_replay_prefixes seen;              /* with cfg.cached_prefix */
    sg_replay_vocab vocab;
    sg_replay_idcache idseen; /* with cfg.cached_prefix: by ids */
    int64_t *trig_us;
    size_t n_trig, cap_trig;
    uint64_t next_id;
    int64_t kv_used, kv_preemptions, kv_waiting; /* cfg.kv_tokens: the modelled cache */
};

/* One thing a stream writes; kind < 0: a comment line. */
typedef struct sg_replay_step {
    int kind;
    const char *text;
    uint32_t len;
    int64_t at_us;         /* from the request's arrival, before the speed factor */
    uint32_t id_off, id_n; /* its token ids in the request's ids (return_token_ids) */
} sg_replay_step;

/* One request (a connection's current one). */
typedef struct sg_replay_rq {
    sg_replay_server *s;
    struct MHD_Connection *conn;
    sg_buf body;
    int64_t arrival_ns;
    sg_replay_step *steps;
    size_t nsteps, next, tokens;
    sg_replay_fmt fmt;
    sg_buf out;
    size_t off;
    int streaming, done_sent, gone, fault_on, fault_fired;
    int64_t stall_ns;
    int has_ids;        /* ids known: prompt given as ids, or return_token_ids asked */
    sg_replay_ids pids; /* the prompt's ids */
    sg_replay_ids ids;  /* the steps' ids */
    size_t id_slot;     /* its entry in idseen (cached_prefix and has_ids) */
    uint64_t id_serial; /* ... while it is still this request's (0: none) */
    int64_t kv;         /* cfg.kv_tokens: KV tokens it holds */
    int kv_waiting;     /* preempted (or new) and waiting for room */
} sg_replay_rq;

/* replay_kv.c (cfg.kv_tokens > 0; else they do nothing) */
int sg_replay_kv_before_token(sg_replay_rq *r);                  /* may wait; takes s->mu itself */
void sg_replay_kv_release(sg_replay_rq *r);                      /* s->mu held */
void sg_replay_kv_metrics(const sg_replay_server *s, sg_buf *b); /* s->mu held */

/* replay_stream.c */
int64_t sg_replay_mono_ns(void);
/* Plans the stream of a request; returns 1 when it is a fork. */
int sg_replay_plan(sg_replay_rq *r, const sg_replay_trace *t, const char *prompt,
                   int64_t max_tokens);
/* libmicrohttpd's content reader for a planned stream. */
ssize_t sg_replay_reader(void *cls, uint64_t pos, char *buf, size_t max);

/* replay_prefix.c: the longest run of leading bytes the prompt shares with one served
 * before (0 for the first); then the prompt is remembered (the oldest dropped when full). */
size_t sg_replay_prefix_seen(sg_replay_prefixes *p, const char *prompt, size_t len);
void sg_replay_prefixes_free(sg_replay_prefixes *p);

/* replay_ids.c. Each takes s->mu itself, but cached, which runs under it.
 * request: reads return_token_ids and a prompt given as ids (*prompt is then replaced by its
 * text); -1 with err (a 400: an unknown id, or SGLang's refusal of return_token_ids on a
 * streamed chat). plan: after sg_replay_plan, the ids of the prompt and of every step
 * (with <think> / </think> id chunks around a chat's reasoning). cached: the prompt's
 * leading ids held by a sequence served before (at most all but one), and this one kept. */
int sg_replay_ids_request(sg_replay_rq *r, json_t *req, int chat, char **prompt, sg_err *err);
void sg_replay_ids_plan(sg_replay_rq *r, const char *prompt);
int64_t sg_replay_ids_cached(sg_replay_rq *r);
/* The reader streamed step st: its ids join the request's cached sequence. */
void sg_replay_ids_streamed(sg_replay_rq *r, const sg_replay_step *st);
/* POST /tokenize (vLLM's shape): {"count","max_model_len","tokens","token_strs"}. */
int sg_replay_tokenize(sg_replay_server *s, const char *body, size_t len, sg_buf *out, sg_err *err);
void sg_replay_ids_free(sg_replay_server *s);

/* Append one complete SSE event ("data: {...}\n\n") of the given kind. REASONING is
 * written as the dialect's reasoning field in chat (not for raw), else as text. */
void sg_replay_fmt_chunk(sg_buf *out, const sg_replay_fmt *f, int kind, const char *text, size_t n,
                         const char *finish);

#endif
