/* pool/agent.h — the node agent's parts (`specgen pool`): its job table over local slots,
 * and its HTTP server on the loop. The protocol is docs/agent.md.
 *
 * Contract
 *  - One loop thread runs everything: the HTTP server (libmicrohttpd in external-epoll
 *    mode: its one epoll fd is watched by the loop and MHD_run is called from there, with a
 *    loop timer for MHD's own timeouts), the job table, and the local slots (each a worker
 *    process watched by the loop). No handler blocks: a long-poll for events suspends its
 *    connection and is resumed when an event arrives or its wait ends. So the agent needs no
 *    locks, and the slots' state is only touched from request handlers and slot callbacks,
 *    which never run at the same time.
 *  - sg_agent (agent.c) answers requests given as method, path, query and body, after the
 *    HTTP layer checked the token and the body size; it never reads a socket itself.
 *    Job sources and task files are data: written to the cache folder under their hash
 *    and handed to the sandboxed workers, never to a shell.
 *  - A job may name its slot (a remote scheduler chose it: it then runs there, after what
 *    that slot already runs or holds) or not (the agent picks an idle slot whose role is the
 *    job's kind, else any idle slot, else it waits). Every job ends once: done, dropped
 *    (cancelled while queued), killed (cancelled while running) or failed; each start and
 *    end is an event numbered in one sequence.
 *  - Hooks (for the kvstore in spare device memory): job_starting runs before a job starts
 *    on a device, job_ended after it ended; both may add fields to the event they are
 *    given; metrics appends Prometheus text to /metrics. */
#ifndef SG_POOL_AGENT_H
#define SG_POOL_AGENT_H

#include "common/buf.h"
#include "common/loop.h"
#include "pool/internal.h"

typedef struct sg_agent_hooks {
    void *arg;
    /* job: the job's number (the same at its start and its end); w: what it runs. */
    void (*job_starting)(void *arg, int device, uint64_t job, const sg_pool_work *w, json_t *ev);
    void (*job_ended)(void *arg, int device, uint64_t job, const sg_pool_work *w, json_t *ev);
    void (*metrics)(void *arg, sg_buf *out);
} sg_agent_hooks;

typedef struct sg_agent_config {
    sg_dev_lang lang;
    int ndevices;
    int devices[64]; /* device numbers of lang */
    int per_device;  /* slots on each */
    const char *cache_dir;
    int max_jobs; /* queued + running; beyond: 429 */
    /* Tasks clients may store (new ones since the start: count and their files' bytes);
     * beyond: 429. The agent has one token, so these are per token. */
    int max_tasks;
    uint64_t max_task_bytes;
    /* An event long-poll waits at most this long (its ?wait= is cut to it; 0: not cut, the
     * protocol allows up to 300 s). */
    double max_poll_wait_s;
    sg_agent_hooks hooks;
} sg_agent_config;

typedef struct sg_agent sg_agent;
int sg_agent_new(sg_loop *loop, const sg_agent_config *cfg, sg_agent **out, sg_err *err);
/* Kills what runs (no events), frees. */
void sg_agent_free(sg_agent *a);
/* Refuse new jobs from now on (503): the agent is stopping. */
void sg_agent_drain(sg_agent *a);
/* Called whenever an event was added (the HTTP layer resumes its long-polls). */
void sg_agent_on_event(sg_agent *a, void (*fn)(void *arg), void *arg);
int sg_agent_slots(const sg_agent *a);

/* One request. arg(ctx, name) reads a query argument (NULL: absent). expired: a long-poll
 * whose wait is over (answer with what there is). */
typedef struct sg_agent_request {
    const char *method, *path;
    const char *(*arg)(void *ctx, const char *name);
    void *ctx;
    const char *body;
    size_t len;
    int expired;
} sg_agent_request;

typedef struct sg_agent_reply {
    int status;
    const char *ctype; /* NULL: application/json */
    sg_buf body;
    double suspend_s; /* > 0: no answer yet; wait up to this long for an event, then ask again */
} sg_agent_reply;

void sg_agent_handle(sg_agent *a, const sg_agent_request *req, sg_agent_reply *out);
/* A JSON error body {"error": msg} with status (for the HTTP layer's own refusals). */
void sg_agent_error(sg_agent_reply *out, int status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Prometheus text (agent_metrics.c) and the status object (a new reference). */
void sg_agent_metrics(sg_agent *a, sg_buf *out);
json_t *sg_agent_status(sg_agent *a);

/* ---- the HTTP server (agent_http.c) ---- */
typedef struct sg_agent_http_config {
    const char *host;               /* numeric or "localhost" */
    int port;                       /* 0: any free one */
    const char *token;              /* NULL: no token (loopback only) */
    const char *tls_cert, *tls_key; /* PEM text, both or neither */
    size_t max_body;
    /* A request's headers and body must arrive within this (from the connection's start, or
     * the previous answer on a kept-alive one), else the connection is closed; also MHD's
     * idle timeout. Not a long-poll's wait: that starts once its request is complete. */
    int64_t request_timeout_ns;
    unsigned max_conns, max_conns_per_addr; /* open connections; from one address */
    /* Who answers. NULL: the agent given to sg_agent_http_start (which may then be NULL
     * otherwise). Set: another command's small server (optimize's and campaign's /metrics)
     * with the same token check, body limit, deadlines and per-address limit; it never
     * suspends (out->suspend_s is ignored). */
    void (*handle)(void *arg, const sg_agent_request *req, sg_agent_reply *out);
    void *handle_arg;
    const char *name;      /* in the log and the 401 answer: NULL: "agent" */
    const char *token_opt; /* the option the token comes from, in the 401 answer: NULL:
                              "--token-file" */
} sg_agent_http_config;

typedef struct sg_agent_http sg_agent_http;
/* Listens and serves a (or cfg->handle) on loop. Refuses (err) a host beyond loopback without a
 * token, and TLS when libmicrohttpd was built without it. */
sg_agent_http *sg_agent_http_start(sg_loop *loop, sg_agent *a, const sg_agent_http_config *cfg,
                                   sg_err *err);
int sg_agent_http_port(const sg_agent_http *h);
void sg_agent_http_stop(sg_agent_http *h);

/* ---- internals shared by agent.c and agent_metrics.c ---- */
typedef struct sg_agent_slot {
    sg_pool_slot_desc desc;
    int local, index; /* its sg_pool_local (one per device) and its slot there */
    sg_pool_role role;
    struct sg_agent_job *job; /* running */
    int64_t busy_ns;          /* finished runs */
    json_t *verdicts;         /* verdict -> count */
} sg_agent_slot;

enum { SG_AGENT_NBUCKETS = 8 };
extern const double sg_agent_buckets[SG_AGENT_NBUCKETS]; /* queue wait, seconds */

typedef struct sg_agent_stats {
    uint64_t wait_bucket[SG_POOL_NROLES][SG_AGENT_NBUCKETS]; /* cumulative <= le */
    uint64_t wait_count[SG_POOL_NROLES];
    double wait_sum[SG_POOL_NROLES];
    uint64_t submitted, rejected_full, tasks_received;
} sg_agent_stats;

/* What agent_metrics.c reads. */
int sg_agent_view(const sg_agent *a, const sg_agent_slot **slots, const sg_agent_stats **st,
                  int *queued, int *running, int *tasks_cached);
uint64_t sg_agent_instance(const sg_agent *a);
uint64_t sg_agent_event_seq(const sg_agent *a);
const sg_agent_hooks *sg_agent_hooks_of(const sg_agent *a);
int64_t sg_agent_now(const sg_agent *a);
sg_dev_lang sg_agent_lang(const sg_agent *a);
int sg_agent_max_jobs(const sg_agent *a);
int64_t sg_agent_job_started(const struct sg_agent_job *j);
const char *sg_agent_job_id(const struct sg_agent_job *j);

#endif
