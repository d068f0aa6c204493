/* admit_gate.c — campaign admission on the loop (admit_gate.h): the policy's limit applied at
 * task starts and iteration boundaries through a wrapper around each task's LLM port. */
#include "orchestrator/admit_gate.h"

#include "common/buf.h"

#include <stdlib.h>
#include <string.h>

typedef struct agen agen;

struct sg_admit_member {
    sg_admit_gate *g;
    sg_llm_port inner;
    int active;             /* counted in the gate's active tasks */
    int paused;             /* holding its iteration back (on the paused list) */
    int live;               /* its generations not yet done (held ones included) */
    agen *held;             /* the held iteration's streams, in start order */
    sg_admit_member *pnext; /* the paused list, oldest first */
};

struct agen { /* a generation through the wrapper */
    sg_admit_member *m;
    sg_gen *inner; /* NULL while held */
    sg_gen_events ev;
    char *system, *user; /* held: the messages to start it with */
    uint64_t tokens;     /* reasoning tokens seen so far */
    agen *hnext;
};

struct sg_admit_gate {
    sg_loop *loop;
    sg_admit policy;
    sg_admit_gate_hooks hooks;
    int active, paused, unstarted;
    sg_admit_member *phead, *ptail;
    uint64_t timer, kick;
    int64_t last_ns;
    sg_admit_stats st;
};

static void on_tick(sg_loop *loop, void *arg);
static void on_kick(sg_loop *loop, void *arg);

static void kick(sg_admit_gate *g) {
    if (!g->kick) g->kick = sg_loop_timer(g->loop, 0, on_kick, g);
}

sg_admit_gate *sg_admit_gate_new(sg_loop *loop, const sg_admit_config *c,
                                 const sg_admit_gate_hooks *hooks) {
    sg_admit_gate *g = sg_xcalloc(1, sizeof *g);
    g->loop = loop;
    g->hooks = *hooks;
    sg_admit_init(&g->policy, c);
    g->st.max_limit = g->st.last_limit = sg_admit_limit(&g->policy);
    g->last_ns = sg_loop_now(loop);
    g->timer = sg_loop_timer(loop, c->interval_ns, on_tick, g);
    return g;
}

void sg_admit_gate_free(sg_admit_gate *g) {
    if (!g) return;
    if (g->timer) sg_loop_timer_cancel(g->loop, g->timer);
    if (g->kick) sg_loop_timer_cancel(g->loop, g->kick);
    free(g);
}

void sg_admit_gate_set_unstarted(sg_admit_gate *g, int n) { g->unstarted = n > 0 ? n : 0; }
int sg_admit_gate_limit(const sg_admit_gate *g) { return sg_admit_limit(&g->policy); }

void sg_admit_gate_stats(const sg_admit_gate *g, sg_admit_stats *s) {
    *s = g->st;
    s->limit_time += (double)(sg_loop_now(g->loop) - g->last_ns) / SG_SEC * s->last_limit;
}

int sg_admit_gate_try_start(sg_admit_gate *g) {
    if (g->paused > 0 || g->active >= sg_admit_limit(&g->policy)) return 0;
    g->active++;
    return 1;
}

/* ---- the wrapper ---- */

static void on_reasoning(void *arg, const char *text, size_t len, uint64_t tokens, int est) {
    agen *a = arg;
    if (tokens > a->tokens) a->m->g->st.tokens += (double)(tokens - a->tokens);
    a->tokens = tokens;
    if (a->ev.reasoning) a->ev.reasoning(a->ev.arg, text, len, tokens, est);
}

static void on_content(void *arg, const char *text, size_t len) {
    agen *a = arg;
    if (a->ev.content) a->ev.content(a->ev.arg, text, len);
}

static void agen_free(agen *a) {
    a->m->live--;
    free(a->system);
    free(a->user);
    free(a);
}

static void on_done(void *arg, const sg_gen_summary *s) {
    agen *a = arg;
    sg_admit_gate *g = a->m->g;
    g->st.tokens += (double)s->content_tokens;
    if (s->error[0]) g->st.failed_streams++;
    sg_gen_events ev = a->ev;
    agen_free(a);
    if (ev.done) ev.done(ev.arg, s);
}

static int launch(agen *a, const char *system, const char *user, sg_err *err) {
    sg_gen_events ev = {on_reasoning, on_content, on_done, a};
    a->inner = a->m->inner.start_reasoning(a->m->inner.impl, system, user, &ev, err);
    return a->inner ? 0 : -1;
}

static agen *agen_new(sg_admit_member *m, const sg_gen_events *ev) {
    agen *a = sg_xcalloc(1, sizeof *a);
    a->m = m;
    a->ev = *ev;
    m->live++;
    return a;
}

static void pause_member(sg_admit_member *m) {
    sg_admit_gate *g = m->g;
    m->active = 0;
    m->paused = 1;
    g->active--;
    g->paused++;
    g->st.pauses++;
    m->pnext = NULL;
    if (g->ptail)
        g->ptail->pnext = m;
    else
        g->phead = m;
    g->ptail = m;
}

static sg_gen *start_reasoning(void *impl, const char *system, const char *user,
                               const sg_gen_events *ev, sg_err *err) {
    sg_admit_member *m = impl;
    sg_admit_gate *g = m->g;
    /* an iteration boundary: nothing of the task runs; over the limit, it waits here */
    if (m->live == 0 && m->active && g->active > sg_admit_limit(&g->policy)) pause_member(m);
    agen *a = agen_new(m, ev);
    if (m->paused) { /* held (with the rest of its iteration's streams) until resumed */
        a->system = sg_xstrdup(system ? system : "");
        a->user = sg_xstrdup(user ? user : "");
        agen **p = &m->held;
        while (*p) p = &(*p)->hnext;
        *p = a;
        return (sg_gen *)a;
    }
    if (launch(a, system, user, err) < 0) {
        agen_free(a);
        return NULL;
    }
    return (sg_gen *)a;
}

static sg_gen *start_fork(void *impl, const sg_fork_request *req, const sg_gen_events *ev,
                          sg_err *err) {
    sg_admit_member *m = impl;
    agen *a = agen_new(m, ev);
    sg_gen_events wev = {on_reasoning, on_content, on_done, a};
    a->inner = m->inner.start_fork(m->inner.impl, req, &wev, err);
    if (!a->inner) {
        agen_free(a);
        return NULL;
    }
    return (sg_gen *)a;
}

static void abort_gen(void *impl, sg_gen *gen, sg_gen_summary *out) {
    sg_admit_member *m = impl;
    agen *a = (agen *)gen;
    if (a->inner) {
        m->inner.abort(m->inner.impl, a->inner, out);
    } else { /* held: never started */
        for (agen **p = &m->held; *p; p = &(*p)->hnext)
            if (*p == a) {
                *p = a->hnext;
                break;
            }
        if (out) {
            memset(out, 0, sizeof *out);
            snprintf(out->finish, sizeof out->finish, "client-abort");
        }
    }
    agen_free(a);
}

static int fork_room(void *impl) {
    sg_admit_member *m = impl;
    return sg_admit_fork_cap(&m->g->policy);
}

sg_admit_member *sg_admit_gate_join(sg_admit_gate *g, const sg_llm_port *inner, sg_llm_port *out) {
    sg_admit_member *m = sg_xcalloc(1, sizeof *m);
    m->g = g;
    m->inner = *inner;
    m->active = 1; /* sg_admit_gate_try_start counted it */
    *out = (sg_llm_port){m, start_reasoning, start_fork, abort_gen, fork_room};
    return m;
}

static void unlink_paused(sg_admit_member *m) {
    sg_admit_gate *g = m->g;
    sg_admit_member **p = &g->phead, *prev = NULL;
    while (*p && *p != m) prev = *p, p = &(*p)->pnext;
    if (!*p) return;
    *p = m->pnext;
    if (g->ptail == m) g->ptail = prev;
    m->pnext = NULL;
    m->paused = 0;
    g->paused--;
}

void sg_admit_member_free(sg_admit_member *m) {
    if (!m) return;
    sg_admit_gate *g = m->g;
    if (m->paused) unlink_paused(m);
    if (m->active) g->active--;
    while (m->held) {
        agen *a = m->held;
        m->held = a->hnext;
        agen_free(a);
    }
    free(m);
    kick(g);
}

/* Resume held tasks (oldest first) while the limit has room; then new tasks may start. */
static void on_kick(sg_loop *loop, void *arg) {
    (void)loop;
    sg_admit_gate *g = arg;
    g->kick = 0;
    while (g->phead && g->active < sg_admit_limit(&g->policy)) {
        sg_admit_member *m = g->phead;
        unlink_paused(m);
        m->active = 1;
        g->active++;
        agen *held = m->held;
        m->held = NULL;
        while (held) {
            agen *a = held;
            held = a->hnext;
            sg_err err;
            if (launch(a, a->system, a->user, &err) < 0) { /* said as the stream's failure */
                sg_gen_summary s;
                memset(&s, 0, sizeof s);
                snprintf(s.finish, sizeof s.finish, "error");
                snprintf(s.error, sizeof s.error, "%s", err.msg);
                on_done(a, &s);
            }
        }
    }
    if (!g->phead && g->active < sg_admit_limit(&g->policy) && g->unstarted > 0 && g->hooks.room)
        g->hooks.room(g->hooks.arg);
}

static void record(sg_admit_gate *g, const sg_admit_decision *d, const sg_admit_signals *s) {
    if (!g->hooks.record) return;
    json_t *ev = json_pack(
        "{s:s,s:i,s:i,s:s,s:i,s:i,s:i,s:i,s:f,s:f,s:f,s:f}", "ev", "admission", "limit", d->limit,
        "previous", d->previous, "reason", sg_admit_reason_name(d->why), "active", s->active,
        "paused", g->paused, "demand", s->demand, "fork_cap", d->fork_cap, "tok_s", d->tok_s,
        "kv_usage", s->kv_usage, "preempted", d->preempted, "waiting", s->waiting);
    g->hooks.record(g->hooks.arg, ev);
    json_decref(ev);
}

static void on_tick(sg_loop *loop, void *arg) {
    sg_admit_gate *g = arg;
    int64_t now = sg_loop_now(loop);
    g->timer = sg_loop_timer(loop, g->policy.c.interval_ns, on_tick, g);
    sg_admit_signals s = {.now_ns = now, .kv_usage = -1, .preemptions = -1, .waiting = -1};
    if (g->hooks.sample) g->hooks.sample(g->hooks.arg, &s);
    s.now_ns = now;
    s.active = g->active;
    s.demand = g->active + g->paused + g->unstarted;
    s.tokens = g->st.tokens;
    s.restarts = g->st.failed_streams;
    sg_admit_decision d;
    sg_admit_update(&g->policy, &s, &d);
    g->st.limit_time += (double)(now - g->last_ns) / SG_SEC * g->st.last_limit;
    g->last_ns = now;
    g->st.last_limit = d.limit;
    if (d.limit > g->st.max_limit) g->st.max_limit = d.limit;
    g->st.decisions++;
    g->st.grows += d.limit > d.previous;
    g->st.backoffs += d.limit < d.previous;
    record(g, &d, &s);
    if (d.limit > d.previous) kick(g);
}
