/* Remote slots: the slots of `specgen pool` agents behind the slot seam (pool.h states
 * the contract). Everything runs on the loop: requests through curl_loop, one long-poll of
 * events per agent, timers for the reconnect backoff. A job's id is chosen here
 * ("CLIENT-N"), so its end is recognised even when the event comes before the answer to
 * the POST that started it. */
#include "pool/internal.h"

#include "common/buf.h"
#include "common/curl_loop.h"
#include "common/json.h"
#include "common/redact.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

typedef struct agent agent;

typedef struct rslot {
    agent *ag;
    int index, global;      /* on its agent; in the scheduler */
    char job[80];           /* the running job's id, "" when idle */
    struct submission *sub; /* the running job's POST, while on its way */
    sg_val_result vr;
    sg_prof_result pr;
    sg_pool_result r;
} rslot;

typedef struct bundle {
    char *dir;
    char hash[SG_POOL_HASH_HEX];
    json_t *files;
    struct bundle *next;
} bundle;

struct agent {
    sg_pool_remote *owner;
    char url[420], label[300];
    char shown[420]; /* url without credentials: for messages */
    int n;
    rslot *s;
    int up;
    char instance[24];
    uint64_t after;
    sg_pool_xfer *poll, *probe;
    uint64_t retry_timer;
    double backoff_s;
    char **lost; /* ids of jobs taken back from it: their late ends are ignored */
    int nlost;
    struct resync *resyncs; /* questions about jobs whose end may have been missed */
};

enum { MAX_TAKEN_BACK = 1024 };

struct sg_pool_remote {
    sg_loop *loop;
    sg_pool_remote_config cfg;
    sg_curl_loop *cl;
    sg_pool_http http;
    char *token, *cacert, *log_name;
    char client[24];
    uint64_t next_job;
    sg_pool *pool;
    agent *ag;
    int nag, n;
    sg_pool_slot_desc *desc;
    rslot **by_global; /* index - first_slot */
    bundle *bundles;
    struct submission *detached;
    sg_pool_xfer **unanswered; /* cancels and roles on their way: cancelled at free */
    int nunanswered, capunanswered;
};

static void poll_events(agent *ag);
static void lost(agent *ag, const char *why);
static void drop_submission(rslot *s);
static void resync_cancel_all(agent *ag);

static double timeout_s(const sg_pool_remote *r) {
    return r->cfg.timeout_s > 0 ? r->cfg.timeout_s : SG_POOL_REMOTE_TIMEOUT_S;
}

/* A job taken back from its agent (re-queued elsewhere): remembered so that the agent is
 * told to stop it when it answers again, and so that its end, if it still comes, is
 * recognised and ignored. The oldest are forgotten beyond MAX_TAKEN_BACK. */
static void take_back(agent *ag, const char *id) {
    if (ag->nlost == MAX_TAKEN_BACK) {
        free(ag->lost[0]);
        memmove(ag->lost, ag->lost + 1, (size_t)(--ag->nlost) * sizeof *ag->lost);
    }
    ag->lost = sg_xrealloc(ag->lost, (size_t)(ag->nlost + 1) * sizeof *ag->lost);
    ag->lost[ag->nlost++] = sg_xstrdup(id);
}

/* 1 (and forgotten) when id was taken back from ag. */
static int was_taken_back(agent *ag, const char *id) {
    for (int i = 0; i < ag->nlost; i++)
        if (!strcmp(ag->lost[i], id)) {
            free(ag->lost[i]);
            memmove(ag->lost + i, ag->lost + i + 1, (size_t)(--ag->nlost - i) * sizeof *ag->lost);
            return 1;
        }
    return 0;
}

static void forget_taken_back(agent *ag) {
    for (int i = 0; i < ag->nlost; i++) free(ag->lost[i]);
    ag->nlost = 0;
}

/* ---- the task bundles, read once per task folder ---- */
static bundle *bundle_for(sg_pool_remote *r, const char *dir, sg_err *err) {
    for (bundle *b = r->bundles; b; b = b->next)
        if (!strcmp(b->dir, dir)) return b;
    bundle *b = sg_xcalloc(1, sizeof *b);
    char *skipped = NULL;
    b->files = sg_pool_bundle_read(dir, b->hash, &skipped, err);
    if (!b->files) {
        free(b);
        return NULL;
    }
    if (skipped)
        fprintf(stderr, "%s: task folder %s: not sent to pool agents: %s\n", r->log_name, dir,
                skipped);
    free(skipped);
    b->dir = sg_xstrdup(dir);
    b->next = r->bundles;
    r->bundles = b;
    return b;
}

/* ---- the start: ask every agent for its slots ---- */
static int parse_status(agent *ag, const char *body, int *nslots, json_t **slots, sg_err *err) {
    sg_err e;
    json_t *j = sg_json_parse(body, strlen(body), ag->shown, &e);
    json_t *list = j ? json_object_get(j, "slots") : NULL;
    const char *inst = j ? json_string_value(json_object_get(j, "instance")) : NULL;
    if (!j || !json_is_array(list) || !inst) {
        json_decref(j);
        return sg_errf(err, "%s/v1/status: not a specgen pool agent's status (%s)", ag->shown,
                       j ? "no slots or instance" : e.msg);
    }
    snprintf(ag->instance, sizeof ag->instance, "%s", inst);
    ag->after = (uint64_t)json_integer_value(json_object_get(j, "event_seq"));
    *nslots = (int)json_array_size(list);
    *slots = j;
    return 0;
}

static int connect_agent(sg_pool_remote *r, agent *ag, sg_err *err) {
    char url[480];
    snprintf(url, sizeof url, "%s/v1/status", ag->url);
    double wait = r->cfg.connect_wait_s > 0 ? r->cfg.connect_wait_s : 10;
    int64_t until = sg_loop_now(r->loop) + (int64_t)(wait * SG_SEC);
    char *body = NULL;
    long status = 0;
    sg_err e;
    for (;;) { /* an agent that is still starting (Slurm starts them beside us) */
        body = sg_pool_http_get_now(&r->http, url, 5000, &status, &e);
        if (body && status == 200) break;
        if (body && status == 401) {
            free(body);
            return sg_errf(err, "--pool %s: the agent wants a token%s (--pool-token-file)",
                           ag->shown, r->token ? ", and not the one given" : "");
        }
        if (body) snprintf(e.msg, sizeof e.msg, "HTTP %ld: %.200s", status, body);
        free(body);
        body = NULL;
        if (sg_loop_now(r->loop) >= until)
            return sg_errf(err, "--pool %s: no answer within %.0f s: %s", ag->shown, wait, e.msg);
        struct timespec ts = {0, 200 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    json_t *st = NULL;
    int rc = parse_status(ag, body, &ag->n, &st, err);
    free(body);
    if (rc < 0) return -1;
    const char *lang = json_string_value(json_object_get(st, "lang"));
    sg_dev_lang want = (sg_dev_lang)r->cfg.lang, got;
    if (!lang || sg_dev_lang_parse(lang, &got, err) < 0 || got != want) {
        sg_errf(err, "--pool %s: the agent runs %s devices, but this run validates %s kernels",
                ag->shown, lang ? lang : "unknown", sg_dev_lang_name(want));
        json_decref(st);
        return -1;
    }
    if (ag->n < 1) {
        json_decref(st);
        return sg_errf(err, "--pool %s: the agent has no slots", ag->shown);
    }
    ag->s = sg_xcalloc((size_t)ag->n, sizeof *ag->s);
    json_t *list = json_object_get(st, "slots");
    r->desc = sg_xrealloc(r->desc, (size_t)(r->n + ag->n) * sizeof *r->desc);
    r->by_global = sg_xrealloc(r->by_global, (size_t)(r->n + ag->n) * sizeof *r->by_global);
    for (int i = 0; i < ag->n; i++) {
        json_t *o = json_array_get(list, (size_t)i);
        const char *name = json_string_value(json_object_get(o, "name"));
        int dev = (int)json_integer_value(json_object_get(o, "device"));
        rslot *s = &ag->s[i];
        s->ag = ag;
        s->index = i;
        s->global = r->cfg.first_slot + r->n;
        sg_pool_slot_desc *d = &r->desc[r->n];
        d->device = r->cfg.first_device + (int)(ag - r->ag) * 256 + (dev & 255);
        snprintf(d->name, sizeof d->name, "%s/%s", ag->label, name ? name : "?");
        r->by_global[r->n++] = s;
    }
    json_decref(st);
    ag->up = 1;
    return 0;
}

int sg_pool_remote_new(sg_loop *loop, const sg_pool_remote_config *cfg, sg_pool_remote **out,
                       sg_err *err) {
    char **urls;
    int n;
    if (sg_pool_urls_parse(cfg->urls, &urls, &n, err) < 0) return -1;
    sg_pool_remote *r = sg_xcalloc(1, sizeof *r);
    r->loop = loop;
    r->cfg = *cfg;
    r->log_name = sg_xstrdup(cfg->log_name ? cfg->log_name : "specgen");
    r->token = cfg->token ? sg_xstrdup(cfg->token) : NULL;
    r->cacert = cfg->cacert ? sg_xstrdup(cfg->cacert) : NULL;
    uint64_t c;
    if (getrandom(&c, sizeof c, 0) != sizeof c) c = (uint64_t)sg_loop_now(loop);
    snprintf(r->client, sizeof r->client, "c%016" PRIx64, c);
    r->cl = sg_curl_loop_new(loop, err);
    r->http = (sg_pool_http){.cl = r->cl, .token = r->token, .cacert = r->cacert};
    r->ag = sg_xcalloc((size_t)n, sizeof *r->ag);
    r->nag = n;
    int rc = r->cl ? 0 : -1;
    for (int i = 0; i < n && rc == 0; i++) {
        agent *ag = &r->ag[i];
        ag->owner = r;
        snprintf(ag->url, sizeof ag->url, "%s", urls[i]);
        sg_redact_url_fit(ag->shown, sizeof ag->shown, urls[i]);
        const char *h = strstr(urls[i], "://") + 3;
        size_t hl = strcspn(h, "/?#");
        const char *at = memrchr(h, '@', hl); /* the label is host:port, never user:password */
        if (at) hl -= (size_t)(at + 1 - h), h = at + 1;
        snprintf(ag->label, sizeof ag->label, "%.*s", (int)hl, h);
        ag->backoff_s = 0.25;
        rc = connect_agent(r, ag, err);
    }
    sg_pool_urls_free(urls, n);
    if (rc < 0) {
        sg_pool_remote_free(r);
        return -1;
    }
    *out = r;
    return 0;
}

const sg_pool_slot_desc *sg_pool_remote_slots(const sg_pool_remote *r, int *n) {
    *n = r->n;
    return r->desc;
}

/* ---- requests that need no answer: cancels and roles ---- */
/* Their transfers are kept until they end, so that freeing the pool cancels those still on
 * their way (a run that ends right after cancelling its jobs) instead of leaking them. */
static void ignore(void *arg, sg_pool_xfer *x, long status, const char *body, size_t len,
                   const char *msg) {
    (void)status, (void)body, (void)len, (void)msg;
    sg_pool_remote *r = arg;
    for (int i = 0; i < r->nunanswered; i++)
        if (r->unanswered[i] == x) {
            r->unanswered[i] = r->unanswered[--r->nunanswered];
            return;
        }
}

static void send_unanswered(sg_pool_remote *r, const char *method, const char *url,
                            const char *body, size_t len) {
    if (r->nunanswered == r->capunanswered) {
        r->capunanswered = r->capunanswered ? 2 * r->capunanswered : 8;
        r->unanswered =
            sg_xrealloc(r->unanswered, (size_t)r->capunanswered * sizeof *r->unanswered);
    }
    r->unanswered[r->nunanswered++] =
        sg_pool_xfer_start(&r->http, method, url, body, len, 10000, ignore, r);
}

static void send_cancel(agent *ag, const char *id) {
    char url[560];
    snprintf(url, sizeof url, "%s/v1/jobs/%s/cancel", ag->url, id);
    send_unanswered(ag->owner, "POST", url, "", 0);
}

static void send_role(rslot *s, sg_pool_role role) {
    char url[560], body[64];
    snprintf(url, sizeof url, "%s/v1/slots/%d/role", s->ag->url, s->index);
    int n = snprintf(body, sizeof body, "{\"role\":\"%s\"}", sg_pool_role_name(role));
    send_unanswered(s->ag->owner, "PUT", url, body, (size_t)n);
}

/* ---- losing an agent, and getting it back ---- */
static void probe(sg_loop *loop, void *arg);

static void retry_later(agent *ag) {
    ag->retry_timer = sg_loop_timer(ag->owner->loop, (int64_t)(ag->backoff_s * SG_SEC), probe, ag);
    ag->backoff_s = ag->backoff_s * 2 > 10 ? 10 : ag->backoff_s * 2;
}

static void lost(agent *ag, const char *why) {
    sg_pool_remote *r = ag->owner;
    if (!ag->up) return;
    ag->up = 0;
    sg_pool_xfer_cancel(ag->poll);
    ag->poll = NULL;
    resync_cancel_all(ag);
    int running = 0;
    for (int i = 0; i < ag->n; i++) {
        rslot *s = &ag->s[i];
        drop_submission(s);
        if (s->job[0]) { /* remembered: if the agent comes back, it is told to stop it */
            take_back(ag, s->job);
            s->job[0] = 0;
            running++;
        }
    }
    fprintf(stderr, "%s: pool agent %s lost (%s): %d running job%s re-queued; reconnecting\n",
            r->log_name, ag->label, why, running, running == 1 ? "" : "s");
    char reason[400];
    snprintf(reason, sizeof reason, "agent %s lost: %s", ag->label, why);
    for (int i = 0; i < ag->n; i++)
        if (r->pool) sg_pool_slot_offline(r->pool, ag->s[i].global, reason);
    ag->backoff_s = 0.25;
    retry_later(ag);
}

static void on_probe(void *arg, sg_pool_xfer *x, long status, const char *body, size_t len,
                     const char *msg) {
    (void)x, (void)len, (void)msg;
    agent *ag = arg;
    sg_pool_remote *r = ag->owner;
    ag->probe = NULL;
    int n;
    json_t *st = NULL;
    sg_err e;
    char old[24];
    snprintf(old, sizeof old, "%s", ag->instance);
    uint64_t after = ag->after;
    if (status != 200 || parse_status(ag, body, &n, &st, &e) < 0) {
        retry_later(ag);
        return;
    }
    json_decref(st);
    if (!strcmp(old, ag->instance)) {
        /* The same agent: its events go on from where we were, so that the ends of jobs
         * taken back from it are seen (and ignored); it is told to stop those still running. */
        ag->after = after;
        for (int i = 0; i < ag->nlost; i++) send_cancel(ag, ag->lost[i]);
    } else { /* restarted: nothing it ran for us survived, its numbers start again */
        forget_taken_back(ag);
    }
    ag->up = 1;
    int back = n < ag->n ? n : ag->n;
    fprintf(stderr, "%s: pool agent %s is back (%d of its %d slot%s)\n", r->log_name, ag->label,
            back, ag->n, ag->n == 1 ? "" : "s");
    for (int i = 0; i < back; i++) {
        send_role(&ag->s[i], sg_pool_slot_role(r->pool, ag->s[i].global));
        sg_pool_slot_online(r->pool, ag->s[i].global);
    }
    poll_events(ag);
}

static void probe(sg_loop *loop, void *arg) {
    (void)loop;
    agent *ag = arg;
    ag->retry_timer = 0;
    char url[480];
    snprintf(url, sizeof url, "%s/v1/status", ag->url);
    ag->probe = sg_pool_xfer_start(&ag->owner->http, "GET", url, NULL, 0,
                                   (long)(timeout_s(ag->owner) * 1000), on_probe, ag);
}

/* ---- events: a job's end ---- */
static void job_ended(agent *ag, json_t *ev) {
    sg_pool_remote *r = ag->owner;
    const char *id = json_string_value(json_object_get(ev, "job"));
    for (int i = 0; id && i < ag->n; i++) {
        rslot *s = &ag->s[i];
        if (strcmp(s->job, id)) continue;
        sg_err e;
        if (sg_pool_result_from_json(json_object_get(ev, "result"), &s->r, &s->vr, &s->pr, &e) <
            0) {
            memset(&s->r, 0, sizeof s->r);
            snprintf(s->r.verdict, sizeof s->r.verdict, "error");
            snprintf(s->r.message, sizeof s->r.message, "agent %s: %s", ag->label, e.msg);
        }
        s->job[0] = 0;
        sg_pool_slot_done(r->pool, s->global, &s->r);
        return;
    }
    if (id && was_taken_back(ag, id))
        fprintf(stderr,
                "%s: pool agent %s: job %s ended there after it was taken back (it ran again "
                "elsewhere): its result is ignored\n",
                r->log_name, ag->label, id);
}

/* ---- missed events: ask the agent for each running job's state ---- */
typedef struct resync {
    agent *ag;
    int slot;
    char job[80];
    sg_pool_xfer *x;
    struct resync *next;
} resync;

static void resync_unlink(resync *q) {
    for (resync **pp = &q->ag->resyncs; *pp; pp = &(*pp)->next)
        if (*pp == q) {
            *pp = q->next;
            return;
        }
}

static void resync_cancel_all(agent *ag) {
    while (ag->resyncs) {
        resync *q = ag->resyncs;
        ag->resyncs = q->next;
        sg_pool_xfer_cancel(q->x);
        free(q);
    }
}

static void on_job_state(void *arg, sg_pool_xfer *x, long status, const char *body, size_t len,
                         const char *msg) {
    (void)x;
    resync *q = arg;
    agent *ag = q->ag;
    sg_pool_remote *r = ag->owner;
    rslot *s = &ag->s[q->slot];
    char why[300];
    resync_unlink(q);
    if (!ag->up || strcmp(s->job, q->job)) { /* ended, killed or lost meanwhile */
        free(q);
        return;
    }
    if (status == 404 && !s->sub) { /* ended so long ago that the agent forgot it: run it again */
        fprintf(stderr,
                "%s: pool agent %s no longer knows job %s (its end was among the missed "
                "events): re-queued\n",
                r->log_name, ag->label, q->job);
        take_back(ag, s->job);
        s->job[0] = 0;
        snprintf(why, sizeof why, "agent %s: the end of job %s was missed", ag->label, q->job);
        sg_pool_slot_offline(r->pool, s->global, why);
        if (ag->up) sg_pool_slot_online(r->pool, s->global);
    } else if (status == 200) {
        sg_err e;
        json_t *j = sg_json_parse(body, len, "job state", &e);
        const char *state = j ? json_string_value(json_object_get(j, "state")) : NULL;
        if (state && !strcmp(state, "ended")) {
            fprintf(stderr,
                    "%s: pool agent %s: job %s ended among the missed events: its "
                    "result read from the agent\n",
                    r->log_name, ag->label, q->job);
            json_t *ev = json_pack("{s:s,s:O}", "job", q->job, "result",
                                   json_object_get(j, "result") ?: json_null());
            job_ended(ag, ev);
            json_decref(ev);
        }
        json_decref(j);
    } else if (status != 404) {
        if (status)
            snprintf(why, sizeof why, "job %s: HTTP %ld", q->job, status);
        else
            snprintf(why, sizeof why, "job %s: %s", q->job, msg);
        lost(ag, why);
    }
    free(q);
}

/* The agent dropped events we had not read (its ring holds the last 4096): a job's end may
 * be among them. Each running job's state is asked for; its end, if it came, is read from
 * the answer (a job_end that also arrives later is ignored: the slot has moved on). */
static void resync_jobs(agent *ag) {
    sg_pool_remote *r = ag->owner;
    int asked = 0;
    for (int i = 0; i < ag->n; i++) {
        rslot *s = &ag->s[i];
        if (!s->job[0]) continue;
        resync *q = sg_xcalloc(1, sizeof *q);
        q->ag = ag;
        q->slot = i;
        snprintf(q->job, sizeof q->job, "%s", s->job);
        char url[560];
        snprintf(url, sizeof url, "%s/v1/jobs/%s", ag->url, s->job);
        q->next = ag->resyncs;
        ag->resyncs = q;
        q->x = sg_pool_xfer_start(&r->http, "GET", url, NULL, 0, (long)(timeout_s(r) * 1000),
                                  on_job_state, q);
        asked++;
    }
    fprintf(stderr,
            "%s: pool agent %s dropped events before we read them: asking it for the state of "
            "%d running job%s\n",
            r->log_name, ag->label, asked, asked == 1 ? "" : "s");
}

static void on_events(void *arg, sg_pool_xfer *x, long status, const char *body, size_t len,
                      const char *msg) {
    (void)x;
    agent *ag = arg;
    ag->poll = NULL;
    char why[300];
    if (status != 200) {
        if (status)
            snprintf(why, sizeof why, "events: HTTP %ld", status);
        else
            snprintf(why, sizeof why, "events: %s", msg);
        lost(ag, why);
        return;
    }
    sg_err e;
    json_t *j = sg_json_parse(body, len, "events", &e);
    const char *inst = j ? json_string_value(json_object_get(j, "instance")) : NULL;
    json_t *list = j ? json_object_get(j, "events") : NULL;
    if (!inst || !json_is_array(list)) {
        json_decref(j);
        lost(ag, "events: not an agent's answer");
        return;
    }
    if (strcmp(inst, ag->instance)) {
        json_decref(j);
        lost(ag, "it restarted");
        return;
    }
    ag->after = (uint64_t)json_integer_value(json_object_get(j, "next"));
    int gap = json_is_true(json_object_get(j, "gap"));
    size_t i;
    json_t *ev;
    json_array_foreach(list, i, ev) {
        if (!ag->up) break; /* a done callback may have ended everything */
        if (!strcmp(json_string_value(json_object_get(ev, "ev")) ?: "", "job_end"))
            job_ended(ag, ev);
    }
    json_decref(j);
    if (gap && ag->up) resync_jobs(ag);
    if (ag->up && !ag->poll) poll_events(ag);
}

static void poll_events(agent *ag) {
    sg_pool_remote *r = ag->owner;
    double t = timeout_s(r), wait = t / 2 < 10 ? t / 2 : 10;
    char url[600];
    snprintf(url, sizeof url, "%s/v1/events?after=%" PRIu64 "&client=%s&wait=%g", ag->url,
             ag->after, r->client, wait);
    ag->poll = sg_pool_xfer_start(&r->http, "GET", url, NULL, 0, (long)(t * 1000), on_events, ag);
}

void sg_pool_remote_bind(sg_pool_remote *r, sg_pool *p) {
    r->pool = p;
    for (int a = 0; a < r->nag; a++) {
        agent *ag = &r->ag[a];
        for (int i = 0; i < ag->n; i++) send_role(&ag->s[i], sg_pool_slot_role(p, ag->s[i].global));
        poll_events(ag);
    }
}

/* ---- the slot seam ---- */
static rslot *slot_of(sg_pool_remote *r, int global) {
    int k = global - r->cfg.first_slot;
    return k >= 0 && k < r->n ? r->by_global[k] : NULL;
}

static void fail_job(rslot *s, const char *fmt, const char *detail) {
    memset(&s->r, 0, sizeof s->r);
    snprintf(s->r.verdict, sizeof s->r.verdict, "failed");
    snprintf(s->r.message, sizeof s->r.message, fmt, s->ag->label, detail);
    s->job[0] = 0;
    sg_pool_slot_done(s->ag->owner->pool, s->global, &s->r);
}

/* One job's POST (sent again with the task's files when the agent asks for them). A
 * killed job's POST still on its way is detached from its slot: when the agent answers
 * that it took the job, it is told to cancel it. */
typedef struct submission {
    rslot *s;
    char job[80];
    json_t *body;
    bundle *b;
    int with_files;
    sg_pool_xfer *x;
    struct submission *next; /* detached ones */
} submission;

static void free_submission(submission *sub) {
    sg_pool_xfer_cancel(sub->x);
    json_decref(sub->body);
    free(sub);
}

static void drop_submission(rslot *s) {
    if (s->sub) free_submission(s->sub);
    s->sub = NULL;
}

static void post(submission *sub);

static void on_submitted(void *arg, sg_pool_xfer *x, long status, const char *body, size_t len,
                         const char *msg) {
    (void)x, (void)len;
    submission *sub = arg;
    rslot *s = sub->s;
    sub->x = NULL;       /* this transfer is over */
    if (s->sub != sub) { /* detached: its job was killed while this was on its way */
        sg_pool_remote *r = s->ag->owner;
        for (submission **pp = &r->detached; *pp; pp = &(*pp)->next)
            if (*pp == sub) {
                *pp = sub->next;
                break;
            }
        if (status == 202) send_cancel(s->ag, sub->job);
        free_submission(sub);
        return;
    }
    if (status == 202) { /* its end comes as an event */
        drop_submission(s);
        return;
    }
    if (status == 412 && !sub->with_files) { /* the agent asks for the task's files */
        sub->with_files = 1;
        json_object_set(sub->body, "task_files", sub->b->files);
        post(sub);
        return;
    }
    char why[600];
    agent *ag = s->ag;
    if (status == 0 || status == 429 || status == 503 || status == 401) {
        if (status)
            snprintf(why, sizeof why, "submit: HTTP %ld: %.300s", status, body);
        else
            snprintf(why, sizeof why, "submit: %s", msg);
        drop_submission(s);
        lost(ag, why);
        return;
    }
    snprintf(why, sizeof why, "HTTP %ld: %.500s", status, body);
    drop_submission(s);
    fail_job(s, "pool agent %s refused the job: %s", why);
}

static void post(submission *sub) {
    rslot *s = sub->s;
    char url[480];
    snprintf(url, sizeof url, "%s/v1/jobs", s->ag->url);
    char *text = json_dumps(sub->body, JSON_COMPACT);
    sub->x = sg_pool_xfer_start(&s->ag->owner->http, "POST", url, text ? text : "{}",
                                text ? strlen(text) : 2, 30000, on_submitted, sub);
    free(text);
}

static int remote_start(void *impl, int slot, const sg_pool_job *job, sg_err *err) {
    sg_pool_remote *r = impl;
    rslot *s = slot_of(r, slot);
    if (!s) return sg_errf(err, "remote slots: no slot %d", slot);
    if (!s->ag->up) return sg_errf(err, "pool agent %s is unreachable", s->ag->label);
    bundle *b = bundle_for(r, job->work.task_dir, err);
    if (!b) return -1;
    snprintf(s->job, sizeof s->job, "%s-%" PRIu64, r->client, ++r->next_job);
    json_t *cand = json_null();
    if (job->work.candidate && !(cand = json_stringn(job->work.candidate, job->work.candidate_len)))
        return s->job[0] = 0, sg_errf(err, "the candidate is not UTF-8 text");
    sg_prof_opts po;
    if (job->work.prof)
        po = *job->work.prof;
    else
        sg_prof_opts_default(&po);
    json_t *body = json_pack(
        "{s:s,s:s,s:i,s:s,s:s,s:o,s:s,s:o}", "id", s->job, "client", r->client, "slot", s->index,
        "kind", sg_pool_role_name(job->work.kind), "task", b->hash, "candidate", cand, "name",
        job->work.name ? job->work.name : "candidate", "prof", sg_pool_prof_opts_to_json(&po));
    if (!body) return s->job[0] = 0, sg_errf(err, "the job's name is not UTF-8 text");
    drop_submission(s);
    submission *sub = sg_xcalloc(1, sizeof *sub);
    sub->s = s;
    snprintf(sub->job, sizeof sub->job, "%s", s->job);
    sub->body = body;
    sub->b = b;
    s->sub = sub;
    post(sub);
    return 0;
}

static void remote_kill(void *impl, int slot) {
    sg_pool_remote *r = impl;
    rslot *s = slot_of(r, slot);
    if (!s || !s->job[0]) return;
    if (s->sub) { /* cancelled once the agent said it has it */
        s->sub->next = r->detached;
        r->detached = s->sub;
        s->sub = NULL;
    } else if (s->ag->up) {
        send_cancel(s->ag, s->job);
    }
    s->job[0] = 0;
}

static void remote_role(void *impl, int slot, sg_pool_role role) {
    sg_pool_remote *r = impl;
    rslot *s = slot_of(r, slot);
    if (s && s->ag->up) send_role(s, role);
}

const sg_pool_slot_ops sg_pool_remote_ops = {remote_start, remote_kill, remote_role};

void sg_pool_remote_free(sg_pool_remote *r) {
    if (!r) return;
    for (int a = 0; a < r->nag; a++) {
        agent *ag = &r->ag[a];
        sg_pool_xfer_cancel(ag->poll);
        sg_pool_xfer_cancel(ag->probe);
        if (ag->retry_timer) sg_loop_timer_cancel(r->loop, ag->retry_timer);
        for (int i = 0; i < ag->n; i++) drop_submission(&ag->s[i]);
        resync_cancel_all(ag);
        for (int i = 0; i < ag->nlost; i++) free(ag->lost[i]);
        free(ag->lost);
        free(ag->s);
    }
    for (int i = 0; i < r->nunanswered; i++) sg_pool_xfer_cancel(r->unanswered[i]);
    free(r->unanswered);
    while (r->detached) {
        struct submission *sub = r->detached;
        r->detached = sub->next;
        free_submission(sub);
    }
    while (r->bundles) {
        bundle *b = r->bundles;
        r->bundles = b->next;
        json_decref(b->files);
        free(b->dir);
        free(b);
    }
    sg_curl_loop_free(r->cl);
    free(r->ag);
    free(r->desc);
    free(r->by_global);
    free(r->token);
    free(r->cacert);
    free(r->log_name);
    free(r);
}
